//! Arrays built from active values: `array![a, b, c]` (and the `vec![..]`
//! of `Array1::from(vec![..])`), one instruction; `from_shape_fn` with an
//! active body, and `Zip::from(a).and(b).map_collect(f)`, written out as
//! loops of element writes.

use proc_macro2::{Ident, Span};
use syn::{Expr, Pat};

use super::*;
use crate::compiler::ir::{Op, Operand};

impl Lowerer<'_> {
    /// `Array::from_shape_fn(shape, |(i, j)| body)` with an active body:
    /// an array of zeros of that shape whose elements loops write, as the
    /// user would (`a[[i, j]] = body;`), which element writes support.
    pub(super) fn filled_by_shape_fn(
        &mut self,
        shape: &Expr,
        f: &syn::ExprClosure,
        span: Span,
    ) -> Option<Expr> {
        let [param] = f.inputs.iter().collect::<Vec<_>>()[..] else {
            self.errors.at(
                &f.inputs,
                "a `from_shape_fn` closure takes one parameter: `|i| ...` or `|(i, j)| ...`",
            );
            return None;
        };
        if super::iterators::contains_return(&f.body) {
            self.errors.at(
                f,
                "a `from_shape_fn` closure over active values cannot `return`: write the loops out",
            );
            return None;
        }
        // The number of axes: the pattern's, or the shape's if it is a
        // tuple the closure takes whole.
        let axes = match (param, shape) {
            (Pat::Tuple(t), _) => t.elems.len(),
            (_, Expr::Tuple(t)) => t.elems.len(),
            _ => 1,
        };
        let array = self.fresh_local("filled", span);
        // The pattern's own names as the loop variables where it names each
        // index (`|i|`, `|(i, j)|`); else fresh ones, bound to the pattern.
        let plain = |p: &Pat| match p {
            Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() && p.mutability.is_none() => {
                Some(p.ident.clone())
            }
            _ => None,
        };
        let named: Option<Vec<Ident>> = match param {
            Pat::Tuple(t) => t.elems.iter().map(plain).collect(),
            p if axes == 1 => plain(p).map(|i| vec![i]),
            _ => None,
        };
        let bound = named.is_none();
        let indices: Vec<Ident> = named.unwrap_or_else(|| {
            (0..axes)
                .map(|k| self.fresh_local(&format!("axis{k}_"), span))
                .collect()
        });
        let lens: Vec<Ident> = (0..axes)
            .map(|k| self.fresh_local(&format!("len{k}_"), span))
            .collect();
        let element = match axes {
            1 => quote::quote!(#array[#(#indices)*]),
            _ => quote::quote!(#array[[#(#indices),*]]),
        };
        let index_value = match axes {
            1 => quote::quote!(#(#indices)*),
            _ => quote::quote!((#(#indices),*)),
        };
        let dims = match axes {
            1 => quote::quote!(let #(#lens)* = #array.len();),
            _ => quote::quote!(let (#(#lens),*) = #array.dim();),
        };
        let body = &f.body;
        let binding = bound.then(|| quote::quote!(let #param = #index_value;));
        let mut nest = quote::quote!({ #binding #element = #body; });
        for (i, n) in indices.iter().zip(&lens).rev() {
            nest = quote::quote!({ for #i in 0..#n #nest });
        }
        let zeros = self.zeros_fn();
        Some(syn::parse_quote_spanned!(span=> {
            let mut #array = #zeros(#shape);
            #dims
            #nest
            #array
        }))
    }

    /// `Zip::from(a).and(b).map_collect(|&u, &v| body)`: an array of zeros
    /// of `a`'s shape, whose element at each index a loop writes, with the
    /// closure's parameters bound to the parts' elements there. The parts
    /// have one shape, as `Zip` asserts.
    ///
    /// Input:  `Zip::from(&a).and(&b).map_collect(|&u, &v| u * v)`
    /// Output: `{ let mut z = zeros(a.raw_dim());
    ///            for ix in indices(a.raw_dim()) { let u = a[ix]; let v = b[ix]; z[ix] = u * v; }
    ///            z }`
    /// `None` if `m` is not on a `Zip` written out in the call; `Err` once
    /// an error has been reported.
    pub(super) fn zip_map_collect(&mut self, m: &syn::ExprMethodCall) -> Option<Result<Expr, ()>> {
        let span = m.method.span();
        let parts = zip_parts(&m.receiver)?;
        let closure = match m.args.iter().collect::<Vec<_>>()[..] {
            [Expr::Closure(c)] => super::iterators::params_by_value(c)
                .filter(|(params, _)| params.len() == parts.len()),
            _ => None,
        };
        let Some((params, body)) = closure else {
            self.errors.at(
                &m.args,
                format!("`map_collect` is differentiated with a closure taking one element of each of the {} arrays, `|&a, &b| ...` (without `return`)", parts.len()),
            );
            return Some(Err(()));
        };
        let (lets, places) = self.zipped_places(&parts, span);
        let first = &places[0];
        let same_shape = same_shapes(&places);
        let (array, index) = (
            self.fresh_local("zipped", span),
            self.fresh_local("index", span),
        );
        let zeros = self.zeros_fn();
        Some(Ok(syn::parse_quote_spanned!(span=> {
            #(#lets)*
            #(#same_shape)*
            let mut #array = #zeros(#first.raw_dim());
            for #index in ::ad::ndarray::indices(#first.raw_dim()) {
                #(let #params = #places[#index];)*
                #array[#index] = #body;
            }
            #array
        })))
    }

    /// `Zip::from(&mut y).and(a)..for_each(|o, &u, ..| body)`, ndarray's
    /// in-place form: a loop over the indices in which `*o` is the element
    /// `y[index]`, so `*o = e` and `*o += e` are element writes into the
    /// local `y` and the other parameters are bound as `map_collect`'s are.
    /// One part may be written; `o` may appear only as `*o`.
    ///
    /// Input:  `Zip::from(&mut y).and(&a).for_each(|o, &u| *o += u * u)`
    /// Output: `for ix in indices(y.raw_dim()) { let u = a[ix]; y[ix] += u * u; }`
    /// `None` if `m` is not a `for_each` on a `Zip` written out in the
    /// call; `Err` once an error has been reported.
    pub(super) fn zip_for_each(
        &mut self,
        m: &syn::ExprMethodCall,
    ) -> Option<Result<syn::Stmt, ()>> {
        if m.method != "for_each" {
            return None;
        }
        let span = m.method.span();
        let parts = zip_parts(&m.receiver)?;
        let written = written_parts(&parts);
        let closure = match m.args.iter().collect::<Vec<_>>()[..] {
            [Expr::Closure(c)] if c.inputs.len() == parts.len() => Some(c),
            _ => None,
        };
        let (Some(closure), [(position, array)]) = (closure, written.as_slice()) else {
            self.errors.at(
                m,
                "`Zip::for_each` over active values is differentiated with one part written, a local array (`Zip::from(&mut y).and(&a).for_each(|o, &u| *o = ..)`), and a closure taking an element of each part",
            );
            return Some(Err(()));
        };
        let element = match super::iterators::strip_type(&closure.inputs[*position]) {
            Pat::Ident(p) if p.subpat.is_none() => p.ident.clone(),
            other => {
                self.errors.at(other, "the written element of `Zip::for_each` is taken by a name, `o`, and written as `*o`");
                return Some(Err(()));
            }
        };
        // The other parameters, as `map_collect` takes them.
        let mut others = closure.clone();
        others.inputs = closure
            .inputs
            .iter()
            .enumerate()
            .filter(|(k, _)| k != position)
            .map(|(_, p)| p.clone())
            .collect();
        let Some((params, body)) = super::iterators::params_by_value(&others) else {
            self.errors.at(
                &closure.inputs,
                "`Zip::for_each` is differentiated with a closure taking the written element by name and the others as `&u` (without `return`)",
            );
            return Some(Err(()));
        };
        let index = self.fresh_local("index", span);
        let mut body = body;
        let mut writes = ElementWrites {
            element: &element,
            place: syn::parse_quote_spanned!(span=> #array[#index]),
            other_use: None,
        };
        syn::visit_mut::VisitMut::visit_expr_mut(&mut writes, &mut body);
        if let Some(at) = writes.other_use {
            self.errors.at(at, format!("the written element of `Zip::for_each` is used as `*{element}` only (read or assigned): copy it, `let v = *{element};`"));
            return Some(Err(()));
        }
        let others: Vec<&Expr> = parts
            .iter()
            .enumerate()
            .filter(|(k, _)| k != position)
            .map(|(_, p)| *p)
            .collect();
        let (lets, places) = self.zipped_places(&others, span);
        let array_place: Expr = syn::parse_quote!(#array);
        let mut all = vec![array_place];
        all.extend(places.iter().cloned());
        let same_shape = same_shapes(&all);
        Some(Ok(syn::parse_quote_spanned!(span=> {
            #(#lets)*
            #(#same_shape)*
            for #index in ::ad::ndarray::indices(#array.raw_dim()) {
                #(let #params = #places[#index];)*
                #body;
            }
        })))
    }

    /// The parts of a `Zip`, each read where it is (a place) or bound once
    /// by the `let`s returned.
    fn zipped_places(
        &mut self,
        parts: &[&Expr],
        span: Span,
    ) -> (Vec<proc_macro2::TokenStream>, Vec<Expr>) {
        let mut lets = Vec::new();
        let places = parts
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let p = super::strip_refs(p);
                if super::expr::is_place(p) {
                    return p.clone();
                }
                let name = self.fresh_local(&format!("zipped{k}_"), span);
                lets.push(quote::quote!(let #name = #p;));
                syn::parse_quote!(#name)
            })
            .collect();
        (lets, places)
    }

    /// `Array::zeros`, of the body's scalar type where it has one.
    pub(super) fn zeros_fn(&self) -> proc_macro2::TokenStream {
        match &self.scalar_type {
            Some(t) => quote::quote!(::ad::ndarray::Array::<#t, _>::zeros),
            None => quote::quote!(::ad::ndarray::Array::zeros),
        }
    }

    /// `concatenate(axis, &[a, b])` or `stack(axis, &[a, b])`: ndarray's
    /// `Result`.
    pub(super) fn join(
        &mut self,
        axis: &Expr,
        parts: &[&Expr],
        new_axis: bool,
        e: &Expr,
    ) -> Option<Operand> {
        let axis = self.inactive_arg(axis, "the axis");
        let parts: Vec<Option<Operand>> =
            parts.iter().map(|p| self.expr(without_view(p))).collect();
        let (axis, parts) = (axis?, parts.into_iter().collect::<Option<Vec<_>>>()?);
        let op = Op::Join {
            axis,
            parts,
            new_axis,
        };
        Some(self.op_or_constant(op, e.span(), e))
    }

    /// `concatenate![axis, a, b]` and `stack![axis, a, b]`, which panic
    /// where the functions return an error.
    pub(super) fn joined_by_macro(&mut self, m: &syn::ExprMacro, e: &Expr) -> Option<Operand> {
        let parser = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
        let name = m.mac.path.segments.last().map(|s| s.ident.to_string());
        let new_axis = name.as_deref() == Some("stack");
        let items = match syn::parse::Parser::parse2(parser, m.mac.tokens.clone()) {
            Ok(items) if items.len() >= 2 => items,
            _ => {
                self.errors.at(
                    e,
                    "write the axis, then the arrays: `concatenate![Axis(0), a, b]`",
                );
                return None;
            }
        };
        let items: Vec<&Expr> = items.iter().collect();
        let joined = self.join(items[0], &items[1..], new_axis, e)?;
        Some(self.op_or_constant(Op::Unwrap(joined, None), e.span(), e))
    }

    /// `array![a, b, c]` (and the `vec![..]` of `Array1::from(vec![..])`)
    /// with active items: a 1-D array of them. `array![[a, b], [c, d]]`
    /// and `Array2::from(vec![[a, b], [c, d]])` (where `rows`) stack their
    /// rows, each such an array, along a new first axis.
    pub(super) fn stack(&mut self, m: &syn::ExprMacro, e: &Expr, rows: bool) -> Option<Operand> {
        if m.mac.path.is_ident("vec") {
            // `Array1::from(vec![x; n])`: `n` copies of `x`.
            let tokens = &m.mac.tokens;
            if let Ok(Expr::Repeat(repeat)) = syn::parse2::<Expr>(quote::quote!([#tokens])) {
                let len = self.inactive_arg(&repeat.len, "the length of `vec![x; n]`");
                let item = self.expr(&repeat.expr);
                return Some(self.op_or_constant(Op::FromElem(len?, item?), e.span(), e));
            }
        }
        let parser = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
        let items = match syn::parse::Parser::parse2(parser, m.mac.tokens.clone()) {
            Ok(items) if !items.is_empty() => items,
            _ => {
                self.errors.at(
                    e,
                    "an array of active values is written `array![a, b, c]`: items separated by commas",
                );
                return None;
            }
        };
        let items: Vec<Expr> = items.into_iter().collect();
        if !rows && items.iter().any(|i| matches!(i, Expr::Array(_))) {
            self.errors.at(
                e,
                "the items of a 1-D array are scalars: a matrix of active values is written `array![[a, b], [c, d]]` or `Array2::from(vec![[a, b], [c, d]])`",
            );
            return None;
        }
        self.stacked(&items, e)
    }

    /// The array whose items (or, nested in brackets, rows) are `items`.
    pub(super) fn stacked(&mut self, items: &[Expr], e: &Expr) -> Option<Operand> {
        let rows: Vec<&syn::ExprArray> = items
            .iter()
            .filter_map(|i| match i {
                Expr::Array(a) => Some(a),
                _ => None,
            })
            .collect();
        if rows.is_empty() {
            let mut operands = Vec::new();
            for item in items {
                operands.push(self.expr(item));
            }
            let operands = operands.into_iter().collect::<Option<Vec<_>>>()?;
            return Some(self.op_or_constant(Op::Stack(operands), e.span(), e));
        }
        if rows.len() < items.len() {
            let item = items.iter().find(|i| !matches!(i, Expr::Array(_)))?;
            self.errors.at(
                item,
                "every item of an array of rows is a row in brackets: `array![[a, b], [c, d]]`",
            );
            return None;
        }
        let len = |r: &syn::ExprArray| r.elems.len();
        if let Some(row) = rows.iter().find(|r| len(r) != len(rows[0])) {
            self.errors.at(
                row,
                format!(
                    "the rows of an array have one length: this one has {}, the first {}",
                    len(row),
                    len(rows[0])
                ),
            );
            return None;
        }
        let mut parts = Vec::new();
        for row in &rows {
            let row_items: Vec<Expr> = row.elems.iter().cloned().collect();
            let elems = &row.elems;
            // What the row is, if no item of it is active.
            let written: Expr =
                syn::parse_quote_spanned!(row.span()=> ::ad::ndarray::array![#elems]);
            parts.push(self.stacked(&row_items, &written));
        }
        let parts = parts.into_iter().collect::<Option<Vec<_>>>()?;
        let axis = self.inactive_arg(&syn::parse_quote!(::ad::ndarray::Axis(0)), "the axis")?;
        let op = Op::Join {
            axis,
            parts,
            new_axis: true,
        };
        match self.op_or_constant(op, e.span(), e) {
            Operand::Var(v) => Some(self.inst(Op::Unwrap(Operand::Var(v), None), e.span())),
            constant => Some(constant),
        }
    }
}

/// The parts of `Zip::from(a).and(b)..`, in order, as written.
pub(super) fn zip_parts(e: &Expr) -> Option<Vec<&Expr>> {
    let mut parts = Vec::new();
    let mut at = e;
    while let Expr::MethodCall(and) = at {
        if and.method != "and" || and.args.len() != 1 {
            break;
        }
        parts.push(&and.args[0]);
        at = &and.receiver;
    }
    let Expr::Call(from) = at else { return None };
    if !is_zip(at) {
        return None;
    }
    parts.push(&from.args[0]);
    parts.reverse();
    Some(parts)
}

/// The parts a `Zip` writes, `&mut y` of a local `y`: their positions and
/// names.
pub(super) fn written_parts<'a>(parts: &[&'a Expr]) -> Vec<(usize, &'a syn::Ident)> {
    parts
        .iter()
        .enumerate()
        .filter_map(|(k, p)| match p {
            Expr::Reference(r) if r.mutability.is_some() => match &*r.expr {
                Expr::Path(p) => p.path.get_ident().map(|i| (k, i)),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// `Zip` asserts its parts have one shape; so does the code it becomes.
fn same_shapes(places: &[Expr]) -> Vec<proc_macro2::TokenStream> {
    let first = &places[0];
    places[1..]
        .iter()
        .map(|p| {
            quote::quote!(::core::assert_eq!(#first.shape(), #p.shape(), "`Zip`: the arrays have one shape");)
        })
        .collect()
}

/// `*o` replaced by the element it is (`y[index]`), also as a method's
/// receiver (`o.tanh()`, which auto-derefs); any other mention of `o`
/// noted.
pub(super) struct ElementWrites<'a> {
    pub element: &'a syn::Ident,
    pub place: Expr,
    pub other_use: Option<syn::Ident>,
}

impl syn::visit_mut::VisitMut for ElementWrites<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let names_element = |e: &Expr| matches!(e, Expr::Path(p) if p.path.is_ident(self.element));
        if let Expr::Unary(u) = e {
            if matches!(u.op, syn::UnOp::Deref(_)) && names_element(&u.expr) {
                *e = self.place.clone();
                return;
            }
        }
        if let Expr::MethodCall(m) = e {
            if names_element(&m.receiver) {
                *m.receiver = self.place.clone();
            }
        }
        if let Expr::Path(p) = e {
            if p.path.is_ident(self.element) && self.other_use.is_none() {
                self.other_use = p.path.get_ident().cloned();
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

/// `Zip::from(a)`, or `.and(b)` after it.
pub(super) fn is_zip(e: &Expr) -> bool {
    match e {
        Expr::MethodCall(m) if m.method == "and" && m.args.len() == 1 => is_zip(&m.receiver),
        Expr::Call(c) => {
            c.args.len() == 1
                && matches!(&*c.func, Expr::Path(p) if p.path.segments.iter().rev().take(2)
                    .map(|s| s.ident.to_string()).eq(["from", "Zip"]))
        }
        _ => false,
    }
}

/// A part to join without its `.view()`, which the rule takes anyway: a
/// constant `(c * 2.0).view()` bound to a name would borrow a temporary
/// that the `let` drops.
fn without_view(e: &Expr) -> &Expr {
    match e {
        Expr::MethodCall(m) if m.method == "view" && m.args.is_empty() => &m.receiver,
        e => e,
    }
}
