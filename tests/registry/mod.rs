//! The scenario registry: every differentiation scenario `ad` claims (or
//! declares broken), in one list that the gradient tests
//! (`tests/scenarios.rs`), the support table (`docs/support.md`) and the
//! benchmarks (`benches/scenarios.rs`) all read.
//!
//! A scenario is a `#[differentiable] fn f` with inputs at two or more sizes,
//! an optional hand-written derivative, and per mode (`reverse` = `f_grad`,
//! `pullback` = `f_vjp`, `forward` = `f_jvp`) a [`Status`]. It is written
//! with [`scenario!`](case) in the file of its family.

// Reassignment (`acc = acc + ..`) is what several scenarios test.
#![allow(dead_code, clippy::assign_op_pattern)]
// Scenarios take `&Vec<f64>`, cast `x as f64` and index in range loops
// because users do.
#![allow(clippy::ptr_arg, clippy::unnecessary_cast, clippy::needless_range_loop)]

#[macro_use]
pub mod case;
pub mod dual;
pub mod run;
pub mod table;

#[path = "../../examples/models/mod.rs"]
pub mod models;

mod arithmetic;
mod calls;
mod closures;
mod control;
mod linalg;
mod loops;
mod reductions;
mod scalar;
mod sizes;
mod structs;
mod writes;

pub use case::Instance;

/// What a scenario exercises; the support table groups by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    Scalar,
    Arithmetic,
    Reductions,
    LinearAlgebra,
    Closures,
    ControlFlow,
    Loops,
    ElementWrites,
    Structs,
    Calls,
    StopGradient,
    Sizes,
}

impl Family {
    pub fn title(self) -> &'static str {
        match self {
            Family::Scalar => "scalar elementary functions",
            Family::Arithmetic => "arithmetic and broadcasting",
            Family::Reductions => "reductions and views",
            Family::LinearAlgebra => "linear algebra",
            Family::Closures => "`mapv` closures",
            Family::ControlFlow => "control flow",
            Family::Loops => "loops with tapes",
            Family::ElementWrites => "element writes",
            Family::Structs => "structs",
            Family::Calls => "calls and custom rules",
            Family::StopGradient => "`stop_gradient`",
            Family::Sizes => "variable sizes",
        }
    }
}

/// The three ways to differentiate a scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `f_grad`: value and gradient (scalar results only).
    Reverse,
    /// `f_vjp`: value and a pullback of any output cotangent.
    Pullback,
    /// `f_jvp`: value and one directional derivative.
    Forward,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Reverse, Mode::Pullback, Mode::Forward];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Reverse => "reverse",
            Mode::Pullback => "pullback",
            Mode::Forward => "forward",
        }
    }
}

/// What the registry declares about one mode of one scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Expected to pass every check.
    Works,
    /// Run, and expected to fail: when it starts passing, the test says so.
    Broken(&'static str),
    /// Listed with its reason, not run.
    Skipped(&'static str),
}

/// One registry entry.
pub struct Scenario {
    pub name: &'static str,
    pub family: Family,
    /// The sizes its inputs are built at (for scalar scenarios, the size
    /// picks the input point).
    pub sizes: &'static [usize],
    /// Whether a hand-written derivative is the reference (otherwise only
    /// finite differences and the other mode are).
    pub hand_written: bool,
    /// Whether the `num-dual` baseline has a version of it.
    pub dual: bool,
    /// Whether finite differences of `f` are a reference: not where
    /// `ad::stop_gradient` changes the derivative on purpose (then the
    /// hand-written derivative is).
    pub finite_differences: bool,
    pub reverse: Status,
    pub pullback: Status,
    pub forward: Status,
    /// The scenario's inputs and derivatives at one size.
    pub build: fn(usize) -> Box<dyn Instance>,
}

impl Scenario {
    pub fn status(&self, mode: Mode) -> Status {
        match mode {
            Mode::Reverse => self.reverse,
            Mode::Pullback => self.pullback,
            Mode::Forward => self.forward,
        }
    }
}

/// Every scenario, grouped by family in the order of [`Family`].
pub fn all() -> Vec<Scenario> {
    let mut all: Vec<Scenario> = [
        scalar::scenarios(),
        arithmetic::scenarios(),
        reductions::scenarios(),
        linalg::scenarios(),
        closures::scenarios(),
        control::scenarios(),
        loops::scenarios(),
        writes::scenarios(),
        structs::scenarios(),
        calls::scenarios(),
        sizes::scenarios(),
    ]
    .into_iter()
    .flatten()
    .collect();
    all.sort_by_key(|s| s.family);
    all
}

/// A deterministic array of the given shape with entries in [-1, 1).
pub fn random<Sh: ad::ndarray::ShapeBuilder>(
    shape: Sh,
    seed: u64,
) -> ad::ndarray::Array<f64, Sh::Dim> {
    let mut rng = ad::check::Rng::new(seed);
    ad::ndarray::Array::from_shape_simple_fn(shape, || rng.uniform())
}
