//! The `.spb` binary layout: a fixed little-endian header, a section table,
//! and 64-byte aligned sections that can be memory-mapped or copied to a GPU
//! as they are. `docs/binary-layout.md` in the repository is the normative
//! description; this module implements it.
//!
//! Writing streams every array once from its memory ([`write_sections`]);
//! reading memory-maps the file and validates header, table, bounds and
//! checksums ([`SpbFile::open`]) before any typed slice is handed out. The
//! format-level checks (index bounds, monotone pointers, permutations) run in
//! [`SpbFile::to_matrix`] through every format's `try_from_parts`, or
//! without copying in [`SpbFile::csr_view`].

mod header;
mod matrix;
mod read;
mod write;

pub use header::{
    align_up, format_code, section_checksum, DType, Header, Section, ALIGN, CHECKSUM_BLOCK,
    ENDIAN_MARKER, ENTRY_SIZE, HEADER_SIZE, MAGIC, VERSION_MAJOR, VERSION_MINOR,
};
pub use matrix::{write_spb, CsrView};
pub use read::{SpbFile, SpbOptions};
pub use write::{write_sections, HeaderFields, Layout, SectionData, SectionHasher, SectionSpec};

use std::fmt;

/// What is wrong with a `.spb` file. Every message says what was found and,
/// where it helps, what was expected.
#[derive(Debug)]
#[non_exhaustive]
pub enum SpbErrorKind {
    /// The file could not be opened, mapped, read or written.
    Io(std::io::Error),
    /// The bytes are not a `.spb` file (magic missing, text-mode transfer).
    NotSpb(String),
    /// The file ends before something its header or table declares.
    Truncated(String),
    /// A header field is invalid (version, endianness, sizes, codes).
    Header(String),
    /// A checksum does not match: the header, the table or a section is corrupt.
    Checksum(String),
    /// The section table is inconsistent (names, dtypes, offsets, lengths,
    /// overlaps, a missing or repeated section).
    Section(String),
    /// The file's value or index type cannot be read as the type asked for.
    Types(String),
    /// The header disagrees with the arrays (entry count, parameters).
    Mismatch(String),
    /// The arrays do not form a valid matrix.
    Invalid(crate::FormatError),
    /// This machine or these types cannot be written as `.spb`.
    Unsupported(String),
    /// A value section holds a value the validity rule refuses (NaN or an
    /// infinity in strict mode, an overflow of the value type in both):
    /// see [`crate::values`].
    BadValue {
        /// The section, e.g. `values`.
        section: String,
        /// The first bad value.
        bad: crate::values::BadValue,
    },
}

impl fmt::Display for SpbErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpbErrorKind::Io(e) => write!(f, "{e}"),
            SpbErrorKind::Invalid(e) => write!(f, "invalid matrix: {e}"),
            SpbErrorKind::BadValue { section, bad } => write!(f, "section `{section}` {bad}"),
            SpbErrorKind::NotSpb(m)
            | SpbErrorKind::Truncated(m)
            | SpbErrorKind::Header(m)
            | SpbErrorKind::Checksum(m)
            | SpbErrorKind::Section(m)
            | SpbErrorKind::Types(m)
            | SpbErrorKind::Mismatch(m)
            | SpbErrorKind::Unsupported(m) => f.write_str(m),
        }
    }
}

/// An error reading or writing a `.spb` file: the file, the byte offset (when
/// the problem sits at one) and what is wrong ([`SpbErrorKind`]). Displayed
/// as `FILE: offset N: message`.
#[derive(Debug)]
pub struct SpbError {
    file: Option<String>,
    offset: Option<u64>,
    kind: SpbErrorKind,
}

impl SpbError {
    /// An error at a byte offset.
    #[must_use]
    pub fn at(offset: u64, kind: SpbErrorKind) -> Self {
        Self {
            file: None,
            offset: Some(offset),
            kind,
        }
    }
    /// An error without a position.
    #[must_use]
    pub fn new(kind: SpbErrorKind) -> Self {
        Self {
            file: None,
            offset: None,
            kind,
        }
    }
    /// Attaches the file name (kept if already set).
    #[must_use]
    pub fn named(mut self, file: &str) -> Self {
        crate::error::set_once(&mut self.file, file);
        self
    }
    /// The file name, if known.
    #[must_use]
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }
    /// The byte offset, if known.
    #[must_use]
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }
    /// What went wrong.
    #[must_use]
    pub fn kind(&self) -> &SpbErrorKind {
        &self.kind
    }
    /// Consumes the error, returning its kind.
    #[must_use]
    pub fn into_kind(self) -> SpbErrorKind {
        self.kind
    }
}

impl fmt::Display for SpbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", crate::values::escape(file))?;
        }
        if let Some(o) = self.offset {
            write!(f, "offset {o}: ")?;
        }
        write!(f, "{}", self.kind)
    }
}

// The message already includes the inner error's text, so `source()` is
// `None`: a report that prints the chain would otherwise say it twice.
impl std::error::Error for SpbError {}

impl From<std::io::Error> for SpbError {
    fn from(e: std::io::Error) -> Self {
        Self::new(SpbErrorKind::Io(e))
    }
}

impl From<crate::FormatError> for SpbError {
    fn from(e: crate::FormatError) -> Self {
        Self::new(SpbErrorKind::Invalid(e))
    }
}
