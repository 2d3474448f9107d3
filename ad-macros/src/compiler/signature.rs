//! The function's signature: which parameters are active, and the types of
//! their gradients and tangents.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{FnArg, GenericParam, Ident, ItemFn, Lifetime, Pat, ReturnType, Type};

use super::errors::Errors;

#[derive(Clone)]
pub struct Param {
    /// The name the body uses; `None` for an inactive parameter bound by a
    /// pattern other than a plain name.
    pub ident: Option<Ident>,
    pub pat: Box<Pat>,
    pub ty: Box<Type>,
    pub active: bool,
}

#[derive(Clone)]
pub struct Signature {
    /// The user's function, with `#[constant]` markers removed.
    pub item: ItemFn,
    pub params: Vec<Param>,
    pub ret: Box<Type>,
    /// The lifetime the derivative functions declare for the references
    /// the user left elided (one for all), so the pullback closure can name
    /// what it captures.
    pub elided_lifetime: Option<Lifetime>,
    /// Whether the body calls the function itself, so its reverse mode
    /// boxes those calls' pullbacks for
    /// [`pullback_lifetime`](Signature::pullback_lifetime), which the
    /// derivatives then bound every other parameter by.
    pub boxes_pullbacks: bool,
}

/// Reads the signature, reporting what `#[differentiable]` cannot take.
/// Without a return type there is nothing to build on: the item comes back
/// (with its `#[constant]` markers removed).
pub fn parse(mut item: ItemFn, errors: &Errors) -> Result<Signature, Box<ItemFn>> {
    let sig = &item.sig;
    if let Some(t) = &sig.asyncness {
        errors.at(
            t,
            "`#[differentiable]` cannot differentiate an `async fn`: make it a plain `fn`",
        );
    }
    if let Some(t) = &sig.unsafety {
        errors.at(t, "`#[differentiable]` cannot differentiate an `unsafe fn`: wrap the unsafe code in a safe function with a hand-written `_vjp` and `_jvp`");
    }
    if let Some(t) = &sig.constness {
        errors.at(
            t,
            "`#[differentiable]` cannot differentiate a `const fn`: remove `const`",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.at(
            abi,
            "`#[differentiable]` cannot differentiate an `extern` function: remove the ABI",
        );
    }
    if let Some(v) = &sig.variadic {
        errors.at(
            v,
            "`#[differentiable]` cannot differentiate a variadic function",
        );
    }
    let ret = match &sig.output {
        ReturnType::Type(_, ty) => Some(ty.clone()),
        ReturnType::Default => {
            errors.at_span(
                sig.paren_token.span.join(),
                format!(
                    "`{}` has no return type: a differentiable function returns the value to differentiate, such as `-> f64`",
                    sig.ident
                ),
            );
            None
        }
    };

    let mut params = Vec::new();
    for input in item.sig.inputs.iter_mut() {
        match input {
            FnArg::Receiver(r) => errors.at(
                &*r,
                "`#[differentiable]` cannot differentiate a method with `self`: make it a free function that takes the value as a parameter",
            ),
            FnArg::Typed(pt) => {
                let before = pt.attrs.len();
                pt.attrs.retain(|a| !a.path().is_ident("constant"));
                let constant = pt.attrs.len() != before;
                if let Type::Reference(r) = &*pt.ty {
                    if r.mutability.is_some() {
                        errors.at(
                            r,
                            "`&mut` parameters cannot be differentiated: take `&T` and return the new value instead",
                        );
                    }
                }
                let active = !constant && !inactive_by_type(&pt.ty);
                let ident = match &*pt.pat {
                    Pat::Ident(p) if p.subpat.is_none() => Some(p.ident.clone()),
                    _ if active => {
                        errors.at(
                            &pt.pat,
                            "bind a differentiable parameter to a name (`x: T`); patterns are allowed only on `#[constant]` parameters",
                        );
                        None
                    }
                    _ => None,
                };
                params.push(Param { ident, pat: pt.pat.clone(), ty: pt.ty.clone(), active });
            }
        }
    }
    let Some(ret) = ret else {
        return Err(Box::new(item));
    };
    let mut elided_lifetime = None;
    for p in &mut params {
        NameElidedLifetimes {
            named: &mut elided_lifetime,
        }
        .visit_type_mut(&mut p.ty);
    }
    Ok(Signature {
        item,
        params,
        ret,
        elided_lifetime,
        boxes_pullbacks: false,
    })
}

/// Integers, `bool`, `char`, `&str` and references to them carry no
/// derivative (SPEC "Activity").
pub fn inactive_by_type(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => inactive_by_type(&r.elem),
        Type::Paren(p) => inactive_by_type(&p.elem),
        Type::Group(g) => inactive_by_type(&g.elem),
        Type::Tuple(t) => !t.elems.is_empty() && t.elems.iter().all(inactive_by_type),
        Type::Path(p) if p.qself.is_none() => p.path.get_ident().is_some_and(|i| {
            matches!(
                i.to_string().as_str(),
                "i8" | "i16"
                    | "i32"
                    | "i64"
                    | "i128"
                    | "isize"
                    | "u8"
                    | "u16"
                    | "u32"
                    | "u64"
                    | "u128"
                    | "usize"
                    | "bool"
                    | "char"
                    | "str"
                    | "String"
            )
        }),
        _ => false,
    }
}

/// Gives every elided lifetime in a parameter type one name: `&T` becomes
/// `&'__ad0 T`, `ArrayView2<f64>` becomes `ArrayView2<'__ad0, f64>`. One
/// name for all, as the pullback may borrow from every reference anyway
/// (and callers meet it by shortening theirs): a pullback that holds a
/// boxed pullback (recursion, `rules::boxed_pullback`) needs a lifetime
/// every other one outlives, which the callers of the function can then
/// name too.
struct NameElidedLifetimes<'a> {
    named: &'a mut Option<Lifetime>,
}

impl NameElidedLifetimes<'_> {
    fn next(&mut self, span: proc_macro2::Span) -> Lifetime {
        self.named
            .get_or_insert_with(|| Lifetime::new("'__ad0", span))
            .clone()
    }
}

impl VisitMut for NameElidedLifetimes<'_> {
    fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
        match &r.lifetime {
            None => r.lifetime = Some(self.next(r.and_token.span)),
            Some(lt) if lt.ident == "_" => r.lifetime = Some(self.next(lt.span())),
            _ => {}
        }
        self.visit_type_mut(&mut r.elem);
    }
    fn visit_lifetime_mut(&mut self, lt: &mut Lifetime) {
        if lt.ident == "_" {
            *lt = self.next(lt.span());
        }
    }
    fn visit_path_segment_mut(&mut self, seg: &mut syn::PathSegment) {
        let name = seg.ident.to_string();
        if name.starts_with("ArrayView") || name.starts_with("CowArray") {
            if let syn::PathArguments::AngleBracketed(args) = &mut seg.arguments {
                if !args
                    .args
                    .iter()
                    .any(|a| matches!(a, syn::GenericArgument::Lifetime(_)))
                {
                    let lt = self.next(seg.ident.span());
                    args.args.insert(0, syn::GenericArgument::Lifetime(lt));
                }
            }
        }
        syn::visit_mut::visit_path_segment_mut(self, seg);
    }
}

impl Signature {
    pub fn name(&self) -> &Ident {
        &self.item.sig.ident
    }

    /// `f_grad`, `f_vjp`, `f_jvp`, spanned at the user's name.
    pub fn derived_name(&self, suffix: &str) -> Ident {
        format_ident!("{}_{}", self.name(), suffix, span = self.name().span())
    }

    /// The lifetime the boxed pullbacks of a recursive function's calls of
    /// itself live for: its first lifetime (`'static` if it has none),
    /// which [`generics`](Self::generics) bounds the others by.
    pub fn pullback_lifetime(&self) -> Lifetime {
        self.elided_lifetime
            .clone()
            .or_else(|| {
                let g = &self.item.sig.generics;
                g.lifetimes().next().map(|l| l.lifetime.clone())
            })
            .unwrap_or_else(|| Lifetime::new("'static", proc_macro2::Span::call_site()))
    }

    /// `<'a, T>` plus the named elided lifetimes.
    pub fn generics(&self) -> syn::Generics {
        let mut g = self.item.sig.generics.clone();
        if let Some(lt) = &self.elided_lifetime {
            g.params.insert(
                0,
                GenericParam::Lifetime(syn::LifetimeParam::new(lt.clone())),
            );
        }
        if self.boxes_pullbacks {
            let boxed = self.pullback_lifetime();
            let outliving: Vec<TokenStream> = g
                .params
                .iter()
                .filter_map(|p| match p {
                    GenericParam::Lifetime(l) if l.lifetime != boxed => {
                        Some(l.lifetime.to_token_stream_ext())
                    }
                    GenericParam::Type(t) => Some(t.ident.to_token_stream_ext()),
                    _ => None,
                })
                .collect();
            let clause = g.make_where_clause();
            for p in outliving {
                clause.predicates.push(syn::parse_quote!(#p: #boxed));
            }
        }
        g
    }

    /// `use<'a, T, N>`: everything the pullback closure may capture.
    pub fn captures(&self) -> TokenStream {
        let g = self.generics();
        let is_method = self.params.iter().any(|p| {
            p.ident
                .as_ref()
                .is_some_and(|i| i == crate::compiler::methods::SELF_NAME)
        });
        if is_method {
            // `use<..>` must name the `impl` block's type parameters too,
            // which a method's attribute cannot see: capture the lifetimes
            // by bound instead (type parameters are captured anyway).
            let lifetimes: Vec<_> = g.lifetimes().map(|l| &l.lifetime).collect();
            if lifetimes.is_empty() {
                return quote!(::core::marker::Sized);
            }
            return quote!(#(::ad::__private::Captures<#lifetimes>)+*);
        }
        let names = g.params.iter().map(|p| match p {
            GenericParam::Lifetime(l) => l.lifetime.to_token_stream_ext(),
            GenericParam::Type(t) => t.ident.to_token_stream_ext(),
            GenericParam::Const(c) => c.ident.to_token_stream_ext(),
        });
        quote!(use<#(#names),*>)
    }

    /// The parameters as the derivative functions declare them: the user's
    /// names (so the body's references resolve), without `mut`.
    pub fn param_decls(&self) -> Vec<TokenStream> {
        self.params
            .iter()
            .map(|p| {
                let ty = &p.ty;
                match &p.ident {
                    Some(ident) => quote!(#ident: #ty),
                    None => {
                        let pat = &p.pat;
                        quote!(#pat: #ty)
                    }
                }
            })
            .collect()
    }

    /// Whether a wrapper can pass every parameter on to a function of the
    /// same signature ([`forwarded_args`](Self::forwarded_args)): each is
    /// bound to a name.
    pub fn forwards_params(&self) -> bool {
        self.params.iter().all(|p| p.ident.is_some())
    }

    /// Whether this is a method, compiled as a function of `__ad_self`
    /// ([`methods`](crate::compiler::methods)).
    pub fn is_method(&self) -> bool {
        self.params
            .first()
            .and_then(|p| p.ident.as_ref())
            .is_some_and(|i| i == crate::compiler::methods::SELF_NAME)
    }

    /// The path a derivative calls a sibling by: `f_vjp`, or
    /// `Self::f_vjp` in a method (its receiver the first argument).
    pub fn sibling(&self, suffix: &str) -> TokenStream {
        let name = self.derived_name(suffix);
        if self.is_method() {
            quote!(Self::#name)
        } else {
            quote!(#name)
        }
    }

    /// The parameters passed on to a function of the same signature, the
    /// active ones taken by value cloned, as the wrapper's gradients read
    /// them after the call (`zero_tangent(&x)`).
    pub fn forwarded_args(&self) -> Vec<TokenStream> {
        self.params
            .iter()
            .filter_map(|p| {
                let ident = p.ident.as_ref()?;
                Some(if p.active && !matches!(&*p.ty, Type::Reference(_)) {
                    quote!(::core::clone::Clone::clone(&#ident))
                } else {
                    quote!(#ident)
                })
            })
            .collect()
    }

    /// Whether each parameter's gradient is an ndarray array (returned in
    /// standard layout).
    pub fn array_gradients(&self) -> Vec<bool> {
        self.params
            .iter()
            .map(|p| p.active && array_tangent(strip_ref(&p.ty)).is_some())
            .collect()
    }

    /// The gradient type of each parameter.
    pub fn gradient_types(&self) -> Vec<TokenStream> {
        self.params
            .iter()
            .map(|p| {
                if p.active {
                    tangent_type(strip_ref(&p.ty))
                } else {
                    no_tangent()
                }
            })
            .collect()
    }

    /// The tangent parameter type of each parameter in `f_jvp`.
    pub fn tangent_param_types(&self) -> Vec<TokenStream> {
        self.params
            .iter()
            .map(|p| {
                if !p.active {
                    return no_tangent();
                }
                match &*p.ty {
                    // `&[F]` for `&[F]` and `&Vec<F>`: either a slice or a
                    // `&Vec` (by deref) may be given.
                    Type::Reference(r) => {
                        let lt = &r.lifetime;
                        match slice_element(&r.elem) {
                            Some(elem) => {
                                let t = tangent_type(elem);
                                quote!(&#lt [#t])
                            }
                            None => {
                                let t = tangent_type(&r.elem);
                                quote!(&#lt #t)
                            }
                        }
                    }
                    // A view's tangent may be the owned array or a view.
                    ty if is_view(ty) => {
                        let owned = tangent_type(ty);
                        quote!(impl ::ad::IntoTangent<#owned>)
                    }
                    ty => tangent_type(ty),
                }
            })
            .collect()
    }

    /// For each parameter, whether `f_jvp` takes its tangent as
    /// `impl IntoTangent<..>` (an active view) and converts it first.
    pub fn converted_tangents(&self) -> Vec<Option<TokenStream>> {
        self.params
            .iter()
            .map(|p| (p.active && is_view(&p.ty)).then(|| tangent_type(&p.ty)))
            .collect()
    }

    pub fn ret_tangent(&self) -> TokenStream {
        tangent_type(&self.ret)
    }

    /// `f_grad` exists when the result is a scalar float: `f64`, `f32`, or
    /// a type parameter bounded by `Float` (`F: ad::Float`).
    pub fn has_scalar_result(&self) -> bool {
        matches!(&*self.ret, Type::Path(p) if p.path.get_ident().is_some_and(|ret| {
            float_types(&self.item.sig.generics).contains(&ret.to_string())
        }))
    }

    /// The result is `f64` or `f32` (a literal `1.0` seeds its gradient).
    pub fn has_concrete_scalar_result(&self) -> bool {
        matches!(&*self.ret, Type::Path(p) if p.path.is_ident("f64") || p.path.is_ident("f32"))
    }
}

trait ToTokenStreamExt {
    fn to_token_stream_ext(&self) -> TokenStream;
}
impl<T: quote::ToTokens> ToTokenStreamExt for T {
    fn to_token_stream_ext(&self) -> TokenStream {
        self.to_token_stream()
    }
}

fn strip_ref(ty: &Type) -> &Type {
    match ty {
        Type::Reference(r) => &r.elem,
        ty => ty,
    }
}

/// `f64`, `f32`, and the type parameters of `generics` bounded by `Float`
/// (`F: ad::Float`).
pub fn float_types(generics: &syn::Generics) -> Vec<String> {
    let bounded = |bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>| {
        bounds.iter().any(|b| {
            matches!(b, syn::TypeParamBound::Trait(t)
                if t.path.segments.last().is_some_and(|s| s.ident == "Float"))
        })
    };
    let mut out = vec!["f64".to_string(), "f32".to_string()];
    for p in generics.type_params() {
        let in_where = generics
            .where_clause
            .iter()
            .flat_map(|w| &w.predicates)
            .any(|pred| {
                matches!(pred, syn::WherePredicate::Type(t)
                if matches!(&t.bounded_ty, Type::Path(tp) if tp.path.is_ident(&p.ident))
                    && bounded(&t.bounds))
            });
        if bounded(&p.bounds) || in_where {
            out.push(p.ident.to_string());
        }
    }
    out
}

/// The one float type (of `float_types`) that the parameters' and the
/// result's types name, if exactly one is named.
pub fn scalar_type(sig: &Signature, float_types: &[String]) -> Option<Ident> {
    struct Names<'a>(&'a [String], Vec<Ident>);
    impl<'ast> syn::visit::Visit<'ast> for Names<'_> {
        fn visit_path(&mut self, p: &'ast syn::Path) {
            if let Some(i) = p.get_ident() {
                if self.0.contains(&i.to_string()) && !self.1.contains(i) {
                    self.1.push(i.clone());
                }
            }
            syn::visit::visit_path(self, p);
        }
    }
    let mut names = Names(float_types, Vec::new());
    for p in &sig.params {
        syn::visit::Visit::visit_type(&mut names, &p.ty);
    }
    syn::visit::Visit::visit_type(&mut names, &sig.ret);
    match names.1.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// `T` of a parameter typed `&[T]`, `&Vec<T>` or `Vec<T>`.
pub fn sequence_element(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Reference(r) => slice_element(&r.elem),
        ty => slice_element(ty),
    }
}

/// `T` of `[T]` or `Vec<T>`.
fn slice_element(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Slice(s) => Some(&s.elem),
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            match &last.arguments {
                syn::PathArguments::AngleBracketed(a)
                    if last.ident == "Vec" && a.args.len() == 1 =>
                {
                    match a.args.first()? {
                        syn::GenericArgument::Type(t) => Some(t),
                        _ => None,
                    }
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// `ArrayView<..>`, `ArrayView1<..>`, ...
fn is_view(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none()
        && p.path.segments.last().is_some_and(|s| s.ident.to_string().starts_with("ArrayView")))
}

fn no_tangent() -> TokenStream {
    quote!(::ad::NoTangent)
}

/// The tangent type of `ty`, written out where it is known by name
/// (`f64`, `Array2<f64>` for arrays and views) and as a projection otherwise.
pub fn tangent_type(ty: &Type) -> TokenStream {
    if let Type::Path(p) = ty {
        if p.qself.is_none() && (p.path.is_ident("f64") || p.path.is_ident("f32")) {
            return quote!(#ty);
        }
    }
    array_tangent(ty)
        .unwrap_or_else(|| quote_spanned!(ty.span()=> <#ty as ::ad::Differentiable>::Tangent))
}

/// The owned ndarray type of an array or view type known by name
/// (`ArrayView2<'a, f64>` gives `::ad::ndarray::Array2<f64>`).
fn array_tangent(ty: &Type) -> Option<TokenStream> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last().filter(|_| p.qself.is_none())?;
    let owned = last.ident.to_string().replacen("ArrayView", "Array", 1);
    let known = matches!(
        owned.as_str(),
        "Array"
            | "Array0"
            | "Array1"
            | "Array2"
            | "Array3"
            | "Array4"
            | "Array5"
            | "Array6"
            | "ArrayD"
    );
    if !known {
        return None;
    }
    let args = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter(|a| !matches!(a, syn::GenericArgument::Lifetime(_)))
            .cloned()
            .collect::<Vec<_>>(),
        _ => Vec::new(),
    };
    let ident = Ident::new(&owned, last.ident.span());
    Some(quote_spanned!(ty.span()=> ::ad::ndarray::#ident<#(#args),*>))
}
