use ad::differentiable;

// A closure inlined at its call would read `k`'s new binding: rejected.
#[differentiable]
fn f(x: f64) -> f64 {
    let k = x * 2.0;
    let scale = |v: f64| v * k;
    let k = x * 3.0;
    scale(x) + k
}

fn main() {}
