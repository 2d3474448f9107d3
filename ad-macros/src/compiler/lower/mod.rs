//! Lowering: the function body into the IR of `ir.rs`.
//!
//! Each expression that involves an active value becomes one instruction per
//! operation, named after the `let` that binds it; shadowing and reassignment
//! give fresh variables (`h`, `h_1`), and `a += b` becomes `a_1 = a + b`.
//! Code that touches only inactive values is kept as written. Whatever else
//! touches an active value is reported at its span.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Ident, Span, TokenStream};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Expr, Type};

mod call;
mod closures;
mod constructors;
mod control;
mod declarations;
mod drains;
mod exits;
mod expr;
mod in_place;
mod iterators;
mod labels;
mod lists;
mod loop_forms;
mod option_locals;
mod sources;
mod statistics;
mod stmt;
mod tuple_locals;
mod tuples;
mod windows;

use super::errors::Errors;
use super::ir::{Body, Function, Inst, Op, Operand, Stmt, VarId, VarInfo};
use super::scan;
use super::signature::Signature;

#[derive(Clone, PartialEq)]
enum Binding {
    Active(VarId),
    /// An inactive local or parameter; `renamed` when generated code re-bound
    /// the value under a name of its own.
    Const {
        renamed: Option<Ident>,
        literal: bool,
        /// Known to hold one float (`Const::scalar`).
        scalar: bool,
        param: bool,
    },
}

pub struct Lowerer<'a> {
    errors: &'a Errors,
    vars: Vec<VarInfo>,
    env: HashMap<String, Binding>,
    stmts: Vec<Stmt>,
    used_names: HashSet<String>,
    temps: usize,
    consts: usize,
    /// Names a loop analysis supposes active (see `control.rs`).
    assumed_active: HashSet<String>,
    /// Element reads `x[idx]` already made in this block, for reuse while
    /// only instructions and constants follow (nothing that could change
    /// `idx`): (array, index tokens) to (value, block, position).
    index_reads: HashMap<(VarId, String), (VarId, usize, usize)>,
    /// Changes whenever lowering enters or leaves a nested block.
    block_serial: usize,
    /// For each loop being lowered, the names its body assigns: a constant
    /// that reads one differs between iterations, so it is bound where it
    /// is read (and saved for the reverse sweep like any loop-local value).
    loop_assigned: Vec<HashSet<String>>,
    /// The names the body assigns anywhere: a constant that reads one is
    /// kept (captured, saved), never recomputed later by a pullback, which
    /// would see the variable's final value.
    body_assigned: HashSet<String>,
    /// The float types scalar paths may name (`f64::exp`, `F::exp`): `f64`,
    /// `f32` and the function's type parameters bounded by `Float`.
    float_types: Vec<String>,
    /// The place each struct or element read names (`layer` in
    /// `let layer = &net.layers[k];`): a field of it, `layer.w`, is read
    /// from the root as `net.layers[k].w`, whose adjoint the root's has.
    places: HashMap<VarId, (Operand, TokenStream)>,
    /// The active parameters that are bags (`Function::bags`).
    bags: Vec<VarId>,
    /// Active parameters that are slices or `Vec`s, which a `for` loop may
    /// iterate over.
    sequences: Vec<Sequence>,
    /// Names declared in a block, branch or loop body that has ended: a
    /// `let` of one again gets a name of its own (see `stmt.rs`).
    ended_scopes: HashSet<String>,
    /// Locals bound to a `Vec` (`vec![0.0; n]`, `Vec::new()`), which cannot
    /// hold active values yet.
    vec_locals: HashSet<String>,
    /// Active parameters of struct types (`m: &Model`): their methods are
    /// called by method syntax (`m.score(x)` is `m.score_vjp(x)`).
    struct_params: HashSet<String>,
    /// The variables a loop carries, and branches' choices between views:
    /// a field or item of one is not read yet (`expr.rs`).
    unread_parts: HashSet<VarId>,
    /// Closures bound to locals, inlined where they are called on active
    /// values (see `closures.rs`).
    local_closures: HashMap<String, closures::LocalClosure>,
    /// The active parameters taken by reference, which no operation of
    /// the body takes over.
    borrowed_params: HashSet<VarId>,
    /// Values bound to a reference to an element (`let v = &x[k];`),
    /// which generated code holds by value.
    bound_by_reference: HashSet<VarId>,
    /// The array parameters whose types give their number of axes.
    param_ranks: HashMap<String, usize>,
    /// The one float type the signature names, if it names one: the type
    /// of an iterator chain's sum (see `iterators.rs`).
    scalar_type: Option<Ident>,
    /// Names of tuple patterns that nothing reads (`stmt.rs`), by
    /// `leaf_key`: not bound at all.
    unread_leaves: HashSet<usize>,
}

/// An active slice or `Vec` parameter.
struct Sequence {
    name: String,
    var: VarId,
    /// Of arrays or structs (`xs: &[Array1<f64>]`): an element `xs[i]` is a
    /// place, read by reference like a struct's field, not a scalar.
    of_places: bool,
}

/// Lowers the body of `sig`'s function. Errors go to `errors`; the result is
/// only meaningful when there are none.
pub fn lower(sig: &Signature, errors: &Errors) -> Function {
    let mut l = Lowerer {
        errors,
        vars: Vec::new(),
        env: HashMap::new(),
        stmts: Vec::new(),
        used_names: HashSet::new(),
        temps: 0,
        consts: 0,
        assumed_active: HashSet::new(),
        index_reads: HashMap::new(),
        block_serial: 0,
        loop_assigned: Vec::new(),
        body_assigned: HashSet::new(),
        float_types: crate::compiler::signature::float_types(&sig.item.sig.generics),
        places: HashMap::new(),
        bags: Vec::new(),
        sequences: Vec::new(),
        param_ranks: HashMap::new(),
        scalar_type: None,
        bound_by_reference: HashSet::new(),
        borrowed_params: HashSet::new(),
        local_closures: HashMap::new(),
        ended_scopes: HashSet::new(),
        vec_locals: HashSet::new(),
        struct_params: HashSet::new(),
        unread_parts: HashSet::new(),
        unread_leaves: HashSet::new(),
    };
    l.scalar_type = crate::compiler::signature::scalar_type(sig, &l.float_types);
    // Names generated code declares itself (see `primal.rs` and `emit.rs`).
    for name in ["rules", "view", "value", "pullback"] {
        l.reserve(name);
    }
    let mut params = Vec::new();
    for p in &sig.params {
        let Some(ident) = &p.ident else {
            params.push(None);
            for name in scan::pattern_names(&p.pat) {
                l.used_names.insert(name.clone());
                l.env.insert(
                    name,
                    Binding::Const {
                        renamed: None,
                        literal: false,
                        scalar: false,
                        param: true,
                    },
                );
            }
            continue;
        };
        l.reserve(&ident.to_string());
        if p.active {
            let v = VarId(l.vars.len());
            l.vars.push(VarInfo {
                ident: ident.clone(),
                span: ident.span(),
                is_view: false,
            });
            l.env.insert(ident.to_string(), Binding::Active(v));
            params.push(Some(v));
            if matches!(&*p.ty, Type::Reference(_)) {
                l.borrowed_params.insert(v);
            }
            if let Some(rank) = iterators::array_rank(&p.ty) {
                l.param_ranks.insert(ident.to_string(), rank);
            }
            if is_struct_type(&p.ty, &l.float_types) {
                l.struct_params.insert(ident.to_string());
            }
            if let Some(elem) = crate::compiler::signature::sequence_element(&p.ty) {
                let is_float = |ty: &Type| {
                    matches!(ty, Type::Path(t)
                        if t.path.get_ident().is_some_and(|i| l.float_types.contains(&i.to_string())))
                };
                let scalar = is_float(elem);
                if crate::compiler::signature::sequence_element(elem).is_some_and(is_float) {
                    l.bags.push(v);
                }
                l.sequences.push(Sequence {
                    name: ident.to_string(),
                    var: v,
                    of_places: !scalar,
                });
            }
        } else {
            l.env.insert(
                ident.to_string(),
                Binding::Const {
                    renamed: None,
                    literal: false,
                    scalar: false,
                    param: true,
                },
            );
            params.push(None);
        }
    }
    let param_names: Vec<String> = sig
        .params
        .iter()
        .filter_map(|p| p.ident.as_ref().map(Ident::to_string))
        .collect();
    let block = option_locals::split(&sig.item.block, &param_names, &l.float_types);
    let block = tuple_locals::split(&block, &param_names);
    let block = tuples::Tuples::default().body(&block);
    let block = loop_forms::rewrite(&block);
    let block = labels::rewrite(&block);
    let block = exits::Desugar::new().body(&block);
    exits::report_remaining_returns(&block, errors);
    l.body_assigned = control::assignments(&block)
        .into_iter()
        .filter(|(_, _, is_let)| !is_let)
        .map(|(name, _, _)| name)
        .collect();
    let result = l.block(&block.stmts, sig.item.block.span());
    let mut body = Body {
        stmts: std::mem::take(&mut l.stmts),
        result,
    };
    declarations::drop_taken_over(&mut body);
    let scalar_params = sig
        .params
        .iter()
        .zip(&params)
        .filter_map(|(p, v)| match (&*p.ty, v) {
            (Type::Path(t), Some(v)) if t.path.is_ident("f64") || t.path.is_ident("f32") => {
                Some(*v)
            }
            _ => None,
        })
        .collect();
    let mut caller_refs: Vec<VarId> = sig
        .params
        .iter()
        .zip(&params)
        .filter_map(|(p, v)| match (&*p.ty, v) {
            (Type::Reference(_), Some(v)) => Some(*v),
            _ => None,
        })
        .collect();
    add_fields_of(&body.stmts, &mut caller_refs);
    Function {
        name: sig.name().to_string(),
        pullback_lifetime: sig.pullback_lifetime(),
        vars: l.vars,
        params,
        scalar_params,
        caller_refs,
        bags: l.bags,
        body,
    }
}

/// Adds the fields reached from `refs` (`&m.visits` for a parameter
/// `m: &Model`): references into the caller's data too.
fn add_fields_of(stmts: &[Stmt], refs: &mut Vec<VarId>) {
    for stmt in stmts {
        match stmt {
            Stmt::Inst(Inst {
                dest,
                op: Op::Place(Operand::Var(root), _),
                ..
            }) if refs.contains(root) => refs.push(*dest),
            Stmt::If(i) => {
                add_fields_of(&i.then, refs);
                add_fields_of(&i.els, refs);
            }
            Stmt::Loop(l) => add_fields_of(&l.body, refs),
            _ => {}
        }
    }
}

/// The names generated code derives from a variable's (`h_bar`, `h_dot`,
/// the slot `h_carried` of a loop, ...): reserved with it, so no other
/// variable is given one of them.
const SUFFIXES: [&str; 9] = [
    "",
    "_bar",
    "_dot",
    "_pullback",
    "_carried",
    "_carried_dot",
    "_carried_bar",
    "_tape",
    "_branch",
];

impl Lowerer<'_> {
    // ---- names -------------------------------------------------------------

    /// Marks `base` and the adjoint and tangent names derived from it as used.
    pub(super) fn reserve(&mut self, base: &str) {
        for suffix in SUFFIXES {
            self.used_names.insert(format!("{base}{suffix}"));
        }
    }

    pub(super) fn fresh(&mut self, base: &str) -> Ident {
        let base = base.trim_start_matches("r#");
        let taken = |s: &Self, n: &str| {
            SUFFIXES
                .iter()
                .any(|suf| s.used_names.contains(&format!("{n}{suf}")))
        };
        let mut name = base.to_string();
        let mut k = 1;
        while taken(self, &name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.reserve(&name);
        Ident::new(&name, Span::mixed_site())
    }

    pub(super) fn fresh_numbered(
        &mut self,
        prefix: &str,
        counter: fn(&mut Self) -> &mut usize,
    ) -> Ident {
        loop {
            let n = {
                let c = counter(self);
                *c += 1;
                *c
            };
            let name = format!("{prefix}{n}");
            if !self.used_names.contains(&name) {
                self.reserve(&name);
                return Ident::new(&name, Span::mixed_site());
            }
        }
    }

    /// A fresh name for a local of code the macro writes into the body
    /// (an iterator chain's accumulator): spanned like the user's code it
    /// is spliced into, as lowering derives the names of the values bound
    /// to it from this one.
    pub(super) fn fresh_local(&mut self, base: &str, span: Span) -> Ident {
        let fresh = self.fresh_numbered(base, |s| &mut s.consts);
        Ident::new(&fresh.to_string(), span)
    }

    /// The names generated code gives the user's: an active value's, or a
    /// constant's that was bound again under a new name.
    pub(super) fn renames(&self) -> impl scan::Lookup + '_ {
        Bindings {
            lowerer: self,
            active_only: false,
        }
    }

    /// `e` as generated code names things: `renames`, with `*v` read as
    /// `v` where `v` was bound to a reference generated code holds by value.
    /// The second item is the names it mentioned.
    /// Calls of closures that are not emitted are written as their bodies.
    pub(super) fn renamed(&self, e: &Expr) -> (Expr, Vec<Ident>) {
        let inlined;
        let e = if self.calls_hidden_closure(e) {
            inlined = self.hidden_calls_inlined(e);
            &inlined
        } else {
            e
        };
        scan::rename_expr_with_values(e, &self.renames(), &self.reference_names())
    }

    pub(super) fn renamed_stmt(&self, stmt: &syn::Stmt) -> (syn::Stmt, Vec<Ident>) {
        let inlined;
        let stmt = if self.has_hidden_closures() {
            inlined = self.hidden_calls_inlined_in_stmt(stmt);
            &inlined
        } else {
            stmt
        };
        scan::rename_stmt_with_values(stmt, &self.renames(), &self.reference_names())
    }

    fn reference_names(&self) -> impl scan::Values + '_ {
        Bindings {
            lowerer: self,
            active_only: false,
        }
    }

    /// `renames`' active names, with those assumed active and the local
    /// closures that read active values (each counts as one).
    pub(super) fn active_renames(&self) -> impl scan::Lookup + '_ {
        Bindings {
            lowerer: self,
            active_only: true,
        }
    }

    /// The active names `expr` mentions, as written.
    pub(super) fn active_mentions(&self, expr: &Expr) -> Vec<Ident> {
        scan::rename_expr(expr, &self.active_renames()).1
    }

    /// Whether `expr` reads a name an enclosing loop assigns.
    pub(super) fn changes_in_loop(&self, expr: &Expr) -> bool {
        scan::mentions(expr, self.loop_assigned.iter().flatten())
    }

    /// The sequence parameter `e` names, while the name is still bound to it.
    /// `e` when it is an item of a bag, or a copy of one (`inst`,
    /// `inst.clone()`, `inst.to_vec()`, `xs[k]`): the item itself.
    pub(super) fn bag_item<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        match strip_refs(e) {
            Expr::MethodCall(m)
                if m.args.is_empty() && (m.method == "clone" || m.method == "to_vec") =>
            {
                self.bag_item(&m.receiver)
            }
            Expr::Paren(p) => self.bag_item(&p.expr),
            item @ Expr::Index(i) => self
                .sequence_named(&i.expr)
                .is_some_and(|s| self.bags.contains(&s.var))
                .then_some(item),
            item @ Expr::Path(p) => {
                let name = p.path.get_ident()?.to_string();
                let Some(Binding::Active(v)) = self.env.get(&name) else {
                    return None;
                };
                matches!(self.places.get(v), Some((Operand::Var(root), _)) if self.bags.contains(root))
                    .then_some(item)
            }
            _ => None,
        }
    }

    fn sequence_named(&self, e: &Expr) -> Option<&Sequence> {
        let Expr::Path(p) = e else { return None };
        let name = p.path.get_ident()?.to_string();
        self.sequences.iter().find(|s| {
            s.name == name && matches!(self.env.get(&name), Some(Binding::Active(b)) if *b == s.var)
        })
    }

    /// Whether `name` is an active parameter taken by reference, never
    /// bound again.
    pub(super) fn is_borrowed_param(&self, name: &Ident) -> bool {
        matches!(self.env.get(&name.to_string()), Some(Binding::Active(v))
            if self.borrowed_params.contains(v))
            && !self.body_assigned.contains(&name.to_string())
    }

    /// Whether every active value `expr` reads is a parameter taken by
    /// reference.
    pub(super) fn reads_only_borrowed_params(&self, expr: &Expr) -> bool {
        self.active_mentions(expr).iter().all(|name| {
            matches!(self.env.get(&name.to_string()), Some(Binding::Active(v))
                if self.borrowed_params.contains(v))
        })
    }

    /// Whether `expr` reads a name the body assigns somewhere.
    pub(super) fn reads_assigned(&self, expr: &Expr) -> bool {
        scan::mentions(expr, &self.body_assigned)
    }

    /// Whether a constant reading `expr` is recomputed where a pullback
    /// needs it (rather than captured, which could borrow the locals it
    /// reads): it reads locals, none of which the body assigns.
    pub(super) fn recomputable(&self, expr: &Expr) -> bool {
        self.mentions_locals(expr) && !self.reads_assigned(expr) && !self.calls_closure(expr)
    }

    /// Whether `expr` mentions a closure bound to a local: a pullback that
    /// recomputed it would need the closure, which may borrow locals.
    pub(super) fn calls_closure(&self, expr: &Expr) -> bool {
        scan::mentions(expr, self.local_closures.keys())
    }

    pub(super) fn mentions_locals(&self, expr: &Expr) -> bool {
        let locals = self
            .env
            .iter()
            .filter(|(_, b)| !matches!(b, Binding::Const { param: true, .. }))
            .map(|(n, _)| n);
        scan::mentions(expr, locals)
    }
}

/// The name a place or reference is rooted at (`v` in `&v[k].w`; through
/// method receivers too, `m` in `m.row(0).t()`, when `methods`).
pub(super) fn place_root(mut e: &Expr, methods: bool) -> Option<&Ident> {
    loop {
        match e {
            Expr::Reference(r) => e = &r.expr,
            Expr::Paren(p) => e = &p.expr,
            Expr::Index(i) => e = &i.expr,
            Expr::Field(f) => e = &f.base,
            Expr::MethodCall(m) if methods => e = &m.receiver,
            Expr::Path(p) => return p.path.get_ident(),
            _ => return None,
        }
    }
}

/// A named type that is not a float, an ndarray array or view, a `Vec`,
/// a slice or an `Option`: a struct of the user's (`Model`, `&Layer`).
fn is_struct_type(ty: &Type, float_types: &[String]) -> bool {
    let ty = match ty {
        Type::Reference(r) => &*r.elem,
        ty => ty,
    };
    let Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    let name = last.ident.to_string();
    let library = ["Array", "ArcArray", "CowArray", "Vec", "Option", "Box"]
        .iter()
        .any(|b| name.starts_with(b));
    !library && !float_types.contains(&name)
}

pub(super) fn without_parens(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => without_parens(&p.expr),
        e => e,
    }
}

pub(super) fn strip_refs(e: &Expr) -> &Expr {
    match e {
        Expr::Reference(r) if r.mutability.is_none() => strip_refs(&r.expr),
        Expr::Paren(p) if matches!(&*p.expr, Expr::Reference(_)) => strip_refs(&p.expr),
        e => e,
    }
}

pub(super) fn is_float_type(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.is_ident("f64") || p.path.is_ident("f32"))
}

pub(super) fn is_integer_type(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.get_ident().is_some_and(|i| matches!(
        i.to_string().as_str(),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "bool"
    )))
}

pub(super) fn first_token_span(e: &Expr) -> Span {
    e.to_token_stream()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |t| t.span())
}

/// The lowering's bindings as [`scan`] looks names up in them, one name at
/// a time.
struct Bindings<'l, 'a> {
    lowerer: &'l Lowerer<'a>,
    /// Only the active names: the active values, the names assumed active
    /// and the closures that read active values (which win in that order
    /// from last to first, as the names are the same).
    active_only: bool,
}

impl scan::Lookup for Bindings<'_, '_> {
    fn target(&self, name: &str) -> Option<Ident> {
        let l = self.lowerer;
        if self.active_only {
            if l.local_closures.get(name).is_some_and(|c| c.reads_active) {
                return Some(Ident::new(name, Span::call_site()));
            }
            if l.assumed_active.contains(name) {
                return Some(Ident::new("assumed", Span::call_site()));
            }
        }
        match l.env.get(name)? {
            Binding::Active(v) => Some(l.vars[v.0].ident.clone()),
            Binding::Const { renamed, .. } if !self.active_only => renamed.clone(),
            Binding::Const { .. } => None,
        }
    }
}

impl scan::Values for Bindings<'_, '_> {
    fn holds(&self, name: &str) -> bool {
        let l = self.lowerer;
        matches!(l.env.get(name), Some(Binding::Active(v)) if l.bound_by_reference.contains(v))
    }
}
