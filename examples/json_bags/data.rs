//! The dataset: JSON documents describing a shop's customers, each with
//! lists of different lengths (their visits and their purchases), and
//! whether they left. Generated deterministically as JSON text, then parsed
//! with `serde_json` into one matrix per list: a bag of instances.
//!
//! The signal is in the bags: engaged customers make longer visits and
//! larger purchases, and more of them; the scalar fields are noise.

use ad::check::Rng;
use ad::ndarray::{Array1, Array2};
use serde_json::{json, Value};

/// One customer: a matrix per list (a row per element), the scalar
/// fields, and the label (1 = left).
pub struct Sample {
    pub visits: Array2<f64>,
    pub purchases: Array2<f64>,
    pub scalars: Array1<f64>,
    pub label: f64,
}

/// `n` customer documents as a JSON array.
pub fn generate_json(n: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let mut u = move || (rng.uniform() + 1.0) / 2.0; // uniform in [0, 1)
    let docs: Vec<Value> = (0..n)
        .map(|id| {
            let engaged = u() < 0.5;
            let visits = if engaged { 4 + (u() * 26.0) as usize } else { 1 + (u() * 10.0) as usize };
            let purchases = if engaged { (u() * 8.0) as usize } else { (u() * 3.0) as usize };
            let visit_list: Vec<Value> = (0..visits)
                .map(|_| {
                    let minutes = if engaged { 0.35 + 0.65 * u() } else { 0.6 * u() };
                    json!({ "minutes": minutes, "pages": u(), "night": if u() < 0.3 { 1.0 } else { 0.0 } })
                })
                .collect();
            let purchase_list: Vec<Value> = (0..purchases)
                .map(|_| {
                    let amount = if engaged { 0.3 + 0.7 * u() } else { 0.5 * u() };
                    json!({ "amount": amount, "discount": u() * 0.3 })
                })
                .collect();
            // 5% of labels are flipped: no model is perfect here.
            let left = !engaged ^ (u() < 0.05);
            json!({
                "id": id,
                "age": u(),
                "tenure": u(),
                "visits": visit_list,
                "purchases": purchase_list,
                "left": left,
            })
        })
        .collect();
    serde_json::to_string(&Value::Array(docs)).expect("JSON values serialise")
}

/// The documents of a JSON array as samples.
pub fn parse(text: &str) -> Result<Vec<Sample>, String> {
    let docs: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let docs = docs
        .as_array()
        .ok_or("expected a JSON array of documents")?;
    docs.iter().map(sample).collect()
}

fn sample(doc: &Value) -> Result<Sample, String> {
    let number = |v: &Value, key: &str| v[key].as_f64().ok_or(format!("`{key}` is not a number"));
    let bag = |key: &str, fields: &[&str]| -> Result<Array2<f64>, String> {
        let items = doc[key]
            .as_array()
            .ok_or(format!("`{key}` is not a list"))?;
        let mut m = Array2::zeros((items.len(), fields.len()));
        for (i, item) in items.iter().enumerate() {
            for (j, f) in fields.iter().enumerate() {
                m[[i, j]] = number(item, f)?;
            }
        }
        Ok(m)
    };
    Ok(Sample {
        visits: bag("visits", &["minutes", "pages", "night"])?,
        purchases: bag("purchases", &["amount", "discount"])?,
        scalars: Array1::from(vec![number(doc, "age")?, number(doc, "tenure")?]),
        label: if doc["left"].as_bool().ok_or("`left` is not a boolean")? {
            1.0
        } else {
            0.0
        },
    })
}
