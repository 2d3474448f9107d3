//! `mapv` with paths and with closures whose scalar bodies the macro
//! differentiates.

use ad::differentiable;
use ad::ndarray::{Array1, Array2};

use super::dual::{Dual64, DualNum};
use super::{random, Scenario};

scenario! {
    scalar mapv_path in Closures, sizes [1, 10, 100];
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        x.mapv(f64::tanh).mapv(f64::exp).sum()
    }
    inputs(n) { ref x dx = random(n, 41) }
    hand {
        (x.mapv(|v| v.tanh().exp() * (1.0 - v.tanh().powi(2))),)
    }
    dual {
        x.mapv(|v| v.tanh().exp()).sum()
    }
}

scenario! {
    scalar mapv_closure_with_constant in Closures, sizes [1, 10, 100];
    #[differentiable]
    pub fn f(x: &Array1<f64>, #[constant] k: f64) -> f64 {
        x.mapv(|v| {
            let s = v.sin();
            s * s * k + v.max(0.0) - (v * k).exp()
        })
        .sum()
    }
    inputs(n) { ref x dx = random(n, 42) }
    constants { val k = 1.5 }
    hand {
        (x.mapv(|v| 2.0 * v.sin() * v.cos() * k + if v > 0.0 { 1.0 } else { 0.0 } - k * (v * k).exp()),)
    }
    dual {
        x.iter()
            .map(|&v| {
                let s = v.sin();
                s * s * *k + if v.re > 0.0 { v } else { v * 0.0 } - (v * *k).exp()
            })
            .sum::<Dual64>()
    }
}

scenario! {
    scalar mapv_closure_capturing_active_values in Closures, sizes [2, 10, 100];
    /// Standardisation: the closures read the mean and the deviation, both
    /// functions of `x`, and a temperature.
    #[differentiable]
    pub fn f(x: &Array1<f64>, t: f64) -> f64 {
        let mu = x.mean().unwrap();
        let sd = x.mapv(|v| (v - mu).powi(2)).mean().unwrap().sqrt();
        x.mapv(|v| ((v - mu) / (sd * t)).tanh()).sum()
    }
    inputs(n) { ref x dx = random(n, 44), val t dt = 1.7 }
}

scenario! {
    array mapv_array_result in Closures, sizes [2, 6];
    #[differentiable]
    pub fn f(x: &Array2<f64>) -> Array2<f64> {
        x.mapv(|v| v * v.cos() + 1.0 / (1.0 + v * v))
    }
    inputs(n) { ref x dx = random((n, n), 43) }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        mapv_path::scenario(),
        mapv_closure_with_constant::scenario(),
        mapv_closure_capturing_active_values::scenario(),
        mapv_array_result::scenario(),
    ]
}
