//! The adjoints of an `if` in `f_grad` written as IR: a second `if` on the
//! same condition, after the body, whose branches pull back what the
//! first one's computed.
//!
//! Input:  `if c { q = sin(x); t = q * z } else { t = x }; r = t * z`
//! Output: the `if` as it is, with a phi more that carries `q` out of its
//! branch (`q_out = phi(q, 0)`); then `if c { q_bar = cos(q_out) * z *
//! t_bar; ... } else { x_bar += t_bar }` whose phis merge the adjoints of
//! the values from before it (`x`, `z`).
//!
//! The condition is bound to a name first, so both `if`s take the same
//! branch. A branch's inactive `let`s run again in the second `if`, where
//! the adjoints may read them; where one reads a name other inactive code
//! touches (`n += 1;`, which might have changed it), the body is not
//! covered.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote};

use super::super::ir::{self, Carried, If, Operand, Phi, Stmt, VarId};
use super::super::scan;
use super::adjoints::Adjoints;
use super::tangents::Tangents;

/// A branch or a loop body the adjoints are computed in, as seen from
/// there.
pub(super) struct Scope {
    /// The variables the branch or body makes at its own level (not in
    /// `if`s inside it, which carry theirs out through phis).
    pub(super) defined: HashSet<VarId>,
    /// Each of them the adjoints read, and what carries it out: a phi of
    /// the branch's `if`, or the item of the loop's tape that the reverse
    /// loop reads.
    pub(super) exports: HashMap<VarId, VarId>,
    /// The `exports` that the `if` has no phi for yet, or that have no
    /// tape yet.
    pub(super) added: Vec<(VarId, VarId)>,
    /// Every variable the branch or body makes, at any depth: what the
    /// code after it cannot name.
    pub(super) hidden: HashSet<VarId>,
    /// A loop's body, not a branch.
    pub(super) looped: bool,
    /// For a loop's body: what loops inside it declare per iteration (the
    /// bounds of their runs), and the tapes they need carried.
    pub(super) declared: Vec<Stmt>,
    pub(super) threads: Vec<Carried>,
}

#[derive(Clone, Copy, PartialEq)]
enum Arm {
    Then,
    Else,
}

impl Tangents<'_> {
    /// The name under which the adjoints read `v`: `v` itself, or the phi
    /// that carries it out of each branch it is in, or its item of the
    /// tape of the loop it is in (which the reverse loop reads, where the
    /// adjoints are: no further out).
    pub(super) fn read(&mut self, v: VarId, scopes: &mut [Scope]) -> VarId {
        let mut name = v;
        for k in (0..scopes.len()).rev() {
            if !scopes[k].defined.contains(&name) {
                continue;
            }
            name = match scopes[k].exports.get(&name) {
                Some(out) => *out,
                None => {
                    let out = self.temp(self.vars[name.0].span);
                    scopes[k].exports.insert(name, out);
                    scopes[k].added.push((name, out));
                    if k > 0 && !scopes[k].looped {
                        scopes[k - 1].defined.insert(out);
                    }
                    out
                }
            };
            if scopes[k].looped {
                break;
            }
        }
        name
    }

    /// The second `if` of `i`, pushed to `out`, and the phis `i` needs for
    /// it; `None` where a branch is outside what the pass covers.
    pub(super) fn pull_back_branch(
        &mut self,
        i: &mut If,
        scopes: &mut Vec<Scope>,
        adjoints: &mut Adjoints,
        out: &mut Vec<Stmt>,
    ) -> Option<()> {
        let If {
            cond,
            then,
            els,
            phis,
            ..
        } = i;
        let mut inside = HashSet::new();
        made_in(then, &mut inside);
        made_in(els, &mut inside);
        let results: Vec<(VarId, Option<Operand>)> = phis
            .iter()
            .map(|p| (p.dest, adjoints.remove(&p.dest)))
            .collect();
        let mut arms = Vec::new();
        for (arm, stmts) in [(Arm::Then, &mut *then), (Arm::Else, &mut *els)] {
            let mut code = self.replayed(stmts, &inside, scopes)?;
            let mut arm_adjoints = adjoints.clone();
            let mut scope = Scope {
                defined: made_at(stmts),
                exports: HashMap::new(),
                added: Vec::new(),
                hidden: inside.clone(),
                looped: false,
                declared: Vec::new(),
                threads: Vec::new(),
            };
            for (phi, (_, bar)) in phis.iter().zip(&results) {
                let Operand::Var(v) = arm.of(phi) else {
                    continue;
                };
                if scope.defined.contains(v) {
                    scope.exports.entry(*v).or_insert(phi.dest);
                }
                if let Some(bar) = bar {
                    let span = self.vars[phi.dest.0].span;
                    self.add_adjoint(&mut arm_adjoints, *v, bar.clone(), span, &mut code);
                }
            }
            scopes.push(scope);
            let pulled = self.pull_back_stmts(stmts, scopes, &mut arm_adjoints, &mut code);
            let scope = scopes.pop();
            pulled?;
            let scope = scope?;
            arms.push((arm, code, arm_adjoints, scope.added));
        }
        for (arm, _, _, added) in &arms {
            for (inner, dest) in added {
                // A loop's tape, from a branch that did not run the loop,
                // is the tape as it came (or an empty one).
                let zero = match self.lists.get(inner).cloned() {
                    Some(unchanged) => {
                        self.lists.insert(*dest, unchanged.clone());
                        unchanged
                    }
                    None => self.constant(0.0),
                };
                let value = Operand::Var(*inner);
                let (then, els) = match arm {
                    Arm::Then => (value, zero),
                    Arm::Else => (zero, value),
                };
                phis.push(Phi {
                    dest: *dest,
                    then,
                    els,
                });
            }
        }
        let [(_, then_code, then_adjoints, _), (_, els_code, els_adjoints, _)] =
            <[_; 2]>::try_from(arms).ok()?;
        let merged = self.merged(adjoints, &inside, &then_adjoints, &els_adjoints);
        if !merged.is_empty() {
            out.push(Stmt::If(Box::new(If {
                cond: cond.clone(),
                then: then_code,
                els: els_code,
                phis: merged,
                value: None,
            })));
        }
        Some(())
    }

    /// A branch's inactive `let`s and constants, again, for the second
    /// `if`; `None` when one reads a value the branch or a branch or loop
    /// around it computes (which the second `if` has under another name),
    /// or a name other inactive code touches (which may have changed
    /// since).
    fn replayed(
        &self,
        stmts: &[Stmt],
        inside: &HashSet<VarId>,
        scopes: &[Scope],
    ) -> Option<Vec<Stmt>> {
        let hidden = scopes.iter().flat_map(|s| &s.hidden).chain(inside);
        let mut names: HashSet<String> = hidden.map(|v| self.vars[v.0].ident.to_string()).collect();
        names.extend(self.touched.iter().cloned());
        let mut out = Vec::new();
        for stmt in stmts {
            let (again, tokens) = match stmt {
                Stmt::InactiveLet {
                    tokens,
                    names: bound,
                    views,
                } => {
                    let again = Stmt::InactiveLet {
                        tokens: tokens.clone(),
                        names: bound.clone(),
                        views: views.clone(),
                    };
                    (again, tokens)
                }
                Stmt::Const { ident, expr, local } => {
                    let again = Stmt::Const {
                        ident: ident.clone(),
                        expr: expr.clone(),
                        local: *local,
                    };
                    (again, expr)
                }
                _ => continue,
            };
            if names_any(&read_by(tokens), &names) {
                return None;
            }
            out.push(again);
        }
        Some(out)
    }

    /// The phis of the second `if`: one for each value from before the
    /// `if` whose adjoint either branch changed, which then holds it.
    fn merged(
        &mut self,
        adjoints: &mut Adjoints,
        inside: &HashSet<VarId>,
        then: &Adjoints,
        els: &Adjoints,
    ) -> Vec<Phi> {
        let mut outer: Vec<VarId> = then
            .keys()
            .chain(els.keys())
            .filter(|v| !inside.contains(v))
            .copied()
            .collect();
        outer.sort();
        outer.dedup();
        let mut phis = Vec::new();
        for v in outer {
            let before = adjoints.get(&v);
            let (t, e) = (then.get(&v), els.get(&v));
            if same(t, before) && same(e, before) {
                continue;
            }
            let dest = self.temp(self.vars[v.0].span);
            let zero = || self.constant(0.0);
            phis.push(Phi {
                dest,
                then: t.cloned().unwrap_or_else(zero),
                els: e.cloned().unwrap_or_else(zero),
            });
            adjoints.insert(v, Operand::Var(dest));
        }
        phis
    }
}

impl Arm {
    fn of(self, phi: &Phi) -> &Operand {
        match self {
            Arm::Then => &phi.then,
            Arm::Else => &phi.els,
        }
    }
}

/// The names the body's other inactive statements (`n += 1;`) read or
/// write, which a `let` run again must not read; `None` where the pass
/// does not cover the body: a loop inside a loop inside a loop, or an
/// `if let` that binds names.
pub(super) fn covered(stmts: &[Stmt]) -> Option<HashSet<String>> {
    fn walk(stmts: &[Stmt], loops: usize, names: &mut HashSet<String>) -> Option<()> {
        for stmt in stmts {
            match stmt {
                Stmt::Loop(_) if loops == 2 => return None,
                Stmt::Loop(l) => walk(&l.body, loops + 1, names)?,
                Stmt::Verbatim(tokens) => idents(tokens, names),
                Stmt::If(i) => {
                    tested(&i.cond)?;
                    walk(&i.then, loops, names)?;
                    walk(&i.els, loops, names)?;
                }
                _ => {}
            }
        }
        Some(())
    }
    let mut names = HashSet::new();
    walk(stmts, 0, &mut names)?;
    Some(names)
}

/// Every identifier the inactive code of `stmts` names.
pub(super) fn named_in(stmts: &[Stmt]) -> HashSet<String> {
    let mut out = HashSet::new();
    for tokens in ir::stmt_token_streams(stmts) {
        idents(tokens, &mut out);
    }
    out
}

/// Every identifier in `tokens`, into `out`.
fn idents(tokens: &TokenStream, out: &mut HashSet<String>) {
    for t in tokens.clone() {
        match t {
            TokenTree::Ident(i) => {
                out.insert(i.to_string());
            }
            TokenTree::Group(g) => idents(&g.stream(), out),
            _ => {}
        }
    }
}

/// An `if`'s condition as a `bool`: itself, or `matches!(s, P)` for a
/// `match` arm's `let P = s` that binds no names; `None` for a pattern
/// that binds some (which the second `if` would need as well).
fn tested(cond: &TokenStream) -> Option<TokenStream> {
    let Ok(syn::ExprLet { pat, expr, .. }) = syn::parse2::<syn::ExprLet>(cond.clone()) else {
        return Some(cond.clone());
    };
    scan::pattern_names(&pat)
        .is_empty()
        .then(|| quote!(::core::matches!(#expr, #pat)))
}

/// Each `if`'s condition bound to a name, which the `if` then tests, so
/// that the second `if` tests the same value: `let branch_1: bool = c;`
/// just before an `if` at the top of the body or of a loop's body (which
/// records it per iteration), and for an `if` inside a branch a `let mut
/// branch_2 = false;` there that the branch sets (`branch_2 = c;`), so
/// that the second `if` finds it set without evaluating `c` again.
pub(super) fn bind_conditions(stmts: &mut Vec<Stmt>) {
    bind_level(stmts, &mut 0);
}

/// A block the names are declared in: the body's top or a loop's body.
fn bind_level(stmts: &mut Vec<Stmt>, count: &mut usize) {
    let mut declared = Vec::new();
    bind(stmts, true, &mut declared, count);
    stmts.splice(0..0, declared);
}

fn bind(stmts: &mut Vec<Stmt>, level: bool, declared: &mut Vec<Stmt>, count: &mut usize) {
    for mut stmt in std::mem::take(stmts) {
        match &mut stmt {
            Stmt::Loop(l) => bind_level(&mut l.body, count),
            Stmt::If(i) => {
                bind(&mut i.then, false, declared, count);
                bind(&mut i.els, false, declared, count);
                *count += 1;
                let name = format_ident!("branch_{}", count, span = Span::mixed_site());
                let written = std::mem::replace(&mut i.cond, quote!(#name));
                // `covered` has checked that there is a `bool`.
                let cond = tested(&written).unwrap_or(written);
                let bound = |tokens| Stmt::InactiveLet {
                    tokens,
                    names: vec![name.clone()],
                    views: Vec::new(),
                };
                if level {
                    stmts.push(bound(quote!(let #name: bool = #cond;)));
                } else {
                    declared.push(bound(quote!(let mut #name: bool = false;)));
                    stmts.push(Stmt::Verbatim(quote!(#name = #cond;)));
                }
            }
            _ => {}
        }
        stmts.push(stmt);
    }
}

/// The variables `stmts` make at their own level: instructions' results,
/// the phis of their `if`s and what their loops leave.
pub(super) fn made_at(stmts: &[Stmt]) -> HashSet<VarId> {
    let mut out = HashSet::new();
    for stmt in stmts {
        match stmt {
            Stmt::Inst(inst) => {
                out.insert(inst.dest);
            }
            Stmt::If(i) => out.extend(i.phis.iter().map(|p| p.dest)),
            Stmt::Loop(l) => out.extend(l.carried.iter().map(|c| c.output)),
            _ => {}
        }
    }
    out
}

/// Every variable `stmts` make, in branches inside them too.
pub(super) fn made_in(stmts: &[Stmt], out: &mut HashSet<VarId>) {
    for stmt in stmts {
        match stmt {
            Stmt::Inst(inst) => {
                out.insert(inst.dest);
            }
            Stmt::If(i) => {
                out.extend(i.phis.iter().map(|p| p.dest));
                made_in(&i.then, out);
                made_in(&i.els, out);
            }
            Stmt::Loop(l) => {
                out.extend(l.carried.iter().flat_map(|c| [c.input, c.output]));
                made_in(&l.body, out);
            }
            _ => {}
        }
    }
}

/// Whether two adjoints are the same value (both absent, or one operand).
pub(super) fn same(a: Option<&Operand>, b: Option<&Operand>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(Operand::Var(x)), Some(Operand::Var(y))) => x == y,
        (Some(Operand::Const(x)), Some(Operand::Const(y))) => {
            x.tokens.to_string() == y.tokens.to_string()
        }
        _ => false,
    }
}

/// What a `let` reads: its initializer (and `else` block), not the names
/// it binds; anything else as it is.
fn read_by(tokens: &TokenStream) -> TokenStream {
    match syn::parse2::<syn::Stmt>(tokens.clone()) {
        Ok(syn::Stmt::Local(syn::Local {
            init: Some(init), ..
        })) => {
            let (expr, diverge) = (&init.expr, init.diverge.as_ref().map(|(_, e)| e));
            quote!(#expr #diverge)
        }
        _ => tokens.clone(),
    }
}

/// Whether `tokens` name any of `names`.
fn names_any(tokens: &TokenStream, names: &HashSet<String>) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => names.contains(&i.to_string()),
        TokenTree::Group(g) => names_any(&g.stream(), names),
        _ => false,
    })
}
