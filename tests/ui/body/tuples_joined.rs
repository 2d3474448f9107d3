use ad::differentiable;
use ad::ndarray::Array1;

#[differentiable]
fn stats(x: &Array1<f64>) -> (f64, f64) {
    let m = x.mean().unwrap();
    (m, m * m)
}

// A tuple a branch chooses, read by position.
#[differentiable]
fn chosen(x: &Array1<f64>) -> f64 {
    let t = if x[0] > 0.0 { stats(x) } else { (0.0, 1.0) };
    t.0 * t.1
}

// A tuple carried by a loop, assigned to one name.
#[differentiable]
fn carried(x: &Array1<f64>) -> f64 {
    let mut acc = (0.0, 0.0);
    for i in 0..x.len() {
        acc = (acc.0 + x[i], acc.1 + x[i] * x[i]);
    }
    acc.1 - acc.0 * acc.0
}

fn main() {}
