//! `#[differentiable(nested)]`: `f_jvp` differentiated by the compiler
//! (`f_jvp_vjp`, `f_jvp_jvp`), so differentiable code may call `f_jvp`:
//! reverse mode over forward mode, as GradBench's `particle` takes the
//! derivative of a path that a potential's gradient pushes. Each against
//! central differences of `f_jvp`, which the first-order tests check.

use ad::{differentiable, Float, NoTangent};

#[path = "../examples/models/charges.rs"]
mod charges;
use charges::{
    potential, potential_grad, potential_hvp_by_hand, potential_jvp, potential_jvp_jvp,
    potential_jvp_vjp,
};

/// Every scalar rule the pass knows, a branch and a loop that carries a
/// value.
#[differentiable(nested)]
fn wave(x: f64, y: f64, #[constant] n: usize) -> f64 {
    let mut s = x.sin() * y.cos() + (x * y).tan() + x.sinh() - y.cosh() * 0.1 + (x * 0.5).tanh();
    s += (x * 0.3).asin() + (y * 0.2).acos() + x.atan() + y.asinh() + (y + 2.0).acosh();
    s += (x * 0.4).atanh() + y.exp() + x.exp2() + y.exp_m1() + (y + 3.0).ln() + x.ln_1p();
    s += (y + 2.0).log2() + (x + 2.0).log10() + (y + 1.5).sqrt() + x.cbrt() + (y + 2.0).recip();
    s += x.powi(3) - y.powf(1.5) + x.atan2(y) + x.hypot(y) + x.to_degrees() * 0.01;
    s += x.mul_add(y, 0.5) + x * 2.0 - -y / (x + 2.0);
    s += (x - 0.1).abs() + x.max(y) * 0.5 + x.min(0.2) - y.max(0.4);
    s += (x + 2.0).log(y + 1.5) + (y + 3.0).log(2.0);
    let mut p = 1.0;
    for k in 0..n {
        p *= (x * k as f64 + y).sin() + 1.5;
    }
    let t = if x > y { s * p } else { s / p };
    t + x * y
}

/// One charge's potential, for [`charges`] to call.
#[differentiable(nested)]
fn inverse_distance<F: Float>(dx: F, dy: F) -> F {
    F::one() / (dx * dx + dy * dy).sqrt()
}

/// `k x²`, called with a constant `k`.
#[differentiable(nested)]
fn scaled_square(x: f64, #[constant] k: f64) -> f64 {
    k * x * x
}

/// [`potential`] by calls of nested functions, plus a constant-scaled
/// term: the calls' tangents come from their `_jvp`s, and their second
/// derivatives from their `_jvp_vjp`s and `_jvp_jvp`s.
#[differentiable(nested)]
fn charges(x0: f64, x1: f64, #[constant] w: f64) -> f64 {
    let ten = 10.0;
    let near = inverse_distance(x0 - ten, x1 - (ten - w));
    near + inverse_distance(x0 - ten, x1) + scaled_square(x1, 0.01)
}

/// The x component of the potential's gradient, by its generated `_jvp`,
/// in differentiable code.
#[differentiable]
fn field_x(x0: f64, x1: f64, #[constant] w: f64) -> f64 {
    let (_, g) = potential_jvp(x0, x1, w, 1.0, 0.0, NoTangent);
    g
}

fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-5;
    (f(x + h) - f(x - h)) / (2.0 * h)
}

fn assert_close(what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-6 * (1.0 + want.abs()),
        "{what}: {got} against {want}"
    );
}

/// `f_jvp` and its derivatives come from one IR, so they compute the same
/// value and tangent to the last bit.
fn assert_same(nested: (f64, f64), jvp: (f64, f64)) {
    assert_eq!(nested, jvp);
}

#[test]
fn reverse_over_forward_of_a_potential() {
    let (x0, x1, w) = (0.7, 8.1, 0.3);
    for (d0, d1) in [(1.0, 0.0), (0.0, 1.0), (0.4, -1.3)] {
        let tangent =
            |x0: f64, x1: f64, d0: f64, d1: f64| potential_jvp(x0, x1, w, d0, d1, NoTangent).1;
        let (value, pullback) = potential_jvp_vjp(x0, x1, w, d0, d1, NoTangent);
        assert_same(value, potential_jvp(x0, x1, w, d0, d1, NoTangent));
        let (g0, g1, _, gd0, gd1, _) = pullback((0.0, 1.0));
        assert_close("x0", g0, central(|x| tangent(x, x1, d0, d1), x0));
        assert_close("x1", g1, central(|x| tangent(x0, x, d0, d1), x1));
        assert_close("d0", gd0, central(|d| tangent(x0, x1, d, d1), d0));
        assert_close("d1", gd1, central(|d| tangent(x0, x1, d0, d), d1));
        // The value's cotangent reaches the parameters as the gradient.
        let (_, pullback) = potential_jvp_vjp(x0, x1, w, d0, d1, NoTangent);
        let (g0, g1, _, gd0, gd1, _) = pullback((1.0, 0.0));
        let (_, (p0, p1, _)) = potential_grad(x0, x1, w);
        assert_close("value x0", g0, p0);
        assert_close("value x1", g1, p1);
        assert_eq!((gd0, gd1), (0.0, 0.0));
    }
}

#[test]
fn forward_over_forward_of_a_potential() {
    let (x0, x1, w, d0, d1) = (0.7, 8.1, 0.3, 0.4, -1.3);
    let (v0, v1, e0, e1) = (0.2, 0.9, -0.5, 0.6);
    let (value, tangent) = potential_jvp_jvp(
        x0, x1, w, d0, d1, NoTangent, v0, v1, NoTangent, e0, e1, NoTangent,
    );
    assert_same(value, potential_jvp(x0, x1, w, d0, d1, NoTangent));
    assert_eq!(value.0, potential(x0, x1, w));
    let along = |s: f64| {
        let (p, t) = potential_jvp(
            x0 + s * v0,
            x1 + s * v1,
            w,
            d0 + s * e0,
            d1 + s * e1,
            NoTangent,
        );
        (p, t)
    };
    assert_close("value", tangent.0, central(|s| along(s).0, 0.0));
    assert_close("tangent", tangent.1, central(|s| along(s).1, 0.0));
}

#[test]
fn every_scalar_rule_differentiated_twice() {
    for (x, y, n) in [(0.6, 0.45, 3), (0.3, 0.8, 0), (-0.2, 0.35, 2)] {
        let (dx, dy) = (0.7, -0.4);
        let tangent = |x: f64, y: f64, dx: f64, dy: f64| wave_jvp(x, y, n, dx, dy, NoTangent);
        let (value, pullback) = wave_jvp_vjp(x, y, n, dx, dy, NoTangent);
        assert_eq!(value.0, wave(x, y, n));
        assert_same(value, tangent(x, y, dx, dy));
        let (c0, c1) = (0.3, -1.1);
        let (gx, gy, _, gdx, gdy, _) = pullback((c0, c1));
        let dot = |(v, t): (f64, f64)| c0 * v + c1 * t;
        assert_close("x", gx, central(|x| dot(tangent(x, y, dx, dy)), x));
        assert_close("y", gy, central(|y| dot(tangent(x, y, dx, dy)), y));
        assert_close("dx", gdx, central(|d| dot(tangent(x, y, d, dy)), dx));
        assert_close("dy", gdy, central(|d| dot(tangent(x, y, dx, d)), dy));
        let (v, e) = (0.5, 0.25);
        let (_, second) = wave_jvp_jvp(
            x, y, n, dx, dy, NoTangent, v, -v, NoTangent, e, e, NoTangent,
        );
        let moved = |s: f64| {
            dot(wave_jvp(
                x + s * v,
                y - s * v,
                n,
                dx + s * e,
                dy + s * e,
                NoTangent,
            ))
        };
        assert_close("forward over forward", dot(second), central(moved, 0.0));
    }
}

#[test]
fn generated_tangent_called_in_differentiable_code() {
    let (x0, x1, w) = (0.7, 8.1, 0.3);
    let (value, (g0, g1, _)) = field_x_grad(x0, x1, w);
    assert_eq!(value, field_x(x0, x1, w));
    assert_close("x0", g0, central(|x| field_x(x, x1, w), x0));
    assert_close("x1", g1, central(|x| field_x(x0, x, w), x1));
    let (_, t) = field_x_jvp(x0, x1, w, 0.0, 1.0, NoTangent);
    assert_close("forward", t, g1);
}

#[test]
fn calls_of_nested_functions_differentiated_twice() {
    let (x0, x1, w, d0, d1) = (0.7, 8.1, 0.3, 0.4, -1.3);
    let tangent = |x0: f64, x1: f64, d0: f64, d1: f64| charges_jvp(x0, x1, w, d0, d1, NoTangent);
    let (value, pullback) = charges_jvp_vjp(x0, x1, w, d0, d1, NoTangent);
    assert_same(value, tangent(x0, x1, d0, d1));
    assert_eq!(value.0, charges(x0, x1, w));
    let moved = potential(x0, x1, w) + 0.01 * x1 * x1;
    assert_close("against the potential", value.0, moved);
    let (c0, c1) = (0.3, -1.1);
    let dot = |(v, t): (f64, f64)| c0 * v + c1 * t;
    let (g0, g1, _, gd0, gd1, _) = pullback((c0, c1));
    assert_close("x0", g0, central(|x| dot(tangent(x, x1, d0, d1)), x0));
    assert_close("x1", g1, central(|x| dot(tangent(x0, x, d0, d1)), x1));
    assert_close("d0", gd0, central(|d| dot(tangent(x0, x1, d, d1)), d0));
    assert_close("d1", gd1, central(|d| dot(tangent(x0, x1, d0, d)), d1));
    let (v0, v1, e0, e1) = (0.2, 0.9, -0.5, 0.6);
    let (_, second) = charges_jvp_jvp(
        x0, x1, w, d0, d1, NoTangent, v0, v1, NoTangent, e0, e1, NoTangent,
    );
    let along = |s: f64| dot(tangent(x0 + s * v0, x1 + s * v1, d0 + s * e0, d1 + s * e1));
    assert_close("forward over forward", dot(second), central(along, 0.0));
}

/// Reverse over forward, pulled back from the tangent alone, is the
/// Hessian-vector product: against the closed form.
#[test]
fn hessian_vector_product_against_the_hand_written_one() {
    let (x0, x1, w) = (0.7, 8.1, 0.3);
    for (v0, v1) in [(1.0, 0.0), (0.0, 1.0), (0.4, -1.3)] {
        let (_, pullback) = potential_jvp_vjp(x0, x1, w, v0, v1, NoTangent);
        let (h0, h1, ..) = pullback((0.0, 1.0));
        let want = potential_hvp_by_hand((x0, x1), w, (v0, v1));
        assert_close("(H v)0", h0, want.0);
        assert_close("(H v)1", h1, want.1);
    }
}

/// A `while` loop with a `break`, carrying a value.
#[differentiable(nested)]
fn damped(x: f64, #[constant] n: usize) -> f64 {
    let mut s = x;
    let mut k = 0;
    while k < n {
        s = s * x.sin() + 0.5;
        if s > 3.0 {
            break;
        }
        k += 1;
    }
    s
}

/// An early `return`.
#[differentiable(nested)]
fn early(x: f64, y: f64) -> f64 {
    if x > 1.0 {
        return x * x * y;
    }
    x.sin() * y
}

/// `loop` left by `break` with a value.
#[differentiable(nested)]
fn halved(x: f64) -> f64 {
    let mut v = x;
    loop {
        v = v * 0.5 + x.cos() * 0.01;
        if v < 0.1 {
            break v * x;
        }
    }
}

/// `f32`, with `continue` and an accumulator started from a literal.
#[differentiable(nested)]
fn skipping(x: f32) -> f32 {
    let mut acc = 0.0;
    for i in 0..4 {
        if i == 1 {
            continue;
        }
        acc += x.powi(i) * 0.5;
    }
    acc
}

/// `(∂/∂x, ∂/∂dx)` of `c · f_jvp(x, dx)`, the pullback's, against central
/// differences of `f_jvp` in each argument.
fn assert_second(what: &str, f_jvp: impl Fn(f64, f64) -> (f64, f64), x: f64, got: (f64, f64)) {
    let (dx, (c0, c1)) = (0.6, (0.3, -1.1));
    let dot = |x: f64, d: f64| {
        let (v, t) = f_jvp(x, d);
        c0 * v + c1 * t
    };
    assert_close(&format!("{what}: x"), got.0, central(|x| dot(x, dx), x));
    assert_close(&format!("{what}: dx"), got.1, central(|d| dot(x, d), dx));
}

#[test]
fn control_flow_differentiated_twice() {
    let (dx, c) = (0.6, (0.3, -1.1));
    for x in [0.4, 1.2, 2.5] {
        for n in [0, 3, 8] {
            let (value, pullback) = damped_jvp_vjp(x, n, dx, NoTangent);
            assert_same(value, damped_jvp(x, n, dx, NoTangent));
            assert_eq!(value.0, damped(x, n));
            let (gx, _, gdx, _) = pullback(c);
            assert_second(
                "damped",
                |x, d| damped_jvp(x, n, d, NoTangent),
                x,
                (gx, gdx),
            );
        }
        let y = 0.7;
        let (value, pullback) = early_jvp_vjp(x, y, dx, 0.0);
        assert_same(value, early_jvp(x, y, dx, 0.0));
        assert_eq!(value.0, early(x, y));
        let (gx, _, gdx, _) = pullback(c);
        assert_second("early", |x, d| early_jvp(x, y, d, 0.0), x, (gx, gdx));
        let (value, pullback) = halved_jvp_vjp(x, dx);
        assert_same(value, halved_jvp(x, dx));
        assert_eq!(value.0, halved(x));
        let (gx, gdx) = pullback(c);
        assert_second("halved", halved_jvp, x, (gx, gdx));
    }
    let (x, dx) = (0.8_f32, 0.6_f32);
    let (value, pullback) = skipping_jvp_vjp(x, dx);
    assert_eq!(value, skipping_jvp(x, dx));
    assert_eq!(value.0, skipping(x));
    let (gx, gdx) = pullback((0.3, -1.1));
    // d/dx of 0.3 f + (-1.1) f' dx for f = (1 + x² + x³) / 2.
    let want_gx = 0.3 * (x + 1.5 * x * x) - 1.1 * (1.0 + 3.0 * x) * dx;
    let want_gdx = -1.1 * (x + 1.5 * x * x);
    assert!((gx - want_gx).abs() < 1e-5, "{gx} against {want_gx}");
    assert!((gdx - want_gdx).abs() < 1e-5, "{gdx} against {want_gdx}");
}

/// [`potential`] with every parameter active (`w` too): `nested` writes
/// its `_grad` as IR, differentiable again (`_grad_vjp`, `_grad_jvp`).
#[differentiable(nested)]
fn all_active<F: Float>(x0: F, x1: F, w: F) -> F {
    let ten = F::of(10.0);
    let dx = x0 - ten;
    let dy = x1 - (ten - w);
    F::one() / (dx * dx + dy * dy).sqrt() + F::one() / (dx * dx + x1 * x1).sqrt() + w.abs()
}

/// Reads the gradient it calls as nested items, `(v, (g0, g1, gw))`.
#[differentiable]
fn through_gradient(x0: f64, x1: f64, w: f64) -> f64 {
    let (v, (g0, g1, gw)) = all_active_grad(x0, x1, w);
    g0 * g1 + gw.sin() * v
}

#[test]
fn reverse_over_reverse_of_a_potential() {
    let (x0, x1, w) = (0.7, 8.1, 0.3);
    let (value, (g0, g1, gw)) = through_gradient_grad(x0, x1, w);
    assert_eq!(value, through_gradient(x0, x1, w));
    assert_close("x0", g0, central(|x| through_gradient(x, x1, w), x0));
    assert_close("x1", g1, central(|x| through_gradient(x0, x, w), x1));
    assert_close("w", gw, central(|x| through_gradient(x0, x1, x), w));
    let (_, forward) = through_gradient_jvp(x0, x1, w, 0.4, -1.3, 0.2);
    assert_close(
        "forward over reverse",
        forward,
        0.4 * g0 - 1.3 * g1 + 0.2 * gw,
    );
    // The IR gradient is the first-order one, and its derivatives compute
    // its value to the last bit.
    let (v, grads) = all_active_grad(x0, x1, w);
    let (_, pullback) = all_active_vjp(x0, x1, w);
    let first = pullback(1.0);
    assert_close("value", v, all_active(x0, x1, w));
    for (k, (got, want)) in [(grads.0, first.0), (grads.1, first.1), (grads.2, first.2)]
        .into_iter()
        .enumerate()
    {
        assert_close(&format!("gradient {k}"), got, want);
    }
    // Pulled back from the gradient alone: the Hessian-vector product.
    for (v0, v1) in [(1.0, 0.0), (0.0, 1.0), (0.4, -1.3)] {
        let (again, pullback) = all_active_grad_vjp(x0, x1, w);
        assert_eq!(again, (v, grads));
        let (h0, h1, _) = pullback((0.0, (v0, v1, 0.0)));
        let want = potential_hvp_by_hand((x0, x1), w, (v0, v1));
        assert_close("(H v)0", h0, want.0);
        assert_close("(H v)1", h1, want.1);
    }
}

/// A potential with a `#[constant]` charge: its `_grad` is IR too, with
/// `NoTangent` for the charge.
#[differentiable(nested)]
fn charged(x0: f64, x1: f64, #[constant] q: f64) -> f64 {
    q / (x0 * x0 + x1 * x1).sqrt() + x0 * x1
}

#[differentiable]
fn charged_field_energy(x0: f64, x1: f64, #[constant] q: f64) -> f64 {
    let (_, (g0, g1, NoTangent)) = charged_grad(x0, x1, q);
    g0 * g0 + g1 * g1
}

#[test]
fn reverse_over_reverse_with_a_constant_parameter() {
    let (x0, x1, q) = (0.7, -1.2, 2.5);
    let (value, (g0, g1, NoTangent)) = charged_field_energy_grad(x0, x1, q);
    assert_eq!(value, charged_field_energy(x0, x1, q));
    assert_close("x0", g0, central(|x| charged_field_energy(x, x1, q), x0));
    assert_close("x1", g1, central(|x| charged_field_energy(x0, x, q), x1));

    // The Hessian of `charged` by hand: r = |x|, H = q (3 x xᵀ - r² I) / r⁵
    // plus the coupling of x0 x1.
    let r2: f64 = x0 * x0 + x1 * x1;
    let r5 = r2 * r2 * r2.sqrt();
    let hessian = [
        [q * (3.0 * x0 * x0 - r2) / r5, 3.0 * q * x0 * x1 / r5 + 1.0],
        [3.0 * q * x0 * x1 / r5 + 1.0, q * (3.0 * x1 * x1 - r2) / r5],
    ];
    let (v, (gx0, gx1, NoTangent)) = charged_grad(x0, x1, q);
    let first = charged_vjp(x0, x1, q).1(1.0);
    assert_close("value", v, charged(x0, x1, q));
    assert_close("gradient 0", gx0, first.0);
    assert_close("gradient 1", gx1, first.1);
    for (v0, v1) in [(1.0, 0.0), (0.0, 1.0), (0.4, -1.3)] {
        let want = [
            hessian[0][0] * v0 + hessian[0][1] * v1,
            hessian[1][0] * v0 + hessian[1][1] * v1,
        ];
        let (_, pullback) = charged_grad_vjp(x0, x1, q);
        let (h0, h1, NoTangent) = pullback((0.0, (v0, v1, NoTangent)));
        assert_close("reverse over reverse (H v)0", h0, want[0]);
        assert_close("reverse over reverse (H v)1", h1, want[1]);
        let (_, (_, (d0, d1, NoTangent))) = charged_grad_jvp(x0, x1, q, v0, v1, NoTangent);
        assert_close("forward over reverse (H v)0", d0, want[0]);
        assert_close("forward over reverse (H v)1", d1, want[1]);
    }
}

/// Branches in a `_grad` written as IR: an early `return`, an `else if`
/// chain, an inactive `let` inside a branch, kinks (`abs`, `max`) inside
/// a branch and after it.
#[differentiable(nested)]
fn piecewise(x: f64, y: f64, #[constant] k: f64) -> f64 {
    if x > 2.0 {
        return x * y * k;
    }
    let mut z = x * y;
    let t = if x > y {
        let q = x.sin();
        let j = k * 3.0;
        q * z * j + (x - y).abs()
    } else if y > 0.5 {
        z *= y.exp();
        (y * x).cos()
    } else {
        x
    };
    t * z + y.max(x)
}

/// Reads [`piecewise`]'s gradient in differentiable code.
#[differentiable]
fn piecewise_slope(x: f64, y: f64, #[constant] k: f64) -> f64 {
    let (v, (gx, gy, NoTangent)) = piecewise_grad(x, y, k);
    gx * gy + v
}

/// A `match` on a constant in a `_grad` written as IR.
#[differentiable(nested)]
fn by_case(x: f64, y: f64, #[constant] n: usize) -> f64 {
    let t = match n {
        0 => x,
        1 | 2 => x * y.cos(),
        _ => y.sin() * x,
    };
    t * x + y
}

/// A `_grad`'s value and gradient, a `#[constant]` last.
type Gradient = (f64, (f64, f64, NoTangent));

/// A `_grad` written as IR and its derivatives at `(x, y)`: the value
/// `f`'s, the gradient central differences of `f`, and `H v` from the
/// `_grad_vjp` (pulled back from the gradient's cotangent `v`) and the
/// `_grad_jvp` (along `v`) central differences of the `_grad` along `v`.
fn assert_second_order<P: FnOnce(Gradient) -> (f64, f64, NoTangent)>(
    what: &str,
    (x, y): (f64, f64),
    f: impl Fn(f64, f64) -> f64,
    grad: impl Fn(f64, f64) -> Gradient,
    grad_vjp: impl Fn(f64, f64) -> (Gradient, P),
    grad_jvp: impl Fn(f64, f64, f64, f64) -> (Gradient, Gradient),
) {
    let (value, (gx, gy, NoTangent)) = grad(x, y);
    assert_eq!(value, f(x, y), "{what}: value");
    assert_close(&format!("{what}: x"), gx, central(|x| f(x, y), x));
    assert_close(&format!("{what}: y"), gy, central(|y| f(x, y), y));
    for v in [(1.0, 0.0), (0.0, 1.0), (0.4, -1.3)] {
        let along = |t: f64| grad(x + t * v.0, y + t * v.1).1;
        let want = (central(|t| along(t).0, 0.0), central(|t| along(t).1, 0.0));
        let (value, pullback) = grad_vjp(x, y);
        assert_eq!(value, grad(x, y));
        let (h0, h1, NoTangent) = pullback((0.0, (v.0, v.1, NoTangent)));
        let (_, (_, (d0, d1, NoTangent))) = grad_jvp(x, y, v.0, v.1);
        for (mode, got) in [("reverse", (h0, h1)), ("forward", (d0, d1))] {
            assert_close(
                &format!("{what}: {mode} over reverse (H v)0"),
                got.0,
                want.0,
            );
            assert_close(
                &format!("{what}: {mode} over reverse (H v)1"),
                got.1,
                want.1,
            );
        }
    }
}

/// [`assert_second_order`] of `f(x, y, k)` through its generated
/// `f_grad`, `f_grad_vjp` and `f_grad_jvp`, `k` constant.
macro_rules! assert_second_order_of {
    ($what:expr, $point:expr, $k:expr, $f:ident, $grad:ident, $vjp:ident, $jvp:ident) => {
        assert_second_order(
            $what,
            $point,
            |a, b| $f(a, b, $k),
            |a, b| $grad(a, b, $k),
            |a, b| $vjp(a, b, $k),
            |a, b, v0, v1| $jvp(a, b, $k, v0, v1, NoTangent),
        )
    };
}

#[test]
fn reverse_over_reverse_through_branches() {
    let k = 1.3;
    // One point in each branch, none on a kink.
    for (x, y) in [(2.5, 0.3), (1.2, 0.4), (0.3, 0.9), (0.2, 0.3)] {
        assert_second_order_of!(
            "piecewise",
            (x, y),
            k,
            piecewise,
            piecewise_grad,
            piecewise_grad_vjp,
            piecewise_grad_jvp
        );
        // The IR gradient is the first-order one.
        let (_, (gx, gy, NoTangent)) = piecewise_grad(x, y, k);
        let first = piecewise_vjp(x, y, k).1(1.0);
        assert_close("gradient x", gx, first.0);
        assert_close("gradient y", gy, first.1);
        let (slope, (sx, sy, NoTangent)) = piecewise_slope_grad(x, y, k);
        assert_eq!(slope, piecewise_slope(x, y, k));
        assert_close("slope x", sx, central(|x| piecewise_slope(x, y, k), x));
        assert_close("slope y", sy, central(|y| piecewise_slope(x, y, k), y));
    }
    for n in 0..4 {
        assert_second_order_of!(
            &format!("case {n}"),
            (0.7, -0.4),
            n,
            by_case,
            by_case_grad,
            by_case_grad_vjp,
            by_case_grad_jvp
        );
    }
}

/// Calls of nested functions in a branch of a `_grad` written as IR.
#[differentiable(nested)]
fn screened(x0: f64, x1: f64, #[constant] w: f64) -> f64 {
    if x0 > x1 {
        inverse_distance(x0 - w, x1) * x1
    } else {
        scaled_square(x0 + x1, w) + x0
    }
}

#[test]
fn reverse_over_reverse_through_calls() {
    let w = 0.3;
    for point in [(0.7, 8.1), (2.0, 0.5), (-0.4, 1.1)] {
        assert_second_order_of!(
            "charges",
            point,
            w,
            charges,
            charges_grad,
            charges_grad_vjp,
            charges_grad_jvp
        );
        assert_second_order_of!(
            "screened",
            point,
            w,
            screened,
            screened_grad,
            screened_grad_vjp,
            screened_grad_jvp
        );
    }
}

/// Loops in a `_grad` written as IR: a `for` with an inactive value per
/// iteration, a branch on an active value and `continue`, then a `while`
/// with its own counter and a `break` on an active value; after an early
/// `return`, so both sit in a branch.
#[differentiable(nested)]
fn iterated(x: f64, y: f64, #[constant] n: usize) -> f64 {
    if n == 2 {
        return x * y;
    }
    let mut acc = x;
    for i in 0..n {
        if i == 1 {
            continue;
        }
        let c = i as f64 * 0.1;
        let q = (acc * c).sin();
        acc = if acc > y { acc * q + y } else { acc + q * y };
    }
    let mut s = y;
    let mut k = 0;
    while k < n {
        k += 1;
        s = s * 0.5 + acc.cos() * x;
        if s.abs() > 3.0 {
            break;
        }
    }
    acc * s
}

#[test]
fn reverse_over_reverse_through_loops() {
    for n in [0, 1, 2, 4, 9] {
        for point in [(0.7, 0.3), (1.2, 2.0)] {
            assert_second_order_of!(
                &format!("iterated {n}"),
                point,
                n,
                iterated,
                iterated_grad,
                iterated_grad_vjp,
                iterated_grad_jvp
            );
        }
    }
}

/// The functions of `control_flow_differentiated_twice`, whose `_grad`s
/// are IR too: their gradients, and `H v` through them.
#[test]
fn reverse_over_reverse_of_control_flow() {
    for n in [0, 3] {
        assert_second_order_of!(
            &format!("wave {n}"),
            (0.3, 0.45),
            n,
            wave,
            wave_grad,
            wave_grad_vjp,
            wave_grad_jvp
        );
    }
    for x in [0.4, 1.2, 2.5] {
        let n = 8;
        let (value, (gx, NoTangent)) = damped_grad(x, n);
        assert_eq!(value, damped(x, n));
        assert_close("damped", gx, central(|x| damped(x, n), x));
        let (_, pullback) = damped_grad_vjp(x, n);
        let (h, NoTangent) = pullback((0.0, (1.0, NoTangent)));
        assert_close("damped H", h, central(|x| damped_grad(x, n).1 .0, x));
        let (_, (_, (d, NoTangent))) = damped_grad_jvp(x, n, 1.0, NoTangent);
        assert_close(
            "damped H forward",
            d,
            central(|x| damped_grad(x, n).1 .0, x),
        );

        let (value, (gx,)) = halved_grad(x);
        assert_eq!(value, halved(x));
        assert_close("halved", gx, central(halved, x));
        let (h,) = halved_grad_vjp(x).1((0.0, (1.0,)));
        assert_close("halved H", h, central(|x| halved_grad(x).1 .0, x));

        let y = 0.7;
        let (value, (gx, gy)) = early_grad(x, y);
        assert_eq!(value, early(x, y));
        assert_close("early x", gx, central(|x| early(x, y), x));
        assert_close("early y", gy, central(|y| early(x, y), y));
    }
    let x = 0.8_f32;
    let (value, (gx,)) = skipping_grad(x);
    assert_eq!(value, skipping(x));
    // d/dx of (1 + x² + x³) / 2.
    assert!((gx - (x + 1.5 * x * x)).abs() < 1e-5, "{gx}");
    let (h,) = skipping_grad_vjp(x).1((0.0, (1.0,)));
    assert!((h - (1.0 + 3.0 * x)).abs() < 1e-4, "{h}");
}

/// A loop inside a loop in a `_grad` written as IR, the inner one also in
/// a branch: one record and one tape for every run of the inner loop.
#[differentiable(nested)]
fn double_sum(x: f64, y: f64, #[constant] n: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..n {
        let mut row = y * 0.5;
        for j in 0..i + 1 {
            row = (row * x + j as f64 * 0.1).sin();
        }
        if i % 2 == 0 {
            let mut k = 0;
            while k < 2 {
                k += 1;
                row = row * 0.7 + (x * row).cos() * y;
            }
        }
        total += row * row + x * (i as f64);
    }
    total
}

#[test]
fn reverse_over_reverse_through_nested_loops() {
    for n in [0, 1, 3, 6] {
        for point in [(0.7, 0.3), (1.2, -0.8)] {
            assert_second_order_of!(
                &format!("double sum {n}"),
                point,
                n,
                double_sum,
                double_sum_grad,
                double_sum_grad_vjp,
                double_sum_grad_jvp
            );
        }
    }
}
