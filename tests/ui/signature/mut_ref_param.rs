use ad::differentiable;
use ad::ndarray::Array1;

#[differentiable]
fn f(x: &mut Array1<f64>) -> f64 {
    x.sum()
}

fn main() {}
