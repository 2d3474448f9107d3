//! Shapes stand in for values a pullback reads only for their shape (the
//! operands of `+` and `-`, un-broadcast at run time). A loop saves the
//! shape instead of the value: nothing at all for a scalar.
//!
//! `shape_of` is idempotent (`shape_of(&shape_of(&x))` is the same shape), so
//! reverse code reads `shape_of(&x)` whether `x` is the value (in straight-line
//! code) or its saved shape (restored from a tape).

use std::marker::PhantomData;

use ndarray::{Array, ArrayBase, Data, DimMax, Dimension, Ix0};

use super::broadcast::unbroadcast;
use super::cotangent::{Cot, IntoCot};
use crate::{Float, NoTangent};

/// The shape of a scalar: nothing.
pub struct ScalarShape<F>(PhantomData<F>);

impl<F> ScalarShape<F> {
    #[inline(always)]
    pub fn new() -> Self {
        ScalarShape(PhantomData)
    }
}

impl<F> Default for ScalarShape<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F> Clone for ScalarShape<F> {
    fn clone(&self) -> Self {
        Self::new()
    }
}

/// The shape of an array.
pub struct ArrayShape<F, D>(pub D, PhantomData<F>);

impl<F, D: Clone> Clone for ArrayShape<F, D> {
    fn clone(&self) -> Self {
        ArrayShape(self.0.clone(), PhantomData)
    }
}

/// What has a shape: scalars, arrays, and shapes themselves.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no shape `ad` can un-broadcast to",
    label = "expected `f32`, `f64`, or an ndarray array or view of them"
)]
pub trait ShapeOf {
    type Shape: Clone;
    fn shape_of(&self) -> Self::Shape;
}

macro_rules! scalar_shape {
    ($($t:ty),*) => {$(
        impl ShapeOf for $t {
            type Shape = ScalarShape<$t>;
            #[inline(always)]
            fn shape_of(&self) -> ScalarShape<$t> {
                ScalarShape::new()
            }
        }
    )*};
}
scalar_shape!(f32, f64, crate::Dual);

impl<F: Float, S: Data<Elem = F>, D: Dimension> ShapeOf for ArrayBase<S, D> {
    type Shape = ArrayShape<F, D>;
    #[inline(always)]
    fn shape_of(&self) -> ArrayShape<F, D> {
        ArrayShape(self.raw_dim(), PhantomData)
    }
}

/// The shape of a `Vec` or slice of floats: its length.
pub struct VecShape<F>(pub usize, PhantomData<F>);

impl<F> Clone for VecShape<F> {
    fn clone(&self) -> Self {
        VecShape(self.0, PhantomData)
    }
}

impl<F: Float> ShapeOf for [F] {
    type Shape = VecShape<F>;
    #[inline(always)]
    fn shape_of(&self) -> VecShape<F> {
        VecShape(self.len(), PhantomData)
    }
}

impl<F: Float> ShapeOf for Vec<F> {
    type Shape = VecShape<F>;
    #[inline(always)]
    fn shape_of(&self) -> VecShape<F> {
        self.as_slice().shape_of()
    }
}

/// A `Vec` of floats that a rule reads as a 1-D array (an item of a bag,
/// `xs: &[Vec<f64>]`, summed) has that array's shape.
impl<F> From<VecShape<F>> for ArrayShape<F, ndarray::Ix1> {
    #[inline(always)]
    fn from(v: VecShape<F>) -> Self {
        ArrayShape(ndarray::Ix1(v.0), PhantomData)
    }
}

impl<F> ShapeOf for VecShape<F> {
    type Shape = VecShape<F>;
    #[inline(always)]
    fn shape_of(&self) -> VecShape<F> {
        self.clone()
    }
}

impl<F> ShapeOf for ScalarShape<F> {
    type Shape = ScalarShape<F>;
    #[inline(always)]
    fn shape_of(&self) -> ScalarShape<F> {
        ScalarShape::new()
    }
}

impl<F, D: Clone> ShapeOf for ArrayShape<F, D> {
    type Shape = ArrayShape<F, D>;
    #[inline(always)]
    fn shape_of(&self) -> ArrayShape<F, D> {
        self.clone()
    }
}

impl<T: ShapeOf + ?Sized> ShapeOf for &T {
    type Shape = T::Shape;
    #[inline(always)]
    fn shape_of(&self) -> T::Shape {
        (**self).shape_of()
    }
}

/// The shape of `x` (or `x` itself if it is a shape).
#[inline(always)]
pub fn shape_of<T: ShapeOf + ?Sized>(x: &T) -> T::Shape {
    x.shape_of()
}

/// `+` and `-` pullbacks from the operands' shapes.
#[diagnostic::on_unimplemented(
    message = "no derivative rule for `+`/`-` between values shaped `{Self}` and `{B}`",
    label = "both sides must have the same float type and broadcastable shapes"
)]
pub trait SumShapes<B> {
    /// The result's cotangent.
    type Output: Clone;
    type Lhs;
    type Rhs;
    fn lhs(dy: Cot<'_, Self::Output>, a: Self, b: B) -> Self::Lhs;
    fn rhs(dy: Cot<'_, Self::Output>, a: Self, b: B) -> Self::Rhs;
}

impl<F: Float> SumShapes<ScalarShape<F>> for ScalarShape<F> {
    type Output = F;
    type Lhs = F;
    type Rhs = F;
    #[inline(always)]
    fn lhs(dy: Cot<'_, F>, _: Self, _: ScalarShape<F>) -> F {
        *dy.get()
    }
    #[inline(always)]
    fn rhs(dy: Cot<'_, F>, _: Self, _: ScalarShape<F>) -> F {
        *dy.get()
    }
}

impl<F: Float, D: Dimension + DimMax<E>, E: Dimension> SumShapes<ArrayShape<F, E>>
    for ArrayShape<F, D>
{
    type Output = Array<F, <D as DimMax<E>>::Output>;
    type Lhs = Array<F, D>;
    type Rhs = Array<F, E>;
    fn lhs(dy: Cot<'_, Self::Output>, a: Self, _: ArrayShape<F, E>) -> Array<F, D> {
        unbroadcast(dy, a.0)
    }
    fn rhs(dy: Cot<'_, Self::Output>, _: Self, b: ArrayShape<F, E>) -> Array<F, E> {
        unbroadcast(dy, b.0)
    }
}

impl<F: Float, E: Dimension> SumShapes<ArrayShape<F, E>> for ScalarShape<F>
where
    Ix0: DimMax<E, Output = E>,
{
    type Output = Array<F, E>;
    type Lhs = F;
    type Rhs = Array<F, E>;
    fn lhs(dy: Cot<'_, Array<F, E>>, _: Self, _: ArrayShape<F, E>) -> F {
        dy.get().sum()
    }
    fn rhs(dy: Cot<'_, Array<F, E>>, _: Self, _: ArrayShape<F, E>) -> Array<F, E> {
        dy.owned()
    }
}

impl<F: Float, D: Dimension> SumShapes<ScalarShape<F>> for ArrayShape<F, D>
where
    D: DimMax<Ix0, Output = D>,
{
    type Output = Array<F, D>;
    type Lhs = Array<F, D>;
    type Rhs = F;
    fn lhs(dy: Cot<'_, Array<F, D>>, _: Self, _: ScalarShape<F>) -> Array<F, D> {
        dy.owned()
    }
    fn rhs(dy: Cot<'_, Array<F, D>>, _: Self, _: ScalarShape<F>) -> F {
        dy.get().sum()
    }
}

/// `a_bar = unbroadcast(y_bar)` for `y = a + b`.
#[inline(always)]
pub fn add_pullback_lhs<'d, A: SumShapes<B>, B>(
    dy: impl IntoCot<'d, A::Output>,
    a: A,
    b: B,
) -> A::Lhs
where
    A::Output: 'd,
{
    A::lhs(dy.into_cot(), a, b)
}

/// `b_bar = unbroadcast(y_bar)` for `y = a + b`.
#[inline(always)]
pub fn add_pullback_rhs<'d, A: SumShapes<B>, B>(
    dy: impl IntoCot<'d, A::Output>,
    a: A,
    b: B,
) -> A::Rhs
where
    A::Output: 'd,
{
    A::rhs(dy.into_cot(), a, b)
}

/// `a_bar = unbroadcast(y_bar)` for `y = a - b`: as for `a + b`.
pub use add_pullback_lhs as sub_pullback_lhs;

/// `b_bar = -unbroadcast(y_bar)` for `y = a - b`.
#[inline(always)]
pub fn sub_pullback_rhs<'d, A: SumShapes<B>, B>(
    dy: impl IntoCot<'d, A::Output>,
    a: A,
    b: B,
) -> A::Rhs
where
    A::Output: 'd,
    A::Rhs: core::ops::Neg<Output = A::Rhs>,
{
    -A::rhs(dy.into_cot(), a, b)
}

/// Pullbacks of `a * b` and `a / b` that need one operand's value and the
/// other's shape: `a_bar = unbroadcast(y_bar * b)` (or `/ b`), and
/// `b_bar = unbroadcast(y_bar * a)` for `*`.
#[diagnostic::on_unimplemented(
    message = "no derivative rule for `*`/`/` between values shaped `{Self}` and `{V}`",
    label = "both sides must have the same float type and broadcastable shapes"
)]
pub trait ScaleByValue<V> {
    /// The result's cotangent.
    type Output: Clone;
    /// The cotangent of the operand whose shape `Self` is.
    type Grad;
    /// `unbroadcast(dy op v)` to the shape `self`.
    fn pull(self, dy: Cot<'_, Self::Output>, v: V, divide: bool) -> Self::Grad;
}

impl<F: Float> ScaleByValue<F> for ScalarShape<F> {
    type Output = F;
    type Grad = F;
    #[inline(always)]
    fn pull(self, dy: Cot<'_, F>, v: F, divide: bool) -> F {
        if divide {
            *dy.get() / v
        } else {
            *dy.get() * v
        }
    }
}

fn scale_in_place<F: Float, M: Dimension, E: Dimension>(
    dy: Cot<'_, Array<F, M>>,
    v: ndarray::ArrayView<'_, F, E>,
    divide: bool,
) -> Array<F, M> {
    let mut g = dy.owned();
    if divide {
        g.zip_mut_with(&v, |g, &v| *g /= v);
    } else {
        g.zip_mut_with(&v, |g, &v| *g *= v);
    }
    g
}

impl<'v, F: Float, D: Dimension + DimMax<E>, E: Dimension>
    ScaleByValue<ndarray::ArrayView<'v, F, E>> for ArrayShape<F, D>
{
    type Output = Array<F, <D as DimMax<E>>::Output>;
    type Grad = Array<F, D>;
    fn pull(
        self,
        dy: Cot<'_, Self::Output>,
        v: ndarray::ArrayView<'v, F, E>,
        divide: bool,
    ) -> Array<F, D> {
        unbroadcast(Cot::Owned(scale_in_place(dy, v, divide)), self.0)
    }
}

impl<F: Float, D: Dimension> ScaleByValue<F> for ArrayShape<F, D>
where
    D: DimMax<Ix0, Output = D>,
{
    type Output = Array<F, D>;
    type Grad = Array<F, D>;
    fn pull(self, dy: Cot<'_, Array<F, D>>, v: F, divide: bool) -> Array<F, D> {
        let mut g = dy.owned();
        if divide {
            g.mapv_inplace(|g| g / v);
        } else {
            g.mapv_inplace(|g| g * v);
        }
        g
    }
}

impl<'v, F: Float, E: Dimension> ScaleByValue<ndarray::ArrayView<'v, F, E>> for ScalarShape<F>
where
    Ix0: DimMax<E, Output = E>,
{
    type Output = Array<F, E>;
    type Grad = F;
    fn pull(self, dy: Cot<'_, Array<F, E>>, v: ndarray::ArrayView<'v, F, E>, divide: bool) -> F {
        let mut acc = F::zero();
        ndarray::Zip::from(dy.get())
            .and(&v)
            .for_each(|&g, &v| acc += if divide { g / v } else { g * v });
        acc
    }
}

/// `a_bar = unbroadcast(y_bar * b)` for `y = a * b`: `a`'s shape, `b`'s value.
#[inline(always)]
pub fn mul_pullback_lhs<'d, SA: ScaleByValue<B>, B>(
    dy: impl IntoCot<'d, SA::Output>,
    a: SA,
    b: B,
) -> SA::Grad
where
    SA::Output: 'd,
{
    a.pull(dy.into_cot(), b, false)
}

/// `b_bar = unbroadcast(y_bar * a)` for `y = a * b`: `a`'s value, `b`'s shape.
#[inline(always)]
pub fn mul_pullback_rhs<'d, A, SB: ScaleByValue<A>>(
    dy: impl IntoCot<'d, SB::Output>,
    a: A,
    b: SB,
) -> SB::Grad
where
    SB::Output: 'd,
{
    b.pull(dy.into_cot(), a, false)
}

/// `a_bar = unbroadcast(y_bar / b)` for `y = a / b`: `a`'s shape, `b`'s value.
#[inline(always)]
pub fn div_pullback_lhs<'d, SA: ScaleByValue<B>, B>(
    dy: impl IntoCot<'d, SA::Output>,
    a: SA,
    b: B,
) -> SA::Grad
where
    SA::Output: 'd,
{
    a.pull(dy.into_cot(), b, true)
}

/// Shapes that make a zero of their value's tangent.
pub trait ZeroOfShape {
    type Tangent;
    fn zero(&self) -> Self::Tangent;
}

impl<F: Float> ZeroOfShape for ScalarShape<F> {
    type Tangent = F;
    #[inline(always)]
    fn zero(&self) -> F {
        F::zero()
    }
}

impl<F: Float, D: Dimension> ZeroOfShape for ArrayShape<F, D> {
    type Tangent = Array<F, D>;
    fn zero(&self) -> Array<F, D> {
        Array::zeros(self.0.clone())
    }
}

impl<F: Float> ZeroOfShape for VecShape<F> {
    type Tangent = Vec<F>;
    fn zero(&self) -> Vec<F> {
        vec![F::zero(); self.0]
    }
}

/// An adjoint that may not have received a contribution, as a value: zero
/// of `shape` if none arrived.
#[inline(always)]
pub fn materialize<S: ZeroOfShape>(adjoint: Option<S::Tangent>, shape: S) -> S::Tangent {
    adjoint.unwrap_or_else(|| shape.zero())
}

/// `NoTangent`, a `#[constant]` parameter's entry in a gradient, is its
/// own shape and its own zero: a `_grad` differentiated again returns it
/// among floats, and its pullback may materialize the tuple.
#[diagnostic::do_not_recommend]
impl ShapeOf for NoTangent {
    type Shape = NoTangent;
    #[inline(always)]
    fn shape_of(&self) -> NoTangent {
        NoTangent
    }
}

impl ZeroOfShape for NoTangent {
    type Tangent = NoTangent;
    #[inline(always)]
    fn zero(&self) -> NoTangent {
        NoTangent
    }
}

/// A tuple's shape is its items' shapes: the result of a function that
/// returns several values.
macro_rules! tuple_shape {
    ($(($($t:ident $i:tt),+))*) => {$(
        // Left out of the types a "no shape" error lists.
        #[diagnostic::do_not_recommend]
        impl<$($t: ShapeOf),+> ShapeOf for ($($t,)+) {
            type Shape = ($($t::Shape,)+);
            #[inline(always)]
            fn shape_of(&self) -> Self::Shape {
                ($(self.$i.shape_of(),)+)
            }
        }
        impl<$($t: ZeroOfShape),+> ZeroOfShape for ($($t,)+) {
            type Tangent = ($($t::Tangent,)+);
            fn zero(&self) -> Self::Tangent {
                ($(self.$i.zero(),)+)
            }
        }
    )*};
}
tuple_shape! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, G 5)
    (A 0, B 1, C 2, D 3, E 4, G 5, H 6)
    (A 0, B 1, C 2, D 3, E 4, G 5, H 6, I 7)
}
