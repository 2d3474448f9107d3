//! The forward-mode baseline: `num-dual` dual numbers (`Dual64`), one pass
//! per input entry, as ForwardDiff with a chunk of one does. A scenario's
//! `dual { .. }` section is its function written over `Dual64`; [`Seed`]
//! turns the inputs into dual numbers with the derivative seed at one
//! entry.

use ad::ndarray::{Array, Dimension};
pub use num_dual::{Dual64, DualNum};

/// A value whose `f64` entries become `Dual64`s, the one at flat position
/// `at` seeded with derivative 1 (the others 0).
pub trait Seed {
    type Dual;
    /// `next` counts entries across a tuple.
    fn seeded(&self, next: &mut usize, at: usize) -> Self::Dual;
}

fn seed(x: f64, next: &mut usize, at: usize) -> Dual64 {
    let eps = if *next == at { 1.0 } else { 0.0 };
    *next += 1;
    Dual64::new(x, eps)
}

impl Seed for f64 {
    type Dual = Dual64;
    fn seeded(&self, next: &mut usize, at: usize) -> Dual64 {
        seed(*self, next, at)
    }
}

impl<D: Dimension> Seed for Array<f64, D> {
    type Dual = Array<Dual64, D>;
    fn seeded(&self, next: &mut usize, at: usize) -> Self::Dual {
        self.map(|&x| seed(x, next, at))
    }
}

impl<T: Seed> Seed for Vec<T> {
    type Dual = Vec<T::Dual>;
    fn seeded(&self, next: &mut usize, at: usize) -> Self::Dual {
        self.iter().map(|x| x.seeded(next, at)).collect()
    }
}

macro_rules! seed_tuple {
    ($(($($t:ident $i:tt),*)),*) => {$(
        impl<$($t: Seed),*> Seed for ($($t,)*) {
            type Dual = ($($t::Dual,)*);
            fn seeded(&self, next: &mut usize, at: usize) -> Self::Dual {
                ($(self.$i.seeded(next, at),)*)
            }
        }
    )*};
}

seed_tuple!(
    (A 0),
    (A 0, B 1),
    (A 0, B 1, C 2),
    (A 0, B 1, C 2, D 3),
    (A 0, B 1, C 2, D 3, E 4)
);

/// A constant lifted into dual numbers (derivative 0).
pub fn constant(x: f64) -> Dual64 {
    Dual64::from(x)
}

/// `|x|` (derivative sign(x), 0 at 0 as in `ad`).
pub fn abs(x: Dual64) -> Dual64 {
    if x.re < 0.0 {
        -x
    } else if x.re > 0.0 {
        x
    } else {
        Dual64::from(0.0)
    }
}
