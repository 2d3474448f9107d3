//! `f_grad` written as IR, so that differentiable code may call it and
//! reverse mode run over reverse mode (`f_grad_vjp`): the body as it is,
//! then each instruction's adjoint in reverse order, and the result the
//! pair `(value, (g1, ..., gn))`.
//!
//! An instruction's contribution to an operand's adjoint is its tangent
//! rule along that operand alone, with the result's adjoint as the
//! operand's tangent: the rules are linear in the tangents, and a scalar
//! partial times a scalar adjoint is the same product either way. So the
//! adjoints reuse the forward rules, kinks and all.
//!
//! Scalar bodies of instructions, `if`s (`branches.rs`), loops, one inside
//! another at most (`loops.rs`), and calls of `#[differentiable(nested)]`
//! functions. For any other body `nested` keeps the ordinary `f_grad`, which
//! differentiable code cannot call. A `#[constant]` parameter's entry is
//! the constant `ad::NoTangent`.

use std::collections::HashMap;

use proc_macro2::Span;
use quote::quote;

use super::super::ir::{Arith, Body, CallArg, Const, Function, Inst, Op, Operand, Stmt, VarId};
use super::branches::{self, Scope};
use super::rules::{self, Builder};
use super::tangents::{jvp_callee, Tangents};

/// Each variable's adjoint so far, where it has one.
pub(super) type Adjoints = HashMap<VarId, Operand>;

impl Tangents<'_> {
    /// `f_grad`'s IR, or `None` where the body is outside what it covers
    /// (then any error the rules reported is the reason).
    pub(super) fn gradient(mut self, f: Function) -> Option<Function> {
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
        let Body { mut stmts, result } = body;
        self.touched = branches::covered(&stmts)?;
        branches::bind_conditions(&mut stmts);
        let mut adjoints = Adjoints::new();
        if let Operand::Var(r) = &result {
            adjoints.insert(*r, self.constant(1.0));
        }
        let mut reverse = Vec::new();
        self.pull_back_stmts(&mut stmts, &mut Vec::new(), &mut adjoints, &mut reverse)?;
        // SPEC: a `#[constant]` parameter's entry is `ad::NoTangent`.
        let gradients = params
            .iter()
            .map(|p| match p {
                Some(p) => adjoints
                    .get(p)
                    .cloned()
                    .unwrap_or_else(|| self.constant(0.0)),
                None => Operand::Const(Const::no_tangent()),
            })
            .collect();
        let mut out = std::mem::take(&mut self.prologue);
        out.extend(stmts);
        out.extend(reverse);
        let span = Span::call_site();
        let gradients = self.push(&mut out, Op::Tuple(gradients), span);
        let pair = self.push(&mut out, Op::Tuple(vec![result, gradients]), span);
        Some(Function {
            name: format!("{name}_grad"),
            pullback_lifetime,
            vars: self.vars,
            params,
            scalar_params,
            caller_refs,
            bags,
            body: Body {
                stmts: out,
                result: pair,
            },
        })
    }

    /// The adjoints of `stmts`, last statement first, pushed to `out`.
    /// `scopes` are the branches or the loop `stmts` sit in, innermost
    /// last: what the adjoints read of a branch's values leaves it through
    /// a phi, of a loop's through a tape. An `if` may gain such phis and a
    /// loop tapes (and statements before it), hence `&mut`.
    pub(super) fn pull_back_stmts(
        &mut self,
        stmts: &mut Vec<Stmt>,
        scopes: &mut Vec<Scope>,
        adjoints: &mut Adjoints,
        out: &mut Vec<Stmt>,
    ) -> Option<()> {
        for at in (0..stmts.len()).rev() {
            match &mut stmts[at] {
                Stmt::Inst(inst) => self.pull_back(inst, scopes, adjoints, out)?,
                Stmt::If(i) => self.pull_back_branch(i, scopes, adjoints, out)?,
                Stmt::Loop(l) => {
                    let (before, after) = self.pull_back_loop(l, scopes, adjoints, out)?;
                    stmts.splice(at + 1..at + 1, after);
                    stmts.splice(at..at, before);
                }
                Stmt::Verbatim(_) | Stmt::Const { .. } | Stmt::InactiveLet { .. } => {}
            }
        }
        Some(())
    }

    /// Adds `inst`'s contributions to its operands' adjoints, if its result
    /// has one; `None` for an operation outside the scalar rules.
    fn pull_back(
        &mut self,
        inst: &Inst,
        scopes: &mut [Scope],
        adjoints: &mut Adjoints,
        out: &mut Vec<Stmt>,
    ) -> Option<()> {
        let Some(bar) = adjoints.get(&inst.dest).cloned() else {
            return Some(());
        };
        if let Op::Call(..) = inst.op {
            return self.pull_back_call(inst, bar, scopes, adjoints, out);
        }
        // What the rule reads of the instruction, under the names it has
        // where the adjoints are computed (outside the branch or loop it
        // is in): a branch or a loop exports only what is read.
        let (operands, result) = rules::reads(&inst.op)?;
        let read = match operands {
            true => Some(self.as_read(&inst.op, scopes)?),
            false => None,
        };
        let op = read.as_ref().unwrap_or(&inst.op);
        let y = match result {
            true => self.read(inst.dest, scopes),
            false => inst.dest,
        };
        let operands = inst.op.operands();
        for (pos, operand) in operands.iter().enumerate() {
            let Operand::Var(v) = operand else { continue };
            let mut along = vec![None; operands.len()];
            along[pos] = Some(bar.clone());
            let Some(part) = self.rule_along(op, along, Operand::Var(y), inst.span, out) else {
                continue;
            };
            self.add_adjoint(adjoints, *v, part, inst.span, out);
        }
        Some(())
    }

    /// `y = g(args)` with `y`'s adjoint `bar`: a variable argument's
    /// contribution is `g_jvp`'s tangent along that argument alone, with
    /// `bar` as its tangent (a call's tangent is linear in the tangents, as
    /// a rule's is). The IR calls `g_jvp`, so `f_grad_vjp` calls
    /// `g_jvp_vjp`: `g` needs `#[differentiable(nested)]`, as for `f_jvp`.
    fn pull_back_call(
        &mut self,
        inst: &Inst,
        bar: Operand,
        scopes: &mut [Scope],
        adjoints: &mut Adjoints,
        out: &mut Vec<Stmt>,
    ) -> Option<()> {
        let (Op::Call(callee, args), span) = (&inst.op, inst.span) else {
            return None;
        };
        let read: Vec<CallArg> = args
            .iter()
            .map(|a| CallArg {
                operand: match &a.operand {
                    Operand::Var(v) => Operand::Var(self.read(*v, scopes)),
                    constant => constant.clone(),
                },
                ..a.clone()
            })
            .collect();
        for (k, a) in args.iter().enumerate() {
            let Operand::Var(v) = a.operand else { continue };
            let along = |t: &mut Self, j: usize, _: &Operand| {
                if j == k {
                    bar.clone()
                } else {
                    t.constant(0.0)
                }
            };
            let tangents = self.tangent_args(&read, along, out);
            let call = Op::Call(
                Box::new(jvp_callee((**callee).clone())),
                read.iter().cloned().chain(tangents).collect(),
            );
            let pair = self.push(out, call, span);
            let tangent = self.push(out, Op::Place(pair, quote!(.1)), span);
            let part = self.push(out, Op::ToOwned(tangent), span);
            self.add_adjoint(adjoints, v, part, span, out);
        }
        Some(())
    }

    /// `part` added into `v`'s adjoint.
    pub(super) fn add_adjoint(
        &mut self,
        adjoints: &mut Adjoints,
        v: VarId,
        part: Operand,
        span: Span,
        out: &mut Vec<Stmt>,
    ) {
        let sum = match adjoints.remove(&v) {
            Some(earlier) => {
                let mut e = Builder { t: self, out, span };
                e.sum(vec![Some(earlier), Some(part)])
            }
            None => Some(part),
        };
        adjoints.extend(sum.map(|s| (v, s)));
    }

    /// `op` with each variable under the name the adjoints read it by;
    /// `None` for an operation whose rule reads no operand.
    fn as_read(&mut self, op: &Op, scopes: &mut [Scope]) -> Option<Op> {
        let mut r = |o: &Operand| match o {
            Operand::Var(v) => Operand::Var(self.read(*v, scopes)),
            Operand::Const(c) => Operand::Const(c.clone()),
        };
        Some(match op {
            Op::Arith(kind @ (Arith::Mul | Arith::Div), a, b) => Op::Arith(*kind, r(a), r(b)),
            Op::Unary(name, a) => Op::Unary(name, r(a)),
            Op::Powi(a, n) => Op::Powi(r(a), n.clone()),
            Op::Binary(name, a, b) => Op::Binary(name, r(a), r(b)),
            Op::MulAdd(a, b, c) => Op::MulAdd(r(a), r(b), r(c)),
            _ => return None,
        })
    }
}
