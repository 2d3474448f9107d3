//! Second derivatives: generated derivative code evaluated on dual numbers
//! (`ad::Dual`). A function generic over `F: ad::Float` gets its `f_vjp`
//! and `f_jvp` generic too; instantiated with `Dual` on inputs whose
//! tangents hold a direction `v`, the pullback gives the gradient and the
//! Hessian-vector product `H v` (forward over reverse), and `f_jvp` gives
//! `vᵀ H v` (forward over forward). Each against central differences of the
//! first derivative.

use ad::ndarray::Array1;
use ad::{differentiable, Dual, Float};

#[macro_use]
mod support;
use support::random;

/// Array arithmetic, a reduction, a loop that only sums (fused) and one
/// that carries a product (with a tape), and a branch.
#[differentiable]
fn energy<F: Float>(x: &Array1<F>, s: F) -> F {
    let smooth = (x.mapv(F::sin) * x).sum() * s;
    let mut total = smooth;
    for i in 0..x.len() {
        total += (x[i] * s).tanh() * x[i];
    }
    let mut product = F::one();
    for i in 0..x.len() {
        product *= (x[i] * x[i] + F::one()).ln();
    }
    if s > F::zero() {
        total += product * s;
    }
    total
}

fn gradient(x: &Array1<f64>, s: f64) -> (Array1<f64>, f64) {
    let (_, pullback) = energy_vjp(x, s);
    pullback(1.0)
}

fn duals(value: &Array1<f64>, tangent: &Array1<f64>) -> Array1<Dual> {
    Array1::from_shape_fn(value.len(), |i| Dual::new(value[i], tangent[i]))
}

#[test]
fn hessian_vector_products_by_forward_over_reverse() {
    for (n, s) in [(1, 0.7), (4, 0.7), (7, -0.4)] {
        let (x, v, vs) = (random(n, 1), random(n, 2), 0.3);
        let xd = duals(&x, &v);
        let (_, pullback) = energy_vjp(&xd, Dual::new(s, vs));
        let (gx, gs) = pullback(Dual::constant(1.0));
        // The values are the gradient; the tangents, its derivative along v.
        let (gx64, gs64) = gradient(&x, s);
        assert!(gx.iter().zip(&gx64).all(|(d, g)| d.value == *g));
        assert_eq!(gs.value, gs64);
        let h = 1e-5;
        let (up, up_s) = gradient(&(&x + &(&v * h)), s + vs * h);
        let (down, down_s) = gradient(&(&x - &(&v * h)), s - vs * h);
        for i in 0..n {
            let fd = (up[i] - down[i]) / (2.0 * h);
            assert!(
                (gx[i].tangent - fd).abs() < 1e-6 * fd.abs().max(1.0),
                "(Hv)[{i}] = {} against {fd}",
                gx[i].tangent
            );
        }
        let fd = (up_s - down_s) / (2.0 * h);
        assert!((gs.tangent - fd).abs() < 1e-6 * fd.abs().max(1.0));
    }
}

#[test]
fn second_directional_derivatives_by_forward_over_forward() {
    let (x, v, s) = (random(5, 3), random(5, 4), 0.6);
    // x and its tangent both move along v: the tangent's tangent is vᵀHv.
    let (xd, vd) = (duals(&x, &v), duals(&v, &Array1::zeros(5)));
    let (value, d) = energy_jvp(&xd, Dual::new(s, 0.0), &vd, Dual::constant(0.0));
    assert_eq!(value.value, energy(&x, s));
    let directional = |t: f64| {
        let moved = &x + &(&v * t);
        let (_, d) = energy_jvp(&moved, s, &v, 0.0);
        d
    };
    let h = 1e-5;
    let fd = (directional(h) - directional(-h)) / (2.0 * h);
    assert_eq!(d.value, directional(0.0));
    assert!(
        (d.tangent - fd).abs() < 1e-6 * fd.abs().max(1.0),
        "{} against {fd}",
        d.tangent
    );
}
