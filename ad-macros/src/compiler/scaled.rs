//! Constant multiples whose only use is a sum: `t = u * c` in `y = a + t`.
//!
//! Rule by rule, the reverse sweep copies `y_bar` for `t` (the other
//! operand takes its buffer), scales the copy in a second pass and adds it
//! into `u_bar` in a third. Here `t` has no other reader, so its adjoint
//! is never needed: the sum sends `y_bar * c` straight to `u`, one pass
//! (`rules::add_scaled_pullback_rhs`), and `t`'s own pullback is left out.
//! Runge–Kutta stages (`y + k * (h / 2.0)`), momentum and `axpy` updates
//! are sums of this kind.

use std::collections::{HashMap, HashSet};

use super::ir::{Arith, Function, Op, Operand, Stmt, VarId};
use super::reverse_flow::block_key;

/// A block of statements, as `block_key` names it.
type Block = (usize, usize);

/// `t = u * c`, `c * u` or `u / c` with `c` constant.
#[derive(Clone)]
pub(super) struct Scaled {
    pub u: VarId,
    pub factor: Operand,
    pub divide: bool,
}

/// The products `t` that a sum may pull back through, by `t`: defined by
/// a useful instruction, read by exactly one useful instruction, a `+` or
/// `-` in the same block, and by no branch value, carried value or result.
pub(super) fn scaled_terms(f: &Function, useful: &HashSet<VarId>) -> HashMap<VarId, Scaled> {
    let mut uses = Uses::default();
    uses.walk(&f.body.stmts, useful);
    if let Operand::Var(v) = &f.body.result {
        uses.escapes.insert(*v);
    }
    uses.products
        .into_iter()
        .filter(|(t, (block, _))| {
            !uses.escapes.contains(t)
                && matches!(uses.readers.get(t).map(Vec::as_slice), Some([(b, true)]) if b == block)
        })
        .map(|(t, (_, scaled))| (t, scaled))
        .collect()
}

#[derive(Default)]
struct Uses {
    /// Each candidate product, with the block that defines it.
    products: HashMap<VarId, (Block, Scaled)>,
    /// Each variable's readers: their block, and whether the reader is a
    /// sum.
    readers: HashMap<VarId, Vec<(Block, bool)>>,
    /// Read by a branch's value, a loop's carried value, or returned.
    escapes: HashSet<VarId>,
}

impl Uses {
    fn walk(&mut self, stmts: &[Stmt], useful: &HashSet<VarId>) {
        let here = block_key(stmts);
        for stmt in stmts {
            match stmt {
                Stmt::Inst(i) if useful.contains(&i.dest) => {
                    if let Some(scaled) = product(&i.op) {
                        self.products.insert(i.dest, (here, scaled));
                    }
                    let sum = matches!(i.op, Op::Arith(Arith::Add | Arith::Sub, ..));
                    for v in i.op.var_operands() {
                        self.readers.entry(v).or_default().push((here, sum));
                    }
                }
                Stmt::If(i) => {
                    for p in &i.phis {
                        self.escape(&p.then);
                        self.escape(&p.els);
                    }
                    self.walk(&i.then, useful);
                    self.walk(&i.els, useful);
                }
                Stmt::Loop(l) => {
                    for c in &l.carried {
                        self.escape(&c.init);
                        self.escape(&c.next);
                    }
                    self.walk(&l.body, useful);
                }
                _ => {}
            }
        }
    }

    fn escape(&mut self, o: &Operand) {
        if let Operand::Var(v) = o {
            self.escapes.insert(*v);
        }
    }
}

fn product(op: &Op) -> Option<Scaled> {
    let (u, factor, divide) = match op {
        Op::Arith(Arith::Mul, Operand::Var(u), c @ Operand::Const(_))
        | Op::Arith(Arith::Mul, c @ Operand::Const(_), Operand::Var(u)) => (*u, c, false),
        Op::Arith(Arith::Div, Operand::Var(u), c @ Operand::Const(_)) => (*u, c, true),
        _ => return None,
    };
    Some(Scaled {
        u,
        factor: factor.clone(),
        divide,
    })
}
