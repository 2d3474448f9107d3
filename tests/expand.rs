//! Expansion snapshots: the derivative code `#[differentiable]` writes for
//! representative functions, formatted with prettyplease. Each snapshot is
//! what a user would read; review changes to them as code changes.
//!
//! The compiler is compiled into this test through a path include, as a
//! proc-macro crate cannot export functions.

#[path = "../ad-macros/src/compiler/mod.rs"]
#[allow(dead_code, unused_imports)]
mod compiler;

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
