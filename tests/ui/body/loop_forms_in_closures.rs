use ad::differentiable;

// `while let` and labelled blocks are rewritten as `loop`s in the body, but
// not inside closures, which are inlined after that rewrite.
#[differentiable]
fn f(x: f64) -> f64 {
    let g = |v: f64| {
        let mut s = v;
        let mut k = 3;
        while let Some(j) = (k > 0).then_some(k) {
            s = s * 0.5 + (j as f64) * v;
            k -= 1;
        }
        let t = 'b: {
            if s > 10.0 {
                break 'b s;
            }
            s * s
        };
        t
    };
    g(x)
}

fn main() {}
