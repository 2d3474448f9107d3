//! Forward mode: each instruction gives a (primal, tangent) pair of
//! statements. Tangents are named after their variable (`h_dot`); only
//! variables the result depends on get one.
//!
//! Linear operations (reductions, views, transposes, element reads) apply
//! the same operation to the tangent; the others call their rule's
//! pushforward.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

use super::activity;
use super::ir::{Body, Closure, Inst, Op, Operand, Stmt, VarId};
use super::ops;
use super::primal::{arith_name, Gen};
use super::reverse::suffixed_path;

/// The statements of `body` in forward mode, and the result's tangent
/// (`None` when the result is constant: the caller writes its zero).
pub fn body(g: &Gen<'_>, body: &Body) -> (Vec<TokenStream>, Option<TokenStream>) {
    let useful = activity::useful(body);
    let mut out = Vec::new();
    for stmt in &body.stmts {
        match stmt {
            Stmt::Inst(inst) => out.extend(inst_pair(g, inst, useful.contains(&inst.dest))),
            other => out.extend(g.shared_stmt(other)),
        }
    }
    let result_dot = match &body.result {
        Operand::Var(v) => {
            let d = g.dot(*v);
            Some(quote!(#d))
        }
        Operand::Const(_) => None,
    };
    (out, result_dot)
}

/// The derivative of a `mapv` closure, `|v| f'(v)`, by forward mode with
/// `v_dot = 1`.
pub fn derivative_closure(g: &Gen<'_>, c: &Closure) -> TokenStream {
    let (stmts, result_dot) = body(g, &c.body);
    let (v, v_dot, r) = (g.ident(c.param), g.dot(c.param), &g.rules);
    let result_dot = result_dot.unwrap_or_else(|| quote!(#r::zero_tangent(&#v)));
    quote!(|#v| {
        let #v_dot = #r::one_like(#v);
        #(#stmts)*
        #result_dot
    })
}

fn inst_pair(g: &Gen<'_>, inst: &Inst, useful: bool) -> Vec<TokenStream> {
    if !useful {
        return vec![g.bind(inst, g.primal(inst))];
    }
    if let Op::Call(func, args) = &inst.op {
        return vec![call(g, inst, func, args)];
    }
    let primal = g.bind(inst, g.primal(inst));
    let tangent = tangent(g, inst);
    let d = g.dot(inst.dest);
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
                    let df = derivative_closure(g, c);
                    quote_spanned!(s=> #r::mapv_pushforward(#da, #x, #df))
                }
                _ => unreachable!(),
            }
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
            if Gen::native(op) {
                let d = g.dot(v);
                g.apply(inst, quote!(#d))
            } else {
                g.apply(inst, g.tangent(v))
            }
        }
    }
}

/// `let (t, t_dot) = g_jvp(args..., tangents...);`
fn call(
    g: &Gen<'_>,
    inst: &Inst,
    func: &syn::ExprPath,
    args: &[super::ir::CallArg],
) -> TokenStream {
    let r = &g.rules;
    let jvp = suffixed_path(func, "jvp");
    let primals = args.iter().map(|a| g.call_arg(a));
    let tangents = args.iter().map(|a| match &a.operand {
        Operand::Var(v) => {
            let d = g.dot(*v);
            if a.by_ref {
                quote!(&#d)
            } else {
                quote!(::core::clone::Clone::clone(&#d))
            }
        }
        Operand::Const(_) => {
            let source = &a.source;
            quote!(#r::const_tangent(&#r::zero_tangent(&#source)))
        }
    });
    let (x, d) = (g.ident(inst.dest), g.dot(inst.dest));
    quote_spanned!(inst.span=> let (#x, #d) = #jvp(#(#primals,)* #(#tangents),*);)
}
