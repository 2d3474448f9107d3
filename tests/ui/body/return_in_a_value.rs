use ad::differentiable;

#[differentiable]
fn f(x: f64) -> f64 {
    let y = {
        if x > 1.0 {
            return x;
        }
        x * 2.0
    };
    // The arm's own `y` would hide the outer `y` from what follows.
    let z = if x > 0.0 {
        let y = y * 2.0;
        if y > 5.0 {
            return 0.0;
        }
        y
    } else {
        -y
    };
    z * y
}

fn main() {}
