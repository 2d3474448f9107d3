//! A multi-instance model in the spirit of Mill.jl: each list is a bag of
//! instances, embedded by a dense layer with relu, pooled by mean and by
//! max, and the pooled vectors and scalar fields go to a logistic head.
//! Parameters are `#[derive(Differentiable)]` structs; the loss is
//! `#[differentiable]` code, with loops and branches for max pooling.

#![allow(dead_code)]

use ad::ndarray::{Array1, Array2, Axis};
use ad::{differentiable, Differentiable};

use super::data::Sample;

pub const HIDDEN: usize = 12;

/// A dense layer applied to every instance of a bag.
#[derive(Clone, Debug, Differentiable)]
pub struct Embed {
    pub w: Array2<f64>,
    pub b: Array1<f64>,
}

/// The embedding of each list, and a head over the mean- and max-pooled
/// embeddings and the scalar fields.
#[derive(Clone, Debug, Differentiable)]
pub struct Model {
    pub visits: Embed,
    pub purchases: Embed,
    pub visits_mean: Array1<f64>,
    pub visits_max: Array1<f64>,
    pub purchases_mean: Array1<f64>,
    pub purchases_max: Array1<f64>,
    pub scalars: Array1<f64>,
    pub bias: f64,
}

impl Model {
    /// Small deterministic weights.
    pub fn new(seed: u64) -> Self {
        let mut rng = ad::check::Rng::new(seed);
        let mut r =
            |shape: (usize, usize)| Array2::from_shape_simple_fn(shape, || 0.5 * rng.uniform());
        let visits = Embed {
            w: r((3, HIDDEN)),
            b: Array1::from_elem(HIDDEN, 0.1),
        };
        let purchases = Embed {
            w: r((2, HIDDEN)),
            b: Array1::from_elem(HIDDEN, 0.1),
        };
        let mut v = |n| r((1, n)).row(0).to_owned();
        Model {
            visits,
            purchases,
            visits_mean: v(HIDDEN),
            visits_max: v(HIDDEN),
            purchases_mean: v(HIDDEN),
            purchases_max: v(HIDDEN),
            scalars: v(2),
            bias: 0.0,
        }
    }
}

/// The head's contribution of one bag: its relu embedding pooled by mean
/// and by max (zero for an empty bag).
#[differentiable]
pub fn pooled(e: &Embed, wm: &Array1<f64>, wx: &Array1<f64>, #[constant] bag: &Array2<f64>) -> f64 {
    let n = bag.nrows();
    let mut total = 0.0;
    if n > 0 {
        let h = (bag.dot(&e.w) + &e.b).mapv(|v| v.max(0.0));
        let mean = h.mean_axis(Axis(0)).unwrap();
        let mut mx = Array1::zeros(h.ncols());
        for j in 0..h.ncols() {
            // The first row holding the column's largest value. The
            // comparisons are inactive, so the search is plain code the
            // reverse sweep never revisits.
            let mut best = 0;
            for i in 1..n {
                if h[[i, j]] > h[[best, j]] {
                    best = i;
                }
            }
            if h[[best, j]] > 0.0 {
                mx[j] = h[[best, j]];
            }
        }
        total = mean.dot(wm) + mx.dot(wx);
    }
    total
}

/// The logit of "this customer leaves".
#[differentiable]
pub fn logit(
    m: &Model,
    #[constant] visits: &Array2<f64>,
    #[constant] purchases: &Array2<f64>,
    #[constant] scalars: &Array1<f64>,
) -> f64 {
    let v = pooled(&m.visits, &m.visits_mean, &m.visits_max, visits);
    let p = pooled(&m.purchases, &m.purchases_mean, &m.purchases_max, purchases);
    v + p + scalars.dot(&m.scalars) + m.bias
}

/// Binary cross-entropy of one sample, from the logit (stable for large
/// logits).
#[differentiable]
pub fn loss(
    m: &Model,
    #[constant] visits: &Array2<f64>,
    #[constant] purchases: &Array2<f64>,
    #[constant] scalars: &Array1<f64>,
    #[constant] label: f64,
) -> f64 {
    let z = logit(m, visits, purchases, scalars);
    z.max(0.0) + (-z.abs()).exp().ln_1p() - label * z
}

/// One sample's loss and gradient.
pub fn sample_gradient(m: &Model, s: &Sample) -> (f64, ModelTangent) {
    let (value, (g, ..)) = loss_grad(m, &s.visits, &s.purchases, &s.scalars, s.label);
    (value, g)
}

pub fn predict(m: &Model, s: &Sample) -> bool {
    logit(m, &s.visits, &s.purchases, &s.scalars) > 0.0
}

pub fn accuracy(m: &Model, samples: &[Sample]) -> f64 {
    let right = samples
        .iter()
        .filter(|s| predict(m, s) == (s.label > 0.5))
        .count();
    right as f64 / samples.len().max(1) as f64
}
