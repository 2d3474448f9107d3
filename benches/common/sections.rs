//! A section of `docs/benchmarks.md` that one benchmark owns, between
//! `<!-- NAME: begin -->` and `<!-- NAME: end -->`: replaced in place, or
//! appended the first time. The scenarios benchmark, which writes the rest
//! of the page, keeps these sections as they are.

use std::path::Path;

pub fn write(root: &Path, name: &str, section: &str) {
    let path = root.join("docs/benchmarks.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_default();
    let (begin, end) = (
        format!("<!-- {name}: begin -->"),
        format!("<!-- {name}: end -->"),
    );
    let updated = match (doc.find(&begin), doc.find(&end)) {
        (Some(b), Some(e)) => format!("{}{begin}\n{section}\n{}", &doc[..b], &doc[e..]),
        _ => format!("{doc}\n{begin}\n{section}\n{end}\n"),
    };
    std::fs::write(&path, updated).expect("write docs/benchmarks.md");
}
