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
    /// A pointer array (row_ptr, col_ptr, jd_ptr, slice_ptr) does not start at zero.
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
    /// A row index of a CSC matrix is outside `0..nrows`.
    #[error("row index {row} out of bounds (nrows = {nrows}) in column {col}")]
    RowIndexOutOfBounds {
        /// The column holding it.
        col: usize,
        /// The bad index.
        row: i64,
        /// Number of rows.
        nrows: usize,
    },
    /// Row indices inside a column of a CSC matrix are not strictly ascending.
    #[error("row indices of column {col} are not in ascending order")]
    UnsortedColumn {
        /// The column.
        col: usize,
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
    /// An ELL row claims more entries than the width (or a negative count).
    #[error("row {row} claims {row_nnz} entries, outside 0..={width} (the ELL width)")]
    RowNnzOutOfRange {
        /// The row.
        row: usize,
        /// Its claimed entry count.
        row_nnz: i64,
        /// The width.
        width: usize,
    },
    /// A SELL slice spans a number of slots other than `slice_height * slice_width`.
    #[error("slice {slice} spans {found} slots, expected slice_height * slice_width = {expected}")]
    SliceSize {
        /// The slice.
        slice: usize,
        /// `slice_height * slice_width[slice]`.
        expected: usize,
        /// `slice_ptr[slice + 1] - slice_ptr[slice]`.
        found: usize,
    },
    /// A SELL slice width differs from the length of the slice's longest row.
    #[error("slice {slice} has width {width} but its longest row holds {longest} entries")]
    SliceWidth {
        /// The slice.
        slice: usize,
        /// The stored width.
        width: i64,
        /// Entries in the slice's longest row.
        longest: usize,
    },
    /// A row sits outside the sorting window it came from (SELL-C-sigma sorts
    /// only inside consecutive windows of `sigma` rows).
    #[error("sorted position {pos} holds row {row}, outside its sorting window {window_start}..{window_end}")]
    PermutationWindow {
        /// Sorted position.
        pos: usize,
        /// The original row stored there.
        row: usize,
        /// First row of the window.
        window_start: usize,
        /// One past the last row of the window.
        window_end: usize,
    },
    /// Two rows of equal length are not in their original order (the sort by
    /// length must be stable, which makes the layout unique).
    #[error("rows of equal length at sorted positions {} and {pos} are not in their original order", pos.saturating_sub(1))]
    RowOrderTie {
        /// Sorted position of the second row.
        pos: usize,
    },
    /// A jagged diagonal is longer than the one before it.
    #[error("jagged diagonal {diag} holds {len} entries, more than diagonal {} ({prev_len})", diag.saturating_sub(1))]
    DiagonalGrowth {
        /// The diagonal.
        diag: usize,
        /// Its length.
        len: usize,
        /// Length of the diagonal before it.
        prev_len: usize,
    },
    /// A jagged diagonal holds more entries than there are rows.
    #[error("jagged diagonal {diag} holds {len} entries but there are only {nrows} rows")]
    DiagonalTooLong {
        /// The diagonal.
        diag: usize,
        /// Its length.
        len: usize,
        /// Number of rows.
        nrows: usize,
    },
    /// A jagged diagonal is empty (`jd_ptr` must have `max_row_len + 1` entries).
    #[error("jagged diagonal {diag} is empty (jd_ptr must have max_row_len + 1 entries)")]
    EmptyDiagonal {
        /// The diagonal.
        diag: usize,
    },
    /// The parts of a composite format (HYB's ELL and COO) have different shapes.
    #[error("the {part} part is {found_rows}x{found_cols}, expected {nrows}x{ncols}")]
    ShapeMismatch {
        /// The part that differs.
        part: &'static str,
        /// Expected rows.
        nrows: usize,
        /// Expected columns.
        ncols: usize,
        /// Rows of the part.
        found_rows: usize,
        /// Columns of the part.
        found_cols: usize,
    },
    /// HYB's COO tail is not ordered by (row, column).
    #[error("COO tail entry {pos} is not after entry {} in (row, column) order", pos.saturating_sub(1))]
    TailOrder {
        /// Position of the entry out of order.
        pos: usize,
    },
    /// A row has COO tail entries although its ELL part is not full.
    #[error("row {row} has COO tail entries but fills only {row_nnz} of {width} ELL slots")]
    TailRowNotFull {
        /// The row.
        row: usize,
        /// Its ELL entry count.
        row_nnz: usize,
        /// The ELL width.
        width: usize,
    },
    /// A COO tail entry does not come after the columns of its row's ELL part.
    #[error("COO tail entry ({row}, {col}) does not come after the row's ELL columns")]
    TailBeforeEll {
        /// The row.
        row: usize,
        /// The tail entry's column.
        col: usize,
    },
}

/// Sets a context field of an error (file or array name) unless it is set
/// already: the innermost context, attached first, wins. The error types
/// of the `.spb` and `.npz` modules build their context this way.
pub(crate) fn set_once(slot: &mut Option<String>, value: &str) {
    if slot.is_none() {
        *slot = Some(value.to_string());
    }
}
