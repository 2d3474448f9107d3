//! Recursive models over constant documents: a JSON value, parsed into a
//! tree of the user's own type (no tangent, no `Differentiable`), encoded
//! by a function that calls itself on each child, in both modes.

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

/// Value, gradient against central differences, the pullback of -1.75,
/// and forward mode along a random direction against the gradient.
#[test]
fn recursive_embedding_of_json_documents() {
    for (i, doc) in documents().iter().enumerate() {
        for d in [1, 3] {
            let p = encoder(d, 90 + i as u64);
            let value = score::f(&p, doc);
            let (v, (g, _)) = score::f_grad(&p, doc);
            assert_eq!(v, value, "document {i}: f_grad's value");
            let g = g.to_flat();
            if let Err(e) = check::check_gradient(|q: &Encoder| score::f(q, doc), &p, &g) {
                panic!("document {i}, d = {d}: {e}");
            }
            let (_, pullback) = score::f_vjp(&p, doc);
            let pulled = pullback(-1.75).0.to_flat();
            assert!(pulled
                .iter()
                .zip(&g)
                .all(|(a, b)| check::close(*a, -1.75 * b, 1e-12)));
            let dir = p.random_like(&mut Rng::new(5));
            let tangent = EncoderTangent {
                leaf: dir.leaf.clone(),
                combine: dir.combine.clone(),
                readout: dir.readout.clone(),
            };
            let (jvalue, jv) = score::f_jvp(&p, doc, &tangent, ad::NoTangent);
            assert_eq!(jvalue, value, "document {i}: f_jvp's value");
            let expected: f64 = g.iter().zip(dir.to_flat()).map(|(a, b)| a * b).sum();
            assert!(
                check::close(jv, expected, 1e-8),
                "document {i}: {jv} vs {expected}"
            );
        }
    }
}
