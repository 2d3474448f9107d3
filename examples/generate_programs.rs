//! Writes `--count` random `#[differentiable]` programs from `--seed` into a
//! scratch crate under `target/generated-programs/` and runs its tests:
//! each program is checked against finite differences and forward mode
//! against reverse mode (the generator and checks of
//! `tests/generated_programs.rs`, at any seed and size).
//!
//! ```text
//! cargo run --example generate_programs -- --seed 7 --count 2000
//! ```
//!
//! A failure names the program (`programs::p123`); its source is in
//! `target/generated-programs/tests/generated/programs.rs`. Reduce it and
//! add it to `tests/control_flow.rs` as a named regression test.

#[path = "../tests/generator/mod.rs"]
mod generator;

use std::path::Path;
use std::process::{exit, Command};

const HARNESS: &str = include_str!("../tests/generator/harness.rs");
const ROOT: &str = include_str!("../tests/generated_programs.rs");

fn main() {
    let mut seed = 1u64;
    let mut count = 1000usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_default();
        match arg.as_str() {
            "--seed" => seed = value.parse().expect("--seed takes an integer"),
            "--count" => count = value.parse().expect("--count takes an integer"),
            other => {
                eprintln!("unknown argument {other}; usage: --seed S --count N");
                exit(2);
            }
        }
    }
    let project = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = project.join("target/generated-programs");
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent directory"))
            .expect("create directories");
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    };
    write(
        "Cargo.toml",
        &format!(
            "[package]\nname = \"ad-generated-programs\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\nad = {{ path = {:?} }}\n\n[workspace]\n",
            project.display().to_string()
        ),
    );
    write("src/lib.rs", "");
    write("tests/generated_programs.rs", ROOT);
    write("tests/generator/harness.rs", HARNESS);
    write("tests/generated/programs.rs", &generator::file(seed, count));
    println!(
        "{count} programs from seed {seed} in {}; compiling and checking them",
        dir.display()
    );
    let status = Command::new(env!("CARGO"))
        .args(["test", "--test", "generated_programs", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .status()
        .expect("run cargo test");
    exit(status.code().unwrap_or(1));
}
