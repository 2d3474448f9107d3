//! Arrays joined along an axis: ndarray's `concatenate` (along an existing
//! axis) and `stack` (along a new one), as functions returning a `Result`
//! and as the macros `concatenate![..]` and `stack![..]`, which panic
//! instead. Both are linear: the tangent is the tangents joined (zeros for
//! a constant part), and each part's cotangent is its piece of the
//! result's.

use ndarray::{Array, ArrayView, Axis, Dimension, RemoveAxis, ShapeError};

use super::cotangent::IntoCot;
use super::shapes::ArrayShape;
use crate::Float;

/// `concatenate(axis, &[a, b, ..])`.
#[inline(always)]
pub fn concatenate<F: Float, D: RemoveAxis, const N: usize>(
    axis: Axis,
    parts: [ArrayView<'_, F, D>; N],
) -> Result<Array<F, D>, ShapeError> {
    ndarray::concatenate(axis, &parts)
}

/// `stack(axis, &[a, b, ..])`.
#[inline(always)]
pub fn stack_along<F: Float, D: Dimension, const N: usize>(
    axis: Axis,
    parts: [ArrayView<'_, F, D>; N],
) -> Result<Array<F, D::Larger>, ShapeError>
where
    D::Larger: RemoveAxis,
{
    ndarray::stack(axis, &parts)
}

/// The parts' tangents, zeros where a part is constant.
fn tangents<F: Float, D: Dimension, const N: usize>(
    tangents: [Option<ArrayView<'_, F, D>>; N],
    values: &[ArrayView<'_, F, D>; N],
) -> Vec<Array<F, D>> {
    tangents
        .into_iter()
        .zip(values)
        .map(|(t, v)| match t {
            Some(t) => t.to_owned(),
            None => Array::zeros(v.raw_dim()),
        })
        .collect()
}

fn views_of<F: Float, D: Dimension>(arrays: &[Array<F, D>]) -> Vec<ArrayView<'_, F, D>> {
    arrays.iter().map(|a| a.view()).collect()
}

/// The tangent of `concatenate`.
pub fn concatenate_pushforward<F: Float, D: RemoveAxis, const N: usize>(
    axis: Axis,
    dots: [Option<ArrayView<'_, F, D>>; N],
    parts: [ArrayView<'_, F, D>; N],
) -> Result<Array<F, D>, ShapeError> {
    let owned = tangents(dots, &parts);
    ndarray::concatenate(axis, &views_of(&owned))
}

/// The tangent of `stack`.
pub fn stack_along_pushforward<F: Float, D: Dimension, const N: usize>(
    axis: Axis,
    dots: [Option<ArrayView<'_, F, D>>; N],
    parts: [ArrayView<'_, F, D>; N],
) -> Result<Array<F, D::Larger>, ShapeError>
where
    D::Larger: RemoveAxis,
{
    let owned = tangents(dots, &parts);
    ndarray::stack(axis, &views_of(&owned))
}

/// Part `position`'s cotangent under `concatenate`: its run of the
/// result's cotangent along `axis`, which the parts' lengths place.
pub fn concatenate_pullback<'d, F: Float, D: RemoveAxis + 'd, const N: usize>(
    dy: impl IntoCot<'d, Array<F, D>>,
    axis: Axis,
    shapes: [ArrayShape<F, D>; N],
    position: usize,
) -> Array<F, D> {
    let lengths = shapes.map(|s| s.0[axis.index()]);
    let start: usize = lengths[..position].iter().sum();
    let run = start..start + lengths[position];
    dy.into_cot().get().slice_axis(axis, run.into()).to_owned()
}

/// Part `position`'s cotangent under `stack`: the result's cotangent at
/// `position` along the new axis.
pub fn stack_along_pullback<'d, F: Float, D: RemoveAxis + 'd>(
    dy: impl IntoCot<'d, Array<F, D>>,
    axis: Axis,
    position: usize,
) -> Array<F, D::Smaller> {
    dy.into_cot().get().index_axis(axis, position).to_owned()
}
