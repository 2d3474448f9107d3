//! The scenario registry's gradient tests and support table.
//!
//! Every scenario runs at each of its sizes in each mode it does not skip;
//! one test reports every mismatch with the registry's declarations at once.

mod registry;

use registry::run::{check, check_dual, verdicts, Verdict};
use registry::table;
use registry::{Mode, Scenario, Status};

#[test]
fn registry_is_large_and_names_are_unique() {
    let all = registry::all();
    assert!(all.len() >= 40, "the registry has {} scenarios", all.len());
    let mut names: Vec<&str> = all.iter().map(|s| s.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), all.len(), "two scenarios share a name");
    for s in &all {
        assert!(s.sizes.len() >= 2, "{} has fewer than two sizes", s.name);
    }
}

#[test]
fn every_scenario_behaves_as_declared() {
    // Panics inside generated code are failures the report lists; keep
    // their messages out of the output until then.
    std::panic::set_hook(Box::new(|_| {}));
    let mut report = String::new();
    let (mut ran, mut skipped) = (0, 0);
    for scenario in registry::all() {
        let start = std::time::Instant::now();
        let verdicts = verdicts(&scenario);
        println!(
            "{:>8.1} ms  {}",
            start.elapsed().as_secs_f64() * 1e3,
            scenario.name
        );
        for (mode, verdict) in Mode::ALL.into_iter().zip(verdicts) {
            match verdict {
                Verdict::AsDeclared => ran += 1,
                Verdict::Skipped => skipped += 1,
                Verdict::Fixed => {
                    report += &format!(
                        "{} / {}: declared broken but passes at every size; mark it working in the registry\n",
                        scenario.name,
                        mode.name()
                    )
                }
                Verdict::Fails(failures) => {
                    for (size, error) in failures {
                        report += &format!("{} / {} at size {size}: {error}\n", scenario.name, mode.name());
                    }
                }
            }
        }
    }
    let _ = std::panic::take_hook();
    println!("{ran} scenario-modes as declared, {skipped} skipped");
    assert!(
        report.is_empty(),
        "the registry's declarations do not hold:\n{report}"
    );
}

/// The forward-mode baseline of the benchmarks computes the gradient too.
#[test]
fn the_num_dual_baseline_agrees_with_the_references() {
    let mut report = String::new();
    let mut covered = 0;
    for scenario in registry::all().iter().filter(|s| s.dual) {
        covered += 1;
        // The two smallest sizes: one pass per input entry over dual
        // numbers is slow in a debug build at batch 512.
        for &n in scenario.sizes.iter().take(2) {
            if let Err(e) = check_dual(scenario, n) {
                report += &format!("{} at size {n}: {e}\n", scenario.name);
            }
        }
    }
    assert!(
        covered >= 15,
        "only {covered} scenarios have a num-dual version"
    );
    assert!(report.is_empty(), "{report}");
}

/// The checks can fail: a scenario whose derivative is wrong is caught in
/// every mode (here the gradient of `x * x` is taken as `x`).
#[test]
fn the_checks_catch_a_wrong_derivative() {
    mod wrong {
        pub fn f(x: f64) -> f64 {
            x * x
        }
        pub fn f_grad(x: f64) -> (f64, (f64,)) {
            (x * x, (x,))
        }
        pub fn f_vjp(x: f64) -> (f64, impl FnOnce(f64) -> (f64,)) {
            (x * x, move |w| (w * x,))
        }
        pub fn f_jvp(x: f64, dx: f64) -> (f64, f64) {
            (x * x, x * dx)
        }
    }
    let scenario = {
        use wrong::*;
        fn build(n: usize) -> Box<dyn registry::Instance> {
            registry::case::Case::new(
                (n as f64,),
                (),
                |x, _| f(x.0),
                |x, _, w| (f_vjp(x.0).0, vec![(f_vjp(x.0).1)(w).0]),
                |x| (ad::Differentiable::zero_tangent(&x.0),),
                |x, _, t| f_jvp(x.0, t.0),
            )
            .with_grad(|x, _| f_grad(x.0))
            .boxed()
        }
        Scenario {
            name: "wrong",
            family: registry::Family::Scalar,
            sizes: &[1, 2],
            hand_written: false,
            dual: false,
            finite_differences: true,
            reverse: Status::Works,
            pullback: Status::Works,
            forward: Status::Works,
            build,
        }
    };
    for mode in Mode::ALL {
        assert!(
            check(&scenario, mode, 2).is_err(),
            "{} passed a wrong derivative",
            mode.name()
        );
    }
    assert!(verdicts(&scenario)
        .iter()
        .all(|v| matches!(v, Verdict::Fails(_))));
    let declared_broken = Scenario {
        forward: Status::Broken("deliberately wrong"),
        ..scenario
    };
    assert!(matches!(verdicts(&declared_broken)[2], Verdict::AsDeclared));
}

/// `docs/support.md` and the README's summary are what the registry
/// renders; `UPDATE_SUPPORT=1` rewrites them.
#[test]
fn support_table_matches_the_registry() {
    let all = registry::all();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let document = table::document(&all);
    let readme_path = root.join("README.md");
    let readme = std::fs::read_to_string(&readme_path).expect("README.md");
    let spliced = table::splice_readme(&readme, &table::summary(&all)).unwrap_or_else(|| {
        panic!(
            "README.md has no support table markers:\n{}\n{}",
            table::README_BEGIN,
            table::README_END
        )
    });
    let doc_path = root.join("docs/support.md");
    if std::env::var_os("UPDATE_SUPPORT").is_some() {
        std::fs::create_dir_all(root.join("docs")).expect("docs/");
        std::fs::write(&doc_path, &document).expect("write docs/support.md");
        std::fs::write(&readme_path, &spliced).expect("write README.md");
        return;
    }
    let committed = std::fs::read_to_string(&doc_path).unwrap_or_default();
    assert!(
        committed == document,
        "docs/support.md differs from the registry; regenerate it with `{}`",
        table::REGENERATE
    );
    assert!(
        readme == spliced,
        "the README's support summary differs from the registry; regenerate it with `{}`",
        table::REGENERATE
    );
}
