use ad::differentiable;
use ad::ndarray::Array1;

// A `Vec` of active values is pushed onto, extended, appended, resized,
// filled, inserted into, popped, split, drained, truncated, sorted,
// swapped in, rotated, filtered, reversed, written and read by element,
// and iterated; its other methods have no derivative rule.
#[differentiable]
fn resized_with(x: &Array1<f64>) -> f64 {
    let mut states = Vec::with_capacity(x.len());
    let mut h = 0.0;
    for i in 0..x.len() {
        h = (h + x[i]).tanh();
        states.push(h);
    }
    states.resize_with(2 * x.len(), || h);
    states[0]
}

#[differentiable]
fn extended_from_within(x: &Array1<f64>) -> f64 {
    let mut states = vec![x[0], x[1]];
    states.extend_from_within(..1);
    states[0]
}

fn main() {}
