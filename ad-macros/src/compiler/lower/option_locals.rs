//! An `Option` local, split before the other passes into a flag and a
//! value, so that `if let Some(p) = prev` tests an inactive flag and reads
//! a value that carries its derivative like any other local:
//!
//! ```text
//! let mut prev: Option<f64> = None;     let mut __ad_prev_some = false;
//!                                       let mut __ad_prev_value: f64 = placeholder::<f64>();
//! for &v in x {                         for &v in x {
//!     if let Some(p) = prev {               if __ad_prev_some { let p = __ad_prev_value;
//!         s += (v - p).powi(2);                 s += (v - p).powi(2);
//!     }                                     }
//!     prev = Some(v);                       { __ad_prev_some = true; __ad_prev_value = v; }
//! }                                     }
//! ```
//!
//! A local is split when one `let` binds it to `Some(..)`, `None`, or an
//! `if`/`match`/block whose every value is one of those, and the body uses
//! it only as:
//!
//! - `if let Some(p) = prev` / `if let None = prev` (also of `&prev`),
//!   `match prev { Some(p) => .., None => .. }` (or `_ =>`), and
//!   `let Some(p) = prev else { .. };`, where `p` is a pattern that
//!   always matches (names, `_`, tuples of them);
//! - `prev.is_some()`, `prev.is_none()`, `prev.is_some_and(p)`,
//!   `prev.unwrap()`, `prev.expect(..)`, `prev.unwrap_or(d)`,
//!   `unwrap_or_else(|| d)`, `unwrap_or_default()`, `map_or(d, g)`,
//!   `map_or_else(|| d, g)`, also after `map(g)`, `as_ref()`, `copied()`
//!   and `cloned()` (`prev.map(|p| p * 2.0).unwrap_or(0.0)`);
//! - `prev = e`, with `e` made as the `let`'s value is.
//!
//! The value while the flag is down is a placeholder no read sees; it
//! needs the local's type written (`Option<f64>`, `Option<Array1<f64>>`,
//! `Option<Vec<f64>>`, `Option<[f64; 2]>`) unless the `let` gives it a
//! value. Any other use leaves the local as it is, which is Rust's own
//! when the local holds no active value.

use std::collections::{HashMap, HashSet};

use proc_macro2::Ident;
use syn::visit_mut::VisitMut;
use syn::{parse_quote, Block, Expr, Pat, Stmt, Type};

use super::super::scan;

/// `block` with its `Option` locals split; `params` are the function's
/// parameter names, `float_types` its float types (`f64`, `F`).
pub fn split(block: &Block, params: &[String], float_types: &[String]) -> Block {
    let mut lets = Lets {
        found: HashMap::new(),
        float_types,
    };
    lets.visit_block_mut(&mut block.clone());
    let mut names: HashSet<String> = lets
        .found
        .into_iter()
        .filter(|(name, count)| *count == 1 && !params.contains(name))
        .map(|(name, _)| name)
        .collect();
    // A name some use the pass does not know disqualifies is dropped, and
    // the others split again, until every split name is used as above.
    loop {
        if names.is_empty() {
            return block.clone();
        }
        let mut out = block.clone();
        let mut split = Split {
            names: names.clone(),
            float_types,
            failed: HashSet::new(),
            shadow: Vec::new(),
        };
        split.visit_block_mut(&mut out);
        if split.failed.is_empty() {
            return out;
        }
        names.retain(|n| !split.failed.contains(n));
    }
}

fn flag(name: &Ident) -> Ident {
    Ident::new(&format!("__ad_{name}_some"), name.span())
}

fn value(name: &Ident) -> Ident {
    Ident::new(&format!("__ad_{name}_value"), name.span())
}

fn path_name(e: &Expr) -> Option<&Ident> {
    match e {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => p.path.get_ident(),
        Expr::Paren(p) => path_name(&p.expr),
        _ => None,
    }
}

/// `name` or `&name`: the local tested, and whether by reference.
fn tested(e: &Expr) -> Option<(&Ident, bool)> {
    match e {
        Expr::Reference(r) if r.mutability.is_none() => path_name(&r.expr).map(|n| (n, true)),
        e => path_name(e).map(|n| (n, false)),
    }
}

/// Whether `e` names the path `Some` or `None` (`None`, `Option::None`).
fn names_variant(path: &syn::Path, variant: &str) -> bool {
    path.segments.last().is_some_and(|s| s.ident == variant)
        && path.segments.len() <= 2
        && (path.segments.len() == 1 || path.segments[0].ident == "Option")
}

/// `Some(x)`'s argument.
fn some_argument(e: &Expr) -> Option<&Expr> {
    match e {
        Expr::Call(c) if c.args.len() == 1 => match &*c.func {
            Expr::Path(p) if names_variant(&p.path, "Some") => c.args.first(),
            _ => None,
        },
        _ => None,
    }
}

/// `T` of `Some::<T>(..)`.
fn turbofish_item(e: &Expr) -> Option<&Type> {
    let Expr::Call(c) = e else { return None };
    let Expr::Path(p) = &*c.func else { return None };
    let last = p.path.segments.last()?;
    match &last.arguments {
        syn::PathArguments::AngleBracketed(a) if last.ident == "Some" && a.args.len() == 1 => {
            match a.args.first()? {
                syn::GenericArgument::Type(t) => Some(t),
                _ => None,
            }
        }
        _ => None,
    }
}

fn is_none(e: &Expr) -> bool {
    matches!(e, Expr::Path(p) if p.qself.is_none() && names_variant(&p.path, "None"))
}

/// What a pattern tests: `Some(p)` with its inner pattern, `None`, or
/// anything (`_`).
enum Arm<'a> {
    Some(&'a Pat),
    None,
    Any,
}

fn arm(p: &Pat) -> Option<Arm<'_>> {
    match p {
        Pat::TupleStruct(t) if t.elems.len() == 1 && names_variant(&t.path, "Some") => {
            let inner = t.elems.first()?;
            irrefutable(inner).then_some(Arm::Some(inner))
        }
        Pat::Ident(i) if i.ident == "None" && i.subpat.is_none() && i.by_ref.is_none() => {
            Some(Arm::None)
        }
        Pat::Path(p) if names_variant(&p.path, "None") => Some(Arm::None),
        Pat::Wild(_) => Some(Arm::Any),
        _ => None,
    }
}

/// Whether `p` always matches, so `let p = value;` binds it.
fn irrefutable(p: &Pat) -> bool {
    match p {
        Pat::Ident(i) => i.subpat.is_none() && i.ident != "None",
        Pat::Wild(_) => true,
        Pat::Tuple(t) => t.elems.iter().all(irrefutable),
        Pat::Type(t) => irrefutable(&t.pat),
        _ => false,
    }
}

/// The `Option<T>`'s `T` of a type, if it is one.
fn option_item(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != "Option" {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match a.args.first()? {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the runtime has a placeholder of `ty`: floats, arrays, `Vec`s
/// and fixed-size arrays of those.
fn has_placeholder(ty: &Type, float_types: &[String]) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().is_some_and(|s| {
            let name = s.ident.to_string();
            float_types.contains(&name) || name.starts_with("Array") || name == "Vec"
        }),
        Type::Array(a) => has_placeholder(&a.elem, float_types),
        Type::Paren(p) => has_placeholder(&p.elem, float_types),
        _ => false,
    }
}

/// Whether every value `e` can take is `Some(..)` or `None`, and whether
/// one of them is `None`.
fn option_values(e: &Expr) -> Option<bool> {
    if some_argument(e).is_some() {
        return Some(false);
    }
    if is_none(e) {
        return Some(true);
    }
    let tail = |b: &Block| match b.stmts.last() {
        Some(Stmt::Expr(e, None)) => option_values(e),
        _ => None,
    };
    match e {
        Expr::Paren(p) => option_values(&p.expr),
        Expr::Block(b) if b.label.is_none() => tail(&b.block),
        Expr::If(i) => {
            let then = tail(&i.then_branch)?;
            let els = option_values(&i.else_branch.as_ref()?.1)?;
            Some(then || els)
        }
        Expr::Match(m) if !m.arms.is_empty() => m
            .arms
            .iter()
            .map(|a| option_values(&a.body))
            .try_fold(false, |any, v| v.map(|v| any || v)),
        _ => None,
    }
}

/// The candidates: each `let name[: Option<T>] = init;` whose values are
/// `Some`/`None`, with a placeholder where `init` can be `None`, and how
/// many patterns bind each such name.
struct Lets<'a> {
    found: HashMap<String, usize>,
    float_types: &'a [String],
}

impl VisitMut for Lets<'_> {
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        if let Some(candidate) = candidate(l, self.float_types) {
            *self.found.entry(candidate.name.to_string()).or_default() += 1;
        } else {
            for name in scan::pattern_names(&l.pat) {
                if let Some(count) = self.found.get_mut(&name) {
                    *count += 1;
                }
            }
        }
        syn::visit_mut::visit_local_mut(self, l);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

struct Candidate<'a> {
    name: &'a Ident,
    mutability: bool,
    item: Option<&'a Type>,
    init: &'a Expr,
}

fn candidate<'a>(l: &'a syn::Local, float_types: &[String]) -> Option<Candidate<'a>> {
    let init = l.init.as_ref().filter(|i| i.diverge.is_none())?;
    let (ident, item) = match &l.pat {
        Pat::Ident(p) => (p, None),
        Pat::Type(t) => match &*t.pat {
            Pat::Ident(p) => (p, Some(option_item(&t.ty)?)),
            _ => return None,
        },
        _ => return None,
    };
    if ident.by_ref.is_some() || ident.subpat.is_some() {
        return None;
    }
    // `Some::<f64>(..)` gives the type a `let` does not.
    let item = item.or_else(|| turbofish_item(&init.expr));
    let can_be_none = option_values(&init.expr)?;
    let placed = item.is_some_and(|t| has_placeholder(t, float_types));
    (!can_be_none || placed).then_some(Candidate {
        name: &ident.ident,
        mutability: ident.mutability.is_some(),
        item,
        init: &init.expr,
    })
}

struct Split<'a> {
    names: HashSet<String>,
    float_types: &'a [String],
    /// Names used in a way the pass does not rewrite.
    failed: HashSet<String>,
    /// Names a pattern of a rewritten test binds again, innermost last.
    shadow: Vec<HashSet<String>>,
}

impl Split<'_> {
    fn is_split(&self, name: &Ident) -> bool {
        let name = name.to_string();
        self.names.contains(&name) && !self.shadow.iter().any(|s| s.contains(&name))
    }

    /// The split local `e` tests (`prev`, `&prev`).
    fn split_tested<'e>(&self, e: &'e Expr) -> Option<(&'e Ident, bool)> {
        tested(e).filter(|(n, _)| self.is_split(n))
    }

    fn fail(&mut self, name: &Ident) {
        self.failed.insert(name.to_string());
    }

    /// `e`, a value of the split local `name`, as statements that set its
    /// flag and value.
    fn assigned(&mut self, name: &Ident, e: &mut Expr) -> Expr {
        let (f, v) = (flag(name), value(name));
        if let Some(x) = some_argument(e) {
            let mut x = x.clone();
            self.visit_expr_mut(&mut x);
            return parse_quote!({ #f = true; #v = #x; });
        }
        if is_none(e) {
            return parse_quote!({ #f = false; });
        }
        match e {
            Expr::Paren(p) => self.assigned(name, &mut p.expr),
            Expr::Block(b) => {
                self.assigned_tail(name, &mut b.block);
                Expr::Block(b.clone())
            }
            Expr::If(i) => {
                self.visit_expr_mut(&mut i.cond);
                self.assigned_tail(name, &mut i.then_branch);
                if let Some((_, els)) = &mut i.else_branch {
                    let els_assigned = self.assigned(name, els);
                    **els = els_assigned;
                }
                Expr::If(i.clone())
            }
            Expr::Match(m) => {
                self.visit_expr_mut(&mut m.expr);
                for arm in &mut m.arms {
                    if let Some((_, guard)) = &mut arm.guard {
                        self.visit_expr_mut(guard);
                    }
                    self.visit_pat_mut(&mut arm.pat);
                    let body = self.assigned(name, &mut arm.body);
                    *arm.body = body;
                }
                Expr::Match(m.clone())
            }
            other => {
                // Not made by `Some`/`None`: the local stays as it is.
                self.fail(name);
                other.clone()
            }
        }
    }

    fn assigned_tail(&mut self, name: &Ident, b: &mut Block) {
        let last = b.stmts.pop();
        for s in &mut b.stmts {
            self.visit_stmt_mut(s);
        }
        match last {
            Some(Stmt::Expr(mut e, None)) => {
                let assigned = self.assigned(name, &mut e);
                b.stmts.push(Stmt::Expr(assigned, None));
            }
            other => {
                self.fail(name);
                b.stmts.extend(other);
            }
        }
    }

    /// The declarations of a split local's flag and value.
    fn declared(&mut self, c: &Candidate) -> Vec<Stmt> {
        let name = c.name;
        let (f, v) = (flag(name), value(name));
        let ty = c.item.map(|t| quote::quote!(: #t));
        if let Some(x) = some_argument(c.init) {
            let mut x = x.clone();
            self.visit_expr_mut(&mut x);
            let m = c.mutability.then(|| quote::quote!(mut));
            return vec![
                parse_quote!(let #m #f = true;),
                parse_quote!(let #m #v #ty = #x;),
            ];
        }
        let mut init = c.init.clone();
        let assigned = self.assigned(name, &mut init);
        let item = c.item.filter(|t| has_placeholder(t, self.float_types));
        let Some(item) = item else {
            self.fail(name);
            return Vec::new();
        };
        let mut declared: Vec<Stmt> = vec![
            parse_quote!(let mut #f = false;),
            parse_quote!(let mut #v: #item = ::ad::__private::rules::placeholder::<#item>();),
        ];
        if !is_none(c.init) {
            declared.push(Stmt::Expr(assigned, Some(Default::default())));
        }
        declared
    }

    /// `let Some(p) = prev else { .. };`
    fn let_else(&mut self, l: &mut syn::Local) -> Option<Vec<Stmt>> {
        let init = l.init.as_mut()?;
        let (_, diverge) = init.diverge.as_mut()?;
        let (name, by_ref) = self.split_tested(&init.expr)?;
        let name = name.clone();
        let Some(Arm::Some(inner)) = arm(&l.pat) else {
            self.fail(&name);
            return None;
        };
        let inner = inner.clone();
        if scan::pattern_names(&inner).contains(&name.to_string()) {
            self.fail(&name);
            return None;
        }
        self.visit_expr_mut(diverge);
        let (f, v) = (flag(&name), value(&name));
        let read = read(&v, by_ref);
        Some(vec![
            parse_quote!(if !#f #diverge),
            parse_quote!(let #inner = #read;),
        ])
    }

    /// `then` with `pattern` bound to the local's value first, the
    /// pattern's names shadowing the local inside.
    fn bound_branch(&mut self, name: &Ident, pattern: &Pat, by_ref: bool, then: &mut Expr) -> Expr {
        let bound = scan::pattern_names(pattern);
        self.shadow.push(bound);
        self.visit_expr_mut(then);
        self.shadow.pop();
        let read = read(&value(name), by_ref);
        parse_quote!({ let #pattern = #read; #then })
    }

    /// A chain of methods on the split local `name`, ending in one that
    /// leaves the `Option` (`prev.map(f).unwrap_or(d)`), as an `if` on the
    /// flag; `None` for a chain that does not end so.
    fn chain(&mut self, name: &Ident, e: &Expr) -> Option<Expr> {
        let (_, mut calls) = method_calls(e);
        for a in calls.iter_mut().flat_map(|(_, args)| args) {
            self.visit_expr_mut(a);
        }
        let (f, v) = (flag(name), value(name));
        option_chain(&calls, &parse_quote!(#f), parse_quote!(#v))
    }

    /// `if let P = prev { .. } else ..` and `match prev { .. }`, as an `if`
    /// on the flag.
    fn test(&mut self, name: &Ident, by_ref: bool, arms: Vec<(Arm, Expr)>) -> Expr {
        let f = flag(name);
        let mut some = None;
        let mut none = None;
        for (arm, body) in arms {
            match arm {
                Arm::Some(p) if some.is_none() => some = Some((p.clone(), body)),
                Arm::None if none.is_none() => none = Some(body),
                Arm::Any => {
                    if some.is_none() {
                        some = Some((parse_quote!(_), body.clone()));
                    }
                    if none.is_none() {
                        none = Some(body);
                    }
                }
                _ => {}
            }
        }
        let (pattern, mut then) = some.unwrap_or_else(|| (parse_quote!(_), parse_quote!({})));
        let mut els = none.unwrap_or_else(|| parse_quote!({}));
        let then = self.bound_branch(name, &pattern, by_ref, &mut then);
        self.visit_expr_mut(&mut els);
        parse_quote!(if #f #then else { #els })
    }
}

/// The methods `calls` (in the order they apply) on an `Option` whose
/// flag is `f` and whose value is `item`, ending in one that leaves the
/// `Option` (`map(g)` then `unwrap_or(d)`), as an `if` on the flag; `None`
/// for a chain that does not end so. `item` is read only where the flag
/// is up.
pub(super) fn option_chain(calls: &[(String, Vec<Expr>)], f: &Expr, item: Expr) -> Option<Expr> {
    let (last, adaptors) = calls.split_last()?;
    let mut item = item;
    for (method, args) in adaptors {
        item = match (method.as_str(), &args[..]) {
            ("map", [g]) => applied(g, item)?,
            ("as_ref", []) => parse_quote!(&#item),
            ("copied", []) => parse_quote!(*#item),
            ("cloned", []) => parse_quote!(::core::clone::Clone::clone(#item)),
            _ => return None,
        };
    }
    let unset: Expr = parse_quote!(::core::panic!(
        "called `Option::unwrap()` on a `None` value"
    ));
    Some(match (last.0.as_str(), &last.1[..]) {
        ("is_some", []) if adaptors.is_empty() => parse_quote!(#f),
        ("is_none", []) if adaptors.is_empty() => parse_quote!((!#f)),
        ("is_some_and", [p]) => {
            let tested = applied(p, item)?;
            parse_quote!((#f && #tested))
        }
        ("unwrap", []) => parse_quote!({ if !#f { #unset } #item }),
        ("expect", [m]) => parse_quote!({ if !#f { ::core::panic!("{}", #m) } #item }),
        ("unwrap_or", [d]) => parse_quote!(if #f { #item } else { #d }),
        ("unwrap_or_else", [d]) => {
            let d = called(d)?;
            parse_quote!(if #f { #item } else { #d })
        }
        ("unwrap_or_default", []) => parse_quote!(if #f { #item } else {
            ::ad::__private::rules::placeholder()
        }),
        ("map_or", [d, g]) => {
            let mapped = applied(g, item)?;
            parse_quote!(if #f { #mapped } else { #d })
        }
        ("map_or_else", [d, g]) => {
            let (mapped, d) = (applied(g, item)?, called(d)?);
            parse_quote!(if #f { #mapped } else { #d })
        }
        _ => return None,
    })
}

/// The receiver at the root of a chain of method calls, and the calls
/// (name and arguments) in the order they apply: `prev` and `[map(g),
/// unwrap_or(d)]` of `prev.map(g).unwrap_or(d)`.
pub(super) fn method_calls(e: &Expr) -> (&Expr, Vec<(String, Vec<Expr>)>) {
    let mut calls = Vec::new();
    let mut at = e;
    while let Expr::MethodCall(c) = at {
        calls.push((c.method.to_string(), c.args.iter().cloned().collect()));
        at = &c.receiver;
    }
    calls.reverse();
    (at, calls)
}

/// The local at the root of a chain of method calls (`prev` of
/// `prev.map(f).unwrap_or(d)`).
fn chain_root(e: &Expr) -> Option<&Ident> {
    match e {
        Expr::MethodCall(c) => chain_root(&c.receiver),
        e => path_name(e),
    }
}

/// `g` applied to `item`: a closure's body with its parameter bound to the
/// item, or a call of a function or a local closure by name.
fn applied(g: &Expr, item: Expr) -> Option<Expr> {
    match g {
        Expr::Closure(c) if c.inputs.len() == 1 => {
            let (pattern, body) = (&c.inputs[0], &c.body);
            Some(parse_quote!({ let #pattern = #item; #body }))
        }
        Expr::Path(_) => Some(parse_quote!(#g(#item))),
        _ => None,
    }
}

/// The value of a closure of no arguments (`|| d`): its body.
fn called(d: &Expr) -> Option<Expr> {
    match d {
        Expr::Closure(c) if c.inputs.is_empty() => Some((*c.body).clone()),
        Expr::Path(_) => Some(parse_quote!(#d())),
        _ => None,
    }
}

/// The value read by a test: moved out, or borrowed for `&prev`.
fn read(v: &Ident, by_ref: bool) -> Expr {
    match by_ref {
        true => parse_quote!(&#v),
        false => parse_quote!(#v),
    }
}

impl VisitMut for Split<'_> {
    fn visit_block_mut(&mut self, b: &mut Block) {
        let mut out = Vec::new();
        for mut stmt in std::mem::take(&mut b.stmts) {
            if let Stmt::Local(l) = &mut stmt {
                if let Some(c) = candidate(l, self.float_types) {
                    if self.is_split(c.name) {
                        out.extend(self.declared(&c));
                        continue;
                    }
                }
                if let Some(stmts) = self.let_else(l) {
                    out.extend(stmts);
                    continue;
                }
            }
            self.visit_stmt_mut(&mut stmt);
            out.push(stmt);
        }
        b.stmts = out;
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::If(i) => {
                if let Expr::Let(l) = &*i.cond {
                    if let Some((name, by_ref)) = self.split_tested(&l.expr) {
                        let name = name.clone();
                        let Some(tested) = arm(&l.pat) else {
                            self.fail(&name);
                            return;
                        };
                        let then = Expr::Block(syn::ExprBlock {
                            attrs: Vec::new(),
                            label: None,
                            block: i.then_branch.clone(),
                        });
                        let els = match &i.else_branch {
                            Some((_, els)) => (**els).clone(),
                            None => parse_quote!({}),
                        };
                        let arms = vec![(tested, then), (Arm::Any, els)];
                        *e = self.test(&name, by_ref, arms);
                        return;
                    }
                }
                syn::visit_mut::visit_expr_mut(self, e);
            }
            Expr::Match(m) => {
                if let Some((name, by_ref)) = self.split_tested(&m.expr) {
                    let name = name.clone();
                    let arms: Option<Vec<(Arm, Expr)>> = m
                        .arms
                        .iter()
                        .map(|a| match (&a.guard, arm(&a.pat)) {
                            (None, Some(arm)) => Some((arm, (*a.body).clone())),
                            _ => None,
                        })
                        .collect();
                    match arms {
                        Some(arms) => *e = self.test(&name, by_ref, arms),
                        None => self.fail(&name),
                    }
                    return;
                }
                syn::visit_mut::visit_expr_mut(self, e);
            }
            Expr::MethodCall(_) => {
                let Some(name) = chain_root(e).filter(|n| self.is_split(n)).cloned() else {
                    return syn::visit_mut::visit_expr_mut(self, e);
                };
                // A chain that leaves the `Option` part way (`prev.unwrap()
                // .sum()`): the methods after it are ordinary ones.
                match self.chain(&name, e) {
                    Some(rewritten) => *e = rewritten,
                    None => syn::visit_mut::visit_expr_mut(self, e),
                }
            }
            Expr::Assign(a) => {
                let Some(name) = path_name(&a.left).filter(|n| self.is_split(n)) else {
                    return syn::visit_mut::visit_expr_mut(self, e);
                };
                let name = name.clone();
                *e = self.assigned(&name, &mut a.right);
            }
            Expr::Path(_) => {
                if let Some(name) = path_name(e).filter(|n| self.is_split(n)) {
                    let name = name.clone();
                    self.fail(&name);
                }
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
    fn visit_pat_ident_mut(&mut self, p: &mut syn::PatIdent) {
        if self.is_split(&p.ident) {
            let name = p.ident.clone();
            self.fail(&name);
        }
        syn::visit_mut::visit_pat_ident_mut(self, p);
    }
    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        for name in scan::token_names(&m.tokens) {
            if self.names.contains(&name) {
                self.failed.insert(name);
            }
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
