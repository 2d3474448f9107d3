//! Emission: the user's function, then `f_grad`, `f_vjp` and `f_jvp`, or, when
//! the front end reported errors, stubs with the same signatures so the
//! user's other code does not fail with more errors.

use proc_macro2::TokenStream;
use quote::quote;

use super::forward;
use super::ir::{Function, Operand};
use super::options::Modes;
use super::primal::Gen;
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
    let g = Gen::new(f);
    let mut out = TokenStream::new();
    if modes.reverse {
        let sig = &Signature {
            boxes_pullbacks: f.is_recursive(),
            ..sig.clone()
        };
        let p = parts(sig);
        let sweeps = reverse::sweeps(&g);
        if sig.has_scalar_result() {
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
    let prelude = g.prelude();
    let allows = allows();
    let doc = format!(
        "The value of [`{}`] and its gradient with respect to each parameter (reverse mode).",
        sig.name()
    );
    let reverse::Sweeps {
        forward,
        reverse,
        seed,
        result,
        gradients,
        ..
    } = s;
    let one = if sig.has_concrete_scalar_result() {
        quote!(1.0)
    } else {
        quote!(<#ret as ::ad::Float>::of(1.0))
    };
    let seed = seed.iter().map(|seed| quote!(let #seed: #ret = #one;));
    let gradients = laid_out(g, &p.array_gradients, gradients);
    quote! {
        #[doc = #doc]
        #allows
        #vis fn #name #generics (#(#params),*) -> (#ret, (#(#grad_types,)*)) #where_clause {
            #prelude
            #(#forward)*
            #(#seed)*
            #(#reverse)*
            (#result, (#(#gradients,)*))
        }
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
    let prelude = g.prelude();
    let allows = allows();
    let doc = format!(
        "The value of [`{}`] and its pullback, which maps a cotangent of the result to one per parameter (reverse mode).",
        sig.name()
    );
    let reverse::Sweeps {
        forward,
        reverse,
        seed,
        result,
        result_read_by_reverse,
        gradients,
        recompute,
    } = s;
    let value = if *result_read_by_reverse {
        quote!(::core::clone::Clone::clone(&#result))
    } else {
        quote!(#result)
    };
    let seed = match seed {
        Some(seed) => quote!(#seed),
        None => quote!(_),
    };
    let gradients = laid_out(g, &p.array_gradients, gradients);
    quote! {
        #[doc = #doc]
        #allows
        #vis fn #name #generics (#(#params),*)
            -> (#ret, impl ::core::ops::FnOnce(#ret_tangent) -> (#(#grad_types,)*) + #captures)
            #where_clause
        {
            #prelude
            #(#forward)*
            (#value, move |#seed: #ret_tangent| {
                #(#recompute)*
                #(#reverse)*
                (#(#gradients,)*)
            })
        }
    }
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
