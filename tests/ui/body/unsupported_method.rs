use ad::differentiable;
use ad::ndarray::Array1;

#[differentiable]
fn f(x: &Array1<f64>) -> f64 {
    x.fold_axis(ad::ndarray::Axis(0), 0.0, |a, b| a + b).sum() + x.iter().cloned().reduce(f64::max).unwrap_or_else(|| 0.0)
}

fn main() {}
