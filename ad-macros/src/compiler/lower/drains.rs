//! `hs.drain(range)` of a `Vec` local that holds active values: the items
//! read as `hs.iter()` reads them, then removed after the statement
//! (`for h in hs.drain(..) { .. }` is `for h in hs.iter() { .. }
//! hs.clear();`). Rust's borrow of `hs` for the drain keeps the statement
//! from touching `hs` otherwise, so removing them after it is the same.
//!
//! A drain of part of the list (`hs.drain(a..b)`, `..k`, `k..`, `a..=b`)
//! binds its bounds before the statement, reads `hs[start..end].iter()`,
//! and after it keeps the items outside the range, gathered as `retain`
//! gathers them (`rules::drained_order`).

use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{Expr, RangeLimits};

use super::*;

/// A list a statement drains, and the bounds of a partial drain: the
/// names they are bound to and their values.
pub(super) struct Drained {
    list: Ident,
    bounds: Option<[(Ident, Expr); 2]>,
}

impl Lowerer<'_> {
    /// `e` with each drain of an active `Vec` local read as an iteration,
    /// and the lists drained; `None` when it drains none.
    pub(super) fn without_drains<T: Clone>(
        &mut self,
        node: &T,
        visit: fn(&mut Drains<'_, '_>, &mut T),
    ) -> Option<(T, Vec<Drained>)> {
        let mut drains = Drains {
            lowerer: self,
            drained: Vec::new(),
        };
        let mut node = node.clone();
        visit(&mut drains, &mut node);
        let drained = drains.drained;
        if drained.is_empty() {
            return None;
        }
        for (name, value) in drained.iter().filter_map(|d| d.bounds.as_ref()).flatten() {
            let bound: syn::Stmt =
                syn::parse_quote_spanned!(name.span()=> let #name: usize = #value;);
            self.stmt(&bound);
        }
        Some((node, drained))
    }

    /// Each drained list emptied, or left with the items outside its
    /// range, after the statement that drains them.
    pub(super) fn clear_drained(&mut self, drained: Vec<Drained>) {
        for Drained { list, bounds } in drained {
            let span = list.span();
            match bounds {
                None => {
                    let cleared: syn::Stmt = syn::parse_quote_spanned!(span=> #list.clear(););
                    self.stmt(&cleared);
                }
                Some([(start, _), (end, _)]) => {
                    let target: syn::ExprPath = syn::parse_quote_spanned!(span=> #list);
                    self.gathered(&target, quote!(drained_order(&#list, #start, #end)), span);
                }
            }
        }
    }
}

pub(super) struct Drains<'l, 'a> {
    lowerer: &'l mut Lowerer<'a>,
    drained: Vec<Drained>,
}

impl VisitMut for Drains<'_, '_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::MethodCall(m) = e {
            if let (true, [Expr::Range(range)]) =
                (m.method == "drain", &m.args.iter().collect::<Vec<_>>()[..])
            {
                if let Some(list) = self.lowerer.active_vec_local(&m.receiver) {
                    let span = m.method.span();
                    if range.start.is_none() && range.end.is_none() {
                        *e = syn::parse_quote_spanned!(span=> #list.iter());
                        self.drained.push(Drained { list, bounds: None });
                        return;
                    }
                    let start_value: Expr = match &range.start {
                        Some(start) => (**start).clone(),
                        None => syn::parse_quote_spanned!(span=> 0),
                    };
                    let end_value: Expr = match (&range.end, &range.limits) {
                        (Some(end), RangeLimits::HalfOpen(_)) => (**end).clone(),
                        (Some(end), RangeLimits::Closed(_)) => {
                            syn::parse_quote_spanned!(span=> (#end) + 1)
                        }
                        (None, _) => syn::parse_quote_spanned!(span=> #list.len()),
                    };
                    let start = self.lowerer.fresh_local("drain_start", span);
                    let end = self.lowerer.fresh_local("drain_end", span);
                    *e = syn::parse_quote_spanned!(span=> #list[#start..#end].iter());
                    self.drained.push(Drained {
                        list,
                        bounds: Some([(start, start_value), (end, end_value)]),
                    });
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
