//! Loop adjoints held as values rather than `Option`s.
//!
//! A loop that carries an array and writes its elements on every
//! iteration (`for i in 1..n { z[i] = x[i] * y[i - 1]; }`) has a whole
//! adjoint for that array on every iteration of its reverse sweep: the
//! element write's pullback reads it and hands it on with the element
//! cleared. Held as an `Option`, the adjoint is taken, unwrapped and
//! wrapped again on each iteration, which keeps LLVM from holding the
//! array's pointer and strides in registers (a quarter of the time of
//! such a loop's reverse sweep). So the reverse loop materializes it once,
//! before its first iteration, and carries it as a value:
//!
//! ```text
//! let mut z_1_carried_bar = materialize(z_3_bar.take(), shape_of(&z));
//! for i in replay(range) {
//!     let mut z_2_bar = z_1_carried_bar;
//!     let t4_bar = index_write_pullback_value(&z_2_bar, i);
//!     let mut z_1_bar = index_write_pullback_array(z_2_bar, i);
//!     ..
//!     z_1_carried_bar = z_1_bar;
//! }
//! ```
//!
//! This holds when the array's versions in the body form one chain of
//! element writes at the body's top level, from the version the iteration
//! starts with to the one it ends with, and the body otherwise only reads
//! their elements. Each version's first contribution in the reverse sweep
//! is then the pullback of the write that consumed it, which binds it.

use std::collections::HashSet;

use super::ir::{Carried, Loop, Op, Operand, Stmt, VarId};
use super::reverse::Builder;

impl Builder<'_, '_> {
    /// The versions of `c`'s array in `l`'s body, from the one an
    /// iteration ends with back to the one it starts with, if its adjoint
    /// can be held as a value (see the module's documentation).
    pub(super) fn written_chain(&self, l: &Loop, c: &Carried) -> Option<Vec<VarId>> {
        let Operand::Var(next) = c.next else {
            return None;
        };
        // (The chain's versions, `c.input` among them, must be useful too.)
        if !matches!(c.init, Operand::Var(_)) || !self.useful.contains(&c.output) {
            return None;
        }
        let mut chain = vec![next];
        let mut version = next;
        while version != c.input {
            version = l.body.iter().find_map(|s| match s {
                Stmt::Inst(i) if i.dest == version => match &i.op {
                    Op::IndexWrite(Operand::Var(base), ..)
                    | Op::IndexAdd(Operand::Var(base), ..) => Some(*base),
                    _ => None,
                },
                _ => None,
            })?;
            chain.push(version);
        }
        let plain = |v: &VarId| {
            self.useful.contains(v)
                && !self.static_vars.contains(v)
                && !self.eager.contains(v)
                && !self.dense_vars.contains(v)
                && !self.valued.contains(v)
        };
        let members: HashSet<VarId> = chain.iter().copied().collect();
        (chain.len() > 1 && chain.iter().all(plain) && only_elements_used(&l.body, &members, true))
            .then_some(chain)
    }
}

/// Whether `stmts` use the `chain`'s versions only through element reads
/// and, at the top level, the chain's own writes.
fn only_elements_used(stmts: &[Stmt], chain: &HashSet<VarId>, top: bool) -> bool {
    let outside = |o: &Operand| !matches!(o, Operand::Var(v) if chain.contains(v));
    stmts.iter().all(|s| match s {
        Stmt::Inst(i) => match &i.op {
            Op::Index(..) => true,
            Op::IndexWrite(_, _, value) | Op::IndexAdd(_, _, value)
                if top && chain.contains(&i.dest) =>
            {
                outside(value)
            }
            op => op.var_operands().iter().all(|v| !chain.contains(v)),
        },
        Stmt::If(f) => {
            f.phis.iter().all(|p| outside(&p.then) && outside(&p.els))
                && only_elements_used(&f.then, chain, false)
                && only_elements_used(&f.els, chain, false)
        }
        Stmt::Loop(inner) => {
            inner
                .carried
                .iter()
                .all(|c| outside(&c.init) && outside(&c.next))
                && only_elements_used(&inner.body, chain, false)
        }
        _ => true,
    })
}
