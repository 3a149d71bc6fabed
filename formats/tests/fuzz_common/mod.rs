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

/// Messages are one line: control characters from the input are escaped.
fn one_line(e: &impl std::fmt::Display) {
    let text = e.to_string();
    assert!(
        !text.chars().any(|c| c.is_control()),
        "a message holds a control character: {text:?}"
    );
}

/// Container detection and loading as the command line does them: the
/// bytes are written to a file (one per process, reused), detected, probed
/// and loaded strictly and leniently; Matrix Market also from memory (as
/// standard input). Detection by path must agree with detection by bytes,
/// every accepted matrix goes through SpMV, every message is one line.
pub fn fuzz_detect_load(data: &[u8]) {
    use sparsetool_formats::io::{self, Container, Input, LoadOptions};
    let path = std::env::temp_dir().join(format!("sparsetool-fuzz-{}.bin", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let by_bytes = io::detect_bytes(&data[..data.len().min(8)]);
    if let Ok(c) = io::detect(&path) {
        assert_eq!(c, by_bytes, "detect(path) and detect_bytes disagree");
    }
    let file = Input::open(&path);
    let mem = Input::Bytes {
        name: "<stdin>".into(),
        bytes: data.to_vec(),
    };
    for lenient in [false, true] {
        let opts = LoadOptions {
            lenient,
            verify_checksums: true,
        };
        for input in [file.as_ref().ok(), Some(&mem)].into_iter().flatten() {
            if matches!(input, Input::Bytes { .. }) && by_bytes != Container::Mtx {
                // Only Matrix Market is read from standard input.
                assert!(io::load::<f64, i32>(input, &opts).is_err());
                continue;
            }
            if let Err(e) = io::probe(input, &opts) {
                one_line(&e);
            }
            match io::load::<f64, i32>(input, &opts) {
                Ok(l) => {
                    check_matrix(&l.matrix);
                    // Strict reading never returns NaN or infinities.
                    assert!(
                        lenient || finite_values(&l.matrix),
                        "strict read returned a non-finite value"
                    );
                }
                Err(e) => one_line(&e),
            }
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// `.npz` shapes and values: an archive built from the input (format tag,
/// shape, and `data`/`indices`/`indptr`/`row`/`col` arrays of fuzz-chosen
/// dtypes, shapes and raw bytes: NaN, infinities, values beyond `f32`,
/// negative or huge indices), read strictly and leniently into `f64` and
/// `f32`. A strict read never returns a NaN or an infinity; a lenient read
/// that returns one has warned about it; an `f32` read never turns a finite
/// value into an infinity; every message is one line.
pub fn fuzz_npz_values(data: &[u8]) {
    use sparsetool_formats::npz::NpzWriter;
    let mut it = data.iter().copied();
    let mut next = || it.next().unwrap_or(0);
    const TAGS: [&str; 9] = [
        "csr", "coo", "csc", "ell", "jds", "sell", "hyb", "dia", "bsr",
    ];
    let tag = TAGS[usize::from(next()) % TAGS.len()];
    let dims = [usize::from(next() % 8), usize::from(next() % 8)];
    let mut z = NpzWriter::new(std::io::Cursor::new(Vec::new()));
    let rest: Vec<u8> = data.iter().skip(3).copied().collect();
    let mut chunks = rest.chunks(24);
    for name in ["data", "indices", "indptr", "row", "col"] {
        let Some(c) = chunks.next() else { break };
        let (kind, bytes) = c.split_first().unwrap_or((&0, &[]));
        let two_d = kind & 0x80 != 0;
        let r = match kind % 7 {
            0 => add(&mut z, name, two_d, le(bytes, f64::from_le_bytes)),
            1 => add(&mut z, name, two_d, le(bytes, f32::from_le_bytes)),
            2 => add(&mut z, name, two_d, le(bytes, i32::from_le_bytes)),
            3 => add(&mut z, name, two_d, le(bytes, i64::from_le_bytes)),
            4 => add(&mut z, name, two_d, bytes.to_vec()),
            5 => add(
                &mut z,
                name,
                two_d,
                le(bytes, |b: [u8; 16]| {
                    let (re, im) = b.split_at(8);
                    let f = |h: &[u8]| f64::from_le_bytes(h.try_into().unwrap_or([0; 8]));
                    Complex64::new(f(re), f(im))
                }),
            ),
            _ => Ok(()),
        };
        if r.is_err() {
            return;
        }
    }
    if z.add_format_tag(tag).is_err() || z.add_shape(dims[0], dims[1]).is_err() {
        return;
    }
    let Ok(cursor) = z.finish() else { return };
    let bytes = cursor.into_inner();
    for lenient in [false, true] {
        let unwarned = "non-finite value without a warning";
        if !read_npz_as::<f64, i32>(&bytes, lenient, true, unwarned) {
            return;
        }
        let unwarned = "f32: an infinity without a warning";
        if !read_npz_as::<f32, i64>(&bytes, lenient, false, unwarned) {
            return;
        }
    }
}

/// Reads the archive `bytes` with `T` values and `I` indices, `lenient` or
/// not: a matrix must pass [`check_matrix`] and hold a non-finite value
/// only with a warning (`unwarned` is the failure's message) and, where
/// `finite_when_strict`, only when lenient; an error must be one line.
/// `false` when `bytes` does not open as an archive.
fn read_npz_as<T: Scalar, I: Index>(
    bytes: &[u8],
    lenient: bool,
    finite_when_strict: bool,
    unwarned: &str,
) -> bool {
    let Ok(mut a) = NpzArchive::from_bytes(bytes.to_vec(), "fuzz.npz") else {
        return false;
    };
    a.set_lenient(lenient);
    match npz::read_matrix::<T, I>(&mut a) {
        Ok(m) => {
            check_matrix(&m);
            let finite = finite_values(&m);
            assert!(
                finite || lenient || !finite_when_strict,
                "strict read returned a non-finite value"
            );
            assert!(finite || !a.take_warnings().is_empty(), "{unwarned}");
        }
        Err(e) => one_line(&e),
    }
    true
}

/// `b` (zero-padded to a multiple of `N` bytes) read as little-endian
/// elements.
fn le<T, const N: usize>(b: &[u8], from: impl Fn([u8; N]) -> T) -> Vec<T> {
    b.chunks(N)
        .map(|c| {
            let mut a = [0u8; N];
            a[..c.len()].copy_from_slice(c);
            from(a)
        })
        .collect()
}

/// Adds `v` as a 1-d array, or 2-d (`[2, len/2]`) when `two_d` and even.
fn add<T: sparsetool_formats::npz::NpyElement, W: std::io::Write + std::io::Seek>(
    z: &mut sparsetool_formats::npz::NpzWriter<W>,
    name: &str,
    two_d: bool,
    v: Vec<T>,
) -> Result<(), npz::NpzError> {
    if two_d && v.len() % 2 == 0 {
        z.add_array(name, &[2, v.len() / 2], &v)
    } else {
        z.add_array(name, &[v.len()], &v)
    }
}

/// Whether every stored value of `m` is finite (padding included).
fn finite_values<T: Scalar, I: Index>(m: &AnyMatrix<T, I>) -> bool {
    match m {
        AnyMatrix::Coo(x) => x.values().iter().all(|v| v.is_finite()),
        AnyMatrix::Csr(x) => x.values().iter().all(|v| v.is_finite()),
        AnyMatrix::Csc(x) => x.values().iter().all(|v| v.is_finite()),
        AnyMatrix::Ell(x) => x.values().iter().all(|v| v.is_finite()),
        AnyMatrix::Jds(x) => x.values().iter().all(|v| v.is_finite()),
        AnyMatrix::Sell(x) => x.values().iter().all(|v| v.is_finite()),
        AnyMatrix::Hyb(x) => {
            x.ell().values().iter().all(|v| v.is_finite())
                && x.coo().values().iter().all(|v| v.is_finite())
        }
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
