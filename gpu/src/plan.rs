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

/// SELL's rows that keep fewer than this many rows as long beside them in
/// their slice past the cap are [`Segments`]: walked by whole blocks, each lane on its own slots, one
/// atomic per block, instead of one thread per row and chunk, whose lone
/// walk and one atomic per `cap` slots on the same `y` serialised (a row of
/// 46 500 entries beside rows of 2 took 47 us, 18x its x-gather floor, on
/// the H100; BENCHMARKS.md, issue 17).
pub const NARROW_ROWS: usize = 8;

/// Slots of one long row a block of [`BLOCK`] threads walks per segment
/// (4 a thread; `SEG_SPAN` in `common.cuh`), and about the slots of one of
/// JDS's [`Bands`] in a tail that goes after the main kernel
/// ([`JDS_BAND_SPAN`] in one that goes first).
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

/// Chunks from which SELL's slices more than half long, long rows first
/// (the head of a power law sorted by length), run as chunks instead of
/// bands ([`sell_tail_items`]). A chunk's thread walks `cap` slots for one
/// atomic where a band folds every slot through shared memory, but a few
/// thousand chunks leave the GPU half idle. SELL sorted over all rows, H100
/// (`bench/results/2026-11-28-h100-sell-tail`), chunks against bands: 0.85x
/// and 0.86x in f32 on uncapped power laws of 59M and 75M entries (61 640
/// and 36 909 chunks), 1.00-1.02x at 9 708 and 10 642, 1.04-1.23x on capped
/// ones of 1 061 to 4 603 (rows of at most 1 000 or 10 000).
pub const SELL_FULL_CHUNKS_MIN: usize = 16_384;

/// Rows a JDS tail band covers at most ([`Bands`]): one block's threads.
pub const BAND_ROWS: usize = BLOCK as usize;

/// Entries of a JDS tail band, about ([`Bands`]), when the tail has
/// chunks and goes first ([`jds_tail_first`]): 16 a thread. Beside the main
/// kernel, bands of [`SEG_SPAN`] (4 a thread) spent their time starting,
/// folding and adding their parts, all of a row's parts into one sum: on
/// uncapped power laws of 59M and 75M entries (rows of up to 2.5M entries)
/// JDS took 5-6 % longer on one of 75M entries and 25-54 % on one of 59M
/// than with these. A tail that goes after the main kernel (bands only,
/// or a matrix below [`JDS_TAIL_FIRST_NNZ`] entries), where its bands'
/// latency counts, keeps bands of [`SEG_SPAN`] (at this
/// size, 16-48 % slower on circuits of 1.1M and 8.6M entries, within 5 %
/// on one of 54M; H200, issue 17).
pub const JDS_BAND_SPAN: usize = 4 * SEG_SPAN;

/// JDS's tail bands: `(rows R, first diagonal, end diagonal)` triples, one
/// block of the tail launch each, flattened (3 `i32` each). `R` is a power
/// of two, at most [`BAND_ROWS`], at least the rows active in the first
/// diagonal: the band's entries are the first `R` sorted rows' entries in
/// its diagonals, which JDS stores contiguously (diagonal after diagonal),
/// so lane `t` of the block takes row `t % R` of diagonals `t / R`,
/// `t / R + 256 / R`, ... and a block's loads are coalesced whatever the
/// rows; the lanes of one row sum in shared memory, one atomic a row.
pub type Bands = Vec<i32>;

/// The tail of the JDS kernel (`spmv_jds_<t>_tail`, or
/// `spmv_jds_<t>_tail_first` when it goes first), in two parts:
/// - chunks, one thread per row active in their first diagonal: chunk `c`
///   covers diagonals `[c * cap, (c + 1) * cap)` of the rows longer than
///   `cap`, `c >= 1` while diagonal `c * cap` has more than [`BAND_ROWS`]
///   rows; returned as the first thread of each chunk and the total
///   (`nchunks + 1` entries). When the tail goes `first`
///   ([`jds_tail_first`]), chunk 0 (the long rows' first `cap` diagonals)
///   is the tail's too: the main kernel leaves those rows whole to it
///   ([`jds_main_blocks`]);
/// - from the first chunk start with fewer rows to the last diagonal,
///   [`Bands`] of about [`JDS_BAND_SPAN`] slots each (`JDS_BAND_SPAN / R`
///   diagonals) when the tail goes first, else of [`SEG_SPAN`].
///
/// Until 2026-11-28 the rows past the chunks were walked one row per
/// block ([`Segments`]): a circuit's 8 supply rows of 500 000 entries each
/// strode 8 entries between a block's loads, and below 8 rows a thread
/// walked `cap` diagonals alone (61 us of 452 on a circuit of 54M entries,
/// 21 % occupancy; ncu, H100, issue 17).
///
/// Both empty when every row fits `cap`.
#[must_use]
pub fn jds_tail_items(
    ndiag: usize,
    cap: usize,
    first: bool,
    diag_len: impl Fn(usize) -> usize,
) -> (Vec<i64>, Bands) {
    let cap = cap.max(1);
    let (mut ptr, mut bands) = (Vec::new(), Bands::new());
    let mut total = 0i64;
    let mut d = cap;
    while d < ndiag && diag_len(d) > BAND_ROWS {
        if ptr.is_empty() {
            ptr.push(0);
            if first {
                // chunk 0
                total = diag_len(cap) as i64;
                ptr.push(total);
            }
        }
        total += diag_len(d) as i64;
        ptr.push(total);
        d += cap;
    }
    while d < ndiag {
        let rows = diag_len(d).clamp(1, BAND_ROWS).next_power_of_two();
        let span = if first { JDS_BAND_SPAN } else { SEG_SPAN };
        let end = (d + span / rows).min(ndiag);
        bands.extend([rows as i32, d as i32, end as i32]);
        d = end;
    }
    (ptr, bands)
}

/// Whether JDS's tail goes first, beside its main kernel, holding the long
/// rows whole (its chunk 0 their first `cap` diagonals) and their parts
/// meeting in a sum per row ([`jds_head_counts`]), or after it, as its
/// dependent launch, adding its parts into `y` once the main kernel has
/// stored it: first when the tail has chunks (more than [`BAND_ROWS`] rows
/// longer than `cap`) and the matrix holds [`JDS_TAIL_FIRST_NNZ`] entries
/// or more.
///
/// Going after it, the tail's blocks held their multiprocessors waiting for
/// the whole main kernel (or, launched at its end, added their time to it).
/// On the H200's corpus (issue 17, BENCHMARKS.md) going first took JDS
/// 4-18 % less on power laws of 8M entries and from 19 % less to 3 % more
/// on those of 50M to 75M, but 1.2-2.6x more below 1.1M entries (a power
/// law of 100k entries 5.9 -> 13.4 us, of 1M 12.0 -> 16.2; FEM matrices
/// and real ones alike): there the tail's chain (chunk 0's rows, the
/// per-row sums' atomics and fences, the main kernel's wait for it) is the
/// product's whole length. A tail of bands only (a few long rows: a
/// circuit's supply rows, a dense row) gained 2 % at most going first and
/// lost 2-9 % on circuits of 8.6M and 54M entries in f64 (its random
/// gather of `x` beside the main kernel's, whose blocks go in window order
/// to share `x` in the caches) and 34 % on one of 1.1M (its bands' latency
/// beyond the main kernel's).
///
/// ```
/// use sparsetool_gpu::plan::{jds_tail_first, JDS_TAIL_FIRST_NNZ};
/// // 300 rows longer than cap 2 (more than a band holds)
/// let lens = [300, 300, 300, 300, 260, 260];
/// assert!(jds_tail_first(JDS_TAIL_FIRST_NNZ, 6, 2, |d| lens[d]));
/// assert!(!jds_tail_first(JDS_TAIL_FIRST_NNZ - 1, 6, 2, |d| lens[d]));
/// // 200 rows longer than cap 2: bands only
/// assert!(!jds_tail_first(JDS_TAIL_FIRST_NNZ, 6, 2, |_| 200));
/// // no row longer than cap 6
/// assert!(!jds_tail_first(JDS_TAIL_FIRST_NNZ, 6, 6, |d| lens[d]));
/// ```
#[must_use]
pub fn jds_tail_first(
    nnz: usize,
    ndiag: usize,
    cap: usize,
    diag_len: impl Fn(usize) -> usize,
) -> bool {
    let cap = cap.max(1);
    nnz >= JDS_TAIL_FIRST_NNZ && cap < ndiag && diag_len(cap) > BAND_ROWS
}

/// The fewest entries of a matrix whose JDS tail with chunks goes first
/// ([`jds_tail_first`]).
pub const JDS_TAIL_FIRST_NNZ: usize = 4_000_000;

/// How many threads of a JDS tail that goes first ([`jds_tail_first`]) add
/// a part of each long row's sum: one entry per sorted position below
/// `diag_len(cap)` (the rows longer than `cap`; none when `ndiag <= cap`),
/// counting each chunk of `items` whose first diagonal holds it (chunk 0
/// holds them all) and each band of `bands` that does: `items` and `bands`
/// of [`jds_tail_items`] with `first`.
///
/// The main kernel goes as the tail's dependent launch and does not wait
/// for it (but in one thread, so that its grid ends after the tail's), nor
/// touch the long rows: their parts meet in a sum per row, and
/// the thread that adds the last of its count stores the row
/// (`HeadSums::add` in `common.cuh`).
///
/// ```
/// use sparsetool_gpu::plan::{jds_head_counts, jds_tail_items};
/// // 300 rows longer than cap 2: 260 of 6 entries, 40 of 4; chunks of
/// // diagonals 2-3 (300 rows) and 4-5 (260), more than a band holds, and,
/// // as the tail goes first, chunk 0 of diagonals 0-1 of the 300
/// let lens = [300, 300, 300, 300, 260, 260];
/// let (items, bands) = jds_tail_items(6, 2, true, |d| lens[d]);
/// assert_eq!(items, vec![0, 300, 600, 860]);
/// assert!(bands.is_empty());
/// // going after the main kernel: no chunk 0
/// assert_eq!(jds_tail_items(6, 2, false, |d| lens[d]).0, vec![0, 300, 560]);
/// // one part a chunk that holds the row
/// let counts = jds_head_counts(6, 2, &items, &bands, |d| lens[d]);
/// assert_eq!((counts[0], counts[259], counts[260], counts[299]), (3, 3, 2, 2));
/// ```
#[must_use]
pub fn jds_head_counts(
    ndiag: usize,
    cap: usize,
    items: &[i64],
    bands: &[i32],
    diag_len: impl Fn(usize) -> usize,
) -> Vec<i32> {
    let cap = cap.max(1);
    let nhead = if ndiag > cap { diag_len(cap) } else { 0 };
    // +1 on the first `rows` positions of each part, as differences
    let mut diff = vec![0i32; nhead + 1];
    let mut part = |rows: usize| {
        diff[0] += 1;
        diff[rows.min(nhead)] -= 1;
    };
    for w in items.windows(2) {
        part((w[1] - w[0]) as usize);
    }
    for b in bands.chunks_exact(3) {
        part((b[0] as usize).min(diag_len(b[1] as usize)));
    }
    let mut run = 0;
    diff[..nhead]
        .iter()
        .map(|d| {
            run += d;
            run
        })
        .collect()
}

/// Original rows per window of a window-ordered main launch
/// ([`window_blocks`]): fewer rows launch in sorted order.
pub const WINDOW_ROWS: usize = 512 * BLOCK as usize;

/// The units of a main kernel over rows sorted by length, in window order:
/// `(first granule, granules)` pairs, flattened, at most `per_unit`
/// granules each, one per unit of threads (JDS: a granule is a sorted row,
/// a unit a block; SELL: a granule is a slice, a unit its `C` threads),
/// padded with `(0, 0)` to whole blocks of `per_block` granules' threads;
/// empty for the units in sorted order.
///
/// A global sort by length cuts a matrix whose row lengths interleave (a
/// circuit: lengths 2 to 8 at random) into one run of sorted rows per
/// length, each spanning all the rows. Launched in sorted order, the
/// product sweeps `x` once per length and stores `y` through the
/// permutation one element in seven at a time, so each 32-byte sector of
/// `y` is written piecemeal, evicted and merged again: on a circuit of 10M
/// rows JDS's main kernel moved 196 MB of writes for 40 MB of `y` and took
/// 391 us, 250 us with `y` stored in sorted order (ncu, H100, issue 17).
/// Here each of `runs` (granule ranges of equal length, in sorted order)
/// is cut into units, and the units go in the order of their first
/// original row (`row(g)`: granule `g`'s first original row), so that the
/// units running together write whole sectors of `y` and gather the same
/// part of `x`, and SELL's slices of one block, rows of every length from
/// about the same original rows, share `x` through one multiprocessor's
/// L1. Runs of fewer than two blocks a window of [`WINDOW_ROWS`] (the few
/// long rows) go first, in sorted order.
///
/// Empty (sorted order) when fewer than two runs are that large, when
/// there is one window, or when `row` does not keep the original order
/// inside such a run (a layout written by another tool with an unstable
/// sort: any order would still be correct, but not local).
#[must_use]
pub fn window_blocks(
    nrows: usize,
    runs: &[(usize, usize)],
    (per_unit, per_block): (usize, usize),
    row: impl Fn(usize) -> usize,
) -> Vec<i32> {
    let nwin = nrows.div_ceil(WINDOW_ROWS);
    let big = |&&(a, b): &&(usize, usize)| b - a >= nwin * per_block * 2;
    if nwin < 2
        || per_unit == 0
        || per_block < per_unit
        || runs.iter().filter(big).count() < 2
        || runs
            .iter()
            .filter(big)
            .any(|&(a, b)| (a + 1..b).any(|g| row(g) < row(g - 1)))
    {
        return Vec::new();
    }
    let units = |&(a, b): &(usize, usize)| {
        (a..b)
            .step_by(per_unit)
            .map(move |g| (g, (b - g).min(per_unit)))
    };
    let mut order: Vec<(usize, usize)> = runs.iter().filter(|r| !big(r)).flat_map(units).collect();
    let mut local: Vec<(usize, usize, usize)> = runs
        .iter()
        .filter(big)
        .flat_map(units)
        .map(|(g, n)| (row(g), g, n))
        .collect();
    local.sort_unstable();
    order.extend(local.into_iter().map(|(_, g, n)| (g, n)));
    let per = per_block / per_unit;
    order.resize(order.len().next_multiple_of(per), (0, 0));
    order
        .into_iter()
        .flat_map(|(g, n)| [g as i32, n as i32])
        .collect()
}

/// The blocks of JDS's main kernel (`spmv_jds_<t>`) over the sorted
/// positions `rows` of `0..nrows` (past the long rows a tail that goes
/// first holds whole, [`jds_tail_first`]), and whether they go in window
/// order: [`window_blocks`] of sorted rows, a block's [`BLOCK`] a unit, the
/// runs of equal length read off the diagonal lengths (a row's length
/// changes only at a diagonal's length); where window order does not apply
/// and `rows` leaves out the first positions, blocks in sorted order from
/// there (a block of none for no rows, as an empty list is sorted order
/// over all of them); else none (sorted order).
///
/// ```
/// use sparsetool_gpu::plan::jds_main_blocks;
/// // 600 rows of one length: sorted order, unless the first 300 are left out
/// assert_eq!(jds_main_blocks(600, 0..600, 4, |_| 600, |p| p), (vec![], false));
/// assert_eq!(
///     jds_main_blocks(600, 300..600, 4, |_| 600, |p| p),
///     (vec![300, 256, 556, 44], false)
/// );
/// // all of them: a block of none
/// assert_eq!(jds_main_blocks(600, 600..600, 4, |_| 600, |p| p), (vec![0, 0], false));
/// ```
#[must_use]
pub fn jds_main_blocks(
    nrows: usize,
    rows: std::ops::Range<usize>,
    ndiag: usize,
    diag_len: impl Fn(usize) -> usize,
    perm: impl Fn(usize) -> usize,
) -> (Vec<i32>, bool) {
    let mut bounds: Vec<usize> = (0..ndiag)
        .map(diag_len)
        .chain([rows.start, rows.end])
        .filter(|b| (rows.start..=rows.end).contains(b))
        .collect();
    bounds.sort_unstable();
    bounds.dedup();
    let runs: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let window = window_blocks(nrows, &runs, (BLOCK as usize, BLOCK as usize), perm);
    if !window.is_empty() || rows.start == 0 {
        let ordered = !window.is_empty();
        return (window, ordered);
    }
    let sorted: Vec<i32> = rows
        .step_by(BLOCK as usize)
        .flat_map(|p| [p as i32, (nrows - p).min(BLOCK as usize) as i32])
        .collect();
    (
        if sorted.is_empty() {
            vec![0, 0]
        } else {
            sorted
        },
        false,
    )
}

/// [`window_blocks`] of SELL's main kernel (`spmv_sell_<t>`): a slice of
/// `slice_height` sorted rows a unit, `BLOCK / slice_height` a block, the
/// runs being consecutive slices of equal width (a slice's width is its
/// first row's length). Empty when a slice height does not divide a
/// block, and for a sorting window `sigma` below [`WINDOW_ROWS`], whose
/// sort keeps rows near their neighbours already.
#[must_use]
pub fn sell_slice_blocks(
    nrows: usize,
    (slice_height, sigma): (usize, usize),
    widths: &[usize],
    perm: impl Fn(usize) -> usize,
) -> Vec<i32> {
    if sigma < WINDOW_ROWS || slice_height == 0 || BLOCK as usize % slice_height != 0 {
        return Vec::new();
    }
    let per_block = BLOCK as usize / slice_height;
    let mut runs = Vec::new();
    let mut a = 0;
    for k in 1..=widths.len() {
        if k == widths.len() || widths[k] != widths[a] {
            runs.push((a, k));
            a = k;
        }
    }
    window_blocks(nrows, &runs, (1, per_block), |k| perm(k * slice_height))
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

/// The long-slice tail of the SELL kernel (`spmv_sell_<t>_tail`)
/// ([`sell_tail_items`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SellTailPlan {
    /// `(slice, chunk)` items, `slice_height` threads each: chunk `c >= 1`
    /// covers slots `[c * cap, (c + 1) * cap)` of the slice.
    pub slices: Vec<i32>,
    /// The chunk of each item of `slices`.
    pub chunks: Vec<i32>,
    /// Rows walked alone ([`Segments`]), one block each.
    pub segs: Segments,
    /// `(slice, rows R, first slot, end slot)` quadruples, one block each
    /// (flattened, 4 `i32` each): the first `R` rows (a power of two, at
    /// most [`BAND_ROWS`]) of about [`SEG_SPAN`] / `R` slots of the slice,
    /// lane `t` on row `t % R`, a slot's rows being contiguous.
    pub bands: Vec<i32>,
}

impl SellTailPlan {
    /// Whether no slice is wider than the cap.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.slices.is_empty() && self.segs.is_empty() && self.bands.is_empty()
    }
}

/// The tail of the SELL kernel (`spmv_sell_<t>_tail`) for slices of
/// `slice_height` rows, over the slices wider than `cap`, in slice order
/// (`row_len(slice, local row)`: its stored entries, the padding after
/// them not counted). A slice whose rows longer than `cap` are its first
/// `m` rows (any sort by length, sigma above 1, puts them there), with `m`
/// at most [`BAND_ROWS`], gets bands of its first `m.next_power_of_two()`
/// rows: every load of a block lands on those rows' slots, none on the
/// other rows' padding; except where `m` is more than half the slice and
/// such slices come to [`SELL_FULL_CHUNKS_MIN`] chunks or more, which get
/// chunks. Otherwise a slice with at least [`NARROW_ROWS`] rows longer than
/// `cap` gets chunks (`slice_height` threads each), and one with fewer gets
/// [`Segments`] of those rows' slots past `cap`.
///
/// Until 2026-11-28 the sorted slices had chunks or segments only: a
/// circuit sorted over all its rows keeps its 8 supply rows of 80 000
/// entries in one slice, whose chunks' threads walked 64 slots each, 8 of
/// every 32 busy (issue 17).
#[must_use]
pub fn sell_tail_items(
    widths: impl Iterator<Item = usize>,
    slice_height: usize,
    cap: usize,
    row_len: impl Fn(usize, usize) -> usize,
) -> SellTailPlan {
    let cap = cap.max(1);
    // the slices wider than the cap (slice, width), with their rows past
    // it (local row, length)
    type Wide = (usize, usize, Vec<(usize, usize)>);
    let wide: Vec<Wide> = widths
        .enumerate()
        .filter(|&(_, w)| w > cap)
        .map(|(k, w)| {
            let long = (0..slice_height)
                .map(|r| (r, row_len(k, r)))
                .filter(|&(_, len)| len > cap)
                .collect();
            (k, w, long)
        })
        .collect();
    let prefix = |long: &[(usize, usize)]| long.iter().enumerate().all(|(i, &(r, _))| i == r);
    let full = |long: &[(usize, usize)]| 2 * long.len() > slice_height.max(2);
    // slices more than half long (a sorted power law's head): chunks where
    // they come to SELL_FULL_CHUNKS_MIN or more, else bands
    let full_chunks: usize = wide
        .iter()
        .filter(|(_, _, long)| prefix(long) && full(long) && long.len() >= NARROW_ROWS)
        .map(|(_, w, _)| w.div_ceil(cap) - 1)
        .sum();
    let chunk_full = full_chunks >= SELL_FULL_CHUNKS_MIN;
    let mut t = SellTailPlan::default();
    for (k, w, long) in wide {
        let band = prefix(&long) && long.len() <= BAND_ROWS && !(full(&long) && chunk_full);
        if band {
            let rows = long.len().max(1).next_power_of_two();
            let span = SEG_SPAN / rows;
            for s in (cap..w).step_by(span) {
                let end = (s + span).min(w);
                t.bands
                    .extend([k as i32, rows as i32, s as i32, end as i32]);
            }
        } else if long.len() >= NARROW_ROWS {
            for c in 1..w.div_ceil(cap) {
                t.slices.push(k as i32);
                t.chunks.push(c as i32);
            }
        } else {
            for (r, len) in long {
                push_segments(&mut t.segs, k * slice_height + r, cap, len);
            }
        }
    }
    t
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

/// Whether JDS's plain main kernels (`jds`, `jds-u16`) run their `_wide`
/// build, 40 registers a thread at 6 blocks of [`BLOCK`] a multiprocessor
/// instead of 32 at 8: for values of `value_bytes` of 8 or more (f64,
/// complex) where the main kernel's rows average [`DEEP_SLOTS`] diagonals
/// or more (`main_entries` over `nrows`). Under 32 registers the f64 loop
/// unrolled by 4 issues a trip's loads in two rounds (its first FMA before
/// the last column's load); with 40 it issues them at once. Measured on the
/// H200 (BENCHMARKS.md, issue 17): a 3D 27-point stencil of 8M entries and
/// FEM matrices of 30 entries a row 5-16 % faster in f64; rows of 5 to 11
/// entries (2D stencils, circuits, a band, a power law) 2-27 % slower, and
/// f32 up to 26 % slower (its `jds-u16` then runs at 6 blocks for 34
/// registers).
///
/// ```
/// use sparsetool_gpu::plan::jds_wide;
/// assert!(jds_wide(27 * 1000, 1000, 8));
/// assert!(!jds_wide(27 * 1000, 1000, 4));
/// assert!(!jds_wide(5 * 1000, 1000, 16));
/// assert!(!jds_wide(0, 0, 8));
/// ```
#[must_use]
pub fn jds_wide(main_entries: usize, nrows: usize, value_bytes: usize) -> bool {
    value_bytes >= 8 && nrows > 0 && main_entries >= DEEP_SLOTS * nrows
}

/// Threads of a long-row tail launch: whole blocks for `chunk_threads`
/// (one a row and chunk), then one block per triple of `segs` (SELL's
/// [`Segments`], JDS's [`Bands`], 3 entries each), then one per
/// quadruple of `sell_bands` ([`SellTailPlan::bands`]); the kernels find
/// the first such block the same way.
#[must_use]
pub fn tail_threads(chunk_threads: u64, segs: usize, sell_bands: usize) -> u64 {
    let block = u64::from(BLOCK);
    (chunk_threads.div_ceil(block) + (segs / 3) as u64 + (sell_bands / 4) as u64) * block
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
        // diagonal lengths 300 300 300 300 300 290 9 9 2 1 1 1: cap 2;
        // chunk 0 (diagonals 0 and 1 of the 300 rows longer than 2), chunks
        // at diagonals 2 and 4 with 300 rows each (> BAND_ROWS); diagonal 6
        // has 9: bands from there, R = 16 (256 diagonals a band, more than
        // are left), then none
        let lens = [300usize, 300, 300, 300, 300, 290, 9, 9, 2, 1, 1, 1];
        let (items, bands) = jds_tail_items(lens.len(), 2, true, |d| lens[d]);
        assert_eq!(items, vec![0, 300, 600, 900]);
        assert_eq!(bands, vec![16, 6, 12]);
        // after the main kernel: the same without chunk 0, bands of SEG_SPAN
        let (items, bands) = jds_tail_items(lens.len(), 2, false, |d| lens[d]);
        assert_eq!(items, vec![0, 300, 600]);
        assert_eq!(bands, vec![16, 6, 12]);
        assert!(jds_tail_first(JDS_TAIL_FIRST_NNZ, 12, 2, |d| lens[d]));
        assert!(!jds_tail_first(4_000, 12, 2, |d| lens[d]));
        let (items, bands) = jds_tail_items(12, 12, true, |d| lens[d]);
        assert!(items.is_empty() && bands.is_empty());
        // the JDS kernel stages at most LONG_ROW_MIN diagonal starts
        for (n, nnz, longest) in [
            (10, 100, 9),
            (1000, 1_000_000, 100_000),
            (1, 1 << 30, 1 << 30),
        ] {
            assert!(long_row_cap(n, nnz, longest) <= LONG_ROW_MIN);
        }
        // one row of 5000 beside short ones, no chunks (the tail goes after
        // the main kernel): bands of one row, SEG_SPAN diagonals each; 3
        // rows of 2000 (R 4, SEG_SPAN / 4 diagonals)
        let one = |d| if d < 2 { 100 } else { 1 };
        let (items, bands) = jds_tail_items(5000, 8, false, one);
        assert!(items.is_empty() && !jds_tail_first(JDS_TAIL_FIRST_NNZ, 5000, 8, one));
        assert_eq!(
            bands,
            vec![1, 8, 1032, 1, 1032, 2056, 1, 2056, 3080, 1, 3080, 4104, 1, 4104, 5000]
        );
        let (_, bands) = jds_tail_items(2000, 1000, false, |_| 3);
        assert_eq!(
            bands,
            vec![4, 1000, 1256, 4, 1256, 1512, 4, 1512, 1768, 4, 1768, 2000]
        );
        // rows of 200 then of 100: R 256 bands of 4 diagonals, then R 128
        // bands of 8
        let (items, bands) = jds_tail_items(20, 4, false, |d| if d < 10 { 200 } else { 100 });
        assert!(items.is_empty());
        assert_eq!(bands, vec![256, 4, 8, 256, 8, 12, 128, 12, 20]);
        // chunks (the tail goes first): 300 rows in chunk 0 (diagonals 0
        // and 1) and the chunks at diagonals 2 and 4 (290 of them longer
        // than 4, so in the second), then 9 rows in bands of R 16 and
        // JDS_BAND_SPAN / 16 diagonals
        let lens: Vec<usize> = [300, 300, 300, 300, 290, 290]
            .into_iter()
            .chain(std::iter::repeat_n(9, 600))
            .chain([2, 1])
            .collect();
        assert!(jds_tail_first(JDS_TAIL_FIRST_NNZ, lens.len(), 2, |d| lens[d]));
        let (items, bands) = jds_tail_items(lens.len(), 2, true, |d| lens[d]);
        assert_eq!(items, vec![0, 300, 600, 890]);
        assert_eq!(bands, vec![16, 6, 262, 16, 262, 518, 16, 518, 608]);
        // going after the main kernel: no chunk 0, bands of SEG_SPAN / 16
        let (after, after_bands) = jds_tail_items(lens.len(), 2, false, |d| lens[d]);
        assert_eq!(after, vec![0, 300, 590]);
        assert_eq!(&after_bands[..6], &[16, 6, 70, 16, 70, 134]);
        let counts = jds_head_counts(lens.len(), 2, &items, &bands, |d| lens[d]);
        assert_eq!(counts.len(), 300);
        assert_eq!(&counts[..10], &[6, 6, 6, 6, 6, 6, 6, 6, 6, 3]);
        assert!(counts[10..290].iter().all(|&c| c == 3));
        assert!(counts[290..].iter().all(|&c| c == 2));
        // no tail: no long rows
        assert!(jds_head_counts(12, 12, &[], &[], |d| lens[d]).is_empty());
        // slices of 2 rows, cap 4: slice 0 (rows of 5 and 5) and slice 3
        // (9 and 1) have their long rows first: bands of 2 and 1 rows;
        // slice 1 (rows of 2 and 6) not: its row is a segment
        let rl = [[5usize, 5], [2, 6], [0, 0], [9, 1]];
        let t = sell_tail_items([5usize, 6, 0, 9].into_iter(), 2, 4, |k, r| rl[k][r]);
        assert!(t.slices.is_empty() && t.chunks.is_empty());
        assert_eq!(t.segs, vec![3, 4, 6]);
        assert_eq!(t.bands, vec![0, 2, 4, 5, 3, 1, 4, 9]);
        // slices of 32 rows, the first 17 long (the head of a power law
        // sorted by length): bands while they come to fewer than
        // SELL_FULL_CHUNKS_MIN chunks, chunks from there
        let head = |_: usize, r: usize| if r < 17 { 200 } else { 5 };
        let t = sell_tail_items([200usize].into_iter(), 32, 64, head);
        assert!(t.slices.is_empty() && t.segs.is_empty());
        assert_eq!(
            t.bands,
            vec![0, 32, 64, 96, 0, 32, 96, 128, 0, 32, 128, 160, 0, 32, 160, 192, 0, 32, 192, 200]
        );
        let n = SELL_FULL_CHUNKS_MIN / 3;
        let t = sell_tail_items(std::iter::repeat_n(200usize, n + 1), 32, 64, head);
        assert_eq!(t.chunks.len(), 3 * (n + 1));
        assert!(t.segs.is_empty() && t.bands.is_empty());
        // a slice of 8 long rows past the first: chunks
        let t = sell_tail_items(
            [9usize].into_iter(),
            9,
            4,
            |_, r| if r == 0 { 1 } else { 9 },
        );
        assert_eq!((t.slices, t.chunks), (vec![0, 0], vec![1, 2]));
        assert!(t.segs.is_empty() && t.bands.is_empty());
        // 8 long rows first in a slice of 32, 3000 slots: bands of 8 rows,
        // 128 slots each
        let t = sell_tail_items([3000usize].into_iter(), 32, 64, |_, r| {
            if r < 8 {
                3000
            } else {
                5
            }
        });
        assert!(t.slices.is_empty() && t.segs.is_empty());
        assert_eq!(&t.bands[..8], &[0, 8, 64, 192, 0, 8, 192, 320]);
        assert_eq!(t.bands.len() / 4, (3000usize - 64).div_ceil(128));
        assert_eq!(tail_threads(300, 6, 8), (2 + 2 + 2) * u64::from(BLOCK));
    }

    #[test]
    fn window_order() {
        let w = WINDOW_ROWS;
        // 4 windows of rows alternating between lengths 3 and 2 (a stable
        // sort: the rows of length 3 at even rows first), plus row 1 of
        // length 9 (sorted first) and the last row empty
        let n = 4 * w;
        let len = |r: usize| match r {
            1 => 9,
            _ if r == n - 1 => 0,
            _ if r % 2 == 0 => 3,
            _ => 2,
        };
        let mut perm: Vec<usize> = (0..n).collect();
        perm.sort_by_key(|&r| std::cmp::Reverse(len(r)));
        let ndiag = 9;
        let dlen = |d: usize| (0..n).filter(|&r| len(r) > d).count();
        let (blocks, window) = jds_main_blocks(n, 0..n, ndiag, dlen, |p| perm[p]);
        assert!(window);
        // every sorted position exactly once, a block's unit within one
        // length
        let mut seen = vec![0u8; n];
        for b in blocks.chunks_exact(2) {
            assert!((1..=BLOCK as i32).contains(&b[1]));
            for p in b[0]..b[0] + b[1] {
                seen[p as usize] += 1;
                assert_eq!(len(perm[p as usize]), len(perm[b[0] as usize]));
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
        // the long row and the empty row (runs of one) first, then the
        // blocks by their first original row: rows of length 3 and 2 take
        // turns
        assert_eq!(&blocks[..4], &[0, 1, (n - 1) as i32, 1]);
        let first_rows: Vec<usize> = blocks[4..]
            .chunks_exact(2)
            .map(|b| perm[b[0] as usize])
            .collect();
        assert!(first_rows.windows(2).all(|p| p[0] < p[1]), "original order");
        let lens: Vec<usize> = first_rows[..4].iter().map(|&r| len(r)).collect();
        assert_eq!(lens, [3, 2, 3, 2]);
        // sorted order kept: one window, one large run, or an unstable perm
        assert!(jds_main_blocks(w, 0..w, ndiag, dlen, |p| perm[p])
            .0
            .is_empty());
        assert!(jds_main_blocks(n, 0..n, 2, |_| n, |p| p).0.is_empty());
        let mut shuffled = perm.clone();
        shuffled.swap(10, 11);
        assert!(jds_main_blocks(n, 0..n, ndiag, dlen, |p| shuffled[p])
            .0
            .is_empty());
        // the long row left out (a tail holds it whole): the same blocks
        // but its run
        let (past, window) = jds_main_blocks(n, 1..n, ndiag, dlen, |p| perm[p]);
        assert!(window);
        assert_eq!(&past[..], &blocks[2..]);
        // in sorted order: blocks from position 1
        let (sorted, window) = jds_main_blocks(w, 1..w, ndiag, dlen, |p| perm[p]);
        assert!(!window);
        assert_eq!(&sorted[..4], &[1, 256, 257, 256]);
        let covered: i32 = sorted.chunks_exact(2).map(|b| b[1]).sum();
        assert_eq!(covered as usize, w - 1);
        // SELL, slices of 32 of the same sorted rows: slice 0 (the long
        // row and 31 of length 3) first, then a slice a unit, padded to
        // whole blocks of 8
        let widths: Vec<usize> = (0..n / 32).map(|k| len(perm[k * 32])).collect();
        let blocks = sell_slice_blocks(n, (32, n), &widths, |p| perm[p]);
        assert_eq!(&blocks[..2], &[0, 1]);
        assert_eq!(blocks.len() % 16, 0);
        let pad = blocks.len() / 2
            - blocks
                .chunks_exact(2)
                .rev()
                .take_while(|b| b[1] == 0)
                .count();
        assert!(pad + 8 > blocks.len() / 2);
        let mut seen = vec![0u8; n / 32];
        for b in blocks[..2 * pad].chunks_exact(2) {
            assert_eq!(b[1], 1);
            seen[b[0] as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c == 1));
        let firsts: Vec<usize> = blocks[2..2 * pad]
            .chunks_exact(2)
            .map(|b| perm[b[0] as usize * 32])
            .collect();
        assert!(firsts.windows(2).all(|p| p[0] < p[1]), "original order");
        // a slice height that does not divide a block
        assert!(sell_slice_blocks(n, (48, n), &widths, |p| perm[p]).is_empty());
        assert!(sell_slice_blocks(n, (512, n), &widths, |p| perm[p]).is_empty());
        // sorted in windows below WINDOW_ROWS, or unsorted: sorted order
        assert!(sell_slice_blocks(n, (32, 1024), &widths, |p| perm[p]).is_empty());
        let unsorted: Vec<usize> = (0..n / 32).map(|k| 2 + k % 3).collect();
        assert!(sell_slice_blocks(n, (32, 1), &unsorted, |p| p).is_empty());
    }

    #[test]
    fn slices() {
        assert_eq!(slice_count(0, 32), 0);
        assert_eq!(slice_count(33, 32), 2);
        assert_eq!(slice_count(5, 0), 0);
        assert_eq!(sell_threads(2, 32), 64);
    }
}
