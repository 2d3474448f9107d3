use ad::differentiable;
use ad::ndarray::Array1;

#[differentiable(nested)]
fn of_an_array(x: &Array1<f64>, s: f64) -> f64 {
    x.sum() * s
}

#[differentiable(nested)]
fn of_a_pair(x: f64) -> (f64, f64) {
    (x, x * x)
}

#[differentiable]
fn inner(x: f64) -> f64 {
    x.sin()
}

#[differentiable(nested)]
fn calls_and_logarithms(x: f64, y: f64) -> f64 {
    inner(x) + x.log(y)
}

fn main() {}
