//! Emission: the user's function, then `f_grad`, `f_vjp` and `f_jvp`, or, when
//! the front end reported errors, stubs with the same signatures so the
//! user's other code does not fail with more errors.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};

use super::forward;
use super::ir::{Function, Operand, VarId};
use super::options::Modes;
use super::primal::Gen;
use super::recursion;
use super::reverse;
use super::signature::Signature;

/// Lints the generated functions may trip over by construction: tangent
/// parameters a function does not need, `let mut` on adjoints of
/// parameters, long argument lists.
fn allows() -> TokenStream {
    quote! {
        #[allow(unused_variables, unused_mut, unused_parens, non_snake_case, clippy::all)]
    }
}

struct Parts {
    vis: syn::Visibility,
    generics: syn::Generics,
    params: Vec<TokenStream>,
    ret: Box<syn::Type>,
    ret_tangent: TokenStream,
    gradients: Vec<TokenStream>,
    array_gradients: Vec<bool>,
    captures: TokenStream,
}

fn parts(sig: &Signature) -> Parts {
    Parts {
        vis: sig.item.vis.clone(),
        generics: sig.generics(),
        params: sig.param_decls(),
        ret: sig.ret.clone(),
        ret_tangent: sig.ret_tangent(),
        gradients: sig.gradient_types(),
        array_gradients: sig.array_gradients(),
        captures: sig.captures(),
    }
}

pub fn derivatives(sig: &Signature, f: &Function, modes: Modes) -> TokenStream {
    derivatives_but_grad(sig, f, modes, true)
}

/// [`derivatives`], `f_grad` left out unless `with_grad` (`nested` writes
/// its own).
pub fn derivatives_but_grad(
    sig: &Signature,
    f: &Function,
    modes: Modes,
    with_grad: bool,
) -> TokenStream {
    let g = Gen::new(f);
    let mut out = TokenStream::new();
    if modes.reverse {
        let sig = &Signature {
            boxes_pullbacks: f.is_recursive(),
            ..sig.clone()
        };
        let p = parts(sig);
        let sweeps = reverse::sweeps(&g, sig.forwards_params());
        if with_grad && sig.has_scalar_result() {
            out.extend(grad(sig, &g, &p, &sweeps));
        }
        out.extend(vjp(sig, &g, &p, &sweeps));
    }
    if modes.forward {
        out.extend(jvp(sig, &g, &parts(sig)));
    }
    out
}

fn grad(sig: &Signature, g: &Gen<'_>, p: &Parts, s: &reverse::Sweeps) -> TokenStream {
    let name = sig.derived_name("grad");
    let Parts {
        vis,
        generics,
        params,
        ret,
        gradients: grad_types,
        ..
    } = p;
    let (_, _, where_clause) = generics.split_for_impl();
    let allows = allows();
    let doc = grad_doc(sig);
    let one = one(sig);
    let body = if s.accumulating {
        // `f_vjp` is a wrapper anyway ([`accumulating_vjp_body`]).
        let (vjp, args) = (sig.sibling("vjp"), sig.forwarded_args());
        quote! {
            let (value, pullback) = #vjp(#(#args),*);
            (value, pullback(#one))
        }
    } else {
        let prelude = g.prelude();
        let (forward, reverse, result) = (&s.forward, &s.reverse, &s.result);
        let seed = s.seed.iter().map(|seed| quote!(let #seed: #ret = #one;));
        let gradients = laid_out(g, &p.array_gradients, &s.gradients);
        quote! {
            #prelude
            #(#forward)*
            #(#seed)*
            #(#reverse)*
            (#result, (#(#gradients,)*))
        }
    };
    quote! {
        #[doc = #doc]
        #allows
        #vis fn #name #generics (#(#params),*) -> (#ret, (#(#grad_types,)*)) #where_clause {
            #body
        }
    }
}

fn grad_doc(sig: &Signature) -> String {
    format!(
        "The value of [`{}`] and its gradient with respect to each parameter (reverse mode).",
        sig.name()
    )
}

fn vjp_doc(sig: &Signature) -> String {
    format!(
        "The value of [`{}`] and its pullback, which maps a cotangent of the result to one per parameter (reverse mode).",
        sig.name()
    )
}

/// The value `f_vjp` returns (a copy when the pullback reads it too), and
/// the pullback's parameter (`_` for a constant result).
fn returned_value_and_seed(s: &reverse::Sweeps) -> (TokenStream, TokenStream) {
    let result = &s.result;
    let value = if s.result_read_by_reverse {
        quote!(::core::clone::Clone::clone(&#result))
    } else {
        quote!(#result)
    };
    let seed = match &s.seed {
        Some(seed) => quote!(#seed),
        None => quote!(_),
    };
    (value, seed)
}

/// The seed of a gradient: one of the scalar result's type.
fn one(sig: &Signature) -> TokenStream {
    if sig.has_concrete_scalar_result() {
        quote!(1.0)
    } else {
        let ret = &sig.ret;
        quote!(<#ret as ::ad::Float>::of(1.0))
    }
}

/// The gradients as returned: an array's in standard layout (row-major),
/// whatever layout the reverse sweep left it in (outer products and
/// transposes leave column-major ones), so that `as_slice()` and
/// `into_shape_with_order` work on it as on the parameter.
fn laid_out(g: &Gen<'_>, arrays: &[bool], gradients: &[TokenStream]) -> Vec<TokenStream> {
    let r = &g.rules;
    arrays
        .iter()
        .zip(gradients)
        .map(|(&array, gradient)| {
            if array {
                quote!(#r::standard_layout(#gradient))
            } else {
                gradient.clone()
            }
        })
        .collect()
}

fn vjp(sig: &Signature, g: &Gen<'_>, p: &Parts, s: &reverse::Sweeps) -> TokenStream {
    let name = sig.derived_name("vjp");
    let Parts {
        vis,
        generics,
        params,
        ret,
        ret_tangent,
        gradients: grad_types,
        captures,
        ..
    } = p;
    let (_, _, where_clause) = generics.split_for_impl();
    let allows = allows();
    let doc = vjp_doc(sig);
    let mut sibling = TokenStream::new();
    let body = if s.accumulating {
        let (inner, body) = accumulating_vjp(sig, g, p, s);
        // An inner function of a method could not name `Self`.
        if sig.is_method() {
            sibling = quote!(#[doc(hidden)] #inner);
            body
        } else {
            quote!(#inner #body)
        }
    } else {
        let prelude = g.prelude();
        let (forward, reverse, recompute) = (&s.forward, &s.reverse, &s.recompute);
        let (value, seed) = returned_value_and_seed(s);
        let gradients = laid_out(g, &p.array_gradients, &s.gradients);
        quote! {
            #prelude
            #(#forward)*
            (#value, move |#seed: #ret_tangent| {
                #(#recompute)*
                #(#reverse)*
                (#(#gradients,)*)
            })
        }
    };
    quote! {
        #[doc = #doc]
        #allows
        #vis fn #name #generics (#(#params),*)
            -> (#ret, impl ::core::ops::FnOnce(#ret_tangent) -> (#(#grad_types,)*) + #captures)
            #where_clause
        {
            #body
        }
        #sibling
    }
}

/// For a recursive function whose pullbacks add into their caller's
/// adjoints ([`super::recursion`]): the function the sweeps go into,
/// which the calls of itself call, and the body of `f_vjp`, which hands
/// its pullback adjoints that start empty.
fn accumulating_vjp(
    sig: &Signature,
    g: &Gen<'_>,
    p: &Parts,
    s: &reverse::Sweeps,
) -> (TokenStream, TokenStream) {
    let inner = sig.derived_name(recursion::SUFFIX);
    let call = sig.sibling(recursion::SUFFIX);
    let (generics, params, ret, ret_tangent) = (&p.generics, &p.params, &p.ret, &p.ret_tangent);
    let (_, _, where_clause) = generics.split_for_impl();
    let (prelude, allows) = (g.prelude(), allows());
    let (forward, reverse, recompute) = (&s.forward, &s.reverse, &s.recompute);
    let settled = &s.settled;
    let (value, seed) = returned_value_and_seed(s);
    let active: Vec<(VarId, &TokenStream)> =
        g.f.params
            .iter()
            .zip(&p.gradients)
            .filter_map(|(v, ty)| Some(((*v)?, ty)))
            .collect();
    let acc_types = active
        .iter()
        .map(|(_, ty)| quote!(&mut ::core::option::Option<#ty>));
    let acc_params = active.iter().map(|(v, ty)| {
        let acc = recursion::accumulator(g, *v);
        quote!(#acc: &mut ::core::option::Option<#ty>)
    });
    let bars: Vec<Ident> = active.iter().map(|(v, _)| g.bar(*v)).collect();
    let lt = sig.pullback_lifetime();
    let args = sig.forwarded_args();
    let gradients = laid_out(g, &p.array_gradients, &s.gradients);
    let cotangent = Ident::new("cotangent", Span::mixed_site());
    let function = quote! {
        #allows
        fn #inner #generics (#(#params),*)
            -> (#ret, ::std::boxed::Box<dyn ::core::ops::FnOnce(#ret_tangent, #(#acc_types),*) + #lt>)
            #where_clause
        {
            #prelude
            #(#forward)*
            (#value, ::std::boxed::Box::new(move |#seed: #ret_tangent, #(#acc_params),*| {
                #(#recompute)*
                #(#reverse)*
            }))
        }
    };
    let body = quote! {
        #prelude
        let (value, pullback) = #call(#(#args),*);
        (value, move |#cotangent: #ret_tangent| {
            #(let mut #bars = ::core::option::Option::None;)*
            pullback(#cotangent, #(&mut #bars),*);
            #(#settled)*
            (#(#gradients,)*)
        })
    };
    (function, body)
}

fn jvp(sig: &Signature, g: &Gen<'_>, p: &Parts) -> TokenStream {
    let name = sig.derived_name("jvp");
    let Parts {
        vis,
        generics,
        params,
        ret,
        ret_tangent,
        ..
    } = p;
    let (_, _, where_clause) = generics.split_for_impl();
    let mut prelude = g.prelude();
    if forward::passes_constants(g.f) {
        let r = &g.rules;
        prelude.extend(quote! {
            #[allow(unused_imports)]
            use #r::{ZeroOfConstant as _, ZeroOfDifferentiable as _};
        });
    }
    let allows = allows();
    let doc = format!(
        "The value of [`{}`] and its directional derivative along the given tangents (forward mode).",
        sig.name()
    );
    let tangent_params =
        g.f.params
            .iter()
            .zip(sig.tangent_param_types())
            .map(|(v, ty)| match v {
                Some(v) => {
                    let d = g.dot(*v);
                    quote!(#d: #ty)
                }
                None => quote!(_: #ty),
            });
    // A view's tangent, given as an array or a view, as the owned array.
    let conversions =
        g.f.params
            .iter()
            .zip(sig.converted_tangents())
            .filter_map(|(v, owned)| {
                let (d, owned) = (g.dot((*v)?), owned?);
                Some(quote!(let #d: #owned = ::ad::IntoTangent::into_tangent(#d);))
            });
    let conversions: Vec<TokenStream> = conversions.collect();
    let (stmts, result_dot) = forward::body(g, &g.f.body);
    let r = &g.rules;
    let tail = match (&g.f.body.result, result_dot) {
        (Operand::Var(v), Some(d)) => {
            let x = g.ident(*v);
            quote!((#x, #d))
        }
        (result, _) => {
            let value = match result {
                Operand::Const(c) => c.tokens.clone(),
                Operand::Var(v) => {
                    let x = g.ident(*v);
                    quote!(#x)
                }
            };
            quote!({
                let value: #ret = #value;
                let value_dot = #r::zero_tangent(&value);
                (value, value_dot)
            })
        }
    };
    quote! {
        #[doc = #doc]
        #allows
        #vis fn #name #generics (#(#params,)* #(#tangent_params),*) -> (#ret, #ret_tangent) #where_clause {
            #prelude
            #(#conversions)*
            #(#stmts)*
            #tail
        }
    }
}

/// The function of `sig`'s signature that computes `f` (its IR) and
/// nothing else: `#[differentiable(nested)]` emits `f_jvp` so, from the IR
/// it differentiates, so that `f_jvp` and its derivatives compute the same
/// values to the last bit.
pub fn primal_function(sig: &Signature, f: &Function, doc: &str) -> TokenStream {
    let g = Gen::new(f);
    let Parts {
        vis,
        generics,
        params,
        ret,
        ..
    } = parts(sig);
    let (_, _, where_clause) = generics.split_for_impl();
    let (name, allows, prelude) = (sig.name(), allows(), g.prelude());
    let stmts = forward::primal(&g, &f.body);
    let result = match &f.body.result {
        Operand::Var(v) => g.ident(*v).to_token_stream(),
        Operand::Const(c) => c.tokens.clone(),
    };
    quote! {
        #[doc = #doc]
        #allows
        #vis fn #name #generics (#(#params),*) -> #ret #where_clause {
            #prelude
            #(#stmts)*
            #result
        }
    }
}

/// Derivative functions with the right signatures and no bodies, emitted
/// beside the compile errors.
pub fn stubs(sig: &Signature, modes: Modes) -> TokenStream {
    let p = parts(sig);
    let Parts {
        vis,
        generics,
        params,
        ret,
        ret_tangent,
        gradients,
        captures,
        ..
    } = &p;
    let (_, _, where_clause) = generics.split_for_impl();
    let message = format!("`#[differentiable]` reported an error for `{}`", sig.name());
    let allows = quote!(#[allow(unused_variables, unreachable_code, clippy::all)]);
    let mut out = TokenStream::new();
    if modes.reverse {
        if sig.has_scalar_result() {
            let name = sig.derived_name("grad");
            out.extend(quote! {
                #allows
                #vis fn #name #generics (#(#params),*) -> (#ret, (#(#gradients,)*)) #where_clause {
                    ::core::unreachable!(#message)
                }
            });
        }
        let name = sig.derived_name("vjp");
        out.extend(quote! {
            #allows
            #vis fn #name #generics (#(#params),*)
                -> (#ret, impl ::core::ops::FnOnce(#ret_tangent) -> (#(#gradients,)*) + #captures)
                #where_clause
            {
                let pullback = move |_: #ret_tangent| -> (#(#gradients,)*) { ::core::unreachable!(#message) };
                (::core::unreachable!(#message), pullback)
            }
        });
    }
    if modes.forward {
        let name = sig.derived_name("jvp");
        let tangents = sig.tangent_param_types();
        out.extend(quote! {
            #allows
            #vis fn #name #generics (#(#params,)* #(_: #tangents),*) -> (#ret, #ret_tangent) #where_clause {
                ::core::unreachable!(#message)
            }
        });
    }
    out
}
