//! The attribute's options: `#[differentiable]`, `#[differentiable(reverse)]`,
//! `#[differentiable(forward)]`.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Ident, Token};

use super::errors::Errors;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modes {
    pub reverse: bool,
    pub forward: bool,
}

pub fn parse(attr: TokenStream, errors: &Errors) -> Modes {
    if attr.is_empty() {
        return Modes {
            reverse: true,
            forward: true,
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
            };
        }
    };
    let mut modes = Modes {
        reverse: false,
        forward: false,
    };
    for ident in &idents {
        match ident.to_string().as_str() {
            "reverse" => modes.reverse = true,
            "forward" => modes.forward = true,
            other => errors.at(
                ident,
                format!(
                    "unknown option `{other}`: `#[differentiable]` takes `reverse` (only `_grad` and `_vjp`) or `forward` (only `_jvp`)"
                ),
            ),
        }
    }
    if !modes.reverse && !modes.forward {
        modes = Modes {
            reverse: true,
            forward: true,
        };
    }
    modes
}
