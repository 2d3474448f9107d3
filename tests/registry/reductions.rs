//! Reductions, views and slices.

use ad::differentiable;
use ad::ndarray::{s, Array1, Array2, Axis};

use super::dual::{Dual64, DualNum};
use super::models::logsumexp_by_hand;
use super::{random, Scenario};

scenario! {
    scalar sum_and_mean in Reductions, sizes [1, 5, 20];
    #[differentiable]
    pub fn f(x: &Array2<f64>) -> f64 {
        x.sum() * x.mean().unwrap() + x.sum_axis(Axis(0)).mapv(f64::sin).sum()
            + x.mean_axis(Axis(1)).unwrap().mapv(|v| v * v).sum()
    }
    inputs(n) { ref x dx = random((n, n + 2), 11) }
    dual {
        let total = x.sum();
        let mean = total / x.len() as f64;
        let columns: Dual64 = (0..x.ncols()).map(|j| x.column(j).sum().sin()).sum();
        let rows: Dual64 = (0..x.nrows())
            .map(|i| {
                let m = x.row(i).sum() / x.ncols() as f64;
                m * m
            })
            .sum();
        total * mean + columns + rows
    }
}

scenario! {
    scalar rows_columns_and_slices in Reductions, sizes [2, 6];
    #[differentiable]
    pub fn f(x: &Array2<f64>) -> f64 {
        let r = x.row(0);
        let c = x.column(1);
        let corner = x.slice(s![..2, 1..]);
        let t = x.t();
        r.dot(&r) + c.sum() * 2.0 + corner.mapv(f64::exp).sum() + t.row(1).sum() + x.view().sum()
    }
    inputs(n) { ref x dx = random((n, n + 1), 12) }
}

scenario! {
    scalar indexing_arrays_vecs_slices in Reductions, sizes [2, 5];
    #[differentiable]
    pub fn f(x: &Array1<f64>, m: &Array2<f64>, v: &Vec<f64>, s: &[f64]) -> f64 {
        let n = x.len();
        x[0] * m[[1, 0]] + x[n - 1] * v[1] + s[0] * s[n - 1] + m[[0, 1]].sin() * v[0]
    }
    inputs(n) {
        ref x dx = random(n, 13),
        ref m dm = random((n, n), 14),
        ref v dv = random(n, 15).to_vec(),
        ref s ds = random(n, 16).to_vec()
    }
}

scenario! {
    scalar logsumexp in Reductions, sizes [1, 10, 100];
    pub use super::super::models::{
        logsumexp as f, logsumexp_grad as f_grad, logsumexp_jvp as f_jvp, logsumexp_vjp as f_vjp,
    };
    inputs(n) { ref x dx = random(n, 17) * 3.0 }
    hand { (logsumexp_by_hand(x).1,) }
    dual {
        let m = x.iter().map(|v| v.re).fold(f64::NEG_INFINITY, f64::max);
        x.iter().map(|&v| (v - m).exp()).sum::<Dual64>().ln() + m
    }
}

scenario! {
    array reshaped_and_reversed in Reductions, sizes [2, 3];
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> Array2<f64> {
        let n = x.len();
        let m = x.to_owned().into_shape_with_order((2, n / 2)).unwrap();
        m.reversed_axes().mapv(|v| v * v) + x.slice(s![..n / 2]).insert_axis(Axis(1))
    }
    inputs(n) { ref x dx = random(2 * n, 18) }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        sum_and_mean::scenario(),
        rows_columns_and_slices::scenario(),
        indexing_arrays_vecs_slices::scenario(),
        logsumexp::scenario(),
        reshaped_and_reversed::scenario(),
    ]
}
