//! `a + b`, `a - b`, `a * b`, `a / b` between scalars and arrays, with
//! ndarray broadcasting. Pullbacks sum back to each argument's run-time shape.
//!
//! ```text
//! y = a + b    a_bar = unbroadcast(y_bar)        b_bar = unbroadcast(y_bar)
//! y = a - b    a_bar = unbroadcast(y_bar)        b_bar = -unbroadcast(y_bar)
//! y = a * b    a_bar = unbroadcast(y_bar * b)    b_bar = unbroadcast(y_bar * a)
//! y = a / b    a_bar = unbroadcast(y_bar / b)    b_bar = -unbroadcast(y_bar * a / b^2)
//! ```

use ndarray::{Array, ArrayView, DimMax, Dimension, Ix0};

use super::broadcast::{broadcast_owned, co_dim, unbroadcast};
use super::cotangent::{Cot, IntoCot};
use crate::{Float, Operand};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
}
use ArithOp::*;

/// The arithmetic family between two canonical operands.
#[diagnostic::on_unimplemented(
    message = "no derivative rule for arithmetic between `{Self}` and `{Rhs}`",
    label = "`ad` differentiates `+ - * /` between scalars and ndarray arrays of one float type",
    note = "both sides must have the same float type (`f32` or `f64`) and broadcastable shapes"
)]
pub trait Arith<Rhs: Operand<Elem = Self::Elem>>: Operand {
    /// The result, which is also its own tangent type.
    type Output: Clone;
    fn apply(op: ArithOp, a: Self, b: Rhs) -> Self::Output;
    fn pull_lhs(op: ArithOp, dy: Cot<'_, Self::Output>, a: Self, b: Rhs) -> Self::Owned;
    fn pull_rhs(op: ArithOp, dy: Cot<'_, Self::Output>, a: Self, b: Rhs) -> Rhs::Owned;
    fn push_lhs(op: ArithOp, da: Self, a: Self, b: Rhs) -> Self::Output;
    fn push_rhs(op: ArithOp, db: Rhs, a: Self, b: Rhs) -> Self::Output;
}

impl<F: Float> Arith<F> for F {
    type Output = F;
    #[inline(always)]
    fn apply(op: ArithOp, a: F, b: F) -> F {
        match op {
            Add => a + b,
            Sub => a - b,
            Mul => a * b,
            Div => a / b,
        }
    }
    #[inline(always)]
    fn pull_lhs(op: ArithOp, dy: Cot<'_, F>, _: F, b: F) -> F {
        let dy = *dy.get();
        match op {
            Add | Sub => dy,
            Mul => dy * b,
            Div => dy / b,
        }
    }
    #[inline(always)]
    fn pull_rhs(op: ArithOp, dy: Cot<'_, F>, a: F, b: F) -> F {
        let dy = *dy.get();
        match op {
            Add => dy,
            Sub => -dy,
            Mul => dy * a,
            Div => -dy * a / (b * b),
        }
    }
    #[inline(always)]
    fn push_lhs(op: ArithOp, da: F, _: F, b: F) -> F {
        match op {
            Add | Sub => da,
            Mul => da * b,
            Div => da / b,
        }
    }
    #[inline(always)]
    fn push_rhs(op: ArithOp, db: F, a: F, b: F) -> F {
        match op {
            Add => db,
            Sub => -db,
            Mul => a * db,
            Div => -a * db / (b * b),
        }
    }
}

type Out<D, E> = <D as DimMax<E>>::Output;

fn array_apply<F: Float, D: Dimension + DimMax<E>, E: Dimension>(
    op: ArithOp,
    a: ArrayView<'_, F, D>,
    b: ArrayView<'_, F, E>,
) -> Array<F, Out<D, E>> {
    match op {
        Add => &a + &b,
        Sub => &a - &b,
        Mul => &a * &b,
        Div => &a / &b,
    }
}

fn array_pull_lhs<F: Float, D: Dimension + DimMax<E>, E: Dimension>(
    op: ArithOp,
    dy: Cot<'_, Array<F, Out<D, E>>>,
    a: ArrayView<'_, F, D>,
    b: ArrayView<'_, F, E>,
) -> Array<F, D> {
    let dy = match op {
        Add | Sub => dy,
        Mul => Cot::Owned(scaled(dy, |g| g.zip_mut_with(&b, |g, &b| *g *= b))),
        Div => Cot::Owned(scaled(dy, |g| g.zip_mut_with(&b, |g, &b| *g /= b))),
    };
    unbroadcast(dy, a.raw_dim())
}

/// The cotangent, owned, with `f` applied in place.
fn scaled<F: Float, M: Dimension>(
    dy: Cot<'_, Array<F, M>>,
    f: impl FnOnce(&mut Array<F, M>),
) -> Array<F, M> {
    let mut g = dy.owned();
    f(&mut g);
    g
}

fn array_pull_rhs<F: Float, D: Dimension + DimMax<E>, E: Dimension>(
    op: ArithOp,
    dy: Cot<'_, Array<F, Out<D, E>>>,
    a: ArrayView<'_, F, D>,
    b: ArrayView<'_, F, E>,
) -> Array<F, E> {
    match op {
        Add => unbroadcast(dy, b.raw_dim()),
        Sub => unbroadcast(dy, b.raw_dim()).mapv_into(|g| -g),
        Mul => unbroadcast(
            Cot::Owned(scaled(dy, |g| g.zip_mut_with(&a, |g, &a| *g *= a))),
            b.raw_dim(),
        ),
        Div => {
            let g = scaled(dy, |g| {
                g.zip_mut_with(&a, |g, &a| *g *= a);
                g.zip_mut_with(&b, |g, &b| *g = -*g / (b * b));
            });
            unbroadcast(Cot::Owned(g), b.raw_dim())
        }
    }
}

fn array_push_lhs<F: Float, D: Dimension + DimMax<E>, E: Dimension>(
    op: ArithOp,
    da: ArrayView<'_, F, D>,
    a: ArrayView<'_, F, D>,
    b: ArrayView<'_, F, E>,
) -> Array<F, Out<D, E>> {
    match op {
        Add | Sub => broadcast_owned(da, co_dim(&a.raw_dim(), &b.raw_dim())),
        Mul => &da * &b,
        Div => &da / &b,
    }
}

fn array_push_rhs<F: Float, D: Dimension + DimMax<E>, E: Dimension>(
    op: ArithOp,
    db: ArrayView<'_, F, E>,
    a: ArrayView<'_, F, D>,
    b: ArrayView<'_, F, E>,
) -> Array<F, Out<D, E>> {
    match op {
        Add => broadcast_owned(db, co_dim(&a.raw_dim(), &b.raw_dim())),
        Sub => broadcast_owned(db, co_dim(&a.raw_dim(), &b.raw_dim())).mapv_into(|v| -v),
        Mul => &a * &db,
        Div => {
            let mut t = &a * &db;
            t.zip_mut_with(&b, |t, &b| *t = -*t / (b * b));
            t
        }
    }
}

/// Array with array, and array with scalar or scalar with array (the scalar
/// takes part as a 0-dimensional view, so broadcasting does the rest).
macro_rules! array_arith {
    ($([$($gen:tt)*] $lhs:ty, $rhs:ty, $out:ty where [$($bound:tt)*];)*) => {$(
        impl<$($gen)*> Arith<$rhs> for $lhs where $($bound)* {
            type Output = $out;
            fn apply(op: ArithOp, a: Self, b: $rhs) -> $out {
                array_apply(op, a.as_array(), b.as_array())
            }
            fn pull_lhs(op: ArithOp, dy: Cot<'_, $out>, a: Self, b: $rhs) -> Self::Owned {
                Self::from_array(array_pull_lhs(op, dy, a.as_array(), b.as_array()))
            }
            fn pull_rhs(op: ArithOp, dy: Cot<'_, $out>, a: Self, b: $rhs) -> <$rhs as Operand>::Owned {
                <$rhs>::from_array(array_pull_rhs(op, dy, a.as_array(), b.as_array()))
            }
            fn push_lhs(op: ArithOp, da: Self, a: Self, b: $rhs) -> $out {
                array_push_lhs(op, da.as_array(), a.as_array(), b.as_array())
            }
            fn push_rhs(op: ArithOp, db: $rhs, a: Self, b: $rhs) -> $out {
                array_push_rhs(op, db.as_array(), a.as_array(), b.as_array())
            }
        }
    )*};
}

array_arith! {
    ['a, 'b, F: Float, D: Dimension, E: Dimension]
        ArrayView<'a, F, D>, ArrayView<'b, F, E>, Array<F, Out<D, E>> where [D: DimMax<E>];
    ['a, F: Float, D: Dimension]
        ArrayView<'a, F, D>, F, Array<F, D> where [D: DimMax<Ix0, Output = D>];
    ['b, F: Float, E: Dimension]
        F, ArrayView<'b, F, E>, Array<F, E> where [Ix0: DimMax<E, Output = E>];
}

macro_rules! arith_fns {
    ($($op:ident $name:ident $push:ident $pull_lhs:ident $pull_rhs:ident;)*) => {$(
        #[inline(always)]
        pub fn $name<A: Arith<B>, B: Operand<Elem = A::Elem>>(a: A, b: B) -> A::Output {
            A::apply($op, a, b)
        }
        /// The tangent of the result when only the given side is active.
        #[inline(always)]
        pub fn $push<A: Arith<B>, B: Operand<Elem = A::Elem>>(
            da: Option<A>,
            db: Option<B>,
            a: A,
            b: B,
        ) -> A::Output
        where
            A::Output: crate::TangentSpace,
        {
            match (da, db) {
                (Some(da), None) => A::push_lhs($op, da, a, b),
                (None, Some(db)) => A::push_rhs($op, db, a, b),
                (Some(da), Some(db)) => {
                    let mut t = A::push_lhs($op, da, a.clone(), b.clone());
                    crate::TangentSpace::add_assign(&mut t, &A::push_rhs($op, db, a, b));
                    t
                }
                (None, None) => unreachable!("a pushforward with no active argument is never emitted"),
            }
        }
        #[inline(always)]
        pub fn $pull_lhs<'d, A: Arith<B>, B: Operand<Elem = A::Elem>>(dy: impl IntoCot<'d, A::Output>, a: A, b: B) -> A::Owned
        where
            A::Output: 'd,
        {
            A::pull_lhs($op, dy.into_cot(), a, b)
        }
        #[inline(always)]
        pub fn $pull_rhs<'d, A: Arith<B>, B: Operand<Elem = A::Elem>>(dy: impl IntoCot<'d, A::Output>, a: A, b: B) -> B::Owned
        where
            A::Output: 'd,
        {
            A::pull_rhs($op, dy.into_cot(), a, b)
        }
    )*};
}

arith_fns! {
    Add add add_pushforward add_values_pullback_lhs add_values_pullback_rhs;
    Sub sub sub_pushforward sub_values_pullback_lhs sub_values_pullback_rhs;
    Mul mul mul_pushforward mul_values_pullback_lhs mul_values_pullback_rhs;
    Div div div_pushforward div_values_pullback_lhs div_pullback_rhs;
}
