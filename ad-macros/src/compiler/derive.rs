//! `#[derive(Differentiable)]`: a struct's tangent type, `{Name}Tangent`,
//! with the struct's fields under the same names. A field's tangent is its
//! type's (`Array2<f64>` for `Array2<f64>`, `Vec<LayerTangent>` for
//! `Vec<Layer>`); a `#[constant]` field's is `NoTangent`.
//!
//! Input:
//! ```text
//! #[derive(Differentiable)]
//! struct Layer { w: Array2<f64>, b: Array1<f64>, #[constant] name: String }
//! ```
//! Output: `struct LayerTangent { w: <Array2<f64> as Differentiable>::Tangent,
//! b: .., name: NoTangent }`, with `Differentiable for Layer`,
//! `TangentSpace` (zero, add, scale, dot) and `check::Flat` for both.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

use super::errors::Errors;

pub fn derive_differentiable(input: TokenStream) -> TokenStream {
    let errors = Errors::default();
    let item: DeriveInput = match syn::parse2(input) {
        Ok(item) => item,
        Err(e) => return e.to_compile_error(),
    };
    let fields = match &item.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => Some(&named.named),
            other => {
                errors.at(
                    other,
                    "`#[derive(Differentiable)]` needs named fields: `struct S { w: Array2<f64> }`",
                );
                None
            }
        },
        _ => {
            errors.at_span(
                item.ident.span(),
                "`#[derive(Differentiable)]` is for structs; enums and unions have no tangent space",
            );
            None
        }
    };
    if let Some(lt) = item.generics.lifetimes().next() {
        errors.at(
            lt,
            "`#[derive(Differentiable)]` does not take structs that borrow: own the arrays (`Array2<f64>`), or pass the borrowed data as a `#[constant]` parameter",
        );
    }
    let Some(fields) = fields.filter(|_| errors.is_empty()) else {
        return errors.into_compile_errors();
    };

    let name = &item.ident;
    let vis = &item.vis;
    let tangent_ident = format_ident!("{}Tangent", name);
    // A generic struct (`Layer<F: Float>`) has a tangent with the same
    // parameters (`LayerTangent<F>`).
    let (impl_generics, ty_generics, where_clause) = item.generics.split_for_impl();
    let generics = &item.generics;
    let tangent = quote!(#tangent_ident #ty_generics);
    let name = quote!(#name #ty_generics);
    let mut decls = Vec::new();
    let mut zeros = Vec::new();
    let mut zero_likes = Vec::new();
    let mut unsets = Vec::new();
    let mut active = Vec::new();
    let mut active_types = Vec::new();
    for f in fields {
        let ident = f.ident.as_ref().expect("named fields have names");
        let (fvis, ty) = (&f.vis, &f.ty);
        let constant = f.attrs.iter().any(|a| a.path().is_ident("constant"));
        if constant {
            decls.push(quote!(#fvis #ident: ::ad::NoTangent));
            zeros.push(quote!(#ident: ::ad::NoTangent));
            zero_likes.push(quote!(#ident: ::ad::NoTangent));
            unsets.push(quote!(#ident: ::ad::NoTangent));
        } else {
            // Spanned at the field's type: a type with no tangent is reported there.
            let tangent = quote_spanned!(ty.span()=> <#ty as ::ad::Differentiable>::Tangent);
            decls.push(quote!(#fvis #ident: #tangent));
            zeros.push(quote!(#ident: ::ad::Differentiable::zero_tangent(&self.#ident)));
            zero_likes.push(quote!(#ident: ::ad::TangentSpace::zero_like(&self.#ident)));
            unsets.push(quote!(#ident: ::ad::Differentiable::unset_tangent(&self.#ident)));
            active.push(ident.clone());
            active_types.push(ty.clone());
        }
    }
    let doc = format!(
        "The tangent (gradient) of a [`{}`]: its differentiable fields under the same names; `#[constant]` fields are `NoTangent`.",
        item.ident
    );
    // What the fields of a generic struct must offer, stated per impl
    // (`Array1<F>: Parameter`); concrete fields need no bounds.
    let bounded = |bound: TokenStream, tangents: bool| {
        if item.generics.type_params().next().is_none() {
            return item.generics.where_clause.clone();
        }
        let mut g = item.generics.clone();
        let clause = g.make_where_clause();
        for ty in &active_types {
            let ty = if tangents {
                quote!(<#ty as ::ad::Differentiable>::Tangent)
            } else {
                quote!(#ty)
            };
            clause.predicates.push(syn::parse_quote!(#ty: #bound));
        }
        g.where_clause.clone()
    };
    let flat_bound = quote!(::ad::check::Flat);
    let parameter_where = bounded(quote!(::ad::Parameter), false);
    let flat = flat_impls(
        &name,
        &active,
        &item.generics,
        bounded(flat_bound.clone(), false),
    )
    .into_iter()
    .chain(flat_impls(
        &tangent,
        &active,
        &item.generics,
        bounded(flat_bound, true),
    ))
    .collect::<TokenStream>();
    let rules = quote!(::ad::__private::rules);
    quote! {
        #[doc = #doc]
        #[derive(Clone, Debug)]
        #vis struct #tangent_ident #generics #where_clause {
            #(#decls,)*
        }

        impl #impl_generics ::ad::Differentiable for #name #where_clause {
            type Tangent = #tangent;
            fn zero_tangent(&self) -> #tangent {
                #tangent_ident { #(#zeros,)* }
            }
            fn unset_tangent(&self) -> #tangent {
                #tangent_ident { #(#unsets,)* }
            }
            fn complete_tangent(&self, tangent: &mut #tangent) {
                #(::ad::Differentiable::complete_tangent(&self.#active, &mut tangent.#active);)*
            }
        }

        impl #impl_generics ::ad::TangentSpace for #tangent #where_clause {
            fn zero_like(&self) -> Self {
                #tangent_ident { #(#zero_likes,)* }
            }
            fn add_assign(&mut self, other: &Self) {
                #(::ad::TangentSpace::add_assign(&mut self.#active, &other.#active);)*
            }
            fn scale(&mut self, factor: f64) {
                #(::ad::TangentSpace::scale(&mut self.#active, factor);)*
            }
            fn dot(&self, other: &Self) -> f64 {
                0.0 #(+ ::ad::TangentSpace::dot(&self.#active, &other.#active))*
            }
            fn zip_map(&mut self, other: &Self, f: &mut dyn FnMut(f64, f64) -> f64) {
                #(::ad::TangentSpace::zip_map(&mut self.#active, &other.#active, f);)*
            }
        }

        impl #impl_generics ::ad::Parameter for #name #parameter_where {
            fn apply(&mut self, tangent: &#tangent, step: f64) {
                #(::ad::Parameter::apply(&mut self.#active, &tangent.#active, step);)*
            }
        }

        impl #impl_generics #rules::Contribution<#tangent> for #tangent #where_clause {
            fn add_to(self, acc: &mut #tangent) {
                #(#rules::Contribution::add_to(self.#active, &mut acc.#active);)*
            }
            fn into_first(self, _: impl FnOnce() -> #tangent) -> #tangent {
                self
            }
        }

        /// A `#[constant]` field of this type drops its cotangent.
        impl #impl_generics #rules::Contribution<::ad::NoTangent> for #tangent #where_clause {
            fn add_to(self, _: &mut ::ad::NoTangent) {}
            fn into_first(self, _: impl FnOnce() -> ::ad::NoTangent) -> ::ad::NoTangent {
                ::ad::NoTangent
            }
        }

        #flat
    }
}

/// `check::Flat` over the differentiable fields, in declaration order, for
/// the struct or its tangent.
fn flat_impls(
    ty: &TokenStream,
    active: &[syn::Ident],
    generics: &syn::Generics,
    where_clause: Option<syn::WhereClause>,
) -> TokenStream {
    let flat = quote!(::ad::check::Flat);
    let (impl_generics, _, _) = generics.split_for_impl();
    quote! {
        impl #impl_generics #flat for #ty #where_clause {
            fn flat_len(&self) -> usize {
                0 #(+ #flat::flat_len(&self.#active))*
            }
            #[allow(unused_mut, unused_assignments)]
            fn get(&self, mut i: usize) -> f64 {
                #(
                    let n = #flat::flat_len(&self.#active);
                    if i < n {
                        return #flat::get(&self.#active, i);
                    }
                    i -= n;
                )*
                ::core::panic!("index past the end of the fields")
            }
            #[allow(unused_mut, unused_assignments)]
            fn set(&mut self, mut i: usize, v: f64) {
                #(
                    let n = #flat::flat_len(&self.#active);
                    if i < n {
                        return #flat::set(&mut self.#active, i, v);
                    }
                    i -= n;
                )*
                ::core::panic!("index past the end of the fields")
            }
        }
    }
}
