use ad::differentiable;
use ad::ndarray::Array1;

// A `Vec` of active values is pushed onto, inserted into, popped, split,
// truncated, sorted, swapped in, filtered, reversed, written and read by
// element, and iterated; its other methods have no derivative rule.
#[differentiable]
fn drained(x: &Array1<f64>) -> f64 {
    let mut states = Vec::with_capacity(x.len());
    let mut h = 0.0;
    for i in 0..x.len() {
        h = (h + x[i]).tanh();
        states.push(h);
    }
    let mut s = 0.0;
    for v in states.drain(..) {
        s += v;
    }
    s
}

#[differentiable]
fn rotated(x: &Array1<f64>) -> f64 {
    let mut states = vec![x[0], x[1]];
    states.rotate_left(1);
    states[0]
}

fn main() {}
