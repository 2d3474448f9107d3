//! One error context for the front end: passes push errors and go on, so a
//! function with several mistakes reports all of them in one build.

use std::cell::RefCell;
use std::fmt::Display;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

#[derive(Default)]
pub struct Errors {
    errors: RefCell<Vec<syn::Error>>,
}

impl Errors {
    pub fn push(&self, error: syn::Error) {
        self.errors.borrow_mut().push(error);
    }

    /// An error spanning the tokens of `node`.
    pub fn at<T: ToTokens, M: Display>(&self, node: T, message: M) {
        self.push(syn::Error::new_spanned(node, message));
    }

    pub fn at_span<M: Display>(&self, span: Span, message: M) {
        self.push(syn::Error::new(span, message));
    }

    pub fn is_empty(&self) -> bool {
        self.errors.borrow().is_empty()
    }

    /// All errors as `compile_error!` invocations, each once (a pass may
    /// read the same code twice).
    pub fn into_compile_errors(self) -> TokenStream {
        let mut seen = std::collections::HashSet::new();
        self.errors
            .into_inner()
            .into_iter()
            .filter(|e| seen.insert((e.to_string(), format!("{:?}", e.span()))))
            .map(|e| e.to_compile_error())
            .collect()
    }
}
