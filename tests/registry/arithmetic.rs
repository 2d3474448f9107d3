//! Operators between scalars and arrays, broadcasting both ways, compound
//! assignment and element-wise methods.

use ad::differentiable;
use ad::ndarray::{Array1, Array2, Axis};

use super::dual::Dual64;
use super::{random, Scenario};

scenario! {
    scalar broadcast_row_over_matrix in Arithmetic, sizes [1, 3, 8];
    #[differentiable]
    pub fn f(a: &Array2<f64>, b: &Array1<f64>, s: f64) -> f64 {
        let c = a * b + b - s * a;
        let d = &c / (b * b + 1.0);
        (&d * &d).sum()
    }
    inputs(n) { ref a da = random((n + 1, n), 1), ref b db = random(n, 2), val s ds = 0.7 }
}

scenario! {
    scalar broadcast_column_against_row in Arithmetic, sizes [1, 4, 9];
    #[differentiable]
    pub fn f(col: &Array2<f64>, row: &Array2<f64>) -> f64 {
        let outer = col * row - row;
        (&outer * &outer).sum() + (col + row).sum()
    }
    inputs(n) { ref col dcol = random((n, 1), 3), ref row drow = random((1, n + 2), 4) }
}

scenario! {
    scalar scalar_times_array in Arithmetic, sizes [2, 7];
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64, t: f64) -> f64 {
        let y = s * x - x / t + 2.0 * x + t;
        (&y * &y).sum() * s
    }
    inputs(n) { ref x dx = random(n, 5), val s ds = 0.6, val t dt = 1.4 }
    hand {
        let y = *s * x - x / *t + 2.0 * x + *t;
        let q = y.dot(&y);
        let dy = &y * (2.0 * *s);
        let dx = &dy * (*s - 1.0 / *t + 2.0);
        let ds = q + dy.dot(x);
        let dt = dy.dot(&(x / (*t * *t))) + dy.sum();
        (dx, ds, dt)
    }
    dual {
        let (s, t) = (*s, *t);
        let y = x.mapv(|v| s * v - v / t + v * 2.0 + t);
        y.iter().map(|&v| v * v).sum::<Dual64>() * s
    }
}

scenario! {
    scalar compound_assignment in Arithmetic, sizes [1, 5];
    #[differentiable]
    pub fn f(x: &Array1<f64>, y: &Array1<f64>, s: f64) -> f64 {
        let mut z = x.to_owned();
        z += y;
        z *= s;
        z -= &(x * y);
        z /= 2.0;
        let mut total = z.sum();
        total *= s;
        total += s;
        total
    }
    inputs(n) { ref x dx = random(n, 6), ref y dy = random(n, 7), val s ds = 0.8 }
    hand {
        let z = ((x + y) * *s - x * y) / 2.0;
        let dz = *s / 2.0;
        let dx = (y * (-1.0) + *s) * dz;
        let dy = (x * (-1.0) + *s) * dz;
        let ds = z.sum() + *s * (x + y).sum() / 2.0 + 1.0;
        (dx, dy, ds)
    }
    dual {
        let s = *s;
        let z: Dual64 = x.iter().zip(y.iter()).map(|(&a, &b)| ((a + b) * s - a * b) / 2.0).sum();
        z * s + s
    }
}

scenario! {
    scalar elementwise_methods in Arithmetic, sizes [1, 6];
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let p = x * x + 1.0;
        (x.exp() + p.ln() + p.sqrt() + x.sin() * x.cos() + p.powi(2) + x.abs()).sum()
    }
    inputs(n) { ref x dx = random(n, 8) + 0.01 }
}

scenario! {
    array affine_map in Arithmetic, sizes [1, 4];
    #[differentiable]
    pub fn f(a: &Array2<f64>, b: &Array1<f64>) -> Array2<f64> {
        (a * 2.0 - b).mapv(f64::sin) + a.sum_axis(Axis(1)).insert_axis(Axis(1))
    }
    inputs(n) { ref a da = random((n, n + 1), 9), ref b db = random(n + 1, 10) }
}

// Sums of constant multiples (`a + u * c`), whose cotangent reaches `u`
// in one pass (`rules::add_scaled_pullback_rhs`): on either side of `+`
// and `-`, by `*` and `/`, with `c * u` too, as `u`'s first contribution
// and as a later one, in straight-line code and in a loop. A factor that
// is an array, and a sum that broadcasts, take the rules one after the
// other.
scenario! {
    scalar sums_of_constant_multiples in Arithmetic, sizes [1, 4, 9];
    #[differentiable]
    pub fn f(x: &Array1<f64>, m: &Array2<f64>, #[constant] c: f64, #[constant] w: &Array1<f64>) -> f64 {
        let y = x + &(x.mapv(f64::sin) * c);
        let z = &(&y / c) - &x.mapv(f64::cos);
        let v = &z - &(&y * c);
        let b = m + &(&v * c) + &(0.5 * x);
        let e = &v + &(&y * w);
        let mut s = x.to_owned();
        for _ in 0..3 {
            s = &s + &(&e * (c / 2.0));
            s = &(&s * 0.5) - &z;
        }
        b.sum() * 0.1 + (&s * &s).sum() + e.dot(&e)
    }
    inputs(n) { ref x dx = random(n, 41), ref m dm = random((2, n), 42) }
    constants { val c = 0.7, ref w = random(n, 43) }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        broadcast_row_over_matrix::scenario(),
        broadcast_column_against_row::scenario(),
        scalar_times_array::scenario(),
        compound_assignment::scenario(),
        elementwise_methods::scenario(),
        affine_map::scenario(),
        sums_of_constant_multiples::scenario(),
    ]
}
