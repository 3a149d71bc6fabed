//! `--gpus`: `analyze --gpus N` everywhere (no GPU needed), and the usage
//! errors and exit codes of `spmv --gpus` / `bench --gpus` (exit 2 without a
//! GPU; the multi-GPU runs themselves are in gpu/tests/distributed.rs and
//! scripts/gpu-dist.sh).

#[allow(dead_code)] // each test crate uses part of the shared helpers
mod common;

use common::{ok, st, stderr};

const M: &str = "fixtures/matrices/real/bcsstk13.mtx.gz";

fn analyze_json(path: &str, n: &str) -> serde_json::Value {
    serde_json::from_str(&ok(&["analyze", path, "--gpus", n, "--json"])).expect("one JSON object")
}

#[test]
fn analyze_gpus_text_report() {
    let text = ok(&[
        "analyze",
        "fixtures/matrices/real/jagmesh7.mtx",
        "--gpus",
        "2",
    ]);
    let start = text.find("\npartition over").expect("partition section");
    insta::assert_snapshot!("analyze_gpus_2_jagmesh7", &text[start..]);
    // The report itself comes first, unchanged.
    assert!(text.starts_with(&ok(&["analyze", "fixtures/matrices/real/jagmesh7.mtx"])));
}

#[test]
fn analyze_gpus_json_partition() {
    for n in [1usize, 2, 3, 4, 8] {
        let v = analyze_json(M, &n.to_string());
        let p = &v["partition"];
        let parts = p["parts"].as_array().expect("parts");
        assert_eq!(parts.len(), n);
        let sum = |k: &str| parts.iter().map(|q| q[k].as_u64().expect(k)).sum::<u64>();
        assert_eq!(sum("rows"), v["nrows"].as_u64().unwrap());
        assert_eq!(sum("nnz"), v["nnz"].as_u64().unwrap());
        assert_eq!(sum("send_bytes"), sum("recv_bytes"));
        assert_eq!(sum("send_bytes"), p["exchange_bytes"].as_u64().unwrap());
        for q in parts {
            for k in ["rows", "nnz", "ghost_cols", "send_bytes", "recv_bytes"] {
                assert!(q[k].is_u64(), "{k} in {q}");
            }
            assert!(q["predicted_us"].as_f64().unwrap() >= 0.0);
            assert!(q["layout"].is_string());
            // f64 values: bytes received are 8 per ghost column
            assert_eq!(
                q["recv_bytes"].as_u64().unwrap(),
                8 * q["ghost_cols"].as_u64().unwrap()
            );
        }
        let bounds = p["row_bounds"].as_array().unwrap();
        assert_eq!(bounds.len(), n + 1);
        if n == 1 {
            assert_eq!(p["exchange_bytes"], 0);
        }
    }
    // f32: 4 bytes per value
    let v: serde_json::Value = serde_json::from_str(&ok(&[
        "analyze", M, "--gpus", "2", "--dtype", "f32", "--json",
    ]))
    .unwrap();
    let q = &v["partition"]["parts"][0];
    assert_eq!(
        q["recv_bytes"].as_u64().unwrap(),
        4 * q["ghost_cols"].as_u64().unwrap()
    );
}

#[test]
fn analyze_gpus_more_parts_than_rows() {
    let v = analyze_json("fixtures/matrices/seed/A.mtx", "8");
    let parts = v["partition"]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 8);
    assert!(parts.iter().any(|q| q["rows"] == 0), "some parts are empty");
}

#[test]
fn analyze_gpus_usage_errors() {
    for args in [
        vec!["analyze", M, "--gpus", "0"],
        vec!["analyze", M, "--gpus", "x"],
        vec!["analyze", M, "--gpus", "2", "--measure"],
        vec!["analyze", M, "--gpus", "2", "--plot", "p.svg"],
    ] {
        let o = st(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn spmv_and_bench_gpus_usage_errors_exit_1() {
    for args in [
        vec!["spmv", M, "--gpus", "0"],
        vec!["spmv", M, "--gpus", "two"],
        vec!["spmv", M, "--parts", "2"],
        vec!["spmv", M, "--gpus", "2", "--transpose"],
        vec!["bench", M, "--gpus", "-1"],
        vec!["bench", M, "--equal-rows"],
        vec!["bench", M, "--baselines", "1"],
        vec!["bench", M, "--gpus", "1", "--baselines", "0"],
        vec!["bench", M, "--gpus", "1", "--baselines", "7"],
        vec!["bench", M, "--gpus", "2", "--device", "cpu"],
        vec!["bench", M, "--gpus", "1,,2"],
        vec!["bench", M, "--gpus", "1,0"],
        vec!["bench", M, "--gpus", "all,2"],
    ] {
        let o = st(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("error"), "{args:?}: {}", stderr(&o));
    }
}

/// A list of GPU counts is `bench`'s scaling study: its usage errors are
/// found before any device is asked for, so they exit 1 on every machine.
#[test]
fn gpu_count_lists_usage_errors_exit_1() {
    for (args, says) in [
        (
            vec!["bench", M, "--gpus", "1,2", "--parts", "4"],
            "--parts goes with one GPU count",
        ),
        (vec!["bench", M, "--gpus", "2,1,2"], "appears twice"),
        (
            vec!["spmv", M, "--gpus", "1,2"],
            "a list of counts (1,2,4) is for bench",
        ),
    ] {
        let o = st(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let first = stderr(&o).lines().next().unwrap_or_default().to_string();
        assert!(
            first.starts_with("error: ") && first.contains(says),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn spmv_and_bench_gpus_without_a_gpu_exit_2() {
    if sparsetool_gpu::distributed::device_count() > 0 {
        println!("SKIPPED: a CUDA device is present (this test covers machines without one)");
        return;
    }
    for args in [
        vec!["spmv", M, "--gpus", "2"],
        vec!["spmv", M, "--gpus", "all"],
        vec!["bench", M, "--gpus", "1", "--reps", "1"],
        vec!["bench", M, "--gpus", "1,2,4", "--reps", "1"],
    ] {
        let o = st(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("no CUDA device"), "{}", stderr(&o));
    }
}

/// `bench --gpus N --json` stays one report object (a list, `runs` and
/// `failed`, needs two devices: gpu/tests/distributed.rs covers its
/// library side on one).
#[test]
fn bench_gpus_json_is_one_report() {
    if sparsetool_gpu::distributed::device_count() == 0 {
        println!("SKIPPED: no CUDA device");
        return;
    }
    let one: serde_json::Value =
        serde_json::from_str(&ok(&["bench", M, "--gpus", "1", "--reps", "2", "--json"]))
            .expect("one JSON object");
    assert!(one["dist_ms"].as_f64().is_some(), "{one}");
    assert!(
        one.get("runs").is_none() && one.get("failed").is_none(),
        "{one}"
    );
}
