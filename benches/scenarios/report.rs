//! `docs/benchmarks.md` and its plots, from the measured times.

use std::fmt::Write;

use plotters::prelude::*;

use super::METHODS;

/// One scenario's measurements, in the order of [`METHODS`].
pub struct Measured {
    pub name: &'static str,
    pub family: &'static str,
    pub size: usize,
    pub inputs: usize,
    /// Mean nanoseconds per call (`None`: no such method).
    pub times: Vec<Option<f64>>,
    /// Allocations per call.
    pub allocations: Vec<Option<usize>>,
    /// `ad-reverse` over hand-written, measured in alternation (see
    /// `common::interleaved_ratio`), when the scenario has both.
    pub reverse_over_hand: Option<f64>,
}

const BASELINE: usize = 1; // num-dual
const REVERSE: usize = 2;
const HAND: usize = 4;

fn ratio(m: &Measured, method: usize, over: usize) -> Option<f64> {
    if (method, over) == (REVERSE, HAND) && m.reverse_over_hand.is_some() {
        return m.reverse_over_hand;
    }
    Some(m.times[method]? / m.times[over]?)
}

fn geomean(values: &[f64]) -> Option<f64> {
    (!values.is_empty())
        .then(|| (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

fn time(ns: f64) -> String {
    match ns {
        ns if ns < 1e3 => format!("{ns:.0} ns"),
        ns if ns < 1e6 => format!("{:.1} µs", ns / 1e3),
        ns => format!("{:.2} ms", ns / 1e6),
    }
}

fn cell(r: Option<f64>) -> String {
    r.map_or("—".into(), |r| format!("{r:.3}"))
}

pub fn write(measured: &[Measured], registered: usize) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all("docs/benchmarks")?;
    let mut md = String::new();
    writeln!(
        md,
        "# Benchmarks\n\n\
         Every scenario of the registry (`tests/registry/`, the same list the tests\n\
         and `docs/support.md` use) at its largest size, timed with criterion in one\n\
         run by `cargo bench --bench scenarios`, which rewrites this page and the\n\
         plots. Single thread; the machine that produced this page has 2 cores.\n\n\
         Methods, each computing the whole gradient (primal excepted):\n"
    )?;
    for (method, what) in [
        ("primal", "`f` itself."),
        (
            "num-dual",
            "the baseline: `num-dual`'s `Dual64` forward-mode dual numbers (the \
             ForwardDiff of Rust), one pass per input entry; the scenario's `dual { .. }` \
             section is `f` written over `Dual64`, checked against finite differences by \
             the tests.",
        ),
        (
            "ad-reverse",
            "the generated `f_grad` (scalar results only).",
        ),
        (
            "ad-forward",
            "the generated `f_jvp`, one pass per input entry, as a forward-mode tool \
             computes a gradient.",
        ),
        (
            "hand-written",
            "the registry's hand-written gradient, where it has one: the practical limit.",
        ),
        (
            "finite-differences",
            "central differences, two primals per input entry.",
        ),
    ] {
        writeln!(md, "- **{method}**: {what}")?;
    }
    writeln!(
        md,
        "\nRatios are time divided by the num-dual time of the same scenario (lower is\n\
         better); a scenario without a num-dual version has no ratio, and the\n\
         coverage column says how many contribute.\n"
    )?;
    writeln!(md, "## Summary\n")?;
    writeln!(
        md,
        "| method | geometric mean / num-dual | coverage | geometric mean / primal | coverage |\n|---|---:|---:|---:|---:|"
    )?;
    for (k, method) in METHODS.iter().enumerate() {
        let over_dual: Vec<f64> = measured
            .iter()
            .filter_map(|m| ratio(m, k, BASELINE))
            .collect();
        let over_primal: Vec<f64> = measured.iter().filter_map(|m| ratio(m, k, 0)).collect();
        writeln!(
            md,
            "| {method} | {} | {}/{} | {} | {}/{} |",
            cell(geomean(&over_dual)),
            over_dual.len(),
            measured.len(),
            cell(geomean(&over_primal)),
            over_primal.len(),
            measured.len()
        )?;
    }
    let against_hand: Vec<f64> = measured
        .iter()
        .filter_map(|m| ratio(m, REVERSE, HAND))
        .collect();
    writeln!(
        md,
        "\n`ad-reverse` / hand-written: geometric mean {} over the {} scenarios with a\n\
         hand-written gradient (each the median of alternating batches of the two,\n\
         which a machine whose speed drifts during the run does not skew). {} of the\n\
         {registered} registered scenarios are measured.\n",
        cell(geomean(&against_hand)),
        against_hand.len(),
        measured.len()
    )?;
    writeln!(
        md,
        "![time per scenario](benchmarks/per-scenario.svg)\n\n![spread](benchmarks/spread.svg)\n"
    )?;
    writeln!(md, "## Per scenario\n")?;
    write!(md, "| scenario | family | size | inputs | primal |")?;
    for method in &METHODS[1..] {
        let over = if *method == "num-dual" {
            ""
        } else {
            " / num-dual"
        };
        write!(md, " {method}{over} |")?;
    }
    writeln!(md, " ad-reverse / hand-written |")?;
    writeln!(
        md,
        "|---|---|---:|---:|---:|{}---:|",
        "---:|".repeat(METHODS.len() - 1)
    )?;
    for m in measured {
        write!(
            md,
            "| `{}` | {} | {} | {} | {} |",
            m.name,
            m.family,
            m.size,
            m.inputs,
            m.times[0].map_or("—".into(), time)
        )?;
        for k in 1..METHODS.len() {
            let shown = if k == BASELINE {
                m.times[k].map(time).unwrap_or_else(|| "—".into())
            } else {
                cell(ratio(m, k, BASELINE))
            };
            write!(md, " {shown} |")?;
        }
        writeln!(md, " {} |", cell(ratio(m, REVERSE, HAND)))?;
    }
    writeln!(
        md,
        "\n(The num-dual column is its time; the others are ratios to it.)\n"
    )?;
    writeln!(md, "## Allocations per call\n")?;
    writeln!(
        md,
        "| scenario | {} |\n|---|{}",
        METHODS.join(" | "),
        "---:|".repeat(METHODS.len())
    )?;
    for m in measured {
        let cells: Vec<String> = m
            .allocations
            .iter()
            .map(|a| a.map_or("—".into(), |a| a.to_string()))
            .collect();
        writeln!(md, "| `{}` | {} |", m.name, cells.join(" | "))?;
    }
    // The sections other benchmarks write (peers, second derivatives,
    // compile time) stay.
    let previous = std::fs::read_to_string("docs/benchmarks.md").unwrap_or_default();
    for (begin, end) in [
        ("<!-- peers: begin -->", "<!-- peers: end -->"),
        (
            "<!-- second derivatives: begin -->",
            "<!-- second derivatives: end -->",
        ),
        ("<!-- compile time: begin -->", "<!-- compile time: end -->"),
    ] {
        if let (Some(b), Some(e)) = (previous.find(begin), previous.find(end)) {
            writeln!(md, "\n{}", &previous[b..e + end.len()])?;
        }
    }
    std::fs::write("docs/benchmarks.md", md)?;
    plot_per_scenario(measured)?;
    plot_spread(measured)?;
    Ok(())
}

const COLOURS: [RGBColor; 6] = [
    RGBColor(120, 120, 120),
    RGBColor(0, 0, 0),
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
];

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    (lo.min(0.5) / 1.5, hi.max(2.0) * 1.5)
}

/// Each method's time over num-dual's, per scenario (log scale).
fn plot_per_scenario(measured: &[Measured]) -> Result<(), Box<dyn std::error::Error>> {
    let rows: Vec<&Measured> = measured
        .iter()
        .filter(|m| m.times[BASELINE].is_some())
        .collect();
    let points: Vec<(usize, usize, f64)> = rows
        .iter()
        .enumerate()
        .flat_map(|(i, m)| {
            (0..METHODS.len()).filter_map(move |k| Some((i, k, ratio(m, k, BASELINE)?)))
        })
        .collect();
    let (lo, hi) = bounds(points.iter().map(|p| p.2));
    let root = SVGBackend::new("docs/benchmarks/per-scenario.svg", (960, 540)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "time / num-dual time, per scenario (log scale)",
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(140)
        .y_label_area_size(50)
        .build_cartesian_2d(-0.5..rows.len() as f64 - 0.5, (lo..hi).log_scale())?;
    let names: Vec<&str> = rows.iter().map(|m| m.name).collect();
    chart
        .configure_mesh()
        .x_labels(rows.len())
        .x_label_formatter(&|x| {
            names
                .get(x.round() as usize)
                .map_or(String::new(), |n| n.to_string())
        })
        .x_label_style(
            ("sans-serif", 11)
                .into_font()
                .transform(FontTransform::Rotate90),
        )
        .y_desc("time / num-dual")
        .draw()?;
    for (k, method) in METHODS.iter().enumerate() {
        let colour = COLOURS[k];
        chart
            .draw_series(points.iter().filter(|p| p.1 == k).map(move |&(i, _, r)| {
                Circle::new((i as f64 + (k as f64 - 2.5) * 0.08, r), 4, colour.filled())
            }))?
            .label(*method)
            .legend(move |(x, y)| Circle::new((x, y), 4, colour.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// The spread of each method's ratios over the scenarios (log scale).
fn plot_spread(measured: &[Measured]) -> Result<(), Box<dyn std::error::Error>> {
    let points: Vec<(usize, usize, f64)> = measured
        .iter()
        .enumerate()
        .flat_map(|(i, m)| {
            (0..METHODS.len()).filter_map(move |k| Some((k, i, ratio(m, k, BASELINE)?)))
        })
        .collect();
    let (lo, hi) = bounds(points.iter().map(|p| p.2));
    let root = SVGBackend::new("docs/benchmarks/spread.svg", (720, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "spread of time / num-dual over the scenarios (log scale)",
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(-0.5..METHODS.len() as f64 - 0.5, (lo..hi).log_scale())?;
    chart
        .configure_mesh()
        .x_labels(METHODS.len())
        .x_label_formatter(&|x| {
            METHODS
                .get(x.round() as usize)
                .map_or(String::new(), |n| n.to_string())
        })
        .y_desc("time / num-dual")
        .draw()?;
    let count = measured.len().max(1) as f64;
    chart.draw_series(points.iter().map(|&(k, i, r)| {
        // Spread the points of one method sideways by scenario.
        let x = k as f64 + (i as f64 / count - 0.5) * 0.5;
        Circle::new((x, r), 3, COLOURS[k].filled())
    }))?;
    root.present()?;
    Ok(())
}
