//! The evals `ad-gradbench` implements, one module each, and reading their
//! JSON inputs. Inputs are converted to arrays before the timed runs (the
//! timings cover the computation, as GradBench's reference tool does).

pub mod ba;
pub mod descent;
pub mod det;
pub mod gmm;
pub mod hello;
pub mod ht;
pub mod kmeans;
pub mod llsq;
pub mod lse;
pub mod lstm;
pub mod ode;
pub mod particle;
pub mod saddle;

use ad::ndarray::{Array1, Array2};
use serde_json::Value;

/// The evaluated output and the nanoseconds of each run.
pub type Evaluated = (Value, Vec<u128>);

/// The modules a `define` may name.
pub const MODULES: [&str; 12] = [
    "ba", "det", "gmm", "hello", "ht", "kmeans", "llsq", "lse", "lstm", "ode", "particle", "saddle",
];

pub fn is_known(module: &str) -> bool {
    MODULES.contains(&module)
}

/// Runs `function` of `module` on `input`.
pub fn evaluate(module: &str, function: &str, input: &Value) -> Result<Evaluated, String> {
    match module {
        "ba" => ba::evaluate(function, input),
        "det" => det::evaluate(function, input),
        "gmm" => gmm::evaluate(function, input),
        "hello" => hello::evaluate(function, input),
        "ht" => ht::evaluate(function, input),
        "kmeans" => kmeans::evaluate(function, input),
        "lse" => lse::evaluate(function, input),
        "lstm" => lstm::evaluate(function, input),
        "llsq" => llsq::evaluate(function, input),
        "ode" => ode::evaluate(function, input),
        "particle" => particle::evaluate(function, input),
        "saddle" => saddle::evaluate(function, input),
        _ => Err(format!("no module `{module}`")),
    }
}

/// The error for a function a module does not have.
pub fn unknown(module: &str, function: &str) -> String {
    format!("module `{module}` has no function `{function}`")
}

/// `input[key]` as a vector of numbers.
pub fn vector(input: &Value, key: &str) -> Result<Array1<f64>, String> {
    input
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("the input has no array `{key}`"))?
        .iter()
        .map(|v| {
            v.as_f64()
                .ok_or_else(|| format!("`{key}` holds a non-number"))
        })
        .collect::<Result<Vec<f64>, String>>()
        .map(Array1::from)
}

/// `input[key]`, an array of equally long arrays of numbers, as a matrix
/// with one row per inner array (rows may be empty: `l` when `d = 1`).
pub fn matrix(input: &Value, key: &str) -> Result<Array2<f64>, String> {
    let rows = input
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("the input has no array `{key}`"))?;
    let cols = rows.first().and_then(Value::as_array).map_or(0, Vec::len);
    let mut flat = Vec::with_capacity(rows.len() * cols);
    for row in rows {
        let row = row
            .as_array()
            .ok_or_else(|| format!("`{key}` holds a non-array"))?;
        if row.len() != cols {
            return Err(format!("the rows of `{key}` differ in length"));
        }
        for v in row {
            flat.push(
                v.as_f64()
                    .ok_or_else(|| format!("`{key}` holds a non-number"))?,
            );
        }
    }
    Array2::from_shape_vec((rows.len(), cols), flat).map_err(|e| format!("`{key}`: {e}"))
}

/// `input[key]` as a count.
pub fn count(input: &Value, key: &str) -> Result<usize, String> {
    input
        .get(key)
        .and_then(Value::as_u64)
        .map(|n| n as usize)
        .ok_or_else(|| format!("the input has no count `{key}`"))
}

/// A vector as JSON.
pub fn json_vector(v: &Array1<f64>) -> Value {
    Value::from(v.to_vec())
}
