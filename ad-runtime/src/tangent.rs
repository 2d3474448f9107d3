use ndarray::{Array, ArrayBase, ArrayView, Data, Dimension};

use crate::Float;

/// The tangent of a value that carries no derivative: integers, `bool`,
/// `#[constant]` parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NoTangent;

/// A type whose values have derivatives: it names its tangent type.
///
/// `f64`→`f64`, `Array<F, D>` and views→`Array<F, D>`, `Vec<T>` and
/// `[T]`→`Vec<T::Tangent>`, `&T`→`T::Tangent`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no tangent type",
    label = "`ad` differentiates `f32`, `f64`, ndarray arrays, and `Vec`s, slices and `Option`s of them",
    note = "mark the parameter or struct field `#[constant]` if it needs no derivative"
)]
pub trait Differentiable {
    type Tangent: TangentSpace;
    /// The zero tangent at this value (same shape).
    fn zero_tangent(&self) -> Self::Tangent;
    /// A zero tangent that allocates nothing it can avoid: arrays are left
    /// empty, to be moved in by their first contribution. The adjoints of
    /// struct parameters start so, as most of their fields receive exactly
    /// one contribution; [`complete_tangent`](Self::complete_tangent) gives
    /// the fields none reached their zeros.
    fn unset_tangent(&self) -> Self::Tangent {
        self.zero_tangent()
    }
    /// Makes every part of `tangent` still left by
    /// [`unset_tangent`](Self::unset_tangent) a zero of this value's shape.
    fn complete_tangent(&self, tangent: &mut Self::Tangent) {
        let _ = tangent;
    }
}

/// What optimisers and checks need of a tangent: zero, add, scale and dot.
pub trait TangentSpace: Clone {
    fn zero_like(&self) -> Self;
    fn add_assign(&mut self, other: &Self);
    fn scale(&mut self, factor: f64);
    fn dot(&self, other: &Self) -> f64;
    /// `self[i] = f(self[i], other[i])` for every entry (element-wise
    /// optimiser arithmetic, such as Adam's moments).
    fn zip_map(&mut self, other: &Self, f: &mut dyn FnMut(f64, f64) -> f64);
}

impl TangentSpace for NoTangent {
    fn zip_map(&mut self, _: &Self, _: &mut dyn FnMut(f64, f64) -> f64) {}
    fn zero_like(&self) -> Self {
        NoTangent
    }
    fn add_assign(&mut self, _: &Self) {}
    fn scale(&mut self, _: f64) {}
    fn dot(&self, _: &Self) -> f64 {
        0.0
    }
}

macro_rules! scalar_tangent {
    ($($t:ty),*) => {$(
        impl Differentiable for $t {
            type Tangent = $t;
            fn zero_tangent(&self) -> $t {
                0.0
            }
        }
        impl TangentSpace for $t {
            fn zero_like(&self) -> Self {
                0.0
            }
            fn add_assign(&mut self, other: &Self) {
                *self += *other;
            }
            fn scale(&mut self, factor: f64) {
                *self *= factor as $t;
            }
            fn dot(&self, other: &Self) -> f64 {
                (*self * *other) as f64
            }
            fn zip_map(&mut self, other: &Self, f: &mut dyn FnMut(f64, f64) -> f64) {
                *self = f(*self as f64, *other as f64) as $t;
            }
        }
    )*};
}
scalar_tangent!(f32, f64);

macro_rules! inactive {
    ($($t:ty),*) => {$(
        impl Differentiable for $t {
            type Tangent = NoTangent;
            fn zero_tangent(&self) -> NoTangent {
                NoTangent
            }
        }
    )*};
}
inactive!(bool, char, str, String, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
// `NoTangent` is a value too: the entry of a `#[constant]` parameter in a
// gradient that differentiable code reads (`f_grad` under `nested`).
inactive!(NoTangent);

impl<F: Float, S: Data<Elem = F>, D: Dimension> Differentiable for ArrayBase<S, D> {
    type Tangent = Array<F, D>;
    fn zero_tangent(&self) -> Array<F, D> {
        Array::zeros(self.raw_dim())
    }
    fn unset_tangent(&self) -> Array<F, D> {
        Array::zeros(D::zeros(self.ndim()))
    }
    /// Also puts the gradient in standard layout (see `rules::standard_layout`).
    fn complete_tangent(&self, tangent: &mut Array<F, D>) {
        if tangent.shape() != self.shape() {
            *tangent = self.zero_tangent();
        } else if !tangent.is_standard_layout() {
            *tangent = tangent.as_standard_layout().into_owned();
        }
    }
}

impl<F: Float, D: Dimension> TangentSpace for Array<F, D> {
    fn zip_map(&mut self, other: &Self, f: &mut dyn FnMut(f64, f64) -> f64) {
        self.zip_mut_with(other, |a, &b| {
            let (x, y) = (
                num_traits::cast(*a).unwrap_or(f64::NAN),
                num_traits::cast(b).unwrap_or(f64::NAN),
            );
            *a = F::of(f(x, y));
        });
    }
    fn zero_like(&self) -> Self {
        Array::zeros(self.raw_dim())
    }
    /// An adjoint left empty (by `unset_tangent`, or an item of a list
    /// that no cotangent reached) is zero: adding it changes nothing, and
    /// adding to it gives the other.
    fn add_assign(&mut self, other: &Self) {
        if self.is_empty() && !other.is_empty() {
            *self = other.clone();
        } else if !other.is_empty() {
            *self += other;
        }
    }
    fn scale(&mut self, factor: f64) {
        let k = F::of(factor);
        self.mapv_inplace(|v| v * k);
    }
    fn dot(&self, other: &Self) -> f64 {
        let mut acc = 0.0;
        ndarray::Zip::from(self)
            .and(other)
            .for_each(|a, b| acc += num_traits::cast::<F, f64>(*a * *b).unwrap_or(f64::NAN));
        acc
    }
}

impl<T: Differentiable> Differentiable for [T] {
    type Tangent = Vec<T::Tangent>;
    fn zero_tangent(&self) -> Vec<T::Tangent> {
        self.iter().map(Differentiable::zero_tangent).collect()
    }
    fn unset_tangent(&self) -> Vec<T::Tangent> {
        self.iter().map(Differentiable::unset_tangent).collect()
    }
    fn complete_tangent(&self, tangent: &mut Vec<T::Tangent>) {
        for (x, t) in self.iter().zip(tangent) {
            x.complete_tangent(t);
        }
    }
}

impl<T: Differentiable> Differentiable for Vec<T> {
    type Tangent = Vec<T::Tangent>;
    fn zero_tangent(&self) -> Vec<T::Tangent> {
        self.as_slice().zero_tangent()
    }
    fn unset_tangent(&self) -> Vec<T::Tangent> {
        self.as_slice().unset_tangent()
    }
    fn complete_tangent(&self, tangent: &mut Vec<T::Tangent>) {
        self.as_slice().complete_tangent(tangent)
    }
}

impl<T: TangentSpace> TangentSpace for Vec<T> {
    fn zip_map(&mut self, other: &Self, f: &mut dyn FnMut(f64, f64) -> f64) {
        for (a, b) in self.iter_mut().zip(other) {
            a.zip_map(b, f);
        }
    }
    fn zero_like(&self) -> Self {
        self.iter().map(TangentSpace::zero_like).collect()
    }
    fn add_assign(&mut self, other: &Self) {
        assert_eq!(self.len(), other.len(), "tangents of different lengths");
        for (a, b) in self.iter_mut().zip(other) {
            a.add_assign(b);
        }
    }
    fn scale(&mut self, factor: f64) {
        for a in self {
            a.scale(factor);
        }
    }
    fn dot(&self, other: &Self) -> f64 {
        self.iter().zip(other).map(|(a, b)| a.dot(b)).sum()
    }
}

impl<T: Differentiable + ?Sized> Differentiable for &T {
    type Tangent = T::Tangent;
    fn zero_tangent(&self) -> T::Tangent {
        (**self).zero_tangent()
    }
    fn unset_tangent(&self) -> T::Tangent {
        (**self).unset_tangent()
    }
    fn complete_tangent(&self, tangent: &mut T::Tangent) {
        (**self).complete_tangent(tangent)
    }
}

/// A tuple's tangent is the tuple of its items' tangents: the result of a
/// function that returns several values (`fn stats(x) -> (f64, f64)`), and
/// the gradients of several parameters.
macro_rules! tuple_tangent {
    ($(($($t:ident $i:tt),*)),*) => {$(
        // Left out of the types a "no tangent type" error lists.
        #[diagnostic::do_not_recommend]
        impl<$($t: Differentiable),*> Differentiable for ($($t,)*) {
            type Tangent = ($($t::Tangent,)*);
            fn zero_tangent(&self) -> Self::Tangent {
                ($(self.$i.zero_tangent(),)*)
            }
            fn unset_tangent(&self) -> Self::Tangent {
                ($(self.$i.unset_tangent(),)*)
            }
            fn complete_tangent(&self, tangent: &mut Self::Tangent) {
                $(self.$i.complete_tangent(&mut tangent.$i);)*
            }
        }
        impl<$($t: TangentSpace),*> TangentSpace for ($($t,)*) {
            fn zero_like(&self) -> Self {
                ($(self.$i.zero_like(),)*)
            }
            fn add_assign(&mut self, other: &Self) {
                $(self.$i.add_assign(&other.$i);)*
            }
            fn scale(&mut self, factor: f64) {
                $(self.$i.scale(factor);)*
            }
            fn dot(&self, other: &Self) -> f64 {
                0.0 $(+ self.$i.dot(&other.$i))*
            }
            fn zip_map(&mut self, other: &Self, f: &mut dyn FnMut(f64, f64) -> f64) {
                $(self.$i.zip_map(&other.$i, f);)*
            }
        }
    )*};
}
tuple_tangent!(
    (A 0),
    (A 0, B 1),
    (A 0, B 1, C 2),
    (A 0, B 1, C 2, D 3),
    (A 0, B 1, C 2, D 3, E 4),
    (A 0, B 1, C 2, D 3, E 4, G 5),
    (A 0, B 1, C 2, D 3, E 4, G 5, H 6),
    (A 0, B 1, C 2, D 3, E 4, G 5, H 6, I 7)
);

/// A value an optimiser can move along a tangent: `self += step * tangent`.
/// Implemented for floats, owned arrays, `Vec`s of parameters and
/// `#[derive(Differentiable)]` structs (whose `#[constant]` fields stay).
pub trait Parameter: Differentiable {
    fn apply(&mut self, tangent: &Self::Tangent, step: f64);
}

macro_rules! scalar_parameter {
    ($($t:ty),*) => {$(
        impl Parameter for $t {
            fn apply(&mut self, tangent: &$t, step: f64) {
                *self += (step as $t) * *tangent;
            }
        }
    )*};
}
scalar_parameter!(f32, f64);

impl<F: Float, D: Dimension> Parameter for Array<F, D> {
    fn apply(&mut self, tangent: &Array<F, D>, step: f64) {
        self.scaled_add(F::of(step), tangent);
    }
}

impl<T: Parameter> Parameter for Vec<T> {
    fn apply(&mut self, tangent: &Vec<T::Tangent>, step: f64) {
        assert_eq!(self.len(), tangent.len(), "a tangent of a different length");
        for (p, t) in self.iter_mut().zip(tangent) {
            p.apply(t, step);
        }
    }
}

/// A tangent `f_jvp` takes for an `ArrayView` parameter: the owned array
/// (the view's tangent type), a view of one, or a reference to one.
pub trait IntoTangent<T> {
    fn into_tangent(self) -> T;
}

impl<A: Clone, D: Dimension> IntoTangent<Array<A, D>> for Array<A, D> {
    fn into_tangent(self) -> Array<A, D> {
        self
    }
}

impl<A: Clone, D: Dimension> IntoTangent<Array<A, D>> for ArrayView<'_, A, D> {
    fn into_tangent(self) -> Array<A, D> {
        self.to_owned()
    }
}

impl<A: Clone, D: Dimension> IntoTangent<Array<A, D>> for &Array<A, D> {
    fn into_tangent(self) -> Array<A, D> {
        self.clone()
    }
}
