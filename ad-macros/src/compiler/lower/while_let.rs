//! `while let` loops, rewritten before exits are desugared (`exits.rs`):
//!
//! ```text
//! while let Some(node) = stack.pop() {      loop {
//!     body                                      let Some(node) = stack.pop() else { break };
//! }                                             body
//!                                           }
//! ```
//!
//! The `let ... else` then moves the body into a `match` arm, and its
//! `break` is desugared as any other, so the scrutinee may be any inactive
//! value (a stack of a tree's nodes, an iterator's `next()`).

use syn::visit_mut::VisitMut;
use syn::{parse_quote, Block, Expr};

/// `block` with every `while let` loop written as a `loop`.
pub fn rewrite(block: &Block) -> Block {
    let mut block = block.clone();
    WhileLets.visit_block_mut(&mut block);
    block
}

struct WhileLets;

impl VisitMut for WhileLets {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let Expr::While(w) = e else { return };
        let Expr::Let(cond) = &*w.cond else { return };
        let (pat, value) = (&cond.pat, &cond.expr);
        let (label, stmts) = (&w.label, &w.body.stmts);
        *e = parse_quote!(#label loop {
            let #pat = #value else { break };
            #(#stmts)*
        });
    }
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
