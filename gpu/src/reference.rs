//! CPU references, in `f64`.
//!
//! [`spmv_ref`] is the reference every GPU result is checked against. The
//! other functions carry the names of the CUDA kernels (`spmv_ell` here,
//! `spmv_ell_f32` in `ell.cu`) and walk the same device arrays in the same
//! order as their kernel, including the warp-level algorithms of the COO
//! segmented, balanced and merge-path CSR kernels (tiles, segmented scans, carries). Tests
//! check each against `Csr::spmv`, so a layout misunderstanding shows up on a
//! machine without a GPU.

use rayon::prelude::*;
use sparsetool_formats::{Csr, Index, Scalar};

use sparsetool_formats::Precision;

/// `y = A x` in `f64` (values and `x` widened before multiplying). For
/// complex `T` the result holds the real and imaginary part of each `y_i`
/// in turn (`2 * nrows` values), as [`rel_error`] reads it.
#[must_use]
pub fn spmv_ref<T: Scalar, I: Index>(a: &Csr<T, I>, x: &[T]) -> Vec<f64> {
    if !T::IS_COMPLEX {
        return spmv_csr_scalar(a.row_ptr(), a.col_idx(), a.values(), x);
    }
    let (rp, ci, v) = (a.row_ptr(), a.col_idx(), a.values());
    let rows: Vec<(f64, f64)> = (0..a.nrows())
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| {
            (rp[i].to_usize()..rp[i + 1].to_usize()).fold((0.0, 0.0), |(re, im), k| {
                let (a, b) = (v[k], x[ci[k].to_usize()]);
                (
                    re + a.re() * b.re() - a.im() * b.im(),
                    im + a.re() * b.im() + a.im() * b.re(),
                )
            })
        })
        .collect();
    rows.into_iter().flat_map(|(re, im)| [re, im]).collect()
}

/// Reference of `spmv_csr_scalar_<t>`: one row at a time (rows in parallel;
/// each row summed in order).
///
/// # Panics
/// If the arrays are inconsistent (they come from validated format types).
#[must_use]
pub fn spmv_csr_scalar<T: Scalar, I: Index>(
    row_ptr: &[I],
    col_idx: &[I],
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    let nrows = row_ptr.len().saturating_sub(1);
    (0..nrows)
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| {
            let (s, e) = (row_ptr[i].to_usize(), row_ptr[i + 1].to_usize());
            (s..e)
                .map(|k| vals[k].re() * x[col_idx[k].to_usize()].re())
                .sum()
        })
        .collect()
}

/// Reference of `spmv_csr_vector_<t>_l<lanes>`: lane `l` sums entries
/// `l, l + lanes, ...` of a row, then the lanes are added.
#[must_use]
pub fn spmv_csr_vector<T: Scalar, I: Index>(
    lanes: usize,
    row_ptr: &[I],
    col_idx: &[I],
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    let lanes = lanes.max(1);
    lane_sums(row_ptr, col_idx, vals, x, |_| lanes)
}

/// Every row summed in `lanes_of(row length)` lanes: lane `l` sums entries
/// `l, l + lanes, ...` of the row, then the lanes are added.
fn lane_sums<T: Scalar, I: Index>(
    row_ptr: &[I],
    col_idx: &[I],
    vals: &[T],
    x: &[T],
    lanes_of: impl Fn(usize) -> usize,
) -> Vec<f64> {
    let nrows = row_ptr.len().saturating_sub(1);
    (0..nrows)
        .map(|i| {
            let (s, e) = (row_ptr[i].to_usize(), row_ptr[i + 1].to_usize());
            let lanes = lanes_of(e - s);
            (0..lanes)
                .map(|l| {
                    (s + l..e)
                        .step_by(lanes)
                        .map(|k| vals[k].re() * x[col_idx[k].to_usize()].re())
                        .sum::<f64>()
                })
                .sum()
        })
        .collect()
}

/// Reference of the binned CSR kernel (`spmv_csr_binned_<t>_l<L>`): every
/// row is summed like [`spmv_csr_vector`] with the lane width of its bin
/// ([`crate::plan::binned_lanes`]).
#[must_use]
pub fn spmv_csr_binned<T: Scalar, I: Index>(
    row_ptr: &[I],
    col_idx: &[I],
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    lane_sums(row_ptr, col_idx, vals, x, |len| {
        crate::plan::binned_lanes(len) as usize
    })
}

/// Warp segmented inclusive scan over 32 lanes (as in `common.cuh`).
fn warp_segmented_scan(keys: &[i64; 32], vals: &mut [f64; 32]) {
    let mut off = 1;
    while off < 32 {
        let prev = *vals;
        for lane in off..32 {
            if keys[lane - off] == keys[lane] {
                vals[lane] += prev[lane - off];
            }
        }
        off *= 2;
    }
}

/// Reference of `spmv_coo_<t>_segmented`: tiles of `32 * items` row-sorted
/// entries, `items` consecutive entries per lane (see
/// [`crate::plan::coo_items`]). Each lane sums
/// its own rows (a row that starts and ends inside the lane is added at
/// once), a warp segmented scan over each lane's last row joins rows across
/// lanes, and a lane's first row takes the scan of the lane before it. Adds
/// into `y`, one addition per row piece, as the kernel's atomics do.
pub fn spmv_coo_segmented<T: Scalar, I: Index>(
    items: usize,
    rows: &[I],
    cols: &[I],
    vals: &[T],
    x: &[T],
    y: &mut [f64],
) {
    const NONE: i64 = i64::MAX;
    let items = items.max(1);
    for base in (0..vals.len()).step_by(32 * items) {
        let mut first_row = [NONE; 32];
        let mut last_row = [NONE; 32];
        let mut first = [0f64; 32];
        let mut multi = [false; 32];
        let mut acc = [0f64; 32];
        for lane in 0..32 {
            let item = |j: usize| {
                let k = base + lane * items + j;
                if k < vals.len() {
                    (rows[k].to_i64(), vals[k].re() * x[cols[k].to_usize()].re())
                } else {
                    (NONE, 0.0)
                }
            };
            let (r0, p0) = item(0);
            first_row[lane] = r0;
            let (mut cur, mut sum) = (r0, p0);
            for j in 1..items {
                let (r, p) = item(j);
                if r != cur {
                    if !multi[lane] {
                        first[lane] = sum;
                        multi[lane] = true;
                    } else if cur != NONE {
                        y[cur as usize] += sum;
                    }
                    cur = r;
                    sum = p;
                } else {
                    sum += p;
                }
            }
            last_row[lane] = cur;
            acc[lane] = sum;
        }
        warp_segmented_scan(&last_row, &mut acc);
        for lane in 0..32 {
            if multi[lane] && first_row[lane] != NONE {
                let carry = if lane > 0 && last_row[lane - 1] == first_row[lane] {
                    acc[lane - 1]
                } else {
                    0.0
                };
                y[first_row[lane] as usize] += first[lane] + carry;
            }
            let cur = last_row[lane];
            if cur != NONE && (lane == 31 || first_row[lane + 1] != cur) {
                y[cur as usize] += acc[lane];
            }
        }
    }
}

/// Reference of `spmv_coo_<t>` (one addition per entry). Adds into `y`.
pub fn spmv_coo<T: Scalar, I: Index>(rows: &[I], cols: &[I], vals: &[T], x: &[T], y: &mut [f64]) {
    for k in 0..vals.len() {
        y[rows[k].to_usize()] += vals[k].re() * x[cols[k].to_usize()].re();
    }
}

/// Reference of `csc-scatter` (`spmv_coo_<t>` on a CSC's entries in
/// column order): one addition per entry, column by column. Adds into `y`.
pub fn spmv_csc_scatter<T: Scalar, I: Index>(
    col_ptr: &[I],
    row_idx: &[I],
    vals: &[T],
    x: &[T],
    y: &mut [f64],
) {
    for (j, w) in col_ptr.windows(2).enumerate() {
        for k in w[0].to_usize()..w[1].to_usize() {
            y[row_idx[k].to_usize()] += vals[k].re() * x[j].re();
        }
    }
}

/// The last row `r` in `lo..=hi` with `row_ptr[r] <= k`, by binary search
/// (`row_ptr` is non-decreasing and `row_ptr[lo] <= k`).
fn last_row_at<I: Index>(row_ptr: &[I], lo: usize, hi: usize, k: usize) -> usize {
    let below = row_ptr[lo..=hi].partition_point(|p| p.to_usize() <= k);
    lo + below.saturating_sub(1)
}

/// Reference of `spmv_csr_balanced_<t>`: equal chunks of `chunk` entries per
/// warp, 32-entry tiles (rows found by binary lifting over 32 row ends, with
/// a binary-search fallback past runs of empty rows), a carry between tiles, direct stores for rows inside
/// the chunk and additions for rows cut by a chunk boundary. `y` must be zero
/// on entry (as the kernel requires).
pub fn spmv_csr_balanced<T: Scalar, I: Index>(
    chunk: usize,
    row_ptr: &[I],
    col_idx: &[I],
    vals: &[T],
    x: &[T],
    y: &mut [f64],
) {
    let nrows = row_ptr.len().saturating_sub(1);
    let nnz = vals.len();
    let chunk = chunk.max(32);
    let rp = |r: usize| row_ptr[r].to_usize();
    for begin in (0..nnz).step_by(chunk) {
        let end = (begin + chunk).min(nnz);
        let mut row_cur = last_row_at(row_ptr, 0, nrows, begin);
        let (mut carry_row, mut carry) = (-1i64, 0f64);
        for tile in (begin..end).step_by(32) {
            let mut keys = [nrows as i64; 32];
            let mut v = [0f64; 32];
            let mut r_of = [row_cur; 32];
            let mut row_end = [false; 32];
            // the ends of rows row_cur .. row_cur + 31, one per lane
            let ends: [usize; 32] = std::array::from_fn(|j| {
                if row_cur + j < nrows {
                    rp(row_cur + j + 1)
                } else {
                    usize::MAX
                }
            });
            for lane in 0..32 {
                let k = tile + lane;
                // binary lifting: rows among the 32 that end at or before k
                let mut lo = 0usize;
                let mut step = 16;
                while step > 0 {
                    if ends[lo + step - 1] <= k {
                        lo += step;
                    }
                    step /= 2;
                }
                let elo = ends[lo];
                if elo <= k {
                    lo += 1;
                }
                r_of[lane] = row_cur + lo;
                if k < end {
                    let mut r = row_cur + lo;
                    let mut end_r = elo;
                    if lo == 32 {
                        r = last_row_at(row_ptr, row_cur + 32, nrows - 1, k);
                        end_r = rp(r + 1);
                    }
                    r_of[lane] = r;
                    keys[lane] = r as i64;
                    v[lane] = vals[k].re() * x[col_idx[k].to_usize()].re();
                    row_end[lane] = k + 1 == end_r;
                }
            }
            if keys[0] == carry_row {
                v[0] += carry;
            }
            warp_segmented_scan(&keys, &mut v);
            for lane in 0..32 {
                let k = tile + lane;
                let seg_end = lane == 31 || keys[lane + 1] != keys[lane];
                if k < end && seg_end {
                    let r = r_of[lane];
                    if row_end[lane] {
                        if rp(r) >= begin {
                            y[r] = v[lane];
                        } else {
                            y[r] += v[lane];
                        }
                    } else if k + 1 == end {
                        y[r] += v[lane];
                    }
                }
            }
            carry = v[31];
            carry_row = if row_end[31] { -1 } else { keys[31] };
            row_cur = r_of[31];
        }
    }
}

/// Rows completed before diagonal `d` of the merge path of `row_ptr`'s row
/// ends with the entry indices: the first `x` in `max(0, d - nnz)..=min(d,
/// nrows)` whose row ends after entry `d - x - 1` (the kernels' searches).
fn merge_rows_before<I: Index>(row_ptr: &[I], d: usize) -> usize {
    let nrows = row_ptr.len().saturating_sub(1);
    let nnz = row_ptr.last().map_or(0, |p| p.to_usize());
    let (mut lo, mut hi) = (d.saturating_sub(nnz), d.min(nrows));
    while lo < hi {
        let mid = (lo + hi) / 2;
        if row_ptr[mid + 1].to_usize() + mid < d {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Where chunk `w` of `chunk` items of the merge path of `row_ptr` starts
/// (`merge_partition` in `csr_merge.cu`), `(rows, entries)`: the path point
/// of the aligned entry ([`crate::plan::MERGE_ALIGN`]) at or before its
/// diagonal's, unless that point lies more than `MERGE_ALIGN` rows back
/// (inside a run of empty rows, where every chunk of the run would start at
/// its beginning and the last walk all of it) or at or before the diagonal
/// of the chunk before: then the diagonal's own.
pub(crate) fn merge_start<I: Index>(row_ptr: &[I], chunk: usize, w: usize) -> (usize, usize) {
    let nrows = row_ptr.len().saturating_sub(1);
    let nnz = row_ptr.last().map_or(0, |p| p.to_usize());
    let (total, align) = (nrows + nnz, crate::plan::MERGE_ALIGN);
    let warps = total.div_ceil(chunk.max(1));
    let d = (w * chunk).min(total);
    let x = merge_rows_before(row_ptr, d);
    let ea = (d - x) / align * align;
    if w == 0 || w >= warps || ea == d - x {
        return (x, d - x);
    }
    let back = row_ptr[1..=x].partition_point(|p| p.to_usize() <= ea);
    if x - back > align || back + ea + chunk <= d {
        return (x, d - x);
    }
    (back, ea)
}

/// Reference of [`crate::GpuKernel::CsrPanels`]: the matrix split at
/// `cuts` into column panels ([`crate::layout::column_panels`]), then
/// [`spmv_csr_merge`] on each panel, its chunk `chunk_of(panel's nrows +
/// nnz)`, the panels added into `y` in order (`spmv_csr_merge_<t>` on the
/// first, `spmv_csr_merge_<t>_acc` on the others).
#[allow(clippy::too_many_arguments)] // the merge kernel's own parameters, and the cuts
pub fn spmv_csr_panels<T: Scalar, I: Index>(
    items: usize,
    window: usize,
    chunk_of: impl Fn(usize) -> usize,
    cuts: &[usize],
    row_ptr: &[I],
    col_idx: &[I],
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    let nrows = row_ptr.len().saturating_sub(1);
    let mut y = vec![0.0; nrows];
    for (rp, ci, v) in crate::layout::column_panels(row_ptr, col_idx, vals, cuts) {
        let mut part = vec![0.0; nrows];
        spmv_csr_merge(
            items,
            window,
            chunk_of(nrows + v.len()),
            &rp,
            &ci,
            &v,
            x,
            &mut part,
        );
        for (a, b) in y.iter_mut().zip(part) {
            *a += b;
        }
    }
    y
}

/// Reference of `spmv_csr_merge_<t>` (merge-path CSR) and its
/// `merge_fixup_<t>`: the `nrows + nnz` items of the merge of row ends and
/// entries cut into chunks of `chunk` items, one per warp, each starting
/// where `merge_partition` puts it (moved back to an aligned entry,
/// [`crate::plan::MERGE_ALIGN`], as tiles are cut, unless that is more than
/// `MERGE_ALIGN` rows back); each chunk in tiles of up to
/// `32 * items` items, `items` per lane ([`crate::plan::merge_items`]), a
/// tile ending by the end of the last row of its window of
/// `32 * window` rows ([`crate::plan::merge_window`]). A tile
/// inside one row only adds to the carried sum. Otherwise a lane adds its
/// entries and closes its rows; its first closed row takes the warp
/// segmented scan of the lane before it, rows begun and closed in the lane
/// are stored at once, and the tile's open row is carried to the next tile.
/// Every row is stored by the chunk holding its end (`y` needs no zeroing);
/// the row open at a chunk's end is left in the chunk's carry slot, and the
/// slots are added after every chunk, as the fix-up kernel does.
#[allow(clippy::too_many_arguments)] // the kernel's own parameters, as spmv_sell
pub fn spmv_csr_merge<T: Scalar, I: Index>(
    items: usize,
    window: usize,
    chunk: usize,
    row_ptr: &[I],
    col_idx: &[I],
    vals: &[T],
    x: &[T],
    y: &mut [f64],
) {
    let nrows = row_ptr.len().saturating_sub(1);
    let nnz = vals.len();
    let (items, chunk) = (items.max(1), chunk.max(1));
    let (tile, win) = (32 * items, 32 * window.max(1));
    let rp = |r: usize| row_ptr[r].to_usize();
    let prod = |k: usize| vals[k].re() * x[col_idx[k].to_usize()].re();
    let total = nrows + nnz;
    let warps = total.div_ceil(chunk);
    let align = crate::plan::MERGE_ALIGN;
    let start = |w: usize| merge_start(row_ptr, chunk, w);
    let mut carries = Vec::new();
    for w in 0..warps {
        let (mut xr, mut ye) = start(w);
        let d_end = {
            let (r, e) = start(w + 1);
            r + e
        };
        let mut carry = 0.0;
        let mut d = xr + ye;
        while d < d_end {
            let mut tl = tile.min(d_end - d);
            if nrows - xr > win {
                tl = tl.min(rp(xr + win) - ye + win);
            }
            if xr < nrows && rp(xr + 1) - ye >= tl {
                // along a long row: end on an aligned entry
                let ea = (ye + tl) / align * align;
                if ea > ye && d + tl < d_end {
                    tl = ea - ye;
                }
                carry += (ye..ye + tl).map(prod).sum::<f64>();
                ye += tl;
                d += tl;
                continue;
            }
            let mut tile_rows = merge_rows_before(row_ptr, d + tl) - xr;
            debug_assert!(tile_rows <= win);
            let tile_entries = tl - tile_rows;
            if d + tl < d_end
                && tile_entries > crate::plan::MERGE_MIX_MEAN * tile_rows
                && tile_rows >= crate::plan::MERGE_MIX_ROWS
            {
                let ea = (ye + tile_entries) / align * align;
                if ea > ye && ea < ye + tile_entries {
                    tile_rows =
                        row_ptr[xr + 1..=xr + tile_rows].partition_point(|p| p.to_usize() <= ea);
                    tl = tile_rows + ea - ye;
                }
            }
            let mut keys = [0i64; 32];
            let mut acc = [0.0f64; 32];
            let mut firsts = [None; 32];
            for lane in 0..32 {
                let d0 = (lane * items).min(tl);
                let d1 = (d0 + items).min(tl);
                let mut xl = merge_rows_before(row_ptr, d + d0);
                let mut yl = d + d0 - xl;
                let mut a = if lane == 0 { carry } else { 0.0 };
                for _ in d0..d1 {
                    if yl < rp(xl + 1) {
                        a += prod(yl);
                        yl += 1;
                    } else {
                        if firsts[lane].is_none() {
                            firsts[lane] = Some((xl, a));
                        } else {
                            y[xl] = a;
                        }
                        a = 0.0;
                        xl += 1;
                    }
                }
                keys[lane] = xl as i64;
                acc[lane] = a;
            }
            warp_segmented_scan(&keys, &mut acc);
            for lane in 0..32 {
                if let Some((r, v)) = firsts[lane] {
                    y[r] = v + if lane > 0 { acc[lane - 1] } else { 0.0 };
                }
            }
            carry = acc[31];
            xr += tile_rows;
            d += tl;
            ye = d - xr;
        }
        debug_assert_eq!(xr + ye, d_end);
        if xr < nrows {
            carries.push((xr, carry));
        }
    }
    for (r, v) in carries {
        y[r] += v;
    }
}

/// Reference of `spmv_ell_<t>`: slot `s` of row `i` at `s * nrows + i`;
/// all `width` slots are visited and padding (index -1) is skipped.
#[must_use]
pub fn spmv_ell<T: Scalar, I: Index>(
    nrows: usize,
    width: usize,
    row_nnz: &[I],
    col_idx: &[I],
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    // Like the kernel: every slot of the width, predicated on the index;
    // row_nnz is not read.
    let _ = row_nnz;
    ell_ref(
        nrows,
        width,
        |s, i| stored_col(col_idx, s * nrows + i),
        vals,
        x,
    )
}

/// Reference of `spmv_ell_<t>_u16` (`ell-u16`, and HYB's ELL part in
/// `hyb-u16`): [`spmv_ell`] with the columns of a row in a group with a base
/// read from `narrow` (built by [`crate::layout::ell_u16`] from `col_idx`)
/// as the base plus the slot's 16-bit offset
/// ([`crate::layout::EllU16::column`]), the other rows' from `col_idx`.
#[must_use]
pub fn spmv_ell_u16<T: Scalar, I: Index>(
    nrows: usize,
    width: usize,
    col_idx: &[I],
    narrow: &crate::layout::EllU16,
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    let col = |s: usize, i: usize| {
        if narrow.base[i / crate::layout::ELL_U16_GROUP] >= 0 {
            narrow.column(nrows, s, i)
        } else {
            stored_col(col_idx, s * nrows + i)
        }
    };
    ell_ref(nrows, width, col, vals, x)
}

/// Every row's sum over its `width` slots (slot-major), the column of slot
/// `s` of row `i` from `col` (`None`: padding).
fn ell_ref<T: Scalar>(
    nrows: usize,
    width: usize,
    col: impl Fn(usize, usize) -> Option<usize>,
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    (0..nrows)
        .map(|i| {
            (0..width)
                .filter_map(|s| col(s, i).map(|c| vals[s * nrows + i].re() * x[c].re()))
                .sum()
        })
        .collect()
}

/// Reference of `spmv_jds_<t>` and its tail (`spmv_jds_<t>_tail` after it,
/// or `spmv_jds_<t>_tail_first`) with `cap`
/// diagonals per thread ([`crate::plan::long_row_cap`]): every sorted
/// position `p` of the main kernel's blocks (in window order where
/// [`crate::plan::jds_main_blocks`] gives one, so a block it misses leaves
/// its rows zero) finds its row length within the first `cap` diagonals by
/// binary search over the diagonal lengths, walks them, and stores the sum
/// at `perm[p]`; every band of the tail (the first `R` rows' entries of its
/// diagonals, one sum per row active in its first diagonal,
/// [`crate::plan::jds_tail_items`]) adds its part of a long row to `y`.
/// Where the tail has chunks (chunk `c` of `cap` diagonals, one per row
/// active in its first diagonal) in a matrix of 4M entries or more, it
/// goes first ([`crate::plan::jds_tail_first`]; else it goes after the
/// main kernel, its chunks from diagonal `cap`) and holds the long rows
/// whole (chunk 0 their first `cap` diagonals), which the main kernel's
/// blocks leave out (a block that walks one anyway leaves it NaN); their
/// parts meet as the kernels' do (`HeadSums` in `common.cuh`): the part
/// that completes its count ([`crate::plan::jds_head_counts`]) stores the
/// row, so a wrong count leaves it zero or partial.
#[must_use]
pub fn spmv_jds<T: Scalar, I: Index>(
    nrows: usize,
    cap: usize,
    perm: &[I],
    jd_ptr: &[I],
    col_idx: &[I],
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    let main = |_: usize, _: usize, idx: usize| col_idx[idx].to_usize();
    jds_ref(nrows, (cap, perm, jd_ptr, col_idx), main, vals, x)
}

/// Reference of `spmv_jds_<t>_u16` and its tail: [`spmv_jds`]
/// with the main kernel's column of diagonal `d` of sorted row `p` read
/// from `narrow` (built with the same `cap`, [`crate::layout::jds_u16`])
/// where its group of 32 rows has a base, else from `col_idx`; the tail
/// reads `col_idx`.
#[must_use]
#[allow(clippy::too_many_arguments)] // the kernel's own parameters, as spmv_sell_u16
pub fn spmv_jds_u16<T: Scalar, I: Index>(
    nrows: usize,
    cap: usize,
    perm: &[I],
    jd_ptr: &[I],
    col_idx: &[I],
    narrow: &crate::layout::JdsU16,
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    let main = |d: usize, p: usize, idx: usize| {
        if narrow.base[p / crate::layout::JDS_U16_GROUP] >= 0 {
            // a stored offset for every entry of the main diagonals (an
            // out-of-range index fails the product's comparison)
            narrow.column(d, p).unwrap_or(usize::MAX)
        } else {
            col_idx[idx].to_usize()
        }
    };
    jds_ref(nrows, (cap, perm, jd_ptr, col_idx), main, vals, x)
}

/// The walk of [`spmv_jds`] with the main launch's column of diagonal `d`
/// of sorted row `p` (entry `idx`) from `main_col`.
fn jds_ref<T: Scalar, I: Index>(
    nrows: usize,
    (cap, perm, jd_ptr, col_idx): (usize, &[I], &[I], &[I]),
    main_col: impl Fn(usize, usize, usize) -> usize,
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    let cap = cap.max(1);
    let ndiag = jd_ptr.len().saturating_sub(1);
    let dlen = |d: usize| jd_ptr[d + 1].to_usize() - jd_ptr[d].to_usize();
    // diagonals of [lo, hi) longer than p: the end of p's run (binary search)
    let run_end = |p: usize, mut lo: usize, mut hi: usize| {
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if dlen(mid) > p {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let walk_with = |p: usize, d0: usize, d1: usize, col: &dyn Fn(usize, usize) -> usize| -> f64 {
        (d0..d1)
            .map(|d| {
                let idx = jd_ptr[d].to_usize() + p;
                x.get(col(d, idx))
                    .map_or(f64::NAN, |xc| vals[idx].re() * xc.re())
            })
            .sum()
    };
    let walk =
        |p: usize, d0: usize, d1: usize| walk_with(p, d0, d1, &|_, idx| col_idx[idx].to_usize());
    let main = |p: usize| {
        walk_with(p, 0, run_end(p, 0, ndiag.min(cap)), &|d, idx| {
            main_col(d, p, idx)
        })
    };
    let nnz = jd_ptr.last().map_or(0, |e| e.to_usize());
    let first = crate::plan::jds_tail_first(nnz, ndiag, cap, dlen);
    let (items, bands) = crate::plan::jds_tail_items(ndiag, cap, first, dlen);
    let counts = if first {
        crate::plan::jds_head_counts(ndiag, cap, &items, &bands, dlen)
    } else {
        Vec::new()
    };
    // the long rows' sums and parts so far (HeadSums::add)
    let mut head = vec![(0f64, 0i32); counts.len()];
    let mut y = vec![0f64; nrows];
    // the main kernel first (past the long rows a tail that goes first
    // holds whole): a tail that goes after it adds into its y
    // (a long row the main kernel walked too, which the kernels would race
    // on, comes out NaN)
    let nhead = counts.len();
    let mut store = |p: usize| {
        let sum = main(p);
        if p < nhead {
            head[p].0 = f64::NAN;
        }
        y[perm[p].to_usize()] = sum;
    };
    let (blocks, _) =
        crate::plan::jds_main_blocks(nrows, nhead..nrows, ndiag, dlen, |p| perm[p].to_usize());
    if blocks.is_empty() {
        (0..nrows).for_each(&mut store);
    } else {
        for b in blocks.chunks_exact(2) {
            let p0 = b[0] as usize;
            (p0..p0 + b[1] as usize).for_each(&mut store);
        }
    }
    let mut add = |y: &mut [f64], p: usize, part: f64| {
        let Some((sum, done)) = head.get_mut(p) else {
            y[perm[p].to_usize()] += part;
            return;
        };
        *sum += part;
        *done += 1;
        if *done == counts[p] {
            y[perm[p].to_usize()] = *sum;
        }
    };
    for (c, w) in items.windows(2).enumerate() {
        // chunk 0 is the tail's when it goes first
        let d0 = (c + usize::from(!first)) * cap;
        for p in 0..(w[1] - w[0]) as usize {
            add(
                &mut y,
                p,
                walk(p, d0, run_end(p, d0, (d0 + cap).min(ndiag))),
            );
        }
    }
    for band in bands.chunks_exact(3) {
        let [r, d0, d1] = [band[0], band[1], band[2]].map(|v| v as usize);
        for p in 0..r.min(dlen(d0)) {
            add(&mut y, p, walk(p, d0, run_end(p, d0, d1)));
        }
    }
    y
}

/// `y[perm[p]]` (or `y[p]` without a permutation) set to `row_sum(p)` for
/// every sorted position `p` in `0..nrows`.
fn scatter_rows<I: Index>(
    nrows: usize,
    perm: Option<&[I]>,
    row_sum: impl Fn(usize) -> f64,
) -> Vec<f64> {
    let mut y = vec![0f64; nrows];
    for p in 0..nrows {
        y[perm.map_or(p, |pm| pm[p].to_usize())] = row_sum(p);
    }
    y
}

/// Reference of `spmv_sell_<t>` and `spmv_sell_<t>_tail` with `cap` slots
/// per thread: slice `k` (of the window-ordered units, a slice each, where
/// [`crate::plan::sell_slice_blocks`] gives them), local row `r`, slot `s`
/// at `slice_ptr[k] + s * c + r` for the first `min(width, cap)` slots,
/// padding slots (index -1) skipped, the sum stored at `perm[p]` (or `p`
/// without a permutation, cuSPARSE's layout); then every tail item
/// ([`crate::plan::sell_tail_items`]) adds the sum of its `cap` slots,
/// every segment of a long row the sum of its slots, and every band the
/// sums of its rows' slots.
#[must_use]
#[allow(clippy::too_many_arguments)]
pub fn spmv_sell<T: Scalar, I: Index>(
    nrows: usize,
    c: usize,
    cap: usize,
    perm: Option<&[I]>,
    slice_ptr: &[I],
    slice_width: &[I],
    col_idx: &[I],
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    let stored = |idx: usize| stored_col(col_idx, idx);
    let layout = (c, cap, perm, slice_ptr, slice_width);
    sell_ref(nrows, layout, |_, idx| stored(idx), stored, vals, x)
}

/// Reference of `spmv_sell_<t>_u16` (`sell-u16`): [`spmv_sell`] with the
/// main kernel's columns read from `narrow` (built by
/// [`crate::layout::sell_u16`] with the same `c` and `cap`) as the slice's
/// base plus the slot's 16-bit offset, in its pair
/// ([`crate::layout::SellU16::at`]), [`crate::layout::SELL_U16_PAD`]
/// skipped; the tail reads `col_idx`.
#[must_use]
#[allow(clippy::too_many_arguments)]
pub fn spmv_sell_u16<T: Scalar, I: Index>(
    nrows: usize,
    c: usize,
    cap: usize,
    perm: Option<&[I]>,
    slice_ptr: &[I],
    slice_width: &[I],
    col_idx: &[I],
    narrow: &crate::layout::SellU16,
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    let main = |k: usize, idx: usize| {
        let d = idx - slice_ptr[k].to_usize();
        let o = narrow.cols[narrow.at(c, k, d / c, d % c)];
        (o != crate::layout::SELL_U16_PAD)
            .then(|| (i64::from(narrow.base[k]) + i64::from(o)) as usize)
    };
    let tail = |idx: usize| stored_col(col_idx, idx);
    let layout = (c, cap, perm, slice_ptr, slice_width);
    sell_ref(nrows, layout, main, tail, vals, x)
}

/// The column of slot `idx` as stored (`None`: padding, index -1).
fn stored_col<I: Index>(col_idx: &[I], idx: usize) -> Option<usize> {
    let col = col_idx[idx];
    (col.to_i64() >= 0).then(|| col.to_usize())
}

/// The walk of [`spmv_sell`] with the main launch's column of slot `idx` in
/// slice `k` from `main_col`, the tail's from `tail_col` (`None`: padding).
fn sell_ref<T: Scalar, I: Index>(
    nrows: usize,
    (c, cap, perm, slice_ptr, slice_width): (usize, usize, Option<&[I]>, &[I], &[I]),
    main_col: impl Fn(usize, usize) -> Option<usize>,
    tail_col: impl Fn(usize) -> Option<usize>,
    vals: &[T],
    x: &[T],
) -> Vec<f64> {
    let cap = cap.max(1);
    let width = |k: usize| slice_width[k].to_usize();
    let walk = |p: usize, s0: usize, s1: usize, col: &dyn Fn(usize) -> Option<usize>| -> f64 {
        let (k, r) = (p / c, p % c);
        let base = slice_ptr[k].to_usize() + r;
        (s0..s1)
            .filter_map(|s| {
                let idx = base + s * c;
                col(idx).map(|col| vals[idx].re() * x[col].re())
            })
            .sum()
    };
    let main = |p: usize| walk(p, 0, width(p / c).min(cap), &|idx| main_col(p / c, idx));
    let widths: Vec<usize> = (0..slice_width.len()).map(width).collect();
    // with any sigma (the order of the blocks does not change the sums, so
    // this checks that they cover every slice wherever the runs allow them)
    let blocks = perm.map_or_else(Vec::new, |pm| {
        crate::plan::sell_slice_blocks(nrows, (c, nrows), &widths, |p| pm[p].to_usize())
    });
    let mut y = if blocks.is_empty() {
        scatter_rows(nrows, perm, main)
    } else {
        // the window-ordered units' slices (a slice they miss stays zero;
        // the padding's units hold none)
        let mut y = vec![0f64; nrows];
        for b in blocks.chunks_exact(2) {
            let k0 = b[0] as usize;
            for p in k0 * c..((k0 + b[1] as usize) * c).min(nrows) {
                y[perm.map_or(p, |pm| pm[p].to_usize())] = main(p);
            }
        }
        y
    };
    let row_len = |k: usize, r: usize| {
        crate::plan::stored_len(width(k), |s| {
            tail_col(slice_ptr[k].to_usize() + s * c + r).is_some()
        })
    };
    let t = crate::plan::sell_tail_items((0..slice_width.len()).map(width), c, cap, row_len);
    let row = |p: usize| perm.map_or(p, |pm| pm[p].to_usize());
    for (&k, &ch) in t.slices.iter().zip(&t.chunks) {
        let (k, s0) = (k as usize, ch as usize * cap);
        for p in k * c..((k + 1) * c).min(nrows) {
            y[row(p)] += walk(p, s0, (s0 + cap).min(width(k)), &tail_col);
        }
    }
    for seg in t.segs.chunks_exact(3) {
        let [p, s0, s1] = [seg[0], seg[1], seg[2]].map(|v| v as usize);
        y[row(p)] += walk(p, s0, s1, &tail_col);
    }
    for band in t.bands.chunks_exact(4) {
        let [k, r, s0, s1] = [band[0], band[1], band[2], band[3]].map(|v| v as usize);
        for p in k * c..(k * c + r.min(c)).min(nrows) {
            y[row(p)] += walk(p, s0, s1, &tail_col);
        }
    }
    y
}

/// `||y - y_ref|| / ||y_ref||` (2-norms); the absolute error when `y_ref` is
/// zero; infinity when `y` holds a NaN or an infinity, or the lengths differ.
/// For complex `T`, `y_ref` holds the parts of each value in turn (as
/// [`spmv_ref`] returns them).
#[must_use]
pub fn rel_error<T: Scalar>(y: &[T], y_ref: &[f64]) -> f64 {
    let parts = if T::IS_COMPLEX { 2 } else { 1 };
    if y.len() * parts != y_ref.len() || y.iter().any(|v| !v.is_finite()) {
        return f64::INFINITY;
    }
    let (mut num, mut den) = (0f64, 0f64);
    for (a, b) in y.iter().zip(y_ref.chunks_exact(parts)) {
        let d = a.re() - b[0];
        num += d * d;
        den += b[0] * b[0];
        if parts == 2 {
            let d = a.im() - b[1];
            num += d * d;
            den += b[1] * b[1];
        }
    }
    if den > 0.0 {
        (num / den).sqrt()
    } else {
        num.sqrt()
    }
}

/// Tolerance on [`rel_error`] for a value type and the longest row.
///
/// Inputs are rounded to `T` before the reference sees them, so only the
/// accumulation error counts. Rounding errors of a length-`L` dot product with
/// random signs grow like `sqrt(L)` (the probabilistic bound of Higham &
/// Mary, 2019), while the order of additions differs between kernels. So the
/// tolerance is `1e-4` for `f32` and `1e-12` for `f64` up to rows of 64
/// entries, scaled by `sqrt(L / 64)` for longer rows.
#[must_use]
pub fn tolerance(dtype: Precision, max_row_len: usize) -> f64 {
    let base = match dtype {
        Precision::F32 => 1e-4,
        Precision::F64 => 1e-12,
    };
    base * (max_row_len as f64 / 64.0).sqrt().max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex_reference_and_error() {
        use sparsetool_formats::Complex64;
        // [[1+2i, 3], [0, -1i]] * [1-1i, 2i]
        let c = |re, im| Complex64::new(re, im);
        let a = Csr::<Complex64, i32>::try_from_parts(
            2,
            2,
            vec![0, 2, 3],
            vec![0, 1, 1],
            vec![c(1.0, 2.0), c(3.0, 0.0), c(0.0, -1.0)],
        )
        .unwrap();
        let x = [c(1.0, -1.0), c(0.0, 2.0)];
        let y_ref = spmv_ref(&a, &x);
        // (1+2i)(1-i) = 3+i; 3*2i = 6i; (-i)(2i) = 2
        assert_eq!(y_ref, vec![3.0, 7.0, 2.0, 0.0]);
        assert_eq!(rel_error(&[c(3.0, 7.0), c(2.0, 0.0)], &y_ref), 0.0);
        let e = rel_error(&[c(3.0, 7.0), c(2.0, 1.0)], &y_ref);
        assert!((e - 1.0 / (62f64).sqrt()).abs() < 1e-12, "{e}");
        assert!(rel_error(&[c(3.0, 7.0)], &y_ref).is_infinite());
    }
    use crate::layout::{coo_rows_from_row_ptr, sliced_ell_from_csr};

    /// Runs of empty rows (as in a column panel of a banded matrix) with an
    /// entry count that is no multiple of the alignment: every chunk of the
    /// merge path stays about a chunk long, in order, and the product is
    /// right. Before, every chunk in a run started at the run's beginning
    /// and the last walked all of it.
    #[test]
    fn merge_chunks_stay_short_along_runs_of_empty_rows() {
        // rows 0..1000: 3 entries each; 100 000 empty; 7 rows of 1; 50 000 empty
        let mut row_ptr = vec![0i32];
        let mut cols = Vec::new();
        for r in 0..1000 {
            cols.extend([r, r + 1, r + 2]);
            row_ptr.push(cols.len() as i32);
        }
        row_ptr.extend(std::iter::repeat_n(cols.len() as i32, 100_000));
        for r in 0..7 {
            cols.push(r);
            row_ptr.push(cols.len() as i32);
        }
        row_ptr.extend(std::iter::repeat_n(cols.len() as i32, 50_000));
        let nrows = row_ptr.len() - 1;
        let nnz = cols.len();
        assert_ne!(nnz % crate::plan::MERGE_ALIGN, 0);
        let vals: Vec<f64> = (0..nnz).map(|k| 1.0 + (k % 7) as f64).collect();
        let chunk = 256;
        let total = nrows + nnz;
        let warps = total.div_ceil(chunk);
        let mut prev = 0;
        for w in 0..=warps {
            let (r, e) = merge_start(&row_ptr, chunk, w);
            let d = r + e;
            assert!(d >= prev, "chunk {w} starts at {d}, before {prev}");
            assert!(
                d + 2 * crate::plan::MERGE_ALIGN >= (w * chunk).min(total),
                "chunk {w} starts at {d}, far before its diagonal {}",
                w * chunk
            );
            prev = d;
        }
        assert_eq!(prev, total);
        let a = Csr::<f64, i32>::try_from_parts(nrows, 1002, row_ptr, cols, vals).unwrap();
        let x: Vec<f64> = (0..1002).map(|c| 1.0 / (1.0 + c as f64)).collect();
        let mut y = vec![f64::NAN; nrows];
        let (rp, ci, v) = (a.row_ptr(), a.col_idx(), a.values());
        spmv_csr_merge(12, 2, chunk, rp, ci, v, &x, &mut y);
        assert_eq!(rel_error(&y, &spmv_ref(&a, &x)), 0.0);
    }

    /// Deterministic pseudo-random numbers for tests.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut r = sparsetool_analyze::bench::SplitMix64::new(seed);
        move || r.next_u64()
    }

    /// Random CSR with some empty rows, some long rows (up to `ncols`).
    fn random_csr(nrows: usize, ncols: usize, seed: u64) -> Csr<f64, i32> {
        let mut r = rng(seed);
        let mut row_ptr = vec![0i32];
        let (mut col, mut val) = (Vec::new(), Vec::new());
        for _ in 0..nrows {
            let len = match r() % 10 {
                0 => 0,
                1 => (r() as usize) % ncols.max(1),
                _ => (r() as usize) % 6,
            }
            .min(ncols);
            let mut cs: Vec<i32> = (0..len).map(|_| (r() as usize % ncols) as i32).collect();
            cs.sort_unstable();
            cs.dedup();
            for c in cs {
                col.push(c);
                val.push((r() % 2000) as f64 / 1000.0 - 1.0);
            }
            row_ptr.push(col.len() as i32);
        }
        Csr::try_from_parts(nrows, ncols, row_ptr, col, val).unwrap()
    }

    fn matrices() -> Vec<Csr<f64, i32>> {
        let mut v = vec![
            Csr::empty(0, 0),
            Csr::empty(3, 4),
            // a single dense row of 300 entries among empty rows
            Csr::try_from_parts(
                3,
                300,
                vec![0, 0, 300, 300],
                (0..300).collect(),
                (0..300).map(|i| (i % 7) as f64 - 3.0).collect(),
            )
            .unwrap(),
        ];
        // power-law-like: runs of empty rows and of single entries (more rows
        // than a merge-path tile holds) around a row of 2,500 entries
        let lens: Vec<usize> = (0..3000)
            .map(|i| match i {
                1500 => 2500,
                _ if i % 3 == 0 || (600..1100).contains(&i) => 0,
                _ => 1,
            })
            .collect();
        let mut row_ptr = vec![0i32];
        let mut cols = Vec::new();
        for (i, &l) in lens.iter().enumerate() {
            cols.extend((0..l).map(|j| ((i * 7 + j) % 2600) as i32));
            let mut row: Vec<i32> = cols.split_off(cols.len() - l);
            row.sort_unstable();
            row.dedup();
            cols.extend(row);
            row_ptr.push(cols.len() as i32);
        }
        let vals = (0..cols.len()).map(|k| (k % 11) as f64 - 5.0).collect();
        v.push(Csr::try_from_parts(3000, 2600, row_ptr, cols, vals).unwrap());
        // rows of 12 entries: merge-path tiles of more than 16 rows whose
        // mean is over 8, which the kernel cuts to end on aligned entries
        let row_ptr: Vec<i32> = (0..=2000).map(|i| i * 12).collect();
        let cols: Vec<i32> = (0..2000)
            .flat_map(|i| (0..12).map(move |j| (i * 5 + j * 131) % 4000))
            .collect();
        let mut rows: Vec<Vec<i32>> = cols.chunks(12).map(<[i32]>::to_vec).collect();
        for r in &mut rows {
            r.sort_unstable();
        }
        let cols: Vec<i32> = rows.concat();
        let vals = (0..cols.len()).map(|k| (k % 13) as f64 - 6.0).collect();
        v.push(Csr::try_from_parts(2000, 4000, row_ptr, cols, vals).unwrap());
        for (n, m, s) in [
            (1, 1, 1),
            (7, 5, 2),
            (100, 80, 3),
            (1000, 1000, 4),
            (257, 3000, 5),
        ] {
            v.push(random_csr(n, m, s));
        }
        v
    }

    fn x_for(a: &Csr<f64, i32>, seed: u64) -> Vec<f64> {
        let mut r = rng(seed);
        (0..a.ncols())
            .map(|_| (r() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0)
            .collect()
    }

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (u, v) in a.iter().zip(b) {
            assert!((u - v).abs() <= 1e-12 * (1.0 + v.abs()), "{u} vs {v}");
        }
    }

    #[test]
    fn references_equal_csr_spmv() {
        for a in matrices() {
            let x = x_for(&a, 9);
            let mut y = vec![0.0; a.nrows()];
            a.spmv(&x, &mut y);
            close(&spmv_ref(&a, &x), &y);
            for lanes in [1, 2, 4, 8, 16, 32] {
                close(
                    &spmv_csr_vector(lanes, a.row_ptr(), a.col_idx(), a.values(), &x),
                    &y,
                );
            }
            let csc = sparsetool_convert::csr_to_csc(&a);
            let mut ys = vec![0.0; a.nrows()];
            spmv_csc_scatter(csc.col_ptr(), csc.row_idx(), csc.values(), &x, &mut ys);
            close(&ys, &y);
            let rows = coo_rows_from_row_ptr(a.row_ptr());
            let mut yc = vec![0.0; a.nrows()];
            spmv_coo(&rows, a.col_idx(), a.values(), &x, &mut yc);
            close(&yc, &y);
            for items in [1, 2, 4] {
                let mut ys = vec![0.0; a.nrows()];
                spmv_coo_segmented(items, &rows, a.col_idx(), a.values(), &x, &mut ys);
                close(&ys, &y);
            }
            for chunk in [32, 64, 256] {
                let mut yb = vec![0.0; a.nrows()];
                spmv_csr_balanced(chunk, a.row_ptr(), a.col_idx(), a.values(), &x, &mut yb);
                close(&yb, &y);
            }
            for (items, window, chunk) in [
                (16, 4, 1),
                (8, 2, 7),
                (8, 4, 256),
                (12, 4, 300),
                (12, 2, 64),
                (1, 1, 40),
                (12, 4, 1000),
                (12, 2, 5000),
                (12, 4, 100_000),
            ] {
                // garbage in y: the merge kernel stores every row
                let mut ym = vec![f64::NAN; a.nrows()];
                let (rp, ci, v) = (a.row_ptr(), a.col_idx(), a.values());
                spmv_csr_merge(items, window, chunk, rp, ci, v, &x, &mut ym);
                close(&ym, &y);
            }
            for c in [1, 4, 32] {
                let s = sliced_ell_from_csr(a.row_ptr(), a.col_idx(), a.values(), c).unwrap();
                let ysell = spmv_sell::<f64, i32>(
                    a.nrows(),
                    c,
                    usize::MAX,
                    None,
                    &s.slice_ptr,
                    &s.slice_width,
                    &s.col_idx,
                    &s.values,
                    &x,
                );
                close(&ysell, &y);
            }
        }
    }

    #[test]
    fn ell_and_jds_references_on_hand_layouts() {
        // rows: [1@0 2@2] [] [3@1]
        let x = [1.0, 10.0, 100.0];
        let ell = spmv_ell::<f64, i32>(
            3,
            2,
            &[2, 0, 1],
            &[0, -1, 1, 2, -1, -1],
            &[1.0, 0.0, 3.0, 2.0, 0.0, 0.0],
            &x,
        );
        assert_eq!(ell, vec![201.0, 0.0, 30.0]);
        // JDS: sorted rows 0 (len 2), 2 (len 1), 1 (len 0)
        // cap 1: row 0's second diagonal is a tail item
        for cap in [64, 1] {
            let (perm, jd, ci) = ([0, 2, 1], [0, 2, 3], [0, 1, 2]);
            let jds = spmv_jds::<f64, i32>(3, cap, &perm, &jd, &ci, &[1.0, 3.0, 2.0], &x);
            assert_eq!(jds, vec![201.0, 0.0, 30.0], "cap {cap}");
        }
    }

    /// The 16-bit ELL columns reproduce the product on every test matrix
    /// and on one whose second group of 32 rows spans 150 000 columns (no
    /// base: its rows read the 32-bit indices), as ELL, as HYB's ELL part
    /// and (JDS's groups of 32 sorted rows) as JDS.
    #[test]
    fn ell_u16_reference_reproduces_the_product() {
        let mut all = matrices();
        // 100 rows, 200 000 columns: row i holds i, i + 7 and 2i (2i + 1 for
        // row 40 of group 1, plus column 150 000)
        let n = 100usize;
        let (mut rp, mut ci, mut va) = (vec![0i32], Vec::new(), Vec::new());
        for i in 0..n {
            let mut cols = vec![i, i + 7, 2 * i + usize::from(i == 40)];
            if i == 40 {
                cols.push(150_000);
            }
            cols.sort_unstable();
            cols.dedup();
            for c in cols {
                ci.push(c as i32);
                va.push(1.0 + (i * 3 + c) as f64 % 5.0);
            }
            rp.push(ci.len() as i32);
        }
        all.push(Csr::try_from_parts(n, 200_000, rp, ci, va).unwrap());
        let mut jds_checked = 0;
        for a in all {
            let x = x_for(&a, 3);
            let mut y = vec![0.0; a.nrows()];
            a.spmv(&x, &mut y);
            let e = sparsetool_convert::csr_to_ell(&a, None, true).unwrap();
            let narrow = match crate::layout::ell_u16(e.nrows(), e.width(), e.col_idx()) {
                Ok(n) => n,
                // no group fits: only a matrix whose every group spans too far
                Err(_) => {
                    assert!(
                        a.nrows() > 0 && a.ncols() > 65_535,
                        "{}x{}",
                        a.nrows(),
                        a.ncols()
                    );
                    continue;
                }
            };
            let yn = spmv_ell_u16(e.nrows(), e.width(), e.col_idx(), &narrow, e.values(), &x);
            close(&yn, &y);
            if a.ncols() == 200_000 {
                assert_eq!(narrow.base, vec![0, -1, 64, 96]);
                assert_eq!(narrow.narrow_rows, 68);
            }
            let h = sparsetool_convert::csr_to_hyb(&a, sparsetool_convert::HybWidth::Auto).unwrap();
            let he = h.ell();
            let hn = crate::layout::ell_u16(he.nrows(), he.width(), he.col_idx()).unwrap();
            let mut yh = spmv_ell_u16(he.nrows(), he.width(), he.col_idx(), &hn, he.values(), &x);
            let c = h.coo();
            spmv_coo(c.rows(), c.cols(), c.values(), &x, &mut yh);
            close(&yh, &y);
            // JDS's 16-bit columns, at caps that leave a tail or none
            let j = sparsetool_convert::csr_to_jds(&a);
            for cap in [2, 3, 256] {
                let jn = match crate::layout::jds_u16(j.nrows(), cap, j.jd_ptr(), j.col_idx()) {
                    Ok(n) => n,
                    // rows too short for the offsets to save bytes
                    Err(e) => {
                        assert!(e.to_string().contains("bytes to replace"), "{e}");
                        continue;
                    }
                };
                jds_checked += 1;
                let (perm, ptr, cols) = (j.perm(), j.jd_ptr(), j.col_idx());
                let yj = spmv_jds_u16(j.nrows(), cap, perm, ptr, cols, &jn, j.values(), &x);
                close(&yj, &y);
                if a.ncols() == 200_000 {
                    // sorted by length, row 40 (4 entries) comes first: its
                    // fourth entry (column 150 000) leaves the first group
                    // without a base where the main kernel walks it
                    let want = if cap >= 4 { (-1, 68) } else { (0, 100) };
                    assert_eq!((jn.base[0].min(0), jn.narrow.0), want, "cap {cap}");
                    assert!(jn.base[1..].iter().all(|&b| b >= 0), "cap {cap}");
                }
            }
        }
        assert!(
            jds_checked >= 10,
            "jds-u16 checked on {jds_checked} layouts"
        );
    }

    /// The `n x n` CSR of `rp`, `ci`, `va` (integer values, so sums are
    /// exact), an integer `x` and the CSR product `y`.
    fn exact_case(
        n: usize,
        rp: Vec<i32>,
        ci: Vec<i32>,
        va: Vec<f64>,
    ) -> (Csr<f64, i32>, Vec<f64>, Vec<f64>) {
        let a = Csr::<f64, i32>::try_from_parts(n, n, rp, ci, va).unwrap();
        let x: Vec<f64> = (0..n).map(|i| (i % 7) as f64 - 3.0).collect();
        let mut y = vec![0.0; n];
        a.spmv(&x, &mut y);
        (a, x, y)
    }

    /// JDS's and SELL's window-ordered main blocks cover every row once: a
    /// matrix of 300 000 rows of interleaved lengths 1 to 3 (three windows),
    /// plus a few long rows, against the CSR product.
    #[test]
    fn window_blocks_reproduce_the_product() {
        let n = 300_000usize;
        let mut rp = vec![0i32];
        let (mut ci, mut va) = (Vec::new(), Vec::new());
        for i in 0..n {
            let len = if i % 40_009 == 5 { 900 } else { 1 + i % 3 };
            for j in 0..len {
                ci.push(((i + j * 71) % n) as i32);
                va.push(((i + j) % 5) as f64 - 2.0);
            }
            let row = &mut ci[rp[i] as usize..];
            row.sort_unstable();
            rp.push(ci.len() as i32);
        }
        let (a, x, y) = exact_case(n, rp, ci, va);
        let j = sparsetool_convert::csr_to_jds(&a);
        let dlen = |d: usize| j.jd_ptr()[d + 1] as usize - j.jd_ptr()[d] as usize;
        let ndiag = j.jd_ptr().len() - 1;
        for cap in [2, 3, 64] {
            let perm = j.perm();
            let blocks = crate::plan::jds_main_blocks(n, 0..n, ndiag, dlen, |p| perm[p] as usize).0;
            assert!(!blocks.is_empty(), "cap {cap}: window order expected");
            let yj = spmv_jds(n, cap, perm, j.jd_ptr(), j.col_idx(), j.values(), &x);
            assert_eq!(yj, y, "jds cap {cap}");
        }
        // SELL sorted over all rows: window-ordered slices too
        let s = sparsetool_convert::csr_to_sell(&a, 32, n).unwrap();
        let widths: Vec<usize> = s.slice_width().iter().map(|&w| w as usize).collect();
        let perm = s.perm();
        let shape = (32, n);
        assert!(
            !crate::plan::sell_slice_blocks(n, shape, &widths, |p| perm[p] as usize).is_empty()
        );
        for cap in [2, 64] {
            let ys = spmv_sell(
                n,
                32,
                cap,
                Some(perm),
                s.slice_ptr(),
                s.slice_width(),
                s.col_idx(),
                s.values(),
                &x,
            );
            assert_eq!(ys, y, "sell cap {cap}");
        }
    }

    /// The long-row split of JDS and SELL (main launch up to `cap`, tail
    /// items after) reproduces A x on matrices with rows far longer than
    /// the cap, for several caps, sigma windows and slice heights.
    #[test]
    fn long_row_tails_reproduce_the_product() {
        // row lengths 1..=3 except a few long rows (one of 700, one of 300,
        // one of 65), integer values so the sums are exact
        let n = 200usize;
        let lens: Vec<usize> = (0..n)
            .map(|i| match i {
                7 => 700.min(n),
                50 => 300.min(n),
                120 => 65,
                _ => 1 + i % 3,
            })
            .collect();
        let mut rp = vec![0i32];
        let (mut ci, mut va) = (Vec::new(), Vec::new());
        for (i, &l) in lens.iter().enumerate() {
            for j in 0..l {
                ci.push(((i * 7 + j * 13) % n) as i32);
                va.push(((i + j) % 5) as f64 - 2.0);
            }
            // columns sorted and unique per row
            let start = rp[i] as usize;
            let row = &mut ci[start..];
            row.sort_unstable();
            let mut w = 0;
            for k in 0..row.len() {
                if k == 0 || row[k] != row[w - 1] {
                    row[w] = row[k];
                    w += 1;
                }
            }
            ci.truncate(start + w);
            va.truncate(start + w);
            rp.push(ci.len() as i32);
        }
        let (a, x, y) = exact_case(n, rp, ci, va);
        let j = sparsetool_convert::csr_to_jds(&a);
        for cap in [1, 2, 5, 32, 64, 1000] {
            let yj = spmv_jds(n, cap, j.perm(), j.jd_ptr(), j.col_idx(), j.values(), &x);
            assert_eq!(yj, y, "jds cap {cap}");
        }
        for (c, sigma) in [(32, 1), (32, 256), (4, 8), (1, 1)] {
            let s = sparsetool_convert::csr_to_sell(&a, c, sigma).unwrap();
            for cap in [1, 3, 64, 1000] {
                let ys = spmv_sell(
                    n,
                    c,
                    cap,
                    Some(s.perm()),
                    s.slice_ptr(),
                    s.slice_width(),
                    s.col_idx(),
                    s.values(),
                    &x,
                );
                assert_eq!(ys, y, "sell C {c} sigma {sigma} cap {cap}");
                // the 16-bit columns (n = 200 columns: every slice fits)
                let narrow =
                    crate::layout::sell_u16(c, cap, s.slice_ptr(), s.slice_width(), s.col_idx())
                        .unwrap();
                let yn = spmv_sell_u16(
                    n,
                    c,
                    cap,
                    Some(s.perm()),
                    s.slice_ptr(),
                    s.slice_width(),
                    s.col_idx(),
                    &narrow,
                    s.values(),
                    &x,
                );
                assert_eq!(yn, y, "sell-u16 C {c} sigma {sigma} cap {cap}");
            }
        }
    }

    /// JDS's tail with chunks goes first from 4M entries on (chunk 0 the
    /// long rows' first `cap` diagonals, the main kernel's blocks past
    /// them, the parts meeting in per-row sums), and after the main kernel
    /// below (its chunks from diagonal `cap`): the reference of either
    /// order reproduces the CSR product, for several caps.
    #[test]
    fn jds_tail_with_chunks_reproduces_the_product() {
        for n in [1_000_000usize, 100_000] {
            let mut rp = vec![0i32];
            let (mut ci, mut va) = (Vec::new(), Vec::new());
            for i in 0..n {
                // 1 000 long rows: 800 of 1 200 entries, 200 of 1 500 (their
                // last 300 diagonals are bands: fewer than BAND_ROWS rows);
                // the rest of 3
                let k = n / 1000;
                let len = match (i % k, (i / k) % 5) {
                    (0, 0) => 1500,
                    (0, _) => 1200,
                    _ => 3,
                };
                let start = ci.len();
                for j in 0..len {
                    ci.push(((i * 7 + j * 13) % n) as i32);
                    va.push(((i + j) % 5) as f64 - 2.0);
                }
                ci[start..].sort_unstable();
                rp.push(ci.len() as i32);
            }
            let (a, x, y) = exact_case(n, rp, ci, va);
            let j = sparsetool_convert::csr_to_jds(&a);
            let dlen = |d: usize| j.jd_ptr()[d + 1] as usize - j.jd_ptr()[d] as usize;
            let ndiag = j.jd_ptr().len() - 1;
            let own = crate::plan::long_row_cap(n, a.nnz(), ndiag);
            for cap in [own, 3, 64] {
                let first = crate::plan::jds_tail_first(a.nnz(), ndiag, cap, dlen);
                assert_eq!(first, n == 1_000_000, "n {n} cap {cap}");
                let (items, bands) = crate::plan::jds_tail_items(ndiag, cap, first, dlen);
                assert!(items.len() > 2 && !bands.is_empty(), "n {n} cap {cap}");
                let yj = spmv_jds(n, cap, j.perm(), j.jd_ptr(), j.col_idx(), j.values(), &x);
                assert_eq!(yj, y, "jds n {n} cap {cap}");
            }
        }
    }

    #[test]
    fn errors_and_tolerances() {
        assert_eq!(rel_error(&[1.0f64, 2.0], &[1.0, 2.0]), 0.0);
        assert!(rel_error(&[f64::NAN, 2.0], &[1.0, 2.0]).is_infinite());
        assert!(rel_error(&[1.0f32], &[1.0, 2.0]).is_infinite());
        assert!((rel_error(&[0.5f64], &[0.0]) - 0.5).abs() < 1e-15);
        assert_eq!(rel_error::<f32>(&[], &[]), 0.0);
        assert_eq!(tolerance(Precision::F32, 5), 1e-4);
        assert_eq!(tolerance(Precision::F64, 64), 1e-12);
        assert!((tolerance(Precision::F32, 6400) - 1e-3).abs() < 1e-15);
    }
}
