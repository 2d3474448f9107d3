use ad::differentiable;

#[differentiable]
fn f(x: f64, w: f64) -> f64 {
    let scale = |v: f64| v * w;
    scale(x)
}

fn main() {}
