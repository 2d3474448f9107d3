//! Iterator chains that carry a derivative, rewritten as the loops they
//! stand for before lowering:
//!
//! - `x.iter().map(|v| v * v).sum()`, `a.iter().zip(&b).map(|(p, q)| p * q).sum()`,
//!   `xs.iter().enumerate().map(..).product()`, `.fold(init, |acc, v| ..)`:
//!   a block that declares an accumulator, loops and yields it;
//! - `(0..n).map(|i| x[i] * w[i]).sum()`, whose iterator is inactive: the
//!   same block, looping over the iterator as written;
//! - `for (a, b) in x.iter().zip(y.iter())` and the other sources below: a
//!   loop over indices.
//!
//! An active source is read by index, `x.iter()`'s item being `&x[k]`, so a
//! chain may `zip` and `enumerate` sources of the same length; `copied()`
//! and `cloned()` read `x[k]`. Indexing by one `usize` assumes a slice, a
//! `Vec` or a 1-D array, as a `for` loop over a struct's field does; a
//! parameter known to have more axes is rejected. Where the chain is one
//! `map` and a `sum` over an array that is not known to be 1-D, it becomes
//! `x.mapv(..).sum()`, which any dimension allows.

use proc_macro2::Span;
use quote::quote_spanned;
use syn::{Expr, Pat};

use super::*;

/// What a chain does to each item after its sources.
enum Stage<'a> {
    /// `map(f)` with a closure or a function path.
    Map(&'a Expr),
    /// `filter(|v| condition)`, whose closure sees a reference to the item.
    Filter(&'a syn::ExprClosure),
}

/// The loop a chain's items come from.
enum Items {
    /// Indexable sources read at the loop's index, over `0..len`.
    Indexed { len: Expr },
    /// An inactive iterator, looped over as written.
    Iterator(Expr),
}

/// A piece of the loop body: bindings, or a filter's condition, which
/// guards the pieces after it.
enum Step {
    Lets(Vec<syn::Stmt>),
    Guard(Expr),
}

/// How a chain ends: the accumulator's start and how an item updates it.
enum Terminal<'a> {
    Sum,
    Product,
    Fold { init: &'a Expr, f: &'a Expr },
}

impl Lowerer<'_> {
    /// `m` when it ends an iterator chain that carries a derivative, as the
    /// block that computes it; `Err` once an error has been reported.
    pub(super) fn iterator_chain(&mut self, m: &syn::ExprMethodCall) -> Option<Result<Expr, ()>> {
        let name = m.method.to_string();
        let terminal = match (name.as_str(), m.args.len()) {
            ("sum", 0) => Terminal::Sum,
            ("product", 0) => Terminal::Product,
            ("fold", 2) => Terminal::Fold {
                init: &m.args[0],
                f: &m.args[1],
            },
            _ => return None,
        };
        let (source, stages) = split_stages(&m.receiver);
        let chained = is_adaptor(source);
        // `x.sum()` and `x.map(f).sum()` on an array are ndarray's;
        // ndarray's `x.fold(..)` visits every element, as
        // `x.iter().fold(..)` does.
        if !chained && (!stages.is_empty() || !matches!(terminal, Terminal::Fold { .. })) {
            return None;
        }
        let source = if chained {
            source.clone()
        } else {
            syn::parse_quote_spanned!(m.method.span()=> #source.iter())
        };
        let span = m.method.span();
        if let (Terminal::Sum, Some(mapped)) = (&terminal, self.as_mapv(&source, &stages, span)) {
            return Some(Ok(mapped));
        }
        Some(self.chain_block(m, &source, &stages, terminal, span))
    }

    /// A `for` loop over active sources (`for l in &p.layers`,
    /// `for (a, b) in x.iter().zip(&y)`), as a loop over their indices that
    /// binds each item.
    pub(super) fn indexed_for(&mut self, f: &syn::ExprForLoop) -> Option<Result<Expr, ()>> {
        if !self.carries_derivative(&f.expr) {
            return None;
        }
        let index = self.fresh_numbered("item", |s| &mut s.consts);
        let (len, item) = match self.indexed(&f.expr, &index, true) {
            Ok(found) => found,
            Err(error) => {
                self.errors.push(error);
                return Some(Err(()));
            }
        };
        let mut stmts = Vec::new();
        let mut binder = self.binder();
        binder.bind(&f.pat, &item, &mut stmts);
        stmts.extend(f.body.stmts.iter().cloned());
        binder.finish(&mut stmts);
        let label = &f.label;
        Some(Ok(
            syn::parse_quote_spanned!(f.for_token.span=> #label for #index in 0..#len {
                #(#stmts)*
            }),
        ))
    }

    fn chain_block(
        &mut self,
        m: &syn::ExprMethodCall,
        source: &Expr,
        stages: &[Stage],
        terminal: Terminal,
        span: Span,
    ) -> Result<Expr, ()> {
        // Active sources are read by index, and so are inactive ones whose
        // items borrow a local (`v.iter()`), which the reverse sweep could
        // not keep; a parameter's items it can.
        let index = self.fresh_numbered("item", |s| &mut s.consts);
        let indexed = self.indexed(source, &index, false);
        let borrows_local = indexed.is_ok() && self.mentions_locals(source);
        let mut binder = self.binder();
        // `index` is the loop variable: an index, or the iterator's item.
        let (items, mut item) = if self.carries_derivative(source) || borrows_local {
            let (len, item) = indexed.map_err(|error| self.errors.push(error))?;
            (Items::Indexed { len }, item)
        } else {
            (Items::Iterator(source.clone()), syn::parse_quote!(#index))
        };
        // Each filter's condition guards what follows it, in an `if`.
        let mut steps: Vec<Step> = Vec::new();
        let mut stmts = Vec::new();
        for stage in stages {
            match stage {
                Stage::Map(f) => item = self.apply(f, &[item], &mut binder, &mut stmts)?,
                Stage::Filter(c) => {
                    let pat = single_param(c).ok_or_else(|| {
                        self.errors.at(
                            &c.inputs,
                            "a `filter` closure takes one parameter: `|v| ...`",
                        );
                    })?;
                    self.plain_closure_body(c)?;
                    binder.bind(pat, &syn::parse_quote!(&#item), &mut stmts);
                    steps.push(Step::Lets(std::mem::take(&mut stmts)));
                    steps.push(Step::Guard((*c.body).clone()));
                }
            }
        }
        let acc = self.fresh_local("acc", span);
        let turbofish = m.turbofish.as_ref().and_then(|t| match t.args.first() {
            Some(syn::GenericArgument::Type(ty)) if t.args.len() == 1 => Some(ty.clone()),
            _ => None,
        });
        let (init, update): (Expr, syn::Stmt) = match terminal {
            Terminal::Sum => (
                self.float_literal(turbofish.as_ref(), 0.0, span),
                syn::parse_quote!(#acc += #item;),
            ),
            Terminal::Product => (
                self.float_literal(turbofish.as_ref(), 1.0, span),
                syn::parse_quote!(#acc *= #item;),
            ),
            Terminal::Fold { init, f } => {
                let acc_path: Expr = syn::parse_quote!(#acc);
                let next = self.apply(f, &[acc_path, item], &mut binder, &mut stmts)?;
                ((*init).clone(), syn::parse_quote!(#acc = #next;))
            }
        };
        stmts.push(update);
        for step in steps.into_iter().rev() {
            match step {
                Step::Lets(mut lets) => {
                    lets.append(&mut stmts);
                    stmts = lets;
                }
                Step::Guard(condition) => {
                    stmts = vec![syn::parse_quote!(if #condition { #(#stmts)* })];
                }
            }
        }
        binder.finish(&mut stmts);
        let head = match items {
            Items::Indexed { len } => quote_spanned!(span=> for #index in 0..#len),
            Items::Iterator(iter) => quote_spanned!(span=> for #index in #iter),
        };
        Ok(syn::parse_quote_spanned!(span=> {
            let mut #acc = #init;
            #head {
                #(#stmts)*
            }
            #acc
        }))
    }

    /// `x.iter().map(f).sum()` as `x.mapv(f).sum()` where `x` is an array
    /// (not a slice, `Vec` or struct field) that may have any number of
    /// axes; `x.iter().sum()` as `x.sum()`.
    fn as_mapv(&self, source: &Expr, stages: &[Stage], span: Span) -> Option<Expr> {
        let Expr::MethodCall(iter) = source else {
            return None;
        };
        if iter.method != "iter" || !iter.args.is_empty() {
            return None;
        }
        let array = &*iter.receiver;
        let is_array = matches!(array, Expr::Path(_))
            && self.sequence_named(array).is_none()
            && !self.one_axis(array)
            && self.carries_derivative(array);
        if !is_array {
            return None;
        }
        match stages {
            [] => Some(syn::parse_quote_spanned!(span=> #array.sum())),
            [Stage::Map(Expr::Closure(c))] => {
                let closure = by_value(c)?;
                Some(syn::parse_quote_spanned!(span=> #array.mapv(#closure).sum()))
            }
            _ => None,
        }
    }

    /// The length and the item at `index` of an indexable source:
    /// `x.iter()`, `&x` and (where `bare` allows, as in a `for` loop or a
    /// `zip` argument) `x`; a matrix's `rows()`, `outer_iter()` and
    /// `columns()`; `copied()`, `cloned()`, `enumerate()` and `zip(..)` of
    /// those. The error says why `e` is not one.
    fn indexed(&self, e: &Expr, index: &syn::Ident, bare: bool) -> syn::Result<(Expr, Expr)> {
        match e {
            Expr::Paren(p) => self.indexed(&p.expr, index, bare),
            Expr::MethodCall(m) if m.args.is_empty() && m.method == "iter" => {
                self.element_of(&m.receiver, index)
            }
            // A matrix's rows or columns: `x.row(k)`, `x.column(k)`.
            Expr::MethodCall(m)
                if m.args.is_empty() && m.method == "into_iter" && lanes(&m.receiver).is_some() =>
            {
                self.indexed(&m.receiver, index, bare)
            }
            Expr::MethodCall(m) if m.args.is_empty() && lanes(e).is_some() => {
                let x = named(&m.receiver)?;
                let (count, lane) = lanes(e).expect("matched");
                let count = syn::Ident::new(count, m.method.span());
                let lane = syn::Ident::new(lane, m.method.span());
                Ok((
                    syn::parse_quote!(#x.#count()),
                    syn::parse_quote!(#x.#lane(#index)),
                ))
            }
            Expr::MethodCall(m)
                if m.args.is_empty() && (m.method == "copied" || m.method == "cloned") =>
            {
                let (len, item) = self.indexed(&m.receiver, index, false)?;
                let Expr::Reference(r) = item else {
                    return Err(syn::Error::new_spanned(
                        &m.method,
                        format!(
                            "`{}` here applies to items that are not references: remove it",
                            m.method
                        ),
                    ));
                };
                Ok((len, *r.expr))
            }
            Expr::MethodCall(m) if m.args.is_empty() && m.method == "enumerate" => {
                let (len, item) = self.indexed(&m.receiver, index, false)?;
                Ok((len, syn::parse_quote!((#index, #item))))
            }
            Expr::MethodCall(m) if m.args.len() == 1 && m.method == "zip" => {
                let (len, item) = self.indexed(&m.receiver, index, false)?;
                let (other_len, other) = self.indexed(&m.args[0], index, true)?;
                Ok((
                    syn::parse_quote!(::core::cmp::min(#len, #other_len)),
                    syn::parse_quote!((#item, #other)),
                ))
            }
            Expr::Reference(r) if r.mutability.is_none() => self.element_of(&r.expr, index),
            e if bare && super::expr::is_place(e) => self.element_of(e, index),
            other => Err(syn::Error::new_spanned(
                other,
                "an iterator over active values is read by index: its sources must be `x.iter()`, `&x` or `x` (slices, `Vec`s, 1-D arrays), with `zip`, `enumerate`, `copied` or `cloned`; or loop over `0..x.len()` and index",
            )),
        }
    }

    /// `(x.len(), &x[index])` for a named value or a place `x`.
    fn element_of(&self, x: &Expr, index: &syn::Ident) -> syn::Result<(Expr, Expr)> {
        let x = named(x)?;
        if !self.one_axis(x) && self.array_rank(x).is_some() {
            let name = quote::ToTokens::to_token_stream(x);
            return Err(syn::Error::new_spanned(
                x,
                format!("`{name}` has more than one axis, and an iterator over active values is read by index: loop over `0..{name}.nrows()` with `{name}.row(i)`, or use `{name}.mapv(..)`"),
            ));
        }
        Ok((syn::parse_quote!(#x.len()), syn::parse_quote!(&#x[#index])))
    }

    fn binder(&self) -> Binder {
        let inactive_locals = self
            .env
            .iter()
            .filter(|(_, b)| matches!(b, Binding::Const { param: false, .. }))
            .map(|(n, _)| n.clone())
            .collect();
        Binder {
            inactive_locals,
            copied: Vec::new(),
        }
    }

    /// `f(args)` for a closure (its parameters bound to `args`) or a path.
    fn apply(
        &mut self,
        f: &Expr,
        args: &[Expr],
        binder: &mut Binder,
        stmts: &mut Vec<syn::Stmt>,
    ) -> Result<Expr, ()> {
        match f {
            Expr::Closure(c) => {
                if c.inputs.len() != args.len() {
                    self.errors.at(
                        &c.inputs,
                        format!("this closure takes {} parameter(s) here", args.len()),
                    );
                    return Err(());
                }
                self.plain_closure_body(c)?;
                for (pat, arg) in c.inputs.iter().zip(args) {
                    binder.bind(pat, arg, stmts);
                }
                let body = &c.body;
                Ok(syn::parse_quote!(#body))
            }
            Expr::Path(_) => Ok(syn::parse_quote!(#f(#(#args),*))),
            other => {
                self.errors.at(
                    other,
                    "give the iterator adaptor a closure `|v| ...` or a function's path",
                );
                Err(())
            }
        }
    }

    /// A closure body spliced into a loop must not `return` (which would
    /// return from the function instead) or be `async`.
    fn plain_closure_body(&self, c: &syn::ExprClosure) -> Result<(), ()> {
        if contains_return(&c.body) || c.asyncness.is_some() {
            self.errors.at(
                c,
                "a closure given to an iterator adaptor over active values cannot `return`: write the loop out",
            );
            return Err(());
        }
        Ok(())
    }

    /// `0.0` (or `1.0`) of the sum's type: the turbofish's, or the float
    /// type the signature names if it names one, else a literal.
    fn float_literal(&self, turbofish: Option<&syn::Type>, value: f64, span: Span) -> Expr {
        let literal = syn::LitFloat::new(&format!("{value:?}"), span);
        let ty = turbofish
            .cloned()
            .or_else(|| self.scalar_type.as_ref().map(|t| syn::parse_quote!(#t)));
        match ty {
            Some(ty) if super::is_float_type(&ty) => {
                let suffixed = format!("{value:?}{}", quote::ToTokens::to_token_stream(&ty));
                Expr::Lit(syn::ExprLit {
                    attrs: Vec::new(),
                    lit: syn::Lit::Float(syn::LitFloat::new(&suffixed, span)),
                })
            }
            Some(ty) => syn::parse_quote_spanned!(span=> <#ty as ::ad::Float>::of(#literal)),
            None => syn::parse_quote!(#literal),
        }
    }

    /// Whether the parameter `x` names is known to be 1-D (a slice, a
    /// `Vec`, `Array1`); fields and locals are not known.
    fn one_axis(&self, x: &Expr) -> bool {
        self.sequence_named(x).is_some() || self.array_rank(x) == Some(1)
    }

    /// The number of axes of the array parameter `x` names, where its type
    /// says.
    fn array_rank(&self, x: &Expr) -> Option<usize> {
        let Expr::Path(p) = x else { return None };
        let name = p.path.get_ident()?.to_string();
        if !matches!(self.env.get(&name), Some(Binding::Active(_))) {
            return None;
        }
        self.param_ranks.get(&name).copied()
    }
}

/// The chain below a terminal: its source and its `map`/`filter` stages, in
/// order.
fn split_stages(mut e: &Expr) -> (&Expr, Vec<Stage<'_>>) {
    let mut stages = Vec::new();
    loop {
        match e {
            Expr::MethodCall(m) if m.args.len() == 1 && m.method == "map" => {
                stages.push(Stage::Map(&m.args[0]));
                e = &m.receiver;
            }
            Expr::MethodCall(m) if m.args.len() == 1 && m.method == "filter" => match &m.args[0] {
                Expr::Closure(c) => {
                    stages.push(Stage::Filter(c));
                    e = &m.receiver;
                }
                _ => break,
            },
            _ => break,
        }
    }
    stages.reverse();
    (e, stages)
}

/// `x` where it names a value or a place, which the loop reads again at
/// each index.
fn named(x: &Expr) -> syn::Result<&Expr> {
    if super::expr::is_place(x) {
        Ok(x)
    } else {
        Err(syn::Error::new_spanned(
            x,
            "iterate over a named value: bind this expression with `let` first, then call `.iter()` on the name",
        ))
    }
}

/// For `x.rows()`, `x.outer_iter()` and `x.columns()`: the count and the
/// lane read at an index (`nrows` and `row`, `ncols` and `column`).
fn lanes(e: &Expr) -> Option<(&'static str, &'static str)> {
    let Expr::MethodCall(m) = e else { return None };
    if !m.args.is_empty() {
        return None;
    }
    match m.method.to_string().as_str() {
        "rows" | "outer_iter" => Some(("nrows", "row")),
        "columns" => Some(("ncols", "column")),
        _ => None,
    }
}

/// Whether `e` is an iterator: a range or an adaptor call.
pub(super) fn is_adaptor(e: &Expr) -> bool {
    match e {
        Expr::Paren(p) => is_adaptor(&p.expr),
        Expr::Range(_) => true,
        Expr::MethodCall(m) => matches!(
            m.method.to_string().as_str(),
            "iter"
                | "into_iter"
                | "copied"
                | "cloned"
                | "zip"
                | "enumerate"
                | "rev"
                | "step_by"
                | "skip"
                | "take"
                | "rows"
                | "columns"
                | "outer_iter"
        ),
        _ => false,
    }
}

fn single_param(c: &syn::ExprClosure) -> Option<&Pat> {
    (c.inputs.len() == 1).then(|| &c.inputs[0])
}

fn strip_type(p: &Pat) -> &Pat {
    match p {
        Pat::Type(t) => strip_type(&t.pat),
        Pat::Paren(p) => strip_type(&p.pat),
        p => p,
    }
}

/// How patterns are bound to items.
struct Binder {
    /// The body's inactive locals: a name bound to a reference into one
    /// (`&v[k]`) is bound to a copy instead, as the reverse sweep cannot
    /// keep a borrow of a local.
    inactive_locals: HashSet<String>,
    /// The names bound to copies: `*v` in the user's code reads `v`.
    copied: Vec<syn::Ident>,
}

impl Binder {
    /// `let pat = item;`, destructured where both are tuples or references
    /// so that `|(&a, &b)|` on `(&x[k], &y[k])` reads `a = x[k]`, `b = y[k]`.
    fn bind(&mut self, pat: &Pat, item: &Expr, out: &mut Vec<syn::Stmt>) {
        match (pat, item) {
            (Pat::Paren(p), _) => self.bind(&p.pat, item, out),
            (_, Expr::Paren(e)) => self.bind(pat, &e.expr, out),
            (Pat::Reference(r), Expr::Reference(e)) if r.mutability.is_none() => {
                self.bind(&r.pat, &e.expr, out)
            }
            (Pat::Tuple(t), Expr::Tuple(e)) if t.elems.len() == e.elems.len() => {
                for (p, e) in t.elems.iter().zip(&e.elems) {
                    self.bind(p, e, out);
                }
            }
            (Pat::Wild(_), _) => {}
            // A lane of an inactive local (`v.row(k)`): owned.
            (Pat::Ident(p), Expr::MethodCall(m))
                if p.subpat.is_none()
                    && p.by_ref.is_none()
                    && self.reads_inactive_local(&m.receiver) =>
            {
                out.push(syn::parse_quote!(let #p = #item.to_owned();));
            }
            (Pat::Ident(p), Expr::Reference(_))
                if p.subpat.is_none() && p.by_ref.is_none() && self.reads_inactive_local(item) =>
            {
                let mut value = item;
                while let Expr::Reference(r) = value {
                    value = &r.expr;
                }
                out.push(syn::parse_quote!(let #p = ::core::clone::Clone::clone(&#value);));
                self.copied.push(p.ident.clone());
            }
            _ => out.push(syn::parse_quote!(let #pat = #item;)),
        }
    }

    /// Whether `item` is a reference into an inactive local (`&&v[k]`).
    fn reads_inactive_local(&self, mut item: &Expr) -> bool {
        loop {
            match item {
                Expr::Reference(r) => item = &r.expr,
                Expr::Paren(p) => item = &p.expr,
                Expr::Index(i) => item = &i.expr,
                Expr::Field(f) => item = &f.base,
                Expr::Path(p) => {
                    return p
                        .path
                        .get_ident()
                        .is_some_and(|i| self.inactive_locals.contains(&i.to_string()))
                }
                _ => return false,
            }
        }
    }

    /// The loop body `stmts` reading `*v` as `v` for the names bound to
    /// copies, statement by statement (the body's own lets bind them).
    fn finish(&self, stmts: &mut [syn::Stmt]) {
        if self.copied.is_empty() {
            return;
        }
        let names = self.copied.iter().map(|n| n.to_string()).collect();
        for stmt in stmts {
            *stmt = scan::rename_stmt_with_values(stmt, &scan::Renames::new(), &names).0;
        }
    }
}

/// A closure over references to elements (`iter().map`'s, ndarray's
/// `map`'s) as one over their values, for `mapv`: `|&v| body` is
/// `|v| body`, and `|v| body` reads `*v` as `v`.
pub(super) fn by_value(c: &syn::ExprClosure) -> Option<Expr> {
    let pat = single_param(c)?;
    let (param, deref) = match strip_type(pat) {
        Pat::Reference(r) => match strip_type(&r.pat) {
            Pat::Ident(p) if p.subpat.is_none() => (p.ident.clone(), false),
            _ => return None,
        },
        Pat::Ident(p) if p.subpat.is_none() => (p.ident.clone(), true),
        _ => return None,
    };
    if contains_return(&c.body) {
        return None;
    }
    let body = if deref {
        // An `iter()` closure's parameter is a reference, a `mapv` closure's
        // a value.
        without_derefs(&c.body, &HashSet::from([param.to_string()])).0
    } else {
        (*c.body).clone()
    };
    Some(syn::parse_quote!(|#param| #body))
}

pub(super) fn contains_return(e: &Expr) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_expr(&mut finder, e);
    finder.0
}

/// `e` with `*v` and `**v` read as `v` for each of `names` (the renamer's
/// reading of values generated code holds, with nothing renamed).
fn without_derefs(e: &Expr, names: &HashSet<String>) -> (Expr, Vec<Ident>) {
    scan::rename_expr_with_values(e, &scan::Renames::new(), names)
}

/// The number of axes an array type names (`Array2<f64>`, `&Array1<F>`,
/// `ArrayView<F, Ix3>`), where it says.
pub(super) fn array_rank(ty: &syn::Type) -> Option<usize> {
    let ty = match ty {
        syn::Type::Reference(r) => &*r.elem,
        ty => ty,
    };
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let name = last.ident.to_string();
    let base = ["ArrayView", "ArcArray", "CowArray", "Array"]
        .into_iter()
        .find(|b| name.starts_with(b))?;
    match &name[base.len()..] {
        "" => {
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                return None;
            };
            let Some(syn::GenericArgument::Type(syn::Type::Path(d))) = args.args.iter().nth(1)
            else {
                return None;
            };
            let d = d.path.segments.last()?.ident.to_string();
            d.strip_prefix("Ix")?.parse().ok()
        }
        "D" => None,
        digits => digits.parse().ok(),
    }
}
