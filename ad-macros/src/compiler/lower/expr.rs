//! Lowering expressions: operators, casts, indexing, and the split between
//! values that carry a derivative and constants.

use proc_macro2::Span;
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, UnOp};

use super::*;
use crate::compiler::ir::{Arith, Const, Inst, Op, Operand, Stmt, VarId, VarInfo};
use crate::compiler::{ops, scan};

impl Lowerer<'_> {
    // ---- expressions -------------------------------------------------------

    /// An instruction for `op`, or, when every operand turned out inactive
    /// (`ad::stop_gradient(x) * 2.0`), the user's expression `e` as a constant.
    pub(super) fn op_or_constant(&mut self, op: Op, span: Span, e: &Expr) -> Operand {
        if op.var_operands().is_empty() {
            return self.inactive_result(e);
        }
        self.inst(op, span)
    }

    pub(super) fn inst(&mut self, op: Op, span: Span) -> Operand {
        let dest = VarId(self.vars.len());
        if let Op::Place(Operand::Var(root), _) = &op {
            if self.unread_parts.contains(root) {
                self.errors.at_span(
                    span,
                    "a part of a value that a loop carries, or of a reference a branch chooses (a tuple's item, a struct's field), is not read yet: bind its parts to names of their own where it is made (`let (m, v) = stats(x);`, `let w = &m.layers[1].w;`) and let the loop carry, or the branch choose, those",
                );
            }
        }
        if let Op::Place(root, path) = &op {
            // Its indices must mean the same wherever a field of it is read.
            let names = scan::token_names(path);
            if names.is_disjoint(&self.body_assigned) {
                self.places.insert(dest, (root.clone(), path.clone()));
            }
        }
        let ident = self.fresh_numbered("t", |s| &mut s.temps);
        let is_view = op.makes_view()
            || matches!(&op, Op::Unwrap(Operand::Var(v), _) if self.vars[v.0].is_view);
        self.vars.push(VarInfo {
            ident,
            span,
            is_view,
        });
        self.stmts.push(Stmt::Inst(Inst {
            dest,
            op,
            span,
            ty: None,
        }));
        Operand::Var(dest)
    }

    /// An expression that mentions no active value.
    pub(super) fn constant(&mut self, e: &Expr) -> Operand {
        let e = strip_refs(e);
        let literal = self.is_literal(e);
        let scalar = self.is_scalar(e);
        let (renamed, _) = self.renamed(e);
        // A name the body assigns (in a loop, or anywhere: a later `s += 1.0`
        // must not change what an earlier product's pullback reads) is
        // read once, here, into a constant of its own.
        let changes = self.changes_in_loop(e) || self.reads_assigned(e);
        let single_name = matches!(&renamed, Expr::Path(p)
            if p.qself.is_none() && p.path.segments.len() == 1);
        // A place (`bag[i]`, `data.rows[k]`) is used where it is, as the
        // user's code does: bound to a local it would move out of its
        // container (an array in a slice).
        if (literal || single_name || is_place(&renamed)) && !changes {
            return Operand::Const(Const {
                tokens: renamed.to_token_stream(),
                literal,
                scalar,
            });
        }
        let expr = if self.views_a_local(e) {
            // A record may keep the constant beyond the block of the local
            // it would borrow (`m.diag()` in a branch), and a pullback
            // closure beyond the function; a clone of the view would still
            // borrow it. The copy also keeps the value a later assignment
            // of the local would change.
            let view = super::sources::atom(renamed.clone());
            quote::quote!(#view.to_owned())
        } else if changes && !literal && names_a_place(&renamed) {
            // An array stays usable under its name. Any other expression
            // makes a value of its own, which the constant takes.
            quote::quote!(::core::clone::Clone::clone(&(#renamed)))
        } else {
            renamed.to_token_stream()
        };
        let local = self.recomputable(e);
        let ident = self.fresh_numbered("c", |s| &mut s.consts);
        self.stmts.push(Stmt::Const {
            ident: ident.clone(),
            expr,
            local,
        });
        Operand::Const(Const {
            tokens: ident.to_token_stream(),
            literal,
            scalar,
        })
    }

    /// Whether `e` is a view (`m.diag()`, `m.row(i)`, `m.t()`) of an array
    /// the body binds, which a constant cannot outlive.
    pub(super) fn views_a_local(&self, e: &Expr) -> bool {
        const VIEWS: [&str; 9] = [
            "view",
            "row",
            "column",
            "diag",
            "slice",
            "t",
            "reversed_axes",
            "insert_axis",
            "index_axis",
        ];
        let Expr::MethodCall(m) = e else { return false };
        if !VIEWS.contains(&m.method.to_string().as_str()) {
            return false;
        }
        super::place_root(&m.receiver, true).is_some_and(|name| self.is_inactive_local(name))
    }

    fn is_inactive_local(&self, name: &Ident) -> bool {
        matches!(
            self.env.get(&name.to_string()),
            Some(Binding::Const { param: false, .. })
        )
    }

    /// Whether an iterator borrows an inactive array or list the body binds
    /// (`table.iter()`, `&rows`, `a.iter().zip(table.iter())`), so its
    /// items may not outlive the body.
    pub(super) fn iterates_a_local(&self, e: &Expr) -> bool {
        match e {
            Expr::MethodCall(m) => {
                self.iterates_a_local(&m.receiver)
                    || matches!(m.method.to_string().as_str(), "zip" | "chain")
                        && m.args.iter().any(|a| self.iterates_a_local(a))
            }
            Expr::Call(c) => c.args.iter().any(|a| self.iterates_a_local(a)),
            e => super::place_root(e, false).is_some_and(|name| self.is_inactive_local(name)),
        }
    }

    /// An inactive value computed from active ones (`x.len()`, `a < b`,
    /// `ad::stop_gradient(h)`): kept as written with active names renamed.
    pub(super) fn inactive_result(&mut self, e: &Expr) -> Operand {
        // A reference (`&c[x.len() - 1 - k]`, a chain's item) is taken by
        // value, as `constant` takes it, so that it joins an active value
        // in a phi: a copy of a place, else the value.
        let value = strip_refs(e);
        let (renamed, _) = self.renamed(value);
        let renamed: Expr = if !std::ptr::eq(value, e) && names_a_place(&renamed) {
            syn::parse_quote!(::core::clone::Clone::clone(&(#renamed)))
        } else {
            renamed
        };
        let ident = self.fresh_numbered("c", |s| &mut s.consts);
        // Reads active values (`x.len()`, `stop_gradient(h)`): recomputed
        // by a pullback unless a variable it reads changes afterwards, or
        // is a value of the body's, which an operation may have taken
        // over in place by then (`h - stop_gradient(h.clone())`); the
        // parameters it borrows stay.
        let local =
            !self.reads_assigned(e) && self.reads_only_borrowed_params(e) && !self.calls_closure(e);
        self.stmts.push(Stmt::Const {
            ident: ident.clone(),
            expr: renamed.to_token_stream(),
            local,
        });
        Operand::Const(Const {
            tokens: ident.to_token_stream(),
            literal: false,
            scalar: self.is_scalar(e),
        })
    }

    /// An unsuffixed float literal, or arithmetic on such literals and names
    /// bound to them: its type comes from the active operand beside it.
    pub(super) fn is_literal(&self, e: &Expr) -> bool {
        match e {
            Expr::Lit(l) => match &l.lit {
                syn::Lit::Float(f) => f.suffix().is_empty(),
                syn::Lit::Int(i) => i.suffix().is_empty(),
                _ => false,
            },
            Expr::Paren(p) => self.is_literal(&p.expr),
            Expr::Group(g) => self.is_literal(&g.expr),
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => self.is_literal(&u.expr),
            Expr::Binary(b)
                if matches!(
                    b.op,
                    BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_)
                ) =>
            {
                self.is_literal(&b.left) && self.is_literal(&b.right)
            }
            Expr::Path(p) => p.path.get_ident().is_some_and(|i| {
                matches!(
                    self.env.get(&i.to_string()),
                    Some(Binding::Const { literal: true, .. })
                )
            }),
            _ => false,
        }
    }

    /// Whether `e` is known to be one float, from its syntax: a literal, a
    /// name bound to one, a cast to a float type, a float type's function
    /// or constant (`F::of(x)`, `F::zero()`, `f64::MAX`), or arithmetic and
    /// scalar functions of such values.
    pub(super) fn is_scalar(&self, e: &Expr) -> bool {
        const CONSTRUCTORS: &[&str] = &[
            "of",
            "zero",
            "one",
            "infinity",
            "neg_infinity",
            "nan",
            "epsilon",
            "max_value",
            "min_value",
            "min_positive_value",
        ];
        let float_path = |p: &syn::Path| -> Option<String> {
            let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            match segs.as_slice() {
                [ty, name] if self.float_types.contains(ty) => Some(name.clone()),
                _ => None,
            }
        };
        match e {
            _ if self.is_literal(e) => true,
            // `0.0f64`, `1f32`.
            Expr::Lit(l) => match &l.lit {
                syn::Lit::Float(f) => matches!(f.suffix(), "f64" | "f32"),
                syn::Lit::Int(i) => matches!(i.suffix(), "f64" | "f32"),
                _ => false,
            },
            Expr::Paren(p) => self.is_scalar(&p.expr),
            Expr::Group(g) => self.is_scalar(&g.expr),
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => self.is_scalar(&u.expr),
            Expr::Binary(b)
                if matches!(
                    b.op,
                    BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_)
                ) =>
            {
                self.is_scalar(&b.left) && self.is_scalar(&b.right)
            }
            Expr::Cast(c) => self.is_float_type(&c.ty),
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => float_path(&p.path).is_some_and(|name| {
                    CONSTRUCTORS.contains(&name.as_str()) || ops::returns_float(&name)
                }),
                _ => false,
            },
            Expr::MethodCall(m) => {
                ops::returns_float(&m.method.to_string()) && self.is_scalar(&m.receiver)
            }
            Expr::Path(p) => {
                float_path(&p.path).is_some_and(|name| name.chars().all(|c| !c.is_lowercase()))
                    || p.path.get_ident().is_some_and(|i| {
                        matches!(
                            self.env.get(&i.to_string()),
                            Some(Binding::Const { scalar: true, .. })
                        )
                    })
            }
            _ => false,
        }
    }

    /// `f64`, `f32`, or a type parameter bounded by `Float`.
    pub(super) fn is_float_type(&self, ty: &syn::Type) -> bool {
        matches!(ty, syn::Type::Path(p) if p.qself.is_none()
            && p.path.get_ident().is_some_and(|i| self.float_types.contains(&i.to_string())))
    }

    /// Whether `e`'s value can carry a derivative: it reads an active value
    /// through something other than a shape query, a comparison, an integer
    /// cast or `ad::stop_gradient`. Unsupported constructs count as carrying
    /// one, so lowering reports them.
    pub(super) fn carries_derivative(&self, e: &Expr) -> bool {
        if self.active_mentions(e).is_empty() {
            return false;
        }
        match e {
            Expr::Paren(p) => self.carries_derivative(&p.expr),
            Expr::Group(g) => self.carries_derivative(&g.expr),
            Expr::Reference(r) => self.carries_derivative(&r.expr),
            Expr::Binary(b) => match b.op {
                BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) => {
                    self.carries_derivative(&b.left) || self.carries_derivative(&b.right)
                }
                op if yields_bool(&op) => false,
                // `%` and bit operations carry a derivative only if an
                // operand does (then lowering reports them): `i % x.len()`
                // is an integer.
                _ => self.carries_derivative(&b.left) || self.carries_derivative(&b.right),
            },
            Expr::Unary(u) => match u.op {
                UnOp::Not(_) => false,
                _ => self.carries_derivative(&u.expr),
            },
            Expr::Cast(c) => !is_integer_type(&c.ty) && self.carries_derivative(&c.expr),
            // A call is inactive when nothing it is given carries a derivative
            // (`Array1::zeros(x.len())`).
            Expr::MethodCall(m) => {
                !ops::INACTIVE.contains(&m.method.to_string().as_str())
                    && (self.carries_derivative(&m.receiver)
                        || m.args.iter().any(|a| self.carries_derivative(a)))
            }
            Expr::Call(c) => {
                let stop = matches!(&*c.func, Expr::Path(p)
                    if p.path.segments.last().is_some_and(|s| s.ident == "stop_gradient"));
                !stop
                    && (self.is_active_closure(&c.func)
                        || c.args.iter().any(|a| self.carries_derivative(a)))
            }
            Expr::Index(i) => self.carries_derivative(&i.expr),
            Expr::Array(a) => a.elems.iter().any(|e| self.carries_derivative(e)),
            Expr::Tuple(t) => t.elems.iter().any(|e| self.carries_derivative(e)),
            Expr::Range(_) => false,
            Expr::Struct(s) => s.fields.iter().any(|f| self.carries_derivative(&f.expr)),
            Expr::Field(f) => self.carries_derivative(&f.base),
            // The arms give the value; patterns and guards test, but a
            // pattern binds parts of the scrutinee (`Some(v)` of a pop), so
            // an active scrutinee counts too (lowering reports it unless it
            // is a pop).
            Expr::Match(m) => {
                self.carries_derivative(&m.expr)
                    || m.arms.iter().any(|a| self.carries_derivative(&a.body))
            }
            Expr::Repeat(r) => self.carries_derivative(&r.expr),
            // `s![..]` builds slice information, never a float; `vec![..]`
            // carries what its items do (`vec![0.0; x.len()]` none).
            Expr::Macro(m) => match m.mac.path.segments.last().map(|s| s.ident.to_string()) {
                Some(name) if name == "s" => false,
                Some(name) if name == "vec" => {
                    let tokens = &m.mac.tokens;
                    syn::parse2::<Expr>(quote!([#tokens]))
                        .map_or(true, |items| self.carries_derivative(&items))
                }
                _ => true,
            },
            _ => true,
        }
    }

    /// Lowers `e` where its value is bound, assigned or yielded: a field
    /// read (`let mut acc = p.bias;`, or an element of one, `p.w[i]`, or
    /// `*g` of a reference to one) is a reference to the place, and the
    /// binding gets its own copy, as in Rust.
    pub(super) fn value_expr(&mut self, e: &Expr) -> Option<Operand> {
        let mut inner = e;
        while let Expr::Paren(p) = inner {
            inner = &p.expr;
        }
        let value = self.expr(e)?;
        match value {
            Operand::Var(v)
                if matches!(inner, Expr::Field(_))
                    || matches!(inner, Expr::Index(_)) && self.is_element_place(v)
                    // `*g` of a reference into a place (`if let Some(g) =
                    // &p.gain`): a copy, as in Rust.
                    || matches!(inner, Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)))
                        && self.vars[v.0].is_view =>
            {
                Some(self.inst(Op::ToOwned(Operand::Var(v)), e.span()))
            }
            other => Some(other),
        }
    }

    /// Whether `v` is an element of a field or a slice parameter read in
    /// place (`&p.w[i]`).
    fn is_element_place(&self, v: VarId) -> bool {
        self.stmts.iter().rev().any(|s| {
            matches!(s, Stmt::Inst(i) if i.dest == v
                && matches!(&i.op, Op::Place(_, path) if super::super::ir::split_place(path).1.is_some()))
        })
    }

    /// Lowers `e` to an operand; `None` after reporting an error.
    pub(super) fn expr(&mut self, e: &Expr) -> Option<Operand> {
        let hits = self.active_mentions(e);
        let Some(first) = hits.first().cloned() else {
            return Some(self.constant(e));
        };
        if !self.carries_derivative(e) {
            return Some(self.inactive_result(e));
        }
        let span = e.span();
        match e {
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            // `(m, v)`: several values as one, as a function returns them.
            Expr::Tuple(t) => {
                let items: Option<Vec<Operand>> = t.elems.iter().map(|i| self.expr(i)).collect();
                Some(self.op_or_constant(Op::Tuple(items?), span, e))
            }
            Expr::Reference(r) if r.mutability.is_none() => self.expr(&r.expr),
            Expr::Path(p) => {
                let name = p.path.get_ident().map(|i| i.to_string());
                match name.and_then(|n| self.env.get(&n).cloned()) {
                    Some(Binding::Active(v)) => Some(Operand::Var(v)),
                    _ => Some(self.constant(e)),
                }
            }
            Expr::Binary(b) => {
                let op = match b.op {
                    BinOp::Add(_) => Arith::Add,
                    BinOp::Sub(_) => Arith::Sub,
                    BinOp::Mul(_) => Arith::Mul,
                    BinOp::Div(_) => Arith::Div,
                    op if yields_bool(&op) => return Some(self.inactive_result(e)),
                    other => {
                        let op = other.to_token_stream();
                        self.errors.at(
                            e,
                            format!(
                                "the operator `{op}` on the active value `{first}` has no derivative rule: use `+ - * /`, or wrap the value in `ad::stop_gradient(..)` if no derivative should flow"
                            ),
                        );
                        return None;
                    }
                };
                let l = self.expr(&b.left);
                let r = self.expr(&b.right);
                Some(self.op_or_constant(Op::Arith(op, l?, r?), span, e))
            }
            Expr::Unary(u) => match u.op {
                UnOp::Neg(_) => {
                    let a = self.expr(&u.expr)?;
                    Some(self.op_or_constant(Op::Neg(a), span, e))
                }
                UnOp::Deref(_) => self.expr(&u.expr),
                _ => Some(self.inactive_result(e)),
            },
            Expr::Cast(c) => {
                if is_float_type(&c.ty) {
                    let a = self.expr(&c.expr)?;
                    Some(self.op_or_constant(Op::Cast(a, c.ty.clone()), span, e))
                } else if is_integer_type(&c.ty) {
                    Some(self.inactive_result(e))
                } else {
                    let ty = &c.ty;
                    self.errors.at(
                        e,
                        format!("cannot differentiate a cast of the active value `{first}` to `{}`: cast to `f64` or `f32`", quote!(#ty)),
                    );
                    None
                }
            }
            Expr::MethodCall(m) => match self.option_field_chain(e) {
                Some(chain) => self.expr(&chain),
                None => self.method(m, e),
            },
            Expr::Call(c) => self.call(c, e),
            // A sub-slice of a slice or `Vec` parameter of floats, or of a
            // bag's item: the part of it read as a 1-D view, `x.slice(s![a..b])`,
            // whose cotangent adds into that part of the parameter's.
            Expr::Index(i)
                if matches!(&*i.index, Expr::Range(_))
                    && (self.sequence_named(&i.expr).is_some_and(|s| !s.of_places)
                        || self.bag_item(&i.expr).is_some()) =>
            {
                let (x, range) = (&i.expr, &i.index);
                let part: Expr =
                    syn::parse_quote_spanned!(e.span()=> #x.slice(::ad::ndarray::s![#range]));
                self.expr(&part)
            }
            // Other sub-slices (of a `Vec` local, whose items may be arrays)
            // would be a new kind of value, with a tangent of its own.
            Expr::Index(i) if matches!(&*i.index, Expr::Range(_)) => {
                self.errors.at(
                    e,
                    "a sub-slice `x[a..b]` of a local `Vec` of active values is not a value of its own: index its elements (`x[a + i]`), iterate over them (`x[a..b].iter()`), or hold an array and use `x.slice(s![a..b])`",
                );
                None
            }
            // An element of a struct's field, `p.layers[i]`, or of a
            // parameter holding arrays or structs, `xs[i]`: a place.
            Expr::Index(i) if through_field(&i.expr) || self.in_container(&i.expr) => {
                let (root, path) = self.place_chain(e)?;
                Some(self.op_or_constant(Op::Place(root, path), span, e))
            }
            // An item of a `Vec` local that holds active values.
            Expr::Index(i) if self.names_vec_local(&i.expr) => {
                let base = self.expr(&i.expr);
                let index = self.inactive_arg(&i.index, "an index");
                Some(self.op_or_constant(Op::Item(base?, index?), span, e))
            }
            Expr::Index(i) => {
                let base = self.expr(&i.expr);
                let index = self.inactive_arg(&i.index, "an index");
                let (base, index) = (base?, index?);
                let Operand::Var(array) = base else {
                    return Some(self.op_or_constant(Op::Index(base, index), span, e));
                };
                let key = (array, index.tokens.to_string());
                if let Some(&(value, serial, at)) = self.index_reads.get(&key) {
                    let unchanged = self.stmts[at.min(self.stmts.len())..]
                        .iter()
                        .all(|s| matches!(s, Stmt::Inst(_) | Stmt::Const { .. }));
                    if serial == self.block_serial && at <= self.stmts.len() && unchanged {
                        return Some(Operand::Var(value));
                    }
                }
                let value = self.op_or_constant(Op::Index(base, index), span, e);
                if let Operand::Var(v) = value {
                    self.index_reads
                        .insert(key, (v, self.block_serial, self.stmts.len()));
                }
                Some(value)
            }
            Expr::Closure(c) => {
                self.errors.at(
                    c.or1_token,
                    format!(
                        "this closure captures the active value `{first}`: closures are differentiated as the argument of `mapv` or of an iterator adaptor, or bound with `let` and called; write the computation inline, or make it a `#[differentiable]` function"
                    ),
                );
                None
            }
            Expr::Unsafe(u) => {
                self.errors.at(u.unsafe_token, format!("an `unsafe` block that uses the active value `{first}` cannot be differentiated: move it into a function with a hand-written `_vjp` and `_jvp`"));
                None
            }
            Expr::Macro(m)
                if m.mac
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "array") =>
            {
                self.stack(m, e, true)
            }
            Expr::Macro(m)
                if m.mac
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "concatenate" || s.ident == "stack") =>
            {
                self.joined_by_macro(m, e)
            }
            Expr::Macro(m) if m.mac.path.is_ident("vec") => self.vec_of_items(m, e),
            // `[a, b, c]`: differentiated as the 1-D array `array![a, b,
            // c]`, which is indexed, iterated and reduced the same way.
            Expr::Array(a) if a.elems.iter().any(|i| matches!(i, Expr::Array(_))) => {
                self.errors.at(e, "a fixed-size array of rows of active values is not supported: write the matrix `array![[a, b], [c, d]]` and index it `m[[i, j]]`");
                None
            }
            Expr::Array(a) => {
                let items: Vec<Expr> = a.elems.iter().cloned().collect();
                self.stacked(&items, e)
            }
            Expr::Macro(m) => {
                let path = &m.mac.path;
                self.errors.at(
                    e,
                    format!("the macro `{}!` cannot be differentiated on the active value `{first}`: compute the value with supported operations, or wrap it in `ad::stop_gradient(..)`", quote!(#path)),
                );
                None
            }
            Expr::If(i) => self.lower_if(i),
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => {
                self.lower_loop(e);
                Some(self.unit())
            }
            Expr::Match(m) => self.lower_match(m),
            Expr::Block(b) if b.label.is_none() => Some(
                self.scoped_block(&b.block.stmts)
                    .unwrap_or_else(|| self.unit()),
            ),
            Expr::Block(_) => {
                self.errors.at_span(
                    first_token_span(e),
                    format!("a labelled block inside a closure that involves the active value `{first}` is not supported: move it out of the closure, or remove the label and the `break` out of it"),
                );
                None
            }
            Expr::Field(_) => {
                let (root, path) = self.place_chain(e)?;
                Some(self.op_or_constant(Op::Place(root, path), span, e))
            }
            Expr::Try(t) => {
                self.errors.at(
                    t.question_token,
                    "`?` on an active value is not supported: use `.unwrap()` or `.expect(..)`",
                );
                None
            }
            Expr::Return(r) => {
                self.errors
                    .at(r.return_token, super::exits::RETURN_IN_A_VALUE);
                None
            }
            _ => {
                self.errors.at(e, format!("this expression uses the active value `{first}` in a way `#[differentiable]` cannot differentiate: see the supported syntax in the `ad` docs, or wrap the value in `ad::stop_gradient(..)`"));
                None
            }
        }
    }

    /// An operand that must be inactive (an exponent, an axis, a shape).
    pub(super) fn inactive_arg(&mut self, e: &Expr, what: &str) -> Option<Const> {
        if self.carries_derivative(e) {
            let hit = self.active_mentions(e)[0].clone();
            self.errors.at(
                e,
                format!("{what} must not depend on the active value `{hit}`: compute it from inactive values (integers, shapes), or wrap it in `ad::stop_gradient(..)`"),
            );
            return None;
        }
        match self.expr(e)? {
            Operand::Const(c) => Some(c),
            Operand::Var(_) => {
                unreachable!("an expression that carries no derivative lowers to a constant")
            }
        }
    }
}

impl Lowerer<'_> {
    /// A field path into an active struct, `p.layers[i].w`: the active root
    /// and the path after it (indices lowered as constants).
    fn place_chain(&mut self, e: &Expr) -> Option<(Operand, proc_macro2::TokenStream)> {
        match e {
            Expr::Paren(p) => self.place_chain(&p.expr),
            Expr::Field(f) => {
                let (root, mut path) = self.place_chain(&f.base)?;
                let member = &f.member;
                path.extend(quote!(.#member));
                Some((root, path))
            }
            Expr::Index(i) => {
                let (root, mut path) = self.place_chain(&i.expr)?;
                let index = self.inactive_arg(&i.index, "an index")?;
                let tokens = &index.tokens;
                path.extend(quote!([#tokens]));
                Some((root, path))
            }
            Expr::Path(_) => match self.expr(e)? {
                Operand::Var(v) => Some(
                    self.places
                        .get(&v)
                        .cloned()
                        .unwrap_or((Operand::Var(v), proc_macro2::TokenStream::new())),
                ),
                Operand::Const(_) => None,
            },
            other => {
                self.errors.at(
                    other,
                    "a field of an active value is read from a parameter or local by name (`p.layers[i].w`): bind the value to a name first",
                );
                None
            }
        }
    }
}

impl Lowerer<'_> {
    /// Whether `e` is (an element of) a parameter that holds non-scalars,
    /// still bound to the parameter.
    fn in_container(&self, e: &Expr) -> bool {
        match e {
            Expr::Paren(p) => self.in_container(&p.expr),
            Expr::Index(i) => self.in_container(&i.expr),
            e @ Expr::Path(_) => self.sequence_named(e).is_some_and(|s| s.of_places),
            _ => false,
        }
    }
}

/// Whether `e` reads a field somewhere (`p.layers`, `p.layers[i].w`).
fn through_field(e: &Expr) -> bool {
    match e {
        Expr::Field(_) => true,
        Expr::Index(i) => through_field(&i.expr),
        Expr::Paren(p) => through_field(&p.expr),
        _ => false,
    }
}

/// Comparisons and `&&`/`||`: their value is a `bool`, which carries no
/// derivative whatever the operands.
fn yields_bool(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::Lt(_)
            | BinOp::Le(_)
            | BinOp::Gt(_)
            | BinOp::Ge(_)
            | BinOp::Eq(_)
            | BinOp::Ne(_)
            | BinOp::And(_)
            | BinOp::Or(_)
    )
}

/// Whether `e` reads a value that lives on elsewhere: a place, or
/// anything behind `*`.
fn names_a_place(e: &Expr) -> bool {
    match e {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => true,
        Expr::Paren(p) => names_a_place(&p.expr),
        _ => is_place(e),
    }
}

/// An element or field of a named value: `bag[i]`, `p.data[[i, j]]`.
pub(super) fn is_place(e: &Expr) -> bool {
    match e {
        Expr::Path(p) => p.qself.is_none() && p.path.segments.len() == 1,
        Expr::Index(i) => is_place(&i.expr),
        Expr::Field(f) => is_place(&f.base),
        Expr::Paren(p) => is_place(&p.expr),
        _ => false,
    }
}
