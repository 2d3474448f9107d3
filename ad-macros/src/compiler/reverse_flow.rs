//! Reverse mode for bodies with branches and loops.
//!
//! The reverse sweep of an `if` runs the reverse of the branch the forward
//! sweep took; of a loop, the reverse of its iterations, last first. Each
//! nested block saves what its reverse code reads (its *record*): an `if`
//! returns `rules::Branch::Then((..))` or `Else((..))` beside its values, a
//! loop pushes one tuple per iteration on its tape (an owned `Vec`; a count
//! when an iteration needs nothing saved). Views are not saved but
//! recomputed from what they view.
//!
//! Adjoints are `Option`s here: `None` until a contribution arrives, and an
//! instruction whose result received none is skipped. Where values meet (a
//! branch's value, a loop's carried variable) the adjoint is moved back with
//! `rules::transfer`. While an adjoint is known to be still `None` (declared
//! at the top of the block, no contribution emitted yet, no nested block in
//! between), its first contribution is a plain assignment: a `match` through
//! `&mut` would make LLVM keep the adjoint (an array's pointer, length and
//! strides) in memory, and an element-by-element loop pays for that on
//! every iteration.
//!
//! ```text
//! for t in 0..n { h = f(w, h); }          let mut h_carried_bar = h_2_bar.take();
//!   forward: tape.push((h, ..));          for (h, ..) in h_tape.into_iter().rev() {
//!                                             let mut h_1_bar = h_carried_bar.take();
//!                                             <reverse of h_1 = f(w, h)>
//!                                             h_carried_bar = h_bar.take();
//!                                         }
//!                                         transfer(&mut h0_bar, h_carried_bar);
//! ```

use std::collections::{HashMap, HashSet};

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::activity;
use super::forward::{emit_loop, slot_ident, Reserve};
use super::ir::{If, Inst, Loop, LoopHead, Op, Operand, Stmt, VarId};
use super::moves::Site;
use super::replay::enclosing;
use super::reverse::{Builder, Sweeps};

/// Constants a block's record may save besides those the block binds: a
/// loop's pattern names, `owned` where they borrow a value of the body.
#[derive(Clone, Copy)]
struct ExtraConsts<'a> {
    names: &'a [Ident],
    owned: bool,
}

impl ExtraConsts<'_> {
    const NONE: ExtraConsts<'static> = ExtraConsts {
        names: &[],
        owned: false,
    };
}

/// A key for an `if` or a loop: its address, stable while the IR lives.
pub(super) fn key<T>(x: &T) -> usize {
    x as *const T as usize
}

/// A key for a block of statements.
pub(super) fn block_key(stmts: &[Stmt]) -> (usize, usize) {
    (stmts.as_ptr() as usize, stmts.len())
}

impl Builder<'_, '_> {
    pub(super) fn structured_sweeps(mut self) -> Sweeps {
        let g = self.g;
        let f = g.f;
        let top = &f.body.stmts;
        self.classify_static();
        self.dense_vars.extend(self.eager.iter().copied());
        let result_var = match &f.body.result {
            Operand::Var(v) => Some(*v),
            Operand::Const(_) => None,
        };
        let mut declared: Vec<VarId> = activity::defined_at(top);
        declared.extend(f.params.iter().flatten());
        let mut declared: Vec<VarId> = declared
            .into_iter()
            .filter(|v| Some(*v) != result_var)
            .collect();
        if self.accumulating {
            // The parameters' adjoints are the caller's, maybe added into.
            declared.retain(|v| !f.params.contains(&Some(*v)));
        }
        self.fresh = self.declared_none(&declared);
        self.reverse_block(top);
        let mut body = std::mem::take(&mut self.reverse);

        let mut reverse = self.declare(&declared);
        if self.accumulating {
            reverse.extend(self.take_accumulators());
            body.extend(self.return_accumulators());
        }
        let seed = result_var.map(|v| g.bar(v));
        if let Some(seed) = &seed {
            reverse.push(quote!(let mut #seed = ::core::option::Option::Some(#seed);));
        }
        reverse.extend(body);

        let taken_over = self
            .stacks
            .iter()
            .filter(|(k, _)| !self.forward_stacks.contains(k))
            .map(|(_, s)| quote!(let mut #s = #s;));
        reverse.splice(0..0, taken_over);
        let mut forward: Vec<TokenStream> = self
            .stacks
            .iter()
            .map(|(_, s)| quote!(let mut #s = ::std::vec::Vec::new();))
            .collect();
        forward.extend(self.forward_stmts(top));
        let r = &g.rules;
        let gradients = f
            .params
            .iter()
            .map(|p| match p {
                Some(v) if self.eager.contains(v) => self.eager_end(*v),
                Some(v) if self.useful.contains(v) => {
                    let (bar, x) = (g.bar(*v), g.ident(*v));
                    quote!(#bar.unwrap_or_else(|| #r::zero_tangent(&#x)))
                }
                Some(v) => {
                    let x = g.ident(*v);
                    quote!(#r::zero_tangent(&#x))
                }
                None => quote!(::ad::NoTangent),
            })
            .collect();
        let result = match &f.body.result {
            Operand::Var(v) => {
                let x = g.ident(*v);
                quote!(#x)
            }
            Operand::Const(c) => c.tokens.clone(),
        };
        let result_read_by_reverse = result_var.is_some_and(|v| self.reads(v));
        let recompute = self.recompute_list();
        Sweeps {
            forward,
            reverse,
            seed,
            result,
            result_read_by_reverse,
            gradients,
            recompute,
            accumulating: self.accumulating,
            settled: self.settled_accumulators(),
        }
    }

    /// Finds the temporaries whose every use is an instruction of the block
    /// that defines them: their adjoints need no `Option`, and counts how
    /// many contributions each receives.
    fn classify_static(&mut self) {
        #[derive(Default)]
        struct Uses {
            /// The block each instruction result is defined in.
            defined: HashMap<VarId, (usize, usize)>,
            /// The blocks each variable is used in by instructions.
            used: HashMap<VarId, Vec<(usize, usize)>>,
            /// Used by a phi, a loop's carried value, or as the result.
            escapes: HashSet<VarId>,
        }
        fn walk(stmts: &[Stmt], useful: &HashSet<VarId>, uses: &mut Uses) {
            let here = block_key(stmts);
            for stmt in stmts {
                match stmt {
                    Stmt::Inst(i) => {
                        uses.defined.insert(i.dest, here);
                        if useful.contains(&i.dest) {
                            for v in i.op.var_operands() {
                                uses.used.entry(v).or_default().push(here);
                            }
                        }
                    }
                    Stmt::If(i) => {
                        for p in &i.phis {
                            for o in [&p.then, &p.els] {
                                if let Operand::Var(v) = o {
                                    uses.escapes.insert(*v);
                                }
                            }
                        }
                        walk(&i.then, useful, uses);
                        walk(&i.els, useful, uses);
                    }
                    Stmt::Loop(l) => {
                        for c in &l.carried {
                            for o in [&c.init, &c.next] {
                                if let Operand::Var(v) = o {
                                    uses.escapes.insert(*v);
                                }
                            }
                        }
                        walk(&l.body, useful, uses);
                    }
                    _ => {}
                }
            }
        }
        let mut uses = Uses::default();
        walk(&self.g.f.body.stmts, &self.useful, &mut uses);
        if let Operand::Var(v) = &self.g.f.body.result {
            uses.escapes.insert(*v);
        }
        for (v, block) in &uses.defined {
            let Some(sites) = uses.used.get(v) else {
                continue;
            };
            // A struct's or tuple's adjoint (`eager`) is whole from the
            // start: its fields' reads add into it.
            if self.useful.contains(v)
                && !uses.escapes.contains(v)
                && !self.eager.contains(v)
                && sites.iter().all(|s| s == block)
            {
                self.static_vars.insert(*v);
                self.counts.insert(*v, sites.len());
            }
        }
    }

    /// `let mut v_bar = None;` for the useful ones of `vars` (not the
    /// plain adjoints, declared by their first contribution).
    pub(super) fn declare(&self, vars: &[VarId]) -> Vec<TokenStream> {
        vars.iter()
            .filter(|v| self.useful.contains(v) && !self.static_vars.contains(v))
            .map(|v| {
                if self.eager.contains(v) {
                    self.eager_start(*v)
                } else {
                    let bar = self.g.bar(*v);
                    quote!(let mut #bar = ::core::option::Option::None;)
                }
            })
            .collect()
    }

    /// The adjoints of `vars` that `declare` makes `None`.
    fn declared_none(&self, vars: &[VarId]) -> HashSet<VarId> {
        vars.iter()
            .copied()
            .filter(|v| {
                self.useful.contains(v)
                    && !self.static_vars.contains(v)
                    && !self.eager.contains(v)
                    && !self.valued.contains(v)
            })
            .collect()
    }

    pub(super) fn reverse_block(&mut self, stmts: &[Stmt]) {
        let outer = std::mem::take(&mut self.scattered);
        self.reverse_block_stmts(stmts);
        self.scattered = outer;
    }

    fn reverse_block_stmts(&mut self, stmts: &[Stmt]) {
        for stmt in stmts.iter().rev() {
            match stmt {
                Stmt::Inst(i) if self.useful.contains(&i.dest) => self.reverse_inst(i),
                Stmt::If(i) => {
                    self.no_longer_fresh(std::slice::from_ref(stmt));
                    self.reverse_if(i)
                }
                Stmt::Loop(l) => {
                    // The loop's initial values receive their cotangent
                    // once, after it; what the body names may receive it
                    // any number of times.
                    self.loop_no_longer_fresh(l, false);
                    self.reverse_loop(l)
                }
                _ => {}
            }
        }
    }

    /// A nested block may or may not contribute to the adjoints it names
    /// (its reverse code runs conditionally, or many times): they are no
    /// longer known to be `None` after it, nor inside it.
    fn no_longer_fresh(&mut self, stmts: &[Stmt]) {
        for stmt in stmts {
            match stmt {
                Stmt::Inst(i) => {
                    self.fresh.remove(&i.dest);
                    for v in i.op.var_operands() {
                        self.fresh.remove(&v);
                    }
                }
                Stmt::If(i) => {
                    for p in &i.phis {
                        self.fresh.remove(&p.dest);
                        for o in [&p.then, &p.els] {
                            if let Operand::Var(v) = o {
                                self.fresh.remove(v);
                            }
                        }
                    }
                    self.no_longer_fresh(&i.then);
                    self.no_longer_fresh(&i.els);
                }
                Stmt::Loop(l) => self.loop_no_longer_fresh(l, true),
                _ => {}
            }
        }
    }

    /// `no_longer_fresh` for a loop: its body and carried values, and its
    /// initial values if `with_init` (an inner loop's run once per
    /// iteration of the enclosing one).
    fn loop_no_longer_fresh(&mut self, l: &Loop, with_init: bool) {
        for c in &l.carried {
            self.fresh.remove(&c.input);
            self.fresh.remove(&c.output);
            let init = with_init.then_some(&c.init);
            for o in init.into_iter().chain([&c.next]) {
                if let Operand::Var(v) = o {
                    self.fresh.remove(v);
                }
            }
        }
        self.no_longer_fresh(&l.body);
    }

    /// The reverse code of a nested block, wrapped as
    /// `declarations; pre; recomputed views; reverse; post`, and its record.
    fn nested(
        &mut self,
        stmts: &[Stmt],
        extra_vars: &[VarId],
        extra_consts: ExtraConsts<'_>,
        pre: Vec<(VarId, TokenStream)>,
        post: Vec<TokenStream>,
    ) -> (TokenStream, Vec<TokenStream>) {
        let mut vars = activity::defined_at(stmts);
        vars.extend(extra_vars);
        let fresh = self.declared_none(&vars);
        let outer_fresh = std::mem::replace(&mut self.fresh, fresh);
        // An adjoint whose first contribution is the transfer into the block
        // starts as that transfer's source.
        let mut bound = Vec::new();
        let pre: Vec<TokenStream> = pre
            .into_iter()
            .map(|(target, source)| {
                if self.fresh.remove(&target) || self.valued.contains(&target) {
                    bound.push(target);
                    let bar = self.g.bar(target);
                    quote!(let mut #bar = #source;)
                } else {
                    self.transfer_into(target, source)
                }
            })
            .collect();
        // A tuple's or struct's adjoint starts as a zero of the value's
        // shape (`eager_start`): the block's record keeps the value.
        for v in &vars {
            if self.eager.contains(v) && self.useful.contains(v) && !self.static_vars.contains(v) {
                self.read_vars.insert(*v);
            }
        }
        let saved = std::mem::take(&mut self.reverse);
        self.reverse_block(stmts);
        let body = std::mem::replace(&mut self.reverse, saved);
        self.fresh = outer_fresh;
        let (recompute, recomputed) = self.recompute_views(stmts, &vars);
        let consts = self.recomputable_consts(stmts);
        let (items, saves) = self.record_items(stmts, &vars, extra_consts, &recomputed, &consts);
        self.records.insert(block_key(stmts), items.clone());
        self.saves.insert(block_key(stmts), saves);
        vars.retain(|v| !bound.contains(v) && !self.valued.contains(v));
        let decl = self.declare(&vars);
        let consts = consts.iter().map(|(c, e)| quote!(let #c = #e;));
        (
            quote!(#(#decl)* #(#pre)* #(#consts)* #(#recompute)* #(#body)* #(#post)*),
            items,
        )
    }

    /// Values the block's reverse code reads that are cheaper to recompute
    /// than to save: views (which cannot be saved beside what they borrow)
    /// and element reads `x[i]` of arrays from outside the block that are
    /// not written in place afterwards. Recomputed in forward order, with
    /// the views they read.
    fn recompute_views(
        &mut self,
        stmts: &[Stmt],
        local: &[VarId],
    ) -> (Vec<TokenStream>, HashSet<VarId>) {
        let g = self.g;
        // An element of an array from outside the block, unless that array
        // is written in place afterwards (`rewritten.rs`): then the element
        // is saved.
        let outer_element = |inst: &Inst| {
            matches!(&inst.op, Op::Index(Operand::Var(b), _)
                if !local.contains(b) && !g.rewritten.contains(b))
        };
        // Scalar arithmetic on values available in the reverse sweep (from
        // outside the block, or recomputed themselves) is recomputed rather
        // than saved: a few flops instead of a tape entry.
        let mut scalar_chain: HashSet<VarId> = HashSet::new();
        for stmt in stmts {
            let Stmt::Inst(inst) = stmt else { continue };
            let pure = matches!(
                inst.op,
                Op::Arith(..)
                    | Op::Neg(_)
                    | Op::Unary(..)
                    | Op::Binary(..)
                    | Op::MulAdd(..)
                    | Op::Powi(..)
                    | Op::Cast(..)
            ) || outer_element(inst);
            let available = inst
                .op
                .var_operands()
                .iter()
                .all(|v| !local.contains(v) || scalar_chain.contains(v));
            if pure && available && self.scalars.contains(&inst.dest) {
                scalar_chain.insert(inst.dest);
            }
        }
        // An item of a list the block defines (the list a loop pushes onto)
        // is saved as an owned copy: recomputed, it would keep each
        // iteration's version of the list.
        let owned: HashSet<VarId> = stmts
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::Inst(inst)
                    if matches!(&inst.op, Op::Item(Operand::Var(l), _) if local.contains(l)) =>
                {
                    Some(inst.dest)
                }
                _ => None,
            })
            .collect();
        self.owned_items.extend(&owned);
        let recomputed_view = |v: &VarId| g.f.vars[v.0].is_view && !owned.contains(v);
        let recomputable = |inst: &Inst| {
            recomputed_view(&inst.dest) || scalar_chain.contains(&inst.dest) || outer_element(inst)
        };
        let mut need: HashSet<VarId> = HashSet::new();
        let mut out = Vec::new();
        for stmt in stmts.iter().rev() {
            let Stmt::Inst(inst) = stmt else { continue };
            if !(recomputable(inst) && (self.reads(inst.dest) || need.contains(&inst.dest))) {
                continue;
            }
            need.insert(inst.dest);
            if let Op::Place(_, path) = &inst.op {
                // The indices in `p.layers[i].w` are read when recomputed.
                for tt in path.clone() {
                    if let proc_macro2::TokenTree::Group(g) = tt {
                        for t in g.stream() {
                            if let proc_macro2::TokenTree::Ident(i) = t {
                                self.read_consts.insert(i.to_string());
                            }
                        }
                    }
                }
            }
            for o in inst.op.operands() {
                match o {
                    Operand::Var(v)
                        if local.contains(v)
                            && (recomputed_view(v) || scalar_chain.contains(v)) =>
                    {
                        need.insert(*v);
                    }
                    other => {
                        self.read(other);
                    }
                }
            }
            out.push(g.bind(inst, g.primal(inst)));
        }
        out.reverse();
        (out, need)
    }

    /// What the reverse code of a block reads that the block itself defines:
    /// variables (not views), pullback closures of calls, constants and the
    /// records of nested blocks.
    fn record_items(
        &self,
        stmts: &[Stmt],
        vars: &[VarId],
        extra_consts: ExtraConsts<'_>,
        recomputed: &HashSet<VarId>,
        recomputed_consts: &[(Ident, TokenStream)],
    ) -> (Vec<TokenStream>, Vec<TokenStream>) {
        let g = self.g;
        let r = &g.rules;
        let mut items = Vec::new();
        let mut saves = Vec::new();
        for v in vars {
            let owned_item = self.owned_items.contains(v);
            if g.f.vars[v.0].is_view && !owned_item || recomputed.contains(v) {
                // Recomputed, not saved.
            } else if self.read_vars.contains(v) {
                let x = g.ident(*v);
                items.push(quote!(#x));
                saves.push(quote!(#x));
            } else if self.read_shapes.contains(v) {
                let x = g.ident(*v);
                items.push(quote!(#x));
                saves.push(quote!(#r::shape_of(&#x)));
            }
            if self.read_pullbacks.contains(v) {
                let pb = g.pullback(*v);
                items.push(quote!(#pb));
                saves.push(quote!(#pb));
            }
        }
        let mut consts: Vec<Ident> = extra_consts.names.to_vec();
        let mut views = HashSet::new();
        for stmt in stmts {
            match stmt {
                Stmt::Const { ident, .. } => consts.push(ident.clone()),
                Stmt::InactiveLet {
                    names, views: v, ..
                } => {
                    consts.extend(names.iter().cloned());
                    views.extend(v.iter().map(|v| v.to_string()));
                }
                Stmt::If(i) => consts.extend(i.value.iter().map(|c| c.ident.clone())),
                _ => {}
            }
        }
        let mut seen: HashSet<String> = recomputed_consts
            .iter()
            .map(|(c, _)| c.to_string())
            .collect();
        // A name bound twice in the block (`if let Some(x) = t` then `let x
        // = ..`) is saved as its last binding, which the record's end sees:
        // under that binding's own identifier, as the first may carry
        // another hygiene context (the generated rebinding of a pattern).
        let last: HashMap<String, Ident> =
            consts.iter().map(|c| (c.to_string(), c.clone())).collect();
        for c in consts.iter().map(|c| &last[&c.to_string()]) {
            if self.read_consts.contains(&c.to_string()) && seen.insert(c.to_string()) {
                items.push(quote!(#c));
                let owned = extra_consts.owned && extra_consts.names.contains(c);
                if views.contains(&c.to_string()) || owned {
                    // It borrows an array of the block, which the record outlives.
                    saves.push(quote!(#c.to_owned()));
                } else {
                    saves.push(quote!(#c));
                }
            }
        }
        for stmt in stmts {
            let ids = match stmt {
                Stmt::If(i) => vec![self.record_idents.get(&key(&**i))],
                Stmt::Loop(l) => vec![
                    self.record_idents.get(&key(&**l)),
                    self.replays.get(&key(&**l)),
                ],
                _ => Vec::new(),
            };
            for id in ids.into_iter().flatten() {
                items.push(quote!(#id));
                saves.push(quote!(#id));
            }
        }
        (items, saves)
    }

    fn reverse_if(&mut self, i: &If) {
        let g = self.g;
        let r = &g.rules;
        let Some(first) = i.phis.iter().find(|p| self.useful.contains(&p.dest)) else {
            return;
        };
        let branch = format_ident!(
            "{}_branch",
            g.ident(first.dest),
            span = proc_macro2::Span::mixed_site()
        );
        let mut arms = Vec::new();
        for (stmts, then) in [(&i.then, true), (&i.els, false)] {
            let pre = i
                .phis
                .iter()
                .filter(|p| self.useful.contains(&p.dest))
                .filter_map(|p| match if then { &p.then } else { &p.els } {
                    // A fused sum's input: its cotangent is the sum's.
                    Operand::Var(o) if Some(*o) == self.dropped => None,
                    // A tuple's or struct's adjoint is whole (`eager`):
                    // the arm that ran takes it.
                    Operand::Var(o) if self.eager.contains(&p.dest) => {
                        let d_bar = g.bar(p.dest);
                        Some((*o, quote!(::core::option::Option::Some(#d_bar))))
                    }
                    Operand::Var(o) => {
                        let d_bar = g.bar(p.dest);
                        Some((*o, quote!(#d_bar.take())))
                    }
                    Operand::Const(_) => None,
                })
                .collect();
            let (code, items) = self.nested(stmts, &[], ExtraConsts::NONE, pre, Vec::new());
            let variant = if then { quote!(Then) } else { quote!(Else) };
            arms.push(quote!(#r::Branch::#variant((#(#items,)*)) => { #code }));
        }
        self.reverse.push(quote!(match #branch { #(#arms)* }));
        self.record_idents.insert(key(i), branch);
    }

    fn reverse_loop(&mut self, l: &Loop) {
        let g = self.g;
        let r = &g.rules;
        let carried: Vec<_> = l
            .carried
            .iter()
            .filter(|c| self.useful.contains(&c.input) || self.useful.contains(&c.output))
            .collect();
        let Some(first) = carried.first() else {
            return;
        };
        if self.inline_sums.contains(&key(l)) {
            self.reverse_inline_sum(l);
            return;
        }
        if let Some((c, inner)) = self.sum_accumulator(l) {
            self.reverse_fused_loop(l, c, inner);
            return;
        }
        let tape = format_ident!(
            "{}_tape",
            g.ident(first.input),
            span = proc_macro2::Span::mixed_site()
        );
        // Outer adjoints the iterations add to are held as values meanwhile
        // (from here to `unhoist`), under the same names in a block, and
        // written back through `home` (the loop may sit in a branch arm, so
        // re-binding the name after the loop would not reach the adjoint
        // the arm's caller reads).
        let hoisted: Vec<VarId> = outer_uses(&l.body, &self.useful)
            .into_iter()
            .filter(|v| {
                self.useful.contains(v)
                    && !self.dense_vars.contains(v)
                    && !self.valued.contains(v)
                    && !l.carried.iter().any(|c| c.input == *v || c.output == *v)
            })
            .collect();
        // Arrays carried through element writes: their adjoints are values
        // in the reverse loop (`valued.rs`).
        let chains: HashMap<VarId, Vec<VarId>> = carried
            .iter()
            .filter_map(|c| Some((c.input, self.written_chain(l, c)?)))
            .collect();
        let (mut hoist, mut unhoist) = (Vec::new(), Vec::new());
        for v in &hoisted {
            let (bar, x) = (g.bar(*v), g.ident(*v));
            self.read_vars.insert(*v);
            let home = format_ident!("{}_home", bar, span = proc_macro2::Span::mixed_site());
            hoist.push(quote!(let #home = &mut #bar; let mut #bar = #r::dense(#home.take(), &#x);));
            unhoist.push(quote!(*#home = ::core::option::Option::Some(#bar);));
        }
        let (mut before, mut pre, mut post, mut after) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for c in &carried {
            let slot = slot_ident(g, c.input, "_bar");
            if chains.contains_key(&c.input) {
                let (out, shape) = (g.bar(c.output), self.read_shape(&Operand::Var(c.output)));
                before.push(quote!(let mut #slot = #r::materialize(#out.take(), #shape);));
                continue;
            }
            before.push(if self.useful.contains(&c.output) {
                let out = g.bar(c.output);
                quote!(let mut #slot = #out.take();)
            } else {
                quote!(let mut #slot = ::core::option::Option::None;)
            });
        }
        self.dense_vars.extend(hoisted.iter().copied());
        for c in &carried {
            // Before `unhoist`: an initial value's adjoint may be held as a
            // value too (`s = y; for .. { s = f(s, y) }`).
            let slot = slot_ident(g, c.input, "_bar");
            let slot = if chains.contains_key(&c.input) {
                quote!(::core::option::Option::Some(#slot))
            } else {
                quote!(#slot)
            };
            if let Operand::Var(init) = &c.init {
                after.push(self.transfer_into(*init, slot));
            }
        }
        for c in &carried {
            let slot = slot_ident(g, c.input, "_bar");
            if let Some(chain) = chains.get(&c.input) {
                let input = g.bar(c.input);
                pre.push((chain[0], quote!(#slot)));
                post.push(quote!(#slot = #input;));
                continue;
            }
            if let Operand::Var(n) = &c.next {
                pre.push((*n, quote!(#slot.take())));
            }
            post.push(if self.useful.contains(&c.input) {
                let input = g.bar(c.input);
                quote!(#slot = #input.take();)
            } else {
                quote!(#slot = ::core::option::Option::None;)
            });
        }
        let inputs: Vec<VarId> = l.carried.iter().map(|c| c.input).collect();
        // A replayed loop saves no index: its reverse sweep runs the range
        // backwards (`replay.rs`).
        let replay = self.replay_range(l, g.ident(first.input));
        let (pat, names): (TokenStream, Vec<Ident>) = match &l.head {
            LoopHead::For { pat, names, .. } => (pat.clone(), names.clone()),
            LoopHead::While { .. } => (quote!(_), Vec::new()),
        };
        // Items borrowing a value of the body are saved as owned copies.
        let owned_names = matches!(
            l.head,
            LoopHead::For {
                borrows_local: true,
                ..
            }
        );
        let saved_names: &[Ident] = if replay.is_some() { &[] } else { &names };
        let inner = self.loop_depth > 0;
        self.loop_depth += 1;
        self.enter_loop(l, replay.is_some());
        let saved_names = ExtraConsts {
            names: saved_names,
            owned: owned_names,
        };
        for chain in chains.values() {
            self.valued.extend(chain.iter().copied());
            self.unbound.extend(chain[1..].iter().copied());
        }
        let (code, items) = self.nested(&l.body, &inputs, saved_names, pre, post);
        for chain in chains.values() {
            for v in chain {
                self.valued.remove(v);
                self.unbound.remove(v);
            }
        }
        self.leave_loop(l);
        self.loop_depth -= 1;
        for v in &hoisted {
            self.dense_vars.remove(v);
        }
        let records = (!items.is_empty()).then(|| {
            if inner {
                // The record is this run's count of entries on the loop's stack.
                let stack = format_ident!("{}_stack", tape, span = proc_macro2::Span::mixed_site());
                self.stacks.push((key(l), stack.clone()));
                quote!(#r::pop_n(&mut #stack, #tape))
            } else {
                quote!(#tape.into_iter().rev())
            }
        });
        let looped = match (&replay, records) {
            (Some(range), None) => quote!(for #pat in #r::replay(#range) { #code }),
            (Some(range), Some(records)) => quote! {
                for (#pat, (#(#items,)*)) in ::core::iter::Iterator::zip(#r::replay(#range), #records) { #code }
            },
            (None, None) => quote!(for _ in 0..#tape { #code }),
            (None, Some(records)) => quote!(for (#(#items,)*) in #records { #code }),
        };
        let region = quote!(#(#before)* #(#hoist)* #looped #(#after)* #(#unhoist)*);
        self.reverse.push(if hoisted.is_empty() {
            region
        } else {
            quote!({ #region })
        });
        if replay.is_none() || !items.is_empty() {
            self.record_idents.insert(key(l), tape);
        }
        if let Some(range) = replay {
            self.replays.insert(key(l), range);
        }
    }

    /// `rules::transfer(&mut target_bar, source)`, for an `Option` adjoint or
    /// one a loop holds as a value.
    pub(super) fn transfer_into(&mut self, target: VarId, source: TokenStream) -> TokenStream {
        let (r, bar) = (&self.g.rules, self.g.bar(target));
        if self.dense_vars.contains(&target) {
            quote!(#r::transfer_dense(&mut #bar, #source);)
        } else if self.fresh.remove(&target) {
            quote!(#bar = #source;)
        } else {
            quote!(#r::transfer(&mut #bar, #source);)
        }
    }

    // ---- the forward sweep, saving records ------------------------------

    fn forward_stmts(&mut self, stmts: &[Stmt]) -> Vec<TokenStream> {
        let mut out = Vec::new();
        for stmt in stmts {
            match stmt {
                Stmt::Inst(inst) => {
                    let useful = self.useful.contains(&inst.dest);
                    out.push(self.forward_inst(inst, useful));
                }
                Stmt::If(i) => {
                    // An array or list of this block that a branch updates
                    // moves into the update; its shape, which the reverse
                    // sweep reads, stays under its name around the branch.
                    let kept = self.shapes_moved_into(i, stmts.as_ptr() as usize);
                    self.shapes_kept_around.extend(kept.iter().copied());
                    let mut code = self.forward_if(i);
                    for v in kept {
                        code = self.keeping_shape(v, code);
                    }
                    out.push(code);
                }
                Stmt::Loop(l) => out.extend(self.forward_loop(l, stmts.as_ptr() as usize)),
                other => out.extend(self.g.shared_stmt(other)),
            }
        }
        out
    }

    /// The arrays and lists of the block `here` that an element write, a
    /// push or a pop inside `i` updates, of which the reverse sweep reads
    /// only the shape.
    fn shapes_moved_into(&self, i: &If, here: usize) -> Vec<VarId> {
        let mut inside = super::ir::instructions(&i.then);
        inside.extend(super::ir::instructions(&i.els));
        let mut moved: Vec<VarId> = inside
            .iter()
            .filter_map(|inst| match &inst.op {
                Op::IndexWrite(Operand::Var(v), ..)
                | Op::IndexAdd(Operand::Var(v), ..)
                | Op::SliceWrite(Operand::Var(v), ..)
                | Op::Push(Operand::Var(v), _)
                | Op::Pop(Operand::Var(v)) => Some(*v),
                _ => None,
            })
            .filter(|v| {
                self.g.blocks.get(v) == Some(&here)
                    && self.read_shapes.contains(v)
                    && !self.read_vars.contains(v)
                    && !self.reads_view_of(*v)
            })
            .collect();
        moved.sort();
        moved.dedup();
        moved
    }

    /// A value leaving a block: moved if the block defined it, or if
    /// nothing reads it afterwards, the reverse sweep included (`site`);
    /// cloned otherwise.
    fn leaving(&self, o: &Operand, local: &[VarId], site: Option<Site>) -> TokenStream {
        let moves = |v: &VarId| {
            local.contains(v)
                || site.is_some_and(|s| {
                    self.g.moves.contains(&s)
                        && !self.read_vars.contains(v)
                        && !self.read_shapes.contains(v)
                })
        };
        match o {
            Operand::Var(v) if moves(v) => {
                let x = self.g.ident(*v);
                quote!(#x)
            }
            Operand::Var(v) => {
                let x = self.g.ident(*v);
                quote!(::core::clone::Clone::clone(&#x))
            }
            Operand::Const(c) => c.tokens.clone(),
        }
    }

    /// The name of a loop's initial value, defined in the loop's block
    /// `here`, of which the reverse sweep reads only the shape (to size its
    /// cotangent): the value moves into the loop and its shape stays under
    /// its name, which must then be in scope wherever the shape is read. An
    /// inactive local the loop starts from qualifies when the reverse sweep
    /// reads its shape in place of the loop's values' (`shapes.rs`).
    fn moved_keeping_shape(
        &self,
        init: &Operand,
        here: usize,
        site: Option<Site>,
    ) -> Option<Ident> {
        match init {
            Operand::Var(v)
                if self.g.blocks.get(v) == Some(&here) && self.only_shape_read_after(*v, site) =>
            {
                Some(self.g.ident(*v).clone())
            }
            Operand::Var(_) => None,
            Operand::Const(k) => {
                super::shapes::local_name(k).filter(|n| self.read_consts.contains(&n.to_string()))
            }
        }
    }

    /// Whether `v` may move at `site` but for the reverse sweep's reads of
    /// its shape, which `keeping_shape` keeps.
    fn only_shape_read_after(&self, v: VarId, site: Option<Site>) -> bool {
        site.is_some_and(|s| self.g.moves.contains(&s))
            && self.read_shapes.contains(&v)
            && !self.read_vars.contains(&v)
            && !self.reads_view_of(v)
    }

    /// What a block saves, evaluated before its values leave it: a value
    /// that also leaves (a branch's value, a loop's next value) is saved as a
    /// copy, as leaving moves it.
    fn saves_of(&self, stmts: &[Stmt], leaving: &[&Operand]) -> Vec<TokenStream> {
        let saves = self
            .saves
            .get(&block_key(stmts))
            .cloned()
            .unwrap_or_default();
        saves
            .into_iter()
            .map(|s| {
                let leaves = leaving
                    .iter()
                    .any(|o| matches!(o, Operand::Var(v) if *self.g.ident(*v) == s.to_string()));
                if leaves {
                    quote!(::core::clone::Clone::clone(&#s))
                } else {
                    s
                }
            })
            .collect()
    }

    fn forward_if(&mut self, i: &If) -> TokenStream {
        let g = self.g;
        let r = &g.rules;
        let branch = self.record_idents.get(&key(i)).cloned();
        let mut dests: Vec<TokenStream> = i
            .phis
            .iter()
            .map(|p| {
                let d = g.ident(p.dest);
                quote!(#d)
            })
            .collect();
        dests.extend(i.value.iter().map(|c| {
            let c = &c.ident;
            quote!(#c)
        }));
        // The record first: it is evaluated before the values move out.
        if let Some(b) = &branch {
            dests.insert(0, quote!(#b));
        }
        let mut arms = Vec::new();
        for (stmts, then) in [(&i.then, true), (&i.els, false)] {
            let code = self.forward_stmts(stmts);
            let local = activity::defined_at(stmts);
            let outputs: Vec<&Operand> = i
                .phis
                .iter()
                .map(|p| if then { &p.then } else { &p.els })
                .collect();
            let items = self.saves_of(stmts, &outputs);
            let mut values: Vec<TokenStream> = i
                .phis
                .iter()
                .zip(&outputs)
                .map(|(p, o)| self.leaving(o, &local, Some(Site::Phi { dest: p.dest, then })))
                .collect();
            if let Some(c) = &i.value {
                values.push(if then { c.then.clone() } else { c.els.clone() });
            }
            if branch.is_some() {
                let variant = if then { quote!(Then) } else { quote!(Else) };
                values.insert(0, quote!(#r::Branch::#variant((#(#items,)*))));
            }
            arms.push(if values.is_empty() {
                quote!({ #(#code)* })
            } else {
                quote!({ #(#code)* (#(#values,)*) })
            });
        }
        let (cond, then, els) = (&i.cond, &arms[0], &arms[1]);
        if dests.is_empty() {
            quote!(if #cond #then else #els)
        } else {
            quote!(let (#(#dests,)*) = if #cond #then else #els;)
        }
    }

    /// `here` is the block the loop is in.
    fn forward_loop(&mut self, l: &Loop, here: usize) -> Vec<TokenStream> {
        let g = self.g;
        let fused = self.fused.remove(&key(l));
        let record = self.record_idents.get(&key(l)).cloned();
        let range = self.replays.get(&key(l)).cloned();
        let tape = if fused.is_some() {
            None
        } else {
            record.clone()
        };
        let nexts: Vec<&Operand> = l.carried.iter().map(|c| &c.next).collect();
        let items = self.saves_of(&l.body, &nexts);
        let mut local = activity::defined_at(&l.body);
        local.extend(l.carried.iter().map(|c| c.input));
        let (mut before, mut enter, mut leave, mut restore, mut after) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let stack = self
            .stacks
            .iter()
            .find(|(k, _)| *k == key(l))
            .map(|(_, s)| s.clone());
        // Save the iteration first, then move its values into the slots.
        if let Some(tape) = &tape {
            // Only inner loops that save something have a stack.
            if let Some(stack) = &stack {
                before.push(quote!(let mut #tape = 0usize;));
                leave.push(match &l.head {
                    // `reserve_runs` made room for every iteration.
                    LoopHead::For { exact: true, .. } => {
                        quote!(::ad::__private::rules::push_reserved(&mut #stack, (#(#items,)*)); #tape += 1;)
                    }
                    _ => quote!(#stack.push((#(#items,)*)); #tape += 1;),
                });
            } else if items.is_empty() {
                before.push(quote!(let mut #tape = 0usize;));
                leave.push(quote!(#tape += 1;));
            } else {
                before.push(match &l.head {
                    LoopHead::For { exact: true, .. } => quote!(let mut #tape;),
                    _ => quote!(let mut #tape = ::std::vec::Vec::new();),
                });
                leave.push(quote!(#tape.push((#(#items,)*));));
            }
        }
        for c in &l.carried {
            let slot = slot_ident(g, c.input, "");
            let (input, output) = (g.ident(c.input), g.ident(c.output));
            let site = Some(Site::Init { input: c.input });
            match self.moved_keeping_shape(&c.init, here, site) {
                Some(x) => before.push(self.keeping_shape_of(&x, quote!(let mut #slot = #x;))),
                None => {
                    let init = self.leaving(&c.init, &[], site);
                    before.push(quote!(let mut #slot = #init;));
                }
            }
            enter.push(quote!(let #input = #slot;));
            let next = self.leaving(&c.next, &local, None);
            leave.push(quote!(#slot = #next;));
            restore.push(quote!(#slot = #input;));
            after.push(quote!(let #output = #slot;));
        }
        let runs = self.enclosing_runs.clone().unwrap_or_else(|| quote!(1));
        // An inner loop's range, and the room on its stack, made at the top
        // of the enclosing iteration when the range reads nothing the
        // iteration binds: no call then sits between the iteration's values
        // and the loop, which would make LLVM keep the loop's carried
        // values in memory.
        let hoisted = match (&l.head, &range, &stack) {
            (LoopHead::For { iter, .. }, Some(range), Some(stack))
                if self.hoistable_range(l, iter) =>
            {
                let r = &g.rules;
                self.prologue.as_mut().expect("an enclosing loop").push(quote! {
                    let #range = #iter;
                    #r::reserve_runs(&mut #stack, ::core::iter::Iterator::size_hint(&#range).0, #runs);
                });
                true
            }
            _ => false,
        };
        // A replayed loop iterates a copy of its range and keeps the range.
        let head = match (&l.head, &range) {
            (
                LoopHead::For {
                    pat,
                    names,
                    iter,
                    exact,
                    borrows_local,
                },
                Some(range),
            ) => {
                if !hoisted {
                    before.insert(0, quote!(let #range = #iter;));
                }
                LoopHead::For {
                    pat: pat.clone(),
                    names: names.clone(),
                    iter: quote!(::core::clone::Clone::clone(&#range)),
                    exact: *exact,
                    borrows_local: *borrows_local,
                }
            }
            (head, _) => head.clone(),
        };
        let own_runs = range
            .as_ref()
            .map(|range| quote!(::core::iter::Iterator::size_hint(&#range).0));
        let outer_runs = std::mem::replace(&mut self.enclosing_runs, own_runs);
        let outer_prologue = self.prologue.replace(Vec::new());
        let outer_body = self.enclosing_body.replace(enclosing(g.f, l));
        let mut body = self.forward_stmts(&l.body);
        self.enclosing_body = outer_body;
        let prologue = std::mem::replace(&mut self.prologue, outer_prologue);
        body.splice(0..0, prologue.unwrap_or_default());
        body.splice(0..0, fused.as_ref().map(|f| f.prelude.clone()));
        self.enclosing_runs = outer_runs;
        body.extend(fused.as_ref().map(|f| f.code.clone()));
        // After the iteration is saved: `break` and `return` set this flag.
        leave.extend(l.exit.iter().map(|exit| quote!(if #exit { break; })));
        // A tape as long as the iterator says it will be: no regrowth.
        let reserve = match (&stack, &tape) {
            (Some(_), _) if hoisted => None,
            (Some(stack), _) => Some(Reserve::Grow(stack, runs)),
            (None, Some(tape)) if !items.is_empty() => Some(Reserve::Tape(tape)),
            _ => None,
        };
        let mut looped = emit_loop(&head, reserve, &enter, &body, &leave, &restore);
        if let (Some(fused), Some(record)) = (&fused, &record) {
            looped = self.forward_fused_loop(fused, record, looped);
        }
        let mut out = before;
        out.push(looped);
        out.extend(after);
        out
    }
}

/// The variables `stmts` reads (and so sends adjoints to) that it does not
/// define, at any depth.
pub(super) fn outer_uses(stmts: &[Stmt], useful: &HashSet<VarId>) -> Vec<VarId> {
    fn walk(
        stmts: &[Stmt],
        useful: &HashSet<VarId>,
        used: &mut Vec<VarId>,
        defined: &mut HashSet<VarId>,
    ) {
        for stmt in stmts {
            match stmt {
                Stmt::Inst(i) => {
                    defined.insert(i.dest);
                    if useful.contains(&i.dest) {
                        used.extend(i.op.var_operands());
                    }
                }
                Stmt::If(i) => {
                    for p in &i.phis {
                        defined.insert(p.dest);
                        if useful.contains(&p.dest) {
                            for o in [&p.then, &p.els] {
                                if let Operand::Var(v) = o {
                                    used.push(*v);
                                }
                            }
                        }
                    }
                    walk(&i.then, useful, used, defined);
                    walk(&i.els, useful, used, defined);
                }
                Stmt::Loop(l) => {
                    for c in &l.carried {
                        defined.insert(c.input);
                        defined.insert(c.output);
                        for o in [&c.init, &c.next] {
                            if let Operand::Var(v) = o {
                                used.push(*v);
                            }
                        }
                    }
                    walk(&l.body, useful, used, defined);
                }
                _ => {}
            }
        }
    }
    let (mut used, mut defined) = (Vec::new(), HashSet::new());
    walk(stmts, useful, &mut used, &mut defined);
    let mut seen = HashSet::new();
    used.into_iter()
        .filter(|v| !defined.contains(v) && seen.insert(*v))
        .collect()
}
