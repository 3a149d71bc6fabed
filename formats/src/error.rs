//! Errors raised when a format's invariants do not hold.

use thiserror::Error;

/// A broken invariant of a sparse format. Each variant names one invariant;
/// positions are 0-based.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum FormatError {
    /// An array has the wrong length.
    #[error("array `{array}` has length {actual}, expected {expected}")]
    Length {
        /// Name of the array.
        array: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        actual: usize,
    },
    /// A pointer array (row_ptr, jd_ptr, slice_ptr) does not start at zero.
    #[error("`{array}` must start at 0, found {found}")]
    PointerStart {
        /// Name of the array.
        array: &'static str,
        /// The first value.
        found: i64,
    },
    /// A pointer array decreases.
    #[error("`{array}` decreases at position {pos} ({prev} > {next})")]
    PointerNotMonotone {
        /// Name of the array.
        array: &'static str,
        /// Position of the decrease.
        pos: usize,
        /// Value before.
        prev: i64,
        /// Value after.
        next: i64,
    },
    /// A pointer array's last value differs from the number of stored entries.
    #[error("`{array}` ends at {found}, expected {expected}")]
    PointerEnd {
        /// Name of the array.
        array: &'static str,
        /// Expected final value.
        expected: usize,
        /// Actual final value.
        found: i64,
    },
    /// A row index is outside `0..nrows`.
    #[error("row index {row} out of bounds (nrows = {nrows}) at entry {pos}")]
    RowOutOfBounds {
        /// The bad index.
        row: i64,
        /// Number of rows.
        nrows: usize,
        /// Entry position.
        pos: usize,
    },
    /// A column index is outside `0..ncols`.
    #[error("column index {col} out of bounds (ncols = {ncols}) in row {row}")]
    ColumnOutOfBounds {
        /// The row holding it.
        row: usize,
        /// The bad index.
        col: i64,
        /// Number of columns.
        ncols: usize,
    },
    /// Columns inside a row are not strictly ascending.
    #[error("columns of row {row} are not in ascending order")]
    UnsortedRow {
        /// The row.
        row: usize,
    },
    /// The same (row, column) appears twice in a compressed format.
    #[error("duplicate entry ({row}, {col})")]
    DuplicateEntry {
        /// Row.
        row: usize,
        /// Column.
        col: usize,
    },
    /// Dimensions or counts do not fit the index type.
    #[error("{what} = {value} does not fit in index type {index}")]
    IndexOverflow {
        /// What overflowed.
        what: &'static str,
        /// Its value.
        value: usize,
        /// Index type name.
        index: &'static str,
    },
    /// A parameter (width, slice height, sigma) is invalid.
    #[error("invalid parameter: {0}")]
    Parameter(String),
    /// A padding slot is not where padding may be (padding must be trailing
    /// in its row and hold the sentinel index and a zero value).
    #[error("bad padding in row {row}: {detail}")]
    Padding {
        /// The row.
        row: usize,
        /// What is wrong.
        detail: &'static str,
    },
    /// A permutation is not a bijection on `0..n`.
    #[error("`{array}` is not a permutation of 0..{n}: {detail}")]
    Permutation {
        /// Name of the array.
        array: &'static str,
        /// Its length.
        n: usize,
        /// What is wrong.
        detail: String,
    },
    /// Rows are not ordered by non-increasing length where the format needs it.
    #[error("rows are not sorted by descending length at sorted position {pos}")]
    RowOrder {
        /// Sorted position.
        pos: usize,
    },
    /// A value is NaN or infinite where finite values are required.
    #[error("non-finite value at entry {pos}")]
    NonFinite {
        /// Entry position.
        pos: usize,
    },
}
