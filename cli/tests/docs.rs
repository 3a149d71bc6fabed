//! `docs/cli.md` is the contract users script against: these tests fail when
//! a command, a flag or a JSON key exists that it does not document.

#[allow(dead_code)] // each test crate uses part of the shared helpers
mod common;

use std::collections::BTreeSet;

use common::{ok, root};

fn cli_md() -> String {
    std::fs::read_to_string(root().join("docs/cli.md")).expect("docs/cli.md exists")
}

const COMMANDS: [&str; 8] = [
    "info",
    "analyze",
    "convert",
    "spmv",
    "bench",
    "gen",
    "completions",
    "man",
];

/// The long flags `--help` lists for a command.
fn flags(cmd: &str) -> BTreeSet<String> {
    let help = ok(&[cmd, "--help"]);
    let mut out = BTreeSet::new();
    for line in help.lines() {
        let line = line.trim_start();
        // Option lines start with `-x, --long` or `--long`.
        let Some(start) = line
            .find("--")
            .filter(|&i| line[..i].trim_end_matches(", ").len() <= 2)
        else {
            continue;
        };
        let name: String = line[start + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !name.is_empty() {
            out.insert(format!("--{name}"));
        }
    }
    out
}

#[test]
fn every_command_and_flag_is_documented() {
    let doc = cli_md();
    for cmd in COMMANDS {
        assert!(
            doc.lines()
                .any(|l| (l.starts_with("## ") || l.starts_with("### "))
                    && l.contains(&format!("`{cmd}`"))),
            "docs/cli.md has no section for `{cmd}`"
        );
        let fl = flags(cmd);
        assert!(fl.contains("--help"), "{cmd} --help lists no flags: {fl:?}");
        for f in fl {
            assert!(
                doc.contains(&format!("`{f}")),
                "docs/cli.md does not document `{cmd} {f}`"
            );
        }
    }
}

/// Every object key anywhere in a JSON value.
fn keys(v: &serde_json::Value, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                out.insert(k.clone());
                keys(x, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
        _ => {}
    }
}

#[test]
fn every_json_key_is_documented() {
    let dir = tempfile::tempdir().unwrap();
    let spb = dir.path().join("m.spb");
    let npz = dir.path().join("m.npz");
    let m = "fixtures/matrices/real/bcsstk13.mtx.gz";
    ok(&["convert", m, "--to", "sell", "-o", spb.to_str().unwrap()]);
    ok(&["convert", m, "--to", "hyb", "-o", npz.to_str().unwrap()]);
    let conv = dir.path().join("c.npz");
    let gen = dir.path().join("g.mtx");
    let runs: Vec<Vec<&str>> = vec![
        vec!["info", m, "--json"],
        vec!["info", "fixtures/matrices/seed/A.mtx", "--json"],
        vec!["info", spb.to_str().unwrap(), "--json"],
        vec!["info", npz.to_str().unwrap(), "--json"],
        vec!["analyze", m, "--json"],
        vec!["analyze", "fixtures/matrices/real/memplus.mtx.gz", "--json"],
        vec!["analyze", m, "--gpus", "3", "--json"],
        vec!["bench", m, "--device", "cpu", "--reps", "2", "--json"],
        vec![
            "bench", m, "--device", "cpu", "--reps", "1", "--sweep", "--json",
        ],
        vec![
            "convert",
            m,
            "--to",
            "csr",
            "-o",
            conv.to_str().unwrap(),
            "--json",
        ],
        vec!["spmv", m, "--json"],
        vec![
            "gen",
            "banded",
            "--rows",
            "10",
            "-o",
            gen.to_str().unwrap(),
            "--json",
        ],
    ];
    let doc = cli_md();
    let mut missing = Vec::new();
    for args in &runs {
        let v: serde_json::Value = serde_json::from_str(&ok(args)).expect("valid JSON");
        let mut ks = BTreeSet::new();
        keys(&v, &mut ks);
        assert!(ks.len() > 5, "{args:?} printed too few keys: {ks:?}");
        for k in ks {
            if !doc.contains(&format!("`{k}`")) {
                missing.push(format!("{k} (from {})", args.join(" ")));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "keys missing from docs/cli.md: {missing:#?}"
    );
}

/// docs/binary-layout.md shows seed A's arrays in every format: each `# FLAGS`
/// line of its worked example is run as `convert seed/A.mtx FLAGS -o A.spb`,
/// and every array listed under it must be the section of that name.
#[test]
fn binary_layout_worked_example_matches_convert() {
    use sparsetool_formats::binary::{SpbFile, SpbOptions};
    let doc = std::fs::read_to_string(root().join("docs/binary-layout.md")).expect("doc");
    let start = doc
        .find("# --to coo")
        .expect("worked example in docs/binary-layout.md");
    let block = &doc[start..start + doc[start..].find("```").expect("end of block")];
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut formats = 0;
    let mut spb: Option<SpbFile> = None;
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(flags) = line.strip_prefix("# ") {
            let flags: Vec<&str> = flags
                .split('(')
                .next()
                .unwrap()
                .split_whitespace()
                .collect();
            formats += 1;
            let out = dir.path().join(format!("A{formats}.spb"));
            let mut args = vec!["convert", "fixtures/matrices/seed/A.mtx", "-q"];
            args.extend(&flags);
            args.extend(["-o", out.to_str().unwrap()]);
            ok(&args);
            spb = Some(SpbFile::open(&out, &SpbOptions::default()).expect("valid spb"));
            continue;
        }
        let (name, list) = line.split_once('=').expect("NAME = [..]");
        let name = name.trim();
        let want: Vec<f64> = list
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .split(',')
            .map(|v| v.trim().parse().expect("number"))
            .collect();
        let file = spb.as_ref().expect("a # line first");
        let got: Vec<f64> = if name.ends_with("values") {
            file.values::<f64>(name).expect(name).to_vec()
        } else {
            file.indices::<i32>(name)
                .expect(name)
                .iter()
                .map(|&i| f64::from(i))
                .collect()
        };
        assert_eq!(got, want, "{name} after `{}`", formats);
        checked += 1;
    }
    assert_eq!(formats, 6, "one example per format");
    assert!(checked >= 20, "only {checked} arrays checked");
}
