//! `Option<T>` as a differentiable value: an optional part of a model (a
//! bias a layer may not have). Its tangent is `Option<T::Tangent>`, `Some`
//! where the value is: a tangent's `None` stands for zero, so adding a
//! `Some` to it takes the `Some`.

use crate::check::Flat;
use crate::{Differentiable, Parameter, TangentSpace};

impl<T: Differentiable> Differentiable for Option<T> {
    type Tangent = Option<T::Tangent>;
    fn zero_tangent(&self) -> Option<T::Tangent> {
        self.as_ref().map(Differentiable::zero_tangent)
    }
    fn unset_tangent(&self) -> Option<T::Tangent> {
        self.as_ref().map(Differentiable::unset_tangent)
    }
    fn complete_tangent(&self, tangent: &mut Option<T::Tangent>) {
        match (self, tangent) {
            (Some(x), Some(t)) => x.complete_tangent(t),
            (Some(x), t @ None) => *t = Some(x.zero_tangent()),
            (None, _) => {}
        }
    }
}

impl<T: TangentSpace> TangentSpace for Option<T> {
    fn zero_like(&self) -> Self {
        self.as_ref().map(TangentSpace::zero_like)
    }
    fn add_assign(&mut self, other: &Self) {
        match (self, other) {
            (Some(a), Some(b)) => a.add_assign(b),
            (a @ None, Some(b)) => *a = Some(b.clone()),
            (_, None) => {}
        }
    }
    fn scale(&mut self, factor: f64) {
        if let Some(a) = self {
            a.scale(factor);
        }
    }
    fn dot(&self, other: &Self) -> f64 {
        match (self, other) {
            (Some(a), Some(b)) => a.dot(b),
            _ => 0.0,
        }
    }
    fn zip_map(&mut self, other: &Self, f: &mut dyn FnMut(f64, f64) -> f64) {
        if let (Some(a), Some(b)) = (self, other) {
            a.zip_map(b, f);
        }
    }
}

impl<T: Parameter> Parameter for Option<T> {
    fn apply(&mut self, tangent: &Option<T::Tangent>, step: f64) {
        if let (Some(p), Some(t)) = (self, tangent) {
            p.apply(t, step);
        }
    }
}

/// The entries of the `Some`; none for `None`.
impl<T: Flat> Flat for Option<T> {
    fn flat_len(&self) -> usize {
        self.as_ref().map_or(0, Flat::flat_len)
    }
    fn get(&self, i: usize) -> f64 {
        self.as_ref().expect("index past the end").get(i)
    }
    fn set(&mut self, i: usize, v: f64) {
        self.as_mut().expect("index past the end").set(i, v)
    }
}
