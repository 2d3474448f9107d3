//! The walk that writes forward mode as IR: each instruction followed by
//! its tangent's instructions, branches and loops carrying each variable's
//! tangent beside it, calls turned into calls of the callee's `_jvp`.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use super::super::errors::Errors;
use super::super::ir::{
    Arith, Body, CallArg, Callee, Carried, Const, Function, If, Inst, Loop, Op, Operand, Phi, Stmt,
    VarId, VarInfo,
};
use super::super::signature::Signature;
use super::rules::Builder;

/// The forward-mode IR under construction.
pub(super) struct Tangents<'a> {
    pub(super) vars: Vec<VarInfo>,
    /// Each variable's tangent; `None` when it is zero.
    tangent: HashMap<VarId, Option<Operand>>,
    /// The zero tangents of constant call arguments bound so far, which
    /// numbers their names.
    constant_tangents: usize,
    /// The names inactive statements of the body touch (`adjoints.rs`).
    pub(super) touched: HashSet<String>,
    /// The loops whose adjoints `loops.rs` has written, which numbers
    /// their records.
    pub(super) loops: usize,
    /// What `loops.rs` declares at the top of `f_grad`: the records and
    /// tapes.
    pub(super) prologue: Vec<Stmt>,
    /// The variables that are loops' tapes, each with what a branch that
    /// carries one out gives from its other side: the tape as it came, or
    /// an empty one.
    pub(super) lists: HashMap<VarId, Operand>,
    pub(super) scalar: &'a Ident,
    pub(super) errors: &'a Errors,
}

impl<'a> Tangents<'a> {
    pub(super) fn new(f: &Function, scalar: &'a Ident, errors: &'a Errors) -> Tangents<'a> {
        let vars = f
            .vars
            .iter()
            .map(|v| VarInfo {
                ident: v.ident.clone(),
                span: v.span,
                is_view: v.is_view,
            })
            .collect();
        Tangents {
            vars,
            tangent: HashMap::new(),
            constant_tangents: 0,
            touched: HashSet::new(),
            loops: 0,
            prologue: Vec::new(),
            lists: HashMap::new(),
            scalar,
            errors,
        }
    }

    pub(super) fn function(mut self, f: Function, jvp_sig: &Signature) -> Function {
        let Function {
            name,
            pullback_lifetime,
            params,
            scalar_params,
            caller_refs,
            bags,
            body,
            ..
        } = f;
        let mut jvp_params = params.clone();
        let mut jvp_scalars = scalar_params.clone();
        let tangent_params = jvp_sig.params[params.len()..].iter();
        for (v, p) in params.iter().zip(tangent_params) {
            let Some(v) = v else {
                jvp_params.push(None);
                continue;
            };
            let ident = p.ident.clone().expect("tangent parameters are named");
            let d = self.var(ident, self.vars[v.0].span);
            self.tangent.insert(*v, Some(Operand::Var(d)));
            jvp_params.push(Some(d));
            if scalar_params.contains(v) {
                jvp_scalars.push(d);
            }
        }
        let Body { stmts, result } = body;
        let mut out = self.stmts(stmts);
        let d_result = self.of_or_zero(&result);
        let pair = self.push(
            &mut out,
            Op::Tuple(vec![result, d_result]),
            Span::call_site(),
        );
        Function {
            name: format!("{name}_jvp"),
            pullback_lifetime,
            vars: self.vars,
            params: jvp_params,
            scalar_params: jvp_scalars,
            caller_refs,
            bags,
            body: Body {
                stmts: out,
                result: pair,
            },
        }
    }

    fn var(&mut self, ident: Ident, span: Span) -> VarId {
        self.vars.push(VarInfo {
            ident,
            span,
            is_view: false,
        });
        VarId(self.vars.len() - 1)
    }

    /// A new temporary for a tangent.
    pub(super) fn temp(&mut self, span: Span) -> VarId {
        let ident = format_ident!("d_{}", self.vars.len(), span = Span::mixed_site());
        self.var(ident, span)
    }

    pub(super) fn push(&mut self, out: &mut Vec<Stmt>, op: Op, span: Span) -> Operand {
        let dest = self.temp(span);
        out.push(Stmt::Inst(Inst {
            dest,
            op,
            span,
            ty: None,
        }));
        Operand::Var(dest)
    }

    /// The tangent of an operand, `None` when it is zero.
    fn of(&self, o: &Operand) -> Option<Operand> {
        match o {
            Operand::Var(v) => self.tangent.get(v).cloned().flatten(),
            Operand::Const(_) => None,
        }
    }

    fn of_or_zero(&self, o: &Operand) -> Operand {
        self.of(o).unwrap_or_else(|| self.constant(0.0))
    }

    /// A constant of the function's float type.
    pub(super) fn constant(&self, x: f64) -> Operand {
        let scalar = self.scalar;
        Operand::Const(Const {
            tokens: quote!(<#scalar as ::ad::Float>::of(#x)),
            literal: false,
            scalar: true,
        })
    }

    fn stmts(&mut self, stmts: Vec<Stmt>) -> Vec<Stmt> {
        let mut out = Vec::new();
        for stmt in stmts {
            match stmt {
                Stmt::Inst(inst) => self.inst(inst, &mut out),
                Stmt::If(i) => self.branch(*i, &mut out),
                Stmt::Loop(l) => self.looped(*l, &mut out),
                other => out.push(other),
            }
        }
        out
    }

    /// The instruction, then its tangent's instructions, which read the
    /// primal value (`y` in `d_y = y * d_x` for `y = exp(x)`).
    fn inst(&mut self, inst: Inst, out: &mut Vec<Stmt>) {
        if let Op::Call(..) = inst.op {
            return self.call(inst, out);
        }
        let (dest, span) = (inst.dest, inst.span);
        let mut after = Vec::new();
        let d = self.rule(&inst.op, Operand::Var(dest), span, &mut after);
        out.push(Stmt::Inst(inst));
        out.extend(after);
        self.tangent.insert(dest, d);
    }
}

impl Tangents<'_> {
    /// `y = g(args)` with a tangent: `p = g_jvp(args, tangents)`, then
    /// `y` and its tangent are `p`'s items. The IR calls `g_jvp` itself,
    /// so `f_jvp_vjp` calls `g_jvp_vjp` and `f_jvp_jvp` `g_jvp_jvp`: `g`
    /// needs `#[differentiable(nested)]` too.
    fn call(&mut self, inst: Inst, out: &mut Vec<Stmt>) {
        let Inst { dest, op, span, ty } = inst;
        let Op::Call(callee, args) = op else {
            unreachable!("called on calls")
        };
        if args.iter().all(|a| self.of(&a.operand).is_none()) {
            out.push(Stmt::Inst(Inst {
                dest,
                op: Op::Call(callee, args),
                span,
                ty,
            }));
            self.tangent.insert(dest, None);
            return;
        }
        let tangents = self.tangent_args(&args, |t, _, o| t.of_or_zero(o), out);
        let callee = Box::new(jvp_callee(*callee));
        let pair = self.push(
            out,
            Op::Call(callee, args.into_iter().chain(tangents).collect()),
            span,
        );
        let d = self.temp(span);
        for (k, dest, ty) in [(0, dest, ty), (1, d, None)] {
            let member = syn::Index::from(k);
            let read = self.push(out, Op::Place(pair.clone(), quote!(.#member)), span);
            out.push(Stmt::Inst(Inst {
                dest,
                op: Op::ToOwned(read),
                span,
                ty,
            }));
        }
        self.tangent.insert(dest, Some(Operand::Var(d)));
    }

    /// The tangent arguments of a call of `g_jvp`: `along(self, k, a)` for
    /// the `k`-th argument `a` where it is a variable; for a constant, a
    /// zero, or `NoTangent` for a value of a type without tangents, as the
    /// ordinary forward pass passes. That is bound to a name, whose type
    /// the call then fixes: the outer passes read it again, for its own
    /// tangent.
    pub(super) fn tangent_args(
        &mut self,
        args: &[CallArg],
        mut along: impl FnMut(&mut Self, usize, &Operand) -> Operand,
        out: &mut Vec<Stmt>,
    ) -> Vec<CallArg> {
        let mut tangents = Vec::new();
        for (k, a) in args.iter().enumerate() {
            let operand = match &a.operand {
                Operand::Var(_) => along(self, k, &a.operand),
                Operand::Const(_) => {
                    let source = &a.source;
                    self.constant_tangents += 1;
                    let ident = format_ident!(
                        "d_const_{}",
                        self.constant_tangents,
                        span = Span::mixed_site()
                    );
                    out.push(Stmt::Const {
                        ident: ident.clone(),
                        expr: quote!({
                            use ::ad::__private::rules::{ZeroOfConstant as _, ZeroOfDifferentiable as _};
                            ::ad::__private::rules::const_tangent(
                                &(&::ad::__private::rules::ZeroOf(&(#source))).zero_or_none(),
                            )
                        }),
                        local: a.local,
                    });
                    Operand::Const(Const::opaque(quote!(#ident)))
                }
            };
            let source = match &operand {
                Operand::Const(c) => c.tokens.clone(),
                Operand::Var(_) => TokenStream::new(),
            };
            tangents.push(CallArg {
                operand,
                by_ref: false,
                source,
                local: false,
            });
        }
        tangents
    }

    /// The tangent of `op`'s result `y`, its instructions pushed to `out`;
    /// `None` when it is zero (no operand has a tangent).
    fn rule(&mut self, op: &Op, y: Operand, span: Span, out: &mut Vec<Stmt>) -> Option<Operand> {
        let tangents: Vec<Option<Operand>> =
            op.operands().into_iter().map(|o| self.of(o)).collect();
        self.rule_along(op, tangents, y, span, out)
    }

    /// The tangent of `op`'s result `y` along the operands' `tangents`
    /// (`None` for a zero one).
    pub(super) fn rule_along(
        &mut self,
        op: &Op,
        tangents: Vec<Option<Operand>>,
        y: Operand,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Option<Operand> {
        if tangents.iter().all(Option::is_none) {
            return None;
        }
        let mut e = Builder { t: self, out, span };
        match op {
            Op::Arith(kind, a, b) => {
                let (da, db) = (tangents[0].clone(), tangents[1].clone());
                match kind {
                    Arith::Add => e.sum(vec![da, db]),
                    Arith::Sub => {
                        let minus_db = db.map(|d| e.neg(d));
                        e.sum(vec![da, minus_db])
                    }
                    Arith::Mul => {
                        let left = da.map(|d| e.mul(d, b.clone()));
                        let right = db.map(|d| e.mul(a.clone(), d));
                        e.sum(vec![left, right])
                    }
                    // d(a / b) = da / b - y db / b.
                    Arith::Div => {
                        let left = da.map(|d| e.div(d, b.clone()));
                        let right = db.map(|d| {
                            let y_db = e.mul(y.clone(), d);
                            let q = e.div(y_db, b.clone());
                            e.neg(q)
                        });
                        e.sum(vec![left, right])
                    }
                }
            }
            Op::Neg(_) => tangents[0].clone().map(|d| e.neg(d)),
            Op::Unary(name, a) => {
                let d = tangents[0].clone()?;
                e.unary(name, a.clone(), y, d)
            }
            // d(a^n) = n a^(n-1) da.
            Op::Powi(a, n) => {
                let d = tangents[0].clone()?;
                let n_tokens = &n.tokens;
                let lower = Const {
                    tokens: quote!((#n_tokens) - 1),
                    literal: false,
                    scalar: false,
                };
                let power = e.op(Op::Powi(a.clone(), lower));
                let scalar = e.t.scalar;
                let factor = Operand::Const(Const::opaque(
                    quote!(<#scalar as ::ad::Float>::of((#n_tokens) as f64)),
                ));
                let scaled = e.mul(factor, power);
                Some(e.mul(scaled, d))
            }
            Op::Binary(name, a, b) => {
                let (da, db) = (tangents[0].clone(), tangents[1].clone());
                e.binary(name, (a.clone(), da), (b.clone(), db), y)
            }
            Op::MulAdd(a, b, _) => {
                let left = tangents[0].clone().map(|d| e.mul(d, b.clone()));
                let right = tangents[1].clone().map(|d| e.mul(a.clone(), d));
                e.sum(vec![left, right, tangents[2].clone()])
            }
            Op::Cast(_, ty) => tangents[0].clone().map(|d| e.op(Op::Cast(d, ty.clone()))),
            Op::Tuple(_) => {
                let zero = || e.t.constant(0.0);
                let items = tangents
                    .into_iter()
                    .map(|d| d.unwrap_or_else(zero))
                    .collect();
                Some(e.op(Op::Tuple(items)))
            }
            Op::Place(_, path) => tangents[0]
                .clone()
                .map(|d| e.op(Op::Place(d, path.clone()))),
            Op::View(_) => tangents[0].clone().map(|d| e.op(Op::View(d))),
            Op::ToOwned(_) => tangents[0].clone().map(|d| e.op(Op::ToOwned(d))),
            other => e.unsupported(&format!("`{}`", other.name())),
        }
    }

    /// The branches with their tangents, and a tangent phi beside each phi
    /// that has a tangent in either branch.
    fn branch(&mut self, i: If, out: &mut Vec<Stmt>) {
        let If {
            cond,
            then,
            els,
            mut phis,
            value,
        } = i;
        let (then, els) = (self.stmts(then), self.stmts(els));
        let mut tangent_phis = Vec::new();
        for phi in &phis {
            let (d_then, d_els) = (self.of(&phi.then), self.of(&phi.els));
            if d_then.is_none() && d_els.is_none() {
                self.tangent.insert(phi.dest, None);
                continue;
            }
            let dest = self.temp(self.vars[phi.dest.0].span);
            let zero = || self.constant(0.0);
            tangent_phis.push(Phi {
                dest,
                then: d_then.unwrap_or_else(zero),
                els: d_els.unwrap_or_else(zero),
            });
            self.tangent.insert(phi.dest, Some(Operand::Var(dest)));
        }
        phis.extend(tangent_phis);
        out.push(Stmt::If(Box::new(If {
            cond,
            then,
            els,
            phis,
            value,
        })));
    }

    /// A literal start (`let mut acc = 0.0;`) made of the function's float
    /// type: in generated code nothing else may fix it before a rule reads
    /// it, and an open float literal would default to `f64`.
    pub(super) fn type_literal_starts(&self, carried: &mut [Carried]) {
        for c in carried {
            if let Operand::Const(k) = &c.init {
                if k.literal {
                    let (scalar, tokens) = (self.scalar, &k.tokens);
                    c.init = Operand::Const(Const {
                        tokens: quote!(::core::convert::identity::<#scalar>(#tokens)),
                        literal: false,
                        scalar: true,
                    });
                }
            }
        }
    }

    /// The loop with each carried variable's tangent carried beside it.
    fn looped(&mut self, l: Loop, out: &mut Vec<Stmt>) {
        let Loop {
            head,
            body,
            mut carried,
            exit,
        } = l;
        self.type_literal_starts(&mut carried);
        let inputs: Vec<VarId> = carried
            .iter()
            .map(|c| {
                let d = self.temp(self.vars[c.input.0].span);
                self.tangent.insert(c.input, Some(Operand::Var(d)));
                d
            })
            .collect();
        let body = self.stmts(body);
        let mut tangents = Vec::new();
        for (c, input) in carried.iter().zip(inputs) {
            let output = self.temp(self.vars[c.output.0].span);
            tangents.push(Carried {
                input,
                init: self.of_or_zero(&c.init),
                next: self.of_or_zero(&c.next),
                output,
            });
            self.tangent.insert(c.output, Some(Operand::Var(output)));
        }
        carried.extend(tangents);
        out.push(Stmt::Loop(Box::new(Loop {
            head,
            body,
            carried,
            exit,
        })));
    }
}

/// The callee renamed to its `_jvp` (`g` to `g_jvp`, `m::g::<T>` to
/// `m::g_jvp::<T>`).
pub(super) fn jvp_callee(callee: Callee) -> Callee {
    let renamed = |ident: &Ident| format_ident!("{}_jvp", ident, span = ident.span());
    match callee {
        Callee::Path(mut path) => {
            if let Some(last) = path.path.segments.last_mut() {
                last.ident = renamed(&last.ident);
            }
            Callee::Path(path)
        }
        Callee::Method(method) => Callee::Method(renamed(&method)),
    }
}
