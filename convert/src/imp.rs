//! The conversions, written once for both backends ([`Par`]).
//!
//! Every conversion has the same shape: compute per-row lengths, build the
//! offsets with a serial prefix sum, allocate the output arrays once, then
//! fill disjoint parts of them block by block with the per-row kernels of
//! [`crate::rows`]. Blocks decide only who writes what, never what is
//! written, so the output is the same for any thread count.

use std::cmp::Reverse;

use rayon::prelude::*;
use sparsetool_formats::{Coo, Csc, Csr, Ell, FormatKind, Hyb, Index, Jds, Scalar, Sell};

use crate::params::{check_sell, check_width, slots};
use crate::rows::{fill_jds_row, fill_sell_slice, fill_slotted_row, gather_row};
use crate::util::{
    cuts_into, ix, longer_than, offsets, split_at_offsets, Par, Scatter, MIN_BLOCK_WORK,
};
use crate::{ConvertError, HybWidth, ELL_FILL_MIN_SLOTS, MAX_ELL_FILL};

/// Builds a CSR matrix whose invariants hold by construction.
pub(crate) fn csr<T: Scalar, I: Index>(
    nrows: usize,
    ncols: usize,
    row_ptr: Vec<I>,
    col_idx: Vec<I>,
    values: Vec<T>,
) -> Csr<T, I> {
    // SAFETY: callers build row_ptr from row lengths and fill every row
    // with the sorted unique columns of a valid source matrix.
    unsafe { Csr::from_parts_unchecked(nrows, ncols, row_ptr, col_idx, values) }
}

/// Copies each row of an input in CSR order into `(row_ptr, cols, vals)`:
/// `fill(i, out_cols, out_vals)` writes row `i` (its slices have the row's
/// length).
fn gather_csr<T: Scalar, I: Index>(
    par: Par,
    row_ptr: &[I],
    fill: impl Fn(usize, &mut [I], &mut [T]) + Sync + Send,
) -> (Vec<I>, Vec<T>) {
    gather_blocks(par, row_ptr, &par.row_cuts(row_ptr), fill)
}

/// [`gather_csr`] over any units with offsets `row_ptr` (rows, or slices
/// of SELL), in the blocks of units that `cuts` bounds.
fn gather_blocks<T: Scalar, I: Index>(
    par: Par,
    row_ptr: &[I],
    cuts: &[usize],
    fill: impl Fn(usize, &mut [I], &mut [T]) + Sync + Send,
) -> (Vec<I>, Vec<T>) {
    let nnz = row_ptr.last().map_or(0, |v| v.to_usize());
    let mut cols = vec![I::default(); nnz];
    let mut vals = vec![T::zero(); nnz];
    let at: Vec<usize> = cuts.iter().map(|&r| row_ptr[r].to_usize()).collect();
    let jobs: Vec<_> = cuts
        .windows(2)
        .zip(
            split_at_offsets(&mut cols, &at)
                .into_iter()
                .zip(split_at_offsets(&mut vals, &at)),
        )
        .map(|(w, (c, v))| (w[0], w[1], c, v))
        .collect();
    par.for_each(jobs, |(r0, r1, c, v)| {
        let base = row_ptr[r0].to_usize();
        for i in r0..r1 {
            let (s, e) = (
                row_ptr[i].to_usize() - base,
                row_ptr[i + 1].to_usize() - base,
            );
            fill(i, &mut c[s..e], &mut v[s..e]);
        }
        let done = row_ptr[r1].to_usize() - base;
        sparsetool_formats::progress::CONVERT.add(done as u64);
    });
    (cols, vals)
}

// ---------------------------------------------------------------- CSR -> X

/// The row of every entry of a compressed-row layout with offsets `ptr`
/// (`ptr[i]..ptr[i + 1]` are row `i`'s entries): COO's `rows` array.
fn expand_rows<I: Index>(par: Par, ptr: &[I]) -> Vec<I> {
    let mut rows = vec![I::default(); ptr.last().map_or(0, |v| v.to_usize())];
    let cuts = par.row_cuts(ptr);
    let at: Vec<usize> = cuts.iter().map(|&r| ptr[r].to_usize()).collect();
    let jobs: Vec<_> = cuts
        .windows(2)
        .zip(split_at_offsets(&mut rows, &at))
        .collect();
    par.for_each(jobs, |(w, out)| {
        let base = ptr[w[0]].to_usize();
        for i in w[0]..w[1] {
            let (s, e) = (ptr[i].to_usize() - base, ptr[i + 1].to_usize() - base);
            out[s..e].iter_mut().for_each(|r| *r = ix(i));
        }
    });
    rows
}

/// CSR → COO (row-major order, no duplicates).
pub(crate) fn csr_to_coo<T: Scalar, I: Index>(par: Par, a: &Csr<T, I>) -> Coo<T, I> {
    let rows = expand_rows(par, a.row_ptr());
    let (cols, vals) = (par.copy(a.col_idx()), par.copy(a.values()));
    // SAFETY: indices come from a valid CSR matrix of the same shape.
    unsafe { Coo::from_parts_unchecked(a.nrows(), a.ncols(), rows, cols, vals) }
}

/// The longest row and its (first) index.
pub(crate) fn longest_row<I: Index>(par: Par, ptr: &[I]) -> (usize, usize) {
    let len = |w: &[I]| w[1].to_usize() - w[0].to_usize();
    // Key on (len, Reverse(row)): the first of several longest rows wins.
    let best = match par {
        Par::Seq => ptr
            .windows(2)
            .map(len)
            .enumerate()
            .max_by_key(|&(i, l)| (l, Reverse(i))),
        Par::Rayon => ptr
            .par_windows(2)
            .map(len)
            .enumerate()
            .max_by_key(|&(i, l)| (l, Reverse(i))),
    };
    best.map_or((0, 0), |(i, l)| (l, i))
}

/// Fills the ELL part of width `width` with the first `min(len, width)`
/// entries of each row; returns `(row_nnz, col_idx, values)`.
#[allow(clippy::type_complexity)]
fn fill_ell_part<T: Scalar, I: Index>(
    par: Par,
    a: &Csr<T, I>,
    width: usize,
    n_slots: usize,
) -> (Vec<I>, Vec<I>, Vec<T>) {
    let n = a.nrows();
    let row_nnz: Vec<I> = match par {
        Par::Seq => (0..n).map(|i| ix(a.row_len(i).min(width))).collect(),
        Par::Rayon => (0..n)
            .into_par_iter()
            .map(|i| ix(a.row_len(i).min(width)))
            .collect(),
    };
    let mut cols = vec![I::default(); n_slots];
    let mut vals = vec![T::zero(); n_slots];
    {
        let (sc, sv) = (Scatter::new(&mut cols), Scatter::new(&mut vals));
        let cuts = par.cuts(n, |i| i * (width + 1));
        let jobs: Vec<_> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
        par.for_each(jobs, |(r0, r1)| {
            for i in r0..r1 {
                let (c, v) = a.row(i);
                let l = c.len().min(width);
                // SAFETY: each row is filled by exactly one block.
                unsafe { fill_slotted_row(i, n, width, &c[..l], &v[..l], &sc, &sv) };
            }
            let done = a.row_ptr()[r1].to_usize() - a.row_ptr()[r0].to_usize();
            sparsetool_formats::progress::CONVERT.add(done as u64);
        });
    }
    (row_nnz, cols, vals)
}

/// CSR → ELL. `width` defaults to the longest row.
pub(crate) fn csr_to_ell<T: Scalar, I: Index>(
    par: Par,
    a: &Csr<T, I>,
    width: Option<usize>,
    allow_fill: bool,
) -> Result<Ell<T, I>, ConvertError> {
    let (longest, row) = longest_row(par, a.row_ptr());
    let width = match width {
        None => longest,
        Some(w) => {
            check_width(FormatKind::Ell, w, a.ncols())?;
            if w < longest {
                return Err(ConvertError::EllWidthTooSmall {
                    width: w,
                    longest,
                    row,
                });
            }
            w
        }
    };
    let n_slots = slots::<I>(a.nrows(), width)?;
    if !allow_fill && n_slots > ELL_FILL_MIN_SLOTS && n_slots > MAX_ELL_FILL * a.nnz() {
        return Err(ConvertError::EllFill {
            slots: n_slots,
            nnz: a.nnz(),
            width,
        });
    }
    let (row_nnz, cols, vals) = fill_ell_part(par, a, width, n_slots);
    // SAFETY: every row's sorted entries fill slots 0..len, padding the rest.
    Ok(unsafe { Ell::from_parts_unchecked(a.nrows(), a.ncols(), width, row_nnz, cols, vals) })
}

/// CSR → HYB.
pub(crate) fn csr_to_hyb<T: Scalar, I: Index>(
    par: Par,
    a: &Csr<T, I>,
    width: HybWidth,
) -> Result<Hyb<T, I>, ConvertError> {
    let (n, ptr) = (a.nrows(), a.row_ptr());
    let width = match width {
        HybWidth::Fixed(w) => {
            check_width(FormatKind::Hyb, w, a.ncols())?;
            w
        }
        HybWidth::Auto => crate::hyb_auto_width((0..n).map(|i| a.row_len(i)), n),
    };
    let n_slots = slots::<I>(n, width)?;
    let (row_nnz, cols, vals) = fill_ell_part(par, a, width, n_slots);
    // SAFETY: as in csr_to_ell.
    let ell = unsafe { Ell::from_parts_unchecked(n, a.ncols(), width, row_nnz, cols, vals) };
    // Tail: entries beyond the width, row by row.
    let tail_ptr: Vec<I> = offsets((0..n).map(|i| a.row_len(i).saturating_sub(width)), n);
    let (t_cols, t_vals) = gather_csr(par, &tail_ptr, |i, c, v| {
        // The tail is the last `c.len()` entries of the row.
        let s = ptr[i + 1].to_usize() - c.len();
        c.copy_from_slice(&a.col_idx()[s..s + c.len()]);
        v.copy_from_slice(&a.values()[s..s + v.len()]);
    });
    let t_rows = expand_rows(par, &tail_ptr);
    // SAFETY: tail entries come from valid CSR rows, in (row, col) order,
    // only for rows whose ELL part is full.
    let coo = unsafe { Coo::from_parts_unchecked(n, a.ncols(), t_rows, t_cols, t_vals) };
    // SAFETY: see above.
    Ok(unsafe { Hyb::from_parts_unchecked(ell, coo) })
}

/// CSR → JDS (permutation by a stable counting sort on descending length).
pub(crate) fn csr_to_jds<T: Scalar, I: Index>(par: Par, a: &Csr<T, I>) -> Jds<T, I> {
    let n = a.nrows();
    let (longest, _) = longest_row(par, a.row_ptr());
    // above[l]: first sorted position of rows of length l (longer first).
    let above = longer_than(longest, (0..n).map(|i| a.row_len(i)));
    let mut next = above.clone();
    let mut perm = vec![I::default(); n];
    for i in 0..n {
        let l = a.row_len(i);
        perm[next[l]] = ix(i);
        next[l] += 1;
    }
    // Diagonal d holds the rows longer than d: above[d] of them.
    let jd_ptr: Vec<I> = offsets(above.iter().copied().take(longest), longest);
    let nnz = a.nnz();
    let mut cols = vec![I::default(); nnz];
    let mut vals = vec![T::zero(); nnz];
    {
        let (sc, sv) = (Scatter::new(&mut cols), Scatter::new(&mut vals));
        let ptr = a.row_ptr();
        // Weight sorted positions by their row lengths (+1).
        let sptr: Vec<usize> = {
            let mut acc = 0usize;
            std::iter::once(0)
                .chain(perm.iter().map(|r| {
                    let r = r.to_usize();
                    acc += ptr[r + 1].to_usize() - ptr[r].to_usize() + 1;
                    acc
                }))
                .collect()
        };
        let cuts = par.cuts(n, |p| sptr[p]);
        let jobs: Vec<_> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
        par.for_each(jobs, |(p0, p1)| {
            for (p, r) in perm.iter().enumerate().take(p1).skip(p0) {
                let (c, v) = a.row(r.to_usize());
                // SAFETY: each sorted position is filled by one block.
                unsafe { fill_jds_row(p, &jd_ptr, c, v, &sc, &sv) };
            }
        });
    }
    // SAFETY: stable sort by descending length; diagonals as defined.
    unsafe { Jds::from_parts_unchecked(n, a.ncols(), perm, jd_ptr, cols, vals) }
}

/// CSR → SELL-C-σ.
pub(crate) fn csr_to_sell<T: Scalar, I: Index>(
    par: Par,
    a: &Csr<T, I>,
    c: usize,
    sigma: usize,
) -> Result<Sell<T, I>, ConvertError> {
    check_sell(c, sigma)?;
    let n = a.nrows();
    let nslices = n.div_ceil(c);
    let len = |r: &I| a.row_len(r.to_usize());
    let mut perm: Vec<I> = (0..n).map(ix).collect();
    if sigma > 1 {
        // A stable sort has one result, whoever sorts which window.
        match par {
            Par::Seq => perm
                .chunks_mut(sigma)
                .for_each(|w| w.sort_by_key(|r| Reverse(len(r)))),
            Par::Rayon if sigma >= n => perm.par_sort_by_key(|r| Reverse(len(r))),
            Par::Rayon => {
                perm.par_chunks_mut(sigma)
                    .for_each(|w| w.sort_by_key(|r| Reverse(len(r))));
            }
        }
    }
    let widths: Vec<usize> = match par {
        Par::Seq => perm
            .chunks(c)
            .map(|s| s.iter().map(len).max().unwrap_or(0))
            .collect(),
        Par::Rayon => perm
            .par_chunks(c)
            .map(|s| s.iter().map(len).max().unwrap_or(0))
            .collect(),
    };
    let mut total = 0usize;
    let mut slice_ptr: Vec<I> = Vec::with_capacity(nslices + 1);
    slice_ptr.push(ix(0));
    for &w in &widths {
        total = total.saturating_add(c.saturating_mul(w));
        if total > I::MAX_USIZE {
            return Err(sparsetool_formats::FormatError::IndexOverflow {
                what: "SELL slots",
                value: total,
                index: I::NAME,
            }
            .into());
        }
        slice_ptr.push(ix(total));
    }
    // The slots are known exactly now: refuse a layout this machine
    // cannot hold (e.g. a slice height far above the row count) before
    // allocating it.
    let slot_bytes = (std::mem::size_of::<I>() + std::mem::size_of::<T>()) as u128;
    crate::preflight(total as u128 * slot_bytes, "the SELL slots")?;
    // Blocks of whole slices, balanced on slots.
    let scuts = par.cuts(nslices, |s| slice_ptr[s].to_usize() + s);
    let (cols, vals) = gather_blocks(par, &slice_ptr, &scuts, |s, oc, ov| {
        let rows = &perm[s * c..((s + 1) * c).min(n)];
        fill_sell_slice(c, widths[s], rows, |r| a.row(r), oc, ov);
    });
    let slice_width: Vec<I> = widths.iter().map(|&w| ix(w)).collect();
    // SAFETY: windows sorted stably, slices of C rows padded to their
    // longest row, entries in column order.
    Ok(unsafe {
        Sell::from_parts_unchecked(
            n,
            a.ncols(),
            c,
            sigma,
            a.nnz(),
            perm,
            slice_ptr,
            slice_width,
            cols,
            vals,
        )
    })
}

// ---------------------------------------------------------------- X -> CSR

/// ELL → CSR.
pub(crate) fn ell_to_csr<T: Scalar, I: Index>(par: Par, e: &Ell<T, I>) -> Csr<T, I> {
    let n = e.nrows();
    let row_ptr: Vec<I> = offsets(e.row_nnz().iter().map(|l| l.to_usize()), n);
    let (c, v) = gather_csr(par, &row_ptr, |i, oc, ov| {
        gather_row(i, n, e.col_idx(), e.values(), oc, ov);
    });
    csr(n, e.ncols(), row_ptr, c, v)
}

/// HYB → CSR.
pub(crate) fn hyb_to_csr<T: Scalar, I: Index>(par: Par, h: &Hyb<T, I>) -> Csr<T, I> {
    let (e, t) = (h.ell(), h.coo());
    let n = h.nrows();
    let mut tail_cnt = vec![0usize; n];
    for r in t.rows() {
        tail_cnt[r.to_usize()] += 1;
    }
    let mut tail_ptr = Vec::with_capacity(n + 1);
    tail_ptr.push(0usize);
    for (i, c) in tail_cnt.iter().enumerate() {
        tail_ptr.push(tail_ptr[i] + c);
    }
    let rn = e.row_nnz();
    let row_ptr: Vec<I> = offsets((0..n).map(|i| rn[i].to_usize() + tail_cnt[i]), n);
    drop(tail_cnt);
    let (c, v) = gather_csr(par, &row_ptr, |i, oc, ov| {
        let k = rn[i].to_usize();
        gather_row(i, n, e.col_idx(), e.values(), &mut oc[..k], &mut ov[..k]);
        let (s, x) = (tail_ptr[i], tail_ptr[i + 1]);
        oc[k..].copy_from_slice(&t.cols()[s..x]);
        ov[k..].copy_from_slice(&t.values()[s..x]);
    });
    csr(n, h.ncols(), row_ptr, c, v)
}

/// Inverse of a permutation (original row → sorted position).
fn inverse<I: Index>(perm: &[I]) -> Vec<usize> {
    let mut inv = vec![0usize; perm.len()];
    for (p, r) in perm.iter().enumerate() {
        inv[r.to_usize()] = p;
    }
    inv
}

/// JDS → CSR.
pub(crate) fn jds_to_csr<T: Scalar, I: Index>(par: Par, j: &Jds<T, I>) -> Csr<T, I> {
    let n = j.nrows();
    let lens = j.row_lengths_sorted();
    let inv = inverse(j.perm());
    let row_ptr: Vec<I> = offsets((0..n).map(|i| lens[inv[i]]), n);
    let jd = j.jd_ptr();
    let (c, v) = gather_csr(par, &row_ptr, |i, oc, ov| {
        let p = inv[i];
        for (d, (c, v)) in oc.iter_mut().zip(ov.iter_mut()).enumerate() {
            let at = jd[d].to_usize() + p;
            *c = j.col_idx()[at];
            *v = j.values()[at];
        }
    });
    csr(n, j.ncols(), row_ptr, c, v)
}

/// SELL → CSR.
pub(crate) fn sell_to_csr<T: Scalar, I: Index>(par: Par, s: &Sell<T, I>) -> Csr<T, I> {
    let (n, c) = (s.nrows(), s.slice_height());
    let (sp, sw, sc) = (s.slice_ptr(), s.slice_width(), s.col_idx());
    // Length of the row at sorted position p: its leading non-padding slots.
    let sorted_len = |p: usize| {
        let (sl, k) = (p / c, p % c);
        let base = sp[sl].to_usize() + k;
        (0..sw[sl].to_usize())
            .take_while(|&j| sc[base + j * c] != I::PADDING)
            .count()
    };
    let lens: Vec<usize> = match par {
        Par::Seq => (0..n).map(sorted_len).collect(),
        Par::Rayon => (0..n).into_par_iter().map(sorted_len).collect(),
    };
    let inv = inverse(s.perm());
    let row_ptr: Vec<I> = offsets((0..n).map(|i| lens[inv[i]]), n);
    let (oc, ov) = gather_csr(par, &row_ptr, |i, oc, ov| {
        let p = inv[i];
        gather_row(sp[p / c].to_usize() + p % c, c, sc, s.values(), oc, ov);
    });
    csr(n, s.ncols(), row_ptr, oc, ov)
}

// ---------------------------------------------------------------- CSR <-> CSC

/// `Aᵀ` in CSR from `A` in CSR: a stable counting sort of the entries by
/// column. The rows are cut into `k` blocks of about equal entries; each
/// block counts its columns (pass 1), a prefix sum over (column, block)
/// gives every block its own write positions in each output row (pass 2),
/// and the blocks scatter their entries there (pass 3). Blocks are visited
/// in row order inside every column, so each output row lists its columns
/// (the input rows) in ascending order, and the bytes do not depend on `k`.
/// `k` is at most the thread count and small enough that the `k x ncols`
/// counters stay below the entries.
///
/// This is the one CSR ↔ CSC kernel: CSC of `A` has the arrays of CSR of
/// `Aᵀ`, so [`csr_to_csc`] and [`csc_to_csr`] reinterpret around it.
pub(crate) fn transpose<T: Scalar, I: Index>(par: Par, a: &Csr<T, I>) -> Csr<T, I> {
    let (n, m, nnz) = (a.nrows(), a.ncols(), a.nnz());
    if nnz == 0 {
        return Csr::empty(m, n);
    }
    let ptr = a.row_ptr();
    let k = match par {
        Par::Seq => 1,
        Par::Rayon => rayon::current_num_threads()
            .min(nnz / MIN_BLOCK_WORK)
            .min(nnz / m.max(1)),
    };
    let cuts = cuts_into(n, k, |i| ptr[i].to_usize());
    let k = cuts.len() - 1;
    // Pass 1: per-block column counts (m >= 1: some entry has a column).
    let mut hist = vec![0usize; k * m];
    let jobs: Vec<_> = hist.chunks_mut(m).zip(cuts.windows(2)).collect();
    par.for_each(jobs, |(h, w)| {
        for c in &a.col_idx()[ptr[w[0]].to_usize()..ptr[w[1]].to_usize()] {
            h[c.to_usize()] += 1;
        }
    });
    // Pass 2: block j of column c writes from the entries of columns < c
    // plus those of blocks < j in column c.
    let mut t_ptr: Vec<I> = Vec::with_capacity(m + 1);
    let mut run = 0usize;
    for c in 0..m {
        t_ptr.push(ix(run));
        for j in 0..k {
            run += std::mem::replace(&mut hist[j * m + c], run);
        }
    }
    t_ptr.push(ix(run));
    // Pass 3: scatter.
    let mut t_idx = vec![I::default(); nnz];
    let mut t_val = vec![T::zero(); nnz];
    {
        let (si, sv) = (Scatter::new(&mut t_idx), Scatter::new(&mut t_val));
        let jobs: Vec<_> = hist.chunks_mut(m).zip(cuts.windows(2)).collect();
        par.for_each(jobs, |(h, w)| {
            for r in w[0]..w[1] {
                let (cols, vals) = a.row(r);
                for (c, &v) in cols.iter().zip(vals) {
                    let p = &mut h[c.to_usize()];
                    // SAFETY: the positions of (column, block) pairs are
                    // disjoint, and each is written once.
                    unsafe {
                        si.write(*p, ix(r));
                        sv.write(*p, v);
                    }
                    *p += 1;
                }
            }
        });
    }
    csr(m, n, t_ptr, t_idx, t_val)
}

/// CSR → CSC: the transpose's CSR, reinterpreted (no copy).
pub(crate) fn csr_to_csc<T: Scalar, I: Index>(par: Par, a: &Csr<T, I>) -> Csc<T, I> {
    Csc::from_transposed(transpose(par, a))
}

/// CSC → CSR: the transpose of the CSR its arrays form.
pub(crate) fn csc_to_csr<T: Scalar, I: Index>(par: Par, m: &Csc<T, I>) -> Csr<T, I> {
    transpose(par, m.transposed())
}
