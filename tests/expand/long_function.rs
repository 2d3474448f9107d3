//! A straight-line function of `n` statements, `let v_k = (v_{k-1} * a).sin()
//! + x[k % 4] * v_{k-1};`, as a code generator would write one: the input of
//! the check that long bodies nest few scopes (`tests/expand.rs`) and of the
//! expansion-time figures for long functions (`benches/compile_cost.rs`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub fn long_function(n: usize) -> TokenStream {
    let steps = (1..=n).map(|k| {
        let (this, prev) = (format_ident!("v{k}"), format_ident!("v{}", k - 1));
        let i = k % 4;
        quote!(let #this = (#prev * a).sin() + x[#i] * #prev;)
    });
    let last = format_ident!("v{n}");
    quote!(
        fn f(x: &Array1<f64>, a: f64) -> f64 {
            let v0 = a;
            #(#steps)*
            #last
        }
    )
}
