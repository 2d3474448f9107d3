//! `particle`: the control `w` that makes a charged particle, pushed by
//! two fixed charges (one of them placed by `w`), cross the x axis at the
//! origin. The path is Euler's method on the force `-∇p`, the gradient of
//! the potential `p` (the inner derivative: `p`'s generated `_jvp` or
//! `_vjp`); `w` minimises the squared distance from the origin at the
//! crossing by gradient descent, whose derivative (the outer one) is the
//! path run on `ad::Dual`s (forward mode over Euler's method and the
//! generated code in it).

use ad::{differentiable, Dual, Float};
use serde_json::Value;

use super::descent::{self, Cost, Mode};
use super::{unknown, Evaluated};
use crate::runs::repeat;

/// The potential at `(x0, x1)` of charges at `(10, 10 - w)` and `(10, 0)`.
#[differentiable]
pub fn potential<F: Float>(x0: F, x1: F, #[constant] w: F) -> F {
    let ten = F::of(10.0);
    let dx = x0 - ten;
    let dy = x1 - (ten - w);
    F::one() / (dx * dx + dy * dy).sqrt() + F::one() / (dx * dx + x1 * x1).sqrt()
}

/// `∇p` at `x`.
fn field<F: Float>(x: [F; 2], w: F, mode: Mode) -> [F; 2] {
    match mode {
        Mode::Reverse => {
            let (_, pullback) = potential_vjp(x[0], x[1], w);
            let (g0, g1, _) = pullback(F::one());
            [g0, g1]
        }
        Mode::Forward => [
            potential_jvp(x[0], x[1], w, F::one(), F::zero(), ad::NoTangent).1,
            potential_jvp(x[0], x[1], w, F::zero(), F::one(), ad::NoTangent).1,
        ],
    }
}

/// The squared distance from the origin where the path crosses the x axis.
pub fn miss<F: Float>(w: F, mode: Mode) -> F {
    let dt = F::of(0.1);
    let mut x = [F::zero(), F::of(8.0)];
    let mut velocity = [F::of(0.75), F::zero()];
    loop {
        let force = field(x, w, mode).map(|g| -g);
        x = [x[0] + dt * velocity[0], x[1] + dt * velocity[1]];
        if x[1] <= F::zero() {
            let dt_crossing = -x[1] / velocity[1];
            let crossing = x[0] + dt_crossing * velocity[0];
            return crossing * crossing;
        }
        velocity = [velocity[0] + dt * force[0], velocity[1] + dt * force[1]];
    }
}

struct Aim {
    inner: Mode,
}

impl Cost<f64, 1> for Aim {
    fn objective(&self, w: &[f64; 1]) -> f64 {
        miss(w[0], self.inner)
    }

    fn gradient(&self, w: &[f64; 1]) -> [f64; 1] {
        [miss(Dual::new(w[0], 1.0), self.inner).tangent]
    }
}

pub fn particle(w0: f64, inner: Mode) -> f64 {
    descent::argmin(&Aim { inner }, [w0])[0]
}

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let w0 = input
        .get("w")
        .and_then(Value::as_f64)
        .ok_or("the input has no `w`")?;
    let inner = match descent::modes(function) {
        Ok((_, inner)) => inner,
        Err(e) if e.starts_with("no function") => return Err(unknown("particle", function)),
        Err(e) => return Err(e),
    };
    let (w, t) = repeat(input, || particle(w0, inner));
    Ok((Value::from(w), t))
}
