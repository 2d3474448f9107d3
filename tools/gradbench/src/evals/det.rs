//! `det`: the determinant of an `ℓ × ℓ` matrix by expansion by minors
//! (cmpad's `det_by_minor`), and its gradient.
//!
//! Expanding along the first row, then along the first row of each minor,
//! and so on, adds one signed product per permutation σ of the columns, in
//! lexicographic order: `det A = Σ_σ sign(σ) Π_i A[i, σ(i)]`. Written so, as
//! a loop that only adds to the sum, its reverse code runs inside it (each
//! product's pullback right after the product), so the gradient keeps no
//! record of the `ℓ!` terms. (A generated pullback cannot call itself, so
//! the recursion of the reference is unrolled into this loop.)

use ad::differentiable;
use ad::ndarray::Array1;
use serde_json::Value;

use super::{count, json_vector, unknown, vector, Evaluated};
use crate::runs::repeat;

/// `n!`.
fn factorial(n: usize) -> usize {
    (1..=n).product()
}

/// Steps `p` to the next permutation in lexicographic order (wrapping to
/// the first after the last) and returns the sign change: `-1.0` for an odd
/// number of transpositions, `1.0` for an even one.
fn next_permutation(p: &mut [usize]) -> f64 {
    let n = p.len();
    let Some(i) = (1..n).rev().find(|&i| p[i - 1] < p[i]) else {
        p.reverse();
        return if (n / 2).is_multiple_of(2) { 1.0 } else { -1.0 };
    };
    let j = (i..n)
        .rev()
        .find(|&j| p[j] > p[i - 1])
        .expect("p[i] > p[i - 1]");
    p.swap(i - 1, j);
    p[i..].reverse();
    // One swap, then a reversal of n - i entries: ⌊(n - i) / 2⌋ more.
    if (1 + (n - i) / 2).is_multiple_of(2) {
        1.0
    } else {
        -1.0
    }
}

/// The determinant of the row-major `ℓ × ℓ` matrix `a`.
#[differentiable]
pub fn det(a: &Array1<f64>, #[constant] ell: usize) -> f64 {
    let mut columns: Vec<usize> = (0..ell).collect();
    let mut sign = 1.0;
    let mut total = 0.0;
    for _ in 0..factorial(ell) {
        let mut product = sign;
        for i in 0..ell {
            product *= a[i * ell + columns[i]];
        }
        total += product;
        sign *= next_permutation(&mut columns);
    }
    total
}

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let (a, ell) = (vector(input, "A")?, count(input, "ell")?);
    if a.len() != ell * ell {
        return Err(format!("`A` needs {} entries for ell = {ell}", ell * ell));
    }
    match function {
        "primal" => {
            let (y, t) = repeat(input, || det(&a, ell));
            Ok((Value::from(y), t))
        }
        "gradient" => {
            let (g, t) = repeat(input, || det_grad(&a, ell).1 .0);
            Ok((json_vector(&g), t))
        }
        other => Err(unknown("det", other)),
    }
}
