use ad::differentiable;

struct Model {
    w: f64,
}

impl Model {
    #[differentiable]
    fn loss(&self, x: f64) -> f64 {
        x * 2.0
    }
}

fn main() {}
