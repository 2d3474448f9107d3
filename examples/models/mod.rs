//! The models the showcase trains, the benchmarks time and the tests check:
//! each as a `#[differentiable]` loss and a hand-written ndarray gradient of
//! the same function (the practical limit the generated code is measured
//! against, and an independent reference for the tests).
//!
//! Shared by `examples/`, `benches/` and `tests/` through `#[path]`.

#![allow(dead_code)]

use ad::differentiable;
use ad::ndarray::{Array1, Array2, Axis};

/// The gradients of the MLP's parameters `(w1, b1, w2)`.
pub type MlpGradient = (Array2<f64>, Array1<f64>, Array1<f64>);

/// The gradients of the bag model's parameters `(w1, b1, w2, b2)`.
pub type BagGradient = (Array2<f64>, Array1<f64>, Array1<f64>, f64);

/// Mean squared error of a one-hidden-layer tanh network on a batch.
#[differentiable]
pub fn mlp_loss(
    w1: &Array2<f64>,
    b1: &Array1<f64>,
    w2: &Array1<f64>,
    #[constant] x: &Array2<f64>,
    #[constant] y: &Array1<f64>,
) -> f64 {
    let h = (x.dot(&w1.t()) + b1).mapv(f64::tanh);
    let r = &h.dot(w2) - y;
    r.dot(&r) / y.len() as f64
}

/// The same loss with the inputs `x` active (their gradient is computed too).
#[differentiable]
pub fn mlp_loss_active_x(
    w1: &Array2<f64>,
    b1: &Array1<f64>,
    w2: &Array1<f64>,
    x: &Array2<f64>,
    #[constant] y: &Array1<f64>,
) -> f64 {
    let h = (x.dot(&w1.t()) + b1).mapv(f64::tanh);
    let r = &h.dot(w2) - y;
    r.dot(&r) / y.len() as f64
}

/// The MLP loss and its gradient, written by hand.
pub fn mlp_loss_by_hand(
    w1: &Array2<f64>,
    b1: &Array1<f64>,
    w2: &Array1<f64>,
    x: &Array2<f64>,
    y: &Array1<f64>,
) -> (f64, MlpGradient) {
    let n = y.len() as f64;
    let h = (x.dot(&w1.t()) + b1).mapv(f64::tanh);
    let r = h.dot(w2) - y;
    let loss = r.dot(&r) / n;
    let dr = r * (2.0 / n);
    let g_w2 = h.t().dot(&dr);
    let mut dz = dr.insert_axis(Axis(1)).dot(&w2.view().insert_axis(Axis(0)));
    dz.zip_mut_with(&h, |d, &h| *d *= 1.0 - h * h);
    let g_w1 = dz.t().dot(x);
    let g_b1 = dz.sum_axis(Axis(0));
    (loss, (g_w1, g_b1, g_w2))
}

/// Binary cross-entropy of a multi-instance classifier on one bag (a matrix
/// with one row per instance, any number of rows): a relu embedding of every
/// instance, mean pooling, and a logistic head.
#[differentiable]
pub fn bag_loss(
    w1: &Array2<f64>,
    b1: &Array1<f64>,
    w2: &Array1<f64>,
    b2: f64,
    #[constant] bag: &Array2<f64>,
    #[constant] label: f64,
) -> f64 {
    let h = (bag.dot(w1) + b1).mapv(|v| v.max(0.0));
    let pooled = h.mean_axis(Axis(0)).unwrap();
    let z = pooled.dot(w2) + b2;
    // log(1 + e^z) - label z, stable for large |z|.
    z.max(0.0) + (-z.abs()).exp().ln_1p() - label * z
}

/// The bag model's logit (for predictions).
pub fn bag_logit(
    w1: &Array2<f64>,
    b1: &Array1<f64>,
    w2: &Array1<f64>,
    b2: f64,
    bag: &Array2<f64>,
) -> f64 {
    let h = (bag.dot(w1) + b1).mapv(|v| v.max(0.0));
    h.mean_axis(Axis(0)).unwrap().dot(w2) + b2
}

/// The bag loss and its gradient, written by hand.
pub fn bag_loss_by_hand(
    w1: &Array2<f64>,
    b1: &Array1<f64>,
    w2: &Array1<f64>,
    b2: f64,
    bag: &Array2<f64>,
    label: f64,
) -> (f64, BagGradient) {
    let n = bag.nrows() as f64;
    let h = (bag.dot(w1) + b1).mapv(|v| v.max(0.0));
    let pooled = h.mean_axis(Axis(0)).unwrap();
    let z = pooled.dot(w2) + b2;
    let loss = z.max(0.0) + (-z.abs()).exp().ln_1p() - label * z;
    let dz = 1.0 / (1.0 + (-z).exp()) - label;
    let g_w2 = &pooled * dz;
    let g_b2 = dz;
    let dpooled = w2 * (dz / n);
    let mut dh = h.mapv(|v| if v > 0.0 { 1.0 } else { 0.0 });
    dh *= &dpooled;
    let g_w1 = bag.t().dot(&dh);
    let g_b1 = dh.sum_axis(Axis(0));
    (loss, (g_w1, g_b1, g_w2, g_b2))
}

/// `log(sum(exp(x)))`, shifted by the maximum for stability (the shift
/// cancels in the derivative, so it is a constant: `stop_gradient`).
#[differentiable]
pub fn logsumexp(x: &Array1<f64>) -> f64 {
    let m = ad::stop_gradient(x.fold(f64::NEG_INFINITY, |a, &b| a.max(b)));
    m + (x - m).mapv(f64::exp).sum().ln()
}

/// Its gradient, the softmax, by hand.
pub fn logsumexp_by_hand(x: &Array1<f64>) -> (f64, Array1<f64>) {
    let m = x.fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    let e = x.mapv(|v| (v - m).exp());
    let s = e.sum();
    (m + s.ln(), e / s)
}

/// The Rosenbrock function as an indexed loop.
#[differentiable]
pub fn rosenbrock(x: &Array1<f64>) -> f64 {
    let mut total = 0.0;
    for i in 0..x.len() - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        total += a * a + 100.0 * b * b;
    }
    total
}

/// Rosenbrock and its gradient, written by hand as one loop, as a person
/// tuning it would: slices, and the contribution to the next element
/// carried in a register rather than stored and reloaded.
pub fn rosenbrock_by_hand(x: &Array1<f64>) -> (f64, Array1<f64>) {
    let x = x.as_slice().expect("a contiguous array");
    let n = x.len();
    let mut total = 0.0;
    let mut g = vec![0.0; n];
    let mut carry = 0.0;
    for i in 0..n - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        total += a * a + 100.0 * b * b;
        g[i] = carry - 2.0 * a - 400.0 * x[i] * b;
        carry = 200.0 * b;
    }
    g[n - 1] = carry;
    (total, Array1::from(g))
}

/// A tanh recurrent network over the rows of `xs`, summed at the end.
#[allow(clippy::op_ref)] // written as in the issue: `&xs.row(t)`
#[differentiable]
pub fn rnn(w: &Array2<f64>, #[constant] xs: &Array2<f64>) -> f64 {
    let mut h = Array1::<f64>::zeros(w.nrows());
    for t in 0..xs.nrows() {
        h = (w.dot(&h) + &xs.row(t)).mapv(f64::tanh);
    }
    h.sum()
}

/// The RNN and its gradient by backpropagation through time, by hand.
pub fn rnn_by_hand(w: &Array2<f64>, xs: &Array2<f64>) -> (f64, Array2<f64>) {
    let mut hs = vec![Array1::<f64>::zeros(w.nrows())];
    for t in 0..xs.nrows() {
        let h = (w.dot(&hs[t]) + xs.row(t)).mapv(f64::tanh);
        hs.push(h);
    }
    let value = hs[xs.nrows()].sum();
    let mut g = Array2::zeros(w.raw_dim());
    let mut dh = Array1::<f64>::ones(w.nrows());
    for t in (0..xs.nrows()).rev() {
        let mut dz = dh;
        dz.zip_mut_with(&hs[t + 1], |d, &h| *d *= 1.0 - h * h);
        g += &dz
            .view()
            .insert_axis(Axis(1))
            .dot(&hs[t].view().insert_axis(Axis(0)));
        dh = w.t().dot(&dz);
    }
    (value, g)
}
