//! Per-row (and per-slice) kernels. Serial and parallel conversions call
//! exactly these functions; they differ only in how rows are grouped into
//! blocks, so their outputs are identical.

use sparsetool_formats::{Index, Scalar};

use crate::util::Scatter;

/// Rows up to this long are sorted by insertion sort in place.
const INSERTION_MAX: usize = 32;

/// Sorts one row by column (stable: duplicates keep their input order) and
/// sums duplicates left to right. The unique entries end up at the front;
/// returns their count. `scratch` is reused across rows (no allocation per
/// row once it has grown to the longest unsorted row; rows over 32 entries
/// use the standard library's stable sort, which may take a temporary
/// buffer of its own for rows over a few hundred entries).
pub(crate) fn sort_sum_row<T: Scalar, I: Index>(
    cols: &mut [I],
    vals: &mut [T],
    scratch: &mut Vec<(I, T)>,
) -> usize {
    let len = cols.len();
    if len <= INSERTION_MAX {
        for i in 1..len {
            let (c, v) = (cols[i], vals[i]);
            let mut j = i;
            while j > 0 && cols[j - 1] > c {
                cols[j] = cols[j - 1];
                vals[j] = vals[j - 1];
                j -= 1;
            }
            cols[j] = c;
            vals[j] = v;
        }
    } else if cols.windows(2).any(|w| w[0] > w[1]) {
        scratch.clear();
        scratch.extend(cols.iter().copied().zip(vals.iter().copied()));
        // Stable: equal columns keep their order, so duplicates are summed
        // in input order.
        scratch.sort_by_key(|e| e.0);
        for (k, (c, v)) in scratch.iter().enumerate() {
            cols[k] = *c;
            vals[k] = *v;
        }
    }
    // Most rows have no duplicate: leave them untouched.
    let Some(first) = (1..len).find(|&i| cols[i] == cols[i - 1]) else {
        return len;
    };
    let mut w = first;
    for i in first..len {
        if cols[w - 1] == cols[i] {
            let v = vals[i];
            vals[w - 1] += v;
        } else {
            cols[w] = cols[i];
            vals[w] = vals[i];
            w += 1;
        }
    }
    w
}

/// Writes row `i` of a slot-major layout with `stride` rows: entries into
/// slots `0..len`, the padding index into slots `len..width` (padding
/// values are left as allocated: zero).
///
/// # Safety
/// No other task writes the slots of row `i` (`i + s * stride`).
#[inline]
pub(crate) unsafe fn fill_slotted_row<T: Scalar, I: Index>(
    i: usize,
    stride: usize,
    width: usize,
    cols: &[I],
    vals: &[T],
    out_c: &Scatter<'_, I>,
    out_v: &Scatter<'_, T>,
) {
    for (s, (c, v)) in cols.iter().zip(vals).enumerate() {
        // SAFETY: slots of row `i` belong to this task (caller).
        unsafe {
            out_c.write(s * stride + i, *c);
            out_v.write(s * stride + i, *v);
        }
    }
    for s in cols.len()..width {
        // SAFETY: as above.
        unsafe { out_c.write(s * stride + i, I::PADDING) };
    }
}

/// Writes the row at sorted position `p` of a JDS layout: entry `d` goes to
/// `jd_ptr[d] + p`.
///
/// # Safety
/// No other task writes the entries of sorted position `p`.
#[inline]
pub(crate) unsafe fn fill_jds_row<T: Scalar, I: Index>(
    p: usize,
    jd_ptr: &[I],
    cols: &[I],
    vals: &[T],
    out_c: &Scatter<'_, I>,
    out_v: &Scatter<'_, T>,
) {
    for (d, (c, v)) in cols.iter().zip(vals).enumerate() {
        let at = jd_ptr[d].to_usize() + p;
        // SAFETY: position `p` of every diagonal belongs to this task.
        unsafe {
            out_c.write(at, *c);
            out_v.write(at, *v);
        }
    }
}

/// Fills one SELL slice (slot-major, `c` rows, `width` slots per row) from
/// the rows `rows` (fewer than `c` in the last slice: the rest is padding).
/// `row(r)` returns the columns and values of original row `r`.
pub(crate) fn fill_sell_slice<'a, T: Scalar, I: Index>(
    c: usize,
    width: usize,
    rows: &[I],
    row: impl Fn(usize) -> (&'a [I], &'a [T]),
    out_c: &mut [I],
    out_v: &mut [T],
) {
    if width == 0 {
        // No slots (and a huge slice height must not cost a loop).
        return;
    }
    for k in 0..c {
        let (cols, vals) = match rows.get(k) {
            Some(r) => row(r.to_usize()),
            None => (&[][..], &[][..]),
        };
        for (j, (cc, v)) in cols.iter().zip(vals).enumerate() {
            out_c[j * c + k] = *cc;
            out_v[j * c + k] = *v;
        }
        for j in cols.len()..width {
            out_c[j * c + k] = I::PADDING;
        }
    }
}

/// Gathers one CSR row from a strided layout: entry `s` is at
/// `base + s * stride` of `cols`/`vals`.
#[inline]
pub(crate) fn gather_row<T: Scalar, I: Index>(
    base: usize,
    stride: usize,
    cols: &[I],
    vals: &[T],
    out_c: &mut [I],
    out_v: &mut [T],
) {
    for (s, (oc, ov)) in out_c.iter_mut().zip(out_v.iter_mut()).enumerate() {
        *oc = cols[base + s * stride];
        *ov = vals[base + s * stride];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_and_sum() {
        let mut scratch = Vec::new();
        let mut c = vec![3i32, 1, 3, 0];
        let mut v = vec![1.0f64, 2.0, 4.0, 8.0];
        let n = sort_sum_row(&mut c, &mut v, &mut scratch);
        assert_eq!((&c[..n], &v[..n]), (&[0, 1, 3][..], &[8.0, 2.0, 5.0][..]));
        // Long unsorted row with duplicates.
        let mut c: Vec<i32> = (0..100).rev().chain(0..100).collect();
        let mut v: Vec<f64> = (0..200).map(f64::from).collect();
        let n = sort_sum_row(&mut c, &mut v, &mut scratch);
        assert_eq!(n, 100);
        assert_eq!(c[..3], [0, 1, 2]);
        assert_eq!(v[0], 99.0 + 100.0);
    }
}
