//! The images in docs/img are what `scripts/plots.sh` makes from the bundled
//! matrices: regenerate them into a temporary directory and compare (SVG as
//! text, PNG byte for byte: drawing is deterministic), so that a change of
//! the analysis or of the plot cannot leave stale pictures in the README.

#[allow(dead_code)] // each test crate uses part of the shared helpers
mod common;

use std::process::Command;

#[test]
fn committed_plots_are_what_the_script_makes() {
    let root = common::root();
    let dir = tempfile::tempdir().expect("temp dir");
    let o = Command::new("bash")
        .arg(root.join("scripts/plots.sh"))
        .arg(dir.path())
        .env("SPARSETOOL", env!("CARGO_BIN_EXE_sparsetool"))
        .output()
        .expect("bash runs");
    assert!(
        o.status.success(),
        "scripts/plots.sh failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut compared = 0;
    for e in std::fs::read_dir(dir.path()).expect("plots written") {
        let made = e.expect("entry").path();
        let name = made.file_name().expect("file name").to_owned();
        let committed = root.join("docs/img").join(&name);
        let name = name.to_string_lossy();
        if name.ends_with(".svg") {
            let a = std::fs::read_to_string(&made).expect("svg made");
            let b = std::fs::read_to_string(&committed)
                .unwrap_or_else(|e| panic!("docs/img/{name}: {e}"));
            assert!(a == b, "docs/img/{name} is stale: run scripts/plots.sh");
        } else {
            let a = std::fs::read(&made).expect("png made");
            let b = std::fs::read(&committed).unwrap_or_else(|e| panic!("docs/img/{name}: {e}"));
            assert!(a == b, "docs/img/{name} is stale: run scripts/plots.sh");
        }
        compared += 1;
    }
    assert_eq!(
        compared, 2,
        "scripts/plots.sh should make memplus.png and arrow.svg"
    );
}
