//! A long function: hundreds of statements in one body, as code written by
//! a code generator (a model expanded symbolically, a kinematic chain) has.
//!
//! Its debug build is the test. The derivative code has several `let`s for
//! each of the user's statements, and rustc's debug info nests one scope per
//! `let`: unchanged, this function's `_grad` overflowed rustc's stack. The
//! macro declares the `let`s of long blocks together (`compiler/scopes.rs`);
//! the derivatives are checked against finite differences and the other
//! mode, as everywhere else.

#[macro_use]
mod support;

use ad::ndarray::Array1;

/// `#[differentiable] pub fn f` whose body is `$step` repeated 2ⁿ times,
/// one doubling per `x` at the end (macro_rules writes the body out before
/// the attribute sees it). The parameters and locals are written in the
/// invocation, as the steps are, so that hygiene lets the steps name them.
macro_rules! long_function {
    ($module:ident $sig:tt $head:tt [$($step:tt)*] $tail:tt x $($more:ident)*) => {
        long_function!($module $sig $head [$($step)* $($step)*] $tail $($more)*);
    };
    ($module:ident [$($sig:tt)*] {$($head:tt)*} [$($step:tt)*] {$($tail:tt)*}) => {
        pub mod $module {
            use ad::differentiable;
            use ad::ndarray::Array1;

            #[differentiable]
            pub fn f $($sig)* {
                $($head)*
                $($step)*
                $($tail)*
            }
        }
    };
}

// Three assignments, 16 times: 48 statements, some 500 `let`s in `f_grad`.
long_function!(
    long
    [(x: &Array1<f64>, a: f64) -> f64]
    {
        let mut u = x[0];
        let mut v = a;
        let mut w = 0.0;
    }
    [
        v = (v * a + x[1]).sin() * 0.9 + x[0] * 0.1;
        w = w * 0.5 + v * x[2] - u * 0.01;
        u = (u * 0.8 - w * x[3]).tanh() + v * 0.2;
    ]
    { u * v + w }
    x x x x
);

// The same with arrays, whose derivative code also saves shapes, reuses
// buffers and shadows names (`let t2 = t2_shape;`): two assignments, 16
// times.
long_function!(
    long_arrays
    [(x: &Array1<f64>, a: f64) -> f64]
    {
        let mut h = x * a;
        let mut g = x.to_owned();
    }
    [
        h = (&h * 0.7 + x).mapv(f64::tanh) * a;
        g = &g * 0.5 + &h * x - h.sum() * 0.01;
    ]
    { g.dot(&h) }
    x x x x
);

#[test]
fn a_long_body_compiles_and_differentiates() {
    check_scalar!(long; ref x dx = Array1::from(vec![0.3, -0.4, 0.7, 0.5]), val a da = 0.6;);
}

#[test]
fn a_long_body_of_array_code_compiles_and_differentiates() {
    check_scalar!(long_arrays; ref x dx = Array1::from(vec![0.3, -0.4, 0.7, 0.5]), val a da = 0.6;);
}
