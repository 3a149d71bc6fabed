//! End-to-end tests of the `sparsetool` binary.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use common::{has, ok, python, root, st, stderr, stdout};

fn real_matrices() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = fs::read_dir(root().join("fixtures/matrices/real"))
        .expect("fixtures/matrices/real")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".mtx") || n.ends_with(".mtx.gz")
        })
        .collect();
    v.sort();
    assert_eq!(v.len(), 18, "all 18 real matrices are bundled");
    v
}

/// `--lenient` for the one bundled real matrix strict reading refuses
/// (`cha.mtx`: its hermitian diagonal holds a non-real value).
fn read_flags(m: &Path) -> &'static [&'static str] {
    if m.ends_with("cha.mtx") {
        &["--lenient"]
    } else {
        &[]
    }
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("tempdir")
}

/// The names in `dir` (temporary files included).
fn entries(dir: &Path) -> Vec<std::ffi::OsString> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect()
}

#[test]
fn info_json_of_seed_examples() {
    for name in ["A", "B", "C"] {
        let path = format!("fixtures/matrices/seed/{name}.mtx");
        let out = ok(&["info", &path, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
        insta::assert_json_snapshot!(format!("info_seed_{name}"), v);
    }
}

#[test]
fn info_human_table() {
    insta::assert_snapshot!(
        "info_seed_B_text",
        ok(&["info", "fixtures/matrices/seed/B.mtx"])
    );
}

#[test]
fn csr_arrays_of_seed_examples() {
    use sparsetool_formats::npz::read_npz;
    use sparsetool_formats::AnyMatrix;
    let dir = tmp();
    for seed in sparsetool_fixtures::seed::ALL {
        let name = seed.name;
        let out = dir.path().join(format!("{name}.npz"));
        ok(&[
            "convert",
            &format!("fixtures/matrices/seed/{name}.mtx"),
            "--to",
            "csr",
            "-o",
            out.to_str().unwrap(),
        ]);
        let AnyMatrix::Csr(m) = read_npz::<f64, i32>(&out).unwrap() else {
            panic!("not csr")
        };
        let widen = |v: &[i32]| v.iter().map(|&x| i64::from(x)).collect::<Vec<_>>();
        assert_eq!(widen(m.row_ptr()), seed.csr_row_ptr, "{name}");
        assert_eq!(widen(m.col_idx()), seed.csr_col, "{name}");
        assert_eq!(m.values(), seed.csr_val, "{name}");
        let text = format!(
            "row_ptr {:?}\ncol     {:?}\nval     {:?}\n",
            m.row_ptr(),
            m.col_idx(),
            m.values()
        );
        insta::assert_snapshot!(format!("csr_seed_{name}"), text);
    }
}

#[test]
fn every_real_matrix_matches_scipy() {
    let Some(py) = python() else { return };
    let dir = tmp();
    for m in real_matrices() {
        let out = dir.path().join("x.npz");
        let mut args = vec![
            "convert",
            m.to_str().unwrap(),
            "--to",
            "csr",
            "-o",
            out.to_str().unwrap(),
            "--force",
        ];
        args.extend(read_flags(&m));
        let o = st(&args);
        assert!(o.status.success(), "{}: {}", m.display(), stderr(&o));
        let c = Command::new(&py)
            .arg(root().join("scripts/scipy_crosscheck.py"))
            .args(["mtx2csr", m.to_str().unwrap(), out.to_str().unwrap()])
            .output()
            .expect("python runs");
        assert!(
            c.status.success(),
            "{}: {}{}",
            m.display(),
            stdout(&c),
            stderr(&c)
        );
    }
}

#[test]
fn spb_python_reader_agrees_with_npz_for_every_format() {
    let Some(py) = python() else { return };
    let dir = tmp();
    let inputs = [
        "fixtures/matrices/seed/C.mtx",
        "fixtures/matrices/real/jagmesh7.mtx",
        "fixtures/matrices/real/lp_ship04l.mtx",
    ];
    for input in inputs {
        for fmt in ["coo", "csr", "ell", "hyb", "jds", "sell", "csc"] {
            let spb = dir.path().join(format!("{fmt}.spb"));
            let npz = dir.path().join(format!("{fmt}.npz"));
            let mut args = vec!["convert", input, "--to", fmt, "--force", "--allow-fill"];
            if fmt != "ell" {
                args.pop();
            }
            let mut a = args.clone();
            a.extend(["-o", spb.to_str().unwrap()]);
            ok(&a);
            let mut a = args.clone();
            a.extend(["-o", npz.to_str().unwrap()]);
            ok(&a);
            let c = Command::new(&py)
                .arg(root().join("scripts/scipy_crosscheck.py"))
                .args(["spb", spb.to_str().unwrap(), npz.to_str().unwrap()])
                .output()
                .expect("python runs");
            assert!(
                c.status.success(),
                "{input} {fmt}: {}{}",
                stdout(&c),
                stderr(&c)
            );
        }
    }
}

#[test]
fn mtx_spb_npz_round_trip_equals_mtx_npz_for_every_format_and_matrix() {
    let dir = tmp();
    for path in real_matrices() {
        let m = path.to_str().unwrap();
        for fmt in ["coo", "csr", "ell", "hyb", "jds", "sell", "csc"] {
            let direct = dir.path().join("direct.npz");
            let spb = dir.path().join("via.spb");
            let via = dir.path().join("via.npz");
            let base = ["--to", fmt, "--force", "--allow-fill"];
            let run = |input: &str, out: &Path, extra: &[&str]| {
                let mut a = vec!["convert", input];
                a.extend(extra);
                a.extend(["-o", out.to_str().unwrap()]);
                let o = st(&a);
                assert!(o.status.success(), "{a:?}: {}", stderr(&o));
            };
            let mut base: Vec<&str> = if fmt == "ell" {
                base.to_vec()
            } else {
                base[..3].to_vec()
            };
            base.extend(read_flags(&path));
            if fmt == "ell" {
                // ELL pads every row to the longest: arrow (one row of 46,500) would need
                // 2.2e9 slots. The refusal must be clear, not a crash.
                let mut a = vec!["convert", m];
                a.extend(&base);
                a.extend(["-o", direct.to_str().unwrap()]);
                let o = st(&a);
                if !o.status.success() {
                    assert_eq!(o.status.code(), Some(1), "{m}: {}", stderr(&o));
                    assert!(m.contains("arrow"), "{m}: {}", stderr(&o));
                    continue;
                }
            }
            run(m, &direct, &base);
            run(m, &spb, &base);
            run(spb.to_str().unwrap(), &via, &base);
            assert_eq!(
                fs::read(&direct).unwrap(),
                fs::read(&via).unwrap(),
                "{m} {fmt}"
            );
        }
    }
}

#[test]
fn spb_info_json_for_each_format() {
    let dir = tmp();
    for fmt in ["coo", "csr", "ell", "hyb", "jds", "sell", "csc"] {
        let spb = dir.path().join(format!("C-{fmt}.spb"));
        let mut a = vec![
            "convert",
            "fixtures/matrices/seed/C.mtx",
            "--to",
            fmt,
            "-o",
            spb.to_str().unwrap(),
        ];
        if fmt == "hyb" {
            a.extend(["--hyb-width", "2"]);
        }
        if fmt == "sell" {
            a.extend(["--slice", "2", "--sigma", "4"]);
        }
        ok(&a);
        let out = ok(&["info", spb.to_str().unwrap(), "--json"]);
        let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["path"] = serde_json::Value::String(format!("C-{fmt}.spb"));
        insta::assert_json_snapshot!(format!("info_spb_{fmt}"), v);
    }
}

/// A part of an error line (split at `: `, at least 12 characters) that
/// appears again inside another part: an error whose cause is printed by itself and again as
/// its source.
fn repeated_part(err: &str) -> Option<String> {
    let parts: Vec<&str> = err.trim().split(": ").filter(|p| p.len() >= 12).collect();
    for (i, p) in parts.iter().enumerate() {
        for q in &parts[i + 1..] {
            if p.contains(q) || q.contains(p) {
                return Some(if p.len() < q.len() { p } else { q }.to_string());
            }
        }
    }
    None
}

#[test]
fn repeated_part_finds_repeats() {
    assert_eq!(
        repeated_part(
            "error: a.npz: array `indptr` ends at 99, expected 3: ends at 99, expected 3"
        ),
        Some("ends at 99, expected 3".into())
    );
    assert_eq!(
        repeated_part("error: a.mtx:3: index 0 is out of range"),
        None
    );
}

#[test]
fn malformed_corpus_fails_cleanly() {
    let bad = root().join("fixtures/bad");
    // (file, extra flags, expected substring); EXPECTED-flags.tsv lists files
    // that are valid without their flags (e.g. values overflowing f32).
    let mut expected: Vec<(String, Vec<String>, String)> = Vec::new();
    for tsv in ["EXPECTED.tsv", "EXPECTED-spb.tsv", "EXPECTED-flags.tsv"] {
        for line in fs::read_to_string(bad.join(tsv)).unwrap().lines() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            let (f, flags, want) = match cols[..] {
                [f, want] => (f, "", want),
                [f, flags, want] => (f, flags, want),
                _ => panic!("{tsv}: bad line {line:?}"),
            };
            let flags = flags.split_whitespace().map(str::to_string).collect();
            expected.push((f.to_string(), flags, want.to_string()));
        }
    }
    assert!(expected.len() >= 60, "corpus has {} files", expected.len());
    let dir = tmp();
    let mut failures = Vec::new();
    for (file, flags, want) in &expected {
        let path = format!("fixtures/bad/{file}");
        let out = dir.path().join("out.npz");
        let mut args = vec!["convert", &path, "--to", "csr", "-o", out.to_str().unwrap()];
        args.extend(flags.iter().map(String::as_str));
        if !flags.is_empty() {
            // Valid without the flags: the flags are what makes it fail.
            let without = dir.path().join("without.npz");
            let o = st(&[
                "convert",
                &path,
                "--to",
                "csr",
                "-o",
                without.to_str().unwrap(),
            ]);
            if !o.status.success() {
                failures.push(format!("{file}: fails without {flags:?}: {}", stderr(&o)));
            }
            let _ = fs::remove_file(&without);
        }
        let o = st(&args);
        let err = stderr(&o);
        let code = o.status.code();
        let mut why = Vec::new();
        if code != Some(1) {
            why.push(format!("exit {code:?}"));
        }
        if err.contains("panicked") {
            why.push("panicked".into());
        }
        if !err.contains(file.as_str()) {
            why.push("file not named".into());
        }
        if !err.contains(want.as_str()) {
            why.push(format!("no `{want}`"));
        }
        let text = file.starts_with("mm-") && !file.ends_with(".gz");
        let no_line = [
            "mm-empty.mtx",
            "mm-binary-garbage.mtx",
            "mm-git-lfs-pointer.mtx",
            "mm-nul-byte.mtx",
        ];
        if text && !no_line.contains(&file.as_str()) && !err.contains(&format!("{file}:")) {
            why.push("no line number".into());
        }
        if err.trim().lines().count() != 1 {
            why.push("not one line".into());
        }
        if let Some(part) = repeated_part(&err) {
            why.push(format!("says `{part}` twice"));
        }
        if out.exists() {
            why.push("output created".into());
        }
        if fs::read_dir(dir.path()).unwrap().count() != 0 {
            why.push("temporary file left".into());
        }
        if !why.is_empty() {
            failures.push(format!(
                "{file}: {} -- stderr: {}",
                why.join(", "),
                err.trim()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        expected.len(),
        failures.join("\n")
    );
}

#[test]
fn existing_output_is_kept_without_force() {
    let dir = tmp();
    let out = dir.path().join("out.npz");
    fs::write(&out, b"precious").unwrap();
    let o = st(&[
        "convert",
        "fixtures/matrices/seed/B.mtx",
        "--to",
        "csr",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--force"));
    assert_eq!(fs::read(&out).unwrap(), b"precious");
    ok(&[
        "convert",
        "fixtures/matrices/seed/B.mtx",
        "--to",
        "csr",
        "-o",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert_ne!(fs::read(&out).unwrap(), b"precious");
}

#[test]
fn failed_conversion_leaves_directory_unchanged() {
    let dir = tmp();
    let out = dir.path().join("out.npz");
    // Width 1 is smaller than the longest row of B: an error, and nothing written.
    let o = st(&[
        "convert",
        "fixtures/matrices/seed/B.mtx",
        "--to",
        "ell",
        "--ell-width",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).to_lowercase().contains("hyb"),
        "suggests HYB: {}",
        stderr(&o)
    );
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn write_failure_midway_is_an_error_and_leaves_nothing() {
    // RLIMIT_FSIZE makes writes past ~64 KB fail (EFBIG) the way a full disk
    // makes them fail (ENOSPC): the error must surface with exit 1, OUT must
    // not appear, and the temporary file must be removed.
    for ext in ["mtx", "npz", "spb"] {
        let dir = tmp();
        let out = dir.path().join(format!("big.{ext}"));
        let script = format!(
            "trap '' XFSZ; ulimit -f 128; exec \"$0\" gen uniform --rows 40000 --nnz-per-row 10 -o '{}'",
            out.display()
        );
        let o = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .arg(env!("CARGO_BIN_EXE_sparsetool"))
            .output()
            .expect("sh runs");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{ext}: {err}");
        assert!(err.contains("cannot write"), "{ext}: {err}");
        assert!(!err.contains("panicked"), "{ext}: {err}");
        // One clean error line after `gen`'s summary: nothing from a
        // writer's drop (the zip writer used to append
        // `ZipWriter::drop: failed to finalize ...`).
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| !l.starts_with("generated "))
            .collect();
        assert_eq!(lines.len(), 1, "{ext}: {err}");
        assert!(lines[0].starts_with("error: "), "{ext}: {err}");
        assert!(
            !err.contains("ZipWriter") && !err.contains("Os {"),
            "{ext}: {err}"
        );
        let left = entries(dir.path());
        assert!(left.is_empty(), "{ext}: left {left:?}");
    }
}

/// SIGINT, SIGTERM or SIGHUP while `convert -` is certainly running: its
/// standard input is a pipe the test keeps open, so it is still reading when
/// the signal comes.
#[test]
fn signals_while_converting_exit_130_and_leave_no_files() {
    for signal in ["INT", "TERM", "HUP"] {
        interrupted_convert_leaves_nothing(signal);
    }
}

fn interrupted_convert_leaves_nothing(signal: &str) {
    use std::io::Write;
    use std::process::Stdio;
    let outdir = tmp();
    let out = outdir.path().join("out.npz");
    let mut child = Command::new(env!("CARGO_BIN_EXE_sparsetool"))
        .args(["convert", "-", "--to", "csr", "-o", out.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut input = child.stdin.take().expect("stdin");
    // Far more than a pipe holds (64 KiB): when the writes return, the
    // process has read most of it, so it is past installing its handler
    // (the first thing it does) and waits for the rest, which never comes.
    let declared = 400_000;
    let mut text = format!("%%MatrixMarket matrix coordinate real general\n1000 1000 {declared}\n");
    for k in 0..declared / 2 {
        text.push_str(&format!("{} {} 1.5\n", k % 1000 + 1, k % 997 + 1));
    }
    input
        .write_all(text.as_bytes())
        .expect("the process reads its input");
    let pid = child.id().to_string();
    let killed = Command::new("kill")
        .args([format!("-{signal}").as_str(), &pid])
        .status();
    assert!(killed.expect("kill runs").success());
    let o = child.wait_with_output().expect("wait");
    drop(input);
    assert_eq!(o.status.code(), Some(130), "SIG{signal}: {}", stderr(&o));
    has(&stderr(&o), "interrupted: no output written");
    let left = entries(outdir.path());
    assert!(
        left.is_empty(),
        "SIG{signal}: interrupted run left {left:?}"
    );
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    let m = "fixtures/matrices/seed/B.mtx";
    for args in [
        vec![],
        vec!["--bogus"],
        vec!["frobnicate"],
        vec!["convert", m, "--to", "nope", "-o", "x.npz"],
        vec!["convert", m, "--to", "csr"],
        vec!["bench", m, "--reps", "-3"],
        vec!["spmv", m, "--dtype", "f16"],
    ] {
        let o = st(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("error") || stderr(&o).contains("Usage"),
            "{args:?}"
        );
        assert!(stdout(&o).is_empty(), "{args:?}: usage errors go to stderr");
    }
    for args in [vec!["--help"], vec!["--version"], vec!["convert", "--help"]] {
        let o = st(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(!stdout(&o).is_empty(), "{args:?}");
    }
    assert!(
        ok(&["--help"]).contains("2 environment"),
        "--help states the exit codes"
    );
}

#[test]
fn bench_without_device_flag_uses_the_gpu_or_says_it_falls_back() {
    let o = st(&[
        "bench",
        "fixtures/matrices/seed/B.mtx",
        "--reps",
        "2",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let device = v["device"].as_str().expect("device").to_string();
    if stderr(&o).contains("note: no CUDA device") {
        assert!(stderr(&o).contains("--device cpu"), "{}", stderr(&o));
        assert!(device.starts_with("cpu"), "fell back to the CPU: {device}");
    } else {
        assert!(!device.starts_with("cpu"), "a GPU was found: {device}");
    }
}

#[test]
fn spmv_multiplies_in_the_stored_format_by_default() {
    let dir = tmp();
    let ell = dir.path().join("b.spb");
    let m = "fixtures/matrices/seed/B.mtx";
    ok(&["convert", m, "--to", "ell", "-o", ell.to_str().unwrap()]);
    let line = |args: &[&str]| stderr(&st(args));
    assert!(line(&["spmv", ell.to_str().unwrap()]).starts_with("spmv ell on cpu"));
    assert!(line(&["spmv", m]).starts_with("spmv csr on cpu"));
    assert!(
        line(&["spmv", ell.to_str().unwrap(), "--format", "sell"]).starts_with("spmv sell on cpu")
    );
    // Same y whatever the format.
    let norm = |s: String| {
        s.rsplit_once("||y||_2 = ")
            .map(|(_, n)| n.trim().to_string())
    };
    assert_eq!(
        norm(line(&["spmv", ell.to_str().unwrap()])),
        norm(line(&["spmv", m]))
    );
}

#[test]
fn spmv_x_choices() {
    let dir = tmp();
    let m = "fixtures/matrices/seed/B.mtx";
    let norm = |args: &[&str]| {
        let o = st(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        stderr(&o)
            .rsplit_once("||y||_2 = ")
            .map(|(_, n)| n.trim().to_string())
            .expect("a norm")
    };
    assert_eq!(norm(&["spmv", m, "--x", "zeros"]), "0.000000e0");
    // A Matrix Market vector of ones equals `--x ones`.
    let v = dir.path().join("ones.mtx");
    fs::write(
        &v,
        "%%MatrixMarket matrix array real general\n4 1\n1\n1\n1\n1\n",
    )
    .unwrap();
    assert_eq!(
        norm(&["spmv", m, "--x", v.to_str().unwrap()]),
        norm(&["spmv", m, "--x", "ones"])
    );
    // Seeds: the same seed, the same x; another seed, another x.
    let r42 = norm(&["spmv", m, "--x", "random"]);
    assert_eq!(r42, norm(&["spmv", m, "--x", "random", "--seed", "42"]));
    assert_ne!(r42, norm(&["spmv", m, "--x", "random", "--seed", "7"]));
    for bad in ["zeross", "Cargo.toml"] {
        let o = st(&["spmv", m, "--x", bad]);
        assert_eq!(o.status.code(), Some(1), "{bad}");
        let err = stderr(&o);
        assert!(
            err.contains("zeros") && err.contains(".mtx"),
            "{bad}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{bad}: {err}");
    }
    let wrong = dir.path().join("three.mtx");
    fs::write(
        &wrong,
        "%%MatrixMarket matrix array real general\n3 1\n1\n1\n1\n",
    )
    .unwrap();
    let o = st(&["spmv", m, "--x", wrong.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("3 entries"), "{}", stderr(&o));
}

#[test]
fn gpu_without_device_exits_2() {
    let o = st(&["spmv", "fixtures/matrices/seed/B.mtx", "--device", "gpu"]);
    if o.status.success() {
        println!("a GPU is present: nothing to check");
        return;
    }
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
    let o = st(&["bench", "fixtures/matrices/seed/B.mtx", "--device", "gpu"]);
    assert_eq!(o.status.code(), Some(2));
    let o = st(&["analyze", "fixtures/matrices/seed/B.mtx", "--measure"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
}

#[test]
fn cpu_spmv_and_bench_run() {
    let dir = tmp();
    let y = dir.path().join("y.npy");
    ok(&[
        "spmv",
        "fixtures/matrices/seed/B.mtx",
        "--format",
        "sell",
        "-o",
        y.to_str().unwrap(),
    ]);
    let bytes = fs::read(&y).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    // B * ones = row sums [8, 17, 10, 6]
    let vals: Vec<f64> = bytes[bytes.len() - 32..]
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(vals, vec![8.0, 17.0, 10.0, 6.0]);
    let out = ok(&[
        "bench",
        "fixtures/matrices/real/jagmesh7.mtx",
        "--device",
        "cpu",
        "--reps",
        "3",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), sparsetool_formats::FormatKind::ALL.len());
    assert!(results.iter().all(|r| r["ok"] == true), "{out}");
}

#[test]
fn cpu_bench_sweep_times_every_candidate() {
    let out = ok(&[
        "bench",
        "fixtures/matrices/real/jagmesh7.mtx",
        "--device",
        "cpu",
        "--reps",
        "2",
        "--sweep",
        "--json",
        "--dtype",
        "f64",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cands = v["features"]["candidates"].as_array().unwrap();
    assert!(cands.len() >= 8, "{}", cands.len());
    assert_eq!(v["features"]["value_bytes"], 8);
    let results = v["results"].as_array().unwrap();
    // every candidate is timed once on the CPU, under its label
    let mut timed: Vec<&str> = results
        .iter()
        .map(|r| r["config"].as_str().unwrap())
        .collect();
    let mut want: Vec<&str> = cands.iter().map(|c| c["label"].as_str().unwrap()).collect();
    timed.sort_unstable();
    want.sort_unstable();
    assert_eq!(timed, want);
    assert!(results.iter().all(|r| r["ok"] == true), "{out}");
    // the work counted by analyze is the bytes the bench model counts
    for r in results {
        let c = cands.iter().find(|c| c["label"] == r["config"]).unwrap();
        let w = &c["work"];
        let model = w["matrix_bytes"].as_u64().unwrap() + w["vector_bytes"].as_u64().unwrap();
        assert_eq!(r["bytes"].as_u64().unwrap(), model, "{}", r["config"]);
    }
}

#[test]
fn analyze_json_and_plot() {
    let dir = tmp();
    let png = dir.path().join("p.png");
    let out = ok(&[
        "analyze",
        "fixtures/matrices/real/memplus.mtx.gz",
        "--json",
        "--plot",
        png.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for key in [
        "nrows",
        "ncols",
        "nnz",
        "empty_rows",
        "row_length",
        "histogram",
        "formats",
        "recommendation",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(&fs::read(&png).unwrap()[1..4], b"PNG");
}

#[test]
fn lenient_reads_the_real_quirk_files() {
    for (f, nrows, nnz) in [
        ("ca-Erdos992.mtx", 6100, 15030),
        ("soc-wiki-Vote.mtx", 889, 5828),
        ("netscience.mtx", 379, 1828),
    ] {
        let path = format!("fixtures/matrices/quirks/{f}");
        let o = st(&["analyze", &path, "--json"]);
        assert_eq!(o.status.code(), Some(1), "{f} must fail without --lenient");
        assert!(stderr(&o).contains("--lenient"), "{f}: {}", stderr(&o));
        let o = st(&["analyze", &path, "--json", "--lenient"]);
        assert!(o.status.success(), "{f}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("warning"),
            "{f}: recoveries are reported"
        );
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["nrows"], nrows, "{f}");
        assert_eq!(v["nnz"], nnz, "{f}");
    }
}

#[test]
fn gen_is_deterministic_across_thread_counts() {
    let dir = tmp();
    let a = dir.path().join("a.spb");
    let b = dir.path().join("b.spb");
    for (out, threads) in [(&a, "1"), (&b, "2")] {
        let o = Command::new(env!("CARGO_BIN_EXE_sparsetool"))
            .args([
                "gen",
                "powerlaw",
                "--rows",
                "20000",
                "--nnz-per-row",
                "8",
                "--seed",
                "3",
                "-o",
                out.to_str().unwrap(),
            ])
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(fs::read(&a).unwrap(), fs::read(&b).unwrap());
}

#[test]
fn timings_go_to_stderr() {
    let dir = tmp();
    let out = dir.path().join("o.npz");
    let o = st(&[
        "convert",
        "fixtures/matrices/seed/A.mtx",
        "--to",
        "coo",
        "-o",
        out.to_str().unwrap(),
        "--timings",
    ]);
    assert!(o.status.success());
    let e = stderr(&o);
    for phase in ["read:", "convert:", "write:"] {
        assert!(
            e.lines().any(|l| l.starts_with(phase) && l.ends_with(" s")),
            "{e}"
        );
    }
    assert!(stdout(&o).is_empty());
}

#[test]
fn stdin_is_read_as_matrix_market() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_sparsetool"))
        .args(["info", "-", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&fs::read(root().join("fixtures/matrices/seed/C.mtx")).unwrap())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["nrows"], 4);
    assert_eq!(v["ncols"], 5);
}

/// `convert --to csc` into every container holds seed C's CSC arrays
/// (fixtures/src/seed.rs); SciPy reads the `.npz` as a canonical csc_matrix
/// equal to the Matrix Market file.
#[test]
fn convert_to_csc_every_container() {
    use sparsetool_formats::io::{load, Input, LoadOptions};
    use sparsetool_formats::AnyMatrix;
    let dir = tmp();
    let seed = &sparsetool_fixtures::seed::C;
    let widen = |v: &[i32]| v.iter().map(|&x| i64::from(x)).collect::<Vec<_>>();
    for ext in ["npz", "spb"] {
        let out = dir.path().join(format!("C.{ext}"));
        ok(&[
            "convert",
            "fixtures/matrices/seed/C.mtx",
            "--to",
            "csc",
            "-o",
            out.to_str().unwrap(),
        ]);
        let m = load::<f64, i32>(&Input::open(&out).unwrap(), &LoadOptions::default())
            .unwrap()
            .matrix;
        let AnyMatrix::Csc(m) = m else {
            panic!("{ext}: not csc: {m:?}")
        };
        assert_eq!(widen(m.col_ptr()), seed.csc_col_ptr, "{ext}");
        assert_eq!(widen(m.row_idx()), seed.csc_row, "{ext}");
        assert_eq!(m.values(), seed.csc_val, "{ext}");
    }
    // .mtx from CSC: the same entries as the input, row by row.
    let mtx = dir.path().join("C.mtx");
    ok(&[
        "convert",
        dir.path().join("C.spb").to_str().unwrap(),
        "--to",
        "csc",
        "-o",
        mtx.to_str().unwrap(),
    ]);
    let text = fs::read_to_string(&mtx).unwrap();
    assert!(text.contains("from csc storage"), "{text}");
    let back = dir.path().join("back.npz");
    ok(&[
        "convert",
        mtx.to_str().unwrap(),
        "--to",
        "csr",
        "-o",
        back.to_str().unwrap(),
    ]);
    let AnyMatrix::Csr(b) = sparsetool_formats::npz::read_npz::<f64, i32>(&back).unwrap() else {
        panic!("not csr")
    };
    assert_eq!(widen(b.row_ptr()), seed.csr_row_ptr);
    assert_eq!(b.values(), seed.csr_val);
    let Some(py) = python() else { return };
    let script = r#"
import sys, numpy as np, scipy.io as sio, scipy.sparse as sp
m = sp.load_npz(sys.argv[1])
assert m.format == 'csc' and m.has_canonical_format, m.format
want = sio.mmread(sys.argv[2]).toarray()
assert np.array_equal(m.toarray(), want)
print('ok')
"#;
    let o = Command::new(&py)
        .args(["-c", script])
        .arg(dir.path().join("C.npz"))
        .arg(root().join("fixtures/matrices/seed/C.mtx"))
        .output()
        .expect("python runs");
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
}

/// The `.npy` vector `spmv -o` wrote.
fn read_y(path: &Path) -> Vec<f64> {
    sparsetool_formats::npz::read_npy::<f64>(path).unwrap()
}

/// `spmv` on a CSC file equals the CSR result; `spmv --transpose` equals
/// `Aᵀ x` computed from the seed example's dense matrix, in every format
/// and for a rectangular matrix; x has one entry per row.
#[test]
fn spmv_csc_and_transpose() {
    let dir = tmp();
    let m = "fixtures/matrices/seed/C.mtx"; // 4 x 5
    let seed = &sparsetool_fixtures::seed::C;
    let csc = dir.path().join("C.spb");
    ok(&["convert", m, "--to", "csc", "-o", csc.to_str().unwrap()]);
    let y = |args: &[&str]| {
        let out = dir.path().join("y.npy");
        let mut a = args.to_vec();
        a.extend(["--force", "-o", out.to_str().unwrap()]);
        ok(&a);
        read_y(&out)
    };
    // x = ones: A x is the row sums.
    let y_csc = y(&["spmv", csc.to_str().unwrap()]);
    let y_csr = y(&["spmv", m, "--format", "csr"]);
    assert_eq!(y_csc, y_csr);
    let row_sums: Vec<f64> = seed.dense.iter().map(|r| r.iter().sum()).collect();
    assert_eq!(y_csc, row_sums);
    // A^T x with x = [1, 2, 3, 4] (one entry per row), from the dense matrix.
    let x = dir.path().join("x.mtx");
    fs::write(
        &x,
        "%%MatrixMarket matrix array real general\n4 1\n1\n2\n3\n4\n",
    )
    .unwrap();
    let want: Vec<f64> = (0..seed.ncols)
        .map(|j| {
            (0..seed.nrows)
                .map(|i| seed.dense[i][j] * (i + 1) as f64)
                .sum()
        })
        .collect();
    for fmt in ["coo", "csr", "ell", "hyb", "jds", "sell", "csc"] {
        let got = y(&[
            "spmv",
            m,
            "--format",
            fmt,
            "--transpose",
            "--x",
            x.to_str().unwrap(),
        ]);
        assert_eq!(got, want, "{fmt}");
    }
    let got = y(&[
        "spmv",
        csc.to_str().unwrap(),
        "--transpose",
        "--x",
        x.to_str().unwrap(),
    ]);
    assert_eq!(got, want);
    // x must have nrows entries with --transpose: 5 entries is a usage error.
    let x5 = dir.path().join("x5.mtx");
    fs::write(
        &x5,
        "%%MatrixMarket matrix array real general\n5 1\n1\n2\n3\n4\n5\n",
    )
    .unwrap();
    let o = st(&["spmv", m, "--transpose", "--x", x5.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("--transpose"), "{}", stderr(&o));
    let e = stderr(&st(&["spmv", m, "--transpose"]));
    assert!(e.starts_with("spmv (y = A^T x) csr on cpu: 4 x 5"), "{e}");
}

/// `bench --transpose` on the CPU: every layout (of Aᵀ) and the CSR
/// scatter baseline agree with the reference; the JSON says `transpose`.
#[test]
fn cpu_bench_transpose() {
    let out = ok(&[
        "bench",
        "fixtures/matrices/real/jagmesh7.mtx",
        "--device",
        "cpu",
        "--reps",
        "3",
        "--transpose",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["transpose"], true, "{out}");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), sparsetool_formats::FormatKind::ALL.len() + 1);
    assert!(results.iter().all(|r| r["ok"] == true), "{out}");
    assert!(results
        .iter()
        .any(|r| r["kernel"] == "cpu-csr-scatter" && r["baseline"] == true));
    let plain = ok(&[
        "bench",
        "fixtures/matrices/seed/B.mtx",
        "--device",
        "cpu",
        "--reps",
        "1",
        "--json",
    ]);
    assert!(!plain.contains("transpose"), "{plain}");
}

#[test]
fn control_characters_in_names_and_data_are_escaped() {
    let dir = tmp();
    // A file name holding an escape sequence and a newline, and a data line
    // holding an escape sequence.
    let name = "bad\x1b[31m\nname.mtx";
    let path = dir.path().join(name);
    fs::write(
        &path,
        "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 \x1b[2J\n",
    )
    .unwrap();
    let out = dir.path().join("out.npz");
    let o = st(&[
        "convert",
        path.to_str().unwrap(),
        "--to",
        "csr",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains('\x1b'), "raw escape printed: {err:?}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(err.contains(r"bad\x1b[31m\nname.mtx:3:"), "{err:?}");
    assert!(err.contains(r"\x1b[2J"), "{err:?}");
    // A missing file with such a name, and an output path with one.
    let o = st(&["info", &format!("{}/no\x07such.mtx", dir.path().display())]);
    assert!(stderr(&o).contains(r"no\x07such.mtx"), "{:?}", stderr(&o));
    let o = st(&[
        "convert",
        "fixtures/bad/mm-empty.mtx",
        "--to",
        "csr",
        "-o",
        "/nonexistent\x1b/x.npz",
    ]);
    let err = stderr(&o);
    assert!(!err.contains('\x1b') && err.contains(r"\x1b"), "{err:?}");
}

#[test]
fn symlink_loop_is_reported_as_such() {
    let dir = tmp();
    let (a, b) = (dir.path().join("a.mtx"), dir.path().join("b.mtx"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    for cmd in ["info", "analyze"] {
        let o = st(&[cmd, a.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.to_lowercase()
                .contains("too many levels of symbolic links"),
            "{cmd}: {err}"
        );
        assert!(!err.contains("no such file"), "{cmd}: {err}");
    }
}

/// Runs `convert - -o OUT` with a standard input that never ends: it
/// returns only if the output is refused before reading.
fn convert_stdin_that_never_ends(out: &Path) -> std::process::Output {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_sparsetool"))
        .args(["convert", "-", "--to", "csr", "-o", out.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed().as_secs() > 20 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("convert waited for its input: the output directory was not checked first");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn unwritable_output_directory_fails_before_reading() {
    // /proc refuses new files even to root.
    let o = convert_stdin_that_never_ends(Path::new("/proc/out.npz"));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write to directory /proc"), "{err}");
    // A read-only directory: root bypasses its permissions.
    use std::os::unix::fs::PermissionsExt;
    let dir = tmp();
    let ro = dir.path().join("ro");
    fs::create_dir(&ro).unwrap();
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o555)).unwrap();
    if fs::write(ro.join("probe"), b"").is_ok() {
        eprintln!("SKIPPED: read-only directory case (running as root, permissions are bypassed)");
        return;
    }
    let o = convert_stdin_that_never_ends(&ro.join("x.npz"));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write to directory"), "{err}");
    assert!(err.contains("ermission denied"), "{err}");
    fs::set_permissions(&ro, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn lenient_accepts_nan_in_npz_and_spb_with_a_warning() {
    for (file, warning) in [
        (
            "fixtures/bad/npz-nan-data.npz",
            "warning: fixtures/bad/npz-nan-data.npz: array `data`: NaN or infinite values accepted (first at position 1)",
        ),
        (
            "fixtures/bad/spb-nan-value.spb",
            "warning: fixtures/bad/spb-nan-value.spb: section `values`: NaN or infinite values accepted (first at position 1)",
        ),
    ] {
        let dir = tmp();
        let out = dir.path().join("out.npz");
        let o = st(&["convert", file, "--to", "csr", "-o", out.to_str().unwrap(), "--lenient"]);
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        assert!(stderr(&o).contains(warning), "{file}: {}", stderr(&o));
        // The NaN is kept, and the written file is refused in strict mode.
        let o = st(&["info", out.to_str().unwrap()]);
        assert!(o.status.success(), "info reads headers only: {}", stderr(&o));
        let again = dir.path().join("again.npz");
        let o = st(&["convert", out.to_str().unwrap(), "--to", "csr", "-o", again.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("NaN"), "{}", stderr(&o));
    }
}

/// Runs the binary with `args` in `dir`.
fn st_in(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sparsetool"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("sparsetool runs")
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn seed(name: &str) -> String {
    root()
        .join("fixtures/matrices/seed")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn info_verifies_spb_checksums_and_verify_loads_everything() {
    let dir = tmp();
    let spb = dir.path().join("a.spb");
    let spb_s = spb.to_str().unwrap();
    ok(&["convert", &seed("A.mtx"), "--to", "csr", "-o", spb_s]);
    let o = st(&["info", spb_s, "--verify"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!("{spb_s}: ok (spb csr, 3 x 3, 5 entries, checksums verified)\n")
    );
    let o = st(&["info", &seed("A.mtx"), "--verify"]);
    assert_eq!(
        stdout(&o),
        format!("{}: ok (mtx, 3 x 3, 5 entries)\n", seed("A.mtx"))
    );
    // Flip one byte of the value 5.0 (the last entry).
    let mut bytes = fs::read(&spb).unwrap();
    let five = 5.0f64.to_le_bytes();
    let at = bytes
        .windows(8)
        .position(|w| w == five)
        .expect("value 5.0 stored");
    bytes[at + 7] ^= 0x01;
    fs::write(&spb, &bytes).unwrap();
    for args in [vec!["info", spb_s], vec!["info", spb_s, "--verify"]] {
        let o = st(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?} accepted a flipped byte");
        assert!(stderr(&o).starts_with("error: "), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("a.spb"),
            "names the file: {}",
            stderr(&o)
        );
        assert!(stdout(&o).is_empty());
    }
    // Without checksums the structure is still fine: the flip is in a value.
    let o = st(&["info", spb_s, "--no-verify-checksums"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = st(&["info", spb_s, "--verify", "--no-verify-checksums"]);
    has(&stdout(&o), "checksums not verified");
}

#[test]
fn info_json_has_the_same_keys_for_every_container() {
    let dir = tmp();
    let spb = dir.path().join("a.spb");
    let npz = dir.path().join("a.npz");
    ok(&[
        "convert",
        &seed("A.mtx"),
        "--to",
        "sell",
        "-o",
        spb.to_str().unwrap(),
    ]);
    ok(&[
        "convert",
        &seed("A.mtx"),
        "--to",
        "csr",
        "-o",
        npz.to_str().unwrap(),
    ]);
    let keys = |f: &str| -> Vec<String> {
        let v = json(&ok(&["info", f, "--json"]));
        v.as_object().unwrap().keys().cloned().collect()
    };
    let mtx = keys("fixtures/matrices/real/bcsstk13.mtx.gz");
    assert_eq!(mtx, keys(spb.to_str().unwrap()));
    assert_eq!(mtx, keys(npz.to_str().unwrap()));
    for k in ["nnz_expanded_max", "density", "mean_row_length"] {
        assert!(mtx.contains(&k.to_string()), "{k} missing: {mtx:?}");
    }
    let v = json(&ok(&["info", &seed("A.mtx"), "--json"]));
    assert_eq!(v["nnz_expanded_max"], 5);
    assert!((v["density"].as_f64().unwrap() - 5.0 / 9.0).abs() < 1e-12);
    assert!((v["mean_row_length"].as_f64().unwrap() - 5.0 / 3.0).abs() < 1e-12);
}

#[test]
fn spmv_writes_y_by_extension_and_refuses_others() {
    let dir = tmp();
    let o = st_in(dir.path(), &["spmv", &seed("A.mtx"), "-o", "y.mtx"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = fs::read_to_string(dir.path().join("y.mtx")).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('%')).collect();
    assert!(
        text.starts_with("%%MatrixMarket matrix array real general\n"),
        "{text}"
    );
    assert_eq!(lines[0], "3 1");
    let y: Vec<f64> = lines[1..].iter().map(|l| l.parse().unwrap()).collect();
    assert_eq!(y, vec![3.0, 3.0, 9.0], "row sums of A");
    // y.mtx is a vector `--x` reads back.
    let o = st_in(
        dir.path(),
        &["spmv", &seed("A.mtx"), "--x", "y.mtx", "--json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    ok(&[
        "spmv",
        &seed("A.mtx"),
        "-o",
        dir.path().join("y.npy").to_str().unwrap(),
    ]);
    assert!(fs::read(dir.path().join("y.npy"))
        .unwrap()
        .starts_with(b"\x93NUMPY"));
    for bad in ["y.txt", "y.npz", "y"] {
        let o = st_in(dir.path(), &["spmv", &seed("A.mtx"), "-o", bad]);
        assert_eq!(o.status.code(), Some(1), "{bad}");
        assert!(stderr(&o).contains(".mtx or .npy"), "{}", stderr(&o));
        assert!(!dir.path().join(bad).exists());
    }
    // --output-format overrides the extension
    let o = st_in(
        dir.path(),
        &[
            "spmv",
            &seed("A.mtx"),
            "-o",
            "y.txt",
            "--output-format",
            "mtx",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(fs::read_to_string(dir.path().join("y.txt"))
        .unwrap()
        .starts_with("%%MatrixMarket matrix array"));
}

#[test]
fn ell_fill_names_the_flag_and_every_command_accepts_it() {
    let dir = tmp();
    let d = dir.path();
    // one dense row of 1100 in 1100 rows: ELL would be 1.21 M slots, > 3x fill
    let o = st_in(
        d,
        &["gen", "dense-row", "--rows", "1100", "-o", "m.mtx", "-q"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for args in [
        vec!["convert", "m.mtx", "--to", "ell", "-o", "e.spb"],
        vec!["spmv", "m.mtx", "--format", "ell"],
    ] {
        let o = st_in(d, &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&o).contains("--allow-fill"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    let o = st_in(
        d,
        &[
            "bench",
            "m.mtx",
            "--device",
            "cpu",
            "--formats",
            "ell",
            "--reps",
            "1",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "an empty table is not success");
    assert!(stderr(&o).contains("--allow-fill"), "{}", stderr(&o));
    let o = st_in(
        d,
        &[
            "convert",
            "m.mtx",
            "--to",
            "ell",
            "-o",
            "e.spb",
            "--allow-fill",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = st_in(d, &["spmv", "m.mtx", "--format", "ell", "--allow-fill"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // An ELL file is benched as ELL (its fill is already paid), with or without the flag.
    for extra in [vec![], vec!["--allow-fill"]] {
        let mut args = vec![
            "bench",
            "e.spb",
            "--device",
            "cpu",
            "--formats",
            "ell",
            "--reps",
            "1",
            "--json",
        ];
        args.extend(extra);
        let o = st_in(d, &args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let v = json(&stdout(&o));
        assert_eq!(v["results"][0]["kernel"], "cpu-ell", "{v}");
        assert_eq!(v["results"][0]["params"]["ell_width"], 1100);
    }
}

/// The `params` of kernel `k` in a `bench --json` object.
fn kernel_params(v: &serde_json::Value, k: &str) -> serde_json::Value {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kernel"] == k)
        .unwrap_or_else(|| panic!("{k} not timed: {v}"))["params"]
        .clone()
}

#[test]
fn bench_params_are_named_after_the_flags() {
    let v = json(&ok(&[
        "bench",
        &seed("A.mtx"),
        "--device",
        "cpu",
        "--reps",
        "1",
        "--formats",
        "ell,hyb,sell",
        "--json",
    ]));
    let params = |k: &str| kernel_params(&v, k);
    assert!(params("cpu-ell").get("ell_width").is_some(), "{v}");
    assert!(params("cpu-hyb").get("hyb_width").is_some(), "{v}");
    let sell = params("cpu-sell");
    assert!(
        sell.get("slice").is_some() && sell.get("sigma").is_some(),
        "{v}"
    );
    for r in v["results"].as_array().unwrap() {
        for bad in ["width", "slice_height"] {
            assert!(r["params"].get(bad).is_none(), "{bad} in {r}");
        }
    }
}

/// `bench` times HYB and SELL in the layout `convert` writes (seed A: HYB
/// at width 2 where CUSP's rule gives 0, SELL unsorted where the format's
/// default window is 32 * C), and a HYB or SELL file in its own layout.
#[test]
fn bench_times_the_layout_convert_writes() {
    let dir = tmp();
    let d = dir.path();
    let a = seed("A.mtx");
    let written = |to: &str, extra: &[&str]| {
        let out = d.join(format!("a-{to}{}.spb", extra.join("")));
        let out = out.to_str().unwrap().to_string();
        let mut args = vec!["convert", &a as &str, "--to", to, "-o", &out as &str];
        args.extend_from_slice(extra);
        ok(&args);
        let info = json(&ok(&["info", &out, "--json"]));
        (out, info["params"].clone())
    };
    let bench = |file: &str| {
        let v = json(&ok(&[
            "bench",
            file,
            "--device",
            "cpu",
            "--reps",
            "1",
            "--formats",
            "hyb,sell",
            "--json",
        ]));
        (kernel_params(&v, "cpu-hyb"), kernel_params(&v, "cpu-sell"))
    };
    let (_, hyb) = written("hyb", &[]);
    let (_, sell) = written("sell", &[]);
    let (bh, bs) = bench(&a);
    assert_eq!(bh["hyb_width"], hyb["hyb_width"], "{bh} {hyb}");
    assert_eq!(hyb["hyb_width"], 2);
    assert_eq!(
        (&bs["slice"], &bs["sigma"]),
        (&sell["slice"], &sell["sigma"])
    );
    assert_eq!(sell["sigma"], 1);
    // a stored layout is timed as it is
    let (file, stored) = written("sell", &["--sigma", "64"]);
    assert_eq!(stored["sigma"], 64);
    assert_eq!(bench(&file).1["sigma"], 64);
    let (file, _) = written("hyb", &["--hyb-width", "3"]);
    assert_eq!(bench(&file).0["hyb_width"], 3);
}

#[test]
fn precision_defaults_to_the_files_own() {
    let dir = tmp();
    let d = dir.path();
    let run = |args: &[&str]| {
        let o = st_in(d, args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        stdout(&o)
    };
    run(&[
        "convert",
        &seed("A.mtx"),
        "--to",
        "csr",
        "-o",
        "a32.spb",
        "--dtype",
        "f32",
    ]);
    run(&["convert", &seed("A.mtx"), "--to", "csr", "-o", "a64.npz"]);
    // f32 in, f32 out (it used to be upcast to f64)
    run(&["convert", "a32.spb", "--to", "sell", "-o", "b.npz"]);
    assert_eq!(
        json(&run(&["info", "b.npz", "--json"]))["value_dtype"],
        "float32"
    );
    assert_eq!(
        json(&run(&["info", "a64.npz", "--json"]))["value_dtype"],
        "float64"
    );
    // --dtype overrides
    run(&[
        "convert", "a32.spb", "--to", "csr", "-o", "c.spb", "--dtype", "F64",
    ]);
    assert_eq!(
        json(&run(&["info", "c.spb", "--json"]))["value_dtype"],
        "float64"
    );
    let bench = |f: &str| {
        json(&run(&[
            "bench",
            f,
            "--device",
            "cpu",
            "--reps",
            "1",
            "--formats",
            "csr",
            "--json",
        ]))["dtype"]
            .clone()
    };
    assert_eq!(bench(&seed("A.mtx")), "f64", "text .mtx is f64");
    assert_eq!(bench("a32.spb"), "f32");
    assert_eq!(json(&run(&["spmv", "a32.spb", "--json"]))["dtype"], "f32");
    assert_eq!(
        json(&run(&["spmv", &seed("A.mtx"), "--json"]))["dtype"],
        "f64"
    );
}

#[test]
fn format_flags_accept_both_spellings_and_any_case() {
    let dir = tmp();
    let d = dir.path();
    for args in [
        vec![
            "convert",
            &seed("A.mtx") as &str,
            "--format",
            "CSR",
            "-o",
            "a.npz",
        ],
        vec![
            "convert",
            &seed("A.mtx") as &str,
            "--to",
            "Sell",
            "-o",
            "b.npz",
            "--dtype",
            "F32",
        ],
        vec!["spmv", &seed("A.mtx") as &str, "--to", "ELL"],
        vec!["spmv", &seed("A.mtx") as &str, "--format", "jds"],
        vec![
            "bench",
            &seed("A.mtx") as &str,
            "--format",
            "CSR",
            "--device",
            "cpu",
            "--reps",
            "1",
        ],
    ] {
        let o = st_in(d, &args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    }
    // A misspelled flag gets the similar flag, not "use -- to pass it as a value".
    let o = st_in(
        d,
        &[
            "convert",
            &seed("A.mtx"),
            "--to",
            "ell",
            "--ell-widht",
            "3",
            "-o",
            "c.npz",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("'--ell-width'"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("\n\n\n"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("to pass"), "{}", stderr(&o));
    let o = st_in(d, &["info", &seed("A.mtx"), "--xyzzy"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!stderr(&o).contains("to pass"), "{}", stderr(&o));
}

#[test]
fn convert_and_gen_print_one_summary_line_or_json() {
    let dir = tmp();
    let d = dir.path();
    let o = st_in(
        d,
        &["convert", &seed("A.mtx"), "--to", "ell", "-o", "a.npz"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let bytes = fs::metadata(d.join("a.npz")).unwrap().len();
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "wrote a.npz (npz): ell, 3 x 3, 5 entries, f64, {bytes} bytes, "
        )),
        "{err}"
    );
    assert!(stdout(&o).is_empty());
    let o = st_in(d, &["gen", "banded", "--rows", "10", "-o", "g.mtx"]);
    assert!(
        stderr(&o).starts_with("generated banded, wrote g.mtx (mtx): csr, 10 x 10, "),
        "{}",
        stderr(&o)
    );
    // --json: one object on stdout, nothing on stderr
    let o = st_in(
        d,
        &[
            "convert",
            &seed("A.mtx"),
            "--to",
            "hyb",
            "-o",
            "b.spb",
            "--json",
        ],
    );
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    let v = json(&stdout(&o));
    assert_eq!(v["output"], "b.spb");
    assert_eq!(v["container"], "spb");
    assert_eq!(v["format"], "hyb");
    assert_eq!(v["nnz"], 5);
    assert_eq!(v["bytes"], fs::metadata(d.join("b.spb")).unwrap().len());
    for phase in ["read", "convert", "write"] {
        assert!(v["timings"][phase].is_number(), "{v}");
    }
    let v = json(&stdout(&st_in(
        d,
        &["gen", "uniform", "--rows", "20", "-o", "u.npz", "--json"],
    )));
    assert_eq!(v["kind"], "uniform");
    assert_eq!(v["nrows"], 20);
    assert!(v["timings"]["generate"].is_number(), "{v}");
    // --quiet: nothing but errors
    for args in [
        vec![
            "convert",
            &seed("A.mtx") as &str,
            "--to",
            "csr",
            "-o",
            "q.npz",
            "--timings",
            "-q",
        ],
        vec!["--quiet", "gen", "banded", "--rows", "10", "-o", "q.mtx"],
        vec!["spmv", &seed("A.mtx") as &str, "--quiet"],
        vec![
            "analyze",
            "fixtures/matrices/quirks/netscience.mtx",
            "--lenient",
            "--quiet",
        ],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_sparsetool"))
            .args(&args)
            .current_dir(if args[0] == "analyze" {
                root()
            } else {
                d.to_path_buf()
            })
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).is_empty(), "{args:?}: {}", stderr(&o));
    }
    let o = st_in(
        d,
        &["convert", "missing.mtx", "--to", "csr", "-o", "z.npz", "-q"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with("error: "),
        "errors still print under --quiet"
    );
}

#[test]
fn output_to_stdout_and_output_format() {
    let dir = tmp();
    let d = dir.path();
    let o = st_in(d, &["convert", &seed("A.mtx"), "--to", "csr", "-o", "-"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("%%MatrixMarket matrix coordinate real general\n"));
    assert!(stdout(&o).ends_with("\n3 3 5.0\n"), "{}", stdout(&o));
    let o = st_in(
        d,
        &[
            "convert",
            &seed("A.mtx"),
            "--to",
            "sell",
            "-o",
            "-",
            "--output-format",
            "npz",
        ],
    );
    assert!(o.stdout.starts_with(b"PK\x03\x04"), "npz on stdout");
    fs::write(d.join("from-stdout.npz"), &o.stdout).unwrap();
    assert_eq!(
        json(&stdout(&st_in(d, &["info", "from-stdout.npz", "--json"])))["format"],
        "sell"
    );
    let o = st_in(
        d,
        &[
            "gen",
            "banded",
            "--rows",
            "5",
            "-o",
            "-",
            "--output-format",
            "spb",
        ],
    );
    assert!(o.stdout.starts_with(b"SPBMTX"));
    // --output-format beats the extension for files
    let o = st_in(
        d,
        &[
            "convert",
            &seed("A.mtx"),
            "--to",
            "csr",
            "-o",
            "a.dat",
            "--output-format",
            "spb",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(fs::read(d.join("a.dat")).unwrap().starts_with(b"SPBMTX"));
    let o = st_in(d, &["spmv", &seed("A.mtx"), "-o", "-"]);
    assert_eq!(
        stdout(&o)
            .lines()
            .filter(|l| !l.starts_with('%'))
            .collect::<Vec<_>>(),
        ["3 1", "3e0", "3e0", "9e0"]
    );
    let o = st_in(
        d,
        &["spmv", &seed("A.mtx"), "-o", "-", "--output-format", "npy"],
    );
    assert!(o.stdout.starts_with(b"\x93NUMPY"));
    for args in [
        vec![
            "convert",
            &seed("A.mtx") as &str,
            "--to",
            "csr",
            "-o",
            "-",
            "--json",
        ],
        vec!["spmv", &seed("A.mtx") as &str, "-o", "-", "--json"],
        vec![
            "convert",
            &seed("A.mtx") as &str,
            "--to",
            "csr",
            "-o",
            "a.dat",
        ],
    ] {
        let o = st_in(d, &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&o).starts_with("error: "),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn spmv_json() {
    let v = json(&ok(&["spmv", &seed("A.mtx"), "--json", "--format", "hyb"]));
    assert_eq!(v["format"], "hyb");
    assert_eq!(v["device"], "cpu");
    assert_eq!(v["nrows"], 3);
    assert_eq!(v["output"], serde_json::Value::Null);
    assert!((v["norm2"].as_f64().unwrap() - (9.0f64 + 9.0 + 81.0).sqrt()).abs() < 1e-12);
    assert!(v["ms"].is_number());
}

#[test]
fn threads_flag_sets_the_pool_and_counts_are_plural_aware() {
    let o = st(&[
        "bench",
        &seed("A.mtx"),
        "--device",
        "cpu",
        "--reps",
        "1",
        "--threads",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    has(&stdout(&o), "device: cpu (1 thread)");
    let o = st(&[
        "bench",
        &seed("A.mtx"),
        "--device",
        "cpu",
        "--reps",
        "1",
        "--threads",
        "2",
    ]);
    has(&stdout(&o), "device: cpu (2 threads)");
}

#[test]
fn numeric_flags_are_validated() {
    let dir = tmp();
    let d = dir.path();
    let a = seed("A.mtx");
    for (args, flag) in [
        (vec!["info", &a as &str, "--threads", "0"], "--threads"),
        (vec!["bench", &a as &str, "--reps", "0"], "--reps"),
        (
            vec!["analyze", &a as &str, "--measure", "--reps", "0"],
            "--reps",
        ),
        (
            vec!["analyze", &a as &str, "--measure-top", "0"],
            "--measure-top",
        ),
        (
            vec![
                "convert", &a as &str, "--to", "sell", "--slice", "0", "-o", "x.npz",
            ],
            "--slice",
        ),
        (
            vec![
                "convert", &a as &str, "--to", "sell", "--sigma", "0", "-o", "x.npz",
            ],
            "--sigma",
        ),
        (
            vec![
                "convert",
                &a as &str,
                "--to",
                "ell",
                "--ell-width",
                "0",
                "-o",
                "x.npz",
            ],
            "--ell-width",
        ),
        (
            vec!["gen", "banded", "--rows", "0", "-o", "x.npz"],
            "--rows",
        ),
        (
            vec!["gen", "banded", "--cols", "0", "-o", "x.npz"],
            "--cols",
        ),
        (
            vec!["gen", "powerlaw", "--max-row-len", "0", "-o", "x.npz"],
            "--max-row-len",
        ),
    ] {
        let o = st_in(d, &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(stderr(&o).contains(flag), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty());
    }
    assert!(entries(d).is_empty(), "nothing written");
}

#[test]
fn analyze_measure_without_gpu_prints_the_report_then_exits_2() {
    let o = st(&["analyze", &seed("A.mtx"), "--measure"]);
    if o.status.code() == Some(0) {
        eprintln!("SKIPPED: a CUDA device is present");
        return;
    }
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("recommendation"),
        "the full report first: {}",
        stdout(&o)
    );
    has(&stderr(&o), "--measure) was skipped");
}

#[test]
fn analyze_plot_onto_an_existing_file_fails_before_the_work() {
    let dir = tmp();
    let png = dir.path().join("p.png");
    fs::write(&png, b"keep").unwrap();
    let o = st(&["analyze", &seed("A.mtx"), "--plot", png.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).is_empty(),
        "fails fast, before the report: {}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(fs::read(&png).unwrap(), b"keep");
}

#[test]
fn completions_and_man_pages() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = ok(&["completions", shell]);
        assert!(
            out.contains("convert") && out.contains("allow-fill"),
            "{shell}: {out}"
        );
    }
    let page = ok(&["man"]);
    assert!(
        page.starts_with(".ie") || page.contains(".TH sparsetool"),
        "{page}"
    );
    for sub in ["info", "analyze", "convert", "spmv", "bench", "gen"] {
        assert!(page.contains(sub), "{sub} missing from the man page");
    }
    let dir = tmp();
    let d = dir.path().to_str().unwrap();
    let o = st(&["man", "-o", d]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let convert = fs::read_to_string(dir.path().join("sparsetool-convert.1")).unwrap();
    assert!(
        convert.contains("allow\\-fill") || convert.contains("allow-fill"),
        "{convert}"
    );
    assert!(dir.path().join("sparsetool.1").exists());
    assert!(dir.path().join("sparsetool-bench.1").exists());
    // pages exist now: refused without --force, nothing changed
    let o = st(&["man", "-o", d]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(ok(&["man", "-o", d, "--force", "-q"]), "");
}

/// The banner, the comment lines and the size line of a Matrix Market text.
fn mtx_head(text: &str) -> (String, Vec<String>, String) {
    let mut lines = text.lines();
    let banner = lines.next().unwrap().to_string();
    let mut comments = Vec::new();
    for l in lines {
        if let Some(c) = l.strip_prefix('%') {
            comments.push(c.to_string());
        } else {
            return (banner, comments, l.to_string());
        }
    }
    panic!("no size line in {text}");
}

#[test]
fn convert_to_mtx_keeps_symmetric_storage_and_comments() {
    use sparsetool_formats::mm::{read_path, ReadOptions};
    let dir = tmp();
    let input = "fixtures/matrices/real/bcsstk13.mtx.gz";
    let orig = read_path::<f64, i32>(&root().join(input), &ReadOptions::default()).unwrap();
    assert_eq!(orig.comments.len(), 12);
    let sym = dir.path().join("sym.mtx");
    let gen = dir.path().join("gen.mtx");
    let out = ok(&[
        "convert",
        input,
        "--to",
        "coo",
        "-o",
        sym.to_str().unwrap(),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let text = fs::read_to_string(&sym).unwrap();
    assert_eq!(v["bytes"].as_u64(), Some(text.len() as u64));
    assert_eq!(v["nnz"].as_u64(), Some(83883));
    let (banner, comments, size) = mtx_head(&text);
    assert_eq!(banner, "%%MatrixMarket matrix coordinate real symmetric");
    assert_eq!(comments[..12], orig.comments[..]);
    assert!(
        comments[12].starts_with(" written by sparsetool"),
        "{comments:?}"
    );
    assert_eq!(comments.len(), 13);
    assert_eq!(size, "2003 2003 42943");
    let back = read_path::<f64, i32>(&sym, &ReadOptions::default()).unwrap();
    assert_eq!(back.coo.nnz(), orig.coo.nnz());

    ok(&[
        "convert",
        input,
        "--to",
        "coo",
        "-o",
        gen.to_str().unwrap(),
        "--symmetry",
        "general",
    ]);
    let gtext = fs::read_to_string(&gen).unwrap();
    let (banner, comments, size) = mtx_head(&gtext);
    assert_eq!(banner, "%%MatrixMarket matrix coordinate real general");
    assert_eq!(comments.len(), 13);
    assert_eq!(size, "2003 2003 83883");
    assert_eq!(gtext.lines().count(), 1 + 13 + 1 + 83883);
    assert!(
        gtext.len() > text.len() * 17 / 10,
        "{} {}",
        gtext.len(),
        text.len()
    );

    // Converted again (from the symmetric output, into CSR, gzip): the
    // storage stays, the comments are not repeated.
    let again = dir.path().join("again.mtx.gz");
    ok(&[
        "convert",
        sym.to_str().unwrap(),
        "--to",
        "csr",
        "-o",
        again.to_str().unwrap(),
    ]);
    let m = read_path::<f64, i32>(&again, &ReadOptions::default()).unwrap();
    assert_eq!(
        m.header.symmetry,
        sparsetool_formats::mm::MmSymmetry::Symmetric
    );
    assert_eq!(m.header.entries, 42943);
    assert_eq!(m.comments.len(), 13);
    assert!(
        m.comments[12].ends_with(" from csr storage"),
        "{:?}",
        m.comments
    );
}

#[test]
fn convert_symmetry_flag_other_kinds_and_containers() {
    let dir = tmp();
    // Skew-symmetric to stdout.
    let out = ok(&[
        "convert",
        "fixtures/matrices/real/plskz362.mtx",
        "--to",
        "csr",
        "-o",
        "-",
    ]);
    let (banner, _, size) = mtx_head(&out);
    assert_eq!(
        banner,
        "%%MatrixMarket matrix coordinate real skew-symmetric"
    );
    assert_eq!(size, "362 362 880");
    // A pattern symmetric input reads as ones (f64), written `real
    // symmetric` with its comments; `--symmetry` is case-insensitive.
    let out = ok(&[
        "convert",
        "fixtures/matrices/real/jagmesh7.mtx",
        "--to",
        "ell",
        "-o",
        "-",
        "--symmetry",
        "AUTO",
    ]);
    assert!(out.starts_with("%%MatrixMarket matrix coordinate real symmetric\n%----"));
    // A general matrix stays general.
    let out = ok(&[
        "convert",
        "fixtures/matrices/seed/C.mtx",
        "--to",
        "coo",
        "-o",
        "-",
    ]);
    assert!(out.starts_with("%%MatrixMarket matrix coordinate real general\n"));
    // --symmetry with a container that has no such storage: refused before
    // anything is written.
    for name in ["x.npz", "x.spb"] {
        let p = dir.path().join(name);
        let o = st(&[
            "convert",
            "fixtures/matrices/real/plskz362.mtx",
            "--to",
            "csr",
            "-o",
            p.to_str().unwrap(),
            "--symmetry",
            "general",
        ]);
        assert_eq!(o.status.code(), Some(1));
        has(
            &stderr(&o),
            "--symmetry applies to Matrix Market output (.mtx, .mtx.gz) only",
        );
        assert!(!p.exists());
    }
    let o = st(&[
        "convert",
        "fixtures/matrices/seed/C.mtx",
        "--to",
        "csr",
        "-o",
        "-",
        "--symmetry",
        "lower",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // gen: a Laplacian is symmetric, so it is written as such.
    let lap = dir.path().join("lap.mtx");
    ok(&[
        "gen",
        "laplace2d",
        "--rows",
        "16",
        "-o",
        lap.to_str().unwrap(),
    ]);
    let (banner, _, size) = mtx_head(&fs::read_to_string(&lap).unwrap());
    assert_eq!(banner, "%%MatrixMarket matrix coordinate real symmetric");
    assert_eq!(size, "16 16 40");
}

/// Progress bars: drawn on a terminal (here a pseudo-terminal from
/// `script`), never into a pipe, never with `--quiet`.
#[test]
fn progress_bars_only_on_a_terminal() {
    let bench = [
        "bench",
        "fixtures/matrices/seed/B.mtx",
        "--device",
        "cpu",
        "--reps",
        "1",
    ];
    let piped = st(&bench);
    assert!(piped.status.success(), "{}", stderr(&piped));
    assert!(!stderr(&piped).contains("layouts"), "{}", stderr(&piped));
    let has_script = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        eprintln!("SKIPPED: no `script` command for a pseudo-terminal");
        return;
    }
    let on_tty = |quiet: bool| {
        let mut cmd = format!("{} {}", env!("CARGO_BIN_EXE_sparsetool"), bench.join(" "));
        if quiet {
            cmd.push_str(" --quiet");
        }
        let o = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .current_dir(common::root())
            .output()
            .expect("script runs");
        assert!(o.status.success(), "{}", stdout(&o));
        stdout(&o)
    };
    let shown = on_tty(false);
    assert!(shown.contains("layouts"), "{shown}");
    assert!(
        shown.contains("timing fixtures/matrices/seed/B.mtx on the CPU"),
        "{shown}"
    );
    assert!(!on_tty(true).contains("layouts"));
}

#[test]
fn analyze_profile_by_name_file_and_errors() {
    let f = "fixtures/matrices/seed/A.mtx";
    // no device and no profiles of the user, whatever the machine has
    let cache = tmp();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_sparsetool"))
            .args(args)
            .current_dir(root())
            .env("CUDA_VISIBLE_DEVICES", "")
            .env("XDG_CACHE_HOME", cache.path())
            .output()
            .expect("sparsetool runs")
    };
    let ok = |args: &[&str]| {
        let o = run(args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        stdout(&o)
    };
    // a shipped profile by name: the prediction says whose it is
    let out = ok(&["analyze", f, "--profile", "h200"]);
    let last = out.lines().last().unwrap_or_default();
    assert_eq!(
        last,
        "  profile h200 (shipped, fitted on NVIDIA H200): asked for (--profile)"
    );
    assert!(
        out.contains("per SpMV on NVIDIA H200 (profile h200;"),
        "{out}"
    );
    // without --profile and without a GPU: the shipped default, said so
    let v: serde_json::Value = serde_json::from_str(&ok(&["analyze", f, "--json"])).expect("JSON");
    assert_eq!(v["profile"]["profile"], "h100");
    assert_eq!(v["profile"]["source"], "shipped");
    assert!(v["profile"]["why"]
        .as_str()
        .is_some_and(|w| w.contains("shipped default")));
    // a profile file (what `calibrate --output` writes) is used as given
    let d = tmp();
    let p = d.path().join("mine.json");
    let mut m: serde_json::Value =
        serde_json::from_str(include_str!("../../analyze/calibration/h200.json")).expect("JSON");
    m["name"] = "mine".into();
    m["device"] = "NVIDIA L40S".into();
    fs::write(&p, m.to_string()).expect("write");
    let ps = p.to_str().expect("utf-8 path");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["analyze", f, "--profile", ps, "--json"])).expect("JSON");
    assert_eq!(v["profile"]["profile"], "mine");
    assert_eq!(v["profile"]["source"], "file");
    assert_eq!(v["profile"]["fitted_device"], "NVIDIA L40S");
    assert_eq!(v["recommendation"]["device"], "NVIDIA L40S");
    // bad profiles: exit 1, one line naming what was asked for
    fs::write(&p, "{\"device\": 3}").expect("write");
    for (arg, says) in [
        (ps, "mine.json: not a device profile"),
        (
            "h300",
            "h300: no such file, and no profile of that name (known: h100, h200",
        ),
        ("/nonexistent/p.json", "/nonexistent/p.json: cannot read"),
    ] {
        let o = run(&["analyze", f, "--profile", arg]);
        assert_eq!(o.status.code(), Some(1), "{arg}");
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains(says), "{arg}: {e}");
    }
}

#[test]
fn calibrate_without_gpu_exits_2_and_checks_its_target_first() {
    let d = tmp();
    let taken = d.path().join("p.json");
    fs::write(&taken, "keep").expect("write");
    // an existing --output is refused before the device is looked for
    let o = st(&["calibrate", "-o", taken.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("exists"), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(&taken).expect("read"), "keep");
    // a shipped profile's name is not yours to take: a usage error
    let o = st(&["calibrate", "--name", "h200"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    has(&stderr(&o), "is the name of a shipped profile");
    let o = st(&[
        "calibrate",
        "-o",
        d.path().join("new.json").to_str().expect("utf-8"),
    ]);
    if o.status.code() == Some(2) {
        let e = stderr(&o);
        assert!(e.contains("calibrate needs a GPU"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert_eq!(entries(d.path()), ["p.json"]);
    } else {
        // a machine with a GPU calibrates it (scripts/gpu-calibrate.sh)
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
}
