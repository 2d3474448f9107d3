//! ndarray code: operators with broadcasting, `dot` in every pairing,
//! reductions, views, `mapv`, element reads. Every case runs at several
//! shapes in one test: one compiled gradient serves every size.

#[macro_use]
mod support;

use ad::differentiable;
use ad::ndarray::{array, s, Array1, Array2, ArrayView1, Axis};
use support::{random, SIZES};

mod broadcast {
    use super::*;
    #[differentiable]
    pub fn f(a: &Array2<f64>, b: &Array1<f64>, s: f64) -> f64 {
        let c = (a + b) * s - 1.0;
        let d = &c / (b * b + 2.0) - a * 0.5;
        let e = s - &d + s * b;
        (&e * &e).sum() + (2.0 / (e.mapv(f64::exp) + 1.0)).sum()
    }
}

mod scalar_times_constant_array {
    use super::*;
    #[differentiable]
    pub fn f(s: f64, #[constant] x: &Array2<f64>) -> f64 {
        ((x * s).mapv(f64::sin) / (s * s + 1.0)).sum()
    }
}

mod dot_pairings {
    use super::*;
    #[differentiable]
    pub fn f(m: &Array2<f64>, u: &Array1<f64>, v: &Array1<f64>, n: &Array2<f64>) -> f64 {
        let mv = m.dot(v);
        let um = u.dot(m);
        let mn = m.dot(n);
        u.dot(&mv) + um.dot(v) + mn.sum() + u.dot(u)
    }
}

mod dot_constant_sides {
    use super::*;
    #[differentiable]
    pub fn f(w: &Array2<f64>, #[constant] x: &Array2<f64>, #[constant] v: &Array1<f64>) -> f64 {
        x.dot(w).sum() + w.t().dot(&x.t()).mapv(f64::tanh).sum() + v.dot(&w.t()).sum()
    }
}

mod reductions {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array2<f64>) -> f64 {
        let m0 = x.mean_axis(Axis(0)).unwrap();
        let s1 = x.sum_axis(Axis(1));
        let mean = x.mean().expect("not empty");
        m0.dot(&m0) + (&s1 * &s1).sum() * mean + x.sum()
    }
}

mod views {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array2<f64>) -> f64 {
        let r = x.row(0);
        let c = x.column(x.ncols() - 1);
        let tail = x.slice(s![.., 1..]);
        let v = x.view();
        let owned = tail.to_owned();
        let copy = owned.clone();
        let t = x.t();
        let rev = v.reversed_axes();
        let col = r.insert_axis(Axis(1));
        let flat = x.view().into_shape_with_order(x.len()).unwrap();
        r.dot(&c) + copy.sum() * 2.0 + t.dot(&rev).sum() + col.sum() + flat.dot(&flat)
    }
}

mod elementwise_methods {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let y = x.mapv(f64::exp) + x.mapv(f64::sin) * x.mapv(f64::cos);
        let z = x.exp().sqrt() + x.powi(3) - x.powf(2.0) + x.mapv(|v| v.abs()).mapv(f64::ln_1p);
        // ndarray's `pow2` and `clamp`, and angle conversions.
        let w = x.pow2() + x.clamp(1.2, 1.8) + x.to_degrees() * 0.01 + x.to_radians();
        (y * z).sum() + w.sum() + x[0].clamp(1.1, 1.7)
    }
}

mod mapv_closures {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] k: f64) -> f64 {
        let relu = x.mapv(|v| v.max(0.0));
        let smooth = x.mapv(|v| {
            let e = (v * k).exp();
            e / (1.0 + e) + v * v * 0.5
        });
        let constant = x.mapv(|_| 2.0);
        relu.sum() + smooth.sum() + (x * constant).sum()
    }
}

mod indexing {
    use super::*;
    #[allow(clippy::ptr_arg)] // `&Vec<f64>` is one of the parameter forms under test
    #[differentiable]
    pub fn f(x: &Array1<f64>, m: &Array2<f64>, v: &Vec<f64>, s: &[f64]) -> f64 {
        let last = x.len() - 1;
        x[0] * x[last] + m[[0, m.ncols() - 1]] * m[[0, 0]] + v[0] * s[s.len() - 1] + s[0]
    }
}

/// `for` over a slice's elements: `.iter()`, by pattern `&x`, and
/// `.iter().enumerate()` over a `Vec` of arrays.
mod iterated_slices {
    use super::*;
    #[allow(clippy::ptr_arg)]
    #[differentiable]
    pub fn f(xs: &[f64], vs: &Vec<Array1<f64>>) -> f64 {
        let mut acc = 0.0;
        for x in xs.iter() {
            acc += *x * x * 2.0;
        }
        for (i, v) in vs.iter().enumerate() {
            acc += v.sum() * xs[i % xs.len()];
        }
        for &x in xs {
            acc = acc * 0.9 + x;
        }
        acc
    }
}

mod by_value_and_views {
    use super::*;
    #[differentiable]
    pub fn f(x: Array1<f64>, y: ArrayView1<f64>) -> f64 {
        (&x * &y).sum() + x.mapv(f64::tanh).sum()
    }
}

mod constructors {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let zeros = Array1::<f64>::zeros(x.len());
        let filled = Array1::from_elem(x.len(), s);
        let grid = Array2::from_elem((2, x.len()), s * s);
        (x * &filled + &zeros).sum() + (grid * x).sum()
    }
}

mod array_with_active_scalar_argument {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, p: f64, b: f64) -> f64 {
        (x.powf(p) + x.log(b)).sum()
    }
}

mod reverse_only {
    use super::*;
    #[differentiable(reverse)]
    pub fn f(x: &Array1<f64>) -> f64 {
        x.mapv(f64::sin).sum()
    }
}

mod forward_only {
    use super::*;
    #[differentiable(forward)]
    pub fn f(x: &Array1<f64>) -> f64 {
        x.mapv(f64::sin).sum()
    }
}

mod array_result {
    use super::*;
    #[differentiable]
    pub fn f(w: &Array2<f64>, b: &Array1<f64>, #[constant] x: &Array2<f64>) -> Array2<f64> {
        (x.dot(&w.t()) + b).mapv(f64::tanh)
    }
}

mod single_precision {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f32>, s: f32) -> f32 {
        (x.mapv(f32::exp) * s).sum() / x.len() as f32
    }
}

/// 1-D arrays built from active scalars: `array![..]`, `Array1::from(vec![..])`
/// (`vec![x; n]` too) and `Array1::from_vec(vec![..])`, with constant items
/// among them.
mod arrays_of_scalars {
    use super::*;
    #[differentiable]
    pub fn f(x: f64, y: f64, w: &Array2<f64>) -> f64 {
        let v = array![x, y * 2.0, x * y, 1.5];
        let u = Array1::from(vec![y.sin(), x]);
        let z = Array1::from_vec(vec![0.5, y]);
        let repeated = Array1::from(vec![x * y; 3]);
        let products = w.dot(&v).mapv(f64::tanh).sum() + v.dot(&v) + u[0] * u[1];
        // A `Vec` of constants, whose length an active array gives.
        let weights = vec![0.25; v.len()];
        let weighted: f64 = v.iter().zip(&weights).map(|(a, b)| a * b).sum();
        products + z.sum() * x + repeated.dot(&repeated.mapv(f64::sin)) + weighted
    }
}

/// Matrices written by rows, `array![[a, b], [c, d]]`, and a 3-D array:
/// a rotation from `sin_cos`, with constant rows and items among active ones.
mod arrays_of_rows {
    use super::*;
    #[differentiable]
    pub fn f(angle: f64, p: &Array1<f64>, #[constant] shear: f64) -> f64 {
        let (s, c) = angle.sin_cos();
        let r = array![[c, -s, 0.0], [s, c, 0.0], [0.0, shear, 1.0]];
        let q = r.dot(p);
        let fixed = array![[1.0, 0.0], [0.0, 2.0]];
        let by_vec = Array2::from(vec![[s, angle], [2.0, c * c]]);
        let blocks = array![
            [[angle, 1.0], [2.0, angle * angle]],
            [[shear, 0.5], [fixed[[1, 1]], c]]
        ];
        let rotated = q.mapv(|v| v * v).sum() + r.t().dot(&q).sum() * angle;
        rotated + blocks.sum() * p[0] + by_vec.dot(&by_vec).sum()
    }
}

/// ndarray's `Zip::from(a).and(b).map_collect(f)`, 1-D and 2-D, over
/// parameters, a computed array and a local, with closures taking values
/// (`|&u, &v|`) or references (`|x, y|`, read as `*x`).
mod zipped {
    use super::*;
    use ad::ndarray::Zip;
    #[differentiable]
    pub fn f(a: &Array1<f64>, b: &Array1<f64>, m: &Array2<f64>, s: f64) -> f64 {
        let p = Zip::from(a).and(b).map_collect(|&u, &v| u * v.sin() + s);
        let q = Zip::from(&(m * 2.0))
            .and(m)
            .map_collect(|x, y| (*x - y * s).tanh());
        let r = Zip::from(&p)
            .and(a)
            .and(b)
            .map_collect(|&x, &y, &z| x * y - z);
        p.sum() + q.sum() + r.dot(&p)
    }
}

/// Elements written in place: `Zip::from(&mut y).and(..).for_each(..)`
/// (`*o = ..`, `*o += ..`, `o.tanh()`), and `for o in y.iter_mut()` over an
/// array and a `Vec` of floats, in a loop that carries `y` too: each is
/// element writes `y[index] = ..`.
mod written_in_place {
    use super::*;
    use ad::ndarray::Zip;
    #[differentiable]
    pub fn f(a: &Array1<f64>, m: &Array2<f64>, #[constant] c: &Array1<f64>) -> f64 {
        let mut h = m.mapv(f64::sin);
        Zip::from(&mut h).and(m).for_each(|o, &v| {
            *o += v * v;
            *o = o.tanh();
        });
        let mut r = Array1::zeros(a.len());
        Zip::from(&mut r)
            .and(a)
            .and(c)
            .for_each(|o, &p, &q| *o = p * q + p.exp());
        let mut s = a.to_owned();
        for _ in 0..2 {
            for o in s.iter_mut() {
                *o = (*o * 0.9).sin() + 0.1;
            }
        }
        let mut v = vec![0.0; a.len()];
        for (i, &x) in a.iter().enumerate() {
            v[i] = x * x;
        }
        for (k, o) in v.iter_mut().enumerate() {
            *o = o.cos() * (k as f64 + 1.0);
        }
        h.sum() + r.dot(&s) + v.iter().sum::<f64>()
    }
}

/// `Array1::from_iter(chain)` and `Array2::from_shape_vec(shape, list)`
/// of active items: the chain collected, the list reshaped.
mod built_from_items {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let a = Array1::from_iter(x.iter().map(|v| v.tanh()));
        let items: Vec<f64> = x.iter().map(|v| v * 2.0).collect();
        let m = Array2::from_shape_vec((2, x.len() / 2), items).unwrap();
        a.dot(x) + m.sum_axis(Axis(0)).mapv(f64::sin).sum()
    }
}

#[test]
fn elements_written_in_place_and_arrays_built_from_items() {
    for n in [2, 6] {
        let c = random(n, 76);
        check_scalar!(written_in_place; ref a da = random(n, 77), ref m dm = random((3, 2), 78); &c);
        check_scalar!(built_from_items; ref x dx = random(n, 79););
    }
}

#[test]
#[should_panic(expected = "`Zip`: the arrays have one shape")]
fn zipping_arrays_of_two_shapes_panics_as_zip_does() {
    let (a, b) = (random(3, 52), random(4, 53));
    let _ = zipped::f_grad(&a, &b, &random((2, 3), 54), 0.5);
}

/// A matrix's `map_axis`: each row's norm (`Axis(1)`), each column's
/// weighted sum (`Axis(0)`), as a chain over its lanes collected.
mod mapped_axes {
    use super::*;
    use ad::ndarray::Axis;
    #[differentiable]
    pub fn f(x: &Array2<f64>, w: &Array1<f64>) -> f64 {
        let norms = x.map_axis(Axis(1), |r| r.dot(&r).sqrt());
        let columns = x.map_axis(Axis(0), |c| (&c * w).sum().tanh());
        norms.sum() + columns.dot(&columns)
    }
}

/// `from_shape_fn` with an active body, 1-D and 2-D, with the index taken
/// as a tuple pattern or whole: written out as loops of element writes.
mod shape_fns {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let a = Array1::from_shape_fn(x.len(), |i| x[i] * s + i as f64);
        let m = Array2::from_shape_fn((x.len(), 2), |(i, j)| x[i] * (j as f64 + 1.0) * s);
        let p = Array2::from_shape_fn((2, 3), |ix| s * (ix.0 + ix.1) as f64);
        a.dot(&a) + m.mapv(f64::sin).sum() + p.sum()
    }
}

/// ndarray's statistics, written out by the macro as means of squared
/// deviations (`var`, `std`, along an axis too), a layer norm built on
/// them, and ndarray's `map`, whose closure takes a reference.
mod statistics {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, m: &Array2<f64>, gain: &Array1<f64>) -> f64 {
        let spread = x.var(0.0) + x.std(1.0) * 0.5;
        let columns = m.std_axis(Axis(0), 0.0).sum() + m.var_axis(Axis(1), 1.0).sum();
        let mu = x.mean().unwrap();
        let normed = (x - mu) / (x.var(0.0) + 1e-5).sqrt() * gain;
        let mapped = x.map(|v| *v * v).sum() + m.map(|&v| v.sin()).sum();
        spread + columns + normed.mapv(f64::tanh).sum() + mapped
    }
}

#[test]
fn operators_broadcast_in_both_directions() {
    for n in SIZES {
        check_scalar!(broadcast; ref a da = random((n + 1, n), 1), ref b db = random(n, 2), val s ds = 0.7;);
        let x = random((n, 2), 3);
        check_scalar!(scalar_times_constant_array; val s ds = 0.7; &x);
    }
}

#[test]
fn dot_in_every_pairing() {
    for n in SIZES {
        let m = n + 2;
        check_scalar!(dot_pairings; ref m dm = random((m, n), 4), ref u du = random(m, 5), ref v dv = random(n, 6), ref n2 dn = random((n, 3), 7););
        let (x, v) = (random((m, n), 9), random(m, 10));
        check_scalar!(dot_constant_sides; ref w dw = random((n, m), 8); &x, &v);
    }
}

#[test]
fn reductions_and_views() {
    for n in SIZES {
        check_scalar!(reductions; ref x dx = random((n, n + 2), 11););
        check_scalar!(views; ref x dx = random((n + 1, n + 1), 12););
    }
}

/// A closure reads a constant and an active value that the body changes
/// after the `mapv`: its derivative, which runs in the reverse sweep, must
/// see the values the closure saw.
mod closure_reads_values_changed_later {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64, #[constant] c: f64) -> f64 {
        let mut k = 2.0;
        let mut m = s * 0.5;
        let y = x.mapv(|t| (t * k).sin() * m + k);
        k = c;
        m *= s;
        y.sum() * k + m
    }
}

/// The same in the branch an early `return` leaves, where the constants
/// are the branch's own.
mod closure_in_a_branch_reads_values_changed_later {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64, #[constant] c: f64) -> f64 {
        let mut k = c * 0.5;
        if c > 10.0 {
            return s;
        }
        let y = x.mapv(|t| (t * k).sin() + k * 0.5) * s;
        k = (k * 0.5 + k).tanh();
        y.sum() + k
    }
}

/// A closure that reads an element and a reduction of arrays of the body
/// (`y[0]`, `w.sum()`): computed once before the `mapv`, they are captured
/// scalars.
mod closure_reads_elements_and_sums {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, w: &Array1<f64>) -> f64 {
        let y = x.mapv(|v| v * w[0] + (w.sum() * v).sin());
        y.mapv(|v| v * y[y.len() - 1] + (w[1] * w[1]).ln_1p()).sum()
    }
}

#[test]
fn elementwise_and_mapv() {
    for n in SIZES {
        check_scalar!(elementwise_methods; ref x dx = random(n, 13).mapv(|v| v + 1.5););
        check_scalar!(mapv_closures; ref x dx = random(n, 14); 0.8);
        check_scalar!(closure_reads_values_changed_later; ref x dx = random(n, 15), val s ds = 0.6; 5.0);
        check_scalar!(closure_reads_elements_and_sums; ref x dx = random(n, 16), ref w dw = random(2, 17););
        check_scalar!(closure_in_a_branch_reads_values_changed_later; ref x dx = random(n, 18), val s ds = 0.6; 3.0);
    }
}

#[test]
fn constructors_and_array_functions_of_active_scalars() {
    for n in SIZES {
        check_scalar!(constructors; ref x dx = random(n, 25), val s ds = 0.7;);
        check_scalar!(array_with_active_scalar_argument; ref x dx = random(n, 26).mapv(|v| v + 1.5), val p dp = 1.7, val b db = 3.0;);
    }
}

#[test]
fn one_mode_only() {
    for n in SIZES {
        let x = random(n, 27);
        let (value, (g,)) = reverse_only::f_grad(&x);
        assert_eq!(value, reverse_only::f(&x));
        assert_eq!(g, x.mapv(f64::cos), "d/dx sum(sin x) = cos x");
        let (value, d) = forward_only::f_jvp(&x, &x);
        assert_eq!(value, forward_only::f(&x));
        assert!(support::check::close(
            d,
            (x.mapv(f64::cos) * &x).sum(),
            1e-12
        ));
    }
}

#[test]
fn element_reads_from_arrays_vecs_and_slices() {
    for n in SIZES {
        let v: Vec<f64> = random(n, 15).to_vec();
        let s: Vec<f64> = random(n + 1, 16).to_vec();
        let x = random(n, 17);
        let m = random((2, n), 18);
        let value = indexing::f(&x, &m, &v, &s);
        let (gvalue, (gx, gm, gv, gs)) = indexing::f_grad(&x, &m, &v, &s);
        assert_eq!(value, gvalue);
        // Hand-written reference: each read sends its partner's value back.
        let last = n - 1;
        let mut ex = Array1::zeros(n);
        ex[0] += x[last];
        ex[last] += x[0];
        let mut em = Array2::zeros((2, n));
        em[[0, n - 1]] += m[[0, 0]];
        em[[0, 0]] += m[[0, n - 1]];
        let mut ev = vec![0.0; n];
        ev[0] = s[n];
        let mut es = vec![0.0; n + 1];
        es[n] += v[0];
        es[0] += 1.0;
        assert_eq!((gx, gm, gv.clone(), gs.clone()), (ex, em, ev, es));
        let (_, jv) = indexing::f_jvp(&x, &m, &v, &s, &x, &m, &v, &s);
        // Slice tangents as `&[f64]` or as `&Vec<f64>`.
        let (_, from_slices) = indexing::f_jvp(&x, &m, &v, &s, &x, &m, &v[..], &s[..]);
        assert_eq!(from_slices, jv);
        let expected = support::Flat::flat_dot(
            &(x.clone(), m.clone(), v.clone(), s.clone()),
            &(
                indexing::f_grad(&x, &m, &v, &s).1 .0,
                indexing::f_grad(&x, &m, &v, &s).1 .1,
                gv,
                gs,
            ),
        );
        assert!(support::check::close(jv, expected, 1e-12));
    }
}

#[test]
fn loops_over_slice_elements() {
    for n in SIZES {
        let xs = random(n, 35).to_vec();
        let vs: Vec<Array1<f64>> = (0..3).map(|k| random(n, 36 + k)).collect();
        let (value, (gx, gv)) = iterated_slices::f_grad(&xs, &vs);
        assert_eq!(value, iterated_slices::f(&xs, &vs));
        let f = |p: &(Vec<f64>, Vec<Array1<f64>>)| iterated_slices::f(&p.0, &p.1);
        let g = support::Flat::to_flat(&(gx.clone(), gv.clone()));
        support::check::assert_gradient(f, &(xs.clone(), vs.clone()), &g);
        let (_, jv) = iterated_slices::f_jvp(&xs, &vs, &xs, &vs);
        let expected = support::Flat::flat_dot(&(gx, gv), &(xs.clone(), vs.clone()));
        assert!(
            support::check::close(jv, expected, 1e-9),
            "forward {jv} vs {expected}"
        );
    }
}

#[test]
fn owned_and_view_parameters() {
    for n in SIZES {
        let x = random(n, 19);
        let y = random(n, 20);
        let (value, (gx, gy)) = by_value_and_views::f_grad(x.clone(), y.view());
        assert_eq!(value, by_value_and_views::f(x.clone(), y.view()));
        let fx = |p: &(Array1<f64>, Array1<f64>)| by_value_and_views::f(p.0.clone(), p.1.view());
        support::check::assert_gradient(
            fx,
            &(x.clone(), y.clone()),
            &support::Flat::to_flat(&(gx.clone(), gy.clone())),
        );
        let (_, jv) = by_value_and_views::f_jvp(x.clone(), y.view(), y.clone(), x.clone());
        let expected = support::Flat::flat_dot(&(gx, gy), &(y.clone(), x.clone()));
        assert!(support::check::close(jv, expected, 1e-12));
        // A view's tangent may also be given as a view or a reference.
        let (_, as_view) = by_value_and_views::f_jvp(x.clone(), y.view(), y.clone(), x.view());
        let (_, as_ref) = by_value_and_views::f_jvp(x.clone(), y.view(), y.clone(), &x);
        assert_eq!((as_view, as_ref), (jv, jv));
    }
}

#[test]
fn array_results() {
    for n in SIZES {
        let x = random((n + 1, n), 23);
        check_array!(array_result; ref w dw = random((3, n), 21), ref b db = random(3, 22); &x);
    }
}

#[test]
fn single_precision_arrays() {
    for n in SIZES {
        let x: Array1<f32> = random(n, 24).mapv(|v| v as f32);
        let (value, (gx, gs)) = single_precision::f_grad(&x, 0.5);
        assert_eq!(value, single_precision::f(&x, 0.5));
        let expected: Array1<f32> = x.mapv(|v| v.exp() * 0.5 / n as f32);
        assert!(gx.iter().zip(&expected).all(|(a, b)| (a - b).abs() < 1e-6));
        assert!((gs - x.mapv(f32::exp).sum() / n as f32).abs() < 1e-5);
    }
}

/// Shapes destructured from a tuple: inactive values that read active
/// arrays, kept as written (found while writing the GradBench `gmm` eval).
mod shapes_destructured {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array2<f64>, w: &Array1<f64>) -> f64 {
        let (rows, cols) = (x.nrows(), x.ncols());
        let [first, last] = [0, w.len() - 1];
        x.sum() * (rows * cols) as f64 + w[first] * w[last]
    }
}

#[test]
fn shapes_destructured_from_tuples_and_arrays() {
    for n in SIZES {
        check_scalar!(shapes_destructured; ref x dx = random((n, 2), 1), ref w dw = random(n + 1, 2););
    }
}

/// Products whose natural cotangents are column-major: an outer product
/// (`w.dot(x)` and `x.dot(w)`) and a transposed operand.
mod column_major_cotangents {
    use super::*;
    #[differentiable]
    pub fn f(w: &Array2<f64>, x: &Array1<f64>, b: &Array2<f64>, c: &Array2<f64>) -> f64 {
        let h = w.dot(x).mapv(f64::tanh);
        let k = x.dot(&w.t());
        (h.dot(&k) + w.dot(&b.t()).sum() + c.t().dot(w).sum()) * 0.5
    }
}

#[test]
fn gradients_come_back_in_standard_layout() {
    let (w, x) = (random((2, 3), 40), random(3, 41));
    let (b, c) = (random((4, 3), 42), random((2, 5), 43));
    let (_, (gw, gx, gb, gc)) = column_major_cotangents::f_grad(&w, &x, &b, &c);
    let (_, pullback) = column_major_cotangents::f_vjp(&w, &x, &b, &c);
    let (pw, _, pb, pc) = pullback(1.0);
    for g in [&gw, &gb, &gc, &pw, &pb, &pc] {
        assert!(g.is_standard_layout(), "strides {:?}", g.strides());
        assert!(g.as_slice().is_some());
    }
    assert!(gx.is_standard_layout());
    check_scalar!(column_major_cotangents; ref w dw = w, ref x dx = x, ref b db = b, ref c dc = c;);
}

#[test]
fn statistics_written_out() {
    for n in [2, 5] {
        check_scalar!(statistics;
            ref x dx = random(n, 41), ref m dm = random((3, n), 42), ref gain dg = random(n, 43););
    }
    // The written-out variance is ndarray's.
    let x = random(7, 44);
    let (value, _) = statistics::f_grad(&x, &random((3, 7), 42), &random(7, 43));
    assert_eq!(
        value,
        statistics::f(&x, &random((3, 7), 42), &random(7, 43))
    );
    let (var, _) = variance::f_grad(&x);
    assert_eq!(var, variance::f(&x));
    assert!((var - x.var(1.0)).abs() < 1e-12, "{var} vs {}", x.var(1.0));
}

mod variance {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        x.var(1.0)
    }
}

#[test]
fn arrays_built_from_scalars() {
    for rows in [1, 3] {
        check_scalar!(arrays_of_scalars; val x dx = 0.7, val y dy = -0.4, ref w dw = random((rows, 4), 45););
    }
}

#[test]
fn arrays_built_from_rows() {
    for angle in [0.7, -2.1] {
        check_scalar!(arrays_of_rows; val angle da = angle, ref p dp = random(3, 47); 0.3);
    }
}

#[test]
fn arrays_zipped_and_collected() {
    for (n, rows) in [(1, 1), (4, 3)] {
        check_scalar!(zipped; ref a da = random(n, 50), ref b db = random(n, 51), ref m dm = random((rows, n), 55), val s ds = 0.6;);
    }
}

#[test]
fn lanes_mapped_along_an_axis() {
    for (rows, cols) in [(1, 1), (2, 3)] {
        check_scalar!(mapped_axes; ref x dx = random((rows, cols), 56), ref w dw = random(rows, 57););
    }
}

#[test]
fn arrays_filled_by_shape_fns() {
    for n in [1, 4] {
        check_scalar!(shape_fns; ref x dx = random(n, 46), val s ds = 0.6;);
    }
}

/// ndarray's in-place updates of an active local, which are assignments:
/// `mapv_inplace` (a path and a closure), `scaled_add` (with a reference,
/// a computed array, and a constant, whose product is emitted as written),
/// `mapv_into`, and `assign` (below, in a loop).
mod in_place_updates {
    use super::*;
    #[differentiable]
    pub fn f(w: &Array2<f64>, x: &Array1<f64>, a: f64, #[constant] c: &Array1<f64>) -> f64 {
        let mut h = w.dot(x);
        h.mapv_inplace(f64::tanh);
        h.mapv_inplace(|v| v * v + a);
        h.scaled_add(a, &w.column(0));
        h.scaled_add(2.0, &(w.column(1).to_owned() * a));
        #[allow(clippy::needless_borrow)] // the form under test
        h.scaled_add(0.5, &c);
        let g = h.mapv_into(|v| v.sin() * 2.0);
        // Updates of a constant that only look at active values' shapes
        // stay inactive code (seed 50 of the program generator found one
        // emitted as the value of a compound assignment).
        let mut shifted = c.to_owned();
        shifted.scaled_add(x.len() as f64, c);
        shifted.mapv_inplace(|v| v * w.nrows() as f64);
        g.sum() + shifted.sum() * a
    }
}

/// The same updates, `assign` and `fill`, in a loop: each carries the array to
/// the next iteration, as an assignment does. Before loops counted them as
/// assignments, the updates were lost and the gradient was wrong.
mod in_place_updates_in_a_loop {
    use super::*;
    #[differentiable]
    pub fn f(w: &Array2<f64>, x: &Array1<f64>, a: f64) -> f64 {
        let mut h = x.to_owned();
        let mut state = Array1::zeros(x.len());
        let mut total = 0.0;
        for _ in 0..3 {
            h.mapv_inplace(|t| (t * a).tanh());
            h.scaled_add(a, x);
            let next = (w.dot(&state) + &h).mapv(f64::tanh);
            state.assign(&next);
            total += state.sum();
            let mut level = state.clone();
            level.fill(state[0] * a);
            total += level.dot(&h);
        }
        h.fill(h.sum() * 0.5);
        total + h.sum()
    }
}

#[test]
fn in_place_updates_are_assignments() {
    let c = random(3, 59);
    check_scalar!(in_place_updates; ref w dw = random((3, 2), 60), ref x dx = random(2, 61), val a da = 0.7; &c);
    check_scalar!(in_place_updates_in_a_loop; ref w dw = random((3, 3), 62), ref x dx = random(3, 63), val a da = 0.8;);
}

/// A row or column assigned (`states.row_mut(t).assign(&h)`): a slice of
/// the matrix written. Back-propagation through time, with every hidden
/// state kept in a matrix.
mod lanes_assigned {
    use super::*;
    #[differentiable]
    pub fn f(
        w: &Array2<f64>,
        u: &Array2<f64>,
        v: &Array1<f64>,
        #[constant] xs: &Array2<f64>,
    ) -> f64 {
        let (n, steps) = (w.nrows(), xs.nrows());
        let mut states = Array2::zeros((steps, n));
        let mut h = Array1::zeros(n);
        for t in 0..steps {
            h = (w.dot(&h) + u.dot(&xs.row(t))).mapv(f64::tanh);
            states.row_mut(t).assign(&h);
        }
        let mut loss = 0.0;
        for row in states.rows() {
            loss += (row.dot(v) - 0.5).powi(2);
        }
        let mut last = Array2::zeros((n, 2));
        last.column_mut(1).assign(&(&h * 2.0));
        loss + last.sum()
    }
}

#[test]
#[should_panic(
    expected = "`assign` into a part of an array of active values (`slice_mut`, `row_mut`, `column_mut`) takes a value of the part's shape"
)]
fn assigning_a_row_of_another_length_panics() {
    let _ = row_of_three::f_grad(&random(2, 71));
}

mod row_of_three {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut m = Array2::zeros((2, 3));
        m.row_mut(0).assign(&(x * 2.0));
        m.sum()
    }
}

#[test]
fn a_row_of_the_right_length_is_assigned() {
    check_scalar!(row_of_three; ref x dx = random(3, 72););
}

/// A view of a constant local that the body assigns (its rows, element by
/// element), read by the pullback: kept as an owned copy, which `f_vjp`'s
/// closure may hold. Seed 51 of the program generator found a clone of the
/// view kept, borrowing the local beyond the function.
mod view_of_an_assigned_local {
    use super::*;
    #[differentiable]
    pub fn f(b: &Array1<f64>, #[constant] c: &Array1<f64>) -> f64 {
        let mut m = Array2::<f64>::zeros((2, b.len()));
        for i in 0..2 {
            m.row_mut(i).assign(&(c * (1.5 + i as f64)));
        }
        m[[0, 0]] = 2.0;
        m.row(1).dot(b) + m.row(0).dot(&b.mapv(f64::sin))
    }
}

#[test]
fn rows_and_columns_assigned() {
    let c = random(3, 69);
    check_scalar!(view_of_an_assigned_local; ref b db = random(3, 70); &c);
    for steps in [1, 4] {
        let xs = random((steps, 2), 65);
        check_scalar!(lanes_assigned; ref w dw = random((3, 3), 66) * 0.5, ref u du = random((3, 2), 67), ref v dv = random(3, 68); &xs);
    }
}

/// Parts of arrays assigned, `y.slice_mut(s![..]).assign(&v)`: blocks of a
/// matrix, pieces of a vector in a loop (each instance of a bag encoded
/// into its own slots), and a constant written over active values, which
/// clears their derivative.
mod slices_assigned {
    use super::*;
    use ad::ndarray::s;
    #[differentiable]
    pub fn f(m: &Array2<f64>, v: &Array1<f64>, #[constant] c: &Array1<f64>) -> f64 {
        let (n, k) = m.dim();
        let mut out = m.clone();
        out.slice_mut(s![1.., ..])
            .assign(&m.slice(s![..n - 1, ..]).mapv(f64::exp));
        let mut encoded = Array1::zeros(n * k);
        for i in 0..n {
            encoded
                .slice_mut(s![i * k..(i + 1) * k])
                .assign(&(&out.row(i) * v[i]));
        }
        encoded.slice_mut(s![..k]).assign(&c.slice(s![..k]));
        let mut pieces = v.to_owned();
        pieces
            .slice_mut(s![1..])
            .assign(&v.slice(s![..n - 1]).mapv(f64::sin));
        encoded.mapv(f64::tanh).sum() + pieces.dot(&pieces) + out.sum()
    }
}

#[test]
fn slices_assigned_in_both_modes() {
    for n in [2, 4] {
        let c = random(n * 3, 73);
        check_scalar!(slices_assigned; ref m dm = random((n, 3), 74), ref v dv = random(n, 75); &c);
    }
}

/// `assign` is differentiated between arrays of one shape; a value it
/// would broadcast is refused when the shapes differ.
mod broadcast_assign {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array2<f64>) -> f64 {
        let mut m = Array2::zeros((2, x.ncols()));
        m.assign(&(x * 2.0));
        m.sum()
    }
}

#[test]
#[should_panic(
    expected = "`assign` of an active value is differentiated between arrays of one shape"
)]
fn assigning_a_value_to_broadcast_panics() {
    let x = random((1, 3), 64);
    // The function itself broadcasts, as ndarray's `assign` does.
    assert!((broadcast_assign::f(&x) - 4.0 * x.sum()).abs() < 1e-12);
    broadcast_assign::f_grad(&x);
}

/// A matrix's diagonal: of a parameter, of a computed matrix (a log
/// determinant's shape, `sum(ln(diag))`), and of a local one written
/// element by element.
mod diagonal {
    use super::*;
    #[differentiable]
    pub fn f(m: &Array2<f64>, x: &Array1<f64>, l: f64) -> f64 {
        let gram = m.dot(&m.t());
        let n = x.len();
        let mut kernel = Array2::<f64>::zeros((n, n));
        for i in 0..n {
            for j in 0..n {
                kernel[[i, j]] = (-(x[i] - x[j]).powi(2) / (2.0 * l * l)).exp();
            }
        }
        gram.diag().mapv(f64::ln).sum() + m.diag().dot(x) + kernel.diag().sum() * kernel.sum()
    }
}

#[test]
fn diagonals() {
    check_scalar!(diagonal; ref m dm = random((3, 3), 62), ref x dx = random(3, 63), val l dl = 0.8;);
}

/// Arrays joined along an axis: `concatenate` and `stack` as functions
/// (with a constant part, a view of a temporary) and as macros, along
/// either axis.
mod joined {
    use super::*;
    use ad::ndarray::{concatenate, stack};
    #[differentiable]
    pub fn f(
        x: &Array1<f64>,
        y: &Array1<f64>,
        m: &Array2<f64>,
        #[constant] c: &Array1<f64>,
    ) -> f64 {
        let z = concatenate(Axis(0), &[x.view(), y.view(), (c * 2.0).view()]).unwrap();
        let h = (&z * 2.0).mapv(f64::tanh);
        let s = stack(Axis(0), &[x.view(), y.view()]).expect("same lengths");
        let rows = ad::ndarray::concatenate![Axis(0), m.view(), s.view()];
        let columns = ad::ndarray::stack![Axis(1), x.view(), c.view()];
        let wide = concatenate(Axis(1), &[m.t(), s.t()]).unwrap();
        h.dot(&z) + rows.mapv(|v| v * v).sum() + columns.sum_axis(Axis(0)).dot(c) + wide.sum().sin()
    }
}

#[test]
fn arrays_joined_along_an_axis() {
    let c = random(2, 64);
    check_scalar!(joined; ref x dx = random(2, 65), ref y dy = random(2, 66), ref m dm = random((3, 2), 67); &c);
}

/// A fixed-size array of active values (`[a, b, c]`), differentiated as the
/// 1-D array `array![a, b, c]`: indexed, iterated, reduced by a chain. It
/// was rejected before.
mod fixed_size_arrays {
    use super::*;
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let c = [x[0].exp(), x[1] * s, 2.0, s];
        let total: f64 = c.iter().sum();
        let mut acc = c[0] * c[3];
        for v in c.iter() {
            acc += (v / total).powi(2);
        }
        acc + c.len() as f64 * s
    }
}

#[test]
fn fixed_size_arrays_of_active_values() {
    check_scalar!(fixed_size_arrays; ref x dx = random(3, 68), val s ds = 0.7;);
}
