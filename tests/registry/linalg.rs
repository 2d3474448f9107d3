//! Linear algebra: `dot` in every pairing, transposes, and the models
//! people train (an MLP at several batch sizes).

use ad::differentiable;
use ad::ndarray::{Array1, Array2};

use super::dual::{Dual64, DualNum};
use super::models::mlp_loss_by_hand;
use super::{random, Scenario};

scenario! {
    scalar inner_product in LinearAlgebra, sizes [1, 10, 100];
    #[differentiable]
    pub fn f(u: &Array1<f64>, v: &Array1<f64>) -> f64 {
        u.dot(v) * u.dot(u)
    }
    inputs(n) { ref u du = random(n, 21), ref v dv = random(n, 22) }
    hand {
        let (uv, uu) = (u.dot(v), u.dot(u));
        (v * uu + u * (2.0 * uv), u * uu)
    }
    dual {
        let dot = |p: &Array1<Dual64>, q: &Array1<Dual64>| p.iter().zip(q).map(|(&a, &b)| a * b).sum::<Dual64>();
        dot(u, v) * dot(u, u)
    }
}

scenario! {
    scalar dot_pairings in LinearAlgebra, sizes [1, 3, 8];
    #[differentiable]
    pub fn f(m: &Array2<f64>, u: &Array1<f64>, v: &Array1<f64>, k: &Array2<f64>) -> f64 {
        let mv = m.dot(v);
        let um = u.dot(m);
        let mk = m.dot(k);
        mv.dot(u) + um.sum() + mk.sum() + u.dot(&k.t().dot(v)) + v.dot(&k.dot(u))
    }
    inputs(n) {
        ref m dm = random((n, n + 1), 23),
        ref u du = random(n, 24),
        ref v dv = random(n + 1, 25),
        ref k dk = random((n + 1, n), 26)
    }
}

scenario! {
    scalar constant_operands in LinearAlgebra, sizes [2, 16];
    #[differentiable]
    pub fn f(w: &Array2<f64>, #[constant] x: &Array2<f64>, #[constant] v: &Array1<f64>) -> f64 {
        let y = w.dot(x);
        y.dot(v).mapv(f64::tanh).sum()
    }
    inputs(n) { ref w dw = random((3, n), 27) }
    constants { ref x = random((n, 4), 28), ref v = random(4, 29) }
}

scenario! {
    scalar mlp in LinearAlgebra, sizes [8, 64, 512];
    pub use super::super::models::{
        mlp_loss as f, mlp_loss_grad as f_grad, mlp_loss_jvp as f_jvp, mlp_loss_vjp as f_vjp,
    };
    inputs(n) {
        ref w1 dw1 = random((32, 16), 31),
        ref b1 db1 = random(32, 32),
        ref w2 dw2 = random(32, 33)
    }
    constants { ref x = random((n, 16), 34), ref y = random(n, 35) }
    hand { mlp_loss_by_hand(w1, b1, w2, x, y).1 }
    dual {
        let n = y.len() as f64;
        let h = (x.mapv(Dual64::from).dot(&w1.t()) + b1).mapv(|v| v.tanh());
        let r = h.dot(w2) - y.mapv(Dual64::from);
        r.dot(&r) / n
    }
}

scenario! {
    array dense_layer in LinearAlgebra, sizes [1, 5];
    #[differentiable]
    pub fn f(w: &Array2<f64>, b: &Array1<f64>, #[constant] x: &Array2<f64>) -> Array2<f64> {
        (x.dot(&w.t()) + b).mapv(f64::tanh)
    }
    inputs(n) { ref w dw = random((3, 4), 36), ref b db = random(3, 37) }
    constants { ref x = random((n, 4), 38) }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        inner_product::scenario(),
        dot_pairings::scenario(),
        constant_operands::scenario(),
        mlp::scenario(),
        dense_layer::scenario(),
    ]
}
