//! `ad` as a [GradBench](https://github.com/gradbench/gradbench) tool.
//!
//! GradBench drives a tool with one JSON message per line on stdin and
//! expects one response per line on stdout ([`protocol`]). Each eval is a
//! module of functions ([`evals`]); every derivative is computed by code that
//! `#[differentiable]` generated from the same Rust function that computes
//! the primal.

pub mod evals;
pub mod protocol;
pub mod runs;
