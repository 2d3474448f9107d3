//! Dual numbers `value + tangent·ε` (with `ε² = 0`): a [`Float`] whose
//! arithmetic carries a directional derivative along.
//!
//! Generated derivative code is generic over the float type when the user's
//! function is (`fn f<F: ad::Float>(..)`), so evaluating `f_vjp::<Dual>` or
//! `f_jvp::<Dual>` on inputs whose tangents hold a direction `v` gives, beside
//! the gradient or directional derivative, its derivative along `v`:
//! Hessian-vector products (forward over reverse) and second directional
//! derivatives (forward over forward), with no second compilation.
//!
//! ```text
//! (a, ȧ) + (b, ḃ) = (a + b, ȧ + ḃ)       (a, ȧ) (b, ḃ) = (a b, ȧ b + a ḃ)
//! f((a, ȧ)) = (f(a), f'(a) ȧ)            comparisons look at the values only
//! ```

use std::cmp::Ordering;
use std::fmt;
use std::num::FpCategory;
use std::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};

use num_traits::{FromPrimitive, Num, NumCast, One, ToPrimitive, Zero};

/// A value and its derivative along one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Dual {
    pub value: f64,
    pub tangent: f64,
}

impl Dual {
    pub const fn new(value: f64, tangent: f64) -> Self {
        Dual { value, tangent }
    }

    /// A value that does not vary: its tangent is zero.
    pub const fn constant(value: f64) -> Self {
        Dual {
            value,
            tangent: 0.0,
        }
    }

    /// `f(self)`, given `f(value)` and `f'(value)`.
    #[inline(always)]
    fn chain(self, value: f64, derivative: f64) -> Self {
        Dual::new(value, derivative * self.tangent)
    }
}

impl PartialOrd for Dual {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.value.partial_cmp(&other.value)
    }
}

impl fmt::Display for Dual {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} + {}ε", self.value, self.tangent)
    }
}

impl fmt::LowerExp for Dual {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:e} + {:e}ε", self.value, self.tangent)
    }
}

impl fmt::UpperExp for Dual {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:E} + {:E}ε", self.value, self.tangent)
    }
}

impl Add for Dual {
    type Output = Dual;
    #[inline(always)]
    fn add(self, o: Dual) -> Dual {
        Dual::new(self.value + o.value, self.tangent + o.tangent)
    }
}

impl Sub for Dual {
    type Output = Dual;
    #[inline(always)]
    fn sub(self, o: Dual) -> Dual {
        Dual::new(self.value - o.value, self.tangent - o.tangent)
    }
}

impl Mul for Dual {
    type Output = Dual;
    #[inline(always)]
    fn mul(self, o: Dual) -> Dual {
        Dual::new(
            self.value * o.value,
            self.tangent * o.value + self.value * o.tangent,
        )
    }
}

impl Div for Dual {
    type Output = Dual;
    #[inline(always)]
    fn div(self, o: Dual) -> Dual {
        let q = self.value / o.value;
        Dual::new(q, (self.tangent - q * o.tangent) / o.value)
    }
}

/// `a % b = a - b trunc(a / b)`, the truncation constant almost everywhere.
impl Rem for Dual {
    type Output = Dual;
    fn rem(self, o: Dual) -> Dual {
        let t = (self.value / o.value).trunc();
        Dual::new(self.value % o.value, self.tangent - t * o.tangent)
    }
}

impl Neg for Dual {
    type Output = Dual;
    #[inline(always)]
    fn neg(self) -> Dual {
        Dual::new(-self.value, -self.tangent)
    }
}

macro_rules! assign_ops {
    ($($trait:ident $method:ident $op:tt;)*) => {$(
        impl $trait for Dual {
            #[inline(always)]
            fn $method(&mut self, o: Dual) {
                *self = *self $op o;
            }
        }
    )*};
}

assign_ops! {
    AddAssign add_assign +;
    SubAssign sub_assign -;
    MulAssign mul_assign *;
    DivAssign div_assign /;
    RemAssign rem_assign %;
}

impl Zero for Dual {
    fn zero() -> Self {
        Dual::constant(0.0)
    }
    fn is_zero(&self) -> bool {
        self.value == 0.0 && self.tangent == 0.0
    }
}

impl One for Dual {
    fn one() -> Self {
        Dual::constant(1.0)
    }
}

/// Sums and products of iterators, which generic code over `ad::Float`
/// may take (`xs.iter().copied().sum()`).
impl std::iter::Sum for Dual {
    fn sum<I: Iterator<Item = Dual>>(iter: I) -> Self {
        iter.fold(Dual::constant(0.0), |a, b| a + b)
    }
}

impl<'a> std::iter::Sum<&'a Dual> for Dual {
    fn sum<I: Iterator<Item = &'a Dual>>(iter: I) -> Self {
        iter.copied().sum()
    }
}

impl std::iter::Product for Dual {
    fn product<I: Iterator<Item = Dual>>(iter: I) -> Self {
        iter.fold(Dual::constant(1.0), |a, b| a * b)
    }
}

impl<'a> std::iter::Product<&'a Dual> for Dual {
    fn product<I: Iterator<Item = &'a Dual>>(iter: I) -> Self {
        iter.copied().product()
    }
}

impl Num for Dual {
    type FromStrRadixErr = <f64 as Num>::FromStrRadixErr;
    fn from_str_radix(s: &str, radix: u32) -> Result<Self, Self::FromStrRadixErr> {
        f64::from_str_radix(s, radix).map(Dual::constant)
    }
}

/// Conversions read and make values (a converted number is a constant).
impl ToPrimitive for Dual {
    fn to_i64(&self) -> Option<i64> {
        self.value.to_i64()
    }
    fn to_u64(&self) -> Option<u64> {
        self.value.to_u64()
    }
    fn to_f64(&self) -> Option<f64> {
        Some(self.value)
    }
}

impl NumCast for Dual {
    fn from<T: ToPrimitive>(n: T) -> Option<Self> {
        n.to_f64().map(Dual::constant)
    }
}

impl FromPrimitive for Dual {
    fn from_i64(n: i64) -> Option<Self> {
        Some(Dual::constant(n as f64))
    }
    fn from_u64(n: u64) -> Option<Self> {
        Some(Dual::constant(n as f64))
    }
    fn from_f64(n: f64) -> Option<Self> {
        Some(Dual::constant(n))
    }
}

fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

impl num_traits::Float for Dual {
    fn nan() -> Self {
        Dual::constant(f64::NAN)
    }
    fn infinity() -> Self {
        Dual::constant(f64::INFINITY)
    }
    fn neg_infinity() -> Self {
        Dual::constant(f64::NEG_INFINITY)
    }
    fn neg_zero() -> Self {
        Dual::constant(-0.0)
    }
    fn min_value() -> Self {
        Dual::constant(f64::MIN)
    }
    fn min_positive_value() -> Self {
        Dual::constant(f64::MIN_POSITIVE)
    }
    fn max_value() -> Self {
        Dual::constant(f64::MAX)
    }
    fn epsilon() -> Self {
        Dual::constant(f64::EPSILON)
    }
    fn is_nan(self) -> bool {
        self.value.is_nan()
    }
    fn is_infinite(self) -> bool {
        self.value.is_infinite()
    }
    fn is_finite(self) -> bool {
        self.value.is_finite()
    }
    fn is_normal(self) -> bool {
        self.value.is_normal()
    }
    fn classify(self) -> FpCategory {
        self.value.classify()
    }
    // Rounding is constant almost everywhere.
    fn floor(self) -> Self {
        Dual::constant(self.value.floor())
    }
    fn ceil(self) -> Self {
        Dual::constant(self.value.ceil())
    }
    fn round(self) -> Self {
        Dual::constant(self.value.round())
    }
    fn trunc(self) -> Self {
        Dual::constant(self.value.trunc())
    }
    fn fract(self) -> Self {
        Dual::new(self.value.fract(), self.tangent)
    }
    fn abs(self) -> Self {
        self.chain(self.value.abs(), sign(self.value))
    }
    fn signum(self) -> Self {
        Dual::constant(self.value.signum())
    }
    fn is_sign_positive(self) -> bool {
        self.value.is_sign_positive()
    }
    fn is_sign_negative(self) -> bool {
        self.value.is_sign_negative()
    }
    fn mul_add(self, a: Self, b: Self) -> Self {
        self * a + b
    }
    fn recip(self) -> Self {
        let r = 1.0 / self.value;
        self.chain(r, -r * r)
    }
    fn powi(self, n: i32) -> Self {
        if n == 0 {
            return Dual::one();
        }
        self.chain(self.value.powi(n), n as f64 * self.value.powi(n - 1))
    }
    fn powf(self, e: Self) -> Self {
        let v = self.value.powf(e.value);
        let mut t = e.value * self.value.powf(e.value - 1.0) * self.tangent;
        if e.tangent != 0.0 {
            t += v * self.value.ln() * e.tangent;
        }
        Dual::new(v, t)
    }
    fn sqrt(self) -> Self {
        let s = self.value.sqrt();
        self.chain(s, 0.5 / s)
    }
    fn exp(self) -> Self {
        let e = self.value.exp();
        self.chain(e, e)
    }
    fn exp2(self) -> Self {
        let e = self.value.exp2();
        self.chain(e, e * std::f64::consts::LN_2)
    }
    fn ln(self) -> Self {
        self.chain(self.value.ln(), 1.0 / self.value)
    }
    fn log(self, base: Self) -> Self {
        self.ln() / base.ln()
    }
    fn log2(self) -> Self {
        self.chain(
            self.value.log2(),
            1.0 / (self.value * std::f64::consts::LN_2),
        )
    }
    fn log10(self) -> Self {
        self.chain(
            self.value.log10(),
            1.0 / (self.value * std::f64::consts::LN_10),
        )
    }
    /// The larger one, with its tangent (the first on ties).
    fn max(self, o: Self) -> Self {
        if o.value > self.value {
            o
        } else {
            self
        }
    }
    fn min(self, o: Self) -> Self {
        if o.value < self.value {
            o
        } else {
            self
        }
    }
    fn abs_sub(self, o: Self) -> Self {
        (self - o).max(Dual::zero())
    }
    fn cbrt(self) -> Self {
        let c = self.value.cbrt();
        self.chain(c, 1.0 / (3.0 * c * c))
    }
    fn hypot(self, o: Self) -> Self {
        let h = self.value.hypot(o.value);
        Dual::new(h, (self.value * self.tangent + o.value * o.tangent) / h)
    }
    fn sin(self) -> Self {
        self.chain(self.value.sin(), self.value.cos())
    }
    fn cos(self) -> Self {
        self.chain(self.value.cos(), -self.value.sin())
    }
    fn tan(self) -> Self {
        let t = self.value.tan();
        self.chain(t, 1.0 + t * t)
    }
    fn asin(self) -> Self {
        self.chain(
            self.value.asin(),
            1.0 / (1.0 - self.value * self.value).sqrt(),
        )
    }
    fn acos(self) -> Self {
        self.chain(
            self.value.acos(),
            -1.0 / (1.0 - self.value * self.value).sqrt(),
        )
    }
    fn atan(self) -> Self {
        self.chain(self.value.atan(), 1.0 / (1.0 + self.value * self.value))
    }
    /// `atan2(y = self, x = o)`.
    fn atan2(self, o: Self) -> Self {
        let r2 = self.value * self.value + o.value * o.value;
        Dual::new(
            self.value.atan2(o.value),
            (o.value * self.tangent - self.value * o.tangent) / r2,
        )
    }
    fn sin_cos(self) -> (Self, Self) {
        (self.sin(), self.cos())
    }
    fn exp_m1(self) -> Self {
        self.chain(self.value.exp_m1(), self.value.exp())
    }
    fn ln_1p(self) -> Self {
        self.chain(self.value.ln_1p(), 1.0 / (1.0 + self.value))
    }
    fn sinh(self) -> Self {
        self.chain(self.value.sinh(), self.value.cosh())
    }
    fn cosh(self) -> Self {
        self.chain(self.value.cosh(), self.value.sinh())
    }
    fn tanh(self) -> Self {
        let t = self.value.tanh();
        self.chain(t, 1.0 - t * t)
    }
    fn asinh(self) -> Self {
        self.chain(
            self.value.asinh(),
            1.0 / (self.value * self.value + 1.0).sqrt(),
        )
    }
    fn acosh(self) -> Self {
        self.chain(
            self.value.acosh(),
            1.0 / (self.value * self.value - 1.0).sqrt(),
        )
    }
    fn atanh(self) -> Self {
        self.chain(self.value.atanh(), 1.0 / (1.0 - self.value * self.value))
    }
    fn integer_decode(self) -> (u64, i16, i8) {
        num_traits::Float::integer_decode(self.value)
    }
}

impl ndarray::ScalarOperand for Dual {}

impl ndarray::NdFloat for Dual {}

impl crate::Float for Dual {
    #[inline(always)]
    fn of(x: f64) -> Self {
        Dual::constant(x)
    }
}

impl crate::Differentiable for Dual {
    type Tangent = Dual;
    fn zero_tangent(&self) -> Dual {
        Dual::zero()
    }
}

/// As a tangent: a vector space over the reals, componentwise; `dot` pairs
/// the values.
impl crate::TangentSpace for Dual {
    fn zero_like(&self) -> Self {
        Dual::zero()
    }
    fn add_assign(&mut self, other: &Self) {
        *self += *other;
    }
    fn scale(&mut self, factor: f64) {
        self.value *= factor;
        self.tangent *= factor;
    }
    fn dot(&self, other: &Self) -> f64 {
        self.value * other.value
    }
    fn zip_map(&mut self, other: &Self, f: &mut dyn FnMut(f64, f64) -> f64) {
        self.value = f(self.value, other.value);
    }
}

impl crate::Lift for Dual {
    type View<'a> = Dual;
    #[inline(always)]
    fn view(&self) -> Dual {
        *self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::Float;

    type Case = (&'static str, fn(Dual) -> Dual);

    /// Each function's tangent against a central difference of its value.
    #[test]
    fn derivatives_of_the_scalar_functions() {
        let fs: [Case; 12] = [
            ("sin", |x| x.sin()),
            ("tanh", |x| x.tanh()),
            ("exp", |x| x.exp()),
            ("ln", |x| x.ln()),
            ("sqrt", |x| x.sqrt()),
            ("powi", |x| x.powi(3)),
            ("powf", |x| x.powf(x)),
            ("atan2", |x| x.atan2(Dual::constant(0.4) + x * x)),
            ("hypot", |x| x.hypot(x * Dual::constant(2.0))),
            ("recip", |x| x.recip()),
            ("asinh", |x| x.asinh()),
            ("div", |x| Dual::constant(3.0) / (x * x + Dual::one())),
        ];
        for (name, f) in fs {
            let x = 0.7;
            let got = f(Dual::new(x, 1.0)).tangent;
            let h = 1e-6;
            let fd = (f(Dual::constant(x + h)).value - f(Dual::constant(x - h)).value) / (2.0 * h);
            assert!(
                (got - fd).abs() < 1e-7 * fd.abs().max(1.0),
                "{name}: {got} vs {fd}"
            );
        }
    }
}
