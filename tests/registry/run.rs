//! Running a scenario's checks, and comparing the outcome with what the
//! registry declares.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use ad::check::{check_directional, check_dot_product, close, Flat, Rng, STEPS};

use super::{Instance, Mode, Scenario, Status};

/// Tolerance against finite differences (as in `ad::check`).
const FD_TOLERANCE: f64 = 1e-5;
/// Tolerance against a hand-written derivative: both are exact up to
/// rounding, so it is much tighter than the finite-difference one.
const HAND_TOLERANCE: f64 = 1e-9;
/// A second cotangent for scalar results.
const SCALE: f64 = -1.75;

/// One instance of a scenario and the references its modes are checked
/// against, each computed once: the finite-difference gradient of
/// `<w, f(x)>` (per step, on demand) serves both `f_grad` and `f_vjp`.
struct Checker<'a> {
    instance: &'a dyn Instance,
    finite_differences: bool,
    x: Vec<f64>,
    primal: Vec<f64>,
    /// The output cotangent: 1 for scalar results, random otherwise.
    w: Vec<f64>,
    /// A random input direction for forward mode.
    v: Vec<f64>,
    fd: RefCell<Vec<Vec<f64>>>,
}

impl<'a> Checker<'a> {
    fn new(instance: &'a dyn Instance, finite_differences: bool) -> Self {
        let (x, primal) = (instance.inputs(), instance.value());
        let mut rng = Rng::new(11);
        let w = if primal.len() == 1 {
            vec![1.0]
        } else {
            primal.iter().map(|_| rng.uniform()).collect()
        };
        let v = x.iter().map(|_| rng.uniform()).collect();
        Checker {
            instance,
            finite_differences,
            x,
            primal,
            w,
            v,
            fd: RefCell::new(Vec::new()),
        }
    }

    /// Central differences of `<w, f>` at `STEPS[k]`.
    fn fd(&self, k: usize) -> Vec<f64> {
        let mut cache = self.fd.borrow_mut();
        while cache.len() <= k {
            let h = STEPS[cache.len()];
            let mut x = self.x.clone();
            let projected = |x: &[f64]| -> f64 {
                self.instance
                    .value_at(x)
                    .iter()
                    .zip(&self.w)
                    .map(|(f, w)| f * w)
                    .sum()
            };
            let fd = (0..x.len())
                .map(|i| {
                    let xi = x[i];
                    x[i] = xi + h;
                    let up = projected(&x);
                    x[i] = xi - h;
                    let down = projected(&x);
                    x[i] = xi;
                    (up - down) / (2.0 * h)
                })
                .collect();
            cache.push(fd);
        }
        cache[k].clone()
    }

    /// `J^T w` (the gradient, for scalar results) against finite
    /// differences at one of the steps, and the hand-written gradient.
    fn against_references(&self, got: &[f64], what: &str) -> Result<(), String> {
        if got.len() != self.x.len() {
            return Err(format!(
                "{what} has {} entries, the inputs {}",
                got.len(),
                self.x.len()
            ));
        }
        if self.finite_differences {
            let mut report = String::new();
            let mut agreed = false;
            for (k, h) in STEPS.iter().enumerate() {
                let fd = self.fd(k);
                let bad: Vec<usize> = (0..fd.len())
                    .filter(|&i| !close(fd[i], got[i], FD_TOLERANCE))
                    .collect();
                match bad.first() {
                    None => {
                        agreed = true;
                        break;
                    }
                    Some(&i) => {
                        report += &format!(
                            "  h = {:e}: entry {i}: finite differences {} vs {what} {} ({} entries disagree)\n",
                            h,
                            fd[i],
                            got[i],
                            bad.len()
                        )
                    }
                }
            }
            if !agreed {
                return Err(format!(
                    "{what} disagrees with finite differences at every step:\n{report}"
                ));
            }
        }
        if let (Some(hand), true) = (self.instance.hand(), self.primal.len() == 1) {
            let scaled: Vec<f64> = hand.iter().map(|h| h * self.w[0]).collect();
            if let Some(i) = (0..got.len()).find(|&i| !close(scaled[i], got[i], HAND_TOLERANCE)) {
                return Err(format!(
                    "{what} entry {i} is {} but the hand-written gradient's is {}",
                    got[i], scaled[i]
                ));
            }
        }
        Ok(())
    }

    fn same_value(&self, what: &str, got: &[f64]) -> Result<(), String> {
        if got == self.primal {
            Ok(())
        } else {
            Err(format!(
                "{what}'s value {got:?} differs from f's {:?}",
                self.primal
            ))
        }
    }

    fn reverse(&self) -> Result<(), String> {
        let (value, gradient) = self.instance.grad().ok_or("no f_grad")?;
        self.same_value("f_grad", &[value])?;
        self.against_references(&gradient, "f_grad's gradient")
    }

    fn pullback(&self) -> Result<(), String> {
        let (value, jtw) = self.instance.vjp(&self.w);
        self.same_value("f_vjp", &value)?;
        self.against_references(&jtw, "the pullback")?;
        if self.primal.len() == 1 {
            // A cotangent other than 1 scales the result (a pullback that
            // dropped its argument would pass the check above).
            let (_, scaled) = self.instance.vjp(&[SCALE * self.w[0]]);
            if let Some(i) = (0..jtw.len()).find(|&i| !close(scaled[i], SCALE * jtw[i], 1e-12)) {
                return Err(format!(
                    "the pullback of {SCALE} has entry {i} = {}, not {SCALE} times {}",
                    scaled[i], jtw[i]
                ));
            }
        }
        Ok(())
    }

    fn forward(&self, with_pullback: bool) -> Result<(), String> {
        let (value, jv) = self.instance.jvp(&self.v);
        self.same_value("f_jvp", &value)?;
        if self.finite_differences {
            check_directional(
                |x: &Vec<f64>| self.instance.value_at(x),
                &self.x,
                &self.v,
                &jv,
            )
            .map_err(|e| format!("f_jvp against finite differences:\n{e}"))?;
        }
        if let (Some(hand), true) = (self.instance.hand(), self.primal.len() == 1) {
            let expected = hand.flat_dot(&self.v);
            if !close(jv[0], expected, 1e-8) {
                return Err(format!(
                    "f_jvp gives {} but <hand-written gradient, v> = {expected}",
                    jv[0]
                ));
            }
        }
        if with_pullback {
            let (_, jtw) = self.instance.vjp(&self.w);
            check_dot_product(&self.v, &jv, &self.w, &jtw)
                .map_err(|e| format!("dot-product test against f_vjp: {e}"))?;
        }
        Ok(())
    }
}

fn message(panic: Box<dyn std::any::Any + Send>) -> String {
    let text = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    format!("panicked: {text}")
}

/// The checks of every mode of `scenario` at `size` (`None` for a skipped
/// mode). Panics inside generated code count as failures.
pub fn check_size(scenario: &Scenario, size: usize) -> [Option<Result<(), String>>; 3] {
    let instance = match catch_unwind(AssertUnwindSafe(|| (scenario.build)(size))) {
        Ok(instance) => instance,
        Err(panic) => {
            let e = message(panic);
            return Mode::ALL.map(|m| match scenario.status(m) {
                Status::Skipped(_) => None,
                _ => Some(Err(e.clone())),
            });
        }
    };
    let checker = Checker::new(&*instance, scenario.finite_differences);
    Mode::ALL.map(|mode| {
        if let Status::Skipped(_) = scenario.status(mode) {
            return None;
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| match mode {
            Mode::Reverse => checker.reverse(),
            Mode::Pullback => checker.pullback(),
            Mode::Forward => checker.forward(scenario.pullback == Status::Works),
        }));
        Some(outcome.unwrap_or_else(|panic| Err(message(panic))))
    })
}

/// The `num-dual` baseline's gradient against the same references (the
/// benchmarks divide by its time, so it must compute the right thing).
pub fn check_dual(scenario: &Scenario, size: usize) -> Result<(), String> {
    let instance = (scenario.build)(size);
    let checker = Checker::new(&*instance, scenario.finite_differences);
    let gradient = instance.dual().ok_or("no dual-number version")?;
    checker.against_references(&gradient, "the num-dual gradient")
}

/// The checks of one mode at one size.
pub fn check(scenario: &Scenario, mode: Mode, size: usize) -> Result<(), String> {
    let index = Mode::ALL.iter().position(|&m| m == mode).expect("a mode");
    check_size(scenario, size)[index].clone().unwrap_or(Ok(()))
}

/// How one mode of one scenario compared with its declaration.
pub enum Verdict {
    /// Works and passed, or declared broken and failed.
    AsDeclared,
    Skipped,
    /// Declared working; the failure at each size that failed.
    Fails(Vec<(usize, String)>),
    /// Declared broken, but every size passed.
    Fixed,
}

/// The verdict for every mode of `scenario`, in the order of [`Mode::ALL`].
pub fn verdicts(scenario: &Scenario) -> [Verdict; 3] {
    let outcomes: Vec<_> = scenario
        .sizes
        .iter()
        .map(|&n| (n, check_size(scenario, n)))
        .collect();
    let mut index = 0;
    Mode::ALL.map(|mode| {
        let i = index;
        index += 1;
        if let Status::Skipped(_) = scenario.status(mode) {
            return Verdict::Skipped;
        }
        let failures: Vec<(usize, String)> = outcomes
            .iter()
            .filter_map(|(n, o)| match &o[i] {
                Some(Err(e)) => Some((*n, e.clone())),
                _ => None,
            })
            .collect();
        match (scenario.status(mode), failures.is_empty()) {
            (Status::Works, true) | (Status::Broken(_), false) => Verdict::AsDeclared,
            (Status::Broken(_), true) => Verdict::Fixed,
            _ => Verdict::Fails(failures),
        }
    })
}
