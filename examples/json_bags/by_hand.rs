//! The showcase model's gradient written by hand, the practical limit the
//! generated one is measured against (`benches/showcase.rs`) and checked
//! against (`tests/showcase.rs`). One forward sweep per bag keeps the
//! relu mask and each column's argmax; the reverse sweep uses them.

#![allow(dead_code)]

use ad::ndarray::{Array1, Array2, Axis, Zip};

use super::data::Sample;
use super::model::{Embed, EmbedTangent, Model, ModelTangent};

/// What the reverse sweep needs of one bag.
struct PooledBag {
    /// relu(bag · w + b), one row per instance.
    h: Array2<f64>,
    mean: Array1<f64>,
    max: Array1<f64>,
    /// The first row holding each column's (positive) maximum.
    argmax: Vec<Option<usize>>,
}

fn forward(e: &Embed, bag: &Array2<f64>) -> Option<PooledBag> {
    if bag.nrows() == 0 {
        return None;
    }
    let mut h = bag.dot(&e.w) + &e.b;
    h.mapv_inplace(|v| v.max(0.0));
    let mean = h.mean_axis(Axis(0))?;
    let mut max = Array1::zeros(h.ncols());
    let mut argmax = vec![None; h.ncols()];
    for (i, row) in h.rows().into_iter().enumerate() {
        for (j, &v) in row.iter().enumerate() {
            if v > max[j] {
                max[j] = v;
                argmax[j] = Some(i);
            }
        }
    }
    Some(PooledBag {
        h,
        mean,
        max,
        argmax,
    })
}

fn contribution(p: &Option<PooledBag>, wm: &Array1<f64>, wx: &Array1<f64>) -> f64 {
    p.as_ref().map_or(0.0, |p| p.mean.dot(wm) + p.max.dot(wx))
}

/// The gradients of one bag's embedding and pooling weights, given the
/// adjoint `g` of the logit.
fn backward(
    p: &Option<PooledBag>,
    g: f64,
    wm: &Array1<f64>,
    wx: &Array1<f64>,
    bag: &Array2<f64>,
) -> (EmbedTangent, Array1<f64>, Array1<f64>) {
    let (rows, hidden) = (bag.ncols(), wm.len());
    let Some(p) = p else {
        let zero = EmbedTangent {
            w: Array2::zeros((rows, hidden)),
            b: Array1::zeros(hidden),
        };
        return (zero, Array1::zeros(hidden), Array1::zeros(hidden));
    };
    let n = p.h.nrows() as f64;
    // d h = g wm / n on every row, plus g wx at each column's argmax; the
    // relu passes it where h > 0.
    let row = wm * (g / n);
    let mut dh = Array2::zeros(p.h.raw_dim());
    Zip::from(&mut dh)
        .and(&p.h)
        .and_broadcast(&row)
        .for_each(|d, &h, &r| {
            if h > 0.0 {
                *d = r;
            }
        });
    for (j, i) in p.argmax.iter().enumerate() {
        if let Some(i) = *i {
            dh[[i, j]] += g * wx[j];
        }
    }
    let embed = EmbedTangent {
        w: bag.t().dot(&dh),
        b: dh.sum_axis(Axis(0)),
    };
    (embed, &p.mean * g, &p.max * g)
}

/// One sample's loss and gradient, by hand.
pub fn sample_gradient(m: &Model, s: &Sample) -> (f64, ModelTangent) {
    let visits = forward(&m.visits, &s.visits);
    let purchases = forward(&m.purchases, &s.purchases);
    let z = contribution(&visits, &m.visits_mean, &m.visits_max)
        + contribution(&purchases, &m.purchases_mean, &m.purchases_max)
        + s.scalars.dot(&m.scalars)
        + m.bias;
    let loss = z.max(0.0) + (-z.abs()).exp().ln_1p() - s.label * z;
    // d loss / d z = sigmoid(z) - label.
    let g = 1.0 / (1.0 + (-z).exp()) - s.label;
    let (ve, vm, vx) = backward(&visits, g, &m.visits_mean, &m.visits_max, &s.visits);
    let (pe, pm, px) = backward(
        &purchases,
        g,
        &m.purchases_mean,
        &m.purchases_max,
        &s.purchases,
    );
    let tangent = ModelTangent {
        visits: ve,
        purchases: pe,
        visits_mean: vm,
        visits_max: vx,
        purchases_mean: pm,
        purchases_max: px,
        scalars: &s.scalars * g,
        bias: g,
    };
    (loss, tangent)
}
