//! `saddle`: the saddle point `min_x max_y f(x, y)` of
//! `f(x, y) = (x₁² + y₁²) - (x₂² + y₂²)`, by gradient descent nested in
//! gradient descent. `f`'s gradient in `y` (the inner one) is `f`'s
//! generated `_jvp` or `_vjp`; the outer gradient, of `x ↦ max_y f(x, y)`,
//! is the inner search run on `ad::Dual`s, once per coordinate of `x`
//! (forward mode over the inner search and the generated code in it).

use ad::{differentiable, Dual, Float};
use serde_json::Value;

use super::descent::{self, Cost, Mode};
use super::{unknown, vector, Evaluated};
use crate::runs::repeat;

#[differentiable]
pub fn objective<F: Float>(x1: F, y1: F, x2: F, y2: F) -> F {
    (x1 * x1 + y1 * y1) - (x2 * x2 + y2 * y2)
}

/// `f(x, ·)`, for the inner search.
struct Inner<F> {
    x: [F; 2],
    mode: Mode,
}

impl<F: Float> Cost<F, 2> for Inner<F> {
    fn objective(&self, y: &[F; 2]) -> F {
        objective(self.x[0], self.x[1], y[0], y[1])
    }

    fn gradient(&self, y: &[F; 2]) -> [F; 2] {
        let [x1, y1] = self.x;
        match self.mode {
            Mode::Reverse => {
                let (_, pullback) = objective_vjp(x1, y1, y[0], y[1]);
                let (_, _, g1, g2) = pullback(F::one());
                [g1, g2]
            }
            Mode::Forward => std::array::from_fn(|k| {
                let e = |j: usize| if j == k { F::one() } else { F::zero() };
                let (o, z) = (F::zero(), F::zero());
                objective_jvp(x1, y1, y[0], y[1], o, z, e(0), e(1)).1
            }),
        }
    }
}

/// `x ↦ max_y f(x, y)`, for the outer search.
pub struct Outer {
    pub start: [f64; 2],
    pub inner: Mode,
}

impl Cost<f64, 2> for Outer {
    fn objective(&self, x: &[f64; 2]) -> f64 {
        descent::max(
            &Inner {
                x: *x,
                mode: self.inner,
            },
            self.start,
        )
    }

    fn gradient(&self, x: &[f64; 2]) -> [f64; 2] {
        std::array::from_fn(|k| {
            let x = std::array::from_fn(|j| Dual::new(x[j], if j == k { 1.0 } else { 0.0 }));
            let inner = Inner {
                x,
                mode: self.inner,
            };
            descent::max(&inner, self.start.map(Dual::constant)).tangent
        })
    }
}

/// The saddle point: `x`, then the `y` that maximises `f(x, ·)`.
pub fn saddle(start: [f64; 2], inner: Mode) -> [f64; 4] {
    let x = descent::argmin(&Outer { start, inner }, start);
    let y = descent::argmax(&Inner { x, mode: inner }, start);
    [x[0], x[1], y[0], y[1]]
}

const REVERSE_OVER: &str = "reverse mode over the inner gradient descent is not supported yet \
     (forward over either mode, `ff` and `fr`, is)";

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let start = vector(input, "start")?;
    if start.len() != 2 {
        return Err("`start` needs two numbers".into());
    }
    let start = [start[0], start[1]];
    let inner = match descent::modes(function) {
        Some((Mode::Forward, inner)) => inner,
        Some((Mode::Reverse, _)) => return Err(REVERSE_OVER.into()),
        None => return Err(unknown("saddle", function)),
    };
    let (point, t) = repeat(input, || saddle(start, inner));
    Ok((Value::from(point.to_vec()), t))
}
