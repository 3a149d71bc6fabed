//! Errors of the analysis.

use sparsetool_formats::mm::{MmError, MmErrorKind};
use thiserror::Error;

/// What can go wrong while gathering row lengths or building a report.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum AnalyzeError {
    /// The Matrix Market file is invalid (the message names the file and,
    /// for problems on a line, the line).
    #[error(transparent)]
    Mm(#[from] MmError),
    /// The streaming pass does not handle this input; read the whole
    /// matrix and analyse it with [`crate::RowLengths::from_csr`].
    #[error("{path}: {reason}; the whole matrix must be read instead")]
    NeedsFullRead {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// Raw structure arrays are inconsistent (bad lengths, indices out of
    /// range).
    #[error("invalid structure: {0}")]
    BadStructure(String),
    /// A row or column holds more entries than a 32-bit counter can count.
    #[error("a {what} of {count} does not fit a 32-bit counter")]
    CountOverflow {
        /// `row length` or `column length`.
        what: &'static str,
        /// The count reached.
        count: u64,
    },
    /// A buffer sized from the input could not be allocated.
    #[error(transparent)]
    Alloc(#[from] sparsetool_formats::alloc::AllocError),
    /// A device profile (see [`crate::profile`]) that cannot be used.
    #[error("{path}: {message}")]
    Profile {
        /// The file, or the name asked for.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A value or index byte size the accounting does not know.
    #[error("unsupported {what} size {bytes} bytes (expected {expected})")]
    BadSize {
        /// `value` or `index`.
        what: &'static str,
        /// The size given.
        bytes: usize,
        /// The accepted sizes.
        expected: &'static str,
    },
}

impl AnalyzeError {
    /// Whether the caller should read the whole matrix (with the full
    /// reader, lenient or not) and analyse it with
    /// [`crate::RowLengths::from_csr`] instead: the streaming pass does not
    /// handle the input, or the file has a quirk that `--lenient` recovers
    /// from.
    ///
    /// ```
    /// use sparsetool_analyze::AnalyzeError;
    /// let e = AnalyzeError::NeedsFullRead { path: "a.mtx".into(), reason: "array file".into() };
    /// assert!(e.needs_full_read());
    /// ```
    #[must_use]
    pub fn needs_full_read(&self) -> bool {
        match self {
            Self::NeedsFullRead { .. } => true,
            Self::Mm(e) => is_lenient_recoverable(e.kind()),
            _ => false,
        }
    }
}

/// Whether the full reader's `--lenient` mode recovers from this kind.
#[must_use]
pub fn is_lenient_recoverable(kind: &MmErrorKind) -> bool {
    matches!(
        kind,
        MmErrorKind::SinglePercentBanner { .. }
            | MmErrorKind::MissingBanner { .. }
            | MmErrorKind::CommentedSizeLine { .. }
            | MmErrorKind::TooManyEntries { .. }
            | MmErrorKind::ZeroBased
            | MmErrorKind::NotLowerTriangle { .. }
            | MmErrorKind::NonFinite { .. }
            | MmErrorKind::UnexpectedValue { .. }
    )
}
