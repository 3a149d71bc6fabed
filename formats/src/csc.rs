//! Compressed sparse column format, stored as the CSR of the transpose.

use rayon::prelude::*;

use crate::pattern::{assert_spmv_lens, checked_constructors};
use crate::{Csr, FormatError, Index, Scalar};

/// A sparse matrix in compressed sparse column (CSC) format.
///
/// # Format
/// - `col_ptr`: `ncols + 1` offsets; column `j` holds entries
///   `col_ptr[j]..col_ptr[j+1]`;
/// - `row_idx`, `values`: `nnz` row indices and values.
///
/// These are exactly the arrays of the CSR of the transpose: CSC of `A`
/// (`nrows x ncols`) is CSR of `Aᵀ` (`ncols x nrows`) with `row_ptr` read as
/// `col_ptr` and `col_idx` as `row_idx`. The type stores that [`Csr`] and
/// hands it out without a copy ([`Csc::transposed`],
/// [`Csc::from_transposed`]): conversions, `y = Aᵀ x` and the GPU kernels
/// reuse the CSR code on it.
///
/// # Invariants (always checked by [`Csc::try_from_parts`])
/// The rules of [`Csr`] with rows and columns swapped:
/// - `col_ptr` has `ncols + 1` entries, starts at 0, never decreases, ends
///   at `nnz`;
/// - `row_idx` and `values` have `nnz` entries;
/// - within a column, row indices are strictly ascending (sorted, no
///   duplicates) and below `nrows`.
///
/// This is SciPy's canonical `csc_matrix` (`has_canonical_format`).
///
/// ```
/// use sparsetool_formats::{Csc, Csr};
/// // [[1 0 2]
/// //  [0 3 0]]
/// let a = Csc::<f64, i32>::try_from_parts(2, 3, vec![0, 1, 2, 3], vec![0, 1, 0], vec![1.0, 3.0, 2.0])?;
/// let mut y = vec![0.0; 2];
/// a.spmv(&[1.0, 10.0, 100.0], &mut y);
/// assert_eq!(y, [201.0, 30.0]);
/// // The same arrays are the CSR of the 3 x 2 transpose.
/// let t: &Csr<f64, i32> = a.transposed();
/// assert_eq!((t.nrows(), t.ncols(), t.row_ptr()), (3, 2, &[0, 1, 2, 3][..]));
/// # Ok::<(), sparsetool_formats::FormatError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Csc<T, I> {
    /// CSR of the transpose (`ncols x nrows`).
    t: Csr<T, I>,
}

/// Renames a CSR error of the transpose into the terms of CSC: arrays
/// `row_ptr`/`col_idx` become `col_ptr`/`row_idx`, rows become columns.
fn csc_error(e: FormatError) -> FormatError {
    let array = |a: &'static str| match a {
        "row_ptr" => "col_ptr",
        "col_idx" => "row_idx",
        other => other,
    };
    match e {
        FormatError::Length {
            array: a,
            expected,
            actual,
        } => FormatError::Length {
            array: array(a),
            expected,
            actual,
        },
        FormatError::PointerStart { array: a, found } => FormatError::PointerStart {
            array: array(a),
            found,
        },
        FormatError::PointerNotMonotone {
            array: a,
            pos,
            prev,
            next,
        } => FormatError::PointerNotMonotone {
            array: array(a),
            pos,
            prev,
            next,
        },
        FormatError::PointerEnd {
            array: a,
            expected,
            found,
        } => FormatError::PointerEnd {
            array: array(a),
            expected,
            found,
        },
        FormatError::ColumnOutOfBounds { row, col, ncols } => FormatError::RowIndexOutOfBounds {
            col: row,
            row: col,
            nrows: ncols,
        },
        FormatError::UnsortedRow { row } => FormatError::UnsortedColumn { col: row },
        FormatError::DuplicateEntry { row, col } => {
            FormatError::DuplicateEntry { row: col, col: row }
        }
        FormatError::IndexOverflow { what, value, index } => FormatError::IndexOverflow {
            what: match what {
                "nrows" => "ncols",
                "ncols" => "nrows",
                other => other,
            },
            value,
            index,
        },
        other => other,
    }
}

impl<T: Scalar, I: Index> Csc<T, I> {
    checked_constructors! {
        /// Builds a CSC matrix after checking every invariant (in parallel for
        /// large matrices; the checks of [`Csr::try_from_parts`] on the
        /// transpose, reported in CSC terms).
        ///
        /// # Errors
        /// The first broken invariant: [`FormatError::Length`] (`row_idx`),
        /// [`FormatError::PointerStart`], [`FormatError::PointerNotMonotone`],
        /// [`FormatError::PointerEnd`] (all naming `col_ptr`),
        /// [`FormatError::RowIndexOutOfBounds`], [`FormatError::UnsortedColumn`],
        /// [`FormatError::DuplicateEntry`], [`FormatError::IndexOverflow`].
        ///
        /// ```
        /// use sparsetool_formats::{Csc, FormatError};
        /// let err = Csc::<f64, i32>::try_from_parts(3, 1, vec![0, 2], vec![2, 0], vec![1.0; 2]);
        /// assert_eq!(err, Err(FormatError::UnsortedColumn { col: 0 }));
        /// let err = Csc::<f64, i32>::try_from_parts(2, 1, vec![0, 1], vec![2], vec![1.0]);
        /// assert!(matches!(err, Err(FormatError::RowIndexOutOfBounds { col: 0, row: 2, nrows: 2 })));
        /// ```
        try_from_parts(nrows, ncols; col_ptr: I, row_idx: I, values: T);
    }

    /// As [`Csc::try_from_parts`], from [`Buffer`](crate::buffer::Buffer)s:
    /// owned arrays, or sections of a mapped `.spb` file used in place.
    ///
    /// # Errors
    /// As [`Csc::try_from_parts`].
    pub fn try_from_buffers(
        nrows: usize,
        ncols: usize,
        col_ptr: crate::buffer::Buffer<I>,
        row_idx: crate::buffer::Buffer<I>,
        values: crate::buffer::Buffer<T>,
    ) -> Result<Self, FormatError> {
        let t = Csr::try_from_buffers(ncols, nrows, col_ptr, row_idx, values).map_err(csc_error)?;
        Ok(Self { t })
    }

    /// Builds a CSC matrix without checking.
    ///
    /// # Safety
    /// The caller guarantees every invariant listed on [`Csc`]; SpMV kernels
    /// index `x`, `y` and `values` with these arrays without bounds checks.
    #[must_use]
    pub unsafe fn from_parts_unchecked(
        nrows: usize,
        ncols: usize,
        col_ptr: Vec<I>,
        row_idx: Vec<I>,
        values: Vec<T>,
    ) -> Self {
        // SAFETY: the invariants of CSC are those of CSR on the transpose.
        let t = unsafe { Csr::from_parts_unchecked(ncols, nrows, col_ptr, row_idx, values) };
        Self { t }
    }

    /// An empty `nrows x ncols` matrix (all columns empty).
    #[must_use]
    pub fn empty(nrows: usize, ncols: usize) -> Self {
        Self {
            t: Csr::empty(ncols, nrows),
        }
    }

    /// The CSC of `A` whose arrays are those of `t`, the CSR of `Aᵀ` (no
    /// copy): `A` has `t.ncols()` rows and `t.nrows()` columns.
    ///
    /// ```
    /// use sparsetool_formats::{Csc, Csr};
    /// let t = Csr::<f64, i32>::try_from_parts(1, 2, vec![0, 2], vec![0, 1], vec![5.0, 6.0])?;
    /// let a = Csc::from_transposed(t);
    /// assert_eq!((a.nrows(), a.ncols(), a.col_ptr()), (2, 1, &[0, 2][..]));
    /// # Ok::<(), sparsetool_formats::FormatError>(())
    /// ```
    #[must_use]
    pub fn from_transposed(t: Csr<T, I>) -> Self {
        Self { t }
    }

    /// The arrays read as the CSR of `Aᵀ` (`ncols x nrows`), borrowed.
    #[inline]
    #[must_use]
    pub fn transposed(&self) -> &Csr<T, I> {
        &self.t
    }

    /// The arrays as the CSR of `Aᵀ`, consuming the matrix (no copy).
    #[must_use]
    pub fn into_transposed(self) -> Csr<T, I> {
        self.t
    }

    /// Whether the arrays are read in place from a memory-mapped `.spb`
    /// file (opened with the file's own index and value types) rather than
    /// owned.
    #[must_use]
    pub fn is_mapped(&self) -> bool {
        self.t.is_mapped()
    }

    /// Number of rows.
    #[inline]
    #[must_use]
    pub fn nrows(&self) -> usize {
        self.t.ncols()
    }
    /// Number of columns.
    #[inline]
    #[must_use]
    pub fn ncols(&self) -> usize {
        self.t.nrows()
    }
    /// Number of stored entries.
    #[inline]
    #[must_use]
    pub fn nnz(&self) -> usize {
        self.t.nnz()
    }
    /// Column offsets (`ncols + 1`).
    #[inline]
    #[must_use]
    pub fn col_ptr(&self) -> &[I] {
        self.t.row_ptr()
    }
    /// Row indices (`nnz`).
    #[inline]
    #[must_use]
    pub fn row_idx(&self) -> &[I] {
        self.t.col_idx()
    }
    /// Values (`nnz`).
    #[inline]
    #[must_use]
    pub fn values(&self) -> &[T] {
        self.t.values()
    }
    /// Mutable values (the structure stays valid whatever is written).
    #[inline]
    pub fn values_mut(&mut self) -> &mut [T] {
        self.t.values_mut()
    }
    /// Hands the arrays back: `(nrows, ncols, col_ptr, row_idx, values)`.
    #[must_use]
    pub fn into_parts(self) -> (usize, usize, Vec<I>, Vec<I>, Vec<T>) {
        let (ncols, nrows, col_ptr, row_idx, values) = self.t.into_parts();
        (nrows, ncols, col_ptr, row_idx, values)
    }
    /// Number of entries in column `j`.
    #[inline]
    #[must_use]
    pub fn col_len(&self, j: usize) -> usize {
        self.t.row_len(j)
    }
    /// Row indices and values of column `j`.
    #[inline]
    #[must_use]
    pub fn col(&self, j: usize) -> (&[I], &[T]) {
        self.t.row(j)
    }

    /// `y = A x`: every column scattered into `y` (see `scatter_spmv`'s
    /// parallel split; the result does not depend on the thread count).
    ///
    /// # Panics
    /// If `x.len() != ncols` or `y.len() != nrows`.
    pub fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_spmv_lens(x, y, self.nrows(), self.ncols());
        scatter_spmv(self.col_ptr(), self.row_idx(), self.values(), x, y);
    }

    /// `y = Aᵀ x`: the CSR SpMV of the transpose (one column per task, each
    /// a dot product; `x` has `nrows` entries, `y` has `ncols`).
    ///
    /// # Panics
    /// If `x.len() != nrows` or `y.len() != ncols`.
    pub fn spmv_transpose(&self, x: &[T], y: &mut [T]) {
        self.t.spmv(x, y);
    }
}

/// Entries per part of [`scatter_spmv`]'s parallel split.
const SCATTER_PART: usize = 1 << 16;
/// Most parts of [`scatter_spmv`] (each holds a private `y`).
const SCATTER_MAX_PARTS: usize = 32;

/// `y = Sᵀ x` for a compressed structure `S` (`ptr`, `idx`, `vals`): for
/// each outer index `o`, `y[idx[k]] += vals[k] * x[o]` over its entries —
/// CSC's `y = A x`, and CSR's `y = Aᵀ x`.
///
/// Parallel without atomics: the outer range is cut into parts of about
/// equal entries, each part scatters into its own zeroed copy of `y`, and
/// the copies are added element-wise in part order. The number of parts
/// depends on the matrix alone (at most [`SCATTER_MAX_PARTS`], at least
/// [`SCATTER_PART`] entries each, and no more than `2 nnz / y.len()`, so the
/// copies cost less than the entries), hence the same bits on any thread
/// count.
///
/// The caller checks `x.len() == ptr.len() - 1`; `ptr`, `idx` must be a
/// valid structure with indices below `y.len()`.
pub(crate) fn scatter_spmv<T: Scalar, I: Index>(
    ptr: &[I],
    idx: &[I],
    vals: &[T],
    x: &[T],
    y: &mut [T],
) {
    let outer = ptr.len().saturating_sub(1);
    let (nnz, n) = (idx.len(), y.len());
    let scatter = |o0: usize, o1: usize, out: &mut [T]| {
        for (o, &xo) in x.iter().enumerate().take(o1).skip(o0) {
            let (s, e) = (ptr[o].to_usize(), ptr[o + 1].to_usize());
            for (i, v) in idx[s..e].iter().zip(&vals[s..e]) {
                out[i.to_usize()] += *v * xo;
            }
        }
    };
    let parts = (nnz / SCATTER_PART)
        .clamp(1, SCATTER_MAX_PARTS)
        .min((2 * (nnz / n.max(1))).max(1));
    if parts == 1 {
        y.iter_mut().for_each(|v| *v = T::zero());
        scatter(0, outer, y);
        return;
    }
    // cuts[p]: the first outer index whose entries start at or after part
    // p's share; the last cut is `outer`.
    let mut cuts: Vec<usize> = (0..parts)
        .map(|p| {
            let target = (nnz as u128 * p as u128 / parts as u128) as usize;
            ptr[..outer].partition_point(|v| v.to_usize() < target)
        })
        .collect();
    cuts.push(outer);
    let partial: Vec<Vec<T>> = (0..parts)
        .into_par_iter()
        .map(|p| {
            let mut out = vec![T::zero(); n];
            scatter(cuts[p], cuts[p + 1], &mut out);
            out
        })
        .collect();
    y.par_iter_mut()
        .enumerate()
        .with_min_len(4096)
        .for_each(|(i, yi)| {
            let mut acc = T::zero();
            for part in &partial {
                acc += part[i];
            }
            *yi = acc;
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(nrows: usize, ncols: usize, ptr: Vec<i32>, idx: Vec<i32>, nvals: usize) -> FormatError {
        Csc::<f64, i32>::try_from_parts(nrows, ncols, ptr, idx, vec![1.0; nvals])
            .expect_err("invalid CSC")
    }

    /// Every rejection path of `try_from_parts`, named in CSC terms.
    #[test]
    fn invariants() {
        // 3 x 2: column 0 holds rows 0 and 2, column 1 holds row 1.
        let ok = Csc::<f64, i32>::try_from_parts(3, 2, vec![0, 2, 3], vec![0, 2, 1], vec![1.0; 3]);
        assert!(ok.is_ok());
        assert_eq!(
            err(3, 2, vec![0, 2, 3], vec![0, 2], 3),
            FormatError::Length {
                array: "row_idx",
                expected: 3,
                actual: 2
            }
        );
        assert!(matches!(
            err(3, 2, vec![0, 2], vec![0, 2, 1], 3),
            FormatError::Length {
                array: "col_ptr",
                expected: 3,
                actual: 2
            }
        ));
        assert!(matches!(
            err(3, 2, vec![1, 2, 3], vec![0, 2, 1], 3),
            FormatError::PointerStart {
                array: "col_ptr",
                found: 1
            }
        ));
        assert!(matches!(
            err(3, 2, vec![0, 3, 2], vec![0, 2, 1], 3),
            FormatError::PointerNotMonotone {
                array: "col_ptr",
                pos: 2,
                ..
            }
        ));
        assert!(matches!(
            err(3, 2, vec![0, 2, 2], vec![0, 2, 1], 3),
            FormatError::PointerEnd {
                array: "col_ptr",
                expected: 3,
                found: 2
            }
        ));
        assert_eq!(
            err(3, 2, vec![0, 2, 3], vec![0, 3, 1], 3),
            FormatError::RowIndexOutOfBounds {
                col: 0,
                row: 3,
                nrows: 3
            }
        );
        assert_eq!(
            err(3, 2, vec![0, 2, 3], vec![0, 2, -1], 3),
            FormatError::RowIndexOutOfBounds {
                col: 1,
                row: -1,
                nrows: 3
            }
        );
        assert_eq!(
            err(3, 2, vec![0, 2, 3], vec![2, 0, 1], 3),
            FormatError::UnsortedColumn { col: 0 }
        );
        assert_eq!(
            err(3, 2, vec![0, 1, 3], vec![0, 1, 1], 3),
            FormatError::DuplicateEntry { row: 1, col: 1 }
        );
        assert!(matches!(
            Csc::<f64, i32>::try_from_parts(1usize << 40, 1, vec![0, 0], vec![], vec![]),
            Err(FormatError::IndexOverflow { what: "nrows", .. })
        ));
        assert!(matches!(
            Csc::<f64, i32>::try_from_parts(1, 1usize << 40, vec![0, 0], vec![], vec![]),
            Err(FormatError::IndexOverflow { what: "ncols", .. })
        ));
    }

    #[test]
    fn accessors_and_parts() {
        let a = Csc::<f64, i64>::try_from_parts(
            3,
            2,
            vec![0, 2, 3],
            vec![0, 2, 1],
            vec![1.0, 2.0, 3.0],
        )
        .unwrap();
        assert_eq!((a.nrows(), a.ncols(), a.nnz()), (3, 2, 3));
        assert_eq!(a.col(0), (&[0i64, 2][..], &[1.0, 2.0][..]));
        assert_eq!(a.col_len(1), 1);
        let t = a.transposed();
        assert_eq!((t.nrows(), t.ncols()), (2, 3));
        assert_eq!(Csc::from_transposed(t.clone()), a);
        assert_eq!(
            a.clone().into_parts(),
            (3, 2, vec![0, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0])
        );
        let e = Csc::<f64, i32>::empty(4, 2);
        assert_eq!((e.nrows(), e.ncols(), e.col_ptr()), (4, 2, &[0, 0, 0][..]));
    }

    /// Dense reference of `y = A x` and `y = Aᵀ x`.
    fn dense_products(a: &Csc<f64, i32>, x: &[f64], xt: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let (mut y, mut yt) = (vec![0.0; a.nrows()], vec![0.0; a.ncols()]);
        for j in 0..a.ncols() {
            let (rows, vals) = a.col(j);
            for (r, v) in rows.iter().zip(vals) {
                y[*r as usize] += v * x[j];
                yt[j] += v * xt[*r as usize];
            }
        }
        (y, yt)
    }

    /// Small and large (multi-part) matrices: both products against a
    /// naive loop, and the same bits with 1 and 3 threads.
    #[test]
    fn spmv_both_ways() {
        for (nrows, ncols, per_col) in [(0, 0, 0), (3, 5, 2), (2_000, 40_000, 9), (50, 30_000, 20)]
        {
            let mut state = 7u64;
            let mut rnd = |m: usize| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                ((state >> 33) as usize) % m.max(1)
            };
            let (mut ptr, mut idx, mut val) = (vec![0i32], Vec::new(), Vec::new());
            for _ in 0..ncols {
                let mut rows: Vec<i32> = (0..per_col).map(|_| rnd(nrows) as i32).collect();
                rows.sort_unstable();
                rows.dedup();
                for r in rows {
                    idx.push(r);
                    val.push(rnd(17) as f64 / 8.0 - 1.0);
                }
                ptr.push(idx.len() as i32);
            }
            let a = Csc::try_from_parts(nrows, ncols, ptr, idx, val).unwrap();
            let x: Vec<f64> = (0..ncols).map(|j| 1.0 / (j as f64 + 1.3)).collect();
            let xt: Vec<f64> = (0..nrows).map(|i| 1.0 / (i as f64 + 2.1)).collect();
            let (y_ref, yt_ref) = dense_products(&a, &x, &xt);
            let run = |threads: usize| {
                sparsetool_fixtures::support::in_pool(threads, || {
                    let (mut y, mut yt) = (vec![f64::NAN; nrows], vec![f64::NAN; ncols]);
                    a.spmv(&x, &mut y);
                    a.spmv_transpose(&xt, &mut yt);
                    (y, yt)
                })
            };
            let (y, yt) = run(3);
            assert_eq!(run(1), (y.clone(), yt.clone()));
            for (u, v) in y.iter().zip(&y_ref).chain(yt.iter().zip(&yt_ref)) {
                assert!((u - v).abs() <= 1e-12 * (1.0 + v.abs()), "{u} vs {v}");
            }
        }
    }
}
