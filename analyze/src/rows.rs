//! Row-length sources: the structure `analyze` works on.
//!
//! A [`RowLengths`] holds the number of entries of every row and of every
//! column, nothing else. It comes from a loaded matrix
//! ([`RowLengths::from_csr`], [`RowLengths::from_row_ptr`],
//! [`RowLengths::from_coords`]) or from a streaming pass over a Matrix
//! Market file ([`RowLengths::from_mm_path`], see [`stream`]) that
//! never builds the matrix.

pub mod spans;
pub mod stream;

pub use spans::{ColumnSpans, SpanCounter};
pub use stream::read_row_lengths;

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;
use sparsetool_formats::alloc::{try_filled, try_with_capacity};
use sparsetool_formats::{Coo, Csr, Index, Scalar};

use crate::AnalyzeError;

/// Entries per row and per column of a sparse matrix.
///
/// Counts are `u32`: a single row or column holding more than 2^32 − 1
/// entries is refused ([`AnalyzeError::CountOverflow`]). An axis much
/// longer than the entries (a matrix declaring billions of rows that holds
/// a few entries) is kept [`Lengths::Sparse`], so memory follows the
/// entries, not the declared size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowLengths {
    /// Number of rows.
    pub nrows: usize,
    /// Number of columns.
    pub ncols: usize,
    /// Entries of each row (`nrows` counts).
    pub rows: Lengths,
    /// Entries of each column (`ncols` counts).
    pub cols: Lengths,
    /// Entries whose column lies far from their row's place on the
    /// diagonal ([`Far`]; zero where the source does not say).
    pub far: Far,
    /// The column span of each group of 32 rows ([`ColumnSpans`]: where
    /// the GPU kernels read 16-bit column offsets; empty where the source
    /// does not say).
    pub spans: ColumnSpans,
}

/// Bytes of `x` a GPU's L2 cache keeps while the rows sweep past: the
/// window of [`Far`], and the size of the column panels of the GPU's
/// `csr-panels` kernel (which gathers each panel's part of `x` in turn, so
/// that its gathers stay within this many bytes). A quarter less than the
/// 50 MB L2 of the H100 and H200: the matrix stream shares the cache.
pub const X_CACHE_BYTES: u64 = 24_000_000;

/// Entries whose `x` gather falls outside a window of [`X_CACHE_BYTES`]
/// of `x` around their row's place on the diagonal (column `i · ncols /
/// nrows` of row `i`): `|j − i · ncols / nrows| ≥ X_CACHE_BYTES / (2 ·
/// value bytes)`, counted for values of 4, 8 and 16 bytes. On a banded or
/// stencil matrix none are far, whatever the size of `x`; with uniformly
/// random columns a share `1 − X_CACHE_BYTES / (bytes of x)` is: the
/// gathers that miss the cache when `x` outgrows it
/// ([`RowLengths::far_gathers`]).
///
/// ```
/// use sparsetool_analyze::rows::Far;
/// let mut f = Far::counter(1_000_000, 10_000_000);
/// f.add(0, 0); // on the diagonal
/// f.add(0, 9_999_999); // far for every value size
/// f.add(500_000, 5_000_000 + 2_000_000); // 2M columns away: far for 8 and 16 bytes
/// assert_eq!(f.counts(), [1, 2, 2]);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Far(pub [u64; 3]);

/// The value sizes [`Far`] counts for, in its order.
pub const FAR_VALUE_BYTES: [u64; 3] = [4, 8, 16];

/// Counts [`Far`] entries of one matrix (one per task, then
/// [`FarCounter::merge`]d).
#[derive(Debug, Clone, Copy)]
pub struct FarCounter {
    /// Columns per row: row `i`'s place on the diagonal is `i · ratio`
    /// (a float: one multiply per entry, where an exact 128-bit division
    /// would cost the streaming pass more than its parsing; the window is
    /// a million columns wide, so rounding does not matter).
    ratio: f64,
    window: [u64; 3],
    counts: [u64; 3],
    /// Whether any value size makes `x` larger than [`X_CACHE_BYTES`]:
    /// if not, [`RowLengths::far_gathers`] is 0 whatever the counts, and
    /// nothing is counted.
    on: bool,
}

impl Far {
    /// A counter for an `nrows` × `ncols` matrix.
    #[must_use]
    pub fn counter(nrows: usize, ncols: usize) -> FarCounter {
        FarCounter {
            ratio: ncols as f64 / nrows.max(1) as f64,
            on: (ncols as u64).saturating_mul(FAR_VALUE_BYTES[2]) > X_CACHE_BYTES,
            window: FAR_VALUE_BYTES.map(|b| X_CACHE_BYTES / (2 * b)),
            counts: [0; 3],
        }
    }

    /// The far entries of an `nrows` × `ncols` matrix whose `(row, column)`
    /// pairs `entries` yields, counted in parallel (one counter per task,
    /// then merged).
    pub(crate) fn count_par(
        nrows: usize,
        ncols: usize,
        entries: impl ParallelIterator<Item = (u64, u64)>,
    ) -> Far {
        let counter = || Far::counter(nrows, ncols);
        entries
            .fold(counter, |mut f, (i, j)| {
                f.add(i, j);
                f
            })
            .reduce(counter, FarCounter::merge)
            .finish()
    }
}

impl FarCounter {
    /// Counts the entry `(i, j)`.
    #[inline]
    pub fn add(&mut self, i: u64, j: u64) {
        if !self.on {
            return;
        }
        let diag = (i as f64 * self.ratio) as u64;
        let d = j.abs_diff(diag);
        for (c, w) in self.counts.iter_mut().zip(self.window) {
            *c += u64::from(d >= w);
        }
    }

    /// The sum of two counters of the same matrix.
    #[must_use]
    pub fn merge(mut self, b: Self) -> Self {
        for (c, x) in self.counts.iter_mut().zip(b.counts) {
            *c += x;
        }
        self
    }

    /// The counts so far, in the order of [`FAR_VALUE_BYTES`].
    #[must_use]
    pub fn counts(&self) -> [u64; 3] {
        self.counts
    }

    /// The result.
    #[must_use]
    pub fn finish(self) -> Far {
        Far(self.counts)
    }
}

#[cfg(test)]
impl RowLengths {
    /// Test input from the two count vectors (`nrows` and `ncols` are their
    /// lengths).
    pub(crate) fn of_counts(rows: Vec<u32>, cols: Vec<u32>) -> Self {
        Self {
            nrows: rows.len(),
            ncols: cols.len(),
            rows: rows.into(),
            cols: cols.into(),
            far: Far::default(),
            spans: ColumnSpans::default(),
        }
    }
}

/// The most original rows a warp's 32 sorted rows may come from before
/// [`Lengths::sort_scatter`] counts them as moved: twice a warp.
pub const SCATTER_SPAN: u64 = 64;

/// Rows of a group in [`Lengths::sort_scatter`] and [`Lengths::jds_u16`]:
/// one warp's rows.
pub const SORT_GROUP: u64 = 32;

/// The entry counts of one axis (rows or columns), in index order.
/// Equality compares the counts, whatever the representation.
#[derive(Debug, Clone)]
pub enum Lengths {
    /// One count per index.
    Dense(Vec<u32>),
    /// The nonzero counts only, by ascending index; every other index of
    /// `0..n` has count 0.
    Sparse {
        /// Length of the axis.
        n: usize,
        /// Indices with a nonzero count, ascending.
        index: Vec<u64>,
        /// Their counts.
        count: Vec<u32>,
    },
}

impl PartialEq for Lengths {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Lengths::Dense(a), Lengths::Dense(b)) => a == b,
            _ => self.len() == other.len() && self.nonzero().eq(other.nonzero()),
        }
    }
}

impl Eq for Lengths {}

impl From<Vec<u32>> for Lengths {
    fn from(v: Vec<u32>) -> Self {
        Lengths::Dense(v)
    }
}

/// An axis is counted sparsely when it is longer than this many times the
/// entries (plus a margin for small matrices): a dense array of counts
/// would then take more memory than the entries themselves.
const SPARSE_RATIO: usize = 4;
const SPARSE_MIN: usize = 1 << 20;

/// Whether an axis of length `n` holding `entries` entries is counted
/// sparsely.
pub(crate) fn sparse_axis(n: usize, entries: usize) -> bool {
    n > entries
        .saturating_mul(SPARSE_RATIO)
        .saturating_add(SPARSE_MIN)
}

impl Lengths {
    /// The counts of the indices in `idx` (each in `0..n`, unchecked),
    /// kept sparse: sorts `idx`.
    ///
    /// # Errors
    /// [`AnalyzeError::CountOverflow`] for a count over 2^32 − 1.
    pub fn from_indices(
        n: usize,
        mut idx: Vec<u64>,
        what: &'static str,
    ) -> Result<Self, AnalyzeError> {
        use rayon::prelude::*;
        idx.par_sort_unstable();
        let (mut index, mut count): (Vec<u64>, Vec<u32>) = (Vec::new(), Vec::new());
        for i in idx {
            match index.last() {
                Some(&l) if l == i => {
                    let c = count.last_mut().expect("index and count grow together");
                    *c = c.checked_add(1).ok_or(AnalyzeError::CountOverflow {
                        what,
                        count: u64::from(u32::MAX) + 1,
                    })?;
                }
                _ => {
                    index.push(i);
                    count.push(1);
                }
            }
        }
        Ok(Lengths::Sparse { n, index, count })
    }

    /// The nonzero counts with their indices, by ascending index.
    pub fn nonzero(&self) -> Box<dyn Iterator<Item = (u64, u32)> + '_> {
        match self {
            Lengths::Dense(v) => Box::new(
                v.iter()
                    .enumerate()
                    .filter(|(_, &c)| c > 0)
                    .map(|(i, &c)| (i as u64, c)),
            ),
            Lengths::Sparse { index, count, .. } => {
                Box::new(index.iter().copied().zip(count.iter().copied()))
            }
        }
    }

    /// The share of entries that a stable sort of the rows by length
    /// (longest first, as JDS and fully sorted SELL store them) moves away
    /// from their neighbours: the rows are cut, in sorted order, into
    /// groups of 32 (one warp's rows), and a group whose rows came from
    /// more than [`SCATTER_SPAN`] consecutive rows of the original order
    /// counts all its entries. Rows of equal length keep their order, so
    /// a stencil scores near 0; rows of a few dozen interleaved lengths (a
    /// FEM mesh) near 1, though their lengths vary little. 0 without
    /// entries. `counts` is the table of these lengths ([`Lengths::counts`]).
    /// `O(rows · log(distinct lengths))` time, one pass in index order,
    /// `O(rows / 32)` memory.
    ///
    /// ```
    /// use sparsetool_analyze::rows::Lengths;
    /// // equal rows: the sort moves nothing
    /// let equal = Lengths::Dense(vec![5; 1000]);
    /// assert_eq!(equal.sort_scatter(&equal.counts()), 0.0);
    /// // lengths 1, 2, 3 in turn: a warp's sorted rows span 3 x 32 rows
    /// let mixed = Lengths::Dense((0..3000).map(|i| 1 + i % 3).collect());
    /// assert_eq!(mixed.sort_scatter(&mixed.counts()), 1.0);
    /// ```
    #[must_use]
    pub fn sort_scatter(&self, counts: &LengthCounts) -> f64 {
        let groups = self.sorted_groups(counts);
        if groups == 0 {
            return 0.0;
        }
        let mut first = vec![u64::MAX; groups];
        let mut last = vec![0u64; groups];
        let mut entries = vec![0u64; groups];
        self.for_sorted_groups(counts, |i, c, g| {
            if first[g] == u64::MAX {
                first[g] = i;
            }
            last[g] = i;
            entries[g] += u64::from(c);
        });
        let total: u64 = entries.iter().sum();
        let moved: u64 = (0..groups)
            .filter(|&g| last[g] - first[g] > SCATTER_SPAN)
            .map(|g| entries[g])
            .sum();
        moved as f64 / total as f64
    }

    /// Groups of [`SORT_GROUP`] nonzero rows in a stable sort of the rows
    /// by length (`counts`: [`Lengths::counts`]).
    fn sorted_groups(&self, counts: &LengthCounts) -> usize {
        let nonzero: u64 = counts.pairs.iter().filter(|p| p.0 > 0).map(|p| p.1).sum();
        nonzero.div_ceil(SORT_GROUP) as usize
    }

    /// Calls `f(row, length, group)` for every nonzero row in index order,
    /// `group` being its group of [`SORT_GROUP`] rows in a stable sort by
    /// length, longest first (as JDS and fully sorted SELL store them).
    /// `O(rows · log(distinct lengths))` time.
    fn for_sorted_groups(&self, counts: &LengthCounts, mut f: impl FnMut(u64, u32, usize)) {
        // the rows of each length, longest first: (length, sorted position
        // of its next row), starting at the first
        let mut next: Vec<(u32, u64)> = Vec::with_capacity(counts.pairs.len());
        let mut nonzero = 0u64;
        for &(len, rows) in counts.pairs.iter().rev().filter(|p| p.0 > 0) {
            next.push((u32::try_from(len).unwrap_or(u32::MAX), nonzero));
            nonzero += rows;
        }
        for (i, c) in self.nonzero() {
            // descending lengths: the slot of length c by binary search
            let k = next.partition_point(|&(l, _)| l > c);
            let g = (next[k].1 / SORT_GROUP) as usize;
            next[k].1 += 1;
            f(i, c, g);
        }
    }

    /// What `jds-u16` (`sparsetool-gpu`) reads of rows with these lengths,
    /// sorted over all rows as JDS stores them, walking up to `cap`
    /// entries a row in its main kernel: `(narrow, words)`, the entries of
    /// the groups of [`SORT_GROUP`] sorted rows whose columns take 16-bit
    /// offsets (their 32-bit indices are not read) and the 4-byte words of
    /// offset pairs (`ceil(min(length, cap) / 2)` a row). A group's columns
    /// are bounded by the [`ColumnSpans`] of the groups of 32 original rows
    /// its rows come from (so a group may be judged too wide that is not,
    /// never the reverse); every group fits a matrix of at most 65 535
    /// columns. `None` where no group fits, or the spans were not recorded
    /// (on a wider matrix).
    ///
    /// ```
    /// use sparsetool_analyze::rows::{ColumnSpans, Lengths};
    /// // a 5-point stencil's rows (lengths 3 to 5 on a 100 x 100 grid)
    /// let a = sparsetool_fixtures::gen::laplace2d::<f64, i32>(100).unwrap();
    /// let lens = Lengths::Dense(a.row_ptr().windows(2).map(|w| (w[1] - w[0]) as u32).collect());
    /// let spans = ColumnSpans::from_row_ptr(a.row_ptr(), a.col_idx());
    /// let (narrow, words) = lens.jds_u16(&lens.counts(), &spans, 10_000, 256).unwrap();
    /// assert_eq!(narrow, a.nnz() as u64);
    /// // ceil(length / 2) words a row: 3 for the 9 604 inner rows, 2 for
    /// // the 396 on the border
    /// assert_eq!(words, 3 * 9_604 + 2 * 396);
    /// ```
    #[must_use]
    pub fn jds_u16(
        &self,
        counts: &LengthCounts,
        spans: &ColumnSpans,
        ncols: usize,
        cap: u32,
    ) -> Option<(u64, u64)> {
        let groups = self.sorted_groups(counts);
        let walked = |c: u32| u64::from(c.min(cap));
        let (all, words) = self.nonzero().fold((0, 0), |(n, w), (_, c)| {
            (n + walked(c), w + walked(c).div_ceil(2))
        });
        if ncols as u64 <= spans::U16_SPAN + 1 {
            return (all > 0).then_some((all, words));
        }
        let mut span = vec![spans::EMPTY; groups];
        let mut entries = vec![0u64; groups];
        let mut known = true;
        self.for_sorted_groups(counts, |i, c, g| match spans.group_of_row(i) {
            Some(s) => {
                span[g] = spans::union(span[g], s);
                entries[g] += walked(c);
            }
            None => known = false,
        });
        let narrow: u64 = (0..groups)
            .filter(|&g| spans::fits(span[g]))
            .map(|g| entries[g])
            .sum();
        (known && narrow > 0).then_some((narrow, words))
    }

    /// Length of the axis.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Lengths::Dense(v) => v.len(),
            Lengths::Sparse { n, .. } => *n,
        }
    }

    /// Whether the axis is empty.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sum of the counts.
    #[must_use]
    pub fn total(&self) -> u64 {
        match self {
            Lengths::Dense(v) => v.iter().map(|&r| u64::from(r)).sum(),
            Lengths::Sparse { count, .. } => count.iter().map(|&r| u64::from(r)).sum(),
        }
    }

    /// The largest count (0 when empty).
    #[must_use]
    pub fn max(&self) -> u32 {
        match self {
            Lengths::Dense(v) => v.iter().copied().max().unwrap_or(0),
            Lengths::Sparse { count, .. } => count.iter().copied().max().unwrap_or(0),
        }
    }

    /// Every count, in index order (zeros included: memory `O(len)`).
    #[must_use]
    pub fn to_vec(&self) -> Vec<u32> {
        match self {
            Lengths::Dense(v) => v.clone(),
            Lengths::Sparse { n, index, count } => {
                let mut v = vec![0; *n];
                for (&i, &c) in index.iter().zip(count) {
                    v[i as usize] = c;
                }
                v
            }
        }
    }

    /// The run-length table of the counts (the zeros of a sparse axis
    /// counted arithmetically).
    #[must_use]
    pub fn counts(&self) -> LengthCounts {
        match self {
            Lengths::Dense(v) => LengthCounts::new(v),
            Lengths::Sparse { n, count, .. } => {
                let mut t = LengthCounts::new(count);
                let zeros = (*n - count.len()) as u64;
                if zeros > 0 {
                    match t.pairs.first_mut() {
                        Some((0, c)) => *c += zeros,
                        _ => t.pairs.insert(0, (0, zeros)),
                    }
                    t.nrows += zeros;
                }
                t
            }
        }
    }

    /// Summary statistics of the counts.
    #[must_use]
    pub fn stats(&self) -> crate::LengthStats {
        crate::LengthStats::from_counts(&self.counts())
    }

    /// Each count through `f` (monotone, with `f(0) = 0`: the part of each
    /// row a kernel walks), in the same representation.
    #[must_use]
    pub fn map(&self, f: impl Fn(u32) -> u32 + Sync) -> Lengths {
        match self {
            Lengths::Dense(v) => Lengths::Dense(v.par_iter().map(|&l| f(l)).collect()),
            Lengths::Sparse { n, index, count } => Lengths::Sparse {
                n: *n,
                index: index.clone(),
                count: count.iter().map(|&l| f(l)).collect(),
            },
        }
    }

    /// Slots of a SELL-C-σ layout of rows with these lengths (see
    /// [`crate::sell_slots`]; a sparse axis in `O(entries log entries)`).
    #[must_use]
    pub fn sell_slots(&self, c: usize, sigma: usize) -> u64 {
        match self {
            Lengths::Dense(v) => crate::sell_slots(v, c, sigma),
            Lengths::Sparse { n, index, count } => sparse_sell_slots(*n, index, count, c, sigma),
        }
    }
}

/// [`crate::sell_slots`] of a sparse axis: windows and slices without a
/// nonzero row add nothing (their rows are all empty), and zeros sort
/// last, so only the nonzero rows of each window matter.
fn sparse_sell_slots(n: usize, index: &[u64], count: &[u32], c: usize, sigma: usize) -> u64 {
    if c == 0 || n == 0 {
        return 0;
    }
    let c64 = c as u64;
    // Groups of consecutive nonzero rows that share `index / g`.
    let groups = |g: u64, f: &mut dyn FnMut(&[u32])| {
        let mut s = 0;
        while s < index.len() {
            let key = index[s] / g;
            let mut e = s + 1;
            while e < index.len() && index[e] / g == key {
                e += 1;
            }
            f(&count[s..e]);
            s = e;
        }
    };
    let mut slots = 0u64;
    if sigma <= 1 {
        groups(c64, &mut |ch| {
            slots += c64 * u64::from(ch.iter().copied().max().unwrap_or(0))
        });
        return slots;
    }
    let sigma = sigma.div_ceil(c).saturating_mul(c);
    let mut window = |w: &[u32]| {
        let mut v = w.to_vec();
        v.sort_unstable_by(|a, b| b.cmp(a));
        slots += v
            .iter()
            .step_by(c)
            .map(|&m| c64 * u64::from(m))
            .sum::<u64>();
    };
    if sigma >= n {
        window(count);
    } else {
        groups(sigma as u64, &mut window);
    }
    slots
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
        if row_ptr.len() != nrows.saturating_add(1) {
            return Err(AnalyzeError::BadStructure(format!(
                "row_ptr has {} entries, expected nrows + 1 = {}",
                row_ptr.len(),
                nrows as u128 + 1
            )));
        }
        // In parallel: a matrix of billions of entries is analysed on a
        // machine of many cores, and every pass here is over all its rows
        // or entries. An invalid `row_ptr` is rare: its first bad row is
        // then found by a serial pass, so the message names it.
        let mut rows: Vec<u32> = try_with_capacity(nrows, "the row lengths")?;
        rows.par_extend(row_ptr.par_windows(2).map(|w| {
            let (s, e) = (w[0].to_usize(), w[1].to_usize());
            if e < s || e == usize::MAX {
                u32::MAX
            } else {
                u32::try_from(e - s).unwrap_or(u32::MAX)
            }
        }));
        if rows.par_iter().any(|&l| l == u32::MAX) {
            for (i, w) in row_ptr.windows(2).enumerate() {
                let (s, e) = (w[0].to_usize(), w[1].to_usize());
                if e < s || e == usize::MAX {
                    return Err(AnalyzeError::BadStructure(format!(
                        "row_ptr decreases or is negative at row {i}"
                    )));
                }
                count_u32("row length", e - s)?;
            }
        }
        if row_ptr.first().map(|p| p.to_usize()) != Some(0)
            || row_ptr.last().map(|p| p.to_usize()) != Some(col_idx.len())
        {
            return Err(AnalyzeError::BadStructure(format!(
                "row_ptr must start at 0 and end at {} (the number of column indices)",
                col_idx.len()
            )));
        }
        let entries = row_ptr
            .par_windows(2)
            .enumerate()
            .with_min_len(4096)
            .flat_map_iter(|(i, w)| {
                col_idx[w[0].to_usize()..w[1].to_usize()]
                    .iter()
                    .map(move |j| (i as u64, j.to_usize() as u64))
            });
        let far = Far::count_par(nrows, ncols, entries);
        let spans = ColumnSpans::from_row_ptr(row_ptr, col_idx);
        Self::with_columns(nrows, ncols, rows.into(), col_idx, far, spans)
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
        let entries = row_idx
            .par_iter()
            .zip(col_idx)
            .with_min_len(1 << 16)
            .map(|(i, j)| (i.to_usize() as u64, j.to_usize() as u64));
        let far = Far::count_par(nrows, ncols, entries);
        // a declared axis far longer than the entries records no spans
        let spans = if sparse_axis(nrows, row_idx.len()) {
            ColumnSpans::default()
        } else {
            let c = SpanCounter::new(nrows);
            row_idx
                .par_iter()
                .zip(col_idx)
                .with_min_len(1 << 16)
                .for_each(|(i, j)| c.add(i.to_usize() as u64, j.to_usize() as u64));
            c.finish()
        };
        Self::with_columns(nrows, ncols, rows, col_idx, far, spans)
    }

    /// The row lengths `rows` with the column lengths counted from `col_idx`.
    fn with_columns<I: Index>(
        nrows: usize,
        ncols: usize,
        rows: Lengths,
        col_idx: &[I],
        far: Far,
        spans: ColumnSpans,
    ) -> Result<Self, AnalyzeError> {
        let cols = index_counts(&COLUMN, ncols, col_idx)?;
        Ok(Self {
            nrows,
            ncols,
            rows,
            cols,
            far,
            spans,
        })
    }

    /// The [`Far`] entries for values of `value_bytes` bytes, where `x`
    /// (`ncols` values) is larger than [`X_CACHE_BYTES`]; 0 where it is
    /// not (every gather can hit the cache).
    ///
    /// ```
    /// use sparsetool_analyze::RowLengths;
    /// // one row of 8M columns: its entries at both ends
    /// let rl = RowLengths::from_row_ptr(1, 8_000_000, &[0i32, 2], &[0i32, 7_999_999]).unwrap();
    /// assert_eq!(rl.far_gathers(8), 1); // x is 64 MB: the last column is far
    /// assert_eq!(rl.far_gathers(4), 1);
    /// let small = RowLengths::from_row_ptr(1, 1_000_000, &[0i32, 1], &[999_999i32]).unwrap();
    /// assert_eq!(small.far_gathers(8), 0); // x is 8 MB
    /// ```
    #[must_use]
    pub fn far_gathers(&self, value_bytes: u64) -> u64 {
        if (self.ncols as u64).saturating_mul(value_bytes) <= X_CACHE_BYTES {
            return 0;
        }
        FAR_VALUE_BYTES
            .iter()
            .position(|&b| b >= value_bytes)
            .map_or(0, |k| self.far.0[k])
    }

    /// Number of stored entries (sum of the row lengths).
    #[must_use]
    pub fn nnz(&self) -> u64 {
        self.rows.total()
    }

    /// Length of the longest row (0 when there are no rows).
    #[must_use]
    pub fn max_row(&self) -> usize {
        self.rows.max() as usize
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
/// or columns of one axis; sparse when `n` is much larger than the
/// entries); an index out of range is an error.
fn index_counts<I: Index>(axis: &Axis, n: usize, idx: &[I]) -> Result<Lengths, AnalyzeError> {
    let check = |k: usize, i: &I| {
        let iu = i.to_usize();
        if iu >= n {
            return Err(AnalyzeError::BadStructure(format!(
                "entry {k}: {} {} is out of range ({} = {n})",
                axis.index,
                i.to_i64(),
                axis.dim
            )));
        }
        Ok(iu)
    };
    if sparse_axis(n, idx.len()) {
        let mut all = try_with_capacity(idx.len(), axis.index)?;
        for (k, i) in idx.iter().enumerate() {
            all.push(check(k, i)? as u64);
        }
        return Lengths::from_indices(n, all, axis.length);
    }
    if idx.len() < u32::MAX as usize && idx.len() >= PARALLEL_COUNT_MIN {
        // In parallel, with atomic counters: no count can overflow (fewer
        // indices than u32::MAX). An index out of range is found first, by
        // a serial pass, so the message names the first such entry.
        if idx.par_iter().any(|i| i.to_usize() >= n) {
            for (k, i) in idx.iter().enumerate() {
                check(k, i)?;
            }
        }
        let mut counts: Vec<AtomicU32> = try_with_capacity(n, axis.length)?;
        counts.par_extend((0..n).into_par_iter().map(|_| AtomicU32::new(0)));
        idx.par_iter().with_min_len(1 << 16).for_each(|i| {
            counts[i.to_usize()].fetch_add(1, Ordering::Relaxed);
        });
        // collected in place (same layout): no second array of n counts
        let out: Vec<u32> = counts.into_iter().map(AtomicU32::into_inner).collect();
        return Ok(out.into());
    }
    let mut counts = try_filled(n, 0u32, axis.length)?;
    for (k, i) in idx.iter().enumerate() {
        bump(&mut counts, check(k, i)?, axis.length)?;
    }
    Ok(counts.into())
}

/// Indices from which [`index_counts`] counts in parallel.
const PARALLEL_COUNT_MIN: usize = 1 << 20;

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

#[cfg(test)]
mod scatter_tests {
    use super::Lengths;

    fn scatter(l: &Lengths) -> f64 {
        l.sort_scatter(&l.counts())
    }

    #[test]
    fn sort_scatter_counts_only_groups_the_sort_spreads() {
        // 64 rows of length 2 then 64 of length 1: each warp of the sorted
        // order is 32 consecutive original rows, nothing moves
        let blocks: Vec<u32> = (0..128).map(|i| if i < 64 { 2 } else { 1 }).collect();
        assert_eq!(scatter(&Lengths::Dense(blocks)), 0.0);
        // one long row every 100 rows: the 10 long rows form a warp spanning
        // 900 original rows (their 10 x 50 entries move); the short rows'
        // warps span 33 rows at most and stay
        let sparse_long: Vec<u32> = (0..1000)
            .map(|i| if i % 100 == 0 { 50 } else { 1 })
            .collect();
        let s = scatter(&Lengths::Dense(sparse_long.clone()));
        let long_group_entries = 10 * 50 + 22; // the 10 long rows and 22 short ones share a warp
        assert!(
            (s - long_group_entries as f64 / 1490.0).abs() < 1e-12,
            "{s}"
        );
        // empty rows sort last and hold nothing: the sparse axis scores
        // the same as the dense one
        let dense: Vec<u32> = (0..5000)
            .map(|i| if i % 7 == 0 { 1 + i % 5 } else { 0 })
            .collect();
        let index: Vec<u64> = (0..5000u64).filter(|i| i % 7 == 0).collect();
        let count: Vec<u32> = index.iter().map(|&i| 1 + (i % 5) as u32).collect();
        let sparse = Lengths::Sparse {
            n: 5000,
            index,
            count,
        };
        assert_eq!(scatter(&Lengths::Dense(dense)), scatter(&sparse));
        assert_eq!(scatter(&Lengths::Dense(vec![0; 10])), 0.0);
    }
}

/// The parallel passes of [`RowLengths::from_row_ptr`] and
/// [`RowLengths::from_coords`] (above [`PARALLEL_COUNT_MIN`] indices) give
/// the serial passes' counts and their first-error messages.
#[cfg(test)]
mod parallel_tests {
    use super::*;

    /// `n` entries spread over `nrows` rows and 3M columns (x larger than
    /// the cache, so far entries are counted), with a few long rows.
    fn coords(nrows: usize, n: usize) -> (Vec<i64>, Vec<i64>) {
        let mut rows: Vec<i64> = (0..n).map(|k| ((k * 7919) % nrows) as i64).collect();
        rows.sort_unstable();
        let cols = (0..n)
            .map(|k| ((k as u64 * 2_654_435_761) % 3_000_000) as i64)
            .collect();
        (rows, cols)
    }

    #[test]
    fn parallel_counts_match_serial_counts() {
        let (nrows, n) = (50_000, 3 * PARALLEL_COUNT_MIN);
        let (rows, cols) = coords(nrows, n);
        let mut row_ptr = vec![0i64; nrows + 1];
        for &r in &rows {
            row_ptr[r as usize + 1] += 1;
        }
        for i in 0..nrows {
            row_ptr[i + 1] += row_ptr[i];
        }
        let (mut want_rows, mut want_cols) = (vec![0u32; nrows], vec![0u32; 3_000_000]);
        let mut far = Far::counter(nrows, 3_000_000);
        for (&r, &c) in rows.iter().zip(&cols) {
            want_rows[r as usize] += 1;
            want_cols[c as usize] += 1;
            far.add(r as u64, c as u64);
        }
        let far = far.finish();
        assert!(far.0.iter().any(|&f| f > 0), "{far:?}");
        let a = RowLengths::from_row_ptr(nrows, 3_000_000, &row_ptr, &cols).unwrap();
        let b = RowLengths::from_coords(nrows, 3_000_000, &rows, &cols).unwrap();
        for rl in [&a, &b] {
            assert_eq!(rl.rows.to_vec(), want_rows);
            assert_eq!(rl.cols.to_vec(), want_cols);
            assert_eq!(rl.far, far);
        }
    }

    #[test]
    fn parallel_passes_name_the_first_bad_entry() {
        let (nrows, n) = (50_000, 2 * PARALLEL_COUNT_MIN);
        let (mut rows, mut cols) = coords(nrows, n);
        cols[1_500_000] = 3_000_000;
        cols[1_700_000] = 3_000_001;
        let e = RowLengths::from_coords(nrows, 3_000_000, &rows, &cols).unwrap_err();
        assert!(e.to_string().contains("entry 1500000:"), "{e}");
        cols[1_500_000] = 0;
        cols[1_700_000] = 0;
        rows[1_200_000] = -1;
        let e = RowLengths::from_coords(nrows, 3_000_000, &rows, &cols).unwrap_err();
        assert!(e.to_string().contains("entry 1200000:"), "{e}");
        let mut row_ptr: Vec<i64> = (0..=nrows as i64).map(|i| i * 40).collect();
        row_ptr[30_000] = 5;
        row_ptr[40_000] = 6;
        let e =
            RowLengths::from_row_ptr(nrows, 3_000_000, &row_ptr, &cols[..nrows * 40]).unwrap_err();
        assert!(e.to_string().contains("at row 29999"), "{e}");
    }
}
