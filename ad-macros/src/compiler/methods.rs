//! Methods: `#[differentiable]` on `fn loss(&self, x: f64) -> f64` in an
//! `impl` block. The method is compiled as the free function
//! `fn loss(__ad_self: &Self, x: f64)` with `self` in its body renamed, and
//! the derivatives that yields are made methods again
//! (`fn loss_grad(&self, x: f64) -> (f64, (SelfTangent, f64))`), `self`'s
//! gradient first.
//!
//! Input:  `fn loss(&self, x: f64) -> f64 { self.w * x }`
//! Output: `fn loss(&self, ..)` as written, and
//!         `fn loss_grad<'__ad0>(&'__ad0 self, x: f64) -> .. { let __ad_self = self; .. }`

use proc_macro2::{Ident, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::{FnArg, ItemFn, Pat, Type};

use super::errors::Errors;

/// The name `self` has in the function the compiler sees.
pub const SELF_NAME: &str = "__ad_self";

/// `item` with its receiver made a parameter `__ad_self` and `self` in
/// its body renamed, when it has a receiver; `Ok(None)` without one, and
/// `Err` after reporting a receiver that cannot be differentiated.
pub fn as_function(item: &ItemFn, errors: &Errors) -> Result<Option<ItemFn>, ()> {
    let Some(FnArg::Receiver(r)) = item.sig.inputs.first() else {
        return Ok(None);
    };
    if r.colon_token.is_some() {
        errors.at(
            r,
            "`#[differentiable]` differentiates methods that take `&self` or `self`: write the receiver without a type",
        );
        return Err(());
    }
    if r.reference.is_some() && r.mutability.is_some() {
        errors.at(
            r,
            "`&mut self` cannot be differentiated: take `&self` and return the new value instead",
        );
        return Err(());
    }
    let span = r.self_token.span;
    let name = Ident::new(SELF_NAME, span);
    let param: FnArg = match &r.reference {
        Some((and, lifetime)) => syn::parse_quote!(#name: #and #lifetime Self),
        None => {
            let m = r.mutability;
            syn::parse_quote!(#m #name: Self)
        }
    };
    let mut function = item.clone();
    function.sig.inputs[0] = param;
    let body = rename_self(item.block.to_token_stream());
    function.block = Box::new(syn::parse2(body).map_err(|e| errors.push(e))?);
    Ok(Some(function))
}

/// `self` as a value (not `self::path`) renamed to `__ad_self`.
fn rename_self(tokens: TokenStream) -> TokenStream {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(tokens.len());
    for (k, t) in tokens.iter().enumerate() {
        let path_follows =
            matches!(tokens.get(k + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':');
        out.push(match t {
            TokenTree::Ident(i) if i == "self" && !path_follows => {
                TokenTree::Ident(Ident::new(SELF_NAME, i.span()))
            }
            TokenTree::Group(g) => {
                let mut renamed = proc_macro2::Group::new(g.delimiter(), rename_self(g.stream()));
                renamed.set_span(g.span());
                TokenTree::Group(renamed)
            }
            other => other.clone(),
        });
    }
    out.into_iter().collect()
}

/// The generated functions of a method made methods again: a first
/// parameter `__ad_self` becomes the receiver it came from, bound to
/// `__ad_self` first thing in the body.
pub fn as_methods(functions: TokenStream, method: &Ident) -> TokenStream {
    let Ok(file) = syn::parse2::<syn::File>(functions.clone()) else {
        return functions;
    };
    let mut out = TokenStream::new();
    for item in file.items {
        let syn::Item::Fn(mut f) = item else {
            out.extend(item.to_token_stream());
            continue;
        };
        let receiver = match f.sig.inputs.first() {
            Some(FnArg::Typed(pt)) => match (&*pt.pat, &*pt.ty) {
                (Pat::Ident(p), ty) if p.ident == SELF_NAME => Some(receiver_for(p, ty)),
                _ => None,
            },
            _ => None,
        };
        if let Some((receiver, binding)) = receiver {
            f.sig.inputs[0] = receiver;
            f.block.stmts.insert(0, binding);
            for attr in &mut f.attrs {
                relink_doc(attr, method);
            }
        }
        out.extend(f.to_token_stream());
    }
    out
}

/// `&'a self` for `__ad_self: &'a Self` (`self` for `Self`), and the
/// statement that binds it back.
fn receiver_for(p: &syn::PatIdent, ty: &Type) -> (FnArg, syn::Stmt) {
    let name = &p.ident;
    let self_token = quote::quote_spanned!(name.span()=> self);
    match ty {
        Type::Reference(r) => {
            let lifetime = &r.lifetime;
            (
                syn::parse_quote!(&#lifetime #self_token),
                syn::parse_quote!(let #name = #self_token;),
            )
        }
        _ => {
            let m = p.mutability;
            (
                syn::parse_quote!(#m #self_token),
                syn::parse_quote!(let #m #name = #self_token;),
            )
        }
    }
}

/// The docs' link to the method: `[`loss`]` is `[`Self::loss`]` in an impl.
fn relink_doc(attr: &mut syn::Attribute, method: &Ident) {
    let syn::Meta::NameValue(nv) = &mut attr.meta else {
        return;
    };
    let syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(s),
        ..
    }) = &nv.value
    else {
        return;
    };
    let text = s
        .value()
        .replace(&format!("[`{method}`]"), &format!("[`Self::{method}`]"));
    nv.value = syn::parse_quote!(#text);
}

/// The user's method as written, without `#[constant]` markers.
pub fn as_written(item: &ItemFn) -> TokenStream {
    let mut item = item.clone();
    for input in item.sig.inputs.iter_mut() {
        if let FnArg::Typed(pt) = input {
            pt.attrs.retain(|a| !a.path().is_ident("constant"));
        }
    }
    quote!(#item)
}
