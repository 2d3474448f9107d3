//! Every registry scenario (`tests/registry/`) at its largest size, by
//! every method: the primal; `num-dual` forward mode, one pass per input
//! (the baseline every cost is divided by); `ad`'s generated `f_grad`
//! (reverse) and `f_jvp` (forward, one pass per input); the hand-written
//! gradient where the registry has one; central finite differences.
//!
//! `cargo bench --bench scenarios` measures them (a few minutes) and writes
//! `docs/benchmarks.md` with the plots in `docs/benchmarks/`. With
//! `AD_REPORT_ONLY=1` it rewrites them from the last measurements.

#[path = "../tests/registry/mod.rs"]
mod registry;

#[path = "common/mod.rs"]
mod common;

#[path = "scenarios/report.rs"]
mod report;

use std::time::Duration;

use criterion::Criterion;
use registry::Instance;

/// The methods, as criterion names them, and how to run each once (false
/// when the scenario has no such method).
pub const METHODS: [&str; 6] = [
    "primal",
    "num-dual",
    "ad-reverse",
    "ad-forward",
    "hand-written",
    "finite-differences",
];

fn run(instance: &dyn Instance, method: &str) -> bool {
    match method {
        "primal" => {
            instance.run_primal();
            true
        }
        "num-dual" => instance.run_dual(),
        "ad-reverse" => instance.run_grad(),
        "ad-forward" => {
            instance.run_jvp_sweep();
            true
        }
        "hand-written" => instance.run_hand(),
        "finite-differences" => {
            instance.run_central_differences();
            true
        }
        _ => unreachable!("a method of METHODS"),
    }
}

fn main() {
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(600))
        .configure_from_args();
    let report_only = std::env::var_os("AD_REPORT_ONLY").is_some();
    let mut measured = Vec::new();
    for scenario in registry::all() {
        let size = *scenario.sizes.iter().max().expect("a size");
        let instance = (scenario.build)(size);
        let mut group = criterion.benchmark_group(format!("scenario-{}", scenario.name));
        let mut allocations = Vec::new();
        for method in METHODS {
            let (count, _) = common::allocated(|| {
                run(&*instance, method);
            });
            if !run(&*instance, method) {
                allocations.push(None);
                continue;
            }
            allocations.push(Some(count));
            if !report_only {
                group.bench_function(method, |b| b.iter(|| run(&*instance, method)));
            }
        }
        group.finish();
        let has = |m| run(&*instance, m);
        let reverse_over_hand =
            (!report_only && has("ad-reverse") && has("hand-written")).then(|| {
                common::interleaved_ratio(
                    || {
                        run(&*instance, "ad-reverse");
                    },
                    || {
                        run(&*instance, "hand-written");
                    },
                    21,
                )
                .median
            });
        measured.push(report::Measured {
            name: scenario.name,
            family: scenario.family.title(),
            size,
            inputs: instance.inputs().len(),
            times: METHODS
                .iter()
                .map(|m| common::mean_ns(&format!("scenario-{}", scenario.name), m))
                .zip(&allocations)
                .map(|(t, a)| a.and(t))
                .collect(),
            allocations,
            reverse_over_hand,
        });
    }
    criterion.final_summary();
    report::write(&measured, registry::all().len()).expect("write docs/benchmarks.md");
}
