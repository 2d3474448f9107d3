use ad::differentiable;
use ad::ndarray::Array1;

// Three mistakes, three errors; the caller below still type-checks against
// the stub derivatives, so nothing cascades.
#[differentiable]
fn f(x: &Array1<f64>, y: f64) -> f64 {
    let a = x.iter().cloned().reduce(f64::max).unwrap() * y;
    let b = y % 3.0;
    let c = x.to_shape(x.len()).unwrap().to_owned();
    a + b + c.sum()
}

fn main() {
    let x = Array1::zeros(3);
    let (_, (gx, gy)): (f64, (Array1<f64>, f64)) = f_grad(&x, 1.0);
    let _ = (gx, gy);
    let (_, pullback) = f_vjp(&x, 1.0);
    let _: (Array1<f64>, f64) = pullback(1.0);
    let _: (f64, f64) = f_jvp(&x, 1.0, &x, 1.0);
}
