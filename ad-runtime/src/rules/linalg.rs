//! `a.dot(b)` for every pairing of 1-D and 2-D arrays.
//!
//! ```text
//! y = u . v     (1,1)   u_bar = y_bar v         v_bar = y_bar u
//! y = A v       (2,1)   A_bar = y_bar (x) v     v_bar = A^T y_bar
//! y = u A       (1,2)   u_bar = A y_bar         A_bar = u (x) y_bar
//! Y = A B       (2,2)   A_bar = Y_bar B^T       B_bar = A^T Y_bar
//! ```
//! Each side's pullback is its own function, so a `#[constant]` side costs
//! no matrix product.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Axis};

use super::cotangent::IntoCot;
use crate::{Float, Operand};

#[diagnostic::on_unimplemented(
    message = "no derivative rule for `dot` between `{Self}` and `{Rhs}`",
    label = "`dot` is differentiated between 1-D and 2-D arrays of one float type"
)]
pub trait Dot<Rhs: Operand<Elem = Self::Elem>>: Operand {
    /// The product, which is also its own tangent type.
    type Output: Clone;
    fn product(self, b: Rhs) -> Self::Output;
    fn pull_lhs(dy: &Self::Output, a: Self, b: Rhs) -> Self::Owned;
    fn pull_rhs(dy: &Self::Output, a: Self, b: Rhs) -> Rhs::Owned;
}

/// `u vᵀ`, row-major: ndarray returns the product of a column and a row
/// column-major, so this forms `v uᵀ` and reverses its axes (free).
fn outer<F: Float>(u: ArrayView1<'_, F>, v: ArrayView1<'_, F>) -> Array2<F> {
    let v = v.insert_axis(Axis(1));
    let u = u.insert_axis(Axis(0));
    v.dot(&u).reversed_axes()
}

impl<F: Float> Dot<ArrayView1<'_, F>> for ArrayView1<'_, F> {
    type Output = F;
    fn product(self, b: ArrayView1<'_, F>) -> F {
        ArrayView1::dot(&self, &b)
    }
    fn pull_lhs(dy: &F, _: Self, b: ArrayView1<'_, F>) -> Array1<F> {
        b.mapv(|v| v * *dy)
    }
    fn pull_rhs(dy: &F, a: Self, _: ArrayView1<'_, F>) -> Array1<F> {
        a.mapv(|v| v * *dy)
    }
}

impl<F: Float> Dot<ArrayView1<'_, F>> for ArrayView2<'_, F> {
    type Output = Array1<F>;
    fn product(self, b: ArrayView1<'_, F>) -> Array1<F> {
        ArrayView2::dot(&self, &b)
    }
    fn pull_lhs(dy: &Array1<F>, _: Self, b: ArrayView1<'_, F>) -> Array2<F> {
        outer(dy.view(), b)
    }
    fn pull_rhs(dy: &Array1<F>, a: Self, _: ArrayView1<'_, F>) -> Array1<F> {
        a.t().dot(dy)
    }
}

impl<F: Float> Dot<ArrayView2<'_, F>> for ArrayView1<'_, F> {
    type Output = Array1<F>;
    fn product(self, b: ArrayView2<'_, F>) -> Array1<F> {
        ArrayView1::dot(&self, &b)
    }
    fn pull_lhs(dy: &Array1<F>, _: Self, b: ArrayView2<'_, F>) -> Array1<F> {
        b.dot(dy)
    }
    fn pull_rhs(dy: &Array1<F>, a: Self, _: ArrayView2<'_, F>) -> Array2<F> {
        outer(a, dy.view())
    }
}

impl<F: Float> Dot<ArrayView2<'_, F>> for ArrayView2<'_, F> {
    type Output = Array2<F>;
    fn product(self, b: ArrayView2<'_, F>) -> Array2<F> {
        ArrayView2::dot(&self, &b)
    }
    fn pull_lhs(dy: &Array2<F>, _: Self, b: ArrayView2<'_, F>) -> Array2<F> {
        dy.dot(&b.t())
    }
    fn pull_rhs(dy: &Array2<F>, a: Self, _: ArrayView2<'_, F>) -> Array2<F> {
        a.t().dot(dy)
    }
}

/// `a.dot(b)`; also the pushforward of each side (`da.dot(b)`, `a.dot(db)`),
/// as the product is linear in each.
#[inline(always)]
pub fn dot<A: Dot<B>, B: Operand<Elem = A::Elem>>(a: A, b: B) -> A::Output {
    a.product(b)
}

#[inline(always)]
pub fn dot_pullback_lhs<'d, A: Dot<B>, B: Operand<Elem = A::Elem>>(
    dy: impl IntoCot<'d, A::Output>,
    a: A,
    b: B,
) -> A::Owned
where
    A::Output: 'd,
{
    A::pull_lhs(dy.into_cot().get(), a, b)
}

#[inline(always)]
pub fn dot_pullback_rhs<'d, A: Dot<B>, B: Operand<Elem = A::Elem>>(
    dy: impl IntoCot<'d, A::Output>,
    a: A,
    b: B,
) -> B::Owned
where
    A::Output: 'd,
{
    A::pull_rhs(dy.into_cot().get(), a, b)
}
