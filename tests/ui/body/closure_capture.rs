use ad::differentiable;

fn apply(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    f(x)
}

// A closure that reads an active value, given to a function of the user's.
#[differentiable]
fn f(x: f64, w: f64) -> f64 {
    apply(|v: f64| v * w, x)
}

fn main() {}
