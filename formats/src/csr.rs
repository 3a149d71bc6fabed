//! Compressed sparse row format.

use rayon::prelude::*;

use crate::coo::check_dims;
use crate::pattern::{check_offsets, check_rows};
use crate::{FormatError, Index, Scalar};

/// A sparse matrix in compressed sparse row (CSR) format.
///
/// # Format
/// - `row_ptr`: `nrows + 1` offsets; row `i` holds entries
///   `row_ptr[i]..row_ptr[i+1]`;
/// - `col_idx`, `values`: `nnz` column indices and values.
///
/// # Invariants (always checked by [`Csr::try_from_parts`])
/// - `row_ptr` has `nrows + 1` entries, starts at 0, never decreases, ends
///   at `nnz`;
/// - `col_idx` and `values` have `nnz` entries;
/// - within a row, columns are strictly ascending (sorted, no duplicates)
///   and below `ncols`.
///
/// This is the canonical form (SciPy's `has_canonical_format`); every
/// conversion in sparsetool produces it and sums duplicates on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Csr<T, I> {
    nrows: usize,
    ncols: usize,
    row_ptr: Vec<I>,
    col_idx: Vec<I>,
    values: Vec<T>,
}

impl<T: Scalar, I: Index> Csr<T, I> {
    /// Builds a CSR matrix after checking every invariant (in parallel for
    /// large matrices).
    ///
    /// # Errors
    /// The first broken invariant, e.g. [`FormatError::PointerNotMonotone`],
    /// [`FormatError::ColumnOutOfBounds`], [`FormatError::UnsortedRow`],
    /// [`FormatError::DuplicateEntry`].
    ///
    /// ```
    /// use sparsetool_formats::{Csr, FormatError};
    /// let err = Csr::<f64, i32>::try_from_parts(2, 3, vec![0, 2, 1], vec![0, 1, 2], vec![1.0; 3]);
    /// assert!(matches!(err, Err(FormatError::PointerNotMonotone { .. })));
    /// let err = Csr::<f64, i32>::try_from_parts(1, 3, vec![0, 2], vec![2, 1], vec![1.0; 2]);
    /// assert!(matches!(err, Err(FormatError::UnsortedRow { row: 0 })));
    /// ```
    pub fn try_from_parts(
        nrows: usize,
        ncols: usize,
        row_ptr: Vec<I>,
        col_idx: Vec<I>,
        values: Vec<T>,
    ) -> Result<Self, FormatError> {
        let nnz = values.len();
        check_dims::<I>(nrows, ncols, nnz)?;
        if col_idx.len() != nnz {
            return Err(FormatError::Length {
                array: "col_idx",
                expected: nnz,
                actual: col_idx.len(),
            });
        }
        check_offsets("row_ptr", &row_ptr, nrows + 1, nnz)?;
        check_rows(&row_ptr, &col_idx, ncols)?;
        Ok(Self {
            nrows,
            ncols,
            row_ptr,
            col_idx,
            values,
        })
    }

    /// Builds a CSR matrix without checking.
    ///
    /// # Safety
    /// The caller guarantees every invariant listed on [`Csr`]; SpMV kernels
    /// index `x` and `values` with these arrays without bounds checks.
    #[must_use]
    pub unsafe fn from_parts_unchecked(
        nrows: usize,
        ncols: usize,
        row_ptr: Vec<I>,
        col_idx: Vec<I>,
        values: Vec<T>,
    ) -> Self {
        Self {
            nrows,
            ncols,
            row_ptr,
            col_idx,
            values,
        }
    }

    /// An empty `nrows x ncols` matrix (all rows empty).
    ///
    /// # Panics
    /// If `nrows` does not fit the index type (cannot happen for offsets of 0).
    #[must_use]
    pub fn empty(nrows: usize, ncols: usize) -> Self {
        Self {
            nrows,
            ncols,
            row_ptr: vec![I::default(); nrows + 1],
            col_idx: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Number of rows.
    #[inline]
    #[must_use]
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Number of columns.
    #[inline]
    #[must_use]
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// Number of stored entries.
    #[inline]
    #[must_use]
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
    /// Row offsets (`nrows + 1`).
    #[inline]
    #[must_use]
    pub fn row_ptr(&self) -> &[I] {
        &self.row_ptr
    }
    /// Column indices (`nnz`).
    #[inline]
    #[must_use]
    pub fn col_idx(&self) -> &[I] {
        &self.col_idx
    }
    /// Values (`nnz`).
    #[inline]
    #[must_use]
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Mutable values (the structure stays valid whatever is written).
    #[inline]
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }
    /// Number of entries in row `i`.
    #[inline]
    #[must_use]
    pub fn row_len(&self, i: usize) -> usize {
        self.row_ptr[i + 1].to_usize() - self.row_ptr[i].to_usize()
    }
    /// Column indices and values of row `i`.
    #[inline]
    #[must_use]
    pub fn row(&self, i: usize) -> (&[I], &[T]) {
        let (s, e) = (self.row_ptr[i].to_usize(), self.row_ptr[i + 1].to_usize());
        (&self.col_idx[s..e], &self.values[s..e])
    }
    /// Length of every row.
    #[must_use]
    pub fn row_lengths(&self) -> Vec<usize> {
        self.row_ptr
            .windows(2)
            .map(|w| w[1].to_usize() - w[0].to_usize())
            .collect()
    }
    /// Length of the longest row (0 for an empty matrix).
    #[must_use]
    pub fn max_row_len(&self) -> usize {
        self.row_ptr
            .par_windows(2)
            .map(|w| w[1].to_usize() - w[0].to_usize())
            .max()
            .unwrap_or(0)
    }
    /// Hands the arrays back: `(nrows, ncols, row_ptr, col_idx, values)`.
    #[must_use]
    pub fn into_parts(self) -> (usize, usize, Vec<I>, Vec<I>, Vec<T>) {
        (
            self.nrows,
            self.ncols,
            self.row_ptr,
            self.col_idx,
            self.values,
        )
    }

    /// `y = A x`, one row per task (rayon).
    ///
    /// # Panics
    /// If `x.len() != ncols` or `y.len() != nrows`.
    pub fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.ncols, "x has the wrong length");
        assert_eq!(y.len(), self.nrows, "y has the wrong length");
        y.par_iter_mut()
            .enumerate()
            .with_min_len(256)
            .for_each(|(i, yi)| {
                let (cols, vals) = self.row(i);
                let mut acc = T::zero();
                for (c, v) in cols.iter().zip(vals) {
                    acc += *v * x[c.to_usize()];
                }
                *yi = acc;
            });
    }
}
