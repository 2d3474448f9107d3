//! Finding and renaming the body's own variables inside user code.
//!
//! Active values and re-bound constants get generated names; the user's
//! code that mentions them (`x.len()`, `ad::stop_gradient(h)`) is rewritten
//! to those names. Names a closure, block, `match` arm or `for` pattern binds
//! inside the code shadow ours and are left alone. Inside macro invocations
//! identifiers are renamed token by token.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Group, Ident, TokenStream, TokenTree};
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Pat};

/// What to rename: the user's name and the generated one.
pub type Renames = HashMap<String, Ident>;

/// Where a renamer looks each name up: a [`Renames`] map, or the lowering's
/// bindings as they stand. Lowering renames every expression of the body,
/// so a map of all its bindings made afresh for each would cost time
/// quadratic in the function's length.
pub trait Lookup {
    /// The generated name for the user's `name`, if it is renamed.
    fn target(&self, name: &str) -> Option<Ident>;
}

impl Lookup for Renames {
    fn target(&self, name: &str) -> Option<Ident> {
        self.get(name).cloned()
    }
}

/// The names bound to a reference (`let v = &x[k];`) that generated code
/// holds as a value, so that `*v` reads `v`; looked up like [`Lookup`].
pub trait Values {
    fn holds(&self, name: &str) -> bool;
}

impl Values for HashSet<String> {
    fn holds(&self, name: &str) -> bool {
        self.contains(name)
    }
}

pub struct Renamer<'a> {
    renames: &'a dyn Lookup,
    values: Option<&'a dyn Values>,
    shadowed: Vec<HashSet<String>>,
    /// Every renamed occurrence, as the user wrote it.
    pub hits: Vec<Ident>,
}

impl<'a> Renamer<'a> {
    pub fn new(renames: &'a dyn Lookup) -> Self {
        Renamer {
            renames,
            values: None,
            shadowed: Vec::new(),
            hits: Vec::new(),
        }
    }

    fn target(&self, name: &str) -> Option<Ident> {
        if self.shadowed.iter().any(|s| s.contains(name)) {
            return None;
        }
        self.renames.target(name)
    }

    fn with_scope(&mut self, names: HashSet<String>, f: impl FnOnce(&mut Self)) {
        self.shadowed.push(names);
        f(self);
        self.shadowed.pop();
    }

    fn rename_tokens(&mut self, tokens: TokenStream) -> TokenStream {
        tokens
            .into_iter()
            .map(|tt| match tt {
                TokenTree::Ident(i) => match self.target(&i.to_string()) {
                    Some(to) => {
                        self.hits.push(i);
                        TokenTree::Ident(to)
                    }
                    None => TokenTree::Ident(i),
                },
                TokenTree::Group(g) => {
                    let mut out = Group::new(g.delimiter(), self.rename_tokens(g.stream()));
                    out.set_span(g.span());
                    TokenTree::Group(out)
                }
                other => other,
            })
            .collect()
    }
}

/// The names a pattern binds.
pub fn pattern_names(pat: &Pat) -> HashSet<String> {
    struct Names(HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for Names {
        fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
            self.0.insert(p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut names = Names(HashSet::new());
    syn::visit::Visit::visit_pat(&mut names, pat);
    names.0
}

impl Renamer<'_> {
    /// `e` without its derefs, if it names one of the values (`**v`).
    fn value_read<'e>(&self, e: &'e Expr) -> Option<&'e Expr> {
        let values = self.values?;
        let mut inner = e;
        while let Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Deref(_),
            expr,
            ..
        }) = inner
        {
            inner = expr;
        }
        let value = matches!(inner, Expr::Path(p) if p.path.get_ident().is_some_and(|i| {
            let name = i.to_string();
            values.holds(&name) && !self.shadowed.iter().any(|s| s.contains(&name))
        }));
        value.then_some(inner)
    }
}

/// `e` without the shared borrows around it (`&&0.0` is `0.0`).
fn unborrowed(e: &mut Expr) {
    while let Expr::Reference(r) = e {
        if r.mutability.is_some() {
            return;
        }
        *e = (*r.expr).clone();
    }
}

impl VisitMut for Renamer<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Some(inner) = self
            .value_read(e)
            .filter(|inner| !std::ptr::eq(*inner, &*e))
        {
            *e = inner.clone();
        }
        // A comparison of references compares the values: once one side
        // reads a value (`*s > &0.0` with `s` a `&&f64`), the other side's
        // borrows go too, or the comparison would mix a value and a
        // reference.
        if let Expr::Binary(b) = e {
            if is_comparison(&b.op) {
                if self.value_read(&b.left).is_some() {
                    unborrowed(&mut b.right);
                }
                if self.value_read(&b.right).is_some() {
                    unborrowed(&mut b.left);
                }
            }
        }
        visit_mut::visit_expr_mut(self, e);
    }

    fn visit_expr_path_mut(&mut self, e: &mut syn::ExprPath) {
        if e.qself.is_none() {
            if let Some(ident) = e.path.get_ident() {
                if let Some(to) = self.target(&ident.to_string()) {
                    self.hits.push(ident.clone());
                    e.path.segments[0].ident = to;
                }
            }
        }
    }

    fn visit_field_value_mut(&mut self, f: &mut syn::FieldValue) {
        // `S { x }` is shorthand for `S { x: x }`: keep the field name.
        let shorthand = f.colon_token.is_none();
        visit_mut::visit_field_value_mut(self, f);
        if shorthand {
            if let Expr::Path(p) = &f.expr {
                if let Some(i) = p.path.get_ident() {
                    if !matches!(&f.member, syn::Member::Named(m) if m == i) {
                        f.colon_token = Some(Default::default());
                    }
                }
            }
        }
    }

    fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
        let names = c.inputs.iter().flat_map(pattern_names).collect();
        self.with_scope(names, |r| r.visit_expr_mut(&mut c.body));
    }

    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        self.with_scope(HashSet::new(), |r| {
            for stmt in &mut b.stmts {
                match stmt {
                    syn::Stmt::Local(local) => {
                        if let Some(init) = &mut local.init {
                            r.visit_expr_mut(&mut init.expr);
                            if let Some((_, diverge)) = &mut init.diverge {
                                r.visit_expr_mut(diverge);
                            }
                        }
                        let names = pattern_names(&local.pat);
                        r.shadowed.last_mut().expect("scope pushed").extend(names);
                    }
                    other => r.visit_stmt_mut(other),
                }
            }
        });
    }

    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        let names = pattern_names(&arm.pat);
        self.with_scope(names, |r| {
            if let Some((_, guard)) = &mut arm.guard {
                r.visit_expr_mut(guard);
            }
            r.visit_expr_mut(&mut arm.body);
        });
    }

    fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
        self.visit_expr_mut(&mut f.expr);
        let names = pattern_names(&f.pat);
        self.with_scope(names, |r| r.visit_block_mut(&mut f.body));
    }

    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        m.tokens = self.rename_tokens(std::mem::take(&mut m.tokens));
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {
        // Nested items cannot see the function's locals.
    }
}

/// Every identifier in `tokens`, groups included.
pub fn token_names(tokens: &TokenStream) -> HashSet<String> {
    fn walk(tokens: TokenStream, out: &mut HashSet<String>) {
        for t in tokens {
            match t {
                TokenTree::Ident(i) => {
                    out.insert(i.to_string());
                }
                TokenTree::Group(g) => walk(g.stream(), out),
                _ => {}
            }
        }
    }
    let mut out = HashSet::new();
    walk(tokens.clone(), &mut out);
    out
}

/// Whether `expr` mentions one of `names` (where no binding inside it
/// shadows the name).
pub fn mentions<'a>(expr: &Expr, names: impl IntoIterator<Item = &'a String>) -> bool {
    let names: Renames = names
        .into_iter()
        .map(|n| (n.clone(), Ident::new("x", proc_macro2::Span::call_site())))
        .collect();
    !names.is_empty() && !rename_expr(expr, &names).1.is_empty()
}

/// `expr` with `renames` applied, and the names it mentioned.
pub fn rename_expr(expr: &Expr, renames: &dyn Lookup) -> (Expr, Vec<Ident>) {
    let mut expr = expr.clone();
    let mut r = Renamer::new(renames);
    r.visit_expr_mut(&mut expr);
    (expr, r.hits)
}

/// `rename_expr`, reading `*v` as `v` for each of `values`.
pub fn rename_expr_with_values(
    expr: &Expr,
    renames: &dyn Lookup,
    values: &dyn Values,
) -> (Expr, Vec<Ident>) {
    let mut expr = expr.clone();
    let mut r = Renamer::new(renames);
    r.values = Some(values);
    r.visit_expr_mut(&mut expr);
    (expr, r.hits)
}

/// `rename_stmt`, reading `*v` as `v` for each of `values`.
pub fn rename_stmt_with_values(
    stmt: &syn::Stmt,
    renames: &dyn Lookup,
    values: &dyn Values,
) -> (syn::Stmt, Vec<Ident>) {
    let mut stmt = stmt.clone();
    let mut r = Renamer::new(renames);
    r.values = Some(values);
    r.visit_stmt_mut(&mut stmt);
    (stmt, r.hits)
}

fn is_comparison(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(op, Lt(_) | Le(_) | Gt(_) | Ge(_) | Eq(_) | Ne(_))
}
