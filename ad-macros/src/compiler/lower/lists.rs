//! `Vec` locals that hold active values: `hs.push(h)` is `hs = push(hs,
//! h)`, `vec![a, b]` a `Vec::new()` pushed twice, and `hs[t]` reads an item
//! (a float, or a view of an array). A loop over `&hs` or `hs.iter()`
//! reads `hs[t]` (`sources.rs`).

use proc_macro2::{Ident, Span};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::Expr;

use super::*;
use crate::compiler::ir::{Const, Op, Operand};

impl Lowerer<'_> {
    /// `hs.push(item)` on a `Vec` local: `hs = push(hs, item)`, which makes
    /// a `Vec` of constants (`Vec::new()`) active.
    pub(super) fn push(&mut self, list: &Expr, item: &Expr, whole: &Expr) {
        let Some(name) = super::place_root(list, false).cloned() else {
            return;
        };
        let Some(base) = self.updated_local(&name) else {
            self.errors.at(
                list,
                format!("`{name}` is not a local `Vec`: active values are pushed onto a `Vec` the function declares"),
            );
            return;
        };
        if self.rejects_vec_item(item) {
            return;
        }
        let first_new = self.vars.len();
        let Some(item) = self.expr(item) else {
            return;
        };
        let value = self.op_or_constant(Op::Push(base, item), whole.span(), whole);
        self.bind(&name, value, first_new, None, false);
    }

    /// Whether `item`, going into a list of active values, is a `Vec`
    /// itself, reported if so: a list's items are floats or arrays, and a
    /// `Vec` item would read as an array in the derivative code while the
    /// primal keeps it a `Vec`.
    fn rejects_vec_item(&self, item: &Expr) -> bool {
        let inner = super::strip_refs(item);
        let a_vec = super::stmt::makes_vec(inner)
            || self.names_vec_local(inner)
            || self.bag_item(inner).is_some();
        let rejected = a_vec && self.carries_derivative(item);
        if rejected {
            self.errors.at(
                item,
                "a `Vec` of active values holds floats or arrays, not `Vec`s: hold arrays (a `Vec<Array1<f64>>`), pushing `x.to_owned()` for an array or `Array1::from(v)` for a `Vec` of floats",
            );
        }
        rejected
    }

    /// Whether `e` names a `Vec` local (`hs` in `hs[t]`).
    pub(super) fn names_vec_local(&self, e: &Expr) -> bool {
        match e {
            Expr::Paren(p) => self.names_vec_local(&p.expr),
            Expr::Path(p) => p
                .path
                .get_ident()
                .is_some_and(|i| self.vec_locals.contains(&i.to_string())),
            _ => false,
        }
    }

    /// `hs.first().unwrap()` and `hs.last().unwrap()` (or `.expect(..)`,
    /// with `.copied()` or `.cloned()` before it) of a `Vec` local, a
    /// sequence parameter or a 1-D array: the item `hs[0]` or
    /// `hs[hs.len() - 1]`, which panics where `unwrap` would, with the
    /// index's message.
    pub(super) fn end_item(&self, m: &syn::ExprMethodCall) -> Option<Expr> {
        let Expr::MethodCall(end) = &*m.receiver else {
            return None;
        };
        let mut end = end;
        if end.args.is_empty() && matches!(end.method.to_string().as_str(), "copied" | "cloned") {
            let Expr::MethodCall(inner) = &*end.receiver else {
                return None;
            };
            end = inner;
        }
        if !unwraps(m) {
            return None;
        }
        self.end_element(end)
    }

    /// `x[0]` for `x.first()`, `x[x.len() - 1]` for `x.last()`, where `x`
    /// is read by index: a `Vec` local, a sequence parameter, a 1-D array,
    /// a bag's item.
    pub(super) fn end_element(&self, end: &syn::ExprMethodCall) -> Option<Expr> {
        let list = &end.receiver;
        if !end.args.is_empty() || !self.indexable(list) {
            return None;
        }
        let span = end.method.span();
        match end.method.to_string().as_str() {
            "first" => Some(syn::parse_quote_spanned!(span=> #list[0])),
            "last" => Some(syn::parse_quote_spanned!(span=> #list[#list.len() - 1])),
            _ => None,
        }
    }

    /// Whether `list` is read by index: a `Vec` local, a sequence
    /// parameter, a 1-D array, a bag's item.
    fn indexable(&self, list: &Expr) -> bool {
        self.names_vec_local(list)
            || self.sequence_named(list).is_some()
            || self.array_rank(list) == Some(1)
            || self.active_local_array(list)
            || self.bag_item(list).is_some()
    }

    /// `x.get(i).copied().unwrap_or(d)` (or `cloned()`, or
    /// `*x.get(i).unwrap_or(&d)`), where `x` is read by index: `if i <
    /// x.len() { x[i].clone() } else { d }`, an element (owned, as the
    /// default is) or the default at the boundary (zero padding over a
    /// sequence of any length).
    pub(super) fn read_or_default(&self, m: &syn::ExprMethodCall) -> Option<Expr> {
        let ("unwrap_or", [default]) = (
            m.method.to_string().as_str(),
            &m.args.iter().collect::<Vec<_>>()[..],
        ) else {
            return None;
        };
        let Expr::MethodCall(get) = &*m.receiver else {
            return None;
        };
        let mut get = get;
        let copied = get.args.is_empty() && (get.method == "copied" || get.method == "cloned");
        if copied {
            let Expr::MethodCall(inner) = &*get.receiver else {
                return None;
            };
            get = inner;
        }
        let (true, [at]) = (
            get.method == "get",
            &get.args.iter().collect::<Vec<_>>()[..],
        ) else {
            return None;
        };
        let list = &get.receiver;
        if !self.indexable(list) {
            return None;
        }
        let default = if copied {
            *default
        } else {
            super::strip_refs(default)
        };
        let span = m.method.span();
        Some(syn::parse_quote_spanned!(span=> {
            let __ad_at: usize = #at;
            if __ad_at < #list.len() {
                #list[__ad_at].clone()
            } else {
                #default
            }
        }))
    }

    /// The active `Vec` local `hs` of `hs.pop().unwrap()` (or
    /// `.expect(..)`).
    pub(super) fn popped_list(&self, m: &syn::ExprMethodCall) -> Option<Ident> {
        let Expr::MethodCall(pop) = &*m.receiver else {
            return None;
        };
        unwraps(m).then(|| self.popped_vec(pop)).flatten()
    }

    /// The active `Vec` local `hs` of `hs.pop()`.
    pub(super) fn popped_vec(&self, pop: &syn::ExprMethodCall) -> Option<Ident> {
        (pop.method == "pop" && pop.args.is_empty())
            .then(|| self.active_vec_local(&pop.receiver))
            .flatten()
    }

    /// `e` if it names a `Vec` local that holds active values.
    pub(super) fn active_vec_local(&self, e: &Expr) -> Option<Ident> {
        let Expr::Path(p) = e else { return None };
        let name = p.path.get_ident()?;
        (self.names_vec_local(e)
            && matches!(self.env.get(&name.to_string()), Some(Binding::Active(_))))
        .then(|| name.clone())
    }

    /// `hs.pop().unwrap()`: the last item, an owned copy of `hs[hs.len() -
    /// 1]` (which panics where `unwrap` would, with the index's message),
    /// then `hs = pop(hs)`, the list without it.
    ///
    /// Input:  `let top = hs.pop().unwrap();`
    /// Output: `t1 = item(hs, {hs.len() - 1}); top = to_owned(t1); hs_1 = pop(hs)`
    pub(super) fn popped_item(&mut self, list: &Ident, e: &Expr) -> Option<Operand> {
        let span = e.span();
        let last: Expr = syn::parse_quote_spanned!(span=> #list[#list.len() - 1].to_owned());
        let item = self.expr(&last)?;
        self.pop(list, e);
        Some(item)
    }

    /// `hs.remove(i)`: an owned copy of `hs[i]`, then the items after it
    /// popped into a list of their own, `hs[i]` popped, and the items
    /// pushed back, as `Vec::remove` shifts them.
    pub(super) fn removed_item(&mut self, list: &Ident, at: &Expr, e: &Expr) -> Option<Operand> {
        let span = e.span();
        let index = self.checked_index(list, at, "removal", Bound::Below, span);
        let item: Expr = syn::parse_quote_spanned!(span=> #list[#index].to_owned());
        let item = self.expr(&item)?;
        let pop: syn::Stmt = syn::parse_quote_spanned!(span=> #list.pop(););
        let after: Expr = syn::parse_quote_spanned!(span=> #index + 1);
        let shift = self.shifted_around(list, &after, pop, span);
        self.stmt(&shift);
        Some(item)
    }

    /// `hs.swap_remove(i)`: an owned copy of `hs[i]`, then the list
    /// gathered with its last item in `i`'s place (`rules::swap_removed_order`,
    /// which panics as `swap_remove` would).
    pub(super) fn swap_removed_item(
        &mut self,
        list: &Ident,
        at: &Expr,
        e: &Expr,
    ) -> Option<Operand> {
        let span = e.span();
        let index = self.checked_index(list, at, "swap_remove", Bound::Below, span);
        let item: Expr = syn::parse_quote_spanned!(span=> #list[#index].to_owned());
        let item = self.expr(&item)?;
        let target: syn::ExprPath = syn::parse_quote_spanned!(span=> #list);
        self.gathered(&target, quote!(swap_removed_order(&#list, #index)), span);
        Some(item)
    }

    /// `let tail = hs.split_off(i)`: owned copies of the items from `i` on,
    /// collected into a `Vec`, then `hs` truncated to `i`.
    pub(super) fn split_off_tail(&mut self, list: &Ident, at: &Expr, e: &Expr) -> Option<Operand> {
        let span = e.span();
        let index = self.checked_index(list, at, "`at` split", Bound::UpTo, span);
        let k = self.fresh_local("k", span);
        let tail: Expr = syn::parse_quote_spanned!(span=> (#index..#list.len())
            .map(|#k| #list[#k].to_owned())
            .collect::<::std::vec::Vec<_>>());
        let tail = self.expr(&tail)?;
        let truncated: syn::Stmt = syn::parse_quote_spanned!(span=> #list.truncate(#index););
        self.stmt(&truncated);
        Some(tail)
    }

    /// `let at: usize = i;` and the assertion `Vec`'s method makes of it,
    /// with its message: the index the method call reads, bound once.
    fn checked_index(
        &mut self,
        list: &Ident,
        at: &Expr,
        what: &str,
        bound: Bound,
        span: Span,
    ) -> Ident {
        let index = self.fresh_local("at", span);
        let (within, relation) = match bound {
            Bound::Below => (quote!(#index < #list.len()), "<"),
            Bound::UpTo => (quote!(#index <= #list.len()), "<="),
        };
        let message = syn::LitStr::new(
            &format!("{what} index (is {{}}) should be {relation} len (is {{}})"),
            span,
        );
        let stmts: [syn::Stmt; 2] = [
            syn::parse_quote_spanned!(span=> let #index: usize = #at;),
            syn::parse_quote_spanned!(span=> ::core::assert!(#within, #message, #index, #list.len());),
        ];
        for stmt in &stmts {
            self.stmt(stmt);
        }
        index
    }

    /// `{ tail = (hs's items from `from` on, popped); middle; (tail pushed
    /// back) }`: what `Vec::insert` and `Vec::remove` do, in pushes and
    /// pops.
    pub(super) fn shifted_around(
        &mut self,
        list: &Ident,
        from: &Expr,
        middle: syn::Stmt,
        span: proc_macro2::Span,
    ) -> syn::Stmt {
        let (tail, shifted) = (
            self.fresh_local("tail", span),
            self.fresh_local("shifted", span),
        );
        syn::parse_quote_spanned!(span=> {
            let mut #tail = ::std::vec::Vec::new();
            while #list.len() > #from {
                #tail.push(#list.pop().unwrap());
            }
            #middle
            while !#tail.is_empty() {
                let #shifted = #tail.pop().unwrap();
                #list.push(#shifted);
            }
        })
    }

    /// `hs = pop(hs)`: the list without its last item.
    pub(super) fn pop(&mut self, list: &Ident, e: &Expr) {
        let Some(base) = self.updated_local(list) else {
            return;
        };
        let first_new = self.vars.len();
        let value = self.op_or_constant(Op::Pop(base), e.span(), e);
        self.bind(list, value, first_new, None, false);
    }

    /// `vec![a, b, c]` with active items: an empty `Vec`, then a push of
    /// each; `vec![x; n]`, `n` copies of `x` collected.
    pub(super) fn vec_of_items(&mut self, m: &syn::ExprMacro, e: &Expr) -> Option<Operand> {
        let tokens = &m.mac.tokens;
        let items = match syn::parse2::<Expr>(quote!([#tokens])) {
            Ok(Expr::Array(items)) => items,
            // `vec![x; n]`: `x` evaluated once, then `n` copies collected.
            Ok(Expr::Repeat(r)) => {
                let (item, len, span) = (&r.expr, &r.len, m.mac.path.span());
                let name = self.fresh_local("repeated", span);
                let copies: Expr = syn::parse_quote_spanned!(span=> {
                    let #name = #item;
                    (0..#len).map(|_| #name.clone()).collect::<::std::vec::Vec<_>>()
                });
                return self.expr(&copies);
            }
            _ => {
                self.errors.at(e, "`vec![..]` of active values takes items, `vec![a, b]`, or one repeated, `vec![x; n]`");
                return None;
            }
        };
        // Every `Vec` item reported, not only the first.
        let rejected = items
            .elems
            .iter()
            .filter(|item| self.rejects_vec_item(item));
        if rejected.count() > 0 {
            return None;
        }
        let list = self.fresh_local("list", m.mac.path.span());
        self.stmts.push(Stmt::Verbatim(
            quote!(let mut #list = ::std::vec::Vec::new();),
        ));
        let mut value = Operand::Const(Const::opaque(list.to_token_stream()));
        for expr in &items.elems {
            value = match (value, self.expr(expr)?) {
                // Constants before the first active item go in as written.
                (Operand::Const(c), Operand::Const(item)) => {
                    let item = &item.tokens;
                    self.stmts.push(Stmt::Verbatim(quote!(#list.push(#item);)));
                    Operand::Const(c)
                }
                (list, item) => self.inst(Op::Push(list, item), expr.span()),
            };
        }
        Some(value)
    }
}

/// Whether `m` is `.unwrap()` or `.expect(..)`.
fn unwraps(m: &syn::ExprMethodCall) -> bool {
    (m.method == "unwrap" && m.args.is_empty()) || (m.method == "expect" && m.args.len() == 1)
}

/// Which indices a `Vec` method takes: those of an item (`remove`), or
/// also the end (`split_off`).
#[derive(Clone, Copy)]
enum Bound {
    Below,
    UpTo,
}
