//! Lowering: the function body into the IR of `ir.rs`.
//!
//! Each expression that involves an active value becomes one instruction per
//! operation, named after the `let` that binds it; shadowing and reassignment
//! give fresh variables (`h`, `h_1`), and `a += b` becomes `a_1 = a + b`.
//! Code that touches only inactive values is kept as written. Whatever else
//! touches an active value is reported at its span.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Ident, Span};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Pat, Type, UnOp};

use super::errors::Errors;
use super::ir::{
    Arith, Body, CallArg, Closure, Const, Function, Inst, Op, Operand, Reduce, Stmt, VarId, VarInfo,
};
use super::ops;
use super::scan::{self, Renames};
use super::signature::Signature;

#[derive(Clone)]
enum Binding {
    Active(VarId),
    /// An inactive local or parameter; `renamed` when generated code re-bound
    /// the value under a name of its own.
    Const {
        renamed: Option<Ident>,
        literal: bool,
        param: bool,
    },
}

pub struct Lowerer<'a> {
    errors: &'a Errors,
    vars: Vec<VarInfo>,
    env: HashMap<String, Binding>,
    stmts: Vec<Stmt>,
    used_names: HashSet<String>,
    temps: usize,
    consts: usize,
}

/// Lowers the body of `sig`'s function. Errors go to `errors`; the result is
/// only meaningful when there are none.
pub fn lower(sig: &Signature, errors: &Errors) -> Function {
    let mut l = Lowerer {
        errors,
        vars: Vec::new(),
        env: HashMap::new(),
        stmts: Vec::new(),
        used_names: HashSet::new(),
        temps: 0,
        consts: 0,
    };
    // Names generated code declares itself (see `primal.rs` and `emit.rs`).
    for name in ["rules", "view", "value", "pullback"] {
        l.reserve(name);
    }
    let mut params = Vec::new();
    for p in &sig.params {
        let Some(ident) = &p.ident else {
            params.push(None);
            for name in scan::pattern_names(&p.pat) {
                l.used_names.insert(name.clone());
                l.env.insert(
                    name,
                    Binding::Const {
                        renamed: None,
                        literal: false,
                        param: true,
                    },
                );
            }
            continue;
        };
        l.reserve(&ident.to_string());
        if p.active {
            let v = VarId(l.vars.len());
            l.vars.push(VarInfo {
                ident: ident.clone(),
                span: ident.span(),
                is_view: false,
            });
            l.env.insert(ident.to_string(), Binding::Active(v));
            params.push(Some(v));
        } else {
            l.env.insert(
                ident.to_string(),
                Binding::Const {
                    renamed: None,
                    literal: false,
                    param: true,
                },
            );
            params.push(None);
        }
    }
    let result = l.block(&sig.item.block.stmts, sig.item.block.span());
    let body = Body {
        stmts: std::mem::take(&mut l.stmts),
        result,
    };
    Function {
        vars: l.vars,
        params,
        body,
    }
}

impl Lowerer<'_> {
    // ---- names -------------------------------------------------------------

    /// Marks `base` and the adjoint and tangent names derived from it as used.
    fn reserve(&mut self, base: &str) {
        for suffix in ["", "_bar", "_dot", "_pullback"] {
            self.used_names.insert(format!("{base}{suffix}"));
        }
    }

    fn fresh(&mut self, base: &str) -> Ident {
        let base = base.trim_start_matches("r#");
        let taken = |s: &Self, n: &str| {
            ["", "_bar", "_dot", "_pullback"]
                .iter()
                .any(|suf| s.used_names.contains(&format!("{n}{suf}")))
        };
        let mut name = base.to_string();
        let mut k = 1;
        while taken(self, &name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.reserve(&name);
        Ident::new(&name, Span::mixed_site())
    }

    fn fresh_numbered(&mut self, prefix: &str, counter: fn(&mut Self) -> &mut usize) -> Ident {
        loop {
            let n = {
                let c = counter(self);
                *c += 1;
                *c
            };
            let name = format!("{prefix}{n}");
            if !self.used_names.contains(&name) {
                self.reserve(&name);
                return Ident::new(&name, Span::mixed_site());
            }
        }
    }

    fn renames(&self) -> Renames {
        self.env
            .iter()
            .filter_map(|(name, b)| match b {
                Binding::Active(v) => Some((name.clone(), self.vars[v.0].ident.clone())),
                Binding::Const { renamed, .. } => {
                    renamed.clone().map(|ident| (name.clone(), ident))
                }
            })
            .collect()
    }

    fn active_renames(&self) -> Renames {
        self.env
            .iter()
            .filter_map(|(name, b)| match b {
                Binding::Active(v) => Some((name.clone(), self.vars[v.0].ident.clone())),
                Binding::Const { .. } => None,
            })
            .collect()
    }

    /// The active names `expr` mentions, as written.
    fn active_mentions(&self, expr: &Expr) -> Vec<Ident> {
        scan::rename_expr(expr, &self.active_renames()).1
    }

    fn mentions_locals(&self, expr: &Expr) -> bool {
        let locals: Renames = self
            .env
            .iter()
            .filter(|(_, b)| !matches!(b, Binding::Const { param: true, .. }))
            .map(|(n, _)| (n.clone(), Ident::new("x", Span::call_site())))
            .collect();
        !scan::rename_expr(expr, &locals).1.is_empty()
    }

    // ---- statements --------------------------------------------------------

    /// Lowers statements; the value of the last expression is the result.
    fn block(&mut self, stmts: &[syn::Stmt], span: Span) -> Operand {
        let Some((last, init)) = stmts.split_last() else {
            return self.missing_result(span);
        };
        for stmt in init {
            self.stmt(stmt);
        }
        match last {
            syn::Stmt::Expr(e, None) => self.expr(e).unwrap_or_else(|| self.poison()),
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

    fn missing_result(&mut self, span: Span) -> Operand {
        self.errors.at_span(
            span,
            "the body must end in the value to differentiate (an expression without `;`)",
        );
        self.poison()
    }

    /// A placeholder after an error; never emitted.
    fn poison(&self) -> Operand {
        Operand::Const(Const {
            tokens: quote!(()),
            literal: false,
        })
    }

    fn stmt(&mut self, stmt: &syn::Stmt) {
        match stmt {
            syn::Stmt::Local(local) => self.local(local),
            syn::Stmt::Expr(e, semi) => self.expr_stmt(e, semi.is_some()),
            syn::Stmt::Item(item) => self.stmts.push(Stmt::Verbatim(item.to_token_stream())),
            syn::Stmt::Macro(m) => {
                let (renamed, _) = scan::rename_stmt(stmt, &self.renames());
                let _ = m;
                self.stmts.push(Stmt::Verbatim(renamed.to_token_stream()));
            }
        }
    }

    fn local(&mut self, local: &syn::Local) {
        let (pat, ty) = match &local.pat {
            Pat::Type(pt) => (&*pt.pat, Some(pt.ty.clone())),
            p => (p, None),
        };
        let Some(init) = &local.init else {
            self.verbatim_local(local);
            return;
        };
        if self.active_mentions(&init.expr).is_empty() {
            self.verbatim_local(local);
            return;
        }
        let name = match pat {
            Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => p.ident.clone(),
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
        let Some(value) = self.expr(&init.expr) else {
            return;
        };
        self.bind(&name, value, first_new, ty);
    }

    /// Binds the user's `name` to `value`: names the instruction that made
    /// it, or aliases an existing variable.
    fn bind(&mut self, name: &Ident, value: Operand, first_new: usize, ty: Option<Box<Type>>) {
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
                self.stmts
                    .push(Stmt::Verbatim(quote!(let #ident #ty = #expr;)));
                self.env.insert(
                    name.to_string(),
                    Binding::Const {
                        renamed: Some(ident),
                        literal: c.literal,
                        param: false,
                    },
                );
            }
        }
    }

    fn verbatim_local(&mut self, local: &syn::Local) {
        let literal = local
            .init
            .as_ref()
            .is_some_and(|i| self.is_literal(&i.expr))
            && !matches!(&local.pat, Pat::Type(_));
        let stmt = syn::Stmt::Local(local.clone());
        let (renamed, _) = scan::rename_stmt(&stmt, &self.renames());
        self.stmts.push(Stmt::Verbatim(renamed.to_token_stream()));
        let pat = match &local.pat {
            Pat::Type(pt) => &*pt.pat,
            p => p,
        };
        for name in scan::pattern_names(pat) {
            self.used_names.insert(name.clone());
            self.env.insert(
                name,
                Binding::Const {
                    renamed: None,
                    literal,
                    param: false,
                },
            );
        }
    }

    fn expr_stmt(&mut self, e: &Expr, _semi: bool) {
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
            _ => self.plain_expr_stmt(e),
        }
    }

    fn plain_expr_stmt(&mut self, e: &Expr) {
        let hits = self.active_mentions(e);
        if hits.is_empty() {
            self.stmts.push(Stmt::Verbatim(quote!(#e;)));
            return;
        }
        // A statement on active values is kept only for its effects; lowering
        // it still reports what cannot be differentiated.
        let _ = self.expr(e);
    }

    /// `x = e` and `x op= e`.
    fn assign(&mut self, left: &Expr, op: Option<Arith>, right: &Expr, whole: &Expr) {
        let target = match left {
            Expr::Path(p) if p.qself.is_none() => p.path.get_ident().cloned(),
            _ => None,
        };
        let Some(target) = target else {
            let touches =
                !self.active_mentions(left).is_empty() || !self.active_mentions(right).is_empty();
            if touches {
                let what = if matches!(left, Expr::Index(_)) {
                    "element writes (`x[i] = ...`) with active values are not supported yet: build the array with `mapv` or arithmetic on whole arrays"
                } else {
                    "assignment to this place with active values is not supported: assign to a local variable (`x = ...`)"
                };
                self.errors.at(whole, what);
            } else {
                self.stmts.push(Stmt::Verbatim(quote!(#whole;)));
            }
            return;
        };
        let target_active = matches!(self.env.get(&target.to_string()), Some(Binding::Active(_)));
        if !target_active && self.active_mentions(right).is_empty() {
            let (renamed, _) = scan::rename_expr(whole, &self.renames());
            self.stmts.push(Stmt::Verbatim(quote!(#renamed;)));
            return;
        }
        let first_new = self.vars.len();
        let value = match op {
            None => self.expr(right),
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
        if let Some(value) = value {
            self.bind(&target, value, first_new, None);
        }
    }

    // ---- expressions -------------------------------------------------------

    /// An instruction for `op`, or, when every operand turned out inactive
    /// (`ad::stop_gradient(x) * 2.0`), the user's expression `e` as a constant.
    fn op_or_constant(&mut self, op: Op, span: Span, e: &Expr) -> Operand {
        if op.var_operands().is_empty() {
            return self.inactive_result(e);
        }
        self.inst(op, span)
    }

    fn inst(&mut self, op: Op, span: Span) -> Operand {
        let dest = VarId(self.vars.len());
        let ident = self.fresh_numbered("t", |s| &mut s.temps);
        let is_view = op.makes_view()
            || matches!(&op, Op::Unwrap(Operand::Var(v), _) if self.vars[v.0].is_view);
        self.vars.push(VarInfo {
            ident,
            span,
            is_view,
        });
        self.stmts.push(Stmt::Inst(Inst {
            dest,
            op,
            span,
            ty: None,
        }));
        Operand::Var(dest)
    }

    /// An expression that mentions no active value.
    fn constant(&mut self, e: &Expr) -> Operand {
        let e = strip_refs(e);
        if self.is_literal(e) {
            let (renamed, _) = scan::rename_expr(e, &self.renames());
            return Operand::Const(Const {
                tokens: renamed.to_token_stream(),
                literal: true,
            });
        }
        let (renamed, _) = scan::rename_expr(e, &self.renames());
        if let Expr::Path(p) = &renamed {
            if p.qself.is_none() && p.path.segments.len() == 1 {
                return Operand::Const(Const {
                    tokens: renamed.to_token_stream(),
                    literal: false,
                });
            }
        }
        let local = self.mentions_locals(e);
        let ident = self.fresh_numbered("c", |s| &mut s.consts);
        self.stmts.push(Stmt::Const {
            ident: ident.clone(),
            expr: renamed.to_token_stream(),
            local,
        });
        Operand::Const(Const {
            tokens: ident.to_token_stream(),
            literal: false,
        })
    }

    /// An inactive value computed from active ones (`x.len()`, `a < b`,
    /// `ad::stop_gradient(h)`): kept as written with active names renamed.
    fn inactive_result(&mut self, e: &Expr) -> Operand {
        let (renamed, _) = scan::rename_expr(e, &self.renames());
        let ident = self.fresh_numbered("c", |s| &mut s.consts);
        self.stmts.push(Stmt::Const {
            ident: ident.clone(),
            expr: renamed.to_token_stream(),
            local: true,
        });
        Operand::Const(Const {
            tokens: ident.to_token_stream(),
            literal: false,
        })
    }

    /// An unsuffixed float literal, or arithmetic on such literals and names
    /// bound to them: its type comes from the active operand beside it.
    fn is_literal(&self, e: &Expr) -> bool {
        match e {
            Expr::Lit(l) => match &l.lit {
                syn::Lit::Float(f) => f.suffix().is_empty(),
                syn::Lit::Int(i) => i.suffix().is_empty(),
                _ => false,
            },
            Expr::Paren(p) => self.is_literal(&p.expr),
            Expr::Group(g) => self.is_literal(&g.expr),
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => self.is_literal(&u.expr),
            Expr::Binary(b)
                if matches!(
                    b.op,
                    BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_)
                ) =>
            {
                self.is_literal(&b.left) && self.is_literal(&b.right)
            }
            Expr::Path(p) => p.path.get_ident().is_some_and(|i| {
                matches!(
                    self.env.get(&i.to_string()),
                    Some(Binding::Const { literal: true, .. })
                )
            }),
            _ => false,
        }
    }

    /// Whether `e`'s value can carry a derivative: it reads an active value
    /// through something other than a shape query, a comparison, an integer
    /// cast or `ad::stop_gradient`. Unsupported constructs count as carrying
    /// one, so lowering reports them.
    fn carries_derivative(&self, e: &Expr) -> bool {
        if self.active_mentions(e).is_empty() {
            return false;
        }
        match e {
            Expr::Paren(p) => self.carries_derivative(&p.expr),
            Expr::Group(g) => self.carries_derivative(&g.expr),
            Expr::Reference(r) => self.carries_derivative(&r.expr),
            Expr::Binary(b) => match b.op {
                BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) => {
                    self.carries_derivative(&b.left) || self.carries_derivative(&b.right)
                }
                BinOp::Lt(_)
                | BinOp::Le(_)
                | BinOp::Gt(_)
                | BinOp::Ge(_)
                | BinOp::Eq(_)
                | BinOp::Ne(_)
                | BinOp::And(_)
                | BinOp::Or(_) => false,
                _ => true,
            },
            Expr::Unary(u) => match u.op {
                UnOp::Not(_) => false,
                _ => self.carries_derivative(&u.expr),
            },
            Expr::Cast(c) => !is_integer_type(&c.ty) && self.carries_derivative(&c.expr),
            // A call is inactive when nothing it is given carries a derivative
            // (`Array1::zeros(x.len())`).
            Expr::MethodCall(m) => {
                !ops::INACTIVE.contains(&m.method.to_string().as_str())
                    && (self.carries_derivative(&m.receiver)
                        || m.args.iter().any(|a| self.carries_derivative(a)))
            }
            Expr::Call(c) => {
                let stop = matches!(&*c.func, Expr::Path(p)
                    if p.path.segments.last().is_some_and(|s| s.ident == "stop_gradient"));
                !stop && c.args.iter().any(|a| self.carries_derivative(a))
            }
            Expr::Index(i) => self.carries_derivative(&i.expr),
            Expr::Array(a) => a.elems.iter().any(|e| self.carries_derivative(e)),
            Expr::Tuple(t) => t.elems.iter().any(|e| self.carries_derivative(e)),
            Expr::Range(_) => false,
            Expr::Field(f) => self.carries_derivative(&f.base),
            // `s![..]` builds slice information, never a float.
            Expr::Macro(m) => !m.mac.path.is_ident("s"),
            _ => true,
        }
    }

    /// Lowers `e` to an operand; `None` after reporting an error.
    pub fn expr(&mut self, e: &Expr) -> Option<Operand> {
        let hits = self.active_mentions(e);
        let Some(first) = hits.first().cloned() else {
            return Some(self.constant(e));
        };
        if !self.carries_derivative(e) {
            return Some(self.inactive_result(e));
        }
        let span = e.span();
        match e {
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Reference(r) if r.mutability.is_none() => self.expr(&r.expr),
            Expr::Path(p) => {
                let name = p.path.get_ident().map(|i| i.to_string());
                match name.and_then(|n| self.env.get(&n).cloned()) {
                    Some(Binding::Active(v)) => Some(Operand::Var(v)),
                    _ => Some(self.constant(e)),
                }
            }
            Expr::Binary(b) => {
                let op = match b.op {
                    BinOp::Add(_) => Arith::Add,
                    BinOp::Sub(_) => Arith::Sub,
                    BinOp::Mul(_) => Arith::Mul,
                    BinOp::Div(_) => Arith::Div,
                    BinOp::Lt(_)
                    | BinOp::Le(_)
                    | BinOp::Gt(_)
                    | BinOp::Ge(_)
                    | BinOp::Eq(_)
                    | BinOp::Ne(_)
                    | BinOp::And(_)
                    | BinOp::Or(_) => return Some(self.inactive_result(e)),
                    other => {
                        let op = other.to_token_stream();
                        self.errors.at(
                            e,
                            format!(
                                "the operator `{op}` on the active value `{first}` has no derivative rule: use `+ - * /`, or wrap the value in `ad::stop_gradient(..)` if no derivative should flow"
                            ),
                        );
                        return None;
                    }
                };
                let l = self.expr(&b.left);
                let r = self.expr(&b.right);
                Some(self.op_or_constant(Op::Arith(op, l?, r?), span, e))
            }
            Expr::Unary(u) => match u.op {
                UnOp::Neg(_) => {
                    let a = self.expr(&u.expr)?;
                    Some(self.op_or_constant(Op::Neg(a), span, e))
                }
                UnOp::Deref(_) => self.expr(&u.expr),
                _ => Some(self.inactive_result(e)),
            },
            Expr::Cast(c) => {
                if is_float_type(&c.ty) {
                    let a = self.expr(&c.expr)?;
                    Some(self.op_or_constant(Op::Cast(a, c.ty.clone()), span, e))
                } else if is_integer_type(&c.ty) {
                    Some(self.inactive_result(e))
                } else {
                    let ty = &c.ty;
                    self.errors.at(
                        e,
                        format!("cannot differentiate a cast of the active value `{first}` to `{}`: cast to `f64` or `f32`", quote!(#ty)),
                    );
                    None
                }
            }
            Expr::MethodCall(m) => self.method(m, e),
            Expr::Call(c) => self.call(c, e),
            Expr::Index(i) => {
                let base = self.expr(&i.expr);
                let index = self.inactive_arg(&i.index, "an index");
                let (base, index) = (base?, index?);
                Some(self.op_or_constant(Op::Index(base, index), span, e))
            }
            Expr::Closure(c) => {
                self.errors.at(
                    c.or1_token,
                    format!(
                        "this closure captures the active value `{first}`: closures are differentiated only as the argument of `mapv`; write the computation inline, or make it a `#[differentiable]` function"
                    ),
                );
                None
            }
            Expr::Unsafe(u) => {
                self.errors.at(u.unsafe_token, format!("an `unsafe` block that uses the active value `{first}` cannot be differentiated: move it into a function with a hand-written `_vjp` and `_jvp`"));
                None
            }
            Expr::Macro(m) => {
                let path = &m.mac.path;
                self.errors.at(
                    e,
                    format!("the macro `{}!` cannot be differentiated on the active value `{first}`: compute the value with supported operations, or wrap it in `ad::stop_gradient(..)`", quote!(#path)),
                );
                None
            }
            Expr::If(_)
            | Expr::Match(_)
            | Expr::ForLoop(_)
            | Expr::While(_)
            | Expr::Loop(_)
            | Expr::Block(_) => {
                self.errors.at_span(
                    first_token_span(e),
                    format!("control flow that involves the active value `{first}` is not supported yet: write the computation as straight-line code"),
                );
                None
            }
            Expr::Field(f) => {
                self.errors.at(f, format!("field access on the active value `{first}` is not supported yet: pass the field as its own parameter"));
                None
            }
            Expr::Try(t) => {
                self.errors.at(
                    t.question_token,
                    "`?` on an active value is not supported: use `.unwrap()` or `.expect(..)`",
                );
                None
            }
            Expr::Return(r) => {
                self.errors.at(r.return_token, "early `return` is not supported yet: return the value as the body's last expression");
                None
            }
            _ => {
                self.errors.at(e, format!("this expression uses the active value `{first}` in a way `#[differentiable]` cannot differentiate: see the supported syntax in the `ad` docs, or wrap the value in `ad::stop_gradient(..)`"));
                None
            }
        }
    }

    /// An operand that must be inactive (an exponent, an axis, a shape).
    fn inactive_arg(&mut self, e: &Expr, what: &str) -> Option<Const> {
        if self.carries_derivative(e) {
            let hit = self.active_mentions(e)[0].clone();
            self.errors.at(
                e,
                format!("{what} must not depend on the active value `{hit}`: compute it from inactive values (integers, shapes), or wrap it in `ad::stop_gradient(..)`"),
            );
            return None;
        }
        match self.expr(e)? {
            Operand::Const(c) => Some(c),
            Operand::Var(_) => {
                unreachable!("an expression that carries no derivative lowers to a constant")
            }
        }
    }

    fn method(&mut self, m: &syn::ExprMethodCall, e: &Expr) -> Option<Operand> {
        let name = m.method.to_string();
        let span = m.method.span();
        let args: Vec<&Expr> = m.args.iter().collect();
        if ops::INACTIVE.contains(&name.as_str()) {
            return Some(self.inactive_result(e));
        }
        let arity = |l: &Self, n: usize| {
            if args.len() != n {
                l.errors
                    .at(&m.method, format!("`{name}` takes {n} argument(s) here"));
                false
            } else {
                true
            }
        };
        if let Some(f) = ops::unary(&name) {
            if !arity(self, 0) {
                return None;
            }
            let a = self.expr(&m.receiver)?;
            return Some(self.op_or_constant(Op::Unary(f, a), span, e));
        }
        if let Some(f) = ops::binary(&name) {
            if !arity(self, 1) {
                return None;
            }
            let a = self.expr(&m.receiver);
            let b = self.expr(args[0]);
            return Some(self.op_or_constant(Op::Binary(f, a?, b?), span, e));
        }
        match name.as_str() {
            "powi" => {
                if !arity(self, 1) {
                    return None;
                }
                let a = self.expr(&m.receiver);
                let n = self.inactive_arg(args[0], "the exponent of `powi`");
                Some(self.op_or_constant(Op::Powi(a?, n?), span, e))
            }
            "mul_add" => {
                if !arity(self, 2) {
                    return None;
                }
                let a = self.expr(&m.receiver);
                let b = self.expr(args[0]);
                let c = self.expr(args[1]);
                Some(self.op_or_constant(Op::MulAdd(a?, b?, c?), span, e))
            }
            "dot" => {
                if !arity(self, 1) {
                    return None;
                }
                let a = self.expr(&m.receiver);
                let b = self.expr(args[0]);
                Some(self.op_or_constant(Op::Dot(a?, b?), span, e))
            }
            "t" | "reversed_axes" | "sum" | "mean" | "view" | "to_owned" | "clone" | "unwrap" => {
                if !arity(self, 0) {
                    return None;
                }
                let a = self.expr(&m.receiver)?;
                let op = match name.as_str() {
                    "t" | "reversed_axes" => Op::Transpose(a),
                    "sum" => Op::Reduce(Reduce::Sum, a),
                    "mean" => Op::Reduce(Reduce::Mean, a),
                    "view" => Op::View(a),
                    "unwrap" => Op::Unwrap(a, None),
                    _ => Op::ToOwned(a),
                };
                Some(self.op_or_constant(op, span, e))
            }
            "sum_axis"
            | "mean_axis"
            | "row"
            | "column"
            | "slice"
            | "insert_axis"
            | "into_shape_with_order"
            | "expect" => {
                if !arity(self, 1) {
                    return None;
                }
                let a = self.expr(&m.receiver);
                let k = self.inactive_arg(args[0], &format!("the argument of `{name}`"));
                let (a, k) = (a?, k?);
                let op = match name.as_str() {
                    "sum_axis" => Op::ReduceAxis(Reduce::Sum, a, k),
                    "mean_axis" => Op::ReduceAxis(Reduce::Mean, a, k),
                    "row" => Op::Row(a, k),
                    "column" => Op::Column(a, k),
                    "slice" => Op::Slice(a, k),
                    "insert_axis" => Op::InsertAxis(a, k),
                    "into_shape_with_order" => Op::IntoShape(a, k),
                    _ => Op::Unwrap(a, Some(k)),
                };
                Some(self.op_or_constant(op, span, e))
            }
            "mapv" => {
                if !arity(self, 1) {
                    return None;
                }
                self.mapv(m, args[0], span, e)
            }
            _ => {
                let receiver_active = !self.active_mentions(&m.receiver).is_empty();
                let subject = if receiver_active {
                    "an active value"
                } else {
                    "active arguments"
                };
                self.errors.at(
                    &m.method,
                    format!(
                        "the method `{name}` on {subject} has no derivative rule: supported methods are {}; wrap the value in `ad::stop_gradient(..)` if no derivative should flow, or write the computation as a function with a hand-written `_vjp` and `_jvp`",
                        ops::supported_methods()
                    ),
                );
                None
            }
        }
    }

    fn mapv(&mut self, m: &syn::ExprMethodCall, f: &Expr, span: Span, e: &Expr) -> Option<Operand> {
        match f {
            Expr::Path(p) if p.qself.is_none() => {
                let segs: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                let func = match segs.as_slice() {
                    [ty, name] if ty == "f64" || ty == "f32" => ops::unary(name),
                    _ => None,
                };
                let Some(func) = func else {
                    self.errors.at(
                        f,
                        "`mapv` is differentiated with a scalar method path such as `f64::tanh` or a closure `|v| ...`: for your own function write `mapv(|v| g(v))`",
                    );
                    return None;
                };
                let a = self.expr(&m.receiver)?;
                Some(self.op_or_constant(Op::Unary(func, a), span, e))
            }
            Expr::Closure(c) => {
                if let Some(hit) = self.active_mentions(f).first() {
                    self.errors.at(
                        hit,
                        format!("a `mapv` closure cannot capture the active value `{hit}`: combine it outside the closure, as in `x.mapv(|v| v.exp()) * {hit}`"),
                    );
                    return None;
                }
                let param = match c.inputs.iter().collect::<Vec<_>>().as_slice() {
                    [Pat::Ident(p)] => p.ident.clone(),
                    [Pat::Wild(w)] => Ident::new("__unused", w.span()),
                    [Pat::Type(pt)] => {
                        match &*pt.pat {
                            Pat::Ident(p) => p.ident.clone(),
                            other => {
                                self.errors.at(other, "a `mapv` closure takes one parameter bound to a name: `|v| ...`");
                                return None;
                            }
                        }
                    }
                    _ => {
                        self.errors.at(
                            &c.inputs,
                            "a `mapv` closure takes one parameter bound to a name: `|v| ...`",
                        );
                        return None;
                    }
                };
                let a = self.expr(&m.receiver)?;
                let (source, _) = scan::rename_expr(f, &self.renames());
                let closure = self.closure_body(&param, &c.body)?;
                let source = source.to_token_stream();
                Some(self.op_or_constant(
                    Op::Mapv(
                        a,
                        Box::new(Closure {
                            source,
                            param: closure.0,
                            body: closure.1,
                        }),
                    ),
                    span,
                    e,
                ))
            }
            other => {
                self.errors.at(other, "`mapv` is differentiated with a path such as `f64::tanh` or a closure `|v| ...`");
                None
            }
        }
    }

    /// Lowers a `mapv` closure's body with its parameter active.
    fn closure_body(&mut self, param: &Ident, body: &Expr) -> Option<(VarId, Body)> {
        let saved_env = self.env.clone();
        let saved_stmts = std::mem::take(&mut self.stmts);
        let v = VarId(self.vars.len());
        let ident = self.fresh(&param.to_string().replace("__unused", "v"));
        self.vars.push(VarInfo {
            ident,
            span: param.span(),
            is_view: false,
        });
        if param != "__unused" {
            self.env.insert(param.to_string(), Binding::Active(v));
        }
        let result = match body {
            Expr::Block(b) => self.block(&b.block.stmts, b.span()),
            e => self.expr(e).unwrap_or_else(|| self.poison()),
        };
        let stmts = std::mem::replace(&mut self.stmts, saved_stmts);
        self.env = saved_env;
        Some((v, Body { stmts, result }))
    }

    fn call(&mut self, c: &syn::ExprCall, e: &Expr) -> Option<Operand> {
        let Expr::Path(func) = &*c.func else {
            self.errors.at(&c.func, "only calls of named functions can be differentiated: give the function a name and `#[differentiable]`");
            return None;
        };
        let segs: Vec<String> = func
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let args: Vec<&Expr> = c.args.iter().collect();
        if segs.last().is_some_and(|s| s == "stop_gradient") {
            return Some(self.inactive_result(e));
        }
        if let [ty, name] = segs.as_slice() {
            if ty == "f64" || ty == "f32" {
                return self.scalar_path_call(name, &args, c, e);
            }
        }
        if let (Some("from_elem"), [shape, elem]) =
            (segs.last().map(String::as_str), args.as_slice())
        {
            let shape = self.inactive_arg(shape, "the shape of `from_elem`");
            let elem = self.expr(elem);
            return Some(self.op_or_constant(Op::FromElem(shape?, elem?), e.span(), e));
        }
        let mut lowered = Vec::new();
        let mut ok = true;
        for arg in &args {
            let (inner, by_ref) = match arg {
                Expr::Reference(r) if r.mutability.is_none() => (&*r.expr, true),
                other => (*other, false),
            };
            let (source, _) = scan::rename_expr(arg, &self.renames());
            let operand = if self.active_mentions(inner).is_empty() {
                Operand::Const(Const {
                    tokens: source.to_token_stream(),
                    literal: false,
                })
            } else {
                match self.expr(inner) {
                    Some(o) => o,
                    None => {
                        ok = false;
                        continue;
                    }
                }
            };
            lowered.push(CallArg {
                operand,
                by_ref,
                source: source.to_token_stream(),
            });
        }
        if !ok {
            return None;
        }
        Some(self.op_or_constant(Op::Call(Box::new(func.clone()), lowered), e.span(), e))
    }

    /// `f64::exp(x)`, `f64::max(a, b)`: the method with its receiver first.
    fn scalar_path_call(
        &mut self,
        name: &str,
        args: &[&Expr],
        c: &syn::ExprCall,
        e: &Expr,
    ) -> Option<Operand> {
        let Some((receiver, rest)) = args.split_first() else {
            self.errors.at(c, format!("`{name}` needs its argument"));
            return None;
        };
        let method = Ident::new(name, c.func.span());
        let rest = rest.iter();
        let call: syn::ExprMethodCall = syn::parse_quote!((#receiver).#method(#(#rest),*));
        if ops::INACTIVE.contains(&name) {
            return Some(self.inactive_result(e));
        }
        self.method(&call, e)
    }
}

fn strip_refs(e: &Expr) -> &Expr {
    match e {
        Expr::Reference(r) if r.mutability.is_none() => strip_refs(&r.expr),
        Expr::Paren(p) if matches!(&*p.expr, Expr::Reference(_)) => strip_refs(&p.expr),
        e => e,
    }
}

fn is_float_type(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.is_ident("f64") || p.path.is_ident("f32"))
}

fn is_integer_type(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.get_ident().is_some_and(|i| matches!(
        i.to_string().as_str(),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "bool"
    )))
}

fn first_token_span(e: &Expr) -> Span {
    e.to_token_stream()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |t| t.span())
}
