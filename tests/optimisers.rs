//! SGD with momentum and Adam on a convex problem with a known optimum:
//! `|w - target|^2 + (b - 3)^2`, whose minimum is `w = target`, `b = 3`.

use ad::ndarray::{array, Array1};
use ad::{differentiable, Adam, Differentiable, Sgd};

#[derive(Clone, Debug, Differentiable)]
pub struct Params {
    pub w: Array1<f64>,
    pub b: f64,
    #[constant]
    pub label: String,
}

#[differentiable]
fn loss(p: &Params, #[constant] target: &Array1<f64>) -> f64 {
    let d = &p.w - target;
    let e = p.b - 3.0;
    d.dot(&d) + e * e
}

fn start() -> Params {
    Params {
        w: array![5.0, -4.0, 0.5],
        b: -2.0,
        label: "fit".into(),
    }
}

fn assert_at_optimum(p: &Params, target: &Array1<f64>, tol: f64) {
    assert!(
        p.w.iter().zip(target).all(|(a, b)| (a - b).abs() < tol),
        "w = {}",
        p.w
    );
    assert!((p.b - 3.0).abs() < tol, "b = {}", p.b);
    assert_eq!(p.label, "fit", "constant fields are left alone");
}

#[test]
fn sgd_with_momentum_converges() {
    let target = array![1.0, 2.0, -1.0];
    let mut p = start();
    let mut sgd = Sgd::new(0.05, 0.9);
    for _ in 0..300 {
        let (_, (g, _)) = loss_grad(&p, &target);
        sgd.step(&mut p, &g);
    }
    assert_at_optimum(&p, &target, 1e-6);
}

#[test]
fn adam_converges() {
    let target = array![1.0, 2.0, -1.0];
    let mut p = start();
    let mut adam = Adam::new(0.1);
    for _ in 0..2000 {
        let (_, (g, _)) = loss_grad(&p, &target);
        adam.step(&mut p, &g);
    }
    assert_at_optimum(&p, &target, 1e-3);
    assert!(loss(&p, &target) < loss(&start(), &target) * 1e-6);
}
