//! Lowering statements: `let`, assignment, compound assignment, the body's
//! result.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{BinOp, Expr, Pat, Type};

use std::collections::HashMap;

use super::*;
use crate::compiler::ir::{Arith, Const, Op, Operand, Stmt};
use crate::compiler::scan;

impl Lowerer<'_> {
    // ---- statements --------------------------------------------------------

    /// Lowers statements; the value of the last expression is the result.
    pub(super) fn block(&mut self, stmts: &[syn::Stmt], span: Span) -> Operand {
        self.with_unread_leaves(stmts, |l| l.statements_then_result(stmts, span))
    }

    fn statements_then_result(&mut self, stmts: &[syn::Stmt], span: Span) -> Operand {
        let Some((last, init)) = stmts.split_last() else {
            return self.missing_result(span);
        };
        for stmt in init {
            self.stmt(stmt);
        }
        match last {
            syn::Stmt::Expr(e, None) => self.value_expr(e).unwrap_or_else(|| self.poison()),
            syn::Stmt::Expr(Expr::Return(r), Some(_)) => match &r.expr {
                Some(e) => self.expr(e).unwrap_or_else(|| self.poison()),
                None => self.missing_result(r.span()),
            },
            other => {
                self.stmt(other);
                self.missing_result(other.span())
            }
        }
    }

    pub(super) fn missing_result(&mut self, span: Span) -> Operand {
        self.errors.at_span(
            span,
            "the body must end in the value to differentiate (an expression without `;`)",
        );
        self.poison()
    }

    /// A placeholder after an error; never emitted.
    pub(super) fn poison(&self) -> Operand {
        Operand::Const(Const::opaque(quote!(())))
    }

    pub(super) fn stmt(&mut self, stmt: &syn::Stmt) {
        match stmt {
            syn::Stmt::Local(local) => self.local(local),
            syn::Stmt::Expr(e, semi) => self.expr_stmt(e, semi.is_some()),
            syn::Stmt::Item(item) => self.stmts.push(Stmt::Verbatim(item.to_token_stream())),
            syn::Stmt::Macro(m) => {
                let (renamed, _) = self.renamed_stmt(stmt);
                let _ = m;
                self.stmts.push(Stmt::Verbatim(renamed.to_token_stream()));
            }
        }
    }

    pub(super) fn local(&mut self, local: &syn::Local) {
        if let Some((local, drained)) = self.without_drains(local, |d, l| d.visit_local_mut(l)) {
            self.local(&local);
            return self.clear_drained(drained);
        }
        let (pat, ty) = match &local.pat {
            Pat::Type(pt) => (&*pt.pat, Some(pt.ty.clone())),
            p => (p, None),
        };
        if let (Some(ty), Some(init)) = (&ty, &local.init) {
            if let Expr::MethodCall(m) = &*init.expr {
                // `let v: Vec<f64> = ..collect();` collects into a `Vec`, as
                // `collect::<Vec<f64>>()` does.
                if m.method == "collect"
                    && m.turbofish.is_none()
                    && super::iterators::is_vec_type(ty)
                    && self.carries_derivative(&init.expr)
                {
                    let mut local = local.clone();
                    let mut m = m.clone();
                    m.turbofish = Some(syn::parse_quote!(::<#ty>));
                    if let Some(init) = &mut local.init {
                        *init.expr = Expr::MethodCall(m);
                    }
                    self.local(&local);
                    return;
                }
            }
        }
        self.rebind_for_closures(&scan::pattern_names(pat));
        let makes_vec = local.init.as_ref().is_some_and(|i| {
            makes_vec(&i.expr)
                || matches!(&*i.expr, Expr::MethodCall(m)
                    if m.method == "clone" && m.args.is_empty() && self.names_vec_local(&m.receiver))
        }) || ty.as_deref().is_some_and(super::iterators::is_vec_type);
        for name in scan::pattern_names(pat) {
            if makes_vec {
                self.vec_locals.insert(name);
            } else {
                self.vec_locals.remove(&name);
            }
        }
        let Some(init) = &local.init else {
            self.verbatim_local(local);
            return;
        };
        if let (Pat::Ident(p), Expr::Closure(c)) = (pat, &*init.expr) {
            if p.subpat.is_none() && self.local_closure(&p.ident, c) {
                return;
            }
        }
        if self.active_mentions(&init.expr).is_empty() {
            self.verbatim_local(local);
            return;
        }
        if matches!(pat, Pat::Wild(_)) && init.diverge.is_none() {
            // `let _ = e;` evaluates `e` and drops it, as `e;` does.
            self.expr_stmt(&init.expr, true);
            return;
        }
        if init.diverge.is_some() && !self.carries_derivative(&init.expr) {
            // `let n = x.len() else { .. }` (the last arm of a `match` on
            // `x.len()` binds `n` this way): inactive, kept as written.
            self.verbatim_local(local);
            return;
        }
        if !matches!(pat, Pat::Ident(_)) && !self.carries_derivative(&init.expr) {
            // `let (n, d) = (x.nrows(), x.ncols());`: inactive values that
            // only look at active ones, kept as written (renamed).
            self.verbatim_local(local);
            return;
        }
        if let (Pat::Tuple(t), None) = (pat, &init.diverge) {
            if self.tuple_of_names(t, &init.expr) {
                return;
            }
        }
        let (name, mutable) = match pat {
            Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => {
                (p.ident.clone(), p.mutability.is_some())
            }
            other => {
                self.errors.at(
                    other,
                    "an active value must be bound to one name (`let x = ...`); destructure it with `ad::stop_gradient` if no derivative should flow",
                );
                return;
            }
        };
        if let Some((else_token, _)) = &init.diverge {
            self.errors.at(
                else_token,
                "`let ... else` on an active value is not supported: bind it with a plain `let`",
            );
        }
        let first_new = self.vars.len();
        let Some(value) = self.value_expr(&init.expr) else {
            return;
        };
        if let (Expr::Reference(_), Operand::Var(v)) = (without_parens(&init.expr), &value) {
            if v.0 >= first_new {
                self.bound_by_reference.insert(*v);
            }
        }
        self.bind(&name, value, first_new, ty, mutable);
    }

    /// `let (m, v) = stats(x);`: the tuple a call returns, each name bound
    /// to a copy of its item (`t.0`, `t.1`), as `let w = p.w;` binds a
    /// field's; `let (v, (g1, g2)) = g_grad(x, y);` binds items of items
    /// (`t.1.0`). False, with nothing done, unless every element of the
    /// pattern is a name, `_` or such a tuple of them.
    fn tuple_of_names(&mut self, t: &syn::PatTuple, init: &Expr) -> bool {
        let Some(leaves) = tuple_leaves(t) else {
            return false;
        };
        let flat = !t.elems.iter().any(|p| matches!(p, Pat::Tuple(_)));
        let names: Vec<Option<&syn::PatIdent>> = t
            .elems
            .iter()
            .map(|p| match p {
                Pat::Ident(p) => Some(p),
                _ => None,
            })
            .collect();
        // `let (i, v) = &(k, x[k]);`, as a filter's closure over an
        // `enumerate` binds its item: each part bound to a name of its
        // own, all evaluated first.
        let (by_ref, inner) = match init {
            Expr::Reference(r) if r.mutability.is_none() => (true, &*r.expr),
            e => (false, e),
        };
        if let Expr::Tuple(parts) = inner {
            if !flat {
                return false;
            }
            if parts.elems.len() == names.len() {
                let temps: Vec<Ident> = parts
                    .elems
                    .iter()
                    .map(|_| self.fresh_local("part", init.span()))
                    .collect();
                let amp = by_ref.then(|| quote!(&));
                let mut lets: Vec<syn::Stmt> = parts
                    .elems
                    .iter()
                    .zip(&temps)
                    .map(|(e, t)| syn::parse_quote!(let #t = #amp #e;))
                    .collect();
                for (p, t) in names.iter().zip(&temps) {
                    if let Some(p) = p {
                        lets.push(syn::parse_quote!(let #p = #t;));
                    }
                }
                for stmt in &lets {
                    self.stmt(stmt);
                }
                return true;
            }
        }
        let Some(value) = self.value_expr(init) else {
            return true;
        };
        let Operand::Var(tuple) = value else {
            return false;
        };
        let span = init.span();
        for (path, p) in leaves {
            if self.unread_leaves.contains(&leaf_key(p)) {
                // Never read: not copied out (it may be no value the rules
                // take, such as a `#[constant]` parameter's `NoTangent`).
                continue;
            }
            let parts = path.into_iter().map(syn::Index::from);
            let first_new = self.vars.len();
            // By value, as `let m = t.0;` is (a field read `let` owns a copy).
            let item = self.inst(Op::Place(Operand::Var(tuple), quote!(#(.#parts)*)), span);
            let item = self.inst(Op::ToOwned(item), span);
            self.bind(&p.ident, item, first_new, None, p.mutability.is_some());
        }
        true
    }

    /// Binds the user's `name` to `value`: names the instruction that made
    /// it, or aliases an existing variable. An inactive value bound `mut`
    /// stays mutable (`let mut j = x.len(); .. j -= 1;`).
    pub(super) fn bind(
        &mut self,
        name: &Ident,
        value: Operand,
        first_new: usize,
        ty: Option<Box<Type>>,
        mutable: bool,
    ) {
        match value {
            Operand::Var(v) => {
                if v.0 >= first_new {
                    self.vars[v.0].ident = self.fresh(&name.to_string());
                    if let Some(ty) = ty {
                        if let Some(Stmt::Inst(inst)) = self
                            .stmts
                            .iter_mut()
                            .rev()
                            .find(|s| matches!(s, Stmt::Inst(i) if i.dest == v))
                        {
                            inst.ty = Some(ty);
                        }
                    }
                }
                self.env.insert(name.to_string(), Binding::Active(v));
            }
            Operand::Const(c) => {
                let ident = self.fresh(&name.to_string());
                let expr = c.tokens;
                let ty = ty.map(|t| quote!(: #t));
                let m = mutable.then(|| quote!(mut));
                // An inactive local like any other: a block's record saves
                // it when the reverse sweep reads it.
                self.stmts.push(Stmt::InactiveLet {
                    tokens: quote!(let #m #ident #ty = #expr;),
                    names: vec![ident.clone()],
                    views: Vec::new(),
                });
                self.env.insert(
                    name.to_string(),
                    Binding::Const {
                        renamed: Some(ident),
                        literal: c.literal,
                        scalar: c.scalar,
                        param: false,
                    },
                );
            }
        }
    }

    pub(super) fn verbatim_local(&mut self, local: &syn::Local) {
        let literal = local
            .init
            .as_ref()
            .is_some_and(|i| self.is_literal(&i.expr))
            && !matches!(&local.pat, Pat::Type(_));
        let scalar = match &local.pat {
            Pat::Type(pt) => self.is_float_type(&pt.ty),
            _ => local.init.as_ref().is_some_and(|i| self.is_scalar(&i.expr)),
        };
        if self.shadowing_local(local, literal, scalar) {
            return;
        }
        let stmt = syn::Stmt::Local(local.clone());
        let (renamed, _) = self.renamed_stmt(&stmt);
        let pat = match &local.pat {
            Pat::Type(pt) => &*pt.pat,
            p => p,
        };
        let names: Vec<Ident> = scan::pattern_names(pat)
            .into_iter()
            .map(|n| Ident::new(&n, pat.span()))
            .collect();
        self.stmts.push(Stmt::InactiveLet {
            tokens: renamed.to_token_stream(),
            views: self.views_of_locals(local, &names),
            names,
        });
        for name in scan::pattern_names(pat) {
            self.used_names.insert(name.clone());
            self.env.insert(
                name,
                Binding::Const {
                    renamed: None,
                    literal,
                    scalar,
                    param: false,
                },
            );
        }
    }

    /// The names a `let` binds to a view of an array the body binds.
    fn views_of_locals(&self, local: &syn::Local, names: &[Ident]) -> Vec<Ident> {
        let views = local
            .init
            .as_ref()
            .is_some_and(|i| self.views_a_local(super::strip_refs(&i.expr)));
        if views {
            names.to_vec()
        } else {
            Vec::new()
        }
    }

    /// `let i = i + 1;` where `i` is bound already, or was bound in a block
    /// that has ended (`{ let p = ..; } { let p = ..; }`, which generated
    /// code flattens): the new binding gets a name of its own (`i_1`), read
    /// by the code after it, so the reverse sweep can still tell the two
    /// apart (it may read both).
    fn shadowing_local(&mut self, local: &syn::Local, literal: bool, scalar: bool) -> bool {
        let pat = match &local.pat {
            Pat::Type(pt) => &*pt.pat,
            p => p,
        };
        if local.init.is_none() {
            return false;
        }
        let names = scan::pattern_names(pat);
        let renames: HashMap<String, Ident> = names
            .iter()
            .filter(|n| self.env.contains_key(*n) || self.ended_scopes.contains(*n))
            .cloned()
            .collect::<Vec<_>>()
            .into_iter()
            .map(|n| {
                let ident = self.fresh(&n);
                (n, ident)
            })
            .collect();
        if renames.is_empty() {
            return false;
        }
        // The initializer (and an `else`) read the old bindings; the pattern
        // binds the new names.
        let (mut renamed, _) = self.renamed_stmt(&syn::Stmt::Local(local.clone()));
        struct Bind<'a>(&'a HashMap<String, Ident>);
        impl syn::visit_mut::VisitMut for Bind<'_> {
            fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
                if let Some(to) = self.0.get(&p.ident.to_string()) {
                    p.ident = to.clone();
                }
                syn::visit_mut::visit_pat_ident_mut(self, p);
            }
        }
        if let syn::Stmt::Local(l) = &mut renamed {
            syn::visit_mut::VisitMut::visit_pat_mut(&mut Bind(&renames), &mut l.pat);
        }
        let one = names.len() == 1;
        let bound: Vec<Ident> = names
            .iter()
            .map(|n| {
                renames
                    .get(n)
                    .cloned()
                    .unwrap_or_else(|| Ident::new(n, pat.span()))
            })
            .collect();
        self.stmts.push(Stmt::InactiveLet {
            tokens: renamed.to_token_stream(),
            views: self.views_of_locals(local, &bound),
            names: bound,
        });
        for name in names {
            self.used_names.insert(name.clone());
            let renamed = renames.get(&name).cloned();
            self.env.insert(
                name,
                Binding::Const {
                    renamed,
                    literal: literal && one,
                    scalar: scalar && one,
                    param: false,
                },
            );
        }
        true
    }

    pub(super) fn expr_stmt(&mut self, e: &Expr, _semi: bool) {
        if let Some((e, drained)) = self.without_drains(e, |d, e| d.visit_expr_mut(e)) {
            self.expr_stmt(&e, true);
            return self.clear_drained(drained);
        }
        match e {
            Expr::Assign(a) => self.assign(&a.left, None, &a.right, e),
            Expr::Binary(b) => {
                let op = match b.op {
                    BinOp::AddAssign(_) => Some(Arith::Add),
                    BinOp::SubAssign(_) => Some(Arith::Sub),
                    BinOp::MulAssign(_) => Some(Arith::Mul),
                    BinOp::DivAssign(_) => Some(Arith::Div),
                    _ => None,
                };
                match op {
                    Some(op) => self.assign(&b.left, Some(op), &b.right, e),
                    None => self.plain_expr_stmt(e),
                }
            }
            Expr::MethodCall(m) if self.in_place_method(m, e) => {}
            _ => self.plain_expr_stmt(e),
        }
    }

    pub(super) fn plain_expr_stmt(&mut self, e: &Expr) {
        let hits = self.active_mentions(e);
        if hits.is_empty() {
            // Still renamed: it may read locals bound under generated names
            // (`let mut s = c[a.len() - 1]; if .. { s = s.tanh(); }`).
            let (renamed, _) = self.renamed(e);
            self.stmts.push(Stmt::Verbatim(quote!(#renamed;)));
            return;
        }
        // A statement on active values is kept only for its effects; lowering
        // it still reports what cannot be differentiated.
        let _ = self.expr(e);
    }

    /// `x = e` and `x op= e`.
    pub(super) fn assign(&mut self, left: &Expr, op: Option<Arith>, right: &Expr, whole: &Expr) {
        let target = match left {
            Expr::Path(p) if p.qself.is_none() => p.path.get_ident().cloned(),
            _ => None,
        };
        let Some(target) = target else {
            let touches =
                !self.active_mentions(left).is_empty() || !self.active_mentions(right).is_empty();
            if !touches {
                let (renamed, _) = self.renamed(whole);
                self.stmts.push(Stmt::Verbatim(quote!(#renamed;)));
                return;
            }
            if let Expr::Index(ix) = left {
                if let Expr::Path(p) = &*ix.expr {
                    if let Some(array) = p.path.get_ident() {
                        self.element_write(array, &ix.index, op, right, whole);
                        return;
                    }
                }
            }
            self.errors.at(
                whole,
                "assignment to this place with active values is not supported: assign to a local variable (`x = ...`) or an element of a local array (`x[i] = ...`)",
            );
            return;
        };
        // A loop would carry the tuple, and its adjoint slots hold no
        // tuple yet.
        if matches!(right, Expr::Tuple(_))
            && !self.loop_assigned.is_empty()
            && self.carries_derivative(right)
        {
            self.errors.at(
                whole,
                "a tuple of active values assigned to one name in a loop is not supported: keep its items in names of their own and assign them together (`(s, q) = (s + x, q * x);`)",
            );
            return;
        }
        let target_active = matches!(self.env.get(&target.to_string()), Some(Binding::Active(_)));
        if !target_active && !self.carries_derivative(right) {
            let (renamed, _) = self.renamed(whole);
            self.stmts.push(Stmt::Verbatim(quote!(#renamed;)));
            return;
        }
        let first_new = self.vars.len();
        let value = match op {
            None => self.value_expr(right),
            Some(op) => {
                let l = self.expr(left);
                let r = self.expr(right);
                match (l, r) {
                    (Some(l), Some(r)) => {
                        Some(self.op_or_constant(Op::Arith(op, l, r), whole.span(), whole))
                    }
                    _ => None,
                }
            }
        };
        let previous = match self.env.get(&target.to_string()) {
            Some(Binding::Active(v)) => Some(self.vars[v.0].ident.clone()),
            _ => None,
        };
        match (value, previous) {
            (Some(Operand::Const(c)), Some(previous)) if c.literal => {
                // `s = 0.9` on an active float: a new inactive local of the
                // same type (a bare literal would leave it to inference).
                let ident = self.fresh(&target.to_string());
                let literal = &c.tokens;
                self.stmts.push(Stmt::InactiveLet {
                    tokens: quote!(
                        let mut #ident = ::core::clone::Clone::clone(&#previous);
                        #ident = #literal;
                    ),
                    names: vec![ident.clone()],
                    views: Vec::new(),
                });
                self.env.insert(
                    target.to_string(),
                    Binding::Const {
                        renamed: Some(ident),
                        literal: false,
                        scalar: true,
                        param: false,
                    },
                );
            }
            // Assigned once, it may be assigned again (inactive from here on).
            (Some(value), _) => self.bind(&target, value, first_new, None, true),
            (None, _) => {}
        }
    }
}

impl Lowerer<'_> {
    /// The value of a local that an element write or a push updates: its
    /// active variable, or the constant it holds so far (by its generated
    /// name if it has one). `None` if no local has the name.
    pub(super) fn updated_local(&self, name: &Ident) -> Option<Operand> {
        match self.env.get(&name.to_string())? {
            Binding::Active(v) => Some(Operand::Var(*v)),
            Binding::Const { renamed, .. } => {
                let ident = renamed.clone().unwrap_or_else(|| name.clone());
                Some(Operand::Const(Const::opaque(ident.to_token_stream())))
            }
        }
    }

    /// `y[idx] = e`, `y[idx] += e`, ...: a new value of `y` that differs in
    /// one element. Writing an active value into an array made inactive
    /// (`Array1::zeros(n)`) makes it active.
    ///
    /// Input:  `y[i] += x * 2.0;`
    /// Output: `t1 = mul(x, 2.0); y_1 = index_add(y, {i}, t1)`
    fn element_write(
        &mut self,
        array: &Ident,
        index: &Expr,
        op: Option<Arith>,
        right: &Expr,
        whole: &Expr,
    ) {
        let index = self.inactive_arg(index, "an index");
        let base = self.updated_local(array);
        if base.is_none() {
            self.errors.at(array, format!("`{array}` is not a local array: element writes go into arrays the function declares"));
        }
        let first_new = self.vars.len();
        let span = whole.span();
        let op = match (op, base, index) {
            (None, Some(base), Some(index)) => {
                let value = self.expr(right);
                value.map(|value| Op::IndexWrite(base, index, value))
            }
            (Some(Arith::Add), Some(base), Some(index)) => {
                self.expr(right).map(|v| Op::IndexAdd(base, index, v))
            }
            (Some(Arith::Sub), Some(base), Some(index)) => {
                let v = self.expr(right);
                v.map(|v| {
                    let negated = self.op_or_constant(Op::Neg(v), span, right);
                    Op::IndexAdd(base, index, negated)
                })
            }
            (Some(op), Some(base), Some(index)) => {
                // `y[i] *= e`: read the element, combine, write it back.
                let element =
                    self.op_or_constant(Op::Index(base.clone(), index.clone()), span, whole);
                let v = self.expr(right);
                v.map(|v| {
                    let combined = self.op_or_constant(Op::Arith(op, element, v), span, whole);
                    Op::IndexWrite(base, index, combined)
                })
            }
            _ => None,
        };
        if let Some(op) = op {
            let value = self.op_or_constant(op, span, whole);
            self.bind(array, value, first_new, None, false);
        }
    }

    /// `y.slice_mut(info).assign(&e)` (and rows and columns, which are
    /// slices): a new value of `y` that differs in that part, as an element
    /// write differs in one element.
    ///
    /// Input:  `y.slice_mut(s![1..3]).assign(&x.slice(s![..2]));`
    /// Output: `t1 = slice(x, {s![..2]}); y_1 = slice_write(y, {s![1..3]}, t1)`
    pub(super) fn slice_write(&mut self, array: &Ident, info: &Expr, value: &Expr, whole: &Expr) {
        let info = self.inactive_arg(info, "a slice");
        let base = self.updated_local(array);
        if base.is_none() {
            self.errors.at(array, format!("`{array}` is not a local array: `assign` into a part of an array goes into arrays the function declares"));
        }
        let first_new = self.vars.len();
        let value = self.expr(value);
        if let (Some(base), Some(info), Some(value)) = (base, info, value) {
            let value = self.op_or_constant(Op::SliceWrite(base, info, value), whole.span(), whole);
            self.bind(array, value, first_new, None, false);
        }
    }
}

/// Whether `e` makes a `Vec`: `vec![..]`, `Vec::new()`,
/// `Vec::with_capacity(n)`, `collect::<Vec<_>>()`, `x.to_vec()`.
pub(super) fn makes_vec(e: &Expr) -> bool {
    match e {
        Expr::MethodCall(m) if m.method == "collect" => m.turbofish.as_ref().is_some_and(|t| {
            matches!(t.args.first(), Some(syn::GenericArgument::Type(ty)) if super::iterators::is_vec_type(ty))
        }),
        Expr::MethodCall(m) if m.method == "to_vec" => m.args.is_empty(),
        Expr::MethodCall(m) if m.method == "split_off" => m.args.len() == 1,
        Expr::Macro(m) => m.mac.path.is_ident("vec"),
        Expr::Call(c) => matches!(&*c.func, Expr::Path(p)
            if p.path.segments.len() >= 2 && p.path.segments[p.path.segments.len() - 2].ident == "Vec"),
        _ => false,
    }
}

/// Identifies one name of a tuple pattern in the function's syntax tree,
/// which lowering reads in place.
fn leaf_key(p: &syn::PatIdent) -> usize {
    p as *const syn::PatIdent as usize
}

/// Whether `tokens` mention `name`: as an identifier, or inside a literal
/// (`println!("{g}")` reads `g`). Errs towards yes.
fn mentions_token(tokens: TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == name,
        proc_macro2::TokenTree::Literal(l) => l.to_string().contains(name),
        proc_macro2::TokenTree::Group(g) => mentions_token(g.stream(), name),
        proc_macro2::TokenTree::Punct(_) => false,
    })
}

impl Lowerer<'_> {
    /// `lower(self)`, the lowering of `stmts`, with the names of their
    /// `let (v, (g0, g1)) = ..;` patterns that no later statement of
    /// `stmts` mentions noted as unread: a `let`'s names are read only in
    /// the rest of its block. The notes last as long as `lower`, as their
    /// keys are addresses in `stmts`' syntax tree.
    pub(super) fn with_unread_leaves<T>(
        &mut self,
        stmts: &[syn::Stmt],
        lower: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let mut noted = Vec::new();
        for (k, stmt) in stmts.iter().enumerate() {
            let syn::Stmt::Local(local) = stmt else {
                continue;
            };
            let pat = match &local.pat {
                Pat::Type(pt) => &*pt.pat,
                p => p,
            };
            let Pat::Tuple(t) = pat else { continue };
            let Some(leaves) = tuple_leaves(t) else {
                continue;
            };
            let rest: TokenStream = stmts[k + 1..].iter().map(|s| s.to_token_stream()).collect();
            for (_, p) in leaves {
                if !mentions_token(rest.clone(), &p.ident.to_string()) {
                    self.unread_leaves.insert(leaf_key(p));
                    noted.push(leaf_key(p));
                }
            }
        }
        let lowered = lower(self);
        for key in noted {
            self.unread_leaves.remove(&key);
        }
        lowered
    }
}

/// The names a tuple pattern binds, each with the path of items that
/// reaches it (`[1, 0]` for `g1` in `(v, (g1, g2))`); `None` unless every
/// element is a name, `_` or a tuple of those.
fn tuple_leaves(t: &syn::PatTuple) -> Option<Vec<(Vec<usize>, &syn::PatIdent)>> {
    let mut leaves = Vec::new();
    for (k, p) in t.elems.iter().enumerate() {
        match p {
            Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => leaves.push((vec![k], p)),
            Pat::Wild(_) => {}
            Pat::Tuple(inner) => {
                for (mut path, p) in tuple_leaves(inner)? {
                    path.insert(0, k);
                    leaves.push((path, p));
                }
            }
            _ => return None,
        }
    }
    Some(leaves)
}
