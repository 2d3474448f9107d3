//! The gradient descent `particle` and `saddle` optimise with, as
//! GradBench specifies it for every tool (`cpp/gradbench/gd.hpp` there):
//! steps of `eta` against the gradient, the step doubled after ten
//! improvements in a row and halved after a step that does not improve;
//! done when the gradient or the step is shorter than 1e-5.
//!
//! Generic over the float type, so a derivative of a search (the outer
//! derivatives of the nested evals) is this same code run on `ad::Dual`s.

use ad::Float;

/// A function to descend, and its gradient.
pub trait Cost<F: Float, const N: usize> {
    fn objective(&self, x: &[F; N]) -> F;
    fn gradient(&self, x: &[F; N]) -> [F; N];
}

fn magnitude<F: Float, const N: usize>(v: &[F; N]) -> F {
    v.iter().fold(F::zero(), |acc, &x| acc + x * x).sqrt()
}

fn distance<F: Float, const N: usize>(u: &[F; N], v: &[F; N]) -> F {
    u.iter()
        .zip(v)
        .fold(F::zero(), |acc, (&a, &b)| acc + (a - b) * (a - b))
        .sqrt()
}

/// The point gradient descent reaches from `start`.
pub fn argmin<F: Float, const N: usize>(f: &impl Cost<F, N>, start: [F; N]) -> [F; N] {
    let tolerance = F::of(1e-5);
    let mut x = start;
    let mut fx = f.objective(&x);
    let mut gx = f.gradient(&x);
    let mut improved = 0;
    let mut eta = F::of(1e-5);
    loop {
        if magnitude(&gx) <= tolerance {
            return x;
        } else if improved == 10 {
            eta *= F::of(2.0);
            improved = 0;
        } else {
            let next: [F; N] = std::array::from_fn(|j| x[j] - eta * gx[j]);
            if distance(&x, &next) <= tolerance {
                return x;
            }
            let f_next = f.objective(&next);
            if f_next < fx {
                x = next;
                fx = f_next;
                gx = f.gradient(&x);
                improved += 1;
            } else {
                eta /= F::of(2.0);
                improved = 0;
            }
        }
    }
}

/// `-f`, so that descending it ascends `f`.
struct Negated<'a, C>(&'a C);

impl<F: Float, const N: usize, C: Cost<F, N>> Cost<F, N> for Negated<'_, C> {
    fn objective(&self, x: &[F; N]) -> F {
        -self.0.objective(x)
    }
    fn gradient(&self, x: &[F; N]) -> [F; N] {
        self.0.gradient(x).map(|g| -g)
    }
}

/// The point gradient ascent reaches from `start`.
pub fn argmax<F: Float, const N: usize>(f: &impl Cost<F, N>, start: [F; N]) -> [F; N] {
    argmin(&Negated(f), start)
}

/// `f` at the point gradient ascent reaches from `start`.
pub fn max<F: Float, const N: usize>(f: &impl Cost<F, N>, start: [F; N]) -> F {
    f.objective(&argmax(f, start))
}

/// How a derivative is taken: forward mode (`_jvp`, or `ad::Dual` for the
/// derivative of a search) or reverse mode (`_vjp`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Forward,
    Reverse,
}

/// How a nested eval's outer derivative nests over its inner one, from
/// the function's name (outer mode, then inner: `"fr"` is forward over
/// reverse). Forward mode over either inner mode (`ff`, `fr`) runs the
/// generic code on `ad::Dual`s; reverse mode over either (`rf`, `rr`) is
/// the generated gradient of differentiable code calling a generated
/// `_jvp` or `_grad`, which `#[differentiable(nested)]` makes
/// differentiable again.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Nesting {
    ForwardOver(Mode),
    ReverseOver(Mode),
}

impl Nesting {
    pub fn parse(eval: &str, function: &str) -> Result<Nesting, String> {
        let mode = |c| match c {
            'f' => Some(Mode::Forward),
            'r' => Some(Mode::Reverse),
            _ => None,
        };
        let mut chars = function.chars();
        let modes = match (chars.next(), chars.next(), chars.next()) {
            (Some(a), Some(b), None) => mode(a).zip(mode(b)),
            _ => None,
        };
        match modes {
            Some((Mode::Forward, inner)) => Ok(Nesting::ForwardOver(inner)),
            Some((Mode::Reverse, inner)) => Ok(Nesting::ReverseOver(inner)),
            None => Err(super::unknown(eval, function)),
        }
    }

    /// The mode of the inner derivative.
    pub fn inner(self) -> Mode {
        match self {
            Nesting::ForwardOver(inner) | Nesting::ReverseOver(inner) => inner,
        }
    }
}
