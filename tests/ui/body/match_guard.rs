use ad::differentiable;

#[differentiable]
fn f(x: f64, n: usize) -> f64 {
    let y = match n {
        k if k > 2 => x * 2.0,
        _ => x,
    };
    y * x
}

fn main() {}
