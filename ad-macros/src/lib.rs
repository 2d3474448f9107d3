//! The proc macros of `ad`. This file is a shim: the compiler lives in
//! [`compiler`], which works on `proc_macro2` tokens so the expansion
//! snapshot tests can run it outside the compiler.

use proc_macro::TokenStream;

mod compiler;

/// Adds reverse-mode (`f_grad`, `f_vjp`) and forward-mode (`f_jvp`)
/// derivatives of the function it is placed on. See the `ad` crate docs.
/// Makes a struct of differentiable fields usable as a parameter: it gets a
/// tangent type `{Name}Tangent` with the same fields. Mark fields that need
/// no derivative `#[constant]`.
#[proc_macro_derive(Differentiable, attributes(constant))]
pub fn derive_differentiable(item: TokenStream) -> TokenStream {
    compiler::derive_differentiable(item.into()).into()
}

#[proc_macro_attribute]
pub fn differentiable(attr: TokenStream, item: TokenStream) -> TokenStream {
    compiler::differentiable(attr.into(), item.into()).into()
}
