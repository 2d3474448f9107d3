use ad::differentiable;

fn cube(x: f64) -> f64 {
    x * x * x
}

#[differentiable]
fn f(x: f64) -> f64 {
    cube(x) + 1.0
}

fn main() {}
