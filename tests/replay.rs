//! Range loops that run to their end keep their range instead of every
//! index, and the reverse sweep runs it backwards (`rules::replay`);
//! constants computed from the indices are recomputed there. Each case
//! against finite differences and forward mode, over every kind of range,
//! and the cases where an index must still be saved.

#![allow(clippy::assign_op_pattern)]

#[macro_use]
mod support;

use ad::differentiable;
use ad::ndarray::{Array1, Array2};
use support::random;

/// Every kind of range a loop can replay, each carrying a product (so the
/// reverse sweep needs a tape and the indices in the right order).
mod ranges {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let n = x.len();
        let mut p = 1.0;
        for i in 0..n {
            p = p * x[i] + 0.1;
        }
        for i in (0..n).rev() {
            p = p * x[i].sin() + 0.2;
        }
        for i in 1..=n {
            p = p * x[n - i] + 0.3;
        }
        for i in (0..n).step_by(2) {
            p = p * x[i].cos() - 0.1;
        }
        for i in (0..n).rev().step_by(3) {
            p = p * (x[i] + 1.0);
        }
        for i in 0..n as i64 {
            p = p * x[i as usize] * 0.5 + x[n - 1 - i as usize];
        }
        for i in (0..n as u32).rev() {
            p = p * x[i as usize];
        }
        p
    }
}

/// Nested replayed loops with a branch whose record holds an index
/// computed from both (`[i, j]`, recomputed), as in max pooling.
mod max_pooling {
    use super::*;
    #[differentiable]
    pub fn f(h: &Array2<f64>, w: &Array1<f64>) -> f64 {
        let mut mx = Array1::zeros(h.ncols());
        for i in 0..h.nrows() {
            for j in 0..h.ncols() {
                if h[[i, j]] > mx[j] {
                    mx[j] = h[[i, j]];
                }
            }
        }
        mx.dot(w)
    }
}

/// The body binds the index again: the constant read by the reverse sweep
/// is of the new binding, so it is saved, not recomputed from the range.
mod index_rebound_in_the_body {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut p = 1.0;
        for i in 0..x.len() / 2 {
            let i = 2 * i + 1;
            p = p * x[i] + x[i - 1];
        }
        p
    }
}

/// The index is read by the reverse sweep both before and after the body
/// binds it again.
mod index_read_before_and_after_rebinding {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut p = 1.0;
        for i in 0..x.len() / 2 {
            p = p * x[i];
            let i = i + 1;
            p = p + x[i] * x[i];
        }
        p
    }
}

/// An inner loop whose index shadows the outer's, and a loop cut short by
/// `break` (its indices are saved).
mod shadowed_and_cut_short {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] stop: usize) -> f64 {
        let mut p = 1.0;
        for i in 0..x.len() {
            for i in (0..i).rev() {
                p = p * 0.5 + x[i];
            }
            p = p * x[i];
            if i == stop {
                break;
            }
        }
        p
    }
}

/// A triangular pair of loops, each inner run of a different length,
/// reading a constant made from both indices and a parameter.
mod triangular {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] offset: usize) -> f64 {
        let mut p = 0.5;
        for i in 0..x.len() {
            for j in 0..=i {
                let k = (i + j + offset) % x.len();
                p = (p * x[k]).sin() + x[j];
            }
        }
        p
    }
}

#[test]
fn every_kind_of_range_at_every_length() {
    for n in [0, 1, 2, 5, 8] {
        check_scalar!(ranges; ref x dx = random(n, 1) * 0.8 + 0.5;);
        check_scalar!(index_rebound_in_the_body; ref x dx = random(n, 2););
        check_scalar!(index_read_before_and_after_rebinding; ref x dx = random(n, 7););
        check_scalar!(triangular; ref x dx = random(n.max(1), 3); 2);
        for stop in [0, 3, 100] {
            check_scalar!(shadowed_and_cut_short; ref x dx = random(n, 4); stop);
        }
    }
}

#[test]
fn max_pooling_by_elements() {
    for (rows, cols) in [(0, 3), (1, 1), (4, 3), (7, 5)] {
        check_scalar!(max_pooling; ref h dh = random((rows, cols), 5), ref w dw = random(cols, 6););
    }
}
