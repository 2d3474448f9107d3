use ad::ndarray::ArrayView1;
use ad::Differentiable;

#[derive(Differentiable)]
struct Window<'a> {
    values: ArrayView1<'a, f64>,
}

fn main() {}
