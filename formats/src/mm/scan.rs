//! Structure-only scan: the position of every entry, without building the
//! matrix.
//!
//! [`StructureScan`] reads the header, then walks the data lines with the
//! full reader's own code (the chunk plan of `chunk.rs`, the line grammar
//! and checks of `parse.rs`, the whole-file checks of `assemble.rs`), so
//! it accepts, rejects and warns exactly as [`super::read_path`] does.
//! Each entry is handed to a fold instead of being stored:
//!
//! - memory-mapped files (and bytes in memory) are scanned in parallel:
//!   the chunks are split into stretches, one per rayon thread, each
//!   folded into its own state, and the states are merged in file order;
//! - streams (gzip content, stdin, any [`Read`]) are read in blocks of
//!   whole lines by a second thread while the caller's thread folds the
//!   previous block into one state. Memory is a few blocks of 1 MiB (plus
//!   the longest line).
//!
//! Values are parsed and checked (number syntax, range, finiteness, token
//! count) as the full reader checks them for `f64`, then dropped (a read
//! into an `f32` type also rejects values beyond the `f32` range).

use std::io::{Cursor, Read};
use std::path::Path;
use std::sync::mpsc::{sync_channel, SyncSender};

use super::assemble::{array_checks, coordinate_checks};
use super::chunk::{
    beyond_declared, data_line_count, declared_fits, line_count, max_chunks, parse_with, run_tasks,
    skip_data_lines, too_few, Plan, SplitOut,
};
use super::error::{LineError, MmErrorKind};
use super::header::{Header, MmFormat, MmSymmetry};
use super::parse::{array_lines, coord_lines, next_line, Cfg, End, Stats};
use super::{
    display_name, head_of, open_input, read_header_from, read_up_to, stream_input, Input, MmError,
    ReadOptions, Warning, GZIP_MAGIC,
};

/// Bytes of a block of whole lines handed from the reading thread to the
/// scanning one (streams).
const BLOCK: usize = 1 << 20;

/// The data of a scan.
enum Data<'a> {
    /// A memory-mapped file.
    Mapped(memmap2::Mmap),
    /// Bytes held by the caller.
    Borrowed(&'a [u8]),
    /// A stream: the head read with the header, then the rest.
    Stream {
        head: Vec<u8>,
        rest: Box<dyn Read + Send + 'a>,
        gz: bool,
    },
}

/// A Matrix Market file opened for a structure-only scan: the header is
/// read, the data is scanned by [`StructureScan::fold`], which visits the
/// 0-based `(row, col)` of every entry (after symmetric expansion when
/// [`ReadOptions::expand_symmetry`]: an off-diagonal `(i, j)` also gives
/// `(j, i)`, a diagonal entry comes once) without building a matrix.
///
/// The entries of an `array` file are its nonzero values (as the reader
/// keeps them; values are compared with zero as `f64`).
///
/// The checks, error messages (file name and 1-based line) and lenient
/// warnings are the full reader's. The lenient recoveries the scan cannot
/// make without holding every entry are refused with
/// [`MmErrorKind::ScanUnsupported`]: 0-based files (every index is shifted
/// once the whole file is seen) and symmetric files storing both
/// triangles (mirrors are matched). Read those with [`super::read_path`].
///
/// ```
/// use sparsetool_formats::mm::{ReadOptions, StructureScan};
/// let text = b"%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 2.5\n3 1 -.5\n";
/// let scan = StructureScan::from_bytes(text, "a.mtx", &ReadOptions::default()).unwrap();
/// assert_eq!(scan.header().nrows, 3);
/// // Row lengths: one counter per row, per parallel task, summed.
/// let (rows, warnings) = scan
///     .fold(
///         || vec![0u32; 3],
///         |r, i, _j| r[i as usize] += 1,
///         |a, b| a.iter().zip(&b).map(|(x, y)| x + y).collect(),
///     )
///     .unwrap();
/// assert_eq!((rows, warnings.len()), (vec![2, 0, 1], 0)); // (0,0), (2,0), (0,2)
/// ```
pub struct StructureScan<'a> {
    name: String,
    opts: ReadOptions,
    header: Header,
    warnings: Vec<Warning>,
    data: Data<'a>,
}

impl std::fmt::Debug for StructureScan<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let data = match self.data {
            Data::Mapped(_) => "mapped",
            Data::Borrowed(_) => "in memory",
            Data::Stream { .. } => "stream",
        };
        f.debug_struct("StructureScan")
            .field("name", &self.name)
            .field("header", &self.header)
            .field("data", &data)
            .finish_non_exhaustive()
    }
}

impl StructureScan<'static> {
    /// Opens a file (`-` is stdin) and reads its header. Plain files are
    /// memory-mapped (scanned in parallel); gzip content (magic bytes
    /// `1f 8b`, whatever the extension), stdin and files that cannot be
    /// mapped are streamed.
    ///
    /// # Errors
    /// I/O, gzip and header errors, as [`super::read_path`] reports them.
    pub fn open(path: &Path, opts: &ReadOptions) -> Result<Self, MmError> {
        let name = display_name(path);
        match open_input(path, &name)? {
            Input::Mapped(map) => {
                let (header, warnings) = head_of(&map, &name, opts)?;
                Ok(Self::new(name, opts, header, warnings, Data::Mapped(map)))
            }
            Input::Stream { reader, gz } => Self::stream(reader, gz, name, opts),
        }
    }
}

impl<'a> StructureScan<'a> {
    fn new(
        name: String,
        opts: &ReadOptions,
        header: Header,
        warnings: Vec<Warning>,
        data: Data<'a>,
    ) -> Self {
        Self {
            name,
            opts: opts.clone(),
            header,
            warnings,
            data,
        }
    }

    fn stream(
        mut reader: Box<dyn Read + Send + 'a>,
        gz: bool,
        name: String,
        opts: &ReadOptions,
    ) -> Result<Self, MmError> {
        let (header, warnings, head) = read_header_from(&mut reader, gz, &name, opts)?;
        let data = Data::Stream {
            head,
            rest: reader,
            gz,
        };
        Ok(Self::new(name, opts, header, warnings, data))
    }

    /// Reads the header from any reader (gzip content is detected by its
    /// magic bytes and decompressed); the data is then streamed. `name` is
    /// used in messages.
    ///
    /// # Errors
    /// As [`StructureScan::open`].
    pub fn from_reader(
        reader: impl Read + Send + 'a,
        name: &str,
        opts: &ReadOptions,
    ) -> Result<Self, MmError> {
        let (reader, gz) = stream_input(reader, name)?;
        Self::stream(reader, gz, name.into(), opts)
    }

    /// Reads the header of a file held in memory (gzip content is
    /// decompressed as a stream; plain content is scanned in parallel).
    ///
    /// # Errors
    /// As [`StructureScan::open`].
    pub fn from_bytes(bytes: &'a [u8], name: &str, opts: &ReadOptions) -> Result<Self, MmError> {
        if bytes.starts_with(&GZIP_MAGIC) {
            return Self::from_reader(bytes, name, opts);
        }
        let (header, warnings) = head_of(bytes, name, opts)?;
        let data = Data::Borrowed(bytes);
        Ok(Self::new(name.into(), opts, header, warnings, data))
    }

    /// The header (for lenient reads, as recovered).
    #[must_use]
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The file name used in messages.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Bytes of the data section when the file is in memory (mapped or
    /// borrowed); `None` for a stream.
    #[must_use]
    pub fn data_len(&self) -> Option<usize> {
        match &self.data {
            Data::Mapped(m) => Some(m.len().saturating_sub(self.header.data_offset)),
            Data::Borrowed(b) => Some(b.len().saturating_sub(self.header.data_offset)),
            Data::Stream { .. } => None,
        }
    }

    /// The most fold states [`StructureScan::fold`] holds at once: one per
    /// parallel task for data in memory (at most the rayon thread count),
    /// one for a stream.
    #[must_use]
    pub fn max_states(&self) -> usize {
        match self.data_len() {
            Some(len) => rayon::current_num_threads().min(max_chunks(len)).max(1),
            None => 1,
        }
    }

    /// Visits every entry: `visit(state, row, col)` with 0-based indices,
    /// in file order within a state. Each parallel task folds into its own
    /// state from `init`; `merge` combines them in file order. Every entry
    /// is visited exactly once when the scan succeeds, so `visit` may also
    /// update shared counters (atomics) captured by reference. Returns the
    /// merged state and the warnings of lenient recoveries (header ones
    /// included).
    ///
    /// # Errors
    /// What the full reader reports for the same file (the same kind, line
    /// and message), or [`MmErrorKind::ScanUnsupported`] (see the type
    /// docs). On an error, some entries may have been visited.
    pub fn fold<S, I, V, M>(self, init: I, visit: V, merge: M) -> Result<(S, Vec<Warning>), MmError>
    where
        S: Send,
        I: Fn() -> S + Sync,
        V: Fn(&mut S, u64, u64) + Sync,
        M: Fn(S, S) -> S,
    {
        let tasks = self.max_states();
        let Self {
            name,
            opts,
            header: h,
            mut warnings,
            data,
        } = self;
        let at = |(line, kind): LineError| MmError::new(&name, line, kind);
        let unsupported =
            |reason| MmError::new(&name, None, MmErrorKind::ScanUnsupported { reason });
        let cfg = Cfg::new(&h, opts.lenient, false);
        let mirror = opts.expand_symmetry && h.symmetry != MmSymmetry::General;
        // 1-based indices as written; an index 0 is left to the 0-based
        // rule of `coordinate_checks`.
        let entry = |s: &mut S, i: u64, j: u64| {
            if i != 0 && j != 0 {
                visit(s, i - 1, j - 1);
                if mirror && i != j {
                    visit(s, j - 1, i - 1);
                }
            }
        };
        let task = Task {
            h: &h,
            cfg: &cfg,
            lenient: opts.lenient,
        };
        let (st, state) = match data {
            Data::Mapped(map) => task.in_memory(&map, tasks, &init, &entry, &merge, &mut warnings),
            Data::Borrowed(b) => task.in_memory(b, tasks, &init, &entry, &merge, &mut warnings),
            Data::Stream { head, rest, gz } => {
                task.stream(head, rest, gz, &init, &entry, &mut warnings)
            }
        }
        .map_err(at)?;
        if h.format == MmFormat::Array {
            array_checks(&st, opts.lenient, &mut warnings).map_err(at)?;
            return Ok((state, warnings));
        }
        let fix = coordinate_checks(&st, &h, opts.lenient, &mut warnings).map_err(at)?;
        if fix.shift {
            return Err(unsupported("0-based indices (--lenient shifts them)"));
        }
        if fix.dedup_from.is_some() {
            return Err(unsupported(
                "a symmetric file storing both triangles (--lenient drops duplicate mirrors)",
            ));
        }
        Ok((state, warnings))
    }
}

/// Scans the structure of a file (`-` is stdin): [`StructureScan::open`],
/// then [`StructureScan::fold`]. Returns the header too.
///
/// # Errors
/// As [`StructureScan::open`] and [`StructureScan::fold`].
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let p = dir.path().join("a.mtx");
/// std::fs::write(&p, "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 3\n").unwrap();
/// let opts = sparsetool_formats::mm::ReadOptions::default();
/// let (h, n, _) =
///     sparsetool_formats::mm::scan_structure(&p, &opts, || 0u64, |n, _, _| *n += 1, |a, b| a + b)
///         .unwrap();
/// assert_eq!((h.ncols, n), (3, 2));
/// ```
pub fn scan_structure<S, I, V, M>(
    path: &Path,
    opts: &ReadOptions,
    init: I,
    visit: V,
    merge: M,
) -> Result<(Header, S, Vec<Warning>), MmError>
where
    S: Send,
    I: Fn() -> S + Sync,
    V: Fn(&mut S, u64, u64) + Sync,
    M: Fn(S, S) -> S,
{
    let scan = StructureScan::open(path, opts)?;
    let h = *scan.header();
    let (s, w) = scan.fold(init, visit, merge)?;
    Ok((h, s, w))
}

/// A chunk's share of the declared entries: the number of its first one
/// in the file, and how many it may read.
struct Slots {
    start: usize,
    len: usize,
}

impl SplitOut for Slots {
    fn split(self, at: usize) -> (Self, Self) {
        let a = Slots {
            start: self.start,
            len: at,
        };
        let b = Slots {
            start: self.start + at,
            len: self.len.saturating_sub(at),
        };
        (a, b)
    }
}

/// Where the values of an array file go: column-major, the stored
/// triangle for symmetric kinds (0-based).
struct ArrayPos {
    i: usize,
    j: usize,
    nrows: usize,
    symmetry: MmSymmetry,
}

impl ArrayPos {
    /// First stored row of column `j`.
    fn first_row(symmetry: MmSymmetry, j: usize) -> usize {
        match symmetry {
            MmSymmetry::General => 0,
            MmSymmetry::Symmetric | MmSymmetry::Hermitian => j,
            MmSymmetry::SkewSymmetric => j + 1,
        }
    }

    /// The position of value number `k` (which exists, so `nrows > 0`).
    fn of(h: &Header, k: usize) -> Self {
        let (m, symmetry) = (h.nrows, h.symmetry);
        let (mut i, mut j) = (k, 0);
        if symmetry == MmSymmetry::General {
            (i, j) = (k % m.max(1), k / m.max(1));
        } else {
            // A triangle: as many columns as the values allow (the file
            // holds them all, so the walk is short).
            loop {
                let len = m.saturating_sub(Self::first_row(symmetry, j));
                if i < len || len == 0 {
                    break;
                }
                i -= len;
                j += 1;
            }
            i += Self::first_row(symmetry, j);
        }
        Self {
            i,
            j,
            nrows: m,
            symmetry,
        }
    }

    fn advance(&mut self) {
        self.i += 1;
        if self.i >= self.nrows {
            self.j += 1;
            self.i = Self::first_row(self.symmetry, self.j);
        }
    }
}

/// What every part of a scan needs.
struct Task<'h> {
    h: &'h Header,
    cfg: &'h Cfg,
    lenient: bool,
}

impl Task<'_> {
    /// Parses up to `limit` entry lines of `b` (whose first line is number
    /// `line`; its first entry is entry number `first` of the file),
    /// passing the 1-based position of each entry to `entry` (for arrays,
    /// of each nonzero value).
    fn lines<S>(
        &self,
        b: &[u8],
        line: u64,
        limit: usize,
        first: usize,
        s: &mut S,
        entry: &impl Fn(&mut S, u64, u64),
    ) -> Result<(Stats, End), LineError> {
        if self.h.format == MmFormat::Coordinate {
            return coord_lines(b, line, self.cfg, limit, |_, i, j, _, _| entry(s, i, j));
        }
        let mut pos: Option<ArrayPos> = None;
        let herm = self.h.symmetry == MmSymmetry::Hermitian;
        let mut nonreal = None;
        let (mut st, end) = array_lines(b, line, self.cfg, limit, |k, re, im| {
            let p = pos.get_or_insert_with(|| ArrayPos::of(self.h, first + k));
            if re != 0.0 || im != 0.0 {
                entry(s, p.i as u64 + 1, p.j as u64 + 1);
            }
            if herm && im != 0.0 && p.i == p.j && nonreal.is_none() {
                nonreal = Some((k, p.i as u64 + 1, im));
            }
            p.advance();
        })?;
        if let Some((k, row, im)) = nonreal {
            // Judged after the whole parse by `array_checks`, as the reader does.
            let (_, l) = skip_data_lines(b, line, k);
            st.nonreal_diagonal = Some((l, row, im));
        }
        Ok((st, end))
    }

    /// Data in memory: the full reader's chunk plan, chunks folded in
    /// parallel stretches.
    fn in_memory<S: Send>(
        &self,
        bytes: &[u8],
        tasks: usize,
        init: &(impl Fn() -> S + Sync),
        entry: &(impl Fn(&mut S, u64, u64) + Sync),
        merge: impl Fn(S, S) -> S,
        warnings: &mut Vec<Warning>,
    ) -> Result<(Stats, S), LineError> {
        let b = bytes.get(self.h.data_offset..).unwrap_or_default();
        let (st, states) = parse_with(b, self.h, self.lenient, warnings, |p: &Plan| {
            let len = p.counts.iter().sum();
            let slots = Slots { start: 0, len };
            run_tasks(
                b,
                p,
                slots,
                tasks,
                init,
                |c, l0, slots: Slots, s: &mut S| {
                    let (st, _) = self.lines(c, l0, slots.len, slots.start, s, entry)?;
                    Ok(st)
                },
            )
        })?;
        let state = states.into_iter().reduce(merge).unwrap_or_else(init);
        Ok((st, state))
    }

    /// A stream: blocks of whole lines read by a second thread, folded in
    /// order by this one.
    fn stream<'r, S>(
        &self,
        head: Vec<u8>,
        rest: Box<dyn Read + Send + 'r>,
        gz: bool,
        init: &impl Fn() -> S,
        entry: &impl Fn(&mut S, u64, u64),
        warnings: &mut Vec<Warning>,
    ) -> Result<(Stats, S), LineError> {
        let mut state = init();
        let parse =
            |b: &[u8], line, limit, first| self.lines(b, line, limit, first, &mut state, entry);
        let st = stream_blocks(head, rest, gz, self.h, self.lenient, BLOCK, warnings, parse)?;
        Ok((st, state))
    }
}

/// Drives a stream (`head`, the bytes read with the header, then `rest`):
/// a second thread reads blocks of whole lines of about `block` bytes,
/// this one hands each to `parse(block, first_line, limit, first_entry)`,
/// which parses at most `limit` entries and says where it stopped. The
/// entry count (too many, too few) and the order of errors are the full
/// reader's.
#[allow(clippy::too_many_arguments)]
pub(super) fn stream_blocks<'r>(
    head: Vec<u8>,
    rest: Box<dyn Read + Send + 'r>,
    gz: bool,
    h: &Header,
    lenient: bool,
    block: usize,
    warnings: &mut Vec<Warning>,
    mut parse: impl FnMut(&[u8], u64, usize, usize) -> Result<(Stats, End), LineError>,
) -> Result<Stats, LineError> {
    let mut first = Cursor::new(head);
    first.set_position(h.data_offset as u64);
    let src = first.chain(rest);
    let mut scan = StreamScan {
        h,
        lenient,
        line: h.data_line,
        bytes: 0,
        data_lines: 0,
        stopped: false,
        st: Stats::default(),
        failed: None,
    };
    let first_line = h.data_line;
    std::thread::scope(|scope| -> Result<(), LineError> {
        let (tx, rx) = sync_channel(1);
        scope.spawn(move || line_blocks(src, gz, block, first_line, &tx));
        for b in rx {
            if scan.block(&b?, &mut parse, warnings)? {
                break;
            }
        }
        Ok(())
    })?;
    scan.finish()
}

/// The longest line a stream may hold: no Matrix Market line comes near
/// it, and it bounds the memory of reading a stream with no line breaks
/// (`/dev/zero`, a binary file).
pub(super) const MAX_LINE: usize = 16 << 20;

/// Reads `r` to the end in blocks of whole lines of about `block` bytes
/// (the last one may end without a newline), sending each; a read error,
/// or a line longer than [`MAX_LINE`] (its number counted from
/// `first_line`), is sent as the error of the read.
fn line_blocks(
    mut r: impl Read,
    gz: bool,
    block: usize,
    first_line: u64,
    tx: &SyncSender<Result<Vec<u8>, LineError>>,
) {
    let mut carry = Vec::new();
    let mut line = first_line;
    loop {
        let mut buf = std::mem::take(&mut carry);
        let start = buf.len();
        buf.resize(start + block, 0);
        let n = match read_up_to(&mut r, &mut buf[start..]) {
            Ok(n) => n,
            Err(e) => {
                let kind = if gz {
                    MmErrorKind::Gzip(e.to_string())
                } else {
                    MmErrorKind::Io(e)
                };
                let _ = tx.send(Err((None, kind)));
                return;
            }
        };
        buf.truncate(start + n);
        let last = n < block;
        if !last {
            match memchr::memrchr(b'\n', &buf) {
                Some(k) => carry = buf.split_off(k + 1),
                None if buf.len() > MAX_LINE => {
                    let kind = MmErrorKind::LineTooLong { limit: MAX_LINE };
                    let _ = tx.send(Err((Some(line), kind)));
                    return;
                }
                None => {
                    // One line longer than a block: read on.
                    carry = buf;
                    continue;
                }
            }
        }
        line += bytecount::count(&buf, b'\n') as u64;
        if tx.send(Ok(buf)).is_err() || last {
            return;
        }
    }
}

/// The serial scan of a stream, block by block. It reports problems in
/// the full reader's order: the entry count (too many or too few data
/// lines) before errors on lines, so after the first error on a line it
/// reads on, counting data lines only.
struct StreamScan<'h> {
    h: &'h Header,
    lenient: bool,
    /// Number of the next line.
    line: u64,
    /// Data bytes so far.
    bytes: usize,
    /// Data lines so far.
    data_lines: usize,
    /// Reading stopped at data beyond the declared entries (lenient).
    stopped: bool,
    st: Stats,
    /// The first error on a line.
    failed: Option<LineError>,
}

impl StreamScan<'_> {
    /// One block of whole lines. Returns whether to stop reading.
    fn block(
        &mut self,
        b: &[u8],
        parse: &mut impl FnMut(&[u8], u64, usize, usize) -> Result<(Stats, End), LineError>,
        warnings: &mut Vec<Warning>,
    ) -> Result<bool, LineError> {
        let h = self.h;
        let first = self.line;
        self.bytes += b.len();
        self.line += line_count(b) as u64;
        let (mut from, mut from_line) = (0, first);
        if self.failed.is_none() && self.st.written < h.entries {
            let limit = h.entries - self.st.written;
            match parse(b, first, limit, self.st.written) {
                Ok((s, end)) => {
                    self.st.merge(s);
                    self.data_lines = self.st.written;
                    (from, from_line) = (end.pos, end.line);
                }
                // Out of memory: no point in reading on.
                Err(e @ (_, MmErrorKind::Alloc(_))) => return Err(e),
                Err(e) => self.failed = Some(e),
            }
        }
        // Count the data lines not parsed (after an error, or after the
        // declared entries).
        let rest = &b[from..];
        let n = data_line_count(rest);
        if self.data_lines + n > h.entries {
            let (p, line) = skip_data_lines(rest, from_line, h.entries - self.data_lines);
            let text = &rest[p..next_line(rest, p)];
            beyond_declared(h, self.lenient, line, text, warnings)?;
            self.stopped = true;
            return Ok(true);
        }
        self.data_lines += n;
        Ok(false)
    }

    /// After the last block: the entry count, then the first error on a
    /// line.
    fn finish(self) -> Result<Stats, LineError> {
        let h = self.h;
        if !self.stopped && self.data_lines < h.entries {
            let lines = usize::try_from(self.line - h.data_line).unwrap_or(usize::MAX);
            match (lines.cmp(&h.entries), self.failed) {
                // One line per entry: the full reader parses before it
                // counts data lines.
                (std::cmp::Ordering::Equal, Some(e)) => return Err(e),
                (std::cmp::Ordering::Less, _) => declared_fits(h, self.bytes)?,
                _ => {}
            }
            return Err(too_few(h, self.line, self.data_lines));
        }
        match self.failed {
            Some(e) => Err(e),
            None => Ok(self.st),
        }
    }
}
