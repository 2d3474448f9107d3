//! The value a split `Option` local holds while it is `None`: no read sees
//! it, as every read tests the local's flag first.

use ndarray::{Array, Dimension};

use crate::Float;

/// A value of the type, made without an input.
pub trait Placeholder {
    fn placeholder() -> Self;
}

impl<F: Float> Placeholder for F {
    fn placeholder() -> Self {
        F::zero()
    }
}

/// An empty array (every axis of length 0), so nothing is allocated.
impl<A: Clone + num_traits::Zero, D: Dimension> Placeholder for Array<A, D> {
    fn placeholder() -> Self {
        Array::from_elem(D::zeros(D::NDIM.unwrap_or(1)), A::zero())
    }
}

impl<T> Placeholder for Vec<T> {
    fn placeholder() -> Self {
        Vec::new()
    }
}

impl<T: Placeholder, const N: usize> Placeholder for [T; N] {
    fn placeholder() -> Self {
        std::array::from_fn(|_| T::placeholder())
    }
}

/// `T`'s placeholder.
#[inline(always)]
pub fn placeholder<T: Placeholder>() -> T {
    T::placeholder()
}
