//! Checks users can run on any derivative, generated or hand-written:
//! central finite differences at several step sizes, and the dot-product
//! test between forward and reverse mode.
//!
//! Values and tangents are read through [`Flat`], which views `f64`, `f32`,
//! arrays, `Vec`s and tuples of them as a flat list of numbers.
//!
//! ```
//! use ad_runtime::check::{assert_gradient, Flat};
//!
//! let f = |x: &(f64, f64)| x.0 * x.1.sin();
//! let grad = |x: &(f64, f64)| (x.1.sin(), x.0 * x.1.cos());
//! let x = (0.7, 0.3);
//! assert_gradient(&f, &x, &grad(&x).to_flat());
//! ```

use ndarray::{Array, Dimension};

use crate::{Float, NoTangent};

/// A value seen as a flat list of `f64`s (in logical order for arrays).
pub trait Flat {
    fn flat_len(&self) -> usize;
    fn get(&self, i: usize) -> f64;
    fn set(&mut self, i: usize, v: f64);

    fn to_flat(&self) -> Vec<f64> {
        (0..self.flat_len()).map(|i| self.get(i)).collect()
    }

    /// Overwrites every entry, in order, from `values` (`flat_len` of them):
    /// one pass, where `set` on each entry can be quadratic for nested
    /// values.
    fn set_flat(&mut self, values: &[f64]) {
        assert_eq!(values.len(), self.flat_len(), "one value per entry");
        for (i, &v) in values.iter().enumerate() {
            self.set(i, v);
        }
    }

    /// `<self, other>` over the flat lists.
    fn flat_dot(&self, other: &Self) -> f64 {
        (0..self.flat_len())
            .map(|i| self.get(i) * other.get(i))
            .sum()
    }

    /// A copy with every entry replaced by the next pseudo-random number
    /// from `rng` (uniform in [-1, 1)).
    fn random_like(&self, rng: &mut Rng) -> Self
    where
        Self: Clone,
    {
        let mut out = self.clone();
        for i in 0..out.flat_len() {
            out.set(i, rng.uniform());
        }
        out
    }
}

impl Flat for f64 {
    fn flat_len(&self) -> usize {
        1
    }
    fn get(&self, _: usize) -> f64 {
        *self
    }
    fn set(&mut self, _: usize, v: f64) {
        *self = v;
    }
}

impl Flat for f32 {
    fn flat_len(&self) -> usize {
        1
    }
    fn get(&self, _: usize) -> f64 {
        *self as f64
    }
    fn set(&mut self, _: usize, v: f64) {
        *self = v as f32;
    }
}

impl Flat for NoTangent {
    fn flat_len(&self) -> usize {
        0
    }
    fn get(&self, _: usize) -> f64 {
        unreachable!("NoTangent has no entries")
    }
    fn set(&mut self, _: usize, _: f64) {}
}

impl<F: Float, D: Dimension> Flat for Array<F, D> {
    fn flat_len(&self) -> usize {
        self.len()
    }
    fn get(&self, i: usize) -> f64 {
        // Standard layout: logical order is memory order, one load.
        let x = match self.as_slice() {
            Some(s) => s[i],
            None => *self.iter().nth(i).expect("index within the array"),
        };
        num_traits::cast(x).unwrap_or(f64::NAN)
    }
    fn set(&mut self, i: usize, v: f64) {
        let x = match self.as_slice_mut() {
            Some(s) => &mut s[i],
            None => self.iter_mut().nth(i).expect("index within the array"),
        };
        *x = F::of(v);
    }
    fn to_flat(&self) -> Vec<f64> {
        self.iter()
            .map(|&x| num_traits::cast(x).unwrap_or(f64::NAN))
            .collect()
    }
    fn set_flat(&mut self, values: &[f64]) {
        assert_eq!(values.len(), self.len(), "one value per entry");
        for (x, &v) in self.iter_mut().zip(values) {
            *x = F::of(v);
        }
    }
}

impl<T: Flat> Flat for Vec<T> {
    fn flat_len(&self) -> usize {
        self.iter().map(Flat::flat_len).sum()
    }
    fn get(&self, mut i: usize) -> f64 {
        for x in self {
            if i < x.flat_len() {
                return x.get(i);
            }
            i -= x.flat_len();
        }
        panic!("index past the end")
    }
    fn set(&mut self, mut i: usize, v: f64) {
        for x in self {
            if i < x.flat_len() {
                return x.set(i, v);
            }
            i -= x.flat_len();
        }
        panic!("index past the end")
    }
    fn to_flat(&self) -> Vec<f64> {
        self.iter().flat_map(Flat::to_flat).collect()
    }
    fn set_flat(&mut self, mut values: &[f64]) {
        for x in self {
            let (head, rest) = values.split_at(x.flat_len());
            x.set_flat(head);
            values = rest;
        }
        assert!(values.is_empty(), "one value per entry");
    }
}

macro_rules! flat_tuple {
    ($(($($t:ident $i:tt),*)),*) => {$(
        impl<$($t: Flat),*> Flat for ($($t,)*) {
            fn flat_len(&self) -> usize {
                0 $(+ self.$i.flat_len())*
            }
            #[allow(unused_assignments)]
            fn get(&self, mut i: usize) -> f64 {
                $(
                    if i < self.$i.flat_len() {
                        return self.$i.get(i);
                    }
                    i -= self.$i.flat_len();
                )*
                panic!("index past the end")
            }
            #[allow(unused_assignments)]
            fn set(&mut self, mut i: usize, v: f64) {
                $(
                    if i < self.$i.flat_len() {
                        return self.$i.set(i, v);
                    }
                    i -= self.$i.flat_len();
                )*
                panic!("index past the end")
            }
            fn to_flat(&self) -> Vec<f64> {
                let mut out = Vec::with_capacity(self.flat_len());
                $(out.extend(self.$i.to_flat());)*
                out
            }
            fn set_flat(&mut self, mut values: &[f64]) {
                $(
                    let (head, rest) = values.split_at(self.$i.flat_len());
                    self.$i.set_flat(head);
                    values = rest;
                )*
                assert!(values.is_empty(), "one value per entry");
            }
        }
    )*};
}

flat_tuple!(
    (A 0),
    (A 0, B 1),
    (A 0, B 1, C 2),
    (A 0, B 1, C 2, D 3),
    (A 0, B 1, C 2, D 3, E 4),
    (A 0, B 1, C 2, D 3, E 4, G 5)
);

/// A small deterministic generator (xorshift64*), so checks need no
/// dependency and repeat exactly.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [-1, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The step sizes the checks try, from coarse to fine.
pub const STEPS: [f64; 5] = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7];

/// Central differences of `f` at `x` along each flat entry, with step `h`.
pub fn central_differences<P: Flat + Clone>(f: impl Fn(&P) -> f64, x: &P, h: f64) -> Vec<f64> {
    (0..x.flat_len())
        .map(|i| {
            let (mut up, mut down) = (x.clone(), x.clone());
            let xi = x.get(i);
            up.set(i, xi + h);
            down.set(i, xi - h);
            (f(&up) - f(&down)) / (2.0 * h)
        })
        .collect()
}

/// `a` and `b` agree to a relative tolerance `tol` (absolute below 1).
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0) || (a.is_nan() && b.is_nan())
}

/// Whether `gradient` matches central differences of `f` at `x` at one of
/// [`STEPS`] (entry by entry, relative tolerance `1e-5`), or else their
/// Richardson extrapolation from `h` and `h / 2`, `(4 D(h/2) - D(h)) / 3`,
/// which cancels the `h²` term of the error (a function with a large third
/// derivative misses at every plain step). The error names the worst entry.
pub fn check_gradient<P: Flat + Clone>(
    f: impl Fn(&P) -> f64,
    x: &P,
    gradient: &[f64],
) -> Result<(), String> {
    if gradient.len() != x.flat_len() {
        return Err(format!(
            "gradient has {} entries, the input {}",
            gradient.len(),
            x.flat_len()
        ));
    }
    let mut report = String::new();
    let mut agrees = |fd: &[f64], method: String| {
        let bad: Vec<usize> = (0..fd.len())
            .filter(|&i| !close(fd[i], gradient[i], 1e-5))
            .collect();
        match bad.first() {
            None => true,
            Some(&i) => {
                report += &format!(
                    "{method}: entry {i}: finite differences {} vs gradient {} ({} entries disagree)\n",
                    fd[i],
                    gradient[i],
                    bad.len()
                );
                false
            }
        }
    };
    let plain: Vec<Vec<f64>> = STEPS
        .iter()
        .map(|&h| central_differences(&f, x, h))
        .collect();
    for (fd, h) in plain.iter().zip(STEPS) {
        if agrees(fd, format!("h = {h:e}")) {
            return Ok(());
        }
    }
    for (coarse, h) in plain.iter().zip(STEPS) {
        let fine = central_differences(&f, x, h / 2.0);
        let extrapolated: Vec<f64> = coarse
            .iter()
            .zip(&fine)
            .map(|(c, f)| (4.0 * f - c) / 3.0)
            .collect();
        if agrees(&extrapolated, format!("Richardson from h = {h:e}")) {
            return Ok(());
        }
    }
    Err(report)
}

/// Panics with a report unless [`check_gradient`] passes.
#[track_caller]
pub fn assert_gradient<P: Flat + Clone>(f: impl Fn(&P) -> f64, x: &P, gradient: &[f64]) {
    if let Err(report) = check_gradient(f, x, gradient) {
        panic!("gradient disagrees with finite differences at every step:\n{report}");
    }
}

/// Whether a directional derivative `jvp` of `f` along `v` matches central
/// differences `(f(x + h v) - f(x - h v)) / 2h` at one of [`STEPS`];
/// `f` may return any [`Flat`] value.
pub fn check_directional<P: Flat + Clone, R: Flat>(
    f: impl Fn(&P) -> R,
    x: &P,
    v: &P,
    jvp: &R,
) -> Result<(), String> {
    let mut report = String::new();
    for h in STEPS {
        let (mut up, mut down) = (x.clone(), x.clone());
        for i in 0..x.flat_len() {
            up.set(i, x.get(i) + h * v.get(i));
            down.set(i, x.get(i) - h * v.get(i));
        }
        let (fu, fd) = (f(&up), f(&down));
        let diff: Vec<f64> = (0..fu.flat_len())
            .map(|i| (fu.get(i) - fd.get(i)) / (2.0 * h))
            .collect();
        let bad: Vec<usize> = (0..diff.len())
            .filter(|&i| !close(diff[i], jvp.get(i), 1e-5))
            .collect();
        match bad.first() {
            None => return Ok(()),
            Some(&i) => {
                report += &format!(
                    "h = {h:e}: entry {i}: finite differences {} vs jvp {}\n",
                    diff[i],
                    jvp.get(i)
                )
            }
        }
    }
    Err(report)
}

/// The dot-product test: `<J v, w>` from forward mode equals `<v, J^T w>`
/// from reverse mode, to a relative tolerance of `1e-9`.
pub fn check_dot_product<T: Flat, C: Flat>(v: &T, jv: &C, w: &C, jtw: &T) -> Result<(), String> {
    let lhs = jv.flat_dot(w);
    let rhs = v.flat_dot(jtw);
    if close(lhs, rhs, 1e-9) {
        Ok(())
    } else {
        Err(format!("<J v, w> = {lhs} but <v, J^T w> = {rhs}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sin(1e5 x)`: a third derivative of 1e15 puts every plain step off
    /// by more than the tolerance; the extrapolation meets it, and still
    /// tells a wrong gradient.
    #[test]
    fn ill_conditioned_functions_are_checked_by_extrapolation() {
        let f = |x: &f64| (1e5 * x).sin();
        let x: f64 = 0.3;
        let exact = 1e5 * (1e5 * x).cos();
        for h in STEPS {
            let fd = central_differences(f, &x, h)[0];
            assert!(!close(fd, exact, 1e-5), "h = {h}: plain steps miss");
        }
        assert!(check_gradient(f, &x, &[exact]).is_ok());
        assert!(check_gradient(f, &x, &[exact * (1.0 + 1e-4)]).is_err());
    }
}
