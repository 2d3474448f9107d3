//! Labelled `break 'l` and `continue 'l` rewritten into unlabelled exits
//! and flags, before the exits themselves are desugared (`exits.rs`):
//!
//! ```text
//! 'rows: for i in .. {            let mut __ad_break_rows = false;
//!     for j in .. {               'rows: for i in .. {   (label dropped)
//!         if c { break 'rows; }       for j in .. {
//!     }                                   if c { __ad_break_rows = true; break; }
//!     rest                            }
//! }                                   if __ad_break_rows { break; }
//!                                     rest
//!                                 }
//! ```
//!
//! A `continue 'l` is the same with a flag the labelled loop clears at the
//! start of each iteration and tests with `continue`. Each loop between the
//! exit and its target is left by a plain `break` after its own end. A
//! `break 'l e` from a nested loop stores `e` in `__ad_break_value_l`
//! beside its flag, and the labelled loop breaks with the stored value; a
//! labelled loop used as a value becomes a block of its flags and itself.

use proc_macro2::{Ident, Span};
use syn::visit_mut::VisitMut;
use syn::{parse_quote, Block, Expr, Lifetime, Stmt};

use super::exits::stmt_expr;

/// `block` with every labelled loop's labelled exits rewritten.
pub fn rewrite(block: &Block) -> Block {
    let mut block = block.clone();
    Loops.visit_block_mut(&mut block);
    block
}

/// Rewrites each labelled loop it meets, innermost first.
struct Loops;

impl VisitMut for Loops {
    fn visit_block_mut(&mut self, b: &mut Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut stmt in b.stmts.drain(..) {
            match &mut stmt {
                // A statement: the flags go before it in this block.
                Stmt::Expr(e, _) if is_labelled_loop(e) => {
                    syn::visit_mut::visit_expr_mut(self, e);
                    out.extend(labelled_loop(stmt));
                }
                _ => {
                    self.visit_stmt_mut(&mut stmt);
                    out.push(stmt);
                }
            }
        }
        b.stmts = out;
    }
    /// A labelled loop used as a value (`let v = 'l: loop { .. }`) becomes
    /// a block of the flags and the loop, which gives the block its value.
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        if is_labelled_loop(e) {
            let stmts = labelled_loop(Stmt::Expr(e.clone(), None));
            *e = parse_quote!({ #(#stmts)* });
        }
    }
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

fn is_labelled_loop(e: &Expr) -> bool {
    match e {
        Expr::ForLoop(f) => f.label.is_some(),
        Expr::While(w) => w.label.is_some(),
        Expr::Loop(l) => l.label.is_some(),
        _ => false,
    }
}

fn flag(kind: &str, label: &Lifetime) -> Ident {
    Ident::new(&format!("__ad_{kind}_{}", label.ident), Span::call_site())
}

/// A labelled loop statement with its label's exits rewritten (and the
/// flags they need declared before it); any other statement as it is.
fn labelled_loop(stmt: Stmt) -> Vec<Stmt> {
    let (label, body) = match &stmt {
        Stmt::Expr(Expr::ForLoop(f), _) => (f.label.clone(), &f.body),
        Stmt::Expr(Expr::While(w), _) => (w.label.clone(), &w.body),
        Stmt::Expr(Expr::Loop(l), _) => (l.label.clone(), &l.body),
        _ => return vec![stmt],
    };
    let Some(label) = label.map(|l| l.name) else {
        return vec![stmt];
    };
    let mut body = body.clone();
    let used = rewrite_exits(&mut body.stmts, &label, 0);
    let (brk, cont) = (flag("break", &label), flag("continue", &label));
    let mut out: Vec<Stmt> = Vec::new();
    if used.brk {
        out.push(parse_quote!(let mut #brk = false;));
    }
    if used.cont {
        out.push(parse_quote!(let mut #cont = false;));
        body.stmts.insert(0, parse_quote!(#cont = false;));
    }
    if used.value {
        let value = flag("break_value", &label);
        out.push(parse_quote!(let mut #value = ::core::default::Default::default();));
    }
    let mut stmt = stmt;
    if let Stmt::Expr(e, _) = &mut stmt {
        match e {
            Expr::ForLoop(f) => {
                f.label = None;
                f.body = body;
            }
            Expr::While(w) => {
                w.label = None;
                w.body = body;
            }
            Expr::Loop(l) => {
                l.label = None;
                l.body = body;
            }
            _ => {}
        }
    }
    out.push(stmt);
    out
}

#[derive(Default, Clone, Copy)]
struct Used {
    brk: bool,
    cont: bool,
    /// A `break 'l e` from a nested loop, which stores `e`.
    value: bool,
}

/// Rewrites the exits to `label` in `stmts`, which are `depth` loops
/// inside the labelled one; what they use.
fn rewrite_exits(stmts: &mut Vec<Stmt>, label: &Lifetime, depth: usize) -> Used {
    let mut exits = Exits {
        label,
        depth,
        used: Used::default(),
    };
    exits.statements(stmts);
    exits.used
}

/// Rewrites exits to `label`, `depth` loops deep: a nested loop's body is
/// rewritten one level deeper, and the statements after that loop leave
/// this one when the nested loop set a flag.
struct Exits<'a> {
    label: &'a Lifetime,
    depth: usize,
    used: Used,
}

impl Exits<'_> {
    fn statements(&mut self, stmts: &mut Vec<Stmt>) {
        let mut out = Vec::with_capacity(stmts.len());
        for mut stmt in stmts.drain(..) {
            let body = match &mut stmt {
                Stmt::Expr(Expr::ForLoop(f), _) => Some(&mut f.body),
                Stmt::Expr(Expr::While(w), _) => Some(&mut w.body),
                Stmt::Expr(Expr::Loop(l), _) => Some(&mut l.body),
                _ => None,
            };
            match body {
                Some(body) => {
                    let after = self.nested_body(body);
                    out.push(stmt);
                    out.extend(after);
                }
                None => {
                    // As a statement, the exit's statements in place, so no
                    // block hides the `break`.
                    let exit = stmt_expr(&stmt);
                    match exit.and_then(|e| self.kind_of(e)) {
                        Some(kind) => {
                            let value = exit.and_then(break_value).cloned();
                            out.extend(self.exit(kind, value.as_ref()))
                        }
                        None => {
                            self.visit_stmt_mut(&mut stmt);
                            out.push(stmt);
                        }
                    }
                }
            }
        }
        *stmts = out;
    }

    /// `"break"` or `"continue"` for an exit to this label.
    fn kind_of(&self, e: &Expr) -> Option<&'static str> {
        match e {
            Expr::Break(b) if b.label.as_ref() == Some(self.label) => Some("break"),
            Expr::Continue(c) if c.label.as_ref() == Some(self.label) => Some("continue"),
            _ => None,
        }
    }

    /// What an exit to the label becomes: itself unlabelled at the labelled
    /// loop's level, further in its flag set (and a `break 'l e`'s value
    /// stored) and a plain `break`.
    fn exit(&mut self, kind: &str, value: Option<&Expr>) -> Vec<Stmt> {
        if self.depth == 0 {
            return vec![match (kind, value) {
                ("break", Some(e)) => parse_quote!(break #e;),
                ("break", None) => parse_quote!(break;),
                _ => parse_quote!(continue;),
            }];
        }
        let f = flag(kind, self.label);
        let mut stmts: Vec<Stmt> = Vec::new();
        if kind == "break" {
            self.used.brk = true;
        } else {
            self.used.cont = true;
        }
        if let Some(e) = value {
            let stored = flag("break_value", self.label);
            stmts.push(parse_quote!(#stored = #e;));
            self.used.value = true;
        }
        stmts.push(parse_quote!(#f = true;));
        stmts.push(parse_quote!(break;));
        stmts
    }

    /// A nested loop's body, one level deeper; returns what leaves this
    /// loop after the nested one when it set a flag.
    fn nested_body(&mut self, body: &mut Block) -> Vec<Stmt> {
        let used = rewrite_exits(&mut body.stmts, self.label, self.depth + 1);
        let (brk, cont) = (flag("break", self.label), flag("continue", self.label));
        // At the labelled loop's own level, its `continue`; further in, a
        // `break` out of each loop on the way.
        let leave: Expr = if self.depth == 0 {
            parse_quote!(continue)
        } else {
            parse_quote!(break)
        };
        let mut after: Vec<Stmt> = Vec::new();
        if used.value && self.depth == 0 {
            // The labelled loop's own `break e`, of the value stored.
            let stored = flag("break_value", self.label);
            after.push(parse_quote!(if #brk { break #stored; }));
        } else if used.brk {
            after.push(parse_quote!(if #brk { break; }));
        }
        self.used.brk |= used.brk;
        self.used.value |= used.value;
        if used.cont {
            after.push(parse_quote!(if #cont { #leave; }));
            self.used.cont = true;
        }
        after
    }
}

impl VisitMut for Exits<'_> {
    fn visit_block_mut(&mut self, b: &mut Block) {
        self.statements(&mut b.stmts);
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Closure(_) => {}
            _ => match self.kind_of(e) {
                // In an expression (`_ => break 'rows,`): a block.
                Some(kind) => {
                    let value = break_value(e).cloned();
                    let stmts = self.exit(kind, value.as_ref());
                    *e = parse_quote!({ #(#stmts)* });
                }
                None => syn::visit_mut::visit_expr_mut(self, e),
            },
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The value of a `break e`.
fn break_value(e: &Expr) -> Option<&Expr> {
    match e {
        Expr::Break(b) => b.expr.as_deref(),
        _ => None,
    }
}
