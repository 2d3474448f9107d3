use ad::differentiable;
use ad::ndarray::Array1;

#[differentiable]
fn f(x: &Array1<f64>) -> f64 {
    x.iter().sum::<f64>() + x.fold(0.0, |a, b| a + b)
}

fn main() {}
