//! The attribute's options: `#[differentiable]`, `#[differentiable(reverse)]`,
//! `#[differentiable(forward)]`, and `nested` beside either.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Ident, Token};

use super::errors::Errors;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modes {
    pub reverse: bool,
    pub forward: bool,
    /// Also the derivatives of `f_jvp` (`f_jvp_vjp`, `f_jvp_jvp`), so
    /// differentiable code may call it.
    pub nested: bool,
}

pub fn parse(attr: TokenStream, errors: &Errors) -> Modes {
    if attr.is_empty() {
        return Modes {
            reverse: true,
            forward: true,
            nested: false,
        };
    }
    let idents = match Punctuated::<Ident, Token![,]>::parse_terminated.parse2(attr) {
        Ok(idents) => idents,
        Err(e) => {
            errors.at_span(
                e.span(),
                "expected `#[differentiable]`, `#[differentiable(reverse)]` or `#[differentiable(forward)]`",
            );
            return Modes {
                reverse: true,
                forward: true,
                nested: false,
            };
        }
    };
    let mut modes = Modes {
        reverse: false,
        forward: false,
        nested: false,
    };
    for ident in &idents {
        match ident.to_string().as_str() {
            "reverse" => modes.reverse = true,
            "forward" => modes.forward = true,
            "nested" => modes.nested = true,
            other => errors.at(
                ident,
                format!(
                    "unknown option `{other}`: `#[differentiable]` takes `reverse` (only `_grad` and `_vjp`) or `forward` (only `_jvp`), and `nested` (also `_jvp_vjp` and `_jvp_jvp`, the derivatives of `_jvp`)"
                ),
            ),
        }
    }
    if !modes.reverse && !modes.forward {
        modes.reverse = true;
        modes.forward = true;
    }
    // The nested derivatives are those of `f_jvp`, which is then emitted
    // whatever else was asked for.
    modes.forward |= modes.nested;
    modes
}
