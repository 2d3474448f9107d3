//! Lowering control flow: `if`/`else` and `for`/`while` loops whose
//! conditions and iterators are inactive.
//!
//! Branches are lowered one after the other from the same bindings; a
//! variable they leave bound differently meets in a phi after the `if`. A loop
//! body is lowered once, with the variables it reassigns (found beforehand by
//! a fixpoint over its assignments) bound to the value at the start of an
//! iteration; their value at the end is carried to the next one.

use std::collections::HashSet;

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Pat};

use super::*;
use crate::compiler::ir::{
    Carried, ConstPhi, If, Loop, LoopHead, Operand, Phi, Stmt, VarId, VarInfo,
};
use crate::compiler::scan;

impl Lowerer<'_> {
    /// `if cond { .. } else { .. }`, as a statement or an expression.
    ///
    /// Input:  `let y = if c { h = h * 2.0; h } else { x };`
    /// Output: `If { then: [h_1 = mul(h, 2.0)], els: [], phis: [h_2 = phi(h_1, h), t = phi(h_1, x)] }`
    pub(super) fn lower_if(&mut self, i: &syn::ExprIf) -> Option<Operand> {
        if let Some(tested) = self.pop_tested(i) {
            return self.lower_if(&tested);
        }
        if let Some(tested) = self.option_field_tested(i) {
            return self.lower_if(&tested);
        }
        // `if let P = s`: the pattern binds inactive names in the branch.
        let (tested, bound) = match &*i.cond {
            Expr::Let(l) => (&*l.expr, scan::pattern_names(&l.pat)),
            other => (other, HashSet::new()),
        };
        if self.carries_derivative(tested) {
            let message = match &*i.cond {
                Expr::Let(_) if matches!(tested, Expr::Path(_)) => "a `match` or `if let` on an active local is supported when it is an `Option` local whose type is written (`let mut prev: Option<f64> = None;`), made only by `Some(..)` and `None` and read only by `if let Some(p)`, `match`, `let Some(p) = .. else`, `is_some()`, `is_none()`, `unwrap()`, `expect(..)`, `unwrap_or(..)` and the like (also after `map(..)`); otherwise test and index instead, or wrap the value in `ad::stop_gradient(..)`",
                Expr::Let(_) => "a `match` or `if let` on an active value is not supported: its pattern would bind parts of it without a derivative. Test and index instead (`if x.len() > 1 { x[1] .. }`), use `pop()`, `first()` or `last()` (which are supported), or wrap the value in `ad::stop_gradient(..)`",
                _ => "a condition must not be an active value: compare values (`x > 0.0`) or wrap it in `ad::stop_gradient(..)`",
            };
            self.errors.at(tested, message);
            return None;
        }
        let (cond, _) = self.renamed(&i.cond);
        let before = self.env.clone();
        let outer = std::mem::take(&mut self.stmts);
        self.block_serial += 1;

        let mut bound: Vec<String> = bound.into_iter().collect();
        bound.sort();
        for name in bound {
            // Bound again as a local of the branch, which the branch's
            // record saves when the reverse sweep reads it (`y * v` in
            // `if let Some(v) = opt`).
            let ident = Ident::new(&name, i.if_token.span);
            self.stmts.push(Stmt::InactiveLet {
                tokens: quote!(let mut #ident = #ident;),
                names: vec![ident.clone()],
                views: Vec::new(),
            });
            self.env.insert(
                name,
                Binding::Const {
                    renamed: None,
                    literal: false,
                    scalar: false,
                    param: false,
                },
            );
        }
        let then_value = self.scoped_block(&i.then_branch.stmts);
        let then = std::mem::take(&mut self.stmts);
        self.block_serial += 1;
        let then_env = std::mem::replace(&mut self.env, before.clone());

        let else_value = match &i.else_branch {
            None => None,
            Some((_, els)) => match &**els {
                Expr::Block(b) => self.scoped_block(&b.block.stmts),
                Expr::If(nested) => self.lower_if(nested),
                other => self.expr(other),
            },
        };
        let els = std::mem::replace(&mut self.stmts, outer);
        self.block_serial += 1;
        let else_env = std::mem::replace(&mut self.env, before.clone());

        let mut phis = Vec::new();
        let mut names: Vec<&String> = before.keys().collect();
        names.sort();
        for name in names {
            let (t, f) = (&then_env[name], &else_env[name]);
            if same_binding(t, &before[name]) && same_binding(f, &before[name]) {
                continue;
            }
            let was_active = matches!(before[name], Binding::Active(_));
            if !matches!(t, Binding::Active(_)) && !matches!(f, Binding::Active(_)) && !was_active {
                // Inactive on both sides and before: the branches assigned
                // it in place. (An active value both branches overwrite with
                // constants has a copy of its own in each, which a phi joins.)
                continue;
            }
            let dest = self.new_var(name, i.if_token.span);
            phis.push(Phi {
                dest,
                then: self.operand_of(name, t),
                els: self.operand_of(name, f),
            });
            self.env.insert(name.clone(), Binding::Active(dest));
        }

        self.note_joined_views(&phis);
        let value = match (&then_value, &else_value) {
            (Some(Operand::Var(_)), _) | (_, Some(Operand::Var(_))) => {
                let (t, f) = (
                    then_value_or_unit(&then_value),
                    then_value_or_unit(&else_value),
                );
                let dest = self.new_var("t", i.if_token.span);
                phis.push(Phi {
                    dest,
                    then: t,
                    els: f,
                });
                self.note_joined_views(&phis[phis.len() - 1..]);
                Some(Operand::Var(dest))
            }
            (Some(Operand::Const(t)), Some(Operand::Const(f))) => {
                let ident = self.fresh_numbered("c", |s| &mut s.consts);
                let value = ConstPhi {
                    ident: ident.clone(),
                    then: t.tokens.clone(),
                    els: f.tokens.clone(),
                };
                self.stmts.push(Stmt::If(Box::new(If {
                    cond: cond.to_token_stream(),
                    then,
                    els,
                    phis,
                    value: Some(value),
                })));
                return Some(Operand::Const(crate::compiler::ir::Const::opaque(
                    ident.to_token_stream(),
                )));
            }
            _ => None,
        };
        self.stmts.push(Stmt::If(Box::new(If {
            cond: cond.to_token_stream(),
            then,
            els,
            phis,
            value: None,
        })));
        Some(value.unwrap_or_else(|| self.unit()))
    }

    /// A reference to an `Option` place a test or a chain reads: a field,
    /// borrowed, or a parameter `bias: &Option<Array1<f64>>`, a reference
    /// already.
    fn option_place(&self, place: &Expr) -> Option<Expr> {
        match place {
            Expr::Field(_) => Some(syn::parse_quote!(&#place)),
            Expr::Path(p)
                if p.path
                    .get_ident()
                    .is_some_and(|n| self.is_borrowed_param(n)) =>
            {
                Some(place.clone())
            }
            _ => None,
        }
    }

    /// `if let Some(b) = &p.bias { .. } else { .. }` (or `p.bias.as_ref()`)
    /// on an active field of a struct (also `if let Some(g) = p.gain`, a
    /// copy, and `Some(ref b)`), or on a parameter `bias:
    /// &Option<Array1<f64>>` (`if let Some(b) = bias`): `if p.bias.is_some() { let b =
    /// rules::some_of(&p.bias); .. } else { .. }`, the test inactive and
    /// `b` the value inside, whose cotangent adds into the field's `Some`.
    fn option_field_tested(&self, i: &syn::ExprIf) -> Option<syn::ExprIf> {
        let Expr::Let(l) = &*i.cond else { return None };
        // Whether the test is of the field itself (`if let Some(g) =
        // p.gain`), whose value it copies, rather than of a reference.
        let (place, by_value) = match &*l.expr {
            Expr::Reference(r) if r.mutability.is_none() => (&*r.expr, false),
            Expr::MethodCall(m) if m.method == "as_ref" && m.args.is_empty() => {
                (&*m.receiver, false)
            }
            path @ Expr::Path(_) => (path, false),
            field @ Expr::Field(_) => (field, true),
            _ => return None,
        };
        if !self.carries_derivative(place) {
            return None;
        }
        let borrowed = self.option_place(place)?;
        let Pat::TupleStruct(some) = &*l.pat else {
            return None;
        };
        let [item] = &some.elems.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        let Pat::Ident(binding) = item else {
            return None;
        };
        if !some.path.is_ident("Some") || binding.subpat.is_some() {
            return None;
        }
        // `Some(ref b)` of the field borrows it; `Some(g)` copies it.
        let name = &binding.ident;
        let mutability = &binding.mutability;
        let value: Expr = match (by_value, &binding.by_ref) {
            (true, None) => syn::parse_quote!(*::ad::__private::rules::some_of(#borrowed)),
            _ => syn::parse_quote!(::ad::__private::rules::some_of(#borrowed)),
        };
        let flag = option_flag(&borrowed);
        let span = l.expr.span();
        let then = &i.then_branch.stmts;
        let els = match &i.else_branch {
            Some((_, els)) => quote!(#els),
            None => quote!({}),
        };
        Some(syn::parse_quote_spanned!(span=>
            if #flag {
                let #mutability #name = #value;
                #(#then)*
            } else #els
        ))
    }

    /// `l.gain.unwrap_or(1.0)`, `l.bias.as_ref().map_or(0.0, |b| b.sum())`
    /// and the other chains an `Option` local takes (`option_locals.rs`),
    /// on an active `Option` field or parameter: an `if` on whether it is
    /// `Some`, reading the value inside with `rules::some_of`.
    pub(super) fn option_field_chain(&self, e: &Expr) -> Option<Expr> {
        let (at, calls) = super::option_locals::method_calls(e);
        let borrowed = self.option_place(at)?;
        if calls.is_empty() || !self.carries_derivative(at) {
            return None;
        }
        let flag = option_flag(&borrowed);
        let item: Expr = syn::parse_quote!((*::ad::__private::rules::some_of(#borrowed)));
        super::option_locals::option_chain(&calls, &flag, item)
    }

    /// `if let Some(p) = hs.pop() { a } else { b }` on an active `Vec`
    /// local (a `while let` over a stack of states, a `match` on a pop, a
    /// `let ... else` come to this) as `if hs.is_empty() { b } else { let p
    /// = hs.pop().unwrap(); a }`, whose pop is the list's; and alike
    /// `x.first()` and `x.last()` of what `end_item` reads, whose item is
    /// `&x[0]` or `&x[x.len() - 1]`.
    fn pop_tested(&self, i: &syn::ExprIf) -> Option<syn::ExprIf> {
        let Expr::Let(l) = &*i.cond else { return None };
        let Expr::MethodCall(call) = &*l.expr else {
            return None;
        };
        let Pat::TupleStruct(some) = &*l.pat else {
            return None;
        };
        let [item] = &some.elems.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        if !some.path.is_ident("Some") {
            return None;
        }
        let (list, span) = (&call.receiver, call.method.span());
        let value: Expr = match self.popped_vec(call) {
            Some(_) => syn::parse_quote_spanned!(span=> #list.pop().unwrap()),
            None => {
                let element = self.end_element(call)?;
                syn::parse_quote_spanned!(span=> &#element)
            }
        };
        let then = &i.then_branch.stmts;
        let els = match &i.else_branch {
            Some((_, els)) => quote!(#els),
            None => quote!({}),
        };
        Some(
            syn::parse_quote_spanned!(span=> if #list.is_empty() #els else {
                let #item = #value;
                #(#then)*
            }),
        )
    }

    /// `match s { P1 => a, P2 => b, _ => c }` as
    /// `if let P1 = s { a } else if let P2 = s { b } else { c }`; the
    /// scrutinee must be inactive (it is evaluated once per arm tried). A
    /// guarded arm `P if g => a` tests `match s { P if g => true, _ => false }`.
    pub(super) fn lower_match(&mut self, m: &syn::ExprMatch) -> Option<Operand> {
        // A call is evaluated once, as `match` does (`q.pop()` must not pop
        // once per arm tried): bound to a name first. Places are read again.
        let bound: Expr;
        let scrutinee = match &*m.expr {
            call @ (Expr::MethodCall(_) | Expr::Call(_))
                if !self.carries_derivative(call) && m.arms.len() > 1 =>
            {
                let name = self.fresh_local("scrutinee", call.span());
                self.stmt(&syn::parse_quote_spanned!(call.span()=> let #name = #call;));
                bound = syn::parse_quote!(#name);
                &bound
            }
            other => other,
        };
        let mut chain: Option<Expr> = None;
        for arm in m.arms.iter().rev() {
            let body = &arm.body;
            let block: syn::Block = match &**body {
                Expr::Block(b) if b.label.is_none() => b.block.clone(),
                other => syn::parse_quote!({ #other }),
            };
            let pat = &arm.pat;
            if let Some((_, guard)) = &arm.guard {
                // A guarded arm tests pattern and guard together, then binds
                // the pattern's names in its block.
                let stmts = &block.stmts;
                let bound: syn::Block = syn::parse_quote!({
                    #[allow(irrefutable_let_patterns)]
                    let #pat = #scrutinee else { ::core::unreachable!() };
                    #(#stmts)*
                });
                let test: Expr = syn::parse_quote!(match #scrutinee {
                    #pat if #guard => true,
                    _ => false,
                });
                chain = Some(match chain {
                    None => syn::parse_quote!(if #test #bound else { ::core::unreachable!() }),
                    Some(rest) => syn::parse_quote!(if #test #bound else #rest),
                });
                continue;
            }
            chain = Some(match chain {
                // The last arm of an exhaustive `match` needs no test
                // (`None`, `_`: a pattern that binds no name).
                None if binding_names(pat).is_empty() => Expr::Block(syn::ExprBlock {
                    attrs: Vec::new(),
                    label: None,
                    block,
                }),
                None => {
                    let stmts = &block.stmts;
                    syn::parse_quote!({
                        #[allow(irrefutable_let_patterns)]
                        let #pat = #scrutinee else { ::core::unreachable!() };
                        #(#stmts)*
                    })
                }
                Some(rest) => {
                    syn::parse_quote_spanned!(scrutinee.span()=> if let #pat = #scrutinee #block else #rest)
                }
            });
        }
        match chain {
            Some(Expr::If(i)) => self.lower_if(&i),
            Some(Expr::Block(b)) => {
                let value = self.scoped_block(&b.block.stmts);
                Some(value.unwrap_or_else(|| self.unit()))
            }
            _ => Some(self.unit()),
        }
    }

    /// `{ stmts; value }`, a block expression or statement or a branch,
    /// lowered in place; its value if it ends in one. The names its `let`s
    /// declare go back afterwards to what they were bound to just before
    /// their first `let` in the block: assignments to outer variables
    /// last, shadowing does not (`if c { let h = h * 2.0; .. }` leaves the
    /// outer `h` as it was).
    pub(super) fn scoped_block(&mut self, stmts: &[syn::Stmt]) -> Option<Operand> {
        let mut outer = Vec::new();
        let mut value = None;
        self.with_unread_leaves(stmts, |l| {
            for (k, stmt) in stmts.iter().enumerate() {
                l.note_shadowed(stmt, &mut outer);
                match stmt {
                    syn::Stmt::Expr(e, None) if k + 1 == stmts.len() && !is_statement_like(e) => {
                        value = l.value_expr(e);
                    }
                    other => l.stmt(other),
                }
            }
        });
        self.end_scope(outer);
        value
    }

    /// Before a `let`: the bindings of the names it declares that the
    /// block has not declared yet, to restore at the block's end.
    fn note_shadowed(&self, stmt: &syn::Stmt, outer: &mut Vec<(String, Option<Binding>)>) {
        if let syn::Stmt::Local(local) = stmt {
            for name in scan::pattern_names(&local.pat) {
                if !outer.iter().any(|(n, _)| *n == name) {
                    let binding = self.env.get(&name).cloned();
                    outer.push((name, binding));
                }
            }
        }
    }

    fn end_scope(&mut self, outer: Vec<(String, Option<Binding>)>) {
        for (name, binding) in outer {
            self.ended_scopes.insert(name.clone());
            match binding {
                Some(b) => self.env.insert(name, b),
                None => self.env.remove(&name),
            };
        }
    }

    /// `for pat in iter { body }` and `while cond { body }`.
    pub(super) fn lower_loop(&mut self, e: &Expr) {
        let (head, body, pattern_names) = match e {
            Expr::ForLoop(f) => {
                if let Some(nested) = self.flat_map_for(f) {
                    if let Ok(nested) = nested {
                        self.expr(&nested);
                    }
                    return;
                }
                // Over active sources: a loop over their indices.
                if let Some(indexed) = self.indexed_for(f) {
                    if let Ok(indexed) = indexed {
                        // A loop, or a block binding the source's
                        // arguments before one.
                        self.expr(&indexed);
                    }
                    return;
                }
                if f.label.is_some() {
                    self.errors.at(
                        &f.label,
                        "loop labels are not supported yet: remove the label",
                    );
                }
                let (iter, _) = self.renamed(&f.expr);
                let names: Vec<Ident> = scan::pattern_names(&f.pat)
                    .into_iter()
                    .map(|n| Ident::new(&n, f.pat.span()))
                    .collect();
                let pat = f.pat.to_token_stream();
                (
                    LoopHead::For {
                        pat,
                        names: names.clone(),
                        iter: iter.to_token_stream(),
                        exact: is_range(&f.expr),
                        borrows_local: self.iterates_a_local(&f.expr),
                    },
                    &f.body,
                    names,
                )
            }
            Expr::Loop(l) => {
                if l.label.is_some() {
                    self.errors.at(
                        &l.label,
                        "loop labels are not supported yet: remove the label",
                    );
                }
                (LoopHead::While { cond: quote!(true) }, &l.body, Vec::new())
            }
            Expr::While(w) => {
                if w.label.is_some() {
                    self.errors.at(
                        &w.label,
                        "loop labels are not supported yet: remove the label",
                    );
                }
                if matches!(&*w.cond, Expr::Let(_)) {
                    // Outside closures, `loop_forms.rs` rewrote it.
                    self.errors.at(
                        &w.cond,
                        "`while let` inside a closure is not supported: move the loop out of the closure",
                    );
                    return;
                }
                (
                    LoopHead::While {
                        cond: TokenStream::new(),
                    },
                    &w.body,
                    Vec::new(),
                )
            }
            _ => unreachable!("lower_loop is called on loops"),
        };
        // `if flag { break; }` ending the body is checked after the
        // iteration is saved (see `exits.rs`).
        let mut body = body.clone();
        let exit = match body.stmts.last().and_then(super::exits::break_check) {
            Some(cond) if !self.carries_derivative(cond) => {
                let (cond, _) = self.renamed(cond);
                body.stmts.pop();
                Some(cond.to_token_stream())
            }
            _ => None,
        };
        let body = &body;
        self.reject_exits(body, "loop");
        let carried_names = self.carried_names(body, &pattern_names);
        // `for i in 1..u.len()` where the loop carries `u`: the iterator is
        // made once, before the loop takes `u` over, as in Rust.
        let head = match head {
            LoopHead::For {
                pat,
                names,
                iter,
                exact,
                borrows_local,
            } if matches!(e, Expr::ForLoop(f) if scan::mentions(&f.expr, &carried_names)) => {
                let ident = self.fresh_numbered("c", |s| &mut s.consts);
                self.stmts.push(Stmt::InactiveLet {
                    tokens: quote!(let #ident = #iter;),
                    names: vec![ident.clone()],
                    views: Vec::new(),
                });
                LoopHead::For {
                    pat,
                    names,
                    iter: ident.to_token_stream(),
                    exact,
                    borrows_local,
                }
            }
            head => head,
        };
        self.loop_assigned.push(
            assignments(body)
                .into_iter()
                .filter(|(_, _, is_let)| !is_let)
                .map(|(name, _, _)| name)
                .collect(),
        );
        let before = self.env.clone();
        let outer = std::mem::take(&mut self.stmts);
        self.block_serial += 1;
        let first_var = self.vars.len();
        let mut inputs = Vec::new();
        for name in &carried_names {
            let input = self.new_var(name, e.span());
            self.unread_parts.insert(input);
            self.env.insert(name.clone(), Binding::Active(input));
            inputs.push(input);
        }
        for name in &pattern_names {
            // A `let` in the body that binds the name again gets its own.
            self.used_names.insert(name.to_string());
            self.env.insert(
                name.to_string(),
                Binding::Const {
                    renamed: None,
                    literal: false,
                    scalar: false,
                    param: false,
                },
            );
        }
        // The condition of a `while` sees the carried values of the iteration.
        let head = match (head, e) {
            (LoopHead::While { .. }, Expr::While(w)) => {
                if self.carries_derivative(&w.cond) {
                    self.errors.at(
                        &w.cond,
                        "a loop condition must not be an active value: compare values (`x > 0.0`)",
                    );
                }
                let (cond, _) = self.renamed(&w.cond);
                LoopHead::While {
                    cond: cond.to_token_stream(),
                }
            }
            (head, _) => head,
        };
        // The body is a scope: a carried name shadowed in it carries the
        // value it had before the shadowing `let`.
        let mut shadowed = Vec::new();
        self.with_unread_leaves(&body.stmts, |l| {
            for stmt in &body.stmts {
                l.note_shadowed(stmt, &mut shadowed);
                match stmt {
                    syn::Stmt::Expr(e, None) => l.expr_stmt(e, false),
                    other => l.stmt(other),
                }
            }
        });
        self.end_scope(shadowed);
        let body_stmts = std::mem::replace(&mut self.stmts, outer);
        self.loop_assigned.pop();
        self.block_serial += 1;
        let body_env = std::mem::replace(&mut self.env, before.clone());
        // Whether inactive code in the body reads a value the loop makes
        // (`if (next - y).abs() < tol`, `if s.abs() > 3.0`).
        let read_inactively: HashSet<String> = crate::compiler::ir::stmt_token_streams(&body_stmts)
            .into_iter()
            .flat_map(scan::token_names)
            .collect();
        let reads_loop_values = self.vars[first_var..]
            .iter()
            .any(|v| read_inactively.contains(&v.ident.to_string()));
        let mut carried = Vec::new();
        for (name, input) in carried_names.iter().zip(inputs) {
            let output = self.new_var(name, e.span());
            self.unread_parts.insert(output);
            let mut init = self.operand_of(name, &before[name]);
            if reads_loop_values {
                init = self.typed_literal(init);
            }
            let next = self.operand_of(name, &body_env[name]);
            self.env.insert(name.clone(), Binding::Active(output));
            carried.push(Carried {
                input,
                init,
                next,
                output,
            });
        }
        self.stmts.push(Stmt::Loop(Box::new(Loop {
            head,
            body: body_stmts,
            carried,
            exit,
        })));
    }

    /// The variables declared before the loop that its body makes active:
    /// assigned from a value that carries a derivative, given the others.
    fn carried_names(&mut self, body: &syn::Block, pattern_names: &[Ident]) -> Vec<String> {
        let assigned = assignments(body);
        let mut carried: HashSet<String> = HashSet::new();
        loop {
            // Two passes over the body: a value made active late in one
            // iteration is active early in the next.
            let mut assumed: HashSet<String> = carried.clone();
            let mut next = carried.clone();
            for _ in 0..2 {
                for (target, rhs, is_let) in &assigned {
                    if pattern_names.iter().any(|p| p == target) {
                        continue;
                    }
                    self.assumed_active = assumed.clone();
                    let active = self.carries_derivative(rhs)
                        || (!is_let && matches!(self.env.get(target), Some(Binding::Active(_))));
                    self.assumed_active.clear();
                    if active {
                        assumed.insert(target.clone());
                        if !*is_let && self.env.contains_key(target) {
                            next.insert(target.clone());
                        }
                    }
                }
            }
            if next == carried {
                break;
            }
            carried = next;
        }
        let mut names: Vec<String> = carried.into_iter().collect();
        names.sort();
        names
    }

    /// `break`, `continue` and `return` in code with active values are not
    /// supported yet; report them rather than skip a tape entry.
    fn reject_exits(&self, block: &syn::Block, what: &str) {
        let mut exits = super::exits::Finder::default();
        exits.visit_block(block);
        for (span, kind) in exits.found {
            self.errors.at_span(
                span,
                format!("this `{kind}` inside a {what} that computes active values is not supported yet (labelled, or in an expression): use an unlabelled `{kind}` as a statement"),
            );
        }
    }

    /// A branch's choice between views (`if c { &m.layers[1] } else {
    /// &m.layers[0] }`): forward mode cannot keep a view of a field's
    /// tangent beyond its branch, so the fields of what it gives are not
    /// read yet. A choice between owned tuples is read as any tuple.
    fn note_joined_views(&mut self, phis: &[Phi]) {
        for p in phis {
            let view = [&p.then, &p.els]
                .into_iter()
                .any(|o| matches!(o, Operand::Var(v) if self.vars[v.0].is_view));
            if view {
                self.unread_parts.insert(p.dest);
            }
        }
    }

    fn new_var(&mut self, name: &str, span: Span) -> VarId {
        let v = VarId(self.vars.len());
        let ident = self.fresh(name);
        self.vars.push(VarInfo {
            ident,
            span,
            is_view: false,
        });
        v
    }

    /// The current value of the user's `name` under `binding`.
    fn operand_of(&self, name: &str, binding: &Binding) -> Operand {
        match binding {
            Binding::Active(v) => Operand::Var(*v),
            Binding::Const {
                renamed,
                literal,
                scalar,
                ..
            } => {
                let ident = renamed
                    .clone()
                    .unwrap_or_else(|| Ident::new(name, Span::call_site()));
                Operand::Const(crate::compiler::ir::Const {
                    tokens: ident.to_token_stream(),
                    literal: *literal,
                    scalar: *scalar,
                })
            }
        }
    }

    /// A float literal a loop starts a variable from (`let mut y = 1.0;`),
    /// given the function's float type, for a body whose inactive code
    /// reads the loop's values: a method call there (`(next - y).abs()`)
    /// comes before anything else fixes their type, which a literal
    /// leaves open.
    fn typed_literal(&self, init: Operand) -> Operand {
        match (init, &self.scalar_type) {
            (Operand::Const(c), Some(t)) if c.literal => {
                let tokens = &c.tokens;
                Operand::Const(crate::compiler::ir::Const {
                    tokens: quote!(::core::convert::identity::<#t>(#tokens)),
                    literal: false,
                    scalar: true,
                })
            }
            (init, _) => init,
        }
    }

    pub(super) fn unit(&self) -> Operand {
        Operand::Const(crate::compiler::ir::Const::opaque(quote!(())))
    }
}

/// The names a pattern binds: `v` in `Some(v)`, not the variant or
/// constant `None` or `MAX` (capitalized, as Rust names them).
fn binding_names(pat: &Pat) -> Vec<String> {
    scan::pattern_names(pat)
        .into_iter()
        .filter(|n| !n.starts_with(|c: char| c.is_uppercase()))
        .collect()
}

fn then_value_or_unit(v: &Option<Operand>) -> Operand {
    v.clone()
        .unwrap_or(Operand::Const(crate::compiler::ir::Const::opaque(quote!(
            ()
        ))))
}

/// `a..b`, `a..=b`, and those `.rev()`ed or `.step_by(k)`ed: iterators
/// whose size hint is exact.
fn is_range(e: &Expr) -> bool {
    match e {
        Expr::Range(r) => r.start.is_some() && r.end.is_some(),
        Expr::Paren(p) => is_range(&p.expr),
        Expr::MethodCall(m) if m.method == "rev" || m.method == "step_by" => is_range(&m.receiver),
        _ => false,
    }
}

fn same_binding(a: &Binding, b: &Binding) -> bool {
    match (a, b) {
        (Binding::Active(x), Binding::Active(y)) => x == y,
        (Binding::Const { renamed: x, .. }, Binding::Const { renamed: y, .. }) => x == y,
        _ => false,
    }
}

/// Expressions whose value is `()`: a tail `h = f(h)` is a statement.
fn is_statement_like(e: &Expr) -> bool {
    match e {
        Expr::Assign(_) | Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => true,
        Expr::Binary(b) => matches!(
            b.op,
            syn::BinOp::AddAssign(_)
                | syn::BinOp::SubAssign(_)
                | syn::BinOp::MulAssign(_)
                | syn::BinOp::DivAssign(_)
        ),
        Expr::If(i) => i.else_branch.is_none(),
        _ => false,
    }
}

/// The array an element write `name[i]` (or a plain `name`) assigns to.
fn assigned_name(place: &Expr) -> Option<String> {
    match place {
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        Expr::Index(ix) => match &*ix.expr {
            Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
            _ => None,
        },
        _ => None,
    }
}

/// Every `name = rhs`, `name op= rhs` (as `name = name op rhs`), element
/// write `name[i] = rhs`, in-place update (`name.assign(&rhs)`) and
/// `let name = rhs` in a block, in order, nested blocks included.
pub(super) fn assignments(block: &syn::Block) -> Vec<(String, Expr, bool)> {
    struct Assigns(Vec<(String, Expr, bool)>);
    impl<'ast> Visit<'ast> for Assigns {
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            if let Some(name) = assigned_name(&a.left) {
                self.0.push((name, (*a.right).clone(), false));
            }
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            use syn::BinOp::*;
            if matches!(
                b.op,
                AddAssign(_)
                    | SubAssign(_)
                    | MulAssign(_)
                    | DivAssign(_)
                    | RemAssign(_)
                    | BitAndAssign(_)
                    | BitOrAssign(_)
                    | BitXorAssign(_)
                    | ShlAssign(_)
                    | ShrAssign(_)
            ) {
                if let Some(name) = assigned_name(&b.left) {
                    let whole: Expr = Expr::Binary(syn::ExprBinary {
                        attrs: Vec::new(),
                        left: b.left.clone(),
                        op: syn::BinOp::Add(Default::default()),
                        right: b.right.clone(),
                    });
                    self.0.push((name, whole, false));
                }
            }
            syn::visit::visit_expr_binary(self, b);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            // ndarray's in-place updates, as the assignments `stmt.rs`
            // lowers them to.
            if let Some((name, value)) = super::in_place::in_place_update(m) {
                self.0.push((name, value, false));
            }
            if let Some(other) = super::in_place::appended_list(m) {
                let emptied: Expr = syn::parse_quote!(#other);
                self.0.push((other.to_string(), emptied, false));
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_local(&mut self, l: &'ast syn::Local) {
            // `let (m, v) = stats(x);` binds each name to a part of the
            // value: active as the value is.
            if let Some(init) = &l.init {
                let pat = match &l.pat {
                    Pat::Type(pt) => &*pt.pat,
                    p => p,
                };
                if let Pat::Ident(_) | Pat::Tuple(_) = pat {
                    for name in scan::pattern_names(pat) {
                        self.0.push((name, (*init.expr).clone(), true));
                    }
                }
            }
            syn::visit::visit_local(self, l);
        }
        // `match s { Some(v) => .. }` and `if let Some(v) = s` bind `v` to
        // a part of `s`: active as `s` is (a pop of an active stack).
        fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
            for arm in &m.arms {
                for name in scan::pattern_names(&arm.pat) {
                    self.0.push((name, (*m.expr).clone(), true));
                }
            }
            syn::visit::visit_expr_match(self, m);
        }
        fn visit_expr_let(&mut self, l: &'ast syn::ExprLet) {
            for name in scan::pattern_names(&l.pat) {
                self.0.push((name, (*l.expr).clone(), true));
            }
            syn::visit::visit_expr_let(self, l);
        }
        fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
            // `for l in m.layers.iter()` binds `l` to items of what it
            // iterates over, as a `let` would (the index of an
            // `.enumerate()` excepted).
            let (indexed, items) = match &*f.expr {
                Expr::MethodCall(m) if m.method == "enumerate" => (true, &*m.receiver),
                e => (false, e),
            };
            let names = match (&*f.pat, indexed) {
                (Pat::Tuple(t), true) => t
                    .elems
                    .iter()
                    .skip(1)
                    .flat_map(scan::pattern_names)
                    .collect(),
                (p, _) => scan::pattern_names(p),
            };
            for name in names {
                self.0.push((name, items.clone(), true));
            }
            // `for o in y.iter_mut() { *o = .. }` writes `y`'s elements
            // (`iterators.rs`): `y` is assigned what the body computes.
            if let Expr::MethodCall(m) = &*f.expr {
                if let (true, Some(name)) = (m.method == "iter_mut", assigned_name(&m.receiver)) {
                    let body = Expr::Block(syn::ExprBlock {
                        attrs: Vec::new(),
                        label: None,
                        block: f.body.clone(),
                    });
                    self.0.push((name, body, false));
                }
            }
            syn::visit::visit_expr_for_loop(self, f);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut a = Assigns(Vec::new());
    a.visit_block(block);
    a.0
}

/// Whether the `Option` `borrowed` refers to is `Some`: an inactive test.
fn option_flag(borrowed: &Expr) -> Expr {
    syn::parse_quote!(::ad::stop_gradient(::core::option::Option::is_some(#borrowed)))
}
