//! Unit tests of `.npz` reading and writing (the SciPy cross-checks live in
//! `formats/tests/npz_scipy.rs`).

use std::io::{Cursor, Write};

use super::*;
use crate::Complex64;

/// Seed example B of the worked examples in fixtures/src/seed.rs. (This
/// unit-test build of the crate is not the one fixtures links, so the matrix
/// is built here from fixtures' plain arrays.)
fn csr_b() -> Csr<f64, i32> {
    let b = &sparsetool_fixtures::seed::B;
    Csr::try_from_parts(
        b.nrows,
        b.ncols,
        sparsetool_fixtures::seed::idx(b.csr_row_ptr),
        sparsetool_fixtures::seed::idx(b.csr_col),
        b.csr_val.to_vec(),
    )
    .unwrap()
}

fn bytes_of(f: impl FnOnce(&mut NpzWriter<&mut Cursor<Vec<u8>>>)) -> Vec<u8> {
    let mut c = Cursor::new(Vec::new());
    let mut w = NpzWriter::new(&mut c);
    f(&mut w);
    w.finish().unwrap();
    c.into_inner()
}

fn err_of<T: std::fmt::Debug>(r: Result<T, NpzError>) -> NpzError {
    match r {
        Err(e) => e,
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}

#[test]
fn csr_roundtrip_all_types() {
    let a = csr_b();
    let mut c = Cursor::new(Vec::new());
    write_csr(&mut c, &a).unwrap();
    let bytes = c.into_inner();
    let mut ar = NpzArchive::from_bytes(bytes.clone(), "b.npz").unwrap();
    assert_eq!(ar.names(), ["indices", "indptr", "format", "shape", "data"]);
    assert_eq!(ar.format_tag().unwrap(), "csr");
    assert_eq!(ar.shape().unwrap(), (4, 4));
    match read_npz_bytes::<f64, i32>(bytes.clone(), "b.npz").unwrap() {
        AnyMatrix::Csr(b) => assert_eq!(a, b),
        other => panic!("{other:?}"),
    }
    // Widening indices and converting values on read.
    match read_npz_bytes::<f32, i64>(bytes.clone(), "b.npz").unwrap() {
        AnyMatrix::Csr(b) => {
            assert_eq!(b.row_ptr(), sparsetool_fixtures::seed::B.csr_row_ptr);
            assert_eq!(b.values()[4], 9.0f32);
        }
        other => panic!("{other:?}"),
    }
    match read_npz_bytes::<Complex64, i32>(bytes, "b.npz").unwrap() {
        AnyMatrix::Csr(b) => assert_eq!(b.values()[1], Complex64::new(7.0, 0.0)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn coo_roundtrip_with_duplicates() {
    let a = Coo::<Complex64, i64>::try_from_parts(
        3,
        2,
        vec![2, 0, 2],
        vec![1, 0, 1],
        vec![
            Complex64::new(1.0, -1.0),
            Complex64::new(2.0, 0.5),
            Complex64::new(3.0, 0.0),
        ],
    )
    .unwrap();
    let mut c = Cursor::new(Vec::new());
    write_coo(&mut c, &a).unwrap();
    let bytes = c.into_inner();
    let ar = NpzArchive::from_bytes(bytes.clone(), "c.npz").unwrap();
    assert_eq!(ar.names(), ["row", "col", "format", "shape", "data"]);
    match read_npz_bytes::<Complex64, i64>(bytes.clone(), "c.npz").unwrap() {
        AnyMatrix::Coo(b) => assert_eq!(a, b),
        other => panic!("{other:?}"),
    }
    // Complex values into a real type are refused.
    let e = err_of(read_npz_bytes::<f64, i64>(bytes, "c.npz"));
    assert!(matches!(e.kind(), NpzErrorKind::WrongDtype { .. }), "{e}");
    assert_eq!(e.array(), Some("data"));
    let msg = e.to_string();
    assert!(
        msg.starts_with("c.npz: array `data` has dtype complex128 (`<c16`)"),
        "{msg}"
    );
}

#[test]
fn empty_matrix_roundtrip() {
    let a = Csr::<f32, i64>::empty(0, 0);
    let mut c = Cursor::new(Vec::new());
    write_csr(&mut c, &a).unwrap();
    match read_npz_bytes::<f32, i64>(c.into_inner(), "e.npz").unwrap() {
        AnyMatrix::Csr(b) => assert_eq!(a, b),
        other => panic!("{other:?}"),
    }
}

#[test]
fn scalars_and_tags() {
    let bytes = bytes_of(|w| {
        w.add_i64_scalar("width", -7).unwrap();
        w.add_format_tag("sell").unwrap();
        w.add_array("one", &[1], &[42i32]).unwrap();
        w.add_array("two", &[2, 3], &[1u8, 2, 3, 4, 5, 6]).unwrap();
        assert!(w.add_array("bad", &[2, 2], &[1u8]).is_err());
        assert!(
            w.add_array("one", &[1], &[1u8]).is_err(),
            "duplicate name accepted"
        );
        assert!(w.add_array("a/b", &[1], &[1u8]).is_err());
        assert!(w.add_format_tag("").is_err());
    });
    let mut ar = NpzArchive::from_bytes(bytes, "s.npz").unwrap();
    assert_eq!(ar.i64_scalar("width").unwrap(), -7);
    assert_eq!(ar.i64_scalar("one").unwrap(), 42);
    assert_eq!(ar.format_tag().unwrap(), "sell");
    assert_eq!(
        ar.index_array::<i32>("two").unwrap(),
        vec![1, 2, 3, 4, 5, 6]
    );
    assert!(ar.i64_scalar("two").is_err());
    assert!(ar.index_array::<i32>("width").unwrap() == vec![-7]);
    // The format tag is not numeric.
    assert!(matches!(
        ar.index_array::<i32>("format").unwrap_err().kind(),
        NpzErrorKind::WrongDtype { .. }
    ));
}

#[test]
fn entries_are_aligned_and_deterministic() {
    let a = csr_b();
    let mut c1 = Cursor::new(Vec::new());
    write_csr(&mut c1, &a).unwrap();
    let mut c2 = Cursor::new(Vec::new());
    write_csr(&mut c2, &a).unwrap();
    assert_eq!(c1.get_ref(), c2.get_ref());
    // Every entry's .npy header is a multiple of 64 bytes: find the magic.
    let b = c1.into_inner();
    let mut found = 0;
    for pos in 0..b.len().saturating_sub(10) {
        if &b[pos..pos + 6] == npy::MAGIC {
            let hl = u16::from_le_bytes([b[pos + 8], b[pos + 9]]) as usize;
            assert_eq!((10 + hl) % 64, 0);
            found += 1;
        }
    }
    assert_eq!(found, 5);
}

#[test]
fn unsorted_and_duplicate_csr_becomes_coo() {
    let bytes = bytes_of(|w| {
        w.add_array("indices", &[4], &[2i32, 0, 1, 1]).unwrap();
        w.add_array("indptr", &[3], &[0i32, 2, 4]).unwrap();
        w.add_format_tag("csr").unwrap();
        w.add_shape(2, 3).unwrap();
        w.add_array("data", &[4], &[1.0f64, 2.0, 3.0, 4.0]).unwrap();
    });
    match read_npz_bytes::<f64, i32>(bytes, "u.npz").unwrap() {
        AnyMatrix::Coo(c) => {
            assert_eq!(c.rows(), &[0, 0, 1, 1]);
            assert_eq!(c.cols(), &[2, 0, 1, 1]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn canonical_csc_becomes_csc_and_unsorted_csc_coo() {
    // [[0, 0, 3], [4, 0, 0]] in CSC.
    let bytes = bytes_of(|w| {
        w.add_array("indices", &[2], &[1i64, 0]).unwrap();
        w.add_array("indptr", &[4], &[0i64, 1, 1, 2]).unwrap();
        w.add_format_tag("csc").unwrap();
        w.add_shape(2, 3).unwrap();
        w.add_array("data", &[2], &[4i64, 3]).unwrap();
    });
    match read_npz_bytes::<f64, i32>(bytes, "csc.npz").unwrap() {
        AnyMatrix::Csc(c) => {
            assert_eq!((c.nrows(), c.ncols()), (2, 3));
            assert_eq!(c.col_ptr(), &[0, 1, 1, 2]);
            assert_eq!(c.row_idx(), &[1, 0]);
            assert_eq!(c.values(), &[4.0, 3.0]);
        }
        other => panic!("{other:?}"),
    }
    // Column 0 holds rows 1, 0 (unsorted): the same entries as COO.
    let bytes = bytes_of(|w| {
        w.add_array("indices", &[3], &[1i64, 0, 0]).unwrap();
        w.add_array("indptr", &[3], &[0i64, 2, 3]).unwrap();
        w.add_format_tag("csc").unwrap();
        w.add_shape(2, 2).unwrap();
        w.add_array("data", &[3], &[4.0f64, 3.0, 5.0]).unwrap();
    });
    match read_npz_bytes::<f64, i32>(bytes, "u.npz").unwrap() {
        AnyMatrix::Coo(c) => {
            assert_eq!(c.rows(), &[1, 0, 0]);
            assert_eq!(c.cols(), &[0, 0, 1]);
            assert_eq!(c.values(), &[4.0, 3.0, 5.0]);
        }
        other => panic!("{other:?}"),
    }
    // A row index out of range is named in CSC terms.
    let bytes = bytes_of(|w| {
        w.add_array("indices", &[1], &[2i32]).unwrap();
        w.add_array("indptr", &[2], &[0i32, 1]).unwrap();
        w.add_format_tag("csc").unwrap();
        w.add_shape(2, 1).unwrap();
        w.add_array("data", &[1], &[1.0f64]).unwrap();
    });
    let e = err_of(read_npz_bytes::<f64, i32>(bytes, "bad.npz"));
    assert!(e.to_string().contains("bad.npz"), "{e}");
    assert!(e.to_string().contains("out of bounds"), "{e}");
}

#[test]
fn not_a_zip() {
    let e = err_of(NpzArchive::from_bytes(
        b"hello world, not a zip".to_vec(),
        "x.npz",
    ));
    assert!(matches!(e.kind(), NpzErrorKind::NotZip(_)), "{e:?}");
    assert!(e.to_string().starts_with("x.npz: not a valid .npz"), "{e}");
    let e = err_of(NpzArchive::from_bytes(Vec::new(), "empty.npz"));
    assert!(matches!(e.kind(), NpzErrorKind::NotZip(_)), "{e:?}");
    let e = err_of(NpzArchive::open(Path::new("/nonexistent/dir/m.npz")));
    assert!(matches!(e.kind(), NpzErrorKind::Io(_)), "{e:?}");
    assert!(e.to_string().contains("/nonexistent/dir/m.npz"));
}

#[test]
fn missing_indptr() {
    let bytes = bytes_of(|w| {
        w.add_array("indices", &[1], &[0i32]).unwrap();
        w.add_format_tag("csr").unwrap();
        w.add_shape(1, 1).unwrap();
        w.add_array("data", &[1], &[1.0f64]).unwrap();
    });
    let e = err_of(read_npz_bytes::<f64, i32>(bytes, "m.npz"));
    assert!(matches!(e.kind(), NpzErrorKind::MissingArray));
    assert_eq!(
        e.to_string(),
        "m.npz: array `indptr` is missing from the archive"
    );
}

#[test]
fn wrong_dtypes() {
    let bytes = bytes_of(|w| {
        w.add_array("indices", &[1], &[0.0f64]).unwrap();
        w.add_array("indptr", &[2], &[0i32, 1]).unwrap();
        w.add_format_tag("csr").unwrap();
        w.add_shape(1, 1).unwrap();
        w.add_array("data", &[1], &[1.0f64]).unwrap();
    });
    let e = err_of(read_npz_bytes::<f64, i32>(bytes, "d.npz"));
    assert_eq!(e.array(), Some("indices"));
    assert!(matches!(e.kind(), NpzErrorKind::WrongDtype { .. }));
    // Unsupported format tag.
    let bytes = bytes_of(|w| {
        w.add_format_tag("dia").unwrap();
        w.add_shape(1, 1).unwrap();
    });
    let e = err_of(read_npz_bytes::<f64, i32>(bytes, "dia.npz"));
    assert!(
        matches!(e.kind(), NpzErrorKind::UnsupportedFormat(_)),
        "{e}"
    );
}

#[test]
fn index_out_of_range() {
    let bytes = bytes_of(|w| {
        w.add_array("big", &[2], &[1i64, 1 << 40]).unwrap();
        w.add_array("neg", &[2], &[-1i64, -5]).unwrap();
    });
    let mut ar = NpzArchive::from_bytes(bytes, "r.npz").unwrap();
    let e = err_of(ar.index_array::<i32>("big"));
    assert!(matches!(e.kind(), NpzErrorKind::OutOfRange(_)), "{e}");
    assert_eq!(ar.index_array::<i64>("big").unwrap(), vec![1, 1 << 40]);
    assert_eq!(ar.index_array::<i32>("neg").unwrap(), vec![-1, -5]);
}

#[test]
fn inconsistent_lengths() {
    let bytes = bytes_of(|w| {
        w.add_array("indices", &[2], &[0i32, 1]).unwrap();
        w.add_array("indptr", &[3], &[0i32, 1, 2]).unwrap();
        w.add_format_tag("csr").unwrap();
        w.add_shape(2, 2).unwrap();
        w.add_array("data", &[3], &[1.0f64, 2.0, 3.0]).unwrap();
    });
    let e = err_of(read_npz_bytes::<f64, i32>(bytes, "l.npz"));
    assert!(
        matches!(e.kind(), NpzErrorKind::Format(FormatError::Length { .. })),
        "{e}"
    );
    // indptr that does not end at nnz
    let bytes = bytes_of(|w| {
        w.add_array("indices", &[2], &[0i32, 1]).unwrap();
        w.add_array("indptr", &[3], &[0i32, 1, 3]).unwrap();
        w.add_format_tag("csr").unwrap();
        w.add_shape(2, 2).unwrap();
        w.add_array("data", &[2], &[1.0f64, 2.0]).unwrap();
    });
    let e = err_of(read_npz_bytes::<f64, i32>(bytes, "p.npz"));
    assert_eq!(e.array(), Some("indptr"));
    assert!(
        matches!(
            e.kind(),
            NpzErrorKind::Format(FormatError::PointerEnd { .. })
        ),
        "{e}"
    );
    // coo index out of bounds
    let bytes = bytes_of(|w| {
        w.add_array("row", &[1], &[5i32]).unwrap();
        w.add_array("col", &[1], &[0i32]).unwrap();
        w.add_format_tag("coo").unwrap();
        w.add_shape(2, 2).unwrap();
        w.add_array("data", &[1], &[1.0f64]).unwrap();
    });
    let e = err_of(read_npz_bytes::<f64, i32>(bytes, "o.npz"));
    assert!(
        matches!(
            e.kind(),
            NpzErrorKind::Format(FormatError::RowOutOfBounds { .. })
        ),
        "{e}"
    );
}

/// Builds a stored archive with one raw entry (no header checks).
fn raw_entry(name: &str, content: &[u8]) -> Vec<u8> {
    let mut c = Cursor::new(Vec::new());
    let mut z = zip::ZipWriter::new(&mut c);
    let o =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    z.start_file(name, o).unwrap();
    z.write_all(content).unwrap();
    z.finish().unwrap();
    c.into_inner()
}

#[test]
fn truncated_and_bad_entries() {
    // Header declares 100 f8 values; only 3 present.
    let mut content = npy::header_bytes("<f8", false, &[100]).unwrap();
    content.extend_from_slice(&[0u8; 24]);
    let mut ar = NpzArchive::from_bytes(raw_entry("data.npy", &content), "t.npz").unwrap();
    let e = err_of(ar.value_array::<f64>("data"));
    assert!(
        matches!(
            e.kind(),
            NpzErrorKind::Truncated {
                declared: 800,
                available: 24
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("truncated"), "{e}");
    // A huge declared shape must not allocate.
    let content = npy::header_bytes("<f8", false, &[1 << 40]).unwrap();
    let mut ar = NpzArchive::from_bytes(raw_entry("data.npy", &content), "h.npz").unwrap();
    assert!(matches!(
        err_of(ar.value_array::<f64>("data")).kind(),
        NpzErrorKind::Truncated { .. }
    ));
    // Not an npy entry.
    let mut ar = NpzArchive::from_bytes(raw_entry("data.npy", b"garbage!"), "g.npz").unwrap();
    assert!(matches!(
        err_of(ar.value_array::<f64>("data")).kind(),
        NpzErrorKind::BadHeader(_)
    ));
    // Big-endian.
    let mut content = npy::header_bytes(">f8", false, &[1]).unwrap();
    content.extend_from_slice(&[0u8; 8]);
    let mut ar = NpzArchive::from_bytes(raw_entry("data.npy", &content), "be.npz").unwrap();
    assert!(matches!(
        err_of(ar.value_array::<f64>("data")).kind(),
        NpzErrorKind::BigEndian(_)
    ));
    // Fortran order, 2-d.
    let mut content = npy::header_bytes("<f8", true, &[2, 2]).unwrap();
    content.extend_from_slice(&[0u8; 32]);
    let mut ar = NpzArchive::from_bytes(raw_entry("data.npy", &content), "fo.npz").unwrap();
    assert!(matches!(
        err_of(ar.value_array::<f64>("data")).kind(),
        NpzErrorKind::FortranOrder
    ));
    // Fortran order, 1-d is fine.
    let mut content = npy::header_bytes("<f8", true, &[1]).unwrap();
    content.extend_from_slice(&1.5f64.to_le_bytes());
    let mut ar = NpzArchive::from_bytes(raw_entry("data.npy", &content), "f1.npz").unwrap();
    assert_eq!(ar.value_array::<f64>("data").unwrap(), vec![1.5]);
    // Truncated zip file (cut in the middle).
    let mut c = Cursor::new(Vec::new());
    write_csr(&mut c, &csr_b()).unwrap();
    let b = c.into_inner();
    let cut = b[..b.len() / 2].to_vec();
    assert!(read_npz_bytes::<f64, i32>(cut, "cut.npz").is_err());
}

#[test]
fn deflated_entries_are_read() {
    let mut content = npy::header_bytes("<i4", false, &[1000]).unwrap();
    for i in 0..1000i32 {
        content.extend_from_slice(&(i % 7).to_le_bytes());
    }
    let mut c = Cursor::new(Vec::new());
    let mut z = zip::ZipWriter::new(&mut c);
    let o = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    z.start_file("x.npy", o).unwrap();
    z.write_all(&content).unwrap();
    z.finish().unwrap();
    let mut ar = NpzArchive::from_bytes(c.into_inner(), "z.npz").unwrap();
    let v = ar.index_array::<i64>("x").unwrap();
    assert_eq!(v.len(), 1000);
    assert_eq!(v[999], 999 % 7);
}

#[test]
fn unicode_format_tag() {
    let mut content = npy::header_bytes("<U3", false, &[]).unwrap();
    for ch in "coo".chars() {
        content.extend_from_slice(&(ch as u32).to_le_bytes());
    }
    let mut ar = NpzArchive::from_bytes(raw_entry("format.npy", &content), "u.npz").unwrap();
    assert_eq!(ar.format_tag().unwrap(), "coo");
}

#[test]
fn info_and_headers() {
    let mut c = Cursor::new(Vec::new());
    write_csr(&mut c, &csr_b()).unwrap();
    let mut ar = NpzArchive::from_bytes(c.into_inner(), "i.npz").unwrap();
    let i = ar.info().unwrap();
    assert_eq!(
        (i.format.as_str(), i.nrows, i.ncols, i.nnz),
        ("csr", 4, 4, 8)
    );
    assert_eq!(
        (i.value_dtype.as_str(), i.index_dtype.as_str(), i.complex),
        ("float64", "int32", false)
    );
    let h = ar.array_header("indptr").unwrap();
    assert_eq!(
        (h.descr.as_str(), h.shape.as_slice()),
        ("<i4", &[5usize][..])
    );
    // ELL: nnz from row_nnz, not from the padded data.
    let bytes = bytes_of(|w| {
        w.add_format_tag("ell").unwrap();
        w.add_shape(2, 3).unwrap();
        w.add_i64_scalar("width", 2).unwrap();
        w.add_array("row_nnz", &[2], &[2i64, 1]).unwrap();
        w.add_array("data", &[4], &[Complex64::new(1.0, 1.0); 4])
            .unwrap();
        w.add_array("indices", &[4], &[0i64, 1, 2, -1]).unwrap();
    });
    let i = NpzArchive::from_bytes(bytes, "e.npz")
        .unwrap()
        .info()
        .unwrap();
    assert_eq!(
        (
            i.nnz,
            i.complex,
            i.value_dtype.as_str(),
            i.index_dtype.as_str()
        ),
        (3, true, "complex128", "int64")
    );
}

/// Regression (fuzzing): `info` summed unvalidated `row_nnz` counts with
/// `+`, which overflowed (a panic in debug builds, a wrong count in release).
#[test]
fn info_of_huge_row_counts_saturates() {
    for (tag, prefix) in [("ell", ""), ("hyb", "ell_")] {
        let bytes = bytes_of(|w| {
            w.add_format_tag(tag).unwrap();
            w.add_shape(3, 3).unwrap();
            w.add_i64_scalar(&format!("{prefix}width"), 1).unwrap();
            w.add_array(&format!("{prefix}row_nnz"), &[3], &[i64::MAX; 3])
                .unwrap();
            w.add_array(&format!("{prefix}data"), &[3], &[1.0f64; 3])
                .unwrap();
            w.add_array(&format!("{prefix}indices"), &[3], &[0i64, 1, 2])
                .unwrap();
            w.add_array("coo_data", &[1], &[1.0f64]).unwrap();
        });
        let mut a = NpzArchive::from_bytes(bytes.clone(), "e.npz").unwrap();
        assert_eq!(a.info().unwrap().nnz, usize::MAX);
        assert!(read_npz_bytes::<f64, i32>(bytes, "e.npz").is_err());
    }
}

#[test]
fn npy_file_roundtrip() {
    let dir = std::env::temp_dir().join(format!("sparsetool_npy_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("x.npy");
    let x = [1.5f64, -2.0, 3.25];
    write_npy(std::fs::File::create(&p).unwrap(), &x).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    assert_eq!(bytes.len(), 128 + 24);
    assert_eq!(read_npy::<f64>(&p).unwrap(), x);
    assert_eq!(read_npy::<f32>(&p).unwrap(), vec![1.5f32, -2.0, 3.25]);
    std::fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
    assert!(matches!(
        read_npy::<f64>(&p).unwrap_err().kind(),
        NpzErrorKind::Truncated { .. }
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A 1x3 CSR archive with the given data and index arrays.
fn csr_with<T: NpyElement, J: NpyElement>(data: &[T], indices: &[J]) -> Vec<u8> {
    bytes_of(|w| {
        w.add_array("data", &[data.len()], data).unwrap();
        w.add_array("indices", &[indices.len()], indices).unwrap();
        w.add_array::<i32>("indptr", &[2], &[0, 3]).unwrap();
        w.add_format_tag("csr").unwrap();
        w.add_shape(1, 3).unwrap();
    })
}

#[test]
fn values_follow_the_validity_rule() {
    let nan = csr_with(&[1.0f64, f64::NAN, 2.0], &[0i32, 1, 2]);
    let e = err_of(read_npz_bytes::<f64, i32>(nan.clone(), "n.npz"));
    assert_eq!(e.array(), Some("data"));
    assert!(
        matches!(e.kind(), NpzErrorKind::BadValue(b) if b.pos == 1),
        "{e}"
    );
    let text = e.to_string();
    assert!(
        text.starts_with("n.npz: array `data` holds the non-finite value NaN at position 1"),
        "{text}"
    );
    // Converted (f64 -> f32) as well as verbatim.
    assert!(read_npz_bytes::<f32, i64>(nan.clone(), "n.npz").is_err());
    // Lenient: accepted, one warning naming the array and the position.
    let mut a = NpzArchive::from_bytes(nan, "n.npz").unwrap();
    a.set_lenient(true);
    let m: AnyMatrix<f32, i32> = read_matrix(&mut a).unwrap();
    assert_eq!(m.nnz(), 3);
    let w = a.take_warnings();
    assert_eq!(w.len(), 1);
    assert!(w[0].message.contains("array `data`") && w[0].message.contains("position 1"));
    // f64 -> f32 overflow: refused in both modes, as `1e39` in a .mtx.
    let big = csr_with(&[1.0f64, 1e39, 2.0], &[0i32, 1, 2]);
    assert!(read_npz_bytes::<f64, i32>(big.clone(), "b.npz").is_ok());
    let e = err_of(read_npz_bytes::<f32, i32>(big.clone(), "b.npz"));
    assert!(
        e.to_string()
            .contains("1e39 at position 1, which is out of range for f32"),
        "{e}"
    );
    let mut a = NpzArchive::from_bytes(big, "b.npz").unwrap();
    a.set_lenient(true);
    assert!(read_matrix::<f32, i32>(&mut a).is_err());
    // Integer values are fine; complex NaN parts are found too.
    assert!(read_npz_bytes::<f32, i32>(csr_with(&[1i64, 2, 3], &[0i32, 1, 2]), "i.npz").is_ok());
    let z = [
        Complex64::new(1.0, 0.0),
        Complex64::new(0.0, f64::INFINITY),
        Complex64::new(1.0, 1.0),
    ];
    let e = err_of(read_npz_bytes::<crate::Complex32, i32>(
        csr_with(&z, &[0i32, 1, 2]),
        "z.npz",
    ));
    assert!(
        matches!(e.kind(), NpzErrorKind::BadValue(b) if b.pos == 1),
        "{e}"
    );
}

#[test]
fn bool_indices_are_refused_naming_the_dtype() {
    let b = csr_with(&[1.0f64, 2.0, 3.0], &[0u8, 1, 1]);
    assert!(
        read_npz_bytes::<f64, i32>(b, "u.npz").is_ok(),
        "uint8 is an integer dtype"
    );
    // Rewrite the `indices` dtype from |u1 to |b1 (same size and layout).
    let mut b = csr_with(&[1.0f64, 2.0, 3.0], &[0u8, 1, 1]);
    let at = b.windows(4).position(|w| w == b"|u1'").unwrap();
    b[at + 1] = b'b';
    let e = err_of(read_npz_bytes::<f64, i32>(b, "b.npz"));
    assert_eq!(e.array(), Some("indices"));
    assert!(
        e.to_string().contains("array `indices` has dtype bool"),
        "{e}"
    );
}

#[test]
fn unsupported_tags_list_the_supported_ones() {
    let tags = supported_tags();
    for k in crate::FormatKind::ALL {
        assert!(tags.contains(&k.name()));
    }
    assert!(tags.contains(&"csc"));
    for tag in ["dia", "bsr"] {
        let b = bytes_of(|w| {
            w.add_format_tag(tag).unwrap();
            w.add_shape(2, 2).unwrap();
        });
        let e = err_of(read_npz_bytes::<f64, i32>(b.clone(), "d.npz"));
        let text = e.to_string();
        assert!(
            text.contains(&format!("format {tag} is not supported")),
            "{text}"
        );
        assert!(text.contains(&tags.join(", ")), "{text}");
        // `info` (what `probe` uses) says the same before looking for arrays.
        let e = NpzArchive::from_bytes(b, "d.npz")
            .unwrap()
            .info()
            .unwrap_err();
        assert!(e.to_string().contains("is not supported"), "{e}");
    }
}
