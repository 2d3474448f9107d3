//! Arrays written in place after they are read: the reverse sweep saves
//! the elements it reads of them, not the array.
//!
//! An element read in a branch or an inner loop (`v[j]`, of an array from
//! the block around it) is recomputed in the reverse sweep from the array,
//! which costs nothing when the array is kept anyway: a parameter, or a
//! value the enclosing block's record holds for other reasons. A version
//! that is then written in place is different. Keeping it for the reverse
//! sweep makes the forward sweep copy the whole array before the write,
//! once per iteration of every loop around it:
//!
//! ```text
//! for i in 1..n {
//!     if i % 3 == 0 { b = v[i].cos(); }   // v[i]: saved in the branch's record
//!     v[i - 1] += b * x[i - 1];           // writes the same version in place
//! }
//! ```
//!
//! So the element itself goes into the nested block's record: one scalar
//! where the array would be n.

use std::collections::HashSet;

use super::ir::{Function, Op, Operand, Stmt, VarId};

/// The versions of arrays that an element or slice write takes over, and
/// those that flow into them: a loop's next value or a branch's value,
/// when the variable it becomes is written in place.
pub(super) fn rewritten(f: &Function) -> HashSet<VarId> {
    let mut flows = Vec::new();
    let mut out = HashSet::new();
    walk(&f.body.stmts, &mut out, &mut flows);
    // Follow the flows back from the writes, to a fixed point.
    let mut grew = true;
    while grew {
        grew = false;
        for (from, into) in &flows {
            if out.contains(into) && out.insert(*from) {
                grew = true;
            }
        }
    }
    out
}

/// Collects the bases of writes into `out`, and into `flows` each
/// `(from, into)` where the value `from` becomes the variable `into`.
fn walk(stmts: &[Stmt], out: &mut HashSet<VarId>, flows: &mut Vec<(VarId, VarId)>) {
    for stmt in stmts {
        match stmt {
            Stmt::Inst(i) => {
                if let Op::IndexWrite(Operand::Var(base), ..)
                | Op::IndexAdd(Operand::Var(base), ..)
                | Op::SliceWrite(Operand::Var(base), ..) = &i.op
                {
                    out.insert(*base);
                }
            }
            Stmt::If(i) => {
                for p in &i.phis {
                    flow(flows, &p.then, p.dest);
                    flow(flows, &p.els, p.dest);
                }
                walk(&i.then, out, flows);
                walk(&i.els, out, flows);
            }
            Stmt::Loop(l) => {
                for c in &l.carried {
                    // The next value becomes the next iteration's input,
                    // or, after the last, the loop's output.
                    flow(flows, &c.next, c.input);
                    flow(flows, &c.next, c.output);
                    flow(flows, &c.init, c.input);
                }
                walk(&l.body, out, flows);
            }
            _ => {}
        }
    }
}

fn flow(flows: &mut Vec<(VarId, VarId)>, from: &Operand, into: VarId) {
    if let Operand::Var(v) = from {
        flows.push((*v, into));
    }
}
