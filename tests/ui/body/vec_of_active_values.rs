use ad::differentiable;
use ad::ndarray::Array1;

// A `Vec` holds no active values: not written into, not pushed onto.
#[differentiable]
fn written(x: &Array1<f64>) -> f64 {
    let mut v = vec![0.0; x.len()];
    for i in 0..x.len() {
        v[i] = x[i] * x[i];
    }
    v.iter().sum::<f64>()
}

#[differentiable]
fn pushed(x: &Array1<f64>) -> f64 {
    let mut states = Vec::with_capacity(x.len());
    let mut h = 0.0;
    for i in 0..x.len() {
        h = (h + x[i]).tanh();
        states.push(h);
    }
    h
}

fn main() {}
