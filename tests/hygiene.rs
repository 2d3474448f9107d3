//! The expansion must not depend on the prelude or collide with user names:
//! this file shadows prelude items and uses the names of the generated
//! temporaries for its own locals.

#![allow(dead_code, non_camel_case_types, clippy::all)]

use ad::differentiable;
use ad::ndarray::{Array1, Axis};

struct Result;
struct Ok;
struct Some;
struct None;
struct Vec;
struct Option;
struct Clone;
struct FnOnce;
struct f64_like;
mod core {}
mod rules {}
fn view() {}

#[differentiable]
fn f(x: &Array1<f64>, y: f64) -> f64 {
    let t1 = x.mapv(f64::exp);
    let c1 = 2.0;
    let x_bar = t1.sum() * y;
    let rules = x_bar * c1;
    let view = rules + x.mean_axis(Axis(0)).unwrap().sum();
    let value = view * y;
    let y_bar = value.sin();
    let t2_dot = y_bar + x[0];
    t2_dot
}

#[differentiable]
fn g(x: &Array1<f64>, y: f64) -> f64 {
    f(x, y) * 2.0
}

/// Control flow, with locals named like the loop slots, tapes and records.
#[differentiable]
fn looped(x: &Array1<f64>, n: usize) -> f64 {
    let iter = 2.0;
    let array = Array1::<f64>::zeros(x.len());
    let mut acc = x[0] * iter;
    let mut acc_carried = array;
    for i in 0..n {
        let acc_tape = x[i % x.len()];
        if i % 2 == 0 {
            acc = acc * acc_tape + 1.0;
        } else {
            acc_carried[i % x.len()] = acc;
        }
    }
    let acc_branch = acc_carried.sum();
    acc + acc_branch
}

#[test]
fn control_flow_names_do_not_collide_either() {
    let x = Array1::from(vec![0.3, -0.2, 0.5]);
    let (value, (g, _)) = looped_grad(&x, 5);
    assert_eq!(value, looped(&x, 5));
    let (_, d) = looped_jvp(&x, 5, &Array1::from(vec![1.0, 0.0, 0.0]), ad::NoTangent);
    assert!((d - g[0]).abs() < 1e-12);
}

#[test]
fn user_names_do_not_collide_with_generated_ones() {
    let x = Array1::from(vec![0.1, 0.2, 0.3]);
    let (value, (gx, gy)) = g_grad(&x, 0.5);
    assert_eq!(value, g(&x, 0.5));
    let (_, pullback) = g_vjp(&x, 0.5);
    let (px, py) = pullback(1.0);
    assert_eq!((px, py), (gx.clone(), gy));
    let (_, d) = g_jvp(&x, 0.5, &Array1::zeros(3), 1.0);
    assert!((d - gy).abs() < 1e-12);
    let fd = (g(&x, 0.5 + 1e-6) - g(&x, 0.5 - 1e-6)) / 2e-6;
    assert!((fd - gy).abs() < 1e-6 * gy.abs().max(1.0), "{fd} vs {gy}");
}
