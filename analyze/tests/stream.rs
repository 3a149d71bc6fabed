//! Streaming row counts against the full reader.

use std::io::Write;
use std::path::{Path, PathBuf};

use sparsetool_analyze::{AnalyzeError, RowLengths};
use sparsetool_formats::mm::{read_path, MmErrorKind, ReadOptions};
use sparsetool_formats::Complex64;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Row lengths through the full reader (duplicates counted as stored,
/// like the streaming pass).
fn full(path: &Path) -> RowLengths {
    let m = read_path::<Complex64, i64>(path, &ReadOptions::default()).unwrap();
    RowLengths::from_coo(&m.coo).unwrap()
}

fn gzip(src: &Path, dir: &Path) -> PathBuf {
    let out = dir.join(format!("{}.gz", src.file_name().unwrap().to_string_lossy()));
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&out).unwrap(),
        flate2::Compression::fast(),
    );
    enc.write_all(&std::fs::read(src).unwrap()).unwrap();
    enc.finish().unwrap();
    out
}

#[test]
fn small_files_match_full_reader() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "general.mtx",
        "symmetric.mtx",
        "skew.mtx",
        "hermitian.mtx",
        "empty.mtx",
    ] {
        let p = data(name);
        let s = RowLengths::from_mm_path(&p).unwrap();
        assert_eq!(s, full(&p), "{name}");
        let g = gzip(&p, dir.path());
        assert_eq!(RowLengths::from_mm_path(&g).unwrap(), s, "{name}.gz");
    }
    // No final newline, CRLF line endings.
    let p = dir.path().join("nonl.mtx");
    let text = "%%MatrixMarket matrix coordinate real general\r\n2 2 2\r\n1 2 1\r\n2 2 5";
    std::fs::write(&p, text).unwrap();
    let s = RowLengths::from_mm_path(&p).unwrap();
    assert_eq!((s.rows.to_vec(), s.cols.to_vec()), (vec![1, 1], vec![0, 2]));
    assert_eq!(s, full(&p));
    assert_eq!(RowLengths::from_mm_path(&gzip(&p, dir.path())).unwrap(), s);
    let s = RowLengths::from_mm_path(&data("general.mtx")).unwrap();
    assert_eq!(s.rows.to_vec(), vec![3, 0, 1, 3]);
    assert_eq!(s.cols.to_vec(), vec![3, 1, 0, 1, 2]);
    let s = RowLengths::from_mm_path(&data("symmetric.mtx")).unwrap();
    // (1,1) (2,1)+(1,2) (3,1)+(1,3) (5,3)+(3,5) (5,5) (4,2)+(2,4)
    assert_eq!(s.rows.to_vec(), vec![3, 2, 2, 1, 2]);
    assert_eq!(s.cols, s.rows);
}

#[test]
fn real_matrices_match_full_reader() {
    let all = sparsetool_fixtures::real_matrices();
    assert!(!all.is_empty());
    for m in all {
        if m.quirk.is_some() {
            // `cha`: refused strictly (non-real hermitian diagonal) by the
            // scan and the reader alike, with the same line.
            let e = RowLengths::from_mm_path(&m.path).unwrap_err().to_string();
            let r = read_path::<Complex64, i64>(&m.path, &ReadOptions::default()).unwrap_err();
            assert_eq!(r.line(), Some(6), "{r}");
            assert!(e.contains("cha.mtx:6:") && e.contains("hermitian"), "{e}");
            continue;
        }
        match RowLengths::from_mm_path(&m.path) {
            Ok(s) => {
                assert_eq!(s, full(&m.path), "{}", m.name);
                assert_eq!((s.nrows, s.ncols), (m.nrows, m.ncols), "{}", m.name);
                if let Some(e) = m.nnz_expanded {
                    assert_eq!(s.nnz(), e as u64, "{}", m.name);
                }
            }
            Err(e) => {
                assert_eq!(m.layout, "array", "{}: {e}", m.name);
                assert!(e.needs_full_read(), "{}: {e}", m.name);
            }
        }
    }
}

/// A large general file (several parallel chunks).
fn big_file(dir: &Path, entries: usize, extra: &str, declared: usize) -> PathBuf {
    let p = dir.join(format!("big{entries}_{declared}.mtx"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    writeln!(
        f,
        "%%MatrixMarket matrix coordinate real general\n% big\n7000 5000 {declared}"
    )
    .unwrap();
    let mut x: u64 = 12345;
    for k in 0..entries {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let i = (x >> 33) % 7000 + 1;
        let j = (x >> 13) % 5000 + 1;
        if k % 1000 == 0 {
            writeln!(f, "% comment {k}").unwrap();
        }
        writeln!(f, "{i} {j} {:.6}", (x >> 40) as f64 / 1e6).unwrap();
    }
    f.write_all(extra.as_bytes()).unwrap();
    drop(f);
    p
}

#[test]
fn large_file_chunks_match_full_reader() {
    let dir = tempfile::tempdir().unwrap();
    let p = big_file(dir.path(), 300_000, "", 300_000);
    assert!(std::fs::metadata(&p).unwrap().len() > 4 << 20);
    let s = RowLengths::from_mm_path(&p).unwrap();
    assert_eq!(s, full(&p));
    assert_eq!(s.nnz(), 300_000);
    let g = gzip(&p, dir.path());
    assert_eq!(RowLengths::from_mm_path(&g).unwrap(), s);
}

fn mm_err(r: Result<RowLengths, AnalyzeError>) -> (Option<u64>, String, MmErrorKind) {
    match r {
        Err(AnalyzeError::Mm(e)) => {
            let msg = e.to_string();
            (e.line(), msg, e.into_kind())
        }
        other => panic!("expected a Matrix Market error, got {other:?}"),
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// File name, content, expected line, expected kind.
type Case = (&'static str, String, Option<u64>, fn(&MmErrorKind) -> bool);

#[test]
fn errors_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let head = "%%MatrixMarket matrix coordinate real general\n% c\n3 3 3\n";
    let cases: Vec<Case> = vec![
        (
            "range.mtx",
            format!("{head}1 1 1\n4 1 1\n2 2 2\n"),
            Some(5),
            |k| {
                matches!(
                    k,
                    MmErrorKind::IndexOutOfRange {
                        which: "row",
                        index: 4,
                        max: 3
                    }
                )
            },
        ),
        (
            "colrange.mtx",
            format!("{head}1 1 1\n1 9 1\n2 2 2\n"),
            Some(5),
            |k| {
                matches!(
                    k,
                    MmErrorKind::IndexOutOfRange {
                        which: "column",
                        ..
                    }
                )
            },
        ),
        (
            "many.mtx",
            format!("{head}1 1 1\n2 2 1\n3 3 1\n1 2 1\n"),
            Some(7),
            |k| matches!(k, MmErrorKind::TooManyEntries { declared: 3, .. }),
        ),
        (
            "junk.mtx",
            format!("{head}1 1 1\n2 2 1\n3 3 1\nmrkc random\n"),
            Some(7),
            |k| matches!(k, MmErrorKind::TooManyEntries { .. }),
        ),
        // Too few entries, as the reader words it: the size line declares
        // more entries than the remaining bytes can hold...
        ("few.mtx", format!("{head}1 1 1\n2 2 1\n"), Some(3), |k| {
            matches!(
                k,
                MmErrorKind::DeclaredTooLarge {
                    declared: 3,
                    max: 2,
                    ..
                }
            )
        }),
        // ... or the data ends early (after line 7).
        (
            "few-long.mtx",
            format!("{head}1 1 1\n% a long comment line\n2 2 1\n"),
            Some(7),
            |k| {
                matches!(
                    k,
                    MmErrorKind::TooFewEntries {
                        declared: 3,
                        found: 2
                    }
                )
            },
        ),
        (
            "zerobased.mtx",
            format!("{head}0 0 1\n1 1 1\n2 2 1\n"),
            Some(4),
            |k| matches!(k, MmErrorKind::ZeroBased),
        ),
        (
            "zero.mtx",
            format!("{head}1 1 1\n0 2 1\n3 3 1\n"),
            Some(5),
            |k| matches!(k, MmErrorKind::ZeroIndex { which: "row" }),
        ),
        (
            "bad.mtx",
            format!("{head}1 1 1\n2 x 1\n3 3 1\n"),
            Some(5),
            |k| {
                matches!(
                    k,
                    MmErrorKind::BadNumber {
                        expected: "a column index",
                        ..
                    }
                )
            },
        ),
        (
            "upper.mtx",
            "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 1\n1 2 1\n".into(),
            Some(4),
            |k| matches!(k, MmErrorKind::NotLowerTriangle { row: 1, col: 2, .. }),
        ),
        (
            "skewdiag.mtx",
            "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n".into(),
            Some(3),
            |k| matches!(k, MmErrorKind::SkewDiagonal { row: 2 }),
        ),
    ];
    for (name, text, line, check) in cases {
        let p = write(d, name, &text);
        let (l, msg, kind) = mm_err(RowLengths::from_mm_path(&p));
        assert_eq!(l, line, "{name}: {msg}");
        assert!(check(&kind), "{name}: {msg}");
        assert!(msg.contains(name), "{msg}");
        // The gzip path reports the same line and kind.
        let g = gzip(&p, d);
        let (gl, gmsg, gkind) = mm_err(RowLengths::from_mm_path(&g));
        assert_eq!(gl, line, "{name}.gz: {gmsg}");
        assert!(check(&gkind), "{name}.gz: {gmsg}");
        // The strict reader rejects the file too.
        assert!(
            read_path::<f64, i32>(&p, &ReadOptions::default()).is_err(),
            "{name}"
        );
    }
}

#[test]
fn errors_across_chunks_have_the_right_line() {
    let dir = tempfile::tempdir().unwrap();
    // 200k entries + 200 comment lines + 3 header lines; the bad line is last.
    let p = big_file(dir.path(), 200_000, "7001 1 1.0\n", 200_001);
    let (l, msg, kind) = mm_err(RowLengths::from_mm_path(&p));
    assert!(
        matches!(kind, MmErrorKind::IndexOutOfRange { index: 7001, .. }),
        "{msg}"
    );
    assert_eq!(l, Some(3 + 200_000 + 200 + 1), "{msg}");
    let p = big_file(dir.path(), 200_000, "", 150_000);
    let (l, msg, kind) = mm_err(RowLengths::from_mm_path(&p));
    assert!(
        matches!(
            kind,
            MmErrorKind::TooManyEntries {
                declared: 150_000,
                ..
            }
        ),
        "{msg}"
    );
    // Entry 150001 comes after 151 comment lines (one precedes it).
    assert_eq!(l, Some(3 + 150_000 + 151 + 1), "{msg}");
}

#[test]
fn unsupported_inputs_ask_for_a_full_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "array.mtx",
        "%%MatrixMarket matrix array real general\n2 1\n1\n0\n",
    );
    let e = RowLengths::from_mm_path(&p).unwrap_err();
    assert!(e.needs_full_read(), "{e}");
    let e = RowLengths::from_mm_path(Path::new("-")).unwrap_err();
    assert!(e.needs_full_read());
    // A lenient-only quirk: the full reader with --lenient recovers.
    let p = write(
        dir.path(),
        "single.mtx",
        "%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n",
    );
    let e = RowLengths::from_mm_path(&p).unwrap_err();
    assert!(e.needs_full_read(), "{e}");
    let e = RowLengths::from_mm_path(&dir.path().join("missing.mtx")).unwrap_err();
    assert!(!e.needs_full_read(), "{e}");
}

/// The streaming pass takes at most 1.2x the time of the full parse (it
/// does strictly less work). Timing-dependent, so ignored by default:
/// `cargo test -p sparsetool-analyze --release -- --ignored streaming_speed`.
#[test]
#[ignore = "timing; run explicitly"]
fn streaming_speed() {
    let dir = tempfile::tempdir().unwrap();
    let p = big_file(dir.path(), 3_000_000, "", 3_000_000);
    let time = |f: &dyn Fn()| {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t = std::time::Instant::now();
            f();
            best = best.min(t.elapsed().as_secs_f64());
        }
        best
    };
    let parse = time(&|| {
        read_path::<f64, i32>(&p, &ReadOptions::default()).unwrap();
    });
    let stream = time(&|| {
        RowLengths::from_mm_path(&p).unwrap();
    });
    eprintln!(
        "full parse {parse:.3} s, streaming {stream:.3} s ({:.2}x)",
        stream / parse
    );
    assert!(
        stream <= 1.2 * parse,
        "streaming {stream:.3} s vs parse {parse:.3} s"
    );
    let g = gzip(&p, dir.path());
    let parse = time(&|| {
        read_path::<f64, i32>(&g, &ReadOptions::default()).unwrap();
    });
    let stream = time(&|| {
        RowLengths::from_mm_path(&g).unwrap();
    });
    eprintln!(
        "gzip: full parse {parse:.3} s, streaming {stream:.3} s ({:.2}x)",
        stream / parse
    );
    assert!(
        stream <= 1.2 * parse,
        "gzip: streaming {stream:.3} s vs parse {parse:.3} s"
    );
}

#[test]
fn read_row_lengths_falls_back_to_the_reader() {
    use sparsetool_analyze::rows::read_row_lengths;
    let strict = ReadOptions::default();
    let lenient = ReadOptions {
        lenient: true,
        ..ReadOptions::default()
    };
    for m in sparsetool_fixtures::quirk_matrices() {
        assert!(read_row_lengths(&m.path, &strict).is_err(), "{}", m.name);
        let (rl, warnings) = read_row_lengths(&m.path, &lenient).unwrap();
        assert_eq!((rl.nrows, rl.ncols), (m.nrows, m.ncols), "{}", m.name);
        assert!(!warnings.is_empty(), "{}", m.name);
    }
    // Strict files take the streaming route and agree with it.
    let p = data("symmetric.mtx");
    let (rl, w) = read_row_lengths(&p, &strict).unwrap();
    assert_eq!((rl, w.len()), (RowLengths::from_mm_path(&p).unwrap(), 0));
    let (rl, _) = read_row_lengths(&p, &lenient).unwrap();
    assert_eq!(rl, RowLengths::from_mm_path(&p).unwrap());
}
