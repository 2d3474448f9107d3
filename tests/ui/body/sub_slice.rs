use ad::differentiable;
use ad::ndarray::Array1;

// A sub-slice of a slice parameter of floats is a 1-D view of it; one of
// a local `Vec`, whose items the macro cannot see to be floats, is
// rejected: its elements are read one at a time instead (a chain over
// one, `v[1..].iter()`, reads `v`'s).
#[differentiable]
fn f(x: &Array1<f64>, w: &Vec<f64>) -> f64 {
    let v = x.to_vec();
    let head = &v[..2];
    head[0] * w[1..].iter().sum::<f64>() + (&w[..1])[0]
}

fn main() {}
