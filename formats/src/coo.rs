//! Coordinate format.

use crate::pattern::{accessors, assert_spmv_lens, check_len, checked_constructors};
use crate::{FormatError, Index, Scalar};

/// A sparse matrix in coordinate (triplet) format.
///
/// # Format
/// Three arrays of length `nnz`: `rows`, `cols`, `values`; entry `k` is
/// `A[rows[k], cols[k]] += values[k]`.
///
/// # Invariants (always checked by [`Coo::try_from_parts`])
/// - the three arrays have the same length;
/// - `0 <= rows[k] < nrows` and `0 <= cols[k] < ncols`;
/// - `nrows`, `ncols` and `nnz` fit in the index type.
///
/// Entries may be in any order and may repeat: duplicates are *kept* in COO
/// (that is what the file said) and *summed* when converting to CSR, the
/// convention of SciPy, Ginkgo and the NIST reference code.
#[derive(Debug, Clone, PartialEq)]
pub struct Coo<T, I> {
    nrows: usize,
    ncols: usize,
    rows: crate::buffer::Buffer<I>,
    cols: crate::buffer::Buffer<I>,
    values: crate::buffer::Buffer<T>,
}

/// Checks dimensions against the index type.
pub(crate) fn check_dims<I: Index>(
    nrows: usize,
    ncols: usize,
    nnz: usize,
) -> Result<(), FormatError> {
    for (what, value) in [("nrows", nrows), ("ncols", ncols), ("nnz", nnz)] {
        if value > I::MAX_USIZE {
            return Err(FormatError::IndexOverflow {
                what,
                value,
                index: I::NAME,
            });
        }
    }
    Ok(())
}

impl<T: Scalar, I: Index> Coo<T, I> {
    checked_constructors! {
        /// Builds a COO matrix after checking every invariant.
        ///
        /// # Errors
        /// [`FormatError::Length`] if the arrays differ in length,
        /// [`FormatError::RowOutOfBounds`] / [`FormatError::ColumnOutOfBounds`]
        /// for an index outside the shape, [`FormatError::IndexOverflow`] if a
        /// dimension does not fit `I`.
        ///
        /// ```
        /// use sparsetool_formats::{Coo, FormatError};
        /// let err = Coo::<f64, i32>::try_from_parts(2, 2, vec![0, 2], vec![0, 0], vec![1.0, 2.0]);
        /// assert!(matches!(err, Err(FormatError::RowOutOfBounds { row: 2, .. })));
        /// ```
        try_from_parts(nrows, ncols; rows: I, cols: I, values: T) => checked;
    }

    /// `self` if it keeps every invariant listed on [`Coo`], else the first
    /// broken one.
    fn checked(self) -> Result<Self, FormatError> {
        let (nrows, ncols, rows, cols) = (self.nrows, self.ncols, &self.rows, &self.cols);
        let nnz = self.values.len();
        check_len("rows", nnz, rows.len())?;
        check_len("cols", nnz, cols.len())?;
        check_dims::<I>(nrows, ncols, nnz)?;
        let bad = |r: I, c: I| (r.to_usize() >= nrows) | (c.to_usize() >= ncols);
        let pos = crate::pattern::first_bad(
            nnz,
            |e| {
                rows[e.clone()]
                    .iter()
                    .zip(&cols[e])
                    .fold(false, |any, (&r, &c)| any | bad(r, c))
            },
            |i| bad(rows[i], cols[i]),
        );
        if let Some(pos) = pos {
            let (r, c) = (rows[pos], cols[pos]);
            if r.to_usize() >= nrows {
                return Err(FormatError::RowOutOfBounds {
                    row: r.to_i64(),
                    nrows,
                    pos,
                });
            }
            return Err(FormatError::ColumnOutOfBounds {
                row: r.to_usize(),
                col: c.to_i64(),
                ncols,
            });
        }
        Ok(self)
    }

    /// An empty `nrows x ncols` matrix.
    #[must_use]
    pub fn empty(nrows: usize, ncols: usize) -> Self {
        Self {
            nrows,
            ncols,
            rows: Vec::new().into(),
            cols: Vec::new().into(),
            values: Vec::new().into(),
        }
    }

    accessors! {
        /// Builds a COO matrix without checking.
        ///
        /// # Safety
        /// The caller guarantees every invariant listed on [`Coo`]; kernels index
        /// arrays with these values without bounds checks.
        unsafe from_parts_unchecked(
            nrows: usize, ncols: usize,
            rows: Vec<I>, cols: Vec<I>, values: Vec<T>,
        );
        /// Row indices.
        rows: [I];
        /// Column indices.
        cols: [I];
        /// Values.
        values: [T];
        /// Number of stored entries (duplicates counted).
        nnz = values.len();
        /// Mutable values (the structure stays valid whatever is written).
        values_mut = &mut values: [T];
        /// Hands the arrays back: `(nrows, ncols, rows, cols, values)`.
        into_parts(nrows: usize, ncols: usize, rows: Vec<I>, cols: Vec<I>, values: Vec<T>);
        is_mapped;
    }

    /// Whether entries are sorted by (row, column) with no duplicates.
    #[must_use]
    pub fn is_canonical(&self) -> bool {
        (1..self.nnz()).all(|k| (self.rows[k - 1], self.cols[k - 1]) < (self.rows[k], self.cols[k]))
    }

    /// `y = A x` (duplicates contribute their sum). Serial: COO has no
    /// row ownership, so the parallel path goes through CSR.
    ///
    /// # Panics
    /// If `x.len() != ncols` or `y.len() != nrows`.
    pub fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_spmv_lens(x, y, self.nrows, self.ncols);
        y.iter_mut().for_each(|v| *v = T::zero());
        for k in 0..self.nnz() {
            y[self.rows[k].to_usize()] += self.values[k] * x[self.cols[k].to_usize()];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pattern::PAR_THRESHOLD;

    /// The block scan reports the first entry out of bounds, on both paths
    /// (serial and parallel) and in any block, with a later bad one after it.
    #[test]
    fn first_out_of_bounds_entry_in_large_arrays() {
        for n in [1000, 5 * PAR_THRESHOLD + 3] {
            for at in [0, 16_385.min(n / 2), n - 1] {
                let (mut rows, mut cols) = (vec![1i32; n], vec![2i32; n]);
                rows[at] = 10;
                if at + 1 < n {
                    cols[at + 1] = 10;
                }
                let e = Coo::<f64, i32>::try_from_parts(10, 10, rows, cols.clone(), vec![1.0; n]);
                assert!(
                    matches!(e, Err(FormatError::RowOutOfBounds { row: 10, pos, .. }) if pos == at),
                    "n {n} at {at}: {e:?}"
                );
                let mut cols = vec![2i32; n];
                cols[at] = -1;
                let e = Coo::<f64, i32>::try_from_parts(10, 10, vec![1; n], cols, vec![1.0; n]);
                assert!(
                    matches!(e, Err(FormatError::ColumnOutOfBounds { col: -1, .. })),
                    "{e:?}"
                );
            }
        }
        assert!(Coo::<f64, i32>::try_from_parts(
            10,
            10,
            vec![9; 70_000],
            vec![9; 70_000],
            vec![1.0; 70_000]
        )
        .is_ok());
    }
}
