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

#[differentiable(nested)]
fn of_an_array_inside(x: f64, y: f64) -> f64 {
    let a = ad::ndarray::array![x, y];
    a.sum()
}

#[differentiable(nested)]
fn unnamed(_: f64, y: f64) -> f64 {
    y * y
}

fn main() {}
