//! Adjoint accumulation: the first contribution moves in, later ones add in
//! place. Pullbacks of reads that touch part of an array (`x[i]`, `row`,
//! `slice`) contribute a scatter instead of a dense array of zeros.

use ndarray::{Array, ArrayBase, Axis, Dimension, NdIndex, SliceArg};

use super::shapes::ZeroOfShape;
use crate::{Differentiable, Float, NoTangent, TangentSpace};

/// One contribution to an adjoint of type `T`.
#[diagnostic::on_unimplemented(
    message = "a cotangent `{Self}` cannot be added to an adjoint of type `{T}`",
    note = "this is a bug in `ad`'s rules: please report it with the function"
)]
pub trait Contribution<T> {
    fn add_to(self, acc: &mut T);
    fn into_first(self, zero: impl FnOnce() -> T) -> T;
}

macro_rules! dense {
    ($([$($gen:tt)*] $t:ty;)*) => {$(
        impl<$($gen)*> Contribution<$t> for $t {
            #[inline(always)]
            fn add_to(self, acc: &mut $t) {
                TangentSpace::add_assign(acc, &self);
            }
            #[inline(always)]
            fn into_first(self, _: impl FnOnce() -> $t) -> $t {
                self
            }
        }
    )*};
}

dense! {
    [F: Float] F;
}

/// An adjoint left empty by `unset_tangent` takes its first contribution
/// as it is; an empty contribution (a struct tangent's field no read
/// reached, added whole) adds nothing.
impl<F: Float, D: Dimension> Contribution<Array<F, D>> for Array<F, D> {
    #[inline(always)]
    fn add_to(self, acc: &mut Array<F, D>) {
        if acc.is_empty() && !self.is_empty() {
            *acc = self;
        } else if !self.is_empty() {
            *acc += &self;
        }
    }
    #[inline(always)]
    fn into_first(self, _: impl FnOnce() -> Array<F, D>) -> Array<F, D> {
        self
    }
}

impl<T: TangentSpace + Contribution<T>> Contribution<Vec<T>> for Vec<T> {
    fn add_to(self, acc: &mut Vec<T>) {
        assert_eq!(acc.len(), self.len(), "tangents of different lengths");
        for (c, a) in self.into_iter().zip(acc) {
            c.add_to(a);
        }
    }
    fn into_first(self, _: impl FnOnce() -> Vec<T>) -> Vec<T> {
        self
    }
}

/// A `Vec` of floats read as a 1-D array (an instance of a bag,
/// `xs: &[Vec<f64>]`, iterated or mapped) takes the array's cotangent
/// element by element.
impl<F: Float> Contribution<Vec<F>> for ndarray::Array1<F> {
    fn add_to(self, acc: &mut Vec<F>) {
        assert_eq!(acc.len(), self.len(), "tangents of different lengths");
        for (a, c) in acc.iter_mut().zip(self) {
            *a += c;
        }
    }
    fn into_first(self, _: impl FnOnce() -> Vec<F>) -> Vec<F> {
        self.into_iter().collect()
    }
}

/// An `Option` field's adjoint (`p.bias`): the cotangent of the value
/// inside it (`rules::some_of`) adds into its `Some`, and a whole adjoint
/// (a callee's gradient entry) adds as an `Option`.
impl<T: TangentSpace, C: Contribution<T>> Contribution<Option<T>> for Option<C> {
    fn add_to(self, acc: &mut Option<T>) {
        match (self, acc) {
            (Some(c), Some(a)) => c.add_to(a),
            (Some(c), a @ None) => *a = Some(c.into_first(|| unreachable!("a first contribution"))),
            (None, _) => {}
        }
    }
    fn into_first(self, zero: impl FnOnce() -> Option<T>) -> Option<T> {
        match self {
            Some(c) => Some(c.into_first(|| unreachable!("a first contribution"))),
            None => zero(),
        }
    }
}

/// A callee's gradient entry for a `#[constant]` parameter: nothing flows.
impl<T> Contribution<T> for NoTangent {
    #[inline(always)]
    fn add_to(self, _: &mut T) {}
    #[inline(always)]
    fn into_first(self, zero: impl FnOnce() -> T) -> T {
        zero()
    }
}

/// The zero tangent of `x` (an adjoint that received no contribution).
#[inline(always)]
pub fn zero_tangent<T: Differentiable + ?Sized>(x: &T) -> T::Tangent {
    x.zero_tangent()
}

/// The adjoint of a struct parameter before any contribution: its arrays
/// are left empty until their first contribution moves in.
#[inline(always)]
pub fn unset_tangent<T: Differentiable + ?Sized>(x: &T) -> T::Tangent {
    x.unset_tangent()
}

/// The adjoint `t` of `x` begun by `unset_tangent`, with zeros where no
/// contribution arrived.
#[inline(always)]
pub fn completed<T: Differentiable + ?Sized>(mut t: T::Tangent, x: &T) -> T::Tangent {
    x.complete_tangent(&mut t);
    t
}

/// An array gradient as returned: in standard layout, copied only if the
/// reverse sweep left it in another (a transpose's cotangent is a
/// transposed view of its own).
#[inline(always)]
pub fn standard_layout<F: Clone, D: Dimension>(a: Array<F, D>) -> Array<F, D> {
    if a.is_standard_layout() {
        a
    } else {
        a.as_standard_layout().into_owned()
    }
}

/// `a + b` for tangents (forward mode, where two terms meet).
#[inline(always)]
pub fn sum_tangents<T: TangentSpace>(mut a: T, b: T) -> T {
    a.add_assign(&b);
    a
}

/// A constant argument of a call in forward mode, whose zero tangent
/// [`ZeroOfDifferentiable::zero_or_none`] makes if its type has one; otherwise
/// [`ZeroOfConstant::zero_or_none`] gives `NoTangent`, which is all a callee's
/// `#[constant]` parameter takes (a tree, a parsed document: types with no
/// tangent). Method resolution picks the first where both apply: it tries
/// `ZeroOf<T>` before `&ZeroOf<T>`.
pub struct ZeroOf<'a, T: ?Sized>(pub &'a T);

pub trait ZeroOfDifferentiable {
    type Zero;
    fn zero_or_none(&self) -> Self::Zero;
}

impl<T: Differentiable + ?Sized> ZeroOfDifferentiable for ZeroOf<'_, T> {
    type Zero = T::Tangent;
    #[inline(always)]
    fn zero_or_none(&self) -> T::Tangent {
        self.0.zero_tangent()
    }
}

pub trait ZeroOfConstant {
    fn zero_or_none(&self) -> NoTangent;
}

impl<T: ?Sized> ZeroOfConstant for &ZeroOf<'_, T> {
    #[inline(always)]
    fn zero_or_none(&self) -> NoTangent {
        NoTangent
    }
}

/// The tangent to pass for a constant argument of a call in forward mode:
/// `NoTangent` where the callee's parameter is `#[constant]`, otherwise the
/// zero tangent (by reference or by value, as the callee takes it).
#[diagnostic::on_unimplemented(
    message = "the callee's tangent `{Self}` cannot be made from a constant argument's zero `{T}`",
    note = "mark the callee's parameter `#[constant]`, or give the argument's type a tangent (`#[derive(Differentiable)]`)"
)]
pub trait ConstTangent<'a, T: ?Sized> {
    fn make(zero: &'a T) -> Self;
}

impl<'a, T: ?Sized> ConstTangent<'a, T> for NoTangent {
    fn make(_: &'a T) -> Self {
        NoTangent
    }
}

impl<'a, T: ?Sized> ConstTangent<'a, T> for &'a T {
    fn make(zero: &'a T) -> Self {
        zero
    }
}

macro_rules! const_tangent_by_value {
    ($([$($gen:tt)*] $t:ty;)*) => {$(
        impl<'a, $($gen)*> ConstTangent<'a, $t> for $t {
            fn make(zero: &'a $t) -> Self {
                zero.clone()
            }
        }
    )*};
}

const_tangent_by_value! {
    [F: Float] F;
    [F: Float, D: Dimension] Array<F, D>;
    [T: Clone] Vec<T>;
}

#[inline(always)]
pub fn const_tangent<'a, T: ?Sized, P: ConstTangent<'a, T>>(zero: &'a T) -> P {
    P::make(zero)
}

/// The first contribution to the adjoint of `like`, which it shapes.
#[inline(always)]
pub fn first<T, C>(c: C, like: &T) -> T::Tangent
where
    T: Differentiable + ?Sized,
    C: Contribution<T::Tangent>,
{
    c.into_first(|| like.zero_tangent())
}

/// The first contribution to the adjoint of a value of the given shape (an
/// array's, or a `Vec`'s).
#[inline(always)]
pub fn first_shaped<S: ZeroOfShape, C>(c: C, shape: S) -> S::Tangent
where
    C: Contribution<S::Tangent>,
{
    c.into_first(|| shape.zero())
}

/// Adds a later contribution to an adjoint in place.
#[inline(always)]
pub fn accumulate<T, C: Contribution<T>>(acc: &mut T, c: C) {
    c.add_to(acc);
}

/// The cotangent of the element read `x[index]`.
pub struct IndexScatter<I, F> {
    pub index: I,
    pub dy: F,
}

impl<F: Float, D: Dimension, I: NdIndex<D>> Contribution<Array<F, D>> for IndexScatter<I, F> {
    #[inline(always)]
    fn add_to(self, acc: &mut Array<F, D>) {
        acc[self.index] += self.dy;
    }
    fn into_first(self, zero: impl FnOnce() -> Array<F, D>) -> Array<F, D> {
        let mut acc = zero();
        self.add_to(&mut acc);
        acc
    }
}

impl<F: Float> Contribution<Vec<F>> for IndexScatter<usize, F> {
    #[inline(always)]
    fn add_to(self, acc: &mut Vec<F>) {
        acc[self.index] += self.dy;
    }
    fn into_first(self, zero: impl FnOnce() -> Vec<F>) -> Vec<F> {
        let mut acc = zero();
        self.add_to(&mut acc);
        acc
    }
}

/// Keeps two scatters into one adjoint apart, emitted between them. A loop
/// reading `x[i]` and `x[i + 1]` adds into `x_bar[i + 1]` and `x_bar[i]`;
/// LLVM's SLP vectorizer merges the two into one 16-byte load-add-store,
/// which half overlaps the next iteration's, so the processor cannot
/// forward the store to the load and stalls on every iteration (3.5 times
/// as slow as two scalar updates). A compiler fence emits no instruction;
/// it only stops the merge. (Only between scatters into the same adjoint:
/// elsewhere it would keep LLVM from holding array fields in registers.)
#[inline(always)]
pub fn scatter_fence() {
    std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::Release);
}

/// The cotangent of a matrix's diagonal.
pub struct DiagScatter<F> {
    pub dy: ndarray::Array1<F>,
}

impl<F: Float> Contribution<ndarray::Array2<F>> for DiagScatter<F> {
    fn add_to(self, acc: &mut ndarray::Array2<F>) {
        let mut diagonal = acc.diag_mut();
        diagonal += &self.dy;
    }
    fn into_first(self, zero: impl FnOnce() -> ndarray::Array2<F>) -> ndarray::Array2<F> {
        let mut acc = zero();
        self.add_to(&mut acc);
        acc
    }
}

/// The cotangent of a subview along one axis (`row`, `column`).
pub struct AxisScatter<F, E: Dimension> {
    pub axis: Axis,
    pub index: usize,
    pub dy: Array<F, E>,
}

impl<F: Float, D: ndarray::RemoveAxis> Contribution<Array<F, D>> for AxisScatter<F, D::Smaller> {
    fn add_to(self, acc: &mut Array<F, D>) {
        let mut part = acc.index_axis_mut(self.axis, self.index);
        part += &self.dy;
    }
    fn into_first(self, zero: impl FnOnce() -> Array<F, D>) -> Array<F, D> {
        let mut acc = zero();
        self.add_to(&mut acc);
        acc
    }
}

/// The cotangent of `x.slice(info)`.
pub struct SliceScatter<I, F, E: Dimension> {
    pub info: I,
    pub dy: Array<F, E>,
}

impl<F: Float, D: Dimension, E: Dimension, I: SliceArg<D, OutDim = E>> Contribution<Array<F, D>>
    for SliceScatter<I, F, E>
{
    fn add_to(self, acc: &mut Array<F, D>) {
        let mut part = ArrayBase::slice_mut(acc, self.info);
        part += &self.dy;
    }
    fn into_first(self, zero: impl FnOnce() -> Array<F, D>) -> Array<F, D> {
        let mut acc = zero();
        self.add_to(&mut acc);
        acc
    }
}

/// A sub-slice of a slice or `Vec` of floats (`&x[a..b]`, read as a 1-D
/// view) adds into that part of the `Vec` adjoint.
impl<F: Float, I: SliceArg<ndarray::Ix1, OutDim = ndarray::Ix1>> Contribution<Vec<F>>
    for SliceScatter<I, F, ndarray::Ix1>
{
    fn add_to(self, acc: &mut Vec<F>) {
        let mut whole = ndarray::ArrayViewMut1::from(acc.as_mut_slice());
        let mut part = whole.slice_mut(self.info);
        part += &self.dy;
    }
    fn into_first(self, zero: impl FnOnce() -> Vec<F>) -> Vec<F> {
        let mut acc = zero();
        self.add_to(&mut acc);
        acc
    }
}

/// Adjoints in code with branches and loops are `Option`s: `None` until a
/// contribution arrives, so work downstream of a value no cotangent reached
/// is skipped.
///
/// Adds a full cotangent `c` to `acc`.
#[inline(always)]
pub fn accumulate_dense<T: TangentSpace>(acc: &mut Option<T>, c: T) {
    match acc {
        Some(a) => a.add_assign(&c),
        None => *acc = Some(c),
    }
}

/// Adds any contribution `c` to `acc`, the adjoint of `like`.
#[inline(always)]
pub fn accumulate_into<T, C>(acc: &mut Option<T::Tangent>, c: C, like: &T)
where
    T: Differentiable + ?Sized,
    C: Contribution<T::Tangent>,
{
    match acc {
        Some(a) => c.add_to(a),
        None => *acc = Some(c.into_first(|| like.zero_tangent())),
    }
}

/// As `accumulate_into`, into the adjoint of a value of the given shape.
#[inline(always)]
pub fn accumulate_into_shaped<S: ZeroOfShape, C>(acc: &mut Option<S::Tangent>, c: C, shape: S)
where
    C: Contribution<S::Tangent>,
{
    match acc {
        Some(a) => c.add_to(a),
        None => *acc = Some(c.into_first(|| shape.zero())),
    }
}

/// Moves an adjoint that reached a merge point (a branch's value, a loop's
/// carried variable) into the adjoint of where the value came from.
#[inline(always)]
pub fn transfer<T: TangentSpace>(acc: &mut Option<T>, c: Option<T>) {
    if let Some(c) = c {
        accumulate_dense(acc, c);
    }
}

/// `transfer` into an adjoint a loop holds as a value.
#[inline(always)]
pub fn transfer_dense<T: Contribution<T>>(acc: &mut T, c: Option<T>) {
    if let Some(c) = c {
        c.add_to(acc);
    }
}

/// Adds `unit` times `cotangent` to `acc`. A loop that only adds to a
/// scalar (`s += ..`) passes the sum's cotangent unchanged to every
/// iteration, so each iteration's reverse sweep runs right after its
/// forward sweep with a cotangent of one, adding into `unit`; once the
/// sum's cotangent is known, this scales and adds the total.
#[inline(always)]
pub fn add_scaled<T: TangentSpace, F: Float>(acc: &mut Option<T>, unit: T, cotangent: &Option<F>) {
    if let Some(c) = cotangent {
        accumulate_dense(acc, scaled(unit, *c));
    }
}

/// `add_scaled` into an adjoint held as a value.
#[inline(always)]
pub fn add_scaled_dense<T: TangentSpace + Contribution<T>, F: Float>(
    acc: &mut T,
    unit: T,
    cotangent: &Option<F>,
) {
    if let Some(c) = cotangent {
        scaled(unit, *c).add_to(acc);
    }
}

#[inline(always)]
fn scaled<T: TangentSpace, F: Float>(mut unit: T, c: F) -> T {
    if c != F::one() {
        unit.scale(num_traits::ToPrimitive::to_f64(&c).unwrap_or(f64::NAN));
    }
    unit
}

/// Which branch of an `if` ran, with the values its reverse sweep reads.
pub enum Branch<A, B> {
    Then(A),
    Else(B),
}

/// An `Option` adjoint as a value, zero of `like`'s shape if empty: loops
/// accumulate into it without checking, and `Some` it again after.
#[inline(always)]
pub fn dense<T: Differentiable + ?Sized>(adjoint: Option<T::Tangent>, like: &T) -> T::Tangent {
    match adjoint {
        Some(a) => a,
        None => like.zero_tangent(),
    }
}
