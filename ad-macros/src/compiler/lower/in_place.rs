//! ndarray's in-place updates of a local, lowered as the assignments they
//! are:
//!
//! - `h.mapv_inplace(f)` is `h = h.mapv(f)`, and `h.fill(v)` is
//!   `h = h.mapv(|_| v)`, `v` evaluated once;
//! - `z.scaled_add(a, &x)` is `z += &x * a`;
//! - `h.assign(&e)` is `h = e.to_owned()`, between arrays of one shape;
//! - `y.slice_mut(s![..]).assign(&v)` is `y` with that part replaced
//!   (`Op::SliceWrite`), and `m.row_mut(i)` is `m.slice_mut(s![i, ..])`,
//!   `m.column_mut(j)` is `m.slice_mut(s![.., j])`;
//! - `hs.push(x)` on a `Vec` local is `hs = push(hs, x)`, and
//!   `hs.extend(items)` a loop of such pushes; `hs.pop();` is
//!   `hs = pop(hs)` (`hs.pop().unwrap()` reads the item first, `lists.rs`),
//!   and `hs.truncate(n)` pops while it is longer than `n` (`hs.clear()`
//!   while it has items); `hs.extend_from_slice(&s)` extends by
//!   `s.iter().cloned()`, `hs.append(&mut other)` by `other.drain(..)`;
//!   `hs.resize(n, x)` truncates, then pushes clones of `x` up to `n`
//!   items, and `hs.fill(x)` clears and pushes as many as there were;
//! - `hs.insert(i, x)` pops the items from `i` on into a list of their
//!   own, pushes `x`, and pushes them back (`let h = hs.remove(i)` is the
//!   same around a pop, `lists.rs`); `hs.reverse()` is `hs =
//!   hs.iter().rev().map(|h| h.to_owned()).collect()`;
//! - `hs.sort_by(compare)` (or `sort_unstable_by`), `hs.swap(i, j)`,
//!   `hs.rotate_left(k)`, `hs.rotate_right(k)`, `hs.retain(keep)`,
//!   `hs.dedup()` and `hs.dedup_by(same)` (and `hs.swap_remove(i)`, after
//!   reading the item, `lists.rs`) find the
//!   positions to read on the values, inactive, then read the items from
//!   them: `hs = order.iter().map(|&i| hs[i].to_owned()).collect()`, whose
//!   reverse sweep scatters each cotangent back to where its item came
//!   from.
//!
//! A loop carries what they update to its next iteration, as it does an
//! assigned name (`in_place_update`, which `control.rs` reads).

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::Expr;

use super::*;
use crate::compiler::ir::Arith;

impl Lowerer<'_> {
    /// ndarray's in-place updates of an active local, as the assignments
    /// they are (see the module's docs). False when `m` is not one, or
    /// carries no derivative.
    pub(super) fn in_place_method(&mut self, m: &syn::ExprMethodCall, whole: &Expr) -> bool {
        // An update that carries no derivative into an array that has none
        // is inactive code, kept as written (`c.scaled_add(a.len() as f64, ..)`).
        let carries = |l: &Self, array: &Expr| {
            let active = matches!(
                super::place_root(array, true).and_then(|r| l.env.get(&r.to_string())),
                Some(Binding::Active(_))
            );
            active || m.args.iter().any(|a| l.carries_derivative(a))
        };
        if let Some((array, info, value)) = part_assign(m) {
            if !carries(self, &m.receiver) {
                return false;
            }
            self.slice_write(&array, &info, value, whole);
            return true;
        }
        if super::constructors::is_zip(&m.receiver) && self.carries_derivative(whole) {
            if let Some(written) = self.zip_for_each(m) {
                if let Ok(stmt) = written {
                    self.stmt(&stmt);
                }
                return true;
            }
        }
        let Expr::Path(target) = &*m.receiver else {
            return false;
        };
        if target.path.get_ident().is_none() || !carries(self, &m.receiver) {
            return false;
        }
        let args: Vec<&Expr> = m.args.iter().collect();
        let span = m.method.span();
        // The methods of a `Vec` apply to a `Vec` local only.
        let on_vec = self
            .vec_locals
            .contains(&target.to_token_stream().to_string());
        match (m.method.to_string().as_str(), args.as_slice()) {
            ("push", [item]) if on_vec => {
                self.push(&m.receiver, item, whole);
                true
            }
            // `hs.extend(items)`: each item pushed, in a loop over them.
            ("extend", [items]) if on_vec => {
                let item = self.fresh_local("extended", span);
                let pushes: syn::Stmt = syn::parse_quote_spanned!(span=> for #item in #items {
                    #target.push(#item);
                });
                self.stmt(&pushes);
                true
            }
            // `hs.extend_from_slice(&s)`: each item of `s` cloned and
            // pushed; `hs.append(&mut other)` moves `other`'s items.
            ("extend_from_slice", [items]) if on_vec => {
                let items = super::strip_refs(items);
                let extended: syn::Stmt =
                    syn::parse_quote_spanned!(span=> #target.extend(#items.iter().cloned()););
                self.stmt(&extended);
                true
            }
            ("append", [_]) if on_vec => {
                let Some(other) = appended_list(m) else {
                    return false;
                };
                let moved: syn::Stmt =
                    syn::parse_quote_spanned!(span=> #target.extend(#other.drain(..)););
                self.stmt(&moved);
                true
            }
            // `hs.resize(n, v)`: truncated to `n`, then `v` pushed until it
            // has `n` items; `hs.fill(v)` pushes as many as it had.
            ("resize", [len, item]) if on_vec => {
                let (kept, value) = (
                    self.fresh_local("len", span),
                    self.fresh_local("value", span),
                );
                let resized: syn::Stmt = syn::parse_quote_spanned!(span=> {
                    let #kept: usize = #len;
                    let #value = #item;
                    #target.truncate(#kept);
                    while #target.len() < #kept {
                        #target.push(#value.clone());
                    }
                });
                self.stmt(&resized);
                true
            }
            ("fill", [item]) if on_vec => {
                let (len, value) = (
                    self.fresh_local("len", span),
                    self.fresh_local("value", span),
                );
                let filled: syn::Stmt = syn::parse_quote_spanned!(span=> {
                    let #len: usize = #target.len();
                    let #value = #item;
                    #target.clear();
                    #target.resize(#len, #value);
                });
                self.stmt(&filled);
                true
            }
            // `hs.truncate(n)`: popped down to `n` items; `hs.clear()` to none.
            ("clear", []) if on_vec => {
                let empty: syn::Stmt = syn::parse_quote_spanned!(span=> #target.truncate(0););
                self.stmt(&empty);
                true
            }
            ("truncate", [len]) if on_vec => {
                let kept = self.fresh_local("kept", span);
                let popped: syn::Stmt = syn::parse_quote_spanned!(span=> {
                    let #kept: usize = #len;
                    while #target.len() > #kept {
                        #target.pop();
                    }
                });
                self.stmt(&popped);
                true
            }
            // `hs.insert(i, x)`: the items from `i` on popped into a list
            // of their own, `x` pushed, and the items pushed back, as
            // `Vec::insert` shifts them.
            ("insert", [at, item]) if on_vec => {
                let index = self.fresh_local("at", span);
                let Some(list) = target.path.get_ident().cloned() else {
                    return false;
                };
                let from: Expr = syn::parse_quote_spanned!(span=> #index);
                let push: syn::Stmt = syn::parse_quote_spanned!(span=> #target.push(#item););
                let shift = self.shifted_around(&list, &from, push, span);
                let inserted: syn::Stmt = syn::parse_quote_spanned!(span=> {
                    let #index: usize = #at;
                    ::core::assert!(
                        #index <= #target.len(),
                        "insertion index (is {}) should be <= len (is {})",
                        #index,
                        #target.len()
                    );
                    #shift
                });
                self.stmt(&inserted);
                true
            }
            // `hs.reverse()`: the items read from the last.
            ("reverse", []) if on_vec => {
                let item = self.fresh_local("item", span);
                let reversed: syn::Stmt = syn::parse_quote_spanned!(span=> #target = #target
                    .iter()
                    .rev()
                    .map(|#item| #item.to_owned())
                    .collect::<::std::vec::Vec<_>>(););
                self.stmt(&reversed);
                true
            }
            // `hs.sort_by(compare)`, `hs.swap(i, j)`, `hs.retain(keep)`,
            // `hs.dedup()`: the positions found on the values, which carry
            // no derivative, then the items read from them.
            (sort @ ("sort_by" | "sort_unstable_by"), [compare]) if on_vec => {
                let stable = sort == "sort_by";
                self.gathered(
                    target,
                    quote!(sort_order(&#target, #stable, #compare)),
                    span,
                );
                true
            }
            ("swap", [i, j]) if on_vec => {
                self.gathered(target, quote!(swapped_order(&#target, #i, #j)), span);
                true
            }
            (rotation @ ("rotate_left" | "rotate_right"), [by]) if on_vec => {
                let left = rotation == "rotate_left";
                self.gathered(target, quote!(rotated_order(&#target, #by, #left)), span);
                true
            }
            ("retain", [keep]) if on_vec => {
                self.gathered(target, quote!(kept_positions(&#target, #keep)), span);
                true
            }
            ("dedup", []) if on_vec => {
                let same = quote!(|a, b| a == b);
                self.gathered(
                    target,
                    quote!(deduplicated_positions(&#target, #same)),
                    span,
                );
                true
            }
            ("dedup_by", [same]) if on_vec => {
                self.gathered(
                    target,
                    quote!(deduplicated_positions(&#target, #same)),
                    span,
                );
                true
            }
            // `hs.pop();`, the item dropped.
            ("pop", []) if self.popped_vec(m).is_some() => {
                let list = self.popped_vec(m).expect("checked");
                self.pop(&list, whole);
                true
            }
            // ndarray's `a.fill(v)`: every element `v`, evaluated once.
            ("fill", [item]) => {
                let value = self.fresh_local("value", span);
                let filled: [syn::Stmt; 2] = [
                    syn::parse_quote_spanned!(span=> let #value = #item;),
                    syn::parse_quote_spanned!(span=> #target = #target.mapv(|_| #value);),
                ];
                for stmt in &filled {
                    self.stmt(stmt);
                }
                true
            }
            ("mapv_inplace", [f]) => {
                let mapped: Expr = syn::parse_quote_spanned!(span=> #target.mapv(#f));
                self.assign(&m.receiver, None, &mapped, whole);
                true
            }
            ("scaled_add", [alpha, rhs]) => {
                // A constant product is emitted as written, where `&c * a`
                // may not exist: `mapv` reads `c` through any reference.
                let scaled: Expr = if self.carries_derivative(rhs) || self.carries_derivative(alpha)
                {
                    syn::parse_quote_spanned!(span=> (#rhs) * (#alpha))
                } else {
                    syn::parse_quote_spanned!(span=> (#rhs).mapv(|v| v * (#alpha)))
                };
                self.assign(&m.receiver, Some(Arith::Add), &scaled, whole);
                true
            }
            // `y.assign(&e)`: `y = e.to_owned()`, between arrays of one
            // shape (`assign` would broadcast `e`, which this does not
            // differentiate). The shape check names `y`'s element type,
            // which an array made only to be assigned into has nowhere else.
            ("assign", [rhs]) => {
                let (value, shape) = (
                    self.fresh_local("assigned", span),
                    self.fresh_local("shape", span),
                );
                let rhs = super::strip_refs(rhs);
                let raw_dim = match &self.scalar_type {
                    // A shape: no derivative flows through it.
                    Some(t) => quote!(::ad::__private::rules::raw_dim_of::<#t, _, _>(
                        ::ad::stop_gradient(&#target)
                    )),
                    None => quote!(#target.raw_dim()),
                };
                let stmts: [syn::Stmt; 4] = [
                    syn::parse_quote_spanned!(span=> let #shape = #raw_dim;),
                    syn::parse_quote_spanned!(span=> let #value = (#rhs).to_owned();),
                    syn::parse_quote_spanned!(span=> ::core::assert!(
                        #shape == #value.raw_dim(),
                        "`assign` of an active value is differentiated between arrays of one shape: broadcast the value first"
                    );),
                    syn::parse_quote_spanned!(span=> #target = #value;),
                ];
                for stmt in &stmts {
                    self.stmt(stmt);
                }
                true
            }
            _ => false,
        }
    }

    /// `hs = order.iter().map(|&i| hs[i].to_owned()).collect()`, where
    /// `order` is what the runtime's `positions` (`rules/orders.rs`) finds
    /// on the values, inactive.
    pub(super) fn gathered(&mut self, target: &syn::ExprPath, positions: TokenStream, span: Span) {
        let (order, i) = (self.fresh_local("order", span), self.fresh_local("i", span));
        let stmts: [syn::Stmt; 2] = [
            syn::parse_quote_spanned!(span=> let #order: ::std::vec::Vec<usize> = ::ad::stop_gradient(
                ::ad::__private::rules::#positions
            );),
            syn::parse_quote_spanned!(span=> #target = #order
                .iter()
                .map(|&#i| #target[#i].to_owned())
                .collect::<::std::vec::Vec<_>>();),
        ];
        for stmt in &stmts {
            self.stmt(stmt);
        }
    }
}

/// The array an in-place update changes, and its value after, as far as
/// activity goes: `h.mapv_inplace(f)` gives `h.mapv(f)`,
/// `h.scaled_add(a, &x)` gives `h + x * a`, `h.assign(&e)` and
/// `m.row_mut(i).assign(&e)` give `e` (as far as activity goes: the rest
/// of `m` stays). A loop carries what they update.
pub(super) fn in_place_update(m: &syn::ExprMethodCall) -> Option<(String, Expr)> {
    if let Some((array, _, value)) = part_assign(m) {
        return Some((array.to_string(), value.clone()));
    }
    if let Some(array) = zip_written(m) {
        return Some((array.to_string(), Expr::MethodCall(m.clone())));
    }
    let Expr::Path(p) = &*m.receiver else {
        return None;
    };
    let target = &m.receiver;
    let value: Expr = match (
        m.method.to_string().as_str(),
        &m.args.iter().collect::<Vec<_>>()[..],
    ) {
        ("mapv_inplace", [f]) => syn::parse_quote!(#target.mapv(#f)),
        ("scaled_add", [alpha, rhs]) => syn::parse_quote!(#target + (#rhs) * (#alpha)),
        ("assign", [rhs]) => (*rhs).clone(),
        // A `Vec` that receives an active value holds one.
        ("push" | "extend" | "extend_from_slice" | "append" | "fill", [item])
        | ("insert" | "resize", [_, item]) => (*item).clone(),
        // These change the list, not whether it is active.
        ("pop" | "reverse" | "dedup" | "clear", [])
        | (
            "truncate" | "sort_by" | "sort_unstable_by" | "remove" | "swap_remove" | "retain"
            | "dedup_by" | "split_off" | "drain" | "rotate_left" | "rotate_right",
            [_],
        )
        | ("swap", [_, _]) => (**target).clone(),
        _ => return None,
    };
    Some((p.path.get_ident()?.to_string(), value))
}

/// `y.slice_mut(info).assign(&v)`, `m.row_mut(i).assign(&v)` or
/// `m.column_mut(j).assign(&v)` on a local: the array, the slice
/// (`s![i, ..]` for a row) and the value.
pub(super) fn part_assign(m: &syn::ExprMethodCall) -> Option<(Ident, Expr, &Expr)> {
    let (Expr::MethodCall(part), [value]) = (&*m.receiver, &m.args.iter().collect::<Vec<_>>()[..])
    else {
        return None;
    };
    let Expr::Path(array) = &*part.receiver else {
        return None;
    };
    let array = array.path.get_ident()?;
    if m.method != "assign" || part.args.len() != 1 {
        return None;
    }
    let k = &part.args[0];
    let span = part.method.span();
    let info = match part.method.to_string().as_str() {
        "slice_mut" => k.clone(),
        "row_mut" => syn::parse_quote_spanned!(span=> ::ad::ndarray::s![#k, ..]),
        "column_mut" => syn::parse_quote_spanned!(span=> ::ad::ndarray::s![.., #k]),
        _ => return None,
    };
    Some((array.clone(), info, super::strip_refs(value)))
}

/// The local array `Zip::from(&mut y)..for_each(..)` writes (`y`), as
/// far as activity goes: its new value depends on every part.
fn zip_written(m: &syn::ExprMethodCall) -> Option<&Ident> {
    if m.method != "for_each" {
        return None;
    }
    let parts = super::constructors::zip_parts(&m.receiver)?;
    super::constructors::written_parts(&parts)
        .first()
        .map(|(_, y)| *y)
}

/// The list `hs.append(&mut other)` empties (`other`): a loop carries it,
/// as it does `hs`.
pub(super) fn appended_list(m: &syn::ExprMethodCall) -> Option<&Ident> {
    let [Expr::Reference(other)] = &m.args.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    match (&*other.expr, m.method == "append") {
        (Expr::Path(p), true) if other.mutability.is_some() => p.path.get_ident(),
        _ => None,
    }
}
