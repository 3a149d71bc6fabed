//! Errors of `.npz` reading and writing.

use std::fmt;

use crate::values::{escape, BadValue};
use crate::FormatError;

/// What went wrong while reading or writing an `.npz` archive.
#[derive(Debug)]
#[non_exhaustive]
pub enum NpzErrorKind {
    /// An I/O error (opening, reading or writing the file).
    Io(std::io::Error),
    /// The file is not a zip archive, or the archive is damaged.
    NotZip(String),
    /// An array the format needs is not in the archive.
    MissingArray,
    /// An entry does not start with a valid `.npy` header.
    BadHeader(String),
    /// The array's dtype is not one this reader accepts here.
    WrongDtype {
        /// The dtype found in the file.
        found: String,
        /// What was expected, in words.
        expected: String,
    },
    /// The array has an unexpected number of dimensions or shape.
    WrongShape(String),
    /// The array is big-endian; only little-endian data is read.
    BigEndian(String),
    /// The array is stored in Fortran (column-major) order with more than
    /// one dimension.
    FortranOrder,
    /// The entry holds fewer bytes than its header declares.
    Truncated {
        /// Bytes the header declares.
        declared: u64,
        /// Bytes available in the entry.
        available: u64,
    },
    /// A value does not fit the requested integer type.
    OutOfRange(String),
    /// The `format` tag names a format this reader does not handle.
    UnsupportedFormat(String),
    /// A name or argument is invalid (e.g. an array name with a `/`).
    InvalidArgument(String),
    /// The arrays do not form a valid matrix.
    Format(FormatError),
    /// An array could not be allocated (its declared size exceeds memory).
    Alloc(Box<crate::alloc::AllocError>),
    /// A value array holds a value the validity rule refuses (NaN or an
    /// infinity in strict mode, an overflow of the value type in both):
    /// see [`crate::values`].
    BadValue(BadValue),
}

/// An error reading or writing an `.npz` archive. It names the file (when
/// known), the array (when one is concerned) and what is wrong.
#[derive(Debug)]
pub struct NpzError {
    file: Option<String>,
    array: Option<String>,
    kind: NpzErrorKind,
}

impl NpzError {
    /// Builds an error from its parts.
    #[must_use]
    pub fn new(file: Option<&str>, array: Option<&str>, kind: NpzErrorKind) -> Self {
        Self {
            file: file.map(str::to_string),
            array: array.map(str::to_string),
            kind,
        }
    }

    /// The file (or the name given to [`super::NpzArchive::from_bytes`]).
    #[must_use]
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }

    /// The array concerned, without the `.npy` suffix.
    #[must_use]
    pub fn array(&self) -> Option<&str> {
        self.array.as_deref()
    }

    /// What went wrong.
    #[must_use]
    pub fn kind(&self) -> &NpzErrorKind {
        &self.kind
    }

    /// Consumes the error, returning its kind.
    #[must_use]
    pub fn into_kind(self) -> NpzErrorKind {
        self.kind
    }

    /// Sets the file name if none is set yet.
    #[must_use]
    pub fn with_file(mut self, file: &str) -> Self {
        crate::error::set_once(&mut self.file, file);
        self
    }

    /// Sets the array name if none is set yet.
    #[must_use]
    pub fn with_array(mut self, array: &str) -> Self {
        crate::error::set_once(&mut self.array, array);
        self
    }
}

impl fmt::Display for NpzErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NpzErrorKind::Io(e) => write!(f, "i/o error: {e}"),
            NpzErrorKind::Alloc(e) => e.fmt(f),
            NpzErrorKind::NotZip(d) => {
                write!(f, "not a valid .npz (zip) archive: {}", escape(d))
            }
            NpzErrorKind::MissingArray => f.write_str("is missing from the archive"),
            NpzErrorKind::BadHeader(d) => write!(f, "has a bad .npy header: {}", escape(d)),
            NpzErrorKind::WrongDtype { found, expected } => {
                let name = super::read::dtype_name(found);
                if name == *found {
                    write!(f, "has dtype `{}`, expected {expected}", escape(found))
                } else {
                    write!(f, "has dtype {name} (`{found}`), expected {expected}")
                }
            }
            NpzErrorKind::WrongShape(d) => write!(f, "has the wrong shape: {d}"),
            NpzErrorKind::BigEndian(d) => {
                write!(
                    f,
                    "is big-endian (`{}`); only little-endian arrays are supported",
                    escape(d)
                )
            }
            NpzErrorKind::FortranOrder => f.write_str(
                "is stored in fortran order with more than one dimension, which is not supported",
            ),
            NpzErrorKind::Truncated {
                declared,
                available,
            } => write!(
                f,
                "is truncated: its header declares {declared} bytes but the entry holds {available}"
            ),
            NpzErrorKind::OutOfRange(d) => write!(f, "holds a value out of range: {d}"),
            NpzErrorKind::UnsupportedFormat(t) => write!(
                f,
                "holds `{t}`: format {t} is not supported (supported formats: {})",
                super::supported_tags().join(", "),
                t = escape(t)
            ),
            NpzErrorKind::InvalidArgument(d) => write!(f, "invalid argument: {d}"),
            NpzErrorKind::Format(e) => write!(f, "does not form a valid matrix: {e}"),
            NpzErrorKind::BadValue(b) => write!(f, "{b}"),
        }
    }
}

impl fmt::Display for NpzError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}: ", escape(file))?;
        }
        match (&self.array, &self.kind) {
            (Some(a), _) => write!(f, "array `{}` {}", escape(a), self.kind),
            (
                None,
                NpzErrorKind::Io(_) | NpzErrorKind::NotZip(_) | NpzErrorKind::InvalidArgument(_),
            ) => {
                write!(f, "{}", self.kind)
            }
            (None, kind) => write!(f, "the archive {kind}"),
        }
    }
}

// The message already includes the inner error's text (I/O, broken
// invariant), so `source()` is `None`: a report that prints the chain would
// otherwise say it twice.
impl std::error::Error for NpzError {}

impl From<FormatError> for NpzError {
    fn from(e: FormatError) -> Self {
        Self {
            file: None,
            array: None,
            kind: NpzErrorKind::Format(e),
        }
    }
}

impl From<std::io::Error> for NpzError {
    fn from(e: std::io::Error) -> Self {
        Self {
            file: None,
            array: None,
            kind: NpzErrorKind::Io(e),
        }
    }
}

impl From<zip::result::ZipError> for NpzError {
    fn from(e: zip::result::ZipError) -> Self {
        let kind = match e {
            zip::result::ZipError::Io(io) => NpzErrorKind::Io(io),
            zip::result::ZipError::FileNotFound => NpzErrorKind::MissingArray,
            other => NpzErrorKind::NotZip(other.to_string()),
        };
        Self {
            file: None,
            array: None,
            kind,
        }
    }
}
