//! Calls between differentiated functions, and custom derivative rules
//! written by hand as `g_vjp` / `g_jvp`.

#[macro_use]
mod support;

use ad::differentiable;
use ad::ndarray::{Array1, Array2};
use support::{random, SIZES};

#[differentiable]
pub fn dense(w: &Array2<f64>, b: &Array1<f64>, #[constant] x: &Array1<f64>) -> Array1<f64> {
    (w.dot(x) + b).mapv(f64::tanh)
}

#[differentiable]
pub fn square(x: f64) -> f64 {
    x * x
}

/// A custom rule: softplus with a hand-written, numerically stable
/// derivative (the logistic function).
pub fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

pub fn softplus_vjp(x: f64) -> (f64, impl FnOnce(f64) -> (f64,)) {
    let s = 1.0 / (1.0 + (-x).exp());
    (softplus(x), move |dy| (dy * s,))
}

pub fn softplus_jvp(x: f64, dx: f64) -> (f64, f64) {
    (softplus(x), dx / (1.0 + (-x).exp()))
}

mod network {
    use super::*;
    #[differentiable]
    pub fn f(
        w: &Array2<f64>,
        b: &Array1<f64>,
        v: &Array1<f64>,
        #[constant] x: &Array1<f64>,
    ) -> f64 {
        let h = dense(w, b, x);
        let s = h.dot(v);
        square(s) + softplus(s - 1.0)
    }
}

mod called_twice {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        square(x) * square(x + y) + super::square(y)
    }
}

/// A user function as `mapv`'s argument, by path (`mapv(softplus)`) and
/// called in a closure: each element goes through its `_vjp`/`_jvp`.
mod functions_mapped_over_arrays {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let a = x.mapv(softplus) + x.mapv(super::square);
        let b = x.mapv(|v| square(v) * softplus(v - 0.5));
        a.sum() + b.sum()
    }
}

mod constant_argument {
    use super::*;
    #[differentiable]
    pub fn f(w: &Array2<f64>, #[constant] b: &Array1<f64>, #[constant] x: &Array1<f64>) -> f64 {
        dense(w, b, x).sum()
    }
}

#[differentiable]
pub fn scaled_power(x: f64, s: f64, #[constant] n: i32) -> f64 {
    x.powi(n) * s
}

/// Arguments that are expressions of constants (`n - 1`) and of active
/// values passed to an active parameter in the callee (`2.0 * k`).
mod constant_expression_arguments {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, #[constant] n: i32, #[constant] k: f64) -> f64 {
        scaled_power(x, 2.0 * k, n - 1) + scaled_power(x * x, k + 1.0, n + 1)
    }
}

/// A call recomputed in a branch's reverse sweep (its argument is a
/// reference to a local), whose other argument is an inactive value read
/// through an active one (`c[k % a.len()]`): the reverse sweep passes the
/// value the branch saved.
mod inactive_argument_in_a_branch {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, a: &Array1<f64>, #[constant] c: &Array1<f64>, #[constant] k: usize) -> f64 {
        if k == 3 {
            return x * 2.0;
        }
        let h = a * x;
        let twice = c + c;
        scaled_sum(&h, twice[k % a.len()]) + twice.sum() * x
    }
}

#[differentiable]
pub fn scaled_sum(v: &Array1<f64>, s: f64) -> f64 {
    (v * s).mapv(f64::tanh).sum()
}

#[differentiable]
pub fn layer(w: &Array2<f64>, h: &Array1<f64>) -> Array1<f64> {
    w.dot(h).mapv(f64::tanh)
}

/// Layers stacked by passing a local by reference (`layer(v, &h)`), once,
/// in a loop that reads it, and in a loop that replaces it: the reverse
/// sweep calls `layer_vjp` again, where the local is at hand.
mod references_to_locals {
    use super::*;
    #[differentiable]
    pub fn f(
        w: &Array2<f64>,
        b: &Array1<f64>,
        v: &Array2<f64>,
        #[constant] x: &Array1<f64>,
    ) -> f64 {
        let h = dense(w, b, x);
        let mut s = layer(v, &h).sum();
        for _ in 0..3 {
            let k = layer(v, &h);
            s += k.sum() * s;
        }
        let mut r = h.clone();
        for _ in 0..2 {
            r = layer(v, &r);
        }
        // An inactive local, by reference, in an active parameter's slot.
        let ones = Array1::<f64>::ones(w.nrows());
        s + r.sum() + layer(v, &ones).sum() * s
    }
}

#[test]
fn references_to_locals_as_arguments() {
    for n in SIZES {
        let x = random(n, 8);
        check_scalar!(references_to_locals; ref w dw = random((3, n), 1), ref b db = random(3, 2), ref v dv = random((3, 3), 3); &x);
    }
}

#[test]
fn nested_differentiable_functions_and_custom_rules() {
    for n in SIZES {
        let x = random(n, 3);
        check_scalar!(network; ref w dw = random((4, n), 1), ref b db = random(4, 2), ref v dv = random(4, 4); &x);
    }
    check_scalar!(called_twice; val x dx = 0.3, val y dy = -0.8;);
    for n in SIZES {
        check_scalar!(functions_mapped_over_arrays; ref x dx = random(n, 6););
    }
}

#[test]
fn constant_arguments_to_active_parameters() {
    for n in SIZES {
        let (b, x) = (random(3, 6), random(n, 7));
        check_scalar!(constant_argument; ref w dw = random((3, n), 5); &b, &x);
    }
    for n in [1, 3] {
        check_scalar!(constant_expression_arguments; val x dx = 0.8; n, 0.6);
    }
    let c = random(4, 8);
    for k in [1, 3, 6] {
        check_scalar!(inactive_argument_in_a_branch; val x dx = 0.8, ref a da = random(4, 9); &c, k);
    }
}

#[test]
fn gradients_from_many_threads_agree_with_serial_ones() {
    let inputs: Vec<_> = (0..16)
        .map(|i: usize| {
            let s = i as u64;
            (
                random((4, 1 + i % 5), s),
                random(4, 100 + s),
                random(4, 200 + s),
                random(1 + i % 5, 300 + s),
            )
        })
        .collect();
    let serial: Vec<_> = inputs
        .iter()
        .map(|(w, b, v, x)| network::f_grad(w, b, v, x))
        .collect();
    let parallel: Vec<_> = std::thread::scope(|scope| {
        let handles: Vec<_> = inputs
            .iter()
            .map(|(w, b, v, x)| scope.spawn(move || network::f_grad(w, b, v, x)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("gradient thread"))
            .collect()
    });
    assert_eq!(serial, parallel);
}

/// Recursion, in both modes: reverse mode boxes the pullback of each call
/// of itself (`rules::boxed_pullback`), as a pullback holding its own type
/// would be infinite.
mod recursion {
    use super::*;

    #[differentiable]
    pub fn repeated_square(x: f64, #[constant] n: usize) -> f64 {
        if n == 0 {
            x
        } else {
            repeated_square(square(x), n - 1)
        }
    }

    /// Calls itself twice per level, from a loop, on arrays.
    #[differentiable]
    pub fn branching(w: &Array1<f64>, #[constant] depth: usize) -> f64 {
        if depth == 0 {
            return w.sum();
        }
        let mut acc = 0.0;
        for k in 0..2 {
            acc += w[k] * branching(w, depth - 1);
        }
        acc.sin()
    }

    /// Generic over the float type, with a tuple result.
    #[differentiable]
    pub fn pair<F: ad::Float>(x: F, y: F, #[constant] n: usize) -> (F, F) {
        if n == 0 {
            (x, y)
        } else {
            let (a, b) = pair(x * y, x - y, n - 1);
            (a.sin(), b * x)
        }
    }

    /// Generic over the float type, passing its parameter by value: the
    /// pullbacks of its calls of itself add into the caller's adjoint.
    #[differentiable]
    pub fn tower<F: ad::Float>(x: F, #[constant] n: usize) -> F {
        if n == 0 {
            x
        } else {
            (x * tower(x, n - 1)).sin()
        }
    }

    /// Halves constant index lists it splits into locals (so each call's
    /// pullback is recomputed by the reverse sweep), carrying along an
    /// active parameter that reaches nothing but the calls of itself.
    #[differentiable]
    #[allow(clippy::only_used_in_recursion)]
    pub fn halves(x: &Array1<f64>, w: f64, carried: f64, #[constant] idx: &[usize]) -> f64 {
        if idx.len() == 1 {
            return x[idx[0]] * w;
        }
        let (l, r) = idx.split_at(idx.len() / 2);
        (halves(x, w, carried, l) * w).tanh() + halves(x, w, carried, r).cos()
    }

    pub mod tower_case {
        use super::*;
        #[differentiable]
        pub fn f(x: f64, #[constant] n: usize) -> f64 {
            tower(x, n) * 2.0
        }
    }

    pub mod halves_case {
        pub use super::{
            halves as f, halves_grad as f_grad, halves_jvp as f_jvp, halves_vjp as f_vjp,
        };
    }

    pub mod repeated_square_case {
        pub use super::{
            repeated_square as f, repeated_square_grad as f_grad, repeated_square_jvp as f_jvp,
            repeated_square_vjp as f_vjp,
        };
    }

    pub mod branching_case {
        pub use super::{
            branching as f, branching_grad as f_grad, branching_jvp as f_jvp,
            branching_vjp as f_vjp,
        };
    }

    pub mod pair_sum {
        use super::*;
        #[differentiable]
        pub fn f(x: f64, y: f64, #[constant] n: usize) -> f64 {
            let (a, b) = pair(x, y, n);
            a * b + a
        }
    }
}

#[test]
fn recursion_in_both_modes() {
    use recursion::{branching_case, halves_case, pair_sum, repeated_square_case, tower_case};
    for n in 0..4 {
        check_scalar!(repeated_square_case; val x dx = 1.1; n);
        check_scalar!(branching_case; ref w dw = random(3, 40 + n as u64); n);
        check_scalar!(pair_sum; val x dx = 0.7, val y dy = -0.4; n);
        check_scalar!(tower_case; val x dx = 0.6; n);
    }
    for len in [1, 2, 5, 8] {
        let idx: Vec<usize> = (0..len).rev().collect();
        check_scalar!(
            halves_case;
            ref x dx = random(len, 60 + len as u64), val w dw = 0.7, val carried dc = 0.3;
            &idx
        );
    }
}

/// Closures bound to locals and called on active values are inlined: one
/// that reads an active value (`w`), one of two parameters called with
/// them swapped, one used by `mapv`, and one only called on constants.
mod local_closures {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, w: f64) -> f64 {
        let sigmoid = |z: f64| 1.0 / (1.0 + (-z).exp());
        let scaled = |a: f64, b: f64| a * w + b;
        let square = |v| v * v;
        let mut acc = 0.0;
        for i in 0..x.len() {
            acc += sigmoid(scaled(x[i], 0.5));
        }
        let (a, b) = (1.0, 2.0);
        acc + x.mapv(|v| square(v) * 0.5).sum() + x.mapv(sigmoid).sum() + scaled(b, a) + square(3.0)
    }
}

/// A closure that reads active values is not emitted, so where inactive
/// code calls it (a condition, a cast to an integer, a sum of calls on
/// constants) the call is its body too. Seed 44 of the program generator
/// found a sum of two such calls emitted as written, calling a closure
/// that did not exist.
mod hidden_closures_in_inactive_code {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, a: &Array1<f64>, #[constant] c: &Array1<f64>) -> f64 {
        let g = |p: f64| (p * (1.0 + a[a.len() - 1] * a[0]).sqrt()).tanh();
        let twice = |p: f64, q: f64| g(p) + g(q) * x;
        let mut s = g(c[c.len() - 1]) + g(c[0]);
        if g(c[0]) > 0.1 {
            s *= 2.0;
        }
        let n = (twice(c[1], c[0]) * 3.0).abs() as usize;
        s * g(x) + n as f64 + twice(x, c[0])
    }
}

#[test]
fn closures_called_by_inactive_code() {
    let c = Array1::from(vec![0.4, -0.3, 0.9]);
    for x in [0.3, -0.8] {
        check_scalar!(hidden_closures_in_inactive_code; val x dx = x, ref a da = random(3, 52) + 0.5; &c);
    }
}

#[test]
fn local_closures_are_inlined() {
    for n in [1, 4] {
        check_scalar!(local_closures; ref x dx = random(n, 51), val w dw = 0.6;);
    }
}

/// Functions that return several values, and callers that destructure
/// them (`let (m, v) = stats(x);`), read them by position (`t.0`), call
/// them in loops and branches, and return a tuple of their own.
mod tuples {
    use super::*;

    #[differentiable]
    pub fn stats(x: &Array1<f64>) -> (f64, f64) {
        let m = x.mean().unwrap();
        let v = x.mapv(|a| (a - m).powi(2)).mean().unwrap();
        (m, v)
    }

    /// A scalar and an array, from either branch; a constant item.
    #[differentiable]
    pub fn branchy(x: &Array1<f64>, #[constant] flip: bool) -> (f64, Array1<f64>, f64) {
        let s = x.sum();
        if flip {
            (s * 2.0, x.mapv(f64::sin), 0.5)
        } else {
            let y = x * s;
            (s.sin(), y, 0.5)
        }
    }

    /// A tuple inside the tuple, as `f_grad` returns its gradients.
    #[differentiable]
    pub fn grouped(x: &Array1<f64>) -> (f64, (f64, Array1<f64>)) {
        let (m, v) = stats(x);
        (m * v, (v.sqrt(), x.mapv(f64::cos) * m))
    }

    #[differentiable]
    pub fn nested(x: &Array1<f64>) -> (f64, f64) {
        let (m, v) = stats(x);
        let (m2, v2) = stats(&(x * m));
        (m2 + v, v2)
    }

    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] flip: bool) -> f64 {
        let (m, v) = stats(x);
        let (a, y, half) = branchy(x, flip);
        let t = nested(x);
        // Items of items, by a nested pattern and by position.
        let (g, (root, waves)) = grouped(x);
        let whole = grouped(x);
        let mut acc = g * root + waves.sum() + whole.1 .1[0];
        let mut decayed = 0.0;
        for i in 0..3 {
            let (mi, vi) = stats(&(x * (i as f64 + 1.0)));
            acc += mi * vi;
            decayed = decayed * 0.5 + mi;
        }
        let mut r = 0.0;
        if x[0] > 0.0 {
            let (_, vb) = stats(&y);
            r = vb / (v + 1.0);
        }
        // A tuple a branch chooses, read by position and destructured.
        let chosen = if x[0] > 0.0 { stats(&y) } else { (0.5, v) };
        let (c0, c1) = chosen;
        // A tuple bound to a name, assigned again in a branch.
        let mut pair = (m, 1.0);
        if x[0] > 0.0 {
            pair = (v * 2.0, m);
        }
        m * v.sqrt() + a * y.sum() * half + t.0 * t.1 + acc + decayed + r + chosen.1 * c0 + c1
            - pair.0 * pair.1
    }
}

/// A recurrent cell that returns its two states, run by a loop that
/// assigns them back (`(h, c) = cell(&h, &c, x)`, and through names of
/// their own), as an LSTM is.
mod recurrent_pairs {
    use super::*;

    #[differentiable]
    pub fn cell(
        h: &Array1<f64>,
        c: &Array1<f64>,
        #[constant] x: f64,
    ) -> (Array1<f64>, Array1<f64>) {
        let c2 = c * 0.9 + h.mapv(|v| (v + x).tanh()) * 0.1;
        (c2.mapv(f64::tanh), c2)
    }

    #[differentiable]
    pub fn f(h0: &Array1<f64>, #[constant] xs: &[f64]) -> f64 {
        let mut h = h0.to_owned();
        let mut c = h0.mapv(|v| v * 0.5);
        for &x in xs {
            (h, c) = cell(&h, &c, x);
        }
        let (mut g, mut d) = (h.clone(), c.clone());
        for &x in xs {
            let (g2, d2) = cell(&g, &d, -x);
            g = g2;
            d = d2 * 1.5;
        }
        h.sum() * c.sum() + g.dot(&d)
    }
}

#[test]
fn recurrent_cells_returning_pairs() {
    for n in [1, 3] {
        for steps in [0, 1, 4] {
            let xs: Vec<f64> = (0..steps).map(|t| 0.3 * t as f64 - 0.4).collect();
            check_scalar!(recurrent_pairs; ref h0 dh0 = random(n, 63); &xs[..]);
        }
    }
}

#[test]
fn tuples_returned_and_destructured() {
    for n in [2, 5] {
        let x = random(n, 60) + 0.1;
        for flip in [false, true] {
            check_scalar!(tuples; ref x dx = x.clone(); flip);
            check_scalar!(tuples; ref x dx = -&x; flip);
        }
    }
}

/// The pullback of a function that returns a tuple takes a tuple of
/// cotangents, and its forward mode gives a tuple of tangents: both
/// against finite differences of the weighted sum of the items.
#[test]
fn tuple_results_in_both_modes() {
    use ad::check::{assert_gradient, close};
    let x = random(4, 61);
    let weighted = |x: &Array1<f64>| {
        let (s, y, c) = tuples::branchy(x, false);
        0.3 * s + y.sum() * -1.2 + c
    };
    let (value, pullback) = tuples::branchy_vjp(&x, false);
    assert_eq!(value, tuples::branchy(&x, false));
    let (g, _) = pullback((0.3, Array1::from_elem(4, -1.2), 7.0));
    assert_gradient(weighted, &x, &g.to_vec());
    let dx = random(4, 62);
    let (jvalue, (ds, dy, dc)) = tuples::branchy_jvp(&x, false, &dx, ad::NoTangent);
    assert_eq!(jvalue, value);
    assert_eq!(dc, 0.0);
    let directional = 0.3 * ds + dy.sum() * -1.2;
    let expected: f64 = g.iter().zip(&dx).map(|(a, b)| a * b).sum();
    assert!(
        close(directional, expected, 1e-9),
        "{directional} vs {expected}"
    );
}
