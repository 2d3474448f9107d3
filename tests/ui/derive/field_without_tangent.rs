use ad::ndarray::Array1;
use ad::Differentiable;

#[derive(Differentiable)]
struct Model {
    w: Array1<f64>,
    lookup: std::collections::HashMap<String, f64>,
}

fn main() {}
