//! Loops with tapes: Rosenbrock as an indexed loop (n = 10, 100, 1000) and
//! an RNN (10 and 100 steps), generated `_grad` against hand-written
//! gradients and the primal, with the bytes each gradient allocates (the
//! tape included).
//!
//! `cargo bench --bench loops`; the table is printed at the end and written
//! to `target/criterion/loops-summary.md`.

#[path = "../examples/models/mod.rs"]
mod models;

#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;

use common::{allocated, group_times, interleaved_ratio, random, Ratio};
use criterion::{criterion_group, Criterion};

fn bytes(f: impl FnOnce()) -> usize {
    allocated(f).1
}

fn bench(c: &mut Criterion) {
    for n in [10, 100, 1000] {
        let x = random(n, 1);
        let mut group = c.benchmark_group(format!("rosenbrock-{n}"));
        group.bench_function("primal", |b| b.iter(|| models::rosenbrock(black_box(&x))));
        group.bench_function("generated", |b| {
            b.iter(|| models::rosenbrock_grad(black_box(&x)))
        });
        group.bench_function("hand-written", |b| {
            b.iter(|| models::rosenbrock_by_hand(black_box(&x)))
        });
        group.finish();
    }
    for steps in [10, 100] {
        let (w, xs) = (random((16, 16), 2) * 0.3, random((steps, 16), 3));
        let mut group = c.benchmark_group(format!("rnn-{steps}"));
        group.bench_function("primal", |b| b.iter(|| models::rnn(black_box(&w), &xs)));
        group.bench_function("generated", |b| {
            b.iter(|| models::rnn_grad(black_box(&w), &xs))
        });
        group.bench_function("hand-written", |b| {
            b.iter(|| models::rnn_by_hand(black_box(&w), &xs))
        });
        group.finish();
    }
}

fn summary() {
    let mut out = String::from(
        "| workload | primal | generated | hand-written | generated / hand-written | interleaved: median (quartiles) | hand-written / primal | bytes allocated generated / hand-written |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut row = |group: &str, mem: (usize, usize), interleaved: Ratio| {
        let Some((p, g, h)) = group_times(group) else {
            return;
        };
        out += &format!(
            "| {group} | {:.2} µs | {:.2} µs | {:.2} µs | {:.2} | {interleaved} | {:.2} | {} / {} |\n",
            p / 1e3,
            g / 1e3,
            h / 1e3,
            g / h,
            h / p,
            mem.0,
            mem.1
        );
    };
    // Each workload as (generated, hand-written), measured for the bytes
    // they allocate and for their interleaved ratio.
    let mut measure = |name: &str, generated: &dyn Fn(), by_hand: &dyn Fn()| {
        let mem = (bytes(generated), bytes(by_hand));
        row(name, mem, interleaved_ratio(generated, by_hand, 61));
    };
    for n in [10, 100, 1000] {
        let x = random(n, 1);
        measure(
            &format!("rosenbrock-{n}"),
            &|| {
                black_box(models::rosenbrock_grad(black_box(&x)));
            },
            &|| {
                black_box(models::rosenbrock_by_hand(black_box(&x)));
            },
        );
    }
    for steps in [10, 100] {
        let (w, xs) = (random((16, 16), 2) * 0.3, random((steps, 16), 3));
        measure(
            &format!("rnn-{steps}"),
            &|| {
                black_box(models::rnn_grad(black_box(&w), &xs));
            },
            &|| {
                black_box(models::rnn_by_hand(black_box(&w), &xs));
            },
        );
    }
    println!("\n{out}");
    let _ = std::fs::write("target/criterion/loops-summary.md", out);
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = bench
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
