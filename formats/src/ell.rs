//! ELLPACK format (Bell & Garland, "Efficient Sparse Matrix-Vector
//! Multiplication on CUDA", NVIDIA TR NVR-2008-004; CUSP `ell_matrix`).

use rayon::prelude::*;

use crate::buffer::Buffer;
use crate::coo::check_dims;
use crate::pattern::{
    accessors, assert_spmv_lens, check_len, check_row_cols, checked_constructors, first_error,
};
use crate::{FormatError, Index, Scalar};

/// Rows handled by one task in the CPU SpMV kernels of the padded formats.
pub(crate) const SPMV_CHUNK: usize = 1024;

/// A sparse matrix in ELLPACK (ELL) format.
///
/// # Format
/// - `width`: the number of slots per row (at least the longest row);
/// - `row_nnz`: `nrows` entry counts, one per row;
/// - `col_idx`, `values`: `nrows * width` slots, **slot-major**
///   (column-major): slot `s` of row `i` is at `s * nrows + i`, so a GPU
///   thread per row reads coalesced memory.
///
/// The entries of row `i` fill slots `0..row_nnz[i]` in ascending column
/// order. The other slots are padding: value zero and column index
/// [`Index::PADDING`] (`-1`, CUSP's `invalid_index`). No alignment beyond
/// the row count is applied (the stride is exactly `nrows`).
///
/// # Invariants (always checked by [`Ell::try_from_parts`])
/// - `row_nnz` has `nrows` entries, each in `0..=width`
///   ([`FormatError::RowNnzOutOfRange`]);
/// - `col_idx` and `values` have `nrows * width` slots
///   ([`FormatError::Length`]), and `nrows * width` fits the index type
///   ([`FormatError::IndexOverflow`]);
/// - stored entries have columns below `ncols`, strictly ascending within a
///   row ([`FormatError::ColumnOutOfBounds`], [`FormatError::UnsortedRow`],
///   [`FormatError::DuplicateEntry`]);
/// - padding slots hold index `-1` and value zero ([`FormatError::Padding`]).
///
/// ```
/// use sparsetool_formats::Ell;
/// // [1 0 2]
/// // [0 3 0]
/// // [4 0 5]
/// let ell = Ell::<f64, i32>::try_from_parts(
///     3, 3, 2, vec![2, 1, 2],
///     vec![0, 1, 0, 2, -1, 2],
///     vec![1.0, 3.0, 4.0, 2.0, 0.0, 5.0],
/// ).unwrap();
/// let mut y = vec![0.0; 3];
/// ell.spmv(&[1.0, 1.0, 1.0], &mut y);
/// assert_eq!(y, [3.0, 3.0, 9.0]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Ell<T, I> {
    nrows: usize,
    ncols: usize,
    width: usize,
    nnz: usize,
    row_nnz: Buffer<I>,
    col_idx: Buffer<I>,
    values: Buffer<T>,
}

/// Checks one padded row whose slot `s` lives at `base + s * stride`:
/// slots `0..len` hold strictly ascending columns below `ncols`, slots
/// `len..width` hold padding.
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_padded_row<T: Scalar, I: Index>(
    row: usize,
    len: usize,
    width: usize,
    base: usize,
    stride: usize,
    col_idx: &[I],
    values: &[T],
    ncols: usize,
) -> Result<(), FormatError> {
    check_row_cols(row, (0..len).map(|s| col_idx[base + s * stride]), ncols)?;
    for s in len..width {
        let k = base + s * stride;
        if col_idx[k] != I::PADDING {
            return Err(FormatError::Padding {
                row,
                detail: "a padding slot holds a column index other than -1",
            });
        }
        if values[k] != T::zero() {
            return Err(FormatError::Padding {
                row,
                detail: "a padding slot holds a non-zero value",
            });
        }
    }
    Ok(())
}

/// `a * b`, or [`FormatError::IndexOverflow`] naming `what` when the product
/// does not fit the index type `I`.
pub(crate) fn checked_slots<I: Index>(
    what: &'static str,
    a: usize,
    b: usize,
) -> Result<usize, FormatError> {
    match a.checked_mul(b) {
        Some(v) if v <= I::MAX_USIZE => Ok(v),
        other => Err(FormatError::IndexOverflow {
            what,
            value: other.unwrap_or(usize::MAX),
            index: I::NAME,
        }),
    }
}

impl<T: Scalar, I: Index> Ell<T, I> {
    checked_constructors! {
        /// Builds an ELL matrix after checking every invariant (in parallel for
        /// large matrices).
        ///
        /// # Errors
        /// The first broken invariant (by row): see the list on [`Ell`].
        ///
        /// ```
        /// use sparsetool_formats::{Ell, FormatError};
        /// // Row 1 claims 3 entries in a width-2 layout.
        /// let err = Ell::<f64, i32>::try_from_parts(2, 2, 2, vec![1, 3], vec![0, 0, -1, 1], vec![1.0; 4]);
        /// assert!(matches!(err, Err(FormatError::RowNnzOutOfRange { row: 1, .. })));
        /// ```
        try_from_parts(nrows, ncols, width; row_nnz: I, col_idx: I, values: T)
            => checked(nnz = 0);
    }

    /// `self` with its `nnz` counted if it keeps every invariant listed on
    /// [`Ell`], else the first broken one.
    fn checked(mut self) -> Result<Self, FormatError> {
        let Self {
            nrows,
            ncols,
            width,
            ref row_nnz,
            ref col_idx,
            ref values,
            ..
        } = self;
        check_dims::<I>(nrows, ncols, 0)?;
        let slots = checked_slots::<I>("nrows * width", nrows, width)?;
        check_len("row_nnz", nrows, row_nnz.len())?;
        check_len("col_idx", slots, col_idx.len())?;
        check_len("values", slots, values.len())?;
        if let Some(row) = row_nnz.iter().position(|n| n.to_usize() > width) {
            return Err(FormatError::RowNnzOutOfRange {
                row,
                row_nnz: row_nnz[row].to_i64(),
                width,
            });
        }
        first_error(nrows, slots, |i| {
            check_padded_row(
                i,
                row_nnz[i].to_usize(),
                width,
                i,
                nrows,
                col_idx,
                values,
                ncols,
            )
        })?;
        self.nnz = row_nnz.iter().map(|n| n.to_usize()).sum();
        Ok(self)
    }

    /// Builds an ELL matrix without checking.
    ///
    /// # Safety
    /// The caller guarantees every invariant listed on [`Ell`]; SpMV kernels
    /// (CPU and GPU) index `x` with the stored columns without bounds checks.
    #[must_use]
    pub unsafe fn from_parts_unchecked(
        nrows: usize,
        ncols: usize,
        width: usize,
        row_nnz: Vec<I>,
        col_idx: Vec<I>,
        values: Vec<T>,
    ) -> Self {
        let nnz = row_nnz.iter().map(|n| n.to_usize()).sum();
        Self {
            nrows,
            ncols,
            width,
            nnz,
            row_nnz: row_nnz.into(),
            col_idx: col_idx.into(),
            values: values.into(),
        }
    }

    accessors! {
        is_mapped;
        /// Slots per row.
        width: usize;
        /// Number of stored entries (padding excluded).
        nnz: usize;
        /// Entries per row (`nrows`).
        row_nnz: [I];
        /// Values, slot-major (`nrows * width`).
        values: [T];
        /// Column indices, slot-major (`nrows * width`; `-1` marks padding).
        col_idx: [I];
        /// Number of slots (`nrows * width`), padding included.
        slots = values.len();
        /// Hands the arrays back: `(nrows, ncols, width, row_nnz, col_idx, values)`.
        into_parts(nrows: usize, ncols: usize, width: usize, row_nnz: Vec<I>, col_idx: Vec<I>, values: Vec<T>);
    }

    /// `y = A x`, one block of rows per task (rayon), reading slot by slot.
    /// Entries of a row are added in ascending column order, so the result
    /// is bitwise equal to [`crate::Csr::spmv`] on the same matrix.
    ///
    /// # Panics
    /// If `x.len() != ncols` or `y.len() != nrows`.
    pub fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_spmv_lens(x, y, self.nrows, self.ncols);
        let n = self.nrows;
        y.par_chunks_mut(SPMV_CHUNK)
            .enumerate()
            .for_each(|(b, yb)| {
                let r0 = b * SPMV_CHUNK;
                yb.iter_mut().for_each(|v| *v = T::zero());
                let rn = &self.row_nnz[r0..r0 + yb.len()];
                for s in 0..self.width {
                    let base = s * n + r0;
                    for (k, yi) in yb.iter_mut().enumerate() {
                        if s < rn[k].to_usize() {
                            *yi += self.values[base + k] * x[self.col_idx[base + k].to_usize()];
                        }
                    }
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed_a() -> (Vec<i32>, Vec<i32>, Vec<f64>) {
        (
            vec![2, 1, 2],
            vec![0, 1, 0, 2, -1, 2],
            vec![1.0, 3.0, 4.0, 2.0, 0.0, 5.0],
        )
    }

    #[test]
    fn valid_and_accessors() {
        let (rn, c, v) = seed_a();
        let e = Ell::try_from_parts(3, 3, 2, rn, c, v).unwrap();
        assert_eq!(
            (e.nrows(), e.ncols(), e.width(), e.nnz(), e.slots()),
            (3, 3, 2, 5, 6)
        );
        let mut y = vec![0.0; 3];
        e.spmv(&[1.0, 2.0, 3.0], &mut y);
        assert_eq!(y, [7.0, 6.0, 19.0]);
    }

    #[test]
    fn each_invariant() {
        let (rn, c, v) = seed_a();
        let t = |rn: Vec<i32>, c: Vec<i32>, v: Vec<f64>| Ell::try_from_parts(3, 3, 2, rn, c, v);
        assert!(matches!(
            t(vec![2, 1], c.clone(), v.clone()),
            Err(FormatError::Length {
                array: "row_nnz",
                ..
            })
        ));
        assert!(matches!(
            t(rn.clone(), c[..5].to_vec(), v.clone()),
            Err(FormatError::Length {
                array: "col_idx",
                ..
            })
        ));
        assert!(matches!(
            t(vec![2, -1, 2], c.clone(), v.clone()),
            Err(FormatError::RowNnzOutOfRange {
                row: 1,
                row_nnz: -1,
                width: 2
            })
        ));
        assert!(matches!(
            t(rn.clone(), vec![0, 1, 0, 3, -1, 2], v.clone()),
            Err(FormatError::ColumnOutOfBounds { row: 0, col: 3, .. })
        ));
        assert!(matches!(
            t(rn.clone(), vec![2, 1, 0, 0, -1, 2], v.clone()),
            Err(FormatError::UnsortedRow { row: 0 })
        ));
        assert!(matches!(
            t(rn.clone(), vec![0, 1, 0, 0, -1, 2], v.clone()),
            Err(FormatError::DuplicateEntry { row: 0, col: 0 })
        ));
        assert!(matches!(
            t(rn.clone(), vec![0, 1, 0, 2, 0, 2], v.clone()),
            Err(FormatError::Padding { row: 1, .. })
        ));
        assert!(matches!(
            t(rn.clone(), c.clone(), vec![1.0, 3.0, 4.0, 2.0, 7.0, 5.0]),
            Err(FormatError::Padding { row: 1, .. })
        ));
        assert!(matches!(
            Ell::<f64, i32>::try_from_parts(1 << 20, 1, 1 << 12, vec![], vec![], vec![]),
            Err(FormatError::IndexOverflow {
                what: "nrows * width",
                ..
            })
        ));
    }
}
