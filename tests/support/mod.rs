//! Shared checks for the gradient tests.
//!
//! Each case is a module `m` holding one `#[differentiable] pub fn f` whose
//! active parameters come first. `check_scalar!(m; ref a = .., val s = ..;
//! consts..)` then checks, at those inputs:
//! - the value beside each derivative equals `m::f`'s;
//! - `f_grad` matches central finite differences (at one of several steps);
//! - `f_vjp`'s pullback of 1 equals `f_grad`'s gradient, and its pullback
//!   of -1.75 that times the gradient;
//! - `f_jvp` along a random direction equals `<gradient, direction>`
//!   (forward against reverse).
//!
//! `check_array!` does the same for functions with array results, using the
//! dot-product test `<J v, w> = <v, J^T w>` and finite differences of `f`
//! along `v`.

// Each test file uses part of this (the macros use the re-exports).
#![allow(dead_code, unused_macros, unused_imports)]

pub use ad::check::{self, Flat, Rng};
pub use ad::ndarray::Array;

/// An argument as the function takes it.
macro_rules! arg {
    (ref $x:expr) => {
        &$x
    };
    (val $x:expr) => {
        ::core::clone::Clone::clone(&$x)
    };
}

macro_rules! no_tangent {
    ($c:expr) => {
        ad::NoTangent
    };
}

/// The inputs as a tuple `x`, `m::f` as a function `f` of that tuple (for
/// finite differences), each input bound under its own name, and `f`'s
/// `value` at them. (The caller names the bindings, so it can see them.)
macro_rules! inputs {
    ($x:ident, $f:ident, $value:ident; $m:ident; $($mode:ident $name:ident = $val:expr),+; $($c:expr),*) => {
        let $x = ($($val,)+);
        let $f = $crate::support::of_inputs(&$x, |p| {
            let ($($name,)+) = ::core::clone::Clone::clone(p);
            $m::f($(arg!($mode $name),)+ $($c),*)
        });
        let ($($name,)+) = ::core::clone::Clone::clone(&$x);
        let $value = $m::f($(arg!($mode $name),)+ $($c),*);
    };
}

/// `f`, typed as a function of `x`'s type: the closure's parameter type is
/// known before its body is checked, so a `Vec` input may be passed to a
/// slice parameter (`&v` as `&[f64]`).
pub fn of_inputs<P, R>(_: &P, f: impl Fn(&P) -> R) -> impl Fn(&P) -> R {
    f
}

/// A model of `examples/models/` (included as `mod models`) under the
/// names `check_scalar!` expects.
macro_rules! as_case {
    ($case:ident = $f:ident, $grad:ident, $vjp:ident, $jvp:ident) => {
        mod $case {
            pub use super::models::{$f as f, $grad as f_grad, $jvp as f_jvp, $vjp as f_vjp};
        }
    };
}

macro_rules! check_scalar {
    ($m:ident; $($mode:ident $name:ident $dot:ident = $val:expr),+ ; $($c:expr),*) => {{
        inputs!(x, f, value; $m; $($mode $name = $val),+; $($c),*);
        let (gvalue, grads) = $m::f_grad($(arg!($mode $name),)+ $($c),*);
        let g = $crate::support::Flat::to_flat(&grads);
        assert_eq!(gvalue, value, "{}: f_grad's value differs from f's", stringify!($m));
        $crate::support::check::assert_gradient(&f, &x, &g);
        let (vvalue, pullback) = $m::f_vjp($(arg!($mode $name),)+ $($c),*);
        assert_eq!(vvalue, value, "{}: f_vjp's value differs", stringify!($m));
        let pulled = $crate::support::Flat::to_flat(&pullback(1.0));
        assert_eq!(pulled, g, "{}: the pullback of 1 differs from the gradient", stringify!($m));
        let (_, pullback) = $m::f_vjp($(arg!($mode $name),)+ $($c),*);
        let scaled = $crate::support::Flat::to_flat(&pullback(-1.75));
        assert!(
            scaled.iter().zip(&g).all(|(s, g)| $crate::support::check::close(*s, -1.75 * g, 1e-12)),
            "{}: the pullback of -1.75 is not -1.75 times the gradient", stringify!($m)
        );
        let mut rng = $crate::support::Rng::new(7);
        let v = $crate::support::Flat::random_like(&x, &mut rng);
        let ($($dot,)+) = ::core::clone::Clone::clone(&v);
        let (jvalue, jv) = $m::f_jvp($(arg!($mode $name),)+ $($c,)* $(arg!($mode $dot),)+ $(no_tangent!($c)),*);
        assert_eq!(jvalue, value, "{}: f_jvp's value differs", stringify!($m));
        let expected: f64 = g.iter().zip($crate::support::Flat::to_flat(&v)).map(|(a, b)| a * b).sum();
        assert!(
            $crate::support::check::close(jv as f64, expected, 1e-8),
            "{}: forward mode {} but <gradient, v> = {}", stringify!($m), jv, expected
        );
    }};
}

/// For functions with an array (or other non-scalar) result: no `f_grad`.
macro_rules! check_array {
    ($m:ident; $($mode:ident $name:ident $dot:ident = $val:expr),+ ; $($c:expr),*) => {{
        inputs!(x, f, value; $m; $($mode $name = $val),+; $($c),*);
        let mut rng = $crate::support::Rng::new(11);
        let v = $crate::support::Flat::random_like(&x, &mut rng);
        let w = $crate::support::Flat::random_like(&value, &mut rng);
        let (vvalue, pullback) = $m::f_vjp($(arg!($mode $name),)+ $($c),*);
        assert_eq!(vvalue, value, "{}: f_vjp's value differs", stringify!($m));
        let jtw = pullback(::core::clone::Clone::clone(&w));
        let ($($dot,)+) = ::core::clone::Clone::clone(&v);
        let (jvalue, jv) = $m::f_jvp($(arg!($mode $name),)+ $($c,)* $(arg!($mode $dot),)+ $(no_tangent!($c)),*);
        assert_eq!(jvalue, value, "{}: f_jvp's value differs", stringify!($m));
        if let Err(e) = $crate::support::check::check_directional(&f, &x, &v, &jv) {
            panic!("{}: forward mode disagrees with finite differences:\n{e}", stringify!($m));
        }
        let jtw_flat = $crate::support::Flat::to_flat(&jtw);
        let v_flat = $crate::support::Flat::to_flat(&v);
        if let Err(e) = $crate::support::check::check_dot_product(&v_flat, &jv, &w, &jtw_flat) {
            panic!("{}: dot-product test: {e}", stringify!($m));
        }
    }};
}

/// A deterministic array of the given shape with entries in [-1, 1).
pub fn random<Sh: ad::ndarray::ShapeBuilder>(shape: Sh, seed: u64) -> Array<f64, Sh::Dim> {
    let mut rng = Rng::new(seed);
    Array::from_shape_simple_fn(shape, || rng.uniform())
}

/// Shapes every array case runs at: nothing about the size is compiled in.
pub const SIZES: [usize; 3] = [1, 3, 7];
