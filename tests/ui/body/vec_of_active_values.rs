use ad::differentiable;
use ad::ndarray::Array1;

// A `Vec` of active values is pushed onto, popped, truncated, sorted,
// written and read by element, and iterated; its other methods have no
// derivative rule.
#[differentiable]
fn inserted(x: &Array1<f64>) -> f64 {
    let mut states = Vec::with_capacity(x.len());
    let mut h = 0.0;
    for i in 0..x.len() {
        h = (h + x[i]).tanh();
        states.insert(0, h);
    }
    states[0]
}

#[differentiable]
fn deduplicated(x: &Array1<f64>) -> f64 {
    let mut states = vec![x[0], x[1]];
    states.dedup();
    states[0]
}

fn main() {}
