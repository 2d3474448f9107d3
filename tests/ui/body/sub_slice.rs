use ad::differentiable;

// A sub-slice of an active slice would be a borrowed value with a tangent
// of its own; elements are read one at a time instead (a chain over one,
// `w[1..].iter()`, reads `w`'s).
#[differentiable]
fn f(x: &[f64], w: &Vec<f64>) -> f64 {
    let head = &x[..2];
    head[0] * w[1..].iter().sum::<f64>()
}

fn main() {}
