//! Scalar elementary functions, as methods and as `f64::name` paths. The
//! size picks the input point.

use ad::differentiable;

use super::dual::{abs, Dual64, DualNum};
use super::Scenario;

/// A point in (0.2, 0.8) that moves with the size.
fn point(n: usize, k: f64) -> f64 {
    0.2 + 0.6 * ((n as f64 * k).sin() * 0.5 + 0.5)
}

scenario! {
    scalar trigonometric in Scalar, sizes [1, 2];
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        x.sin() * y.cos() + f64::tan(x) - x.asin() + y.acos() * x.atan()
    }
    inputs(n) { val x dx = point(n, 1.3), val y dy = point(n, 2.1) }
    hand {
        let (x, y) = (*x, *y);
        let dx = x.cos() * y.cos() + 1.0 / (x.cos() * x.cos()) - 1.0 / (1.0 - x * x).sqrt()
            + y.acos() / (1.0 + x * x);
        let dy = -x.sin() * y.sin() - x.atan() / (1.0 - y * y).sqrt();
        (dx, dy)
    }
    dual {
        let (x, y) = (*x, *y);
        x.sin() * y.cos() + x.tan() - x.asin() + y.acos() * x.atan()
    }
}

scenario! {
    scalar exponentials_and_logarithms in Scalar, sizes [1, 2];
    #[differentiable]
    pub fn f(x: f64) -> f64 {
        x.exp() + f64::exp2(x) + x.exp_m1() * 2.0 + x.ln() + f64::ln_1p(x) + x.log2() - x.log10()
    }
    inputs(n) { val x dx = point(n, 0.7) }
    hand {
        let x = *x;
        x.exp() + x.exp2() * 2f64.ln() + 2.0 * x.exp() + 1.0 / x + 1.0 / (1.0 + x)
            + 1.0 / (x * 2f64.ln()) - 1.0 / (x * 10f64.ln())
    }
    dual {
        let x = *x;
        x.exp() + x.exp2() + x.exp_m1() * 2.0 + x.ln() + x.ln_1p() + x.log2() - x.log10()
    }
}

scenario! {
    scalar hyperbolic in Scalar, sizes [1, 2];
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        x.sinh() * y.cosh() + f64::tanh(x * y) + x.asinh() + (y + 1.0).acosh() + x.atanh()
    }
    inputs(n) { val x dx = point(n, 1.1), val y dy = point(n, 0.3) }
    hand {
        let (x, y) = (*x, *y);
        let sech2 = 1.0 - (x * y).tanh().powi(2);
        let dx = x.cosh() * y.cosh() + sech2 * y + 1.0 / (x * x + 1.0).sqrt() + 1.0 / (1.0 - x * x);
        let dy = x.sinh() * y.sinh() + sech2 * x + 1.0 / ((y + 1.0).powi(2) - 1.0).sqrt();
        (dx, dy)
    }
    dual {
        let (x, y) = (*x, *y);
        x.sinh() * y.cosh() + (x * y).tanh() + x.asinh() + (y + 1.0).acosh() + x.atanh()
    }
}

scenario! {
    scalar powers_and_roots in Scalar, sizes [1, 2];
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        x.powi(3) + x.powf(y) + f64::sqrt(x) + x.cbrt() + y.recip() + x.hypot(y) + x.mul_add(y, 1.0)
    }
    inputs(n) { val x dx = point(n, 0.9), val y dy = point(n, 1.7) }
    hand {
        let (x, y) = (*x, *y);
        let r = x.hypot(y);
        let dx = 3.0 * x * x + y * x.powf(y - 1.0) + 0.5 / x.sqrt() + x.cbrt() / (3.0 * x) + x / r + y;
        let dy = x.powf(y) * x.ln() - 1.0 / (y * y) + y / r + x;
        (dx, dy)
    }
    dual {
        let (x, y) = (*x, *y);
        x.powi(3) + x.powd(y) + x.sqrt() + x.cbrt() + y.recip() + (x * x + y * y).sqrt()
            + x.mul_add(y, Dual64::from(1.0))
    }
}

scenario! {
    scalar two_argument_functions in Scalar, sizes [1, 2];
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        x.atan2(y) + f64::max(x, 2.0 * y) - x.min(y - 1.0) + x.log(y + 2.0) + (x - 1.0).abs()
    }
    inputs(n) { val x dx = point(n, 0.4), val y dy = point(n, 2.9) }
    hand {
        let (x, y) = (*x, *y);
        let r2 = x * x + y * y;
        let (mx, my) = if x > 2.0 * y { (1.0, 0.0) } else { (0.0, 2.0) };
        let (nx, ny) = if x < y - 1.0 { (1.0, 0.0) } else { (0.0, 1.0) };
        let b = (y + 2.0).ln();
        let dx = y / r2 + mx - nx + 1.0 / (x * b) - 1.0;
        let dy = -x / r2 + my - ny - x.ln() / (b * b * (y + 2.0));
        (dx, dy)
    }
    dual {
        let (x, y) = (*x, *y);
        let larger = if x.re > 2.0 * y.re { x } else { y * 2.0 };
        let smaller = if x.re < y.re - 1.0 { x } else { y - 1.0 };
        x.atan2(y) + larger - smaller + x.ln() / (y + 2.0).ln() + abs(x - 1.0)
    }
}

scenario! {
    scalar arithmetic_operators in Scalar, sizes [1, 2];
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        let a = x * y + x / y - (x - y);
        -a * 3.0 + 1.0 / x - 2.0 - y + (x as f64)
    }
    inputs(n) { val x dx = point(n, 0.5), val y dy = point(n, 1.9) }
    hand {
        let (x, y) = (*x, *y);
        (-3.0 * (y + 1.0 / y - 1.0) - 1.0 / (x * x) + 1.0, -3.0 * (x - x / (y * y) + 1.0) - 1.0)
    }
    dual {
        let (x, y) = (*x, *y);
        let a = x * y + x / y - (x - y);
        -a * 3.0 + x.recip() - 2.0 - y + x
    }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        trigonometric::scenario(),
        exponentials_and_logarithms::scenario(),
        hyperbolic::scenario(),
        powers_and_roots::scenario(),
        two_argument_functions::scenario(),
        arithmetic_operators::scenario(),
    ]
}
