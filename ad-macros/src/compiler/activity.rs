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
    mark(&body.stmts, &mut useful);
    useful
}

fn mark_operand(o: &Operand, useful: &mut HashSet<VarId>) {
    if let Operand::Var(v) = o {
        useful.insert(*v);
    }
}

/// Backwards over `stmts`: an instruction with a useful result makes its
/// operands useful; a useful phi its inputs; a loop iterates to a fixpoint,
/// as each iteration feeds the next.
fn mark(stmts: &[Stmt], useful: &mut HashSet<VarId>) {
    for stmt in stmts.iter().rev() {
        match stmt {
            Stmt::Inst(inst) => {
                if useful.contains(&inst.dest) {
                    useful.extend(inst.op.var_operands());
                }
            }
            Stmt::If(i) => {
                for phi in &i.phis {
                    if useful.contains(&phi.dest) {
                        mark_operand(&phi.then, useful);
                        mark_operand(&phi.els, useful);
                    }
                }
                mark(&i.then, useful);
                mark(&i.els, useful);
            }
            Stmt::Loop(l) => loop {
                let before = useful.len();
                for c in &l.carried {
                    if useful.contains(&c.output) || useful.contains(&c.input) {
                        mark_operand(&c.init, useful);
                        mark_operand(&c.next, useful);
                    }
                }
                mark(&l.body, useful);
                if useful.len() == before {
                    break;
                }
            },
            Stmt::Verbatim(_) | Stmt::Const { .. } | Stmt::InactiveLet { .. } => {}
        }
    }
}

/// Whether the body branches or loops over active values (its adjoints are
/// then `Option`s, see `reverse.rs`).
pub fn has_control_flow(body: &Body) -> bool {
    body.stmts
        .iter()
        .any(|s| matches!(s, Stmt::If(_) | Stmt::Loop(_)))
}

/// The variables a block defines at its own level (not in nested blocks).
pub fn defined_at(stmts: &[Stmt]) -> Vec<VarId> {
    let mut out = Vec::new();
    for stmt in stmts {
        match stmt {
            Stmt::Inst(i) => out.push(i.dest),
            Stmt::If(i) => out.extend(i.phis.iter().map(|p| p.dest)),
            Stmt::Loop(l) => out.extend(l.carried.iter().map(|c| c.output)),
            _ => {}
        }
    }
    out
}

/// How many cotangent contributions each variable's adjoint receives in the
/// reverse sweep of straight-line code (the seed counts for the result).
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

/// The variables known to hold a scalar: scalar parameters, element reads,
/// casts, full reductions (`sum()`, `mean().unwrap()`), arithmetic and
/// scalar functions of scalars and literals, and loop variables that start
/// or end an iteration as one (a carried variable has one type). (A proc
/// macro sees no types; this is what the syntax proves. Element reads are
/// copies `let t = x[i];`, which compile only for `Copy` elements: the
/// floats of arrays, slices and `Vec`s.)
pub fn scalars(f: &super::ir::Function) -> HashSet<VarId> {
    use super::ir::{Op, Reduce};
    fn scalar(o: &Operand, set: &HashSet<VarId>) -> bool {
        match o {
            Operand::Var(v) => set.contains(v),
            Operand::Const(c) => c.literal || c.scalar,
        }
    }
    fn walk(stmts: &[Stmt], set: &mut HashSet<VarId>, reduced: &HashSet<VarId>) {
        for stmt in stmts {
            match stmt {
                Stmt::Inst(i) => {
                    let yes = match &i.op {
                        Op::Index(..) | Op::Cast(..) | Op::Reduce(Reduce::Sum, _) => true,
                        Op::Unwrap(Operand::Var(v), _) => reduced.contains(v),
                        Op::Arith(_, a, b) | Op::Binary(_, a, b) => {
                            scalar(a, set) && scalar(b, set)
                        }
                        Op::MulAdd(a, b, c) => scalar(a, set) && scalar(b, set) && scalar(c, set),
                        Op::Neg(a) | Op::Unary(_, a) | Op::Powi(a, _) => scalar(a, set),
                        _ => false,
                    };
                    if yes {
                        set.insert(i.dest);
                    }
                }
                Stmt::If(i) => {
                    walk(&i.then, set, reduced);
                    walk(&i.els, set, reduced);
                    for p in &i.phis {
                        if scalar(&p.then, set) && scalar(&p.els, set) {
                            set.insert(p.dest);
                        }
                    }
                }
                Stmt::Loop(l) => {
                    // A carried variable has one type: that of its start,
                    // and of its value at the end of an iteration.
                    for c in &l.carried {
                        if scalar(&c.init, set) || scalar(&c.next, set) {
                            set.insert(c.input);
                            set.insert(c.output);
                        }
                    }
                    walk(&l.body, set, reduced);
                }
                _ => {}
            }
        }
    }
    let mut set: HashSet<VarId> = f.scalar_params.iter().copied().collect();
    let reduced = means(&f.body.stmts);
    // Until nothing changes: a loop variable found scalar at the end of an
    // iteration makes what its start feeds scalar on the next pass.
    loop {
        let before = set.len();
        walk(&f.body.stmts, &mut set, &reduced);
        if set.len() == before {
            return set;
        }
    }
}

/// The results of `mean()` (an `Option` of a scalar).
fn means(stmts: &[Stmt]) -> HashSet<VarId> {
    use super::ir::{instructions, Op, Reduce};
    instructions(stmts)
        .into_iter()
        .filter(|i| matches!(i.op, Op::Reduce(Reduce::Mean, _)))
        .map(|i| i.dest)
        .collect()
}
