//! Scalar functions (`x.exp()`, `f64::tanh(x)`), applied to a scalar or to
//! every element of an array (`x.mapv(f64::tanh)`), and `mapv` with a closure
//! whose derivative the macro writes.
//!
//! Each function's derivative is written once, as a scalar formula of either
//! its input `x` or its output `y`, whichever is cheaper; the pullback then
//! needs only that value: `x_bar = y_bar * f'`.

use ndarray::{Array, ArrayView, Dimension, Zip};

use super::cotangent::IntoCot;

use crate::{Float, Operand};

/// An operand whose elements a scalar function maps one by one.
#[diagnostic::on_unimplemented(
    message = "no element-wise derivative rule for `{Self}`",
    label = "scalar functions apply to `f32`, `f64` and ndarray arrays of them"
)]
pub trait Elementwise: Operand {
    fn map(self, f: impl Fn(Self::Elem) -> Self::Elem) -> Self::Owned;
    /// `dy * d(v)` element by element, where `v` is the matching element of
    /// `self` (the input or the output of the function).
    fn scale_by(self, dy: Self::Owned, d: impl Fn(Self::Elem) -> Self::Elem) -> Self::Owned;
    /// `dx * d(v)` element by element, with `dx` a view of the tangent.
    fn push(self, dx: Self, d: impl Fn(Self::Elem) -> Self::Elem) -> Self::Owned;
}

impl<F: Float> Elementwise for F {
    #[inline(always)]
    fn map(self, f: impl Fn(F) -> F) -> F {
        f(self)
    }
    #[inline(always)]
    fn scale_by(self, dy: F, d: impl Fn(F) -> F) -> F {
        dy * d(self)
    }
    #[inline(always)]
    fn push(self, dx: F, d: impl Fn(F) -> F) -> F {
        dx * d(self)
    }
}

impl<F: Float, D: Dimension> Elementwise for ArrayView<'_, F, D> {
    #[inline]
    fn map(self, f: impl Fn(F) -> F) -> Array<F, D> {
        self.mapv(f)
    }
    #[inline]
    fn scale_by(self, mut dy: Array<F, D>, d: impl Fn(F) -> F) -> Array<F, D> {
        dy.zip_mut_with(&self, |g, &v| *g *= d(v));
        dy
    }
    #[inline]
    fn push(self, dx: Self, d: impl Fn(F) -> F) -> Array<F, D> {
        let mut t = dx.to_owned();
        t.zip_mut_with(&self, |t, &v| *t *= d(v));
        t
    }
}

macro_rules! unary_fns {
    ($($name:ident $pull:ident $push:ident uses $uses:ident: |$v:ident| $d:expr;)*) => {$(
        #[inline(always)]
        pub fn $name<A: Elementwise>(x: A) -> A::Owned {
            x.map(|$v| num_traits::Float::$name($v))
        }
        #[doc = concat!("`x_bar = y_bar * d(v)` for `y = x.", stringify!($name), "()`, where `v` is the ", stringify!($uses), " and `d(v) = ", stringify!($d), "`")]
        #[inline(always)]
        pub fn $pull<A: Elementwise>(dy: A::Owned, $uses: A) -> A::Owned {
            $uses.scale_by(dy, |$v| $d)
        }
        #[doc = concat!("`y_dot = x_dot * d(v)` for `y = x.", stringify!($name), "()`, where `v` is the ", stringify!($uses))]
        #[inline(always)]
        pub fn $push<A: Elementwise>(dx: A, $uses: A) -> A::Owned {
            $uses.push(dx, |$v| $d)
        }
    )*};
}

fn c<F: Float>(x: f64) -> F {
    F::of(x)
}

fn sign<F: Float>(x: F) -> F {
    if x > F::zero() {
        F::one()
    } else if x < F::zero() {
        -F::one()
    } else {
        F::zero()
    }
}

unary_fns! {
    sin sin_pullback sin_pushforward uses input: |x| x.cos();
    cos cos_pullback cos_pushforward uses input: |x| -x.sin();
    tan tan_pullback tan_pushforward uses output: |y| A::Elem::one() + y * y;
    asin asin_pullback asin_pushforward uses input: |x| (A::Elem::one() - x * x).sqrt().recip();
    acos acos_pullback acos_pushforward uses input: |x| -(A::Elem::one() - x * x).sqrt().recip();
    atan atan_pullback atan_pushforward uses input: |x| (A::Elem::one() + x * x).recip();
    sinh sinh_pullback sinh_pushforward uses input: |x| x.cosh();
    cosh cosh_pullback cosh_pushforward uses input: |x| x.sinh();
    tanh tanh_pullback tanh_pushforward uses output: |y| A::Elem::one() - y * y;
    asinh asinh_pullback asinh_pushforward uses input: |x| (x * x + A::Elem::one()).sqrt().recip();
    acosh acosh_pullback acosh_pushforward uses input: |x| (x * x - A::Elem::one()).sqrt().recip();
    atanh atanh_pullback atanh_pushforward uses input: |x| (A::Elem::one() - x * x).recip();
    exp exp_pullback exp_pushforward uses output: |y| y;
    exp2 exp2_pullback exp2_pushforward uses output: |y| y * c::<A::Elem>(std::f64::consts::LN_2);
    exp_m1 exp_m1_pullback exp_m1_pushforward uses output: |y| y + A::Elem::one();
    ln ln_pullback ln_pushforward uses input: |x| x.recip();
    ln_1p ln_1p_pullback ln_1p_pushforward uses input: |x| (A::Elem::one() + x).recip();
    log2 log2_pullback log2_pushforward uses input: |x| (x * c::<A::Elem>(std::f64::consts::LN_2)).recip();
    log10 log10_pullback log10_pushforward uses input: |x| (x * c::<A::Elem>(std::f64::consts::LN_10)).recip();
    sqrt sqrt_pullback sqrt_pushforward uses output: |y| c::<A::Elem>(0.5) / y;
    cbrt cbrt_pullback cbrt_pushforward uses output: |y| (c::<A::Elem>(3.0) * y * y).recip();
    abs abs_pullback abs_pushforward uses input: |x| sign(x);
    recip recip_pullback recip_pushforward uses output: |y| -y * y;
    to_degrees to_degrees_pullback to_degrees_pushforward uses input: |_x| c::<A::Elem>(180.0 / std::f64::consts::PI);
    to_radians to_radians_pullback to_radians_pushforward uses input: |_x| c::<A::Elem>(std::f64::consts::PI / 180.0);
}

/// `-x`.
#[inline(always)]
pub fn neg<A: Elementwise>(x: A) -> A::Owned {
    x.map(|v| -v)
}

/// `x_bar = -y_bar`.
#[inline(always)]
pub fn neg_pullback<A: Elementwise>(dy: A::Owned, x: A) -> A::Owned {
    x.scale_by(dy, |_| -A::Elem::one())
}

#[inline(always)]
pub fn neg_pushforward<A: Elementwise>(dx: A, x: A) -> A::Owned {
    x.push(dx, |_| -A::Elem::one())
}

/// `x.powi(n)`.
#[inline(always)]
pub fn powi<A: Elementwise>(x: A, n: i32) -> A::Owned {
    x.map(|v| v.powi(n))
}

/// `x_bar = y_bar * n x^(n-1)`.
#[inline(always)]
pub fn powi_pullback<A: Elementwise>(dy: A::Owned, x: A, n: i32) -> A::Owned {
    x.scale_by(dy, |v| A::Elem::of(n as f64) * v.powi(n - 1))
}

#[inline(always)]
pub fn powi_pushforward<A: Elementwise>(dx: A, x: A, n: i32) -> A::Owned {
    x.push(dx, |v| A::Elem::of(n as f64) * v.powi(n - 1))
}

/// `x.mapv(f)` for a closure `f`.
#[inline(always)]
pub fn mapv<A: Elementwise>(x: A, f: impl Fn(A::Elem) -> A::Elem) -> A::Owned {
    x.map(f)
}

/// `x_bar = y_bar * f'(x)`, with `df` the derivative the macro wrote for the
/// closure.
#[inline(always)]
pub fn mapv_pullback<A: Elementwise>(
    dy: A::Owned,
    x: A,
    df: impl Fn(A::Elem) -> A::Elem,
) -> A::Owned {
    x.scale_by(dy, df)
}

#[inline(always)]
pub fn mapv_pushforward<A: Elementwise>(dx: A, x: A, df: impl Fn(A::Elem) -> A::Elem) -> A::Owned {
    x.push(dx, df)
}

/// The tangent of `x.mapv(f)` where `f` reads active values of the
/// enclosing function (`|v| (v - mu).powi(2)`): `df(v, v_dot)` is `f`'s
/// tangent at one element, the captured values' tangents read inside it.
/// `dx` is `None` when `x` itself is constant.
pub fn mapv_captures_pushforward<F: Float, D: Dimension>(
    dx: Option<ArrayView<'_, F, D>>,
    x: ArrayView<'_, F, D>,
    df: impl Fn(F, F) -> F,
) -> Array<F, D> {
    match dx {
        Some(dx) => Zip::from(&x).and(&dx).map_collect(|&v, &d| df(v, d)),
        None => x.mapv(|v| df(v, F::zero())),
    }
}

/// The cotangent of a scalar `s` that the closure of `x.mapv(f)` captures:
/// `Σᵢ dyᵢ ∂f/∂s(xᵢ)`.
pub fn mapv_capture_pullback<'d, F: Float, D: Dimension + 'd>(
    dy: impl IntoCot<'d, Array<F, D>>,
    x: ArrayView<'_, F, D>,
    ds: impl Fn(F) -> F,
) -> F {
    let dy = dy.into_cot();
    Zip::from(dy.get())
        .and(&x)
        .fold(F::zero(), |acc, &g, &v| acc + g * ds(v))
}

/// A value a `mapv` closure captures, as seen by the closure's derivative
/// in the reverse sweep: a scalar, whose tangent is `1` for the derivative
/// with respect to it and `0` otherwise.
#[diagnostic::on_unimplemented(
    message = "a `mapv` closure captures the active value `{Self}`, which is not a scalar",
    label = "reverse mode differentiates captured `f32` and `f64` values only",
    note = "combine arrays outside the closure, as in `x.mapv(|v| v.exp()) * &w`"
)]
pub trait CapturedScalar: Sized {
    fn seed(one: bool) -> Self;
}

impl<F: Float> CapturedScalar for F {
    #[inline(always)]
    fn seed(one: bool) -> F {
        if one {
            F::one()
        } else {
            F::zero()
        }
    }
}

/// The seed for the captured value `s`, passed as `view(&s)` (a scalar,
/// whether `s` is one or a reference to one, such as a field read).
#[inline(always)]
pub fn capture_seed<T: CapturedScalar>(_: T, one: bool) -> T {
    T::seed(one)
}

/// `x as T` between float types.
#[inline(always)]
pub fn cast<T: Float, F: Float>(x: F) -> T {
    T::of(num_traits::cast::<F, f64>(x).unwrap_or(f64::NAN))
}

/// `x_bar = y_bar as F`, back to the type of `x`.
#[inline(always)]
pub fn cast_pullback<F: Float, T: Float>(dy: T, _x: F) -> F {
    cast(dy)
}

use num_traits::Float as _;
use num_traits::One as _;
