//! Pure launch planning: grid sizes, sub-warp widths, chunk sizes and the
//! byte model. Nothing here touches a device, so all of it is unit-tested on
//! the CPU.

/// Threads per block for every kernel (8 warps).
pub const BLOCK: u32 = 256;

/// Entries per thread of the segmented COO kernel for values of
/// `value_bytes` bytes (`COO_ITEMS_<t>` in `coo.cu`): consecutive entries
/// loaded with one vector load per array, so that many gathers of x are in
/// flight per thread. 4 for f32; 2 for f64 (4 measured slower under the
/// kernels' 32-register cap) and complex64; 1 for complex128.
#[must_use]
pub fn coo_items(value_bytes: usize) -> usize {
    match value_bytes {
        0..=4 => 4,
        5..=8 => 2,
        _ => 1,
    }
}

// The cap of one thread's walk and the CSR vector kernel's lanes are part
// of the time model (its serial term), so they live there; the kernels'
// plans use the same functions.
pub use sparsetool_analyze::timing::{csr_vector_lanes, long_row_cap, LONG_ROW_MIN};

/// Rows that keep fewer than this many rows beside them past the cap (JDS:
/// active in the same diagonals; SELL: as long in the same slice) are
/// [`Segments`]: walked by whole blocks, each lane on its own slots, one
/// atomic per block, instead of one thread per row and chunk, whose lone
/// walk and one atomic per `cap` slots on the same `y` serialised (a row of
/// 46 500 entries beside rows of 2 took 47 us, 18x its x-gather floor, on
/// the H100; BENCHMARKS.md, issue 17).
pub const NARROW_ROWS: usize = 8;

/// Slots of one long row a block of [`BLOCK`] threads walks per segment
/// (4 a thread; `SEG_SPAN` in `common.cuh`).
pub const SEG_SPAN: usize = 4 * BLOCK as usize;

/// The long rows' segments: `(sorted position, first slot, end slot)`
/// triples, one block of the tail launch each, flattened (3 `i32` each).
pub type Segments = Vec<i32>;

/// Appends the segments of sorted position `p`'s slots `[s0, s1)`, at most
/// [`SEG_SPAN`] each.
fn push_segments(segs: &mut Segments, p: usize, s0: usize, s1: usize) {
    for s in (s0..s1).step_by(SEG_SPAN) {
        segs.extend([p as i32, s as i32, (s + SEG_SPAN).min(s1) as i32]);
    }
}

/// The tail of the JDS kernel (`spmv_jds_<t>_tail`), in two parts:
/// - chunks, one thread per row active in their first diagonal: chunk `c
///   >= 1` covers diagonals `[c * cap, (c + 1) * cap)` while that diagonal
///   has at least [`NARROW_ROWS`] rows; returned as the first thread of
///   each chunk and the total (`nchunks + 1` entries);
/// - from the first chunk start with fewer rows, each of those rows' last
///   diagonals as [`Segments`].
///
/// Both empty when every row fits `cap`.
#[must_use]
pub fn jds_tail_items(
    ndiag: usize,
    cap: usize,
    diag_len: impl Fn(usize) -> usize,
) -> (Vec<i64>, Segments) {
    let cap = cap.max(1);
    let (mut ptr, mut segs) = (Vec::new(), Segments::new());
    let mut total = 0i64;
    let mut d = cap;
    while d < ndiag && diag_len(d) >= NARROW_ROWS {
        if ptr.is_empty() {
            ptr.push(0);
        }
        total += diag_len(d) as i64;
        ptr.push(total);
        d += cap;
    }
    if d < ndiag {
        // diagonal lengths never increase: row p's run ends at the first
        // diagonal no longer than p, which moves down as p grows
        let mut end = ndiag;
        for p in 0..diag_len(d) {
            while end > d && diag_len(end - 1) <= p {
                end -= 1;
            }
            push_segments(&mut segs, p, d, end);
        }
    }
    (ptr, segs)
}

/// The entries of a padded row of `width` slots, its padding after them:
/// the first slot for which `stored` is false (binary search).
#[must_use]
pub fn stored_len(width: usize, stored: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, width);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if stored(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The tail items of the SELL kernel (`spmv_sell_<t>_tail`) for slices of
/// `slice_height` rows: `(slice, chunk)` for every chunk `c >= 1` of `cap`
/// slots of every slice wider than `cap` that has at least [`NARROW_ROWS`]
/// rows longer than `cap` (`slice_height` threads each), in slice order;
/// the other wide slices' rows longer than `cap` as [`Segments`] of their
/// slots past `cap` (`row_len(slice, local row)`: its stored entries,
/// the padding after them not counted).
#[must_use]
pub fn sell_tail_items(
    widths: impl Iterator<Item = usize>,
    slice_height: usize,
    cap: usize,
    row_len: impl Fn(usize, usize) -> usize,
) -> (Vec<i32>, Vec<i32>, Segments) {
    let cap = cap.max(1);
    let (mut slices, mut chunks, mut segs) = (Vec::new(), Vec::new(), Segments::new());
    for (k, w) in widths.enumerate() {
        if w <= cap {
            continue;
        }
        let long: Vec<(usize, usize)> = (0..slice_height)
            .map(|r| (r, row_len(k, r)))
            .filter(|&(_, len)| len > cap)
            .collect();
        if long.len() >= NARROW_ROWS {
            for c in 1..w.div_ceil(cap) {
                slices.push(k as i32);
                chunks.push(c as i32);
            }
        } else {
            for (r, len) in long {
                push_segments(&mut segs, k * slice_height + r, cap, len);
            }
        }
    }
    (slices, chunks, segs)
}

/// Threads of the segmented COO kernel for `nnz` entries: one warp per tile
/// of `32 * coo_items(value_bytes)` entries.
#[must_use]
pub fn coo_segmented_threads(nnz: usize, value_bytes: usize) -> u64 {
    (nnz as u64).div_ceil(32 * coo_items(value_bytes) as u64) * 32
}

/// Whether the segmented COO kernel merges the last row pieces of a
/// block's warps before its atomics (`spmv_coo_<t>_segmented_merge`):
/// for values of 8 bytes or more on rows of at least 64 tiles, for 4-byte
/// values on rows of at least 2 048 tiles (`longest_row` entries, tiles of
/// `32 * coo_items` entries), where the warps' atomics on one row
/// serialise. Measured on the H100 (BENCHMARKS.md, issue 17): in f64, rows
/// of 4 096 entries and more (dense rows, circuits, the arrowhead) 4-14 %
/// faster, power laws of rows up to 1 000 entries 1-4 % slower; in f32,
/// rows of 3 906 and 7 812 tiles (a circuit of 10M rows, a dense row of 1M
/// entries) 4-15 % faster, rows of 8 to 625 tiles 2-9 % slower, and a row
/// of 977 tiles mixed (HYB 6 % faster, COO 6 % slower).
///
/// ```
/// use sparsetool_gpu::plan::coo_merge;
/// assert!(coo_merge(46_500, 8)); // the arrowhead, f64
/// assert!(!coo_merge(1_000, 8)); // a capped power law
/// assert!(!coo_merge(46_500, 4)); // the arrowhead, f32
/// assert!(coo_merge(1_000_000, 4)); // a dense row of 1M entries, f32
/// ```
#[must_use]
pub fn coo_merge(longest_row: usize, value_bytes: usize) -> bool {
    let tiles = if value_bytes >= 8 { 64 } else { 2048 };
    longest_row >= tiles * 32 * coo_items(value_bytes)
}

/// Grid and block of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    /// Blocks in the grid (x only).
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
}

/// Dims for `threads` threads in blocks of `block`, `None` when there is no
/// work (a grid of zero blocks is not a valid launch) or the grid would exceed
/// the 2^31 - 1 blocks CUDA allows.
#[must_use]
pub fn dims_for_threads(threads: u64, block: u32) -> Option<LaunchDims> {
    if threads == 0 || block == 0 {
        return None;
    }
    let grid = threads.div_ceil(u64::from(block));
    let grid = u32::try_from(grid).ok().filter(|&g| g <= i32::MAX as u32)?;
    Some(LaunchDims { grid, block })
}

/// Sub-warp width of the binned CSR kernel for a row of `len` entries: each
/// lane handles two entries per pass (two accumulators), so a row gets the
/// power of two at or above `len / 2` lanes, between 1 and 32 (rows of 0-2
/// entries: 1 lane; 3-4: 2; ...; over 32: a full warp).
#[must_use]
pub fn binned_lanes(len: usize) -> u32 {
    (len.div_ceil(2).max(1).next_power_of_two()).min(32) as u32
}

/// The bins of the binned CSR kernel: for each lane width in
/// [`BINNED_LANES`] order, the rows of that width (stable: ascending rows).
/// Returns the row list and, per width, `(lanes, start, count)` of its
/// non-empty run in the list.
#[must_use]
pub fn csr_bins(
    row_lengths: impl Iterator<Item = usize> + Clone,
) -> (Vec<i32>, Vec<(u32, usize, usize)>) {
    let mut counts = [0usize; 6];
    let slot = |len: usize| binned_lanes(len).trailing_zeros() as usize;
    for len in row_lengths.clone() {
        counts[slot(len)] += 1;
    }
    let mut start = [0usize; 6];
    for b in 1..6 {
        start[b] = start[b - 1] + counts[b - 1];
    }
    let bins = (0..6)
        .filter(|&b| counts[b] > 0)
        .map(|b| (1u32 << b, start[b], counts[b]))
        .collect();
    let total = start[5] + counts[5];
    let mut rows = vec![0i32; total];
    let mut next = start;
    for (r, len) in row_lengths.enumerate() {
        let b = slot(len);
        rows[next[b]] = r as i32;
        next[b] += 1;
    }
    (rows, bins)
}

/// Lane widths of the binned CSR kernel, in bin order.
pub const BINNED_LANES: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// Lane counts for which `csr_vector.cu` has a kernel.
pub const CSR_VECTOR_LANES: [u32; 5] = [2, 4, 8, 16, 32];
// (`csr_vector.cu` also has a 1-lane instance, used only by the binned kernel.)

/// Lanes of the CSR vector kernel that [`crate::GpuKernel::for_csr`]
/// picks: the power of two at or below the mean row length, between 2
/// and 32. On the corpora of the H100 and H200 it beat the planned lanes
/// ([`csr_vector_lanes`], the power of two at or above the mean, which
/// `bench` and the time model keep) on stencils and FEM matrices by up to
/// 1.7x: a sub-warp that a row fills keeps every lane busy.
///
/// ```
/// use sparsetool_gpu::plan::lanes_at_or_below_mean;
/// assert_eq!(lanes_at_or_below_mean(100, 500), 4);
/// assert_eq!(lanes_at_or_below_mean(100, 1600), 16);
/// assert_eq!(lanes_at_or_below_mean(100, 100), 2);
/// assert_eq!(lanes_at_or_below_mean(10, 10_000), 32);
/// assert_eq!(lanes_at_or_below_mean(0, 0), 2);
/// ```
#[must_use]
pub fn lanes_at_or_below_mean(nrows: usize, nnz: usize) -> u32 {
    let mean = nnz.div_ceil(nrows.max(1)).max(1);
    let below = 1usize << (usize::BITS - 1 - mean.leading_zeros());
    (below.min(32) as u32).max(2)
}

/// Entries per warp of the balanced CSR kernel: enough warps for about four
/// waves of a full device (`sm_count` multiprocessors, 64 resident warps each),
/// rounded up to whole 32-entry tiles, between 32 and 2048 entries. Each warp
/// starts with a binary search over the rows (about log2(nrows) dependent
/// loads), so chunks must be long enough to amortise it: 256-entry chunks
/// measured 13 % slower than cuSPARSE on a 65M-entry power-law matrix.
#[must_use]
pub fn balanced_chunk(nnz: usize, sm_count: u32) -> u32 {
    let target_warps = (sm_count.max(1) as usize) * 64 * 4;
    let per_warp = nnz.div_ceil(target_warps).max(1);
    (per_warp.div_ceil(32) * 32).clamp(32, 2048) as u32
}

/// Number of warps the balanced CSR kernel needs.
#[must_use]
pub fn balanced_warps(nnz: usize, chunk: u32) -> u64 {
    (nnz as u64).div_ceil(u64::from(chunk.max(1)))
}

/// Items (rows and entries) per lane and tile of the merge-path CSR kernel
/// (`MP_ITEMS_<t>` in `csr_merge.cu`) for `value_bytes`-byte values of a
/// complex type or not: 12 for f32 and f64, 8 for complex64, 4 for
/// complex128.
#[must_use]
pub fn merge_items(value_bytes: usize, complex: bool) -> usize {
    match (value_bytes, complex) {
        (0..=8, false) => 12,
        (0..=8, true) => 8,
        _ => 4,
    }
}

/// Tiles and chunks of the merge-path CSR kernel end on multiples of this
/// many entries where they can (`MP_ALIGN` in `csr_merge.cu`): 128 bytes
/// of 32-bit column indices, so that no line of the entry arrays, which
/// are read evict-first, is loaded by two tiles or two warps. A tile along
/// one row is cut at the last multiple inside it; a tile of several rows
/// only when [`MERGE_MIX_MEAN`] and [`MERGE_MIX_ROWS`] allow; each chunk
/// starts at the path point of the multiple at or before its diagonal.
pub const MERGE_ALIGN: usize = 32;

/// A merge-path tile of several rows is cut to end on an aligned entry
/// only when its entries are more than this many times its rows...
pub const MERGE_MIX_MEAN: usize = 8;

/// ...and it holds at least this many rows (`MP_MIX_MEAN`, `MP_MIX_ROWS`
/// in `csr_merge.cu`): on FEM matrices and 3D stencils (about 13 rows of
/// 27-30 entries a tile) the shorter tiles cost 3-4 %, on power laws and
/// uniform columns they gain 1-3 % (BENCHMARKS.md, issue 17).
pub const MERGE_MIX_ROWS: usize = 16;

/// Rows of the merge-path CSR kernel's window (`MP_WIN_<t>` in
/// `csr_merge.cu`, in units of 32 rows; a power of two, the window being a
/// ring) for `value_bytes`-byte values: 4 for f32, 2 for wider values. A
/// tile ends by the end of the window's last row.
#[must_use]
pub fn merge_window(value_bytes: usize) -> usize {
    if value_bytes <= 4 {
        4
    } else {
        2
    }
}

/// Items (`items = nrows + nnz`: row ends plus entries) per warp of the
/// merge-path CSR kernel: about eight waves of a full device (`sm_count`
/// multiprocessors, 64 resident warps each), rounded up to whole 256-item
/// tiles. Each warp reads its start from the partition computed when the
/// kernel is prepared, so a warp's fixed cost is one load, the row ends of
/// its first window and one carry slot; the waves even out chunks of
/// unequal cost (an entry gathers `x`, a row end only stores). Chosen among
/// 4, 8, 12 and 16 waves on the H100 and H200 (BENCHMARKS.md, issue 17):
/// sixteen waves, once used for 8-byte values, were within 1.5 % of eight on
/// power laws and 8-15 % slower on 3D stencils and FEM matrices. Use
/// [`balanced_warps`] with `items` for the warp count.
#[must_use]
pub fn merge_chunk(items: usize, sm_count: u32) -> u32 {
    let target_warps = (sm_count.max(1) as usize) * 64 * 8;
    let per_warp = items.div_ceil(target_warps).max(1);
    (per_warp.div_ceil(256) * 256).min(1 << 30) as u32
}

/// Bytes of `x` one column panel of [`crate::GpuKernel::CsrPanels`] gathers
/// from: about half the 50 MB L2 cache of the H100 and H200, so that the
/// panel of `x` stays cached beside the matrix stream. Measured with
/// cuSPARSE by two panels (scripts/column-split-probe.py, BENCHMARKS.md,
/// issue 17): `x` of 33.6 MB (4.2M columns in f64) gathered at random gains
/// 16–25 % on the H100 in halves of 16.8 MB; `x` of 16.8 MB (f32) loses
/// 1–10 % when halved.
/// The same bound is the window of `analyze`'s `far` term
/// ([`sparsetool_analyze::rows::X_CACHE_BYTES`]), which this kernel avoids.
pub const PANEL_X_BYTES: usize = sparsetool_analyze::rows::X_CACHE_BYTES as usize;

/// Column panels of [`crate::GpuKernel::CsrPanels`] for `ncols` columns of
/// `value_bytes`-byte values: enough that each gathers at most
/// [`PANEL_X_BYTES`] of `x` (1: no split).
///
/// ```
/// use sparsetool_gpu::plan::csr_panels;
/// assert_eq!(csr_panels(4_200_000, 8), 2); // 33.6 MB of x
/// assert_eq!(csr_panels(4_200_000, 4), 1); // 16.8 MB
/// assert_eq!(csr_panels(0, 8), 1);
/// ```
#[must_use]
pub fn csr_panels(ncols: usize, value_bytes: usize) -> u32 {
    let panels = (ncols.saturating_mul(value_bytes)).div_ceil(PANEL_X_BYTES);
    panels.clamp(1, 1 << 16) as u32
}

/// Where `panels` column panels of equal width start: `panels + 1`
/// column bounds from 0 to `ncols` (panels beyond `ncols` are empty).
///
/// ```
/// use sparsetool_gpu::plan::panel_cuts;
/// assert_eq!(panel_cuts(10, 3), [0, 4, 7, 10]);
/// assert_eq!(panel_cuts(2, 1), [0, 2]);
/// ```
#[must_use]
pub fn panel_cuts(ncols: usize, panels: u32) -> Vec<usize> {
    let k = panels.max(1) as usize;
    (0..=k).map(|i| (ncols * i).div_ceil(k)).collect()
}

/// Threads per row the ELL kernel (`spmv_ell_<t>`, also HYB's first part)
/// can run with: its lane groups read `32 / lanes` consecutive rows of a
/// slot, whole 32-byte sectors of 4-byte values up to four lanes.
pub const ELL_LANES: [u32; 3] = [1, 2, 4];

/// Threads per row of the ELL kernel for `nrows` rows of `width` slots on
/// a device of `sm_count` multiprocessors: the fewest of [`ELL_LANES`] that
/// launch at least 384 threads a multiprocessor (a fifth of a full wave),
/// but never fewer than [`ELL_MIN_SLOTS`] slots per thread.
///
/// Measured with `bench --sweep`, which times every lane count (H100,
/// BENCHMARKS.md, issue 17): two or four lanes won on every matrix of up to
/// 39k rows (a 27-point stencil of 39k rows 5.4 -> 5.1 us, a FEM matrix of
/// 3.3k rows 5.5 -> 3.7 us, f32), one lane from 62k rows on (16 uniform
/// columns a row: 62k rows 9.8 us with one lane, 10.3 with two).
///
/// ```
/// use sparsetool_gpu::plan::ell_lanes;
/// assert_eq!(ell_lanes(39_304, 27, 132), 2); // 3D stencil, few rows
/// assert_eq!(ell_lanes(3_300, 30, 132), 4);
/// assert_eq!(ell_lanes(62_500, 16, 132), 1); // rows enough
/// assert_eq!(ell_lanes(4_096, 5, 132), 2); // two slots a thread at least
/// assert_eq!(ell_lanes(0, 0, 132), 1);
/// ```
#[must_use]
pub fn ell_lanes(nrows: usize, width: usize, sm_count: u32) -> u32 {
    let enough = (sm_count.max(1) as usize) * 384;
    let mut lanes = 1;
    while lanes < 4 && nrows * lanes < enough && width >= 2 * lanes * ELL_MIN_SLOTS {
        lanes *= 2;
    }
    lanes as u32
}

/// Slots each thread of the ELL kernel keeps at least ([`ell_lanes`]).
pub const ELL_MIN_SLOTS: usize = 2;

/// Slots a thread of a batched ELL or SELL kernel walks from which it runs
/// the `_deep` kernel (`spmv_ell_<t>_deep`, `spmv_sell_<t>_deep`):
/// batches of 8 under a 64-register cap, at half the resident threads
/// (`slot_sum` in `common.cuh`). Measured on the H100 (SELL-32,
/// scripts/sell-variants.py, BENCHMARKS.md, issue 17): 1-7 % faster than
/// batches of 4 on 16 to 30 slots a row, 40 % slower on 5 (the 2D stencil,
/// f64).
pub const DEEP_SLOTS: usize = 16;

/// Slots per batch of the batched ELL and SELL kernels (`SlotBatch` in
/// `common.cuh`) for threads that walk `slots` slots each of
/// `value_bytes`-byte values, complex or not: 8 from [`DEEP_SLOTS`] on
/// (the `_deep` kernels), else 4 (`_b4`); complex64 takes 2 in `_b4`
/// (4 spilled under its 32 registers), complex128 half of either.
///
/// ```
/// use sparsetool_gpu::plan::slot_batch;
/// assert_eq!(slot_batch(27, 4, false), 8);
/// assert_eq!(slot_batch(11, 8, false), 4);
/// assert_eq!(slot_batch(11, 8, true), 2);
/// assert_eq!(slot_batch(27, 8, true), 8);
/// assert_eq!(slot_batch(27, 16, true), 4);
/// assert_eq!(slot_batch(5, 16, true), 2);
/// ```
#[must_use]
pub fn slot_batch(slots: usize, value_bytes: usize, complex: bool) -> u32 {
    let deep = slots >= DEEP_SLOTS;
    match (deep, complex, value_bytes >= 16) {
        (true, true, true) => 4,
        (true, _, _) => 8,
        (false, true, _) => 2,
        (false, false, _) => 4,
    }
}

/// Threads of the ELL kernel with `lanes` threads per row: whole warps of
/// `32 / lanes` rows.
///
/// ```
/// use sparsetool_gpu::plan::ell_threads;
/// assert_eq!(ell_threads(33, 1), 64);
/// assert_eq!(ell_threads(33, 4), 160);
/// assert_eq!(ell_threads(0, 2), 0);
/// ```
#[must_use]
pub fn ell_threads(nrows: usize, lanes: u32) -> u64 {
    let per_warp = (32 / lanes.clamp(1, 32)) as u64;
    (nrows as u64).div_ceil(per_warp) * 32
}

/// Threads of the SELL kernel: one per row slot of every slice.
#[must_use]
pub fn sell_threads(nslices: usize, slice_height: usize) -> u64 {
    nslices as u64 * slice_height as u64
}

/// Whether JDS's tail goes as a programmatic dependent launch (on devices
/// that have it) for a matrix of `nnz` entries: below 4M entries. As a
/// dependent launch it was 15-30 % faster on matrices of 1M entries but
/// 8-15 % slower on power laws and circuits of 8M, where it waits for the
/// whole main kernel instead (H100, BENCHMARKS.md, issue 17).
#[must_use]
pub fn jds_dependent_tail(nnz: usize) -> bool {
    nnz < 4_000_000
}

/// Threads of a long-row tail launch: whole blocks for `chunk_threads`
/// (one a row and chunk), then one block per segment of `segs`
/// ([`Segments`], 3 entries each); the kernels find the first segment
/// block the same way.
#[must_use]
pub fn tail_threads(chunk_threads: u64, segs: usize) -> u64 {
    let block = u64::from(BLOCK);
    (chunk_threads.div_ceil(block) + (segs / 3) as u64) * block
}

/// Number of slices of height `c` covering `nrows` rows.
#[must_use]
pub fn slice_count(nrows: usize, c: usize) -> usize {
    if c == 0 {
        0
    } else {
        nrows.div_ceil(c)
    }
}

/// The sentence stored in `bytes_model` of a bench report.
pub const BYTES_MODEL: &str = "gbps counts the minimum bytes of one SpMV: every array of the \
     kernel's own stored format read once (values, indices, pointers, permutations and padding \
     as uploaded, 32-bit indices), x read once and y written once, divided by the median time; \
     cached re-reads of x and the read-modify-write of y by atomic kernels are not counted. \
     copy_gbps counts bytes read plus bytes written by a 1 GiB device-to-device copy.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims() {
        assert_eq!(dims_for_threads(0, 256), None);
        assert_eq!(
            dims_for_threads(1, 256),
            Some(LaunchDims {
                grid: 1,
                block: 256
            })
        );
        assert_eq!(
            dims_for_threads(256, 256),
            Some(LaunchDims {
                grid: 1,
                block: 256
            })
        );
        assert_eq!(
            dims_for_threads(257, 256),
            Some(LaunchDims {
                grid: 2,
                block: 256
            })
        );
        assert_eq!(dims_for_threads(u64::MAX, 256), None);
        assert_eq!(dims_for_threads(10, 0), None);
    }

    #[test]
    fn lanes_follow_mean_row_length() {
        for (rows, nnz, lanes) in [
            (0, 0, 2),
            (10, 0, 2),
            (10, 10, 2),
            (100, 300, 4),
            (100, 500, 8),   // 2D Laplacian
            (100, 1600, 16), // uniform 16/row
            (100, 2700, 32), // 3D 27-point
            (1, 100_000, 32),
        ] {
            assert_eq!(csr_vector_lanes(rows, nnz), lanes, "{rows} rows, {nnz} nnz");
        }
        for n in 1..200 {
            assert!(CSR_VECTOR_LANES.contains(&csr_vector_lanes(7, n)));
        }
    }

    #[test]
    fn balanced_chunks() {
        assert_eq!(balanced_chunk(0, 132), 32);
        assert_eq!(balanced_chunk(1000, 132), 32);
        assert_eq!(balanced_chunk(88_000_000, 132), 2048);
        let c = balanced_chunk(2_000_000, 132);
        assert!(c % 32 == 0 && (32..=2048).contains(&c));
        assert_eq!(balanced_warps(0, 256), 0);
        assert_eq!(balanced_warps(257, 256), 2);
        assert_eq!(balanced_chunk(5, 0), 32);
        assert_eq!(merge_chunk(0, 132), 256);
        assert_eq!(merge_chunk(1000, 132), 256);
        // 101M items (a 2D Laplacian of 16.8M rows): 8 waves of 132 * 64
        // warps, 1,492 items per warp -> 1,536
        assert_eq!(merge_chunk(100_794_410, 132), 1536);
        assert_eq!(merge_chunk(5, 0), 256);
        assert_eq!(
            (merge_window(4), merge_window(8), merge_window(16)),
            (4, 2, 2)
        );
        assert_eq!((merge_items(4, false), merge_items(8, false)), (12, 12));
        assert_eq!((merge_items(8, true), merge_items(16, true)), (8, 4));
    }

    #[test]
    fn bins() {
        for (len, lanes) in [(0, 1), (2, 1), (3, 2), (16, 8), (64, 32), (100_000, 32)] {
            assert_eq!(binned_lanes(len), lanes, "row length {len}");
        }
        let lens = [5usize, 0, 70, 1, 6, 3];
        let (rows, bins) = csr_bins(lens.iter().copied());
        assert_eq!(bins, vec![(1, 0, 2), (2, 2, 1), (4, 3, 2), (32, 5, 1)]);
        assert_eq!(rows, vec![1, 3, 5, 0, 4, 2]);
        let (rows, bins) = csr_bins(std::iter::empty());
        assert!(rows.is_empty() && bins.is_empty());
    }

    #[test]
    fn long_rows() {
        // regular matrices: every row one thread
        assert_eq!(long_row_cap(100, 500, 5), 5);
        assert_eq!(long_row_cap(400_000, 6_400_000, 40), 40);
        // on a small matrix rows over 16 are split at 8
        assert_eq!(long_row_cap(100, 1600, 16), 16);
        assert_eq!(long_row_cap(100, 1600, 40), 8);
        assert_eq!(long_row_cap(10, 0, 0), 1);
        // a power-law matrix with a row of 2.5M entries (mean 17)
        assert_eq!(long_row_cap(4_200_000, 70_000_000, 2_500_000), 96);
        // long rows on a small matrix: a cap of one slot per 50 000
        // entries (at least 8), rows up to that (at least 16) whole
        assert_eq!(long_row_cap(1000, 1_000_000, 5000), 24);
        assert_eq!(long_row_cap(1000, 1_000_000, 24), 24);
        assert_eq!(long_row_cap(46_500, 139_498, 46_500), 8);
        assert_eq!(long_row_cap(3300, 98_884, 42), 8);
        assert_eq!(long_row_cap(2003, 83_883, 95), 8);
        // rows of 300 on average: the walk stops at LONG_ROW_MIN
        assert_eq!(long_row_cap(100_000, 30_000_000, 400), LONG_ROW_MIN);
        // diagonal lengths 9 9 9 9 9 8 4 4 2 1 1 1 (rows of 12, 9, 8, 8,
        // 6, 6, 6, 6, 5): cap 2; chunks at diagonals 2 and 4 with 9 rows
        // each; diagonal 6 has 4 rows < NARROW_ROWS: their segments
        let lens = [9usize, 9, 9, 9, 9, 8, 4, 4, 2, 1, 1, 1];
        let (items, segs) = jds_tail_items(lens.len(), 2, |d| lens[d]);
        assert_eq!(items, vec![0, 9, 18]);
        assert_eq!(segs, vec![0, 6, 12, 1, 6, 9, 2, 6, 8, 3, 6, 8]);
        let (items, segs) = jds_tail_items(12, 12, |d| lens[d]);
        assert!(items.is_empty() && segs.is_empty());
        // the JDS kernel stages at most LONG_ROW_MIN diagonal starts
        for (n, nnz, longest) in [
            (10, 100, 9),
            (1000, 1_000_000, 100_000),
            (1, 1 << 30, 1 << 30),
        ] {
            assert!(long_row_cap(n, nnz, longest) <= LONG_ROW_MIN);
        }
        // one row of 5000 beside short ones: segments of SEG_SPAN
        let (items, segs) = jds_tail_items(5000, 8, |d| if d < 2 { 100 } else { 1 });
        assert!(items.is_empty());
        assert_eq!(
            segs,
            vec![0, 8, 1032, 0, 1032, 2056, 0, 2056, 3080, 0, 3080, 4104, 0, 4104, 5000]
        );
        // slices of 2 rows, cap 4: slice 0 (rows of 5 and 5) and slice 3
        // (9 and 1) have fewer than NARROW_ROWS long rows: segments
        let rl = [[5usize, 5], [2, 1], [0, 0], [9, 1]];
        let (sl, ch, segs) = sell_tail_items([5usize, 2, 0, 9].into_iter(), 2, 4, |k, r| rl[k][r]);
        assert!(sl.is_empty() && ch.is_empty());
        assert_eq!(segs, vec![0, 4, 5, 1, 4, 5, 6, 4, 9]);
        // a slice of 8 long rows keeps its chunks
        let (sl, ch, segs) = sell_tail_items([9usize].into_iter(), 8, 4, |_, _| 9);
        assert_eq!((sl, ch), (vec![0, 0], vec![1, 2]));
        assert!(segs.is_empty());
    }

    #[test]
    fn slices() {
        assert_eq!(slice_count(0, 32), 0);
        assert_eq!(slice_count(33, 32), 2);
        assert_eq!(slice_count(5, 0), 0);
        assert_eq!(sell_threads(2, 32), 64);
    }
}
