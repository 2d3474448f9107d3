use ad::differentiable;

#[differentiable]
fn f(x: f64, n: usize) -> f64 {
    let y = match n {
        0 => x,
        _ => x * 2.0,
    };
    y * x
}

fn main() {}
