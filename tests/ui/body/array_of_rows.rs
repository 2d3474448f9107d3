use ad::differentiable;
use ad::ndarray::array;

// `array![..]` builds 1-D arrays of active scalars; rows are not stacked.
#[differentiable]
fn f(x: f64, y: f64) -> f64 {
    let m = array![[x, y], [y, x]];
    m.sum()
}

fn main() {}
