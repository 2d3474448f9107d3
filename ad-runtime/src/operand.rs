use ndarray::{aview0, Array, ArrayBase, ArrayView, ArrayView1, Data, Dimension, Ix0};

use crate::Float;

/// A value the rules can read: `f32`, `f64`, or any ndarray array or view,
/// behind any number of references.
///
/// Generated code passes every operand through [`view`], so one rule serves
/// `&Array2<f64>`, `Array2<f64>` and `ArrayView2<f64>` alike.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a value `ad` can differentiate",
    label = "expected `f32`, `f64`, or an ndarray array or view of them",
    note = "wrap values that need no derivative in `ad::stop_gradient(..)`, or mark the parameter `#[constant]`"
)]
pub trait Lift {
    /// The canonical form the rules are written for: the scalar itself or an
    /// `ArrayView`.
    type View<'a>: Operand
    where
        Self: 'a;
    fn view(&self) -> Self::View<'_>;
}

/// The canonical form of `x`: a scalar or an `ArrayView`.
#[inline(always)]
pub fn view<T: Lift + ?Sized>(x: &T) -> T::View<'_> {
    x.view()
}

impl Lift for f32 {
    type View<'a> = f32;
    #[inline(always)]
    fn view(&self) -> f32 {
        *self
    }
}

impl Lift for f64 {
    type View<'a> = f64;
    #[inline(always)]
    fn view(&self) -> f64 {
        *self
    }
}

impl<F: Float, S: Data<Elem = F>, D: Dimension> Lift for ArrayBase<S, D> {
    type View<'a>
        = ArrayView<'a, F, D>
    where
        Self: 'a;
    #[inline(always)]
    fn view(&self) -> ArrayView<'_, F, D> {
        ArrayBase::view(self)
    }
}

/// A slice or `Vec` of floats reads as a 1-D array: an item of a bag
/// (`xs: &[Vec<f64>]`) takes part in the array rules as a view.
impl<F: Float> Lift for [F] {
    type View<'a> = ArrayView1<'a, F>;
    #[inline(always)]
    fn view(&self) -> ArrayView1<'_, F> {
        ArrayView1::from(self)
    }
}

impl<F: Float> Lift for Vec<F> {
    type View<'a> = ArrayView1<'a, F>;
    #[inline(always)]
    fn view(&self) -> ArrayView1<'_, F> {
        ArrayView1::from(self.as_slice())
    }
}

impl<T: Lift + ?Sized> Lift for &T {
    type View<'a>
        = T::View<'a>
    where
        Self: 'a;
    #[inline(always)]
    fn view(&self) -> T::View<'_> {
        (**self).view()
    }
}

/// The canonical operands: a scalar `F` or an `ArrayView<F, D>`.
///
/// Scalars take part in array rules as 0-dimensional views, so every rule
/// family is written once for arrays and once, unboxed, for scalars.
pub trait Operand: Clone {
    type Elem: Float;
    type Dim: Dimension;
    /// The owned value of the same shape, which is also the tangent type:
    /// `F` for a scalar, `Array<F, D>` for a view.
    type Owned: Clone;
    fn as_array(&self) -> ArrayView<'_, Self::Elem, Self::Dim>;
    fn from_array(a: Array<Self::Elem, Self::Dim>) -> Self::Owned;
    fn to_owned(self) -> Self::Owned;
}

impl<F: Float> Operand for F {
    type Elem = F;
    type Dim = Ix0;
    type Owned = F;
    #[inline(always)]
    fn as_array(&self) -> ArrayView<'_, F, Ix0> {
        aview0(self)
    }
    #[inline(always)]
    fn from_array(a: Array<F, Ix0>) -> F {
        a.into_scalar()
    }
    #[inline(always)]
    fn to_owned(self) -> F {
        self
    }
}

impl<F: Float, D: Dimension> Operand for ArrayView<'_, F, D> {
    type Elem = F;
    type Dim = D;
    type Owned = Array<F, D>;
    #[inline(always)]
    fn as_array(&self) -> ArrayView<'_, F, D> {
        self.view()
    }
    #[inline(always)]
    fn from_array(a: Array<F, D>) -> Array<F, D> {
        a
    }
    #[inline(always)]
    fn to_owned(self) -> Array<F, D> {
        ArrayBase::to_owned(&self)
    }
}
