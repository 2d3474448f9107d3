//! `ode`: cmpad's `an_ode`, `y' = f(x, y)` with `f(x, y)₀ = x₀` and
//! `f(x, y)ᵢ = xᵢ yᵢ₋₁`, from `y(0) = 0` to `t = 2` by `s` steps of classic
//! Runge–Kutta; the gradient is that of the solution's last entry with
//! respect to `x` (the pullback of the unit vector at the end).

use ad::differentiable;
use ad::ndarray::Array1;
use serde_json::Value;

use super::{count, json_vector, unknown, vector, Evaluated};
use crate::runs::repeat;

#[differentiable]
pub fn ode_fun(x: &Array1<f64>, y: &Array1<f64>) -> Array1<f64> {
    let mut z = x.to_owned();
    for i in 1..x.len() {
        z[i] = x[i] * y[i - 1];
    }
    z
}

#[differentiable]
pub fn ode(x: &Array1<f64>, #[constant] s: usize) -> Array1<f64> {
    let h = 2.0 / s as f64;
    let mut y = Array1::<f64>::zeros(x.len());
    for _ in 0..s {
        let k1 = ode_fun(x, &y);
        let k2 = ode_fun(x, &(&y + &(&k1 * (h / 2.0))));
        let k3 = ode_fun(x, &(&y + &(&k2 * (h / 2.0))));
        let k4 = ode_fun(x, &(&y + &(&k3 * h)));
        y = &y + &((&k1 + &(&k2 * 2.0) + &(&k3 * 2.0) + &k4) * (h / 6.0));
    }
    y
}

/// The gradient of the last entry of `ode(x, s)`.
pub fn gradient(x: &Array1<f64>, s: usize) -> Array1<f64> {
    let (y, pullback) = ode_vjp(x, s);
    let mut last = Array1::zeros(y.len());
    last[y.len() - 1] = 1.0;
    pullback(last).0
}

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let (x, s) = (vector(input, "x")?, count(input, "s")?);
    let (out, t) = match function {
        "primal" => repeat(input, || ode(&x, s)),
        "gradient" => repeat(input, || gradient(&x, s)),
        other => return Err(unknown("ode", other)),
    };
    Ok((json_vector(&out), t))
}
