use ad::differentiable;
use ad::ndarray::Array1;

// A `Vec` of active values holds floats or arrays: `Vec` items (made by
// `to_vec()`, `vec![..]`, a `Vec` local or an instance of a bag) are
// rejected, each at its own expression.
#[differentiable]
fn pushed(x: &Array1<f64>, xs: &[Vec<f64>]) -> f64 {
    let mut groups = Vec::new();
    groups.push(x.to_vec());
    groups.push(xs[0].clone());
    groups.len() as f64
}

#[differentiable]
fn listed(x: &Array1<f64>) -> f64 {
    let squares = x.mapv(|v| v * v).to_vec();
    let groups: Vec<Vec<f64>> = vec![x.to_vec(), squares];
    groups[0][0]
}

fn main() {}
