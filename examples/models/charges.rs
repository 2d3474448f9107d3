//! The potential of two unit charges in the plane, one of them placed by a
//! constant `w` (GradBench `particle`'s), with `#[differentiable(nested)]`,
//! and its Hessian-vector product by hand: the second-order tests check
//! the generated derivatives against it and the benchmarks time them.
//!
//! Shared by `tests/` and `benches/` through `#[path]`.

use ad::{differentiable, Float};

/// The potential at `(x0, x1)` of charges at `(10, 10 - w)` and `(10, 0)`.
#[differentiable(nested)]
pub fn potential<F: Float>(x0: F, x1: F, #[constant] w: F) -> F {
    let ten = F::of(10.0);
    let dx = x0 - ten;
    let dy = x1 - (ten - w);
    F::one() / (dx * dx + dy * dy).sqrt() + F::one() / (dx * dx + x1 * x1).sqrt()
}

/// `H v` at `x`: `Σ (3 d dᵀ / r⁵ - I / r³) v` over the two charges, `d`
/// the offset from each.
pub fn potential_hvp_by_hand((x0, x1): (f64, f64), w: f64, (v0, v1): (f64, f64)) -> (f64, f64) {
    let mut h = (0.0, 0.0);
    for (d0, d1) in [(x0 - 10.0, x1 - (10.0 - w)), (x0 - 10.0, x1)] {
        let r2 = d0 * d0 + d1 * d1;
        let r3 = r2 * r2.sqrt();
        let along = 3.0 * (d0 * v0 + d1 * v1) / (r2 * r3);
        h.0 += along * d0 - v0 / r3;
        h.1 += along * d1 - v1 / r3;
    }
    h
}
