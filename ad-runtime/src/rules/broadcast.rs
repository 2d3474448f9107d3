use ndarray::{Array, ArrayView, Axis, DimMax, Dimension};

use super::cotangent::Cot;
use crate::Float;

/// Sums a cotangent of a broadcast result back to the shape `target` of the
/// argument that was broadcast (leading axes and axes of length 1).
///
/// When the shapes already agree this only relabels the dimension type (and
/// copies a borrowed cotangent); otherwise it only reads the cotangent.
pub fn unbroadcast<F: Float, M: Dimension, D: Dimension>(
    dy: Cot<'_, Array<F, M>>,
    target: D,
) -> Array<F, D> {
    if dy.get().shape() == target.slice() {
        return dy
            .owned()
            .into_dimensionality::<D>()
            .expect("unbroadcast: same shape, same rank");
    }
    let dy = dy.get();
    if let Some(summed) = sum_leading_axes(dy, &target) {
        return summed;
    }
    let mut g = dy.view().into_dyn().to_owned();
    while g.ndim() > target.ndim() {
        g = g.sum_axis(Axis(0));
    }
    for (i, &n) in target.slice().iter().enumerate() {
        if n == 1 && g.shape()[i] != 1 {
            g = g.sum_axis(Axis(i)).insert_axis(Axis(i));
        }
    }
    g.into_dimensionality::<D>()
        .expect("unbroadcast: cotangent shape does not reduce to the argument's")
}

/// The common case, `x + b` with `b` matching the trailing axes of `x` (a
/// bias, or a scalar): sums the contiguous blocks of `dy` without going
/// through dynamic dimensions.
fn sum_leading_axes<F: Float, M: Dimension, D: Dimension>(
    dy: &Array<F, M>,
    target: &D,
) -> Option<Array<F, D>> {
    let lead = dy.ndim().checked_sub(target.ndim())?;
    if dy.shape()[lead..] != *target.slice() {
        return None;
    }
    let data = dy.as_slice()?;
    let mut out = Array::zeros(target.clone());
    let acc = out.as_slice_mut()?;
    if acc.is_empty() {
        return Some(out);
    }
    for block in data.chunks_exact(acc.len()) {
        for (a, &d) in acc.iter_mut().zip(block) {
            *a += d;
        }
    }
    Some(out)
}

/// The shape `a op b` broadcasts to.
pub(crate) fn co_dim<D, E>(a: &D, b: &E) -> <D as DimMax<E>>::Output
where
    D: Dimension + DimMax<E>,
    E: Dimension,
{
    let (a, b) = (a.slice(), b.slice());
    let n = a.len().max(b.len());
    let mut out = <D as DimMax<E>>::Output::zeros(n);
    for i in 0..n {
        let x = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let y = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if x == 1 { y } else { x };
    }
    out
}

/// `x` repeated to the shape `dim`, owned.
pub(crate) fn broadcast_owned<F: Float, D: Dimension, M: Dimension>(
    x: ArrayView<'_, F, D>,
    dim: M,
) -> Array<F, M> {
    x.broadcast(dim)
        .expect("operands of an arithmetic operation must broadcast")
        .to_owned()
}
