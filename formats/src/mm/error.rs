//! Errors of the Matrix Market reader and writer.
//!
//! [`MmError`] carries the file name, the 1-based line number (when the
//! problem sits on a line) and an [`MmErrorKind`]. Its `Display` is
//! `PATH:LINE: message` (or `PATH: message`), the form compilers use, so
//! editors can jump to the line. Messages are lowercase sentences that say
//! what was expected; for real-world quirks that `--lenient` can recover
//! from, they say so.

use std::fmt;

use thiserror::Error;

/// What went wrong while reading or writing a Matrix Market file.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum MmErrorKind {
    /// The file could not be opened, read, mapped or written.
    #[error("{0}")]
    Io(std::io::Error),
    /// A gzip stream is corrupt or ends early.
    #[error("gzip data is corrupt or truncated: {0}")]
    Gzip(String),
    /// The file is empty.
    #[error("the file is empty (expected a `%%MatrixMarket matrix ...` banner)")]
    Empty,
    /// The file is something else: binary data, a Git-LFS pointer, an npz
    /// archive, ... `what` names it and says what to do.
    #[error("not a Matrix Market file: {what}")]
    NotMatrixMarket {
        /// What the content looks like (and the fix).
        what: String,
    },
    /// The first line is not a `%%MatrixMarket matrix F F S` banner.
    #[error("invalid banner: expected `%%MatrixMarket matrix <format> <field> <symmetry>`, found `{found}`")]
    InvalidBanner {
        /// The line found (shortened).
        found: String,
    },
    /// A UTF-8 byte-order mark precedes the banner.
    #[error("the file starts with a UTF-8 byte-order mark (BOM) before the banner; use --lenient to ignore it")]
    ByteOrderMark,
    /// The banner starts with a single `%` (a Network Repository quirk).
    #[error("the banner starts with a single `%` (`{found}`), expected `%%MatrixMarket`; use --lenient to accept it")]
    SinglePercentBanner {
        /// The line found (shortened).
        found: String,
    },
    /// There is no banner, but the file starts with what looks like a size
    /// line.
    #[error("missing `%%MatrixMarket` banner (the file starts with `{found}`, which looks like a size line); use --lenient to guess the header")]
    MissingBanner {
        /// The first line (shortened).
        found: String,
    },
    /// A banner keyword is not one the spec knows.
    #[error("unknown {what} `{found}` in the banner (expected one of {expected})")]
    UnknownKeyword {
        /// Which keyword: `object`, `format`, `field` or `symmetry`.
        what: &'static str,
        /// The word found.
        found: String,
        /// The accepted words.
        expected: &'static str,
    },
    /// A legal keyword in an illegal combination (e.g. pattern hermitian).
    #[error("illegal combination in the banner: {detail}")]
    IllegalCombination {
        /// Which combination and why.
        detail: String,
    },
    /// The size line is malformed.
    #[error("invalid size line: expected {expected}, found `{found}`")]
    SizeLine {
        /// What a size line of this format holds.
        expected: &'static str,
        /// The line found (shortened).
        found: String,
    },
    /// The size line looks commented out: the first non-comment line has
    /// the wrong token count while the last comment holds `M N NNZ`.
    #[error("the size line looks commented out (`{comment}`; the first non-comment line `{found}` is not `M N NNZ`); use --lenient to use it")]
    CommentedSizeLine {
        /// The comment line holding three integers.
        comment: String,
        /// The first non-comment line.
        found: String,
    },
    /// A symmetric, skew-symmetric or hermitian matrix is not square.
    #[error("a {symmetry} matrix must be square, the size line says {nrows} x {ncols}")]
    NonSquare {
        /// The symmetry keyword.
        symmetry: &'static str,
        /// Rows.
        nrows: usize,
        /// Columns.
        ncols: usize,
    },
    /// The declared size needs more memory than the file could describe
    /// (refused before allocating).
    #[error("the size line declares {what} = {declared}, but the remaining {available} bytes can hold at most {max}")]
    DeclaredTooLarge {
        /// What was declared.
        what: &'static str,
        /// The declared count.
        declared: u128,
        /// Bytes left in the file after the size line.
        available: usize,
        /// The most that fits in those bytes.
        max: usize,
    },
    /// A dimension or count does not fit the index type.
    #[error("{what} = {value} does not fit in index type {index}; use a 64-bit index type")]
    IndexOverflow {
        /// What overflowed.
        what: &'static str,
        /// Its value.
        value: u128,
        /// The index type.
        index: &'static str,
    },
    /// The file ends before the declared number of entries.
    #[error("the file ends after {found} of the {declared} entries declared on the size line")]
    TooFewEntries {
        /// Entries declared on the size line.
        declared: usize,
        /// Entries found.
        found: usize,
    },
    /// Data continues after the declared entries.
    #[error("more data after the {declared} entries declared on the size line (`{found}`); fix the size line, or use --lenient to ignore everything after the declared entries")]
    TooManyEntries {
        /// Entries declared on the size line.
        declared: usize,
        /// The first line beyond them (shortened).
        found: String,
    },
    /// A row or column index is larger than the dimension.
    #[error("{which} index {index} is out of range (expected 1..={max})")]
    IndexOutOfRange {
        /// `row` or `column`.
        which: &'static str,
        /// The index as written (1-based).
        index: u64,
        /// The dimension.
        max: usize,
    },
    /// A row or column index is 0 in a file that is not 0-based as a whole
    /// (some other index equals the dimension).
    #[error("{which} index 0 is invalid: Matrix Market indices are 1-based")]
    ZeroIndex {
        /// `row` or `column`.
        which: &'static str,
    },
    /// The indices look 0-based: an index 0 appears and no index equals
    /// its dimension.
    #[error("indices look 0-based (index 0 found, none equals the size); use --lenient to shift them by one")]
    ZeroBased,
    /// A token is not a number of the expected kind.
    #[error("expected {expected}, found `{found}`")]
    BadNumber {
        /// What was expected (e.g. `a row index`, `a real value`).
        expected: &'static str,
        /// The token found (shortened).
        found: String,
    },
    /// A value is NaN or infinite.
    #[error("non-finite value `{found}`; use --lenient to accept NaN and infinities")]
    NonFinite {
        /// The token.
        found: String,
    },
    /// A value overflows the value type (e.g. `1e400`, or `1e39` into f32).
    #[error("value `{found}` is out of range for {ty}")]
    ValueOutOfRange {
        /// The token.
        found: String,
        /// The type it should fit (`f32`, `f64`, `i64`).
        ty: &'static str,
    },
    /// The file's field does not fit the requested value type, or a value
    /// does not fit the field being written.
    #[error("type mismatch: {detail}")]
    TypeMismatch {
        /// What and the fix.
        detail: String,
    },
    /// A line lacks a value the field requires.
    #[error("missing {expected} (a {field} entry is `{layout}`)")]
    MissingValue {
        /// What is missing.
        expected: &'static str,
        /// The field keyword.
        field: &'static str,
        /// The expected line layout.
        layout: &'static str,
    },
    /// A line holds more tokens than its field allows (e.g. a pattern file
    /// with values).
    #[error("unexpected token `{found}` (a {field} entry is `{layout}`){hint}")]
    UnexpectedValue {
        /// The first extra token.
        found: String,
        /// The field keyword.
        field: &'static str,
        /// The expected line layout.
        layout: &'static str,
        /// `; use --lenient ...` where lenient mode recovers.
        hint: &'static str,
    },
    /// An entry of a symmetric/skew/hermitian file lies above the diagonal.
    #[error("entry ({row},{col}) above the diagonal in a {symmetry} file (only the lower triangle may be stored); use --lenient to accept files that store both triangles")]
    NotLowerTriangle {
        /// 1-based row.
        row: u64,
        /// 1-based column.
        col: u64,
        /// The symmetry keyword.
        symmetry: &'static str,
    },
    /// A skew-symmetric file stores a diagonal entry.
    #[error("diagonal entry ({row},{row}) in a skew-symmetric file (its diagonal is zero and not stored)")]
    SkewDiagonal {
        /// 1-based row.
        row: u64,
    },
    /// A diagonal entry of a hermitian file has a non-zero imaginary part
    /// (the diagonal of a hermitian matrix is real).
    #[error("diagonal entry ({row},{row}) of a hermitian file has imaginary part {im}, but the diagonal of a hermitian matrix is real; use --lenient to keep it as stored")]
    NonRealDiagonal {
        /// 1-based row (as written).
        row: u64,
        /// The imaginary part.
        im: String,
    },
    /// The matrix built from the file broke a format invariant (a bug:
    /// every index is checked while parsing).
    #[error("invalid matrix: {0}")]
    Format(#[from] crate::FormatError),
    /// The structure scan ([`super::StructureScan`]) cannot give the
    /// entries of this file without its values, or without holding all
    /// its entries: read the whole matrix instead (e.g. with
    /// [`super::read_path`]).
    #[error("the structure scan cannot handle {reason}; read the whole matrix instead")]
    ScanUnsupported {
        /// What the scan cannot handle.
        reason: &'static str,
    },
    /// A buffer sized from the file could not be allocated.
    #[error("{0}")]
    Alloc(#[from] crate::alloc::AllocError),
    /// A line is longer than any Matrix Market line can be (the input is
    /// not text, e.g. `/dev/zero`).
    #[error("a line longer than {} without a line break: not a Matrix Market file", crate::alloc::human_bytes(*limit as u128))]
    LineTooLong {
        /// The limit, in bytes.
        limit: usize,
    },
    /// A value cannot be written in the requested field (e.g. `1.5` as
    /// integer).
    #[error("cannot write {detail}")]
    NotRepresentable {
        /// The value and field.
        detail: String,
    },
}

/// A Matrix Market error: the file, the 1-based line (if any) and the kind.
///
/// ```
/// use sparsetool_formats::mm::{read_bytes, MmErrorKind, ReadOptions};
/// let text = b"%%MatrixMarket matrix coordinate real general\n2 2 2\n0 1 1.0\n1 2 2.0\n";
/// let err = read_bytes::<f64, i32>(text, "a.mtx", &ReadOptions::default()).unwrap_err();
/// assert_eq!(err.line(), Some(3));
/// assert!(matches!(err.kind(), MmErrorKind::ZeroIndex { .. }));
/// assert!(err.to_string().starts_with("a.mtx:3: "));
/// ```
#[derive(Debug)]
pub struct MmError {
    inner: Box<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: String,
    line: Option<u64>,
    kind: MmErrorKind,
}

impl MmError {
    /// Builds an error.
    #[must_use]
    pub fn new(path: impl Into<String>, line: Option<u64>, kind: MmErrorKind) -> Self {
        Self {
            inner: Box::new(Inner {
                path: path.into(),
                line,
                kind,
            }),
        }
    }
    /// The file name as given by the caller (`-` / `<stdin>` for stdin).
    #[must_use]
    pub fn path(&self) -> &str {
        &self.inner.path
    }
    /// The 1-based line number, when the problem is on a line.
    #[must_use]
    pub fn line(&self) -> Option<u64> {
        self.inner.line
    }
    /// What went wrong.
    #[must_use]
    pub fn kind(&self) -> &MmErrorKind {
        &self.inner.kind
    }
    /// Consumes the error, returning its kind.
    #[must_use]
    pub fn into_kind(self) -> MmErrorKind {
        self.inner.kind
    }
    /// Replaces the file name (e.g. for errors raised by the writer).
    #[must_use]
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.inner.path = path.into();
        self
    }
}

impl fmt::Display for MmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        let path = crate::values::escape(&i.path);
        match (i.path.is_empty(), i.line) {
            (false, Some(l)) => write!(f, "{path}:{l}: {}", i.kind),
            (false, None) => write!(f, "{path}: {}", i.kind),
            (true, Some(l)) => write!(f, "line {}: {}", l, i.kind),
            (true, None) => write!(f, "{}", i.kind),
        }
    }
}

// The message already includes the I/O error's text, so `source()` is
// `None`: a report that prints the chain would otherwise say it twice.
impl std::error::Error for MmError {}

/// An error positioned on a line but not yet tied to a file name.
pub(crate) type LineError = (Option<u64>, MmErrorKind);

/// Shortens a line or token for a message (at most 60 characters, lossy
/// UTF-8) and escapes its control characters (`\x1b`, `\0`, ...), so that
/// quoted input cannot act on the terminal or break the message's line.
pub(crate) fn snippet(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim_matches(|c: char| c.is_whitespace());
    let mut out: String = s.chars().take(60).collect();
    out = crate::values::escape(&out).into_owned();
    if s.chars().count() > 60 {
        out.push_str("...");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_forms() {
        let e = MmError::new("a.mtx", Some(3), MmErrorKind::ZeroBased);
        assert!(e.to_string().starts_with("a.mtx:3: indices look 0-based"));
        let e = MmError::new("a.mtx", None, MmErrorKind::Empty);
        assert!(e.to_string().starts_with("a.mtx: the file is empty"));
        assert_eq!(snippet(b"  abc \r"), "abc");
        assert_eq!(snippet(&[b'x'; 100]).len(), 63);
        assert_eq!(snippet(b"1 1 \x1b[2J\0"), "1 1 \\x1b[2J\\0");
        let e = MmError::new("a\nb.mtx", Some(1), MmErrorKind::Empty);
        assert!(e.to_string().starts_with("a\\nb.mtx:1: "), "{e}");
    }
}
