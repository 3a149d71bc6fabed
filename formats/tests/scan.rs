//! The structure-only scan against the full reader: the same entries, the
//! same warnings, and the same errors (kind, line and message), for files
//! in memory (parallel chunks) and for streams (gzip, any reader).

use std::io::Write;
use std::path::{Path, PathBuf};

use sparsetool_formats::mm::{
    read_bytes, read_path, scan_structure, MmError, MmErrorKind, ReadOptions, StructureScan,
    Warning,
};
use sparsetool_formats::Complex64;

/// What a read gives: the sorted entries and the warnings, or the error's
/// message (which names the file, the line and the kind).
type Outcome = Result<(Vec<(u64, u64)>, Vec<Warning>), String>;

fn opts(lenient: bool) -> ReadOptions {
    ReadOptions {
        lenient,
        ..ReadOptions::default()
    }
}

fn scanned(scan: Result<StructureScan<'_>, MmError>) -> Result<Outcome, MmError> {
    let visit = |v: &mut Vec<(u64, u64)>, i, j| v.push((i, j));
    let merge = |mut a: Vec<(u64, u64)>, b: Vec<(u64, u64)>| {
        a.extend(b);
        a
    };
    match scan.and_then(|s| s.fold(Vec::new, visit, merge)) {
        Ok((mut v, w)) => {
            v.sort_unstable();
            Ok(Ok((v, w)))
        }
        Err(e) if matches!(e.kind(), MmErrorKind::ScanUnsupported { .. }) => Err(e),
        Err(e) => Ok(Err(e.to_string())),
    }
}

fn full(m: Result<sparsetool_formats::mm::MmMatrix<Complex64, i64>, MmError>) -> Outcome {
    match m {
        Ok(m) => {
            let mut v: Vec<(u64, u64)> = (0..m.coo.nnz())
                .map(|k| (m.coo.rows()[k] as u64, m.coo.cols()[k] as u64))
                .collect();
            v.sort_unstable();
            Ok((v, m.warnings))
        }
        Err(e) => Err(e.to_string()),
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// Compares the scan with the full reader on a file: by path (mapped, or
/// streamed for gzip), as a plain stream, and gzipped in memory. Returns
/// whether the scan asked for a full read (lenient recoveries it cannot
/// make), after checking that the reader did recover.
fn compare(path: &Path, lenient: bool) -> bool {
    let o = opts(lenient);
    let what = format!("{} (lenient: {lenient})", path.display());
    let expected = full(read_path(path, &o));
    let by_path = scanned(StructureScan::open(path, &o));
    let Ok(by_path) = by_path else {
        assert!(lenient && expected.is_ok(), "{what}: {by_path:?}");
        return true;
    };
    assert_eq!(by_path, expected, "{what}");
    let bytes = std::fs::read(path).unwrap();
    let name = path.display().to_string();
    let streamed = scanned(StructureScan::from_reader(&bytes[..], &name, &o)).unwrap();
    let in_memory = full(read_bytes(&bytes, &name, &o));
    assert_eq!(streamed, in_memory, "{what} (stream)");
    let gz = gzip(&bytes);
    let streamed = scanned(StructureScan::from_bytes(&gz, &name, &o)).unwrap();
    assert_eq!(streamed, full(read_bytes(&gz, &name, &o)), "{what} (gzip)");
    false
}

fn repo(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir)
}

/// Every `mm-` file of `fixtures/bad`: the scan and the reader fail with
/// the same message (so the same kind and line), strict and lenient; a
/// lenient scan may only ask for a full read where the reader recovers.
#[test]
fn bad_fixtures_fail_alike() {
    let tsv = std::fs::read_to_string(repo("fixtures/bad/EXPECTED.tsv")).unwrap();
    let names: Vec<&str> = tsv
        .lines()
        .filter_map(|l| l.split('\t').next())
        .filter(|n| n.starts_with("mm-"))
        .collect();
    assert!(names.len() >= 50, "{}", names.len());
    let mut errors = 0;
    let mut full_reads = Vec::new();
    for name in names {
        let p = repo("fixtures/bad").join(name);
        assert!(!compare(&p, false), "{name}: strict scans never fall back");
        errors += usize::from(read_path::<Complex64, i64>(&p, &opts(false)).is_err());
        if compare(&p, true) {
            full_reads.push(name);
        }
    }
    // Every strict read fails but the complex/real and integer cases the
    // manifest expects an error for with a real type only.
    assert!(errors >= 50, "{errors}");
    assert_eq!(
        full_reads,
        [
            "mm-row-index-zero.mtx",
            "mm-col-index-zero.mtx",
            "mm-zero-based.mtx",
            "mm-symmetric-upper-entry.mtx"
        ]
    );
}

/// The reader's test files and the real matrices: the same entries.
#[test]
fn good_files_give_the_same_entries() {
    let mut n = 0;
    for dir in ["formats/tests/data", "fixtures/matrices"] {
        let mut stack = vec![repo(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "mtx" || x == "gz") {
                    compare(&p, false);
                    compare(&p, true);
                    n += 1;
                }
            }
        }
    }
    assert!(n >= 10, "{n}");
}

/// A file of several chunks (comments in the data): the parallel scan,
/// the stream and the reader agree, also on errors far into the file and
/// on data beyond the declared entries.
#[test]
fn large_files_and_late_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("%%MatrixMarket matrix coordinate real symmetric\n% big\n");
    let n = 350_000;
    text.push_str(&format!("9000 9000 {n}\n"));
    // Spread-out lower-triangle entries (some on the diagonal), with a
    // comment and a blank line every 1000.
    for k in 0..n {
        let i = (k * 7919 + 13) % 9000 + 1;
        let j = (k * 104_729) % i + 1;
        let sep = if k % 1000 == 0 { "% comment\n\n" } else { "" };
        text.push_str(&format!("{sep}{i} {j} {}.25\n", k % 89));
    }
    assert!(text.len() > 5 << 20);
    let good = dir.path().join("good.mtx");
    std::fs::write(&good, &text).unwrap();
    compare(&good, false);
    let (h, count, w) = scan_structure(
        &good,
        &opts(false),
        || 0u64,
        |c, _, _| *c += 1,
        |a, b| a + b,
    )
    .unwrap();
    assert_eq!((h.entries, w.len()), (n, 0));
    assert!(count > n as u64 && count < 2 * n as u64, "{count}");

    // Data after the last entry, and the declared count of the size line.
    let cases = [
        ("late-range.mtx", "9001 1 1\n", n + 1),
        ("late-value.mtx", "9 1 x\n", n + 1),
        ("late-upper.mtx", "1 9 1\n", n + 1),
        ("beyond.mtx", "5 1 1\n7 7 7\n", n),
        ("few.mtx", "", n + 5),
        ("few-and-bad.mtx", "1 2 x\n", n + 2),
    ];
    for (name, tail, declared) in cases {
        let size = format!("9000 9000 {n}\n");
        let body = text.replacen(&size, &format!("9000 9000 {declared}\n"), 1) + tail;
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        assert!(read_path::<f64, i64>(&p, &opts(false)).is_err(), "{name}");
        compare(&p, false);
        compare(&p, true);
    }
}

/// Array files give the positions of their nonzero values, expanded like
/// the reader expands them.
#[test]
fn array_files() {
    let texts = [
        "%%MatrixMarket matrix array real general\n2 3\n1\n0\n2\n3\n0\n4\n",
        "%%MatrixMarket matrix array real symmetric\n3 3\n1\n0\n2\n3\n0\n4\n",
        "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n0\n2\n",
        "%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n0 2\n0 0\n",
        "%%MatrixMarket matrix array real general\n0 9000000000000000000\n",
    ];
    let dir = tempfile::tempdir().unwrap();
    for (k, t) in texts.iter().enumerate() {
        let p = dir.path().join(format!("a{k}.mtx"));
        std::fs::write(&p, t).unwrap();
        compare(&p, false);
    }
    let (v, _) = scanned(StructureScan::from_bytes(
        texts[1].as_bytes(),
        "s",
        &opts(false),
    ))
    .unwrap()
    .unwrap();
    assert_eq!(v, [(0, 0), (0, 2), (1, 1), (2, 0), (2, 2)]);
}
