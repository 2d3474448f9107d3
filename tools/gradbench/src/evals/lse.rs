//! `lse`: LogSumExp with the maximum shifted out, and its gradient.

use ad::differentiable;
use ad::ndarray::Array1;
use serde_json::Value;

use super::{json_vector, unknown, vector, Evaluated};
use crate::runs::repeat;

/// `a + ln Σ exp(x - a)` with `a = max x`: the shift is a constant of the
/// derivative (`stop_gradient`), as it cancels.
#[differentiable]
pub fn lse(x: &Array1<f64>) -> f64 {
    let a = ad::stop_gradient(x.fold(f64::NEG_INFINITY, |m, &v| m.max(v)));
    a + (x - a).mapv(f64::exp).sum().ln()
}

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let x = vector(input, "x")?;
    match function {
        "primal" => {
            let (y, t) = repeat(input, || lse(&x));
            Ok((Value::from(y), t))
        }
        "gradient" => {
            let (g, t) = repeat(input, || lse_grad(&x).1 .0);
            Ok((json_vector(&g), t))
        }
        other => Err(unknown("lse", other)),
    }
}
