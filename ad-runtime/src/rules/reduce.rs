//! Reductions: `sum`, `mean`, `sum_axis`, `mean_axis`. Each is linear, so
//! its pushforward is the same reduction of the tangent.
//!
//! ```text
//! y = sum(x)          x_bar = y_bar broadcast to x's shape
//! y = mean(x)         x_bar = y_bar / n broadcast
//! y = sum_axis(x, k)  x_bar = y_bar with axis k re-inserted, broadcast
//! ```

use ndarray::{Array, ArrayView, Axis, Dimension, Ix1, RemoveAxis};

use super::accumulate::Contribution;
use super::shapes::ArrayShape;
use crate::Float;

/// The cotangent of `sum` or `mean`: one value in every element. Added to an
/// adjoint in place; built as an array only when it is the first
/// contribution.
pub struct Fill<F, D> {
    value: F,
    dim: D,
}

impl<F: Float, D: Dimension> Contribution<Array<F, D>> for Fill<F, D> {
    #[inline]
    fn add_to(self, acc: &mut Array<F, D>) {
        acc.mapv_inplace(|a| a + self.value);
    }
    #[inline]
    fn into_first(self, _: impl FnOnce() -> Array<F, D>) -> Array<F, D> {
        Array::from_elem(self.dim, self.value)
    }
}

/// A bag item's (`Vec<F>`, summed as a 1-D array) is added element by
/// element.
impl<F: Float> Contribution<Vec<F>> for Fill<F, Ix1> {
    #[inline]
    fn add_to(self, acc: &mut Vec<F>) {
        for a in acc {
            *a += self.value;
        }
    }
    #[inline]
    fn into_first(self, _: impl FnOnce() -> Vec<F>) -> Vec<F> {
        vec![self.value; self.dim.size()]
    }
}

/// The cotangent of `sum_axis` or `mean_axis`: `dy * scale` repeated along
/// `axis`. Added lane by lane in place; built as an array only when it is
/// the first contribution.
pub struct Spread<F, D: Dimension> {
    dy: Array<F, D::Smaller>,
    dim: D,
    axis: Axis,
    scale: F,
}

impl<F: Float, D: RemoveAxis> Contribution<Array<F, D>> for Spread<F, D> {
    #[inline]
    fn add_to(self, acc: &mut Array<F, D>) {
        let (dy, scale) = (&self.dy, self.scale);
        for mut lane in acc.axis_iter_mut(self.axis) {
            lane.zip_mut_with(dy, |o, &d| *o += d * scale);
        }
    }
    #[inline]
    fn into_first(self, _: impl FnOnce() -> Array<F, D>) -> Array<F, D> {
        let mut out = Array::zeros(self.dim.clone());
        self.add_to(&mut out);
        out
    }
}

#[inline]
pub fn sum<F: Float, D: Dimension>(x: ArrayView<'_, F, D>) -> F {
    x.sum()
}

#[inline]
pub fn sum_pullback<F: Float, D: Dimension>(dy: F, x: impl Into<ArrayShape<F, D>>) -> Fill<F, D> {
    let x = x.into();
    Fill {
        value: dy,
        dim: x.0,
    }
}

/// `x.mean()`: `None` for an empty array, as ndarray's.
#[inline]
pub fn mean<F: Float, D: Dimension>(x: ArrayView<'_, F, D>) -> Option<F> {
    x.mean()
}

#[inline]
pub fn mean_pullback<F: Float, D: Dimension>(dy: F, x: impl Into<ArrayShape<F, D>>) -> Fill<F, D> {
    let x = x.into();
    Fill {
        value: dy / F::of(x.0.size() as f64),
        dim: x.0,
    }
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
    x: ArrayShape<F, D>,
    axis: Axis,
) -> Spread<F, D> {
    spread(dy, x, axis, F::one())
}

/// `dy * scale` repeated along `axis` to the shape of `x`.
fn spread<F: Float, D: RemoveAxis>(
    dy: Array<F, D::Smaller>,
    x: ArrayShape<F, D>,
    axis: Axis,
    scale: F,
) -> Spread<F, D> {
    Spread {
        dy,
        dim: x.0,
        axis,
        scale,
    }
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
    x: ArrayShape<F, D>,
    axis: Axis,
) -> Spread<F, D> {
    let n = F::of(x.0[axis.index()] as f64);
    spread(dy, x, axis, n.recip())
}

/// `n - ddof` in `ddof`'s type: the divisor of `var(ddof)` and
/// `var_axis(axis, ddof)`, which the macro writes out as a mean of squared
/// deviations (`ad-macros/src/compiler/lower/statistics.rs`).
#[inline(always)]
pub fn count_less<F: Float>(n: usize, ddof: F) -> F {
    F::of(n as f64) - ddof
}
