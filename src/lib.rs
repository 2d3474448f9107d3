//! # `ad`: compile-time automatic differentiation for Rust
//!
//! `#[differentiable]` reads a function's syntax and writes its derivatives
//! next to it: `f_grad` and `f_vjp` (reverse mode) and `f_jvp` (forward
//! mode). The derivative code is ordinary Rust: no tape objects, no runtime
//! graph, no preparation step; shapes are read at run time, so one compiled
//! gradient serves every input size, from any thread.
//!
//! ```
//! use ad::differentiable;
//! use ad::ndarray::{array, Array1, Array2};
//!
//! #[differentiable]
//! fn loss(w: &Array1<f64>, #[constant] x: &Array2<f64>, #[constant] y: &Array1<f64>) -> f64 {
//!     let r = x.dot(w) - y;
//!     r.dot(&r) / y.len() as f64
//! }
//!
//! let x = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
//! let y = array![1.0, 2.0, 3.0];
//! let w = array![0.1, 0.2];
//! let (value, (g_w, _, _)) = loss_grad(&w, &x, &y);
//! assert_eq!(value, loss(&w, &x, &y));
//! assert_eq!(g_w.len(), 2);
//! ```
//!
//! See the README for the supported syntax and how to read the generated code.

extern crate self as ad;

pub use ad_macros::{differentiable, Differentiable};
/// The ndarray version the rules are written for.
pub use ad_runtime::ndarray;
pub use ad_runtime::{
    check, parallel, stop_gradient, Adam, Differentiable, Dual, Float, IntoTangent, NoTangent,
    Parameter, Sgd, TangentSpace,
};

/// What generated code names; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use ad_runtime::rules;

    /// Names a lifetime a method's pullback captures (`impl FnOnce(..) +
    /// Captures<'a>`), where `use<..>` would have to name the `impl`
    /// block's type parameters.
    pub trait Captures<'a> {}
    impl<T: ?Sized> Captures<'_> for T {}
}
