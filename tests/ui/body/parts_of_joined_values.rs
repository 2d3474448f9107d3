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

#[differentiable]
fn both(t: (f64, f64)) -> f64 {
    t.0 * t.1
}

// A tuple a call makes, carried by a loop and read whole (one read only by
// item is split into the items read).
#[differentiable]
fn carried(x: &Array1<f64>) -> f64 {
    let mut t = stats(x);
    for _ in 0..3 {
        t = stats(&(x * t.0));
    }
    both(t)
}

fn main() {}
