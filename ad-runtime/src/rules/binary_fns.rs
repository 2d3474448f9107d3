//! Two-argument scalar functions: `a.atan2(b)`, `a.powf(b)`, `a.hypot(b)`,
//! `a.max(b)`, `a.min(b)`, `a.log(base)`, and `a.mul_add(b, c)`. The first
//! argument may also be an array (element-wise, as ndarray's `powf` and
//! `log`), with a scalar second argument.
//!
//! ```text
//! y = atan2(a, b)   a_bar = y_bar * b / (a^2 + b^2)   b_bar = -y_bar * a / (a^2 + b^2)
//! y = a^b           a_bar = y_bar * b a^(b-1)          b_bar = y_bar * y ln a
//! y = hypot(a, b)   a_bar = y_bar * a / y              b_bar = y_bar * b / y
//! y = max(a, b)     the cotangent goes to the larger argument (to `a` on ties)
//! y = log_b(a)      a_bar = y_bar / (a ln b)           b_bar = -y_bar * y / (b ln b)
//! ```

use ndarray::{Array, ArrayView, Dimension};

use super::cotangent::{Cot, IntoCot};
use crate::{Float, Operand};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryFn {
    Atan2,
    Powf,
    Hypot,
    Max,
    Min,
    Log,
}
use BinaryFn::*;

impl BinaryFn {
    #[inline(always)]
    fn value<F: Float>(self, a: F, b: F) -> F {
        match self {
            Atan2 => a.atan2(b),
            Powf => a.powf(b),
            Hypot => a.hypot(b),
            Max => a.max(b),
            Min => a.min(b),
            Log => a.log(b),
        }
    }
    /// (dy/da, dy/db) at `a`, `b` with `y` the value.
    #[inline(always)]
    fn partials<F: Float>(self, a: F, b: F, y: F) -> (F, F) {
        let (zero, one) = (F::zero(), F::one());
        match self {
            Atan2 => {
                let r = a * a + b * b;
                (b / r, -a / r)
            }
            Powf => {
                let da = if b == zero { zero } else { b * a.powf(b - one) };
                let db = if a == zero { zero } else { y * a.ln() };
                (da, db)
            }
            Hypot => {
                if y == zero {
                    (zero, zero)
                } else {
                    (a / y, b / y)
                }
            }
            Max => {
                if a >= b || b.is_nan() {
                    (one, zero)
                } else {
                    (zero, one)
                }
            }
            Min => {
                if a <= b || b.is_nan() {
                    (one, zero)
                } else {
                    (zero, one)
                }
            }
            Log => {
                let lb = b.ln();
                (one / (a * lb), -y / (b * lb))
            }
        }
    }
}

/// A first argument (scalar or array) with a scalar second argument.
#[diagnostic::on_unimplemented(
    message = "no derivative rule for this two-argument function on `{Self}` and `{B}`",
    label = "the first argument may be a scalar or an array, the second must be a scalar of the same float type"
)]
pub trait ScalarPair<B: Operand<Elem = Self::Elem>>: Operand {
    fn apply(f: BinaryFn, a: Self, b: B) -> Self::Owned;
    fn pull_lhs(f: BinaryFn, dy: Cot<'_, Self::Owned>, a: Self, b: B) -> Self::Owned;
    fn pull_rhs(f: BinaryFn, dy: Cot<'_, Self::Owned>, a: Self, b: B) -> B::Owned;
    fn push(f: BinaryFn, da: Option<Self>, db: Option<B>, a: Self, b: B) -> Self::Owned;
}

impl<F: Float> ScalarPair<F> for F {
    #[inline(always)]
    fn apply(f: BinaryFn, a: F, b: F) -> F {
        f.value(a, b)
    }
    #[inline(always)]
    fn pull_lhs(f: BinaryFn, dy: Cot<'_, F>, a: F, b: F) -> F {
        *dy.get() * f.partials(a, b, f.value(a, b)).0
    }
    #[inline(always)]
    fn pull_rhs(f: BinaryFn, dy: Cot<'_, F>, a: F, b: F) -> F {
        *dy.get() * f.partials(a, b, f.value(a, b)).1
    }
    #[inline(always)]
    fn push(f: BinaryFn, da: Option<F>, db: Option<F>, a: F, b: F) -> F {
        let (pa, pb) = f.partials(a, b, f.value(a, b));
        da.map_or(F::zero(), |d| d * pa) + db.map_or(F::zero(), |d| d * pb)
    }
}

impl<F: Float, D: Dimension> ScalarPair<F> for ArrayView<'_, F, D> {
    fn apply(f: BinaryFn, a: Self, b: F) -> Array<F, D> {
        a.mapv(|a| f.value(a, b))
    }
    fn pull_lhs(f: BinaryFn, dy: Cot<'_, Array<F, D>>, a: Self, b: F) -> Array<F, D> {
        let mut dy = dy.owned();
        dy.zip_mut_with(&a, |g, &a| *g *= f.partials(a, b, f.value(a, b)).0);
        dy
    }
    fn pull_rhs(f: BinaryFn, dy: Cot<'_, Array<F, D>>, a: Self, b: F) -> F {
        let dy = dy.get();
        let mut acc = F::zero();
        ndarray::Zip::from(dy)
            .and(&a)
            .for_each(|&g, &a| acc += g * f.partials(a, b, f.value(a, b)).1);
        acc
    }
    fn push(f: BinaryFn, da: Option<Self>, db: Option<F>, a: Self, b: F) -> Array<F, D> {
        let mut t = Array::zeros(a.raw_dim());
        if let Some(db) = db {
            ndarray::Zip::from(&mut t)
                .and(&a)
                .for_each(|t, &a| *t = db * f.partials(a, b, f.value(a, b)).1);
        }
        if let Some(da) = da {
            ndarray::Zip::from(&mut t)
                .and(&a)
                .and(&da)
                .for_each(|t, &a, &d| *t += d * f.partials(a, b, f.value(a, b)).0);
        }
        t
    }
}

macro_rules! binary_fns {
    ($($f:ident $name:ident $push:ident $pull_lhs:ident $pull_rhs:ident;)*) => {$(
        #[inline(always)]
        pub fn $name<A: ScalarPair<B>, B: Operand<Elem = A::Elem>>(a: A, b: B) -> A::Owned {
            A::apply($f, a, b)
        }
        #[inline(always)]
        pub fn $push<A: ScalarPair<B>, B: Operand<Elem = A::Elem>>(
            da: Option<A>,
            db: Option<B>,
            a: A,
            b: B,
        ) -> A::Owned {
            A::push($f, da, db, a, b)
        }
        #[inline(always)]
        pub fn $pull_lhs<'d, A: ScalarPair<B>, B: Operand<Elem = A::Elem>>(dy: impl IntoCot<'d, A::Owned>, a: A, b: B) -> A::Owned
        where
            A::Owned: 'd,
        {
            A::pull_lhs($f, dy.into_cot(), a, b)
        }
        #[inline(always)]
        pub fn $pull_rhs<'d, A: ScalarPair<B>, B: Operand<Elem = A::Elem>>(dy: impl IntoCot<'d, A::Owned>, a: A, b: B) -> B::Owned
        where
            A::Owned: 'd,
        {
            A::pull_rhs($f, dy.into_cot(), a, b)
        }
    )*};
}

binary_fns! {
    Atan2 atan2 atan2_pushforward atan2_pullback_lhs atan2_pullback_rhs;
    Powf powf powf_pushforward powf_pullback_lhs powf_pullback_rhs;
    Hypot hypot hypot_pushforward hypot_pullback_lhs hypot_pullback_rhs;
    Max max max_pushforward max_pullback_lhs max_pullback_rhs;
    Min min min_pushforward min_pullback_lhs min_pullback_rhs;
    Log log log_pushforward log_pullback_lhs log_pullback_rhs;
}

/// `a.mul_add(b, c) = a * b + c` on scalars.
#[inline(always)]
pub fn mul_add<F: Float>(a: F, b: F, c: F) -> F {
    num_traits::Float::mul_add(a, b, c)
}

/// `a_bar = y_bar * b` for `y = a.mul_add(b, c)`.
#[inline(always)]
pub fn mul_add_pullback_a<'d, F: Float>(dy: impl IntoCot<'d, F>, _: F, b: F) -> F {
    *dy.into_cot().get() * b
}

/// `b_bar = y_bar * a`.
#[inline(always)]
pub fn mul_add_pullback_b<'d, F: Float>(dy: impl IntoCot<'d, F>, a: F, _: F) -> F {
    *dy.into_cot().get() * a
}

/// `c_bar = y_bar`.
#[inline(always)]
pub fn mul_add_pullback_c<'d, F: Float>(dy: impl IntoCot<'d, F>, _: F, _: F) -> F {
    *dy.into_cot().get()
}

#[inline(always)]
pub fn mul_add_pushforward<F: Float>(da: Option<F>, db: Option<F>, dc: Option<F>, a: F, b: F) -> F {
    let z = F::zero();
    da.map_or(z, |d| d * b) + db.map_or(z, |d| a * d) + dc.unwrap_or(z)
}
