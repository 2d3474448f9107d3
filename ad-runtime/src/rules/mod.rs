//! The derivative rules generated code calls, one module per op family.
//!
//! Naming: `op(..)` is the primal, `op_pushforward(..)` the tangent for
//! forward mode, `op_pullback[_lhs|_rhs](dy, ..)` the cotangent of one
//! argument for reverse mode. Pullbacks take the output cotangent by value
//! and reuse its buffer where they can.

mod accumulate;
mod arith;
mod binary_fns;
mod broadcast;
mod cotangent;
mod elementwise;
mod fields;
mod in_place;
mod join;
mod kept;
mod linalg;
mod lists;
mod loops;
mod orders;
mod placeholder;
mod recursion;
mod reduce;
mod scaled_sums;
mod shape;
mod shapes;
mod slice_writes;

pub use accumulate::*;
pub use arith::*;
pub use binary_fns::*;
pub use broadcast::unbroadcast;
pub use cotangent::{Cot, IntoCot};
pub use elementwise::*;
pub use fields::{
    accumulate_element, some_of, ConstantField, ElementAdjoint, Field, FieldTangent, TrackedField,
};
pub use in_place::*;
pub use join::*;
pub use kept::{Kept, KeptCopy, KeptRef};
pub use linalg::*;
pub use lists::*;
pub use loops::*;
pub use orders::*;
pub use placeholder::{placeholder, Placeholder};
pub use recursion::boxed_pullback;
pub use reduce::*;
pub use scaled_sums::*;
pub use shape::*;
pub use shapes::*;
pub use slice_writes::*;

pub use crate::operand::view;

/// `1` of the scalar type of `x`, the seed of a gradient.
#[inline(always)]
pub fn one_like<F: crate::Float>(_: F) -> F {
    F::one()
}

/// `0` of the scalar type `F` (the tangent of an inactive element).
#[inline(always)]
pub fn zero<F: crate::Float>() -> F {
    F::zero()
}

/// `1` of the scalar type `F`.
#[inline(always)]
pub fn one<F: crate::Float>() -> F {
    F::one()
}

/// `compare(a, b)` for `max_by(compare)` and `min_by(compare)`, whose
/// closure's parameter types this signature gives.
#[inline(always)]
pub fn compare<F: crate::Float>(
    compare: impl FnOnce(&F, &F) -> core::cmp::Ordering,
    a: &F,
    b: &F,
) -> core::cmp::Ordering {
    compare(a, b)
}

/// `x.raw_dim()`, naming `x`'s element type: an array made only to be
/// assigned into (`let mut m = Array2::zeros(..); m.assign(&v);`) has no
/// other use in generated code that would fix it.
#[inline(always)]
pub fn raw_dim_of<F: crate::Float, S: ndarray::Data<Elem = F>, D: ndarray::Dimension>(
    x: &ndarray::ArrayBase<S, D>,
) -> D {
    x.raw_dim()
}
