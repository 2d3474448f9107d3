use ad::differentiable;
use ad::ndarray::{Array1, Zip};

// `Zip::for_each` writes one part, and its element is read and written as
// `*o` (or through a method, `o.tanh()`).
#[differentiable]
fn two_written(x: &Array1<f64>) -> f64 {
    let mut a = x.to_owned();
    let mut b = x.to_owned();
    Zip::from(&mut a).and(&mut b).for_each(|p, q| *p = *q * 2.0);
    a.sum()
}

#[differentiable]
fn element_passed_on(x: &Array1<f64>) -> f64 {
    let mut a = x.to_owned();
    Zip::from(&mut a).and(x).for_each(|o, &v| std::mem::swap(o, &mut v.clone()));
    a.sum()
}

#[differentiable]
fn iter_mut_element_kept(x: &Array1<f64>) -> f64 {
    let mut a = x.to_owned();
    for o in a.iter_mut() {
        let kept = o;
        *kept = 1.0;
    }
    a.sum()
}

#[differentiable]
fn element_by_pattern(x: &Array1<f64>) -> f64 {
    let mut a = x.to_owned();
    Zip::from(&mut a).and(x).for_each(|&mut o, &v| {
        let _ = o * v;
    });
    a.sum()
}

#[differentiable]
fn closure_that_returns(x: &Array1<f64>) -> f64 {
    let mut a = x.to_owned();
    Zip::from(&mut a).and(x).for_each(|o, &v| {
        if v > 0.0 {
            return;
        }
        *o = v;
    });
    a.sum()
}

#[differentiable]
fn iter_mut_by_pattern(x: &Array1<f64>) -> f64 {
    let mut a = x.to_owned();
    for &mut o in a.iter_mut() {
        let _ = o;
    }
    a.sum()
}

// `iter_mut()` alone or enumerated, not zipped.
#[differentiable]
fn iter_mut_zipped(x: &Array1<f64>) -> f64 {
    let mut a = x.to_owned();
    for (o, v) in a.iter_mut().zip(x) {
        *o *= v;
    }
    a.sum()
}

fn main() {}
