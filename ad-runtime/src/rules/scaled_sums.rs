//! The cotangent a sum sends through a constant multiple: `u`'s in
//! `y = a + u * c` (or `c * u`, `u / c`, and `-` for `+`), where the
//! product has no other use.
//!
//! Pulled back one rule at a time, the product's cotangent is a copy of
//! `y`'s (the sum's other operand takes `y`'s own buffer), scaled in a
//! second pass, then added into `u`'s adjoint in a third: three passes and
//! an allocation where `u_bar += y_bar * c` is one. The compiler emits
//! the pair of rules as one contribution; it adds in place, or makes the
//! scaled copy in one pass when it is `u`'s first. Where `c` is not one
//! number, or the sum broadcasts, it falls back to the two rules.

use ndarray::{Array, ArrayView, Dimension, Zip};

use super::accumulate::Contribution;
use super::arith::ArithOp;
use super::cotangent::{Cot, IntoCot};
use super::in_place::with_element;
use super::shapes::{ArrayShape, ScalarShape, ScaleByValue, SumShapes};
use crate::Float;

/// `u`'s contribution, not yet computed: `y`'s cotangent, the sum's
/// pullback to the product (`sum`), and the product's to `u`.
pub struct ScaledSum<'d, Y, T, A, B, U, C> {
    dy: Cot<'d, Y>,
    sum: fn(Cot<'d, Y>, A, B) -> T,
    a: A,
    b: B,
    u: U,
    c: C,
    how: How,
}

/// A constant factor: one number, or an array (element by element).
pub trait Factor<F> {
    /// The number, if it is one.
    fn number(&self) -> Option<F>;
}

impl<F: Float> Factor<F> for F {
    #[inline(always)]
    fn number(&self) -> Option<F> {
        Some(*self)
    }
}

impl<F: Float, E: Dimension> Factor<F> for ArrayView<'_, F, E> {
    #[inline(always)]
    fn number(&self) -> Option<F> {
        None
    }
}

/// The one-pass forms, for the shape `Self` of `u`.
pub trait ScaleInOnePass<Y, C>: ScaleByValue<C> {
    /// `acc += k ⊙ dy`, if `c` is one number and `dy` is shaped as `acc`.
    fn add_scaled(&self, dy: &Y, c: &C, how: How, acc: &mut Self::Grad) -> bool;
    /// `k ⊙ dy`, on the same conditions; `dy` back otherwise.
    fn scaled<'d>(&self, dy: Cot<'d, Y>, c: &C, how: How) -> Result<Self::Grad, Cot<'d, Y>>;
}

/// How the factor applies: `* c` or `/ c`, and negated for `a - u * c`.
#[derive(Clone, Copy)]
pub struct How {
    divide: bool,
    negate: bool,
}

impl How {
    /// The operation between a cotangent element and the factor.
    #[inline(always)]
    fn op(self) -> ArithOp {
        if self.divide {
            ArithOp::Div
        } else {
            ArithOp::Mul
        }
    }

    /// The factor with the sign: `g * -c` is `-(g * c)` exactly, and so is
    /// `g / -c`.
    #[inline(always)]
    fn signed<F: Float>(self, c: F) -> F {
        if self.negate {
            -c
        } else {
            c
        }
    }
}

impl<F: Float> ScaleInOnePass<F, F> for ScalarShape<F> {
    #[inline(always)]
    fn add_scaled(&self, dy: &F, c: &F, how: How, acc: &mut F) -> bool {
        let k = how.signed(*c);
        *acc += with_element!(how.op(), false, |f: F| f(*dy, k));
        true
    }
    #[inline(always)]
    fn scaled<'d>(&self, dy: Cot<'d, F>, c: &F, how: How) -> Result<F, Cot<'d, F>> {
        let k = how.signed(*c);
        Ok(with_element!(how.op(), false, |f: F| f(*dy.get(), k)))
    }
}

/// A scalar `u` in a sum of arrays (`x + u * c`): the sum's pullback
/// reduces, so the rules run as they are.
impl<F: Float, D: Dimension, C> ScaleInOnePass<Array<F, D>, C> for ScalarShape<F>
where
    ScalarShape<F>: ScaleByValue<C>,
{
    fn add_scaled(&self, _: &Array<F, D>, _: &C, _: How, _: &mut Self::Grad) -> bool {
        false
    }
    fn scaled<'d>(
        &self,
        dy: Cot<'d, Array<F, D>>,
        _: &C,
        _: How,
    ) -> Result<Self::Grad, Cot<'d, Array<F, D>>> {
        Err(dy)
    }
}

impl<F: Float, D: Dimension, E: Dimension, C: Factor<F>> ScaleInOnePass<Array<F, D>, C>
    for ArrayShape<F, E>
where
    ArrayShape<F, E>: ScaleByValue<C, Grad = Array<F, E>>,
{
    fn add_scaled(&self, dy: &Array<F, D>, c: &C, how: How, acc: &mut Array<F, E>) -> bool {
        let Some(k) = c.number().map(|c| how.signed(c)) else {
            return false;
        };
        if dy.shape() != acc.shape() {
            return false;
        }
        let Ok(dy) = dy.view().into_dimensionality::<E>() else {
            return false;
        };
        with_element!(how.op(), false, |f: F| Zip::from(acc)
            .and(&dy)
            .for_each(|a, &g| *a += f(g, k)));
        true
    }

    fn scaled<'d>(
        &self,
        dy: Cot<'d, Array<F, D>>,
        c: &C,
        how: How,
    ) -> Result<Array<F, E>, Cot<'d, Array<F, D>>> {
        let Some(k) = c.number().map(|c| how.signed(c)) else {
            return Err(dy);
        };
        if dy.get().shape() != self.0.slice() {
            return Err(dy);
        }
        match dy {
            Cot::Owned(mut g) => {
                with_element!(how.op(), false, |f: F| g.mapv_inplace(|g| f(g, k)));
                Ok(g.into_dimensionality::<E>()
                    .expect("arrays of one shape have one rank"))
            }
            Cot::Borrowed(g) => g
                .view()
                .into_dimensionality::<E>()
                .map(|g| with_element!(how.op(), false, |f: F| g.mapv(|g| f(g, k))))
                .map_err(|_| Cot::Borrowed(g)),
        }
    }
}

impl<'d, Y, T, A, B, U, C> ScaledSum<'d, Y, T, A, B, U, C>
where
    U: ScaleInOnePass<Y, C> + ScaleByValue<C, Output = T>,
{
    /// The two rules, one after the other.
    fn by_the_rules(self) -> U::Grad {
        let t_bar = (self.sum)(self.dy, self.a, self.b);
        self.u.pull(Cot::Owned(t_bar), self.c, self.how.divide)
    }
}

impl<'d, Y, T, A, B, U, C> Contribution<U::Grad> for ScaledSum<'d, Y, T, A, B, U, C>
where
    U: ScaleInOnePass<Y, C> + ScaleByValue<C, Output = T>,
    U::Grad: Contribution<U::Grad>,
{
    #[inline(always)]
    fn add_to(self, acc: &mut U::Grad) {
        if !self.u.add_scaled(self.dy.get(), &self.c, self.how, acc) {
            self.by_the_rules().add_to(acc);
        }
    }

    #[inline(always)]
    fn into_first(mut self, _: impl FnOnce() -> U::Grad) -> U::Grad {
        match self.u.scaled(self.dy, &self.c, self.how) {
            Ok(g) => g,
            Err(dy) => {
                self.dy = dy;
                self.by_the_rules()
            }
        }
    }
}

impl<'d, Y, T, A, B, U, C> ScaledSum<'d, Y, T, A, B, U, C> {
    #[inline(always)]
    fn new(
        dy: Cot<'d, Y>,
        sum: fn(Cot<'d, Y>, A, B) -> T,
        (a, b): (A, B),
        (u, c): (U, C),
        how: How,
    ) -> Self {
        ScaledSum {
            dy,
            sum,
            a,
            b,
            u,
            c,
            how,
        }
    }
}

/// A pullback `$name` returning `ScaledSum`s to `u` from the sum's side
/// `$out` (its pullback `$sum`), negated when `$negate`.
macro_rules! scaled_sum_pullback {
    ($(#[$doc:meta])* $name:ident, $out:ident, $negate:literal, $sum:expr $(, $bound:path)?) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name<'d, A, B, U, C>(
            dy: impl IntoCot<'d, A::Output>,
            a: A,
            b: B,
            u: U,
            c: C,
            divide: bool,
        ) -> ScaledSum<'d, A::Output, A::$out, A, B, U, C>
        where
            A: SumShapes<B>,
            U: ScaleByValue<C, Output = A::$out>,
            $(A::$out: $bound,)?
        {
            let how = How {
                divide,
                negate: $negate,
            };
            ScaledSum::new(dy.into_cot(), $sum, (a, b), (u, c), how)
        }
    };
}

scaled_sum_pullback!(
    /// `u`'s cotangent in `y = u * c + b` (or `c * u`, `u / c` when
    /// `divide`), from the sum's operand shapes `a` (the product's) and
    /// `b`, `u`'s shape and `c`.
    add_scaled_pullback_lhs, Lhs, false, A::lhs
);
scaled_sum_pullback!(
    /// `u`'s cotangent in `y = a + u * c`, as `add_scaled_pullback_lhs`.
    add_scaled_pullback_rhs, Rhs, false, A::rhs
);
scaled_sum_pullback!(
    /// `u`'s cotangent in `y = a - u * c`: negated.
    sub_scaled_pullback_rhs, Rhs, true, |dy, a, b| -A::rhs(dy, a, b),
    core::ops::Neg<Output = A::Rhs>
);

/// `u`'s cotangent in `y = u * c - b`: as for `+`.
pub use add_scaled_pullback_lhs as sub_scaled_pullback_lhs;
