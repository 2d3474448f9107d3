//! Lowering calls: methods by name, `mapv` and its closure, `f64::name(x)`
//! paths, and calls of other differentiable functions.

use proc_macro2::{Ident, Span};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Expr, Pat};

use super::*;
use crate::compiler::ir::{
    Body, CallArg, Callee, Closure, Const, Op, Operand, Reduce, VarId, VarInfo,
};
use crate::compiler::{ops, scan};

impl Lowerer<'_> {
    pub(super) fn method(&mut self, m: &syn::ExprMethodCall, e: &Expr) -> Option<Operand> {
        let name = m.method.to_string();
        let span = m.method.span();
        let args: Vec<&Expr> = m.args.iter().collect();
        if let Some(chain) = self.iterator_chain(m) {
            return self.expr(&chain.ok()?);
        }
        // `reduce`'s `Option` taken otherwise than by `unwrap`, `expect`
        // or `unwrap_or`.
        if let Expr::MethodCall(r) = &*m.receiver {
            if r.method == "reduce" && super::iterators::is_adaptor(&r.receiver) {
                self.errors.at(
                    &m.method,
                    format!("`reduce` over active values is differentiated with `.unwrap()`, `.expect(..)` or `.unwrap_or(default)` right after it, not `.{name}(..)`"),
                );
                return None;
            }
        }
        if let Some(item) = self.end_item(m) {
            return self.expr(&item);
        }
        if let Some(read) = self.read_or_default(m) {
            return self.expr(&read);
        }
        // `x.split_at(k)` of a slice parameter of floats (or a bag's item):
        // the two sub-slices, `(&x[..k], &x[k..])`.
        if let ("split_at", [at]) = (name.as_str(), &m.args.iter().collect::<Vec<_>>()[..]) {
            let x = &m.receiver;
            if self.sequence_named(x).is_some_and(|s| !s.of_places) || self.bag_item(x).is_some() {
                let span = m.method.span();
                let halves: Expr = syn::parse_quote_spanned!(span=> {
                    let __ad_at: usize = #at;
                    (&#x[..__ad_at], &#x[__ad_at..])
                });
                return self.expr(&halves);
            }
        }
        if let Some(list) = self.popped_list(m) {
            return self.popped_item(&list, e);
        }
        if let (Some(list), "remove" | "swap_remove", [at]) = (
            self.active_vec_local(&m.receiver),
            name.as_str(),
            &m.args.iter().collect::<Vec<_>>()[..],
        ) {
            return if name == "remove" {
                self.removed_item(&list, at, e)
            } else {
                self.swap_removed_item(&list, at, e)
            };
        }
        // A `Vec`'s value is its items: a clone names the same value, which
        // the emitted code copies where the original is read again.
        if name == "clone" && args.is_empty() && self.active_vec_local(&m.receiver).is_some() {
            return self.expr(&m.receiver);
        }
        if let (Some(list), "split_off", [at]) = (
            self.active_vec_local(&m.receiver),
            name.as_str(),
            &m.args.iter().collect::<Vec<_>>()[..],
        ) {
            return self.split_off_tail(&list, at, e);
        }
        if ops::INACTIVE.contains(&name.as_str()) {
            return Some(self.inactive_result(e));
        }
        let arity = |l: &Self, n: usize| {
            if args.len() != n {
                l.errors
                    .at(&m.method, format!("`{name}` takes {n} argument(s) here"));
                false
            } else {
                true
            }
        };
        if let Some(f) = ops::unary(&name) {
            if !arity(self, 0) {
                return None;
            }
            let a = self.expr(&m.receiver)?;
            return Some(self.op_or_constant(Op::Unary(f, a), span, e));
        }
        if let Some(f) = ops::binary(&name) {
            if !arity(self, 1) {
                return None;
            }
            let a = self.expr(&m.receiver);
            let b = self.expr(args[0]);
            return Some(self.op_or_constant(Op::Binary(f, a?, b?), span, e));
        }
        match name.as_str() {
            "powi" => {
                if !arity(self, 1) {
                    return None;
                }
                let a = self.expr(&m.receiver);
                let n = self.inactive_arg(args[0], "the exponent of `powi`");
                Some(self.op_or_constant(Op::Powi(a?, n?), span, e))
            }
            // ndarray's `pow2` is `powi(2)`; `clamp(lo, hi)` is
            // `max(lo).min(hi)`, with `max`'s and `min`'s derivatives.
            "pow2" => {
                if !arity(self, 0) {
                    return None;
                }
                let a = self.expr(&m.receiver)?;
                let two = Const::opaque(quote::quote!(2));
                Some(self.op_or_constant(Op::Powi(a, two), span, e))
            }
            "clamp" => {
                if !arity(self, 2) {
                    return None;
                }
                let a = self.expr(&m.receiver);
                let (lo, hi) = (self.expr(args[0]), self.expr(args[1]));
                let low = match (a?, lo?) {
                    (Operand::Const(a), Operand::Const(lo)) => {
                        let (a, lo) = (&a.tokens, &lo.tokens);
                        Operand::Const(Const::opaque(quote::quote!((#a).max(#lo))))
                    }
                    (a, lo) => self.inst(Op::Binary("max", a, lo), span),
                };
                Some(self.op_or_constant(Op::Binary("min", low, hi?), span, e))
            }
            "mul_add" => {
                if !arity(self, 2) {
                    return None;
                }
                let a = self.expr(&m.receiver);
                let b = self.expr(args[0]);
                let c = self.expr(args[1]);
                Some(self.op_or_constant(Op::MulAdd(a?, b?, c?), span, e))
            }
            "dot" => {
                if !arity(self, 1) {
                    return None;
                }
                let a = self.expr(&m.receiver);
                let b = self.expr(args[0]);
                Some(self.op_or_constant(Op::Dot(a?, b?), span, e))
            }
            "t" | "reversed_axes" | "diag" | "sum" | "mean" | "view" | "to_owned" | "clone"
            | "unwrap" => {
                if !arity(self, 0) {
                    return None;
                }
                let a = self.expr(&m.receiver)?;
                let op = match name.as_str() {
                    "t" | "reversed_axes" => Op::Transpose(a),
                    "diag" => Op::Diag(a),
                    "sum" => Op::Reduce(Reduce::Sum, a),
                    "mean" => Op::Reduce(Reduce::Mean, a),
                    "view" => Op::View(a),
                    "unwrap" => Op::Unwrap(a, None),
                    _ => Op::ToOwned(a),
                };
                Some(self.op_or_constant(op, span, e))
            }
            "sum_axis"
            | "mean_axis"
            | "row"
            | "column"
            | "slice"
            | "insert_axis"
            | "into_shape_with_order"
            | "expect" => {
                if !arity(self, 1) {
                    return None;
                }
                let a = self.expr(&m.receiver);
                let k = self.inactive_arg(args[0], &format!("the argument of `{name}`"));
                let (a, k) = (a?, k?);
                let op = match name.as_str() {
                    "sum_axis" => Op::ReduceAxis(Reduce::Sum, a, k),
                    "mean_axis" => Op::ReduceAxis(Reduce::Mean, a, k),
                    "row" => Op::Row(a, k),
                    "column" => Op::Column(a, k),
                    "slice" => Op::Slice(a, k),
                    "insert_axis" => Op::InsertAxis(a, k),
                    "into_shape_with_order" => Op::IntoShape(a, k),
                    _ => Op::Unwrap(a, Some(k)),
                };
                Some(self.op_or_constant(op, span, e))
            }
            // `mapv_into` reuses the array's memory; its value is `mapv`'s.
            "mapv" | "mapv_into" => {
                if !arity(self, 1) {
                    return None;
                }
                self.mapv(m, args[0], span, e)
            }
            "var" | "std" | "var_axis" | "std_axis" => {
                let axis = name.ends_with("_axis");
                if !arity(self, if axis { 2 } else { 1 }) {
                    return None;
                }
                let value = self.variance(m, &name, span);
                self.expr(&value)
            }
            "and" if super::constructors::is_zip(&m.receiver) => {
                self.errors.at(
                    &m.method,
                    "a `Zip` over active arrays is differentiated as `Zip::from(a).and(b).map_collect(|&u, &v| ...)`, written in one expression",
                );
                None
            }
            // A matrix's `map_axis(Axis(1), f)`: `f` of each row, collected.
            "map_axis" => {
                if !arity(self, 2) {
                    return None;
                }
                let lanes = match super::sources::axis_number(Some(args[0])) {
                    Some(0) => "columns",
                    Some(1) => "rows",
                    _ => {
                        self.errors.at(
                            args[0],
                            "`map_axis` over active values is differentiated on matrices, along `Axis(0)` (each column) or `Axis(1)` (each row)",
                        );
                        return None;
                    }
                };
                let (x, f) = (&m.receiver, args[1]);
                let lanes = syn::Ident::new(lanes, m.method.span());
                let collected: Expr = syn::parse_quote_spanned!(m.method.span()=>
                    #x.#lanes().into_iter().map(#f).collect::<::ad::ndarray::Array1<_>>()
                );
                self.expr(&collected)
            }
            // `x.to_vec()` of a 1-D array, slice or `Vec`: its items,
            // collected.
            "to_vec" => {
                if !arity(self, 0) {
                    return None;
                }
                let x = &m.receiver;
                let collected: Expr = syn::parse_quote_spanned!(m.method.span()=>
                    #x.iter().cloned().collect::<::std::vec::Vec<_>>()
                );
                self.expr(&collected)
            }
            "map_collect" => match self.zip_map_collect(m) {
                Some(Ok(written)) => self.expr(&written),
                Some(Err(())) => None,
                None => {
                    self.errors.at(
                        &m.method,
                        "`map_collect` is differentiated on `Zip::from(a).and(b)..`, written out in the call",
                    );
                    None
                }
            },
            // ndarray's `map`, whose closure takes a reference: `mapv` on
            // the values.
            "map" if !super::iterators::is_adaptor(&m.receiver) => {
                if !arity(self, 1) {
                    return None;
                }
                let closure = match args[0] {
                    Expr::Closure(c) => super::iterators::by_value(c),
                    _ => None,
                };
                let Some(closure) = closure else {
                    self.errors.at(args[0], "ndarray's `map` is differentiated with a closure `|v| ...` or `|&v| ...` (without `return`); or use `mapv`");
                    return None;
                };
                self.mapv(m, &closure, span, e)
            }
            // Another method of the type being differentiated
            // (`self.forward(x)`): a call `Self::forward(self, x)`.
            _ if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident(crate::compiler::methods::SELF_NAME)) =>
            {
                let (receiver, method, args) = (&m.receiver, &m.method, &m.args);
                let call: Expr =
                    syn::parse_quote_spanned!(method.span()=> Self::#method(#receiver, #args));
                self.expr(&call)
            }
            // A method of a struct of the user's (`self.l1.forward(x)`,
            // `m.score(x)`, `layer.forward(&h)`), with `#[differentiable]`
            // on it: `(&r).forward_vjp(x)` by method syntax.
            _ if self.is_struct_place(&m.receiver) => {
                let receiver = &m.receiver;
                let receiver: Expr = syn::parse_quote_spanned!(receiver.span()=> &#receiver);
                let mut all = vec![&receiver];
                all.extend(args.iter().copied());
                let lowered = self.call_args(&all)?;
                let callee = Callee::Method(m.method.clone());
                Some(self.op_or_constant(Op::Call(Box::new(callee), lowered), span, e))
            }
            _ if super::iterators::is_adaptor(&m.receiver) => {
                self.errors.at(
                    &m.method,
                    format!("the iterator method `{name}` over active values has no derivative rule: a chain over active values may `map`, `filter`, `take_while`, `skip_while`, `scan`, `zip`, `enumerate`, `copied`, `cloned`, `skip`, `take`, `step_by`, `rev`, `chain`, or `flat_map` and `flatten` before a `sum()`, `product()` or `fold(..)`, and ends in `sum()`, `product()`, `fold(..)`, `reduce(..)`, `max_by(..)`, `min_by(..)`, `last()`, `next()`, `nth(k)`, `find(..)` or `rfind(..)` with `.unwrap()` or `.unwrap_or(default)`, or `collect()` into an array; or write the loop out"),
                );
                None
            }
            _ if super::place_root(&m.receiver, false)
                .is_some_and(|r| self.vec_locals.contains(&r.to_string())) =>
            {
                let list = m.receiver.to_token_stream();
                self.errors.at(
                    &m.method,
                    format!("the method `{name}` on the `Vec` `{list}` of active values has no derivative rule: a `Vec` of active values is pushed onto (`{list}.push(x)`, `{list}.extend(items)`, `{list}.extend_from_slice(&other)`, `{list}.append(&mut other)`), resized (`{list}.resize(n, x)`, `{list}.fill(x)`), popped (`{list}.pop().unwrap()`, `while let Some(x) = {list}.pop()`), removed from (`{list}.remove(i)`, `{list}.swap_remove(i)`), inserted into (`{list}.insert(i, x)`), truncated (`{list}.truncate(n)`, `{list}.clear()`), split (`{list}.split_off(i)`), sorted (`{list}.sort_by(|a, b| a.total_cmp(b))`), reversed (`{list}.reverse()`), swapped in (`{list}.swap(i, j)`), rotated (`{list}.rotate_left(k)`, `{list}.rotate_right(k)`), filtered (`{list}.retain(|x| ..)`, `{list}.dedup()`, `{list}.dedup_by(|a, b| ..)`), written by element (`{list}[i] = x`), read by index (`{list}[i]`, `{list}.last().unwrap()`) and iterated (`for x in &{list}`, `{list}.iter()`, `{list}.drain(..)`, `{list}.drain(a..b)`)"),
                );
                None
            }
            _ => {
                let receiver_active = !self.active_mentions(&m.receiver).is_empty();
                let subject = if receiver_active {
                    "an active value"
                } else {
                    "active arguments"
                };
                self.errors.at(
                    &m.method,
                    format!(
                        "the method `{name}` on {subject} has no derivative rule: supported methods are {}, and iterator chains such as `x.iter().map(..).sum()`; wrap the value in `ad::stop_gradient(..)` if no derivative should flow, or write the computation as a function with a hand-written `_vjp` and `_jvp`",
                        ops::supported_methods()
                    ),
                );
                None
            }
        }
    }

    pub(super) fn mapv(
        &mut self,
        m: &syn::ExprMethodCall,
        f: &Expr,
        span: Span,
        e: &Expr,
    ) -> Option<Operand> {
        match f {
            Expr::Path(p) if p.qself.is_none() => {
                let segs: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                let func = match segs.as_slice() {
                    [ty, name] if self.float_types.contains(ty) => ops::unary(name),
                    _ => None,
                };
                let Some(func) = func else {
                    // `mapv(g)` with a function of the user's: `mapv(|v| g(v))`,
                    // a call in a closure.
                    let closure: Expr = syn::parse_quote_spanned!(f.span()=> |v| #f(v));
                    return self.mapv(m, &closure, span, e);
                };
                let a = self.expr(&m.receiver)?;
                Some(self.op_or_constant(Op::Unary(func, a), span, e))
            }
            Expr::Closure(c) => {
                let param = match c.inputs.iter().collect::<Vec<_>>().as_slice() {
                    [Pat::Ident(p)] => p.ident.clone(),
                    [Pat::Wild(w)] => Ident::new("__unused", w.span()),
                    [Pat::Type(pt)] => {
                        match &*pt.pat {
                            Pat::Ident(p) => p.ident.clone(),
                            other => {
                                self.errors.at(other, "a `mapv` closure takes one parameter bound to a name: `|v| ...`");
                                return None;
                            }
                        }
                    }
                    _ => {
                        self.errors.at(
                            &c.inputs,
                            "a `mapv` closure takes one parameter bound to a name: `|v| ...`",
                        );
                        return None;
                    }
                };
                let a = self.expr(&m.receiver)?;
                let (source, _) = self.renamed(f);
                let (param, body) = self.closure_body(&param, &c.body)?;
                let source = source.to_token_stream();
                let captures = crate::compiler::ir::reads_outside(&body, param)
                    .into_iter()
                    .map(Operand::Var)
                    .collect();
                Some(self.op_or_constant(
                    Op::Mapv(
                        a,
                        Box::new(Closure {
                            source,
                            param,
                            body,
                            captures,
                        }),
                    ),
                    span,
                    e,
                ))
            }
            other => {
                self.errors.at(other, "`mapv` is differentiated with a path such as `f64::tanh` or a closure `|v| ...`");
                None
            }
        }
    }

    /// Lowers a `mapv` closure's body with its parameter active.
    pub(super) fn closure_body(&mut self, param: &Ident, body: &Expr) -> Option<(VarId, Body)> {
        let saved_env = self.env.clone();
        let saved_stmts = std::mem::take(&mut self.stmts);
        self.block_serial += 1;
        let v = VarId(self.vars.len());
        let ident = self.fresh(&param.to_string().replace("__unused", "v"));
        self.vars.push(VarInfo {
            ident,
            span: param.span(),
            is_view: false,
        });
        if param != "__unused" {
            self.env.insert(param.to_string(), Binding::Active(v));
        }
        let result = match body {
            Expr::Block(b) => self.block(&b.block.stmts, b.span()),
            e => self.expr(e).unwrap_or_else(|| self.poison()),
        };
        let stmts = std::mem::replace(&mut self.stmts, saved_stmts);
        let stmts = self.hoist_invariants(stmts, v);
        self.block_serial += 1;
        self.env = saved_env;
        Some((v, Body { stmts, result }))
    }

    /// Moves what a closure computes from the enclosing body alone out of
    /// it, to before the `mapv`: constants (`k` in `|v| (v * k).sin()`),
    /// and operations on the body's values (`y[0]`, `s * s`, `p.scale`). The closure's
    /// derivative runs in the reverse sweep, after the body has gone on, and
    /// must see the values the closure saw; an element read moved out makes
    /// a captured array a captured scalar; and the work is done once rather
    /// than per element. What reads the closure's own variables (its
    /// parameter, its values, anything after an inactive `let` or a branch
    /// of its own) stays.
    fn hoist_invariants(&mut self, stmts: Vec<Stmt>, param: VarId) -> Vec<Stmt> {
        fn mentions(tokens: &proc_macro2::TokenStream, own: &HashSet<String>) -> bool {
            !scan::token_names(tokens).is_disjoint(own)
        }
        let mut own_vars: HashSet<VarId> = HashSet::from([param]);
        let mut own: HashSet<String> = HashSet::from([self.vars[param.0].ident.to_string()]);
        let mut kept = Vec::new();
        let mut inner_bindings = false;
        for mut stmt in stmts {
            if let Stmt::If(_) | Stmt::Loop(_) = stmt {
                self.hoist_field_reads(&mut stmt, param);
            }
            let invariant = matches!(&stmt, Stmt::Inst(i) if is_field_read_of_outer(i, param))
                || !inner_bindings
                    && match &stmt {
                        Stmt::Const { expr, .. } => !mentions(expr, &own),
                        Stmt::Inst(inst) => {
                            let outer = |o: &Operand| match o {
                                Operand::Var(v) => !own_vars.contains(v),
                                Operand::Const(c) => !mentions(&c.tokens, &own),
                            };
                            // Plain operations; a call (which may cost more
                            // than it saves) stays.
                            let movable = matches!(
                                inst.op,
                                Op::Index(..)
                                    | Op::Powi(..)
                                    | Op::Place(..)
                                    | Op::Arith(..)
                                    | Op::Binary(..)
                                    | Op::Unary(..)
                                    | Op::Neg(..)
                                    | Op::MulAdd(..)
                                    | Op::Cast(..)
                                    | Op::Reduce(..)
                                    | Op::Dot(..)
                                    | Op::Transpose(..)
                                    | Op::View(..)
                                    | Op::ToOwned(..)
                            );
                            movable
                                && inst.op.operands().into_iter().all(outer)
                                && inst
                                    .op
                                    .inline_tokens()
                                    .into_iter()
                                    .all(|t| !mentions(t, &own))
                        }
                        _ => false,
                    };
            if invariant {
                self.stmts.push(stmt);
                continue;
            }
            match &stmt {
                Stmt::Const { ident, .. } => {
                    own.insert(ident.to_string());
                }
                Stmt::Inst(inst) => {
                    own_vars.insert(inst.dest);
                    own.insert(self.vars[inst.dest.0].ident.to_string());
                }
                _ => inner_bindings = true,
            }
            kept.push(stmt);
        }
        kept
    }

    /// Moves the field reads of outer values (`m.slope` in `|v| if v > 0.0
    /// { v } else { m.slope * v }`) out of a closure's branches and loops,
    /// to before the `mapv`: reading a field cannot fail, and the closure
    /// then captures the field rather than the whole struct.
    fn hoist_field_reads(&mut self, stmt: &mut Stmt, param: VarId) {
        let blocks: Vec<&mut Vec<Stmt>> = match stmt {
            Stmt::If(i) => vec![&mut i.then, &mut i.els],
            Stmt::Loop(l) => vec![&mut l.body],
            _ => return,
        };
        for block in blocks {
            let mut kept = Vec::new();
            for mut s in std::mem::take(block) {
                match &s {
                    Stmt::Inst(i) if is_field_read_of_outer(i, param) => self.stmts.push(s),
                    _ => {
                        self.hoist_field_reads(&mut s, param);
                        kept.push(s);
                    }
                }
            }
            *block = kept;
        }
    }

    pub(super) fn call(&mut self, c: &syn::ExprCall, e: &Expr) -> Option<Operand> {
        let Expr::Path(func) = &*c.func else {
            self.errors.at(&c.func, "only calls of named functions can be differentiated: give the function a name and `#[differentiable]`");
            return None;
        };
        let segs: Vec<String> = func
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let args: Vec<&Expr> = c.args.iter().collect();
        if let Some(inlined) = self.inlined_call(c) {
            return self.expr(&inlined.ok()?);
        }
        if segs.last().is_some_and(|s| s == "stop_gradient") {
            return Some(self.inactive_result(e));
        }
        // `rules::some_of(&p.bias)`, made by `option_field_tested`.
        if let ([.., private, rules, some_of], [place]) = (segs.as_slice(), args.as_slice()) {
            if (private.as_str(), rules.as_str(), some_of.as_str())
                == ("__private", "rules", "some_of")
            {
                let place = self.expr(place)?;
                return Some(self.op_or_constant(Op::SomeOf(place), e.span(), e));
            }
        }
        if let [ty, name] = segs.as_slice() {
            // `f64::exp(x)`, `F::exp(x)`; but `F::one()` is a constant.
            if ty == "f64"
                || ty == "f32"
                || self.float_types.contains(ty) && ops::is_scalar_method(name)
            {
                return self.scalar_path_call(name, &args, c, e);
            }
        }
        if let (Some("from_shape_fn"), [shape, Expr::Closure(f)]) =
            (segs.last().map(String::as_str), args.as_slice())
        {
            let filled = self.filled_by_shape_fn(shape, f, c.func.span())?;
            return self.expr(&filled);
        }
        // `Array1::from(vec![a, b])`, `Array::from_vec(vec![a, b])`: the
        // vector's items, stacked.
        if let (Some("from" | "from_vec"), [list]) =
            (segs.last().map(String::as_str), args.as_slice())
        {
            if self.names_vec_local(list) {
                let list = self.expr(list)?;
                return Some(self.op_or_constant(Op::FromList(list), e.span(), e));
            }
            // An instance of a bag (`xs: &[Vec<f64>]`), which reads as a
            // 1-D array: that array, owned.
            if let Some(item) = self.bag_item(list) {
                let owned: Expr = syn::parse_quote_spanned!(list.span()=> #item.to_owned());
                return self.expr(&owned);
            }
            if matches!(list, Expr::MethodCall(_))
                && super::stmt::makes_vec(list)
                && self.carries_derivative(list)
            {
                // `Array1::from(x.to_vec())`: the list bound to a name first.
                let func = &c.func;
                let named: Expr = syn::parse_quote_spanned!(list.span()=> {
                    let __ad_list = #list;
                    #func(__ad_list)
                });
                return self.expr(&named);
            }
        }
        if let (Some("from" | "from_vec"), [Expr::Macro(m)]) =
            (segs.last().map(String::as_str), args.as_slice())
        {
            let array_type =
                segs.len() == 2 && matches!(segs[0].as_str(), "Array1" | "Array2" | "Array");
            if array_type && m.mac.path.is_ident("vec") {
                return self.stack(m, e, segs[0] != "Array1");
            }
        }
        if let (Some(name @ ("concatenate" | "stack")), [axis, parts]) =
            (segs.last().map(String::as_str), args.as_slice())
        {
            let parts: Vec<&Expr> = match super::strip_refs(parts) {
                Expr::Array(a) => a.elems.iter().collect(),
                other => {
                    self.errors.at(
                        other,
                        format!("write the parts `{name}` joins out in the call, as an array of views: `&[a.view(), b.view()]`"),
                    );
                    return None;
                }
            };
            return self.join(axis, &parts, name == "stack", e);
        }
        // ndarray's other constructors from active items, as the forms
        // above: `Array1::from_iter(chain)` collects the chain,
        // `Array2::from_shape_vec(shape, list)` reshapes `Array1::from(list)`.
        let array_type = segs.len() == 2 && segs[0].starts_with("Array");
        match (segs.last().map(String::as_str), args.as_slice()) {
            (Some("from_iter"), [items]) if array_type && self.carries_derivative(items) => {
                let mut collected: syn::ExprMethodCall = syn::parse_quote_spanned!(c.func.span()=>
                    items.collect::<::ad::ndarray::Array1<_>>()
                );
                // The chain itself as the receiver (not in parentheses).
                collected.receiver = Box::new((*items).clone());
                return self.expr(&Expr::MethodCall(collected));
            }
            (Some("from_shape_vec"), [shape, list])
                if array_type && self.carries_derivative(list) =>
            {
                let reshaped: Expr = syn::parse_quote_spanned!(c.func.span()=>
                    ::ad::ndarray::Array1::from(#list).into_shape_with_order(#shape)
                );
                return self.expr(&reshaped);
            }
            _ => {}
        }
        if let (Some("from_elem"), [shape, elem]) =
            (segs.last().map(String::as_str), args.as_slice())
        {
            let shape = self.inactive_arg(shape, "the shape of `from_elem`");
            let elem = self.expr(elem);
            return Some(self.op_or_constant(Op::FromElem(shape?, elem?), e.span(), e));
        }
        let lowered = self.call_args(&args)?;
        let callee = Callee::Path(func.clone());
        Some(self.op_or_constant(Op::Call(Box::new(callee), lowered), e.span(), e))
    }

    /// Whether `e` is a struct of the user's, active: a struct parameter,
    /// a field of one (`m.l1`, `self.l1`), an element of a `Vec` field or of
    /// a slice of structs (`m.layers[i]`), or a local bound to such a place
    /// (`let layer = &m.layers[i];`, `for layer in &m.layers`). Its fields
    /// may be arrays too: a method unknown to the macro on one of those is
    /// a method-not-found error from rustc, at the method's name.
    fn is_struct_place(&self, e: &Expr) -> bool {
        match e {
            Expr::Paren(p) => self.is_struct_place(&p.expr),
            Expr::Reference(r) => self.is_struct_place(&r.expr),
            Expr::Field(f) => self.is_struct_place(&f.base),
            Expr::Index(i) => {
                matches!(&*i.expr, Expr::Field(_)) && self.is_struct_place(&i.expr)
                    || self.sequence_named(&i.expr).is_some_and(|s| s.of_places)
            }
            Expr::Path(p) => {
                let Some(name) = p.path.get_ident().map(|i| i.to_string()) else {
                    return false;
                };
                match self.env.get(&name) {
                    Some(Binding::Active(v)) => {
                        self.struct_params.contains(&name) || self.places.contains_key(v)
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// The arguments of a call of a differentiable function: active ones
    /// lowered, inactive ones as written (or bound to a constant of their
    /// own where they read the body's values). `None` after an error.
    fn call_args(&mut self, args: &[&Expr]) -> Option<Vec<CallArg>> {
        let mut lowered = Vec::new();
        let mut ok = true;
        for arg in args {
            let (inner, by_ref) = match arg {
                Expr::Reference(r) if r.mutability.is_none() => (&*r.expr, true),
                other => (*other, false),
            };
            let (source, _) = self.renamed(arg);
            let inactive = self.active_mentions(inner).is_empty();
            // A reference to a computed constant (`&(x * 0.5)`) is to a
            // local: a pullback may hold the borrow past the statement.
            let bound = inactive && by_ref && !super::expr::is_place(inner);
            let operand = if bound {
                self.constant(inner)
            } else if inactive {
                Operand::Const(Const::opaque(source.to_token_stream()))
            } else {
                match self.expr(inner) {
                    Some(o) => o,
                    None => {
                        ok = false;
                        continue;
                    }
                }
            };
            // An inactive value computed from active ones (`v[k % a.len()]`)
            // is bound to a constant of its own, which the reverse sweep
            // saves where it recomputes the call: pass that, not the source.
            let source = match &operand {
                Operand::Const(c) if bound || !inactive => {
                    let tokens = &c.tokens;
                    if by_ref {
                        quote::quote!(&#tokens)
                    } else {
                        quote::quote!(#tokens)
                    }
                }
                _ => source.to_token_stream(),
            };
            lowered.push(CallArg {
                operand,
                by_ref,
                source,
                local: bound || self.mentions_locals(inner),
            });
        }
        ok.then_some(lowered)
    }

    /// `f64::exp(x)`, `f64::max(a, b)`: the method with its receiver first.
    pub(super) fn scalar_path_call(
        &mut self,
        name: &str,
        args: &[&Expr],
        c: &syn::ExprCall,
        e: &Expr,
    ) -> Option<Operand> {
        let Some((receiver, rest)) = args.split_first() else {
            self.errors.at(c, format!("`{name}` needs its argument"));
            return None;
        };
        let method = Ident::new(name, c.func.span());
        let rest = rest.iter();
        let call: syn::ExprMethodCall = syn::parse_quote!((#receiver).#method(#(#rest),*));
        if ops::INACTIVE.contains(&name) {
            return Some(self.inactive_result(e));
        }
        self.method(&call, e)
    }
}

/// `place.f.g(%v)` of a variable defined before the closure whose
/// parameter is `param` (variables are numbered in the order they are
/// made): a read of named fields only, no index.
fn is_field_read_of_outer(inst: &Inst, param: VarId) -> bool {
    match &inst.op {
        Op::Place(Operand::Var(v), path) => {
            v.0 < param.0
                && path.clone().into_iter().all(|t| {
                    matches!(
                        t,
                        proc_macro2::TokenTree::Punct(_) | proc_macro2::TokenTree::Ident(_)
                    )
                })
        }
        _ => false,
    }
}
