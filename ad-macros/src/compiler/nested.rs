//! `#[differentiable(nested)]`: the derivatives of `f_jvp` itself, so that
//! differentiable code may call `f_jvp` (reverse or forward mode over
//! forward mode: a Hessian-vector product, the force of a potential
//! differentiated along a path).
//!
//! The pass writes forward mode as IR rather than as tokens: each
//! instruction is followed by the instructions of its tangent, made of
//! the same operations (`d_y = cos(x) * d_x` for `y = sin(x)`), branches
//! and loops carry each variable's tangent beside it, and the result is
//! the pair `(y, d_y)`. That IR is `f_jvp`'s body, with `f_jvp`'s
//! signature, and the ordinary reverse and forward passes then emit
//! `f_jvp_vjp` and `f_jvp_jvp` from it.
//!
//! A call `g(args)` becomes a call of `g_jvp`, whose own derivatives the
//! outer passes then call: `g` needs `#[differentiable(nested)]` too.
//!
//! Scalar code only for now: the active parameters and the result are
//! floats; arrays, tuples and closures are reported.

use std::collections::HashMap;

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use syn::Type;

use super::emit;
use super::errors::Errors;
use super::ir::{
    Arith, Body, CallArg, Callee, Carried, Const, Function, If, Inst, Loop, Op, Operand, Phi, Stmt,
    VarId, VarInfo,
};
use super::lower;
use super::options::Modes;
use super::signature::{self, Signature};

/// `f_jvp`, `f_jvp_vjp` and `f_jvp_jvp`, or stubs of them after an error.
///
/// `f_jvp` is emitted from the same IR its derivatives are, not by the
/// ordinary forward pass: the two order a rule's products differently, and
/// a function calling `f_jvp` must get the same value from its gradient as
/// from itself.
pub fn derivatives(sig: &Signature, errors: &Errors) -> TokenStream {
    let both = Modes {
        reverse: true,
        forward: true,
        nested: false,
    };
    let forward_only = Modes {
        reverse: false,
        ..both
    };
    let Some(scalar) = scalar_type(sig, errors) else {
        return emit::stubs(sig, forward_only);
    };
    let Ok(jvp_sig) = signature::parse(jvp_item(sig), errors) else {
        return emit::stubs(sig, forward_only);
    };
    let stubs = || {
        let mut out = emit::stubs(sig, forward_only);
        out.extend(emit::stubs(&jvp_sig, both));
        out
    };
    let f = lower::lower(sig, errors);
    if !errors.is_empty() {
        return stubs();
    }
    let jvp = Tangents::new(&f, &scalar, errors).function(f, &jvp_sig);
    if !errors.is_empty() {
        return stubs();
    }
    let doc = format!(
        "The value of [`{}`] and its directional derivative along the given tangents (forward mode; differentiable again: `{}_vjp`, `{}_jvp`).",
        sig.name(),
        jvp_sig.name(),
        jvp_sig.name(),
    );
    let mut out = emit::primal_function(&jvp_sig, &jvp, &doc);
    out.extend(emit::derivatives(&jvp_sig, &jvp, both));
    out
}

/// The float type of the function, when its active parameters and its
/// result are all of it.
fn scalar_type(sig: &Signature, errors: &Errors) -> Option<Ident> {
    let floats = signature::float_types(&sig.item.sig.generics);
    let Some(scalar) = signature::scalar_type(sig, &floats) else {
        errors.at(
            &sig.item.sig.ident,
            "`#[differentiable(nested)]` needs one float type (`f64`, `f32` or `F: ad::Float`) for the parameters and the result",
        );
        return None;
    };
    let is_scalar = |ty: &Type| matches!(ty, Type::Path(p) if p.path.is_ident(&scalar));
    let mut fine = true;
    for p in sig.params.iter().filter(|p| p.active) {
        if !is_scalar(&p.ty) {
            errors.at(
                &p.ty,
                format!("`#[differentiable(nested)]` takes active parameters of type `{scalar}` only (for now): mark this one `#[constant]`, or pass its parts as `{scalar}`s"),
            );
            fine = false;
        } else if p.ident.is_none() {
            errors.at(
                &p.pat,
                "`#[differentiable(nested)]` needs the parameter bound to a name",
            );
            fine = false;
        }
    }
    if !is_scalar(&sig.ret) {
        errors.at(
            &sig.ret,
            format!("`#[differentiable(nested)]` returns one `{scalar}` only (for now): return each part from a function of its own"),
        );
        fine = false;
    }
    fine.then_some(scalar)
}

/// The name of a parameter's tangent in `f_jvp`'s signature.
fn tangent_name(ident: &Ident) -> Ident {
    format_ident!("d_{}", ident)
}

/// `f_jvp` as a function to differentiate: the parameters, then one
/// tangent per parameter (`#[constant] ad::NoTangent` for an inactive one),
/// returning `(value, tangent)`. Its body is never read.
fn jvp_item(sig: &Signature) -> syn::ItemFn {
    let vis = &sig.item.vis;
    let name = sig.derived_name("jvp");
    let generics = &sig.item.sig.generics;
    let where_clause = &generics.where_clause;
    let mut params = Vec::new();
    let mut tangents = Vec::new();
    for (p, tangent_ty) in sig.params.iter().zip(sig.tangent_param_types()) {
        let (pat, ty) = (&p.pat, &p.ty);
        let marker = (!p.active && !signature::inactive_by_type(ty)).then(|| quote!(#[constant]));
        params.push(quote!(#marker #pat: #ty));
        let tangent = match &p.ident {
            Some(ident) => tangent_name(ident),
            None => format_ident!("d_{}", params.len()),
        };
        tangents.push(if p.active {
            quote!(#tangent: #tangent_ty)
        } else {
            quote!(#[constant] #tangent: ::ad::NoTangent)
        });
    }
    let (ret, ret_tangent) = (&sig.ret, sig.ret_tangent());
    syn::parse_quote! {
        #vis fn #name #generics (#(#params,)* #(#tangents),*) -> (#ret, #ret_tangent) #where_clause {
            ::core::unreachable!()
        }
    }
}

/// The forward-mode IR under construction.
struct Tangents<'a> {
    vars: Vec<VarInfo>,
    /// Each variable's tangent; `None` when it is zero.
    tangent: HashMap<VarId, Option<Operand>>,
    /// The zero tangents of constant call arguments bound so far, which
    /// numbers their names.
    constant_tangents: usize,
    scalar: &'a Ident,
    errors: &'a Errors,
}

impl<'a> Tangents<'a> {
    fn new(f: &Function, scalar: &'a Ident, errors: &'a Errors) -> Tangents<'a> {
        let vars = f
            .vars
            .iter()
            .map(|v| VarInfo {
                ident: v.ident.clone(),
                span: v.span,
                is_view: v.is_view,
            })
            .collect();
        Tangents {
            vars,
            tangent: HashMap::new(),
            constant_tangents: 0,
            scalar,
            errors,
        }
    }

    fn function(mut self, f: Function, jvp_sig: &Signature) -> Function {
        let Function {
            name,
            pullback_lifetime,
            params,
            scalar_params,
            caller_refs,
            bags,
            body,
            ..
        } = f;
        let mut jvp_params = params.clone();
        let mut jvp_scalars = scalar_params.clone();
        let tangent_params = jvp_sig.params[params.len()..].iter();
        for (v, p) in params.iter().zip(tangent_params) {
            let Some(v) = v else {
                jvp_params.push(None);
                continue;
            };
            let ident = p.ident.clone().expect("tangent parameters are named");
            let d = self.var(ident, self.vars[v.0].span);
            self.tangent.insert(*v, Some(Operand::Var(d)));
            jvp_params.push(Some(d));
            if scalar_params.contains(v) {
                jvp_scalars.push(d);
            }
        }
        let Body { stmts, result } = body;
        let mut out = self.stmts(stmts);
        let d_result = self.of_or_zero(&result);
        let pair = self.push(
            &mut out,
            Op::Tuple(vec![result, d_result]),
            Span::call_site(),
        );
        Function {
            name: format!("{name}_jvp"),
            pullback_lifetime,
            vars: self.vars,
            params: jvp_params,
            scalar_params: jvp_scalars,
            caller_refs,
            bags,
            body: Body {
                stmts: out,
                result: pair,
            },
        }
    }

    fn var(&mut self, ident: Ident, span: Span) -> VarId {
        self.vars.push(VarInfo {
            ident,
            span,
            is_view: false,
        });
        VarId(self.vars.len() - 1)
    }

    /// A new temporary for a tangent.
    fn temp(&mut self, span: Span) -> VarId {
        let ident = format_ident!("d_{}", self.vars.len(), span = Span::mixed_site());
        self.var(ident, span)
    }

    fn push(&mut self, out: &mut Vec<Stmt>, op: Op, span: Span) -> Operand {
        let dest = self.temp(span);
        out.push(Stmt::Inst(Inst {
            dest,
            op,
            span,
            ty: None,
        }));
        Operand::Var(dest)
    }

    /// The tangent of an operand, `None` when it is zero.
    fn of(&self, o: &Operand) -> Option<Operand> {
        match o {
            Operand::Var(v) => self.tangent.get(v).cloned().flatten(),
            Operand::Const(_) => None,
        }
    }

    fn of_or_zero(&self, o: &Operand) -> Operand {
        self.of(o).unwrap_or_else(|| self.constant(0.0))
    }

    /// A constant of the function's float type.
    fn constant(&self, x: f64) -> Operand {
        let scalar = self.scalar;
        Operand::Const(Const {
            tokens: quote!(<#scalar as ::ad::Float>::of(#x)),
            literal: false,
            scalar: true,
        })
    }

    fn stmts(&mut self, stmts: Vec<Stmt>) -> Vec<Stmt> {
        let mut out = Vec::new();
        for stmt in stmts {
            match stmt {
                Stmt::Inst(inst) => self.inst(inst, &mut out),
                Stmt::If(i) => self.branch(*i, &mut out),
                Stmt::Loop(l) => self.looped(*l, &mut out),
                other => out.push(other),
            }
        }
        out
    }

    /// The instruction, then its tangent's instructions, which read the
    /// primal value (`y` in `d_y = y * d_x` for `y = exp(x)`).
    fn inst(&mut self, inst: Inst, out: &mut Vec<Stmt>) {
        if let Op::Call(..) = inst.op {
            return self.call(inst, out);
        }
        let (dest, span) = (inst.dest, inst.span);
        let mut after = Vec::new();
        let d = self.rule(&inst.op, Operand::Var(dest), span, &mut after);
        out.push(Stmt::Inst(inst));
        out.extend(after);
        self.tangent.insert(dest, d);
    }
}

impl Tangents<'_> {
    /// `y = g(args)` with a tangent: `p = g_jvp(args, tangents)`, then
    /// `y` and its tangent are `p`'s items. The IR calls `g_jvp` itself,
    /// so `f_jvp_vjp` calls `g_jvp_vjp` and `f_jvp_jvp` `g_jvp_jvp`: `g`
    /// needs `#[differentiable(nested)]` too.
    fn call(&mut self, inst: Inst, out: &mut Vec<Stmt>) {
        let Inst { dest, op, span, ty } = inst;
        let Op::Call(callee, args) = op else {
            unreachable!("called on calls")
        };
        if args.iter().all(|a| self.of(&a.operand).is_none()) {
            out.push(Stmt::Inst(Inst {
                dest,
                op: Op::Call(callee, args),
                span,
                ty,
            }));
            self.tangent.insert(dest, None);
            return;
        }
        let tangents: Vec<CallArg> = args
            .iter()
            .map(|a| {
                let operand = match &a.operand {
                    Operand::Var(_) => self.of_or_zero(&a.operand),
                    // A zero, or `NoTangent` for a value of a type without
                    // tangents, as the ordinary forward pass passes. Bound
                    // to a name, whose type the call then fixes: the outer
                    // passes read it again, for its own tangent.
                    Operand::Const(_) => {
                        let source = &a.source;
                        self.constant_tangents += 1;
                        let ident = format_ident!(
                            "d_const_{}",
                            self.constant_tangents,
                            span = Span::mixed_site()
                        );
                        out.push(Stmt::Const {
                            ident: ident.clone(),
                            expr: quote!({
                                use ::ad::__private::rules::{ZeroOfConstant as _, ZeroOfDifferentiable as _};
                                ::ad::__private::rules::const_tangent(
                                    &(&::ad::__private::rules::ZeroOf(&(#source))).zero_or_none(),
                                )
                            }),
                            local: a.local,
                        });
                        Operand::Const(Const::opaque(quote!(#ident)))
                    }
                };
                let source = match &operand {
                    Operand::Const(c) => c.tokens.clone(),
                    Operand::Var(_) => TokenStream::new(),
                };
                CallArg {
                    operand,
                    by_ref: false,
                    source,
                    local: false,
                }
            })
            .collect();
        let callee = Box::new(jvp_callee(*callee));
        let pair = self.push(
            out,
            Op::Call(callee, args.into_iter().chain(tangents).collect()),
            span,
        );
        let d = self.temp(span);
        for (k, dest, ty) in [(0, dest, ty), (1, d, None)] {
            let member = syn::Index::from(k);
            let read = self.push(out, Op::Place(pair.clone(), quote!(.#member)), span);
            out.push(Stmt::Inst(Inst {
                dest,
                op: Op::ToOwned(read),
                span,
                ty,
            }));
        }
        self.tangent.insert(dest, Some(Operand::Var(d)));
    }

    /// The tangent of `op`'s result `y`, its instructions pushed to `out`;
    /// `None` when it is zero (no operand has a tangent).
    fn rule(&mut self, op: &Op, y: Operand, span: Span, out: &mut Vec<Stmt>) -> Option<Operand> {
        let tangents: Vec<Option<Operand>> =
            op.operands().into_iter().map(|o| self.of(o)).collect();
        if tangents.iter().all(Option::is_none) {
            return None;
        }
        let mut e = Builder { t: self, out, span };
        match op {
            Op::Arith(kind, a, b) => {
                let (da, db) = (tangents[0].clone(), tangents[1].clone());
                match kind {
                    Arith::Add => e.sum(vec![da, db]),
                    Arith::Sub => {
                        let minus_db = db.map(|d| e.neg(d));
                        e.sum(vec![da, minus_db])
                    }
                    Arith::Mul => {
                        let left = da.map(|d| e.mul(d, b.clone()));
                        let right = db.map(|d| e.mul(a.clone(), d));
                        e.sum(vec![left, right])
                    }
                    // d(a / b) = da / b - y db / b.
                    Arith::Div => {
                        let left = da.map(|d| e.div(d, b.clone()));
                        let right = db.map(|d| {
                            let y_db = e.mul(y.clone(), d);
                            let q = e.div(y_db, b.clone());
                            e.neg(q)
                        });
                        e.sum(vec![left, right])
                    }
                }
            }
            Op::Neg(_) => tangents[0].clone().map(|d| e.neg(d)),
            Op::Unary(name, a) => {
                let d = tangents[0].clone()?;
                e.unary(name, a.clone(), y, d)
            }
            // d(a^n) = n a^(n-1) da.
            Op::Powi(a, n) => {
                let d = tangents[0].clone()?;
                let n_tokens = &n.tokens;
                let lower = Const {
                    tokens: quote!((#n_tokens) - 1),
                    literal: false,
                    scalar: false,
                };
                let power = e.op(Op::Powi(a.clone(), lower));
                let scalar = e.t.scalar;
                let factor = Operand::Const(Const::opaque(
                    quote!(<#scalar as ::ad::Float>::of((#n_tokens) as f64)),
                ));
                let scaled = e.mul(factor, power);
                Some(e.mul(scaled, d))
            }
            Op::Binary(name, a, b) => {
                let (da, db) = (tangents[0].clone(), tangents[1].clone());
                e.binary(name, (a.clone(), da), (b.clone(), db), y)
            }
            Op::MulAdd(a, b, _) => {
                let left = tangents[0].clone().map(|d| e.mul(d, b.clone()));
                let right = tangents[1].clone().map(|d| e.mul(a.clone(), d));
                e.sum(vec![left, right, tangents[2].clone()])
            }
            Op::Cast(_, ty) => tangents[0].clone().map(|d| e.op(Op::Cast(d, ty.clone()))),
            Op::Tuple(items) => {
                let items = items.iter().map(|o| e.t.of_or_zero(o)).collect();
                Some(e.op(Op::Tuple(items)))
            }
            Op::Place(_, path) => tangents[0]
                .clone()
                .map(|d| e.op(Op::Place(d, path.clone()))),
            Op::View(_) => tangents[0].clone().map(|d| e.op(Op::View(d))),
            Op::ToOwned(_) => tangents[0].clone().map(|d| e.op(Op::ToOwned(d))),
            other => e.unsupported(&format!("`{}`", other.name())),
        }
    }

    /// The branches with their tangents, and a tangent phi beside each phi
    /// that has a tangent in either branch.
    fn branch(&mut self, i: If, out: &mut Vec<Stmt>) {
        let If {
            cond,
            then,
            els,
            mut phis,
            value,
        } = i;
        let (then, els) = (self.stmts(then), self.stmts(els));
        let mut tangent_phis = Vec::new();
        for phi in &phis {
            let (d_then, d_els) = (self.of(&phi.then), self.of(&phi.els));
            if d_then.is_none() && d_els.is_none() {
                self.tangent.insert(phi.dest, None);
                continue;
            }
            let dest = self.temp(self.vars[phi.dest.0].span);
            let zero = || self.constant(0.0);
            tangent_phis.push(Phi {
                dest,
                then: d_then.unwrap_or_else(zero),
                els: d_els.unwrap_or_else(zero),
            });
            self.tangent.insert(phi.dest, Some(Operand::Var(dest)));
        }
        phis.extend(tangent_phis);
        out.push(Stmt::If(Box::new(If {
            cond,
            then,
            els,
            phis,
            value,
        })));
    }

    /// The loop with each carried variable's tangent carried beside it.
    fn looped(&mut self, l: Loop, out: &mut Vec<Stmt>) {
        let Loop {
            head,
            body,
            mut carried,
            exit,
        } = l;
        // A literal start (`let mut acc = 0.0;`) is of the function's float
        // type: in generated code nothing else may fix it before a rule
        // reads it, and an open float literal would default to `f64`.
        for c in &mut carried {
            if let Operand::Const(k) = &c.init {
                if k.literal {
                    let (scalar, tokens) = (self.scalar, &k.tokens);
                    c.init = Operand::Const(Const {
                        tokens: quote!(::core::convert::identity::<#scalar>(#tokens)),
                        literal: false,
                        scalar: true,
                    });
                }
            }
        }
        let inputs: Vec<VarId> = carried
            .iter()
            .map(|c| {
                let d = self.temp(self.vars[c.input.0].span);
                self.tangent.insert(c.input, Some(Operand::Var(d)));
                d
            })
            .collect();
        let body = self.stmts(body);
        let mut tangents = Vec::new();
        for (c, input) in carried.iter().zip(inputs) {
            let output = self.temp(self.vars[c.output.0].span);
            tangents.push(Carried {
                input,
                init: self.of_or_zero(&c.init),
                next: self.of_or_zero(&c.next),
                output,
            });
            self.tangent.insert(c.output, Some(Operand::Var(output)));
        }
        carried.extend(tangents);
        out.push(Stmt::Loop(Box::new(Loop {
            head,
            body,
            carried,
            exit,
        })));
    }
}

/// Pushes the instructions of one tangent rule.
struct Builder<'b, 'a> {
    t: &'b mut Tangents<'a>,
    out: &'b mut Vec<Stmt>,
    span: Span,
}

impl Builder<'_, '_> {
    /// The operation's result: an instruction, or a constant when no
    /// operand is active (`b - 1` of a constant exponent `b`), as every
    /// instruction reads an active value.
    fn op(&mut self, op: Op) -> Operand {
        match self.folded(&op) {
            Some(tokens) => Operand::Const(Const {
                tokens,
                literal: false,
                scalar: true,
            }),
            None => self.t.push(self.out, op, self.span),
        }
    }

    /// An operand as an expression of the function's float type.
    fn tokens(&self, o: &Operand) -> TokenStream {
        match o {
            Operand::Const(c) if c.literal => {
                let (scalar, tokens) = (self.t.scalar, &c.tokens);
                quote!(<#scalar as ::ad::Float>::of(#tokens))
            }
            Operand::Const(c) => {
                let tokens = &c.tokens;
                quote!((#tokens))
            }
            Operand::Var(v) => {
                let ident = &self.t.vars[v.0].ident;
                quote!(#ident)
            }
        }
    }

    /// What `then` makes if `cond` holds, else what `els` makes: an `if`
    /// with one phi, whose condition reads primal values (a kink: `abs`,
    /// `max`, `min`).
    fn select(
        &mut self,
        cond: TokenStream,
        then: impl FnOnce(&mut Builder<'_, '_>) -> Operand,
        els: impl FnOnce(&mut Builder<'_, '_>) -> Operand,
    ) -> Operand {
        let mut arm = |make: &mut dyn FnMut(&mut Builder<'_, '_>) -> Operand| {
            let mut out = Vec::new();
            let value = make(&mut Builder {
                t: &mut *self.t,
                out: &mut out,
                span: self.span,
            });
            (out, value)
        };
        let (mut then, mut els) = (Some(then), Some(els));
        let (then_stmts, then_value) = arm(&mut |e| (then.take().expect("made once"))(e));
        let (els_stmts, els_value) = arm(&mut |e| (els.take().expect("made once"))(e));
        let dest = self.t.temp(self.span);
        self.out.push(Stmt::If(Box::new(If {
            cond,
            then: then_stmts,
            els: els_stmts,
            phis: vec![Phi {
                dest,
                then: then_value,
                els: els_value,
            }],
            value: None,
        })));
        Operand::Var(dest)
    }

    /// The tokens computing `op` when its operands are all constants.
    fn folded(&self, op: &Op) -> Option<TokenStream> {
        let c = |o: &Operand| match o {
            Operand::Const(_) => Some(self.tokens(o)),
            Operand::Var(_) => None,
        };
        Some(match op {
            Op::Arith(kind, a, b) => {
                let (a, b) = (c(a)?, c(b)?);
                match kind {
                    Arith::Add => quote!((#a + #b)),
                    Arith::Sub => quote!((#a - #b)),
                    Arith::Mul => quote!((#a * #b)),
                    Arith::Div => quote!((#a / #b)),
                }
            }
            Op::Neg(a) => {
                let a = c(a)?;
                quote!((-#a))
            }
            Op::Unary(name, a) => {
                let (a, name) = (c(a)?, format_ident!("{}", name));
                quote!(#a.#name())
            }
            Op::Binary(name, a, b) => {
                let (a, b, name) = (c(a)?, c(b)?, format_ident!("{}", name));
                quote!(#a.#name(#b))
            }
            Op::Powi(a, n) => {
                let (a, n) = (c(a)?, &n.tokens);
                quote!(#a.powi(#n))
            }
            _ => return None,
        })
    }

    fn add(&mut self, a: Operand, b: Operand) -> Operand {
        self.op(Op::Arith(Arith::Add, a, b))
    }

    fn sub(&mut self, a: Operand, b: Operand) -> Operand {
        self.op(Op::Arith(Arith::Sub, a, b))
    }

    fn mul(&mut self, a: Operand, b: Operand) -> Operand {
        self.op(Op::Arith(Arith::Mul, a, b))
    }

    fn div(&mut self, a: Operand, b: Operand) -> Operand {
        self.op(Op::Arith(Arith::Div, a, b))
    }

    fn neg(&mut self, a: Operand) -> Operand {
        self.op(Op::Neg(a))
    }

    fn unary_op(&mut self, name: &'static str, a: Operand) -> Operand {
        self.op(Op::Unary(name, a))
    }

    fn constant(&self, x: f64) -> Operand {
        self.t.constant(x)
    }

    /// The sum of the terms that are not zero.
    fn sum(&mut self, terms: Vec<Option<Operand>>) -> Option<Operand> {
        terms
            .into_iter()
            .flatten()
            .reduce(|acc, term| self.add(acc, term))
    }

    fn square(&mut self, a: Operand) -> Operand {
        self.mul(a.clone(), a)
    }

    /// `d` over `sqrt(s)`.
    fn over_root(&mut self, d: Operand, s: Operand) -> Operand {
        let root = self.unary_op("sqrt", s);
        self.div(d, root)
    }

    fn unsupported(&self, what: &str) -> Option<Operand> {
        self.t.errors.at_span(
            self.span,
            format!("`#[differentiable(nested)]` cannot yet differentiate {what} twice: write it with `+ - * /`, the scalar methods and calls of `#[differentiable(nested)]` functions, or take the nested derivative with `ad::Dual`s"),
        );
        None
    }

    /// The tangent of `y = name(a)` along `d`.
    fn unary(&mut self, name: &str, a: Operand, y: Operand, d: Operand) -> Option<Operand> {
        let one = self.constant(1.0);
        Some(match name {
            "sin" => {
                let c = self.unary_op("cos", a);
                self.mul(c, d)
            }
            "cos" => {
                let s = self.unary_op("sin", a);
                let m = self.mul(s, d);
                self.neg(m)
            }
            "tan" => {
                let y2 = self.square(y);
                let f = self.add(one, y2);
                self.mul(f, d)
            }
            "sinh" => {
                let c = self.unary_op("cosh", a);
                self.mul(c, d)
            }
            "cosh" => {
                let s = self.unary_op("sinh", a);
                self.mul(s, d)
            }
            "tanh" => {
                let y2 = self.square(y);
                let f = self.sub(one, y2);
                self.mul(f, d)
            }
            // The inverse circular and hyperbolic functions: d over 1 - a²,
            // 1 + a² or a² - 1, under a root for all but the two tangents.
            "asin" | "acos" | "atan" | "asinh" | "acosh" | "atanh" => {
                let a2 = self.square(a);
                let s = match name {
                    "asin" | "acos" | "atanh" => self.sub(one, a2),
                    "atan" | "asinh" => self.add(a2, one),
                    _ => self.sub(a2, one),
                };
                let q = if matches!(name, "atan" | "atanh") {
                    self.div(d, s)
                } else {
                    self.over_root(d, s)
                };
                if name == "acos" {
                    self.neg(q)
                } else {
                    q
                }
            }
            "exp" => self.mul(y, d),
            "exp2" => {
                let ln2 = self.constant(std::f64::consts::LN_2);
                let f = self.mul(y, ln2);
                self.mul(f, d)
            }
            "exp_m1" => {
                let f = self.add(y, one);
                self.mul(f, d)
            }
            "ln" => self.div(d, a),
            "ln_1p" => {
                let s = self.add(a, one);
                self.div(d, s)
            }
            "log2" | "log10" => {
                let ln_base = self.constant(if name == "log2" {
                    std::f64::consts::LN_2
                } else {
                    std::f64::consts::LN_10
                });
                let s = self.mul(a, ln_base);
                self.div(d, s)
            }
            "sqrt" => {
                let two = self.constant(2.0);
                let s = self.mul(two, y);
                self.div(d, s)
            }
            "cbrt" => {
                let three = self.constant(3.0);
                let y2 = self.square(y);
                let s = self.mul(three, y2);
                self.div(d, s)
            }
            "recip" => {
                let y2 = self.square(y);
                let m = self.mul(y2, d);
                self.neg(m)
            }
            // The sign of `a` times `d`: zero at 0, as the first-order rule.
            "abs" => {
                let (a, zero) = (self.tokens(&a), self.constant(0.0));
                let zero_tokens = self.tokens(&zero);
                let (above, below) = (quote!(#a > #zero_tokens), quote!(#a < #zero_tokens));
                self.select(
                    above,
                    |_| d.clone(),
                    |e| e.select(below, |e| e.neg(d.clone()), |_| zero),
                )
            }
            "to_degrees" | "to_radians" => {
                let pi = std::f64::consts::PI;
                let k = self.constant(if name == "to_degrees" {
                    180.0 / pi
                } else {
                    pi / 180.0
                });
                self.mul(k, d)
            }
            other => return self.unsupported(&format!("`{other}`")),
        })
    }

    /// The tangent of `y = name(a, b)` along `da` and `db`.
    fn binary(
        &mut self,
        name: &str,
        (a, da): (Operand, Option<Operand>),
        (b, db): (Operand, Option<Operand>),
        y: Operand,
    ) -> Option<Operand> {
        match name {
            // atan(a / b): (b da - a db) / (a² + b²).
            "atan2" => {
                let left = da.map(|d| self.mul(b.clone(), d));
                let right = db.map(|d| {
                    let m = self.mul(a.clone(), d);
                    self.neg(m)
                });
                let top = self.sum(vec![left, right])?;
                let (a2, b2) = (self.square(a), self.square(b));
                let bottom = self.add(a2, b2);
                Some(self.div(top, bottom))
            }
            // a^b: b a^(b-1) da + y ln(a) db.
            "powf" => {
                let left = da.map(|d| {
                    let one = self.constant(1.0);
                    let lower = self.sub(b.clone(), one);
                    let power = self.op(Op::Binary("powf", a.clone(), lower));
                    let f = self.mul(b.clone(), power);
                    self.mul(f, d)
                });
                let right = db.map(|d| {
                    let ln = self.unary_op("ln", a.clone());
                    let f = self.mul(y.clone(), ln);
                    self.mul(f, d)
                });
                self.sum(vec![left, right])
            }
            // (a da + b db) / y.
            "hypot" => {
                let left = da.map(|d| self.mul(a.clone(), d));
                let right = db.map(|d| self.mul(b.clone(), d));
                let top = self.sum(vec![left, right])?;
                Some(self.div(top, y))
            }
            // log_b(a) = ln a / ln b: da / (a ln b) - y db / (b ln b).
            "log" => {
                let ln_b = self.unary_op("ln", b.clone());
                let left = da.map(|d| {
                    let f = self.mul(a.clone(), ln_b.clone());
                    self.div(d, f)
                });
                let right = db.map(|d| {
                    let y_db = self.mul(y.clone(), d);
                    let f = self.mul(b.clone(), ln_b.clone());
                    let q = self.div(y_db, f);
                    self.neg(q)
                });
                self.sum(vec![left, right])
            }
            // The tangent of the operand chosen, as a branch would take it.
            "max" | "min" => {
                let zero = || self.constant(0.0);
                let (da, db) = (da.unwrap_or_else(zero), db.unwrap_or_else(zero));
                let (a, b) = (self.tokens(&a), self.tokens(&b));
                let cond = if name == "max" {
                    quote!(#a >= #b)
                } else {
                    quote!(#a <= #b)
                };
                // To `a` on ties, as the first-order rule.
                Some(self.select(cond, |_| da, |_| db))
            }
            other => self.unsupported(&format!("`{other}`")),
        }
    }
}

/// The callee renamed to its `_jvp` (`g` to `g_jvp`, `m::g::<T>` to
/// `m::g_jvp::<T>`).
fn jvp_callee(callee: Callee) -> Callee {
    let renamed = |ident: &Ident| format_ident!("{}_jvp", ident, span = ident.span());
    match callee {
        Callee::Path(mut path) => {
            if let Some(last) = path.path.segments.last_mut() {
                last.ident = renamed(&last.ident);
            }
            Callee::Path(path)
        }
        Callee::Method(method) => Callee::Method(renamed(&method)),
    }
}
