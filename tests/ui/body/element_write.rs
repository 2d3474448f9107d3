use ad::differentiable;
use ad::ndarray::Array1;

#[differentiable]
fn f(x: &Array1<f64>) -> f64 {
    let mut y = Array1::zeros(x.len());
    y[0] = x[0] * 2.0;
    y.sum()
}

fn main() {}
