//! Lowering statements: `let`, assignment, compound assignment, the body's
//! result.

use proc_macro2::{Ident, Span};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Pat, Type};

use super::*;
use crate::compiler::ir::{Arith, Const, Op, Operand, Stmt};
use crate::compiler::scan;

impl Lowerer<'_> {
    // ---- statements --------------------------------------------------------

    /// Lowers statements; the value of the last expression is the result.
    pub(super) fn block(&mut self, stmts: &[syn::Stmt], span: Span) -> Operand {
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

    pub(super) fn missing_result(&mut self, span: Span) -> Operand {
        self.errors.at_span(
            span,
            "the body must end in the value to differentiate (an expression without `;`)",
        );
        self.poison()
    }

    /// A placeholder after an error; never emitted.
    pub(super) fn poison(&self) -> Operand {
        Operand::Const(Const {
            tokens: quote!(()),
            literal: false,
        })
    }

    pub(super) fn stmt(&mut self, stmt: &syn::Stmt) {
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

    pub(super) fn local(&mut self, local: &syn::Local) {
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
    pub(super) fn bind(
        &mut self,
        name: &Ident,
        value: Operand,
        first_new: usize,
        ty: Option<Box<Type>>,
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

    pub(super) fn verbatim_local(&mut self, local: &syn::Local) {
        let literal = local
            .init
            .as_ref()
            .is_some_and(|i| self.is_literal(&i.expr))
            && !matches!(&local.pat, Pat::Type(_));
        let stmt = syn::Stmt::Local(local.clone());
        let (renamed, _) = scan::rename_stmt(&stmt, &self.renames());
        let pat = match &local.pat {
            Pat::Type(pt) => &*pt.pat,
            p => p,
        };
        let names = scan::pattern_names(pat)
            .into_iter()
            .map(|n| Ident::new(&n, pat.span()))
            .collect();
        self.stmts.push(Stmt::InactiveLet {
            tokens: renamed.to_token_stream(),
            names,
        });
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

    pub(super) fn expr_stmt(&mut self, e: &Expr, _semi: bool) {
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

    pub(super) fn plain_expr_stmt(&mut self, e: &Expr) {
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
    pub(super) fn assign(&mut self, left: &Expr, op: Option<Arith>, right: &Expr, whole: &Expr) {
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
}
