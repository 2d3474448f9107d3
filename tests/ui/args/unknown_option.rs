use ad::differentiable;

#[differentiable(reverse, backward)]
fn f(x: f64) -> f64 {
    x * x
}

fn main() {
    let _ = f_grad(1.0);
}
