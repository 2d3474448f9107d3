//! `gmm`: the log posterior of a Gaussian mixture with a Wishart prior on
//! the precision matrices (ADBench's objective with GradBench's fixes), and
//! its gradient with respect to `alpha`, `mu`, `q` and `l`.
//!
//! The precision of component `c` is `QᵀQ` with `Q` lower triangular:
//! `exp(q[c])` on the diagonal and `l[c]` below it, column by column.

use ad::differentiable;
use ad::ndarray::{Array1, Array2, Axis};
use serde_json::{json, Value};

use super::{count, matrix, unknown, vector, Evaluated};
use crate::runs::repeat;

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, nine terms; about 1e-15 relative).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = G[1..]
        .iter()
        .enumerate()
        .fold(G[0], |s, (i, g)| s + g / (x + i as f64 + 1.0));
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The log of the multivariate gamma function `Γ_p(a)`.
fn ln_multigamma(a: f64, p: usize) -> f64 {
    let p_f = p as f64;
    0.25 * p_f * (p_f - 1.0) * std::f64::consts::PI.ln()
        + (1..=p)
            .map(|j| ln_gamma(a + 0.5 * (1.0 - j as f64)))
            .sum::<f64>()
}

/// The Wishart prior's constant per component.
fn wishart_constant(d: usize, m: usize, gamma: f64) -> f64 {
    let n = d + m + 1;
    (n * d) as f64 * (gamma.ln() - 0.5 * 2f64.ln()) - ln_multigamma(0.5 * n as f64, d)
}

/// Σᵢ log Σ_c exp(alpha_c + Σ q_c - |Q_c (x_i - mu_c)|² / 2), point by
/// point: for each point, each component's norm in scalar steps along the
/// rows of `Q_c`. The loop over points only adds, so its reverse code runs
/// in the same pass (`fused.rs`).
#[differentiable(reverse)]
pub fn mixture_by_points(
    alpha: &Array1<f64>,
    mu: &Array2<f64>,
    q_diagonal: &Array2<f64>,
    sum_qs: &Array1<f64>,
    l: &Array2<f64>,
    #[constant] x: &Array2<f64>,
) -> f64 {
    let (n, d, k) = (x.nrows(), x.ncols(), alpha.len());
    // The strictly lower triangle of each Q by rows (`l` holds it by
    // columns), so the loop below reads it in order.
    let mut rows_of_l = Array2::zeros(l.raw_dim());
    let mut at = 0;
    for a in 0..d {
        for b in a + 1..d {
            for c in 0..k {
                rows_of_l[[c, b * (b - 1) / 2 + a]] = l[[c, at]];
            }
            at += 1;
        }
    }
    let mut slse = 0.0;
    for i in 0..n {
        let mut main = Array1::zeros(k);
        for c in 0..k {
            // |Q (x_i - mu_c)|² row by row: row b of Q holds exp(q[c, b]) on
            // the diagonal and row b of the lower triangle left of it.
            let mut norm = 0.0;
            for b in 0..d {
                let mut row = q_diagonal[[c, b]] * (x[[i, b]] - mu[[c, b]]);
                for a in 0..b {
                    row += rows_of_l[[c, b * (b - 1) / 2 + a]] * (x[[i, a]] - mu[[c, a]]);
                }
                norm += row * row;
            }
            main[c] = alpha[c] + sum_qs[c] - 0.5 * norm;
        }
        let top = ad::stop_gradient(main.fold(f64::NEG_INFINITY, |s, &v| s.max(v)));
        let mut exps = 0.0;
        for c in 0..k {
            exps += (main[c] - top).exp();
        }
        slse += top + exps.ln();
    }
    slse
}

/// As `mixture_by_points`, component by component with every point at
/// once: |Q_c (x_i - mu_c)|² is row i of (X - mu_c) Q_cᵀ squared and
/// summed, a matrix product rather than n·d²/2 scalar steps. That is twice
/// the arithmetic (Q_c's upper triangle is zeros), done by the matrix
/// product kernel, and worth it once d is large enough.
#[differentiable(reverse)]
pub fn mixture_by_components(
    alpha: &Array1<f64>,
    mu: &Array2<f64>,
    q_diagonal: &Array2<f64>,
    sum_qs: &Array1<f64>,
    l: &Array2<f64>,
    #[constant] x: &Array2<f64>,
) -> f64 {
    let (n, d, k) = (x.nrows(), x.ncols(), alpha.len());
    let mut main: Array2<f64> = Array2::zeros((n, k));
    for c in 0..k {
        let mut qc: Array2<f64> = Array2::zeros((d, d));
        let mut at = 0;
        for a in 0..d {
            qc[[a, a]] = q_diagonal[[c, a]];
            for b in a + 1..d {
                qc[[b, a]] = l[[c, at]];
                at += 1;
            }
        }
        let centred = x - &mu.row(c);
        let qx = centred.dot(&qc.t());
        let column = (&qx * &qx).sum_axis(Axis(1)) * -0.5 + (alpha[c] + sum_qs[c]);
        for i in 0..n {
            main[[i, c]] = column[i];
        }
    }
    // Each point's log-sum-exp, shifted by its largest term (a constant:
    // the shift cancels in the derivative).
    let top =
        ad::stop_gradient(main.map_axis(Axis(1), |r| r.fold(f64::NEG_INFINITY, |s, &v| s.max(v))));
    let shifted = &main - &top.view().insert_axis(Axis(1));
    (shifted.mapv(f64::exp).sum_axis(Axis(1)).mapv(f64::ln) + &top).sum()
}

/// Below this dimension the mixture term goes point by point.
const BY_COMPONENTS_FROM: usize = 8;

#[differentiable(reverse)]
pub fn objective(
    alpha: &Array1<f64>,
    mu: &Array2<f64>,
    q: &Array2<f64>,
    l: &Array2<f64>,
    #[constant] x: &Array2<f64>,
    #[constant] gamma: f64,
    #[constant] m: usize,
) -> f64 {
    let (n, d, k) = (x.nrows(), x.ncols(), alpha.len());
    let q_diagonal = q.mapv(f64::exp);
    let sum_qs = q.sum_axis(Axis(1));
    let slse = if d < BY_COMPONENTS_FROM {
        mixture_by_points(alpha, mu, &q_diagonal, &sum_qs, l, x)
    } else {
        mixture_by_components(alpha, mu, &q_diagonal, &sum_qs, l, x)
    };
    let alpha_top = ad::stop_gradient(alpha.fold(f64::NEG_INFINITY, |s, &v| s.max(v)));
    let lse_alpha = alpha_top + (alpha - alpha_top).mapv(f64::exp).sum().ln();
    let frobenius = (&q_diagonal * &q_diagonal).sum_axis(Axis(1)) + (l * l).sum_axis(Axis(1));
    let prior = (&frobenius * (0.5 * gamma * gamma) - &sum_qs * m as f64).sum();
    let constant = -((n * d) as f64) * 0.5 * (2.0 * std::f64::consts::PI).ln();
    constant + slse - n as f64 * lse_alpha - prior + k as f64 * wishart_constant(d, m, gamma)
}

fn rows(a: &Array2<f64>) -> Value {
    Value::from(a.rows().into_iter().map(|r| r.to_vec()).collect::<Vec<_>>())
}

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let d = count(input, "d")?;
    let alpha = vector(input, "alpha")?;
    let (mu, q, l, x) = (
        matrix(input, "mu")?,
        matrix(input, "q")?,
        matrix(input, "l")?,
        matrix(input, "x")?,
    );
    if mu.ncols() != d || q.ncols() != d || x.ncols() != d || l.ncols() != d * (d - 1) / 2 {
        return Err(format!(
            "`mu`, `q`, `x` need {d} columns and `l` {}",
            d * (d - 1) / 2
        ));
    }
    let gamma = input
        .get("gamma")
        .and_then(Value::as_f64)
        .ok_or("the input has no `gamma`")?;
    let m = count(input, "m")?;
    match function {
        "objective" => {
            let (y, t) = repeat(input, || objective(&alpha, &mu, &q, &l, &x, gamma, m));
            Ok((Value::from(y), t))
        }
        "jacobian" => {
            let (g, t) = repeat(input, || {
                objective_grad(&alpha, &mu, &q, &l, &x, gamma, m).1
            });
            let (g_alpha, g_mu, g_q, g_l, ..) = g;
            Ok((
                json!({ "alpha": g_alpha.to_vec(), "mu": rows(&g_mu), "q": rows(&g_q), "l": rows(&g_l) }),
                t,
            ))
        }
        other => Err(unknown("gmm", other)),
    }
}
