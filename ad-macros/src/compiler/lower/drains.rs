//! `hs.drain(..)` of a `Vec` local that holds active values: the items
//! read as `hs.iter()` reads them, then the list cleared after the
//! statement (`for h in hs.drain(..) { .. }` is `for h in hs.iter() { .. }
//! hs.clear();`). Rust's borrow of `hs` for the drain keeps the statement
//! from touching `hs` otherwise, so clearing after it is the same.

use syn::visit_mut::VisitMut;
use syn::Expr;

use super::*;

impl Lowerer<'_> {
    /// `e` with each whole-range drain of an active `Vec` local read as an
    /// iteration, and the lists drained; `None` when it drains none.
    pub(super) fn without_drains<T: Clone>(
        &self,
        node: &T,
        visit: fn(&mut Drains<'_, '_>, &mut T),
    ) -> Option<(T, Vec<Ident>)> {
        let mut drains = Drains {
            lowerer: self,
            drained: Vec::new(),
        };
        let mut node = node.clone();
        visit(&mut drains, &mut node);
        (!drains.drained.is_empty()).then_some((node, drains.drained))
    }

    /// Each drained list cleared, after the statement that drains them.
    pub(super) fn clear_drained(&mut self, drained: Vec<Ident>) {
        for list in drained {
            let span = list.span();
            let cleared: syn::Stmt = syn::parse_quote_spanned!(span=> #list.clear(););
            self.stmt(&cleared);
        }
    }
}

pub(super) struct Drains<'l, 'a> {
    lowerer: &'l Lowerer<'a>,
    drained: Vec<Ident>,
}

impl VisitMut for Drains<'_, '_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::MethodCall(m) = e {
            let whole_range = m.args.len() == 1
                && matches!(&m.args[0], Expr::Range(r) if r.start.is_none() && r.end.is_none());
            if m.method == "drain" && whole_range {
                if let Some(list) = self.lowerer.active_vec_local(&m.receiver) {
                    let span = m.method.span();
                    *e = syn::parse_quote_spanned!(span=> #list.iter());
                    self.drained.push(list);
                    return;
                }
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
    // A closure's drain would run each time it is called, and a block's
    // or an arm's when it runs: those are their own statements' (lowered
    // through `stmt`), or left as written.
    fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
    fn visit_block_mut(&mut self, _: &mut syn::Block) {}
    fn visit_arm_mut(&mut self, _: &mut syn::Arm) {}
}
