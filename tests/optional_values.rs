//! `Option` locals holding active values: the previous item of a sequence,
//! a best value so far, a value that may be missing. The macro splits
//! each into an inactive flag and a value (`lower/option_locals.rs`), so
//! `if let Some(p) = prev`, `match`, `unwrap_or` and `let .. else` test the
//! flag and the value carries its derivative. And `Option` fields of
//! `Differentiable` structs (a layer's optional bias), whose tangent is an
//! `Option` too.

#[macro_use]
mod support;

use ad::differentiable;
use ad::ndarray::{Array1, Array2};
use ad::{Differentiable, TangentSpace};
use support::random;

/// The squared steps between consecutive items, the previous item kept in
/// an `Option` that the first iteration finds empty.
mod previous_item {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut prev: Option<f64> = None;
        let mut s = 0.0;
        for &v in x.iter() {
            if let Some(p) = prev {
                s += (v - p).powi(2);
            }
            prev = Some(v);
        }
        s
    }
}

#[test]
fn previous_items_held_in_an_option() {
    check_scalar!(previous_item; ref x dx = random(6, 1););
}

/// An array in the `Option`, tested by reference with `match`, moved out
/// by `unwrap()` at the end.
mod previous_state {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, w: &Array1<f64>) -> f64 {
        let mut prev: Option<Array1<f64>> = None;
        let mut s = 0.0;
        for &v in x.iter() {
            let h = (w * v).mapv(f64::tanh);
            match &prev {
                Some(p) => s += (&h - p).mapv(|t| t * t).sum(),
                None => s += h.sum(),
            }
            prev = Some(h);
        }
        s + prev.unwrap().sum()
    }
}

#[test]
fn array_states_held_in_an_option() {
    check_scalar!(previous_state; ref x dx = random(5, 2), ref w dw = random(3, 3););
}

/// Assigned by an `if` whose branches are `Some`, read by `unwrap_or`,
/// `is_none()` and an `if let` whose pattern has the local's own name.
mod best_so_far {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, a: f64) -> f64 {
        let mut best: Option<f64> = None;
        for i in 0..x.len() {
            if x[i] > 0.0 {
                best = if best.is_none() {
                    Some(x[i] * a)
                } else {
                    Some(x[i] + a)
                };
            }
        }
        let mut s = best.unwrap_or(a * a);
        if let Some(best) = best {
            s += best.sin();
        }
        s
    }
}

#[test]
fn options_assigned_by_branches_and_shadowed_by_their_pattern() {
    // Entries of both signs, then none positive: both ends of `unwrap_or`.
    let mixed = Array1::from(vec![0.3, -0.5, 0.8, -0.1, 0.6]);
    check_scalar!(best_so_far; ref x dx = mixed, val a da = 0.7;);
    let negative = Array1::from(vec![-0.3, -0.5]);
    check_scalar!(best_so_far; ref x dx = negative, val a da = 0.7;);
}

/// Made by an `if` with a `None` branch and read by `let .. else`; a
/// `let` that gives it a value, emptied again by `last = None`, tested
/// by `match` with `_`.
mod missing_values {
    use super::*;
    #[differentiable]
    pub fn product_of_first_two(x: &Array1<f64>) -> f64 {
        let first: Option<f64> = if x.len() > 1 { Some(x[0] * x[1]) } else { None };
        let Some(f) = first else { return x.sum() };
        f.exp() + x[1]
    }

    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut last = Some(x[0]);
        let mut total = product_of_first_two(x);
        for i in 1..x.len() {
            if i % 3 == 0 {
                last = None;
            }
            match last {
                Some(l) => total += l * x[i],
                _ => total += x[i],
            }
            last = Some(x[i].cos());
        }
        total
    }
}

#[test]
fn options_emptied_and_read_by_let_else() {
    check_scalar!(missing_values; ref x dx = random(7, 4););
    // One entry: `let .. else` takes its `else`.
    check_scalar!(missing_values; ref x dx = random(1, 5););
}

/// Chains on the `Option` that end in a value: `map` then `unwrap_or`,
/// `map_or` with a local closure, `unwrap_or_default`, `is_some_and`,
/// `unwrap_or_else`, `as_ref().copied()` then `map_or_else`; and an array
/// read by reference through `as_ref().map(..)`.
mod chains_on_the_option {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, w: &Array1<f64>, a: f64) -> f64 {
        let mut prev: Option<f64> = None;
        let mut state: Option<Array1<f64>> = None;
        let mut s = 0.0;
        let sq = |t: f64| t * t * a;
        for &v in x.iter() {
            s += prev.map(|p| (p * v).sin()).unwrap_or(v * a);
            s += prev.map_or(0.5, sq);
            s += prev.map(f64::exp).unwrap_or_default();
            if prev.is_some_and(|p| p > 0.2) {
                s += prev.unwrap_or_else(|| a.sin()) * 2.0;
            }
            s += prev.as_ref().copied().map_or_else(|| a * a, |p| p * a);
            let h = w * v;
            s += state.as_ref().map(|p| p.dot(&h)).unwrap_or(0.0);
            state = Some(h.mapv(f64::sin));
            prev = Some(v);
        }
        s
    }
}

#[test]
fn chains_on_an_option_ending_in_a_value() {
    check_scalar!(chains_on_the_option; ref x dx = random(6, 6), ref w dw = random(3, 7), val a da = 0.8;);
}

/// The type given by `Some::<f64>(..)` instead of the `let`: the value
/// local needs it, as a literal alone leaves the float type open.
mod typed_by_turbofish {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut prev = Some::<f64>(0.32);
        let mut s = 0.0;
        for &v in x.iter() {
            s += prev.map(|p| (p * 0.5).tanh()).unwrap_or(v) * v;
            prev = if v > 0.1 { Some(v) } else { None };
        }
        s
    }
}

#[test]
fn options_typed_by_a_turbofish() {
    check_scalar!(typed_by_turbofish; ref x dx = random(6, 8););
}

#[derive(Differentiable, Clone, Debug)]
pub struct Layer {
    pub w: Array2<f64>,
    pub bias: Option<Array1<f64>>,
    pub gain: Option<f64>,
}

#[derive(Differentiable, Clone, Debug)]
pub struct Stack {
    pub layers: Vec<Layer>,
}

fn layer(rows: usize, cols: usize, bias: bool, gain: bool, seed: u64) -> Layer {
    Layer {
        w: random((rows, cols), seed),
        bias: bias.then(|| random(rows, seed + 1)),
        gain: gain.then_some(0.8),
    }
}

/// Layers whose bias and gain may be missing, tested by `if let` on a
/// reference, by `as_ref()` with an `else`, and by `match`.
mod optional_fields {
    use super::*;
    #[differentiable]
    pub fn f(m: &Stack, #[constant] x: &Array1<f64>) -> f64 {
        let mut h = x.clone();
        for l in &m.layers {
            let mut z = l.w.dot(&h);
            if let Some(b) = &l.bias {
                z += b;
            }
            let scale = if let Some(g) = l.gain.as_ref() {
                *g
            } else {
                0.5
            };
            h = (z * scale).mapv(f64::tanh);
        }
        match &m.layers[0].gain {
            Some(g) => h.sum() * g,
            None => h.sum(),
        }
    }
}

#[test]
fn option_fields_with_and_without_values() {
    let x = random(3, 10);
    let m = Stack {
        layers: vec![
            layer(4, 3, true, true, 11),
            layer(2, 4, false, true, 13),
            layer(2, 2, true, false, 15),
        ],
    };
    check_stack(&m, &x);
    let (_, (g, _)) = optional_fields::f_grad(&m, &x);
    // A missing part's gradient is missing too.
    assert!(g.layers[1].bias.is_none() && g.layers[2].gain.is_none());
    assert!(g.layers[0].bias.is_some() && g.layers[0].gain.is_some());
    let none = Stack {
        layers: vec![layer(2, 3, false, false, 17)],
    };
    check_stack(&none, &x);
}

/// A tangent of `m` with random entries, `Some` where `m` has a value.
fn random_tangent(m: &Stack, seed: u64) -> StackTangent {
    use ad::check::{Flat, Rng};
    let mut d = m.zero_tangent();
    let mut rng = Rng::new(seed);
    for i in 0..d.flat_len() {
        d.set(i, rng.uniform());
    }
    d
}

/// The gradient against central differences, `f_vjp`'s pullback against
/// it, and forward mode along a random tangent against `<gradient, d>`.
fn check_stack(m: &Stack, x: &Array1<f64>) {
    use ad::check::{assert_gradient, close, Flat};
    let f = |m: &Stack| optional_fields::f(m, x);
    let (value, (g, _)) = optional_fields::f_grad(m, x);
    assert_eq!(value, f(m));
    assert_gradient(f, m, &g.to_flat());
    let (_, pullback) = optional_fields::f_vjp(m, x);
    assert_eq!(pullback(1.0).0.to_flat(), g.to_flat());
    let d = random_tangent(m, 3);
    let (jvalue, jv) = optional_fields::f_jvp(m, x, &d, ad::NoTangent);
    assert_eq!(jvalue, value);
    assert!(close(jv, g.dot(&d), 1e-9), "forward {jv} vs {}", g.dot(&d));
}

#[test]
fn option_tangents_add_and_take_the_value_they_lack() {
    let mut a: Option<Array1<f64>> = None;
    let b = Some(Array1::from(vec![1.0, 2.0]));
    a.add_assign(&b);
    a.add_assign(&b);
    assert_eq!(a, Some(Array1::from(vec![2.0, 4.0])));
    assert_eq!(a.dot(&b), 10.0);
    assert_eq!(a.dot(&None), 0.0);
    assert_eq!(Some(0.5).zero_tangent(), Some(0.0));
}

/// An `Option` parameter by reference, tested by `if let` and `match`.
mod optional_parameter {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, bias: &Option<Array1<f64>>, gain: &Option<f64>) -> f64 {
        let mut h = x.mapv(f64::tanh);
        if let Some(b) = bias {
            h *= b;
        }
        let g = match gain {
            Some(g) => *g,
            None => 1.0,
        };
        h.sum() * g
    }
}

#[test]
fn option_parameters_by_reference() {
    use ad::check::{assert_gradient, close, Flat};
    let x = random(4, 20);
    for (bias, gain) in [
        (Some(random(4, 21)), Some(0.7)),
        (None, Some(1.3)),
        (Some(random(4, 22)), None),
    ] {
        let f = |p: &(Array1<f64>, Option<Array1<f64>>, Option<f64>)| {
            optional_parameter::f(&p.0, &p.1, &p.2)
        };
        let p = (x.clone(), bias.clone(), gain);
        let (value, (gx, gb, gg)) = optional_parameter::f_grad(&x, &bias, &gain);
        assert_eq!(value, f(&p));
        assert_eq!(
            (gb.is_some(), gg.is_some()),
            (bias.is_some(), gain.is_some())
        );
        let g = (gx.clone(), gb.clone(), gg);
        assert_gradient(f, &p, &g.to_flat());
        let d = (
            random(4, 23),
            bias.as_ref().map(|b| b * 0.5 - 0.2),
            gain.map(|_| -0.4),
        );
        let (jvalue, jv) = optional_parameter::f_jvp(&x, &bias, &gain, &d.0, &d.1, &d.2);
        assert_eq!(jvalue, value);
        assert!(close(jv, g.flat_dot(&d), 1e-9));
    }
}

impl Layer {
    /// Tests its own fields: `&self.bias` by reference, `self.gain` by
    /// value (a copy).
    #[differentiable]
    pub fn forward(&self, x: &Array1<f64>) -> Array1<f64> {
        let mut z = self.w.dot(x);
        if let Some(b) = &self.bias {
            z += b;
        }
        if let Some(g) = self.gain {
            z *= g;
        }
        z.mapv(f64::tanh)
    }
}

/// Option fields of indexed layers matched with `Some(ref b)`, and
/// layers' methods that test their own.
mod option_fields_of_indexed_layers_and_methods {
    use super::*;
    #[differentiable]
    pub fn indexed(m: &Stack, #[constant] x: &Array1<f64>) -> f64 {
        let mut h = x.clone();
        for i in 0..m.layers.len() {
            h = m.layers[i].w.dot(&h);
            match m.layers[i].bias {
                Some(ref b) => h = &h + b,
                None => h *= 0.9,
            }
            h = h.mapv(f64::tanh);
        }
        h.sum()
    }

    #[differentiable]
    pub fn by_methods(m: &Stack, #[constant] x: &Array1<f64>) -> f64 {
        let mut h = x.clone();
        for layer in &m.layers {
            h = layer.forward(&h);
        }
        h.sum()
    }
}

#[test]
fn option_fields_by_ref_patterns_and_in_methods() {
    use ad::check::{assert_gradient, close, Flat};
    use option_fields_of_indexed_layers_and_methods as cases;
    let x = random(2, 30);
    let m = Stack {
        layers: vec![
            layer(3, 2, true, false, 31),
            layer(2, 3, false, true, 33),
            layer(2, 2, true, true, 35),
        ],
    };
    let d = random_tangent(&m, 5);
    let (_, (g, _)) = cases::indexed_grad(&m, &x);
    assert_gradient(|m: &Stack| cases::indexed(m, &x), &m, &g.to_flat());
    assert!(close(
        cases::indexed_jvp(&m, &x, &d, ad::NoTangent).1,
        g.dot(&d),
        1e-9
    ));
    let (_, (g, _)) = cases::by_methods_grad(&m, &x);
    assert_gradient(|m: &Stack| cases::by_methods(m, &x), &m, &g.to_flat());
    assert!(close(
        cases::by_methods_jvp(&m, &x, &d, ad::NoTangent).1,
        g.dot(&d),
        1e-9
    ));
    assert!(g.layers[0].gain.is_none() && g.layers[1].gain.is_some());
}

/// Methods of an `Option` field or parameter that end in a value, as an
/// `Option` local takes them, and `is_some()` as a condition.
mod option_field_methods {
    use super::*;
    #[differentiable]
    pub fn f(l: &Layer, #[constant] x: &Array1<f64>, shift: &Option<f64>) -> f64 {
        let z = l.w.dot(x) * l.gain.unwrap_or(1.0);
        let s = l.bias.as_ref().map_or(0.0, |b| b.sum());
        let t = l.gain.map(|g| g * g).unwrap_or(0.3).powi(2);
        let u = if l.bias.is_some() { 1.0 } else { 2.0 };
        z.mapv(f64::tanh).sum() + s + t * u + shift.unwrap_or(0.5) * z.sum()
    }
}

#[test]
fn methods_of_option_fields_and_parameters() {
    use ad::check::{assert_gradient, close, Flat};
    let x = random(2, 40);
    for (l, shift) in [
        (layer(3, 2, true, true, 41), Some(0.7)),
        (layer(3, 2, false, false, 43), None),
    ] {
        let (value, (g, _, gs)) = option_field_methods::f_grad(&l, &x, &shift);
        assert_eq!(value, option_field_methods::f(&l, &x, &shift));
        let f = |p: &(Layer, Option<f64>)| option_field_methods::f(&p.0, &x, &p.1);
        let p = (l.clone(), shift);
        let g = (g, gs);
        assert_gradient(f, &p, &g.to_flat());
        let mut d = (l.zero_tangent(), shift.map(|_| 0.6));
        d.0.w.fill(0.25);
        let (_, jv) = option_field_methods::f_jvp(&l, &x, &shift, &d.0, ad::NoTangent, &d.1);
        assert!(close(jv, g.flat_dot(&d), 1e-9));
    }
}
