//! Generated programs: random `#[differentiable]` functions (branches,
//! loops, reassignment, element writes, calls, constants) from
//! `tests/generator`, each checked against finite differences and forward
//! mode against reverse mode by `tests/generator/harness.rs`.
//!
//! More, with another seed: `cargo run --example generate_programs -- --seed 7 --count 2000`.

#[path = "generator/harness.rs"]
#[macro_use]
mod harness;

#[rustfmt::skip]
#[path = "generated/programs.rs"]
mod programs;
