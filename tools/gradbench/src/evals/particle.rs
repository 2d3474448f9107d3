//! `particle`: the control `w` that makes a charged particle, pushed by
//! two fixed charges (one of them placed by `w`), cross the x axis at the
//! origin. The path is Euler's method on the force `-∇p`, the gradient of
//! the potential `p` (the inner derivative: `p`'s generated `_jvp` or
//! `_vjp`); `w` minimises the squared distance from the origin at the
//! crossing by gradient descent, whose derivative (the outer one) is
//! either the path run on `ad::Dual`s (forward mode over Euler's method
//! and the generated code in it: `ff`, `fr`) or the reverse-mode gradient
//! of a differentiable path that calls `potential_jvp` (`rf`).

use ad::{differentiable, Dual, Float};
use serde_json::Value;

use super::descent::{self, Cost, Mode, Nesting};
use super::Evaluated;
use crate::runs::repeat;

/// The potential at `(x0, x1)` of charges at `(10, 10 - w)` and `(10, 0)`.
///
/// `w` is active and the derivatives of `_jvp` and `_grad` are generated
/// too, so that reverse mode can run over a path that calls
/// `potential_jvp` or `potential_grad` (`rf`, `rr`).
#[differentiable(nested)]
pub fn potential<F: Float>(x0: F, x1: F, w: F) -> F {
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
            potential_jvp(x[0], x[1], w, F::one(), F::zero(), F::zero()).1,
            potential_jvp(x[0], x[1], w, F::zero(), F::one(), F::zero()).1,
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

/// `miss` as differentiable code, the force by `potential_jvp` (forward
/// mode inside) or `potential_grad` (reverse mode inside), so that its
/// gradient is reverse mode over either (`rf`, `rr`): the path is taped,
/// and each step's force differentiated by `potential_jvp_vjp` or
/// `potential_grad_vjp`.
#[differentiable(reverse)]
pub fn miss_over(w: f64, #[constant] inner: Mode) -> f64 {
    let dt = 0.1;
    let mut x0 = 0.0;
    let mut x1 = 8.0;
    let mut v0 = 0.75;
    let mut v1 = 0.0;
    let mut crossing = 0.0;
    let mut flying = true;
    while flying {
        let (g0, g1) = if matches!(inner, Mode::Forward) {
            let (_, d0) = potential_jvp(x0, x1, w, 1.0, 0.0, 0.0);
            let (_, d1) = potential_jvp(x0, x1, w, 0.0, 1.0, 0.0);
            (d0, d1)
        } else {
            let (_, (d0, d1, _)) = potential_grad(x0, x1, w);
            (d0, d1)
        };
        x0 += dt * v0;
        x1 += dt * v1;
        if x1 <= 0.0 {
            crossing = x0 - x1 / v1 * v0;
            flying = false;
        } else {
            v0 -= dt * g0;
            v1 -= dt * g1;
        }
    }
    crossing * crossing
}

/// The search's cost: the miss, and its derivative nested as asked.
struct Aim(Nesting);

impl Cost<f64, 1> for Aim {
    fn objective(&self, w: &[f64; 1]) -> f64 {
        match self.0 {
            Nesting::ForwardOver(inner) => miss(w[0], inner),
            Nesting::ReverseOver(inner) => miss_over(w[0], inner),
        }
    }

    fn gradient(&self, w: &[f64; 1]) -> [f64; 1] {
        match self.0 {
            Nesting::ForwardOver(inner) => [miss(Dual::new(w[0], 1.0), inner).tangent],
            Nesting::ReverseOver(inner) => [miss_over_grad(w[0], inner).1 .0],
        }
    }
}

/// The control gradient descent reaches from `w0`.
pub fn particle(w0: f64, nesting: Nesting) -> f64 {
    descent::argmin(&Aim(nesting), [w0])[0]
}

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let w0 = input
        .get("w")
        .and_then(Value::as_f64)
        .ok_or("the input has no `w`")?;
    let nesting = Nesting::parse("particle", function)?;
    let (w, t) = repeat(input, || particle(w0, nesting));
    Ok((Value::from(w), t))
}
