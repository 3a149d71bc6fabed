//! Hybrid ELL + COO format (Bell & Garland 2008; CUSP `hyb_matrix`).

use rayon::prelude::*;

use crate::coo::check_dims;
use crate::ell::SPMV_CHUNK;
use crate::pattern::first_error;
use crate::{Coo, Ell, FormatError, Index, Scalar};

/// A sparse matrix in hybrid (HYB) format: an [`Ell`] part of fixed width
/// holding the first entries of every row, and a [`Coo`] tail holding the
/// entries of long rows that do not fit.
///
/// # Format
/// - `ell`: an ELL matrix (slot-major, padding index `-1`, value zero);
/// - `coo`: the tail, ordered by row, then column (no duplicates).
///
/// # Invariants (always checked by [`Hyb::try_from_parts`])
/// - both parts are valid on their own (their own `try_from_parts`) and
///   have the same shape ([`FormatError::ShapeMismatch`]);
/// - the tail is strictly ordered by (row, column)
///   ([`FormatError::TailOrder`]);
/// - a row has tail entries only if its ELL part is full
///   ([`FormatError::TailRowNotFull`]);
/// - tail columns come after the row's ELL columns
///   ([`FormatError::TailBeforeEll`], or [`FormatError::DuplicateEntry`]
///   for the same column);
/// - the total entry count fits the index type.
///
/// Together these make the layout unique for a given ELL width: the ELL
/// part holds the first `min(len, width)` entries of each row.
#[derive(Debug, Clone, PartialEq)]
pub struct Hyb<T, I> {
    ell: Ell<T, I>,
    coo: Coo<T, I>,
}

impl<T: Scalar, I: Index> Hyb<T, I> {
    /// Builds a HYB matrix from its two parts after checking the invariants
    /// that tie them together (each part was checked when it was built).
    ///
    /// # Errors
    /// See the list on [`Hyb`].
    ///
    /// ```
    /// use sparsetool_formats::{Coo, Ell, FormatError, Hyb};
    /// // Row 0 has a tail entry but a free ELL slot.
    /// let ell = Ell::<f64, i32>::try_from_parts(2, 2, 1, vec![0, 1], vec![-1, 0], vec![0.0, 1.0]).unwrap();
    /// let coo = Coo::try_from_parts(2, 2, vec![0], vec![1], vec![2.0]).unwrap();
    /// assert!(matches!(Hyb::try_from_parts(ell, coo), Err(FormatError::TailRowNotFull { row: 0, .. })));
    /// ```
    pub fn try_from_parts(ell: Ell<T, I>, coo: Coo<T, I>) -> Result<Self, FormatError> {
        let (nrows, ncols) = (ell.nrows(), ell.ncols());
        if (coo.nrows(), coo.ncols()) != (nrows, ncols) {
            return Err(FormatError::ShapeMismatch {
                part: "COO",
                nrows,
                ncols,
                found_rows: coo.nrows(),
                found_cols: coo.ncols(),
            });
        }
        check_dims::<I>(nrows, ncols, ell.nnz().saturating_add(coo.nnz()))?;
        let (rows, cols) = (coo.rows(), coo.cols());
        let width = ell.width();
        first_error(coo.nnz(), coo.nnz(), |k| {
            let (r, c) = (rows[k].to_usize(), cols[k].to_usize());
            if k > 0 && (rows[k - 1], cols[k - 1]) >= (rows[k], cols[k]) {
                return Err(FormatError::TailOrder { pos: k });
            }
            let rn = ell.row_nnz()[r].to_usize();
            if rn < width {
                return Err(FormatError::TailRowNotFull {
                    row: r,
                    row_nnz: rn,
                    width,
                });
            }
            if width > 0 && (k == 0 || rows[k - 1] != rows[k]) {
                let last = ell.col_idx()[(width - 1) * nrows + r].to_usize();
                if c == last {
                    return Err(FormatError::DuplicateEntry { row: r, col: c });
                }
                if c < last {
                    return Err(FormatError::TailBeforeEll { row: r, col: c });
                }
            }
            Ok(())
        })?;
        Ok(Self { ell, coo })
    }

    /// Builds a HYB matrix without checking.
    ///
    /// # Safety
    /// The caller guarantees every invariant listed on [`Hyb`] (and those of
    /// its parts); SpMV kernels rely on them without bounds checks.
    #[must_use]
    pub unsafe fn from_parts_unchecked(ell: Ell<T, I>, coo: Coo<T, I>) -> Self {
        Self { ell, coo }
    }

    /// Whether both parts are read in place from a memory-mapped `.spb`
    /// file rather than owned.
    #[must_use]
    pub fn is_mapped(&self) -> bool {
        self.ell().is_mapped() && self.coo().is_mapped()
    }

    /// The ELL part.
    #[inline]
    #[must_use]
    pub fn ell(&self) -> &Ell<T, I> {
        &self.ell
    }
    /// The COO tail (ordered by row, then column).
    #[inline]
    #[must_use]
    pub fn coo(&self) -> &Coo<T, I> {
        &self.coo
    }
    /// Number of rows.
    #[inline]
    #[must_use]
    pub fn nrows(&self) -> usize {
        self.ell.nrows()
    }
    /// Number of columns.
    #[inline]
    #[must_use]
    pub fn ncols(&self) -> usize {
        self.ell.ncols()
    }
    /// Number of stored entries (ELL entries plus tail entries).
    #[inline]
    #[must_use]
    pub fn nnz(&self) -> usize {
        self.ell.nnz() + self.coo.nnz()
    }
    /// Hands the parts back: `(ell, coo)`.
    #[must_use]
    pub fn into_parts(self) -> (Ell<T, I>, Coo<T, I>) {
        (self.ell, self.coo)
    }

    /// `y = A x`: the ELL part, then each row's tail entries, one block of
    /// rows per task (rayon). Entries are added in ascending column order,
    /// so the result is bitwise equal to [`crate::Csr::spmv`].
    ///
    /// # Panics
    /// If `x.len() != ncols` or `y.len() != nrows`.
    pub fn spmv(&self, x: &[T], y: &mut [T]) {
        self.ell.spmv(x, y);
        let (rows, cols, vals) = (self.coo.rows(), self.coo.cols(), self.coo.values());
        if rows.is_empty() {
            return;
        }
        y.par_chunks_mut(SPMV_CHUNK)
            .enumerate()
            .for_each(|(b, yb)| {
                let r0 = b * SPMV_CHUNK;
                let lo = rows.partition_point(|r| r.to_usize() < r0);
                let hi = rows.partition_point(|r| r.to_usize() < r0 + yb.len());
                for k in lo..hi {
                    yb[rows[k].to_usize() - r0] += vals[k] * x[cols[k].to_usize()];
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Seed B with ELL width 2: tail (1, 3, 9).
    fn parts() -> (Ell<f64, i32>, Coo<f64, i32>) {
        let ell = Ell::try_from_parts(
            4,
            4,
            2,
            vec![2, 2, 2, 1],
            vec![0, 0, 1, 3, 2, 2, 2, -1],
            vec![1., 5., 2., 6., 7., 3., 8., 0.],
        )
        .unwrap();
        let coo = Coo::try_from_parts(4, 4, vec![1], vec![3], vec![9.0]).unwrap();
        (ell, coo)
    }

    #[test]
    fn valid_spmv() {
        let (e, c) = parts();
        let h = Hyb::try_from_parts(e, c).unwrap();
        assert_eq!(h.nnz(), 8);
        let mut y = vec![0.0; 4];
        h.spmv(&[1.0; 4], &mut y);
        assert_eq!(y, [8.0, 17.0, 10.0, 6.0]);
    }

    #[test]
    fn each_invariant() {
        let (e, _) = parts();
        let tail = |r: Vec<i32>, c: Vec<i32>| {
            let n = r.len();
            Hyb::try_from_parts(
                e.clone(),
                Coo::try_from_parts(4, 4, r, c, vec![1.0; n]).unwrap(),
            )
        };
        assert!(matches!(
            tail(vec![3], vec![0]),
            Err(FormatError::TailRowNotFull { row: 3, .. })
        ));
        assert!(matches!(
            tail(vec![1], vec![1]),
            Err(FormatError::TailBeforeEll { row: 1, col: 1 })
        ));
        assert!(matches!(
            tail(vec![1], vec![2]),
            Err(FormatError::DuplicateEntry { row: 1, col: 2 })
        ));
        assert!(matches!(
            tail(vec![2, 1], vec![3, 3]),
            Err(FormatError::TailOrder { pos: 1 })
        ));
        assert!(matches!(
            tail(vec![1, 1], vec![3, 3]),
            Err(FormatError::TailOrder { pos: 1 })
        ));
        let other = Coo::try_from_parts(4, 5, vec![], vec![], vec![]).unwrap();
        assert!(matches!(
            Hyb::try_from_parts(e.clone(), other),
            Err(FormatError::ShapeMismatch { found_cols: 5, .. })
        ));
    }
}
