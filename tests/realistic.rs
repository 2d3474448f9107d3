//! Functions written the way people write them, mixing the constructs:
//! each against finite differences and forward mode.

#![allow(clippy::needless_range_loop)]

#[macro_use]
mod support;

use ad::differentiable;
use ad::ndarray::{Array1, Array2, Axis};
use support::random;

mod logsumexp {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut m = f64::NEG_INFINITY;
        for i in 0..x.len() {
            if x[i] > m {
                m = x[i];
            }
        }
        let m = ad::stop_gradient(m);
        let s = (x - m).mapv(f64::exp).sum();
        m + s.ln()
    }
}

mod softmax_cross_entropy {
    use super::*;
    #[differentiable]
    pub fn f(w: &Array2<f64>, #[constant] x: &Array2<f64>, #[constant] labels: &[usize]) -> f64 {
        let logits = x.dot(w);
        let mut total = 0.0;
        for r in 0..logits.nrows() {
            let row = logits.row(r);
            let z = row.mapv(f64::exp).sum().ln();
            total += z - row[labels[r]];
        }
        total / logits.nrows() as f64
    }
}

mod normalise_columns {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array2<f64>) -> f64 {
        let mean = x.mean_axis(Axis(0)).unwrap();
        let centred = x - &mean;
        let var = (&centred * &centred).mean_axis(Axis(0)).unwrap() + 1e-3;
        let z = &centred / &var.mapv(f64::sqrt);
        (&z * &z * &z).sum() / x.len() as f64
    }
}

mod piecewise_with_counters {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, scale: f64) -> f64 {
        let n = x.len();
        let mut out = Array1::zeros(n);
        let mut count = 0usize;
        for i in 0..n {
            let v = x[i] * scale;
            out[i] = if v > 0.0 {
                count += 1;
                v
            } else {
                0.1 * v
            };
        }
        out.sum() / (count.max(1) as f64) + f64::EPSILON
    }
}

#[test]
fn logsumexp_with_a_max_found_by_a_loop() {
    for n in [1, 3, 7] {
        check_scalar!(logsumexp; ref x dx = random(n, 1););
    }
}

#[test]
fn softmax_cross_entropy_over_rows() {
    for rows in [1, 4] {
        let x = random((rows, 3), 2);
        let labels: Vec<usize> = (0..rows).map(|r| r % 2).collect();
        check_scalar!(softmax_cross_entropy; ref w dw = random((3, 2), 3); &x, &labels);
    }
}

#[test]
fn column_normalisation() {
    for n in [2, 5] {
        check_scalar!(normalise_columns; ref x dx = random((n, 3), 4););
    }
}

#[test]
fn piecewise_values_and_an_integer_counter() {
    for n in [1, 4, 9] {
        check_scalar!(piecewise_with_counters; ref x dx = random(n, 5), val scale ds = 1.3;);
    }
}
