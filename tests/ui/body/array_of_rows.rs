use ad::differentiable;
use ad::ndarray::{array, Array1};

// Rows of `array![..]` are stacked when each item is a row of one length.
#[differentiable]
fn ragged(x: f64, y: f64) -> f64 {
    let m = array![[x, y], [y]];
    m.sum()
}

#[differentiable]
fn mixed(x: f64, y: f64) -> f64 {
    let m = array![[x, y], y];
    m.sum()
}

#[differentiable]
fn vector_of_rows(x: f64, y: f64) -> f64 {
    let m = Array1::from(vec![[x, y], [y, x]]);
    m.len() as f64 * x
}

// A fixed-size array of rows would be read as nested arrays (`m[0][1]`,
// `m.iter()` over rows), which a matrix is not.
#[differentiable]
fn fixed_rows(x: f64, y: f64) -> f64 {
    let m = [[x, y], [y, x]];
    m[0][1]
}

fn main() {}
