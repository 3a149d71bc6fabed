//! Jagged diagonal storage (Saad, "Krylov subspace methods on
//! supercomputers", 1989; the JDS layout of Kirk & Hwu, PMPP, ch. 10).

use rayon::prelude::*;

use crate::buffer::Buffer;
use crate::ell::SPMV_CHUNK;
use crate::pattern::{
    accessors, assert_spmv_lens, check_entry_arrays, check_len, check_offsets, check_permutation,
    check_row_cols, checked_constructors, first_error,
};
use crate::{FormatError, Index, Scalar};

/// A sparse matrix in jagged diagonal storage (JDS).
///
/// Rows are sorted by descending length (a stable sort: rows of equal
/// length keep their original order). Jagged diagonal `d` holds entry `d`
/// of every sorted row longer than `d`; diagonals are stored one after
/// another, each in sorted-row order, with no padding.
///
/// # Format
/// - `perm`: `nrows` entries, sorted position → original row;
/// - `jd_ptr`: `max_row_len + 1` offsets; diagonal `d` is
///   `jd_ptr[d]..jd_ptr[d+1]`, and entry `d` of sorted row `p` is at
///   `jd_ptr[d] + p`;
/// - `col_idx`, `values`: `nnz` entries, diagonal by diagonal (no padding
///   slots, no alignment).
///
/// # Invariants (always checked by [`Jds::try_from_parts`])
/// - `perm` is a permutation of `0..nrows` ([`FormatError::Length`],
///   [`FormatError::Permutation`]);
/// - `jd_ptr` starts at 0, never decreases and ends at `nnz`
///   ([`FormatError::PointerStart`], [`FormatError::PointerNotMonotone`],
///   [`FormatError::PointerEnd`]);
/// - diagonal lengths never grow ([`FormatError::DiagonalGrowth`]), the
///   first is at most `nrows` ([`FormatError::DiagonalTooLong`]) and none is
///   empty ([`FormatError::EmptyDiagonal`]): so `jd_ptr` has exactly
///   `max_row_len + 1` entries and rows are in descending length order;
/// - rows of equal length appear in original order
///   ([`FormatError::RowOrderTie`]);
/// - within a row, columns are strictly ascending and below `ncols`
///   ([`FormatError::UnsortedRow`], [`FormatError::DuplicateEntry`],
///   [`FormatError::ColumnOutOfBounds`]; the row reported is the original
///   row).
#[derive(Debug, Clone, PartialEq)]
pub struct Jds<T, I> {
    nrows: usize,
    ncols: usize,
    perm: Buffer<I>,
    jd_ptr: Buffer<I>,
    col_idx: Buffer<I>,
    values: Buffer<T>,
}

/// Length of every sorted row, from the diagonal lengths (non-increasing).
fn sorted_lengths<I: Index>(jd_ptr: &[I], nrows: usize) -> Vec<usize> {
    let mut lens = vec![0usize; nrows];
    let nd = jd_ptr.len().saturating_sub(1);
    // Sorted rows dlen[d+1]..dlen[d] have exactly d + 1 entries.
    for d in 0..nd {
        let hi = jd_ptr[d + 1].to_usize() - jd_ptr[d].to_usize();
        let lo = if d + 1 < nd {
            jd_ptr[d + 2].to_usize() - jd_ptr[d + 1].to_usize()
        } else {
            0
        };
        lens[lo..hi].iter_mut().for_each(|l| *l = d + 1);
    }
    lens
}

impl<T: Scalar, I: Index> Jds<T, I> {
    checked_constructors! {
        /// Builds a JDS matrix after checking every invariant.
        ///
        /// # Errors
        /// The first broken invariant: see the list on [`Jds`].
        ///
        /// ```
        /// use sparsetool_formats::{FormatError, Jds};
        /// // Seed B with rows 0 and 2 (both of length 2) swapped in `perm`.
        /// let err = Jds::<f64, i32>::try_from_parts(
        ///     4, 4, vec![1, 2, 0, 3], vec![0, 4, 7, 8],
        ///     vec![0, 1, 0, 3, 2, 2, 2, 3], vec![5., 2., 1., 6., 3., 8., 7., 9.],
        /// );
        /// assert!(matches!(err, Err(FormatError::RowOrderTie { pos: 2 })));
        /// ```
        try_from_parts(nrows, ncols; perm: I, jd_ptr: I, col_idx: I, values: T) => checked;
    }

    /// `self` if it keeps every invariant listed on [`Jds`], else the first
    /// broken one.
    fn checked(self) -> Result<Self, FormatError> {
        let Self {
            nrows,
            ncols,
            ref perm,
            ref jd_ptr,
            ref col_idx,
            ref values,
        } = self;
        let nnz = check_entry_arrays(nrows, ncols, col_idx, values.len())?;
        check_len("perm", nrows, perm.len())?;
        check_permutation("perm", perm)?;
        check_offsets("jd_ptr", jd_ptr, jd_ptr.len().max(1), nnz)?;
        let mut prev_len = nrows;
        for d in 0..jd_ptr.len() - 1 {
            let len = jd_ptr[d + 1].to_usize() - jd_ptr[d].to_usize();
            if len == 0 {
                return Err(FormatError::EmptyDiagonal { diag: d });
            }
            if len > prev_len {
                return Err(if d == 0 {
                    FormatError::DiagonalTooLong {
                        diag: d,
                        len,
                        nrows,
                    }
                } else {
                    FormatError::DiagonalGrowth {
                        diag: d,
                        len,
                        prev_len,
                    }
                });
            }
            prev_len = len;
        }
        let lens = sorted_lengths(jd_ptr, nrows);
        if let Some(p) = (1..nrows).find(|&p| lens[p] == lens[p - 1] && perm[p] < perm[p - 1]) {
            return Err(FormatError::RowOrderTie { pos: p });
        }
        first_error(nrows, nnz, |p| {
            let cols = (0..lens[p]).map(|d| col_idx[jd_ptr[d].to_usize() + p]);
            check_row_cols(perm[p].to_usize(), cols, ncols)
        })?;
        Ok(self)
    }

    accessors! {
        is_mapped;
        /// Builds a JDS matrix without checking.
        ///
        /// # Safety
        /// The caller guarantees every invariant listed on [`Jds`]; SpMV kernels
        /// rely on them without bounds checks.
        unsafe from_parts_unchecked(
            nrows: usize, ncols: usize, perm: Vec<I>,
            jd_ptr: Vec<I>, col_idx: Vec<I>, values: Vec<T>,
        );
        /// Sorted position → original row (`nrows`).
        perm: [I];
        /// Jagged diagonal offsets (`max_row_len + 1`).
        jd_ptr: [I];
        /// Values, diagonal by diagonal (`nnz`).
        values: [T];
        /// Column indices, diagonal by diagonal (`nnz`).
        col_idx: [I];
        /// Number of stored entries.
        nnz = values.len();
        /// Hands the arrays back: `(nrows, ncols, perm, jd_ptr, col_idx, values)`.
        into_parts(nrows: usize, ncols: usize, perm: Vec<I>, jd_ptr: Vec<I>, col_idx: Vec<I>, values: Vec<T>);
    }
    /// Number of jagged diagonals (= length of the longest row).
    #[inline]
    #[must_use]
    pub fn num_diagonals(&self) -> usize {
        self.jd_ptr.len() - 1
    }
    /// Number of entries in jagged diagonal `d` (= rows longer than `d`).
    #[inline]
    #[must_use]
    pub fn diagonal_len(&self, d: usize) -> usize {
        self.jd_ptr[d + 1].to_usize() - self.jd_ptr[d].to_usize()
    }
    /// Length of the row at sorted position `p`.
    #[must_use]
    pub fn sorted_row_len(&self, p: usize) -> usize {
        // Diagonal lengths never grow: binary search the first one <= p.
        let (mut lo, mut hi) = (0, self.num_diagonals());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.diagonal_len(mid) > p {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
    /// Lengths of all rows in sorted order (non-increasing).
    #[must_use]
    pub fn row_lengths_sorted(&self) -> Vec<usize> {
        sorted_lengths(&self.jd_ptr, self.nrows)
    }

    /// `y = A x`: blocks of sorted rows in parallel (rayon), diagonal by
    /// diagonal, then a scatter through `perm`. Entries of a row are added
    /// in ascending column order, so the result is bitwise equal to
    /// [`crate::Csr::spmv`].
    ///
    /// # Panics
    /// If `x.len() != ncols` or `y.len() != nrows`.
    pub fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_spmv_lens(x, y, self.nrows, self.ncols);
        let mut ys = vec![T::zero(); self.nrows];
        ys.par_chunks_mut(SPMV_CHUNK)
            .enumerate()
            .for_each(|(b, yb)| {
                let p0 = b * SPMV_CHUNK;
                for d in 0..self.num_diagonals() {
                    let dl = self.diagonal_len(d);
                    if dl <= p0 {
                        break;
                    }
                    let base = self.jd_ptr[d].to_usize();
                    let end = dl.min(p0 + yb.len());
                    for p in p0..end {
                        yb[p - p0] += self.values[base + p] * x[self.col_idx[base + p].to_usize()];
                    }
                }
            });
        let mut inv = vec![0usize; self.nrows];
        for (p, r) in self.perm.iter().enumerate() {
            inv[r.to_usize()] = p;
        }
        y.par_iter_mut()
            .zip(inv.par_iter())
            .with_min_len(SPMV_CHUNK)
            .for_each(|(yi, &p)| {
                *yi = ys[p];
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Parts = (Vec<i32>, Vec<i32>, Vec<i32>, Vec<f64>);
    // Seed B.
    fn seed_b() -> Parts {
        (
            vec![1, 0, 2, 3],
            vec![0, 4, 7, 8],
            vec![0, 0, 1, 3, 2, 2, 2, 3],
            vec![5., 1., 2., 6., 3., 7., 8., 9.],
        )
    }
    fn build(p: Parts) -> Result<Jds<f64, i32>, FormatError> {
        Jds::try_from_parts(4, 4, p.0, p.1, p.2, p.3)
    }

    #[test]
    fn valid_spmv() {
        let j = build(seed_b()).unwrap();
        assert_eq!(j.row_lengths_sorted(), [3, 2, 2, 1]);
        assert_eq!(j.sorted_row_len(3), 1);
        let mut y = vec![0.0; 4];
        j.spmv(&[1.0; 4], &mut y);
        assert_eq!(y, [8.0, 17.0, 10.0, 6.0]);
    }

    #[test]
    fn each_invariant() {
        let mut p = seed_b();
        p.0 = vec![1, 0, 2, 2];
        assert!(matches!(build(p), Err(FormatError::Permutation { .. })));
        let mut p = seed_b();
        p.1 = vec![0, 4, 4, 7, 8];
        assert!(matches!(
            build(p),
            Err(FormatError::EmptyDiagonal { diag: 1 })
        ));
        let mut p = seed_b();
        p.1 = vec![0, 3, 7, 8];
        assert!(matches!(
            build(p),
            Err(FormatError::DiagonalGrowth {
                diag: 1,
                len: 4,
                ..
            })
        ));
        let mut p = seed_b();
        p.1 = vec![0, 8];
        p.0 = vec![0, 1, 2, 3];
        assert!(matches!(
            Jds::try_from_parts(4, 4, p.0, p.1, p.2, p.3),
            Err(FormatError::DiagonalTooLong {
                diag: 0,
                len: 8,
                nrows: 4
            })
        ));
        let mut p = seed_b();
        p.1 = vec![1, 4, 7, 8];
        assert!(matches!(build(p), Err(FormatError::PointerStart { .. })));
        let mut p = seed_b();
        p.2[7] = 1; // row 1's third column goes below its second
        assert!(matches!(build(p), Err(FormatError::UnsortedRow { row: 1 })));
        let mut p = seed_b();
        p.2[4] = 0;
        assert!(matches!(
            build(p),
            Err(FormatError::DuplicateEntry { row: 1, col: 0 })
        ));
        let mut p = seed_b();
        p.2[7] = 4;
        assert!(matches!(
            build(p),
            Err(FormatError::ColumnOutOfBounds { row: 1, col: 4, .. })
        ));
        let mut p = seed_b();
        p.3.pop();
        assert!(matches!(
            build(p),
            Err(FormatError::Length {
                array: "col_idx",
                ..
            })
        ));
    }
}
