//! Running a function as often as an input's `Runs` fields ask: at least
//! `min_runs` times and until the runs add up to `min_seconds`, timing each.

use std::time::Instant;

use serde_json::Value;

/// `f`'s last result and each run's nanoseconds. Inputs without `Runs`
/// fields (the `hello` eval) run once.
pub fn repeat<T>(input: &Value, mut f: impl FnMut() -> T) -> (T, Vec<u128>) {
    let min_runs = input
        .get("min_runs")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1);
    let min_seconds = input
        .get("min_seconds")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let mut timings = Vec::new();
    let mut total = 0.0;
    loop {
        let start = Instant::now();
        let out = std::hint::black_box(f());
        let elapsed = start.elapsed();
        total += elapsed.as_secs_f64();
        timings.push(elapsed.as_nanos());
        if timings.len() as u64 >= min_runs && total >= min_seconds {
            return (out, timings);
        }
    }
}
