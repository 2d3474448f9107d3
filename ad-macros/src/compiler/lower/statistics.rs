//! ndarray's variances and standard deviations of active arrays: `var`,
//! `std`, `var_axis`, `std_axis`. The derivative is that of the mean of
//! squared deviations written out (their sum over `n - ddof`); the value is
//! ndarray's own, which sums in another order: `exact + (written -
//! stop(written))` has the first's value and the second's derivative.

use proc_macro2::Span;
use syn::Expr;

use super::*;

impl Lowerer<'_> {
    /// `x.var(ddof)` and the others (`name`), as the expression above.
    pub(super) fn variance(&mut self, m: &syn::ExprMethodCall, name: &str, span: Span) -> Expr {
        let axis = name.ends_with("_axis");
        let args: Vec<&Expr> = m.args.iter().collect();
        let x = &m.receiver;
        let ddof = args[args.len() - 1];
        let deviation = self.fresh_local("deviation", span);
        let written = self.fresh_local("written", span);
        // In the signature's float type where it names one: a literal
        // `ddof` would be an `f64`.
        let count_less = match &self.scalar_type {
            Some(t) => quote::quote!(::ad::__private::rules::count_less::<#t>),
            None => quote::quote!(::ad::__private::rules::count_less),
        };
        let variance: Expr = if axis {
            let along = self.fresh_local("along", span);
            let mean = self.fresh_local("mean", span);
            let axis_arg = args[0];
            syn::parse_quote_spanned!(span=> {
                let #along = #axis_arg;
                let #mean = #x.mean_axis(#along).unwrap().insert_axis(#along);
                let #deviation = #x - &#mean;
                let #written = (&#deviation * &#deviation).sum_axis(#along)
                    / #count_less(#x.len_of(#along), #ddof);
                ::ad::stop_gradient(#x.var_axis(#along, #ddof))
                    + (&#written - ::ad::stop_gradient(#written.clone()))
            })
        } else {
            syn::parse_quote_spanned!(span=> {
                let #deviation = #x - #x.mean().unwrap();
                let #written = (&#deviation * &#deviation).sum()
                    / #count_less(#x.len(), #ddof);
                ::ad::stop_gradient(#x.var(#ddof)) + (#written - ::ad::stop_gradient(#written))
            })
        };
        if name.starts_with("std") {
            syn::parse_quote_spanned!(span=> (#variance).sqrt())
        } else {
            variance
        }
    }
}
