use ad::differentiable;

#[derive(ad::Differentiable)]
struct Model {
    w: f64,
}

impl Model {
    #[differentiable]
    fn loss(self: Box<Self>, x: f64) -> f64 {
        self.w * x
    }
}

fn main() {}
