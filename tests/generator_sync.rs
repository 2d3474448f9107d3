//! `tests/generated/programs.rs` is what the generator writes for its seed
//! and count; `UPDATE_PROGRAMS=1 cargo test --test generator_sync`
//! rewrites it.

mod generator;

#[test]
fn committed_programs_are_what_the_generator_writes() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/generated/programs.rs");
    let expected = generator::file(generator::SEED, generator::COUNT);
    if std::env::var_os("UPDATE_PROGRAMS").is_some() {
        std::fs::write(&path, &expected).expect("write tests/generated/programs.rs");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "tests/generated/programs.rs differs from the generator's output; regenerate it with \
         `UPDATE_PROGRAMS=1 cargo test --test generator_sync`"
    );
}
