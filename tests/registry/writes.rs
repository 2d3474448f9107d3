//! Arrays built element by element or part by part: writes into arrays
//! created inactive (`zeros`) that become active, compound element writes,
//! writes into copies of active arrays, and slices assigned.

use ad::differentiable;
use ad::ndarray::{s, Array1, Array2};

use super::dual::{Dual64, DualNum};
use super::{random, Scenario};

scenario! {
    scalar outer_product_by_elements in ElementWrites, sizes [1, 4, 12];
    #[differentiable]
    pub fn f(x: &Array1<f64>, y: &Array1<f64>) -> f64 {
        let mut g = Array2::zeros((x.len(), y.len()));
        for i in 0..x.len() {
            for j in 0..y.len() {
                g[[i, j]] = x[i] * y[j].sin();
            }
        }
        (&g * &g).sum()
    }
    inputs(n) { ref x dx = random(n, 71), ref y dy = random(n + 1, 72) }
    hand {
        let s = y.mapv(f64::sin);
        let (xx, ss) = (x.dot(x), s.dot(&s));
        (x * (2.0 * ss), y.mapv(f64::cos) * &s * (2.0 * xx))
    }
    dual {
        let mut total = Dual64::from(0.0);
        for i in 0..x.len() {
            for j in 0..y.len() {
                let g = x[i] * y[j].sin();
                total += g * g;
            }
        }
        total
    }
}

scenario! {
    scalar scatter_with_compound_writes in ElementWrites, sizes [1, 5, 30];
    #[differentiable]
    pub fn f(x: &Array1<f64>, s: f64) -> f64 {
        let mut v = Array1::zeros(4);
        for i in 0..x.len() {
            v[i % 4] += x[i] * s;
            v[(i + 1) % 4] -= x[i].exp();
            v[(i + 2) % 4] *= 0.9;
        }
        v[0] /= 1.0 + s * s;
        v.dot(&v)
    }
    inputs(n) { ref x dx = random(n, 73), val s ds = 0.6 }
    dual {
        let mut v = [Dual64::from(0.0); 4];
        for i in 0..x.len() {
            v[i % 4] += x[i] * *s;
            v[(i + 1) % 4] -= x[i].exp();
            v[(i + 2) % 4] *= 0.9;
        }
        v[0] /= *s * *s + 1.0;
        v.iter().map(|&e| e * e).sum::<Dual64>()
    }
}

scenario! {
    scalar overwrite_a_copy in ElementWrites, sizes [2, 8];
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut y = x.to_owned();
        let first = y[0];
        y[0] = first * 3.0;
        y[1] = 2.0;
        for i in 2..y.len() {
            y[i] = y[i] * y[i - 1] + first;
        }
        y.sum() * first
    }
    inputs(n) { ref x dx = random(n, 74) }
}

scenario! {
    array running_sums in ElementWrites, sizes [1, 6];
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> Array1<f64> {
        let mut v = Array1::zeros(x.len());
        v[0] = x[0];
        for i in 1..x.len() {
            v[i] = v[i - 1] * 0.5 + x[i].sin();
        }
        v
    }
    inputs(n) { ref x dx = random(n, 75) }
}

scenario! {
    scalar parts_assigned in ElementWrites, sizes [1, 4, 12];
    /// A feature vector assembled from parts (`slice_mut(..).assign(..)`),
    /// as a model of a bag of instances concatenates its encodings.
    #[differentiable]
    pub fn f(w: &Array2<f64>, x: &Array1<f64>) -> f64 {
        let n = w.nrows();
        let h = w.dot(x).mapv(f64::tanh);
        let mut features = Array1::zeros(2 * n);
        features.slice_mut(s![..n]).assign(&h);
        features.slice_mut(s![n..]).assign(&(&h * &h));
        features.mapv(f64::sin).sum()
    }
    inputs(n) { ref w dw = random((n, n + 1), 76), ref x dx = random(n + 1, 77) }
    hand {
        // f = sum(sin(h) + sin(h^2)), h = tanh(w x)
        let h = w.dot(x).mapv(f64::tanh);
        let dh = h.mapv(|v| v.cos() + 2.0 * v * (v * v).cos());
        let dz = &dh * &h.mapv(|v| 1.0 - v * v);
        let dw = dz.view().insert_axis(ad::ndarray::Axis(1)).dot(&x.view().insert_axis(ad::ndarray::Axis(0)));
        (dw, w.t().dot(&dz))
    }
    dual {
        let mut total = Dual64::from(0.0);
        for i in 0..w.nrows() {
            let mut z = Dual64::from(0.0);
            for j in 0..x.len() {
                z += w[[i, j]] * x[j];
            }
            let h = z.tanh();
            total += h.sin() + (h * h).sin();
        }
        total
    }
}

scenario! {
    array shifted_products in ElementWrites, sizes [1, 5];
    /// A copy written element by element from other arrays' elements, as
    /// GradBench's `ode` right-hand side: its reverse loop carries the
    /// copy's adjoint as a value.
    #[differentiable]
    pub fn f(x: &Array1<f64>, y: &Array1<f64>) -> Array1<f64> {
        let mut z = x.to_owned();
        for i in 1..x.len() {
            z[i] = x[i] * y[i - 1];
        }
        z
    }
    inputs(n) { ref x dx = random(n, 78), ref y dy = random(n, 79) }
}

scenario! {
    scalar several_writes_per_iteration in ElementWrites, sizes [1, 4, 12];
    /// Three writes of one array per iteration (`=`, `+=`, `-=`), its
    /// elements read between them, in a branch and by an inner loop, and
    /// only some of them read after the loop.
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let n = x.len();
        let mut v = x.mapv(f64::sin);
        for i in 1..n {
            v[i] = v[i] * v[i - 1] + x[i];
            let mut bonus = 0.5;
            if i % 3 == 0 {
                bonus = v[i].cos();
            }
            v[i - 1] += bonus * x[i - 1];
            let mut s = 0.0;
            for j in 0..i {
                s += v[j] * 0.25;
            }
            v[i] -= s.tanh();
        }
        let mut total = 0.0;
        for i in 0..n / 2 + 1 {
            total += v[i] * v[i];
        }
        total
    }
    inputs(n) { ref x dx = random(n, 80) }
}

scenario! {
    scalar elements_read_before_a_write in ElementWrites, sizes [1, 4, 12];
    /// Elements read in a branch, of an array version the code then
    /// writes in place: outside any loop, and in a loop where a branch
    /// both reads and writes the carried array. The reverse sweep keeps
    /// the elements read, not the versions.
    #[differentiable]
    pub fn f(x: &Array1<f64>, w: f64) -> f64 {
        let n = x.len();
        let mut v = x.mapv(f64::tanh);
        let mut b = w;
        if w > 0.0 {
            b = v[0] * w + v[n - 1];
        }
        v[0] = b * b;
        let mut acc = 0.0;
        for i in 0..n {
            if x[i] > 0.0 {
                acc += v[i] * v[n - 1 - i];
                v[i] = acc.sin();
            } else {
                v[n - 1 - i] *= 0.5 + v[i];
            }
        }
        acc + (&v * &v).sum()
    }
    inputs(n) { ref x dx = random(n, 81), val w dw = 0.7 }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        outer_product_by_elements::scenario(),
        scatter_with_compound_writes::scenario(),
        overwrite_a_copy::scenario(),
        running_sums::scenario(),
        parts_assigned::scenario(),
        shifted_products::scenario(),
        several_writes_per_iteration::scenario(),
        elements_read_before_a_write::scenario(),
    ]
}
