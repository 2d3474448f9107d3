//! The GradBench protocol (`CONTRIBUTING.md` of the GradBench repository):
//! the eval sends messages with an `id` and a `kind`; the tool answers each
//! with the same `id`. `define` says whether a module is implemented;
//! `evaluate` runs a function of a module on an input and returns its
//! `output` and one `evaluate` timing per run; every other kind (`start`,
//! `analysis`, ...) is acknowledged.

use serde_json::{json, Value};

use crate::evals;

/// The response line to one message line.
pub fn respond(line: &str) -> String {
    let message: Value = match serde_json::from_str(line) {
        Ok(m) => m,
        // Without an id there is nothing to answer to; say why on the line.
        Err(e) => return json!({ "error": format!("not a JSON message: {e}") }).to_string(),
    };
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let text = |key: &str| message.get(key).and_then(Value::as_str).unwrap_or("");
    let response = match text("kind") {
        "start" => json!({ "id": id, "tool": "ad" }),
        "define" => {
            let module = text("module");
            if evals::is_known(module) {
                json!({ "id": id, "success": true })
            } else {
                json!({ "id": id, "success": false, "error": format!("no module `{module}` in ad-gradbench") })
            }
        }
        "evaluate" => {
            let input = message.get("input").cloned().unwrap_or(Value::Null);
            match evals::evaluate(text("module"), text("function"), &input) {
                Ok((output, timings)) => json!({
                    "id": id,
                    "success": true,
                    "output": output,
                    "timings": timings
                        .iter()
                        .map(|ns| json!({ "name": "evaluate", "nanoseconds": ns }))
                        .collect::<Vec<_>>(),
                }),
                Err(error) => json!({ "id": id, "success": false, "error": error }),
            }
        }
        _ => json!({ "id": id }),
    };
    response.to_string()
}
