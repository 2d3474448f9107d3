//! Reads of a `Differentiable` struct's fields (`p.layers[i].w`). The macro
//! sees tokens, not the struct, so it cannot tell a `#[constant]` field
//! from a differentiable one; the types can. A constant field's entry in
//! the tangent struct is `NoTangent`:
//!
//! - forward mode reads the field of the tangent struct through
//!   [`Field`], which gives the tangent itself, or a zero of the field's
//!   shape for a constant field;
//! - reverse mode adds the field's cotangent into the same field of the
//!   adjoint struct, which for a constant field drops it (the
//!   `Contribution<NoTangent>` impls below), and an element's cotangent
//!   into that element ([`accumulate_element`]).

use std::ops::{Deref, Index};

use ndarray::{Array, ArrayBase, Data, Dimension, NdIndex};

use super::accumulate::Contribution;
use crate::{Differentiable, Float, NoTangent};

/// A field's tangent and its value, read in forward mode:
/// `(&rules::Field(&p_dot.w, &p.w)).tangent()`. Method resolution picks
/// [`ConstantField`] when the tangent is `NoTangent` and [`TrackedField`]
/// otherwise (the first needs one reference less).
pub struct Field<'a, T, P>(pub &'a T, pub &'a P);

impl<T, P> Clone for Field<'_, T, P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, P> Copy for Field<'_, T, P> {}

/// A field's tangent: borrowed from the tangent struct, or a zero made for
/// a constant field.
pub enum FieldTangent<'a, T> {
    Tracked(&'a T),
    Zero(T),
}

impl<T> Deref for FieldTangent<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        match self {
            FieldTangent::Tracked(t) => t,
            FieldTangent::Zero(t) => t,
        }
    }
}

/// A `#[constant]` field: its tangent, and that of each element, is zero.
pub trait ConstantField<'a, P: Differentiable> {
    fn tangent(self) -> FieldTangent<'a, P::Tangent>;
    fn at<I>(self, index: I) -> FieldTangent<'a, <P::Output as Differentiable>::Tangent>
    where
        P: Index<I>,
        P::Output: Differentiable;
}

impl<'a, P: Differentiable> ConstantField<'a, P> for &Field<'a, NoTangent, P> {
    #[inline(always)]
    fn tangent(self) -> FieldTangent<'a, P::Tangent> {
        FieldTangent::Zero(self.1.zero_tangent())
    }
    #[inline(always)]
    fn at<I>(self, index: I) -> FieldTangent<'a, <P::Output as Differentiable>::Tangent>
    where
        P: Index<I>,
        P::Output: Differentiable,
    {
        FieldTangent::Zero(self.1[index].zero_tangent())
    }
}

/// A differentiable field: its tangent is the tangent struct's field.
pub trait TrackedField<'a, T> {
    fn tangent(self) -> FieldTangent<'a, T>;
    fn at<I>(self, index: I) -> FieldTangent<'a, T::Output>
    where
        T: Index<I>,
        T::Output: Sized;
}

impl<'a, T, P> TrackedField<'a, T> for Field<'a, T, P> {
    #[inline(always)]
    fn tangent(self) -> FieldTangent<'a, T> {
        FieldTangent::Tracked(self.0)
    }
    #[inline(always)]
    fn at<I>(self, index: I) -> FieldTangent<'a, T::Output>
    where
        T: Index<I>,
        T::Output: Sized,
    {
        FieldTangent::Tracked(&self.0[index])
    }
}

/// Dropping a cotangent into a `#[constant]` field's `NoTangent`.
macro_rules! dropped {
    ($([$($gen:tt)*] $t:ty;)*) => {$(
        impl<$($gen)*> Contribution<NoTangent> for $t {
            #[inline(always)]
            fn add_to(self, _: &mut NoTangent) {}
            #[inline(always)]
            fn into_first(self, _: impl FnOnce() -> NoTangent) -> NoTangent {
                NoTangent
            }
        }
    )*};
}

dropped! {
    [F: Float] F;
    [F: Float, D: Dimension] Array<F, D>;
    [T] Vec<T>;
    [T] Option<T>;
}

/// The adjoint of a field that an element read (`p.w[i]`, `p.layers[i]`)
/// adds into.
pub trait ElementAdjoint<P: ?Sized, I, C> {
    fn add_element(&mut self, primal: &P, index: I, dy: C);
}

/// An array field's adjoint, which `unset_tangent` leaves empty until its
/// first contribution: zeros of the field's shape, then the element.
impl<F, S, D, I> ElementAdjoint<ArrayBase<S, D>, I, F> for Array<F, D>
where
    F: Float,
    S: Data<Elem = F>,
    D: Dimension,
    I: NdIndex<D>,
{
    #[inline(always)]
    fn add_element(&mut self, primal: &ArrayBase<S, D>, index: I, dy: F) {
        if self.is_empty() {
            *self = Array::zeros(primal.raw_dim());
        }
        self[index] += dy;
    }
}

/// A `Vec` field's adjoint has an entry per element from the start.
impl<P, C> ElementAdjoint<Vec<P>, usize, C> for Vec<P::Tangent>
where
    P: Differentiable,
    C: Contribution<P::Tangent>,
{
    #[inline(always)]
    fn add_element(&mut self, primal: &Vec<P>, index: usize, dy: C) {
        self.add_element(primal.as_slice(), index, dy);
    }
}

/// A slice parameter's (`xs: &[Array1<f64>]`): the adjoint is a `Vec`.
impl<P, C> ElementAdjoint<[P], usize, C> for Vec<P::Tangent>
where
    P: Differentiable,
    C: Contribution<P::Tangent>,
{
    #[inline(always)]
    fn add_element(&mut self, _: &[P], index: usize, dy: C) {
        dy.add_to(&mut self[index]);
    }
}

/// A `#[constant]` field's: the cotangent is dropped.
impl<P: ?Sized, I, C> ElementAdjoint<P, I, C> for NoTangent {
    #[inline(always)]
    fn add_element(&mut self, _: &P, _: I, _: C) {}
}

/// Adds `dy` into element `index` of a field's adjoint `acc` (`primal` is
/// the field).
#[inline(always)]
pub fn accumulate_element<T, P, I, C>(acc: &mut T, primal: &P, index: I, dy: C)
where
    T: ElementAdjoint<P, I, C>,
    P: ?Sized,
{
    acc.add_element(primal, index, dy);
}

/// The value inside an `Option` field a test found `Some` (`if let Some(b)
/// = &p.bias`), and in forward mode its tangent inside the tangent
/// struct's field, which must be `Some` where the value is.
#[inline(always)]
pub fn some_of<T>(field: &Option<T>) -> &T {
    field
        .as_ref()
        .expect("an `Option` field's tangent is `None` where its value is `Some`")
}
