//! The protocol on recorded message sequences (`tests/sessions/*.jsonl`, in
//! the form GradBench's evals send them), through the real binary: one
//! response line per message, with its id; `define` answered with
//! `success`; `evaluate` with an output and one `evaluate` timing per run
//! (at least `min_runs`); everything else acknowledged.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

/// The binary's response lines to the session's message lines.
fn run_session(name: &str) -> (Vec<Value>, Vec<Value>) {
    let path = format!("{}/tests/sessions/{name}.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("a recorded session");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ad-gradbench"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the tool starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("send the session");
    let out = child
        .wait_with_output()
        .expect("the tool ends when stdin closes");
    assert!(out.status.success(), "the tool failed: {:?}", out.status);
    let parse = |l: &str| serde_json::from_str::<Value>(l).expect("one JSON value per line");
    let messages: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(parse)
        .collect();
    let responses: Vec<Value> = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(parse)
        .collect();
    assert_eq!(responses.len(), messages.len(), "one response per message");
    for (m, r) in messages.iter().zip(&responses) {
        assert_eq!(r["id"], m["id"], "a response carries its message's id");
    }
    (messages, responses)
}

fn check_evaluations(messages: &[Value], responses: &[Value]) {
    for (m, r) in messages.iter().zip(responses) {
        match m["kind"].as_str() {
            Some("define") => assert_eq!(r["success"], true, "{m}"),
            Some("evaluate") => {
                assert_eq!(r["success"], true, "{m}: {r}");
                assert!(!r["output"].is_null(), "{m}: no output");
                let timings = r["timings"].as_array().expect("timings");
                let min_runs = m["input"]["min_runs"].as_u64().unwrap_or(1) as usize;
                assert!(timings.len() >= min_runs, "{m}: {} timings", timings.len());
                assert!(timings
                    .iter()
                    .all(|t| t["name"] == "evaluate" && t["nanoseconds"].is_u64()));
            }
            // `start` may name the tool; everything else is acknowledged.
            Some("start") => assert!(r
                .as_object()
                .is_some_and(|o| o.keys().all(|k| k == "id" || k == "tool"))),
            _ => assert_eq!(
                r.as_object().map(|o| o.len()),
                Some(1),
                "{m}: only the id: {r}"
            ),
        }
    }
}

#[test]
fn hello_session() {
    let (m, r) = run_session("hello");
    check_evaluations(&m, &r);
    assert_eq!(r[0]["tool"], "ad", "the start response names the tool");
    assert_eq!(r[2]["output"], 1.0);
    assert_eq!(r[4]["output"], 2.0);
    assert_eq!(r[6]["output"], 4.0);
}

#[test]
fn lse_session() {
    let (m, r) = run_session("lse");
    check_evaluations(&m, &r);
    let gradient = r[4]["output"].as_array().expect("a gradient");
    let total: f64 = gradient.iter().map(|g| g.as_f64().expect("a number")).sum();
    assert!(
        (total - 1.0).abs() < 1e-12,
        "the gradient of LogSumExp sums to one"
    );
}

#[test]
fn llsq_session() {
    let (m, r) = run_session("llsq");
    check_evaluations(&m, &r);
    // Worked by hand: t = -1, -0.5, 0, 0.5, 1 and s = -1, -1, 0, 1, 1.
    let residuals = [-1.2, -1.075, -0.1, 0.725, 0.4];
    let y: f64 = residuals.iter().map(|r| r * r).sum::<f64>() / 2.0;
    assert!((r[2]["output"].as_f64().expect("a value") - y).abs() < 1e-12);
    assert!((r[4]["output"][0].as_f64().expect("a value") - 1.25).abs() < 1e-12);
}

#[test]
fn det_session() {
    let (m, r) = run_session("det");
    check_evaluations(&m, &r);
    // Worked by hand: the determinant, and its gradient, the cofactors.
    assert!((r[2]["output"].as_f64().expect("a value") - 6.0).abs() < 1e-12);
    let cofactors = [4.0, 0.0, -2.0, 1.0, 3.0, -2.0, -3.0, -3.0, 6.0];
    let g = r[4]["output"].as_array().expect("a gradient");
    assert_eq!(g.len(), 9);
    for (g, want) in g.iter().zip(cofactors) {
        assert!(
            (g.as_f64().expect("a number") - want).abs() < 1e-12,
            "{g} vs {want}"
        );
    }
}

/// Expected values recorded from GradBench's hand-written C++ tool
/// (`tools/manual/bin/ba`) on the same input. (Its `rows` are not compared:
/// for fewer than 31 rows the tool reads past the end of its row list.)
#[test]
fn ba_session_matches_the_reference_tool() {
    let (m, r) = run_session("ba");
    check_evaluations(&m, &r);
    let errors = &r[2]["output"];
    for (got, want) in errors["reproj_error"]["elements"]
        .as_array()
        .expect("elements")
        .iter()
        .zip([-74.02071783763445, -46.73664769767052])
    {
        assert!(
            (got.as_f64().expect("a number") - want).abs() < 1e-12,
            "{got} vs {want}"
        );
    }
    assert_eq!(errors["reproj_error"]["repeated"], 4);
    assert!((errors["w_err"]["element"].as_f64().expect("a number") - 0.36).abs() < 1e-15);
    let jac = &r[4]["output"];
    let cols: Vec<u64> = jac["cols"]
        .as_array()
        .expect("cols")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    let mut want_cols: Vec<u64> = (0..11).chain([22, 23, 24, 31]).collect();
    want_cols.extend_from_within(..);
    want_cols.push(34);
    assert_eq!(cols, want_cols);
    let reference = [
        27.850358900105956,
        335.7904299692701,
        41.3513304026228,
        -114.31351384193854,
        22.301028688379915,
        9.42169258829783,
        -0.16905179459408606,
        0.8,
        0.0,
        -5.410772198891769,
        -0.4332921283760538,
        114.31351384193854,
        -22.301028688379915,
        -9.42169258829783,
        -92.52589729704303,
        -333.74543523031184,
        44.67632542913922,
        -19.171405332985902,
        -27.248242024345668,
        -112.9281589183802,
        -5.9089597857954885,
        -0.1508416192441763,
        0.0,
        0.8,
        -4.827926505021314,
        -0.3866181155126638,
        27.248242024345668,
        112.9281589183802,
        5.9089597857954885,
        -58.42080962208814,
        -1.6,
    ];
    let vals = jac["vals"].as_array().expect("vals");
    assert_eq!(vals.len(), reference.len());
    for (got, want) in vals.iter().zip(reference) {
        let got = got.as_f64().expect("a number");
        assert!(
            (got - want).abs() <= 1e-12 * want.abs().max(1.0),
            "{got} vs {want}"
        );
    }
}

#[test]
fn unknown_modules_are_declined() {
    let (_, r) = run_session("unknown");
    assert_eq!(r[1]["success"], false);
    assert!(r[1]["error"]
        .as_str()
        .is_some_and(|e| e.contains("tensor_contraction")));
}

#[test]
fn ode_session() {
    let (m, r) = run_session("ode");
    check_evaluations(&m, &r);
    // y₀ solves y₀' = x₀ exactly (Runge–Kutta is exact on it): y₀(2) = 2 x₀.
    assert!((r[2]["output"][0].as_f64().expect("a value") - 1.0).abs() < 1e-12);
    assert_eq!(r[4]["output"].as_array().map(Vec::len), Some(4));
}

#[test]
fn gmm_session() {
    let (m, r) = run_session("gmm");
    check_evaluations(&m, &r);
    let g = &r[4]["output"];
    assert_eq!(g["alpha"].as_array().map(Vec::len), Some(2));
    assert_eq!(g["mu"][1].as_array().map(Vec::len), Some(2));
    assert_eq!(g["l"][0].as_array().map(Vec::len), Some(1));
    // The gradient with respect to alpha of `-n lse(alpha)` plus the
    // mixture terms sums to zero: shifting every alpha changes nothing.
    let total: f64 = g["alpha"]
        .as_array()
        .expect("alpha")
        .iter()
        .filter_map(|v| v.as_f64())
        .sum();
    assert!(total.abs() < 1e-12, "{total}");
}

/// Expected values recorded from GradBench's hand-written C++ tool
/// (`tools/manual/bin/lstm`) on the same input.
#[test]
fn lstm_session_matches_the_reference_tool() {
    let (m, r) = run_session("lstm");
    check_evaluations(&m, &r);
    let objective = r[2]["output"].as_f64().expect("a value");
    assert!(
        (objective - 0.5328962889851498).abs() < 1e-14,
        "{objective}"
    );
    let reference = [
        -0.0004306926835686324,
        -0.0,
        -0.0002463817546076022,
        0.019461881763751996,
        -0.002311142020915434,
        -0.0,
        0.00016867819515220797,
        -0.021532284257858577,
        0.0004486382120506588,
        -0.006149078578807626,
        0.0005101071523966919,
        0.019798455507377414,
        0.0024074396051202438,
        0.013855529578955533,
        -0.00034923021770643476,
        -0.02190466353800466,
        -0.002243579974241513,
        -0.0,
        -0.028605269223746836,
        0.05060935693790176,
        0.06576053428870868,
        -0.22033773314159474,
    ];
    let jacobian = r[4]["output"].as_array().expect("a gradient");
    assert_eq!(jacobian.len(), reference.len());
    for (g, want) in jacobian.iter().zip(reference) {
        assert!(
            (g.as_f64().expect("a number") - want).abs() < 1e-14,
            "{g} vs {want}"
        );
    }
}

#[test]
fn kmeans_session() {
    let (m, r) = run_session("kmeans");
    check_evaluations(&m, &r);
    // Worked by hand: each centroid's two points lie at squared distances
    // 1 and 2; each centroid less the mean of its points.
    assert_eq!(r[2]["output"], 6.0);
    assert_eq!(
        r[4]["output"],
        serde_json::json!([[-0.5, 1.0], [-0.5, 0.0]])
    );
}

/// Numbers at any depth of nesting, in order.
fn numbers(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| numbers(i, out)),
        other => out.extend(other.as_f64()),
    }
}

/// `got` and `want` hold the same numbers, each within `tolerance`.
fn assert_numbers_close(got: &Value, want: &Value, tolerance: f64, what: &str) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    numbers(got, &mut a);
    numbers(want, &mut b);
    assert_eq!(a.len(), b.len(), "{what}");
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y).abs() < tolerance, "{what}: {x} against {y}");
    }
}

/// A made-up hand of 22 bones and 8 vertices, with triangles and `us` and
/// without: every output equal to what GradBench's hand-written C++ tool
/// (`tools/manual/bin/ht`) gave on the same session, recorded in
/// `ht.manual.jsonl`.
#[test]
fn ht_session_matches_the_reference_tool() {
    let (m, r) = run_session("ht");
    check_evaluations(&m, &r);
    let path = format!(
        "{}/tests/sessions/ht.manual.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let recorded = std::fs::read_to_string(path).expect("the recorded outputs");
    let mut compared = 0;
    for line in recorded.lines() {
        let want: Value = serde_json::from_str(line).expect("JSON");
        let got = r
            .iter()
            .find(|r| r["id"] == want["id"])
            .expect("a response with the recorded id");
        let what = format!("id {}", want["id"]);
        assert_numbers_close(&got["output"], &want["output"], 1e-12, &what);
        compared += 1;
    }
    assert_eq!(compared, 4, "two objectives and two Jacobians");
}

/// The nested evals: forward and reverse over either mode, each giving
/// the eval's expected answer.
#[test]
fn nested_sessions_answer_every_nesting() {
    for (name, expected) in [
        ("saddle", serde_json::json!(vec![8.246324826140356e-06; 4])),
        ("particle", serde_json::json!(0.2071918746486116)),
    ] {
        let (m, r) = run_session(name);
        check_evaluations(&m, &r);
        for i in [2, 4, 6, 8] {
            assert_numbers_close(&r[i]["output"], &expected, 1e-9, name);
        }
    }
}
