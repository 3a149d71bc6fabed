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

#[allow(unused_imports)] // not every test crate runs the interop checks
pub use sparsetool_fixtures::support::python;

/// Asserts that `text` contains `needle`, printing `text` otherwise.
#[allow(dead_code)] // not every test file uses every helper
pub fn has(text: &str, needle: &str) {
    assert!(text.contains(needle), "{needle:?} not in:\n{text}");
}
