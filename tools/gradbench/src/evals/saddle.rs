//! `saddle`: the saddle point `min_x max_y f(x, y)` of
//! `f(x, y) = (x₁² + y₁²) - (x₂² + y₂²)`, by gradient descent nested in
//! gradient descent. `f`'s gradient in `y` (the inner one) is `f`'s
//! generated `_jvp` or `_vjp`; the outer gradient, of `x ↦ max_y f(x, y)`,
//! is either the inner search run on `ad::Dual`s, once per coordinate of
//! `x` (forward mode over the inner search and the generated code in it:
//! `ff`, `fr`), or the reverse-mode gradient of the inner search written
//! as differentiable code that calls `objective_jvp` or `objective_grad`
//! (`rf`, `rr`).

use ad::{differentiable, Dual, Float};
use serde_json::Value;

use super::descent::{self, Cost, Mode, Nesting};
use super::{vector, Evaluated};
use crate::runs::repeat;

/// The derivatives of `_jvp` are generated too, so that reverse mode can
/// run over a search that calls `objective_jvp` or `objective_grad`
/// (`rf`, `rr`).
#[differentiable(nested)]
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

/// `f`'s gradient in `y`, by `objective_jvp` (one column per call) or
/// by `objective_grad`, as differentiable code: the search below calls it.
#[differentiable(reverse)]
fn gradient_in_y(x1: f64, x2: f64, y1: f64, y2: f64, #[constant] inner: Mode) -> (f64, f64) {
    if matches!(inner, Mode::Forward) {
        let (_, d1) = objective_jvp(x1, x2, y1, y2, 0.0, 0.0, 1.0, 0.0);
        let (_, d2) = objective_jvp(x1, x2, y1, y2, 0.0, 0.0, 0.0, 1.0);
        (d1, d2)
    } else {
        let (_, (_, _, d1, d2)) = objective_grad(x1, x2, y1, y2);
        (d1, d2)
    }
}

/// `max_y f(x, y)` by gradient ascent from `start`, the ascent of
/// [`descent::argmin`] on `-f` written out in differentiable code, with
/// `f`'s gradient in `y` by [`gradient_in_y`]: its generated gradient in
/// `x` is reverse mode over the inner search and the inner mode inside it.
/// Step for step the same arithmetic as `descent::max` on `Inner`.
#[differentiable(reverse)]
pub fn max_over(
    x1: f64,
    x2: f64,
    #[constant] start1: f64,
    #[constant] start2: f64,
    #[constant] inner: Mode,
) -> f64 {
    let tolerance = 1e-5;
    let mut y1 = start1;
    let mut y2 = start2;
    let mut fy = -objective(x1, x2, y1, y2);
    let (d1, d2) = gradient_in_y(x1, x2, y1, y2, inner);
    let mut g1 = -d1;
    let mut g2 = -d2;
    let mut improved = 0;
    let mut eta = 1e-5;
    let mut searching = true;
    while searching {
        if (g1 * g1 + g2 * g2).sqrt() <= tolerance {
            searching = false;
        } else if improved == 10 {
            eta *= 2.0;
            improved = 0;
        } else {
            let n1 = y1 - eta * g1;
            let n2 = y2 - eta * g2;
            if ((y1 - n1) * (y1 - n1) + (y2 - n2) * (y2 - n2)).sqrt() <= tolerance {
                searching = false;
            } else {
                let f_next = -objective(x1, x2, n1, n2);
                if f_next < fy {
                    y1 = n1;
                    y2 = n2;
                    fy = f_next;
                    let (d1, d2) = gradient_in_y(x1, x2, y1, y2, inner);
                    g1 = -d1;
                    g2 = -d2;
                    improved += 1;
                } else {
                    eta /= 2.0;
                    improved = 0;
                }
            }
        }
    }
    objective(x1, x2, y1, y2)
}

/// `x ↦ max_y f(x, y)`, for the outer search, its gradient nested as asked.
pub struct Outer {
    pub start: [f64; 2],
    pub nesting: Nesting,
}

impl Cost<f64, 2> for Outer {
    fn objective(&self, x: &[f64; 2]) -> f64 {
        match self.nesting {
            Nesting::ForwardOver(mode) => descent::max(&Inner { x: *x, mode }, self.start),
            Nesting::ReverseOver(inner) => {
                max_over(x[0], x[1], self.start[0], self.start[1], inner)
            }
        }
    }

    fn gradient(&self, x: &[f64; 2]) -> [f64; 2] {
        match self.nesting {
            Nesting::ForwardOver(mode) => std::array::from_fn(|k| {
                let x = std::array::from_fn(|j| Dual::new(x[j], if j == k { 1.0 } else { 0.0 }));
                descent::max(&Inner { x, mode }, self.start.map(Dual::constant)).tangent
            }),
            Nesting::ReverseOver(inner) => {
                let (_, (g1, g2, _, _, _)) =
                    max_over_grad(x[0], x[1], self.start[0], self.start[1], inner);
                [g1, g2]
            }
        }
    }
}

/// The saddle point: `x`, then the `y` that maximises `f(x, ·)`.
pub fn saddle(start: [f64; 2], nesting: Nesting) -> [f64; 4] {
    let x = descent::argmin(&Outer { start, nesting }, start);
    let inner = Inner {
        x,
        mode: nesting.inner(),
    };
    let y = descent::argmax(&inner, start);
    [x[0], x[1], y[0], y[1]]
}

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let start = vector(input, "start")?;
    if start.len() != 2 {
        return Err("`start` needs two numbers".into());
    }
    let start = [start[0], start[1]];
    let nesting = Nesting::parse("saddle", function)?;
    let (point, t) = repeat(input, || saddle(start, nesting));
    Ok((Value::from(point.to_vec()), t))
}
