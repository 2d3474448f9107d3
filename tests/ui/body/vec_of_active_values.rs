use ad::differentiable;
use ad::ndarray::Array1;

// A `Vec` of active values is pushed onto, written and read by element,
// and iterated; its other methods, and `vec![x; n]` of an active `x`, have
// no derivative rule.
#[differentiable]
fn repeated(x: &Array1<f64>) -> f64 {
    let v = vec![x[0]; x.len()];
    v[1]
}

#[differentiable]
fn popped(x: &Array1<f64>) -> f64 {
    let mut states = Vec::with_capacity(x.len());
    let mut h = 0.0;
    for i in 0..x.len() {
        h = (h + x[i]).tanh();
        states.push(h);
    }
    states.pop().unwrap()
}

fn main() {}
