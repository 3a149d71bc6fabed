//! Row-length sources: the structure `analyze` works on.
//!
//! A [`RowLengths`] holds the number of entries of every row and of every
//! column, nothing else. It comes from a loaded matrix
//! ([`RowLengths::from_csr`], [`RowLengths::from_row_ptr`],
//! [`RowLengths::from_coords`]) or from a streaming pass over a Matrix
//! Market file ([`RowLengths::from_mm_path`], see [`stream`]) that
//! never builds the matrix.

pub mod stream;

pub use stream::read_row_lengths;

use sparsetool_formats::{Coo, Csr, Index, Scalar};

use crate::AnalyzeError;

/// Entries per row and per column of a sparse matrix.
///
/// Counts are `u32`: a single row or column holding more than 2^32 − 1
/// entries is refused ([`AnalyzeError::CountOverflow`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowLengths {
    /// Number of rows.
    pub nrows: usize,
    /// Number of columns.
    pub ncols: usize,
    /// Entries of each row (`nrows` counts).
    pub rows: Vec<u32>,
    /// Entries of each column (`ncols` counts).
    pub cols: Vec<u32>,
}

#[cfg(test)]
impl RowLengths {
    /// Test input from the two count vectors (`nrows` and `ncols` are their
    /// lengths).
    pub(crate) fn of_counts(rows: Vec<u32>, cols: Vec<u32>) -> Self {
        Self {
            nrows: rows.len(),
            ncols: cols.len(),
            rows,
            cols,
        }
    }
}

fn count_u32(what: &'static str, v: usize) -> Result<u32, AnalyzeError> {
    u32::try_from(v).map_err(|_| AnalyzeError::CountOverflow {
        what,
        count: v as u64,
    })
}

fn bump(counts: &mut [u32], i: usize, what: &'static str) -> Result<(), AnalyzeError> {
    let c = &mut counts[i];
    *c = c.checked_add(1).ok_or(AnalyzeError::CountOverflow {
        what,
        count: u64::from(u32::MAX) + 1,
    })?;
    Ok(())
}

impl RowLengths {
    /// Row and column lengths of a CSR matrix (its invariants guarantee
    /// valid indices, so this cannot fail except on counts over 2^32 − 1).
    ///
    /// # Errors
    /// [`AnalyzeError::CountOverflow`].
    pub fn from_csr<T: Scalar, I: Index>(a: &Csr<T, I>) -> Result<Self, AnalyzeError> {
        Self::from_row_ptr(a.nrows(), a.ncols(), a.row_ptr(), a.col_idx())
    }

    /// Row and column lengths of a COO matrix (duplicates are counted as
    /// stored; a CSR built from it sums them).
    ///
    /// # Errors
    /// [`AnalyzeError::CountOverflow`].
    pub fn from_coo<T: Scalar, I: Index>(a: &Coo<T, I>) -> Result<Self, AnalyzeError> {
        Self::from_coords(a.nrows(), a.ncols(), a.rows(), a.cols())
    }

    /// Row and column lengths from raw compressed-row arrays: `row_ptr`
    /// (`nrows + 1` offsets) and `col_idx`.
    ///
    /// # Errors
    /// [`AnalyzeError::BadStructure`] if `row_ptr` has the wrong length, is
    /// not monotone or does not end at `col_idx.len()`, or a column is out
    /// of range; [`AnalyzeError::CountOverflow`].
    pub fn from_row_ptr<I: Index>(
        nrows: usize,
        ncols: usize,
        row_ptr: &[I],
        col_idx: &[I],
    ) -> Result<Self, AnalyzeError> {
        if row_ptr.len() != nrows + 1 {
            return Err(AnalyzeError::BadStructure(format!(
                "row_ptr has {} entries, expected nrows + 1 = {}",
                row_ptr.len(),
                nrows + 1
            )));
        }
        let mut rows = Vec::with_capacity(nrows);
        for (i, w) in row_ptr.windows(2).enumerate() {
            let (s, e) = (w[0].to_usize(), w[1].to_usize());
            if e < s || e == usize::MAX {
                return Err(AnalyzeError::BadStructure(format!(
                    "row_ptr decreases or is negative at row {i}"
                )));
            }
            rows.push(count_u32("row length", e - s)?);
        }
        if row_ptr.first().map(|p| p.to_usize()) != Some(0)
            || row_ptr.last().map(|p| p.to_usize()) != Some(col_idx.len())
        {
            return Err(AnalyzeError::BadStructure(format!(
                "row_ptr must start at 0 and end at {} (the number of column indices)",
                col_idx.len()
            )));
        }
        Self::with_columns(nrows, ncols, rows, col_idx)
    }

    /// Row and column lengths from coordinate arrays (one `(row, col)` pair
    /// per stored entry, 0-based).
    ///
    /// # Errors
    /// [`AnalyzeError::BadStructure`] for arrays of different lengths or an
    /// index out of range; [`AnalyzeError::CountOverflow`].
    pub fn from_coords<I: Index>(
        nrows: usize,
        ncols: usize,
        row_idx: &[I],
        col_idx: &[I],
    ) -> Result<Self, AnalyzeError> {
        if row_idx.len() != col_idx.len() {
            return Err(AnalyzeError::BadStructure(format!(
                "{} row indices but {} column indices",
                row_idx.len(),
                col_idx.len()
            )));
        }
        let rows = index_counts(&ROW, nrows, row_idx)?;
        Self::with_columns(nrows, ncols, rows, col_idx)
    }

    /// The row lengths `rows` with the column lengths counted from `col_idx`.
    fn with_columns<I: Index>(
        nrows: usize,
        ncols: usize,
        rows: Vec<u32>,
        col_idx: &[I],
    ) -> Result<Self, AnalyzeError> {
        let cols = index_counts(&COLUMN, ncols, col_idx)?;
        Ok(Self {
            nrows,
            ncols,
            rows,
            cols,
        })
    }

    /// Number of stored entries (sum of the row lengths).
    #[must_use]
    pub fn nnz(&self) -> u64 {
        self.rows.iter().map(|&r| u64::from(r)).sum()
    }

    /// Length of the longest row (0 when there are no rows).
    #[must_use]
    pub fn max_row(&self) -> usize {
        self.rows.iter().copied().max().unwrap_or(0) as usize
    }
}

/// The words of one axis in the messages of [`index_counts`].
struct Axis {
    index: &'static str,
    length: &'static str,
    dim: &'static str,
}

const ROW: Axis = Axis {
    index: "row index",
    length: "row length",
    dim: "nrows",
};

const COLUMN: Axis = Axis {
    index: "column index",
    length: "column length",
    dim: "ncols",
};

/// How many entries of `idx` name each of `0..n` (the lengths of the rows
/// or columns of one axis); an index out of range is an error.
fn index_counts<I: Index>(axis: &Axis, n: usize, idx: &[I]) -> Result<Vec<u32>, AnalyzeError> {
    let mut counts = vec![0u32; n];
    for (k, i) in idx.iter().enumerate() {
        let iu = i.to_usize();
        if iu >= n {
            return Err(AnalyzeError::BadStructure(format!(
                "entry {k}: {} {} is out of range ({} = {n})",
                axis.index,
                i.to_i64(),
                axis.dim
            )));
        }
        bump(&mut counts, iu, axis.length)?;
    }
    Ok(counts)
}

/// Run-length encoding of the row lengths: `(length, rows)` pairs in
/// ascending length order, rows > 0. The compact form every per-format
/// computation that does not depend on row order uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LengthCounts {
    /// `(length, number of rows of that length)`, ascending lengths.
    pub pairs: Vec<(u64, u64)>,
    /// Number of rows.
    pub nrows: u64,
    /// Sum of the lengths.
    pub nnz: u64,
}

impl LengthCounts {
    /// Builds the table from lengths (sorted internally; `O(n log n)`).
    #[must_use]
    pub fn new(lengths: &[u32]) -> Self {
        use rayon::prelude::*;
        let mut sorted = lengths.to_vec();
        sorted.par_sort_unstable();
        Self::from_sorted(&sorted)
    }

    /// Builds the table from lengths already sorted ascending.
    #[must_use]
    pub fn from_sorted(sorted: &[u32]) -> Self {
        let mut pairs: Vec<(u64, u64)> = Vec::new();
        let mut nnz = 0u64;
        for &l in sorted {
            let l = u64::from(l);
            nnz += l;
            match pairs.last_mut() {
                Some((pl, c)) if *pl == l => *c += 1,
                _ => pairs.push((l, 1)),
            }
        }
        Self {
            pairs,
            nrows: sorted.len() as u64,
            nnz,
        }
    }

    /// Longest length (0 when empty).
    #[must_use]
    pub fn max(&self) -> u64 {
        self.pairs.last().map_or(0, |p| p.0)
    }

    /// Rows longer than `k`.
    #[must_use]
    pub fn rows_longer_than(&self, k: u64) -> u64 {
        self.pairs.iter().filter(|p| p.0 > k).map(|p| p.1).sum()
    }

    /// Entries beyond width `k` (what a HYB matrix of width `k` sends to
    /// its COO part): `sum(max(0, len - k))`.
    #[must_use]
    pub fn overflow(&self, k: u64) -> u64 {
        self.pairs
            .iter()
            .filter(|p| p.0 > k)
            .map(|p| (p.0 - k) * p.1)
            .sum()
    }

    /// Entries kept in an ELL part of width `k`: `sum(min(len, k))`.
    #[must_use]
    pub fn kept(&self, k: u64) -> u64 {
        self.nnz - self.overflow(k)
    }
}
