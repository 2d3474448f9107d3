//! `#[differentiable(nested)]`: the derivatives of `f_jvp` itself, so that
//! differentiable code may call `f_jvp` (reverse or forward mode over
//! forward mode: a Hessian-vector product, the force of a potential
//! differentiated along a path).
//!
//! The pass writes forward mode as IR rather than as tokens: each
//! instruction is followed by the instructions of its tangent, made of
//! the same operations (`d_y = cos(x) * d_x` for `y = sin(x)`), branches
//! and loops carry each variable's tangent beside it, and the result is
//! the pair `(y, d_y)`. That IR is `f_jvp`'s body, with `f_jvp`'s
//! signature, and the ordinary reverse and forward passes then emit
//! `f_jvp_vjp` and `f_jvp_jvp` from it.
//!
//! A call `g(args)` becomes a call of `g_jvp`, whose own derivatives the
//! outer passes then call: `g` needs `#[differentiable(nested)]` too.
//!
//! `f_grad` is written as IR too (`adjoints.rs`; `branches.rs` for `if`s,
//! `loops.rs` for loops), and `f_grad_vjp`, `f_grad_jvp` emitted from it:
//! reverse or forward mode over reverse mode. A body it does not cover
//! keeps the ordinary `f_grad`.
//!
//! Scalar code only for now: the active parameters and the result are
//! floats; arrays, tuples and closures are reported.

mod adjoints;
mod branches;
mod loops;
mod rules;
mod tangents;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use syn::Type;

use super::emit;
use super::errors::Errors;
use super::lower;
use super::options::Modes;
use super::signature::{self, Signature};
use tangents::Tangents;

/// Both modes of derivatives, of `f_jvp` and of `f_grad`.
const BOTH: Modes = Modes {
    reverse: true,
    forward: true,
    nested: false,
};

/// What `nested` emits.
pub struct Nested {
    pub items: TokenStream,
    /// `f_grad` is among the items (written as IR, differentiable again),
    /// so the ordinary passes must not emit their own.
    pub grad: bool,
}

/// `f_jvp`, `f_jvp_vjp` and `f_jvp_jvp`, or stubs of them after an error;
/// and, in reverse mode, `f_grad`, `f_grad_vjp` and `f_grad_jvp` where
/// `adjoints.rs` covers the body.
///
/// `f_jvp` is emitted from the same IR its derivatives are, not by the
/// ordinary forward pass: the two order a rule's products differently, and
/// a function calling `f_jvp` must get the same value from its gradient as
/// from itself. The same holds of `f_grad`.
pub fn derivatives(sig: &Signature, reverse: bool, errors: &Errors) -> Nested {
    let forward_only = Modes {
        reverse: false,
        ..BOTH
    };
    let failed = |items| Nested { items, grad: false };
    let Some(scalar) = scalar_type(sig, errors) else {
        return failed(emit::stubs(sig, forward_only));
    };
    let Ok(jvp_sig) = signature::parse(jvp_item(sig), errors) else {
        return failed(emit::stubs(sig, forward_only));
    };
    let stubs = || {
        let mut out = emit::stubs(sig, forward_only);
        out.extend(emit::stubs(&jvp_sig, BOTH));
        failed(out)
    };
    let f = lower::lower(sig, errors);
    if !errors.is_empty() {
        return stubs();
    }
    let jvp = Tangents::new(&f, &scalar, errors).function(f, &jvp_sig);
    if !errors.is_empty() {
        return stubs();
    }
    let doc = format!(
        "The value of [`{}`] and its directional derivative along the given tangents (forward mode; differentiable again: `{}_vjp`, `{}_jvp`).",
        sig.name(),
        jvp_sig.name(),
        jvp_sig.name(),
    );
    let mut items = emit::primal_function(&jvp_sig, &jvp, &doc);
    items.extend(emit::derivatives(&jvp_sig, &jvp, BOTH));
    let grad = reverse.then(|| gradient(sig, &scalar, errors)).flatten();
    let emitted = grad.is_some();
    items.extend(grad);
    Nested {
        items,
        grad: emitted,
    }
}

/// `f_grad` from its IR and that IR's derivatives, when `adjoints.rs`
/// covers the body. What it does not cover is reported to a scratch error
/// list and dropped: the ordinary `f_grad` serves instead.
fn gradient(sig: &Signature, scalar: &Ident, errors: &Errors) -> Option<TokenStream> {
    let grad_sig = signature::parse(grad_item(sig), errors).ok()?;
    let f = lower::lower(sig, errors);
    let uncovered = Errors::default();
    let grad = Tangents::new(&f, scalar, &uncovered).gradient(f)?;
    if !uncovered.is_empty() {
        return None;
    }
    let doc = format!(
        "The value of [`{}`] and its gradient with respect to each parameter (reverse mode; differentiable again: `{}_vjp`, `{}_jvp`).",
        sig.name(),
        grad_sig.name(),
        grad_sig.name(),
    );
    let mut out = emit::primal_function(&grad_sig, &grad, &doc);
    out.extend(emit::derivatives(&grad_sig, &grad, BOTH));
    Some(out)
}

/// The float type of the function, when its active parameters and its
/// result are all of it.
fn scalar_type(sig: &Signature, errors: &Errors) -> Option<Ident> {
    let floats = signature::float_types(&sig.item.sig.generics);
    let Some(scalar) = signature::scalar_type(sig, &floats) else {
        errors.at(
            &sig.item.sig.ident,
            "`#[differentiable(nested)]` needs one float type (`f64`, `f32` or `F: ad::Float`) for the parameters and the result",
        );
        return None;
    };
    let is_scalar = |ty: &Type| matches!(ty, Type::Path(p) if p.path.is_ident(&scalar));
    let mut fine = true;
    for p in sig.params.iter().filter(|p| p.active) {
        if !is_scalar(&p.ty) {
            errors.at(
                &p.ty,
                format!("`#[differentiable(nested)]` takes active parameters of type `{scalar}` only (for now): mark this one `#[constant]`, or pass its parts as `{scalar}`s"),
            );
            fine = false;
        }
    }
    if !is_scalar(&sig.ret) {
        errors.at(
            &sig.ret,
            format!("`#[differentiable(nested)]` returns one `{scalar}` only (for now): return each part from a function of its own"),
        );
        fine = false;
    }
    fine.then_some(scalar)
}

/// The name of a parameter's tangent in `f_jvp`'s signature.
fn tangent_name(ident: &Ident) -> Ident {
    format_ident!("d_{}", ident)
}

/// A parameter of a derived item as the user declared it: `#[constant]`
/// again where the signature parse removed the marker.
fn declared(p: &signature::Param) -> TokenStream {
    let (pat, ty) = (&p.pat, &p.ty);
    let marker = (!p.active && !signature::inactive_by_type(ty)).then(|| quote!(#[constant]));
    quote!(#marker #pat: #ty)
}

/// `f_jvp` as a function to differentiate: the parameters, then one
/// tangent per parameter (`#[constant] ad::NoTangent` for an inactive one),
/// returning `(value, tangent)`. Its body is never read.
fn jvp_item(sig: &Signature) -> syn::ItemFn {
    let vis = &sig.item.vis;
    let name = sig.derived_name("jvp");
    let generics = &sig.item.sig.generics;
    let where_clause = &generics.where_clause;
    let mut params = Vec::new();
    let mut tangents = Vec::new();
    for (p, tangent_ty) in sig.params.iter().zip(sig.tangent_param_types()) {
        params.push(declared(p));
        let tangent = match &p.ident {
            Some(ident) => tangent_name(ident),
            None => format_ident!("d_{}", params.len()),
        };
        tangents.push(if p.active {
            quote!(#tangent: #tangent_ty)
        } else {
            quote!(#[constant] #tangent: ::ad::NoTangent)
        });
    }
    let (ret, ret_tangent) = (&sig.ret, sig.ret_tangent());
    syn::parse_quote! {
        #vis fn #name #generics (#(#params,)* #(#tangents),*) -> (#ret, #ret_tangent) #where_clause {
            ::core::unreachable!()
        }
    }
}

/// `f_grad` as a function to differentiate: the parameters, returning
/// `(value, (g1, ..., gn))`, each gradient of the result's type. Its body
/// is never read.
fn grad_item(sig: &Signature) -> syn::ItemFn {
    let vis = &sig.item.vis;
    let name = sig.derived_name("grad");
    let generics = &sig.item.sig.generics;
    let where_clause = &generics.where_clause;
    let params = sig.params.iter().map(declared);
    let ret = &sig.ret;
    let gradients = sig.params.iter().map(|p| {
        if p.active {
            quote!(#ret)
        } else {
            quote!(::ad::NoTangent)
        }
    });
    syn::parse_quote! {
        #vis fn #name #generics (#(#params),*) -> (#ret, (#(#gradients,)*)) #where_clause {
            ::core::unreachable!()
        }
    }
}
