//! Snapshots of the human report and the JSON for every real matrix and
//! the seed examples.

use std::path::Path;

use sparsetool_analyze::{render_text, AnalyzeOptions, AnalyzeReport, RowLengths};
use sparsetool_formats::mm::{read_path, ReadOptions};
use sparsetool_formats::Complex64;

/// Streaming pass, or the full reader when the pass cannot handle the file.
fn lengths(path: &Path) -> RowLengths {
    match RowLengths::from_mm_path(path) {
        Ok(rl) => rl,
        Err(e) if e.needs_full_read() => {
            let m = read_path::<Complex64, i64>(path, &ReadOptions::default()).unwrap();
            RowLengths::from_coo(&m.coo).unwrap()
        }
        Err(e) => panic!("{e}"),
    }
}

/// Rounds every float to 10 significant digits, so that the last-ulp
/// differences of `powf` between C libraries do not break the snapshots.
fn rounded(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or(0.0);
            let r: f64 = format!("{x:.9e}").parse().unwrap_or(x);
            serde_json::json!(r)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(rounded).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, rounded(v))).collect()),
        other => other,
    }
}

fn snap(name: &str, rl: &RowLengths) {
    let report = AnalyzeReport::new(rl, &AnalyzeOptions::default());
    insta::with_settings!({ snapshot_path => "snapshots", prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!(format!("{name}.txt"), render_text(&report, name));
        insta::assert_json_snapshot!(format!("{name}.json"), rounded(serde_json::to_value(&report).unwrap()));
    });
}

#[test]
fn real_matrices() {
    let all = sparsetool_fixtures::real_matrices();
    assert!(all.len() >= 18);
    for m in all {
        if m.quirk.is_some() {
            // `cha` (a non-real hermitian diagonal) reads only leniently.
            let lenient = ReadOptions {
                lenient: true,
                ..ReadOptions::default()
            };
            let (rl, _) = sparsetool_analyze::rows::read_row_lengths(&m.path, &lenient).unwrap();
            snap(m.name, &rl);
            continue;
        }
        snap(m.name, &lengths(&m.path));
    }
}

#[test]
fn seed_examples() {
    for name in ["A", "B", "C"] {
        let p = sparsetool_fixtures::seed_path(name);
        snap(&format!("seed-{name}"), &lengths(&p));
    }
    let d = sparsetool_fixtures::gen::seed_d::<f64, i32>().unwrap();
    snap("seed-D", &RowLengths::from_csr(&d).unwrap());
    let l = sparsetool_fixtures::gen::laplace2d::<f64, i32>(16).unwrap();
    snap("laplace2d-16", &RowLengths::from_csr(&l).unwrap());
}
