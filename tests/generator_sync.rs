//! The generated test files are what the generators write for their seeds
//! and counts; `UPDATE_PROGRAMS=1 cargo test --test generator_sync`
//! rewrites them.

mod generator;

use generator::nested;

/// Compares (or with `UPDATE_PROGRAMS`, rewrites) one generated file.
fn in_sync(file: &str, expected: String) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    if std::env::var_os("UPDATE_PROGRAMS").is_some() {
        std::fs::write(&path, &expected).unwrap_or_else(|e| panic!("write {file}: {e}"));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "{file} differs from the generator's output; regenerate it with \
         `UPDATE_PROGRAMS=1 cargo test --test generator_sync`"
    );
}

#[test]
fn committed_programs_are_what_the_generator_writes() {
    in_sync(
        "tests/generated/programs.rs",
        generator::file(generator::SEED, generator::COUNT),
    );
}

#[test]
fn committed_nested_programs_are_what_the_generator_writes() {
    in_sync(
        "tests/generated/nested_programs.rs",
        nested::file(nested::SEED, nested::COUNT),
    );
}
