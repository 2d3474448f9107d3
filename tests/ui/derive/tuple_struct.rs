use ad::Differentiable;

#[derive(Differentiable)]
struct Pair(f64, f64);

fn main() {}
