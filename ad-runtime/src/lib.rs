//! Derivative rules, tangent types and checks for `ad`.
//!
//! The `#[differentiable]` macro decides *what* to differentiate from syntax;
//! this crate decides *how*, through trait resolution on the real types. Every
//! operation the macro supports is one family of rules in [`rules`], each with
//! its primal, its pushforward (forward mode) and one pullback per argument
//! (reverse mode), so generated code calls only the pullbacks of active
//! arguments.

pub mod check;
mod dual;
mod float;
mod operand;
mod optim;
mod optional;
pub mod parallel;
pub mod rules;
mod tangent;

pub use dual::Dual;
pub use float::Float;
pub use operand::{view, Lift, Operand};
pub use optim::{Adam, Sgd};
pub use tangent::{Differentiable, IntoTangent, NoTangent, Parameter, TangentSpace};

pub use ndarray;

/// Passes `value` through unchanged; no derivative flows through it.
///
/// Inside a `#[differentiable]` function the macro treats the argument as a
/// constant, so any Rust is allowed inside the call.
#[inline(always)]
pub fn stop_gradient<T>(value: T) -> T {
    value
}
