use ad::differentiable;
use ad::ndarray::Array1;

// A `match` or `if let` binds parts of its scrutinee: an active one is
// rejected (its arms would read them without a derivative), but for the
// pop, `first()` or `last()` of active values, and an `Option` local whose
// type is written (here it is not, so it is not split).
#[differentiable]
fn matched(x: &Array1<f64>) -> f64 {
    let mut t = 0.0;
    match x.get(1) {
        Some(v) => t += v * 2.0,
        None => {}
    }
    t
}

#[differentiable]
fn tested(x: &Array1<f64>) -> f64 {
    if let Some(v) = x.iter().next() {
        *v
    } else {
        0.0
    }
}

#[differentiable]
fn previous(x: &[f64]) -> f64 {
    let mut prev = None;
    let mut s = 0.0;
    for &v in x {
        if let Some(p) = prev {
            s += v * p;
        }
        prev = Some(v);
    }
    s
}

fn main() {}
