use ad::differentiable;
use ad::ndarray::Array1;

#[differentiable]
fn f(x: &Array1<f64>) -> f64 {
    x.product() + x.iter().cloned().reduce(f64::max).unwrap()
}

fn main() {}
