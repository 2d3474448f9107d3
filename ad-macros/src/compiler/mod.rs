//! The `#[differentiable]` compiler, one pass per file:
//!
//! ```text
//! options, signature ─> lower (IR) ─> activity ─> reverse / forward ─> emit
//!                   errors collected here ─┘ (checked once, before codegen)
//! ```

mod activity;
mod derive;
mod emit;
mod errors;
mod forward;
mod fused;
mod guard;
mod ir;
mod lower;
mod methods;
mod moves;
mod nested;
mod ops;
mod options;
mod primal;
mod recursion;
mod replay;
mod reverse;
mod reverse_flow;
mod rewritten;
mod scaled;
mod scan;
mod scopes;
mod shapes;
mod signature;
mod valued;

use proc_macro2::TokenStream;
use quote::ToTokens;

use errors::Errors;
use options::Modes;

pub use derive::derive_differentiable;

/// Expands `#[differentiable(attr)] item`.
pub fn differentiable(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item_fn: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = syn::Error::new_spanned(
                &item,
                "`#[differentiable]` goes on a function: `fn f(x: f64) -> f64 { ... }`",
            );
            let mut out = e.to_compile_error();
            out.extend(item);
            return out;
        }
    };
    let errors = Errors::default();
    let modes = options::parse(attr, &errors);
    // A method is compiled as a function of `__ad_self`, then its
    // derivatives are made methods again.
    let Ok(method) = methods::as_function(&item_fn, &errors) else {
        let mut out = methods::as_written(&item_fn);
        out.extend(errors.into_compile_errors());
        return out;
    };
    let is_method = method.is_some();
    let as_written = is_method.then(|| methods::as_written(&item_fn));
    let name = item_fn.sig.ident.clone();
    let sig = match signature::parse(method.unwrap_or(item_fn), &errors) {
        Ok(sig) => sig,
        Err(item) => {
            let mut out = as_written.unwrap_or_else(|| item.to_token_stream());
            out.extend(errors.into_compile_errors());
            return out;
        }
    };
    let compiled = guard::guarded(|| {
        let function = lower::lower(&sig, &errors);
        errors.is_empty().then(|| {
            // `nested` emits `f_jvp` itself, from the IR it differentiates,
            // and `f_grad` too where it can.
            let nested = modes
                .nested
                .then(|| nested::derivatives(&sig, modes.reverse, &errors));
            let plain = Modes {
                forward: modes.forward && !modes.nested,
                ..modes
            };
            let with_grad = !nested.as_ref().is_some_and(|n| n.grad);
            let mut derived = emit::derivatives_but_grad(&sig, &function, plain, with_grad);
            derived.extend(nested.map(|n| n.items));
            derived
        })
    });
    let derived = match compiled {
        Ok(Some(derived)) => scopes::declared_together(derived),
        Ok(None) => emit::stubs(&sig, modes),
        Err(panic) => {
            errors.at(&sig.item.sig.ident, guard::internal_error(&panic));
            emit::stubs(&sig, modes)
        }
    };
    let mut out = as_written.unwrap_or_else(|| sig.item.to_token_stream());
    out.extend(if is_method {
        methods::as_methods(derived, &name)
    } else {
        derived
    });
    out.extend(errors.into_compile_errors());
    out
}

/// The IR of a function as text, for snapshot tests.
#[allow(dead_code)]
pub fn dump_ir(item: TokenStream) -> String {
    let errors = Errors::default();
    let Ok(item_fn) = syn::parse2::<syn::ItemFn>(item) else {
        return "not a function".into();
    };
    match signature::parse(item_fn, &errors) {
        Ok(sig) => lower::lower(&sig, &errors).dump(),
        Err(_) => "no return type".into(),
    }
}
