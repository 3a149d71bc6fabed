//! Streaming row and column counts of a Matrix Market file.
//!
//! [`RowLengths::from_mm_path`] counts the entries of every row and column
//! with the reader's structure-only scan ([`mm::StructureScan`]): one pass
//! over the data, no COO or CSR matrix built, memory `O(nrows + ncols)`
//! counters. The scan is the full reader's own code, so the checks, the
//! messages (file and 1-based line) and the symmetric expansion are the
//! reader's: an off-diagonal entry `(i, j)` of a symmetric, skew-symmetric
//! or hermitian file counts in rows `i` and `j` and columns `j` and `i`, a
//! diagonal entry once. Duplicate entries are counted as stored (a CSR
//! conversion sums them, so its row lengths can be smaller).
//!
//! - Plain files are memory-mapped and scanned in parallel (rayon). When
//!   `tasks * (nrows + ncols)` counters take no more memory than the file
//!   (or at most 2^24 counters), each task counts into its own arrays,
//!   summed at the end; otherwise tasks share one set of atomic counters.
//! - Gzip files (magic `1f 8b`, whatever the extension) and other streams
//!   are decompressed by one thread while the caller's thread counts the
//!   lines of the previous block.
//!
//! Measured (3 M entries, 2 shared cores; ignored test `streaming_speed`):
//! about the time of the full reader's parse (1.00x) for a plain file and
//! 0.97x for the same file gzipped (the scan parses and checks the values
//! too, as the reader does).
//!
//! Not handled (the caller reads the whole matrix instead, see
//! [`AnalyzeError::needs_full_read`]): `array` files (dense, read
//! whole), stdin by path (it cannot be read twice; see
//! [`RowLengths::from_mm_reader`]), more than 2^32 − 1 entries, and the
//! lenient recoveries the scan cannot make without the values (0-based
//! indices, both triangles of a symmetric file).

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;
use sparsetool_formats::mm::{self, MmError, MmErrorKind, StructureScan};

use super::{Far, FarCounter, Lengths, RowLengths, SpanCounter};
use crate::AnalyzeError;

/// Per-task counting is used up to this many counters (`tasks * (nrows +
/// ncols)`), or one per 4 bytes of the file if more (so the counters never
/// take more memory than the file they count).
const LOCAL_COUNTERS_MIN: usize = 1 << 24;

/// One axis of a task's counters: a count per index, or (an axis much
/// longer than the entries, see [`super::sparse_axis`]) the indices seen,
/// counted at the end. A sparse counter turns dense once the entries it
/// saw make a dense array the smaller of the two, so memory stays within a
/// small multiple of the entries read even when the declared entry count
/// (unverified in a stream) is wrong.
enum Counter {
    Dense(Vec<u32>),
    Sparse { n: usize, seen: Vec<u64> },
}

impl Counter {
    fn new(n: usize, sparse: bool) -> Self {
        if sparse {
            Counter::Sparse {
                n,
                seen: Vec::new(),
            }
        } else {
            Counter::Dense(vec![0; n])
        }
    }

    #[inline]
    fn add(&mut self, i: u64) {
        match self {
            Counter::Dense(v) => v[i as usize] = v[i as usize].wrapping_add(1),
            Counter::Sparse { n, seen } => {
                seen.push(i);
                if !super::sparse_axis(*n, seen.len()) {
                    self.densify();
                }
            }
        }
    }

    fn densify(&mut self) {
        if let Counter::Sparse { n, seen } = self {
            let mut v = vec![0u32; *n];
            for &i in seen.iter() {
                v[i as usize] = v[i as usize].wrapping_add(1);
            }
            *self = Counter::Dense(v);
        }
    }

    /// Adds `b` into `self`, in parallel.
    fn merge(mut self, mut b: Self) -> Self {
        if matches!(self, Counter::Dense(_)) || matches!(b, Counter::Dense(_)) {
            self.densify();
            b.densify();
        }
        match (self, b) {
            (Counter::Dense(mut x), Counter::Dense(y)) => {
                x.par_iter_mut()
                    .with_min_len(1 << 14)
                    .zip(y.par_iter())
                    .for_each(|(x, y)| *x = x.wrapping_add(*y));
                Counter::Dense(x)
            }
            (Counter::Sparse { n, mut seen }, Counter::Sparse { seen: y, .. }) => {
                seen.extend_from_slice(&y);
                let mut c = Counter::Sparse { n, seen };
                if let Counter::Sparse { n, seen } = &c {
                    if !super::sparse_axis(*n, seen.len()) {
                        c.densify();
                    }
                }
                c
            }
            (a, _) => a,
        }
    }

    fn finish(self, what: &'static str) -> Result<Lengths, AnalyzeError> {
        match self {
            Counter::Dense(v) => Ok(Lengths::Dense(v)),
            Counter::Sparse { n, seen } => Lengths::from_indices(n, seen, what),
        }
    }
}

/// One task's counters (no contention, no cache-line sharing). The
/// expanded entry count is checked against `u32::MAX` first, so no counter
/// wraps on a file that reads.
struct Local {
    rows: Counter,
    cols: Counter,
    far: FarCounter,
}

impl Local {
    #[inline]
    fn add(&mut self, i: u64, j: u64) {
        self.rows.add(i);
        self.cols.add(j);
        self.far.add(i, j);
    }

    fn merge(self, b: Self) -> Self {
        Self {
            rows: self.rows.merge(b.rows),
            cols: self.cols.merge(b.cols),
            far: self.far.merge(b.far),
        }
    }
}

fn counters(n: usize) -> Vec<AtomicU32> {
    (0..n).map(|_| AtomicU32::new(0)).collect()
}

/// The scan's errors: [`MmErrorKind::ScanUnsupported`] asks for a full
/// read.
fn scan_err(e: MmError) -> AnalyzeError {
    match e.kind() {
        MmErrorKind::ScanUnsupported { reason } => AnalyzeError::NeedsFullRead {
            path: e.path().to_string(),
            reason: (*reason).to_string(),
        },
        _ => AnalyzeError::Mm(e),
    }
}

/// Counts the rows and columns of an opened scan.
fn count(scan: StructureScan<'_>) -> Result<(RowLengths, Vec<mm::Warning>), AnalyzeError> {
    let h = *scan.header();
    if h.format == mm::MmFormat::Array {
        // The scan handles array files too; analyze keeps reading them
        // whole, as it always has (its callers expect `needs_full_read`).
        return Err(AnalyzeError::NeedsFullRead {
            path: scan.name().to_string(),
            reason: "an array (dense) file is read whole".into(),
        });
    }
    if h.nnz_expanded_max() > u32::MAX as usize {
        return Err(AnalyzeError::NeedsFullRead {
            path: scan.name().to_string(),
            reason: format!(
                "{} entries may exceed the 32-bit counters of the streaming pass",
                h.nnz_expanded_max()
            ),
        });
    }
    let per_task = h.nrows.saturating_add(h.ncols);
    let bytes = scan.data_len().unwrap_or(0);
    let local = scan.max_states().saturating_mul(per_task) <= LOCAL_COUNTERS_MIN.max(bytes / 4);
    // The declared entry count is verified against the size of a file in
    // memory, not of a stream: there every long axis starts sparse.
    let entries = match scan.data_len() {
        Some(_) => h.nnz_expanded_max(),
        None => 0,
    };
    let sparse = (
        super::sparse_axis(h.nrows, entries),
        super::sparse_axis(h.ncols, entries),
    );
    // Sparse axes hold the indices seen, per task: always local.
    count_with(scan, local || sparse.0 || sparse.1, sparse)
}

/// Counts into per-task arrays (`local`) or shared atomic counters.
fn count_with(
    scan: StructureScan<'_>,
    local: bool,
    (sparse_rows, sparse_cols): (bool, bool),
) -> Result<(RowLengths, Vec<mm::Warning>), AnalyzeError> {
    let (nrows, ncols) = (scan.header().nrows, scan.header().ncols);
    let far = || Far::counter(nrows, ncols);
    // a declared row axis far longer than the entries records no spans
    let spans = (!sparse_rows).then(|| SpanCounter::new(nrows));
    let span = |i: u64, j: u64| {
        if let Some(c) = &spans {
            c.add(i, j);
        }
    };
    let (rows, cols, far, warnings) = if local {
        let init = || Local {
            rows: Counter::new(nrows, sparse_rows),
            cols: Counter::new(ncols, sparse_cols),
            far: far(),
        };
        let (t, w) = scan
            .fold(
                init,
                |s, i, j| {
                    span(i, j);
                    s.add(i, j)
                },
                Local::merge,
            )
            .map_err(scan_err)?;
        (
            t.rows.finish("row length")?,
            t.cols.finish("column length")?,
            t.far,
            w,
        )
    } else {
        let (rows, cols) = (counters(nrows), counters(ncols));
        let visit = |f: &mut FarCounter, i: u64, j: u64| {
            rows[i as usize].fetch_add(1, Ordering::Relaxed);
            cols[j as usize].fetch_add(1, Ordering::Relaxed);
            span(i, j);
            f.add(i, j);
        };
        let (f, w) = scan.fold(far, visit, FarCounter::merge).map_err(scan_err)?;
        let into =
            |v: Vec<AtomicU32>| Lengths::Dense(v.into_iter().map(AtomicU32::into_inner).collect());
        (into(rows), into(cols), f, w)
    };
    let rl = RowLengths {
        nrows,
        ncols,
        rows,
        cols,
        far: far.finish(),
        spans: spans.map(SpanCounter::finish).unwrap_or_default(),
    };
    Ok((rl, warnings))
}

impl RowLengths {
    /// Row and column lengths of a Matrix Market file, counted in one
    /// streaming pass without building the matrix (see the [module
    /// docs](crate::rows::stream)). Plain files are memory-mapped and
    /// scanned in parallel; gzip files are decompressed as a stream.
    ///
    /// # Errors
    /// [`AnalyzeError::Mm`] for a file the strict reader rejects (naming
    /// the file and line, in the reader's words);
    /// [`AnalyzeError::NeedsFullRead`] for what the streaming pass does not
    /// handle (array files, stdin, more than 2^32 − 1 entries): read the
    /// matrix and use [`RowLengths::from_csr`] instead.
    pub fn from_mm_path(path: &Path) -> Result<Self, AnalyzeError> {
        if path == Path::new("-") {
            return Err(AnalyzeError::NeedsFullRead {
                path: "<stdin>".into(),
                reason: "stdin cannot be read twice (by the pass, then by the reader if the \
                         pass cannot handle it); use RowLengths::from_mm_reader"
                    .into(),
            });
        }
        let scan = StructureScan::open(path, &mm::ReadOptions::default())?;
        count(scan).map(|(rl, _)| rl)
    }

    /// Like [`RowLengths::from_mm_path`] for any reader (stdin, a socket;
    /// gzip content is detected and decompressed), with the reader's
    /// `opts` (lenient recoveries give warnings, returned too). The input
    /// is consumed: on [`AnalyzeError::needs_full_read`] the caller needs
    /// its own copy to read the matrix.
    ///
    /// # Errors
    /// As [`RowLengths::from_mm_path`].
    ///
    /// ```
    /// use sparsetool_analyze::RowLengths;
    /// let text = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n";
    /// let opts = sparsetool_formats::mm::ReadOptions::default();
    /// let (rl, _) = RowLengths::from_mm_reader(text.as_bytes(), "a.mtx", &opts).unwrap();
    /// assert_eq!((rl.rows.to_vec(), rl.cols.to_vec()), (vec![1, 1, 1], vec![1, 1, 1]));
    /// ```
    pub fn from_mm_reader(
        reader: impl Read + Send,
        name: &str,
        opts: &mm::ReadOptions,
    ) -> Result<(Self, Vec<mm::Warning>), AnalyzeError> {
        count(StructureScan::from_reader(reader, name, opts)?)
    }
}

/// Row lengths of a Matrix Market file by the cheapest route that works:
/// the streaming pass ([`mm::StructureScan`], with `opts`, so lenient
/// recoveries included), or the full reader ([`mm::read_path`], then
/// [`RowLengths::from_coo`]) when the pass cannot handle the file
/// ([`AnalyzeError::NeedsFullRead`]: array files, stdin, lenient
/// recoveries that need the values). Symmetric kinds are always expanded.
/// Returns the reader's warnings (lenient recoveries).
///
/// # Errors
/// The reader's or the streaming pass's [`AnalyzeError`].
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let p = dir.path().join("a.mtx");
/// std::fs::write(&p, "%%MatrixMarket matrix array real general\n2 1\n1.5\n0\n").unwrap();
/// let opts = sparsetool_formats::mm::ReadOptions::default();
/// let (rl, warnings) = sparsetool_analyze::rows::read_row_lengths(&p, &opts).unwrap();
/// assert_eq!((rl.rows.to_vec(), warnings.len()), (vec![1, 0], 0));
/// ```
pub fn read_row_lengths(
    path: &Path,
    opts: &mm::ReadOptions,
) -> Result<(RowLengths, Vec<mm::Warning>), AnalyzeError> {
    let opts = mm::ReadOptions {
        expand_symmetry: true,
        ..opts.clone()
    };
    if path != Path::new("-") {
        match StructureScan::open(path, &opts).map_err(AnalyzeError::Mm) {
            Ok(scan) => match count(scan) {
                Err(AnalyzeError::NeedsFullRead { .. }) => {}
                other => return other,
            },
            Err(e) => return Err(e),
        }
    }
    let complex = path != Path::new("-")
        && matches!(
            mm::read_header_path_with(path, &opts),
            Ok((h, _)) if h.field == mm::MmField::Complex
        );
    if complex {
        let m = mm::read_path::<sparsetool_formats::Complex64, i64>(path, &opts)?;
        Ok((RowLengths::from_coo(&m.coo)?, m.warnings))
    } else {
        let m = mm::read_path::<f64, i64>(path, &opts)?;
        Ok((RowLengths::from_coo(&m.coo)?, m.warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both counting strategies count the far entries as the loaded matrix
    /// does.
    #[test]
    fn far_entries_agree_between_the_stream_and_the_loaded_matrix() {
        // 400 rows x 4M columns, random columns: many entries far from the
        // diagonal for each value size, more for larger values
        let mut x: u64 = 11;
        let (mut ri, mut ci) = (Vec::new(), Vec::new());
        let mut text =
            String::from("%%MatrixMarket matrix coordinate pattern general\n400 4000000 5000\n");
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (i, j) = ((x >> 40) % 400, (x >> 11) % 4_000_000);
            text.push_str(&format!("{} {}\n", i + 1, j + 1));
            ri.push(i as i64);
            ci.push(j as i64);
        }
        let opts = mm::ReadOptions::default();
        let scan = || StructureScan::from_bytes(text.as_bytes(), "t", &opts).unwrap();
        let (local, _) = count_with(scan(), true, (false, true)).unwrap();
        let (shared, _) = count_with(scan(), false, (false, false)).unwrap();
        let loaded = RowLengths::from_coords(400, 4_000_000, &ri, &ci).unwrap();
        assert_eq!(local.far, loaded.far);
        assert_eq!(shared.far, loaded.far);
        let [f4, f8, f16] = loaded.far.0;
        assert!(
            0 < f4 && f4 < f8 && f8 < f16 && f16 < 5000,
            "{:?}",
            loaded.far
        );
        // x of 16M bytes in f32 fits the cache: nothing counts as far
        assert_eq!(loaded.far_gathers(4), 0);
        assert_eq!(loaded.far_gathers(8), f8);
    }

    /// The two counting strategies (per-task arrays, shared atomics) give
    /// the same counts, in memory and streamed.
    #[test]
    fn shared_and_local_counters_agree() {
        let mut x: u64 = 7;
        for symmetry in ["general", "symmetric"] {
            let mut text = format!("%%MatrixMarket matrix coordinate pattern {symmetry}\n");
            text.push_str("300 300 20000\n");
            for k in 0..20_000u64 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let i = (x >> 33) % 300 + 1;
                let j = ((x >> 13) % i) + 1;
                if k % 97 == 0 {
                    text.push_str("% c\n\n");
                }
                text.push_str(&format!("{i} {j}\n"));
            }
            let opts = mm::ReadOptions::default();
            let scan = || StructureScan::from_bytes(text.as_bytes(), "t", &opts).unwrap();
            let (local, _) = count_with(scan(), true, (false, false)).unwrap();
            let (shared, _) = count_with(scan(), false, (false, false)).unwrap();
            let (sparse, _) = count_with(scan(), true, (true, true)).unwrap();
            assert_eq!(sparse.rows.to_vec(), local.rows.to_vec());
            assert_eq!(sparse.cols.to_vec(), local.cols.to_vec());
            assert_eq!(sparse.rows.counts(), local.rows.counts());
            assert_eq!(shared, local);
            assert_eq!(count(scan()).unwrap().0, local);
            let (streamed, _) = RowLengths::from_mm_reader(text.as_bytes(), "t", &opts).unwrap();
            assert_eq!(streamed, local);
            if symmetry == "general" {
                assert_eq!(local.nnz(), 20_000);
            } else {
                assert!(local.nnz() > 20_000);
            }
        }
    }
}
