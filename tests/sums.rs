//! Loops that only add to a scalar (`total += ..`): their reverse code runs
//! inside the forward sweep with a cotangent of one, and the reverse sweep
//! scales what they added (see `ad-macros/src/compiler/fused.rs`). Each
//! case against finite differences, forward mode and a second cotangent,
//! at several trip counts; and the near misses that must not be fused.

#![allow(clippy::assign_op_pattern)]

#[macro_use]
mod support;

use ad::differentiable;
use ad::ndarray::{Array1, Array2};
use support::random;

/// Two reads per iteration (`x[i]`, `x[i - 1]`), a sum that starts from an
/// active value, and two additions per iteration.
mod neighbours {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut total = s * s;
        for i in 1..x.len() {
            let d = x[i] - x[i - 1] * s;
            total += d * d;
            total -= x[i].sin() * 0.5;
        }
        total
    }
}

mod with_break {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, stop: usize) -> f64 {
        let mut total = 0.0;
        for i in 0..x.len() {
            total += x[i].exp() * x[i];
            if i == stop {
                break;
            }
        }
        total
    }
}

mod with_continue {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut total = 0.0;
        for i in (0..x.len()).rev() {
            if i % 3 == 1 {
                continue;
            }
            total += (x[i] * s).tanh();
        }
        total
    }
}

mod over_a_while_loop {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut total = s;
        let mut i = 0;
        while i < x.len() {
            total = total + x[i] * x[i] * s;
            i += 2;
        }
        total
    }
}

/// The body holds a loop of its own (with a tape) and a branch.
mod with_an_inner_loop_and_a_branch {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, w: &Array2<f64>) -> f64 {
        let mut total = 0.0;
        for i in 0..w.nrows() {
            let mut h = 0.0;
            for j in 0..x.len() {
                h = (h + w[[i, j]] * x[j]).tanh();
            }
            let mut t = h;
            if h > 0.0 {
                t = h * x[i % x.len()];
            }
            total += t;
        }
        total
    }
}

/// A sum loop inside a branch: its buffers are part of the branch's record.
mod in_a_branch {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64, #[constant] sum: bool) -> f64 {
        let mut total = s;
        if sum {
            for i in 0..x.len() {
                total += x[i] * s;
            }
        } else {
            total = total * x.sum();
        }
        total * total
    }
}

/// The body reads an active local array and whole-array values.
mod over_a_local_array {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let y = x.mapv(f64::sin) * s;
        let mut total = 0.0;
        for i in 0..y.len() {
            total += y[i] * y[i] + y.dot(x) * 0.1;
        }
        total
    }
}

/// Near miss: the sum is read in the body, so each iteration's cotangent
/// differs and the loop keeps its tape.
mod sum_read_in_the_body {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut total = 0.5;
        for i in 0..x.len() {
            total += total * x[i] * 0.3;
        }
        total
    }
}

/// Near miss: a partial sum read again later in the iteration.
mod partial_sum_read_again {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut total = 0.0;
        for i in 0..x.len() {
            total += x[i];
            let kept = total;
            total += 1.0;
            total += kept * 0.1;
        }
        total
    }
}

/// Near miss: two sums carried at once.
mod two_sums {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut a = 0.0;
        let mut b = 0.0;
        for i in 0..x.len() {
            a += x[i];
            b += x[i] * x[i];
        }
        a * b
    }
}

/// A sum over a sum (`for i { for j { total += .. } }`): the inner loop's
/// reverse code runs in its own iterations, reading a value of the outer
/// iteration (`w`) whose adjoint it adds to.
mod double_sum {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, y: &Array1<f64>, s: f64) -> f64 {
        let mut total = s;
        for i in 0..x.len() {
            let w = x[i] * s;
            for j in 0..y.len() {
                total += w * y[j] - (x[i] - y[j]).sin();
            }
        }
        total
    }
}

/// Three deep, with additions between the inner loops and a loop inside
/// that keeps a tape (`h`, carried by multiplication).
mod triple_sum_with_adds_between {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut total = 0.0;
        for i in 0..x.len() {
            total += x[i] * x[i];
            for j in 0..i {
                let mut h = 1.0;
                for k in 0..j {
                    h = h * (x[k] * s).cos();
                }
                total -= h * x[j];
                for k in j..x.len() {
                    total += x[i] * x[j] * x[k] * s;
                }
            }
            total += s.exp() * 0.25;
        }
        total
    }
}

/// Near miss: the inner loop reads the sum, so neither loop is fused.
mod inner_loop_reads_the_sum {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut total = 0.25;
        for i in 0..x.len() {
            for j in 0..x.len() {
                total += total * x[i] * x[j] * 0.1;
            }
        }
        total
    }
}

/// An inner loop that sums into the sum, with a `break`.
mod inner_sum_with_break {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, stop: usize) -> f64 {
        let mut total = 0.0;
        for i in 0..x.len() {
            for j in 0..x.len() {
                total += (x[i] * x[j]).tanh();
                if j == stop {
                    break;
                }
            }
        }
        total
    }
}

/// In single precision.
mod single_precision {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f32>) -> f32 {
        let mut total = 0.0;
        for i in 0..x.len() {
            total += x[i] * x[i] * 0.5;
        }
        total
    }
}

/// The sum added to in one arm of a branch only (a hinge loss): fused.
mod adds_in_one_arm {
    use super::*;
    #[differentiable]
    pub fn f(w: &Array1<f64>, #[constant] x: &Array1<f64>) -> f64 {
        let mut loss = 0.0;
        for i in 0..x.len() {
            let m = 1.0 - w[i] * x[i];
            if m > 0.0 {
                loss += m;
            }
        }
        loss
    }
}

/// Different additions in each arm, several per arm: fused.
mod adds_in_both_arms {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut total = s;
        for i in 0..x.len() {
            if x[i] > 0.0 {
                total += x[i] * s;
            } else {
                total -= x[i].powi(2);
                total += s.sin();
            }
        }
        total
    }
}

/// The branch's condition reads the sum (inactive, piecewise): fused, as
/// the sum still only adds.
mod condition_reads_the_sum {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut total = 0.0;
        for i in 0..x.len() {
            if total < 0.7 {
                total += x[i].powi(2);
            }
        }
        total
    }
}

/// A `filter` before a `sum`: a branch around the addition, fused.
mod filtered_sum {
    use super::*;
    #[differentiable]
    pub fn f(x: &[f64], s: f64) -> f64 {
        x.iter()
            .filter(|v| **v > 0.0)
            .map(|v| (v * s).exp())
            .sum::<f64>()
    }
}

/// Near miss: an arm scales the sum.
mod arm_scales_the_sum {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut total = 0.0;
        for i in 0..x.len() {
            if x[i] > 0.0 {
                total *= 0.9;
            }
            total += x[i];
        }
        total
    }
}

/// Near miss: an arm reads the sum besides adding to it.
mod arm_reads_the_sum {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut total = 0.5;
        for i in 0..x.len() {
            if x[i] > 0.0 {
                total += total * x[i];
            } else {
                total += x[i];
            }
        }
        total
    }
}

/// Near miss: the sum is read outside the branch that adds to it.
mod read_beside_the_branch {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut total = 0.5;
        for i in 0..x.len() {
            let kept = total;
            if x[i] > 0.0 {
                total += x[i];
            }
            total += kept * x[i];
        }
        total
    }
}

/// Near misses: an arm subtracts the sum from a term, or doubles it; a
/// branch inside an arm adds (not fused, as only one level is followed).
mod arms_that_do_not_only_add {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut total = 0.5;
        for i in 0..x.len() {
            match (i + k) % 3 {
                0 => total = x[i] - total,
                1 => total += total,
                _ => {
                    if x[i] > 0.0 {
                        total += x[i].exp();
                    }
                }
            }
        }
        total
    }
}

/// Near miss: an arm holds an inner sum over the same variable.
mod arm_holds_a_loop {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut total = 0.0;
        for i in 0..x.len() {
            if i % 2 == 0 {
                for j in 0..x.len() {
                    total += x[j] * x[i];
                }
            }
        }
        total
    }
}

#[test]
fn sums_added_to_in_branches() {
    for n in [0, 1, 2, 7] {
        let x = random(n, 20) * 2.0;
        check_scalar!(adds_in_one_arm; ref w dw = random(n, 19); &x);
        check_scalar!(adds_in_both_arms; ref x dx = random(n, 21), val s ds = 0.7;);
        check_scalar!(condition_reads_the_sum; ref x dx = random(n, 28) * 1.3;);
        check_scalar!(filtered_sum; ref x dx = random(n, 22).to_vec(), val s ds = -0.6;);
        check_scalar!(arm_scales_the_sum; ref x dx = random(n, 23););
        check_scalar!(arm_reads_the_sum; ref x dx = random(n, 24););
        check_scalar!(arm_holds_a_loop; ref x dx = random(n, 25););
        check_scalar!(read_beside_the_branch; ref x dx = random(n, 26););
        for k in 0..3 {
            check_scalar!(arms_that_do_not_only_add; ref x dx = random(n, 27); k);
        }
    }
}

#[test]
fn sums_at_every_trip_count() {
    for n in [0, 1, 2, 7] {
        check_scalar!(neighbours; ref x dx = random(n, 1), val s ds = 0.8;);
        check_scalar!(with_continue; ref x dx = random(n, 2), val s ds = 1.3;);
        check_scalar!(over_a_while_loop; ref x dx = random(n, 3), val s ds = -0.4;);
        check_scalar!(over_a_local_array; ref x dx = random(n, 4), val s ds = 0.7;);
        check_scalar!(sum_read_in_the_body; ref x dx = random(n, 5););
        check_scalar!(two_sums; ref x dx = random(n, 6););
        check_scalar!(partial_sum_read_again; ref x dx = random(n, 11););
    }
}

#[test]
fn break_on_the_first_and_the_last_iteration_of_a_sum() {
    for stop in [0, 2, 4, 9] {
        check_scalar!(with_break; ref x dx = random(5, 7); stop);
    }
}

#[test]
fn sums_holding_loops_and_branches() {
    for (rows, n) in [(0, 2), (1, 1), (3, 4)] {
        check_scalar!(with_an_inner_loop_and_a_branch; ref x dx = random(n, 8), ref w dw = random((rows, n), 9););
    }
    for sum in [true, false] {
        check_scalar!(in_a_branch; ref x dx = random(4, 10), val s ds = 0.6; sum);
    }
}

#[test]
fn sums_of_sums() {
    for n in [0, 1, 2, 5] {
        check_scalar!(double_sum; ref x dx = random(n, 12), ref y dy = random(n + 1, 13), val s ds = 0.9;);
        check_scalar!(double_sum; ref x dx = random(3, 14), ref y dy = random(n, 15), val s ds = -0.3;);
        check_scalar!(triple_sum_with_adds_between; ref x dx = random(n, 16), val s ds = 0.4;);
        check_scalar!(inner_loop_reads_the_sum; ref x dx = random(n, 17););
    }
    for stop in [0, 2, 4, 9] {
        check_scalar!(inner_sum_with_break; ref x dx = random(4, 18); stop);
    }
}

#[test]
fn a_sum_in_single_precision() {
    let x = Array1::from(vec![0.5f32, -1.5, 2.0]);
    let (value, (g,)) = single_precision::f_grad(&x);
    assert_eq!(value, single_precision::f(&x));
    assert_eq!(g, x);
    let (_, pullback) = single_precision::f_vjp(&x);
    assert_eq!(pullback(2.0).0, &x * 2.0);
}
