use ad::differentiable;

#[derive(ad::Differentiable)]
struct Model {
    w: f64,
}

impl Model {
    // A method that changes its value has no gradient to return.
    #[differentiable]
    fn step(&mut self, x: f64) -> f64 {
        self.w * x
    }
}

fn main() {}
