use ndarray::NdFloat;

/// The scalar types `ad` differentiates: `f32` and `f64`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a differentiable scalar",
    label = "`ad` differentiates `f32` and `f64` values and arrays of them",
    note = "use `ad::stop_gradient(..)` or `#[constant]` for values that need no derivative"
)]
pub trait Float:
    NdFloat + num_traits::Float + num_traits::FromPrimitive + Send + Sync + 'static
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
