//! What loops keep for the reverse sweep: nothing when an iteration's
//! pullbacks need no value from it or the loop only sums, one entry per
//! iteration otherwise, freed when the gradient returns.

#[path = "../benches/common/mod.rs"]
mod common;

use ad::differentiable;
use ad::ndarray::Array1;

fn bytes_allocated(f: impl FnOnce()) -> usize {
    common::allocated(f).1
}

/// Each iteration's pullbacks read only constants and shapes.
#[differentiable]
fn damped(x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        y = y * 0.9 + 1.0;
    }
    y
}

/// Each iteration saves `y` (read by the pullback of `y * y`).
#[differentiable]
fn squaring(x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        y = y * y * 0.5 + 0.1;
    }
    y
}

/// A loop that only adds to a sum: its reverse code runs as it goes, so
/// nothing is kept per iteration.
#[differentiable]
fn sum_of_squares(x: &Array1<f64>) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() {
        total += x[i] * x[i];
    }
    total
}

/// Element writes into an array the loop carries: an element write keeps
/// the array's shape, so the reverse sweep sizes the array's cotangent from
/// the array the loop starts from and the loop keeps nothing per iteration.
#[differentiable]
fn shifted_products(x: &Array1<f64>) -> f64 {
    let mut z = x.to_owned();
    for i in 1..x.len() {
        z[i] = x[i] * x[i - 1];
    }
    z.sum()
}

// One test: the allocation counter is global, and tests run in parallel.
#[test]
fn tapes_hold_what_the_reverse_sweep_reads_and_nothing_else() {
    let mut g = 0.0;
    let used = bytes_allocated(|| g = damped_grad(0.5, 1000).1 .0);
    assert_eq!(
        used, 0,
        "the gradient of a loop that saves nothing allocated {used} bytes"
    );
    assert!((g - 0.9f64.powi(1000)).abs() < 1e-12);
    assert_eq!(damped_grad(0.5, 1000).0, damped(0.5, 1000));
    assert_eq!(squaring_grad(0.5, 10).0, squaring(0.5, 10));

    // A sum allocates its gradient and nothing else.
    for n in [10, 1000] {
        let x = Array1::from_elem(n, 0.5);
        let mut value = 0.0;
        let used = bytes_allocated(|| value = sum_of_squares_grad(&x).0);
        assert_eq!(used, n * std::mem::size_of::<f64>(), "sum over {n} entries");
        assert_eq!(value, sum_of_squares(&x));
    }

    // `z`, its cotangent and the gradient: three arrays, no tape.
    for n in [10, 1000] {
        let x = Array1::from_shape_fn(n, |i| 0.5 + 0.01 * i as f64);
        let mut result = (0.0, (Array1::zeros(0),));
        let used = bytes_allocated(|| result = shifted_products_grad(&x));
        assert_eq!(
            used,
            3 * n * std::mem::size_of::<f64>(),
            "writes into {n} entries"
        );
        let (value, (g,)) = result;
        assert_eq!(value, shifted_products(&x));
        // By hand: the sum is x₀ + Σᵢ xᵢ xᵢ₋₁.
        for j in 0..n {
            let before = if j == 0 { 1.0 } else { x[j - 1] };
            let after = if j + 1 < n { x[j + 1] } else { 0.0 };
            assert!((g[j] - (before + after)).abs() < 1e-12, "entry {j} of {n}");
        }
    }

    // One f64 per iteration (the tape reserves its length up front).
    for n in [100, 1000] {
        let used = bytes_allocated(|| {
            let _ = squaring_grad(0.5, n);
        });
        assert_eq!(
            used,
            n * std::mem::size_of::<f64>(),
            "tape of {n} iterations"
        );
    }
}
