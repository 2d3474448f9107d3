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
//! Straight-line scalar bodies only (no branches, loops or calls); for
//! any other body `nested` keeps the ordinary `f_grad`, which
//! differentiable code cannot call. A `#[constant]` parameter's entry is
//! the constant `ad::NoTangent`.

use std::collections::HashMap;

use proc_macro2::Span;

use super::super::ir::{Body, Const, Function, Inst, Op, Operand, Stmt, VarId};
use super::rules::Builder;
use super::tangents::Tangents;

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
        let Body { stmts, result } = body;
        let mut adjoints = HashMap::new();
        if let Operand::Var(r) = &result {
            adjoints.insert(*r, self.constant(1.0));
        }
        let mut reverse = Vec::new();
        for stmt in stmts.iter().rev() {
            match stmt {
                Stmt::Inst(inst) => self.pull_back(inst, &mut adjoints, &mut reverse)?,
                Stmt::Verbatim(_) | Stmt::Const { .. } | Stmt::InactiveLet { .. } => {}
                Stmt::If(_) | Stmt::Loop(_) => return None,
            }
        }
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
        let mut out = stmts;
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

    /// Adds `inst`'s contributions to its operands' adjoints, if its result
    /// has one; `None` for an operation outside the scalar rules.
    fn pull_back(
        &mut self,
        inst: &Inst,
        adjoints: &mut HashMap<VarId, Operand>,
        out: &mut Vec<Stmt>,
    ) -> Option<()> {
        let Some(bar) = adjoints.get(&inst.dest).cloned() else {
            return Some(());
        };
        // The operations whose tangent rule, read along one operand, is
        // that operand's adjoint contribution. Not `as` (its rule casts to
        // the result's type, an adjoint needs the operand's), nor tuples
        // and places, which scalar bodies make only from calls.
        if !matches!(
            inst.op,
            Op::Arith(..)
                | Op::Neg(_)
                | Op::Unary(..)
                | Op::Powi(..)
                | Op::Binary(..)
                | Op::MulAdd(..)
                | Op::View(_)
                | Op::ToOwned(_)
        ) {
            return None;
        }
        let operands = inst.op.operands();
        for (pos, operand) in operands.iter().enumerate() {
            let Operand::Var(v) = operand else { continue };
            let mut along = vec![None; operands.len()];
            along[pos] = Some(bar.clone());
            let y = Operand::Var(inst.dest);
            let Some(part) = self.rule_along(&inst.op, along, y, inst.span, out) else {
                continue;
            };
            let sum = match adjoints.remove(v) {
                Some(earlier) => {
                    let mut e = Builder {
                        t: self,
                        out,
                        span: inst.span,
                    };
                    e.sum(vec![Some(earlier), Some(part)])
                }
                None => Some(part),
            };
            adjoints.extend(sum.map(|s| (*v, s)));
        }
        Some(())
    }
}
