use ad::differentiable;

#[differentiable]
fn f(x: f64, n: usize) -> f64 {
    let mut y = x;
    'scaled: {
        if n > 2 {
            break 'scaled;
        }
        y = y * x;
    }
    y
}

fn main() {}
