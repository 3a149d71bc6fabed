//! A matrix in any format: [`AnyMatrix`] owns it, [`MatrixRef`] borrows it.
//!
//! These two enums are the only place where "one of the seven formats" is
//! spelled out; readers return an [`AnyMatrix`], writers and GPU uploads take
//! a [`MatrixRef`], and code that does the same thing for every format calls
//! their methods instead of matching.

use crate::{Coo, Csc, Csr, Ell, FormatKind, Hyb, Index, Jds, Scalar, Sell};

/// A sparse matrix in one of the seven formats, owned.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyMatrix<T, I> {
    /// Coordinate triplets.
    Coo(Coo<T, I>),
    /// Compressed sparse row.
    Csr(Csr<T, I>),
    /// ELLPACK.
    Ell(Ell<T, I>),
    /// ELL part plus a COO tail.
    Hyb(Hyb<T, I>),
    /// Jagged diagonals.
    Jds(Jds<T, I>),
    /// SELL-C-σ.
    Sell(Sell<T, I>),
    /// Compressed sparse column.
    Csc(Csc<T, I>),
}

/// A sparse matrix in one of the seven formats, borrowed.
#[derive(Debug, Clone, Copy)]
pub enum MatrixRef<'a, T, I> {
    /// Coordinate triplets.
    Coo(&'a Coo<T, I>),
    /// Compressed sparse row.
    Csr(&'a Csr<T, I>),
    /// ELLPACK.
    Ell(&'a Ell<T, I>),
    /// ELL part plus a COO tail.
    Hyb(&'a Hyb<T, I>),
    /// Jagged diagonals.
    Jds(&'a Jds<T, I>),
    /// SELL-C-σ.
    Sell(&'a Sell<T, I>),
    /// Compressed sparse column.
    Csc(&'a Csc<T, I>),
}

/// Applies `$e` to the matrix inside any variant of either enum.
macro_rules! each {
    ($enum:ident, $self:expr, $m:ident => $e:expr) => {
        match $self {
            $enum::Coo($m) => $e,
            $enum::Csr($m) => $e,
            $enum::Ell($m) => $e,
            $enum::Hyb($m) => $e,
            $enum::Jds($m) => $e,
            $enum::Sell($m) => $e,
            $enum::Csc($m) => $e,
        }
    };
}

/// `nrows`, `ncols` and `nnz` from `shape()`, for both enums (a macro: the
/// two impl blocks are otherwise identical).
macro_rules! shape_accessors {
    () => {
        /// Number of rows.
        #[must_use]
        pub fn nrows(&self) -> usize {
            self.shape().0
        }
        /// Number of columns.
        #[must_use]
        pub fn ncols(&self) -> usize {
            self.shape().1
        }
        /// Number of stored entries (padding excluded; COO duplicates counted).
        #[must_use]
        pub fn nnz(&self) -> usize {
            self.shape().2
        }
    };
}

impl<T: Scalar, I: Index> MatrixRef<'_, T, I> {
    /// The format.
    #[must_use]
    pub fn kind(&self) -> FormatKind {
        match self {
            MatrixRef::Coo(_) => FormatKind::Coo,
            MatrixRef::Csr(_) => FormatKind::Csr,
            MatrixRef::Ell(_) => FormatKind::Ell,
            MatrixRef::Hyb(_) => FormatKind::Hyb,
            MatrixRef::Jds(_) => FormatKind::Jds,
            MatrixRef::Sell(_) => FormatKind::Sell,
            MatrixRef::Csc(_) => FormatKind::Csc,
        }
    }

    /// `(nrows, ncols, nnz)`.
    #[must_use]
    pub fn shape(&self) -> (usize, usize, usize) {
        each!(MatrixRef, self, m => (m.nrows(), m.ncols(), m.nnz()))
    }

    shape_accessors!();

    /// Whether the arrays are read in place from a memory-mapped `.spb`
    /// file rather than owned (see [`crate::binary::SpbFile::to_matrix`]).
    #[must_use]
    pub fn is_mapped(&self) -> bool {
        each!(MatrixRef, self, m => m.is_mapped())
    }

    /// `y = A x` with the format's own CPU kernel (parallel, except COO).
    ///
    /// # Panics
    /// If `x.len() != ncols` or `y.len() != nrows`.
    pub fn spmv(&self, x: &[T], y: &mut [T]) {
        each!(MatrixRef, self, m => m.spmv(x, y));
    }

    /// `y = Aᵀ x` on the CPU, in the stored format (`x` has `nrows`
    /// entries, `y` has `ncols`): CSC by the CSR kernel on its arrays (one
    /// dot product per column, parallel), CSR by a parallel row scatter
    /// ([`Csr::spmv_transpose`]); the other formats scatter every stored
    /// entry `y[col] += value * x[row]` on the calling thread (COO
    /// duplicates contribute their sum).
    ///
    /// ```
    /// use sparsetool_formats::{Coo, MatrixRef};
    /// // [[1 2]
    /// //  [0 3]]
    /// let a = Coo::<f64, i32>::try_from_parts(2, 2, vec![0, 0, 1], vec![0, 1, 1], vec![1.0, 2.0, 3.0])?;
    /// let mut y = vec![0.0; 2];
    /// MatrixRef::Coo(&a).spmv_transpose(&[1.0, 10.0], &mut y);
    /// assert_eq!(y, [1.0, 32.0]);
    /// # Ok::<(), sparsetool_formats::FormatError>(())
    /// ```
    ///
    /// # Panics
    /// If `x.len() != nrows` or `y.len() != ncols`.
    pub fn spmv_transpose(&self, x: &[T], y: &mut [T]) {
        match *self {
            MatrixRef::Csr(m) => m.spmv_transpose(x, y),
            MatrixRef::Csc(m) => m.spmv_transpose(x, y),
            other => {
                crate::pattern::assert_spmv_lens(x, y, other.ncols(), other.nrows());
                y.iter_mut().for_each(|v| *v = T::zero());
                other.for_each_entry(|r, c, v| y[c] += v * x[r]);
            }
        }
    }

    /// Every stored entry `(row, col, value)` (padding skipped), in the
    /// format's storage order.
    pub fn for_each_entry(&self, mut f: impl FnMut(usize, usize, T)) {
        match *self {
            MatrixRef::Coo(m) => coo_entries(m, &mut f),
            MatrixRef::Csc(m) => {
                for c in 0..m.ncols() {
                    let (rows, vals) = m.col(c);
                    for (r, &v) in rows.iter().zip(vals) {
                        f(r.to_usize(), c, v);
                    }
                }
            }
            MatrixRef::Csr(m) => {
                for r in 0..m.nrows() {
                    let (cols, vals) = m.row(r);
                    for (c, &v) in cols.iter().zip(vals) {
                        f(r, c.to_usize(), v);
                    }
                }
            }
            MatrixRef::Ell(m) => ell_entries(m, &mut f),
            MatrixRef::Hyb(m) => {
                ell_entries(m.ell(), &mut f);
                coo_entries(m.coo(), &mut f);
            }
            MatrixRef::Jds(m) => {
                // Diagonal d holds entry d of each of its rows, rows in
                // `perm` order: `jd_ptr[d]..jd_ptr[d + 1]`.
                for w in m.jd_ptr().windows(2) {
                    let (s, e) = (w[0].to_usize(), w[1].to_usize());
                    for ((r, c), &v) in m
                        .perm()
                        .iter()
                        .zip(&m.col_idx()[s..e])
                        .zip(&m.values()[s..e])
                    {
                        f(r.to_usize(), c.to_usize(), v);
                    }
                }
            }
            MatrixRef::Sell(m) => {
                let c = m.slice_height();
                let (ptr, cols, vals) = (m.slice_ptr(), m.col_idx(), m.values());
                for s in 0..m.num_slices() {
                    for k in ptr[s].to_usize()..ptr[s + 1].to_usize() {
                        if cols[k] != I::PADDING {
                            let p = s * c + (k - ptr[s].to_usize()) % c;
                            f(m.perm()[p].to_usize(), cols[k].to_usize(), vals[k]);
                        }
                    }
                }
            }
        }
    }

    /// The entries as a COO matrix sorted by (row, column): the order a
    /// CSR of the same matrix lists them in. Used to write the GPU layouts
    /// as Matrix Market without the conversion crate.
    #[must_use]
    pub fn to_sorted_coo(&self) -> Coo<T, I> {
        let mut e: Vec<(usize, usize, T)> = Vec::with_capacity(self.nnz());
        self.for_each_entry(|r, c, v| e.push((r, c, v)));
        if !matches!(self, MatrixRef::Csr(_)) {
            use rayon::slice::ParallelSliceMut;
            e.par_sort_by_key(|&(r, c, _)| (r, c));
        }
        let rows = e.iter().map(|t| I::from_usize_unchecked(t.0)).collect();
        let cols = e.iter().map(|t| I::from_usize_unchecked(t.1)).collect();
        let vals = e.iter().map(|t| t.2).collect();
        // SAFETY: every (row, col) comes from a validated matrix of the same
        // shape, so each index is in range and fits `I`.
        unsafe { Coo::from_parts_unchecked(self.nrows(), self.ncols(), rows, cols, vals) }
    }
}

fn coo_entries<T: Scalar, I: Index>(m: &Coo<T, I>, f: &mut impl FnMut(usize, usize, T)) {
    for ((r, c), &v) in m.rows().iter().zip(m.cols()).zip(m.values()) {
        f(r.to_usize(), c.to_usize(), v);
    }
}

fn ell_entries<T: Scalar, I: Index>(m: &Ell<T, I>, f: &mut impl FnMut(usize, usize, T)) {
    let n = m.nrows();
    for (r, len) in m.row_nnz().iter().enumerate() {
        for k in 0..len.to_usize() {
            f(r, m.col_idx()[k * n + r].to_usize(), m.values()[k * n + r]);
        }
    }
}

impl<T: Scalar, I: Index> AnyMatrix<T, I> {
    /// Borrows the matrix.
    #[must_use]
    pub fn as_ref(&self) -> MatrixRef<'_, T, I> {
        MatrixRef::from(self)
    }
    /// The format of the matrix.
    #[must_use]
    pub fn kind(&self) -> FormatKind {
        self.as_ref().kind()
    }
    /// `(nrows, ncols, nnz)`.
    #[must_use]
    pub fn shape(&self) -> (usize, usize, usize) {
        self.as_ref().shape()
    }

    shape_accessors!();

    /// Whether the arrays are read in place from a memory-mapped `.spb`
    /// file rather than owned (see [`crate::binary::SpbFile::to_matrix`]).
    #[must_use]
    pub fn is_mapped(&self) -> bool {
        self.as_ref().is_mapped()
    }

    /// `y = A x` with the format's own CPU kernel (parallel, except COO).
    ///
    /// # Panics
    /// If `x.len() != ncols` or `y.len() != nrows`.
    pub fn spmv(&self, x: &[T], y: &mut [T]) {
        self.as_ref().spmv(x, y);
    }

    /// `y = Aᵀ x` on the CPU ([`MatrixRef::spmv_transpose`]).
    ///
    /// # Panics
    /// If `x.len() != nrows` or `y.len() != ncols`.
    pub fn spmv_transpose(&self, x: &[T], y: &mut [T]) {
        self.as_ref().spmv_transpose(x, y);
    }
}

impl<'a, T, I> From<&'a AnyMatrix<T, I>> for MatrixRef<'a, T, I> {
    fn from(m: &'a AnyMatrix<T, I>) -> Self {
        match m {
            AnyMatrix::Coo(m) => MatrixRef::Coo(m),
            AnyMatrix::Csr(m) => MatrixRef::Csr(m),
            AnyMatrix::Ell(m) => MatrixRef::Ell(m),
            AnyMatrix::Hyb(m) => MatrixRef::Hyb(m),
            AnyMatrix::Jds(m) => MatrixRef::Jds(m),
            AnyMatrix::Sell(m) => MatrixRef::Sell(m),
            AnyMatrix::Csc(m) => MatrixRef::Csc(m),
        }
    }
}

macro_rules! wrap {
    ($($t:ident),*) => {$(
        impl<T, I> From<$t<T, I>> for AnyMatrix<T, I> {
            fn from(m: $t<T, I>) -> Self {
                AnyMatrix::$t(m)
            }
        }
        impl<'a, T, I> From<&'a $t<T, I>> for MatrixRef<'a, T, I> {
            fn from(m: &'a $t<T, I>) -> Self {
                MatrixRef::$t(m)
            }
        }
    )*};
}
wrap!(Coo, Csr, Ell, Hyb, Jds, Sell, Csc);
