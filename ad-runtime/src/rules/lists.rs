//! A `Vec` the body fills with active values (`hs.push(h.clone())`),
//! reads by index (`hs[t]`, `for h in &hs`) and pops (`hs.pop()`, its last
//! item read as `hs[hs.len() - 1]` first).
//!
//! Its adjoint is a `Vec` of the items' cotangents, as a slice parameter's
//! gradient is. In a `Vec` of arrays, an item no cotangent has reached
//! holds an empty array, which counts as zero (as `unset_tangent` leaves a
//! struct's arrays): the zero adjoint needs only the length. A loop that
//! pushes then saves a length per iteration, where a shape per item would
//! make its tape grow with the square of the iteration count; and `push`'s
//! pullback hands its item a cotangent only if one arrived.

use std::marker::PhantomData;

use ndarray::{Array, ArrayBase, ArrayView, Data, Dimension};

use super::accumulate::{Contribution, IndexScatter};
use super::shapes::{ShapeOf, ZeroOfShape};
use crate::Float;

/// `list.push(item)`, as a value.
#[inline(always)]
pub fn push<T>(mut list: Vec<T>, item: T) -> Vec<T> {
    list.push(item);
    list
}

/// A `Vec` read by index: a float by value, an array as a view.
pub trait Items {
    type Item<'a>
    where
        Self: 'a;
    fn item(&self, index: usize) -> Self::Item<'_>;
}

impl<F: Float> Items for Vec<F> {
    type Item<'a> = F;
    #[inline(always)]
    fn item(&self, index: usize) -> F {
        self[index]
    }
}

impl<F: Float, S: Data<Elem = F>, D: Dimension> Items for Vec<ArrayBase<S, D>> {
    type Item<'a>
        = ArrayView<'a, F, D>
    where
        Self: 'a;
    #[inline(always)]
    fn item(&self, index: usize) -> ArrayView<'_, F, D> {
        self[index].view()
    }
}

/// `list[index]`.
#[inline(always)]
pub fn item<L: Items>(list: &L, index: usize) -> L::Item<'_> {
    list.item(index)
}

/// `Array1::from(list)` of a `Vec` of floats (a copy: the list may be
/// read again by the reverse sweep).
#[inline(always)]
pub fn from_list<F: Float>(list: &[F]) -> ndarray::Array1<F> {
    ndarray::Array1::from(list.to_vec())
}

/// The list's cotangent: the array's, as a `Vec`.
#[inline(always)]
pub fn from_list_pullback<F: Float>(dy: ndarray::Array1<F>) -> Vec<F> {
    dy.to_vec()
}

/// The shape of a `Vec` of arrays: its length, and the items' number of
/// axes (for the empty arrays that stand for zero).
pub struct ListShape<F, D> {
    len: usize,
    ndim: usize,
    elem: PhantomData<(F, D)>,
}

impl<F, D> Clone for ListShape<F, D> {
    fn clone(&self) -> Self {
        ListShape {
            len: self.len,
            ndim: self.ndim,
            elem: PhantomData,
        }
    }
}

impl<F: Float, S: Data<Elem = F>, D: Dimension> ShapeOf for Vec<ArrayBase<S, D>> {
    type Shape = ListShape<F, D>;
    #[inline(always)]
    fn shape_of(&self) -> ListShape<F, D> {
        ListShape {
            len: self.len(),
            ndim: self.first().map_or(D::NDIM.unwrap_or(1), |a| a.ndim()),
            elem: PhantomData,
        }
    }
}

impl<F, D> ShapeOf for ListShape<F, D> {
    type Shape = ListShape<F, D>;
    #[inline(always)]
    fn shape_of(&self) -> ListShape<F, D> {
        self.clone()
    }
}

impl<F: Float, D: Dimension> ZeroOfShape for ListShape<F, D> {
    type Tangent = Vec<Array<F, D>>;
    fn zero(&self) -> Vec<Array<F, D>> {
        (0..self.len)
            .map(|_| Array::zeros(D::zeros(self.ndim)))
            .collect()
    }
}

/// The cotangent of the item read `list[index]`: a float's scatters as an
/// element read's does.
#[inline(always)]
pub fn item_pullback<T>(dy: T, index: usize) -> IndexScatter<usize, T> {
    IndexScatter { index, dy }
}

impl<F: Float, D: Dimension> Contribution<Vec<Array<F, D>>> for IndexScatter<usize, Array<F, D>> {
    #[inline(always)]
    fn add_to(self, acc: &mut Vec<Array<F, D>>) {
        self.dy.add_to(&mut acc[self.index]);
    }
    fn into_first(self, zero: impl FnOnce() -> Vec<Array<F, D>>) -> Vec<Array<F, D>> {
        let mut acc = zero();
        self.add_to(&mut acc);
        acc
    }
}

/// An item's cotangent taken from a list's adjoint by `push`'s pullback:
/// nothing if none arrived.
impl<F: Float, D: Dimension> Contribution<Array<F, D>> for Option<Array<F, D>> {
    #[inline(always)]
    fn add_to(self, acc: &mut Array<F, D>) {
        if let Some(c) = self {
            c.add_to(acc);
        }
    }
    #[inline(always)]
    fn into_first(self, zero: impl FnOnce() -> Array<F, D>) -> Array<F, D> {
        self.unwrap_or_else(zero)
    }
}

/// A list's adjoint, taken apart by `push`'s pullback: the adjoint of the
/// list before the push, and the pushed item's cotangent.
pub trait Popped: Sized {
    type Item;
    fn split_last(self) -> (Self, Self::Item);
}

impl<F: Float> Popped for Vec<F> {
    type Item = F;
    #[inline(always)]
    fn split_last(mut self) -> (Self, F) {
        let last = self.pop().expect("a pushed list has a last item");
        (self, last)
    }
}

impl<F: Float, D: Dimension> Popped for Vec<Array<F, D>> {
    type Item = Option<Array<F, D>>;
    #[inline(always)]
    fn split_last(mut self) -> (Self, Option<Array<F, D>>) {
        let last = self.pop().expect("a pushed list has a last item");
        (self, (!last.is_empty()).then_some(last))
    }
}

/// `list.pop()` once its last item has been read: the list without it.
#[inline(always)]
pub fn popped<T>(mut list: Vec<T>) -> Vec<T> {
    list.pop()
        .expect("`pop` of an active list that has an item");
    list
}

/// A list's adjoint given back its last slot by `pop`'s pullback: zero,
/// to which the read of the popped item adds its cotangent.
pub trait Unpopped {
    fn with_zero_last(self) -> Self;
}

impl<F: Float> Unpopped for Vec<F> {
    #[inline(always)]
    fn with_zero_last(mut self) -> Self {
        self.push(F::zero());
        self
    }
}

impl<F: Float, D: Dimension> Unpopped for Vec<Array<F, D>> {
    /// The empty array that counts as zero, of the items' number of axes.
    #[inline(always)]
    fn with_zero_last(mut self) -> Self {
        let ndim = self.first().map_or(D::NDIM.unwrap_or(1), |a| a.ndim());
        self.push(Array::zeros(D::zeros(ndim)));
        self
    }
}

/// `list_bar` for `list.pop()`: the popped list's adjoint with a zero last
/// slot.
#[inline(always)]
pub fn pop_pullback<L: Unpopped>(dy: L) -> L {
    dy.with_zero_last()
}

/// `(list_bar, item_bar)` for `list.push(item)`.
#[inline(always)]
pub fn push_pullback<L: Popped>(dy: L) -> (L, L::Item) {
    dy.split_last()
}
