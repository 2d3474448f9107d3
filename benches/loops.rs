//! Loops with tapes: Rosenbrock as an indexed loop (n = 10, 100, 1000) and
//! an RNN (10 and 100 steps), generated `_grad` against hand-written
//! gradients and the primal, with the bytes each gradient allocates (the
//! tape included).
//!
//! `cargo bench --bench loops`; the table is printed at the end and written
//! to `target/criterion/loops-summary.md`.

#[path = "../examples/models/mod.rs"]
mod models;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ad::check::Rng;
use ad::ndarray::{Array, ShapeBuilder};
use criterion::{criterion_group, Criterion};

/// Counts allocated bytes, to report memory per gradient.
struct Counting;
static BYTES: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        BYTES.fetch_add(new_size.saturating_sub(layout.size()), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn bytes(f: impl FnOnce()) -> usize {
    let before = BYTES.load(Ordering::Relaxed);
    f();
    BYTES.load(Ordering::Relaxed) - before
}

fn random<Sh: ShapeBuilder>(shape: Sh, seed: u64) -> Array<f64, Sh::Dim> {
    let mut rng = Rng::new(seed);
    Array::from_shape_simple_fn(shape, || rng.uniform())
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

fn mean_ns(group: &str, function: &str) -> Option<f64> {
    let text = std::fs::read_to_string(format!(
        "target/criterion/{group}/{function}/new/estimates.json"
    ))
    .ok()?;
    let rest = &text[text.find("\"mean\"")?..];
    let p = rest.find("\"point_estimate\":")? + "\"point_estimate\":".len();
    let end = rest[p..].find([',', '}'])?;
    rest[p..p + end].trim().parse().ok()
}

fn summary() {
    let mut out = String::from(
        "| workload | primal | generated | hand-written | generated / hand-written | hand-written / primal | bytes allocated generated / hand-written |\n|---|---|---|---|---|---|---|\n",
    );
    let mut row = |group: &str, mem: (usize, usize)| {
        let (Some(p), Some(g), Some(h)) = (
            mean_ns(group, "primal"),
            mean_ns(group, "generated"),
            mean_ns(group, "hand-written"),
        ) else {
            return;
        };
        out += &format!(
            "| {group} | {:.2} µs | {:.2} µs | {:.2} µs | {:.2} | {:.2} | {} / {} |\n",
            p / 1e3,
            g / 1e3,
            h / 1e3,
            g / h,
            h / p,
            mem.0,
            mem.1
        );
    };
    for n in [10, 100, 1000] {
        let x = random(n, 1);
        let mem = (
            bytes(|| {
                black_box(models::rosenbrock_grad(&x));
            }),
            bytes(|| {
                black_box(models::rosenbrock_by_hand(&x));
            }),
        );
        row(&format!("rosenbrock-{n}"), mem);
    }
    for steps in [10, 100] {
        let (w, xs) = (random((16, 16), 2) * 0.3, random((steps, 16), 3));
        let mem = (
            bytes(|| {
                black_box(models::rnn_grad(&w, &xs));
            }),
            bytes(|| {
                black_box(models::rnn_by_hand(&w, &xs));
            }),
        );
        row(&format!("rnn-{steps}"), mem);
    }
    println!("\n{out}");
    let _ = std::fs::write("target/criterion/loops-summary.md", out);
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args()
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
