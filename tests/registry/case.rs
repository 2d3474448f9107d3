//! [`Case`]: a scenario's typed inputs and derivative functions behind the
//! type-erased [`Instance`] the tests and benchmarks use, and the
//! [`scenario!`] macro that writes one from a `#[differentiable] fn f`.

use std::hint::black_box;
use std::rc::Rc;

use ad::check::Flat;

/// A scenario at one size, seen as flat lists of `f64`.
pub trait Instance {
    /// The active inputs, flattened.
    fn inputs(&self) -> Vec<f64>;
    /// `f` at the instance's inputs, flattened.
    fn value(&self) -> Vec<f64>;
    /// `f` at other active inputs (same shapes), flattened.
    fn value_at(&self, x: &[f64]) -> Vec<f64>;
    /// `f_grad`: its value and flat gradient; `None` for array results.
    fn grad(&self) -> Option<(f64, Vec<f64>)>;
    /// `f_vjp` with the output cotangent `w`: value and `J^T w`.
    fn vjp(&self, w: &[f64]) -> (Vec<f64>, Vec<f64>);
    /// `f_jvp` along `v`: value and `J v`.
    fn jvp(&self, v: &[f64]) -> (Vec<f64>, Vec<f64>);
    /// The hand-written gradient, where the registry has one.
    fn hand(&self) -> Option<Vec<f64>>;
    /// The gradient by `num-dual` forward mode, where the registry has a
    /// dual-number version of `f`.
    fn dual(&self) -> Option<Vec<f64>>;

    /// Benchmark bodies on the typed inputs (results are black-boxed).
    fn run_primal(&self);
    /// `f_grad` once; false when there is none.
    fn run_grad(&self) -> bool;
    /// The whole gradient by forward mode: one `f_jvp` per input entry.
    fn run_jvp_sweep(&self);
    /// The hand-written gradient once; false when there is none.
    fn run_hand(&self) -> bool;
    /// The gradient by central differences: two primals per input entry.
    fn run_central_differences(&self);
    /// The gradient by `num-dual`, one pass per input entry; false when
    /// there is no dual-number version.
    fn run_dual(&self) -> bool;
}

type Primal<X, C, Y> = Box<dyn Fn(&X, &C) -> Y>;
type Pullback<X, C, Y> = Box<dyn Fn(&X, &C, Y) -> (Y, Vec<f64>)>;
type Pushforward<X, T, C, Y> = Box<dyn Fn(&X, &C, &T) -> (Y, Y)>;
type Checked<X, C> = Box<dyn Fn(&X, &C) -> (f64, Vec<f64>)>;
type Flattened<X, C> = Box<dyn Fn(&X, &C) -> Vec<f64>>;
type Timed<X, C> = Box<dyn Fn(&X, &C)>;
/// One forward pass over dual numbers seeded at a flat input entry: the
/// derivative along that entry.
type DualPass<X, C> = Box<dyn Fn(&X, &C, usize) -> f64>;

/// Typed inputs `x` (active, a tuple) and `c` (constants, a tuple), and
/// closures that call `f`, `f_vjp`, `f_jvp` and optionally `f_grad` and a
/// hand-written gradient on them.
pub struct Case<X, T, C, Y> {
    x: X,
    c: C,
    primal: Primal<X, C, Y>,
    vjp: Pullback<X, C, Y>,
    /// `zero_tangent` of `x`: the tangent type can differ from `X`'s
    /// (a struct's is `{Name}Tangent`).
    zero_tangent: fn(&X) -> T,
    jvp: Pushforward<X, T, C, Y>,
    grad: Option<(Checked<X, C>, Timed<X, C>)>,
    hand: Option<(Flattened<X, C>, Timed<X, C>)>,
    dual: Option<DualPass<X, C>>,
}

impl<X, T, C, Y> Case<X, T, C, Y>
where
    X: Flat + Clone + 'static,
    T: Flat + 'static,
    C: 'static,
    Y: Flat + Clone + 'static,
{
    pub fn new(
        x: X,
        c: C,
        primal: impl Fn(&X, &C) -> Y + 'static,
        vjp: impl Fn(&X, &C, Y) -> (Y, Vec<f64>) + 'static,
        zero_tangent: fn(&X) -> T,
        jvp: impl Fn(&X, &C, &T) -> (Y, Y) + 'static,
    ) -> Self {
        Case {
            x,
            c,
            primal: Box::new(primal),
            vjp: Box::new(vjp),
            zero_tangent,
            jvp: Box::new(jvp),
            grad: None,
            hand: None,
            dual: None,
        }
    }

    pub fn with_grad<G: Flat + 'static>(
        mut self,
        grad: impl Fn(&X, &C) -> (f64, G) + 'static,
    ) -> Self {
        let grad = Rc::new(grad);
        let timed = grad.clone();
        self.grad = Some((
            Box::new(move |x, c| {
                let (value, g) = grad(x, c);
                (value, g.to_flat())
            }),
            Box::new(move |x, c| {
                black_box(timed(black_box(x), c));
            }),
        ));
        self
    }

    pub fn with_hand<G: Flat + 'static>(mut self, hand: impl Fn(&X, &C) -> G + 'static) -> Self {
        let hand = Rc::new(hand);
        let timed = hand.clone();
        self.hand = Some((
            Box::new(move |x, c| hand(x, c).to_flat()),
            Box::new(move |x, c| {
                black_box(timed(black_box(x), c));
            }),
        ));
        self
    }

    pub fn with_dual(mut self, pass: impl Fn(&X, &C, usize) -> f64 + 'static) -> Self {
        self.dual = Some(Box::new(pass));
        self
    }

    pub fn boxed(self) -> Box<dyn Instance> {
        Box::new(self)
    }

    fn tangent(&self, v: &[f64]) -> T {
        let mut t = (self.zero_tangent)(&self.x);
        t.set_flat(v);
        t
    }
}

impl<X, T, C, Y> Case<X, T, C, Y> {
    /// Runs a benchmark body if there is one.
    fn run_timed(&self, timed: Option<&Timed<X, C>>) -> bool {
        timed.map(|timed| timed(&self.x, &self.c)).is_some()
    }
}

fn with_flat<P: Flat + Clone>(like: &P, flat: &[f64]) -> P {
    let mut p = like.clone();
    p.set_flat(flat);
    p
}

impl<X, T, C, Y> Instance for Case<X, T, C, Y>
where
    X: Flat + Clone + 'static,
    T: Flat + 'static,
    C: 'static,
    Y: Flat + Clone + 'static,
{
    fn inputs(&self) -> Vec<f64> {
        self.x.to_flat()
    }

    fn value(&self) -> Vec<f64> {
        (self.primal)(&self.x, &self.c).to_flat()
    }

    fn value_at(&self, x: &[f64]) -> Vec<f64> {
        (self.primal)(&with_flat(&self.x, x), &self.c).to_flat()
    }

    fn grad(&self) -> Option<(f64, Vec<f64>)> {
        self.grad.as_ref().map(|(grad, _)| grad(&self.x, &self.c))
    }

    fn vjp(&self, w: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let like = (self.primal)(&self.x, &self.c);
        let (value, g) = (self.vjp)(&self.x, &self.c, with_flat(&like, w));
        (value.to_flat(), g)
    }

    fn jvp(&self, v: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let (value, jv) = (self.jvp)(&self.x, &self.c, &self.tangent(v));
        (value.to_flat(), jv.to_flat())
    }

    fn hand(&self) -> Option<Vec<f64>> {
        self.hand.as_ref().map(|(hand, _)| hand(&self.x, &self.c))
    }

    fn dual(&self) -> Option<Vec<f64>> {
        let pass = self.dual.as_ref()?;
        Some(
            (0..self.x.flat_len())
                .map(|i| pass(&self.x, &self.c, i))
                .collect(),
        )
    }

    fn run_dual(&self) -> bool {
        let Some(pass) = &self.dual else {
            return false;
        };
        for i in 0..self.x.flat_len() {
            black_box(pass(black_box(&self.x), &self.c, i));
        }
        true
    }

    fn run_primal(&self) {
        black_box((self.primal)(black_box(&self.x), &self.c));
    }

    fn run_grad(&self) -> bool {
        self.run_timed(self.grad.as_ref().map(|(_, timed)| timed))
    }

    fn run_jvp_sweep(&self) {
        let n = self.x.flat_len();
        for i in 0..n {
            let mut t = (self.zero_tangent)(&self.x);
            t.set(i, 1.0);
            black_box((self.jvp)(black_box(&self.x), &self.c, &t));
        }
    }

    fn run_hand(&self) -> bool {
        self.run_timed(self.hand.as_ref().map(|(_, timed)| timed))
    }

    fn run_central_differences(&self) {
        let h = 1e-6;
        let mut x = self.x.clone();
        for i in 0..x.flat_len() {
            let xi = x.get(i);
            x.set(i, xi + h);
            let up = (self.primal)(black_box(&x), &self.c);
            x.set(i, xi - h);
            let down = (self.primal)(black_box(&x), &self.c);
            x.set(i, xi);
            black_box((up.get(0) - down.get(0)) / (2.0 * h));
        }
    }
}

/// An argument as `f` takes it, from a reference to the stored input.
macro_rules! pass {
    (ref $x:expr) => {
        $x
    };
    (val $x:expr) => {
        ::core::clone::Clone::clone($x)
    };
    (view $x:expr) => {
        $x.view()
    };
}

macro_rules! no_tangent {
    ($c:ident) => {
        ::ad::NoTangent
    };
}

/// One scenario: a module `$name` holding `f` and `scenario()`.
///
/// ```text
/// scenario! {
///     scalar name in Family, sizes [2, 5];   // or `array` for array results
///     #[differentiable] pub fn f(..) -> f64 { .. }
///     inputs(n) { ref x dx = random(n, 1), val s ds = 0.5 }  // mode, name, tangent name
///     constants { ref k = .. }                // optional; after the inputs in f's signature
///     hand { expression of the inputs }       // optional; the gradient tuple
///     hand_only { .. }                        // instead of `hand` where finite
///                                             // differences do not apply
///     dual { .. }                             // optional: `f` over `Dual64` inputs
///                                             // (the num-dual baseline)
///     declare { forward: broken "why", reverse: skipped "why" }  // optional
/// }
/// ```
/// Modes: `ref` passes `&input`, `val` a clone, `view` `input.view()`.
macro_rules! scenario {
    (
        $kind:ident $name:ident in $family:ident, sizes $sizes:expr;
        $func:item
        inputs($n:ident) { $($mode:ident $x:ident $dx:ident = $val:expr),+ $(,)? }
        $(constants { $($cmode:ident $c:ident = $cval:expr),+ $(,)? })?
        $(hand $hand:block)?
        $(hand_only $exact:block)?
        $(dual $dual:block)?
        $(declare { $($dmode:ident: $declared:ident $reason:literal),+ $(,)? })?
    ) => {
        pub mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[allow(unused_imports)]
            use $crate::registry::{case::Case, Family, Instance, Scenario, Status};

            $func

            #[allow(unused_variables, clippy::redundant_closure_call)]
            fn build($n: usize) -> Box<dyn Instance> {
                let inputs = ($($val,)+);
                let constants = ($($($cval,)+)?);
                let case = Case::new(
                    inputs,
                    constants,
                    |inputs, constants| {
                        let ($($x,)+) = inputs;
                        let ($($($c,)+)?) = constants;
                        f($(pass!($mode $x),)+ $($(pass!($cmode $c),)+)?)
                    },
                    |inputs, constants, w| {
                        let ($($x,)+) = inputs;
                        let ($($($c,)+)?) = constants;
                        let (value, pullback) = f_vjp($(pass!($mode $x),)+ $($(pass!($cmode $c),)+)?);
                        (value, ::ad::check::Flat::to_flat(&pullback(w)))
                    },
                    |inputs| {
                        let ($($x,)+) = inputs;
                        ($(::ad::Differentiable::zero_tangent($x),)+)
                    },
                    |inputs, constants, tangents| {
                        let ($($x,)+) = inputs;
                        let ($($($c,)+)?) = constants;
                        let ($($dx,)+) = tangents;
                        f_jvp(
                            $(pass!($mode $x),)+
                            $($(pass!($cmode $c),)+)?
                            $(pass!($mode $dx),)+
                            $($(no_tangent!($c),)+)?
                        )
                    },
                );
                let case = scenario!(@grad $kind case; $($mode $x),+; $($($cmode $c),+)?);
                let case = scenario!(@hand case; $($x),+; $($($c),+)?; $($hand)? $($exact)?);
                scenario!(@dual case; $($x),+; $($($c),+)?; $($dual)?)
                    .boxed()
            }

            pub fn scenario() -> Scenario {
                #[allow(unused_mut)]
                let mut scenario = Scenario {
                    name: stringify!($name),
                    family: Family::$family,
                    sizes: &$sizes,
                    hand_written: false $(|| { stringify!($hand); true })? $(|| { stringify!($exact); true })?,
                    finite_differences: true $(&& { stringify!($exact); false })?,
                    dual: false $(|| { stringify!($dual); true })?,
                    reverse: scenario!(@reverse $kind),
                    pullback: Status::Works,
                    forward: Status::Works,
                    build,
                };
                $($(scenario!(@declare scenario $declared $dmode $reason);)+)?
                scenario
            }
        }
    };
    (@grad scalar $case:ident; $($mode:ident $x:ident),+; $($cmode:ident $c:ident),*) => {
        $case.with_grad(|inputs, constants| {
            let ($($x,)+) = inputs;
            let ($($c,)*) = constants;
            f_grad($(pass!($mode $x),)+ $(pass!($cmode $c),)*)
        })
    };
    (@grad array $case:ident; $($rest:tt)*) => {
        $case
    };
    (@dual $case:ident; $($x:ident),+; $($c:ident),*;) => {
        $case
    };
    (@dual $case:ident; $($x:ident),+; $($c:ident),*; $dual:block) => {
        $case.with_dual(|inputs, constants, at| {
            let seeded = $crate::registry::dual::Seed::seeded(inputs, &mut 0, at);
            let ($($x,)+) = &seeded;
            #[allow(unused_variables)]
            let ($($c,)*) = constants;
            let value: $crate::registry::dual::Dual64 = $dual;
            value.eps
        })
    };
    (@hand $case:ident; $($x:ident),+; $($c:ident),*;) => {
        $case
    };
    (@hand $case:ident; $($x:ident),+; $($c:ident),*; $hand:block) => {
        $case.with_hand(|inputs, constants| {
            let ($($x,)+) = inputs;
            #[allow(unused_variables)]
            let ($($c,)*) = constants;
            $hand
        })
    };
    (@reverse scalar) => {
        Status::Works
    };
    (@reverse array) => {
        Status::Skipped("array result: `f_grad` exists for scalar results only")
    };
    (@declare $s:ident broken $mode:ident $reason:literal) => {
        $s.$mode = Status::Broken($reason)
    };
    (@declare $s:ident skipped $mode:ident $reason:literal) => {
        $s.$mode = Status::Skipped($reason)
    };
}
