use ad::differentiable;

// Reverse mode cannot recurse: the pullback's type would contain itself.
#[differentiable]
fn power(x: f64, #[constant] n: usize) -> f64 {
    if n == 0 {
        x
    } else {
        power(x * x, n - 1)
    }
}

fn main() {}
