use ad::differentiable;
use ad::ndarray::Array1;

struct Buffer {
    data: Array1<f64>,
}

#[differentiable]
fn f(x: &Array1<f64>) -> f64 {
    let mut b = Buffer { data: Array1::zeros(x.len()) };
    b.data[0] = x[0] * 2.0;
    b.data.sum()
}

fn main() {}
