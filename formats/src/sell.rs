//! Sliced ELL with sorting windows, SELL-C-σ (Kreutzer, Hager, Wellein,
//! Fehske & Bishop, "A unified sparse matrix data format for efficient
//! general sparse matrix-vector multiplication on modern processors with
//! wide SIMD units", SIAM J. Sci. Comput. 36(5), 2014).

use rayon::prelude::*;

use crate::buffer::Buffer;
use crate::ell::check_padded_row;
use crate::pattern::{
    accessors, assert_spmv_lens, check_entry_arrays, check_len, check_offsets, check_permutation,
    PAR_THRESHOLD,
};
use crate::{FormatError, Index, Scalar};

/// A sparse matrix in SELL-C-σ format (sliced ELL with row sorting inside
/// windows of σ rows).
///
/// Rows are first sorted by descending length (stable) inside consecutive
/// windows of `sigma` original rows, then cut into slices of
/// `slice_height` (C) sorted rows. Each slice is an ELL block of its own
/// width (its longest row), stored slot-major.
///
/// # Format
/// - `slice_height` (C) and `sigma` (σ): parameters;
/// - `perm`: `nrows` entries, sorted position → original row;
/// - `slice_width`: `nslices = ceil(nrows / C)` widths;
/// - `slice_ptr`: `nslices + 1` offsets; slice `s` occupies
///   `slice_ptr[s]..slice_ptr[s+1]`, exactly `C * slice_width[s]` slots,
///   **including the last slice** (its missing rows are all padding);
/// - `col_idx`, `values`: the slots. Inside slice `s`, slot `j` of the row
///   at sorted position `s * C + k` is at `slice_ptr[s] + j * C + k`.
///
/// A row's entries come first in ascending column order; padding slots
/// follow, holding value zero and column index [`Index::PADDING`] (`-1`).
/// Row lengths are not stored: a row ends at its first padding slot.
/// Slices are packed back to back: no alignment padding beyond the last
/// slice's missing rows.
///
/// # Parameters
/// `sigma` must be 1 (no sorting: `perm` is the identity) or a multiple of
/// C. A multiple of C makes every slice fall inside one window, so a slice
/// never mixes rows of two windows and the layout is the same whether a
/// window is processed alone or with the others. The defaults are
/// C = [`Sell::DEFAULT_SLICE_HEIGHT`] = 32 (one warp; CUDA row-per-thread
/// kernels read a slice coalesced) and σ = [`Sell::default_sigma`]`(C)` =
/// 32·C = 1024 rows: a row moves at most σ − 1 positions, so the output
/// vector and the columns touched by neighbouring slices stay close
/// together (the locality that a full sort, σ = nrows, destroys), while 32
/// slices' worth of rows is enough to group rows of similar length and cut
/// most of the padding on irregular matrices (Kreutzer et al. report that
/// σ of a few hundred to a few thousand rows keeps most of the benefit of
/// sorting).
///
/// # Invariants (always checked by [`Sell::try_from_parts`])
/// - `slice_height >= 1`; `sigma == 1` or `sigma` a positive multiple of
///   `slice_height` ([`FormatError::Parameter`]);
/// - `perm` is a permutation of `0..nrows`, and maps each window of σ
///   sorted positions onto the same window of original rows
///   ([`FormatError::Permutation`], [`FormatError::PermutationWindow`]);
/// - `slice_width` has `nslices` entries; `slice_ptr` has `nslices + 1`,
///   starts at 0, never decreases and ends at the number of slots; each
///   slice spans `C * slice_width[s]` slots ([`FormatError::Length`],
///   pointer errors, [`FormatError::SliceSize`]); the slot count fits the
///   index type;
/// - each row's entries have strictly ascending columns below `ncols`;
///   padding is trailing, with index `-1` and value zero
///   ([`FormatError::ColumnOutOfBounds`], [`FormatError::UnsortedRow`],
///   [`FormatError::DuplicateEntry`], [`FormatError::Padding`]; rows are
///   reported by original index, the padding rows of the last slice by
///   sorted position);
/// - `slice_width[s]` is the length of the slice's longest row
///   ([`FormatError::SliceWidth`]);
/// - inside a window, lengths never increase ([`FormatError::RowOrder`])
///   and rows of equal length keep their original order
///   ([`FormatError::RowOrderTie`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Sell<T, I> {
    nrows: usize,
    ncols: usize,
    slice_height: usize,
    sigma: usize,
    nnz: usize,
    perm: Buffer<I>,
    slice_ptr: Buffer<I>,
    slice_width: Buffer<I>,
    col_idx: Buffer<I>,
    values: Buffer<T>,
}

/// Checks SELL parameters: `slice_height >= 1`, `sigma == 1` or a positive
/// multiple of `slice_height`.
///
/// # Errors
/// [`FormatError::Parameter`] naming the bad value.
pub fn check_sell_params(slice_height: usize, sigma: usize) -> Result<(), FormatError> {
    if slice_height == 0 {
        return Err(FormatError::Parameter(
            "SELL slice height must be at least 1".into(),
        ));
    }
    if sigma == 0 || (sigma != 1 && sigma % slice_height != 0) {
        return Err(FormatError::Parameter(format!(
            "SELL sigma must be 1 or a positive multiple of the slice height {slice_height}, got {sigma}"
        )));
    }
    Ok(())
}

impl<T: Scalar, I: Index> Sell<T, I> {
    /// Default slice height C: one CUDA warp.
    pub const DEFAULT_SLICE_HEIGHT: usize = 32;
    /// Default sorting window, in slices (σ = 32 · C).
    pub const DEFAULT_SIGMA_SLICES: usize = 32;

    /// Default σ for slice height `c`: `32 * c` (see the type's docs for why).
    #[must_use]
    pub fn default_sigma(c: usize) -> usize {
        c.saturating_mul(Self::DEFAULT_SIGMA_SLICES)
    }

    /// Builds a SELL-C-σ matrix after checking every invariant.
    ///
    /// # Errors
    /// The first broken invariant: see the list on [`Sell`].
    ///
    /// ```
    /// use sparsetool_formats::{FormatError, Sell};
    /// // sigma = 3 is not a multiple of C = 2.
    /// let err = Sell::<f64, i32>::try_from_parts(0, 0, 2, 3, vec![], vec![0], vec![], vec![], vec![]);
    /// assert!(matches!(err, Err(FormatError::Parameter(_))));
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn try_from_parts(
        nrows: usize,
        ncols: usize,
        slice_height: usize,
        sigma: usize,
        perm: Vec<I>,
        slice_ptr: Vec<I>,
        slice_width: Vec<I>,
        col_idx: Vec<I>,
        values: Vec<T>,
    ) -> Result<Self, FormatError> {
        let index = [perm, slice_ptr, slice_width, col_idx].map(Buffer::from);
        Self::try_from_buffers(nrows, ncols, slice_height, sigma, index, values.into())
    }

    /// As [`Sell::try_from_parts`], from [`Buffer`]s: owned arrays, or
    /// sections of a mapped `.spb` file used in place. `index` holds
    /// `[perm, slice_ptr, slice_width, col_idx]`.
    ///
    /// # Errors
    /// As [`Sell::try_from_parts`].
    pub fn try_from_buffers(
        nrows: usize,
        ncols: usize,
        slice_height: usize,
        sigma: usize,
        index: [Buffer<I>; 4],
        values: Buffer<T>,
    ) -> Result<Self, FormatError> {
        let [perm, slice_ptr, slice_width, col_idx] = index;
        check_sell_params(slice_height, sigma)?;
        let c = slice_height;
        let slots = check_entry_arrays::<I>(nrows, ncols, &col_idx, values.len())?;
        let nslices = nrows.div_ceil(c);
        check_len("perm", nrows, perm.len())?;
        check_permutation("perm", &perm)?;
        if let Some(pos) = (0..nrows).find(|&p| perm[p].to_usize() / sigma != p / sigma) {
            let window_start = pos / sigma * sigma;
            return Err(FormatError::PermutationWindow {
                pos,
                row: perm[pos].to_usize(),
                window_start,
                window_end: (window_start + sigma).min(nrows),
            });
        }
        check_len("slice_width", nslices, slice_width.len())?;
        check_offsets("slice_ptr", &slice_ptr, nslices + 1, slots)?;
        for s in 0..nslices {
            let found = slice_ptr[s + 1].to_usize() - slice_ptr[s].to_usize();
            let expected = c.saturating_mul(slice_width[s].to_usize());
            if found != expected {
                return Err(FormatError::SliceSize {
                    slice: s,
                    expected,
                    found,
                });
            }
        }
        // Row lengths by sorted position (padding rows of the last slice
        // included), checking each row's slots on the way.
        // Lengths of the real rows; the padding rows of the last slice are
        // checked but not stored (a slice of width 0 has nothing to check,
        // so a huge slice height costs nothing).
        let mut lens = vec![0usize; nrows];
        let check_slice = |s: usize, ls: &mut [usize]| -> Result<(), FormatError> {
            let base = slice_ptr[s].to_usize();
            let w = slice_width[s].to_usize();
            for (k, len) in ls.iter_mut().enumerate() {
                let start = base + k;
                *len = (0..w)
                    .take_while(|&j| col_idx[start + j * c] != I::PADDING)
                    .count();
                let row = perm[s * c + k].to_usize();
                check_padded_row(row, *len, w, start, c, &col_idx, &values, ncols)?;
            }
            if w > 0 {
                // Missing rows of the last slice are padding only; `c * w`
                // slots exist, so this loop is bounded by the data.
                for k in ls.len()..c {
                    let p = s * c + k;
                    check_padded_row(p, 0, w, base + k, c, &col_idx, &values, ncols)?;
                }
            }
            let longest = ls.iter().copied().max().unwrap_or(0);
            if longest != w {
                return Err(FormatError::SliceWidth {
                    slice: s,
                    width: slice_width[s].to_i64(),
                    longest,
                });
            }
            Ok(())
        };
        let first = if slots > PAR_THRESHOLD {
            lens.par_chunks_mut(c)
                .enumerate()
                .with_min_len(64)
                .filter_map(|(s, ls)| check_slice(s, ls).err().map(|e| (s, e)))
                .min_by_key(|(s, _)| *s)
                .map(|(_, e)| e)
        } else {
            lens.chunks_mut(c)
                .enumerate()
                .find_map(|(s, ls)| check_slice(s, ls).err())
        };
        if let Some(e) = first {
            return Err(e);
        }
        for p in 1..nrows {
            if p % sigma == 0 {
                continue;
            }
            if lens[p] > lens[p - 1] {
                return Err(FormatError::RowOrder { pos: p });
            }
            if lens[p] == lens[p - 1] && perm[p] < perm[p - 1] {
                return Err(FormatError::RowOrderTie { pos: p });
            }
        }
        let nnz = lens.iter().sum();
        Ok(Self {
            nrows,
            ncols,
            slice_height,
            sigma,
            nnz,
            perm,
            slice_ptr,
            slice_width,
            col_idx,
            values,
        })
    }

    accessors! {
        is_mapped;
        /// Builds a SELL-C-σ matrix without checking.
        ///
        /// # Safety
        /// The caller guarantees every invariant listed on [`Sell`] and that
        /// `nnz` is the number of non-padding slots; SpMV kernels rely on them
        /// without bounds checks.
        #[allow(clippy::too_many_arguments)]
        unsafe from_parts_unchecked(
            nrows: usize, ncols: usize, slice_height: usize, sigma: usize, nnz: usize,
            perm: Vec<I>, slice_ptr: Vec<I>, slice_width: Vec<I>, col_idx: Vec<I>, values: Vec<T>,
        );
        /// Number of stored entries (padding excluded).
        nnz: usize;
        /// Slice height C.
        slice_height: usize;
        /// Sorting window σ.
        sigma: usize;
        /// Sorted position → original row (`nrows`).
        perm: [I];
        /// Slice offsets (`nslices + 1`).
        slice_ptr: [I];
        /// Slice widths (`nslices`).
        slice_width: [I];
        /// Values, slot-major inside each slice.
        values: [T];
        /// Column indices, slot-major inside each slice (`-1` marks padding).
        col_idx: [I];
        /// Number of slots, padding included.
        slots = values.len();
        /// Number of slices (`ceil(nrows / C)`).
        num_slices = slice_width.len();
        /// Hands the arrays back:
        /// `(nrows, ncols, slice_height, sigma, perm, slice_ptr, slice_width, col_idx, values)`.
        #[allow(clippy::type_complexity)]
        into_parts(
            nrows: usize, ncols: usize, slice_height: usize, sigma: usize,
            perm: Vec<I>, slice_ptr: Vec<I>, slice_width: Vec<I>, col_idx: Vec<I>, values: Vec<T>
        );
    }

    /// `y = A x`: slices in parallel (rayon), slot by slot, then a scatter
    /// through `perm`. Entries of a row are added in ascending column
    /// order, so the result is bitwise equal to [`crate::Csr::spmv`].
    ///
    /// # Panics
    /// If `x.len() != ncols` or `y.len() != nrows`.
    pub fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_spmv_lens(x, y, self.nrows, self.ncols);
        let c = self.slice_height;
        let mut ys = vec![T::zero(); self.nrows];
        let min_len = (1024 / c).max(1);
        ys.par_chunks_mut(c)
            .enumerate()
            .with_min_len(min_len)
            .for_each(|(s, yb)| {
                let base = self.slice_ptr[s].to_usize();
                for j in 0..self.slice_width[s].to_usize() {
                    let at = base + j * c;
                    for (k, yi) in yb.iter_mut().enumerate() {
                        let col = self.col_idx[at + k];
                        if col != I::PADDING {
                            *yi += self.values[at + k] * x[col.to_usize()];
                        }
                    }
                }
            });
        let mut inv = vec![0usize; self.nrows];
        for (p, r) in self.perm.iter().enumerate() {
            inv[r.to_usize()] = p;
        }
        y.par_iter_mut()
            .zip(inv.par_iter())
            .with_min_len(1024)
            .for_each(|(yi, &p)| {
                *yi = ys[p];
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Parts = (Vec<i32>, Vec<i32>, Vec<i32>, Vec<i32>, Vec<f64>);
    // Seed C with C = 2, sigma = 4.
    fn seed_c() -> Parts {
        (
            vec![0, 3, 1, 2],
            vec![0, 6, 10],
            vec![3, 2],
            vec![0, 1, 2, 2, 4, 4, 1, 0, 3, -1],
            vec![1., 7., 2., 8., 3., 9., 4., 6., 5., 0.],
        )
    }
    fn build(p: Parts, sigma: usize) -> Result<Sell<f64, i32>, FormatError> {
        Sell::try_from_parts(4, 5, 2, sigma, p.0, p.1, p.2, p.3, p.4)
    }

    #[test]
    fn valid_spmv() {
        let m = build(seed_c(), 4).unwrap();
        assert_eq!((m.nnz(), m.slots(), m.num_slices()), (9, 10, 2));
        let mut y = vec![0.0; 4];
        m.spmv(&[1.0; 5], &mut y);
        assert_eq!(y, [6.0, 9.0, 6.0, 24.0]);
    }

    #[test]
    fn each_invariant() {
        assert!(matches!(build(seed_c(), 3), Err(FormatError::Parameter(_))));
        assert!(matches!(build(seed_c(), 0), Err(FormatError::Parameter(_))));
        assert!(matches!(
            Sell::<f64, i32>::try_from_parts(0, 0, 0, 1, vec![], vec![0], vec![], vec![], vec![]),
            Err(FormatError::Parameter(_))
        ));
        assert!(matches!(
            build(seed_c(), 2),
            Err(FormatError::PermutationWindow {
                pos: 1,
                row: 3,
                window_start: 0,
                window_end: 2
            })
        ));
        let mut p = seed_c();
        p.2 = vec![3, 2, 1];
        assert!(matches!(
            build(p, 4),
            Err(FormatError::Length {
                array: "slice_width",
                ..
            })
        ));
        let mut p = seed_c();
        p.2 = vec![2, 3];
        assert!(matches!(
            build(p, 4),
            Err(FormatError::SliceSize {
                slice: 0,
                expected: 4,
                found: 6
            })
        ));
        let mut p = seed_c();
        p.1 = vec![0, 6, 9];
        assert!(matches!(build(p, 4), Err(FormatError::PointerEnd { .. })));
        let mut p = seed_c();
        p.3[4] = 1; // row 0: columns 0, 2, 1
        assert!(matches!(
            build(p, 4),
            Err(FormatError::UnsortedRow { row: 0 })
        ));
        let mut p = seed_c();
        p.3[9] = 4; // row 2 gets a second entry (4, 6): column 4 after 0 is fine, value 0
        p.3[8] = 0; // row 1: columns 1, 0
        assert!(matches!(
            build(p, 4),
            Err(FormatError::UnsortedRow { row: 1 })
        ));
        let mut p = seed_c();
        p.4[9] = 1.0;
        assert!(matches!(
            build(p, 4),
            Err(FormatError::Padding { row: 2, .. })
        ));
        let mut p = seed_c();
        p.3[8] = 5;
        assert!(matches!(
            build(p, 4),
            Err(FormatError::ColumnOutOfBounds { row: 1, col: 5, .. })
        ));
        // Row 1 ends early: the slice is wider than its longest row.
        let p: Parts = (
            vec![0, 3, 1, 2],
            vec![0, 6, 12],
            vec![3, 3],
            vec![0, 1, 2, 2, 4, 4, 1, 0, 3, -1, -1, -1],
            vec![1., 7., 2., 8., 3., 9., 4., 6., 5., 0., 0., 0.],
        );
        assert!(matches!(
            build(p, 4),
            Err(FormatError::SliceWidth {
                slice: 1,
                width: 3,
                longest: 2
            })
        ));
        // Rows 1 and 2 swapped: ascending length.
        let p: Parts = (
            vec![0, 3, 2, 1],
            vec![0, 6, 10],
            vec![3, 2],
            vec![0, 1, 2, 2, 4, 4, 0, 1, -1, 3],
            vec![1., 7., 2., 8., 3., 9., 6., 4., 0., 5.],
        );
        assert!(matches!(build(p, 4), Err(FormatError::RowOrder { pos: 3 })));
        // Rows 3 and 0 swapped: equal lengths out of order.
        let p: Parts = (
            vec![3, 0, 1, 2],
            vec![0, 6, 10],
            vec![3, 2],
            vec![1, 0, 2, 2, 4, 4, 1, 0, 3, -1],
            vec![7., 1., 8., 2., 9., 3., 4., 6., 5., 0.],
        );
        assert!(matches!(
            build(p, 4),
            Err(FormatError::RowOrderTie { pos: 1 })
        ));
        // A padding row in the last slice holding an entry.
        let m = Sell::<f64, i32>::try_from_parts(
            1,
            2,
            2,
            1,
            vec![0],
            vec![0, 2],
            vec![1],
            vec![0, 1],
            vec![1.0, 1.0],
        );
        assert!(matches!(m, Err(FormatError::Padding { row: 1, .. })));
    }

    #[test]
    fn huge_slice_height_costs_nothing() {
        let m = Sell::<f64, i32>::try_from_parts(
            1,
            1,
            1 << 60,
            1,
            vec![0],
            vec![0, 0],
            vec![0],
            vec![],
            vec![],
        )
        .unwrap();
        let mut y = vec![1.0];
        m.spmv(&[1.0], &mut y);
        assert_eq!(y, [0.0]);
    }
}
