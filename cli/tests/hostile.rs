//! Hostile input, round two: memory bounded by content (under an address
//! space limit, so an abort or a runaway allocation fails the test instead
//! of the machine), numeric flags with bounds, streams read in bounded
//! memory, pipes and FIFOs, signals during the write phase.

#[allow(dead_code)] // the helpers this file does not use
mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{root, stderr, stdout};

/// The address space a child may use (`ulimit -v`, i.e.
/// `setrlimit(RLIMIT_AS)`): the binary, its threads' stacks and the
/// content of the small files below fit; the sizes those files declare do
/// not.
const LIMIT_KIB: u64 = 768 * 1024;

/// Runs `sparsetool args` under [`LIMIT_KIB`], with `stdin` as input.
fn limited_with(args: &[&str], stdin: Stdio) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_sparsetool"))
        .args(args)
        .current_dir(root())
        .stdin(stdin)
        .output()
        .expect("sh runs")
}

fn limited(args: &[&str]) -> Output {
    limited_with(args, Stdio::null())
}

/// The error contract: exit 1, one `error:` line naming `name`, no panic,
/// no abort.
fn fails_cleanly(o: &Output, name: &str, what: &str) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{what}: {err}");
    assert!(err.starts_with("error: "), "{what}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: {err}");
    assert!(
        err.contains(name),
        "{what}: the message must name {name}: {err}"
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
    err
}

fn succeeds(o: &Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {}", stderr(o));
    stdout(o)
}

/// The temporary files of writes in progress (`.sparsetool-*`) in `dir`.
fn temp_files(dir: &Path) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with(".sparsetool-"))
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

/// Files of a few bytes declaring enormous dimensions: `info` and
/// `analyze` work in memory proportional to the entries (rows far beyond
/// the entries are counted arithmetically), `convert` to COO works, and
/// what needs per-row or per-column arrays fails cleanly, naming the file
/// and the bytes.
#[test]
fn declared_sizes_do_not_drive_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases = [
        (
            "huge-square.mtx",
            "%%MatrixMarket matrix coordinate real general\n9223372036854775807 9223372036854775807 1\n1 1 1.0\n",
        ),
        (
            "huge-symmetric.mtx",
            "%%MatrixMarket matrix coordinate real symmetric\n9223372036854775807 9223372036854775807 2\n1 1 1.0\n9223372036854775807 1 2\n",
        ),
        (
            "three-billion-rows.mtx",
            "%%MatrixMarket matrix coordinate real general\n3000000000 3 2\n1 1 1.0\n2999999999 2 1\n",
        ),
        (
            "wide.mtx",
            "%%MatrixMarket matrix coordinate real general\n1 2147483647 1\n1 2147483647 1.0\n",
        ),
        (
            "tall-pattern.mtx",
            "%%MatrixMarket matrix coordinate pattern general\n4611686018427387904 2 1\n4611686018427387904 2\n",
        ),
    ];
    for (name, text) in cases {
        let p = write(dir.path(), name, text);
        let f = p.to_str().expect("utf-8 path");
        succeeds(&limited(&["info", f]), name);
        let json = succeeds(&limited(&["analyze", f, "--json"]), name);
        let v: serde_json::Value = serde_json::from_str(&json).expect("analyze --json");
        assert!(v["nnz"].as_u64().is_some_and(|n| n >= 1), "{name}: {json}");
        succeeds(&limited(&["analyze", f]), name);
        let coo = dir.path().join(format!("{name}.coo.npz"));
        succeeds(
            &limited(&[
                "convert",
                f,
                "--to",
                "coo",
                "-o",
                coo.to_str().expect("path"),
            ]),
            name,
        );
        // The COO .npz reads back and analyzes the same way.
        succeeds(&limited(&["analyze", coo.to_str().expect("path")]), name);
        let csr = dir.path().join(format!("{name}.csr.npz"));
        let o = limited(&[
            "convert",
            f,
            "--to",
            "csr",
            "-o",
            csr.to_str().expect("path"),
        ]);
        if name == "wide.mtx" {
            // One row: CSR is small.
            succeeds(&o, name);
        } else {
            let err = fails_cleanly(&o, name, name);
            assert!(err.contains("cannot allocate"), "{name}: {err}");
            assert!(err.contains("bytes"), "{name}: {err}");
            assert!(!csr.exists());
        }
        // x has one entry per column: every case here has either many
        // rows (y) or many columns (x), or needs CSR first.
        let o = limited(&["spmv", f, "--device", "cpu"]);
        let err = fails_cleanly(&o, name, name);
        assert!(err.contains("cannot allocate"), "{name}: {err}");
    }
    let left = temp_files(dir.path());
    assert!(left.is_empty(), "left {left:?}");
}

/// An `.npz` whose `indptr` inflates from about a megabyte to a gigabyte:
/// the allocation is refused cleanly (naming the file and the array)
/// instead of aborting.
#[test]
fn npz_whose_arrays_inflate_beyond_memory_fail_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("inflating.npz");
    let rows: u64 = 1 << 27; // indptr: 2^27 + 1 int64 = 1 GiB
    let file = std::fs::File::create(&p).expect("create");
    let mut zip = zip::ZipWriter::new(file);
    let deflate = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(true);
    let npy = |descr: &str, shape: &str| {
        // NPY 1.0: magic, version, header length, then the dict padded
        // with spaces and a newline so that the data starts at byte 128.
        let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        let h = format!("{dict:<117}");
        let mut v = b"\x93NUMPY\x01\x00".to_vec();
        v.extend_from_slice(&118u16.to_le_bytes());
        v.extend_from_slice(h.as_bytes());
        v.push(b'\n');
        v
    };
    zip.start_file("indptr.npy", deflate).expect("zip");
    zip.write_all(&npy("<i8", &format!("({},)", rows + 1)))
        .expect("zip");
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..(rows + 1) * 8 / (1 << 20) {
        zip.write_all(&zeros).expect("zip");
    }
    zip.write_all(&[0u8; 8]).expect("zip");
    for (name, descr) in [("indices", "<i4"), ("data", "<f8")] {
        zip.start_file(format!("{name}.npy"), deflate).expect("zip");
        zip.write_all(&npy(descr, "(0,)")).expect("zip");
    }
    zip.start_file("format.npy", deflate).expect("zip");
    let mut f = npy("|S3", "()");
    f.extend_from_slice(b"csr");
    zip.write_all(&f).expect("zip");
    zip.start_file("shape.npy", deflate).expect("zip");
    let mut s = npy("<i8", "(2,)");
    s.extend_from_slice(&(rows as i64).to_le_bytes());
    s.extend_from_slice(&4i64.to_le_bytes());
    zip.write_all(&s).expect("zip");
    zip.finish().expect("zip");
    assert!(std::fs::metadata(&p).expect("meta").len() < 4 << 20);
    let f = p.to_str().expect("path");
    // The header alone: instant, small.
    let info = succeeds(&limited(&["info", f]), "info");
    assert!(info.contains(&rows.to_string()), "{info}");
    for cmd in ["analyze", "spmv"] {
        let err = fails_cleanly(&limited(&[cmd, f]), "inflating.npz", cmd);
        assert!(err.contains("cannot allocate"), "{err}");
    }
}

/// Numeric flags that cannot be honoured are usage errors (exit 1), before
/// any work: no abort, no panic, no hour-long run.
#[test]
fn numeric_flags_have_bounds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("o.mtx");
    let o = out.to_str().expect("path");
    let m = "fixtures/matrices/seed/B.mtx";
    let cases: Vec<Vec<&str>> = vec![
        vec!["gen", "uniform", "--rows", "1000000000000", "-o", o],
        vec![
            "gen",
            "laplace3d",
            "--rows",
            "18446744073709551615",
            "-o",
            o,
        ],
        vec![
            "convert",
            m,
            "--to",
            "sell",
            "--slice",
            "1000000000",
            "-o",
            o,
        ],
        vec!["convert", m, "--to", "sell", "--slice", "0", "-o", o],
        vec!["convert", m, "--to", "ell", "--ell-width", "0", "-o", o],
        vec![
            "bench",
            m,
            "--device",
            "cpu",
            "--reps",
            "18446744073709551615",
        ],
        vec!["bench", m, "--device", "cpu", "--reps", "0"],
        vec!["analyze", m, "--measure", "--reps", "99999999999"],
        vec!["analyze", m, "--measure", "--measure-top", "0"],
        vec!["convert", m, "--to", "sell", "--sigma", "-4", "-o", o],
    ];
    for args in cases {
        let res = limited(&args);
        let err = stderr(&res);
        assert_eq!(res.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?}");
    }
    // A window far beyond the row count is just the full sort.
    let sell = dir.path().join("s.npz");
    let s = sell.to_str().expect("path");
    let args = [
        "convert",
        m,
        "--to",
        "sell",
        "--slice",
        "2",
        "--sigma",
        "4000000000",
        "-o",
        s,
    ];
    succeeds(&limited(&args), "huge sigma");
}

/// Gzip content and standard input are read as streams: one entry
/// followed by 256 MB of blank lines (1/4 of a megabyte compressed) reads
/// under the memory limit.
#[test]
fn streams_are_read_in_bounded_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gz = dir.path().join("blank-lines.mtx.gz");
    {
        let f = std::fs::File::create(&gz).expect("create");
        let mut e = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        e.write_all(b"%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 -1.5\n")
            .expect("gz");
        let blank = vec![b'\n'; 1 << 20];
        for _ in 0..256 {
            e.write_all(&blank).expect("gz");
        }
        e.finish().expect("gz");
    }
    let out = dir.path().join("o.npz");
    let g = gz.to_str().expect("path");
    succeeds(
        &limited(&[
            "convert",
            g,
            "--to",
            "csr",
            "-o",
            out.to_str().expect("path"),
        ]),
        "gz",
    );
    let info = succeeds(
        &limited(&["info", out.to_str().expect("path"), "--json"]),
        "info",
    );
    assert!(info.contains("\"nnz\": 1"), "{info}");
    // The same through standard input.
    let stdin = std::fs::File::open(&gz).expect("open");
    let json = succeeds(
        &limited_with(&["analyze", "-", "--json"], stdin.into()),
        "stdin",
    );
    assert!(json.contains("\"nnz\": 1"), "{json}");
    // Endless input without a line break fails at once, in bounded memory.
    for (args, name) in [
        (
            vec!["convert", "-", "--to", "csr", "-o", "x.npz"],
            "<stdin>",
        ),
        (vec!["info", "-"], "<stdin>"),
    ] {
        let zero = std::fs::File::open("/dev/zero").expect("/dev/zero");
        let o = limited_with(&args, zero.into());
        fails_cleanly(&o, name, "/dev/zero");
    }
}

/// Pipes, FIFOs and process substitutions: detected from the same open
/// stream (never reopened); `.npz`/`.spb` that need seeking are spooled to
/// a temporary file, which is gone afterwards.
#[test]
fn pipes_and_fifos_are_read_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = root().join("fixtures/matrices/seed/C.mtx");
    let reference = succeeds(
        &limited(&["info", m.to_str().expect("path"), "--json"]),
        "C",
    );
    let nnz = |json: &str| -> u64 {
        let v: serde_json::Value = serde_json::from_str(json).expect("json");
        v["nnz"].as_u64().expect("nnz")
    };
    // A FIFO: convert reads it once (no hang on a second open).
    let fifo = dir.path().join("m.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let writer = {
        let (fifo, m) = (fifo.clone(), m.clone());
        std::thread::spawn(move || {
            let text = std::fs::read(m).expect("read");
            std::fs::write(fifo, text).expect("write fifo");
        })
    };
    let out = dir.path().join("f.spb");
    let o = Command::new(env!("CARGO_BIN_EXE_sparsetool"))
        .args([
            "convert",
            fifo.to_str().expect("path"),
            "--to",
            "sell",
            "-o",
        ])
        .arg(&out)
        .output()
        .expect("runs");
    writer.join().expect("writer");
    succeeds(&o, "fifo");
    // Every container through a pipe.
    let npz = dir.path().join("m.npz");
    succeeds(
        &limited(&[
            "convert",
            m.to_str().expect("path"),
            "--to",
            "csr",
            "-o",
            npz.to_str().expect("path"),
        ]),
        "npz",
    );
    for file in [&m, &npz, &out] {
        let input = std::fs::File::open(file).expect("open");
        let json = succeeds(
            &limited_with(&["info", "-", "--json"], input.into()),
            "info -",
        );
        assert_eq!(nnz(&json), nnz(&reference), "{}", file.display());
        let input = std::fs::File::open(file).expect("open");
        let back = dir.path().join("back.mtx");
        let _ = std::fs::remove_file(&back);
        let args = [
            "convert",
            "-",
            "--to",
            "coo",
            "-o",
            back.to_str().expect("path"),
        ];
        succeeds(&limited_with(&args, input.into()), "convert -");
    }
    let spooled: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .expect("tmp")
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".sparsetool-spool-")
        })
        .filter(|e| {
            // Only ours: a concurrent test run may spool too.
            e.metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|d| d.as_secs() < 5))
        })
        .collect();
    assert!(spooled.is_empty(), "spool files left: {spooled:?}");
}

/// SIGINT, SIGTERM and SIGHUP during the *write* phase of `gen` (its
/// temporary output exists and is growing): exit 130 with the message,
/// and the temporary file is removed.
#[test]
fn signals_during_the_write_phase_leave_nothing() {
    for signal in ["INT", "TERM", "HUP"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("big.mtx");
        let mut child = Command::new(env!("CARGO_BIN_EXE_sparsetool"))
            .args(["gen", "laplace2d", "--rows", "4000000", "-o"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        // Wait for the temporary file of the write phase.
        let t0 = std::time::Instant::now();
        let tmp_seen = loop {
            let tmp = !temp_files(dir.path()).is_empty();
            if tmp || t0.elapsed().as_secs() > 120 {
                break tmp;
            }
            if child.try_wait().expect("wait").is_some() {
                break false;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        };
        assert!(tmp_seen, "SIG{signal}: no temporary output appeared");
        let pid = child.id().to_string();
        let killed = Command::new("kill")
            .args([format!("-{signal}").as_str(), &pid])
            .status()
            .expect("kill");
        assert!(killed.success());
        let o = child.wait_with_output().expect("wait");
        let err = stderr(&o);
        if o.status.success() {
            // The write finished between the poll and the signal: the
            // output is complete; nothing else may be there.
            assert!(out.exists());
        } else {
            assert_eq!(o.status.code(), Some(130), "SIG{signal}: {err}");
            assert!(err.contains("interrupted: no output written"), "{err}");
            assert!(!out.exists());
        }
        let left = temp_files(dir.path());
        assert!(left.is_empty(), "SIG{signal}: left {left:?}");
    }
}
