use ad::differentiable;
use ad::ndarray::{Array2, Axis};

// `map_axis` over active values takes a literal axis of a matrix.
#[differentiable]
fn computed_axis(x: &Array2<f64>, #[constant] k: usize) -> f64 {
    x.map_axis(Axis(k), |r| r.sum()).sum()
}

fn main() {}
