//! Shared checks for compressed structures: offset (pointer) arrays and
//! permutations. CSR, JDS and SELL validate their pointer arrays with
//! [`check_offsets`]; JDS and SELL check their row permutations with
//! [`check_permutation`].

use rayon::prelude::*;

use crate::{FormatError, Index};

/// Entries above which checks run in parallel.
pub(crate) const PAR_THRESHOLD: usize = 1 << 16;

/// Checks that `ptr` has `len` elements, starts at 0, never decreases and
/// ends at `total`.
///
/// # Errors
/// The first broken invariant, as a [`FormatError`].
pub fn check_offsets<I: Index>(
    array: &'static str,
    ptr: &[I],
    len: usize,
    total: usize,
) -> Result<(), FormatError> {
    if ptr.len() != len {
        return Err(FormatError::Length {
            array,
            expected: len,
            actual: ptr.len(),
        });
    }
    if len == 0 {
        return Ok(());
    }
    if ptr[0].to_i64() != 0 {
        return Err(FormatError::PointerStart {
            array,
            found: ptr[0].to_i64(),
        });
    }
    let bad = |w: &[I]| w[0] > w[1];
    let pos = if ptr.len() > PAR_THRESHOLD {
        ptr.par_windows(2).position_first(bad)
    } else {
        ptr.windows(2).position(bad)
    };
    if let Some(pos) = pos {
        return Err(FormatError::PointerNotMonotone {
            array,
            pos: pos + 1,
            prev: ptr[pos].to_i64(),
            next: ptr[pos + 1].to_i64(),
        });
    }
    let last = ptr[len - 1].to_i64();
    if last < 0 || last as u64 != total as u64 {
        return Err(FormatError::PointerEnd {
            array,
            expected: total,
            found: last,
        });
    }
    Ok(())
}

/// Checks that `perm` is a permutation of `0..perm.len()`.
///
/// # Errors
/// [`FormatError::Permutation`] naming the first offending position.
pub fn check_permutation<I: Index>(array: &'static str, perm: &[I]) -> Result<(), FormatError> {
    let n = perm.len();
    let mut seen = vec![false; n];
    for (pos, &p) in perm.iter().enumerate() {
        let v = p.to_usize();
        if v >= n {
            return Err(FormatError::Permutation {
                array,
                n,
                detail: format!("value {} at position {pos} is out of range", p.to_i64()),
            });
        }
        if std::mem::replace(&mut seen[v], true) {
            return Err(FormatError::Permutation {
                array,
                n,
                detail: format!("value {v} appears twice (again at position {pos})"),
            });
        }
    }
    Ok(())
}

/// Checks that every row of a compressed structure holds strictly ascending
/// column indices below `ncols`. `ptr` must already be valid.
pub(crate) fn check_rows<I: Index>(ptr: &[I], col: &[I], ncols: usize) -> Result<(), FormatError> {
    let check_row = |row: usize| -> Result<(), FormatError> {
        let (s, e) = (ptr[row].to_usize(), ptr[row + 1].to_usize());
        let cols = &col[s..e];
        // Fast path: strictly ascending columns lie in bounds when the first
        // is >= 0 and the last < ncols; the pairwise test has no early exit,
        // so it vectorises. Only a failing row takes the precise scan below.
        let ascending = cols.windows(2).fold(true, |ok, w| ok & (w[0] < w[1]));
        let in_bounds = cols.first().is_none_or(|f| f.to_i64() >= 0)
            && cols.last().is_none_or(|l| l.to_usize() < ncols);
        if ascending && in_bounds {
            return Ok(());
        }
        let mut prev: Option<usize> = None;
        for &c in cols {
            let cu = c.to_usize();
            if cu >= ncols {
                return Err(FormatError::ColumnOutOfBounds {
                    row,
                    col: c.to_i64(),
                    ncols,
                });
            }
            if let Some(p) = prev {
                if cu == p {
                    return Err(FormatError::DuplicateEntry { row, col: cu });
                }
                if cu < p {
                    return Err(FormatError::UnsortedRow { row });
                }
            }
            prev = Some(cu);
        }
        Ok(())
    };
    let nrows = ptr.len().saturating_sub(1);
    if col.len() > PAR_THRESHOLD {
        // Report the first bad row deterministically.
        let first = (0..nrows)
            .into_par_iter()
            .with_min_len(1024)
            .filter_map(|r| check_row(r).err().map(|e| (r, e)))
            .min_by_key(|(r, _)| *r);
        match first {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    } else {
        (0..nrows).try_for_each(check_row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets() {
        assert!(check_offsets::<i32>("p", &[0, 2, 2, 5], 4, 5).is_ok());
        assert!(matches!(
            check_offsets::<i32>("p", &[1, 2], 2, 2),
            Err(FormatError::PointerStart { .. })
        ));
        assert!(matches!(
            check_offsets::<i32>("p", &[0, 3, 2], 3, 2),
            Err(FormatError::PointerNotMonotone { pos: 2, .. })
        ));
        assert!(matches!(
            check_offsets::<i32>("p", &[0, 3], 2, 4),
            Err(FormatError::PointerEnd { .. })
        ));
        assert!(matches!(
            check_offsets::<i32>("p", &[0], 2, 0),
            Err(FormatError::Length { .. })
        ));
    }

    #[test]
    fn permutation() {
        assert!(check_permutation::<i32>("perm", &[2, 0, 1]).is_ok());
        assert!(check_permutation::<i32>("perm", &[2, 0, 2]).is_err());
        assert!(check_permutation::<i64>("perm", &[-1, 0]).is_err());
    }
}
