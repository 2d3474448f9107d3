//! Activity analysis.
//!
//! Lowering creates a variable only for values computed from active
//! parameters, so every variable is varied. A variable is useful when the
//! result depends on it; active = varied and useful. Only active variables
//! get derivative code.

use std::collections::{HashMap, HashSet};

use super::ir::{Body, Operand, Stmt, VarId};

/// The variables the result of `body` depends on.
pub fn useful(body: &Body) -> HashSet<VarId> {
    let mut useful = HashSet::new();
    if let Operand::Var(v) = body.result {
        useful.insert(v);
    }
    for stmt in body.stmts.iter().rev() {
        if let Stmt::Inst(inst) = stmt {
            if useful.contains(&inst.dest) {
                useful.extend(inst.op.var_operands());
            }
        }
    }
    useful
}

/// How many cotangent contributions each variable's adjoint receives in the
/// reverse sweep (the seed counts for the result).
pub fn contributions(body: &Body, useful: &HashSet<VarId>) -> HashMap<VarId, usize> {
    let mut counts = HashMap::new();
    if let Operand::Var(v) = body.result {
        *counts.entry(v).or_default() += 1;
    }
    for stmt in &body.stmts {
        if let Stmt::Inst(inst) = stmt {
            if useful.contains(&inst.dest) {
                for v in inst.op.var_operands() {
                    *counts.entry(v).or_default() += 1;
                }
            }
        }
    }
    counts
}
