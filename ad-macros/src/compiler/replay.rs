//! What a loop's reverse sweep can recompute instead of saving.
//!
//! A `for` loop over a range that runs to its end (no `break` or `return`
//! stops it) visits values its reverse sweep can visit again backwards: the
//! range is kept once (`i_range`) and the reverse sweep iterates
//! `rules::replay(i_range)`, so no iteration saves its index. Constants
//! computed from such indices and from values the body never binds
//! (`let c = [i, j]`, `xs.row(t)`) are recomputed from the replayed indices
//! rather than saved per iteration.
//!
//! ```text
//! for i in 0..n { .. x[i + 1] .. }     let i_range = 0..n;
//!                                      for i in Clone::clone(&i_range) { .. }   // saves no `i`
//!  reverse sweep:                      for (i, (..)) in zip(rules::replay(i_range), tape) {
//!                                          let c1 = i + 1;                      // recomputed
//!                                          ..
//! ```

use std::collections::HashSet;

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::format_ident;

use super::ir::{Function, Loop, LoopHead, Stmt, VarId};
use super::reverse::Builder;
use super::scan::token_names;

impl Builder<'_, '_> {
    /// The name of the range a loop's reverse sweep replays, when it can:
    /// a range (`exact`) that no exit flag cuts short, whose index the
    /// body does not bind again (the reverse sweep then reads the new
    /// binding, saved).
    pub(super) fn replay_range(&self, l: &Loop, named_after: &Ident) -> Option<Ident> {
        match &l.head {
            LoopHead::For {
                exact: true, names, ..
            } if l.exit.is_none() => {
                let rebound = bound_in(&l.body);
                names
                    .iter()
                    .all(|n| !rebound.contains(&n.to_string()))
                    .then(|| format_ident!("{}_range", named_after, span = Span::mixed_site()))
            }
            _ => None,
        }
    }

    /// The constants of `stmts` the reverse sweep reads that it can
    /// recompute: their expressions read only indices of replayed loops
    /// around them and names the body never binds (parameters, paths), in
    /// forward order.
    pub(super) fn recomputable_consts(&self, stmts: &[Stmt]) -> Vec<(Ident, TokenStream)> {
        stmts
            .iter()
            .filter_map(|s| match s {
                Stmt::Const { ident, expr, .. }
                    if self.read_consts.contains(&ident.to_string())
                        && token_names(expr).iter().all(|n| self.same_in_reverse(n)) =>
                {
                    Some((ident.clone(), expr.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// Whether `name` has the same value in the reverse sweep of the block
    /// being differentiated as in its forward sweep: the index of the
    /// innermost enclosing loop that binds it, if that loop is replayed and
    /// its body does not bind the name again; otherwise a name the body
    /// never binds.
    fn same_in_reverse(&self, name: &str) -> bool {
        match self.loop_indices.iter().rev().find(|(n, _)| n == name) {
            Some((_, replayed)) => *replayed,
            None => !self.body_names.contains(name),
        }
    }

    /// Enters a loop's reverse sweep: its indices shadow outer ones, and
    /// are recomputable where it is replayed (`leave_loop` undoes it).
    pub(super) fn enter_loop(&mut self, l: &Loop, replayed: bool) {
        let rebound = bound_in(&l.body);
        if let LoopHead::For { names, .. } = &l.head {
            for n in names {
                let n = n.to_string();
                let same = replayed && !rebound.contains(&n);
                self.loop_indices.push((n, same));
            }
        }
    }

    pub(super) fn leave_loop(&mut self, l: &Loop) {
        if let LoopHead::For { names, .. } = &l.head {
            let keep = self.loop_indices.len() - names.len();
            self.loop_indices.truncate(keep);
        }
    }
}

/// A loop body as the loops directly in it see it (`hoistable_range`).
pub(super) struct Enclosing {
    /// What the body binds, its active variables included; not the loop's
    /// own indices, which the top of an iteration has.
    bound: HashSet<String>,
    /// The loops among the body's own statements, by key.
    children: HashSet<usize>,
}

/// The body of `l`, for the loops in it.
pub(super) fn enclosing(f: &Function, l: &Loop) -> Enclosing {
    let mut bound = bound_in(&l.body);
    bound.extend(
        defined_names(&l.body)
            .into_iter()
            .map(|v| f.vars[v.0].ident.to_string()),
    );
    let children = l
        .body
        .iter()
        .filter_map(|s| match s {
            Stmt::Loop(inner) => Some(super::reverse_flow::key(&**inner)),
            _ => None,
        })
        .collect();
    Enclosing { bound, children }
}

impl Builder<'_, '_> {
    /// Whether an inner loop's range can be made at the top of the
    /// enclosing loop's iteration: the loop is one of the body's own
    /// statements and its range reads nothing the body binds.
    pub(super) fn hoistable_range(&self, l: &Loop, iter: &TokenStream) -> bool {
        self.prologue.is_some()
            && self.enclosing_body.as_ref().is_some_and(|e| {
                e.children.contains(&super::reverse_flow::key(l))
                    && token_names(iter).iter().all(|n| !e.bound.contains(n))
            })
    }
}

/// The active variables `stmts` defines, at any depth.
fn defined_names(stmts: &[Stmt]) -> Vec<VarId> {
    fn walk(stmts: &[Stmt], f: &mut dyn FnMut(VarId)) {
        for stmt in stmts {
            match stmt {
                Stmt::Inst(i) => f(i.dest),
                Stmt::If(i) => {
                    i.phis.iter().for_each(|p| f(p.dest));
                    walk(&i.then, f);
                    walk(&i.els, f);
                }
                Stmt::Loop(l) => {
                    l.carried.iter().for_each(|c| {
                        f(c.input);
                        f(c.output)
                    });
                    walk(&l.body, f);
                }
                _ => {}
            }
        }
    }
    let mut ids = Vec::new();
    walk(stmts, &mut |v| ids.push(v));
    ids
}

/// The names the body may bind or change: its variables, constants and
/// loop indices, and every name in code kept as written (which may assign
/// or mutate through a method). A constant reading none of them reads the
/// same values in the reverse sweep as in the forward one.
pub(super) fn body_names(f: &Function) -> HashSet<String> {
    let mut out: HashSet<String> = f
        .vars
        .iter()
        .enumerate()
        .filter(|(i, _)| !f.params.contains(&Some(VarId(*i))))
        .map(|(_, v)| v.ident.to_string())
        .collect();
    // The `let`s of sizes before the body's first branch or loop
    // (`let (n, d) = (x.nrows(), x.ncols());`) bind names that keep their
    // value to the end (a later `let` of the same name gets a name of its
    // own, and they are not `mut`): the reverse sweep reads the same.
    let stmts = &f.body.stmts;
    let first_block = stmts
        .iter()
        .position(|s| matches!(s, Stmt::If(_) | Stmt::Loop(_)))
        .unwrap_or(stmts.len());
    for (i, stmt) in stmts.iter().enumerate() {
        let settled =
            i < first_block && matches!(stmt, Stmt::InactiveLet { tokens, .. } if sizes(tokens));
        if !settled {
            out.extend(bound_in(std::slice::from_ref(stmt)));
        }
    }
    out
}

/// `let <pattern> = <expression>;` where the pattern is not `mut` and the
/// expression calls nothing but `len`, `nrows`, `ncols` and `dim`: integers
/// (copied, never moved) computed from shapes.
fn sizes(tokens: &TokenStream) -> bool {
    fn calls_only_sizes(tokens: TokenStream) -> bool {
        let mut previous: Option<TokenTree> = None;
        for t in tokens {
            match &t {
                TokenTree::Group(g) => {
                    let call = match (&previous, g.delimiter()) {
                        (Some(TokenTree::Ident(m)), proc_macro2::Delimiter::Parenthesis) => {
                            !["len", "nrows", "ncols", "dim"].contains(&m.to_string().as_str())
                        }
                        (Some(TokenTree::Punct(p)), _) if p.as_char() == '!' => true,
                        (_, proc_macro2::Delimiter::Brace) => true,
                        _ => false,
                    };
                    if call || !calls_only_sizes(g.stream()) {
                        return false;
                    }
                }
                TokenTree::Ident(i) if i == "mut" => return false,
                _ => {}
            }
            previous = Some(t);
        }
        true
    }
    let mut t = tokens.clone().into_iter();
    matches!(t.next(), Some(TokenTree::Ident(l)) if l == "let") && calls_only_sizes(t.collect())
}

/// The names `stmts` binds or may change, nested blocks included.
fn bound_in(stmts: &[Stmt]) -> HashSet<String> {
    fn walk(stmts: &[Stmt], out: &mut HashSet<String>) {
        for stmt in stmts {
            match stmt {
                Stmt::Verbatim(t) | Stmt::InactiveLet { tokens: t, .. } => {
                    out.extend(token_names(t))
                }
                Stmt::Const { ident, .. } => {
                    out.insert(ident.to_string());
                }
                Stmt::If(i) => {
                    // `if let Some(k) = ..` binds `k`.
                    if matches!(i.cond.clone().into_iter().next(), Some(TokenTree::Ident(l)) if l == "let")
                    {
                        out.extend(token_names(&i.cond));
                    }
                    out.extend(i.value.iter().map(|c| c.ident.to_string()));
                    walk(&i.then, out);
                    walk(&i.els, out);
                }
                Stmt::Loop(l) => {
                    match &l.head {
                        LoopHead::For { names: n, .. } => {
                            out.extend(n.iter().map(|n| n.to_string()))
                        }
                        LoopHead::While { cond } => out.extend(token_names(cond)),
                    }
                    walk(&l.body, out);
                }
                Stmt::Inst(_) => {}
            }
        }
    }
    let mut out = HashSet::new();
    walk(stmts, &mut out);
    out
}
