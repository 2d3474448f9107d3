use ad::differentiable;
use ad::ndarray::Array1;

// Closures the macro inlines or turns into `mapv` cannot `return`: the
// `return` would leave the function instead of the closure.
#[differentiable]
fn f(x: &Array1<f64>, w: f64) -> f64 {
    let clipped = x.map(|v| {
        if *v > 1.0 {
            return 1.0;
        }
        *v * w
    });
    let filled = Array1::from_shape_fn(x.len(), |i| {
        if i == 0 {
            return 0.0;
        }
        x[i] * w
    });
    let g = |v: f64| {
        if v > 1.0 {
            return v;
        }
        v * w
    };
    clipped.sum() + filled.sum() + g(w)
}

fn main() {}
