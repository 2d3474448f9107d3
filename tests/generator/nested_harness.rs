//! What every generated nested program is checked with (included by the
//! generated test file): the helpers programs call, the points, and the
//! checks of the first and second derivatives.

use ad::check::{check_gradient, close};
use ad::{differentiable, NoTangent};

#[differentiable(nested)]
pub fn nested_helper(x: f64, y: f64) -> f64 {
    (x * y).sin() + x * 0.5
}

#[differentiable(nested)]
pub fn nested_scaled(x: f64, #[constant] k: usize) -> f64 {
    (x * (k as f64 * 0.3 + 0.5)).tanh()
}

/// The constants and points each program is checked at.
pub const CASES: [usize; 4] = [0, 1, 2, 3];
pub const POINTS: [(f64, f64); 2] = [(0.3, -0.6), (0.8, 0.45)];

/// The directions of the second-order checks.
const DIRECTIONS: [(f64, f64); 2] = [(1.0, 0.0), (0.4, -1.3)];

/// `f_grad`'s value and gradient (`k`'s entry is `NoTangent`).
pub type Gradient = (f64, (f64, f64, NoTangent));

/// `d/dt g(x + t v, y + t w)` at 0, by central differences (Richardson
/// extrapolated, as the gradient check).
fn along(g: impl Fn(f64, f64) -> f64, (x, y): (f64, f64), (v, w): (f64, f64)) -> f64 {
    let d = |h: f64| (g(x + h * v, y + h * w) - g(x - h * v, y - h * w)) / (2.0 * h);
    (4.0 * d(5e-6) - d(1e-5)) / 3.0
}

fn assert_near(program: &str, what: &str, got: f64, want: f64) {
    assert!(
        close(got, want, 1e-5),
        "{program}: {what} is {got}, finite differences give {want}"
    );
}

/// Checks one program at one point: the values agree; `f_grad` matches
/// finite differences of `f`; `H v` from `f_grad_vjp` (pulled back from
/// the gradient's cotangent `v`), from `f_grad_jvp` (along `v`) and from
/// `f_jvp_vjp` (the gradient of the derivative along `v`) matches finite
/// differences of `f_grad` along `v`; `f_jvp_jvp` gives `vᵀ H v`.
#[allow(clippy::too_many_arguments)]
pub fn check<P, Q>(
    program: &str,
    point: (f64, f64),
    f: impl Fn(f64, f64) -> f64,
    grad: impl Fn(f64, f64) -> Gradient,
    grad_vjp: impl Fn(f64, f64) -> (Gradient, P),
    grad_jvp: impl Fn(f64, f64, f64, f64) -> (Gradient, Gradient),
    jvp_vjp: impl Fn(f64, f64, f64, f64) -> ((f64, f64), Q),
    jvp_jvp: impl Fn(f64, f64, f64, f64) -> ((f64, f64), (f64, f64)),
) where
    P: FnOnce(Gradient) -> (f64, f64, NoTangent),
    Q: FnOnce((f64, f64)) -> (f64, f64, NoTangent, f64, f64, NoTangent),
{
    let (x, y) = point;
    let value = f(x, y);
    assert!(value.is_finite(), "{program}: f is not finite at {point:?}");
    let (grad_value, (gx, gy, NoTangent)) = grad(x, y);
    assert_eq!(
        grad_value, value,
        "{program}: f_grad's value differs from f's"
    );
    if let Err(report) = check_gradient(|p: &(f64, f64)| f(p.0, p.1), &point, &[gx, gy]) {
        panic!("{program}: f_grad disagrees with finite differences at {point:?}:\n{report}");
    }
    for v in DIRECTIONS {
        let want = (
            along(|x, y| grad(x, y).1 .0, point, v),
            along(|x, y| grad(x, y).1 .1, point, v),
        );
        let (again, pullback) = grad_vjp(x, y);
        assert_eq!(again, grad(x, y), "{program}: f_grad_vjp's value differs");
        let (h0, h1, NoTangent) = pullback((0.0, (v.0, v.1, NoTangent)));
        let (_, (_, (d0, d1, NoTangent))) = grad_jvp(x, y, v.0, v.1);
        let ((_, derivative), pullback) = jvp_vjp(x, y, v.0, v.1);
        let (r0, r1, NoTangent, _, _, NoTangent) = pullback((0.0, 1.0));
        for (mode, (a, b)) in [
            ("reverse over reverse", (h0, h1)),
            ("forward over reverse", (d0, d1)),
            ("reverse over forward", (r0, r1)),
        ] {
            assert_near(program, &format!("{mode} (H v)0 along {v:?}"), a, want.0);
            assert_near(program, &format!("{mode} (H v)1 along {v:?}"), b, want.1);
        }
        assert_near(program, "f_jvp", derivative, gx * v.0 + gy * v.1);
        let (_, (_, curvature)) = jvp_jvp(x, y, v.0, v.1);
        assert_near(program, "vᵀ H v", curvature, want.0 * v.0 + want.1 * v.1);
    }
}

/// Checks the program `f` of the module it is used in at every case.
macro_rules! check_nested_program {
    () => {
        for k in $crate::nested_harness::CASES {
            for point in $crate::nested_harness::POINTS {
                $crate::nested_harness::check(
                    module_path!(),
                    point,
                    |x, y| f(x, y, k),
                    |x, y| f_grad(x, y, k),
                    |x, y| f_grad_vjp(x, y, k),
                    |x, y, v, w| f_grad_jvp(x, y, k, v, w, NoTangent),
                    |x, y, v, w| f_jvp_vjp(x, y, k, v, w, NoTangent),
                    // Along `(v, w)` at the direction `(v, w)`: the
                    // tangent of the tangent is `vᵀ H v`.
                    |x, y, v, w| {
                        f_jvp_jvp(
                            x, y, k, v, w, NoTangent, v, w, NoTangent, 0.0, 0.0, NoTangent,
                        )
                    },
                );
            }
        }
    };
}
