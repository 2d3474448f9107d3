use ad::differentiable;
use ad::ndarray::{Array1, Array2, Axis};

// Iterator chains over active values are loops over indices: each source
// must be indexable, a collected chain's length known before the loop, a
// `scan`'s state a value the loop carries, and a `flat_map` summed,
// folded, or looped over without a `break`.
#[differentiable]
fn f(x: &Array1<f64>, m: &Array2<f64>, y: &[f64], #[constant] k: usize) -> f64 {
    let tail: Array1<f64> = x.iter().flat_map(|v| [*v, v * 2.0]).collect();
    let stopped: f64 = x.iter().scan(0.0, |s, v| { *s += v; if *s > 1.0 { None } else { Some(*s) } }).sum();
    let passed: f64 = x.iter().scan(0.0, |s, v| { *s += v; Some(twice(s)) }).sum();
    let windows: f64 = y.windows(2).map(|w| w[1] - w[0]).sum();
    let blocks: f64 = m.windows((2, 2)).into_iter().map(|w| w.sum()).sum();
    let lanes: f64 = m.axis_iter(Axis(k)).map(|r| r.sum()).sum();
    let kept: Array1<f64> = x.iter().filter(|v| **v > 0.0).cloned().collect();
    let escaping: f64 = x.iter().map(|v| { if *v > 1.0 { return 0.0; } v * 2.0 }).fold(0.0, |a, b| a + b);
    let mut broken = 0.0;
    for v in m.outer_iter().flat_map(|r| r.into_iter()) {
        if *v > 1.0 {
            break;
        }
        broken += v;
    }
    tail.sum() + broken + stopped + passed + windows + blocks + lanes + kept.sum() + escaping
}

fn twice(s: &f64) -> f64 {
    s * 2.0
}

fn main() {}
