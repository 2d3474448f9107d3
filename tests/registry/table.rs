//! The support table, rendered from the registry: a summary per family
//! for the README and the full list for `docs/support.md`.

use super::{Family, Mode, Scenario, Status};

/// The command that rewrites both files from the registry.
pub const REGENERATE: &str = "UPDATE_SUPPORT=1 cargo test --test scenarios support_table";

/// Where the README's copy of the summary starts and ends.
pub const README_BEGIN: &str = "<!-- support table: begin (generated from tests/registry) -->";
pub const README_END: &str = "<!-- support table: end -->";

fn counts(scenarios: &[&Scenario], mode: Mode) -> String {
    let (mut works, mut broken, mut skipped) = (0, 0, 0);
    for s in scenarios {
        match s.status(mode) {
            Status::Works => works += 1,
            Status::Broken(_) => broken += 1,
            Status::Skipped(_) => skipped += 1,
        }
    }
    let mut cell = format!("{works}");
    if broken > 0 {
        cell += &format!(" · {broken} broken");
    }
    if skipped > 0 {
        cell += &format!(" · {skipped} skipped");
    }
    cell
}

/// Scenarios per family and mode: working, declared broken, skipped.
pub fn summary(scenarios: &[Scenario]) -> String {
    let mut out = String::from(
        "| family | scenarios | reverse (`f_grad`) | pullback (`f_vjp`) | forward (`f_jvp`) |\n\
         |---|---:|---|---|---|\n",
    );
    let mut families: Vec<Family> = scenarios.iter().map(|s| s.family).collect();
    families.dedup();
    let mut row = |title: &str, group: Vec<&Scenario>| {
        out += &format!("| {title} | {} |", group.len());
        for mode in Mode::ALL {
            out += &format!(" {} |", counts(&group, mode));
        }
        out += "\n";
    };
    for family in families {
        row(
            family.title(),
            scenarios.iter().filter(|s| s.family == family).collect(),
        );
    }
    row("**all**", scenarios.iter().collect());
    out
}

fn cell(status: Status, notes: &mut Vec<String>) -> String {
    let (word, reason) = match status {
        Status::Works => return "✓".into(),
        Status::Broken(reason) => ("broken", reason),
        Status::Skipped(reason) => ("skipped", reason),
    };
    let number = match notes.iter().position(|n| n == reason) {
        Some(i) => i + 1,
        None => {
            notes.push(reason.to_string());
            notes.len()
        }
    };
    format!("{word} [{number}]")
}

/// `docs/support.md`: the summary, then every scenario with its sizes,
/// reference and status per mode, then the reasons.
pub fn document(scenarios: &[Scenario]) -> String {
    let mut out = format!(
        "# Support table\n\n\
         Generated from the scenario registry (`tests/registry/`) by\n\
         `{REGENERATE}`; the test fails when this file differs from what the\n\
         registry renders. Every scenario runs in `cargo test` (`tests/scenarios.rs`)\n\
         at each of its sizes: the value beside each derivative equals the primal's;\n\
         derivatives match central finite differences at one of several steps and\n\
         the hand-written gradient where there is one; forward and reverse mode\n\
         pass the dot-product test. A scenario declared broken is run and must fail;\n\
         a skipped one is listed, not run. The last column says whether the\n\
         benchmarks' forward-mode baseline (`num-dual`, see `docs/benchmarks.md`)\n\
         has a version of it.\n\n\
         ## Summary\n\n{}\n## Scenarios\n\n\
         | scenario | family | sizes | reference | reverse | pullback | forward | num-dual baseline |\n\
         |---|---|---|---|---|---|---|---|\n",
        summary(scenarios)
    );
    let mut notes = Vec::new();
    for s in scenarios {
        let sizes: Vec<String> = s.sizes.iter().map(|n| n.to_string()).collect();
        let reference = match (s.hand_written, s.finite_differences) {
            (true, true) => "hand-written, finite differences",
            (true, false) => "hand-written (`stop_gradient` changes the derivative)",
            (false, _) => "finite differences",
        };
        out += &format!(
            "| `{}` | {} | {} | {reference} | {} | {} | {} | {} |\n",
            s.name,
            s.family.title(),
            sizes.join(", "),
            cell(s.reverse, &mut notes),
            cell(s.pullback, &mut notes),
            cell(s.forward, &mut notes),
            if s.dual { "✓" } else { "—" },
        );
    }
    if !notes.is_empty() {
        out += "\n## Reasons\n\n";
        for (i, note) in notes.iter().enumerate() {
            out += &format!("{}. {note}\n", i + 1);
        }
    }
    out
}

/// `readme` with the text between the markers replaced by `summary`.
pub fn splice_readme(readme: &str, summary: &str) -> Option<String> {
    let begin = readme.find(README_BEGIN)? + README_BEGIN.len();
    let end = readme.find(README_END)?;
    Some(format!(
        "{}\n\n{summary}\n{}",
        &readme[..begin],
        &readme[end..]
    ))
}
