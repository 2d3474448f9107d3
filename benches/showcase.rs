//! The showcase model (`examples/json_bags/`): per-sample gradient
//! throughput of the generated gradient against the hand-written one and
//! the primal, and the parallel sum over the training set on 1 and 2
//! threads.
//!
//! `cargo bench --bench showcase`; the table is printed at the end and
//! written to `target/criterion/showcase-summary.md`.

#[path = "../examples/json_bags/by_hand.rs"]
mod by_hand;
#[path = "../examples/json_bags/data.rs"]
mod data;
#[path = "../examples/json_bags/model.rs"]
mod model;

#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;

use ad::parallel::sum_gradients;
use common::{allocated, group_times, interleaved_ratio, mean_ns};
use criterion::{criterion_group, Criterion};

/// The showcase's training documents (bags of 0 to 29 instances).
fn samples() -> Vec<data::Sample> {
    data::parse(&data::generate_json(2400, 42)).expect("the generated JSON parses")
}

const SERIAL: &str = "json-bags-per-sample";
const THREADS: &str = "json-bags-parallel-2400";

fn bench_per_sample(c: &mut Criterion) {
    let (m, samples) = (model::Model::new(7), samples());
    let batch = &samples[..200];
    let mut group = c.benchmark_group(SERIAL);
    group.bench_function("primal", |b| {
        b.iter(|| {
            for s in batch {
                black_box(model::loss(
                    black_box(&m),
                    &s.visits,
                    &s.purchases,
                    &s.scalars,
                    s.label,
                ));
            }
        })
    });
    group.bench_function("generated", |b| {
        b.iter(|| {
            for s in batch {
                black_box(model::sample_gradient(black_box(&m), s));
            }
        })
    });
    group.bench_function("hand-written", |b| {
        b.iter(|| {
            for s in batch {
                black_box(by_hand::sample_gradient(black_box(&m), s));
            }
        })
    });
    group.finish();
}

fn bench_threads(c: &mut Criterion) {
    let (m, samples) = (model::Model::new(7), samples());
    let mut group = c.benchmark_group(THREADS);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        group.bench_function(format!("{threads}-threads"), |b| {
            b.iter(|| {
                pool.install(|| {
                    sum_gradients(&samples, |s| model::sample_gradient(black_box(&m), s))
                })
            })
        });
    }
    group.finish();
}

fn summary() {
    let mut out = String::new();
    let (m, samples) = (model::Model::new(7), samples());
    let batch = &samples[..200];
    let per_sample = |f: &dyn Fn(&data::Sample)| {
        let (a, _) = allocated(|| batch.iter().for_each(f));
        a as f64 / batch.len() as f64
    };
    let generated = per_sample(&|s| {
        black_box(model::sample_gradient(&m, s));
    });
    let by_hand = per_sample(&|s| {
        black_box(by_hand::sample_gradient(&m, s));
    });
    let interleaved = interleaved_ratio(
        || {
            batch.iter().for_each(|s| {
                black_box(model::sample_gradient(black_box(&m), s));
            })
        },
        || {
            batch.iter().for_each(|s| {
                black_box(by_hand::sample_gradient(black_box(&m), s));
            })
        },
        61,
    );
    if let Some((p, g, h)) = group_times(SERIAL) {
        out += "| per sample (200 samples, one thread) | primal | generated | hand-written | generated / hand-written | interleaved: median (quartiles) | generated / primal | allocations generated / hand-written |\n|---|---|---|---|---|---|---|---|\n";
        out += &format!(
            "| json-bags model | {:.2} µs | {:.2} µs | {:.2} µs | {:.2} | {interleaved} | {:.2} | {generated:.0} / {by_hand:.0} |\n",
            p / 200e3,
            g / 200e3,
            h / 200e3,
            g / h,
            g / p
        );
    }
    if let (Some(one), Some(two)) = (mean_ns(THREADS, "1-threads"), mean_ns(THREADS, "2-threads")) {
        out += "\n| summed gradient of 2400 samples | 1 thread | 2 threads | speed-up | samples per second on 2 threads |\n|---|---|---|---|---|\n";
        out += &format!(
            "| generated | {:.1} ms | {:.1} ms | {:.2} | {:.0} |\n",
            one / 1e6,
            two / 1e6,
            one / two,
            2400.0 / (two / 1e9)
        );
    }
    println!("\n{out}");
    let _ = std::fs::write("target/criterion/showcase-summary.md", out);
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = bench_per_sample, bench_threads
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
