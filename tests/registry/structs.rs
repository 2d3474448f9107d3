//! `#[derive(Differentiable)]` structs as parameters: nested `Vec`s of
//! layers indexed in a loop, `#[constant]` fields, and `Option` fields.

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

// A bag as a `#[constant]` slice of instance arrays, of any count, whose
// elements enter active code as they are (`bag[i].dot(w)`).
scenario! {
    scalar slice_of_instances in Structs, sizes [1, 5];
    #[differentiable]
    pub fn f(w: &Array1<f64>, #[constant] bag: &[Array1<f64>]) -> f64 {
        let mut total = 0.0;
        for i in 0..bag.len() {
            let p = bag[i].dot(w).tanh();
            total += p * p;
        }
        total / bag.len() as f64
    }
    inputs(n) { ref w dw = random(3, 105) }
    constants { ref bag = (0..n).map(|k| random(3, 110 + k as u64)).collect::<Vec<_>>() }
}

// Active slices and `Vec`s of arrays and of structs: each element is a
// place whose adjoint is that element of the gradient's `Vec`.
scenario! {
    scalar slices_of_arrays_and_layers in Structs, sizes [1, 3];
    #[differentiable]
    pub fn f(ms: &[Array2<f64>], layers: &Vec<Layer>, #[constant] x: &Array1<f64>) -> f64 {
        let mut h = x.to_owned();
        for i in 0..ms.len() {
            h = ms[i].dot(&h).mapv(f64::tanh);
        }
        for l in 0..layers.len() {
            h = (layers[l].w.dot(&h) + &layers[l].b).mapv(f64::sin);
        }
        h.sum() + ms[0][[0, 1]] * layers[0].b[1]
    }
    inputs(n) {
        ref ms dms = (0..n).map(|k| random((3, 3), 120 + k as u64) * 0.6).collect::<Vec<_>>(),
        ref layers dlayers = network(n, 3).layers
    }
    constants { ref x = random(3, 99) }
}

/// A layer whose bias may be missing.
#[derive(Clone, Debug, Differentiable)]
pub struct MaybeBiased {
    pub w: Array2<f64>,
    pub bias: Option<Array1<f64>>,
}

/// `depth` square layers, every other one without a bias.
fn maybe_biased(depth: usize, width: usize) -> Vec<MaybeBiased> {
    (0..depth)
        .map(|k| MaybeBiased {
            w: random((width, width), 110 + k as u64) * 0.6,
            bias: (k % 2 == 0).then(|| random(width, 120 + k as u64)),
        })
        .collect()
}

scenario! {
    scalar layers_with_optional_biases in Structs, sizes [1, 4];
    #[differentiable]
    pub fn f(layers: &Vec<MaybeBiased>, #[constant] x: &Array1<f64>) -> f64 {
        let mut h = x.to_owned();
        for layer in layers {
            let z = layer.w.dot(&h);
            h = match &layer.bias {
                Some(b) => (z + b).mapv(f64::tanh),
                None => z.mapv(f64::tanh),
            };
        }
        h.sum()
    }
    inputs(n) { ref layers dlayers = maybe_biased(n, 4) }
    constants { ref x = random(4, 129) }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        network_of_layers::scenario(),
        struct_with_constant_field::scenario(),
        constant_fields_read_directly::scenario(),
        slice_of_instances::scenario(),
        slices_of_arrays_and_layers::scenario(),
        layers_with_optional_biases::scenario(),
    ]
}
