use ad::differentiable;
use ad::ndarray::Array1;

// Captured scalars are differentiated, and so is what the closure computes
// from the body alone (`w[0]`, `w.sum()`: moved before the `mapv`); an
// array the closure combines with its element is not (the reverse sweep
// would need a whole gradient per element).
#[differentiable(reverse)]
fn f(x: &Array1<f64>, w: &Array1<f64>) -> f64 {
    x.mapv(|v| (w * v).sum()).sum()
}

fn main() {}
