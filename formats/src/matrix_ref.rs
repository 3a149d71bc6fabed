//! A borrowed matrix in any format: what writers and GPU uploads take.

use crate::{Coo, Csr, Ell, FormatKind, Hyb, Index, Jds, Scalar, Sell};

/// A borrowed matrix in any of sparsetool's formats.
#[derive(Debug, Clone, Copy)]
pub enum MatrixRef<'a, T, I> {
    /// Coordinate triplets.
    Coo(&'a Coo<T, I>),
    /// Compressed sparse row.
    Csr(&'a Csr<T, I>),
    /// ELLPACK.
    Ell(&'a Ell<T, I>),
    /// ELL + COO tail.
    Hyb(&'a Hyb<T, I>),
    /// Jagged diagonals.
    Jds(&'a Jds<T, I>),
    /// SELL-C-sigma.
    Sell(&'a Sell<T, I>),
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
        }
    }

    /// `(nrows, ncols, nnz)`.
    #[must_use]
    pub fn shape(&self) -> (usize, usize, usize) {
        match self {
            MatrixRef::Coo(m) => (m.nrows(), m.ncols(), m.nnz()),
            MatrixRef::Csr(m) => (m.nrows(), m.ncols(), m.nnz()),
            MatrixRef::Ell(m) => (m.nrows(), m.ncols(), m.nnz()),
            MatrixRef::Hyb(m) => (m.nrows(), m.ncols(), m.nnz()),
            MatrixRef::Jds(m) => (m.nrows(), m.ncols(), m.nnz()),
            MatrixRef::Sell(m) => (m.nrows(), m.ncols(), m.nnz()),
        }
    }
}
