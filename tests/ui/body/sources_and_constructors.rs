use ad::differentiable;
use ad::ndarray::{concatenate, Array1, Array2, Axis};

fn scale_by(k: f64) -> impl Fn(&f64) -> f64 {
    move |v| v * k
}

// Rows of a computed matrix's elements, an adaptor given neither a
// closure nor a path, and parts to join that are not written out.
#[differentiable]
fn f(x: &Array1<f64>, m: &Array2<f64>, s: f64) -> f64 {
    let rows: f64 = (m * 2.0).iter().zip(x).map(|(a, b)| a * b).sum();
    let scaled: f64 = x.iter().map(scale_by(2.0)).sum();
    let joined = concatenate(Axis(0), &[x.view(), x.view()][..]).unwrap();
    rows + scaled * s + joined.sum()
}

fn main() {}
