//! What `#[differentiable]` costs at compile time: the macro's expansion
//! time and the generated lines per primal line for every registry scenario
//! and model, and the clean build time of a small crate that depends on `ad`.
//!
//! `cargo bench --bench compile_cost` (about a minute) writes the section
//! between the compile-time markers of `docs/benchmarks.md`.

#[path = "../ad-macros/src/compiler/mod.rs"]
#[allow(dead_code, unused_imports)]
mod compiler;

#[path = "common/sections.rs"]
mod sections;

#[path = "../tests/expand/long_function.rs"]
mod long_function;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::quote;

/// `(scenario or function name, the function)` for every `#[differentiable]`
/// function in `source`: free functions and those inside `scenario!`.
fn differentiable_functions(source: &str) -> Vec<(String, syn::ItemFn)> {
    let file: syn::File = syn::parse_str(source).expect("the source parses");
    let mut out = Vec::new();
    for item in file.items {
        match item {
            syn::Item::Fn(mut f) if f.attrs.iter().any(|a| a.path().is_ident("differentiable")) => {
                f.attrs.clear();
                out.push((f.sig.ident.to_string(), f));
            }
            syn::Item::Macro(m) if m.mac.path.is_ident("scenario") => {
                let tokens: Vec<TokenTree> = m.mac.tokens.into_iter().collect();
                let name = tokens.get(1).map(|t| t.to_string()).unwrap_or_default();
                if let Some(f) = function_after_attribute(&tokens) {
                    out.push((name, f));
                }
            }
            _ => {}
        }
    }
    out
}

/// The function that follows `#[differentiable]` in a token list: tokens up
/// to and including the first brace group (the body).
fn function_after_attribute(tokens: &[TokenTree]) -> Option<syn::ItemFn> {
    let at = tokens.windows(2).position(|w| {
        matches!(&w[0], TokenTree::Punct(p) if p.as_char() == '#')
            && matches!(&w[1], TokenTree::Group(g) if g.stream().to_string() == "differentiable")
    })?;
    let mut function = TokenStream::new();
    for t in &tokens[at + 2..] {
        function.extend([t.clone()]);
        if matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Brace) {
            break;
        }
    }
    syn::parse2(function).ok()
}

fn lines(tokens: TokenStream) -> usize {
    let file: syn::File = syn::parse2(tokens).expect("items");
    prettyplease::unparse(&file)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
}

struct Cost {
    name: String,
    expansion_us: f64,
    primal_lines: usize,
    generated_lines: usize,
}

fn measure(name: String, f: syn::ItemFn) -> Cost {
    let item = quote!(#f);
    let primal_lines = lines(item.clone());
    let expanded = compiler::differentiable(TokenStream::new(), item.clone());
    let generated_lines = lines(expanded).saturating_sub(primal_lines);
    // Enough repetitions for a stable mean of a sub-millisecond call.
    let runs = 200;
    let start = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(compiler::differentiable(TokenStream::new(), item.clone()));
    }
    Cost {
        name,
        expansion_us: start.elapsed().as_secs_f64() * 1e6 / runs as f64,
        primal_lines,
        generated_lines,
    }
}

/// Milliseconds the macro takes on a straight-line function of `n`
/// statements (best of three).
fn long_expansion_ms(n: usize) -> f64 {
    let item = long_function::long_function(n);
    (0..3)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(compiler::differentiable(TokenStream::new(), item.clone()));
            start.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

/// Seconds to build, from nothing, a crate with one `#[differentiable]`
/// function and `ad` as its only dependency.
fn clean_build_seconds(root: &Path) -> Option<f64> {
    let dir = root.join("target/compile-cost");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).ok()?;
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"uses-ad\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
             [dependencies]\nad = {{ path = {:?} }}\n\n[workspace]\n",
            root.display().to_string()
        ),
    )
    .ok()?;
    std::fs::write(
        dir.join("src/lib.rs"),
        "use ad::differentiable;\nuse ad::ndarray::Array1;\n\n\
         #[differentiable]\npub fn loss(w: &Array1<f64>, #[constant] x: &Array1<f64>) -> f64 {\n    \
         (w * x).mapv(f64::tanh).sum()\n}\n",
    )
    .ok()?;
    let start = Instant::now();
    let status = Command::new(env!("CARGO"))
        .args(["build", "--offline", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .status()
        .ok()?;
    status.success().then(|| start.elapsed().as_secs_f64())
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return; // run by `cargo test --benches`: nothing to check
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut costs = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(root.join("tests/registry"))
        .expect("tests/registry")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    files.push(root.join("examples/models/mod.rs"));
    files.push(root.join("examples/json_bags/model.rs"));
    for path in files {
        let source = std::fs::read_to_string(&path).expect("a source file");
        for (name, f) in differentiable_functions(&source) {
            costs.push(measure(name, f));
        }
    }
    let build = clean_build_seconds(root);
    let long: Vec<(usize, f64)> = [250, 500, 1000, 2000]
        .into_iter()
        .map(|n| (n, long_expansion_ms(n)))
        .collect();

    let total_primal: usize = costs.iter().map(|c| c.primal_lines).sum();
    let total_generated: usize = costs.iter().map(|c| c.generated_lines).sum();
    let mean_us = costs.iter().map(|c| c.expansion_us).sum::<f64>() / costs.len() as f64;
    let mut section = format!(
        "## Compile time\n\n\
         Written by `cargo bench --bench compile_cost`. Expansion time is one call of\n\
         the macro's compiler on the function (release build, mean of 200); lines are\n\
         counted after formatting with prettyplease, blank lines excluded; generated\n\
         lines are the `_grad`, `_vjp` and `_jvp` functions together.\n\n\
         - {} functions (every registry scenario with its own function, the shared\n  \
         models and the showcase model): mean expansion {mean_us:.0} µs; {total_generated}\n  \
         generated lines for {total_primal} primal lines ({:.1} per primal line).\n\
         - Clean debug build of a crate with one `#[differentiable]` function and `ad`\n  \
         as its only dependency: {}. For comparison, the issue gives about 110 s for\n  \
         candle, 215 s for burn and 19 s for ndarray with num-dual on this machine.\n\
         - Long functions (straight-line code of n statements; README, \"Long\n  \
         functions\"): expansion {}.\n\n\
         | function | expansion | primal lines | generated lines | per primal line |\n\
         |---|---:|---:|---:|---:|\n",
        costs.len(),
        total_generated as f64 / total_primal.max(1) as f64,
        build.map_or("failed".to_string(), |s| format!("{s:.0} s")),
        long.iter()
            .map(|(n, ms)| format!("{ms:.0} ms at n = {n}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    for c in &costs {
        section += &format!(
            "| `{}` | {:.0} µs | {} | {} | {:.1} |\n",
            c.name,
            c.expansion_us,
            c.primal_lines,
            c.generated_lines,
            c.generated_lines as f64 / c.primal_lines.max(1) as f64
        );
    }
    println!("{section}");
    sections::write(root, "compile time", &section);
}
