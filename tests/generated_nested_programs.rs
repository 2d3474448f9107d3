//! Generated nested programs: random `#[differentiable(nested)]` scalar
//! functions (branches, `match`, early `return`, loops with `continue` and
//! `break`, calls) from `tests/generator/nested.rs`, each checked to
//! second order by `tests/generator/nested_harness.rs`: `f_grad` against
//! finite differences of `f`, and `H v` by reverse over reverse, forward
//! over reverse and reverse over forward against finite differences of
//! `f_grad`.

#[path = "generator/nested_harness.rs"]
#[macro_use]
mod nested_harness;

#[rustfmt::skip]
#[path = "generated/nested_programs.rs"]
mod programs;
