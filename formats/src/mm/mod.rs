//! Matrix Market I/O: the NIST text format for sparse and dense matrices.
//!
//! Spec: R. F. Boisvert, R. Pozo, K. Remington, *The Matrix Market Exchange
//! Formats: Initial Design* (NIST IR 5935, 1996), and `mmio.c`.
//!
//! # Reading
//! [`read_path`] (memory-mapped; `-` is stdin; gzip detected by its magic
//! bytes) and [`read_bytes`] give an [`MmMatrix`]: the [`Header`], the
//! matrix as [`Coo`], and the [`Warning`]s of lenient recoveries.
//! [`read_header_path`] reads only the head of a file (milliseconds on a
//! multi-GB file, also for `.gz`).
//!
//! [`StructureScan`] (or [`scan_structure`]) visits the 0-based
//! `(row, col)` of every entry (expanded like the reader expands) without
//! building the matrix: memory is the caller's fold state plus bounded
//! buffers. It runs the reader's own chunking, line parsing and checks, so
//! it accepts, rejects (same message and line) and warns alike; mapped
//! files are scanned in parallel, gzip content and any [`Read`] (stdin)
//! are streamed.
//!
//! What the reader accepts (strict mode):
//! - `coordinate` and `array`; `real`/`double`, `integer`, `complex`,
//!   `pattern`; `general`, `symmetric`, `skew-symmetric`, `hermitian`;
//!   keywords in any case. Illegal pairs (pattern with hermitian or
//!   skew-symmetric, real/integer with hermitian, array with pattern) are
//!   errors.
//! - Comment lines (`%`, including `%%GraphBLAS ...`) and blank lines
//!   anywhere after the banner; spaces and tabs around tokens; CRLF; a
//!   missing final newline; numbers like `.032` or `-.3e-2`.
//! - Indices are 1-based in the file and 0-based in memory.
//! - Symmetric kinds store the lower triangle (skew-symmetric: strictly
//!   lower). With [`ReadOptions::expand_symmetry`] (the default) every
//!   off-diagonal entry gets its mirror: equal (symmetric), negated
//!   (skew-symmetric) or conjugated (hermitian); the diagonal appears once.
//!   An entry above the diagonal is an error, and so is a diagonal entry in
//!   a skew-symmetric file.
//! - `integer` values are parsed as `i64` and converted to the real type:
//!   exact up to 2^53 for `f64` and 2^24 for `f32`, rounded beyond.
//!   `pattern` entries get the value one. A `complex` file cannot be read
//!   into a real type ([`MmErrorKind::TypeMismatch`] names the fix); a real
//!   file read into a complex type gets imaginary part zero.
//! - NaN and infinities are errors (strict); overflow (`1e400`, or `1e39`
//!   into `f32`) is always an error.
//! - Coordinate files keep explicit zeros and duplicate entries in the COO
//!   result, in file order; duplicates are summed when building CSR.
//! - Array files are column-major; the COO result holds the **nonzero**
//!   values only (explicit zeros of a dense file are not entries).
//!
//! # Lenient mode
//! [`ReadOptions::lenient`] accepts the real-world deviations below, with
//! one [`Warning`] per recovery. Without it each is an error whose message
//! names the deviation and suggests `--lenient`.
//! - a banner with a single `%`, blank lines before the banner;
//! - no banner but a size line: guessed `coordinate`, field from the token
//!   count of the first entry (2/3/4 → pattern/real/complex), `general`;
//! - a commented-out size line: the first non-comment line has the wrong
//!   token count and the last comment line holds exactly three integers;
//! - data after the declared entries (reading stops after them);
//! - 0-based indices: an index 0 appears and no index equals its dimension;
//!   all indices are shifted by one;
//! - values in a pattern file, extra tokens after the values (ignored);
//! - symmetric files with entries in both triangles: an upper entry whose
//!   mirror is stored is dropped (conflicting values are reported, the
//!   lower value wins); upper entries without a stored mirror are kept;
//! - NaN/infinite values, non-integer values in an `integer` file.
//!
//! # Comments
//! [`MmMatrix::comments`] keeps the comment lines between the banner and
//! the size line, in order, each without its leading `%` (blank lines are
//! dropped); every source (mapped file, gzip, stdin) reads them through
//! the same header code. [`WriteOptions::comments`] writes them back.
//!
//! # Writing
//! [`write_coo`] and [`write_csr`] write `coordinate` files: a canonical
//! banner, the carried [`WriteOptions::comments`] (`%` + text; line breaks
//! start new lines, other control characters but tab become U+FFFD; the
//! writer's own `written by sparsetool` lines are not carried twice), the
//! writer's comment line, the size line and 1-based entries.
//!
//! Storage ([`WriteOptions::symmetry`]): with [`WriteSymmetry::Auto`] (the
//! default) a square matrix is canonicalised (sorted, duplicates summed)
//! and checked by [`symmetry_of`], in parallel, O(nnz log): if A = Aᵀ it
//! is written `symmetric`, else if A = −Aᵀ with no diagonal entry
//! `skew-symmetric`, else (complex field) if A = conj(Aᵀ) with a real
//! diagonal `hermitian` (`pattern`: symmetric structure only) — the lower
//! triangle only (strictly lower for skew-symmetric), about half the
//! entries. Structure must match too (a stored zero needs its mirror).
//! Everything else, and [`WriteSymmetry::General`], is written `general`:
//! every stored entry in stored order (COO, duplicates kept) or row by row.
//!
//! Values use the shortest representation that reads back exactly (`ryu`,
//! `f32` values through its `f32` path), so read → write → read gives the
//! same matrix (with `General`, the same entries in the same order; with
//! `Auto`, the same matrix after canonicalisation). Formatting runs in
//! parallel in blocks, written in order.
//!
//! ```
//! use sparsetool_formats::mm::{read_bytes, write_coo, ReadOptions, WriteOptions};
//! let text = b"%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 2.5\n3 1 -.5\n";
//! let m = read_bytes::<f64, i32>(text, "a.mtx", &ReadOptions::default()).unwrap();
//! assert_eq!(m.coo.nnz(), 3); // (0,0), (2,0) and its mirror (0,2)
//! assert_eq!(m.coo.rows(), &[0, 2, 0]);
//! let mut out = Vec::new();
//! write_coo(&mut out, &m.coo, &WriteOptions::default()).unwrap();
//! let back = read_bytes::<f64, i32>(&out, "b.mtx", &ReadOptions::default()).unwrap();
//! assert_eq!(back.coo, m.coo);
//! ```

mod assemble;
mod chunk;
mod entries;
mod error;
mod header;
mod parse;
mod scan;
mod stream;
mod write;

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::Path;

pub use entries::{EntryBlock, EntryStream};
pub use error::{MmError, MmErrorKind};
pub use header::{banner, check_combination, size_line, Header, MmField, MmFormat, MmSymmetry};
pub use scan::{scan_structure, StructureScan};
pub use write::{
    default_field, may_be_symmetric, symmetry_of, write_coo, write_csr, write_matrix,
    RowBlockWriter, WriteOptions, WriteSymmetry,
};

use crate::{Coo, Index, Scalar};
use header::Head;

/// Options of the reader.
#[derive(Clone, Debug)]
pub struct ReadOptions {
    /// Expand symmetric, skew-symmetric and hermitian files to the full
    /// matrix (default `true`).
    pub expand_symmetry: bool,
    /// Accept real-world deviations from the spec, with warnings (default
    /// `false`). See the module docs for the list.
    pub lenient: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self {
            expand_symmetry: true,
            lenient: false,
        }
    }
}

/// One lenient recovery: where, and what was accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// 1-based line, when the recovery concerns a line.
    pub line: Option<u64>,
    /// What was accepted and how it was read.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// A matrix read from a Matrix Market file.
#[derive(Clone, Debug)]
pub struct MmMatrix<T, I> {
    /// The header as declared (for lenient reads, as recovered).
    pub header: Header,
    /// The entries (expanded if [`ReadOptions::expand_symmetry`]).
    pub coo: Coo<T, I>,
    /// One warning per lenient recovery (empty in strict mode).
    pub warnings: Vec<Warning>,
    /// The comment lines between the banner and the size line, in order,
    /// each without its leading `%` (so `% name: x` gives ` name: x` and
    /// `%%GraphBLAS y` gives `%GraphBLAS y`); blank lines are not kept, a
    /// trailing CR is dropped, invalid UTF-8 becomes U+FFFD. Writing them
    /// back as `%` + text ([`WriteOptions::comments`]) restores the lines.
    pub comments: Vec<String>,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

fn io_err(name: &str, e: std::io::Error) -> MmError {
    MmError::new(name, None, MmErrorKind::Io(e))
}

fn gzip_err(name: &str, e: &std::io::Error) -> MmError {
    MmError::new(name, None, MmErrorKind::Gzip(e.to_string()))
}

fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// An input opened for reading.
enum Input {
    /// A regular file, memory-mapped (not gzip).
    Mapped(memmap2::Mmap),
    /// A stream (stdin, a gzip file decompressed on the fly, a file that
    /// cannot be mapped); `gz` says whether it is decompressed.
    Stream {
        reader: Box<dyn Read + Send>,
        gz: bool,
    },
}

/// Opens a path (`-` is stdin): regular files are memory-mapped unless
/// they hold gzip content (magic bytes `1f 8b`), which is decompressed as a
/// stream.
fn open_input(path: &Path, name: &str) -> Result<Input, MmError> {
    use crate::progress::Counting;
    if path == Path::new("-") {
        let (reader, gz) = stream_input(Counting(std::io::stdin()), name)?;
        return Ok(Input::Stream { reader, gz });
    }
    let file = File::open(path).map_err(|e| io_err(name, e))?;
    let meta = file.metadata().map_err(|e| io_err(name, e))?;
    if meta.is_file() && meta.len() == 0 {
        return Err(MmError::new(name, None, MmErrorKind::Empty));
    }
    if meta.is_file() {
        // SAFETY: the map is read-only and lives as long as the input.
        // Another process truncating or rewriting the file meanwhile is
        // outside Rust's model (as for every mmap reader); the parser only
        // reads bytes and checks everything it reads.
        if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
            if !map.starts_with(&GZIP_MAGIC) {
                #[cfg(unix)]
                let _ = map.advise(memmap2::Advice::Sequential);
                return Ok(Input::Mapped(map));
            }
        }
    }
    let (reader, gz) = stream_input(Counting(file), name)?;
    Ok(Input::Stream { reader, gz })
}

/// A reader as a stream, decompressing gzip content (detected by its
/// magic bytes). Returns whether it is gzip.
fn stream_input<'r>(
    mut raw: impl Read + Send + 'r,
    name: &str,
) -> Result<(Box<dyn Read + Send + 'r>, bool), MmError> {
    let mut magic = [0u8; 2];
    let n = read_up_to(&mut raw, &mut magic).map_err(|e| io_err(name, e))?;
    let r = std::io::Cursor::new(magic).take(n as u64).chain(raw);
    if n == 2 && magic == GZIP_MAGIC {
        Ok((Box::new(flate2::read::MultiGzDecoder::new(r)), true))
    } else {
        Ok((Box::new(r), false))
    }
}

/// The error of a failed read of a stream (`gz`: a decompressed one).
fn stream_err(name: &str, e: std::io::Error, gz: bool) -> MmError {
    if gz {
        gzip_err(name, &e)
    } else {
        io_err(name, e)
    }
}

/// Reads the header only (strict). Reads the head of the file (a few KB,
/// more only if the comment block is longer), decompressing only that much
/// of a `.gz`. `-` reads the head of stdin (which is then consumed).
///
/// # Errors
/// Any header error, with its line number; I/O and gzip errors.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let p = dir.path().join("a.mtx");
/// std::fs::write(&p, "%%MatrixMarket matrix coordinate pattern symmetric\n% c\n5 5 3\n1 1\n").unwrap();
/// let h = sparsetool_formats::mm::read_header_path(&p).unwrap();
/// assert_eq!((h.nrows, h.entries, h.data_line, h.nnz_expanded_max()), (5, 3, 4, 6));
/// ```
pub fn read_header_path(path: &Path) -> Result<Header, MmError> {
    read_header_path_with(path, &ReadOptions::default()).map(|(h, _)| h)
}

/// Like [`read_header_path`], with lenient recoveries when
/// `opts.lenient`; returns their warnings too.
///
/// # Errors
/// As [`read_header_path`].
pub fn read_header_path_with(
    path: &Path,
    opts: &ReadOptions,
) -> Result<(Header, Vec<Warning>), MmError> {
    let name = display_name(path);
    match open_input(path, &name)? {
        Input::Mapped(map) => head_of(&map, &name, opts),
        Input::Stream { reader, gz } => {
            read_header_from(reader, gz, &name, opts).map(|(h, w, _)| (h, w))
        }
    }
}

/// Reads the header from the start of any reader (gzip content is
/// detected by its magic bytes and decompressed as far as the header
/// needs), with lenient recoveries when `opts.lenient`. Reads only the
/// head of the stream (a few KB unless the comment block is longer).
///
/// # Errors
/// As [`read_header_path`].
pub fn read_header_reader_with(
    r: &mut (dyn Read + Send),
    name: &str,
    opts: &ReadOptions,
) -> Result<(Header, Vec<Warning>), MmError> {
    let (reader, gz) = stream_input(r, name)?;
    read_header_from(reader, gz, name, opts).map(|(h, w, _)| (h, w))
}

/// Reads the header of a file held in memory (strict; gzip content is
/// decompressed only as far as the header needs).
///
/// # Errors
/// As [`read_header_path`].
pub fn read_header_bytes(bytes: &[u8], name: &str) -> Result<Header, MmError> {
    read_header_bytes_with(bytes, name, &ReadOptions::default()).map(|(h, _)| h)
}

/// Like [`read_header_bytes`], with lenient recoveries when `opts.lenient`.
///
/// # Errors
/// As [`read_header_path`].
pub fn read_header_bytes_with(
    bytes: &[u8],
    name: &str,
    opts: &ReadOptions,
) -> Result<(Header, Vec<Warning>), MmError> {
    let (h, w, _) = if bytes.starts_with(&GZIP_MAGIC) {
        read_header_from(flate2::read::MultiGzDecoder::new(bytes), true, name, opts)?
    } else {
        read_header_from(bytes, false, name, opts)?
    };
    Ok((h, w))
}

/// The most bytes the banner and comment lines before the size line may
/// take in a stream.
const MAX_HEADER: usize = 64 << 20;

/// Reads a growing head of `r` until the header parses. Returns the head
/// read too (`r` is left just after it).
fn read_header_from(
    mut r: impl Read,
    gz: bool,
    name: &str,
    opts: &ReadOptions,
) -> Result<(Header, Vec<Warning>, Vec<u8>), MmError> {
    let mut buf = Vec::new();
    let mut want = 16 * 1024;
    let mut eof = false;
    loop {
        if !eof {
            let need = (want - buf.len()) as u64;
            r.by_ref()
                .take(need)
                .read_to_end(&mut buf)
                .map_err(|e| stream_err(name, e, gz))?;
            eof = buf.len() < want;
        }
        match header::parse_head(&buf, eof, opts.lenient) {
            Ok(Head::Done(h, w)) => return Ok((h, w, buf)),
            Ok(Head::Incomplete) if !eof => {
                // Bounded memory on endless input (`/dev/zero`, a stream
                // of comments): a line or a header no file has.
                let tail = memchr::memrchr(b'\n', &buf).map_or(buf.len(), |k| buf.len() - k - 1);
                if tail > scan::MAX_LINE {
                    let line = bytecount::count(&buf, b'\n') as u64 + 1;
                    let kind = MmErrorKind::LineTooLong {
                        limit: scan::MAX_LINE,
                    };
                    return Err(MmError::new(name, Some(line), kind));
                }
                if buf.len() >= MAX_HEADER {
                    let what = format!(
                        "no size line in the first {} (banner and comment lines only)",
                        crate::alloc::human_bytes(MAX_HEADER as u128)
                    );
                    return Err(MmError::new(
                        name,
                        None,
                        MmErrorKind::NotMatrixMarket { what },
                    ));
                }
                want *= 2;
            }
            Ok(Head::Incomplete) => {
                return Err(MmError::new(name, None, MmErrorKind::Empty));
            }
            Err((line, kind)) => return Err(MmError::new(name, line, kind)),
        }
    }
}

/// Reads a Matrix Market file. `-` means stdin. Plain files are
/// memory-mapped and parsed in parallel chunks; gzip content (detected by
/// its magic bytes, not the extension), stdin and pipes are streamed:
/// decompressed and parsed block by block, in memory that follows the
/// entries found, not the declared size.
///
/// # Errors
/// Every problem as an [`MmError`] naming the file and, for problems on a
/// line, the 1-based line number.
pub fn read_path<T: Scalar, I: Index>(
    path: &Path,
    opts: &ReadOptions,
) -> Result<MmMatrix<T, I>, MmError> {
    let name = display_name(path);
    match open_input(path, &name)? {
        Input::Mapped(map) => read_plain(&map, &name, opts),
        Input::Stream { reader, gz } => read_stream(reader, gz, &name, opts),
    }
}

/// Reads a stream (already past its gzip detection): the header, then the
/// data block by block.
fn read_stream<'r, T: Scalar, I: Index>(
    mut reader: Box<dyn Read + Send + 'r>,
    gz: bool,
    name: &str,
    opts: &ReadOptions,
) -> Result<MmMatrix<T, I>, MmError> {
    let (header, warnings, head) = read_header_from(&mut reader, gz, name, opts)?;
    let comments = header::comment_lines(&head[..header.data_offset.min(head.len())]);
    let src = assemble::Source::Stream(stream::Data {
        head,
        rest: reader,
        gz,
    });
    read_source(src, (header, warnings, comments), name, opts)
}

/// Reads until `buf` is full or the input ends (retrying interrupted
/// reads); returns the bytes read.
///
/// # Errors
/// The read errors of `r` (interruptions are retried).
pub fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
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

/// Reads a Matrix Market file held in memory (gzip content is
/// decompressed as a stream). `name` is used in messages.
///
/// # Errors
/// As [`read_path`].
pub fn read_bytes<T: Scalar, I: Index>(
    bytes: &[u8],
    name: &str,
    opts: &ReadOptions,
) -> Result<MmMatrix<T, I>, MmError> {
    if bytes.starts_with(&GZIP_MAGIC) {
        let reader = Box::new(flate2::read::MultiGzDecoder::new(bytes));
        return read_stream(reader, true, name, opts);
    }
    read_plain(bytes, name, opts)
}

/// Reads from any reader as a stream (gzip content is detected by its
/// magic bytes and decompressed), in memory that follows the entries
/// found.
///
/// # Errors
/// As [`read_path`].
pub fn read_reader<R: Read + Send, T: Scalar, I: Index>(
    r: R,
    name: &str,
    opts: &ReadOptions,
) -> Result<MmMatrix<T, I>, MmError> {
    let (reader, gz) = stream_input(r, name)?;
    read_stream(reader, gz, name, opts)
}

/// The header of a whole (uncompressed) file held in memory.
fn head_of(
    bytes: &[u8],
    name: &str,
    opts: &ReadOptions,
) -> Result<(Header, Vec<Warning>), MmError> {
    match header::parse_head(bytes, true, opts.lenient) {
        Ok(Head::Done(h, w)) => Ok((h, w)),
        Ok(Head::Incomplete) => Err(MmError::new(name, None, MmErrorKind::Empty)),
        Err((line, kind)) => Err(MmError::new(name, line, kind)),
    }
}

fn read_plain<T: Scalar, I: Index>(
    bytes: &[u8],
    name: &str,
    opts: &ReadOptions,
) -> Result<MmMatrix<T, I>, MmError> {
    let (header, warnings) = head_of(bytes, name, opts)?;
    let comments = header::comment_lines(&bytes[..header.data_offset.min(bytes.len())]);
    read_source(
        assemble::Source::Memory(bytes),
        (header, warnings, comments),
        name,
        opts,
    )
}

/// Refuses to read a complex file into a real type.
pub(crate) fn value_type_fits<T: Scalar>(header: &Header, name: &str) -> Result<(), MmError> {
    if header.field == MmField::Complex && !T::IS_COMPLEX {
        return Err(MmError::new(
            name,
            None,
            MmErrorKind::TypeMismatch {
                detail: format!(
                    "the file holds complex values but the value type {} is real; read it into a complex type (c64/c128, i.e. Complex32/Complex64)",
                    T::NAME
                ),
            },
        ));
    }
    Ok(())
}

/// The data of a file whose header is read.
fn read_source<T: Scalar, I: Index>(
    src: assemble::Source<'_>,
    (header, mut warnings, comments): (Header, Vec<Warning>, Vec<String>),
    name: &str,
    opts: &ReadOptions,
) -> Result<MmMatrix<T, I>, MmError> {
    value_type_fits::<T>(&header, name)?;
    let coo = assemble::read_data::<T, I>(src, &header, opts, &mut warnings)
        .map_err(|(line, kind)| MmError::new(name, line, kind))?;
    Ok(MmMatrix {
        header,
        coo,
        warnings,
        comments,
    })
}
