//! `ad` against the crates a Rust user would otherwise pick for gradients:
//! candle (`Var` + `backward`) and burn (`Autodiff<NdArray<f64>>`), on the
//! ML-shaped scenarios of the registry: the MLP at batch 8, 64 and 512, the
//! bag model, logsumexp and Rosenbrock at n = 10, 100 and 1000. Every
//! framework computes the same loss in `f64` on one thread
//! (`RAYON_NUM_THREADS=1`: candle otherwise re-reads the CPU count on every
//! matrix product), and its gradient is checked against `ad`'s before it is
//! timed.
//!
//! `cargo bench -p ad-peers --features peers` (builds candle and burn, a few
//! minutes) writes the table into `docs/benchmarks.md` between the peers
//! markers.

#[path = "../../examples/models/mod.rs"]
mod models;

#[path = "../../benches/common/mod.rs"]
mod common;

mod burn_side;
mod candle_side;

use std::hint::black_box;
use std::time::Duration;

use ad::ndarray::{Array1, Array2};
use common::{mean_ns, random};
use criterion::Criterion;

/// One workload: its inputs, as every framework reads them.
pub enum Workload {
    Mlp {
        w1: Array2<f64>,
        b1: Array1<f64>,
        w2: Array1<f64>,
        x: Array2<f64>,
        y: Array1<f64>,
    },
    Bag {
        w1: Array2<f64>,
        b1: Array1<f64>,
        w2: Array1<f64>,
        b2: f64,
        bag: Array2<f64>,
        label: f64,
    },
    LogSumExp {
        x: Array1<f64>,
    },
    Rosenbrock {
        x: Array1<f64>,
    },
}

impl Workload {
    /// `ad`'s value and flat gradient.
    fn ad(&self) -> (f64, Vec<f64>) {
        let flat = |parts: &[&[f64]]| parts.concat();
        match self {
            Workload::Mlp { w1, b1, w2, x, y } => {
                let (v, (g1, gb, g2, ..)) = models::mlp_loss_grad(w1, b1, w2, x, y);
                (
                    v,
                    flat(&[
                        g1.as_slice().unwrap(),
                        gb.as_slice().unwrap(),
                        g2.as_slice().unwrap(),
                    ]),
                )
            }
            Workload::Bag {
                w1,
                b1,
                w2,
                b2,
                bag,
                label,
            } => {
                let (v, (g1, gb, g2, gb2, ..)) =
                    models::bag_loss_grad(w1, b1, w2, *b2, bag, *label);
                (
                    v,
                    flat(&[
                        g1.as_slice().unwrap(),
                        gb.as_slice().unwrap(),
                        g2.as_slice().unwrap(),
                        &[gb2],
                    ]),
                )
            }
            Workload::LogSumExp { x } => {
                let (v, (g,)) = models::logsumexp_grad(x);
                (v, g.to_vec())
            }
            Workload::Rosenbrock { x } => {
                let (v, (g,)) = models::rosenbrock_grad(x);
                (v, g.to_vec())
            }
        }
    }

    fn run_primal(&self) {
        black_box(match self {
            Workload::Mlp { w1, b1, w2, x, y } => models::mlp_loss(w1, b1, w2, x, y),
            Workload::Bag {
                w1,
                b1,
                w2,
                b2,
                bag,
                label,
            } => models::bag_loss(w1, b1, w2, *b2, bag, *label),
            Workload::LogSumExp { x } => models::logsumexp(x),
            Workload::Rosenbrock { x } => models::rosenbrock(x),
        });
    }

    fn run_ad(&self) {
        black_box(self.ad());
    }

    fn run_hand(&self) {
        match self {
            Workload::Mlp { w1, b1, w2, x, y } => {
                black_box(models::mlp_loss_by_hand(w1, b1, w2, x, y));
            }
            Workload::Bag {
                w1,
                b1,
                w2,
                b2,
                bag,
                label,
            } => {
                black_box(models::bag_loss_by_hand(w1, b1, w2, *b2, bag, *label));
            }
            Workload::LogSumExp { x } => {
                black_box(models::logsumexp_by_hand(x));
            }
            Workload::Rosenbrock { x } => {
                black_box(models::rosenbrock_by_hand(x));
            }
        }
    }
}

/// A contiguous array's entries, for a framework's tensor constructor.
pub fn slice<D: ad::ndarray::Dimension>(a: &ad::ndarray::Array<f64, D>) -> Vec<f64> {
    a.as_slice().expect("contiguous").to_vec()
}

fn workloads() -> Vec<(String, Workload)> {
    let mut all = Vec::new();
    for n in [8, 64, 512] {
        all.push((
            format!("mlp-{n}"),
            Workload::Mlp {
                w1: random((32, 16), 31),
                b1: random(32, 32),
                w2: random(32, 33),
                x: random((n, 16), 34),
                y: random(n, 35),
            },
        ));
    }
    for n in [2, 17, 50] {
        all.push((
            format!("bag-{n}"),
            Workload::Bag {
                w1: random((6, 10), 121),
                b1: random(10, 122),
                w2: random(10, 123),
                b2: 0.1,
                bag: random((n, 6), 124 + n as u64),
                label: (n % 2) as f64,
            },
        ));
    }
    all.push((
        "logsumexp-100".into(),
        Workload::LogSumExp {
            x: random(100, 17) * 3.0,
        },
    ));
    for n in [10, 100, 1000] {
        all.push((
            format!("rosenbrock-{n}"),
            Workload::Rosenbrock { x: random(n, 61) },
        ));
    }
    all
}

const METHODS: [&str; 5] = ["primal", "ad", "hand-written", "candle", "burn"];

/// Panics unless a peer's value and gradient match `ad`'s.
fn agree(name: &str, peer: &str, ours: &(f64, Vec<f64>), theirs: &(f64, Vec<f64>)) {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-8 * a.abs().max(b.abs()).max(1.0);
    assert!(
        close(ours.0, theirs.0),
        "{name}: {peer}'s value {} differs from ad's {}",
        theirs.0,
        ours.0
    );
    assert_eq!(
        ours.1.len(),
        theirs.1.len(),
        "{name}: {peer}'s gradient has another length"
    );
    for (i, (a, b)) in ours.1.iter().zip(&theirs.1).enumerate() {
        assert!(
            close(*a, *b),
            "{name}: {peer}'s gradient entry {i} is {b}, ad's {a}"
        );
    }
}

fn main() {
    // Before any framework starts its thread pool.
    std::env::set_var("RAYON_NUM_THREADS", "1");
    // Criterion writes under the workspace's `target/`; read it from there.
    std::env::set_current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .expect("the workspace root");
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    let workloads = workloads();
    for (name, w) in &workloads {
        let ours = w.ad();
        let candle = candle_side::Prepared::new(w);
        agree(name, "candle", &ours, &candle.gradient());
        let burn = burn_side::Prepared::new(w);
        agree(name, "burn", &ours, &burn.gradient());
        let mut group = criterion.benchmark_group(format!("peers-{name}"));
        group.bench_function("primal", |b| b.iter(|| w.run_primal()));
        group.bench_function("ad", |b| b.iter(|| w.run_ad()));
        group.bench_function("hand-written", |b| b.iter(|| w.run_hand()));
        group.bench_function("candle", |b| b.iter(|| black_box(candle.gradient())));
        group.bench_function("burn", |b| b.iter(|| black_box(burn.gradient())));
        group.finish();
    }
    criterion.final_summary();
    write_table(&workloads);
}

fn write_table(workloads: &[(String, Workload)]) {
    let mut table = String::from(
        "| workload | primal | ad | hand-written / ad | candle / ad | burn / ad |\n|---|---:|---:|---:|---:|---:|\n",
    );
    let mut ratios = (Vec::new(), Vec::new());
    for (name, _) in workloads {
        let t: Vec<Option<f64>> = METHODS
            .iter()
            .map(|m| mean_ns(&format!("peers-{name}"), m))
            .collect();
        let (Some(primal), Some(ours)) = (t[0], t[1]) else {
            continue;
        };
        let r = |k: usize| t[k].map_or("—".to_string(), |v| format!("{:.2}", v / ours));
        if let Some(c) = t[3] {
            ratios.0.push(c / ours);
        }
        if let Some(b) = t[4] {
            ratios.1.push(b / ours);
        }
        table += &format!(
            "| {name} | {:.2} µs | {:.2} µs | {} | {} | {} |\n",
            primal / 1e3,
            ours / 1e3,
            r(2),
            r(3),
            r(4)
        );
    }
    let geo = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp();
    let section = format!(
        "## Peers\n\n\
         `ad` against candle 0.11 (`Var` + `backward`) and burn 0.20\n\
         (`Autodiff<NdArray<f64>>`), the crates a Rust user would otherwise pick,\n\
         on the ML-shaped scenarios: the same losses in `f64` on one thread, each\n\
         gradient checked against `ad`'s before it is timed. Written by\n\
         `cargo bench -p ad-peers --features peers` (`peers/`, outside the default\n\
         build). Ratios are time over `ad`'s reverse-mode gradient; geometric means:\n\
         candle {:.1}, burn {:.1}.\n\n{table}",
        geo(&ratios.0),
        geo(&ratios.1)
    );
    println!("{section}");
    let path = "docs/benchmarks.md";
    let doc = std::fs::read_to_string(path).unwrap_or_default();
    let (begin, end) = ("<!-- peers: begin -->", "<!-- peers: end -->");
    let updated = match (doc.find(begin), doc.find(end)) {
        (Some(b), Some(e)) => format!("{}{begin}\n{section}\n{}", &doc[..b], &doc[e..]),
        _ => format!("{doc}\n{begin}\n{section}\n{end}\n"),
    };
    std::fs::write(path, updated).expect("write docs/benchmarks.md");
}
