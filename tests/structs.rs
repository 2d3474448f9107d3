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
