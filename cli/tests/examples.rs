//! The `console` blocks of README.md and docs/*.md are what users copy:
//! each `$ sparsetool ...` line is run against the built binary and its
//! output (stdout and stderr, merged) compared with the block, so that the
//! examples cannot go stale. `[..]` in a block matches the rest of a line
//! fragment (timings), `...` any run of lines, `? N` the exit status.

#[allow(dead_code)] // each test crate uses part of the shared helpers
mod common;

use std::path::Path;

#[test]
fn readme_and_docs_console_blocks_hold() {
    let root = common::root();
    let dir = tempfile::tempdir().expect("temp dir");
    let mut docs = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).expect("docs/") {
        let p = e.expect("docs entry").path();
        if p.extension().is_some_and(|x| x == "md") {
            docs.push(p);
        }
    }
    let cases = trycmd::TestCases::new();
    cases.register_bin("sparsetool", Path::new(env!("CARGO_BIN_EXE_sparsetool")));
    let mut blocks = 0;
    for doc in docs {
        let text = std::fs::read_to_string(&doc).expect("readable doc");
        if !text.contains("```console") {
            continue;
        }
        blocks += text.matches("```console").count();
        // trycmd runs `NAME.md` in `NAME.in/`: a scratch directory with the
        // fixtures and a docs/img for plots, so examples write nothing into
        // the repository.
        let stem = doc.file_stem().expect("file name").to_string_lossy();
        let copy = dir.path().join(format!("{stem}.md"));
        std::fs::write(&copy, console_blocks(&text)).expect("copy doc");
        let cwd = dir.path().join(format!("{stem}.in"));
        std::fs::create_dir_all(cwd.join("docs/img")).expect("scratch dir");
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.join("fixtures"), cwd.join("fixtures"))
            .expect("fixtures link");
        cases.case(copy);
    }
    assert!(blocks >= 10, "only {blocks} console blocks found");
    cases.run();
}

/// Only the `console` blocks of a document, in trycmd's form: every other
/// fenced block dropped (trycmd would run a block without an info string),
/// and an empty line after each command's expected output (trycmd drops the
/// last newline of each expectation; the documents read better without the
/// empty lines).
fn console_blocks(doc: &str) -> String {
    let mut out = String::new();
    let mut in_console = false;
    let mut in_other = false;
    let mut seen_command = false;
    for line in doc.lines() {
        if in_console {
            if line.starts_with("```") {
                out.push_str("\n```\n\n");
                in_console = false;
                continue;
            }
            if line.starts_with("$ ") && seen_command {
                out.push('\n');
            }
            seen_command |= line.starts_with("$ ");
            out.push_str(line);
            out.push('\n');
        } else if in_other {
            in_other = !line.starts_with("```");
        } else if line.starts_with("```console") {
            in_console = true;
            seen_command = false;
            out.push_str("```console\n");
        } else if line.starts_with("```") {
            in_other = true;
        }
    }
    out
}
