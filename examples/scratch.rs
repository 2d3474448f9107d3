use ad::differentiable;
use ad::ndarray::{array, Array1, Array2};

#[differentiable]
fn mlp_loss(
    w1: &Array2<f64>,
    b1: &Array1<f64>,
    w2: &Array1<f64>,
    #[constant] x: &Array2<f64>,
    #[constant] y: &Array1<f64>,
) -> f64 {
    let h = (x.dot(&w1.t()) + b1).mapv(f64::tanh);
    let r = &h.dot(w2) - y;
    r.dot(&r) / y.len() as f64
}

#[differentiable]
fn scalar(x: f64, y: f64) -> f64 {
    let mut z = x * y + x.sin();
    z += 2.0 * y.exp();
    z.powi(2) / (1.0 + y * y)
}

fn main() {
    let w1 = array![[0.1, 0.2], [0.3, -0.1], [0.0, 0.5]];
    let b1 = array![0.1, 0.0, -0.1];
    let w2 = array![1.0, -1.0, 0.5];
    let x = array![[1.0, 2.0], [0.5, -1.0]];
    let y = array![0.3, -0.2];
    let (l, (gw1, gb1, gw2, _, _)) = mlp_loss_grad(&w1, &b1, &w2, &x, &y);
    println!("{l} {gw1} {gb1} {gw2}");
    let (l2, dl) = mlp_loss_jvp(
        &w1,
        &b1,
        &w2,
        &x,
        &y,
        &w1,
        &b1,
        &w2,
        ad::NoTangent,
        ad::NoTangent,
    );
    println!("{l2} {dl}");
    let (s, (gx, gy)) = scalar_grad(0.5, 0.3);
    let (_, sx) = scalar_jvp(0.5, 0.3, 1.0, 0.0);
    let h = 1e-6;
    println!(
        "{s} {gx} {gy} jvp {sx} fd {}",
        (scalar(0.5 + h, 0.3) - scalar(0.5 - h, 0.3)) / (2.0 * h)
    );
}
