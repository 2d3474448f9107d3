//! Views and copies: `t()`, `reversed_axes()`, `diag()`, `row`, `column`, `slice`,
//! `view`, `to_owned`, `clone`, `insert_axis`, `into_shape_with_order`, and
//! element reads `x[i]`. All are linear: the pushforward applies the same
//! operation to the tangent, and the pullback puts the cotangent back where
//! the read came from.

use ndarray::{
    Array, ArrayView, ArrayView1, ArrayView2, Axis, Dimension, IntoDimension, RemoveAxis,
    ShapeError, SliceArg,
};

use super::accumulate::{AxisScatter, DiagScatter, IndexScatter, SliceScatter};
use crate::{Float, Operand};

#[inline(always)]
pub fn t<F: Float, D: Dimension>(x: ArrayView<'_, F, D>) -> ArrayView<'_, F, D> {
    x.reversed_axes()
}

/// The pullback of `t()` and of `reversed_axes()`: transpose back (no copy).
#[inline(always)]
pub fn t_pullback<F: Float, D: Dimension>(dy: Array<F, D>) -> Array<F, D> {
    dy.reversed_axes()
}

#[inline(always)]
pub fn reversed_axes<F: Float, D: Dimension>(x: ArrayView<'_, F, D>) -> ArrayView<'_, F, D> {
    x.reversed_axes()
}

/// A matrix's diagonal, as a view.
#[inline(always)]
pub fn diag<F: Float>(x: ArrayView2<'_, F>) -> ArrayView1<'_, F> {
    x.into_diag()
}

/// The cotangent of `diag()`: `dy` on the diagonal.
#[inline(always)]
pub fn diag_pullback<F: Float>(dy: Array<F, ndarray::Ix1>) -> DiagScatter<F> {
    DiagScatter { dy }
}

#[inline(always)]
pub fn row<F: Float>(x: ArrayView2<'_, F>, i: usize) -> ArrayView1<'_, F> {
    x.index_axis_move(Axis(0), i)
}

#[inline(always)]
pub fn row_pullback<F: Float>(
    dy: Array<F, ndarray::Ix1>,
    i: usize,
) -> AxisScatter<F, ndarray::Ix1> {
    AxisScatter {
        axis: Axis(0),
        index: i,
        dy,
    }
}

#[inline(always)]
pub fn column<F: Float>(x: ArrayView2<'_, F>, j: usize) -> ArrayView1<'_, F> {
    x.index_axis_move(Axis(1), j)
}

#[inline(always)]
pub fn column_pullback<F: Float>(
    dy: Array<F, ndarray::Ix1>,
    j: usize,
) -> AxisScatter<F, ndarray::Ix1> {
    AxisScatter {
        axis: Axis(1),
        index: j,
        dy,
    }
}

#[inline(always)]
pub fn slice<F: Float, D: Dimension, I: SliceArg<D>>(
    x: ArrayView<'_, F, D>,
    info: I,
) -> ArrayView<'_, F, I::OutDim> {
    x.slice_move(info)
}

#[inline(always)]
pub fn slice_pullback<F: Float, E: Dimension, I>(
    dy: Array<F, E>,
    info: I,
) -> SliceScatter<I, F, E> {
    SliceScatter { info, dy }
}

/// `x.view()`, `x.to_owned()`, `x.clone()`: the pullback is the identity.
#[inline(always)]
pub fn to_owned<A: Operand>(x: A) -> A::Owned {
    x.to_owned()
}

#[inline(always)]
pub fn view_of<F: Float, D: Dimension>(x: ArrayView<'_, F, D>) -> ArrayView<'_, F, D> {
    x
}

#[inline(always)]
pub fn insert_axis<F: Float, D: Dimension>(
    x: ArrayView<'_, F, D>,
    axis: Axis,
) -> ArrayView<'_, F, D::Larger> {
    x.insert_axis(axis)
}

#[inline(always)]
pub fn insert_axis_pullback<F: Float, D: RemoveAxis>(
    dy: Array<F, D>,
    axis: Axis,
) -> Array<F, D::Smaller> {
    dy.index_axis_move(axis, 0)
}

/// `x.into_shape_with_order(shape)` (row-major), a `Result` as ndarray's.
#[inline(always)]
pub fn into_shape_with_order<F: Float, D: Dimension, E: IntoDimension>(
    x: ArrayView<'_, F, D>,
    shape: E,
) -> Result<ArrayView<'_, F, E::Dim>, ShapeError> {
    x.into_shape_with_order(shape)
}

pub fn into_shape_with_order_pullback<F: Float, D: Dimension, E: Dimension>(
    dy: Array<F, E>,
    x: ArrayView<'_, F, D>,
) -> Array<F, D> {
    let flat: Vec<F> = dy.iter().copied().collect();
    Array::from_shape_vec(x.raw_dim(), flat)
        .expect("the cotangent has as many elements as the argument")
}

/// The cotangent of the element read `x[index]`.
#[inline(always)]
pub fn index_pullback<I, F: Float>(dy: F, index: I) -> IndexScatter<I, F> {
    IndexScatter { index, dy }
}

/// `Array::from_elem(shape, x)`: every element is `x`.
#[inline(always)]
pub fn from_elem<F: Float, Sh: ndarray::ShapeBuilder>(shape: Sh, x: F) -> Array<F, Sh::Dim> {
    Array::from_elem(shape, x)
}

/// `array![a, b, c]`: a 1-D array of scalars.
#[inline(always)]
pub fn stack<F: Float, const N: usize>(items: [F; N]) -> ndarray::Array1<F> {
    ndarray::Array1::from(items.to_vec())
}

/// The tangent of `array![a, b, c]`: the items' tangents, zero for a
/// constant item. (The values only fix the element type.)
#[inline(always)]
pub fn stack_pushforward<F: Float, const N: usize>(
    tangents: [Option<F>; N],
    _: [F; N],
) -> ndarray::Array1<F> {
    ndarray::Array1::from_iter(tangents.into_iter().map(|t| t.unwrap_or_else(F::zero)))
}

/// `item_bar = y_bar[position]` for `array![.., item, ..]`.
#[inline(always)]
pub fn stack_pullback<'d, F: Float>(
    dy: impl crate::rules::IntoCot<'d, ndarray::Array1<F>>,
    position: usize,
) -> F {
    dy.into_cot().get()[position]
}

/// `x_bar = sum(y_bar)`.
#[inline(always)]
pub fn from_elem_pullback<F: Float, D: Dimension>(dy: Array<F, D>) -> F {
    dy.sum()
}

/// `x_bar = y_bar` with the written element zeroed, for `y[index] = v`
/// (into an array, or a `Vec` of floats).
#[inline(always)]
pub fn index_write_pullback_array<T: WrittenElement<I>, I>(mut dy: T, index: I) -> T {
    *dy.element_mut(index) = num_traits::Zero::zero();
    dy
}

/// `v_bar = y_bar[index]`, for `y[index] = v` and `y[index] += v`: `y_bar`
/// by value or by reference.
#[inline(always)]
pub fn index_write_pullback_value<T: ReadElement<I>, I>(dy: T, index: I) -> T::Elem {
    dy.element(index)
}

/// The adjoint of an array or `Vec` of floats written element by element,
/// read by value or by reference.
pub trait ReadElement<I> {
    type Elem: Float;
    fn element(&self, index: I) -> Self::Elem;
}

/// Such an adjoint, owned, whose written element is cleared.
pub trait WrittenElement<I>: ReadElement<I> {
    fn element_mut(&mut self, index: I) -> &mut Self::Elem;
}

impl<F: Float, D: Dimension, I: ndarray::NdIndex<D>> ReadElement<I> for Array<F, D> {
    type Elem = F;
    #[inline(always)]
    fn element(&self, index: I) -> F {
        self[index]
    }
}

impl<F: Float, D: Dimension, I: ndarray::NdIndex<D>> WrittenElement<I> for Array<F, D> {
    #[inline(always)]
    fn element_mut(&mut self, index: I) -> &mut F {
        &mut self[index]
    }
}

impl<F: Float> ReadElement<usize> for Vec<F> {
    type Elem = F;
    #[inline(always)]
    fn element(&self, index: usize) -> F {
        self[index]
    }
}

impl<F: Float> WrittenElement<usize> for Vec<F> {
    #[inline(always)]
    fn element_mut(&mut self, index: usize) -> &mut F {
        &mut self[index]
    }
}

impl<I, T: ReadElement<I>> ReadElement<I> for &T {
    type Elem = T::Elem;
    #[inline(always)]
    fn element(&self, index: I) -> T::Elem {
        (**self).element(index)
    }
}

/// The index of an array's `k`-th element in logical order, from its
/// `dim()`: how a loop over the elements of a local array, whose number of
/// axes the macro cannot see, reads them (`x[unravel(x.dim(), k)]`).
pub trait Unravel: Copy {
    fn unravel(self, k: usize) -> Self;
}

impl Unravel for usize {
    #[inline(always)]
    fn unravel(self, k: usize) -> usize {
        k
    }
}

impl Unravel for (usize, usize) {
    #[inline(always)]
    fn unravel(self, k: usize) -> (usize, usize) {
        (k / self.1, k % self.1)
    }
}

impl Unravel for (usize, usize, usize) {
    #[inline(always)]
    fn unravel(self, k: usize) -> (usize, usize, usize) {
        (k / (self.1 * self.2), (k / self.2) % self.1, k % self.2)
    }
}

#[inline(always)]
pub fn unravel<P: Unravel>(dim: P, k: usize) -> P {
    dim.unravel(k)
}

/// What a loop over the elements of a local reads its indices from: an
/// array's `dim()`, or a `Vec`'s or slice's length (an item of a bag,
/// `xs: &[Vec<f64>]`, iterated).
pub trait Dims {
    type Pattern: Unravel;
    fn dims(&self) -> Self::Pattern;
}

impl<S: ndarray::RawData, D: Dimension> Dims for ndarray::ArrayBase<S, D>
where
    D::Pattern: Unravel,
{
    type Pattern = D::Pattern;
    #[inline(always)]
    fn dims(&self) -> D::Pattern {
        self.dim()
    }
}

impl<T> Dims for [T] {
    type Pattern = usize;
    #[inline(always)]
    fn dims(&self) -> usize {
        self.len()
    }
}

impl<T> Dims for Vec<T> {
    type Pattern = usize;
    #[inline(always)]
    fn dims(&self) -> usize {
        self.len()
    }
}

impl<T: Dims + ?Sized> Dims for &T {
    type Pattern = T::Pattern;
    #[inline(always)]
    fn dims(&self) -> T::Pattern {
        (**self).dims()
    }
}

/// `x.dim()` of an array, `x.len()` of a `Vec` or slice.
#[inline(always)]
pub fn dims<T: Dims + ?Sized>(x: &T) -> T::Pattern {
    x.dims()
}
