//! Matrix Market reader and writer: real files, every bad-input case,
//! lenient recoveries, expansion, array format, gzip, and round trips.

use std::io::Write;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use sparsetool_fixtures::{quirk_matrices, real_matrices, real_matrix, RealMatrix};
use sparsetool_formats::mm::{
    read_bytes, read_header_bytes, read_header_path, read_header_path_with, read_path, write_coo,
    write_csr, MmError, MmErrorKind, MmField, MmFormat, MmMatrix, MmSymmetry, ReadOptions,
    WriteOptions, WriteSymmetry,
};
use sparsetool_formats::{Complex32, Complex64, Coo, Csr, Index, Scalar};

/// Test data of this crate only (the heads of two bundled matrices).
fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A matrix bundled in `fixtures/matrices` (real or quirk), by name.
fn bundled(name: &str) -> PathBuf {
    real_matrix(name)
        .or_else(|| quirk_matrices().into_iter().find(|m| m.name == name))
        .unwrap_or_else(|| panic!("no bundled matrix {name}"))
        .path
}

fn strict() -> ReadOptions {
    ReadOptions::default()
}

fn lenient() -> ReadOptions {
    ReadOptions {
        lenient: true,
        ..ReadOptions::default()
    }
}

fn rd<T: Scalar>(text: &str) -> Result<MmMatrix<T, i32>, MmError> {
    read_bytes::<T, i32>(text.as_bytes(), "t.mtx", &strict())
}

fn rd_len(text: &str) -> Result<MmMatrix<f64, i32>, MmError> {
    read_bytes::<f64, i32>(text.as_bytes(), "t.mtx", &lenient())
}

/// Sorted (row, col, value) triplets.
fn triplets<T: Scalar, I: Index>(m: &Coo<T, I>) -> Vec<(usize, usize, T)> {
    let mut v: Vec<_> = (0..m.nnz())
        .map(|k| {
            (
                m.rows()[k].to_usize(),
                m.cols()[k].to_usize(),
                m.values()[k],
            )
        })
        .collect();
    v.sort_by_key(|a| (a.0, a.1));
    v
}

fn empty_rows<T: Scalar, I: Index>(m: &Coo<T, I>) -> usize {
    let mut seen = vec![false; m.nrows()];
    for r in m.rows() {
        seen[r.to_usize()] = true;
    }
    seen.iter().filter(|s| !**s).count()
}

const HDR: &str = "%%MatrixMarket matrix coordinate real general\n";

// ---------------------------------------------------------------- real files

#[test]
fn jagmesh7_pattern_symmetric() {
    let m = read_path::<f64, i32>(&bundled("jagmesh7"), &strict()).unwrap();
    let h = m.header;
    assert_eq!(
        (h.field, h.symmetry, h.nrows, h.ncols, h.entries),
        (MmField::Pattern, MmSymmetry::Symmetric, 1138, 1138, 4294)
    );
    assert_eq!(m.coo.nnz(), 7450);
    assert!(m.coo.values().iter().all(|&v| v == 1.0));
    assert!(m.warnings.is_empty());
    let raw = read_path::<f32, i64>(
        &bundled("jagmesh7"),
        &ReadOptions {
            expand_symmetry: false,
            lenient: false,
        },
    )
    .unwrap();
    assert_eq!(raw.coo.nnz(), 4294);
    assert!(raw
        .coo
        .rows()
        .iter()
        .zip(raw.coo.cols())
        .all(|(r, c)| r >= c));
}

#[test]
fn plskz362_skew() {
    let m = read_path::<f64, i32>(&bundled("plskz362"), &strict()).unwrap();
    assert_eq!(
        (m.header.symmetry, m.header.entries, m.coo.nnz()),
        (MmSymmetry::SkewSymmetric, 880, 1760)
    );
    let t = triplets(&m.coo);
    for &(i, j, v) in &t {
        assert_ne!(i, j);
        let k = t.binary_search_by(|x| (x.0, x.1).cmp(&(j, i))).unwrap();
        assert_eq!(t[k].2, -v);
    }
}

#[test]
fn cha_hermitian() {
    // Its (2,2) diagonal value is not real: refused strictly, naming the line.
    let e = read_path::<Complex64, i32>(&bundled("cha"), &strict()).unwrap_err();
    assert!(
        matches!(e.kind(), MmErrorKind::NonRealDiagonal { row: 2, .. }),
        "{e}"
    );
    assert_eq!(e.line(), Some(6));
    let m = read_path::<Complex64, i32>(&bundled("cha"), &lenient()).unwrap();
    assert_eq!(m.warnings.len(), 1, "{:?}", m.warnings);
    assert_eq!(
        (m.header.symmetry, m.header.entries, m.coo.nnz()),
        (MmSymmetry::Hermitian, 6, 9)
    );
    let t = triplets(&m.coo);
    assert_eq!(
        t[1],
        (
            0,
            1,
            Complex64::new(1.5579100867466829, -0.4760037225690294)
        )
    );
    assert_eq!(
        t[3],
        (1, 0, Complex64::new(1.5579100867466829, 0.4760037225690294))
    );
    // The (2,2) diagonal keeps its imaginary part as stored.
    assert_eq!(t[4], (1, 1, Complex64::new(1.7073102613255353, -1.0)));
    let e = read_path::<f64, i32>(&bundled("cha"), &strict()).unwrap_err();
    assert!(matches!(e.kind(), MmErrorKind::TypeMismatch { .. }));
    assert!(e.to_string().contains("complex type"), "{e}");
}

#[test]
fn young1c_complex_general() {
    let m = read_path::<Complex32, i64>(&bundled("young1c"), &strict()).unwrap();
    assert_eq!(
        (m.coo.nrows(), m.coo.ncols(), m.coo.nnz()),
        (841, 841, 4089)
    );
    assert_eq!(m.coo.values()[0], Complex32::new(-218.46, 0.0));
}

#[test]
fn lp_ship04l_rectangular_empty_rows() {
    let m = read_path::<f64, i32>(&bundled("lp_ship04l"), &strict()).unwrap();
    assert_eq!(
        (m.coo.nrows(), m.coo.ncols(), m.coo.nnz()),
        (402, 2166, 6380)
    );
    assert_eq!(empty_rows(&m.coo), 42);
}

#[test]
fn add32_leading_dot_and_zeros() {
    let m = read_path::<f64, i32>(&data("add32_head.mtx"), &strict()).unwrap();
    assert_eq!(m.coo.nnz(), 800);
    assert_eq!(m.coo.values()[0], 0.0320886418015887);
    assert_eq!(m.coo.values()[1], 0.0, "explicit zeros are kept");
}

#[test]
fn memplus_rhs_array() {
    let m = read_path::<f64, i32>(&data("memplus_rhs1_head.mtx"), &strict()).unwrap();
    assert_eq!((m.header.format, m.header.entries), (MmFormat::Array, 2000));
    assert_eq!((m.coo.nrows(), m.coo.ncols(), m.coo.nnz()), (2000, 1, 2000));
    assert_eq!(m.coo.values()[0], -2.3401143219373e-13);
}

// ---------------------------------------------------------------- quirks

#[test]
fn quirk_ca_erdos992() {
    let p = bundled("ca-Erdos992");
    let e = read_path::<f64, i32>(&p, &strict()).unwrap_err();
    assert!(
        matches!(e.kind(), MmErrorKind::CommentedSizeLine { .. }),
        "{e}"
    );
    assert_eq!(e.line(), Some(4));
    assert!(e.to_string().contains("--lenient"));
    let m = read_path::<f64, i32>(&p, &lenient()).unwrap();
    assert_eq!(
        (m.coo.nrows(), m.header.entries, m.coo.nnz()),
        (6100, 7515, 15030)
    );
    assert_eq!(empty_rows(&m.coo), 1006);
    assert_eq!(m.warnings.len(), 1);
    let (h, w) = read_header_path_with(&p, &lenient()).unwrap();
    assert_eq!((h.entries, h.data_line, w.len()), (7515, 4, 1));
}

#[test]
fn quirk_soc_wiki_vote() {
    let p = bundled("soc-wiki-Vote");
    let e = read_path::<f64, i32>(&p, &strict()).unwrap_err();
    assert!(
        matches!(e.kind(), MmErrorKind::SinglePercentBanner { .. }),
        "{e}"
    );
    assert_eq!(e.line(), Some(1));
    assert!(e.to_string().contains("--lenient"));
    let m = read_path::<f64, i32>(&p, &lenient()).unwrap();
    assert_eq!(
        (m.coo.nrows(), m.header.entries, m.coo.nnz()),
        (889, 2914, 5828)
    );
    assert_eq!(m.warnings.len(), 2, "{:?}", m.warnings);
    assert_eq!(m.warnings[1].line, Some(2917));
    // With the banner fixed, the trailing junk alone is an error.
    let text = std::fs::read(&p).unwrap();
    let fixed = [b"%".as_slice(), &text].concat();
    let e = read_bytes::<f64, i32>(&fixed, "w.mtx", &strict()).unwrap_err();
    assert!(
        matches!(e.kind(), MmErrorKind::TooManyEntries { declared: 2914, .. }),
        "{e}"
    );
    assert_eq!(e.line(), Some(2917));
    assert!(e.to_string().contains("--lenient"));
}

#[test]
fn quirk_netscience() {
    let p = bundled("netscience");
    let e = read_path::<f64, i32>(&p, &strict()).unwrap_err();
    assert!(matches!(e.kind(), MmErrorKind::ZeroBased), "{e}");
    assert!(e
        .to_string()
        .contains("indices look 0-based (index 0 found, none equals the size); use --lenient"));
    let m = read_path::<f64, i32>(&p, &lenient()).unwrap();
    assert_eq!(
        (m.coo.nrows(), m.header.entries, m.coo.nnz()),
        (379, 914, 1828)
    );
    assert_eq!(empty_rows(&m.coo), 0);
    assert_eq!(m.warnings.len(), 1);
}

// ---------------------------------------------------------------- layout

#[test]
fn whitespace_crlf_comments_no_final_newline() {
    let text = "%%MatrixMarket MATRIX Coordinate Real General\r\n%%GraphBLAS type float\r\n\r\n  3 3 4 \r\n\
                % comment in data\r\n\t1\t1  .5\r\n\r\n2 2 -.3e-2\r\n%x\r\n3 3 +4\r\n 3 1 1e3";
    let m = rd::<f64>(text).unwrap();
    assert_eq!(m.coo.values(), &[0.5, -0.003, 4.0, 1000.0]);
    assert_eq!(m.coo.rows(), &[0, 1, 2, 2]);
    assert_eq!(m.header.data_line, 5);
}

#[test]
fn many_chunks_with_holes_match_serial_reference() {
    // ~6 MB: several chunks; comments sprinkled in force the exact path.
    let n = 250_000usize;
    let mut s = String::from(HDR);
    s.push_str(&format!("1000 1000 {n}\n"));
    let mut expect = Vec::new();
    for k in 0..n {
        let (i, j, v) = (k * 7 % 1000, k * 13 % 1000, (k as f64) * 0.25 - 3.0);
        s.push_str(&format!("{} {} {v:.17e}\n", i + 1, j + 1));
        if k % 50_000 == 7 {
            s.push_str("% a comment\n\n");
        }
        expect.push((i as i64, j as i64, v));
    }
    let m = read_bytes::<f64, i64>(s.as_bytes(), "big.mtx", &strict()).unwrap();
    assert_eq!(m.coo.nnz(), n);
    for (k, &(i, j, v)) in expect.iter().enumerate() {
        assert_eq!(
            (m.coo.rows()[k], m.coo.cols()[k], m.coo.values()[k]),
            (i, j, v)
        );
    }
    // A bad token deep in the file reports its exact line.
    let bad_line = s.lines().count() - 10;
    let mut lines: Vec<&str> = s.lines().collect();
    lines[bad_line - 1] = "5 5 oops";
    let s2 = lines.join("\n");
    let e = read_bytes::<f64, i64>(s2.as_bytes(), "big.mtx", &strict()).unwrap_err();
    assert_eq!(e.line(), Some(bad_line as u64));
    assert!(matches!(e.kind(), MmErrorKind::BadNumber { .. }));
}

// ---------------------------------------------------------------- expansion

#[test]
fn symmetric_expansion() {
    let m =
        rd::<f64>("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1\n2 1 2\n3 2 3\n")
            .unwrap();
    assert_eq!(
        triplets(&m.coo),
        vec![
            (0, 0, 1.0),
            (0, 1, 2.0),
            (1, 0, 2.0),
            (1, 2, 3.0),
            (2, 1, 3.0)
        ]
    );
    let e = rd::<f64>("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n")
        .unwrap_err();
    assert!(matches!(e.kind(), MmErrorKind::SkewDiagonal { row: 1 }));
    assert_eq!(e.line(), Some(3));
    let m = rd::<Complex64>(
        "%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n1 1 1 0\n2 1 1 2\n",
    )
    .unwrap();
    assert_eq!(
        triplets(&m.coo),
        vec![
            (0, 0, Complex64::new(1.0, 0.0)),
            (0, 1, Complex64::new(1.0, -2.0)),
            (1, 0, Complex64::new(1.0, 2.0))
        ]
    );
}

#[test]
fn real_into_complex_and_integer() {
    let m = rd::<Complex64>(
        "%%MatrixMarket matrix coordinate integer general\n1 2 2\n1 1 -7\n1 2 9007199254740993\n",
    )
    .unwrap();
    assert_eq!(m.coo.values()[0], Complex64::new(-7.0, 0.0));
    assert_eq!(
        m.coo.values()[1].re,
        9007199254740992.0,
        "integers beyond 2^53 round"
    );
}

// ---------------------------------------------------------------- array

#[test]
fn array_formats() {
    let m = rd::<f64>("%%MatrixMarket matrix array real general\n2 2\n1\n0\n3\n4\n").unwrap();
    assert_eq!(
        triplets(&m.coo),
        vec![(0, 0, 1.0), (0, 1, 3.0), (1, 1, 4.0)]
    );
    let m = rd::<f64>("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n").unwrap();
    assert_eq!(
        triplets(&m.coo),
        vec![(0, 0, 1.0), (0, 1, 2.0), (1, 0, 2.0), (1, 1, 3.0)]
    );
    let m = rd::<f64>("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n").unwrap();
    assert_eq!(
        triplets(&m.coo),
        vec![
            (0, 1, -1.0),
            (0, 2, -2.0),
            (1, 0, 1.0),
            (1, 2, -3.0),
            (2, 0, 2.0),
            (2, 1, 3.0)
        ]
    );
    let m = rd::<Complex64>("%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 1\n3 0\n")
        .unwrap();
    assert_eq!(m.coo.nnz(), 4);
    assert_eq!(triplets(&m.coo)[1], (0, 1, Complex64::new(2.0, -1.0)));
    let e =
        rd::<f64>("%%MatrixMarket matrix array real general\n2 2\n1.0\n2.0\n3.0\n").unwrap_err();
    assert!(matches!(
        e.kind(),
        MmErrorKind::TooFewEntries {
            declared: 4,
            found: 3
        }
    ));
    let e = rd::<f64>("%%MatrixMarket matrix array real general\n1 1\n1 2\n").unwrap_err();
    assert!(matches!(e.kind(), MmErrorKind::UnexpectedValue { .. }));
    assert_eq!(e.line(), Some(3));
}

// ---------------------------------------------------------------- bad input

/// Asserts the error kind and line of a strict read.
macro_rules! bad {
    ($text:expr, $line:expr, $pat:pat) => {{
        let e = read_bytes::<f64, i32>($text.as_ref(), "bad.mtx", &strict()).unwrap_err();
        assert!(matches!(e.kind(), $pat), "{e}");
        assert_eq!(e.line(), $line, "{e}");
        assert!(e.to_string().starts_with("bad.mtx"), "{e}");
        e
    }};
}

#[test]
fn bad_headers() {
    bad!("", None, MmErrorKind::Empty);
    bad!("hello world\n", Some(1), MmErrorKind::InvalidBanner { .. });
    bad!(
        "%%MatrixMarket matrix coordinate\n1 1 1\n",
        Some(1),
        MmErrorKind::InvalidBanner { .. }
    );
    bad!(
        "%%MatrixMarket matrix sparse real general\n",
        Some(1),
        MmErrorKind::UnknownKeyword { what: "format", .. }
    );
    bad!(
        "%%MatrixMarket matrix coordinate float general\n",
        Some(1),
        MmErrorKind::UnknownKeyword { what: "field", .. }
    );
    bad!(
        "%%MatrixMarket matrix coordinate real upper\n",
        Some(1),
        MmErrorKind::UnknownKeyword {
            what: "symmetry",
            ..
        }
    );
    bad!(
        "%%MatrixMarket matrix coordinate pattern hermitian\n",
        Some(1),
        MmErrorKind::IllegalCombination { .. }
    );
    bad!(
        "%%MatrixMarket matrix coordinate pattern skew-symmetric\n",
        Some(1),
        MmErrorKind::IllegalCombination { .. }
    );
    bad!(
        "%%MatrixMarket matrix coordinate integer hermitian\n",
        Some(1),
        MmErrorKind::IllegalCombination { .. }
    );
    bad!(
        format!("{HDR}% c\n2 2\n"),
        Some(3),
        MmErrorKind::SizeLine { .. }
    );
    bad!(
        format!("{HDR}2 2 1 4\n"),
        Some(2),
        MmErrorKind::SizeLine { .. }
    );
    bad!(
        format!("{HDR}2 x 1\n"),
        Some(2),
        MmErrorKind::SizeLine { .. }
    );
    let e = bad!(
        "%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n",
        Some(1),
        MmErrorKind::SinglePercentBanner { .. }
    );
    assert!(e.to_string().contains("--lenient"));
    let e = bad!(
        "%%MatrixMarket matrix coordinate real general\n% 5 5 2\n1 1\n2 2\n",
        Some(3),
        MmErrorKind::CommentedSizeLine { .. }
    );
    assert!(e.to_string().contains("--lenient"));
    bad!("3 3 1\n1 1 1\n", Some(1), MmErrorKind::MissingBanner { .. });
}

#[test]
fn bad_content_kinds() {
    bad!(
        b"\x00\x01binary\x00junk".as_slice(),
        None,
        MmErrorKind::NotMatrixMarket { .. }
    );
    let e = bad!(
        "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n",
        None,
        MmErrorKind::NotMatrixMarket { .. }
    );
    assert!(e.to_string().contains("git lfs pull"));
    bad!(
        b"PK\x03\x04rest".as_slice(),
        None,
        MmErrorKind::NotMatrixMarket { .. }
    );
}

#[test]
fn bad_counts() {
    bad!(
        format!("{HDR}2 2 3\n1 1 1.0000\n2 2 2.0000\n"),
        Some(5),
        MmErrorKind::TooFewEntries {
            declared: 3,
            found: 2
        }
    );
    bad!(
        format!("{HDR}2 2 3\n1 1 1.0000\n\n2 2 2.0000\n"),
        Some(6),
        MmErrorKind::TooFewEntries {
            declared: 3,
            found: 2
        }
    );
    let e = bad!(
        format!("{HDR}2 2 1\n1 1 1\n2 2 2\n"),
        Some(4),
        MmErrorKind::TooManyEntries { declared: 1, .. }
    );
    assert!(e.to_string().contains("--lenient"));
    bad!(
        format!("{HDR}2 2 1000000\n1 1 1\n"),
        Some(2),
        MmErrorKind::DeclaredTooLarge { .. }
    );
    bad!(
        format!("{HDR}2 2 99999999999999999999\n"),
        Some(2),
        MmErrorKind::SizeLine { .. }
    );
    bad!(
        "%%MatrixMarket matrix array real general\n100000 100000\n1\n",
        Some(2),
        MmErrorKind::DeclaredTooLarge { .. }
    );
    bad!(
        format!("{HDR}3000000000 2 1\n1 1 1\n"),
        Some(2),
        MmErrorKind::IndexOverflow { index: "i32", .. }
    );
}

#[test]
fn bad_entries() {
    bad!(
        format!("{HDR}2 2 2\n1 1 1\n3 1 1\n"),
        Some(4),
        MmErrorKind::IndexOutOfRange {
            which: "row",
            index: 3,
            max: 2
        }
    );
    bad!(
        format!("{HDR}2 2 1\n1 9 1\n"),
        Some(3),
        MmErrorKind::IndexOutOfRange {
            which: "column",
            ..
        }
    );
    // Index 0 while another index equals the size: plainly invalid.
    bad!(
        format!("{HDR}2 2 2\n2 2 1\n0 1 1\n"),
        Some(4),
        MmErrorKind::ZeroIndex { which: "row" }
    );
    let e = bad!(
        format!("{HDR}3 3 2\n1 0 1\n2 1 1\n"),
        Some(3),
        MmErrorKind::ZeroBased
    );
    assert!(e.to_string().contains("use --lenient"));
    bad!(
        format!("{HDR}2 2 1\n1 x 1\n"),
        Some(3),
        MmErrorKind::BadNumber { .. }
    );
    bad!(
        format!("{HDR}2 2 1\n1 1 1.5x\n"),
        Some(3),
        MmErrorKind::BadNumber { .. }
    );
    bad!(
        format!("{HDR}2 2 1\n1 1 abc\n"),
        Some(3),
        MmErrorKind::BadNumber { .. }
    );
    bad!(
        format!("{HDR}2 2 1\n1.0 1 1\n"),
        Some(3),
        MmErrorKind::BadNumber { .. }
    );
    bad!(
        format!("{HDR}2 2 1\n-1 1 1\n"),
        Some(3),
        MmErrorKind::BadNumber { .. }
    );
    bad!(
        format!("{HDR}2 2 1\n1 1\n"),
        Some(3),
        MmErrorKind::MissingValue { .. }
    );
    bad!(
        format!("{HDR}2 2 1\n1\n"),
        Some(3),
        MmErrorKind::MissingValue { .. }
    );
    bad!(
        format!("{HDR}2 2 1\n1 1 1 2\n"),
        Some(3),
        MmErrorKind::UnexpectedValue { .. }
    );
    let e = bad!(
        "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 5\n",
        Some(3),
        MmErrorKind::UnexpectedValue { .. }
    );
    assert!(e.to_string().contains("--lenient"));
    bad!(
        "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 5\n",
        None,
        MmErrorKind::TypeMismatch { .. }
    );
    let e = read_bytes::<Complex64, i32>(
        b"%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 5\n",
        "c.mtx",
        &strict(),
    )
    .unwrap_err();
    assert!(matches!(
        e.kind(),
        MmErrorKind::MissingValue {
            expected: "imaginary part",
            ..
        }
    ));
    bad!(
        format!("{HDR}2 2 1\n1 1 nan\n"),
        Some(3),
        MmErrorKind::NonFinite { .. }
    );
    bad!(
        format!("{HDR}2 2 1\n1 1 -inf\n"),
        Some(3),
        MmErrorKind::NonFinite { .. }
    );
    bad!(
        format!("{HDR}2 2 1\n1 1 1e400\n"),
        Some(3),
        MmErrorKind::ValueOutOfRange { ty: "f64", .. }
    );
    let e = read_bytes::<f32, i32>(
        format!("{HDR}2 2 1\n1 1 1e39\n").as_bytes(),
        "f.mtx",
        &strict(),
    )
    .unwrap_err();
    assert!(matches!(
        e.kind(),
        MmErrorKind::ValueOutOfRange { ty: "f32", .. }
    ));
    bad!(
        "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n",
        Some(3),
        MmErrorKind::BadNumber { .. }
    );
    bad!(
        "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 99999999999999999999\n",
        Some(3),
        MmErrorKind::ValueOutOfRange { ty: "i64", .. }
    );
    let e = bad!(
        "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n2 1 1\n1 3 1\n",
        Some(4),
        MmErrorKind::NotLowerTriangle { row: 1, col: 3, .. }
    );
    assert!(e
        .to_string()
        .contains("entry (1,3) above the diagonal in a symmetric file"));
    bad!(
        "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n",
        Some(2),
        MmErrorKind::NonSquare { .. }
    );
}

// ---------------------------------------------------------------- lenient

#[test]
fn lenient_recoveries() {
    // 0-based.
    let m = rd_len(&format!("{HDR}3 3 2\n0 0 1\n2 1 2\n")).unwrap();
    assert_eq!(triplets(&m.coo), vec![(0, 0, 1.0), (2, 1, 2.0)]);
    // Pattern with values.
    let m =
        rd_len("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 1 5\n2 2 6\n").unwrap();
    assert_eq!(m.coo.values(), &[1.0, 1.0]);
    assert_eq!(m.warnings.len(), 1);
    assert_eq!(m.warnings[0].line, Some(3));
    // Trailing junk.
    let m = rd_len(&format!("{HDR}2 2 1\n1 1 1\njunk here\n1 2 3 4\n")).unwrap();
    assert_eq!(m.coo.nnz(), 1);
    assert_eq!(m.warnings[0].line, Some(4));
    // Missing banner.
    let m = rd_len("2 2 1\n2 1 1+0\n").unwrap_err();
    assert!(matches!(m.kind(), MmErrorKind::BadNumber { .. }));
    let m = rd_len("2 2 2\n2 1\n1 1\n").unwrap();
    assert_eq!((m.header.field, m.coo.nnz()), (MmField::Pattern, 2));
    let m = read_bytes::<Complex64, i32>(b"2 2 1\n2 1 1 2\n", "x", &lenient()).unwrap();
    assert_eq!(m.coo.values(), &[Complex64::new(1.0, 2.0)]);
    // Both triangles: agreeing mirrors dropped, conflicts reported.
    let m = rd_len(
        "%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n2 1 1\n1 2 1\n3 1 2\n1 3 9\n2 3 4\n",
    )
    .unwrap();
    assert_eq!(
        triplets(&m.coo),
        vec![
            (0, 1, 1.0),
            (0, 2, 2.0),
            (1, 0, 1.0),
            (1, 2, 4.0),
            (2, 0, 2.0),
            (2, 1, 4.0)
        ]
    );
    assert_eq!(m.warnings.len(), 2, "{:?}", m.warnings);
    assert!(m.warnings[1].message.contains("disagree"));
    // NaN accepted.
    let m = rd_len(&format!("{HDR}1 1 1\n1 1 NaN\n")).unwrap();
    assert!(m.coo.values()[0].is_nan());
}

// ---------------------------------------------------------------- gzip, paths

#[test]
fn gzip_and_header_only() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read(bundled("plskz362")).unwrap();
    let gz = dir.path().join("m.mtx.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&text).unwrap();
    let bytes = enc.finish().unwrap();
    std::fs::write(&gz, &bytes).unwrap();
    // Magic bytes decide, not the extension.
    let disguised = dir.path().join("m.mtx");
    std::fs::write(&disguised, &bytes).unwrap();
    let a = read_path::<f64, i32>(&gz, &strict()).unwrap();
    let b = read_path::<f64, i32>(&disguised, &strict()).unwrap();
    let c = read_path::<f64, i32>(&bundled("plskz362"), &strict()).unwrap();
    assert_eq!(a.coo, c.coo);
    assert_eq!(b.coo, c.coo);
    let h = read_header_path(&gz).unwrap();
    assert_eq!(
        (h.nrows, h.entries, h.symmetry),
        (362, 880, MmSymmetry::SkewSymmetric)
    );
    assert_eq!(h, c.header);
    assert_eq!(read_header_bytes(&bytes, "m.gz").unwrap(), c.header);
    assert_eq!(read_header_bytes(&text, "m").unwrap(), c.header);
    // Truncated gzip.
    let cut = dir.path().join("cut.mtx.gz");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = read_path::<f64, i32>(&cut, &strict()).unwrap_err();
    assert!(matches!(e.kind(), MmErrorKind::Gzip(_)), "{e}");
    assert!(e.to_string().contains("cut.mtx.gz"));
    let e = read_bytes::<f64, i32>(&bytes[..40], "x.gz", &strict()).unwrap_err();
    assert!(matches!(e.kind(), MmErrorKind::Gzip(_)), "{e}");
    // Empty and missing files.
    let empty = dir.path().join("e.mtx");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(
        read_path::<f64, i32>(&empty, &strict()).unwrap_err().kind(),
        MmErrorKind::Empty
    ));
    assert!(matches!(
        read_header_path(&empty).unwrap_err().kind(),
        MmErrorKind::Empty
    ));
    let e = read_path::<f64, i32>(&dir.path().join("nope.mtx"), &strict()).unwrap_err();
    assert!(matches!(e.kind(), MmErrorKind::Io(_)));
}

#[test]
fn header_with_long_comment_block() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.mtx");
    let mut s = String::from(HDR);
    for _ in 0..5000 {
        s.push_str("% a comment line that pads the header beyond the first read\n");
    }
    s.push_str("4 4 1\n1 1 1\n");
    std::fs::write(&p, &s).unwrap();
    let h = read_header_path(&p).unwrap();
    assert_eq!((h.nrows, h.entries, h.data_line), (4, 1, 5003));
    assert_eq!(&s[h.data_offset..], "1 1 1\n");
}

// ---------------------------------------------------------------- writer

/// Options writing every entry as stored (`general`): read → write → read
/// is then the identity, entry order included.
fn general<T: Scalar>() -> WriteOptions {
    WriteOptions {
        symmetry: WriteSymmetry::General,
        ..WriteOptions::for_type::<T>()
    }
}

/// The matrix as sorted (row, col, value) with duplicates summed in stored
/// order: what a symmetric write keeps.
fn canon<T: Scalar, I: Index>(m: &Coo<T, I>) -> (usize, usize, Vec<(usize, usize, T)>) {
    let mut e: Vec<(usize, usize, T)> = Vec::with_capacity(m.nnz());
    sparsetool_formats::MatrixRef::Coo(m).for_each_entry(|r, c, v| e.push((r, c, v)));
    e.sort_by_key(|t| (t.0, t.1));
    let mut out: Vec<(usize, usize, T)> = Vec::new();
    for (r, c, v) in e {
        match out.last_mut() {
            Some(l) if (l.0, l.1) == (r, c) => l.2 += v,
            _ => out.push((r, c, v)),
        }
    }
    (m.nrows(), m.ncols(), out)
}

#[test]
fn write_read_real_files_identity() {
    for f in ["add32_head.mtx", "memplus_rhs1_head.mtx"] {
        let a = read_path::<f64, i32>(&data(f), &strict()).unwrap();
        let mut out = Vec::new();
        write_coo(&mut out, &a.coo, &general::<f64>()).unwrap();
        let b = read_bytes::<f64, i32>(&out, f, &strict()).unwrap();
        assert_eq!(a.coo, b.coo, "{f}");
    }
    for f in ["cha", "young1c"] {
        let a = read_path::<Complex64, i64>(&bundled(f), &lenient()).unwrap();
        let mut out = Vec::new();
        write_coo(&mut out, &a.coo, &general::<Complex64>()).unwrap();
        let b = read_bytes::<Complex64, i64>(&out, f, &strict()).unwrap();
        assert_eq!(a.coo, b.coo, "{f}");
        let mut out = Vec::new();
        write_coo(&mut out, &a.coo, &WriteOptions::for_type::<Complex64>()).unwrap();
        let b = read_bytes::<Complex64, i64>(&out, f, &strict()).unwrap();
        assert_eq!(canon(&a.coo), canon(&b.coo), "{f}");
    }
}

#[test]
fn write_csr_rows() {
    let csr = Csr::<f32, i32>::try_from_parts(
        3,
        4,
        vec![0, 2, 2, 3],
        vec![0, 3, 1],
        vec![0.1, -2.5, 3.0],
    )
    .unwrap();
    let mut out = Vec::new();
    write_csr(&mut out, &csr, &WriteOptions::default()).unwrap();
    let s = String::from_utf8(out.clone()).unwrap();
    assert!(s.ends_with("3 4 3\n1 1 0.1\n1 4 -2.5\n3 2 3.0\n"), "{s}");
    let m = read_bytes::<f32, i32>(&out, "csr", &strict()).unwrap();
    assert_eq!(m.coo.values(), csr.values());
    let pat = WriteOptions {
        field: MmField::Pattern,
        comment: None,
        ..WriteOptions::default()
    };
    let mut out = Vec::new();
    write_csr(&mut out, &csr, &pat).unwrap();
    assert!(String::from_utf8(out)
        .unwrap()
        .contains("coordinate pattern general\n"));
}

fn coo_strategy<T: Scalar + std::fmt::Debug, I: Index>(
    val: impl Strategy<Value = T> + Clone,
) -> impl Strategy<Value = Coo<T, I>> {
    (1usize..40, 1usize..40).prop_flat_map(move |(m, n)| {
        proptest::collection::vec((0..m, 0..n, val.clone()), 0..120).prop_map(move |es| {
            let rows = es.iter().map(|e| I::from_usize_unchecked(e.0)).collect();
            let cols = es.iter().map(|e| I::from_usize_unchecked(e.1)).collect();
            let vals = es.iter().map(|e| e.2).collect();
            Coo::try_from_parts(m, n, rows, cols, vals).unwrap()
        })
    })
}

fn finite_f64() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO,
        (-1000i32..1000).prop_map(f64::from),
    ]
}

fn roundtrip<T: Scalar, I: Index>(m: &Coo<T, I>, opts: &WriteOptions) -> Coo<T, I> {
    let mut out = Vec::new();
    write_coo(&mut out, m, opts).unwrap();
    read_bytes::<T, I>(&out, "rt", &strict()).unwrap().coo
}

/// `m` plus its mirror (`sign` times each value, conjugated if `conj`),
/// so that it is symmetric, skew-symmetric or hermitian when the diagonal
/// allows.
fn mirrored<T: Scalar, I: Index>(m: &Coo<T, I>, sign: T, conj: bool) -> Coo<T, I> {
    let n = m.nrows().min(m.ncols());
    let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for ((&i, &j), &x) in m.rows().iter().zip(m.cols()).zip(m.values()) {
        let (iu, ju) = (i.to_usize(), j.to_usize());
        if iu >= n || ju >= n || iu == ju {
            continue;
        }
        r.extend([i, j]);
        c.extend([j, i]);
        v.extend([x, sign * if conj { x.conj() } else { x }]);
    }
    Coo::try_from_parts(n, n, r, c, v).unwrap()
}

proptest! {
    #[test]
    fn prop_roundtrip_f64_i32(m in coo_strategy::<f64, i32>(finite_f64())) {
        prop_assert_eq!(roundtrip(&m, &general::<f64>()), m.clone());
        prop_assert_eq!(canon(&roundtrip(&m, &WriteOptions::default())), canon(&m));
    }

    #[test]
    fn prop_roundtrip_f64_i64(m in coo_strategy::<f64, i64>(finite_f64())) {
        prop_assert_eq!(roundtrip(&m, &general::<f64>()), m);
    }

    #[test]
    fn prop_roundtrip_c64_i32(m in coo_strategy::<Complex64, i32>(
        (finite_f64(), finite_f64()).prop_map(|(a, b)| Complex64::new(a, b)))) {
        prop_assert_eq!(roundtrip(&m, &general::<Complex64>()), m);
    }

    #[test]
    fn prop_roundtrip_c64_i64(m in coo_strategy::<Complex64, i64>(
        (finite_f64(), finite_f64()).prop_map(|(a, b)| Complex64::new(a, b)))) {
        prop_assert_eq!(roundtrip(&m, &general::<Complex64>()), m);
    }

    #[test]
    fn prop_roundtrip_f32(m in coo_strategy::<f32, i32>(
        proptest::num::f32::NORMAL | proptest::num::f32::SUBNORMAL | proptest::num::f32::ZERO)) {
        prop_assert_eq!(roundtrip(&m, &general::<f32>()), m);
    }

    #[test]
    fn prop_roundtrip_auto_symmetric_kinds(m in coo_strategy::<Complex64, i32>(
        (finite_f64(), finite_f64()).prop_map(|(a, b)| Complex64::new(a, b)))) {
        let one = Complex64::new(1.0, 0.0);
        for (sign, conj) in [(one, false), (-one, false), (one, true)] {
            let s = mirrored(&m, sign, conj);
            let back = roundtrip(&s, &WriteOptions::for_type::<Complex64>());
            prop_assert_eq!(canon(&back), canon(&s));
        }
        prop_assert_eq!(canon(&roundtrip(&m, &WriteOptions::for_type::<Complex64>())), canon(&m));
    }

    #[test]
    fn prop_never_panics_text(
        head in proptest::sample::select(vec![
            "%%MatrixMarket matrix coordinate real general\n",
            "%%MatrixMarket matrix coordinate complex hermitian\n",
            "%%MatrixMarket matrix coordinate pattern symmetric\n",
            "%%MatrixMarket matrix coordinate integer skew-symmetric\n",
            "%%MatrixMarket matrix array real symmetric\n",
            "%MatrixMarket matrix coordinate real general\n",
            "",
        ]),
        size in proptest::sample::select(vec!["3 3 4\n", "3 3\n", "2 3 1\n", ""]),
        body in "[0-9 .eE+\\-%\n\r\tnaif]{0,120}",
    ) {
        let text = format!("{head}{size}{body}");
        for o in [strict(), lenient(), ReadOptions { expand_symmetry: false, lenient: true }] {
            let _ = read_bytes::<f64, i32>(text.as_bytes(), "fuzz", &o);
            let _ = read_bytes::<Complex32, i64>(text.as_bytes(), "fuzz", &o);
        }
    }

    #[test]
    fn prop_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut text = b"%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n".to_vec();
        text.extend_from_slice(&bytes);
        let _ = read_bytes::<f64, i32>(&text, "fuzz", &strict());
        let _ = read_bytes::<f64, i32>(&text, "fuzz", &lenient());
        let _ = read_bytes::<f64, i32>(&bytes, "fuzz", &lenient());
    }
}

/// Rows, columns, entries and (min, max, empty) row lengths of a matrix.
fn shape_and_rows<T: Scalar>(m: &Coo<T, i32>) -> (usize, usize, usize, (usize, usize, usize)) {
    let mut lens = vec![0usize; m.nrows()];
    for r in m.rows() {
        lens[r.to_usize()] += 1;
    }
    let min = lens.iter().copied().min().unwrap_or(0);
    let max = lens.iter().copied().max().unwrap_or(0);
    let empty = lens.iter().filter(|&&l| l == 0).count();
    (m.nrows(), m.ncols(), m.nnz(), (min, max, empty))
}

/// Reads `m` (strictly, or leniently for a quirk file) in its value type,
/// checks the counts its manifest records, and that writing and reading
/// again gives the same matrix.
fn check_bundled<T: Scalar>(m: &RealMatrix, opts: &WriteOptions) {
    let read = if m.quirk.is_some() {
        lenient()
    } else {
        strict()
    };
    let a = read_path::<T, i32>(&m.path, &read)
        .unwrap_or_else(|e| panic!("{}: {e}", m.name))
        .coo;
    match m.nnz_expanded {
        Some(nnz) => assert_eq!(
            shape_and_rows(&a),
            (
                m.nrows,
                m.ncols,
                nnz,
                (m.row_len_min, m.row_len_max, m.empty_rows)
            ),
            "{}",
            m.name
        ),
        // An array file: the manifest counts its stored values, zeros
        // included; the reader keeps the nonzero ones.
        None => {
            assert_eq!((a.nrows(), a.ncols()), (m.nrows, m.ncols), "{}", m.name);
            assert!(a.nnz() <= m.nnz_stored && a.nnz() > 0, "{}", m.name);
            assert!(a.values().iter().all(|v| *v != T::zero()), "{}", m.name);
        }
    }
    let mut out = Vec::new();
    let exact = WriteOptions {
        symmetry: WriteSymmetry::General,
        ..opts.clone()
    };
    write_coo(&mut out, &a, &exact).unwrap();
    let b = read_bytes::<T, i32>(&out, m.name, &strict()).unwrap().coo;
    assert_eq!(a, b, "{}: written and read again", m.name);
    let mut out = Vec::new();
    write_coo(&mut out, &a, opts).unwrap();
    let b = read_bytes::<T, i32>(&out, m.name, &strict()).unwrap().coo;
    assert_eq!(
        canon(&a),
        canon(&b),
        "{}: written (auto) and read again",
        m.name
    );
}

/// Every matrix bundled in `fixtures/matrices` (18 real, 3 quirks; gzipped
/// or not) reads with the counts its manifest records and round-trips.
#[test]
fn bundled_matrices_match_manifest_and_round_trip() {
    let all: Vec<RealMatrix> = real_matrices()
        .into_iter()
        .chain(quirk_matrices())
        .collect();
    assert_eq!(all.len(), 21);
    for m in &all {
        if m.field == "complex" {
            check_bundled::<Complex64>(m, &WriteOptions::for_type::<Complex64>());
        } else {
            check_bundled::<f64>(m, &WriteOptions::default());
        }
    }
}

#[test]
fn utf8_bom_strict_error_lenient_warning() {
    let text = "\u{feff}%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3.5\n";
    let e = rd::<f64>(text).unwrap_err();
    assert!(matches!(e.kind(), MmErrorKind::ByteOrderMark), "{e}");
    assert_eq!(e.line(), Some(1));
    assert!(e.to_string().contains("byte-order mark"), "{e}");
    assert!(e.to_string().contains("--lenient"), "{e}");
    let m = rd_len(text).unwrap();
    assert_eq!(triplets(&m.coo), vec![(0, 1, 3.5)]);
    assert_eq!(m.warnings.len(), 1);
    assert!(m.warnings[0].message.contains("byte-order mark"));
}
