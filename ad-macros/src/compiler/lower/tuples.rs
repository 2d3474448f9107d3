//! Desugaring tuple `let`s and assignments of tuple expressions into one
//! statement per name before lowering, so every later pass sees plain
//! `let`s and assignments:
//!
//! - `let (a, mut b) = (e1, e2);` becomes
//!   `let __ad_tuple_1 = e1; let __ad_tuple_2 = e2; let a = __ad_tuple_1; let mut b = __ad_tuple_2;`,
//!   and so does the array form `let [a, mut b] = [e1, e2];`
//! - `(a, b) = (b, a);` becomes
//!   `let __ad_tuple_1 = b; let __ad_tuple_2 = a; a = __ad_tuple_1; b = __ad_tuple_2;`
//!
//! - `let (s, c) = x.sin_cos();` becomes `let __ad_tuple_1 = x;` and the
//!   pair `(__ad_tuple_1.sin(), __ad_tuple_1.cos())`, split as above.
//! - `(h, c) = cell(&h, &c, x);` (any other value) becomes
//!   `let __ad_tuple_1 = cell(&h, &c, x); h = __ad_tuple_1.0; c = __ad_tuple_1.1;`
//!
//! Every element is evaluated before any name is bound, as in Rust (the
//! second swaps). Only a tuple expression of the pattern's arity, whose
//! elements are names, `mut` names or `_`, is split; anything else is left
//! for lowering, which reports it if it involves active values.

use proc_macro2::{Ident, Span};
use syn::visit_mut::VisitMut;
use syn::{parse_quote, Block, Expr, Pat, Stmt, Type};

/// Numbers the temporaries it introduces (`__ad_tuple_k`; the `__ad_`
/// prefix is reserved).
#[derive(Default)]
pub struct Tuples {
    counter: usize,
}

impl Tuples {
    pub fn body(&mut self, block: &Block) -> Block {
        let mut block = block.clone();
        self.visit_block_mut(&mut block);
        block
    }

    fn temporary(&mut self) -> Ident {
        self.counter += 1;
        Ident::new(&format!("__ad_tuple_{}", self.counter), Span::call_site())
    }

    /// The statements replacing `stmt`, if it is a tuple `let` or
    /// assignment this pass splits.
    fn split(&mut self, stmt: &Stmt) -> Option<Vec<Stmt>> {
        if let Some((mut operand, mut stmt)) = self.sin_cos(stmt) {
            self.visit_stmt_mut(&mut operand);
            let mut out = vec![operand];
            out.extend(self.split(&stmt).unwrap_or_else(|| {
                self.visit_stmt_mut(&mut stmt);
                vec![stmt]
            }));
            return Some(out);
        }
        match stmt {
            Stmt::Local(local) => {
                let (pat, ty) = match &local.pat {
                    Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
                    p => (p, None),
                };
                let init = local.init.as_ref()?;
                // `let (a, b) = (e1, e2);`, or with arrays, `let [a, b] = [e1, e2];`.
                let (pats, values): (Vec<&Pat>, Vec<&Expr>) = match (pat, &*init.expr) {
                    (Pat::Tuple(p), Expr::Tuple(v)) => {
                        (p.elems.iter().collect(), v.elems.iter().collect())
                    }
                    (Pat::Slice(p), Expr::Array(v)) => {
                        (p.elems.iter().collect(), v.elems.iter().collect())
                    }
                    _ => return None,
                };
                let simple = pats.iter().all(|p| {
                    matches!(p, Pat::Wild(_))
                        || matches!(p, Pat::Ident(i) if i.subpat.is_none() && i.by_ref.is_none())
                });
                if !simple || pats.len() != values.len() || init.diverge.is_some() {
                    return None;
                }
                let types: Vec<Option<&Type>> = match ty {
                    Some(Type::Tuple(t)) if t.elems.len() == pats.len() => {
                        t.elems.iter().map(Some).collect()
                    }
                    Some(Type::Array(a)) => vec![Some(&*a.elem); pats.len()],
                    Some(_) => return None,
                    None => vec![None; pats.len()],
                };
                let temps: Vec<Ident> = values.iter().map(|_| self.temporary()).collect();
                let mut out: Vec<Stmt> = Vec::new();
                for ((t, v), ty) in temps.iter().zip(&values).zip(&types) {
                    out.push(match ty {
                        Some(ty) => parse_quote!(let #t: #ty = #v;),
                        None => parse_quote!(let #t = #v;),
                    });
                }
                for (p, t) in pats.iter().zip(&temps) {
                    if let Pat::Ident(_) = p {
                        out.push(parse_quote!(let #p = #t;));
                    }
                }
                Some(out)
            }
            Stmt::Expr(Expr::Assign(a), Some(_)) => {
                let Expr::Tuple(targets) = &*a.left else {
                    return None;
                };
                let simple = targets.elems.iter().all(|t| {
                    matches!(t, Expr::Infer(_))
                        || matches!(t, Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some())
                });
                if !simple {
                    return None;
                }
                let Expr::Tuple(values) = &*a.right else {
                    // `(h, c) = cell(&h, &c, x);`: the tuple bound once,
                    // then each name assigned its item.
                    let (t, value) = (self.temporary(), &a.right);
                    let mut out: Vec<Stmt> = vec![parse_quote!(let #t = #value;)];
                    for (k, target) in targets.elems.iter().enumerate() {
                        if let Expr::Path(_) = target {
                            let k = syn::Index::from(k);
                            out.push(parse_quote!(#target = #t.#k;));
                        }
                    }
                    return Some(out);
                };
                if targets.elems.len() != values.elems.len() {
                    return None;
                }
                let temps: Vec<Ident> = values.elems.iter().map(|_| self.temporary()).collect();
                let mut out: Vec<Stmt> = temps
                    .iter()
                    .zip(&values.elems)
                    .map(|(t, v)| parse_quote!(let #t = #v;))
                    .collect();
                for (target, t) in targets.elems.iter().zip(&temps) {
                    if let Expr::Path(_) = target {
                        out.push(parse_quote!(#target = #t;));
                    }
                }
                Some(out)
            }
            _ => None,
        }
    }
}

impl Tuples {
    /// `let (s, c) = x.sin_cos();` (or the assignment) as `let t = x;`
    /// and the statement with `(t.sin(), t.cos())` in place of the call,
    /// which `split` then splits like any pair.
    fn sin_cos(&mut self, stmt: &Stmt) -> Option<(Stmt, Stmt)> {
        let mut stmt = stmt.clone();
        let value = match &mut stmt {
            Stmt::Local(syn::Local {
                init: Some(init),
                pat,
                ..
            }) if init.diverge.is_none() && is_pair_pattern(pat) => &mut init.expr,
            Stmt::Expr(Expr::Assign(a), Some(_)) if matches!(&*a.left, Expr::Tuple(t) if t.elems.len() == 2) => {
                &mut a.right
            }
            _ => return None,
        };
        let Expr::MethodCall(call) = &**value else {
            return None;
        };
        if call.method != "sin_cos" || !call.args.is_empty() || call.turbofish.is_some() {
            return None;
        }
        let t = self.temporary();
        let receiver = &call.receiver;
        let operand: Stmt = parse_quote!(let #t = #receiver;);
        **value = parse_quote!((#t.sin(), #t.cos()));
        Some((operand, stmt))
    }
}

/// `(a, b)`, possibly typed.
fn is_pair_pattern(pat: &Pat) -> bool {
    match pat {
        Pat::Type(pt) => is_pair_pattern(&pt.pat),
        Pat::Tuple(t) => t.elems.len() == 2,
        _ => false,
    }
}

impl VisitMut for Tuples {
    fn visit_block_mut(&mut self, block: &mut Block) {
        let mut stmts = Vec::with_capacity(block.stmts.len());
        for mut stmt in std::mem::take(&mut block.stmts) {
            match self.split(&stmt) {
                Some(split) => stmts.extend(split),
                None => {
                    self.visit_stmt_mut(&mut stmt);
                    stmts.push(stmt);
                }
            }
        }
        block.stmts = stmts;
    }
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
