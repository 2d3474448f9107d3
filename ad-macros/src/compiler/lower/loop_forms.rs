//! Loop forms written as `loop`s before labels and exits are desugared
//! (`labels.rs`, `exits.rs`):
//!
//! ```text
//! while let Some(node) = stack.pop() {      loop {
//!     body                                      let Some(node) = stack.pop() else { break };
//! }                                             body
//!                                           }
//!
//! let y = 'a: {                             let y = 'a: loop {
//!     if c { break 'a x; }                      if c { break 'a x; }
//!     v                                         break 'a v;
//! };                                        };
//! ```
//!
//! The `let ... else` then moves the body into a `match` arm, and its
//! `break` is desugared as any other, so the scrutinee may be any inactive
//! value (a stack of a tree's nodes, an iterator's `next()`). A labelled
//! block is a labelled loop that runs once: Rust allows no unlabelled
//! `break` or `continue` in it (E0695), which the loop would catch.

use syn::visit_mut::VisitMut;
use syn::{parse_quote, Block, Expr, Stmt};

/// `block` with every `while let` loop and labelled block written as a
/// `loop`.
pub fn rewrite(block: &Block) -> Block {
    let mut block = block.clone();
    LoopForms.visit_block_mut(&mut block);
    block
}

struct LoopForms;

impl VisitMut for LoopForms {
    fn visit_block_mut(&mut self, b: &mut Block) {
        for stmt in &mut b.stmts {
            // A labelled block as a statement: its value is `()`.
            if let Stmt::Expr(Expr::Block(block), _) = stmt {
                if block.label.is_some() {
                    self.visit_block_mut(&mut block.block);
                    if let Some(l) = once_loop(block, false) {
                        *stmt = Stmt::Expr(l, None);
                    }
                    continue;
                }
            }
            self.visit_stmt_mut(stmt);
        }
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        match e {
            Expr::While(w) => {
                let Expr::Let(cond) = &*w.cond else { return };
                let (pat, value) = (&cond.pat, &cond.expr);
                let (label, stmts) = (&w.label, &w.body.stmts);
                *e = parse_quote!(#label loop {
                    let #pat = #value else { break };
                    #(#stmts)*
                });
            }
            Expr::Block(block) if block.label.is_some() => {
                if let Some(l) = once_loop(block, true) {
                    *e = l;
                }
            }
            _ => {}
        }
    }
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `'a: { stmts }` as `'a: loop { stmts break 'a; }`, its last expression
/// the loop's value (`break 'a v;`) where the block gives one; `None` where
/// its statements `break` or `continue` without a label (Rust's error,
/// which the rewrite would hide).
fn once_loop(block: &syn::ExprBlock, value: bool) -> Option<Expr> {
    if unlabelled_exits(&block.block.stmts) {
        return None;
    }
    let label = block.label.as_ref()?;
    let name = &label.name;
    let mut stmts = block.block.stmts.clone();
    let end: Stmt = match stmts.last() {
        Some(Stmt::Expr(tail, None)) if value => {
            let tail = tail.clone();
            stmts.pop();
            parse_quote!(break #name #tail;)
        }
        _ => {
            // A statement's last expression has the value `()`.
            if let Some(Stmt::Expr(_, semi @ None)) = stmts.last_mut() {
                *semi = Some(Default::default());
            }
            parse_quote!(break #name;)
        }
    };
    stmts.push(end);
    Some(parse_quote!(#label loop { #(#stmts)* }))
}

/// Whether `stmts` hold a `break` or `continue` without a label outside
/// the loops they contain.
fn unlabelled_exits(stmts: &[Stmt]) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_expr_break(&mut self, b: &'ast syn::ExprBreak) {
            self.0 |= b.label.is_none();
            syn::visit::visit_expr_break(self, b);
        }
        fn visit_expr_continue(&mut self, c: &'ast syn::ExprContinue) {
            self.0 |= c.label.is_none();
        }
        fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
            self.visit_expr(&f.expr);
        }
        fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
            self.visit_expr(&w.cond);
        }
        fn visit_expr_loop(&mut self, _: &'ast syn::ExprLoop) {}
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut finder = Finder(false);
    for s in stmts {
        syn::visit::Visit::visit_stmt(&mut finder, s);
    }
    finder.0
}
