use ad::differentiable;
use ad::ndarray::Array1;

#[differentiable]
fn f(x: &Array1<f64>, w: f64) -> f64 {
    x.mapv(|v| v * w).sum()
}

fn main() {}
