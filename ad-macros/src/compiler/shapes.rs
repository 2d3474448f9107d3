//! Values that have another value's shape, so the reverse sweep can read
//! the shape of the earlier one.
//!
//! An element write keeps its array's shape. A loop whose every iteration
//! only writes elements of a value it carries keeps that value's shape, and
//! so does an `if` whose two branches leave values of one shape. Without
//! this, the loop
//!
//! ```text
//! let mut z = x.to_owned();
//! for i in 1..x.len() { z[i] = x[i] * y[i - 1]; }
//! ```
//!
//! saves `z`'s shape at every iteration (for sizing `z`'s cotangent), n
//! copies of one length; with it, the reverse sweep reads the shape of the
//! `z` the loop starts from, which the forward sweep keeps once.

use std::collections::HashMap;

use proc_macro2::{Ident, TokenTree};

use super::ir::{Const, Function, Operand, Stmt, VarId};

/// Each variable whose shape is an earlier value's, with the earliest such
/// value: a variable, or an inactive local a loop starts from (never a
/// parameter: a loop starting from one would have to copy it to keep its
/// shape).
pub fn shape_sources(f: &Function) -> HashMap<VarId, Operand> {
    let mut s = Sources::default();
    s.block(&f.body.stmts, Vec::new());
    s.parent.keys().map(|&v| (v, s.source(v))).collect()
}

/// The name of an inactive local a loop starts from (`let mut acc =
/// Array1::zeros(n);`), which `forward_loop` keeps the shape of.
pub fn local_name(c: &Const) -> Option<Ident> {
    let mut tokens = c.tokens.clone().into_iter();
    match (tokens.next(), tokens.next()) {
        (Some(TokenTree::Ident(i)), None) if !c.literal && !c.scalar => Some(i),
        _ => None,
    }
}

#[derive(Default)]
struct Sources {
    /// The value each variable has the shape of.
    parent: HashMap<VarId, Operand>,
}

impl Sources {
    fn source(&self, mut v: VarId) -> Operand {
        loop {
            match self.parent.get(&v) {
                Some(Operand::Var(p)) => v = *p,
                Some(c) => return c.clone(),
                None => return Operand::Var(v),
            }
        }
    }

    /// Walks a block, inner blocks first: a loop keeps its shape only if
    /// the loops inside it do. `here` is what the block defines before its
    /// statements (a loop body's carried values). A loop's initial value
    /// keeps its shape for the reverse sweep only when defined in the loop's
    /// own block, where it moves into the loop with its shape left behind
    /// under its name.
    fn block(&mut self, stmts: &[Stmt], mut here: Vec<VarId>) {
        let mut locals: Vec<String> = Vec::new();
        for stmt in stmts {
            match stmt {
                Stmt::Inst(i) => {
                    if let Some(Operand::Var(a)) = i.op.written() {
                        self.parent.insert(i.dest, Operand::Var(*a));
                    }
                    here.push(i.dest);
                }
                Stmt::Const { ident, .. } => locals.push(ident.to_string()),
                Stmt::InactiveLet { names, .. } => {
                    locals.extend(names.iter().map(|n| n.to_string()));
                }
                Stmt::If(i) => {
                    self.block(&i.then, Vec::new());
                    self.block(&i.els, Vec::new());
                    for p in &i.phis {
                        if let (Operand::Var(a), Operand::Var(b)) = (&p.then, &p.els) {
                            let a = self.source(*a);
                            if same(&a, &self.source(*b)) {
                                self.parent.insert(p.dest, a);
                            }
                        }
                        here.push(p.dest);
                    }
                }
                Stmt::Loop(l) => {
                    self.block(&l.body, l.carried.iter().map(|c| c.input).collect());
                    for c in &l.carried {
                        let starts_here = match &c.init {
                            Operand::Var(v) => here.contains(v),
                            Operand::Const(k) => {
                                local_name(k).is_some_and(|n| locals.contains(&n.to_string()))
                            }
                        };
                        let keeps = matches!(&c.next,
                            Operand::Var(next) if same(&self.source(*next), &Operand::Var(c.input)));
                        if starts_here && keeps {
                            self.parent.insert(c.input, c.init.clone());
                            self.parent.insert(c.output, Operand::Var(c.input));
                        }
                    }
                    // (Each output is defined only once all are settled.)
                    here.extend(l.carried.iter().map(|c| c.output));
                }
                Stmt::Verbatim(_) => {}
            }
        }
    }
}

fn same(a: &Operand, b: &Operand) -> bool {
    match (a, b) {
        (Operand::Var(a), Operand::Var(b)) => a == b,
        (Operand::Const(a), Operand::Const(b)) => a.tokens.to_string() == b.tokens.to_string(),
        _ => false,
    }
}
