//! Streaming row and column counts of a Matrix Market file.
//!
//! [`RowLengths::from_mm_path`] reads the header with
//! [`mm::read_header_path`], then scans the data lines once and parses
//! only the two leading integers of each (the row and the column index):
//! values are neither parsed nor checked, and no COO or CSR matrix is
//! built. Memory is `O(nrows + ncols)` counters.
//!
//! - Plain files are memory-mapped and cut into newline-aligned chunks
//!   scanned in parallel (rayon). When `threads * (nrows + ncols)`
//!   counters take no more memory than the file (or at most 2^24
//!   counters), each task counts a run of chunks into its own arrays,
//!   summed at the end; otherwise tasks share one set of atomic counters.
//! - Gzip files (magic `1f 8b`, whatever the extension) are decompressed
//!   as a stream by one thread while the caller's thread scans the lines
//!   of the previous block, so the pass costs about the decompression.
//!
//! Measured (3 M entries, 2 cores; ignored test `streaming_speed`): about
//! 0.4x the time of the full reader's parse for a plain file and 0.6x
//! for the same file gzipped.
//! - Symmetric, skew-symmetric and hermitian files are counted expanded,
//!   as the reader expands them: an off-diagonal entry `(i, j)` counts in
//!   rows `i` and `j` and columns `j` and `i`; a diagonal entry once.
//!
//! Checks (strict, like the reader without `--lenient`): indices in
//! `1..=dim`, the number of entries equals the declared count, only the
//! lower triangle in symmetric kinds, no diagonal in skew-symmetric files,
//! 0-based files rejected. Errors are [`MmError`]s naming the file and the
//! 1-based line. Duplicate entries are counted as stored (a CSR conversion
//! sums them, so its row lengths can be smaller).
//!
//! Not handled (the caller reads the whole matrix instead, see
//! [`AnalyzeError::needs_full_read`]): `array` files (whose entries are
//! the nonzero values, so values must be parsed), stdin, and the quirks
//! only `--lenient` accepts.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;
use sparsetool_formats::mm::{self, Header, MmError, MmErrorKind, MmFormat, MmSymmetry};

mod gzip;

use super::RowLengths;
use crate::AnalyzeError;
use gzip::scan_gzip;

/// Bytes per parallel chunk (at least; chunks end at a newline).
const CHUNK_BYTES: usize = 1 << 20;

/// What the line scanner needs from the header.
#[derive(Clone, Copy)]
struct Ctx {
    nrows: u64,
    ncols: u64,
    symmetry: MmSymmetry,
}

/// One parsed entry line.
enum Line {
    /// A comment or blank line.
    Skip,
    /// 1-based indices, at least one of them 0 (a 0-based file?): which.
    Zero(&'static str),
    /// 1-based, in range, allowed by the symmetry.
    Entry(u64, u64),
}

/// Whether one of the indices equals its dimension (rules out a 0-based
/// file, as in the reader).
fn hits_max(ctx: Ctx, i: u64, j: u64) -> bool {
    i == ctx.nrows || j == ctx.ncols
}

fn snippet(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim();
    let mut out: String = s.chars().take(60).collect();
    if s.chars().count() > 60 {
        out.push_str("...");
    }
    out
}

/// Parses an unsigned integer at the start of `s`; returns it and the rest.
fn uint<'a>(s: &'a [u8], expected: &'static str) -> Result<(u64, &'a [u8]), MmErrorKind> {
    let mut v: u64 = 0;
    let mut n = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            break;
        }
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(b - b'0')))
            .ok_or_else(|| MmErrorKind::BadNumber {
                expected,
                found: snippet(s),
            })?;
        n += 1;
    }
    let rest = &s[n..];
    let ends = rest
        .first()
        .is_none_or(|b| matches!(b, b' ' | b'\t' | b'\r'));
    if n == 0 || !ends {
        let tok: &[u8] = s
            .split(|b| matches!(b, b' ' | b'\t' | b'\r'))
            .next()
            .unwrap_or(s);
        return Err(MmErrorKind::BadNumber {
            expected,
            found: snippet(tok),
        });
    }
    Ok((v, rest))
}

fn skip_space(s: &[u8]) -> &[u8] {
    let k = s
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t'))
        .unwrap_or(s.len());
    &s[k..]
}

/// Parses one line (without its `\n`).
fn parse_line(line: &[u8], ctx: Ctx) -> Result<Line, MmErrorKind> {
    let s = skip_space(line);
    match s.first() {
        None | Some(b'\r') | Some(b'%') => return Ok(Line::Skip),
        _ => {}
    }
    let (i, rest) = uint(s, "a row index")?;
    let (j, _) = uint(skip_space(rest), "a column index")?;
    if i > ctx.nrows {
        return Err(MmErrorKind::IndexOutOfRange {
            which: "row",
            index: i,
            max: ctx.nrows as usize,
        });
    }
    if j > ctx.ncols {
        return Err(MmErrorKind::IndexOutOfRange {
            which: "column",
            index: j,
            max: ctx.ncols as usize,
        });
    }
    if i == 0 {
        return Ok(Line::Zero("row"));
    }
    if j == 0 {
        return Ok(Line::Zero("column"));
    }
    match ctx.symmetry {
        MmSymmetry::General => {}
        sym => {
            if j > i {
                return Err(MmErrorKind::NotLowerTriangle {
                    row: i,
                    col: j,
                    symmetry: sym.keyword(),
                });
            }
            if sym == MmSymmetry::SkewSymmetric && i == j {
                return Err(MmErrorKind::SkewDiagonal { row: i });
            }
        }
    }
    Ok(Line::Entry(i, j))
}

/// Where entry counts go: shared atomic counters or one task's own.
trait Counters {
    /// Adds one entry (1-based, validated).
    fn add(&mut self, ctx: Ctx, i: u64, j: u64);
}

/// Shared counters (memory `nrows + ncols` whatever the thread count).
struct Shared<'a> {
    rows: &'a [AtomicU32],
    cols: &'a [AtomicU32],
}

impl Counters for Shared<'_> {
    #[inline]
    fn add(&mut self, ctx: Ctx, i: u64, j: u64) {
        let (r, c) = ((i - 1) as usize, (j - 1) as usize);
        self.rows[r].fetch_add(1, Ordering::Relaxed);
        self.cols[c].fetch_add(1, Ordering::Relaxed);
        if ctx.symmetry != MmSymmetry::General && i != j {
            self.rows[c].fetch_add(1, Ordering::Relaxed);
            self.cols[r].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// One task's counters (no contention, no cache-line sharing). The
/// declared total is checked against `u32::MAX` first; a file with more
/// lines than declared may wrap a counter, but is then rejected
/// (`TooManyEntries`) before the counts are used.
struct Local {
    rows: Vec<u32>,
    cols: Vec<u32>,
}

impl Counters for Local {
    #[inline]
    fn add(&mut self, ctx: Ctx, i: u64, j: u64) {
        let (r, c) = ((i - 1) as usize, (j - 1) as usize);
        self.rows[r] = self.rows[r].wrapping_add(1);
        self.cols[c] = self.cols[c].wrapping_add(1);
        if ctx.symmetry != MmSymmetry::General && i != j {
            self.rows[c] = self.rows[c].wrapping_add(1);
            self.cols[r] = self.cols[r].wrapping_add(1);
        }
    }
}

/// Adds `b` into `a`, in parallel.
fn merge(a: &mut [u32], b: &[u32]) {
    a.par_iter_mut()
        .with_min_len(1 << 14)
        .zip(b.par_iter())
        .for_each(|(x, y)| *x = x.wrapping_add(*y));
}

/// What a chunk found.
#[derive(Default)]
struct ChunkScan {
    /// Entries counted (valid lines before the first error).
    entries: usize,
    /// Offset (in the data) of the first entry line with an index 0, and
    /// which index.
    first_zero: Option<(usize, &'static str)>,
    /// Whether an index equals its dimension.
    saw_max: bool,
    /// First error: offset of its line and the kind.
    error: Option<(usize, MmErrorKind)>,
}

fn scan_chunk<C: Counters>(
    data: &[u8],
    start: usize,
    end: usize,
    ctx: Ctx,
    counters: &mut C,
) -> ChunkScan {
    let mut out = ChunkScan::default();
    let mut pos = start;
    while pos < end {
        let nl = memchr::memchr(b'\n', &data[pos..end]).map_or(end, |k| pos + k);
        match parse_line(&data[pos..nl], ctx) {
            Ok(Line::Skip) => {}
            Ok(Line::Zero(which)) => {
                out.entries += 1;
                out.first_zero.get_or_insert((pos, which));
            }
            Ok(Line::Entry(i, j)) => {
                out.entries += 1;
                out.saw_max |= hits_max(ctx, i, j);
                counters.add(ctx, i, j);
            }
            Err(kind) => {
                out.error = Some((pos, kind));
                return out;
            }
        }
        pos = nl + 1;
    }
    out
}

/// Offset just after the `k`-th (0-based) entry line starting at `start`,
/// i.e. the start of the line after it, plus the offset of the next entry
/// line after that (the first extra entry).
fn nth_entry_end(data: &[u8], start: usize, k: usize, ctx: Ctx) -> Option<usize> {
    let mut pos = start;
    let mut seen = 0;
    while pos < data.len() {
        let nl = memchr::memchr(b'\n', &data[pos..]).map_or(data.len(), |x| pos + x);
        if !matches!(parse_line(&data[pos..nl], ctx), Ok(Line::Skip)) {
            if seen == k {
                return Some(pos);
            }
            seen += 1;
        }
        pos = nl + 1;
    }
    None
}

fn line_of(data: &[u8], offset: usize, header: &Header) -> u64 {
    header.data_line + bytecount_newlines(&data[..offset.min(data.len())])
}

fn bytecount_newlines(s: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', s).count() as u64
}

fn line_text(data: &[u8], offset: usize) -> String {
    let end = memchr::memchr(b'\n', &data[offset..]).map_or(data.len(), |k| offset + k);
    snippet(&data[offset..end])
}

fn ctx_of(header: &Header) -> Ctx {
    Ctx {
        nrows: header.nrows as u64,
        ncols: header.ncols as u64,
        symmetry: header.symmetry,
    }
}

fn zero_error(saw_max: bool, which: &'static str) -> MmErrorKind {
    if saw_max {
        MmErrorKind::ZeroIndex { which }
    } else {
        MmErrorKind::ZeroBased
    }
}

fn check_counts_fit(header: &Header, name: &str) -> Result<(), AnalyzeError> {
    if header.nnz_expanded_max() > u32::MAX as usize {
        return Err(AnalyzeError::NeedsFullRead {
            path: name.to_string(),
            reason: format!(
                "{} entries may exceed the 32-bit counters of the streaming pass",
                header.nnz_expanded_max()
            ),
        });
    }
    Ok(())
}

fn into_lengths(header: &Header, rows: Vec<AtomicU32>, cols: Vec<AtomicU32>) -> RowLengths {
    RowLengths {
        nrows: header.nrows,
        ncols: header.ncols,
        rows: rows.into_iter().map(AtomicU32::into_inner).collect(),
        cols: cols.into_iter().map(AtomicU32::into_inner).collect(),
    }
}

fn counters(n: usize) -> Vec<AtomicU32> {
    (0..n).map(|_| AtomicU32::new(0)).collect()
}

/// Newline-aligned chunk boundaries: `[0, e1, e2, ..., len]`, chunks of at
/// least `target` bytes.
fn chunk_bounds(data: &[u8], target: usize) -> Vec<usize> {
    let mut bounds = vec![0usize];
    let mut pos = 0;
    while pos < data.len() {
        let want = (pos + target.max(1)).min(data.len());
        let end = if want == data.len() {
            want
        } else {
            memchr::memchr(b'\n', &data[want..]).map_or(data.len(), |k| want + k + 1)
        };
        bounds.push(end);
        pos = end;
    }
    bounds
}

/// Scans the data region of a plain (uncompressed) file held in memory.
/// `data` starts at the first data line.
fn scan_plain(data: &[u8], header: &Header, name: &str) -> Result<RowLengths, AnalyzeError> {
    let ctx = ctx_of(header);
    let target = CHUNK_BYTES.max(data.len() / (rayon::current_num_threads() * 4).max(1));
    let bounds = chunk_bounds(data, target);
    let (scans, lengths) = scan_chunks(data, &bounds, header, false);
    let err = |offset: usize, kind: MmErrorKind| {
        AnalyzeError::Mm(MmError::new(
            name,
            Some(line_of(data, offset, header)),
            kind,
        ))
    };
    let declared = header.entries;
    let mut seen = 0usize;
    let mut first_zero = None;
    let mut saw_max = false;
    for (w, scan) in bounds.windows(2).zip(scans) {
        if seen + scan.entries > declared {
            // The first entry beyond the declared count.
            let extra = nth_entry_end(data, w[0], declared - seen, ctx).unwrap_or(w[0]);
            return Err(err(
                extra,
                MmErrorKind::TooManyEntries {
                    declared,
                    found: line_text(data, extra),
                },
            ));
        }
        seen += scan.entries;
        if first_zero.is_none() {
            first_zero = scan.first_zero;
        }
        saw_max |= scan.saw_max;
        if let Some((offset, kind)) = scan.error {
            if seen == declared {
                return Err(err(
                    offset,
                    MmErrorKind::TooManyEntries {
                        declared,
                        found: line_text(data, offset),
                    },
                ));
            }
            return Err(err(offset, kind));
        }
    }
    if let Some((z, which)) = first_zero {
        return Err(err(z, zero_error(saw_max, which)));
    }
    if seen < declared {
        return Err(AnalyzeError::Mm(MmError::new(
            name,
            None,
            MmErrorKind::TooFewEntries {
                declared,
                found: seen,
            },
        )));
    }
    Ok(lengths)
}

/// Most counters (`tasks * (nrows + ncols)`) for per-task counting: at
/// most this many, or one per 4 bytes of the file (so the counters never
/// take more memory than the file they count).
const LOCAL_COUNTERS_MIN: usize = 1 << 24;

/// Scans the chunks `bounds` in parallel. With few rows and columns
/// relative to the file, each of up to `threads` tasks counts a run of
/// consecutive chunks into its own arrays, summed at the end (no atomic
/// contention); otherwise all tasks share atomic counters, so memory stays
/// `nrows + ncols` counters.
fn scan_chunks(
    data: &[u8],
    bounds: &[usize],
    header: &Header,
    force_shared: bool,
) -> (Vec<ChunkScan>, RowLengths) {
    let ctx = ctx_of(header);
    let threads = rayon::current_num_threads().max(1);
    let nchunks = bounds.len().saturating_sub(1);
    let tasks = threads.min(nchunks).max(1);
    let per_task = header.nrows + header.ncols;
    let local_ok = tasks.saturating_mul(per_task) <= LOCAL_COUNTERS_MIN.max(data.len() / 4);
    if force_shared || !local_ok {
        let rows = counters(header.nrows);
        let cols = counters(header.ncols);
        let scans = bounds
            .par_windows(2)
            .map(|w| {
                let mut sink = Shared {
                    rows: &rows,
                    cols: &cols,
                };
                scan_chunk(data, w[0], w[1], ctx, &mut sink)
            })
            .collect();
        return (scans, into_lengths(header, rows, cols));
    }
    let group = nchunks.div_ceil(tasks).max(1);
    let starts: Vec<usize> = (0..nchunks).step_by(group).collect();
    let parts: Vec<(Vec<ChunkScan>, Local)> = starts
        .par_iter()
        .map(|&g| {
            let mut local = Local {
                rows: vec![0; header.nrows],
                cols: vec![0; header.ncols],
            };
            let end = (g + group).min(nchunks);
            let mut scans = Vec::with_capacity(end - g);
            for k in g..end {
                let scan = scan_chunk(data, bounds[k], bounds[k + 1], ctx, &mut local);
                let stop = scan.error.is_some();
                scans.push(scan);
                if stop {
                    // Later chunks of this run are never looked at.
                    scans.extend((k + 1..end).map(|_| ChunkScan::default()));
                    break;
                }
            }
            (scans, local)
        })
        .collect();
    let mut all_scans = Vec::with_capacity(nchunks);
    let mut total: Option<Local> = None;
    for (scans, local) in parts {
        all_scans.extend(scans);
        match &mut total {
            None => total = Some(local),
            Some(t) => {
                merge(&mut t.rows, &local.rows);
                merge(&mut t.cols, &local.cols);
            }
        }
    }
    let total = total.unwrap_or_else(|| Local {
        rows: vec![0; header.nrows],
        cols: vec![0; header.ncols],
    });
    let lengths = RowLengths {
        nrows: header.nrows,
        ncols: header.ncols,
        rows: total.rows,
        cols: total.cols,
    };
    (all_scans, lengths)
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

impl RowLengths {
    /// Row and column lengths of a Matrix Market file, counted in one
    /// streaming pass without building the matrix (see the [module
    /// docs](crate::rows::stream)). Plain files are memory-mapped and scanned in parallel;
    /// gzip files are decompressed as a stream.
    ///
    /// # Errors
    /// [`AnalyzeError::Mm`] for a file the strict reader would reject too
    /// (naming the file and line); [`AnalyzeError::NeedsFullRead`] for what
    /// the streaming pass does not handle (array files, stdin, more than
    /// 2^32 − 1 entries): read the matrix and use
    /// [`RowLengths::from_csr`] instead.
    pub fn from_mm_path(path: &Path) -> Result<Self, AnalyzeError> {
        let name = path.display().to_string();
        if path == Path::new("-") {
            return Err(AnalyzeError::NeedsFullRead {
                path: "<stdin>".into(),
                reason: "stdin cannot be scanned twice (header, then data)".into(),
            });
        }
        let header = mm::read_header_path(path)?;
        if header.format == MmFormat::Array {
            return Err(AnalyzeError::NeedsFullRead {
                path: name,
                reason: "an array (dense) file's entries are its nonzero values, which the \
                         streaming pass does not parse"
                    .into(),
            });
        }
        check_counts_fit(&header, &name)?;
        let io =
            |e: std::io::Error| AnalyzeError::Mm(MmError::new(&name, None, MmErrorKind::Io(e)));
        let mut file = File::open(path).map_err(io)?;
        let mut magic = [0u8; 2];
        let n = read_up_to(&mut file, &mut magic).map_err(io)?;
        let file = File::open(path).map_err(io)?;
        if n == 2 && magic == GZIP_MAGIC {
            return scan_gzip(BufReader::new(file), &header, &name);
        }
        // SAFETY: the map is read-only and lives for this call; another
        // process truncating the file meanwhile is outside Rust's model (as
        // for every mmap reader). Every byte read is checked.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        let data = map.get(header.data_offset..).unwrap_or_default();
        scan_plain(data, &header, &name)
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Row lengths of a Matrix Market file by the cheapest route that works:
/// the streaming pass ([`RowLengths::from_mm_path`]) in strict mode, or
/// the full reader ([`mm::read_path`], then [`RowLengths::from_coo`]) when
/// `opts.lenient` is set or the streaming pass cannot handle the file
/// ([`AnalyzeError::needs_full_read`]: array files, stdin, lenient-only
/// quirks — in strict mode the full reader then reports the problem in
/// its own words). Symmetric kinds are always expanded. Returns the
/// reader's warnings (lenient recoveries; empty on the streaming route).
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
/// assert_eq!((rl.rows, warnings.len()), (vec![1, 0], 0));
/// ```
pub fn read_row_lengths(
    path: &Path,
    opts: &mm::ReadOptions,
) -> Result<(RowLengths, Vec<mm::Warning>), AnalyzeError> {
    if !opts.lenient {
        match RowLengths::from_mm_path(path) {
            Err(e) if e.needs_full_read() => {}
            other => return other.map(|rl| (rl, Vec::new())),
        }
    }
    let opts = mm::ReadOptions {
        expand_symmetry: true,
        ..opts.clone()
    };
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
    use sparsetool_formats::mm::MmField;

    #[test]
    fn shared_and_local_counters_agree() {
        let mut text = String::new();
        let mut x: u64 = 7;
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
        for symmetry in [MmSymmetry::General, MmSymmetry::Symmetric] {
            let header = Header {
                format: MmFormat::Coordinate,
                field: MmField::Pattern,
                symmetry,
                nrows: 300,
                ncols: 300,
                entries: 20_000,
                data_offset: 0,
                data_line: 1,
            };
            let data = text.as_bytes();
            for target in [64, 1000, 1 << 20] {
                let bounds = chunk_bounds(data, target);
                let (s1, shared) = scan_chunks(data, &bounds, &header, true);
                let (s2, local) = scan_chunks(data, &bounds, &header, false);
                assert_eq!(shared, local);
                assert_eq!(s1.iter().map(|s| s.entries).sum::<usize>(), 20_000);
                assert_eq!(s2.iter().map(|s| s.entries).sum::<usize>(), 20_000);
                let lines: usize = (0..bounds.len() - 1)
                    .map(|k| bytecount_newlines(&data[bounds[k]..bounds[k + 1]]) as usize)
                    .sum();
                assert_eq!(lines, bytecount_newlines(data) as usize);
                let ok = scan_plain(data, &header, "t").unwrap();
                assert_eq!(ok, local);
                if symmetry == MmSymmetry::General {
                    assert_eq!(ok.nnz(), 20_000);
                }
            }
        }
    }
}
