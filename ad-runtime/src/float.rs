use ndarray::NdFloat;

/// The scalar types `ad` differentiates: `f32` and `f64`. Bound a type
/// parameter by it to differentiate code generic over the precision.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a differentiable scalar",
    label = "`ad` differentiates `f32` and `f64` values and arrays of them",
    note = "use `ad::stop_gradient(..)` or `#[constant]` for values that need no derivative"
)]
pub trait Float:
    NdFloat
    + num_traits::Float
    + num_traits::FromPrimitive
    + Send
    + Sync
    + 'static
    + std::iter::Sum
    + for<'a> std::iter::Sum<&'a Self>
    + std::iter::Product
    + for<'a> std::iter::Product<&'a Self>
    + crate::Differentiable<Tangent = Self>
    + crate::TangentSpace
    + for<'a> crate::Lift<View<'a> = Self>
    + crate::rules::ShapeOf<Shape = crate::rules::ScalarShape<Self>>
{
    /// Converts an `f64` constant (a rule's coefficient) to this type.
    fn of(x: f64) -> Self;
}

impl Float for f32 {
    #[inline(always)]
    fn of(x: f64) -> Self {
        x as f32
    }
}

impl Float for f64 {
    #[inline(always)]
    fn of(x: f64) -> Self {
        x
    }
}
