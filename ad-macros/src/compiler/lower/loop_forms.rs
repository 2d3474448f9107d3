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
//! `break` or `continue` in it (E0695, reported at the user's function,
//! which is emitted as written), which the loop would catch.

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
            Expr::Block(block) => {
                if let Some(l) = once_loop(block, true) {
                    *e = l;
                }
            }
            _ => {}
        }
    }
    // Closures are inlined where they are called, after these passes (as
    // after those of labels and exits): their loops are left as written.
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// `'a: { stmts }` as `'a: loop { stmts break 'a; }`, its last expression
/// the loop's value (`break 'a v;`) where the block gives one; `None` for
/// a block without a label.
fn once_loop(block: &syn::ExprBlock, value: bool) -> Option<Expr> {
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
