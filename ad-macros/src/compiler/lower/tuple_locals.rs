//! A tuple local that a loop assigns, split into one local per item before
//! the other passes, so loops carry the items as they carry any names:
//!
//! ```text
//! let mut acc = (0.0, 1.0);               let (mut __ad_acc_0, mut __ad_acc_1) = (0.0, 1.0);
//! for i in 0..n {                         for i in 0..n {
//!     acc = (acc.0 + x[i], acc.1 * x[i]);     (__ad_acc_0, __ad_acc_1) = (__ad_acc_0 + x[i], __ad_acc_1 * x[i]);
//!     acc.1 += 1.0;                           __ad_acc_1 += 1.0;
//! }                                       }
//! acc.0 * f(acc)                          __ad_acc_0 * f((__ad_acc_0, __ad_acc_1))
//! ```
//!
//! A local is split when it is bound once in the body, by `let mut name =
//! (a, b, ..)` (a tuple expression, so its arity is known), and assigned
//! (whole or by item) inside a loop that does not hold that `let`. Any
//! other read of the whole value is the tuple of its items. A local that
//! is borrowed mutably (`&mut acc`) or named inside a macro (whose tokens
//! the pass cannot rewrite) is left as it is, and lowering reports it.
//!
//! A tuple another expression makes (`let mut t = stats(x);`, a call whose
//! arity the pass cannot see) is split into the items the body reads, if
//! it reads only items (`t.0`, `t.1`): each value is bound once and its
//! items taken, `t = stats(&y)` becoming
//! `{ let __ad_t = stats(&y); __ad_t_0 = __ad_t.0; __ad_t_1 = __ad_t.1; }`.

use std::collections::HashMap;

use proc_macro2::Ident;
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{parse_quote, Block, Expr, Member, Pat};

use super::super::scan;

/// `block` with its loop-assigned tuple locals split; `params` are the
/// function's parameter names, which a `let` may shadow.
pub fn split(block: &Block, params: &[String]) -> Block {
    let mut found = Candidates::default();
    found.visit_block(block);
    let mut made = std::collections::HashSet::new();
    let splits: HashMap<String, usize> = found
        .lets
        .iter()
        .filter_map(|(name, (arity, depth))| {
            // A tuple some other expression makes: the items the body reads,
            // if it reads nothing else of it.
            let arity = match arity {
                Some(n) => *n,
                None if !found.whole_reads.contains(name) => {
                    made.insert(name.clone());
                    found.items_read.get(name).copied().unwrap_or(0)
                }
                None => return None,
            };
            let split = arity >= 1
                && (arity >= 2 || made.contains(name))
                && found.bindings.get(name) == Some(&1)
                && !params.contains(name)
                && !found.unsplittable.contains(name)
                && found
                    .assigned_at
                    .get(name)
                    .is_some_and(|depths| depths.iter().any(|d| d > depth));
            split.then(|| (name.clone(), arity))
        })
        .collect();
    let mut block = block.clone();
    if !splits.is_empty() {
        Split { splits, made }.visit_block_mut(&mut block);
    }
    block
}

/// The name of an item's local: `__ad_acc_1` for `acc.1`.
fn item(name: &Ident, k: usize) -> Ident {
    Ident::new(&format!("__ad_{name}_{k}"), name.span())
}

fn path_name(e: &Expr) -> Option<&Ident> {
    match e {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
        _ => None,
    }
}

/// `name` or `name.k`: the name assigned.
fn assigned_name(e: &Expr) -> Option<&Ident> {
    match e {
        Expr::Field(f) if matches!(f.member, Member::Unnamed(_)) => path_name(&f.base),
        e => path_name(e),
    }
}

#[derive(Default)]
struct Candidates {
    /// `let mut name = ..`: its arity if a tuple expression gives it, and
    /// the number of loops around it.
    lets: HashMap<String, (Option<usize>, usize)>,
    /// The number of items the body reads of each name (`t.1`: 2).
    items_read: HashMap<String, usize>,
    /// Names read otherwise than by item or assigned whole.
    whole_reads: std::collections::HashSet<String>,
    /// How many patterns bind each name.
    bindings: HashMap<String, usize>,
    /// The loop depths of assignments to each name (or an item of it).
    assigned_at: HashMap<String, Vec<usize>>,
    /// Names borrowed mutably or named inside macros.
    unsplittable: Vec<String>,
    depth: usize,
}

impl Candidates {
    /// Notes an assignment to `left` at the current loop depth.
    fn assigns(&mut self, left: &Expr) {
        if let Some(name) = assigned_name(left) {
            self.assigned_at
                .entry(name.to_string())
                .or_default()
                .push(self.depth);
        }
    }
}

impl<'ast> Visit<'ast> for Candidates {
    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let (Pat::Ident(p), Some(init)) = (&l.pat, &l.init) {
            if let (Some(_), None) = (&p.mutability, &p.subpat) {
                let arity = match &*init.expr {
                    Expr::Tuple(t) => Some(t.elems.len()),
                    _ => None,
                };
                self.lets.insert(p.ident.to_string(), (arity, self.depth));
            }
        }
        syn::visit::visit_local(self, l);
    }
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Field(f) => {
                if let (Some(name), Member::Unnamed(k)) = (path_name(&f.base), &f.member) {
                    let read = self.items_read.entry(name.to_string()).or_default();
                    *read = (*read).max(k.index as usize + 1);
                    return;
                }
            }
            Expr::Assign(a) if path_name(&a.left).is_some() => {
                self.assigns(&a.left);
                return self.visit_expr(&a.right);
            }
            Expr::Path(_) => {
                if let Some(name) = path_name(e) {
                    self.whole_reads.insert(name.to_string());
                }
            }
            _ => {}
        }
        syn::visit::visit_expr(self, e);
    }
    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        *self.bindings.entry(p.ident.to_string()).or_default() += 1;
        syn::visit::visit_pat_ident(self, p);
    }
    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        self.assigns(&a.left);
        syn::visit::visit_expr_assign(self, a);
    }
    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        if is_compound(&b.op) {
            self.assigns(&b.left);
        }
        syn::visit::visit_expr_binary(self, b);
    }
    fn visit_expr_reference(&mut self, r: &'ast syn::ExprReference) {
        if let (Some(_), Some(name)) = (&r.mutability, path_name(&r.expr)) {
            self.unsplittable.push(name.to_string());
        }
        syn::visit::visit_expr_reference(self, r);
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.unsplittable.extend(scan::token_names(&m.tokens));
    }
    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        self.visit_expr(&f.expr);
        self.visit_pat(&f.pat);
        self.depth += 1;
        self.visit_block(&f.body);
        self.depth -= 1;
    }
    fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
        self.depth += 1;
        syn::visit::visit_expr_while(self, w);
        self.depth -= 1;
    }
    fn visit_expr_loop(&mut self, l: &'ast syn::ExprLoop) {
        self.depth += 1;
        syn::visit::visit_expr_loop(self, l);
        self.depth -= 1;
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

fn is_compound(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_) | SubAssign(_) | MulAssign(_) | DivAssign(_) | RemAssign(_)
    )
}

struct Split {
    splits: HashMap<String, usize>,
    /// Those made by an expression other than a tuple: each value bound
    /// once, then its items taken.
    made: std::collections::HashSet<String>,
}

impl Split {
    fn arity(&self, name: &Ident) -> Option<usize> {
        self.splits.get(&name.to_string()).copied()
    }

    fn items(&self, name: &Ident) -> Vec<Ident> {
        (0..self.arity(name).unwrap_or(0))
            .map(|k| item(name, k))
            .collect()
    }

    /// Whether `name` is a tuple some expression other than a tuple makes.
    fn made(&self, name: &Ident) -> bool {
        self.made.contains(&name.to_string())
    }

    /// `let __ad_t = value;` then each item taken, as `let mut __ad_t_k =
    /// __ad_t.k;` (`declare`) or `__ad_t_k = __ad_t.k;`: no tuple of the
    /// items is built in between.
    fn taken(&self, name: &Ident, value: &Expr, declare: bool) -> Vec<syn::Stmt> {
        let whole = Ident::new(&format!("__ad_{name}"), name.span());
        let mut out: Vec<syn::Stmt> = vec![parse_quote!(let #whole = #value;)];
        for (k, item) in self.items(name).into_iter().enumerate() {
            let k = syn::Index::from(k);
            out.push(match declare {
                true => parse_quote!(let mut #item = #whole.#k;),
                false => parse_quote!(#item = #whole.#k;),
            });
        }
        out
    }
}

impl VisitMut for Split {
    fn visit_block_mut(&mut self, b: &mut Block) {
        let mut out = Vec::new();
        for mut stmt in std::mem::take(&mut b.stmts) {
            self.visit_stmt_mut(&mut stmt);
            // `let mut t = stats(x);`: the value bound once, its items taken.
            if let syn::Stmt::Local(l) = &stmt {
                if let (Pat::Ident(p), Some(init)) = (&l.pat, &l.init) {
                    if self.made(&p.ident) {
                        out.extend(self.taken(&p.ident, &init.expr, true));
                        continue;
                    }
                }
            }
            out.push(stmt);
        }
        b.stmts = out;
    }
    fn visit_local_mut(&mut self, l: &mut syn::Local) {
        if let Some(init) = &mut l.init {
            self.visit_expr_mut(&mut init.expr);
        }
        if let Pat::Ident(p) = &l.pat {
            if self.arity(&p.ident).is_some() && !self.made(&p.ident) {
                let items = self.items(&p.ident);
                l.pat = parse_quote!((#(mut #items),*));
            }
        }
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Field(f) => {
                if let (Some(name), Member::Unnamed(k)) = (path_name(&f.base), &f.member) {
                    if let Some(n) = self.arity(name) {
                        let k = k.index as usize;
                        if k < n {
                            let item = item(name, k);
                            *e = parse_quote!(#item);
                            return;
                        }
                    }
                }
                syn::visit_mut::visit_expr_mut(self, e);
            }
            Expr::Assign(a) => {
                self.visit_expr_mut(&mut a.right);
                match path_name(&a.left).filter(|n| self.arity(n).is_some()) {
                    // `t = stats(&y)`: a block whose assignments last.
                    Some(name) if self.made(name) => {
                        let stmts = self.taken(&name.clone(), &a.right, false);
                        *e = parse_quote!({ #(#stmts)* });
                    }
                    Some(name) => {
                        let items = self.items(name);
                        *a.left = parse_quote!((#(#items),*));
                    }
                    None => self.visit_expr_mut(&mut a.left),
                }
            }
            Expr::Path(_) => {
                if let Some(name) = path_name(e).filter(|n| self.arity(n).is_some()) {
                    let items = self.items(name);
                    *e = parse_quote!((#(#items),*));
                }
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
