//! Branches and `match` on inactive conditions (comparisons of active
//! values among them), branches that assign outer variables, early return,
//! an `Option` local tested by `match`.

use ad::differentiable;
use ad::ndarray::Array1;

use super::dual::{Dual64, DualNum};
use super::{random, Scenario};

scenario! {
    scalar if_else_chain in ControlFlow, sizes [1, 2, 3];
    #[differentiable]
    pub fn f(x: f64, y: f64, #[constant] k: i32) -> f64 {
        let z = if k == 1 {
            x * y
        } else if k == 2 {
            x.exp() - y
        } else {
            (x + y).sin()
        };
        z * x
    }
    inputs(n) { val x dx = 0.3 + 0.1 * n as f64, val y dy = 0.9 }
    constants { val k = n as i32 }
    hand {
        let (x, y) = (*x, *y);
        match *k {
            1 => (2.0 * x * y, x * x),
            2 => (x.exp() * x + x.exp() - y, -x),
            _ => ((x + y).sin() + x * (x + y).cos(), x * (x + y).cos()),
        }
    }
    dual {
        let (x, y) = (*x, *y);
        let z = match *k {
            1 => x * y,
            2 => x.exp() - y,
            _ => (x + y).sin(),
        };
        z * x
    }
}

scenario! {
    scalar branch_on_active_comparison in ControlFlow, sizes [1, 2];
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut acc = 0.0;
        for i in 0..x.len() {
            if x[i] > 0.0 {
                acc = acc + x[i] * x[i];
            } else {
                acc = acc - x[i].sin();
            }
        }
        acc
    }
    inputs(n) { ref x dx = random(4 * n, 51) }
    hand {
        (x.mapv(|v| if v > 0.0 { 2.0 * v } else { -v.cos() }),)
    }
    dual {
        x.iter().map(|&v| if v.re > 0.0 { v * v } else { -v.sin() }).sum::<Dual64>()
    }
}

scenario! {
    scalar match_on_constant in ControlFlow, sizes [1, 4];
    #[differentiable]
    pub fn f(x: f64, y: f64, #[constant] mode: usize) -> f64 {
        let mut r = x;
        match mode % 3 {
            0 => r = r * y,
            1 => {
                r = r + y;
                r = r * r;
            }
            _ => r = r.tanh(),
        }
        let s = match mode {
            0 | 1 => r.exp(),
            _ => r * 2.0,
        };
        s + y
    }
    inputs(n) { val x dx = 0.4, val y dy = 0.1 * n as f64 }
    constants { val mode = n }
}

scenario! {
    scalar outer_variables_assigned_in_branches in ControlFlow, sizes [1, 2];
    #[differentiable]
    pub fn f(x: f64, y: f64, #[constant] flip: bool) -> f64 {
        let mut a = x;
        let mut b = y * x;
        if flip {
            a = a * b;
            b = b.sin() + a;
        } else {
            b = b * b;
            a = a.cos() * b;
        }
        a * b + a
    }
    inputs(n) { val x dx = 0.7, val y dy = 0.2 * n as f64 }
    constants { val flip = n.is_multiple_of(2) }
}

scenario! {
    scalar early_returns in ControlFlow, sizes [1, 2, 3];
    #[differentiable]
    pub fn f(x: f64, y: f64) -> f64 {
        let z = x * y;
        if z > 1.0 {
            return z.ln() + x;
        }
        if z < 0.1 {
            return y;
        }
        let w = z + x;
        w * w
    }
    inputs(n) { val x dx = 0.05 + 0.45 * (n - 1) as f64, val y dy = 1.2 }
    dual {
        let (x, y) = (*x, *y);
        let z = x * y;
        if z.re > 1.0 {
            z.ln() + x
        } else if z.re < 0.1 {
            y
        } else {
            (z + x) * (z + x)
        }
    }
}

scenario! {
    scalar previous_item_in_an_option in ControlFlow, sizes [1, 10, 100];
    #[differentiable]
    pub fn f(x: &Array1<f64>) -> f64 {
        let mut prev: Option<f64> = None;
        let mut s = 0.0;
        for &v in x.iter() {
            let h = v.tanh();
            s += match prev {
                Some(p) => (h - p).powi(2),
                None => h,
            };
            prev = Some(h);
        }
        s
    }
    inputs(n) { ref x dx = random(10 * n, 52) }
    hand {
        let h = x.mapv(f64::tanh);
        let n = h.len();
        let g = Array1::from_shape_fn(n, |i| {
            let mut d = if i == 0 { 1.0 } else { 2.0 * (h[i] - h[i - 1]) };
            if i + 1 < n {
                d -= 2.0 * (h[i + 1] - h[i]);
            }
            d * (1.0 - h[i] * h[i])
        });
        (g,)
    }
    dual {
        let h: Vec<Dual64> = x.iter().map(|v| v.tanh()).collect();
        let steps = h.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum::<Dual64>();
        h[0] + steps
    }
}

pub fn scenarios() -> Vec<Scenario> {
    vec![
        if_else_chain::scenario(),
        branch_on_active_comparison::scenario(),
        match_on_constant::scenario(),
        outer_variables_assigned_in_branches::scenario(),
        early_returns::scenario(),
        previous_item_in_an_option::scenario(),
    ]
}
