//! `lstm`: ADBench's LSTM language model. `l` layers of a diagonal LSTM cell
//! run over a sequence of `c` characters of `b` bits; the objective is the
//! negative mean log-likelihood of each next character, and the gradient is
//! with respect to the main and extra parameters.
//!
//! Layouts (rows as GradBench sends them): `main` is `2l × 4b`, weights then
//! biases of each layer, each `[forget, ingate, outgate, change]`; `extra`
//! is `3 × b`, the input weight, output weight and output bias; `state` is
//! `2l × b`, each layer's hidden then cell state.

use ad::differentiable;
use ad::ndarray::{s, Array2};
use serde_json::Value;

use super::{matrix, unknown, Evaluated};
use crate::runs::repeat;

#[differentiable]
pub fn objective(
    main: &Array2<f64>,
    extra: &Array2<f64>,
    #[constant] state: &Array2<f64>,
    #[constant] sequence: &Array2<f64>,
) -> f64 {
    let (c, b) = (sequence.nrows(), sequence.ncols());
    let layers = main.nrows() / 2;
    let mut hidden = Array2::<f64>::zeros((layers, b));
    let mut cell = Array2::<f64>::zeros((layers, b));
    for layer in 0..layers {
        for i in 0..b {
            hidden[[layer, i]] = state[[2 * layer, i]];
            cell[[layer, i]] = state[[2 * layer + 1, i]];
        }
    }
    let mut total = 0.0;
    for t in 0..c - 1 {
        let mut input = &sequence.row(t) * &extra.row(0);
        for layer in 0..layers {
            let w = main.row(2 * layer);
            let bias = main.row(2 * layer + 1);
            let h = hidden.row(layer).to_owned();
            let forget = (&input * &w.slice(s![..b]) + bias.slice(s![..b]))
                .mapv(|v| 1.0 / (1.0 + (-v).exp()));
            let ingate = (&h * &w.slice(s![b..2 * b]) + bias.slice(s![b..2 * b]))
                .mapv(|v| 1.0 / (1.0 + (-v).exp()));
            let outgate = (&input * &w.slice(s![2 * b..3 * b]) + bias.slice(s![2 * b..3 * b]))
                .mapv(|v| 1.0 / (1.0 + (-v).exp()));
            let change = (&h * &w.slice(s![3 * b..]) + bias.slice(s![3 * b..])).mapv(f64::tanh);
            let new_cell = &cell.row(layer) * &forget + &ingate * &change;
            let new_hidden = &outgate * &new_cell.mapv(f64::tanh);
            for i in 0..b {
                cell[[layer, i]] = new_cell[i];
                hidden[[layer, i]] = new_hidden[i];
            }
            input = new_hidden;
        }
        let prediction = &input * &extra.row(1) + extra.row(2);
        let lse = (prediction.mapv(f64::exp).sum() + 2.0).ln();
        total += sequence.row(t + 1).dot(&(&prediction - lse));
    }
    -total / ((c - 1) * b) as f64
}

pub fn evaluate(function: &str, input: &Value) -> Result<Evaluated, String> {
    let (main, extra) = (
        matrix(input, "main_params")?,
        matrix(input, "extra_params")?,
    );
    let (state, sequence) = (matrix(input, "state")?, matrix(input, "sequence")?);
    match function {
        "objective" => {
            let (y, t) = repeat(input, || objective(&main, &extra, &state, &sequence));
            Ok((Value::from(y), t))
        }
        "jacobian" => {
            let (g, t) = repeat(input, || objective_grad(&main, &extra, &state, &sequence).1);
            let (g_main, g_extra, ..) = g;
            let flat: Vec<f64> = g_main.iter().chain(g_extra.iter()).copied().collect();
            Ok((Value::from(flat), t))
        }
        other => Err(unknown("lstm", other)),
    }
}
