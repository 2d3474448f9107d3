use ad::differentiable;
use ad::ndarray::Array1;

#[differentiable]
fn f(x: &Array1<f32>, y: &Array1<f64>) -> f64 {
    (x * y).sum()
}

fn main() {}
