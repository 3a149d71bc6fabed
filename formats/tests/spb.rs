//! `.spb` round trips for every format and crafted-corruption tests.

use sparsetool_fixtures::seed;
use sparsetool_fixtures::support::{put_u64, spb_entry, spb_reseal, spb_sections, u64_at};
use sparsetool_formats::binary::{
    write_spb, SpbError, SpbErrorKind, SpbFile, SpbOptions, ENTRY_SIZE, HEADER_SIZE,
};
use sparsetool_formats::{AnyMatrix, Coo, Csc, Csr, Ell, Hyb, Jds, MatrixRef, Sell};

// The worked examples in fixtures/src/seed.rs: B in every format, C in SELL
// (C = 2, sigma = 4).
fn csr_b() -> Csr<f64, i32> {
    seed::B.csr().unwrap()
}
fn coo_b() -> Coo<f64, i32> {
    seed::B.coo().unwrap()
}
fn ell_b() -> Ell<f64, i32> {
    seed::B.ell_matrix().unwrap()
}
fn hyb_b() -> Hyb<f64, i32> {
    seed::B.hyb_matrix().unwrap()
}
fn jds_b() -> Jds<f64, i32> {
    seed::B.jds_matrix().unwrap()
}
fn sell_c() -> Sell<f64, i32> {
    seed::C.sell_matrix().unwrap()
}
fn csc_c() -> Csc<f64, i32> {
    seed::C.csc_matrix().unwrap()
}

fn bytes_of(m: MatrixRef<'_, f64, i32>) -> Vec<u8> {
    let mut v = Vec::new();
    write_spb(&mut v, m).unwrap();
    v
}

fn open(b: &[u8]) -> Result<SpbFile, SpbError> {
    SpbFile::from_bytes(b, "t.spb", &SpbOptions::default())
}

fn load(b: &[u8]) -> Result<AnyMatrix<f64, i32>, SpbError> {
    open(b)?.to_matrix::<f64, i32>()
}

/// A file of every format and the matrix it holds.
fn every_format() -> Vec<(Vec<u8>, AnyMatrix<f64, i32>)> {
    vec![
        (bytes_of(MatrixRef::Coo(&coo_b())), AnyMatrix::Coo(coo_b())),
        (bytes_of(MatrixRef::Csr(&csr_b())), AnyMatrix::Csr(csr_b())),
        (bytes_of(MatrixRef::Ell(&ell_b())), AnyMatrix::Ell(ell_b())),
        (bytes_of(MatrixRef::Hyb(&hyb_b())), AnyMatrix::Hyb(hyb_b())),
        (bytes_of(MatrixRef::Jds(&jds_b())), AnyMatrix::Jds(jds_b())),
        (
            bytes_of(MatrixRef::Sell(&sell_c())),
            AnyMatrix::Sell(sell_c()),
        ),
        (bytes_of(MatrixRef::Csc(&csc_c())), AnyMatrix::Csc(csc_c())),
    ]
}

/// CSC's sections are the ones docs/binary-layout.md lists, with example C's
/// arrays, under format code 6.
#[test]
fn csc_sections_and_code() {
    let b = bytes_of(MatrixRef::Csc(&csc_c()));
    assert_eq!(u32::from_le_bytes([b[20], b[21], b[22], b[23]]), 6);
    let f = open(&b).unwrap();
    let names: Vec<&str> = f.sections().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["col_ptr", "row_idx", "values"]);
    assert_eq!(f.indices::<i32>("col_ptr").unwrap(), [0, 2, 4, 6, 7, 9]);
    assert_eq!(
        f.indices::<i32>("row_idx").unwrap(),
        [0, 2, 1, 3, 0, 3, 1, 0, 3]
    );
    assert_eq!(
        f.values::<f64>("values").unwrap(),
        [1.0, 6.0, 4.0, 7.0, 2.0, 8.0, 5.0, 3.0, 9.0]
    );
    assert!(f.header().params().is_empty());
}

#[test]
fn round_trip_every_format() {
    for (b, want) in every_format() {
        let f = open(&b).unwrap();
        for s in f.sections() {
            assert_eq!(s.offset % 64, 0, "section {} unaligned", s.name);
        }
        assert_eq!(f.to_matrix::<f64, i32>().unwrap(), want);
    }
}

#[test]
fn round_trip_f32_i64_and_complex() {
    let (n, m, rp, ci, v) = csr_b().into_parts();
    let rp: Vec<i64> = rp.iter().map(|&x| x as i64).collect();
    let ci: Vec<i64> = ci.iter().map(|&x| x as i64).collect();
    let vf: Vec<f32> = v.iter().map(|&x| x as f32).collect();
    let a = Csr::<f32, i64>::try_from_parts(n, m, rp.clone(), ci.clone(), vf).unwrap();
    let mut b = Vec::new();
    write_spb(&mut b, MatrixRef::Csr(&a)).unwrap();
    let f = SpbFile::from_bytes(&b, "x", &SpbOptions::default()).unwrap();
    assert_eq!(
        f.to_matrix::<f32, i64>().unwrap(),
        AnyMatrix::Csr(a.clone())
    );
    let view = f.csr_view::<f32, i64>().unwrap();
    assert_eq!(view.row_ptr, a.row_ptr());
    // Copies convert types; zero-copy views never reinterpret.
    let wide = f.to_matrix::<f64, i32>().unwrap();
    let AnyMatrix::Csr(w) = wide else {
        panic!("csr")
    };
    assert_eq!(w.row_ptr(), csr_b().row_ptr());
    assert_eq!(w.values(), csr_b().values());
    assert!(f.csr_view::<f32, i32>().is_err());
    assert!(f.csr_view::<f64, i64>().is_err());
    let vc: Vec<_> = v
        .iter()
        .map(|&x| sparsetool_formats::Complex64::new(x, -x))
        .collect();
    let c = Csr::try_from_parts(n, m, rp, ci, vc).unwrap();
    let mut b = Vec::new();
    write_spb(&mut b, MatrixRef::Csr(&c)).unwrap();
    let f = SpbFile::from_bytes(&b, "x", &SpbOptions::default()).unwrap();
    assert_eq!(f.to_matrix().unwrap(), AnyMatrix::Csr(c));
    let e = f.to_matrix::<f64, i64>().unwrap_err().to_string();
    assert!(e.contains("complex"), "{e}");
}

#[test]
fn empty_matrix_round_trips() {
    let a = Csr::<f64, i32>::empty(0, 0);
    let b = bytes_of(MatrixRef::Csr(&a));
    assert_eq!(load(&b).unwrap(), AnyMatrix::Csr(a));
    let a = Csr::<f64, i32>::empty(3, 7);
    let b = bytes_of(MatrixRef::Csr(&a));
    assert_eq!(load(&b).unwrap(), AnyMatrix::Csr(a));
}

// ---- helpers to craft corrupt files that still pass the checksums ----

fn section_index(b: &[u8], name: &str) -> usize {
    (0..spb_sections(b))
        .find(|&i| {
            let e = spb_entry(i);
            let raw = &b[e..e + 16];
            let end = raw.iter().position(|&c| c == 0).unwrap_or(16);
            &raw[..end] == name.as_bytes()
        })
        .unwrap()
}
fn section_data_offset(b: &[u8], name: &str) -> usize {
    u64_at(b, spb_entry(section_index(b, name)) + 32) as usize
}
/// Asserts that `r` is an error of kind `SpbErrorKind::$kind` whose message
/// contains `$words`.
macro_rules! assert_err {
    ($r:expr, $kind:ident, $words:expr) => {{
        let e = $r.expect_err("corrupt file accepted");
        assert!(
            matches!(e.kind(), SpbErrorKind::$kind(..)),
            "{e}: kind {:?}",
            e.kind()
        );
        assert!(e.to_string().contains($words), "{e}");
    }};
}

fn err_text(r: Result<AnyMatrix<f64, i32>, SpbError>) -> String {
    match r {
        Ok(_) => panic!("corrupt file accepted"),
        Err(e) => e.to_string(),
    }
}
fn csr_bytes() -> Vec<u8> {
    bytes_of(MatrixRef::Csr(&csr_b()))
}

#[test]
fn c01_empty_file() {
    assert_err!(load(&[]), NotSpb, "magic");
}
#[test]
fn c02_wrong_magic() {
    let mut b = csr_bytes();
    b[0] = b'X';
    assert_err!(load(&b), NotSpb, "not a sparsetool binary");
}
#[test]
fn c03_text_mode_mangled_magic() {
    let mut b = csr_bytes();
    b[6] = b'\n';
    assert_err!(load(&b), NotSpb, "text-mode");
}
#[test]
fn c04_truncated_header() {
    let b = csr_bytes();
    assert_err!(load(&b[..50]), Truncated, "truncated header");
}
#[test]
fn c05_header_bit_flip() {
    let mut b = csr_bytes();
    b[33] ^= 0x10;
    let e = err_text(load(&b));
    assert!(e.contains("header checksum"), "{e}");
    assert!(e.starts_with("t.spb: offset 120"), "{e}");
}
#[test]
fn c06_unknown_major_version() {
    let mut b = csr_bytes();
    b[8] = 2;
    spb_reseal(&mut b);
    assert_err!(load(&b), Header, "major version 2");
}
#[test]
fn c07_bad_endian_marker() {
    let mut b = csr_bytes();
    b[12..16].copy_from_slice(&0x0102_0304u32.to_be_bytes());
    spb_reseal(&mut b);
    assert_err!(load(&b), Header, "endianness");
}
#[test]
fn c08_unknown_format_tag() {
    let mut b = csr_bytes();
    b[20] = 9;
    spb_reseal(&mut b);
    assert_err!(load(&b), Header, "unknown format tag 9");
}
#[test]
fn c09_bad_value_dtype() {
    let mut b = csr_bytes();
    b[24] = 5; // int32 is not a value type
    spb_reseal(&mut b);
    assert_err!(load(&b), Header, "value dtype");
}
#[test]
fn c10_absurd_section_count() {
    let mut b = csr_bytes();
    b[28..32].copy_from_slice(&100_000u32.to_le_bytes());
    reseal_header_only(&mut b);
    assert_err!(load(&b), Header, "sections declared");
}
fn reseal_header_only(b: &mut [u8]) {
    let h = xxhash_rust::xxh3::xxh3_64(&b[..120]);
    put_u64(b, 120, h);
}
#[test]
fn c11_truncated_at_every_section_boundary() {
    let b = csr_bytes();
    let f = open(&b).unwrap();
    let mut cuts: Vec<usize> = vec![HEADER_SIZE, HEADER_SIZE + ENTRY_SIZE];
    for s in f.sections() {
        cuts.push(s.offset as usize);
        cuts.push((s.offset + s.byte_len) as usize - 1);
    }
    for cut in cuts {
        let e = err_text(load(&b[..cut]));
        assert!(e.contains("truncated"), "cut at {cut}: {e}");
    }
}
#[test]
fn c12_data_appended() {
    let mut b = csr_bytes();
    b.extend_from_slice(b"junk");
    assert_err!(load(&b), Truncated, "data appended");
}
#[test]
fn c13_table_bit_flip() {
    let mut b = csr_bytes();
    b[HEADER_SIZE + 25] ^= 1;
    assert_err!(load(&b), Checksum, "table checksum");
}
#[test]
fn c14_offset_past_end() {
    let mut b = csr_bytes();
    let e = spb_entry(section_index(&b, "values"));
    put_u64(&mut b, e + 32, 1 << 20);
    spb_reseal(&mut b);
    assert_err!(load(&b), Truncated, "past the end");
}
#[test]
fn c15_unaligned_offset() {
    let mut b = csr_bytes();
    let e = spb_entry(section_index(&b, "values"));
    let off = u64_at(&b, e + 32);
    put_u64(&mut b, e + 32, off + 8);
    spb_reseal(&mut b);
    assert_err!(load(&b), Section, "aligned");
}
#[test]
fn c16_byte_length_disagrees_with_count() {
    let mut b = csr_bytes();
    let e = spb_entry(section_index(&b, "col_idx"));
    put_u64(&mut b, e + 24, 9);
    spb_reseal(&mut b);
    assert_err!(load(&b), Section, "bytes for 9");
}
#[test]
fn c17_huge_declared_length() {
    let mut b = csr_bytes();
    let e = spb_entry(section_index(&b, "values"));
    put_u64(&mut b, e + 24, 1 << 62);
    put_u64(&mut b, e + 40, (1u64 << 62).wrapping_mul(8));
    spb_reseal(&mut b);
    let text = err_text(load(&b));
    assert!(text.contains("section `values`"), "{text}");
}
#[test]
fn c18_overlapping_sections() {
    let mut b = csr_bytes();
    let v = section_data_offset(&b, "col_idx");
    let e = spb_entry(section_index(&b, "values"));
    put_u64(&mut b, e + 32, v as u64);
    spb_reseal(&mut b);
    assert_err!(load(&b), Section, "overlap");
}
#[test]
fn c19_duplicate_section_name() {
    let mut b = csr_bytes();
    let e = spb_entry(section_index(&b, "col_idx"));
    b[e..e + 16].copy_from_slice(b"row_ptr\0\0\0\0\0\0\0\0\0");
    spb_reseal(&mut b);
    assert_err!(load(&b), Section, "appears twice");
}
#[test]
fn c20_data_bit_flip_caught_by_checksum() {
    let mut b = csr_bytes();
    let o = section_data_offset(&b, "values");
    b[o + 3] ^= 0x40;
    let e = err_text(load(&b));
    assert!(e.contains("checksum mismatch"), "{e}");
    assert!(e.contains(&format!("offset {o}")), "{e}");
}
#[test]
fn c21_out_of_range_index_caught_without_checksums() {
    let mut b = csr_bytes();
    let o = section_data_offset(&b, "col_idx");
    b[o..o + 4].copy_from_slice(&1000i32.to_le_bytes());
    let f = SpbFile::from_bytes(
        &b,
        "t.spb",
        &SpbOptions {
            verify_checksums: false,
        },
    )
    .unwrap();
    let e = f.to_matrix::<f64, i32>().unwrap_err().to_string();
    assert!(e.contains("out of bounds"), "{e}");
    let e = f.csr_view::<f64, i32>().unwrap_err().to_string();
    assert!(e.contains("out of bounds"), "{e}");
}
#[test]
fn c22_non_monotone_pointer() {
    let mut b = csr_bytes();
    let o = section_data_offset(&b, "row_ptr");
    b[o + 8..o + 12].copy_from_slice(&1i32.to_le_bytes()); // [0,2,1,7,8]
    spb_reseal(&mut b);
    assert_err!(load(&b), Invalid, "decreases");
}
#[test]
fn c23_invalid_permutation() {
    let mut b = bytes_of(MatrixRef::Jds(&jds_b()));
    let o = section_data_offset(&b, "perm");
    b[o..o + 4].copy_from_slice(&0i32.to_le_bytes()); // perm [0,0,2,3]
    spb_reseal(&mut b);
    assert_err!(load(&b), Invalid, "permutation");
}
#[test]
fn c24_missing_section() {
    let mut b = csr_bytes();
    let e = spb_entry(section_index(&b, "values"));
    b[e..e + 16].copy_from_slice(b"vals\0\0\0\0\0\0\0\0\0\0\0\0");
    spb_reseal(&mut b);
    assert_err!(load(&b), Section, "no `values` section");
}
#[test]
fn c25_header_nnz_disagrees() {
    let mut b = csr_bytes();
    put_u64(&mut b, 48, 7);
    spb_reseal(&mut b);
    assert_err!(load(&b), Mismatch, "nnz");
}
#[test]
fn c26_bad_ell_padding() {
    let mut b = bytes_of(MatrixRef::Ell(&ell_b()));
    let o = section_data_offset(&b, "col_idx");
    // slot 2 of row 0 is padding (index 8 in slot-major order): make it a real index
    b[o + 8 * 4..o + 9 * 4].copy_from_slice(&1i32.to_le_bytes());
    spb_reseal(&mut b);
    let e = err_text(load(&b));
    assert!(e.contains("padding") || e.contains("row 0"), "{e}");
}
#[test]
fn c27_sell_slice_size_mismatch() {
    let mut b = bytes_of(MatrixRef::Sell(&sell_c()));
    let o = section_data_offset(&b, "slice_width");
    b[o..o + 4].copy_from_slice(&2i32.to_le_bytes());
    spb_reseal(&mut b);
    assert!(load(&b).is_err());
}
#[test]
fn c28_hyb_tail_count_disagrees() {
    let mut b = bytes_of(MatrixRef::Hyb(&hyb_b()));
    put_u64(&mut b, 64, 5);
    spb_reseal(&mut b);
    assert_err!(load(&b), Mismatch, "tail entries");
}
/// The error (offset, words of the message) a single-bit flip at byte `i`
/// of the valid file `b` must give, or `None` where the byte is alignment
/// padding between sections, which no checksum covers.
fn flip_error(b: &[u8], f: &SpbFile, i: usize) -> Option<(u64, String)> {
    let table_end = HEADER_SIZE + f.sections().len() * ENTRY_SIZE;
    let at = |o: usize, m: &str| Some((o as u64, m.to_string()));
    match i {
        0..6 => at(0, "magic `SPBMTX` missing"),
        6..8 => at(6, "text-mode transfer"),
        // The header checksum (bytes 120..128) covers bytes 0..120.
        8..HEADER_SIZE => at(120, "header checksum mismatch"),
        _ if i < table_end => at(HEADER_SIZE, "section table checksum mismatch"),
        _ => {
            let s = f
                .sections()
                .iter()
                .find(|s| (s.offset..s.offset + s.byte_len).contains(&(i as u64)));
            match s {
                Some(s) => at(
                    s.offset as usize,
                    &format!("section `{}`: checksum mismatch", s.name),
                ),
                None => {
                    assert_eq!(b[i], 0, "byte {i}: padding is written as zeros");
                    None
                }
            }
        }
    }
}

#[test]
fn every_single_bit_flip_is_caught_or_harmless_padding() {
    let files = every_format();
    let (mut caught, mut padding) = (0usize, 0usize);
    for (bytes, want) in &files {
        let f = open(bytes).unwrap();
        for i in 0..bytes.len() {
            let expect = flip_error(bytes, &f, i);
            for bit in 0..8 {
                let mut b = bytes.clone();
                b[i] ^= 1 << bit;
                let got = load(&b);
                match (&expect, got) {
                    (Some((offset, words)), Err(e)) => {
                        assert_eq!(e.offset(), Some(*offset), "byte {i} bit {bit}: {e}");
                        assert!(
                            e.kind().to_string().contains(words),
                            "byte {i} bit {bit}: {e}"
                        );
                        let want_kind = if *offset < 8 {
                            matches!(e.kind(), SpbErrorKind::NotSpb(_))
                        } else {
                            matches!(e.kind(), SpbErrorKind::Checksum(_))
                        };
                        assert!(want_kind, "byte {i} bit {bit}: kind {:?}", e.kind());
                        caught += 1;
                    }
                    (Some(_), Ok(_)) => panic!("byte {i} bit {bit}: flip accepted"),
                    (None, got) => {
                        let m = got.unwrap_or_else(|e| panic!("padding byte {i} bit {bit}: {e}"));
                        assert_eq!(&m, want, "padding byte {i} bit {bit}");
                        padding += 1;
                    }
                }
            }
        }
    }
    // Every byte of every file was flipped, and both kinds of byte occur.
    let total: usize = files.iter().map(|(b, _)| b.len() * 8).sum();
    assert_eq!(caught + padding, total);
    assert!(
        padding > 0 && caught > padding,
        "{caught} caught, {padding} padding"
    );
}

/// A CSR matrix spanning several checksum blocks, rows crossing block edges.
fn csr_multi_block() -> Csr<f64, i32> {
    let (nrows, ncols) = (60_000usize, 5_000usize);
    let mut ptr = vec![0i32];
    let mut col = Vec::new();
    for r in 0..nrows {
        // 0..=40 entries, a few rows empty, strictly ascending
        let len = (r * 7919) % 41;
        let mut row: Vec<i32> = (0..len).map(|k| ((r + k * 113) % ncols) as i32).collect();
        row.sort_unstable();
        row.dedup();
        col.extend(row);
        ptr.push(col.len() as i32);
    }
    let vals = vec![0.5; col.len()];
    Csr::try_from_parts(nrows, ncols, ptr, col, vals).unwrap()
}

#[test]
fn c29_rows_checked_while_hashing_across_blocks() {
    let m = csr_multi_block();
    assert!(m.nnz() * 4 > 2 * sparsetool_formats::binary::CHECKSUM_BLOCK);
    let b = bytes_of(MatrixRef::Csr(&m));
    // verified: the structure was checked in the hashing pass, the view agrees
    let f = open(&b).unwrap();
    assert!(f.csr_structure_checked());
    let v = f.csr_view::<f64, i32>().unwrap();
    assert_eq!((v.row_ptr, v.col_idx), (m.row_ptr(), m.col_idx()));
    let nochk = SpbFile::from_bytes(
        &b,
        "t.spb",
        &SpbOptions {
            verify_checksums: false,
        },
    )
    .unwrap();
    assert!(!nochk.csr_structure_checked());
    // a row in the last block made unsorted, checksums resealed: the
    // hashing pass notices, the view reports the row precisely
    let row = m.nrows() - 3;
    let (s, e) = (m.row_ptr()[row] as usize, m.row_ptr()[row + 1] as usize);
    assert!(e - s >= 2);
    let o = section_data_offset(&b, "col_idx");
    let mut bad = b.clone();
    bad[o + 4 * s..o + 4 * s + 4].copy_from_slice(&4999i32.to_le_bytes());
    spb_reseal(&mut bad);
    let f = open(&bad).unwrap();
    assert!(!f.csr_structure_checked());
    let err = f.csr_view::<f64, i32>().unwrap_err().to_string();
    assert!(err.contains(&format!("row {row}")), "{err}");
    // the same byte changed without resealing is a checksum error
    let mut flipped = b.clone();
    flipped[o + 4 * s] ^= 1;
    let err = open(&flipped).unwrap_err().to_string();
    assert!(err.contains("col_idx") && err.contains("checksum"), "{err}");
}

#[test]
fn c30_csc_unsorted_column_caught_without_checksums() {
    let mut b = bytes_of(MatrixRef::Csc(&csc_c()));
    // column 0 holds rows 0, 2: make it 2, 2 (a duplicate)
    let at = section_data_offset(&b, "row_idx");
    b[at..at + 4].copy_from_slice(&2i32.to_le_bytes());
    let opts = SpbOptions {
        verify_checksums: false,
    };
    let e = SpbFile::from_bytes(&b, "t.spb", &opts)
        .unwrap()
        .to_matrix::<f64, i32>()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("t.spb") && e.contains("duplicate entry (2, 0)"),
        "{e}"
    );
    // row index past nrows
    b[at..at + 4].copy_from_slice(&9i32.to_le_bytes());
    let e = SpbFile::from_bytes(&b, "t.spb", &opts)
        .unwrap()
        .to_matrix::<f64, i32>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("row index 9 out of bounds"), "{e}");
}

/// Values follow the rule of `sparsetool_formats::values`, as in `.mtx` and
/// `.npz`: NaN refused (lenient: a warning), f64 -> f32 overflow refused.
#[test]
fn values_follow_the_validity_rule() {
    let (n, m, rp, ci, mut v) = csr_b().into_parts();
    v[1] = f64::NAN;
    let a = Csr::<f64, i32>::try_from_parts(n, m, rp.clone(), ci.clone(), v.clone()).unwrap();
    let b = bytes_of(MatrixRef::Csr(&a));
    let f = open(&b).unwrap();
    let e = f.to_matrix::<f64, i32>().unwrap_err();
    assert!(matches!(e.kind(), SpbErrorKind::BadValue { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("t.spb: section `values` holds the non-finite value NaN at position 1"),
        "{e}"
    );
    assert!(f.to_matrix::<f32, i64>().is_err());
    assert!(f.csr_view::<f64, i32>().is_err());
    let (got, warnings) = f.to_matrix_with::<f64, i32>(true).unwrap();
    assert_eq!(got.nnz(), a.nnz());
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].message.contains("section `values`"),
        "{warnings:?}"
    );
    v[1] = 1e39;
    let a = Csr::<f64, i32>::try_from_parts(n, m, rp, ci, v).unwrap();
    let b = bytes_of(MatrixRef::Csr(&a));
    let f = open(&b).unwrap();
    assert!(f.to_matrix::<f64, i32>().is_ok());
    let e = f.to_matrix_with::<f32, i32>(true).unwrap_err();
    assert!(e.to_string().contains("out of range for f32"), "{e}");
}

/// Every format read with the file's own types uses the sections in
/// place (no copy) and stays equal to the matrix written; another value or
/// index type converts (owned arrays); writing to the values copies first.
#[test]
fn every_format_is_read_in_place() {
    let dir = tempfile::tempdir().unwrap();
    for (k, (bytes, m)) in every_format().into_iter().enumerate() {
        let path = dir.path().join(format!("{k}.spb"));
        std::fs::write(&path, &bytes).unwrap();
        let f = SpbFile::open(&path, &SpbOptions::default()).unwrap();
        let same: AnyMatrix<f64, i32> = f.to_matrix().unwrap();
        let other: AnyMatrix<f32, i64> = f.to_matrix().unwrap();
        drop(f); // the matrix keeps the mapping alive
        let kind = m.kind();
        assert!(same.is_mapped(), "{kind}");
        assert!(!other.is_mapped(), "{kind}");
        assert_eq!(same, m, "{kind}");
        assert_eq!(other.nnz(), m.nnz(), "{kind}");
        if let AnyMatrix::Csr(mut a) = same {
            a.values_mut()[0] = 42.0;
            assert!(!a.is_mapped());
            assert_eq!(a.values()[0], 42.0);
        }
        // the file on disk is unchanged by the write above
        let again = SpbFile::open(&path, &SpbOptions::default()).unwrap();
        assert_eq!(again.to_matrix::<f64, i32>().unwrap(), m, "{kind}");
    }
}
