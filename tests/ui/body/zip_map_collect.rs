use ad::differentiable;
use ad::ndarray::{Array1, Zip};

// `map_collect` takes a closure without `return`, on a `Zip` written out
// in the call.
#[differentiable]
fn returns(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    let z = Zip::from(a).and(b).map_collect(|&u, &v| {
        if u > 0.0 {
            return u;
        }
        v
    });
    z.sum()
}

#[differentiable]
fn named_zip(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    let zip = Zip::from(a).and(b);
    zip.map_collect(|&u, &v| u * v).sum()
}

#[differentiable]
fn broadcast_part(a: &Array1<f64>, b: &Array1<f64>) -> f64 {
    Zip::from(a).and_broadcast(b).map_collect(|&u, &v| u * v).sum()
}

fn main() {}
