//! Errors of the conversions.

use sparsetool_formats::{FormatError, FormatKind};
use thiserror::Error;

/// Why a conversion was refused. Parameter errors name the parameter and,
/// where there is one, the format that fits better.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// A width (ELL width, HYB ELL width) of zero was asked for.
    #[error("{} width must be at least 1", format.name().to_uppercase())]
    ZeroWidth {
        /// The target format.
        format: FormatKind,
    },
    /// The requested ELL width is below the longest row.
    #[error(
        "ELL width {width} is smaller than the longest row ({longest} entries, row {row}); \
         use HYB to keep the overflow in a COO tail, or leave the width unset"
    )]
    EllWidthTooSmall {
        /// The requested width.
        width: usize,
        /// Entries in the longest row.
        longest: usize,
        /// The (first) longest row.
        row: usize,
    },
    /// A width above the number of columns was asked for.
    #[error("{} width {width} exceeds the number of columns ({ncols})", format.name().to_uppercase())]
    WidthAboveNcols {
        /// The target format.
        format: FormatKind,
        /// The requested width.
        width: usize,
        /// Number of columns.
        ncols: usize,
    },
    /// ELL padding would blow the matrix up (more than
    /// [`MAX_ELL_FILL`](crate::MAX_ELL_FILL) times the CSR entries and over
    /// [`ELL_FILL_MIN_SLOTS`](crate::ELL_FILL_MIN_SLOTS) slots).
    #[error(
        "ELL with width {width} would store {slots} slots for {nnz} entries ({:.1}x fill); \
         use HYB or SELL instead, or allow the fill with --allow-fill",
        *slots as f64 / (*nnz).max(1) as f64
    )]
    EllFill {
        /// Slots ELL would store (`nrows * width`).
        slots: usize,
        /// Stored entries.
        nnz: usize,
        /// The ELL width.
        width: usize,
    },
    /// A SELL slice height of zero was asked for.
    #[error("SELL slice height must be at least 1")]
    ZeroSlice,
    /// SELL sigma is neither 1 nor a positive multiple of the slice height.
    #[error(
        "SELL sigma must be 1 or a positive multiple of the slice height {slice}, got {sigma}"
    )]
    BadSigma {
        /// The requested sigma.
        sigma: usize,
        /// The slice height.
        slice: usize,
    },
    /// The result would break a format invariant (in practice: a count
    /// that does not fit the index type).
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The memory the conversion needs cannot be had.
    #[error(transparent)]
    Alloc(#[from] sparsetool_formats::alloc::AllocError),
}
