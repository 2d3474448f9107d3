//! `#[derive(Differentiable)]` structs: their tangents, and gradients with
//! respect to them.

use ad::ndarray::{Array1, Array2};
use ad::{Differentiable, TangentSpace};

#[derive(Clone, Debug, Differentiable)]
pub struct Layer {
    pub w: Array2<f64>,
    pub b: Array1<f64>,
}

#[derive(Clone, Debug, Differentiable)]
pub struct Model {
    pub layers: Vec<Layer>,
    pub scale: f64,
    #[constant]
    pub name: String,
}

fn model() -> Model {
    Model {
        layers: vec![
            Layer {
                w: Array2::from_elem((2, 3), 0.5),
                b: Array1::from_elem(2, 0.1),
            },
            Layer {
                w: Array2::from_elem((1, 2), -0.5),
                b: Array1::from_elem(1, 0.2),
            },
        ],
        scale: 2.0,
        name: "m".into(),
    }
}

#[test]
fn tangents_have_the_fields_and_a_vector_space() {
    let m = model();
    let mut t: ModelTangent = m.zero_tangent();
    assert_eq!(t.layers.len(), 2);
    assert_eq!(t.layers[0].w.shape(), &[2, 3]);
    assert_eq!(t.scale, 0.0);
    assert_eq!(t.name, ad::NoTangent);
    t.layers[1].b[0] = 3.0;
    t.scale = 1.0;
    let mut u = t.clone();
    u.add_assign(&t);
    u.scale(0.5);
    assert_eq!(u.layers[1].b[0], 3.0);
    assert_eq!(u.dot(&t), 9.0 + 1.0);
    assert_eq!(u.zero_like().dot(&u), 0.0);
}

#[test]
fn flat_views_skip_constant_fields() {
    use ad::check::Flat;
    let mut m = model();
    assert_eq!(m.flat_len(), 6 + 2 + 2 + 1 + 1);
    m.set(11, 7.0);
    assert_eq!(m.scale, 7.0);
    assert_eq!(m.get(6), 0.1);
}

mod network {
    use super::*;
    use ad::differentiable;

    /// A network with a `Vec` of layers indexed in a loop.
    #[differentiable]
    pub fn loss(m: &Model, #[constant] x: &Array1<f64>) -> f64 {
        let mut h = x.to_owned();
        for i in 0..m.layers.len() {
            h = (m.layers[i].w.dot(&h) + &m.layers[i].b).mapv(f64::tanh);
        }
        h.sum() * m.scale + m.name.len() as f64
    }

    /// Reads fields in straight-line code, and passes a layer to a function.
    #[differentiable]
    pub fn first_layer(m: &Model, #[constant] x: &Array1<f64>) -> f64 {
        let layer = &m.layers[0];
        dense(layer, x).sum() * m.scale
    }

    /// A loop that only sums, over fields of the layers.
    #[differentiable]
    pub fn bias_sum(m: &Model, #[constant] x: &Array1<f64>) -> f64 {
        let mut total = 0.0;
        for i in 0..m.layers.len() {
            total += (&m.layers[i].b * m.scale).mapv(f64::sin).sum();
        }
        total * x.len() as f64
    }

    /// Scalar fields bound, assigned and yielded by value (the binding
    /// owns a copy, as in Rust): a loop carries one, a branch yields one,
    /// and an element of a field array starts another.
    #[differentiable]
    pub fn field_values(m: &Model, #[constant] x: &Array1<f64>) -> f64 {
        let mut acc = m.scale;
        let first = m.layers[0].b[0];
        for i in 0..x.len() {
            acc = acc * m.scale * 0.5 + first * x[i];
            if i == 1 {
                acc = m.scale;
            }
        }
        let y = if x[0] > 0.0 { m.scale } else { acc };
        y * acc + first
    }

    /// Loops over the layers themselves (`for layer in &m.layers`, `.iter()`,
    /// `.iter().enumerate()`), and a local bound to a layer whose fields
    /// are read.
    #[differentiable]
    pub fn iterated_layers(m: &Model, #[constant] x: &Array1<f64>) -> f64 {
        let mut h = x.to_owned();
        for layer in &m.layers {
            let w = &layer.w;
            h = (w.dot(&h) + &layer.b).mapv(f64::tanh);
        }
        let first = &m.layers[0];
        let mut s = first.b.sum();
        for l in m.layers.iter() {
            s = s * l.b[0] + l.w.sum();
        }
        for (i, l) in m.layers.iter().enumerate() {
            if i == 0 {
                continue;
            }
            s += l.b.dot(&l.b) * first.w[[0, 1]];
        }
        h.sum() * m.scale + s
    }

    /// A loss summed over the rows of a constant batch, each sample run
    /// through the layers by a loop over them: the outer loop carries the
    /// sum that the inner one, over active items, makes active.
    #[differentiable]
    pub fn batch_loss(m: &Model, #[constant] xs: &Array2<f64>) -> f64 {
        let mut loss = 0.0;
        for x in xs.rows() {
            let mut h = x.to_owned();
            for layer in m.layers.iter() {
                h = (layer.w.dot(&h) + &layer.b).mapv(f64::tanh);
            }
            // An active field read in a branch of a closure.
            let bent = h.mapv(|v| if v > 0.0 { v * m.scale } else { 0.1 * v });
            loss += (bent[0] - 0.25).powi(2);
        }
        loss / xs.nrows() as f64
    }

    #[differentiable]
    pub fn dense(l: &Layer, #[constant] x: &Array1<f64>) -> Array1<f64> {
        (l.w.dot(x) + &l.b).mapv(f64::tanh)
    }
}

fn check_struct_gradient(
    f: impl Fn(&Model) -> f64,
    grad: impl Fn(&Model) -> (f64, ModelTangent),
    jvp: impl Fn(&Model, &ModelTangent) -> (f64, f64),
) {
    use ad::check::{assert_gradient, close, Flat, Rng};
    let m = model();
    let (value, g) = grad(&m);
    assert_eq!(value, f(&m));
    assert_gradient(&f, &m, &g.to_flat());
    let mut rng = Rng::new(3);
    let mut d = m.zero_tangent();
    for i in 0..d.flat_len() {
        d.set(i, rng.uniform());
    }
    let (jvalue, jv) = jvp(&m, &d);
    assert_eq!(jvalue, value);
    assert!(
        close(jv, g.dot(&d), 1e-9),
        "forward {jv} vs <gradient, d> {}",
        g.dot(&d)
    );
}

/// Checks `network::$f(m, x)` with respect to the model `m`, given its
/// `_grad` and `_jvp`.
macro_rules! check_network {
    ($f:ident, $grad:ident, $jvp:ident, $x:expr) => {
        check_struct_gradient(
            |m| network::$f(m, $x),
            |m| {
                let (v, (g, _)) = network::$grad(m, $x);
                (v, g)
            },
            |m, d| network::$jvp(m, $x, d, ad::NoTangent),
        )
    };
}

#[test]
fn gradients_with_respect_to_structs() {
    let x = Array1::from(vec![0.3, -0.2, 0.7]);
    check_network!(loss, loss_grad, loss_jvp, &x);
    check_network!(first_layer, first_layer_grad, first_layer_jvp, &x);
    check_network!(bias_sum, bias_sum_grad, bias_sum_jvp, &x);
    check_network!(
        iterated_layers,
        iterated_layers_grad,
        iterated_layers_jvp,
        &x
    );
    let xs = Array2::from_shape_fn((4, 3), |(i, j)| (i as f64 - 1.5) * 0.4 + j as f64 * 0.3);
    check_network!(batch_loss, batch_loss_grad, batch_loss_jvp, &xs);
    for x in [x.clone(), -&x] {
        check_network!(field_values, field_values_grad, field_values_jvp, &x);
    }
    // Fields no contribution reaches are zeros of their own shape.
    let (_, (g, _)) = network::first_layer_grad(&model(), &x);
    assert_eq!(
        g.layers[1].w,
        Array2::zeros((1, 2)),
        "the second layer is not used"
    );
    let m = model();
    let (_, pullback) = network::bias_sum_vjp(&m, &x);
    let g = pullback(1.0).0;
    assert_eq!(g.layers[0].w, Array2::zeros((2, 3)));
    assert_eq!(g.layers[1].w, Array2::zeros((1, 2)));
}

#[derive(Clone, Debug, Differentiable)]
pub struct Scaled {
    pub w: Array1<f64>,
    #[constant]
    pub factor: f64,
}

#[ad::differentiable]
fn scaled_sum(s: &Scaled) -> f64 {
    (&s.w * ad::stop_gradient(s.factor)).sum()
}

#[test]
fn constant_fields_are_read_through_stop_gradient() {
    let s = Scaled {
        w: Array1::from(vec![1.0, 2.0]),
        factor: 3.0,
    };
    let (value, (g,)) = scaled_sum_grad(&s);
    assert_eq!(value, scaled_sum(&s));
    assert_eq!(g.w, Array1::from(vec![3.0, 3.0]));
    assert_eq!(g.factor, ad::NoTangent);
}

/// `#[constant]` fields of every kind, read in active code as they are:
/// the macro cannot tell them from differentiable ones (it sees tokens);
/// their tangent type, `NoTangent`, makes forward mode read a zero and
/// reverse mode drop the cotangent.
#[derive(Clone, Debug, Differentiable)]
pub struct Hyper {
    pub w: Array2<f64>,
    pub layers: Vec<Layer>,
    #[constant]
    pub data: Array2<f64>,
    #[constant]
    pub lambda: f64,
    #[constant]
    pub offsets: Vec<f64>,
    #[constant]
    pub fixed: Layer,
    #[constant]
    pub rounds: usize,
}

#[ad::differentiable]
fn layer_energy(l: &Layer) -> f64 {
    l.w.sum() * l.b.dot(&l.b)
}

#[ad::differentiable]
fn hyper_loss(p: &Hyper, s: f64) -> f64 {
    // A field of a constant struct field has no tangent field to read.
    let fixed_b = ad::stop_gradient(p.fixed.b.clone());
    let mut t = (p.data.dot(&p.w.t()).mapv(f64::tanh).sum() + fixed_b.sum()) * p.lambda;
    for k in 0..p.rounds {
        for j in 0..p.w.ncols() {
            t += p.w[[k, j]] * p.data[[k, j]] * s + p.offsets[j] * p.w[[0, j]];
        }
    }
    // A closure reading a constant field and an element of a tracked one.
    let wavy = p.w.row(1).mapv(|v| (v * p.lambda).sin() * p.layers[0].b[0]);
    // A constant field read in a branch of a closure: the closure
    // captures the field, not the struct.
    let leaky = p.w.mapv(|v| if v > 0.0 { v * s } else { p.lambda * v });
    t + layer_energy(&p.layers[0]) * layer_energy(&p.fixed)
        + p.w.row(0).dot(&fixed_b) * s
        + wavy.sum()
        + leaky.sum()
}

#[test]
fn constant_fields_read_directly_in_every_position() {
    use ad::check::{assert_gradient, close, Flat, Rng};
    let mut rng = Rng::new(21);
    let mut random =
        |shape: (usize, usize)| Array2::from_shape_simple_fn(shape, || rng.uniform() - 0.5);
    let p = Hyper {
        w: random((2, 3)),
        layers: vec![Layer {
            w: random((2, 2)),
            b: random((1, 2)).row(0).to_owned(),
        }],
        data: random((4, 3)),
        lambda: 0.7,
        offsets: vec![0.3, -0.2, 0.5],
        fixed: Layer {
            w: random((3, 3)),
            b: random((1, 3)).row(0).to_owned(),
        },
        rounds: 2,
    };
    let s = 0.8;
    let (value, (g, gs)) = hyper_loss_grad(&p, s);
    assert_eq!(value, hyper_loss(&p, s));
    assert_eq!(g.fixed, ad::NoTangent);
    // The struct's flat view skips its constant fields; `s` goes last.
    let flat = |q: &(Hyper, f64)| hyper_loss(&q.0, q.1);
    let mut expected = g.to_flat();
    expected.push(gs);
    assert_gradient(flat, &(p.clone(), s), &expected);
    let mut d = p.zero_tangent();
    for i in 0..d.flat_len() {
        d.set(i, rng.uniform());
    }
    let (jvalue, jv) = hyper_loss_jvp(&p, s, &d, 0.4);
    assert_eq!(jvalue, value);
    let dot = g.dot(&d) + gs * 0.4;
    assert!(close(jv, dot, 1e-9), "forward {jv} vs <gradient, d> {dot}");
}

/// A generic struct: its tangent has the same parameters, and a model of
/// such layers is differentiated at either precision.
#[derive(Clone, Debug, Differentiable)]
pub struct GenericLayer<F: ad::Float> {
    pub w: Array2<F>,
    pub b: Array1<F>,
}

#[derive(Clone, Debug, Differentiable)]
pub struct GenericNet<F>
where
    F: ad::Float,
{
    pub layers: Vec<GenericLayer<F>>,
    pub gain: F,
    #[constant]
    pub steps: usize,
}

#[ad::differentiable]
fn generic_net<F: ad::Float>(p: &GenericNet<F>, #[constant] x: &Array1<F>) -> F {
    let mut h = x.to_owned();
    for l in 0..p.layers.len() {
        h = (p.layers[l].w.dot(&h) + &p.layers[l].b).mapv(|v| v.tanh());
    }
    h.sum() * p.gain
}

#[test]
fn generic_structs_at_both_precisions() {
    use ad::check::{assert_gradient, Flat};
    let layer = |k: f64| GenericLayer {
        w: Array2::from_shape_fn((2, 2), |(i, j)| ((i * 2 + j) as f64 + k).sin() * 0.7),
        b: Array1::from_shape_fn(2, |i| (i as f64 - k) * 0.2),
    };
    let p = GenericNet {
        layers: vec![layer(0.0), layer(1.0)],
        gain: 1.3,
        steps: 2,
    };
    let x = Array1::from(vec![0.4, -0.9]);
    let (value, (g, _)) = generic_net_grad(&p, &x);
    assert_eq!(value, generic_net(&p, &x));
    assert_gradient(|q: &GenericNet<f64>| generic_net(q, &x), &p, &g.to_flat());
    let single = GenericNet {
        layers: p
            .layers
            .iter()
            .map(|l| GenericLayer {
                w: l.w.mapv(|v| v as f32),
                b: l.b.mapv(|v| v as f32),
            })
            .collect(),
        gain: 1.3f32,
        steps: 2,
    };
    let (value32, (g32, _)) = generic_net_grad(&single, &x.mapv(|v| v as f32));
    assert!((value32 as f64 - value).abs() < 1e-5);
    assert!((g32.gain as f64 - g.gain).abs() < 1e-5);
    assert!((g32.layers[0].w[[1, 0]] as f64 - g.layers[0].w[[1, 0]]).abs() < 1e-5);
}

/// Methods: `f_grad` and friends are methods too, `self`'s gradient
/// first, and a method may call another by `self.forward(x)`.
#[derive(Clone, Debug, Differentiable)]
pub struct Perceptron {
    pub w: Array2<f64>,
    pub b: Array1<f64>,
    pub scale: f64,
}

impl Perceptron {
    #[ad::differentiable]
    pub fn forward(&self, #[constant] x: &Array1<f64>) -> Array1<f64> {
        (self.w.dot(x) + &self.b).mapv(f64::tanh)
    }

    #[ad::differentiable]
    pub fn loss(&self, #[constant] x: &Array1<f64>, target: f64) -> f64 {
        let h = self.forward(x);
        let again = Self::forward(self, &(x * 0.5));
        (h.sum() - target).powi(2) * self.scale + again.sum()
    }

    #[ad::differentiable]
    pub fn into_score(self, y: f64) -> f64 {
        self.b.sum() * y + self.scale * self.scale
    }
}

#[test]
fn methods_with_self() {
    use ad::check::{assert_gradient, close, Flat};
    let p = Perceptron {
        w: Array2::from_shape_fn((2, 3), |(i, j)| ((i * 3 + j) as f64 * 0.57).sin()),
        b: Array1::from(vec![0.1, -0.3]),
        scale: 0.8,
    };
    let x = Array1::from(vec![0.3, -0.5, 0.9]);
    let (value, (g, _, gt)) = p.loss_grad(&x, 0.4);
    assert_eq!(value, p.loss(&x, 0.4));
    let flat = |q: &(Perceptron, f64)| q.0.loss(&x, q.1);
    let mut expected = g.to_flat();
    expected.push(gt);
    assert_gradient(flat, &(p.clone(), 0.4), &expected);
    let (jvalue, jv) = p.loss_jvp(&x, 0.4, &g, ad::NoTangent, 1.0);
    assert_eq!(jvalue, value);
    assert!(close(jv, g.dot(&g) + gt, 1e-9));
    let (_, (gs, gy)) = p.clone().into_score_grad(0.5);
    assert_gradient(
        |q: &Perceptron| q.clone().into_score(0.5),
        &p,
        &gs.to_flat(),
    );
    assert!(close(gy, p.b.sum(), 1e-12));
}

/// A method of a generic `impl` (its pullback captures by
/// `ad::__private::Captures`, as `use<..>` cannot name the impl's `F`), looping
/// over `self.layers`; its result of type `F` has `_vjp` and `_jvp`.
impl<F: ad::Float> GenericNet<F> {
    #[ad::differentiable]
    pub fn output(&self, #[constant] x: &Array1<F>) -> F {
        let mut h = x.to_owned();
        for layer in &self.layers {
            h = (layer.w.dot(&h) + &layer.b).mapv(|v| v.tanh());
        }
        h.sum() * self.gain
    }
}

#[test]
fn methods_of_a_generic_impl() {
    use ad::check::{assert_gradient, close, Flat};
    let layer = |k: f64| GenericLayer {
        w: Array2::from_shape_fn((2, 2), |(i, j)| ((i * 2 + j) as f64 + k).cos() * 0.6),
        b: Array1::from_shape_fn(2, |i| (i as f64 + k) * 0.1),
    };
    let p = GenericNet {
        layers: vec![layer(0.0), layer(2.0)],
        gain: 0.9,
        steps: 1,
    };
    let x = Array1::from(vec![0.2, -0.6]);
    let (value, pullback) = p.output_vjp(&x);
    assert_eq!(value, p.output(&x));
    let (g, _) = pullback(1.0);
    assert_gradient(|q: &GenericNet<f64>| q.output(&x), &p, &g.to_flat());
    let (_, jv) = p.output_jvp(&x, &g, ad::NoTangent);
    assert!(close(jv, g.dot(&g), 1e-9));
}

/// A loop that only adds to a scalar reads one field of the struct; the
/// body reads another after it. The loop's gradient, a whole tangent with
/// the other field left unset (empty), is added to the adjoint after that
/// field's cotangent: it used to panic on adding an empty array to a full
/// one.
mod sum_loop_over_one_field {
    use super::*;
    use ad::differentiable;

    #[derive(Clone, Debug, Differentiable)]
    pub struct Pair {
        pub w: Array1<f64>,
        pub v: Array1<f64>,
    }

    #[differentiable]
    pub fn f(p: &Pair, #[constant] x: &Array1<f64>) -> f64 {
        let mut s = 0.0;
        for i in 0..x.len() {
            s += p.w[i] * x[i];
        }
        s + p.v.mapv(f64::sin).sum()
    }
}

#[test]
fn a_sum_loop_leaves_other_fields_to_the_rest() {
    use ad::check::{assert_gradient, Flat};
    use sum_loop_over_one_field::{f, f_grad, Pair};
    let p = Pair {
        w: Array1::from(vec![0.3, -0.5]),
        v: Array1::from(vec![1.0, 2.0, 3.0]),
    };
    let x = Array1::from(vec![1.0, 2.0]);
    let (value, (g, _)) = f_grad(&p, &x);
    assert_eq!(value, f(&p, &x));
    assert_gradient(|p: &Pair| f(p, &x), &p, &Flat::to_flat(&g));
}

/// A method using this session's constructs on its fields: an iterator
/// chain through a closure that reads `self`, `array![..]` of fields,
/// `from_shape_fn`, `var` and `std_axis`.
mod method_with_chains {
    use super::*;
    use ad::differentiable;
    use ad::ndarray::{array, Axis};

    #[derive(Clone, Debug, Differentiable)]
    pub struct Scorer {
        pub w: Array1<f64>,
        pub ws: Vec<f64>,
        pub m: Array2<f64>,
        pub b: f64,
    }

    impl Scorer {
        #[differentiable]
        pub fn loss(&self, #[constant] x: &Array1<f64>) -> f64 {
            let act = |z: f64| z.tanh() * self.b;
            let s: f64 = self.w.iter().zip(x).map(|(w, x)| act(w * x)).sum();
            let t: f64 = self.ws.iter().map(|v| v * v).sum();
            let v = array![self.b, s, self.w[0]];
            let f = Array1::from_shape_fn(x.len(), |i| self.w[i] * x[i]);
            s + t + v.dot(&v) + self.w.var(0.0) + f.sum() + self.m.std_axis(Axis(0), 0.0).sum()
        }
    }
}

#[test]
fn methods_use_chains_closures_and_statistics() {
    use ad::check::{assert_gradient, Flat};
    use method_with_chains::Scorer;
    let s = Scorer {
        w: Array1::from(vec![0.3, -0.5, 0.8]),
        ws: vec![0.2, 0.4],
        m: Array2::from_shape_vec((2, 2), vec![1.0, 2.0, 0.5, -1.0]).unwrap(),
        b: 0.7,
    };
    let x = Array1::from(vec![1.0, 2.0, -1.5]);
    let (value, (g, _)) = s.loss_grad(&x);
    assert_eq!(value, s.loss(&x));
    assert_gradient(|s: &Scorer| s.loss(&x), &s, &Flat::to_flat(&g));
}

/// A model composed of layers whose methods are `#[differentiable]`:
/// `self.encoder.forward(x)`, `m.score(x)`, `layer.forward(&h)` over
/// `&m.layers`, `m.layers[i].forward(x)` and `layers[i].forward(&h)` over a
/// slice of layers, called by method syntax as the receivers' types are
/// not known to the macro (`(&m.encoder).forward_vjp(x)`).
mod composed_of_layers {
    use super::*;
    use ad::differentiable;

    #[derive(Clone, Debug, Differentiable)]
    pub struct Dense {
        pub w: Array2<f64>,
        pub b: Array1<f64>,
    }

    impl Dense {
        #[differentiable]
        pub fn forward(&self, x: &Array1<f64>) -> Array1<f64> {
            (self.w.dot(x) + &self.b).mapv(f64::tanh)
        }
    }

    #[derive(Clone, Debug, Differentiable)]
    pub struct Net {
        pub encoder: Dense,
        pub layers: Vec<Dense>,
        pub head: Array1<f64>,
    }

    impl Net {
        #[differentiable]
        pub fn score(&self, #[constant] x: &Array1<f64>) -> f64 {
            let mut h = self.encoder.forward(x);
            for layer in &self.layers {
                h = layer.forward(&h);
            }
            h.dot(&self.head)
        }
    }

    #[differentiable]
    pub fn loss(m: &Net, #[constant] x: &Array1<f64>) -> f64 {
        let s = m.score(x);
        let skip = m.layers[0].forward(&m.encoder.forward(x)).sum();
        (s - 0.5).powi(2) + skip
    }

    #[allow(clippy::needless_range_loop)] // indexing is the form under test
    #[differentiable]
    pub fn stacked(layers: &[Dense], #[constant] x: &Array1<f64>) -> f64 {
        let mut h = x.to_owned();
        for i in 0..layers.len() {
            h = layers[i].forward(&h);
        }
        h.sum()
    }

    pub fn dense(k: f64) -> Dense {
        Dense {
            w: Array2::from_shape_fn((2, 2), |(i, j)| ((i * 2 + j) as f64 + k).sin() * 0.7),
            b: Array1::from_shape_fn(2, |i| (i as f64 - k) * 0.1),
        }
    }
}

#[test]
fn methods_of_fields_and_of_elements() {
    use ad::check::{assert_gradient, close, Flat};
    use composed_of_layers::*;
    let m = Net {
        encoder: dense(0.0),
        layers: vec![dense(1.0), dense(2.0)],
        head: Array1::from(vec![0.6, -0.4]),
    };
    let x = Array1::from(vec![0.3, -0.8]);
    let (value, (g, _)) = loss_grad(&m, &x);
    assert_eq!(value, loss(&m, &x));
    assert_gradient(|q: &Net| loss(q, &x), &m, &g.to_flat());
    let (jvalue, jv) = loss_jvp(&m, &x, &g, ad::NoTangent);
    assert_eq!(jvalue, value);
    assert!(close(jv, g.dot(&g), 1e-9));
    let layers = m.layers.clone();
    let (value, (g, _)) = stacked_grad(&layers, &x);
    assert_eq!(value, stacked(&layers, &x));
    assert_gradient(|q: &Vec<Dense>| stacked(q, &x), &layers, &g.to_flat());
}
