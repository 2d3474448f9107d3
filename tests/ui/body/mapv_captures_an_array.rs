use ad::differentiable;
use ad::ndarray::Array1;

// Captured scalars are differentiated; a captured array is not (the
// reverse sweep would need a whole gradient per element).
#[differentiable(reverse)]
fn f(x: &Array1<f64>, w: &Array1<f64>) -> f64 {
    x.mapv(|v| v * w[0]).sum()
}

fn main() {}
