//! Helpers shared by the CLI tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs the built `sparsetool` with `args` from the repository root.
pub fn st(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sparsetool"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("sparsetool runs")
}

/// stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts success and returns stdout.
pub fn ok(args: &[&str]) -> String {
    let o = st(args);
    assert!(
        o.status.success(),
        "sparsetool {args:?} failed: {}",
        stderr(&o)
    );
    stdout(&o)
}

/// A Python with numpy and scipy: `SPARSETOOL_PYTHON`, else `.venv/bin/python`.
/// `None` (and a printed SKIPPED line) when there is none, unless
/// `SPARSETOOL_REQUIRE_PYTHON=1`, which makes that a failure.
pub fn python() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = std::env::var_os("SPARSETOOL_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([root().join(".venv/bin/python")])
        .collect();
    for p in candidates {
        let ok = Command::new(&p)
            .args(["-c", "import numpy, scipy"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if ok {
            return Some(p);
        }
    }
    if std::env::var("SPARSETOOL_REQUIRE_PYTHON").as_deref() == Ok("1") {
        panic!("SPARSETOOL_REQUIRE_PYTHON=1 but no python with numpy+scipy was found");
    }
    println!("SKIPPED: no python with scipy (set SPARSETOOL_PYTHON or run scripts/test.sh)");
    None
}
