use ad::differentiable;

#[differentiable]
fn f(x: f64) {
    let _ = x * x;
}

fn main() {}
