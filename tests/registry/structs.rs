//! `#[derive(Differentiable)]` structs as parameters: nested `Vec`s of
//! layers indexed in a loop, and `#[constant]` fields.

use ad::ndarray::{Array1, Array2};
use ad::{differentiable, Differentiable};

use super::{random, Scenario};

#[derive(Clone, Debug, Differentiable)]
pub struct Layer {
    pub w: Array2<f64>,
    pub b: Array1<f64>,
}

#[derive(Clone, Debug, Differentiable)]
pub struct Network {
    pub layers: Vec<Layer>,
    pub scale: f64,
    #[constant]
    pub label: String,
}

/// `depth` square layers of width `width`.
fn network(depth: usize, width: usize) -> Network {
    Network {
        layers: (0..depth)
            .map(|k| Layer {
                w: random((width, width), 80 + k as u64) * 0.6,
                b: random(width, 90 + k as u64),
            })
            .collect(),
        scale: 0.7,
        label: "net".into(),
    }
}

scenario! {
    scalar network_of_layers in Structs, sizes [1, 3];
    #[differentiable]
    pub fn f(net: &Network, #[constant] x: &Array1<f64>) -> f64 {
        let mut h = x.to_owned();
        for i in 0..net.layers.len() {
            h = (net.layers[i].w.dot(&h) + &net.layers[i].b).mapv(f64::tanh);
        }
        h.sum() * net.scale
    }
    inputs(n) { ref net dnet = network(n, 4) }
    constants { ref x = random(4, 99) }
}

#[derive(Clone, Debug, Differentiable)]
pub struct Scaled {
    pub weights: Array1<f64>,
    #[constant]
    pub offsets: Array1<f64>,
    pub gain: f64,
}

scenario! {
    scalar struct_with_constant_field in Structs, sizes [2, 7];
    #[differentiable]
    pub fn f(p: &Scaled, t: f64) -> f64 {
        let shifted = &p.weights * t + ad::stop_gradient(p.offsets.clone());
        shifted.mapv(f64::sin).sum() * p.gain
    }
    inputs(n) {
        ref p dp = Scaled { weights: random(n, 100), offsets: random(n, 101), gain: 1.3 },
        val t dt = 0.9
    }
    hand {
        let z = &p.weights * *t + &p.offsets;
        let c = z.mapv(f64::cos) * p.gain;
        let gradient = ScaledTangent { weights: &c * *t, offsets: ad::NoTangent, gain: z.mapv(f64::sin).sum() };
        (gradient, c.dot(&p.weights))
    }
}

/// A least-squares fit whose data and weight live in the model as
/// `#[constant]` fields, read in active arithmetic as they are.
#[derive(Clone, Debug, Differentiable)]
pub struct Regression {
    pub w: Array1<f64>,
    #[constant]
    pub data: Array2<f64>,
    #[constant]
    pub targets: Array1<f64>,
    #[constant]
    pub lambda: f64,
}

scenario! {
    scalar constant_fields_read_directly in Structs, sizes [1, 4];
    #[differentiable]
    pub fn f(p: &Regression) -> f64 {
        let r = p.data.dot(&p.w) - &p.targets;
        let mut penalty = 0.0;
        for i in 0..p.w.len() {
            penalty += p.w[i] * p.w[i] * p.targets[i];
        }
        r.dot(&r) + p.lambda * penalty
    }
    inputs(n) {
        ref p dp = Regression {
            w: random(n, 102),
            data: random((n + 2, n), 103),
            targets: random(n + 2, 104),
            lambda: 0.3,
        }
    }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        network_of_layers::scenario(),
        struct_with_constant_field::scenario(),
        constant_fields_read_directly::scenario(),
    ]
}
