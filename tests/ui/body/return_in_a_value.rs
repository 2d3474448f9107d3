use ad::differentiable;

#[differentiable]
fn f(x: f64, #[constant] scale: Option<f64>) -> f64 {
    let y = if x > 0.0 { x * 2.0 } else { return 0.0 };
    let s = match scale {
        Some(s) => s,
        None => return y,
    };
    y * s
}

fn main() {}
