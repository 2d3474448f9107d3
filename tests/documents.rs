//! Recursive models over constant documents: a JSON value, parsed into a
//! tree of the user's own type (no tangent, no `Differentiable`), encoded
//! by a function that calls itself on each child, and a child-sum
//! tree-LSTM whose recursive cell returns a pair `(h, c)`, in both modes.

#[macro_use]
mod support;

use ad::differentiable;
use ad::ndarray::{Array1, Array2};
use ad::Differentiable;
use support::{check, random, Flat, Rng};

/// A parsed JSON value.
pub enum Json {
    Num(f64),
    Text(String),
    List(Vec<Json>),
    Object(Vec<(String, Json)>),
}

#[derive(Differentiable, Clone, Debug)]
pub struct Encoder {
    pub leaf: Array1<f64>,
    pub combine: Array2<f64>,
    pub readout: Array1<f64>,
}

/// A value's embedding: leaves from their number or text length, a list
/// the sum of its items' embeddings, an object a running mix of its
/// fields'.
#[differentiable]
pub fn embed(p: &Encoder, #[constant] doc: &Json) -> Array1<f64> {
    match doc {
        Json::Num(v) => (&p.leaf * *v).mapv(f64::tanh),
        Json::Text(s) => &p.leaf * (s.len() as f64 * 0.1),
        Json::List(items) => {
            let mut acc = Array1::<f64>::zeros(p.leaf.len());
            for item in items.iter() {
                acc = acc + embed(p, item);
            }
            p.combine.dot(&acc).mapv(f64::tanh)
        }
        Json::Object(fields) => {
            let mut acc = p.leaf.clone();
            for (_, value) in fields.iter() {
                let e = embed(p, value);
                acc = acc.mapv(|t| t * 0.5) + p.combine.dot(&e);
            }
            acc.mapv(f64::tanh)
        }
    }
}

mod score {
    use super::*;
    #[differentiable]
    pub fn f(p: &Encoder, #[constant] doc: &Json) -> f64 {
        embed(p, doc).dot(&p.readout)
    }
}

fn encoder(d: usize, seed: u64) -> Encoder {
    Encoder {
        leaf: random(d, seed),
        combine: random((d, d), seed + 1) * 0.7,
        readout: random(d, seed + 2),
    }
}

/// Documents of several shapes: a leaf, empty containers, nesting three
/// deep.
fn documents() -> Vec<Json> {
    use Json::*;
    vec![
        Num(0.4),
        Text("plain".into()),
        List(vec![]),
        Object(vec![]),
        List(vec![Num(1.0), Text("ab".into()), List(vec![Num(-0.5)])]),
        Object(vec![
            ("a".into(), Num(0.5)),
            (
                "b".into(),
                List(vec![Num(1.0), Text("hello".into()), List(vec![])]),
            ),
            ("c".into(), Object(vec![("d".into(), Num(-2.0))])),
        ]),
    ]
}

/// Checks a score of the model `p` against references: the value beside
/// its gradient and its tangent, the gradient against central
/// differences, and forward mode along a random direction against
/// `<gradient, direction>`.
fn check_score<P>(
    what: &str,
    p: &P,
    f: impl Fn(&P) -> f64,
    grad: impl Fn(&P) -> (f64, P::Tangent),
    jvp: impl Fn(&P, &P::Tangent) -> (f64, f64),
) where
    P: Differentiable + Flat + Clone,
    P::Tangent: Flat,
{
    let value = f(p);
    let (v, g) = grad(p);
    assert_eq!(v, value, "{what}: the gradient's value");
    let g = g.to_flat();
    if let Err(e) = check::check_gradient(&f, p, &g) {
        panic!("{what}: {e}");
    }
    let direction = p.zero_tangent().random_like(&mut Rng::new(5));
    let (jvalue, jv) = jvp(p, &direction);
    assert_eq!(jvalue, value, "{what}: the tangent's value");
    let expected: f64 = g.iter().zip(direction.to_flat()).map(|(a, b)| a * b).sum();
    assert!(
        check::close(jv, expected, 1e-8),
        "{what}: {jv} vs {expected}"
    );
}

/// Value, gradient against central differences, the pullback of -1.75,
/// and forward mode along a random direction against the gradient.
#[test]
fn recursive_embedding_of_json_documents() {
    for (i, doc) in documents().iter().enumerate() {
        for d in [1, 3] {
            let p = encoder(d, 90 + i as u64);
            check_score(
                &format!("document {i}, d = {d}"),
                &p,
                |q| score::f(q, doc),
                |q| {
                    let (v, (g, _)) = score::f_grad(q, doc);
                    (v, g)
                },
                |q, t| score::f_jvp(q, doc, t, ad::NoTangent),
            );
            let (_, (g, _)) = score::f_grad(&p, doc);
            let (_, pullback) = score::f_vjp(&p, doc);
            let pulled = pullback(-1.75).0.to_flat();
            assert!(pulled.iter().zip(g.to_flat()).all(|(a, b)| check::close(
                *a,
                -1.75 * b,
                1e-12
            )));
        }
    }
}

/// A tree of feature vectors, of any arity.
pub enum Node {
    Leaf(Vec<f64>),
    Inner(Vec<Node>),
}

#[derive(Differentiable, Clone, Debug)]
pub struct TreeLstm {
    pub input: Array2<f64>,
    pub forget: Array2<f64>,
    pub mix: Array2<f64>,
    pub readout: Array1<f64>,
}

/// A node's hidden and cell state: a leaf's from its features, an inner
/// node's from its children's, each child's cell through its own forget
/// gate.
#[differentiable]
pub fn cell(p: &TreeLstm, #[constant] t: &Node) -> (Array1<f64>, Array1<f64>) {
    match t {
        Node::Leaf(x) => {
            let x = Array1::from(x.clone());
            let c = p.input.dot(&x).mapv(f64::tanh);
            (c.mapv(f64::tanh), c)
        }
        Node::Inner(children) => {
            let d = p.forget.nrows();
            let mut h_sum = Array1::<f64>::zeros(d);
            let mut c_sum = Array1::<f64>::zeros(d);
            for child in children.iter() {
                let (h, c) = cell(p, child);
                let f = p.forget.dot(&h).mapv(|v| 1.0 / (1.0 + (-v).exp()));
                h_sum += &h;
                c_sum = c_sum + f * c;
            }
            let c = c_sum + p.mix.dot(&h_sum).mapv(f64::tanh);
            (c.mapv(f64::tanh), c)
        }
    }
}

/// The cell's sum over its children as a chain, `children.iter().map(|c|
/// cell_sum(p, c))`: each item a reference into the tree, passed on to
/// the call of itself (a copy of it would be a `Node`).
#[differentiable]
pub fn cell_sum(p: &TreeLstm, #[constant] t: &Node) -> Array1<f64> {
    match t {
        Node::Leaf(x) => p.input.dot(&Array1::from(x.clone())).mapv(f64::tanh),
        Node::Inner(children) => {
            let d = p.mix.nrows();
            let total = children
                .iter()
                .map(|c| cell_sum(p, c))
                .fold(Array1::<f64>::zeros(d), |a, b| a + b);
            let n = children.iter().map(|c| leaves(p, c)).sum::<f64>();
            p.mix.dot(&total).mapv(f64::tanh) * n.tanh()
        }
    }
}

/// A scalar over the tree, a sum of the calls of itself.
#[differentiable]
pub fn leaves(p: &TreeLstm, #[constant] t: &Node) -> f64 {
    match t {
        Node::Leaf(x) => p.readout[0] * x[0],
        Node::Inner(children) => children.iter().map(|c| leaves(p, c)).sum::<f64>().sin(),
    }
}

mod summed_score {
    use super::*;
    #[differentiable]
    pub fn f(p: &TreeLstm, #[constant] t: &Node) -> f64 {
        cell_sum(p, t).dot(&p.readout)
    }
}

mod tree_score {
    use super::*;
    #[differentiable]
    pub fn f(p: &TreeLstm, #[constant] t: &Node) -> f64 {
        let (h, c) = cell(p, t);
        h.dot(&p.readout) + c.sum() * 0.1
    }
}

fn trees() -> Vec<Node> {
    use Node::*;
    vec![
        Leaf(vec![0.1, 0.5]),
        Inner(vec![]),
        Inner(vec![
            Leaf(vec![0.1, 0.5]),
            Inner(vec![Leaf(vec![-0.3, 0.2]), Leaf(vec![0.7, -0.1])]),
            Inner(vec![]),
        ]),
    ]
}

#[test]
fn tree_lstm_over_trees_of_any_arity() {
    for (i, t) in trees().iter().enumerate() {
        let p = TreeLstm {
            input: random((3, 2), 95 + i as u64),
            forget: random((3, 3), 96),
            mix: random((3, 3), 97) * 0.5,
            readout: random(3, 98),
        };
        check_score(
            &format!("tree {i}"),
            &p,
            |q| tree_score::f(q, t),
            |q| {
                let (v, (g, _)) = tree_score::f_grad(q, t);
                (v, g)
            },
            |q, d| tree_score::f_jvp(q, t, d, ad::NoTangent),
        );
        check_score(
            &format!("tree {i}, summed by a chain"),
            &p,
            |q| summed_score::f(q, t),
            |q| {
                let (v, (g, _)) = summed_score::f_grad(q, t);
                (v, g)
            },
            |q, d| summed_score::f_jvp(q, t, d, ad::NoTangent),
        );
    }
}

/// A binary tree over the features of a model: leaves index them.
pub enum Tree {
    Leaf(usize),
    Node(Box<Tree>, Box<Tree>),
}

#[derive(Differentiable, Clone, Debug)]
pub struct TreeModel {
    pub features: Array1<f64>,
    pub mix: f64,
}

impl TreeModel {
    /// A method that calls itself (`self.value(l)`), whose leaves read an
    /// element of a field in a `match` arm (`self.features[*i]`, which
    /// failed to compile in a branch before: a reference met a value).
    #[differentiable]
    pub fn value(&self, #[constant] t: &Tree) -> f64 {
        match t {
            Tree::Leaf(i) => self.features[*i],
            Tree::Node(l, r) => (self.mix * self.value(l) + self.value(r)).tanh(),
        }
    }

    /// Calls itself by path, `Self::spread(self, child)`, from a loop over
    /// the children: each call's pullback adds into the caller's gradient
    /// of `self`, inside the loop's reverse sweep.
    #[differentiable]
    pub fn spread(&self, #[constant] t: &Tree) -> f64 {
        match t {
            Tree::Leaf(i) => self.features[*i] * self.mix,
            Tree::Node(l, r) => {
                let mut acc = 0.0;
                for child in [l, r] {
                    acc += Self::spread(self, child).sin();
                }
                acc * self.mix
            }
        }
    }
}

#[test]
fn recursive_methods_over_trees() {
    let leaf = |i| Box::new(Tree::Leaf(i));
    let trees = [
        Tree::Leaf(1),
        Tree::Node(leaf(0), leaf(2)),
        Tree::Node(Box::new(Tree::Node(leaf(2), leaf(3))), leaf(1)),
    ];
    for (i, t) in trees.iter().enumerate() {
        let m = TreeModel {
            features: random(4, 99 + i as u64),
            mix: 0.7,
        };
        check_score(
            &format!("tree {i}"),
            &m,
            |q| q.value(t),
            |q| {
                let (v, (g, _)) = q.value_grad(t);
                (v, g)
            },
            |q, d| q.value_jvp(t, d, ad::NoTangent),
        );
        check_score(
            &format!("tree {i}, spread"),
            &m,
            |q| q.spread(t),
            |q| {
                let (v, (g, _)) = q.spread_grad(t);
                (v, g)
            },
            |q, d| q.spread_jvp(t, d, ad::NoTangent),
        );
    }
}
