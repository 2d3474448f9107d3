//! `y.slice_mut(info).assign(&v)`, and `row_mut(i)` / `column_mut(j)`,
//! which are slices too: `y` with a part replaced by `v`. The write is
//! linear in `(y, v)`: the pushforward writes the tangent of `v` into the
//! tangent of `y`; the pullback hands `v` the cotangent's part and `y` the
//! cotangent with that part cleared (the old values there are gone).
//!
//! ndarray's `assign` broadcasts `v`; these rules do not (the pullback
//! would have to sum over the broadcast axes), and say so at run time.

use ndarray::{Array, ArrayView, Dimension, SliceArg};

use super::cotangent::IntoCot;
use crate::Float;

/// `y` with `y.slice(info)` replaced by `v`, of the slice's shape.
#[inline(always)]
pub fn slice_write<F: Float, D: Dimension, I: SliceArg<D>>(
    mut y: Array<F, D>,
    info: I,
    v: ArrayView<'_, F, I::OutDim>,
) -> Array<F, D> {
    let mut part = y.slice_mut(info);
    assert_eq!(
        part.shape(),
        v.shape(),
        "`assign` into a part of an array of active values (`slice_mut`, `row_mut`, `column_mut`) takes a value of the part's shape: broadcast the value first"
    );
    part.assign(&v);
    y
}

/// `y` with `y.slice(info)` set to zero: the tangent of a write of a
/// constant, and the cotangent `y` gets from a write.
#[inline(always)]
pub fn slice_cleared<F: Float, D: Dimension, I: SliceArg<D>>(
    mut y: Array<F, D>,
    info: I,
) -> Array<F, D> {
    y.slice_mut(info).fill(F::zero());
    y
}

/// `v_bar = y_bar.slice(info)`, `y_bar` by value or by reference.
#[inline(always)]
pub fn slice_write_pullback_value<'d, F: Float + 'd, D: Dimension + 'd, I: SliceArg<D>>(
    dy: impl IntoCot<'d, Array<F, D>>,
    info: I,
) -> Array<F, I::OutDim> {
    dy.into_cot().get().slice(info).to_owned()
}

#[cfg(test)]
mod tests {
    use ndarray::{array, s};

    use super::*;

    #[test]
    fn a_write_replaces_the_part_and_its_pullback_splits_the_cotangent() {
        let y = slice_write(
            array![1.0, 2.0, 3.0, 4.0],
            s![1..3],
            array![7.0, 8.0].view(),
        );
        assert_eq!(y, array![1.0, 7.0, 8.0, 4.0]);
        let dy = array![0.1, 0.2, 0.3, 0.4];
        assert_eq!(slice_write_pullback_value(&dy, s![1..3]), array![0.2, 0.3]);
        assert_eq!(slice_cleared(dy, s![1..3]), array![0.1, 0.0, 0.0, 0.4]);
    }

    #[test]
    #[should_panic(expected = "of the part's shape")]
    fn a_broadcast_write_is_refused() {
        slice_write(array![1.0, 2.0, 3.0], s![..], array![7.0].view());
    }
}
