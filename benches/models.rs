//! Generated gradients against hand-written ndarray gradients and the
//! primal, on the MLP (batch 8, 64, 512; 16 inputs, 32 hidden) and the bag
//! model (bags of 1 to 50 instances). Also the MLP with `x` active, to show
//! what `#[constant]` saves, and allocations per call.
//!
//! `cargo bench --bench models`; the ratio table is printed at the end and
//! written to `target/criterion/models-summary.md`.

#[path = "../examples/models/mod.rs"]
mod models;

#[path = "common/mod.rs"]
mod common;

use std::hint::black_box;

use ad::ndarray::{Array1, Array2};
use common::{allocated, group_times, interleaved_ratio, mean_ns, random, Ratio};
use criterion::{criterion_group, Criterion};

fn allocations(f: impl FnOnce()) -> usize {
    allocated(f).0
}

struct Mlp {
    w1: Array2<f64>,
    b1: Array1<f64>,
    w2: Array1<f64>,
    x: Array2<f64>,
    y: Array1<f64>,
}

fn mlp(batch: usize) -> Mlp {
    Mlp {
        w1: random((32, 16), 1),
        b1: random(32, 2),
        w2: random(32, 3),
        x: random((batch, 16), 4),
        y: random(batch, 5),
    }
}

struct Bags {
    w1: Array2<f64>,
    b1: Array1<f64>,
    w2: Array1<f64>,
    bags: Vec<(Array2<f64>, f64)>,
}

fn bags() -> Bags {
    Bags {
        w1: random((8, 16), 6),
        b1: random(16, 7),
        w2: random(16, 8),
        bags: (1..=50)
            .map(|n| (random((n, 8), 100 + n as u64), (n % 2) as f64))
            .collect(),
    }
}

fn bench_mlp(c: &mut Criterion) {
    for batch in [8, 64, 512] {
        let m = mlp(batch);
        let mut group = c.benchmark_group(format!("mlp-{batch}"));
        group.bench_function("primal", |b| {
            b.iter(|| models::mlp_loss(black_box(&m.w1), &m.b1, &m.w2, &m.x, &m.y))
        });
        group.bench_function("generated", |b| {
            b.iter(|| models::mlp_loss_grad(black_box(&m.w1), &m.b1, &m.w2, &m.x, &m.y))
        });
        group.bench_function("hand-written", |b| {
            b.iter(|| models::mlp_loss_by_hand(black_box(&m.w1), &m.b1, &m.w2, &m.x, &m.y))
        });
        group.bench_function("generated-x-active", |b| {
            b.iter(|| models::mlp_loss_active_x_grad(black_box(&m.w1), &m.b1, &m.w2, &m.x, &m.y))
        });
        group.finish();
    }
}

fn bench_bags(c: &mut Criterion) {
    let p = bags();
    let mut group = c.benchmark_group("bags-1-to-50");
    group.bench_function("primal", |b| {
        b.iter(|| {
            p.bags
                .iter()
                .map(|(bag, y)| models::bag_loss(black_box(&p.w1), &p.b1, &p.w2, 0.1, bag, *y))
                .sum::<f64>()
        })
    });
    group.bench_function("generated", |b| {
        b.iter(|| {
            for (bag, y) in &p.bags {
                black_box(models::bag_loss_grad(
                    black_box(&p.w1),
                    &p.b1,
                    &p.w2,
                    0.1,
                    bag,
                    *y,
                ));
            }
        })
    });
    group.bench_function("hand-written", |b| {
        b.iter(|| {
            for (bag, y) in &p.bags {
                black_box(models::bag_loss_by_hand(
                    black_box(&p.w1),
                    &p.b1,
                    &p.w2,
                    0.1,
                    bag,
                    *y,
                ));
            }
        })
    });
    group.finish();
}

fn summary() {
    let mut out = String::from(
        "| workload | primal | generated | hand-written | generated / hand-written | interleaved: median (quartiles) | generated / primal | allocations generated / hand-written |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut row = |group: &str, allocs: (usize, usize), interleaved: Ratio| {
        let Some((p, g, h)) = group_times(group) else {
            return;
        };
        out += &format!(
            "| {group} | {:.1} µs | {:.1} µs | {:.1} µs | {:.2} | {interleaved} | {:.2} | {} / {} |\n",
            p / 1e3,
            g / 1e3,
            h / 1e3,
            g / h,
            g / p,
            allocs.0,
            allocs.1
        );
    };
    // Each workload as (generated, hand-written), measured for
    // allocations and for their interleaved ratio.
    let mut measure = |name: &str, generated: &dyn Fn(), by_hand: &dyn Fn()| {
        let allocs = (allocations(generated), allocations(by_hand));
        row(name, allocs, interleaved_ratio(generated, by_hand, 31));
    };
    for batch in [8, 64, 512] {
        let m = mlp(batch);
        measure(
            &format!("mlp-{batch}"),
            &|| {
                black_box(models::mlp_loss_grad(
                    black_box(&m.w1),
                    &m.b1,
                    &m.w2,
                    &m.x,
                    &m.y,
                ));
            },
            &|| {
                black_box(models::mlp_loss_by_hand(
                    black_box(&m.w1),
                    &m.b1,
                    &m.w2,
                    &m.x,
                    &m.y,
                ));
            },
        );
    }
    let p = bags();
    measure(
        "bags-1-to-50",
        &|| {
            for (bag, y) in &p.bags {
                black_box(models::bag_loss_grad(
                    black_box(&p.w1),
                    &p.b1,
                    &p.w2,
                    0.1,
                    bag,
                    *y,
                ));
            }
        },
        &|| {
            for (bag, y) in &p.bags {
                black_box(models::bag_loss_by_hand(
                    black_box(&p.w1),
                    &p.b1,
                    &p.w2,
                    0.1,
                    bag,
                    *y,
                ));
            }
        },
    );
    out += "\n| MLP batch | x constant | x active | active / constant |\n|---|---|---|---|\n";
    for batch in [8, 64, 512] {
        let group = format!("mlp-{batch}");
        if let (Some(c), Some(a)) = (
            mean_ns(&group, "generated"),
            mean_ns(&group, "generated-x-active"),
        ) {
            out += &format!(
                "| {batch} | {:.1} µs | {:.1} µs | {:.2} |\n",
                c / 1e3,
                a / 1e3,
                a / c
            );
        }
    }
    println!("\n{out}");
    let _ = std::fs::write("target/criterion/models-summary.md", out);
}

criterion_group! {
    name = benches;
    config = common::config();
    targets = bench_mlp, bench_bags
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
