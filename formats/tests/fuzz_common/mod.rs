//! The checks shared by the fuzz targets (`fuzz/`, which includes this
//! file by path), the fuzz regression test and the proptests (see
//! `docs/reliability.md`).
//!
//! Every reader must turn arbitrary bytes into `Ok` or `Err`, never a panic,
//! an abort or an unbounded allocation; and whatever it returns as `Ok` must
//! be safe to compute with, so every successfully read matrix goes through
//! a CPU SpMV with a ones vector (out-of-bounds indices would panic there).

// Each test crate that includes this module uses only part of it.
#![allow(dead_code)]

use sparsetool_formats::binary::{SpbFile, SpbOptions, ENTRY_SIZE, HEADER_SIZE};
use sparsetool_formats::mm::{self, ReadOptions};
use sparsetool_formats::npz::{self, NpzArchive};
use sparsetool_formats::AnyMatrix;
use sparsetool_formats::{Complex64, Coo, Index, Scalar};

/// SpMV is skipped above this many rows or columns: the harness would have
/// to allocate the vectors itself (a valid empty 2^31 x 2^31 matrix is
/// legal), which says nothing about the reader.
pub const SPMV_DIM_LIMIT: usize = 1 << 20;

/// Runs `spmv(x = ones, y)` for an `nrows x ncols` matrix, checking that the
/// result has the right length.
pub fn spmv_ones<T: Scalar>(nrows: usize, ncols: usize, spmv: impl FnOnce(&[T], &mut [T])) {
    if nrows > SPMV_DIM_LIMIT || ncols > SPMV_DIM_LIMIT {
        return;
    }
    let x = vec![T::one(); ncols];
    let mut y = vec![T::zero(); nrows];
    spmv(&x, &mut y);
    assert_eq!(y.len(), nrows);
}

/// SpMV on a COO matrix, after re-validating its invariants (the Matrix
/// Market reader builds it without a second check).
pub fn check_coo<T: Scalar, I: Index>(m: &Coo<T, I>) {
    let again = Coo::try_from_parts(
        m.nrows(),
        m.ncols(),
        m.rows().to_vec(),
        m.cols().to_vec(),
        m.values().to_vec(),
    );
    assert!(
        again.is_ok(),
        "reader returned an invalid COO: {:?}",
        again.err()
    );
    spmv_ones::<T>(m.nrows(), m.ncols(), |x, y| m.spmv(x, y));
}

/// SpMV on whatever a reader returned (COO re-validated first).
pub fn check_matrix<T: Scalar, I: Index>(m: &AnyMatrix<T, I>) {
    match m {
        AnyMatrix::Coo(a) => check_coo(a),
        other => spmv_ones::<T>(other.nrows(), other.ncols(), |x, y| other.spmv(x, y)),
    }
}

/// Matrix Market: strict and lenient, several value/index types, plus the
/// header-only reader.
pub fn fuzz_mm(data: &[u8]) {
    let strict = ReadOptions {
        expand_symmetry: true,
        lenient: false,
    };
    let lenient = ReadOptions {
        expand_symmetry: true,
        lenient: true,
    };
    let lenient_raw = ReadOptions {
        expand_symmetry: false,
        lenient: true,
    };
    let mut full_header = None;
    for opts in [&strict, &lenient] {
        if let Ok(m) = mm::read_bytes::<f64, i32>(data, "fuzz.mtx", opts) {
            check_coo(&m.coo);
            full_header = Some((opts.lenient, m.header));
        }
    }
    if let Ok(m) = mm::read_bytes::<f32, i64>(data, "fuzz.mtx", &strict) {
        check_coo(&m.coo);
    }
    if let Ok(m) = mm::read_bytes::<Complex64, i64>(data, "fuzz.mtx", &lenient) {
        check_coo(&m.coo);
    }
    if let Ok(m) = mm::read_bytes::<Complex64, i32>(data, "fuzz.mtx", &lenient_raw) {
        check_coo(&m.coo);
    }
    for opts in [&strict, &lenient] {
        let h = mm::read_header_bytes_with(data, "fuzz.mtx", opts);
        if let (Ok((h, _)), Some((len, full))) = (&h, &full_header) {
            if *len == opts.lenient {
                assert_eq!(h, full, "header-only and full read disagree");
            }
        }
    }
}

/// `.npz`: the matrix reader for three type pairs and the `info` summary.
pub fn fuzz_npz(data: &[u8]) {
    if let Ok(m) = npz::read_npz_bytes::<f64, i32>(data.to_vec(), "fuzz.npz") {
        check_matrix(&m);
    }
    if let Ok(m) = npz::read_npz_bytes::<f32, i64>(data.to_vec(), "fuzz.npz") {
        check_matrix(&m);
    }
    if let Ok(m) = npz::read_npz_bytes::<Complex64, i32>(data.to_vec(), "fuzz.npz") {
        check_matrix(&m);
    }
    if let Ok(mut a) = NpzArchive::from_bytes(data.to_vec(), "fuzz.npz") {
        let _ = a.info();
    }
}

/// The reader's cap on the section count (`binary::header::MAX_SECTIONS`,
/// not exported).
const MAX_SECTIONS: usize = 64;

fn rd_u32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

/// Rewrites what `verify_checksums = false` still checks by hash (the
/// header checksum, the section-table checksum) and the declared file size,
/// so that mutated headers and tables reach the structural checks instead
/// of being rejected by a checksum. `None` if the bytes are too short to
/// hold a header.
#[must_use]
pub fn fix_spb_checksums(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() < HEADER_SIZE {
        return None;
    }
    let mut b = data.to_vec();
    let len = b.len() as u64;
    b[88..96].copy_from_slice(&len.to_le_bytes());
    let n = rd_u32(&b, 28) as usize;
    if n <= MAX_SECTIONS && HEADER_SIZE + n * ENTRY_SIZE <= b.len() {
        let t = xxhash_rust::xxh3::xxh3_64(&b[HEADER_SIZE..HEADER_SIZE + n * ENTRY_SIZE]);
        b[96..104].copy_from_slice(&t.to_le_bytes());
    }
    let h = xxhash_rust::xxh3::xxh3_64(&b[..120]);
    b[120..128].copy_from_slice(&h.to_le_bytes());
    Some(b)
}

fn spb_types<T: Scalar, I: Index>(f: &SpbFile) {
    if let Ok(m) = f.to_matrix::<T, I>() {
        check_matrix(&m);
    }
    if let Ok(v) = f.csr_view::<T, I>() {
        // A plain serial SpMV over the zero-copy view, with checked
        // indexing: a view that passed validation must not go out of bounds.
        spmv_ones::<T>(v.nrows, v.ncols, |x, y| {
            for (i, yi) in y.iter_mut().enumerate() {
                let (s, e) = (v.row_ptr[i].to_usize(), v.row_ptr[i + 1].to_usize());
                for k in s..e {
                    *yi += v.values[k] * x[v.col_idx[k].to_usize()];
                }
            }
        });
    }
}

fn spb_all(data: &[u8], verify_checksums: bool) {
    let opts = SpbOptions { verify_checksums };
    if let Ok(f) = SpbFile::from_bytes(data, "fuzz.spb", &opts) {
        spb_types::<f64, i32>(&f);
        spb_types::<f64, i64>(&f);
        spb_types::<f32, i32>(&f);
        spb_types::<f32, i64>(&f);
        spb_types::<Complex64, i32>(&f);
        spb_types::<Complex64, i64>(&f);
    }
}

/// `.spb`: as given (with and without checksum verification), and with the
/// header/table checksums and file size recomputed (without verification
/// of the section checksums).
pub fn fuzz_spb(data: &[u8]) {
    spb_all(data, true);
    spb_all(data, false);
    if let Some(fixed) = fix_spb_checksums(data) {
        spb_all(&fixed, false);
    }
}
