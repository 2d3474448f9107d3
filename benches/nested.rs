//! Hessian-vector products of a scalar function of two variables (the
//! potential of two charges, GradBench `particle`'s): reverse over forward
//! and reverse over reverse by `#[differentiable(nested)]`
//! (`potential_jvp_vjp`, `potential_grad_vjp`), forward over reverse by
//! the generic `potential_vjp` on `ad::Dual`s, and the hand-written
//! Hessian; the primal and the gradient for scale.
//!
//! `cargo bench --bench nested`; the table is printed at the end and written
//! to its section of `docs/benchmarks.md`.

#[path = "../examples/models/charges.rs"]
mod charges;
#[path = "common/mod.rs"]
mod common;
#[path = "common/sections.rs"]
mod sections;

use std::hint::black_box;

use ad::{Dual, NoTangent};
use charges::{
    potential, potential_grad, potential_grad_vjp, potential_hvp_by_hand, potential_jvp_vjp,
    potential_vjp,
};
use common::mean_ns;
use criterion::Criterion;

const POINT: (f64, f64, f64) = (0.7, 8.1, 0.3);
const DIRECTION: (f64, f64) = (0.4, -1.3);

fn by_nested((x0, x1, w): (f64, f64, f64), (v0, v1): (f64, f64)) -> (f64, f64) {
    let (_, pullback) = potential_jvp_vjp(x0, x1, w, v0, v1, NoTangent);
    let (h0, h1, ..) = pullback((0.0, 1.0));
    (h0, h1)
}

fn by_gradient((x0, x1, w): (f64, f64, f64), (v0, v1): (f64, f64)) -> (f64, f64) {
    let (_, pullback) = potential_grad_vjp(x0, x1, w);
    let (h0, h1, NoTangent) = pullback((0.0, (v0, v1, NoTangent)));
    (h0, h1)
}

fn by_duals((x0, x1, w): (f64, f64, f64), (v0, v1): (f64, f64)) -> (f64, f64) {
    let (_, pullback) = potential_vjp(Dual::new(x0, v0), Dual::new(x1, v1), Dual::constant(w));
    let (g0, g1, _) = pullback(Dual::constant(1.0));
    (g0.tangent, g1.tangent)
}

fn by_hand((x0, x1, w): (f64, f64, f64), v: (f64, f64)) -> (f64, f64) {
    potential_hvp_by_hand((x0, x1), w, v)
}

fn bench(c: &mut Criterion) {
    let (nested, gradient, duals, hand) = (
        by_nested(POINT, DIRECTION),
        by_gradient(POINT, DIRECTION),
        by_duals(POINT, DIRECTION),
        by_hand(POINT, DIRECTION),
    );
    for (got, what) in [(nested, "nested"), (gradient, "gradient"), (duals, "duals")] {
        assert!(
            (got.0 - hand.0).abs() + (got.1 - hand.1).abs() < 1e-12,
            "{what}: {got:?} against {hand:?}"
        );
    }
    let (x0, x1, w) = POINT;
    let mut group = c.benchmark_group("hessian-vector");
    group.bench_function("primal", |b| {
        b.iter(|| potential(black_box(x0), black_box(x1), w))
    });
    group.bench_function("gradient", |b| {
        b.iter(|| potential_grad(black_box(x0), black_box(x1), w))
    });
    group.bench_function("reverse-over-forward", |b| {
        b.iter(|| by_nested(black_box(POINT), DIRECTION))
    });
    group.bench_function("reverse-over-reverse", |b| {
        b.iter(|| by_gradient(black_box(POINT), DIRECTION))
    });
    group.bench_function("forward-over-reverse", |b| {
        b.iter(|| by_duals(black_box(POINT), DIRECTION))
    });
    group.bench_function("hand-written", |b| {
        b.iter(|| by_hand(black_box(POINT), DIRECTION))
    });
    group.finish();
}

/// Criterion's means and their ratios. No interleaved ratio here: at a few
/// nanoseconds a call, how far out-of-order execution overlaps successive
/// calls decides a back-to-back loop's time (two calls per iteration
/// measured 1.04 times one), so only criterion's sampling is reported.
fn summary() {
    let ns = |f: &str| mean_ns("hessian-vector", f).unwrap_or(f64::NAN);
    let mut table =
        String::from("| Hessian-vector product | mean | / hand-written |\n|---|---:|---:|\n");
    for name in [
        "reverse-over-forward",
        "reverse-over-reverse",
        "forward-over-reverse",
        "hand-written",
    ] {
        table += &format!(
            "| {name} | {:.1} ns | {:.2} |\n",
            ns(name),
            ns(name) / ns("hand-written")
        );
    }
    println!("\n{table}");
    let section = format!(
        "## Second derivatives\n\n\
         A Hessian-vector product of the potential of two charges (two inputs),\n\
         written by `cargo bench --bench nested`: reverse over forward is the\n\
         `f_jvp_vjp` of `#[differentiable(nested)]`, pulled back from the\n\
         tangent; reverse over reverse its `f_grad_vjp`, pulled back from the\n\
         gradient's cotangent; forward over reverse is the generic `f_vjp` run on\n\
         `ad::Dual`s; hand-written is the closed-form Hessian times the\n\
         direction. Criterion means on one thread; the primal takes {:.1} ns and\n\
         the gradient (`f_grad`) {:.1} ns. Reverse over forward also returns the\n\
         adjoints of the tangent inputs (the gradient) and carries the\n\
         cotangent of `f_jvp`'s value, so it is the slowest here; it\n\
         is the mode that lets reverse-mode code call a generated `_jvp`.\n\n{table}",
        ns("primal"),
        ns("gradient")
    );
    sections::write(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
        "second derivatives",
        &section,
    );
}

fn main() {
    let mut c = common::config();
    bench(&mut c);
    c.final_summary();
    summary();
}
