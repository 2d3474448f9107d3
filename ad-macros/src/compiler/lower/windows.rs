//! A window or chunk of an array that a loop body only indexes
//! (`w[1] - w[0]`), sums or multiplies is read from the array itself:
//! `w[j]` is `x[start + j]`, `w.len()` is `end - start`, and `w.sum()` is
//! `(start..end).map(|j| x[j]).sum()`. As a view, each iteration's reverse
//! code would build the window's cotangent, an array, and add it into the
//! array's; element reads add one element each, and cost what an index
//! loop costs.

use proc_macro2::Ident;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::Expr;

use super::sources::atom;

/// A window the loop binds: its name, its array and its range.
pub(super) struct Window {
    pub name: Ident,
    /// The binding's value, as `window_item` found it.
    pub item: String,
    pub array: Expr,
    pub start: Expr,
    pub end: Expr,
}

/// `(x, start, end)` for a source's window item,
/// `x.slice(::ad::ndarray::s![start..end])` (`sources.rs` writes them so).
pub(super) fn window_item(item: &Expr) -> Option<(Expr, Expr, Expr)> {
    let Expr::MethodCall(m) = item else {
        return None;
    };
    let [Expr::Macro(s)] = m.args.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let generated = s.mac.path.leading_colon.is_some()
        && s.mac
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .eq(["ad", "ndarray", "s"]);
    if m.method != "slice" || !generated {
        return None;
    }
    let Ok(Expr::Range(r)) = syn::parse2::<Expr>(s.mac.tokens.clone()) else {
        return None;
    };
    Some(((*m.receiver).clone(), *r.start?, *r.end?))
}

/// Rewrites `stmts` to read `window` from its array, and drops its `let`,
/// when the statements only index it or ask its length and never bind its
/// name again; false (and nothing changed) otherwise.
pub(super) fn read_by_element(stmts: &mut Vec<syn::Stmt>, window: &Window) -> bool {
    let name = window.name.to_string();
    let is_binding = |s: &syn::Stmt| match s {
        syn::Stmt::Local(syn::Local {
            pat: syn::Pat::Ident(p),
            init: Some(init),
            ..
        }) => {
            p.ident == name
                && quote::ToTokens::to_token_stream(&init.expr).to_string() == window.item
        }
        _ => false,
    };
    let Some(at) = stmts.iter().position(is_binding) else {
        return false;
    };
    let mut uses = Uses {
        name: &name,
        other: false,
    };
    for stmt in &stmts[at + 1..] {
        uses.visit_stmt(stmt);
    }
    if uses.other {
        return false;
    }
    stmts.remove(at);
    let mut reads = Reads { window };
    for stmt in &mut stmts[at..] {
        reads.visit_stmt_mut(stmt);
    }
    true
}

/// Whether a name is used other than as `name[j]` or `name.len()`, or
/// bound again.
struct Uses<'a> {
    name: &'a str,
    other: bool,
}

impl<'ast> Visit<'ast> for Uses<'_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Index(i) if is_name(&i.expr, self.name) => self.visit_expr(&i.index),
            Expr::MethodCall(m) if is_name(&m.receiver, self.name) && is_element_query(m) => {}
            Expr::Path(p) if p.path.is_ident(self.name) => self.other = true,
            e => syn::visit::visit_expr(self, e),
        }
    }

    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        if p.ident == self.name {
            self.other = true;
        }
        syn::visit::visit_pat_ident(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // A macro's tokens may name the window in any way.
        if super::scan::token_names(&m.tokens).contains(self.name) {
            self.other = true;
        }
    }
}

struct Reads<'a> {
    window: &'a Window,
}

impl VisitMut for Reads<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let w = self.window;
        let name = w.name.to_string();
        let (array, start, end) = (&w.array, atom(w.start.clone()), &w.end);
        match e {
            Expr::Index(i) if is_name(&i.expr, &name) => {
                let index = atom((*i.index).clone());
                *e = syn::parse_quote!(#array[#start + #index]);
            }
            Expr::MethodCall(m) if is_name(&m.receiver, &name) && m.method == "len" => {
                *e = syn::parse_quote!((#end - #start));
            }
            Expr::MethodCall(m) if is_name(&m.receiver, &name) && is_element_query(m) => {
                // `sum` or `product`: a chain over the window's positions.
                let j = Ident::new("__ad_position", m.method.span());
                let method = &m.method;
                *e = syn::parse_quote!((#start..#end).map(|#j| #array[#j]).#method());
            }
            _ => {}
        }
    }
}

/// `w.len()`, `w.sum()` or `w.product()`, which the array's elements give.
fn is_element_query(m: &syn::ExprMethodCall) -> bool {
    m.args.is_empty()
        && m.turbofish.is_none()
        && matches!(m.method.to_string().as_str(), "len" | "sum" | "product")
}

fn is_name(e: &Expr, name: &str) -> bool {
    matches!(e, Expr::Path(p) if p.path.is_ident(name))
}
