//! Reverse mode of a recursive function whose calls of itself pass its own
//! active parameters on unchanged (`tree_value(x, a, left)` in
//! `tree_value(x, a, t)`): each call's pullback adds into its caller's
//! adjoints instead of returning gradients of its own.
//!
//! A pullback that returns gradients returns an array the size of the
//! parameter, however little of it the call read: a tree of `n` leaves
//! over `x` of length `n` allocates and adds `n` such arrays, `O(n²)` for
//! an `O(n)` function. Passed the caller's adjoints (`&mut Option<_>`, as
//! the caller keeps them), the pullback adds only what it reads:
//!
//! ```text
//! fn f_vjp(x, a, t) {                          fn f_accumulating(x, a, t) -> (_, Box<dyn FnOnce(
//!     fn f_accumulating(x, a, t) ..                    f64, &mut Option<Array1<f64>>, &mut Option<f64>)>) {
//!     let (y, pb) = f_accumulating(x, a, t);       let (t2, t2_pullback) = f_accumulating(x, a, l);
//!     (y, move |y_bar| {                           ..
//!         let mut x_bar = None; ..                 (y, Box::new(move |y_bar, x_acc, a_acc| {
//!         pb(y_bar, &mut x_bar, &mut a_bar);           let mut x_bar = x_acc.take(); ..
//!         (x_bar.unwrap_or_else(zeros), ..)             t2_pullback(t2_bar, &mut x_bar, &mut a_bar);
//!     })                                               *x_acc = x_bar; ..
//! }                                                }))
//!                                              }
//! ```
//!
//! Other recursive functions box each call's pullback as it is
//! (`rules::boxed_pullback`) and add the gradients it returns.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

use super::ir::{self, CallArg, Callee, Function, Inst, Op, Operand, VarId};
use super::primal::Gen;
use super::reverse::{Builder, Kind};

/// The suffix of the inner function whose pullback adds into its caller's
/// adjoints (`f_accumulating`).
pub const SUFFIX: &str = "accumulating";

/// The name a pullback that adds into its caller's adjoints gives the one
/// for `v`, a parameter: hygienic, as the reverse code binds the body's
/// names.
pub fn accumulator(g: &Gen<'_>, v: VarId) -> Ident {
    Ident::new(&format!("{}_acc", g.ident(v)), Span::mixed_site())
}

/// Whether every call of `f` by itself passes each active parameter at its
/// own position (`f(x, l)`, `f::<T>(x, l)`, `self.f(l)`, `Self::f(self,
/// l)`), and the function branches,
/// so that its adjoints are `Option`s the callee can add into (a struct
/// parameter's, whole from the start, goes into one for the call).
pub(super) fn adds_into_callers(b: &Builder<'_, '_>) -> bool {
    let f = b.g.f;
    b.optional
        && f.is_recursive()
        && f.params
            .iter()
            .flatten()
            .all(|v| !matches!(f.body.result, Operand::Var(r) if r == *v))
        && ir::instructions(&f.body.stmts).iter().all(|i| match &i.op {
            Op::Call(func, args) if f.calls_itself(func) => passes_own_params(f, func, args),
            _ => true,
        })
}

fn passes_own_params(f: &Function, func: &Callee, args: &[CallArg]) -> bool {
    let plain = match func {
        // `f(..)`, `Self::f(self, ..)`: `calls_itself` checked the path.
        Callee::Path(p) => p.qself.is_none(),
        // `self.f(..)`, in a method only (its receiver the first argument).
        Callee::Method(_) => f
            .params
            .first()
            .is_some_and(|p| p.is_some_and(|v| f.ident(v) == super::methods::SELF_NAME)),
    };
    plain
        && args.len() == f.params.len()
        && f.params.iter().zip(args).all(|(p, a)| match p {
            Some(v) => matches!(a.operand, Operand::Var(w) if w == *v),
            None => true,
        })
}

impl Builder<'_, '_> {
    /// The derivative a call goes through: `f_vjp`, or this function's
    /// inner `f_accumulating` for its calls of itself.
    pub(super) fn pullback_suffix(&self, func: &Callee) -> &'static str {
        if self.accumulating && self.g.f.calls_itself(func) {
            SUFFIX
        } else {
            "vjp"
        }
    }

    /// The pullback of a call of the function itself, given the adjoints
    /// of the active parameters to add into: `t2_pullback(t2_bar, &mut
    /// x_bar, &mut a_bar);`. An adjoint kept dense here (a loop's
    /// gradient per unit cotangent) is not an `Option`: the call adds into
    /// a fresh one, added in after as a callee's gradient.
    pub(super) fn pullback_into_adjoints(&mut self, inst: &Inst, pb: &Ident, dest_bar: &Ident) {
        let g = self.g;
        let r = &g.rules;
        let mut adjoints = Vec::new();
        let mut dense = Vec::new();
        let mut wrapped = Vec::new();
        for (pos, v) in g.f.params.iter().enumerate() {
            let Some(v) = *v else { continue };
            let n = format_ident!("{}_{}", dest_bar, pos);
            if !self.useful.contains(&v) {
                adjoints.push(quote!(&mut ::core::option::Option::None));
            } else if self.eager.contains(&v) {
                // Moved in and back out: the callee adds into the same
                // struct, allocating nothing.
                let (bar, x) = (g.bar(v), g.ident(v));
                self.reverse
                    .push(quote!(let mut #n = ::core::option::Option::Some(#bar);));
                adjoints.push(quote!(&mut #n));
                wrapped.push(quote!(#bar = #n.unwrap_or_else(|| #r::unset_tangent(&#x));));
            } else if self.dense_vars.contains(&v) {
                adjoints.push(quote!(&mut #n));
                dense.push((v, n));
            } else {
                let bar = g.bar(v);
                adjoints.push(quote!(&mut #bar));
            }
        }
        for (_, n) in &dense {
            self.reverse
                .push(quote!(let mut #n = ::core::option::Option::None;));
        }
        self.reverse
            .push(quote_spanned!(inst.span=> #pb(#dest_bar, #(#adjoints),*);));
        self.reverse.extend(wrapped);
        for (v, n) in dense {
            let x = g.ident(v);
            self.reverse
                .push(quote!(let #n = #n.unwrap_or_else(|| #r::zero_tangent(&#x));));
            self.accumulate(v, quote!(#n), Kind::Dense);
        }
    }

    /// `let mut x_bar = x_acc.take();` for each useful parameter: the
    /// caller's adjoint, added into from here on. A struct parameter's is
    /// whole, unset where the caller passed none (`eager_start`).
    pub(super) fn take_accumulators(&self) -> Vec<TokenStream> {
        let r = &self.g.rules;
        self.useful_params()
            .map(|v| {
                let (bar, acc) = (self.g.bar(v), accumulator(self.g, v));
                if self.eager.contains(&v) {
                    let x = self.g.ident(v);
                    quote!(let mut #bar = #acc.take().unwrap_or_else(|| #r::unset_tangent(&#x));)
                } else {
                    quote!(let mut #bar = #acc.take();)
                }
            })
            .collect()
    }

    /// `*x_acc = x_bar;`: each adjoint handed back to the caller.
    pub(super) fn return_accumulators(&self) -> Vec<TokenStream> {
        self.useful_params()
            .map(|v| {
                let (bar, acc) = (self.g.bar(v), accumulator(self.g, v));
                if self.eager.contains(&v) {
                    quote!(*#acc = ::core::option::Option::Some(#bar);)
                } else {
                    quote!(*#acc = #bar;)
                }
            })
            .collect()
    }

    /// What `f_vjp` runs once the pullback returns, before the gradients
    /// (`completed(p_bar, &p)`) read the adjoints: each struct
    /// parameter's out of its `Option`.
    pub(super) fn settled_accumulators(&self) -> Vec<TokenStream> {
        if !self.accumulating {
            return Vec::new();
        }
        let r = &self.g.rules;
        self.g
            .f
            .params
            .iter()
            .flatten()
            .copied()
            .filter(|v| self.eager.contains(v))
            .map(|v| {
                let (bar, x) = (self.g.bar(v), self.g.ident(v));
                quote!(let #bar = #bar.unwrap_or_else(|| #r::unset_tangent(&#x));)
            })
            .collect()
    }

    fn useful_params(&self) -> impl Iterator<Item = VarId> + '_ {
        self.g
            .f
            .params
            .iter()
            .flatten()
            .copied()
            .filter(|v| self.useful.contains(v))
    }
}
