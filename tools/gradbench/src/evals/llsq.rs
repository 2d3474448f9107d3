//! `llsq`: the linear least-squares objective of cmpad,
//! `y(x) = ½ Σᵢ (sᵢ - Σⱼ xⱼ tᵢʲ)²` with `tᵢ = -1 + 2i/(n-1)` and
//! `sᵢ = sign(tᵢ)`, and its gradient.

use ad::differentiable;
use ad::ndarray::Array1;
use serde_json::Value;

use super::{count, json_vector, unknown, vector, Evaluated};
use crate::runs::repeat;

/// `sign(t)`, 0 at 0 (cmpad's).
fn sign(t: f64) -> f64 {
    if t > 0.0 {
        1.0
    } else if t < 0.0 {
        -1.0
    } else {
        0.0
    }
}

#[differentiable]
pub fn llsq(x: &Array1<f64>, #[constant] n: usize) -> f64 {
    let mut sum = 0.0;
    for i in 0..n {
        let t = -1.0 + i as f64 * 2.0 / (n as f64 - 1.0);
        let mut inner = sign(t);
        let mut power = 1.0;
        for j in 0..x.len() {
            inner -= x[j] * power;
            power *= t;
        }
        sum += inner * inner;
    }
    sum / 2.0
}

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let (x, n) = (vector(input, "x")?, count(input, "n")?);
    match function {
        "primal" => {
            let (y, t) = repeat(input, || llsq(&x, n));
            Ok((Value::from(y), t))
        }
        "gradient" => {
            let (g, t) = repeat(input, || llsq_grad(&x, n).1 .0);
            Ok((json_vector(&g), t))
        }
        other => Err(unknown("llsq", other)),
    }
}
