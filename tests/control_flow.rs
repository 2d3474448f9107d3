//! Branches and loops: every construct against finite differences and
//! forward mode, at several trip counts (zero and one included), and the
//! classic failure modes of tapes as named regression tests.

// The cases are written the way people write loops (`h = h * x`, `&a + &b`):
// that is what is under test.
#![allow(clippy::assign_op_pattern, clippy::op_ref)]

#[macro_use]
mod support;

use ad::differentiable;
use ad::ndarray::{Array1, Array2};
use support::random;

#[path = "../examples/models/mod.rs"]
mod models;

as_case!(rnn = rnn, rnn_grad, rnn_vjp, rnn_jvp);
as_case!(
    rosenbrock = rosenbrock,
    rosenbrock_grad,
    rosenbrock_vjp,
    rosenbrock_jvp
);

mod branches {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        let mut z = x;
        if x > 0.5 {
            z = z * y;
        } else if y > 0.0 {
            z = z + 2.0 * y;
        } else {
            z = z.exp();
        }
        let k = if y > 0.0 { z.sin() } else { z.cos() };
        k * x
    }
}

mod same_variable_in_both_branches {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        let mut a = x * y;
        let mut b = y;
        if x > 0.0 {
            a = a * a;
            b = b + a;
        } else {
            a = a + x;
            b = b * a;
        }
        a + b
    }
}

/// An active value that every branch overwrites with a constant: the
/// result is the constant the branch taken chose, and no derivative flows
/// from the value before (stress seed 72 found the old value kept). A
/// scalar and an array, in an `if` and in a `match`. (The first values are
/// never read: that is the case under test.)
#[allow(unused_assignments)]
mod constants_in_every_branch {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut s = x[0] * 3.0;
        if k > 1 {
            s = 1.0;
        } else {
            s = 2.0;
        }
        let mut v = x.mapv(f64::sin);
        match k {
            0 => v = Array1::zeros(x.len()),
            1 => v = Array1::from_elem(x.len(), 0.5),
            _ => {
                v = Array1::ones(x.len());
            }
        }
        v.dot(x) * s + x[0] * s
    }
}

#[test]
fn constants_assigned_in_every_branch_replace_an_active_value() {
    for k in 0..3 {
        check_scalar!(constants_in_every_branch; ref x dx = random(3, 19); k);
    }
}

/// A `match` on a call evaluates it once, however many arms it tries:
/// `match q.pop()` pops one item per iteration (the arms were `if let`s
/// that each popped again, before).
mod match_on_a_call {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut q = vec![0usize, 3, 1, 2];
        let mut total = 0.0;
        for _ in 0..5 {
            match q.pop() {
                Some(0) => total += x[0] * 10.0,
                Some(i) => total += x[i] * x[i],
                None => total += 1.0,
            }
        }
        total
    }
}

#[test]
fn a_matched_call_is_evaluated_once() {
    check_scalar!(match_on_a_call; ref x dx = random(4, 20););
}

mod branch_per_iteration {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut acc = 0.0;
        for i in 0..x.len() {
            if i % 2 == 0 {
                acc = acc + x[i] * s;
            } else {
                acc = acc * x[i].cos();
            }
        }
        acc
    }
}

mod nested_triangular {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut total = 0.0;
        for i in 0..x.len() {
            let mut inner = x[i];
            for j in 0..i {
                inner = inner * 0.5 + x[j].sin();
            }
            total += inner * inner;
        }
        total
    }
}

mod while_active_condition {
    use super::*;
    #[differentiable]
    pub fn f(x: f64) -> f64 {
        let mut y = x;
        let mut steps = 0;
        while y < 10.0 {
            y = y * 1.5 + 0.1;
            steps += 1;
        }
        y + steps as f64
    }
}

mod loop_with_no_carried_tape {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, n: usize) -> f64 {
        let mut y = x;
        for _ in 0..n {
            y = y * 0.9 + 1.0;
        }
        y * y
    }
}

mod reverse_iteration {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut acc = 1.0;
        for i in (0..x.len()).rev().step_by(2) {
            acc = acc * x[i] + 0.5;
        }
        for i in 0..=1 {
            acc = acc + x[i];
        }
        acc
    }
}

mod outer_product_element_by_element {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, y: &Array1<f64>) -> f64 {
        let mut g = Array2::zeros((x.len(), y.len()));
        for i in 0..x.len() {
            for j in 0..y.len() {
                g[[i, j]] = x[i] * y[j].exp();
            }
        }
        (&g * &g).sum() + g.sum()
    }
}

mod compound_element_writes {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut v = Array1::zeros(3);
        for i in 0..x.len() {
            v[i % 3] += x[i] * s;
            v[(i + 1) % 3] -= x[i];
        }
        v[0] *= s;
        v[2] /= 1.0 + s * s;
        v.dot(&v)
    }
}

/// One branch fills an array with constants, the other with active
/// values: the first yields the array and a zero tangent made from it
/// (once made after the array had moved into the branch's result).
mod array_filled_by_either_branch {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut m: Array1<f64> = Array1::zeros(3);
        if s < 0.0 {
            for i in 0..3 {
                m[i] = 1.0;
            }
        } else {
            m[0] = s * x[0];
            m[2] = s.sin();
        }
        m.dot(x) + m[0] * s
    }
}

mod write_after_read {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut y = x.to_owned();
        let a = y[0];
        y[0] = a * 3.0;
        y[1] = 2.0;
        y.sum() * a
    }
}

mod prefix_sums {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut v = Array1::zeros(x.len());
        v[0] = x[0];
        for i in 1..x.len() {
            v[i] = v[i - 1] * 0.5 + x[i];
        }
        v.mapv(f64::sin).sum()
    }
}

mod early_return_in_loop {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] limit: f64) -> f64 {
        let mut acc = 0.0;
        for i in 0..x.len() {
            acc = acc + x[i] * x[i];
            if acc > limit {
                return acc.sqrt() * 2.0;
            }
        }
        acc
    }
}

mod early_return_from_branch {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        let z = x * y;
        if z > 1.0 {
            return z.ln();
        }
        let w = z + x;
        w * w
    }
}

mod break_at {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, stop: usize) -> f64 {
        let mut y = 1.0;
        for i in 0..x.len() {
            y = y * x[i] + 0.5;
            if i == stop {
                break;
            }
        }
        y
    }
}

mod continue_skipping_the_only_active_statement {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut acc = 0.5;
        for i in 0..x.len() {
            if i % 2 == 1 {
                continue;
            }
            acc = acc * x[i].exp();
        }
        acc
    }
}

mod while_with_break_and_continue {
    use super::*;
    #[differentiable]
    pub fn f(x: f64) -> f64 {
        let mut y = x;
        let mut k = 0;
        while k < 10 {
            k += 1;
            if k % 3 == 0 {
                continue;
            }
            y = y.sin() + x;
            if k > 7 {
                break;
            }
        }
        y
    }
}

mod return_from_nested_loops {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] target: f64) -> f64 {
        let mut acc = 0.0;
        for i in 0..x.len() {
            for j in 0..i {
                acc = acc + x[i] * x[j];
                if acc > target {
                    return acc * x[j];
                }
            }
        }
        acc - 1.0
    }
}

/// Only the inner loop exits: the outer one has no `break` or `continue`
/// of its own, and its inner loop ends the body.
mod continue_in_an_inner_loop_only {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array2<f64>) -> f64 {
        let mut t = 0.0;
        for i in 0..x.nrows() {
            for j in (0..x.ncols()).rev() {
                if x[[i, j]] > 0.0 {
                    continue;
                }
                t += x[[i, j]] * t + 1.0;
            }
        }
        t
    }
}

/// An inner loop that exits, inside a branch of an outer loop that does not.
mod exits_of_a_loop_inside_a_branch {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array2<f64>) -> f64 {
        let mut t = 0.0;
        for i in 0..x.nrows() {
            if i > 0 {
                for j in 0..x.ncols() {
                    if x[[i, j]] > 0.5 {
                        break;
                    }
                    if x[[i, j]] > 0.0 {
                        continue;
                    }
                    t += x[[i, j]] * t + 1.0;
                }
            } else {
                t = t * x[[0, 0]] + x[[0, 1]];
            }
            t += 0.5 * x[[i, 0]];
        }
        t
    }
}

/// Exits in the arms of a `match`: an arm that is a bare `return e`, one
/// that returns from a branch, and `continue`/`break` arms in a loop.
mod exits_in_match_arms {
    use super::*;
    #[allow(clippy::collapsible_match)]
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] k: usize) -> f64 {
        let s = x.sum();
        match k % 3 {
            0 => return s * s,
            1 => {
                if s > 0.0 {
                    return s.exp();
                }
            }
            _ => {}
        }
        let mut acc = s;
        for i in 0..x.len() {
            match (i + k) % 3 {
                0 => continue,
                1 => {
                    if i > 3 {
                        break;
                    }
                    acc -= x[i] * 0.5
                }
                _ => acc = acc * x[i] + 1.0,
            }
            acc += x[i];
        }
        acc.sin()
    }
}

#[test]
fn exits_of_inner_loops_only_and_of_match_arms() {
    for (rows, cols) in [(0, 2), (1, 3), (4, 5)] {
        let x = random((rows, cols), 16) - 0.3;
        check_scalar!(continue_in_an_inner_loop_only; ref x dx = x;);
    }
    for rows in [1, 2, 4] {
        let x = random((rows, 5), 17) * 1.4 - 0.5;
        check_scalar!(exits_of_a_loop_inside_a_branch; ref x dx = x;);
    }
    for k in 0..6 {
        for n in [1, 4, 7] {
            check_scalar!(exits_in_match_arms; ref x dx = random(n, 18) - 0.2; k);
        }
    }
}

#[test]
fn early_return_inside_a_loop_and_a_branch() {
    for target in [-1.0, 0.3, 100.0] {
        check_scalar!(return_from_nested_loops; ref x dx = random(4, 15) + 1.0; target);
    }
    for limit in [0.0, 0.5, 100.0] {
        check_scalar!(early_return_in_loop; ref x dx = random(5, 12) * 2.0; limit);
    }
    for (x, y) in [(2.0, 3.0), (0.5, 0.3)] {
        check_scalar!(early_return_from_branch; val x dx = x, val y dy = y;);
    }
}

#[test]
fn break_on_the_first_and_on_the_last_iteration() {
    for stop in [0, 2, 4, 9] {
        check_scalar!(break_at; ref x dx = random(5, 13); stop);
    }
}

#[test]
fn continue_skipping_the_only_active_statement_and_while_exits() {
    for n in [0, 1, 2, 5] {
        check_scalar!(continue_skipping_the_only_active_statement; ref x dx = random(n, 14););
    }
    check_scalar!(while_with_break_and_continue; val x dx = 0.4;);
}

#[test]
fn arrays_built_element_by_element() {
    for n in [1, 2, 5] {
        check_scalar!(outer_product_element_by_element; ref x dx = random(n, 7), ref y dy = random(n + 1, 8););
        check_scalar!(compound_element_writes; ref x dx = random(n, 9), val s ds = 0.6;);
        check_scalar!(prefix_sums; ref x dx = random(n, 10););
    }
    check_scalar!(write_after_read; ref x dx = random(4, 11););
    for s in [-0.5, 0.7] {
        check_scalar!(array_filled_by_either_branch; ref x dx = random(3, 19), val s ds = s;);
    }
}

#[test]
fn rnn_at_every_trip_count() {
    for steps in [0, 1, 2, 10] {
        let xs = random((steps, 3), 1);
        check_scalar!(rnn; ref w dw = random((3, 3), 2) * 0.5; &xs);
    }
}

#[test]
fn branches_taken_either_way() {
    for (x, y) in [(0.8, 0.7), (0.3, 0.7), (0.3, -0.7), (0.8, -0.2)] {
        check_scalar!(branches; val x dx = x, val y dy = y;);
        check_scalar!(same_variable_in_both_branches; val x dx = x - 0.5, val y dy = y;);
    }
}

#[test]
fn a_branch_taken_differently_on_each_iteration() {
    for n in [0, 1, 2, 5] {
        check_scalar!(branch_per_iteration; ref x dx = random(n, 3), val s ds = 0.7;);
    }
}

#[test]
fn rosenbrock_against_its_hand_written_gradient() {
    for n in [2, 3, 10] {
        let x = random(n, 4);
        check_scalar!(rosenbrock; ref x dx = x.clone(););
        let mut expected = Array1::zeros(n);
        for i in 0..n - 1 {
            expected[i] += -2.0 * (1.0 - x[i]) - 400.0 * x[i] * (x[i + 1] - x[i] * x[i]);
            expected[i + 1] += 200.0 * (x[i + 1] - x[i] * x[i]);
        }
        let (_, (g,)) = rosenbrock::f_grad(&x);
        assert!(g
            .iter()
            .zip(&expected)
            .all(|(a, b)| support::check::close(*a, *b, 1e-12)));
    }
}

#[test]
fn nested_loop_whose_inner_trip_count_depends_on_the_outer_index() {
    for n in [0, 1, 4] {
        check_scalar!(nested_triangular; ref x dx = random(n, 5););
    }
}

#[test]
fn loop_condition_compares_an_active_value() {
    for x in [0.5, 3.0, 20.0] {
        check_scalar!(while_active_condition; val x dx = x;);
    }
}

#[test]
fn loops_of_zero_and_one_iterations_and_counted_tapes() {
    for n in [0, 1, 7] {
        check_scalar!(loop_with_no_carried_tape; val x dx = 0.3; n);
    }
    for n in [2, 3, 6] {
        check_scalar!(reverse_iteration; ref x dx = random(n, 6););
    }
}

#[test]
fn loop_gradients_from_many_threads_agree_with_serial_ones() {
    let inputs: Vec<_> = (0..12u64)
        .map(|i| (random((3, 3), i) * 0.5, random((i as usize % 5, 3), 50 + i)))
        .collect();
    let serial: Vec<_> = inputs.iter().map(|(w, xs)| rnn::f_grad(w, xs)).collect();
    let parallel: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = inputs
            .iter()
            .map(|(w, xs)| scope.spawn(move || rnn::f_grad(w, xs)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("gradient thread"))
            .collect()
    });
    assert_eq!(serial, parallel);
}

mod match_arms {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, y: f64, mode: usize, #[constant] opt: Option<usize>) -> f64 {
        let z = match mode {
            0 => x * y,
            1 | 2 => x.sin() + y,
            _ => {
                let t = x * x;
                t - y
            }
        };
        let w = match opt {
            Some(k) => z * k as f64,
            None => z.exp(),
        };
        w + z
    }
}

#[test]
fn match_on_inactive_values() {
    for mode in [0, 1, 2, 7] {
        for opt in [Some(3), None] {
            check_scalar!(match_arms; val x dx = 0.4, val y dy = -0.6; mode, opt);
        }
    }
}

/// Guards, on an integer and on a comparison of active values, with a
/// guarded arm that binds its pattern and guarded arms in a loop that
/// `continue`s.
mod guarded_match_arms {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, v: &Array1<f64>, #[constant] n: usize) -> f64 {
        let y = match n {
            k if k > 2 && x > 0.0 => x * 2.0 + k as f64,
            0 => x.sin(),
            k if k % 2 == 1 => {
                let t = x * v[k % v.len()];
                t * t
            }
            _ => x,
        };
        let mut acc = y;
        for i in 0..v.len() {
            match i {
                j if j == n => acc += v[j] * y,
                j if v[j] > 0.0 => acc = acc * v[j],
                _ => continue,
            }
            acc += 0.1 * x;
        }
        acc
    }
}

/// Labelled exits: `continue 'rows` and `break 'rows` from an inner loop,
/// a labelled `while` left by its own label, and exits three loops deep.
mod labelled_exits {
    use super::*;
    #[allow(clippy::never_loop, unused_labels)]
    #[differentiable]
    pub fn f(m: &Array2<f64>, #[constant] limit: f64) -> f64 {
        let mut acc = 0.0;
        'rows: for i in 0..m.nrows() {
            let mut row = 0.0;
            for j in 0..m.ncols() {
                if m[[i, j]] < -0.5 {
                    continue 'rows;
                }
                row += m[[i, j]] * m[[i, j]];
                if row > limit {
                    break 'rows;
                }
            }
            acc += row.sqrt();
            'halve: while acc > 1.5 {
                acc = acc * 0.5;
                if acc < 1.7 {
                    break 'halve;
                }
                continue 'halve;
            }
        }
        'outer: for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                for k in 0..2 {
                    acc = acc * 0.9 + m[[i, j]] * (k as f64 + 1.0);
                    if acc > 3.0 {
                        continue 'outer;
                    }
                    if acc < -3.0 {
                        break 'outer;
                    }
                }
            }
            acc += m[[i, 0]];
        }
        acc
    }
}

#[test]
fn labelled_break_and_continue() {
    for limit in [0.5, 2.0, 100.0] {
        for scale in [0.5, 1.0, 3.0] {
            let m = random((4, 3), 33) * scale;
            check_scalar!(labelled_exits; ref m dm = m.clone(); limit);
        }
    }
}

/// Loops as values: `break e` out of a `loop` bound by `let`, assigned, and
/// ending the body; a `break` out of a loop bound to `_` (a `()` value);
/// and `break 'l e` out of a labelled `loop` from a nested `for`.
mod loops_with_values {
    use super::*;
    #[allow(clippy::let_unit_value)]
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] steps: usize) -> f64 {
        // Newton's iteration for the square root of each element.
        let mut total: f64 = 0.0;
        for i in 0..x.len() {
            let mut r = x[i] + 1.0;
            let mut k = 0;
            let root = loop {
                let next = 0.5 * (r + (x[i] * x[i] + 0.5) / r);
                k += 1;
                if k >= steps {
                    break next;
                }
                r = next;
            };
            total += root * (i as f64 + 1.0);
        }
        let mut v = x.to_owned();
        let mut n = 0;
        let w = 'scaled: loop {
            for j in 0..v.len() {
                if n >= steps {
                    break 'scaled &v * 2.0;
                }
                v[j] = v[j].tanh() * 1.5;
                n += 1;
            }
        };
        let mut s = total;
        let _ = loop {
            s = s * 0.75;
            if s.abs() < 1.0 {
                break;
            }
        };
        total = loop {
            if n == 0 {
                break total + s;
            }
            total = total * 0.9 + w[n % w.len()];
            n -= 1;
        };
        let mut t = total;
        loop {
            t = t.sin() + 0.5 * t;
            if t.abs() < 0.01 || n > 4 {
                break t * w.sum();
            }
            n += 1;
        }
    }
}

#[test]
fn loops_with_values() {
    for n in [1, 2, 5] {
        let x = random(n, 34);
        for steps in [1, 3, 9] {
            check_scalar!(loops_with_values; ref x dx = x.clone(); steps);
        }
    }
}

/// A `let` of an `if` or `match` one of whose arms exits (`return`,
/// `continue`, `break`): the `let` and what follows move into the arms
/// that give a value.
mod exits_in_let_arms {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] scale: Option<f64>) -> f64 {
        let first = if x[0] > 2.0 {
            x[0] * 2.0
        } else {
            return x[0] * x[0];
        };
        let s = match scale {
            Some(s) if s > 10.0 => return first * s,
            Some(s) => s,
            None => {
                let fallback = first.sin();
                return fallback * 3.0;
            }
        };
        let mut acc = first;
        for i in 0..x.len() {
            let v = match i % 3 {
                0 => continue,
                1 => x[i] * s,
                _ => {
                    if x[i] > 0.0 {
                        break;
                    }
                    x[i].tanh()
                }
            };
            let w = if v > 0.5 { v.sqrt() } else { continue };
            acc += w * first;
        }
        acc
    }
}

#[test]
fn exits_in_let_arms() {
    for (n, shift) in [(1, 3.0), (4, 3.0), (6, 3.0), (4, 0.0)] {
        let x = random(n, 35).mapv(|v| v + 0.4)
            + shift * Array1::from_shape_fn(n, |i| (i == 0) as u8 as f64);
        for scale in [Some(0.8), Some(20.0), None] {
            check_scalar!(exits_in_let_arms; ref x dx = x.clone(); scale);
        }
    }
}

/// A `match` on a shape whose last arm binds it (`n => ..`), which is
/// lowered to `let n = x.len() else { .. }`: inactive, though it reads `x`.
mod match_binding_a_shape {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array2<f64>) -> f64 {
        let mut total = 0.0;
        for row in x.rows() {
            let m = match row.len() {
                0 => continue,
                n => row.sum() / n as f64,
            };
            total += m * m;
        }
        match x.nrows() {
            0 => {}
            n => total += x.sum() / n as f64,
        }
        total
    }
}

#[test]
fn match_binding_a_shape() {
    for shape in [(1, 1), (3, 2), (2, 5)] {
        let x = random(shape, 36);
        check_scalar!(match_binding_a_shape; ref x dx = x.clone(););
    }
}

/// `let y;` with no type, initialised later by active assignments (in
/// every arm, in some arms beside a literal, or in a nested block): the
/// derivative code names each assigned value itself, and the declaration
/// goes where nothing else reads it.
// Late initialisation is what these test.
#[allow(clippy::needless_late_init)]
mod declared_then_assigned {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] k: usize) -> f64 {
        let head;
        if k > 1 {
            head = x[0] * x[0];
        } else {
            head = x[0].sin();
        }
        let tail;
        match k {
            0 => tail = Array1::from_elem(x.len(), 0.5),
            _ => tail = x.mapv(f64::exp),
        }
        let mut scaled;
        scaled = head * 3.0;
        scaled = scaled * tail.sum();
        let inner = {
            let w;
            w = x[x.len() - 1].cos();
            w * 2.0
        };
        scaled + inner
    }
}

#[test]
fn declared_then_assigned() {
    for n in [1, 3] {
        let x = random(n, 37);
        for k in [0, 1, 2] {
            check_scalar!(declared_then_assigned; ref x dx = x.clone(); k);
        }
    }
}

/// Loops over the rows and items of active arrays nested in other loops:
/// the outer loop carries what the inner one's items make active.
mod nested_loops_over_active_items {
    use super::*;
    #[differentiable]
    pub fn f(w: &Array2<f64>, u: &Array1<f64>, #[constant] steps: usize) -> f64 {
        let mut s = 0.0;
        for k in 0..steps {
            for r in w.rows() {
                s += r.sum() * (k as f64 + 1.0);
            }
            for (j, v) in u.iter().enumerate() {
                s = s * 0.5 + v * v * j as f64;
            }
        }
        s
    }
}

#[test]
fn nested_loops_over_active_items() {
    for shape in [(1, 1), (2, 3)] {
        let (w, u) = (random(shape, 38), random(shape.1 + 1, 39));
        for steps in [0, 1, 3] {
            check_scalar!(nested_loops_over_active_items; ref w dw = w.clone(), ref u du = u.clone(); steps);
        }
    }
}

/// Loops that start a variable from a float literal and test it, or what
/// is made from it, in inactive code (`(next - y).abs() < tol`), which
/// needs its type before the loop's active code has fixed it.
mod newton_from_a_literal {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] tol: f64) -> f64 {
        // What the test reads is made from the literal's variable.
        let mut s = 0.0;
        for i in 0..x.len() {
            s = s * 0.5 + x[i];
            if s.abs() > 0.8 {
                s = 0.8;
            }
        }
        let a = x[0] * x[0] + 1.0 + s;
        let mut y = 1.0;
        let mut k = 0;
        while k < 60 {
            let next = 0.5 * (y + a / y);
            if (next - y).abs() < tol {
                return next * x[x.len() - 1];
            }
            y = next;
            k += 1;
        }
        y
    }
}

#[test]
fn newton_from_a_literal() {
    for n in [1, 3] {
        let x = random(n, 40);
        for tol in [1e-2, 1e-12, -1.0] {
            check_scalar!(newton_from_a_literal; ref x dx = x.clone(); tol);
        }
    }
}

/// `if let` binds a constant that an active product reads: the branch's
/// record keeps it for the reverse sweep.
mod if_let_binding {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, #[constant] opt: Option<f64>) -> f64 {
        let mut y = x * 2.0;
        if let Some(v) = opt {
            y = y * v + x * x * v;
        }
        y.sin()
    }
}

#[test]
fn if_let_bindings_in_active_code() {
    for opt in [Some(1.5), None] {
        check_scalar!(if_let_binding; val x dx = 0.7; opt);
    }
}

#[test]
fn match_guards() {
    for n in 0..6 {
        for x in [0.7, -0.4] {
            check_scalar!(guarded_match_arms; val x dx = x, ref v dv = random(4, 31) - 0.3; n);
        }
    }
}

/// A `let` inside a branch, a loop body or a block shadows the outer name
/// only there: the outer variable keeps its value after the scope, and a
/// loop carries the value from before the shadowing `let`. (Lowering once
/// took the inner binding for the outer variable in all three.)
mod shadowing_in_scopes {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, v: &Array1<f64>, #[constant] c: bool) -> f64 {
        let h = x;
        let mut acc = 0.0;
        if c {
            let h = h * 2.0;
            acc = h;
        }
        let z = match c {
            true => {
                let h = h.sin();
                h * acc
            }
            false => 1.0,
        };
        let mut g = x;
        for i in 0..v.len() {
            let h = h * v[i];
            acc += h;
            g = g * 0.5 + h;
            let g = g * 2.0;
            acc += g;
        }
        let y = {
            let x = x * 3.0;
            let k = v.len() + 1;
            x.sin() * k as f64
        };
        h + acc + g + z + y + x
    }
}

/// Blocks as values (`let y = { .. };`, `acc += { .. };`) and as
/// statements, with `continue` and `return` inside a block in a loop: what
/// follows the block runs only if its end was reached.
mod block_expressions {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, v: &Array1<f64>) -> f64 {
        let mut h = {
            let t = v.sum();
            t * x
        };
        for i in 0..v.len() {
            {
                if v[i] < 0.0 {
                    continue;
                }
                let h = h * v[i];
                if h > 50.0 {
                    return h;
                }
            }
            let h2 = {
                let h = h * 1.5;
                h.sin() + h
            };
            h = h2 + v[i];
            h += {
                let u = x * v[i];
                u.tanh()
            };
            if h > 20.0 {
                break;
            }
        }
        h
    }
}

/// A `return` in a bare block outside any loop.
mod block_return_outside_loops {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, v: &Array1<f64>) -> f64 {
        let mut h = x * 2.0;
        {
            let s = v.sum() * h;
            if s > 3.0 {
                return s.sin();
            }
            h = h + s;
        }
        h * x
    }
}

#[test]
fn shadowing_and_blocks_keep_their_scope() {
    for s in [0.1, 5.0] {
        let v = Array1::from_vec(vec![0.5, -1.0, 2.0, 0.3]) * s;
        check_scalar!(block_return_outside_loops; val x dx = 0.7, ref v dv = v.clone(););
    }
    for c in [true, false] {
        check_scalar!(shadowing_in_scopes; val x dx = 0.7, ref v dv = random(4, 32) - 0.3; c);
    }
    // Scales where the loop runs through, breaks, and returns from the block.
    for s in [1.0, 3.0, 10.0] {
        let v = Array1::from_vec(vec![0.5, -1.0, 2.0, 0.3]) * s;
        check_scalar!(block_expressions; val x dx = 0.7, ref v dv = v.clone(););
    }
}

mod loop_with_break {
    use super::*;
    #[differentiable]
    pub fn f(x: f64) -> f64 {
        let mut y = x * 40.0;
        let mut steps = 0;
        loop {
            y = y * 0.5 + x;
            steps += 1;
            if y < 1.5 || steps > 20 {
                break;
            }
        }
        y
    }
}

#[test]
fn loop_until_break() {
    for x in [0.01, 0.3, 1.0] {
        check_scalar!(loop_with_break; val x dx = x;);
    }
}

// Values leaving a branch or starting a loop are moved only when nothing
// reads them afterwards (`moves.rs`); these read them afterwards.

mod branch_value_read_afterwards {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] flip: bool) -> f64 {
        let a = x.mapv(f64::sin);
        let b = x * 2.0;
        let mut c = a.clone();
        if flip {
            c[0] = b[0];
        }
        c.sum() * a.sum() + b.sum()
    }
}

mod outer_array_chosen_in_a_loop {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let a = x.mapv(f64::exp);
        let mut total = 0.0;
        let mut m = a.clone();
        for i in 0..x.len() {
            let mut v = m.clone();
            if x[i] > 0.0 {
                v[i] = x[i] * x[i];
            }
            m = v;
            total = total + m.sum();
        }
        total + a.sum() + m.sum()
    }
}

mod outer_array_borrowed_by_a_branch_in_a_loop {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let a = x.mapv(f64::exp);
        let b = x * 3.0;
        let mut total = 0.0;
        for i in 0..x.len() {
            let r = if i % 2 == 0 { &a } else { &b };
            total = total + r[i] * x[i];
        }
        total
    }
}

#[test]
fn values_read_after_they_leave_a_block() {
    for n in [0, 1, 4] {
        check_scalar!(outer_array_borrowed_by_a_branch_in_a_loop; ref x dx = random(n, 23););
    }
    for flip in [false, true] {
        check_scalar!(branch_value_read_afterwards; ref x dx = random(3, 21); flip);
    }
    for n in [0, 1, 4] {
        check_scalar!(outer_array_chosen_in_a_loop; ref x dx = random(n, 22););
    }
}

/// Regressions: an inactive counter the loop body changes (`j -= 1`, then
/// `x[j]`) was read by the reverse sweep at its final value (found by the
/// scenario registry), and `let mut j = x.len()`, a constant computed from
/// an active value, lost its `mut`.
mod counter_changed_inside_a_loop {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut acc = s;
        let mut j = x.len();
        for _ in 0..x.len() {
            j -= 1;
            acc = acc.cos() * x[j] + s;
        }
        acc
    }
}

/// The same for an inactive float factor changed after its use.
mod factor_changed_after_its_use {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut y = 1.0;
        let mut k = 0.5;
        for i in 0..x.len() {
            y = y * x[i] * k + k;
            k = k * 1.5;
        }
        y
    }
}

#[test]
fn inactive_values_changed_by_the_loop_body() {
    for n in [0, 1, 2, 7] {
        let x = random(n, 41);
        use counter_changed_inside_a_loop as c;
        check_scalar!(c; ref x dx = x.clone(), val s ds = 0.4;);
        use factor_changed_after_its_use as k;
        check_scalar!(k; ref x dx = x.clone(););
    }
}

// Regressions found by the generated programs (`tests/generator`).

/// A loop inside a branch arm adds to an outer adjoint (`b`'s) that it
/// holds as a value meanwhile: it must reach the adjoint outside the arm.
mod loop_in_a_branch_arm_adds_to_an_outer_adjoint {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, b: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut s = x * 2.0;
        if k == 3 {
            return x;
        }
        for i in 0..b.len() {
            s = s.sin() * 0.9 + b[i] * x;
        }
        s
    }
}

/// A formerly active variable assigned a constant, then assigned again.
mod constant_assigned_twice_after_active_use {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, #[constant] k: usize) -> f64 {
        let mut s = x * x;
        let t = s * 3.0;
        s = k as f64 * 0.5;
        s = (s * 0.5 + 1.0).tanh();
        t + s
    }
}

/// A local bound to a literal inside a branch (`s = 1.03` after an early
/// return), read by the reverse sweep through literal arithmetic `s * 0.5`.
mod literal_local_in_a_branch_read_by_the_reverse_sweep {
    use super::*;
    #[allow(unused_assignments)] // as generated
    #[differentiable]
    pub fn f(x: f64, a: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut s = x * a.sum();
        if k == 3 {
            return (k as f64).sqrt();
        }
        s = 1.03;
        s = (s * 0.5 + a[a.len() - 1]).tanh();
        a[0] + s
    }
}

/// A loop whose carried value starts as a parameter the loop also reads
/// (`s = y; for .. { s = f(s, y) }`).
mod loop_starting_from_a_parameter_it_reads {
    use super::*;
    #[differentiable]
    pub fn f(y: f64, #[constant] c: &Array1<f64>) -> f64 {
        let mut s = y;
        for i in (0..c.len()).step_by(2) {
            s = (s * 0.7 + c[i] * y.sin()).tanh();
        }
        s
    }
}

/// `s += c[a.len() - 1]` on an inactive `s`: the right side mentions an
/// active array only for its length, so the statement stays as written.
mod compound_assignment_reading_a_shape {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, a: &Array1<f64>, #[constant] c: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut s = c[0].tanh();
        s += c[a.len() - 1];
        if k.is_multiple_of(2) {
            s = a[0];
        }
        x * s
    }
}

/// A constant local bound from an active array's length, changed by an
/// inactive `if` statement (kept as written, but with its names renamed).
mod inactive_if_changes_a_local_bound_from_a_shape {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, a: &Array1<f64>, #[constant] c: &Array1<f64>) -> f64 {
        let mut s = c[a.len() - 1];
        if c[0] < 0.0 {
            s = s.tanh();
        } else {
            s = s * 2.0;
        }
        s += x * a[0];
        s
    }
}

/// `s = 0.9` on an active float, then inactive float methods on it: the
/// new local keeps the float type.
mod literal_assigned_to_an_active_float {
    use super::*;
    #[allow(unused_assignments)] // as generated
    #[differentiable]
    pub fn f(x: f64) -> f64 {
        let mut s = x.sin();
        s = 0.90;
        (1.0 + (1.19 + s) * (1.19 + s)).ln() + x * 2.0
    }
}

/// A constant read by the pullback (`c[0] - s3`) whose local changes later
/// (`s3 += ..`): the pullback closure recomputed it from the final value, a
/// wrong `f_vjp` beside a right `f_grad`. Now it is captured.
mod constant_whose_local_changes_later {
    use super::*;
    #[allow(unused_assignments)] // as generated
    #[differentiable]
    pub fn f(x: f64, #[constant] c: &Array1<f64>, #[constant] k: usize) -> f64 {
        let s1 = x.sin();
        let mut s3 = c.mean().unwrap();
        let s4 = (1.0 + (c[0] - s3) / (1.0 + s1 * s1)).ln();
        s3 += k as f64 * 0.5;
        s4 + s3
    }
}

/// A copy of a constant array, made active by element writes in a loop
/// whose range reads it (`1..u.len()`): the range is made before the loop
/// takes `u` over.
mod range_reads_the_array_the_loop_carries {
    use super::*;
    #[differentiable]
    pub fn f(a: &Array1<f64>, #[constant] c: &Array1<f64>) -> f64 {
        let mut u = c.to_owned();
        for i in 1..u.len() {
            u[i] = u[i - 1] * 0.5 + u[i] * a[0];
        }
        u.sum()
    }
}

/// A constant read by a loop's pullback (`s * y`) and changed afterwards by
/// an inactive arm of a `match` (`s += 1.07`): `f_grad`'s reverse sweep,
/// run after it, read the changed value. Names the body assigns are now
/// read once, where they are used.
mod constant_changed_after_a_loop_reads_it {
    use super::*;
    #[allow(unused_assignments)] // as generated
    #[differentiable]
    pub fn f(y: f64, a: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut s = (k as f64).sqrt() + 0.5;
        let mut w = Array1::<f64>::zeros(a.len());
        for i in 0..a.len() {
            w[i] += (a[i] + s * y).sin();
        }
        match k % 3 {
            0 => s = y / (1.0 + (s - y) * (s - y)),
            1 => s = s * s,
            _ => s += 1.07,
        }
        s + w.sum() * 0.3
    }
}

/// An array made in the body and used last inside one arm of a `match`
/// (`v.mapv(f64::tanh)` may take its buffer over), whose shape the reverse
/// sweep reads after the `match`: the name the arm bound to the shape did
/// not reach it (a compile error). Only an operation of the block that
/// made the array takes it over now.
mod temporary_taken_over_in_a_branch_arm {
    use super::*;
    #[differentiable]
    pub fn f(y: f64, a: &Array1<f64>, #[constant] k: usize) -> f64 {
        let v = a * (y / (1.0 + y * y));
        let mut s = y;
        match k % 3 {
            0 => s = s * 2.0,
            _ => s += v.mapv(f64::tanh).sum(),
        }
        s
    }
}

// An adjoint's first contribution is an assignment (`a_bar = Some(..)`)
// while the compiler knows it is still `None`; these are the cases where a
// second contribution could be mistaken for a first.
mod two_carried_values_share_their_next_value {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, n: usize) -> f64 {
        let mut a = x.to_owned();
        let mut b = x * 2.0;
        for _ in 0..n {
            let t = &(&a * &b) * 0.5 + x;
            a = t.clone();
            b = t;
        }
        a.sum() + 3.0 * b.sum()
    }
}

mod both_arms_yield_the_same_value {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let t = x * s;
        let mut p = t.clone();
        let mut q = &t * 0.5;
        if s > 0.0 {
            let w = &t * 3.0 + &q;
            p = w.clone();
            q = w;
        } else {
            let u = x.mapv(f64::sin);
            q = &u * &t;
            p = u + &p;
        }
        (&p * 2.0).sum() + (&q * &q).sum()
    }
}

mod contributions_before_and_after_an_inner_loop {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, n: usize) -> f64 {
        let y = x * 1.5;
        let mut acc = 0.0;
        for i in 0..n {
            let head = (&y * x[i]).sum();
            let mut z = y.to_owned();
            for j in 0..x.len() {
                z[j] = z[j] * head;
            }
            acc = acc + (&z * &y).sum() + y[i % x.len()];
        }
        acc + y.sum()
    }
}

mod loop_starting_from_values_read_elsewhere {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, n: usize) -> f64 {
        let w = x.mapv(f64::sin);
        let s = x * 2.0;
        let mut acc = s.clone();
        for _ in 0..n {
            let mut t = w.clone();
            for j in 0..x.len() {
                t[j] = t[j] * x[j] + acc[j];
            }
            acc = &acc * 0.5 + &t;
        }
        (&acc * &s).sum() + w.sum()
    }
}

mod inner_loop_starting_from_an_outer_value {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, n: usize) -> f64 {
        let c = x.sum().sin();
        let d = c * 2.0;
        let mut acc = d;
        for i in 0..n {
            let mut t = c;
            for j in 0..x.len() {
                t = t * x[j] + 0.1;
            }
            acc = acc + t * x[i % x.len()];
        }
        acc
    }
}

#[test]
fn first_contributions_that_are_not_the_only_ones() {
    for n in [0, 1, 3] {
        check_scalar!(loop_starting_from_values_read_elsewhere; ref x dx = random(3, 54); n);
        check_scalar!(inner_loop_starting_from_an_outer_value; ref x dx = random(3, 55); n);
    }
    for n in [0, 1, 3] {
        check_scalar!(two_carried_values_share_their_next_value; ref x dx = random(4, 51); n);
        check_scalar!(contributions_before_and_after_an_inner_loop; ref x dx = random(3, 52); n);
    }
    for s in [-0.5, 0.7] {
        check_scalar!(both_arms_yield_the_same_value; ref x dx = random(3, 53), val s ds = s;);
    }
}

#[test]
fn programs_the_generator_found() {
    for (n, k) in [(1, 0), (4, 3), (5, 2)] {
        let c = random(n, 43);
        use loop_in_a_branch_arm_adds_to_an_outer_adjoint as m1;
        check_scalar!(m1; val x dx = 0.4, ref b db = random(n, 44); k);
        use constant_assigned_twice_after_active_use as m2;
        check_scalar!(m2; val x dx = 0.4; k);
        use literal_local_in_a_branch_read_by_the_reverse_sweep as m3;
        check_scalar!(m3; val x dx = 0.4, ref a da = random(n, 45); k);
        use loop_starting_from_a_parameter_it_reads as m4;
        check_scalar!(m4; val y dy = 0.4; &c);
        use inactive_if_changes_a_local_bound_from_a_shape as m6;
        check_scalar!(m6; val x dx = 0.4, ref a da = random(n, 47); &c);
        use literal_assigned_to_an_active_float as m7;
        check_scalar!(m7; val x dx = 0.4;);
        use constant_whose_local_changes_later as m8;
        check_scalar!(m8; val x dx = 0.4; &c, k);
        use range_reads_the_array_the_loop_carries as m9;
        check_scalar!(m9; ref a da = random(n, 48); &c);
        use constant_changed_after_a_loop_reads_it as m10;
        check_scalar!(m10; val y dy = 0.4, ref a da = random(n, 49); k);
        use compound_assignment_reading_a_shape as m5;
        check_scalar!(m5; val x dx = 0.4, ref a da = random(n, 46); &c, k);
        use temporary_taken_over_in_a_branch_arm as m11;
        check_scalar!(m11; val y dy = 0.4, ref a da = random(n, 50); k);
    }
}

// Two blocks binding the same inactive name (`p`), which generated code
// flattens into one scope: the second binding must not replace the first
// where the reverse sweep reads it. Both modes agreed on a wrong gradient
// before the second binding got a name of its own.
mod sibling_blocks_with_one_name {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, #[constant] k: usize) -> f64 {
        let mut acc = {
            let p = k as f64 * 0.5;
            p * x
        } + {
            let p = k as f64 * 3.0;
            p * x.sin()
        };
        for i in 0..2 {
            let y = {
                let p = (k + i) as f64 * 0.5;
                p * x
            } + {
                let p = k as f64 * 3.0;
                p * x.sin()
            };
            acc += y * acc * 0.1 + y;
        }
        acc
    }
}

#[test]
fn sibling_blocks_keep_their_own_constants() {
    for k in [1, 2] {
        check_scalar!(sibling_blocks_with_one_name; val x dx = 0.8; k);
    }
}

// The same with patterns: a tuple `let` in two blocks, and a `match` arm
// (lowered to a `let .. else`) binding a name a block bound before.
mod pattern_bindings_with_one_name {
    use super::*;
    #[allow(clippy::match_single_binding)] // the arm's binding is under test
    #[differentiable]
    pub fn f(x: f64, #[constant] k: usize) -> f64 {
        let mut y = {
            let (p, q) = (k as f64 * 0.5, 1.0);
            p * x * q
        } + {
            let (p, q) = (k as f64 * 3.0, 2.0);
            p * x.sin() * q
        };
        {
            let p = k as f64;
            y += p * x;
        }
        match k {
            p => y += p as f64 * x * x,
        }
        y
    }
}

#[test]
fn pattern_bindings_keep_their_own_constants() {
    for k in [1, 2] {
        check_scalar!(pattern_bindings_with_one_name; val x dx = 0.8; k);
    }
}

/// Views of a local constant array in a branch (`m.diag()`, `let r = m.row(0)`),
/// which the branch's record keeps for the pullback beyond the block that
/// binds `m`: kept as owned copies. Seed 46 of the program generator found
/// the view kept, borrowing the dropped local.
mod views_of_a_branch_local {
    use super::*;
    use ad::ndarray::Axis;
    #[differentiable]
    pub fn f(x: f64, a: &Array1<f64>, #[constant] c: &Array1<f64>, #[constant] k: usize) -> f64 {
        if k == 0 {
            return x * a.sum();
        }
        let m = c
            .view()
            .insert_axis(Axis(1))
            .dot(&c.view().insert_axis(Axis(0)));
        let r = m.row(0);
        let s = m.diag().mapv(|t| (t * x).sin()).sum() * a.mapv(f64::tanh).sum();
        s + r.dot(a) * x
    }
}

#[test]
fn views_of_locals_kept_beyond_their_branch() {
    let c = random(3, 80);
    for k in [0, 1] {
        check_scalar!(views_of_a_branch_local; val x dx = 0.4, ref a da = random(3, 81); &c, k);
    }
}

/// Named views of a local array outside any branch or loop, which the
/// pullback closure of `f_vjp` reads: it owns the array and views it again.
/// Seed 48 of the program generator found the closure borrowing the array.
mod named_views_read_by_the_pullback {
    use super::*;
    use ad::ndarray::Axis;
    #[differentiable]
    pub fn f(x: f64, a: &Array1<f64>, #[constant] c: &Array1<f64>) -> f64 {
        let m = c
            .view()
            .insert_axis(Axis(1))
            .dot(&c.view().insert_axis(Axis(0)));
        let d = m.diag();
        let corner = d.slice(ad::ndarray::s![..2]);
        d.mapv(|t| (t * x).sin()).sum() * a.sum()
            + d[0] * x
            + corner.dot(&a.slice(ad::ndarray::s![1..]))
    }
}

#[test]
fn named_views_of_locals_read_by_the_pullback() {
    let c = random(3, 85);
    check_scalar!(named_views_read_by_the_pullback; val x dx = 0.4, ref a da = random(3, 86); &c);
}

/// A view bound to a name in a loop body (`let d = m.diag();`), which the
/// tape saves as an owned copy. Named views failed to compile, in a loop and
/// in a branch (`r` above), borrowing `m` beyond its block.
mod named_views_of_a_loop_local {
    use super::*;
    use ad::ndarray::Axis;
    #[differentiable]
    pub fn f(x: f64, a: &Array1<f64>, #[constant] c: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut s = x;
        for i in 0..k {
            let m = c
                .view()
                .insert_axis(Axis(1))
                .dot(&c.view().insert_axis(Axis(0)))
                * (i as f64 + 1.0);
            let d = m.diag();
            let r = m.row(i % 3);
            s = s * d.dot(a) + r.dot(a).sin() * x;
        }
        s
    }
}

#[test]
fn named_views_of_locals_kept_beyond_their_loop_body() {
    let c = random(3, 82);
    for k in [0, 1, 4] {
        check_scalar!(named_views_of_a_loop_local; val x dx = 0.4, ref a da = random(3, 84); &c, k);
    }
}

/// Loops over the items of inactive arrays and lists the body makes
/// (`for v in table.iter()`): the tape saves each item as an owned copy, as
/// it outlives the array. Saved as references, they failed to compile
/// ("`table` does not live long enough").
mod items_of_local_arrays {
    use super::*;
    #[differentiable]
    pub fn f(a: &Array1<f64>, #[constant] c: &Array1<f64>, #[constant] k: usize) -> f64 {
        let table = c.mapv(|t| t * t * 0.5 - t);
        let mut s = 0.0;
        for _ in 0..k {
            for v in table.iter() {
                s = (s * 0.6 + v * a[0]).sin();
            }
        }
        for (i, v) in table.iter().enumerate() {
            s = (s + v * a[i % a.len()]).tanh();
        }
        let m = Array2::from_shape_fn((3, a.len()), |(i, j)| c[j] * (i as f64 + 1.0));
        for row in m.rows() {
            s = (s + row.dot(a)).tanh();
        }
        let bag: Vec<Array1<f64>> = (0..k).map(|j| c * (j as f64)).collect();
        for instance in &bag {
            s = (s * 0.5 + instance.dot(a)).sin();
        }
        for (u, v) in c.iter().zip(table.iter()) {
            s = (s * u + v * a[1]).sin();
        }
        s + table.dot(a)
    }
}

#[test]
fn items_of_local_arrays_saved_by_the_tape() {
    let c = random(4, 87);
    for k in [0, 1, 3] {
        check_scalar!(items_of_local_arrays; ref a da = random(4, 88); &c, k);
    }
}

/// A tree of the user's own type, walked with a stack and a queue.
pub enum Tree {
    Leaf(usize),
    Node(Box<Tree>, Box<Tree>),
}

fn tree(depth: usize, next: &mut usize) -> Tree {
    if depth == 0 {
        *next += 1;
        Tree::Leaf(*next - 1)
    } else {
        Tree::Node(
            Box::new(tree(depth - 1, next)),
            Box::new(tree(depth.saturating_sub(2), next)),
        )
    }
}

/// `while let` over inactive values (a stack's `pop()`, a queue's
/// `pop_front()`, with `continue`, and a labelled one left from a nested
/// loop), and `let ... else { continue }`: rewritten to `loop` and `match`
/// before exits are desugared. Rejected before ("`while let` is not
/// supported", "this `break` .. is not supported yet").
mod while_let_walks {
    use super::*;
    // `while let Some(pick) = rest.next()` is what is being tested.
    #[allow(clippy::while_let_on_iterator)]
    #[differentiable]
    pub fn f(w: &Array1<f64>, #[constant] t: &Tree, #[constant] picks: &[Option<usize>]) -> f64 {
        let mut stack = vec![t];
        let mut s = 0.0;
        while let Some(node) = stack.pop() {
            match node {
                Tree::Leaf(i) => s = (s + w[*i % w.len()]).sin(),
                Tree::Node(l, r) => {
                    stack.push(l);
                    stack.push(r);
                    s *= 0.9;
                }
            }
        }
        let mut queue = std::collections::VecDeque::from([(t, 0usize)]);
        while let Some((node, depth)) = queue.pop_front() {
            let Tree::Node(l, r) = node else {
                s = s * 0.8 + w[depth % w.len()];
                continue;
            };
            queue.push_back((l, depth + 1));
            queue.push_back((r, depth + 1));
        }
        let mut rest = picks.iter();
        'picks: while let Some(pick) = rest.next() {
            let Some(i) = pick else { continue };
            for k in 0..3 {
                if k + i > 4 {
                    break 'picks;
                }
                s = (s * w[(i + k) % w.len()]).tanh() + 0.1;
            }
        }
        s
    }
}

#[test]
fn while_let_walks_of_trees() {
    let picks = [Some(0), None, Some(1), Some(3), Some(0)];
    for depth in [0, 1, 3] {
        let t = tree(depth, &mut 0);
        for n in [1, 4] {
            check_scalar!(while_let_walks; ref w dw = random(n, 89 + depth as u64); &t, &picks[..]);
        }
    }
}

/// An arm binding a pattern's name again (`Some(x) => { let x =
/// Array1::from(x.clone()); .. }`), the new value read by the reverse
/// sweep: the record saved the name under the pattern's generated
/// identifier, which could not see the new binding ("cannot find value
/// `x`").
mod pattern_name_bound_again {
    use super::*;
    #[differentiable]
    pub fn f(w: &Array2<f64>, #[constant] leaf: &Option<Vec<f64>>) -> f64 {
        match leaf {
            Some(x) => {
                let x = Array1::from(x.clone());
                w.dot(&x).mapv(f64::tanh).sum()
            }
            None => w.sum(),
        }
    }
}

#[test]
fn pattern_names_bound_again_in_an_arm() {
    for leaf in [Some(vec![0.5, -1.0, 0.3]), None] {
        check_scalar!(pattern_name_bound_again; ref w dw = random((2, 3), 90); &leaf);
    }
}

/// Labelled blocks, as a statement (left early), as a value (`break 'found
/// v` from a nested loop, or its last expression), and in a loop body:
/// each the labelled loop that runs once. They were rejected before.
mod labelled_blocks {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] n: usize) -> f64 {
        let mut y = x[0];
        'scaled: {
            if n > 2 {
                break 'scaled;
            }
            y = y * x[x.len() - 1];
        }
        let found = 'found: {
            for i in 0..x.len() {
                if x[i] > 0.3 && i >= n {
                    break 'found x[i] * 2.0;
                }
            }
            x.sum()
        };
        for i in 0..x.len() {
            'body: {
                if i == n {
                    break 'body;
                }
                y += x[i].sin();
            }
            y *= 1.1;
        }
        y * found
    }
}

#[test]
fn labelled_blocks_as_loops_run_once() {
    for n in [0, 1, 3] {
        for len in [1, 4] {
            check_scalar!(labelled_blocks; ref x dx = random(len, 91 + n as u64); n);
        }
    }
}

/// Tuple locals a loop assigns, whole or by item (`acc = (acc.0 + v, ..)`,
/// `stats.1 += v * v`), also left by a `break`, then read by item, by
/// pattern and whole: split into one local per item before lowering. They
/// were rejected before.
mod tuples_carried_by_loops {
    use super::*;

    fn weighted((s, q): (f64, f64), w: f64) -> f64 {
        s * w + q
    }

    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut acc = (0.0, 1.0);
        for i in 0..x.len() {
            acc = (acc.0 + x[i], acc.1 * x[i].tanh());
        }
        let mut stats = (0.0, 0.0, 0usize);
        for &v in x.iter() {
            stats.0 += v;
            stats.1 += v * v;
            stats.2 += 1;
        }
        let n = stats.2 as f64;
        let (s, q, _) = stats;
        let mut p = (x[0], 0.5_f64);
        for _ in 0..k {
            p = (p.1.sin(), p.0 + p.1 * 0.5);
            if p.0 > 0.9 {
                break;
            }
        }
        let bonus = if weighted(p, 2.0) > 1.0 { p.0 } else { p.1 };
        acc.0 * acc.1 + q / n - (s / n).powi(2) + p.0 * 2.0 + p.1 * bonus
    }
}

#[test]
fn tuples_carried_by_loops_split_into_items() {
    for k in [0, 1, 4] {
        for n in [1, 3] {
            check_scalar!(tuples_carried_by_loops; ref x dx = random(n, 92 + k as u64); k);
        }
    }
}

/// A tuple a call makes, carried by a loop and read by item: split into
/// the items read, each value bound once (`t = stats(..)` was rejected).
mod call_tuples_carried_by_loops {
    use super::*;

    #[differentiable]
    pub fn stats(x: &Array1<f64>) -> (f64, f64, f64) {
        let m = x.mean().unwrap();
        (m, (x * x).mean().unwrap() - m * m, x.sum())
    }

    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] k: usize) -> f64 {
        let mut t = stats(x);
        for i in 0..k {
            t = stats(&(x * t.0 + i as f64));
            t.1 += 0.5;
        }
        t.1 * t.0
    }
}

#[test]
fn tuples_of_calls_carried_by_loops_split_into_the_items_read() {
    for k in [0, 1, 3] {
        check_scalar!(call_tuples_carried_by_loops; ref x dx = random(3, 95 + k as u64); k);
    }
}

/// `let s;` assigned active values, its name also a closure's parameter
/// in a loop head (`map(|s| ..)`, another binding): the declaration was
/// kept as if that read it, and rustc could not infer its type (stress
/// seed 70).
mod late_declaration_and_a_closure_parameter {
    use super::*;
    #[allow(clippy::needless_late_init)]
    #[differentiable]
    pub fn f(x: f64, y: f64, #[constant] c: &Array1<f64>, #[constant] k: usize) -> f64 {
        let s;
        match k % 2 {
            0 => s = y * 2.0,
            _ => s = y + x,
        }
        let mut acc = x;
        for m in c.iter().map(|s| (s * 0.7).sin()) {
            acc = acc * 0.8 + m + s * 0.1;
        }
        acc
    }
}

#[test]
fn late_declarations_beside_closure_parameters() {
    let c = random(3, 93);
    for k in [0, 1] {
        check_scalar!(late_declaration_and_a_closure_parameter; val x dx = 0.4, val y dy = -0.3; &c, k);
    }
}
