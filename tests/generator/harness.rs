//! What every generated program is checked with (included by the
//! generated test file): the helpers programs call, the inputs, and the
//! checks.

use ad::check::{check_gradient, close, Flat, Rng};
use ad::differentiable;
use ad::ndarray::Array1;

#[differentiable]
pub fn helper_scalar(x: f64, y: f64) -> f64 {
    (x * y).sin() + x * 0.5
}

#[differentiable]
pub fn helper_array(v: &Array1<f64>, s: f64) -> f64 {
    (v * s).mapv(f64::tanh).sum()
}

/// Two values at once: programs destructure them or assign them to names.
#[differentiable]
pub fn helper_pair(v: &Array1<f64>, s: f64) -> (f64, Array1<f64>) {
    let scaled = v * s;
    (scaled.sum().sin(), scaled.mapv(f64::tanh))
}

/// Calls itself twice per level, `depth` levels deep: recursion, whose
/// pullbacks reverse mode boxes.
#[differentiable]
pub fn helper_recursive(v: &Array1<f64>, s: f64, #[constant] depth: usize) -> f64 {
    if depth == 0 {
        return (v * s).sum().tanh();
    }
    let inner = helper_recursive(v, s * 0.8, depth - 1);
    (inner * s + v[0]).sin() + helper_recursive(v, inner, depth - 1) * 0.5
}

/// Splits `v[lo..lo + len]` (wrapping) in halves down to single
/// elements: recursion that passes its active parameters on unchanged,
/// whose pullbacks add into their caller's adjoints.
#[differentiable]
pub fn helper_halving(
    v: &Array1<f64>,
    s: f64,
    #[constant] lo: usize,
    #[constant] len: usize,
) -> f64 {
    if len <= 1 {
        return (v[lo % v.len()] * s).sin();
    }
    let half = len / 2;
    (helper_halving(v, s, lo, half) * s).tanh() + helper_halving(v, s, lo + half, len - half)
}

/// The active inputs `(x, y, a, b)`.
pub type Inputs = (f64, f64, Array1<f64>, Array1<f64>);

/// The array length `n` and the constant `k` each program is checked at.
pub const CASES: [(usize, usize); 3] = [(1, 0), (4, 3), (5, 2)];

/// Deterministic inputs of length `n`, and the constant array `c`.
pub fn inputs(n: usize, seed: u64) -> (Inputs, Array1<f64>) {
    let mut rng = Rng::new(seed + 17);
    let mut array = || Array1::from_shape_simple_fn(n, || rng.uniform());
    let (a, b, c) = (array(), array(), array());
    ((0.3, -0.6, a, b), c)
}

/// The cotangent the pullbacks are called with: not 1, so a pullback that
/// ignored its argument would show.
pub const COTANGENT: f64 = -1.75;

/// Checks one program at one input: values agree and are finite, the
/// gradient matches finite differences, the pullback of [`COTANGENT`] is
/// that times the gradient, and forward mode along a random direction
/// matches `<gradient, v>`.
#[allow(clippy::too_many_arguments)]
pub fn check<G: Flat, P: Flat>(
    program: &str,
    x: &Inputs,
    f: impl Fn(&Inputs) -> f64,
    (grad_value, gradient): (f64, G),
    (vjp_value, pulled): (f64, P),
    jvp: impl Fn(&Inputs) -> (f64, f64),
) {
    let value = f(x);
    assert!(
        value.is_finite(),
        "{program}: f is not finite ({value}) at {x:?}"
    );
    assert_eq!(
        grad_value, value,
        "{program}: f_grad's value differs from f's"
    );
    assert_eq!(
        vjp_value, value,
        "{program}: f_vjp's value differs from f's"
    );
    let g = gradient.to_flat();
    if let Err(report) = check_gradient(&f, x, &g) {
        panic!("{program}: f_grad disagrees with finite differences at {x:?}:\n{report}");
    }
    let p = pulled.to_flat();
    assert!(
        g.iter().zip(&p).all(|(a, b)| close(COTANGENT * *a, *b, 1e-12)),
        "{program}: the pullback of {COTANGENT} {p:?} differs from {COTANGENT} times the gradient {g:?}"
    );
    let v = x.random_like(&mut Rng::new(5));
    let (jvp_value, jv) = jvp(&v);
    assert_eq!(
        jvp_value, value,
        "{program}: f_jvp's value differs from f's"
    );
    let expected = g.iter().zip(v.to_flat()).map(|(a, b)| a * b).sum::<f64>();
    assert!(
        close(jv, expected, 1e-8),
        "{program}: forward mode gives {jv} but <gradient, v> = {expected}"
    );
}

/// Checks the program `f` of the module it is used in at every case.
macro_rules! check_program {
    () => {
        for (n, k) in $crate::harness::CASES {
            let (x, c) = $crate::harness::inputs(n, k as u64);
            let (p0, p1, p2, p3) = &x;
            let vjp = {
                let (value, pullback) = f_vjp(*p0, *p1, p2, p3, &c, k);
                (value, pullback($crate::harness::COTANGENT))
            };
            $crate::harness::check(
                module_path!(),
                &x,
                |p: &$crate::harness::Inputs| f(p.0, p.1, &p.2, &p.3, &c, k),
                f_grad(*p0, *p1, p2, p3, &c, k),
                vjp,
                |t: &$crate::harness::Inputs| {
                    f_jvp(
                        *p0,
                        *p1,
                        p2,
                        p3,
                        &c,
                        k,
                        t.0,
                        t.1,
                        &t.2,
                        &t.3,
                        ::ad::NoTangent,
                        ::ad::NoTangent,
                    )
                },
            );
        }
    };
}
