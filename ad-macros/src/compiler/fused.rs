//! Loops that sum: reverse code run inside the forward sweep.
//!
//! When a loop's only active state is a scalar it adds to (`s += e`, with
//! `s` read nowhere else in the body), every iteration receives the same
//! cotangent, the sum's. The reverse sweep is linear in that cotangent, so
//! each iteration's reverse code can run right after its forward code with
//! a cotangent of one, adding into buffers of the outer adjoints; once the
//! sum's cotangent arrives, the reverse sweep adds the buffers scaled by
//! it. Nothing is saved per iteration (the values the reverse code reads
//! are still at hand), and forward and reverse work share one pass over
//! the data.
//!
//! ```text
//! for i in 0..n { s += f(x, i); }        let s_unit = {
//!                                            let mut x_bar = zero_tangent(&x);
//!                                            for i in 0..n {
//!                                                <forward of the iteration>
//!                                                <its reverse, s_next_bar = 1>
//!                                            }
//!                                            (x_bar,)
//!                                        };
//!  reverse sweep:                        let (x_bar_unit,) = s_unit;
//!                                        add_scaled(&mut x_bar, x_bar_unit, &s_out_bar);
//! ```
//!
//! The additions may sit in the arms of an `if` (`if m > 0.0 { s += m }`):
//! each arm takes the sum from its value before to its value after
//! through additions, and the iteration's reverse code runs the arm the
//! forward code took, whose branch is still at hand.
//!
//! Only loops outside other loops are fused: inside one, the buffers would
//! be made, and kept for the outer reverse sweep, once per outer iteration.
//! A loop inside a fused loop that sums into the same scalar (`for i { for
//! j { s += f(i, j) } }`) needs no buffers of its own: its cotangent is the
//! enclosing one, one, so its reverse code runs in each of its iterations
//! and adds straight into the enclosing loop's buffers (`reverse_inline_sum`).

use std::collections::HashMap;

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use super::activity;
use super::forward::slot_ident;
use super::ir::{Arith, Carried, If, Loop, Op, Operand, Stmt, VarId};
use super::reverse::Builder;

/// A fused loop's reverse code, spliced into its forward sweep.
pub(super) struct Fused {
    /// The top of an iteration: the adjoints of what it defines.
    pub prelude: TokenStream,
    /// The reverse code of one iteration, for a cotangent of one.
    pub code: TokenStream,
    /// The outer variables whose adjoints the iterations add to, each with
    /// a buffer made before the loop.
    pub buffers: Vec<VarId>,
}

impl Builder<'_, '_> {
    /// The carried variable a loop only adds to, if the loop can be fused,
    /// with the loops inside it that are sums into the same variable (their
    /// reverse code runs inside their own iterations, `reverse_inline_sum`).
    pub(super) fn sum_accumulator<'l>(&self, l: &'l Loop) -> Option<(&'l Carried, Vec<usize>)> {
        if self.loop_depth > 0 || self.loop_calls_accumulating(l) {
            return None;
        }
        self.sum_chain(l)
    }

    /// Whether the loop calls the function itself, whose pullbacks add
    /// into this call's adjoints ([`super::recursion`]): its buffers would
    /// be whole gradients at every node of a recursion, where the taped
    /// loop's reverse sweep hands the calls the adjoints themselves.
    fn loop_calls_accumulating(&self, l: &Loop) -> bool {
        self.accumulating
            && super::ir::instructions(&l.body)
                .iter()
                .any(|i| matches!(&i.op, Op::Call(func, _) if self.g.f.calls_itself(func)))
    }

    /// As `sum_accumulator`, at any depth.
    fn sum_chain<'l>(&self, l: &'l Loop) -> Option<(&'l Carried, Vec<usize>)> {
        let mut active = l
            .carried
            .iter()
            .filter(|c| self.useful.contains(&c.input) || self.useful.contains(&c.output));
        let c = active.next()?;
        if active.next().is_some() || !self.useful.contains(&c.output) {
            return None;
        }
        let Operand::Var(next) = c.next else {
            return None;
        };
        if !self.scalars.contains(&c.input) {
            return None;
        }
        // From the iteration's input to its output through additions alone,
        // each intermediate read once: `s_1 = s + a; s_2 = s_1 - b`, or a
        // loop that sums into it: `for j in .. { s += b[j] }`. (They are
        // scalars too: adding never removes an axis, and the output has the
        // input's type.)
        let uses = count_uses(&l.body);
        let mut inner = Vec::new();
        let mut cur = c.input;
        while cur != next {
            // A branch that adds in one arm, or both (`if m > 0.0 { s += m }`),
            // and is all that reads the sum.
            if let Some((i, after)) = l.body.iter().find_map(|s| match s {
                Stmt::If(i) => branch_sum(i, cur).map(|after| (i, after)),
                _ => None,
            }) {
                if uses.get(&cur) != Some(&uses_in_if(i, cur)) {
                    return None;
                }
                cur = after;
                continue;
            }
            if uses.get(&cur) != Some(&1) {
                return None;
            }
            let step = l.body.iter().find_map(|s| match s {
                Stmt::Inst(i) if i.op.var_operands().contains(&cur) => Some(Ok(i)),
                Stmt::Loop(n)
                    if n.carried
                        .iter()
                        .any(|c| matches!(c.init, Operand::Var(v) if v == cur)) =>
                {
                    Some(Err(n))
                }
                _ => None,
            })?;
            match step {
                Ok(inst) => {
                    if !adds_to(&inst.op, cur) {
                        return None;
                    }
                    cur = inst.dest;
                }
                Err(nested) => {
                    // Its reverse code runs in the forward sweep, before the
                    // enclosing iteration's: a struct it reads fields of
                    // would not have its adjoint made yet.
                    let reads_struct = outer_variables(&nested.body, &self.useful)
                        .iter()
                        .any(|v| self.eager.contains(v));
                    let (n, deeper) = self.sum_chain(nested)?;
                    if reads_struct || !matches!(n.init, Operand::Var(v) if v == cur) {
                        return None;
                    }
                    inner.push(super::reverse_flow::key::<Loop>(nested));
                    inner.extend(deeper);
                    cur = n.output;
                }
            }
        }
        (!uses.contains_key(&next)).then_some((c, inner))
    }

    /// The reverse code of a sum loop inside a fused loop (`sum_chain`). The
    /// sum's cotangent there is one, so each iteration's reverse code runs
    /// right after its forward code with a cotangent of one and adds into
    /// the adjoints outside the loop directly: no buffers, nothing saved.
    /// In the enclosing reverse code, the sum's initial value receives the
    /// cotangent of its final one.
    pub(super) fn reverse_inline_sum(&mut self, l: &Loop) {
        let (c, _) = self
            .sum_chain(l)
            .expect("the enclosing fused loop checked this loop");
        let Operand::Var(next) = c.next else {
            unreachable!("sum_chain checked the next value")
        };
        let saved = std::mem::take(&mut self.reverse);
        let dropped = self.dropped.replace(c.input);
        self.loop_depth += 1;
        self.enter_loop(l, true);
        self.reverse_block(&l.body);
        self.leave_loop(l);
        self.loop_depth -= 1;
        self.dropped = dropped;
        let body = std::mem::replace(&mut self.reverse, saved);
        let fused = self.fused_iteration(l, next, body, Vec::new());
        self.fused.insert(super::reverse_flow::key(l), fused);
        if let Operand::Var(init) = c.init {
            if Some(init) != self.dropped {
                let out = self.g.bar(c.output);
                let code = self.transfer_into(init, quote!(#out.take()));
                self.reverse.push(code);
            }
        }
    }

    /// The reverse code of one iteration of a fused loop whose sum's value
    /// at the iteration's end is `next`, around the reverse of its body.
    fn fused_iteration(
        &self,
        l: &Loop,
        next: VarId,
        body: Vec<TokenStream>,
        buffers: Vec<VarId>,
    ) -> Fused {
        let (x, x_bar) = (self.g.ident(next), self.g.bar(next));
        let r = &self.g.rules;
        // No seed where nothing reads it: an iteration that only runs an
        // inner sum, which seeds its own iterations.
        let seed = body
            .iter()
            .any(|code| super::scan::token_names(code).contains(&x_bar.to_string()))
            .then(|| quote!(let mut #x_bar = ::core::option::Option::Some(#r::one_like(#x));));
        let mut vars = activity::defined_at(&l.body);
        vars.retain(|v| *v != next);
        // Adjoints start at the top of the iteration, where inner sums'
        // reverse code can reach them; a struct's adjoint is made from its
        // value, after the forward code.
        let (eager, plain): (Vec<VarId>, Vec<VarId>) =
            vars.into_iter().partition(|v| self.eager.contains(v));
        let (prelude, late) = (self.declare(&plain), self.declare(&eager));
        Fused {
            prelude: quote!(#(#prelude)*),
            code: quote!(#(#late)* #seed #(#body)*),
            buffers,
        }
    }

    /// The reverse sweep of a fused loop: the buffers, scaled by the sum's
    /// cotangent, join the outer adjoints; the sum's initial value gets the
    /// cotangent unchanged.
    pub(super) fn reverse_fused_loop(&mut self, l: &Loop, c: &Carried, inner: Vec<usize>) {
        let g = self.g;
        let r = &g.rules;
        let record = format_ident!("{}_unit", g.ident(c.input), span = Span::mixed_site());
        let buffers: Vec<VarId> = outer_variables(&l.body, &self.useful)
            .into_iter()
            .filter(|v| *v != c.input && *v != c.output)
            .collect();

        let dense_before = self.dense_vars.clone();
        self.dense_vars.extend(buffers.iter().copied());
        let Operand::Var(next) = c.next else {
            unreachable!("sum_accumulator checked the next value")
        };
        let saved = std::mem::take(&mut self.reverse);
        let stacks_before = self.stacks.len();
        self.inline_sums.extend(inner);
        self.loop_depth += 1;
        self.dropped = Some(c.input);
        // The reverse code runs inside the iteration: its index is at hand.
        self.enter_loop(l, true);
        self.reverse_block(&l.body);
        self.leave_loop(l);
        self.dropped = None;
        self.loop_depth -= 1;
        let inner: Vec<usize> = self.stacks[stacks_before..]
            .iter()
            .map(|(k, _)| *k)
            .collect();
        self.forward_stacks.extend(inner);
        let body = std::mem::replace(&mut self.reverse, saved);
        let fused = self.fused_iteration(l, next, body, buffers.clone());
        self.dense_vars = dense_before;
        self.fused.insert(super::reverse_flow::key(l), fused);

        let slot = slot_ident(g, c.input, "_bar");
        let out = g.bar(c.output);
        let units: Vec<Ident> = buffers.iter().map(|v| unit_ident(g.bar(*v))).collect();
        let mut code = vec![
            quote!(let (#(#units,)*) = #record;),
            quote!(let #slot = #out.take();),
        ];
        for (v, unit) in buffers.iter().zip(&units) {
            let bar = g.bar(*v);
            code.push(if self.dense_vars.contains(v) {
                quote!(#r::add_scaled_dense(&mut #bar, #unit, &#slot);)
            } else {
                quote!(#r::add_scaled(&mut #bar, #unit, &#slot);)
            });
        }
        if let Operand::Var(init) = &c.init {
            code.push(self.transfer_into(*init, quote!(#slot)));
        }
        self.reverse.push(quote!({ #(#code)* }));
        self.record_idents
            .insert(super::reverse_flow::key(l), record);
    }

    /// `let s_unit = { buffers; loop; (buffers,) };` around a fused loop.
    pub(super) fn forward_fused_loop(
        &self,
        fused: &Fused,
        record: &Ident,
        looped: TokenStream,
    ) -> TokenStream {
        let g = self.g;
        let r = &g.rules;
        let bars: Vec<Ident> = fused.buffers.iter().map(|v| g.bar(*v)).collect();
        let starts = fused.buffers.iter().map(|v| {
            if self.eager.contains(v) {
                self.eager_start(*v)
            } else {
                let (bar, x) = (g.bar(*v), g.ident(*v));
                quote!(let mut #bar = #r::zero_tangent(&#x);)
            }
        });
        quote!(let #record = {
            #(#starts)*
            #looped
            (#(#bars,)*)
        };)
    }
}

fn unit_ident(bar: Ident) -> Ident {
    format_ident!("{}_unit", bar, span = Span::mixed_site())
}

/// The value after `i` of a sum whose value before it is `cur`, where `i`
/// only adds to it: one of its values is `cur` plus terms added in the
/// then arm, and `cur` plus terms added in the else arm, and nothing else
/// in `i` reads `cur`.
fn branch_sum(i: &If, cur: VarId) -> Option<VarId> {
    let uses = |stmts: &[Stmt], o: &Operand| {
        count_uses(stmts).get(&cur).copied().unwrap_or(0)
            + usize::from(matches!(o, Operand::Var(v) if *v == cur))
    };
    let mut reading = i
        .phis
        .iter()
        .filter(|p| uses(&i.then, &p.then) + uses(&i.els, &p.els) > 0);
    let phi = reading.next()?;
    if reading.next().is_some() {
        return None;
    }
    let arm_adds = |stmts: &[Stmt], end: &Operand| {
        let Operand::Var(end) = end else { return false };
        uses(stmts, &Operand::Var(*end)) == 1 && added_in(stmts, cur, *end)
    };
    (arm_adds(&i.then, &phi.then) && arm_adds(&i.els, &phi.els)).then_some(phi.dest)
}

/// How many times `i` reads `v`: in its arms and its values.
fn uses_in_if(i: &If, v: VarId) -> usize {
    let in_arms = [&i.then, &i.els]
        .into_iter()
        .map(|arm| count_uses(arm).get(&v).copied().unwrap_or(0))
        .sum::<usize>();
    let in_phis = i
        .phis
        .iter()
        .flat_map(|p| [&p.then, &p.els])
        .filter(|o| matches!(o, Operand::Var(x) if *x == v))
        .count();
    in_arms + in_phis
}

/// Whether `stmts` take `from` to `to` through additions alone
/// (`to == from` when they do not touch it), each intermediate read once
/// and `to` not at all.
fn added_in(stmts: &[Stmt], from: VarId, to: VarId) -> bool {
    let uses = count_uses(stmts);
    if uses.contains_key(&to) {
        return false;
    }
    let mut cur = from;
    while cur != to {
        if uses.get(&cur) != Some(&1) {
            return false;
        }
        let step = stmts.iter().find_map(|s| match s {
            Stmt::Inst(i) if i.op.var_operands().contains(&cur) => Some(i),
            _ => None,
        });
        let Some(inst) = step else { return false };
        if !adds_to(&inst.op, cur) {
            return false;
        }
        cur = inst.dest;
    }
    true
}

/// Whether `op` adds to `cur` (`cur + e`, `e + cur`, `cur - e`).
fn adds_to(op: &Op, cur: VarId) -> bool {
    match op {
        Op::Arith(Arith::Add, ..) => true,
        Op::Arith(Arith::Sub, Operand::Var(a), _) => *a == cur,
        _ => false,
    }
}

/// How many times each variable is read in `stmts`, at any depth.
fn count_uses(stmts: &[Stmt]) -> HashMap<VarId, usize> {
    fn walk(stmts: &[Stmt], uses: &mut HashMap<VarId, usize>) {
        let add = |o: &Operand, uses: &mut HashMap<VarId, usize>| {
            if let Operand::Var(v) = o {
                *uses.entry(*v).or_default() += 1;
            }
        };
        for stmt in stmts {
            match stmt {
                Stmt::Inst(i) => {
                    for o in i.op.operands() {
                        add(o, uses);
                    }
                }
                Stmt::If(i) => {
                    for p in &i.phis {
                        add(&p.then, uses);
                        add(&p.els, uses);
                    }
                    walk(&i.then, uses);
                    walk(&i.els, uses);
                }
                Stmt::Loop(l) => {
                    for c in &l.carried {
                        add(&c.init, uses);
                        add(&c.next, uses);
                    }
                    walk(&l.body, uses);
                }
                _ => {}
            }
        }
    }
    let mut uses = HashMap::new();
    walk(stmts, &mut uses);
    uses
}

/// The useful variables from outside `stmts` that it reads.
fn outer_variables(stmts: &[Stmt], useful: &std::collections::HashSet<VarId>) -> Vec<VarId> {
    super::reverse_flow::outer_uses(stmts, useful)
        .into_iter()
        .filter(|v| useful.contains(v))
        .collect()
}
