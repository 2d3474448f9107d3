//! Scalar code: every scalar method and operator, as methods and as
//! `f64::name(x)` paths, against finite differences and forward mode.

#[macro_use]
mod support;

use ad::differentiable;

/// One module per scalar function `name`, with `f(x) = x.name()` and
/// `f(x) = f64::name(x)` checked at a point inside its domain.
macro_rules! unary_cases {
    ($($name:ident at $x:expr;)*) => {$(
        #[allow(non_snake_case)]
        mod $name {
            pub mod method {
                use ad::differentiable;
                #[differentiable]
                pub fn f(x: f64) -> f64 {
                    x.$name()
                }
            }
            pub mod path {
                use ad::differentiable;
                #[differentiable]
                pub fn f(x: f64) -> f64 {
                    f64::$name(x) * 2.0
                }
            }
            #[test]
            fn gradient() {
                use method as m;
                check_scalar!(m; val x dx = $x;);
                use path as p;
                check_scalar!(p; val x dx = $x;);
            }
        }
    )*};
}

unary_cases! {
    sin at 0.7; cos at 0.7; tan at 0.4; asin at 0.3; acos at 0.3; atan at 1.3;
    sinh at 0.7; cosh at 0.7; tanh at 0.6; asinh at 0.7; acosh at 1.7; atanh at 0.4;
    exp at 0.7; exp2 at 0.7; exp_m1 at 0.7; ln at 1.7; ln_1p at 0.7; log2 at 1.7; log10 at 1.7;
    sqrt at 1.7; cbrt at 1.7; abs at -0.7; recip at 1.7; to_degrees at 0.7; to_radians at 0.7;
}

mod arithmetic {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        let a = x * y + x / y - (x - y);
        -a * 3.0 + 1.0 / x - 2.0 - y
    }
}

mod binary_fns {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        x.atan2(y) + x.powf(y) + f64::hypot(x, y) + x.log(y + 2.0) + x.max(y) * 2.0 + f64::min(x, y)
    }
}

mod mul_add_powi {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, y: f64, z: f64) -> f64 {
        x.mul_add(y, z) + x.powi(3) - f64::powi(y, -2)
    }
}

mod shadowing {
    use super::*;
    #[differentiable]
    pub fn f(x: f64) -> f64 {
        let y = x.exp();
        let y = y * y;
        let mut z = y;
        z += x;
        z -= 0.5 * x;
        z *= x;
        z /= 1.0 + x * x;
        z
    }
}

mod reassignment {
    use super::*;
    #[allow(clippy::assign_op_pattern)] // reassignment is what this case tests
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        let mut acc = 0.0;
        acc = acc + x * y;
        acc = acc * acc + y;
        let z: f64 = acc.sin();
        z
    }
}

/// Tuples of expressions, bound and assigned: every element is evaluated
/// before any name changes (the assignment in the loop swaps); arrays of
/// expressions bound by array patterns, `let [a, b] = [e1, e2];`, alike.
mod tuples {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        let (mut a, mut b) = (x * 2.0, y.sin());
        for _ in 0..3 {
            (a, b) = (b, a * b + x);
        }
        let (p, _, q): (f64, f64, usize) = (a + b, x, 3);
        let (a, b) = (b, a);
        let [c, _, d]: [f64; 3] = [a * x, b, b.cos()];
        let [e, f] = [c + d, y];
        p * a - b * q as f64 + e * f
    }
}

/// `sin_cos`, bound, typed and assigned in a loop: the operand is
/// evaluated once, then its sine and cosine.
mod sin_cos {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        let (s, c) = (x * y).sin_cos();
        let (mut u, mut v): (f64, f64) = (s, c);
        for _ in 0..3 {
            (u, v) = (u * v + x).sin_cos();
        }
        let (_, only_cos) = y.sin_cos();
        s * c + u - v * only_cos
    }
}

mod constants_and_integers {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, #[constant] c: f64, n: usize, flag: bool) -> f64 {
        let k = n as f64;
        let scale = if flag { 2.0 } else { 3.0 };
        x * c * k + scale * x.powi(n as i32)
    }
}

mod stop_gradient {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        let s = ad::stop_gradient(x * y);
        x * s + y
    }
}

mod unused_parameter {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, _y: f64) -> f64 {
        x.sin()
    }
}

mod constant_result {
    use super::*;
    #[differentiable]
    pub fn f(x: f64) -> f64 {
        let n = 2.0;
        ad::stop_gradient(x) * n
    }
}

mod single_precision {
    use super::*;
    #[differentiable]
    pub fn f(x: f32, y: f32) -> f32 {
        (x * y + 1.5).ln() * x.exp() - y.powi(2) / 4.0
    }
}

mod casts {
    use super::*;
    #[differentiable]
    pub fn f(x: f32, y: f64) -> f64 {
        (x as f64) * y + (y as f32).sin() as f64
    }
}

#[test]
fn arithmetic_and_binary_functions() {
    check_scalar!(arithmetic; val x dx = 0.7, val y dy = -1.3;);
    check_scalar!(binary_fns; val x dx = 0.7, val y dy = 1.3;);
    check_scalar!(binary_fns; val x dx = 1.4, val y dy = 0.6;);
    check_scalar!(mul_add_powi; val x dx = 0.7, val y dy = -1.3, val z dz = 0.2;);
}

#[test]
fn bindings() {
    check_scalar!(shadowing; val x dx = 0.4;);
    check_scalar!(reassignment; val x dx = 0.4, val y dy = -0.3;);
    check_scalar!(tuples; val x dx = 0.7, val y dy = 0.4;);
    check_scalar!(sin_cos; val x dx = 0.7, val y dy = 0.4;);
}

#[test]
fn inactive_parameters_and_constants() {
    check_scalar!(constants_and_integers; val x dx = 0.4; 1.5, 3, true);
    let (_, (_, c, n, flag)) = constants_and_integers::f_grad(0.4, 1.5, 3, false);
    assert_eq!((c, n, flag), (ad::NoTangent, ad::NoTangent, ad::NoTangent));
    // Finite differences see through `stop_gradient`; the reference is the
    // derivative with `s` held constant: (df/dx, df/dy) = (s, 1).
    let (value, (gx, gy)) = stop_gradient::f_grad(0.4, -0.3);
    assert_eq!(value, stop_gradient::f(0.4, -0.3));
    assert_eq!(
        (gx, gy),
        (0.4 * -0.3, 1.0),
        "no derivative flows through stop_gradient"
    );
    assert_eq!(stop_gradient::f_jvp(0.4, -0.3, 1.0, 0.0).1, 0.4 * -0.3);
}

#[test]
fn gradients_with_no_path_to_the_result_are_zero() {
    check_scalar!(unused_parameter; val x dx = 0.4, val _y dy = 2.0;);
    assert_eq!(unused_parameter::f_grad(0.4, 2.0).1 .1, 0.0);
    assert_eq!(constant_result::f(0.4), 0.8);
    assert_eq!(constant_result::f_grad(0.4), (0.8, (0.0,)));
    assert_eq!(constant_result::f_jvp(0.4, 1.0), (0.8, 0.0));
}

#[test]
fn f32_and_casts() {
    let (v, (gx, gy)) = single_precision::f_grad(0.5f32, 0.7f32);
    assert_eq!(v, single_precision::f(0.5, 0.7));
    let h = 1e-2f32;
    let fd = (single_precision::f(0.5 + h, 0.7) - single_precision::f(0.5 - h, 0.7)) / (2.0 * h);
    assert!((fd - gx).abs() < 1e-3, "{fd} vs {gx}");
    let (_, jy) = single_precision::f_jvp(0.5, 0.7, 0.0, 1.0);
    assert!((jy - gy).abs() < 1e-5);
    assert_eq!(casts::f_grad(0.5, 0.7).0, casts::f(0.5, 0.7));
    let (_, (gx, gy)) = casts::f_grad(0.5, 0.7);
    assert!((gx - 0.7).abs() < 1e-6);
    assert!((gy - (0.5 + (0.7f32).cos() as f64)).abs() < 1e-6);
}

mod generic_precision {
    use super::*;
    #[differentiable]
    pub fn f<F: ad::Float>(x: F, y: F) -> F {
        let z = x * y + x.sin();
        z.exp() / (y * y + F::one())
    }
}

#[test]
fn generic_over_the_float_type() {
    let (v64, pullback) = generic_precision::f_vjp(0.3f64, 0.8f64);
    let (gx, gy) = pullback(1.0);
    assert_eq!(v64, generic_precision::f(0.3, 0.8));
    let f = |p: &(f64, f64)| generic_precision::f(p.0, p.1);
    ad::check::assert_gradient(f, &(0.3, 0.8), &[gx, gy]);
    let (v32, d32) = generic_precision::f_jvp(0.3f32, 0.8f32, 1.0, 0.0);
    assert!((v32 as f64 - v64).abs() < 1e-6 && (d32 as f64 - gx).abs() < 1e-5);
    // A result of type `F: Float` has `f_grad` too, at every precision.
    let (g64, (gx64, gy64)) = generic_precision::f_grad(0.3f64, 0.8f64);
    assert_eq!((g64, gx64, gy64), (v64, gx, gy));
    let (g32, (gx32, _)) = generic_precision::f_grad(0.3f32, 0.8f32);
    assert!((g32 as f64 - v64).abs() < 1e-6 && (gx32 as f64 - gx).abs() < 1e-5);
}
