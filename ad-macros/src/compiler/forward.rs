//! Forward mode: each instruction gives a (primal, tangent) pair of
//! statements. Tangents are named after their variable (`h_dot`); only
//! variables the result depends on get one.
//!
//! Linear operations (reductions, views, transposes, element reads) apply
//! the same operation to the tangent; the others call their rule's
//! pushforward.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use super::activity;
use std::collections::HashSet;

use super::ir::{self, Body, Closure, If, Inst, Loop, LoopHead, Op, Operand, Stmt, VarId};
use super::moves::Site;
use super::ops;
use super::primal::{arith_name, Gen};

/// The statements of `body` in forward mode, and the result's tangent
/// (`None` when the result is constant: the caller writes its zero).
pub fn body(g: &Gen<'_>, body: &Body) -> (Vec<TokenStream>, Option<TokenStream>) {
    let useful = activity::useful(body);
    let mut out = Vec::new();
    stmts(g, &body.stmts, &useful, &mut out);
    let result_dot = match &body.result {
        Operand::Var(v) => {
            let d = g.dot(*v);
            Some(quote!(#d))
        }
        Operand::Const(_) => None,
    };
    (out, result_dot)
}

/// The statements of `body` computing its values only: no variable is
/// useful, so none gets a tangent.
pub fn primal(g: &Gen<'_>, body: &Body) -> Vec<TokenStream> {
    let mut out = Vec::new();
    stmts(g, &body.stmts, &HashSet::new(), &mut out);
    out
}

fn stmts(g: &Gen<'_>, stmts_: &[Stmt], useful: &HashSet<VarId>, out: &mut Vec<TokenStream>) {
    for stmt in stmts_ {
        match stmt {
            Stmt::Inst(inst) => out.extend(inst_pair(g, inst, useful.contains(&inst.dest))),
            Stmt::If(i) => out.push(if_pair(g, i, useful)),
            Stmt::Loop(l) => out.extend(loop_pair(g, l, useful)),
            other => out.extend(g.shared_stmt(other)),
        }
    }
}

/// A value leaving a block: moved if the block defined it or nothing reads
/// it afterwards (`site`), cloned otherwise.
fn leaving(
    g: &Gen<'_>,
    o: &Operand,
    local: &[VarId],
    site: Option<Site>,
    ident: impl Fn(VarId) -> proc_macro2::Ident,
) -> TokenStream {
    let moves = |v: &VarId| local.contains(v) || site.is_some_and(|s| g.moves.contains(&s));
    match o {
        Operand::Var(v) if moves(v) => {
            let x = ident(*v);
            quote!(#x)
        }
        Operand::Var(v) => {
            let x = ident(*v);
            quote!(::core::clone::Clone::clone(&#x))
        }
        Operand::Const(c) => c.tokens.clone(),
    }
}

/// `let (h, h_dot) = if cond { ..; (h_1, h_1_dot) } else { ..; (h, h_dot) };`
///
/// A branch that leaves the variable inactive gives it a zero tangent.
fn if_pair(g: &Gen<'_>, i: &If, useful: &HashSet<VarId>) -> TokenStream {
    let r = &g.rules;
    let mut dests = Vec::new();
    for phi in &i.phis {
        let d = g.ident(phi.dest);
        dests.push(quote!(#d));
        if useful.contains(&phi.dest) {
            let d = g.dot(phi.dest);
            dests.push(quote!(#d));
        }
    }
    if let Some(c) = &i.value {
        let c = &c.ident;
        dests.push(quote!(#c));
    }
    let arm = |body: &[Stmt], then: bool| {
        let mut code = Vec::new();
        stmts(g, body, useful, &mut code);
        let local = activity::defined_at(body);
        let mut values = Vec::new();
        for (n, phi) in i.phis.iter().enumerate() {
            let o = if then { &phi.then } else { &phi.els };
            let site = Some(Site::Phi {
                dest: phi.dest,
                then,
            });
            let value = leaving(g, o, &local, site, |v| g.ident(v).clone());
            values.push(value.clone());
            if useful.contains(&phi.dest) {
                values.push(match o {
                    Operand::Var(_) => leaving(g, o, &local, site, |v| g.dot(v)),
                    // Made before the tuple, which may move the value.
                    Operand::Const(c) => {
                        let t = &c.tokens;
                        let zero = format_ident!("zero_{}", n, span = Span::mixed_site());
                        let t = borrowed(t);
                        code.push(quote!(let #zero = #r::zero_tangent(#t);));
                        quote!(#zero)
                    }
                });
            }
        }
        if let Some(c) = &i.value {
            values.push(if then { c.then.clone() } else { c.els.clone() });
        }
        if values.is_empty() {
            quote!({ #(#code)* })
        } else {
            quote!({ #(#code)* (#(#values,)*) })
        }
    };
    let (then, els) = (arm(&i.then, true), arm(&i.els, false));
    let cond = &i.cond;
    if dests.is_empty() {
        quote!(if #cond #then else #els)
    } else {
        quote!(let (#(#dests,)*) = if #cond #then else #els;)
    }
}

/// The carried variables live in slots across iterations:
///
/// ```text
/// let mut h_carried = h0; let mut h_carried_dot = h0_dot;
/// for t in 0..n { let h = h_carried; let h_dot = h_carried_dot; ..; h_carried = h_1; h_carried_dot = h_1_dot; }
/// let h_2 = h_carried; let h_2_dot = h_carried_dot;
/// ```
fn loop_pair(g: &Gen<'_>, l: &Loop, useful: &HashSet<VarId>) -> Vec<TokenStream> {
    let r = &g.rules;
    let local = {
        let mut d = activity::defined_at(&l.body);
        d.extend(l.carried.iter().map(|c| c.input));
        d
    };
    let mut before = Vec::new();
    let mut enter = Vec::new();
    let mut leave = Vec::new();
    let mut restore = Vec::new();
    let mut after = Vec::new();
    for c in &l.carried {
        let tangent = useful.contains(&c.input) || useful.contains(&c.output);
        let slot = slot_ident(g, c.input, "");
        let (input, output) = (g.ident(c.input), g.ident(c.output));
        let site = Some(Site::Init { input: c.input });
        let init = leaving(g, &c.init, &[], site, |v| g.ident(v).clone());
        before.push(quote!(let mut #slot = #init;));
        enter.push(quote!(let #input = #slot;));
        let next = leaving(g, &c.next, &local, None, |v| g.ident(v).clone());
        leave.push(quote!(#slot = #next;));
        restore.push(quote!(#slot = #input;));
        after.push(quote!(let #output = #slot;));
        if tangent {
            let slot_dot = slot_ident(g, c.input, "_dot");
            let (input_dot, output_dot) = (g.dot(c.input), g.dot(c.output));
            before.push(match &c.init {
                Operand::Var(_) => {
                    let d = leaving(g, &c.init, &[], site, |v| g.dot(v));
                    quote!(let mut #slot_dot = #d;)
                }
                Operand::Const(_) => quote!(let mut #slot_dot = #r::zero_tangent(&#slot);),
            });
            enter.push(quote!(let #input_dot = #slot_dot;));
            leave.push(match &c.next {
                Operand::Var(_) => {
                    let next_dot = leaving(g, &c.next, &local, None, |v| g.dot(v));
                    quote!(#slot_dot = #next_dot;)
                }
                Operand::Const(_) => quote!(#slot_dot = #r::zero_tangent(&#slot);),
            });
            restore.push(quote!(#slot_dot = #input_dot;));
            after.push(quote!(let #output_dot = #slot_dot;));
        }
    }
    let mut body = Vec::new();
    stmts(g, &l.body, useful, &mut body);
    leave.extend(l.exit.iter().map(|exit| quote!(if #exit { break; })));
    let looped = emit_loop(&l.head, None, &enter, &body, &leave, &restore);
    let mut out = before;
    out.push(looped);
    out.extend(after);
    out
}

/// A loop with the statements the sweeps wrap around its body: `enter`
/// binds the carried variables from their slots, `leave` stores them back
/// (and saves the iteration), `restore` puts them back when a `while`
/// condition ends the loop. With `reserve`, the tape of that name reserves
/// the iterator's length first.
/// Where a loop's records go: its own tape, sized from the iterator, or a
/// stack shared by every run of an inner loop, grown to fit.
pub enum Reserve<'a> {
    Tape(&'a proc_macro2::Ident),
    /// The stack, and how many runs of the loop the enclosing loop makes.
    Grow(&'a proc_macro2::Ident, TokenStream),
}

pub fn emit_loop(
    head: &LoopHead,
    reserve: Option<Reserve<'_>>,
    enter: &[TokenStream],
    body: &[TokenStream],
    leave: &[TokenStream],
    restore: &[TokenStream],
) -> TokenStream {
    match head {
        LoopHead::For {
            pat, iter, exact, ..
        } => {
            let iter = match reserve {
                Some(reserve) => {
                    let it = proc_macro2::Ident::new("iter", proc_macro2::Span::mixed_site());
                    let make = match reserve {
                        // Filled without a growth path (see `rules::Tape`).
                        Reserve::Tape(tape) if *exact => {
                            quote!(#tape = ::ad::__private::rules::Tape::with_hint(::core::iter::Iterator::size_hint(&#it));)
                        }
                        Reserve::Tape(tape) => {
                            quote!(#tape.reserve(::core::iter::Iterator::size_hint(&#it).0);)
                        }
                        Reserve::Grow(stack, runs) => {
                            quote!(::ad::__private::rules::reserve_runs(&mut #stack, ::core::iter::Iterator::size_hint(&#it).0, #runs);)
                        }
                    };
                    quote!({
                        let #it = ::core::iter::IntoIterator::into_iter(#iter);
                        #make
                        #it
                    })
                }
                None => quote!(#iter),
            };
            quote! {
                for #pat in #iter {
                    #(#enter)*
                    #(#body)*
                    #(#leave)*
                }
            }
        }
        LoopHead::While { cond } => quote! {
            loop {
                #(#enter)*
                if !(#cond) {
                    #(#restore)*
                    break;
                }
                #(#body)*
                #(#leave)*
            }
        },
    }
}

/// The slot a carried variable lives in between iterations.
pub fn slot_ident(g: &Gen<'_>, input: VarId, suffix: &str) -> proc_macro2::Ident {
    format_ident!(
        "{}_carried{}",
        g.ident(input),
        suffix,
        span = proc_macro2::Span::mixed_site()
    )
}

/// The derivative of a `mapv` closure by forward mode: `|v| ∂f/∂v` with
/// `v_dot = 1` (`capture` `None`), or `|v| ∂f/∂s` for its `k`-th captured
/// value `s` (`Some(k)`), whose tangent is then 1 and the element's 0.
/// Captured values must be scalars here (`rules::capture_seed`): the
/// reverse sweep sums `∂f/∂s` over the elements.
pub fn derivative_closure(
    g: &Gen<'_>,
    c: &Closure,
    capture: Option<usize>,
    span: Span,
) -> TokenStream {
    let (v, v_dot, r) = (g.ident(c.param), g.dot(c.param), &g.rules);
    let v_seed = match capture {
        None => quote!(#r::one_like(#v)),
        Some(_) => quote!(#r::zero_tangent(&#v)),
    };
    // An error about a capture (an array) points at the `mapv`.
    let at_mapv = |i: &proc_macro2::Ident| {
        let mut i = i.clone();
        i.set_span(i.span().located_at(span));
        i
    };
    let view = at_mapv(&g.view);
    let capture_seeds = c.captures.iter().enumerate().filter_map(|(k, o)| {
        let Operand::Var(s) = o else { return None };
        let (s_dot, s) = (g.dot(*s), at_mapv(g.ident(*s)));
        let one = capture == Some(k);
        Some(quote_spanned!(span=> let #s_dot = #r::capture_seed(#view(&#s), #one);))
    });
    let tangent = closure_tangent(g, c);
    quote!(|#v| {
        let #v_dot = #v_seed;
        #(#capture_seeds)*
        #tangent
    })
}

/// The statements of a `mapv` closure's body in forward mode, ending in
/// its result's tangent (given the parameter's `v_dot` and the captured
/// values' tangents).
fn closure_tangent(g: &Gen<'_>, c: &Closure) -> TokenStream {
    let (stmts, result_dot) = body(g, &c.body);
    let (v, r) = (g.ident(c.param), &g.rules);
    let result_dot = result_dot.unwrap_or_else(|| quote!(#r::zero_tangent(&#v)));
    quote!(#(#stmts)* #result_dot)
}

fn inst_pair(g: &Gen<'_>, inst: &Inst, useful: bool) -> Vec<TokenStream> {
    if !useful {
        return vec![g.bind(inst, g.primal(inst))];
    }
    if let Op::Call(func, args) = &inst.op {
        return vec![call(g, inst, func, args)];
    }
    let primal = g.bind(inst, g.primal(inst));
    let d = g.dot(inst.dest);
    if let Op::Place(Operand::Var(root), path) = &inst.op {
        let (field, index) = ir::split_place(path);
        let root_dot = g.dot(*root);
        if let (true, Some(index)) = (field.is_empty(), &index) {
            // An element of a parameter holding arrays or structs
            // (`xs[i]`): the same element of its tangent.
            return vec![primal, quote!(let #d = &#root_dot[#index];)];
        }
        // The tangent struct's field, or a zero if the field is
        // `#[constant]` (its tangent is `NoTangent`): the types decide.
        let (r, root) = (&g.rules, g.ident(*root));
        let read = match index {
            Some(index) => quote!(at(#index)),
            None => quote!(tangent()),
        };
        return vec![
            primal,
            quote!(let #d = {
                use ::ad::__private::rules::{ConstantField as _, TrackedField as _};
                (&#r::Field(&#root_dot #field, &#root #field)).#read
            };),
            quote!(let #d = &*#d;),
        ];
    }
    let tangent = tangent(g, inst);
    if let Op::Push(..) = inst.op {
        // The tangent first: the primal push moves a constant list, whose
        // zero tangent the tangent push starts from.
        return vec![quote!(let #d = #tangent;), primal];
    }
    vec![primal, quote!(let #d = #tangent;)]
}

/// `Some(view(&a_dot))` for an active operand, `None` for a constant.
fn maybe(g: &Gen<'_>, o: &Operand) -> TokenStream {
    match o {
        Operand::Var(v) => {
            let t = g.tangent(*v);
            quote!(::core::option::Option::Some(#t))
        }
        Operand::Const(_) => quote!(::core::option::Option::None),
    }
}

fn var(o: &Operand) -> Option<VarId> {
    match o {
        Operand::Var(v) => Some(*v),
        Operand::Const(_) => None,
    }
}

fn tangent(g: &Gen<'_>, inst: &Inst) -> TokenStream {
    let s = inst.span;
    let r = &g.rules_at(s);
    match &inst.op {
        Op::Arith(op, a, b) => {
            let f = format_ident!("{}_pushforward", arith_name(*op, s), span = s);
            let (da, db) = (maybe(g, a), maybe(g, b));
            let (a, b) = (g.operand(a), g.operand(b));
            quote_spanned!(s=> #r::#f(#da, #db, #a, #b))
        }
        Op::Binary(name, a, b) => {
            let f = format_ident!("{}_pushforward", name, span = s);
            let (da, db) = (maybe(g, a), maybe(g, b));
            let (a, b) = (g.operand(a), g.operand(b));
            quote_spanned!(s=> #r::#f(#da, #db, #a, #b))
        }
        Op::Stack(items) => {
            let tangents = items.iter().map(|a| maybe(g, a));
            let values = items.iter().map(|a| g.operand(a));
            quote_spanned!(s=> #r::stack_pushforward([#(#tangents),*], [#(#values),*]))
        }
        // Each item's tangent, owned; a constant item's is zero.
        Op::Tuple(items) => {
            let tangents = items.iter().map(|a| match a {
                // An inner tuple's tangent is a tuple, taken as it is.
                Operand::Var(v) if g.tuples.contains(v) => {
                    let t = g.dot(*v);
                    quote_spanned!(s=> ::core::clone::Clone::clone(&#t))
                }
                Operand::Var(v) => {
                    let t = g.tangent(*v);
                    quote_spanned!(s=> #r::to_owned(#t))
                }
                Operand::Const(c) if c.is_no_tangent() => c.tokens.clone(),
                Operand::Const(_) => {
                    let a = g.operand(a);
                    let a = borrowed(&a);
                    quote_spanned!(s=> #r::zero_tangent(#a))
                }
            });
            quote_spanned!(s=> (#(#tangents,)*))
        }
        Op::Join {
            axis,
            parts,
            new_axis,
        } => {
            let f = super::primal::join_rule(*new_axis, "_pushforward", s);
            let tangents = parts.iter().map(|a| maybe(g, a));
            let values = parts.iter().map(|a| g.operand(a));
            let axis = &axis.tokens;
            quote_spanned!(s=> #r::#f(#axis, [#(#tangents),*], [#(#values),*]))
        }
        Op::MulAdd(a, b, c) => {
            let (da, db, dc) = (maybe(g, a), maybe(g, b), maybe(g, c));
            let (a, b) = (g.operand(a), g.operand(b));
            quote_spanned!(s=> #r::mul_add_pushforward(#da, #db, #dc, #a, #b))
        }
        Op::Dot(a, b) => {
            let terms: Vec<TokenStream> = [
                var(a).map(|v| {
                    let (da, b) = (g.tangent(v), g.operand(b));
                    quote_spanned!(s=> #r::dot(#da, #b))
                }),
                var(b).map(|v| {
                    let (a, db) = (g.operand(a), g.tangent(v));
                    quote_spanned!(s=> #r::dot(#a, #db))
                }),
            ]
            .into_iter()
            .flatten()
            .collect();
            match terms.as_slice() {
                [one] => one.clone(),
                [x, y] => quote_spanned!(s=> #r::sum_tangents(#x, #y)),
                _ => unreachable!("an active instruction has an active operand"),
            }
        }
        Op::Mapv(a, c) if !c.captures.is_empty() => {
            // The closure's tangent at each element, from the element's
            // tangent and the captured values' own (read from outside).
            let (v, v_dot) = (g.ident(c.param), g.dot(c.param));
            let (da, x, tangent) = (maybe(g, a), g.operand(a), closure_tangent(g, c));
            quote_spanned!(s=> #r::mapv_captures_pushforward(#da, #x, |#v, #v_dot| { #tangent }))
        }
        Op::Neg(a) | Op::Unary(_, a) | Op::Powi(a, _) | Op::Mapv(a, _) => {
            let v = var(a).expect("an active unary instruction has an active operand");
            let da = g.tangent(v);
            let x = g.operand(a);
            match &inst.op {
                Op::Neg(_) => quote_spanned!(s=> #r::neg_pushforward(#da, #x)),
                Op::Unary(name, _) => {
                    let f = format_ident!("{}_pushforward", name, span = s);
                    let x = if ops::uses_output(name) {
                        g.operand(&Operand::Var(inst.dest))
                    } else {
                        x
                    };
                    quote_spanned!(s=> #r::#f(#da, #x))
                }
                Op::Powi(_, n) => {
                    let n = &n.tokens;
                    quote_spanned!(s=> #r::powi_pushforward(#da, #x, #n))
                }
                Op::Mapv(_, c) => {
                    let df = derivative_closure(g, c, None, s);
                    quote_spanned!(s=> #r::mapv_pushforward(#da, #x, #df))
                }
                _ => unreachable!(),
            }
        }
        Op::SliceWrite(base, info, value) => {
            // The tangent array, with the part's tangent written in.
            let base = written_tangent(g, inst, base);
            let info = &info.tokens;
            match value {
                Operand::Var(v) => {
                    let d = g.tangent(*v);
                    quote_spanned!(s=> #r::slice_write(#base, #info, #d))
                }
                Operand::Const(_) => quote_spanned!(s=> #r::slice_cleared(#base, #info)),
            }
        }
        Op::IndexWrite(base, idx, value) | Op::IndexAdd(base, idx, value) => {
            // The tangent array, with the element's tangent written in.
            let array = proc_macro2::Ident::new("array", proc_macro2::Span::mixed_site());
            let base = written_tangent(g, inst, base);
            let idx = &idx.tokens;
            let write = match (value, &inst.op) {
                (Operand::Var(v), Op::IndexAdd(..)) => {
                    let d = g.dot(*v);
                    quote!(#array[#idx] += #d;)
                }
                (Operand::Var(v), _) => {
                    let d = g.dot(*v);
                    quote!(#array[#idx] = #d;)
                }
                (Operand::Const(_), Op::IndexAdd(..)) => quote!(),
                (Operand::Const(_), _) => quote!(#array[#idx] = #r::zero();),
            };
            quote_spanned!(s=> { let mut #array = #base; #write #array })
        }
        Op::Push(list, item) => {
            let list = match list {
                Operand::Var(v) => {
                    let d = g.dot(*v);
                    g.updated(inst, quote!(#d))
                }
                Operand::Const(c) => {
                    let c = &c.tokens;
                    let c = borrowed(c);
                    quote!(#r::zero_tangent(#c))
                }
            };
            let item = match item {
                Operand::Var(v) => {
                    let d = g.tangent(*v);
                    quote_spanned!(s=> #r::to_owned(#d))
                }
                Operand::Const(_) => {
                    let c = g.place(item);
                    let c = borrowed(&c);
                    quote_spanned!(s=> #r::zero_tangent(#c))
                }
            };
            quote_spanned!(s=> #r::push(#list, #item))
        }
        Op::Cast(..) | Op::Call(..) => {
            // Casts are linear; calls are emitted whole by `call`.
            let v = var(inst.op.operands()[0]).expect("active operand");
            g.apply(inst, g.tangent(v))
        }
        op => {
            // Linear in its one active operand: the same op on the tangent.
            let v =
                var(op.operands()[0]).expect("linear ops are active through their first operand");
            if let Op::Pop(_) = op {
                let d = g.dot(v);
                g.apply(inst, g.updated(inst, quote!(#d)))
            } else if Gen::native(op) {
                let d = g.dot(v);
                g.apply(inst, quote!(#d))
            } else {
                g.apply(inst, g.tangent(v))
            }
        }
    }
}

/// The tangent of the array an element or slice write goes into: its own,
/// or zero (of the result's shape) for a constant one.
fn written_tangent(g: &Gen<'_>, inst: &Inst, base: &Operand) -> TokenStream {
    match base {
        Operand::Var(v) => {
            let d = g.dot(*v);
            g.updated(inst, quote!(#d))
        }
        Operand::Const(_) => {
            let (r, x) = (&g.rules, g.ident(inst.dest));
            quote!(#r::zero_tangent(&#x))
        }
    }
}

/// Whether a call passes a constant argument, whose tangent the methods of
/// `rules::ZeroOfDifferentiable` and `rules::ZeroOfConstant` make: the
/// function imports them.
pub fn passes_constants(f: &ir::Function) -> bool {
    ir::instructions(&f.body.stmts).iter().any(|i| {
        matches!(&i.op, Op::Call(_, args)
            if args.iter().any(|a| matches!(a.operand, Operand::Const(_))))
    })
}

/// `let (t, t_dot) = g_jvp(args..., tangents...);`
fn call(
    g: &Gen<'_>,
    inst: &Inst,
    func: &super::ir::Callee,
    args: &[super::ir::CallArg],
) -> TokenStream {
    let r = &g.rules;
    let primals = args.iter().map(|a| g.call_arg(a));
    let tangents = args.iter().map(|a| match &a.operand {
        Operand::Var(v) => g.passed(*v, g.dot(*v), a.by_ref),
        Operand::Const(_) => {
            // `&(n - 1)`, not `&n - 1`.
            let source = &a.source;
            let source = if source.clone().into_iter().count() == 1 {
                quote!(#source)
            } else {
                quote!((#source))
            };
            // Its zero tangent, or `NoTangent` if its type has none (see
            // `passes_constants`).
            quote!(#r::const_tangent(&(&#r::ZeroOf(&#source)).zero_or_none()))
        }
    });
    let (x, d) = (g.ident(inst.dest), g.dot(inst.dest));
    let jvp = func.call(Some("jvp"), primals.chain(tangents).collect());
    quote_spanned!(inst.span=> let (#x, #d) = #jvp;)
}

/// `&c` for a constant's tokens: `&(c)` where they are an expression
/// (`0.5 * 2.0`), which `&` would bind into.
fn borrowed(c: &TokenStream) -> TokenStream {
    let mut trees = c.clone().into_iter();
    match (trees.next(), trees.next()) {
        (Some(proc_macro2::TokenTree::Ident(_) | proc_macro2::TokenTree::Literal(_)), None) => {
            quote!(&#c)
        }
        _ => quote!(&(#c)),
    }
}
