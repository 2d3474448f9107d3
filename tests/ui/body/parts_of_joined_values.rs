use ad::differentiable;
use ad::ndarray::Array1;

#[differentiable]
fn stats(x: &Array1<f64>) -> (f64, f64) {
    let m = x.mean().unwrap();
    (m, m * m)
}

#[derive(Clone, ad::Differentiable)]
pub struct Layer {
    pub w: Array1<f64>,
}

// A reference to a struct that a branch chooses, its field read.
#[differentiable]
fn chosen(layers: &Vec<Layer>, #[constant] k: usize) -> f64 {
    let layer = if k > 0 { &layers[1] } else { &layers[0] };
    layer.w.sum()
}

// A tuple carried by a loop, assigned to one name.
#[differentiable]
fn carried(x: &Array1<f64>) -> f64 {
    let mut acc = (0.0, 0.0);
    for i in 0..x.len() {
        acc = (acc.0 + x[i], acc.1 + x[i] * x[i]);
    }
    acc.1 - acc.0 * acc.0
}

fn main() {}
