use ad::differentiable;

#[differentiable]
fn f(x: f64) -> f64 {
    let mut y = x;
    let z = loop {
        y = y * 0.5;
        if y < 1.0 {
            break y * 2.0;
        }
    };
    z
}

fn main() {}
