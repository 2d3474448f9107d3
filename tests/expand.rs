//! Expansion snapshots: the derivative code `#[differentiable]` writes for
//! representative functions, formatted with prettyplease. Each snapshot is
//! what a user would read; review changes to them as code changes.
//!
//! The compiler is compiled into this test through a path include, as a
//! proc-macro crate cannot export functions.

#[path = "../ad-macros/src/compiler/mod.rs"]
#[allow(dead_code, unused_imports)]
mod compiler;

#[path = "expand/long_function.rs"]
mod long_function;

use proc_macro2::TokenStream;
use quote::quote;

/// The expansion of `#[differentiable(attr)] item`, formatted.
fn expand(attr: TokenStream, item: TokenStream) -> String {
    let out = compiler::differentiable(attr, item);
    let file: syn::File = syn::parse2(out).expect("the expansion parses as items");
    prettyplease::unparse(&file)
}

macro_rules! snapshot {
    ($name:ident, [$($attr:tt)*], $($item:tt)*) => {
        #[test]
        fn $name() {
            let code = expand(quote!($($attr)*), quote!($($item)*));
            insta::assert_snapshot!(stringify!($name), code);
        }
    };
}

/// The expansion of a function as it stands in one of the project's own
/// source files (the models the examples, benches and tests share), so the
/// snapshot follows the code it documents. Its attributes and visibility are
/// dropped: the snapshot gives its own options.
macro_rules! snapshot_of {
    ($name:ident, [$($attr:tt)*], $file:literal, $function:literal) => {
        #[test]
        fn $name() {
            let source = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/", $file));
            let code = expand(quote!($($attr)*), function_in(source, $function));
            insta::assert_snapshot!(stringify!($name), code);
        }
    };
}

/// The function `name` of a source file, without attributes or visibility.
fn function_in(source: &str, name: &str) -> TokenStream {
    let file: syn::File = syn::parse_str(source).expect("the source file parses");
    let mut function = file
        .items
        .into_iter()
        .find_map(|item| match item {
            syn::Item::Fn(f) if f.sig.ident == name => Some(f),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no function `{name}` in the file"));
    function.attrs.clear();
    function.vis = syn::Visibility::Inherited;
    quote!(#function)
}

/// The IR the compiler lowers a body to, in its text form.
macro_rules! ir_snapshot {
    ($name:ident, $($item:tt)*) => {
        #[test]
        fn $name() {
            let ir = compiler::dump_ir(quote!($($item)*));
            insta::assert_snapshot!(stringify!($name), ir);
        }
    };
}

/// The output of `#[derive(Differentiable)]`.
macro_rules! derive_snapshot {
    ($name:ident, $($item:tt)*) => {
        #[test]
        fn $name() {
            let out = compiler::derive_differentiable(quote!($($item)*));
            let file: syn::File = syn::parse2(out).expect("the derive output parses as items");
            let code = prettyplease::unparse(&file);
            insta::assert_snapshot!(stringify!($name), code);
        }
    };
}

include!("expand/cases.rs");

/// The most `let`s nested along one path of blocks in `file`: what a debug
/// build makes lexical scopes of, one inside the next.
fn let_depth(file: &syn::File) -> usize {
    struct Depth {
        now: usize,
        most: usize,
    }
    impl<'ast> syn::visit::Visit<'ast> for Depth {
        fn visit_block(&mut self, block: &'ast syn::Block) {
            let outer = self.now;
            for stmt in &block.stmts {
                if matches!(stmt, syn::Stmt::Local(_)) {
                    self.now += 1;
                    self.most = self.most.max(self.now);
                }
                syn::visit::visit_stmt(self, stmt);
            }
            self.now = outer;
        }
    }
    let mut depth = Depth { now: 0, most: 0 };
    syn::visit::Visit::visit_file(&mut depth, file);
    depth.most
}

// A thousand statements: with every `let` as written, the derivatives would
// nest 11,000 scopes, and rustc's debug build overflows its stack near
// 3,000 (`compiler/scopes.rs`; `tests/long_functions.rs` builds a long
// function).
#[test]
fn a_long_body_nests_few_scopes() {
    let item = long_function::long_function(1000);
    let out = compiler::differentiable(quote!(), item);
    let mut file: syn::File = syn::parse2(out).expect("the expansion parses as items");
    // The function as written, which rustc builds as it would without us.
    file.items
        .retain(|item| !matches!(item, syn::Item::Fn(f) if f.sig.ident == "f"));
    assert_eq!(file.items.len(), 3, "f_grad, f_vjp and f_jvp");
    let depth = let_depth(&file);
    assert!(depth < 1000, "the derivatives nest {depth} `let`s");
}
