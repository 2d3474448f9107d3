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
use ad::ndarray::{Array1, Array2};
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
    // Element by element: the cell is diagonal, so each bit's gates read
    // only that bit, and with a handful of bits (7 for ASCII text) scalar
    // steps beat whole-array operations and their temporaries.
    let mut total = 0.0;
    let mut input: Array1<f64> = Array1::zeros(b);
    for t in 0..c - 1 {
        for i in 0..b {
            input[i] = sequence[[t, i]] * extra[[0, i]];
        }
        for layer in 0..layers {
            let (w, bias) = (2 * layer, 2 * layer + 1);
            for i in 0..b {
                let x = input[i];
                let h = hidden[[layer, i]];
                let forget = 1.0 / (1.0 + (-(x * main[[w, i]] + main[[bias, i]])).exp());
                let ingate = 1.0 / (1.0 + (-(h * main[[w, b + i]] + main[[bias, b + i]])).exp());
                let outgate =
                    1.0 / (1.0 + (-(x * main[[w, 2 * b + i]] + main[[bias, 2 * b + i]])).exp());
                let change = (h * main[[w, 3 * b + i]] + main[[bias, 3 * b + i]]).tanh();
                let new_cell = cell[[layer, i]] * forget + ingate * change;
                let new_hidden = outgate * new_cell.tanh();
                cell[[layer, i]] = new_cell;
                hidden[[layer, i]] = new_hidden;
                input[i] = new_hidden;
            }
        }
        let mut exps = 0.0;
        for i in 0..b {
            exps += (input[i] * extra[[1, i]] + extra[[2, i]]).exp();
        }
        let lse = (exps + 2.0).ln();
        for i in 0..b {
            total += sequence[[t + 1, i]] * (input[i] * extra[[1, i]] + extra[[2, i]] - lse);
        }
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
