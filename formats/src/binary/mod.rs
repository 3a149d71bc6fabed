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

pub use crate::MatrixRef;
pub use header::{
    align_up, format_code, section_checksum, DType, Header, Section, ALIGN, CHECKSUM_BLOCK,
    ENDIAN_MARKER, ENTRY_SIZE, HEADER_SIZE, MAGIC, VERSION_MAJOR, VERSION_MINOR,
};
pub use matrix::{write_spb, CsrView, SpbMatrix};
pub use read::{SpbFile, SpbOptions};
pub use write::{write_sections, HeaderFields, SectionData};

use std::fmt;

/// An error reading or writing a `.spb` file: the file, the byte offset, and
/// what is wrong.
#[derive(Debug)]
pub struct SpbError {
    file: Option<String>,
    offset: Option<u64>,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl SpbError {
    /// An error at a byte offset.
    pub fn at(offset: u64, message: impl Into<String>) -> Self {
        Self {
            file: None,
            offset: Some(offset),
            message: message.into(),
            source: None,
        }
    }
    /// An error without a position.
    pub fn msg(message: impl Into<String>) -> Self {
        Self {
            file: None,
            offset: None,
            message: message.into(),
            source: None,
        }
    }
    /// Attaches the file name (kept if already set).
    #[must_use]
    pub fn named(mut self, file: &str) -> Self {
        if self.file.is_none() {
            self.file = Some(file.to_string());
        }
        self
    }
    /// The byte offset, if known.
    #[must_use]
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }
    /// The message without file and offset.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SpbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        if let Some(o) = self.offset {
            write!(f, "offset {o}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for SpbError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<std::io::Error> for SpbError {
    fn from(e: std::io::Error) -> Self {
        Self {
            file: None,
            offset: None,
            message: e.to_string(),
            source: Some(Box::new(e)),
        }
    }
}

impl From<crate::FormatError> for SpbError {
    fn from(e: crate::FormatError) -> Self {
        Self {
            file: None,
            offset: None,
            message: format!("invalid matrix: {e}"),
            source: Some(Box::new(e)),
        }
    }
}
