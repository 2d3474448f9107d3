//! Reductions: `sum`, `mean`, `sum_axis`, `mean_axis`. Each is linear, so
//! its pushforward is the same reduction of the tangent.
//!
//! ```text
//! y = sum(x)          x_bar = y_bar broadcast to x's shape
//! y = mean(x)         x_bar = y_bar / n broadcast
//! y = sum_axis(x, k)  x_bar = y_bar with axis k re-inserted, broadcast
//! ```

use ndarray::{Array, ArrayView, Axis, Dimension, RemoveAxis};

use crate::Float;

#[inline]
pub fn sum<F: Float, D: Dimension>(x: ArrayView<'_, F, D>) -> F {
    x.sum()
}

#[inline]
pub fn sum_pullback<F: Float, D: Dimension>(dy: F, x: ArrayView<'_, F, D>) -> Array<F, D> {
    Array::from_elem(x.raw_dim(), dy)
}

/// `x.mean()`: `None` for an empty array, as ndarray's.
#[inline]
pub fn mean<F: Float, D: Dimension>(x: ArrayView<'_, F, D>) -> Option<F> {
    x.mean()
}

#[inline]
pub fn mean_pullback<F: Float, D: Dimension>(dy: F, x: ArrayView<'_, F, D>) -> Array<F, D> {
    Array::from_elem(x.raw_dim(), dy / F::of(x.len() as f64))
}

#[inline]
pub fn sum_axis<F: Float, D: RemoveAxis>(
    x: ArrayView<'_, F, D>,
    axis: Axis,
) -> Array<F, D::Smaller> {
    x.sum_axis(axis)
}

pub fn sum_axis_pullback<F: Float, D: RemoveAxis>(
    dy: Array<F, D::Smaller>,
    x: ArrayView<'_, F, D>,
    axis: Axis,
) -> Array<F, D> {
    spread(dy, x, axis, F::one())
}

/// `dy * scale` repeated along `axis` to the shape of `x`.
fn spread<F: Float, D: RemoveAxis>(
    dy: Array<F, D::Smaller>,
    x: ArrayView<'_, F, D>,
    axis: Axis,
    scale: F,
) -> Array<F, D> {
    let mut out = Array::zeros(x.raw_dim());
    for mut lane in out.axis_iter_mut(axis) {
        lane.zip_mut_with(&dy, |o, &d| *o = d * scale);
    }
    out
}

/// `x.mean_axis(axis)`: `None` when the axis is empty, as ndarray's.
#[inline]
pub fn mean_axis<F: Float, D: RemoveAxis>(
    x: ArrayView<'_, F, D>,
    axis: Axis,
) -> Option<Array<F, D::Smaller>> {
    x.mean_axis(axis)
}

pub fn mean_axis_pullback<F: Float, D: RemoveAxis>(
    dy: Array<F, D::Smaller>,
    x: ArrayView<'_, F, D>,
    axis: Axis,
) -> Array<F, D> {
    let n = F::of(x.len_of(axis) as f64);
    spread(dy, x, axis, n.recip())
}
