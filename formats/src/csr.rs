//! Compressed sparse row format.

use rayon::prelude::*;

use crate::pattern::{
    accessors, assert_spmv_lens, check_entry_arrays, check_offsets, check_rows,
    checked_constructors,
};
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
    row_ptr: crate::buffer::Buffer<I>,
    col_idx: crate::buffer::Buffer<I>,
    values: crate::buffer::Buffer<T>,
}

impl<T: Scalar, I: Index> Csr<T, I> {
    checked_constructors! {
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
        try_from_parts(nrows, ncols; row_ptr: I, col_idx: I, values: T) => checked;
    }

    /// `self` if it keeps every invariant listed on [`Csr`], else the first
    /// broken one.
    fn checked(self) -> Result<Self, FormatError> {
        let nnz = check_entry_arrays(self.nrows, self.ncols, &self.col_idx, self.values.len())?;
        check_offsets("row_ptr", &self.row_ptr, self.nrows + 1, nnz)?;
        check_rows(&self.row_ptr, &self.col_idx, self.ncols)?;
        Ok(self)
    }

    /// Builds a CSR matrix from buffers without checking.
    ///
    /// # Safety
    /// As [`Csr::from_parts_unchecked`].
    pub(crate) unsafe fn from_buffers_unchecked(
        nrows: usize,
        ncols: usize,
        row_ptr: crate::buffer::Buffer<I>,
        col_idx: crate::buffer::Buffer<I>,
        values: crate::buffer::Buffer<T>,
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
            row_ptr: vec![I::default(); nrows + 1].into(),
            col_idx: Vec::new().into(),
            values: Vec::new().into(),
        }
    }

    accessors! {
        /// Builds a CSR matrix without checking.
        ///
        /// # Safety
        /// The caller guarantees every invariant listed on [`Csr`]; SpMV kernels
        /// index `x` and `values` with these arrays without bounds checks.
        unsafe from_parts_unchecked(
            nrows: usize, ncols: usize,
            row_ptr: Vec<I>, col_idx: Vec<I>, values: Vec<T>,
        );
        /// Number of stored entries.
        nnz = values.len();
        /// Row offsets (`nrows + 1`).
        row_ptr: [I];
        /// Column indices (`nnz`).
        col_idx: [I];
        /// Values (`nnz`).
        values: [T];
        /// Mutable values (the structure stays valid whatever is written).
        values_mut = &mut values: [T];
        /// Hands the arrays back: `(nrows, ncols, row_ptr, col_idx, values)`.
        into_parts(nrows: usize, ncols: usize, row_ptr: Vec<I>, col_idx: Vec<I>, values: Vec<T>);
        is_mapped;
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

    /// `y = A x`, one row per task (rayon).
    ///
    /// # Panics
    /// If `x.len() != ncols` or `y.len() != nrows`.
    pub fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_spmv_lens(x, y, self.nrows, self.ncols);
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

    /// `y = Aᵀ x`: every row scattered into `y` (`x` has `nrows` entries,
    /// `y` has `ncols`), in parallel parts with private copies of `y` added
    /// in a fixed order, so the result does not depend on the thread count.
    ///
    /// ```
    /// use sparsetool_formats::Csr;
    /// // [[1 2]
    /// //  [0 3]]
    /// let a = Csr::<f64, i32>::try_from_parts(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 2.0, 3.0])?;
    /// let mut y = vec![0.0; 2];
    /// a.spmv_transpose(&[1.0, 10.0], &mut y);
    /// assert_eq!(y, [1.0, 32.0]);
    /// # Ok::<(), sparsetool_formats::FormatError>(())
    /// ```
    ///
    /// # Panics
    /// If `x.len() != nrows` or `y.len() != ncols`.
    pub fn spmv_transpose(&self, x: &[T], y: &mut [T]) {
        assert_spmv_lens(x, y, self.ncols, self.nrows);
        crate::csc::scatter_spmv(&self.row_ptr, &self.col_idx, &self.values, x, y);
    }
}
