//! Optimisers over any [`Parameter`]: stochastic gradient descent with
//! momentum, and Adam. Their state is tangents of the parameter's shape,
//! made on the first step, so one optimiser serves any model.
//!
//! ```
//! use ad_runtime::{Adam, Differentiable};
//!
//! let mut x = 5.0_f64;
//! let mut adam = Adam::new(0.1);
//! for _ in 0..500 {
//!     let gradient = 2.0 * (x - 1.0); // of (x - 1)^2
//!     adam.step(&mut x, &gradient);
//! }
//! assert!((x - 1.0).abs() < 1e-3);
//! ```

use crate::{Parameter, TangentSpace};

/// `v = momentum v + g; p -= rate v`.
pub struct Sgd<T> {
    pub rate: f64,
    pub momentum: f64,
    velocity: Option<T>,
}

impl<T: TangentSpace> Sgd<T> {
    pub fn new(rate: f64, momentum: f64) -> Self {
        Sgd {
            rate,
            momentum,
            velocity: None,
        }
    }

    pub fn step<P: Parameter<Tangent = T>>(&mut self, p: &mut P, gradient: &T) {
        let velocity = match &mut self.velocity {
            Some(v) => {
                v.scale(self.momentum);
                v.add_assign(gradient);
                v
            }
            None => self.velocity.insert(gradient.clone()),
        };
        p.apply(velocity, -self.rate);
    }
}

/// Adam (Kingma and Ba), with bias-corrected moments.
pub struct Adam<T> {
    pub rate: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub epsilon: f64,
    steps: i32,
    moments: Option<(T, T)>,
}

impl<T: TangentSpace> Adam<T> {
    /// Adam with the usual `beta1 = 0.9`, `beta2 = 0.999`, `epsilon = 1e-8`.
    pub fn new(rate: f64) -> Self {
        Adam {
            rate,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
            steps: 0,
            moments: None,
        }
    }

    pub fn step<P: Parameter<Tangent = T>>(&mut self, p: &mut P, gradient: &T) {
        let (b1, b2, eps) = (self.beta1, self.beta2, self.epsilon);
        self.steps += 1;
        let (m, v) = self
            .moments
            .get_or_insert_with(|| (gradient.zero_like(), gradient.zero_like()));
        m.zip_map(gradient, &mut |m, g| b1 * m + (1.0 - b1) * g);
        v.zip_map(gradient, &mut |v, g| b2 * v + (1.0 - b2) * g * g);
        let (c1, c2) = (1.0 - b1.powi(self.steps), 1.0 - b2.powi(self.steps));
        let mut update = m.clone();
        update.zip_map(v, &mut |m, v| (m / c1) / ((v / c2).sqrt() + eps));
        p.apply(&update, -self.rate);
    }
}
