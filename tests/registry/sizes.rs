//! One compiled gradient at inputs of very different sizes: bags of any
//! number of instances, slices of any length.

use ad::differentiable;
use ad::ndarray::Array1;

use super::dual::{abs, Dual64, DualNum};
use super::models::bag_loss_by_hand;
use super::{random, Scenario};

scenario! {
    scalar bag_of_instances in Sizes, sizes [1, 2, 17, 50];
    pub use super::super::models::{
        bag_loss as f, bag_loss_grad as f_grad, bag_loss_jvp as f_jvp, bag_loss_vjp as f_vjp,
    };
    inputs(n) {
        ref w1 dw1 = random((6, 10), 121),
        ref b1 db1 = random(10, 122),
        ref w2 dw2 = random(10, 123),
        val b2 db2 = 0.1
    }
    constants { ref bag = random((n, 6), 124 + n as u64), val label = (n % 2) as f64 }
    hand { bag_loss_by_hand(w1, b1, w2, *b2, bag, *label).1 }
    dual {
        let h = (bag.mapv(Dual64::from).dot(w1) + b1).mapv(|v| if v.re > 0.0 { v } else { Dual64::from(0.0) });
        let pooled = h.mean_axis(ad::ndarray::Axis(0)).unwrap();
        let z = pooled.dot(w2) + *b2;
        let softplus = if z.re > 0.0 { z } else { Dual64::from(0.0) } + (-abs(z)).exp().ln_1p();
        softplus - z * *label
    }
}

scenario! {
    scalar slices_of_any_length in Sizes, sizes [1, 3, 1000];
    #[differentiable]
    pub fn f(a: &[f64], b: &Vec<f64>) -> f64 {
        let mut total = 0.0;
        for i in 0..a.len() {
            total += a[i] * b[i % b.len()];
        }
        total * total
    }
    inputs(n) { ref a da = random(n, 125).to_vec(), ref b db = random(3, 126).to_vec() }
    dual {
        let mut total = Dual64::from(0.0);
        for i in 0..a.len() {
            total += a[i] * b[i % b.len()];
        }
        total * total
    }
}

scenario! {
    scalar softmax_cross_entropy in Sizes, sizes [2, 10, 300];
    #[differentiable]
    pub fn f(logits: &Array1<f64>, #[constant] target: usize) -> f64 {
        let m = ad::stop_gradient(logits.fold(f64::NEG_INFINITY, |a, &b| a.max(b)));
        let z = logits - m;
        z.mapv(f64::exp).sum().ln() - z[target]
    }
    inputs(n) { ref logits dl = random(n, 127) * 4.0 }
    constants { val target = n / 2 }
    hand {
        let e = logits.mapv(f64::exp);
        let mut g = &e / e.sum();
        g[*target] -= 1.0;
        (g,)
    }
    dual {
        let m = logits.iter().map(|v| v.re).fold(f64::NEG_INFINITY, f64::max);
        let z = logits.mapv(|v| v - m);
        z.iter().map(|v| v.exp()).sum::<Dual64>().ln() - z[*target]
    }
}

scenario! {
    scalar ragged_bag_of_vecs in Sizes, sizes [1, 4, 50];
    /// A bag of instances of different lengths (1 to 6 features) as
    /// `Vec`s of floats, active: each item reads as a 1-D array, and the
    /// gradient is as ragged as the bag.
    #[differentiable]
    pub fn f(w: &Array1<f64>, xs: &[Vec<f64>]) -> f64 {
        let mut total = 0.0;
        for inst in xs {
            let z: f64 = inst.iter().zip(w.iter()).map(|(a, b)| a * b).sum();
            let energy = inst.iter().map(|v| v * v).sum::<f64>() / inst.len() as f64;
            total += z.tanh() + energy.sqrt();
        }
        total / xs.len() as f64
    }
    inputs(n) {
        ref w dw = random(6, 128),
        ref xs dxs = (0..n).map(|k| random(1 + k % 6, 129 + k as u64).to_vec()).collect::<Vec<_>>()
    }
    dual {
        let mut total = Dual64::from(0.0);
        for inst in xs {
            let z: Dual64 = inst.iter().zip(w.iter()).map(|(a, b)| *a * *b).sum();
            let energy = inst.iter().map(|v| *v * *v).sum::<Dual64>() / inst.len() as f64;
            total += z.tanh() + energy.sqrt();
        }
        total / xs.len() as f64
    }
}

scenario! {
    scalar zero_padded_convolution in Sizes, sizes [1, 10, 300];
    /// A 3-tap convolution over a sequence of any length, zero-padded at
    /// both ends (`x.get(i + 1).copied().unwrap_or(0.0)` past the end),
    /// under a softplus.
    #[differentiable]
    pub fn f(x: &[f64], k: &Array1<f64>) -> f64 {
        let mut total = 0.0;
        for i in 0..x.len() {
            let left = if i > 0 { x[i - 1] } else { 0.0 };
            let right = x.get(i + 1).copied().unwrap_or(0.0);
            let y = k[0] * left + k[1] * x[i] + k[2] * right;
            total += (1.0 + y.exp()).ln();
        }
        total
    }
    inputs(n) { ref x dx = random(n, 130).to_vec(), ref k dk = random(3, 131) }
    dual {
        let zero = Dual64::from(0.0);
        let mut total = zero;
        for i in 0..x.len() {
            let left = if i > 0 { x[i - 1] } else { zero };
            let right = x.get(i + 1).copied().unwrap_or(zero);
            let y = k[0] * left + k[1] * x[i] + k[2] * right;
            total += (y.exp() + 1.0).ln();
        }
        total
    }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        bag_of_instances::scenario(),
        slices_of_any_length::scenario(),
        softmax_cross_entropy::scenario(),
        ragged_bag_of_vecs::scenario(),
        zero_padded_convolution::scenario(),
    ]
}
