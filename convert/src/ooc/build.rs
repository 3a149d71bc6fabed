//! One bucket of majors (rows of CSR, columns of CSC) built in memory:
//! a counting sort by major over the bucket file (read twice: counts,
//! then placement), then per major a stable sort by minor and a
//! left-to-right sum of duplicates — [`crate::rows::sort_sum_row`], the
//! kernel of the in-memory COO → CSR, so the bytes are the same.

use std::path::Path;

use sparsetool_formats::{Index, Scalar};

use super::scatter::read_records;
use super::OocError;
use crate::rows::sort_sum_row;
use crate::util::ix;

/// The rows `lo..hi` of a bucket, compressed.
pub(super) struct Built<T, I> {
    /// `ptr[r]`: the end of major `lo + r`, counted from the start of the
    /// whole matrix (`base` entries before the bucket).
    pub(super) ptr: Vec<I>,
    pub(super) idx: Vec<I>,
    pub(super) vals: Vec<T>,
}

/// Builds the majors `lo..hi` from the `n` records of `path`; `base`
/// entries come before them in the output.
pub(super) fn build<T: Scalar, I: Index>(
    path: &Path,
    (lo, hi): (usize, usize),
    n: usize,
    base: usize,
    chunk: usize,
) -> Result<Built<T, I>, OocError> {
    let rows = hi - lo;
    let mut start = vec![0usize; rows + 1];
    read_records::<T, I>(path, chunk, |major, _, _| {
        start[major.to_usize() - lo + 1] += 1;
        Ok(())
    })?;
    for r in 0..rows {
        start[r + 1] += start[r];
    }
    if start[rows] != n {
        return Err(OocError::Internal(format!(
            "{}: {} records read back, {n} written",
            path.display(),
            start[rows]
        )));
    }
    let mut next = start[..rows].to_vec();
    let mut idx = vec![I::default(); n];
    let mut vals = vec![T::zero(); n];
    read_records::<T, I>(path, chunk, |major, minor, v| {
        let p = &mut next[major.to_usize() - lo];
        idx[*p] = minor;
        vals[*p] = v;
        *p += 1;
        Ok(())
    })?;
    drop(next);
    let mut ptr = Vec::with_capacity(rows);
    let mut scratch = Vec::new();
    let mut w = 0;
    for r in 0..rows {
        let (a, b) = (start[r], start[r + 1]);
        let k = sort_sum_row(&mut idx[a..b], &mut vals[a..b], &mut scratch);
        if w != a {
            idx.copy_within(a..a + k, w);
            vals.copy_within(a..a + k, w);
        }
        w += k;
        ptr.push(ix(base + w));
    }
    idx.truncate(w);
    vals.truncate(w);
    Ok(Built { ptr, idx, vals })
}
