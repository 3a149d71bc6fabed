//! Every input the fuzzers (`fuzz/`) found a bug with is kept in
//! `fixtures/bad/fuzz/`; each goes through all three readers (Matrix Market
//! strict and lenient, `.npz`, `.spb` with and without checksums), exactly
//! as in the fuzz targets. Errors are fine; a panic, a hang or an abort is
//! not.

mod fuzz_common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// One reader's fuzz entry point.
type Reader = fn(&[u8]);

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bad/fuzz")
}

#[test]
fn fuzz_findings_do_not_panic() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("fixtures/bad/fuzz exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fuzz regression inputs found");
    let mut failures = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).expect("readable file");
        let runs: [(&str, Reader); 5] = [
            ("mm", fuzz_common::fuzz_mm),
            ("npz", fuzz_common::fuzz_npz),
            ("spb", fuzz_common::fuzz_spb),
            ("detect+load", fuzz_common::fuzz_detect_load),
            ("npz values", fuzz_common::fuzz_npz_values),
        ];
        for (reader, run) in runs {
            let t = Instant::now();
            let r = catch_unwind(AssertUnwindSafe(|| run(&bytes)));
            let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
            if r.is_err() {
                failures.push(format!("{name:?}: the {reader} reader panicked"));
            }
            // The fuzzers' timeout is far longer; a regression input that
            // takes seconds is a regression of the fix.
            if t.elapsed() > Duration::from_secs(5) {
                failures.push(format!(
                    "{name:?}: the {reader} reader took {:?}",
                    t.elapsed()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
