use ad::differentiable;

#[differentiable]
fn f(x: f64, flag: bool) -> f64 {
    let c = if flag { x } else { 2.0 * x };
    if c { x } else { -x }
}

fn main() {}
