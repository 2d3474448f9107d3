//! Calls between differentiated functions, custom rules written by hand as
//! `g_vjp`/`g_jvp`, and `ad::stop_gradient`.

use ad::ndarray::{Array1, Array2};
use ad::{differentiable, Differentiable};

use super::dual::{abs, Dual64, DualNum};
use super::{random, Scenario};

#[differentiable]
pub fn dense(w: &Array2<f64>, b: &Array1<f64>, #[constant] x: &Array1<f64>) -> Array1<f64> {
    (w.dot(x) + b).mapv(f64::tanh)
}

#[differentiable]
pub fn cube(x: f64) -> f64 {
    x * x * x
}

#[differentiable]
pub fn scaled_norm(v: Array1<f64>, s: f64) -> f64 {
    v.dot(&v).sqrt() * s
}

scenario! {
    scalar nested_calls in Calls, sizes [2, 6];
    #[differentiable]
    pub fn f(w: &Array2<f64>, b: &Array1<f64>, v: &Array1<f64>, #[constant] x: &Array1<f64>) -> f64 {
        let h = dense(w, b, x);
        let g = dense(w, &h, x);
        cube(g.dot(v)) + cube(v.sum()) + scaled_norm(h, v[0])
    }
    inputs(n) { ref w dw = random((n, n), 111), ref b db = random(n, 112), ref v dv = random(n, 113) }
    constants { ref x = random(n, 114) }
}

/// A soft clip, `x / (1 + |x|)`, with a hand-written derivative
/// `1 / (1 + |x|)^2`: a custom rule the generated code calls like any
/// `#[differentiable]` function.
pub fn soft_clip(x: f64) -> f64 {
    x / (1.0 + x.abs())
}

pub fn soft_clip_vjp(x: f64) -> (f64, impl FnOnce(f64) -> (f64,)) {
    let d = 1.0 / (1.0 + x.abs()).powi(2);
    (soft_clip(x), move |dy| (dy * d,))
}

pub fn soft_clip_jvp(x: f64, dx: f64) -> (f64, f64) {
    (soft_clip(x), dx / (1.0 + x.abs()).powi(2))
}

scenario! {
    scalar custom_rule in Calls, sizes [1, 10, 100];
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut total = 0.0;
        for i in 0..x.len() {
            total += soft_clip(x[i] * s);
        }
        total
    }
    inputs(n) { ref x dx = random(n, 115) * 5.0, val s ds = 1.5 }
    hand {
        let slope = x.mapv(|v| 1.0 / (1.0 + (v * *s).abs()).powi(2));
        (&slope * *s, slope.dot(x))
    }
    dual {
        x.iter().map(|&v| { let z = v * *s; z / (abs(z) + 1.0) }).sum::<Dual64>()
    }
}

scenario! {
    scalar stop_gradient_normalisation in StopGradient, sizes [1, 10, 100];
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let scale = ad::stop_gradient(x.dot(x).sqrt());
        (x / scale).mapv(f64::exp).sum()
    }
    inputs(n) { ref x dx = random(n, 116) }
    hand_only {
        let scale = x.dot(x).sqrt();
        ((x / scale).mapv(f64::exp) / scale,)
    }
    dual {
        let scale = x.iter().map(|v| v.re * v.re).sum::<f64>().sqrt();
        x.iter().map(|&v| (v / scale).exp()).sum::<Dual64>()
    }
}

scenario! {
    scalar stop_gradient_of_any_code in StopGradient, sizes [3, 9];
    #[differentiable]
    pub fn f(x: &Array1<f64>, y: f64) -> f64 {
        let sorted_max = ad::stop_gradient({
            let mut v = x.to_vec();
            v.sort_by(|a, b| a.total_cmp(b));
            v[v.len() - 1]
        });
        let m = ad::stop_gradient(y * 2.0);
        (x - sorted_max).mapv(f64::exp).sum() * y + m * y
    }
    inputs(n) { ref x dx = random(n, 117), val y dy = 0.7 }
    hand_only {
        let top = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e = x.mapv(|v| (v - top).exp());
        (&e * *y, e.sum() + 2.0 * *y)
    }
}

/// Mean and variance of the data, returned together.
#[differentiable]
pub fn moments(x: &Array1<f64>) -> (f64, f64) {
    let m = x.mean().unwrap();
    let v = x.mapv(|a| (a - m).powi(2)).mean().unwrap();
    (m, v)
}

// Standardisation by a helper that returns two values, destructured by the
// caller.
scenario! {
    scalar tuple_results in Calls, sizes [2, 10, 1000];
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let (m, v) = moments(x);
        let z = (x - m) / (v + 1.0).sqrt();
        z.mapv(f64::tanh).sum()
    }
    inputs(n) { ref x dx = random(n, 118) }
    hand {
        let n = x.len() as f64;
        let m = x.mean().unwrap();
        let d = x.mapv(|a| a - m);
        let v = d.mapv(|a| a * a).mean().unwrap();
        let s = (v + 1.0).sqrt();
        // g = dL/dz; z = d / s; dL/dx = (g - mean(g)) / s - d * dot(g, d) / (n s^3).
        let g = d.mapv(|a| 1.0 - (a / s).tanh().powi(2));
        let gm = g.mean().unwrap();
        ((g.mapv(|a| a - gm) / s) - &d * (g.dot(&d) / (n * s * s * s)),)
    }
    dual {
        let n = x.len() as f64;
        let m = x.iter().copied().sum::<Dual64>() / n;
        let v = x.iter().map(|&a| (a - m) * (a - m)).sum::<Dual64>() / n;
        let s = (v + 1.0).sqrt();
        x.iter().map(|&a| ((a - m) / s).tanh()).sum::<Dual64>()
    }
}

/// A binary tree over leaf features: the constant data of a recursive
/// model, of another shape in every sample.
pub enum Tree {
    Leaf(usize),
    Node(Box<Tree>, Box<Tree>),
}

/// A balanced tree over the leaves `lo..hi`.
pub fn balanced(lo: usize, hi: usize) -> Tree {
    if hi - lo <= 1 {
        Tree::Leaf(lo)
    } else {
        let mid = (lo + hi) / 2;
        Tree::Node(Box::new(balanced(lo, mid)), Box::new(balanced(mid, hi)))
    }
}

/// A recursive network: a leaf is its feature, a node `tanh(a l + b r)` of
/// its children's values.
#[differentiable]
pub fn tree_value(x: &Array1<f64>, a: f64, b: f64, #[constant] t: &Tree) -> f64 {
    match t {
        Tree::Leaf(i) => x[*i],
        Tree::Node(l, r) => (a * tree_value(x, a, b, l) + b * tree_value(x, a, b, r)).tanh(),
    }
}

/// The values of a tree's nodes, children after their parent, as a
/// hand-written reverse pass reads them.
fn node_values(x: &Array1<f64>, a: f64, b: f64, t: &Tree, out: &mut Vec<f64>) -> f64 {
    let at = out.len();
    out.push(0.0);
    let v = match t {
        Tree::Leaf(i) => x[*i],
        Tree::Node(l, r) => {
            let vl = node_values(x, a, b, l, out);
            let vr = node_values(x, a, b, r, out);
            (a * vl + b * vr).tanh()
        }
    };
    out[at] = v;
    v
}

/// The gradient of `tree_value` by hand: node values first, then adjoints
/// from the root down (`next` walks the values in the order they were
/// written).
fn tree_gradient(
    a: f64,
    b: f64,
    t: &Tree,
    values: &[f64],
    next: &mut usize,
    dy: f64,
    g: &mut (Array1<f64>, f64, f64),
) {
    let v = values[*next];
    *next += 1;
    match t {
        Tree::Leaf(i) => g.0[*i] += dy,
        Tree::Node(l, r) => {
            let dz = dy * (1.0 - v * v);
            let vl = values[*next];
            g.1 += dz * vl;
            tree_gradient(a, b, l, values, next, dz * a, g);
            let vr = values[*next];
            g.2 += dz * vr;
            tree_gradient(a, b, r, values, next, dz * b, g);
        }
    }
}

fn tree_value_dual(x: &Array1<Dual64>, a: Dual64, b: Dual64, t: &Tree) -> Dual64 {
    match t {
        Tree::Leaf(i) => x[*i],
        Tree::Node(l, r) => {
            (a * tree_value_dual(x, a, b, l) + b * tree_value_dual(x, a, b, r)).tanh()
        }
    }
}

// A recursive function over a constant tree, in both modes: reverse mode
// boxes each recursive call's pullback.
scenario! {
    scalar recursion_over_a_tree in Calls, sizes [1, 7, 1000];
    #[differentiable]
    pub fn f(x: &Array1<f64>, a: f64, b: f64, #[constant] t: &Tree) -> f64 {
        tree_value(x, a, b, t).powi(2)
    }
    inputs(n) { ref x dx = random(n, 119), val a da = 0.8, val b db = -0.6 }
    constants { ref t = balanced(0, n) }
    hand {
        let mut values = Vec::new();
        let v = node_values(x, *a, *b, t, &mut values);
        let mut g = (Array1::zeros(x.len()), 0.0, 0.0);
        tree_gradient(*a, *b, t, &values, &mut 0, 2.0 * v, &mut g);
        g
    }
    dual {
        tree_value_dual(x, *a, *b, t).powi(2)
    }
}

/// The same network as a model's method: the leaf features and weights
/// are fields of `self`, and each node calls `self.value(child)`.
#[derive(Clone, Debug, Differentiable)]
pub struct TreeModel {
    pub features: Array1<f64>,
    pub a: f64,
    pub b: f64,
}

impl TreeModel {
    #[differentiable]
    pub fn value(&self, #[constant] t: &Tree) -> f64 {
        match t {
            Tree::Leaf(i) => self.features[*i],
            Tree::Node(l, r) => (self.a * self.value(l) + self.b * self.value(r)).tanh(),
        }
    }
}

// A recursive method: each call passes `self` on, so its pullback adds
// into the caller's gradient of the model rather than returning one.
scenario! {
    scalar recursive_method_over_a_tree in Calls, sizes [1, 7, 1000];
    #[differentiable]
    pub fn f(m: &TreeModel, #[constant] t: &Tree) -> f64 {
        m.value(t).powi(2)
    }
    inputs(n) { ref m dm = TreeModel { features: random(n, 121), a: 0.8, b: -0.6 } }
    constants { ref t = balanced(0, n) }
    hand {
        let mut values = Vec::new();
        let v = node_values(&m.features, m.a, m.b, t, &mut values);
        let mut g = (Array1::zeros(m.features.len()), 0.0, 0.0);
        tree_gradient(m.a, m.b, t, &values, &mut 0, 2.0 * v, &mut g);
        (TreeModelTangent { features: g.0, a: g.1, b: g.2 },)
    }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        nested_calls::scenario(),
        custom_rule::scenario(),
        stop_gradient_normalisation::scenario(),
        stop_gradient_of_any_code::scenario(),
        tuple_results::scenario(),
        recursion_over_a_tree::scenario(),
        recursive_method_over_a_tree::scenario(),
    ]
}
