use ad::differentiable;
use ad::ndarray::{Array1, Array2};

// Iterator chains over active values are loops over indices: each source
// must be indexable, one-dimensional and named.
#[differentiable]
fn f(x: &Array1<f64>, m: &Array2<f64>) -> f64 {
    let reversed: f64 = x.iter().rev().map(|v| v * v).sum();
    let rows: f64 = m.iter().zip(x.iter()).map(|(a, b)| a * b).sum();
    let computed: f64 = (x * 2.0).iter().zip(x).map(|(a, b)| a * b).sum();
    let escaping: f64 = x.iter().map(|v| { if *v > 1.0 { return 0.0; } v * 2.0 }).fold(0.0, |a, b| a + b);
    reversed + rows + computed + escaping
}

fn main() {}
