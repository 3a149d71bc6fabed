//! Row partitions for SpMV on several GPUs: where to cut the rows, what each
//! part owns, and which entries of `x` travel between parts.
//!
//! The design is PETSc's MPIAIJ (and Ginkgo's `distributed::Matrix`): the
//! rows are cut into `N` contiguous parts; part `p` owns rows
//! `row_bounds[p]..row_bounds[p + 1]` of `A` and `y`, and entries
//! `col_bounds[p]..col_bounds[p + 1]` of `x` (the same cuts for a square
//! matrix; proportional cuts of the columns otherwise). Its rows split into a
//! **local block** (the columns it owns, renumbered from 0) and a **ghost
//! block** (every other column it touches, renumbered compactly in
//! ascending global order). Before the ghost block can run, each owner sends
//! the part exactly those `x` entries: the [`ExchangePlan`].
//!
//! # Partition rule
//! Cuts equalise the **predicted time** of the parts under the calibrated
//! [`TimeModel`], not their rows or entries: a part's time is its local
//! block's best layout ([`rank_layouts`]) plus its ghost block run as
//! row-sorted COO (the kernel that adds into `y`). Starting from equal
//! `entries + rows`, each refinement step measures every part's predicted
//! microseconds per unit of that work, re-cuts so that the rate-weighted work
//! is equal, and keeps the cuts with the smallest slowest part
//! ([`PartitionOptions::refine`] steps).
//!
//! ```
//! use sparsetool_analyze::partition::{Partition, PartitionOptions};
//! // A 4x4 tridiagonal matrix, two parts.
//! let row_ptr = [0i64, 2, 5, 8, 10];
//! let col_idx = [0i64, 1, 0, 1, 2, 1, 2, 3, 2, 3];
//! let p = Partition::new(4, 4, &row_ptr, &col_idx, 2, &PartitionOptions::default()).unwrap();
//! assert_eq!(p.row_bounds, [0, 2, 4]);
//! // Part 0 needs x[2] from part 1, part 1 needs x[1] from part 0.
//! assert_eq!(p.plan.ghost_cols, [vec![2], vec![1]]);
//! assert_eq!(p.plan.transfers.len(), 2);
//! assert_eq!(p.parts[0].ghost_cols, 1);
//! ```

use std::ops::Range;

use rayon::prelude::*;
use serde::Serialize;
use sparsetool_formats::alloc::try_zeroed;
use sparsetool_formats::{Csr, Index, Layout, Scalar};

use crate::candidates::Features;
use crate::recommend::rank_layouts;
use crate::rows::{ColumnSpans, Far, Lengths, RowLengths};
use crate::rules::CostModel;
use crate::timing::TimeModel;
use crate::AnalyzeError;

/// How to partition.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionOptions {
    /// Bytes per value (4 or 8; 8 or 16 for complex): the time model's
    /// bytes and the exchange's.
    pub value_bytes: u64,
    /// Refinement steps after the first cut (see the module docs).
    pub refine: usize,
    /// The time model (the shipped calibration by default).
    pub model: TimeModel,
}

impl Default for PartitionOptions {
    fn default() -> Self {
        Self {
            value_bytes: 8,
            refine: 4,
            model: TimeModel::calibrated().clone(),
        }
    }
}

/// One part as `analyze --gpus` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartInfo {
    /// Part number (0-based).
    pub part: usize,
    /// First row.
    pub row_start: usize,
    /// Rows of the part.
    pub rows: usize,
    /// First owned entry of `x`.
    pub col_start: usize,
    /// Owned entries of `x`.
    pub cols: usize,
    /// Entries of the part (local + ghost).
    pub nnz: u64,
    /// Entries of the local block.
    pub local_nnz: u64,
    /// Entries of the ghost block.
    pub ghost_nnz: u64,
    /// Distinct columns owned elsewhere (the ghost block's width, the `x`
    /// entries received).
    pub ghost_cols: u64,
    /// Bytes of `x` this part sends to the others per SpMV.
    pub send_bytes: u64,
    /// Bytes of `x` this part receives per SpMV (`ghost_cols` values).
    pub recv_bytes: u64,
    /// The local block's recommended layout.
    pub layout: Layout,
    /// Predicted µs of the local block in that layout.
    pub local_us: f64,
    /// Predicted µs of the ghost block (row-sorted COO; 0 without one).
    pub ghost_us: f64,
    /// `local_us + ghost_us`.
    pub predicted_us: f64,
}

/// One message of the exchange: `src` sends `x_src[src_idx[k]]` (indices
/// into the sender's owned part of `x`), received into the receiver's ghost
/// buffer at `dst_offset + k`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    /// Sending part.
    pub src: usize,
    /// Receiving part.
    pub dst: usize,
    /// Indices into the sender's owned `x` (ascending).
    pub src_idx: Vec<usize>,
    /// Where the values land in the receiver's ghost buffer.
    pub dst_offset: usize,
}

/// Who sends what to whom: every part receives exactly the `x` entries its
/// ghost block reads, each from its owner, once.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExchangePlan {
    /// Per part, the global columns of its ghost block, ascending: ghost
    /// column `k` is global column `ghost_cols[p][k]`. Owners' ranges are
    /// ascending, so each sender's values form one contiguous segment.
    pub ghost_cols: Vec<Vec<usize>>,
    /// The messages, ordered by `(src, dst)`; no empty message.
    pub transfers: Vec<Transfer>,
}

impl ExchangePlan {
    /// Values part `p` sends per SpMV.
    #[must_use]
    pub fn sent_by(&self, p: usize) -> usize {
        self.transfers
            .iter()
            .filter(|t| t.src == p)
            .map(|t| t.src_idx.len())
            .sum()
    }

    /// Values moved per SpMV in all.
    #[must_use]
    pub fn total_values(&self) -> usize {
        self.transfers.iter().map(|t| t.src_idx.len()).sum()
    }
}

/// A row partition with its exchange plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Partition {
    /// `N + 1` row cuts, from 0 to `nrows`: part `p` holds rows
    /// `row_bounds[p]..row_bounds[p + 1]`.
    pub row_bounds: Vec<usize>,
    /// `N + 1` cuts of `x`, from 0 to `ncols` (the row cuts for a square
    /// matrix, proportional ones otherwise).
    pub col_bounds: Vec<usize>,
    /// The parts, in row order (one [`PartInfo`] each, empty parts
    /// included).
    pub parts: Vec<PartInfo>,
    /// The GPU the time model was calibrated on (its calibration's
    /// `device`).
    pub device: String,
    /// Slowest part's predicted µs over the mean (1 is perfect balance;
    /// 1 also when every prediction is 0).
    pub imbalance: f64,
    /// Bytes moved per SpMV in all: the sum of the parts'
    /// `send_bytes` (and of their `recv_bytes`).
    pub exchange_bytes: u64,
    /// The exchange (not serialised: `parts` carries its byte counts).
    #[serde(skip)]
    pub plan: ExchangePlan,
}

/// Cuts of `0..n` for part boundaries `bounds` of `0..m`, proportional
/// (equal to `bounds` when `n == m`; the last cut is always `n`, so with
/// no rows the first part owns every column).
fn scale_bounds(bounds: &[usize], m: usize, n: usize) -> Vec<usize> {
    if m == n {
        return bounds.to_vec();
    }
    let last = bounds.len().saturating_sub(1);
    bounds
        .iter()
        .enumerate()
        .map(|(k, &b)| {
            if k == last {
                n
            } else if m == 0 {
                0
            } else {
                ((b as u128 * n as u128) / m as u128) as usize
            }
        })
        .collect()
}

/// The part owning index `c` under cuts `bounds` (the last part whose start
/// is at most `c`; empty parts own nothing).
fn owner(bounds: &[usize], c: usize) -> usize {
    bounds.partition_point(|&b| b <= c).saturating_sub(1)
}

/// Row and ghost lengths of one part under the column range it owns, and
/// the far entries of its local block (its rows and columns from 0).
struct Split {
    local: Vec<u32>,
    ghost: Vec<u32>,
    far: Far,
}

fn to_u32(n: usize) -> Result<u32, AnalyzeError> {
    u32::try_from(n).map_err(|_| AnalyzeError::CountOverflow {
        what: "row length",
        count: n as u64,
    })
}

fn split_lengths<I: Index>(
    row_ptr: &[I],
    col_idx: &[I],
    rows: Range<usize>,
    cols: Range<usize>,
) -> Result<Split, AnalyzeError> {
    let pairs: Vec<(u32, u32)> = rows
        .clone()
        .into_par_iter()
        .map(|r| {
            let row = &col_idx[row_ptr[r].to_usize()..row_ptr[r + 1].to_usize()];
            let own = row.iter().filter(|c| cols.contains(&c.to_usize())).count();
            Ok((to_u32(own)?, to_u32(row.len() - own)?))
        })
        .collect::<Result<_, AnalyzeError>>()?;
    let (local, ghost) = pairs.into_iter().unzip();
    let owned = rows.clone().into_par_iter().flat_map_iter(|r| {
        col_idx[row_ptr[r].to_usize()..row_ptr[r + 1].to_usize()]
            .iter()
            .map(|c| c.to_usize())
            .filter(|c| cols.contains(c))
            .map(move |c| ((r - rows.start) as u64, (c - cols.start) as u64))
    });
    let far = Far::count_par(rows.len(), cols.len(), owned);
    Ok(Split { local, ghost, far })
}

fn lengths(rows: Vec<u32>, ncols: usize, far: Far) -> RowLengths {
    RowLengths {
        nrows: rows.len(),
        ncols,
        rows: Lengths::Dense(rows),
        // Features read the column count only.
        cols: Lengths::Sparse {
            n: ncols,
            index: Vec::new(),
            count: Vec::new(),
        },
        far,
        // parts record no spans: only a part of at most 65 535 columns is
        // taken to read 16-bit column offsets
        spans: ColumnSpans::default(),
    }
}

/// Predicted time of a part: the best local layout, and the ghost block
/// as row-sorted COO over the rows that have ghost entries.
fn predict(
    split: &Split,
    cols: usize,
    ghost_cols: usize,
    opts: &PartitionOptions,
) -> (Layout, f64, f64) {
    let rows = split.local.len();
    let local_nnz: u64 = split.local.iter().map(|&l| u64::from(l)).sum();
    let (layout, local_us) = if rows == 0 {
        (Layout::Csr, 0.0)
    } else {
        let f = Features::new(
            &lengths(split.local.clone(), cols, split.far),
            opts.value_bytes,
        );
        match rank_layouts(&f, &opts.model, &CostModel::default())
            .first()
            .filter(|_| local_nnz > 0)
        {
            Some(&(i, t)) => (f.candidates[i].layout, t),
            None => {
                let t = f
                    .candidates
                    .iter()
                    .find(|c| c.layout == Layout::Csr)
                    .and_then(|c| opts.model.predict_us(c, &f))
                    .unwrap_or(0.0);
                (Layout::Csr, t)
            }
        }
    };
    let ghost_rows: Vec<u32> = split.ghost.iter().copied().filter(|&g| g > 0).collect();
    let ghost_us = if ghost_rows.is_empty() {
        0.0
    } else {
        // the ghost block's columns are numbered compactly, in ascending
        // global order: their distances from the diagonal mean nothing, and
        // its far entries are not counted
        let f = Features::new(
            &lengths(ghost_rows, ghost_cols, Far::default()),
            opts.value_bytes,
        );
        f.candidates
            .iter()
            .find(|c| c.layout == Layout::Coo)
            .and_then(|c| opts.model.predict_us(c, &f))
            .unwrap_or(0.0)
    };
    (layout, local_us, ghost_us)
}

/// Predicted µs of each part under `bounds` (the ghost width approximated
/// by the ghost entries while refining).
fn evaluate<I: Index>(
    row_ptr: &[I],
    col_idx: &[I],
    bounds: &[usize],
    cols: &[usize],
    opts: &PartitionOptions,
) -> Result<Vec<f64>, AnalyzeError> {
    (0..bounds.len() - 1)
        .into_par_iter()
        .map(|p| {
            let s = split_lengths(
                row_ptr,
                col_idx,
                bounds[p]..bounds[p + 1],
                cols[p]..cols[p + 1],
            )?;
            let ghost: u64 = s.ghost.iter().map(|&g| u64::from(g)).sum();
            let (_, l, g) = predict(&s, cols[p + 1] - cols[p], ghost as usize, opts);
            Ok(l + g)
        })
        .collect()
}

/// Work of rows `0..i`: entries plus rows (row pointers, `y`).
fn work<I: Index>(row_ptr: &[I], i: usize) -> f64 {
    (row_ptr[i].to_usize() + i) as f64
}

/// Cuts of the rows giving each part an equal share of the weighted work
/// `W(i) = sum_p rate[p] * work(rows of part p below i)` under the previous
/// cuts `prev`.
fn cut<I: Index>(row_ptr: &[I], prev: &[usize], rate: &[f64], n: usize) -> Vec<usize> {
    let nrows = row_ptr.len() - 1;
    let weighted = |i: usize| -> f64 {
        let mut w = 0.0;
        for p in 0..prev.len() - 1 {
            let (a, b) = (prev[p], prev[p + 1]);
            if i <= a {
                break;
            }
            w += rate[p] * (work(row_ptr, i.min(b)) - work(row_ptr, a));
        }
        w
    };
    let total = weighted(nrows);
    let mut bounds = vec![0usize; n + 1];
    bounds[n] = nrows;
    for (k, b) in bounds.iter_mut().enumerate().take(n).skip(1) {
        let target = total * k as f64 / n as f64;
        // first i with W(i) >= target (W is non-decreasing)
        let (mut lo, mut hi) = (0usize, nrows);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if weighted(mid) >= target {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        *b = lo;
    }
    for k in 1..=n {
        bounds[k] = bounds[k].max(bounds[k - 1]);
    }
    bounds
}

fn check_structure<I: Index>(
    nrows: usize,
    ncols: usize,
    row_ptr: &[I],
    col_idx: &[I],
) -> Result<(), AnalyzeError> {
    if row_ptr.len() != nrows + 1 {
        return Err(AnalyzeError::BadStructure(format!(
            "row_ptr has {} entries, expected {}",
            row_ptr.len(),
            nrows + 1
        )));
    }
    // In parallel first (billions of rows); the serial pass names the
    // first bad offset.
    let ordered = row_ptr.first().is_none_or(|p| p.to_usize() == 0)
        && row_ptr
            .par_windows(2)
            .all(|w| w[0].to_usize() <= w[1].to_usize() && w[1].to_usize() <= col_idx.len());
    let mut prev = 0usize;
    for (r, p) in row_ptr.iter().enumerate().filter(|_| !ordered) {
        let p = p.to_usize();
        if p < prev || p > col_idx.len() || (r == 0 && p != 0) {
            return Err(AnalyzeError::BadStructure(format!(
                "row_ptr[{r}] = {p} is out of order"
            )));
        }
        prev = p;
    }
    let prev = row_ptr.last().map_or(0, |p| p.to_usize());
    if prev != col_idx.len() {
        return Err(AnalyzeError::BadStructure(format!(
            "row_ptr ends at {prev}, col_idx has {} entries",
            col_idx.len()
        )));
    }
    if let Some(c) = col_idx.par_iter().find_any(|c| c.to_usize() >= ncols) {
        return Err(AnalyzeError::BadStructure(format!(
            "column {} out of range 0..{ncols}",
            c.to_usize()
        )));
    }
    Ok(())
}

impl Partition {
    /// Partitions the rows of a CSR structure (`row_ptr`, `col_idx`) into
    /// `nparts` parts of equal predicted time (see the module docs) and
    /// builds the exchange plan. `nparts` may exceed the rows: the extra
    /// parts are empty.
    ///
    /// # Errors
    /// [`AnalyzeError::BadStructure`] for `nparts == 0` or inconsistent
    /// arrays; [`AnalyzeError::CountOverflow`] for a row longer than 2^32 − 1.
    pub fn new<I: Index>(
        nrows: usize,
        ncols: usize,
        row_ptr: &[I],
        col_idx: &[I],
        nparts: usize,
        opts: &PartitionOptions,
    ) -> Result<Self, AnalyzeError> {
        if nparts == 0 {
            return Err(AnalyzeError::BadStructure(
                "a partition needs at least one part".into(),
            ));
        }
        check_structure(nrows, ncols, row_ptr, col_idx)?;
        let even = vec![1.0; 1];
        let mut bounds = cut(row_ptr, &[0, nrows], &even, nparts);
        let cols = scale_bounds(&bounds, nrows, ncols);
        let mut times = evaluate(row_ptr, col_idx, &bounds, &cols, opts)?;
        let slowest = |t: &[f64]| t.iter().copied().fold(0.0, f64::max);
        for _ in 0..opts.refine {
            if nparts == 1 {
                break;
            }
            let rates: Vec<f64> = (0..nparts)
                .map(|p| {
                    let w = work(row_ptr, bounds[p + 1]) - work(row_ptr, bounds[p]);
                    if w > 0.0 {
                        times[p] / w
                    } else {
                        0.0
                    }
                })
                .collect();
            let mean_rate = {
                let nz: Vec<f64> = rates.iter().copied().filter(|&r| r > 0.0).collect();
                if nz.is_empty() {
                    1.0
                } else {
                    nz.iter().sum::<f64>() / nz.len() as f64
                }
            };
            let rates: Vec<f64> = rates
                .into_iter()
                .map(|r| if r > 0.0 { r } else { mean_rate })
                .collect();
            let next = cut(row_ptr, &bounds, &rates, nparts);
            if next == bounds {
                break;
            }
            let next_cols = scale_bounds(&next, nrows, ncols);
            let next_times = evaluate(row_ptr, col_idx, &next, &next_cols, opts)?;
            if slowest(&next_times) < slowest(&times) {
                bounds = next;
                times = next_times;
            } else {
                break;
            }
        }
        Self::with_bounds(nrows, ncols, row_ptr, col_idx, bounds, opts)
    }

    /// [`Partition::new`] of a CSR matrix's structure.
    ///
    /// # Errors
    /// As [`Partition::new`].
    pub fn of_csr<T: Scalar, I: Index>(
        a: &Csr<T, I>,
        nparts: usize,
        opts: &PartitionOptions,
    ) -> Result<Self, AnalyzeError> {
        Self::new(a.nrows(), a.ncols(), a.row_ptr(), a.col_idx(), nparts, opts)
    }

    /// The partition at given row cuts (`nparts + 1` non-decreasing cuts
    /// from 0 to `nrows`), e.g. equal rows for a comparison; `x` is cut
    /// proportionally.
    ///
    /// # Errors
    /// [`AnalyzeError::BadStructure`] for bad cuts or arrays.
    pub fn with_bounds<I: Index>(
        nrows: usize,
        ncols: usize,
        row_ptr: &[I],
        col_idx: &[I],
        row_bounds: Vec<usize>,
        opts: &PartitionOptions,
    ) -> Result<Self, AnalyzeError> {
        check_structure(nrows, ncols, row_ptr, col_idx)?;
        let good = row_bounds.len() >= 2
            && row_bounds[0] == 0
            && row_bounds[row_bounds.len() - 1] == nrows
            && row_bounds.windows(2).all(|w| w[0] <= w[1]);
        if !good {
            return Err(AnalyzeError::BadStructure(format!(
                "row cuts {row_bounds:?} do not run from 0 to {nrows}"
            )));
        }
        let n = row_bounds.len() - 1;
        let col_bounds = scale_bounds(&row_bounds, nrows, ncols);
        // Per part: ghost columns (sorted, distinct) and the prediction.
        let per: Vec<(Vec<usize>, Split, Layout, f64, f64)> = (0..n)
            .into_par_iter()
            .map(|p| {
                let (rows, cols) = (
                    row_bounds[p]..row_bounds[p + 1],
                    col_bounds[p]..col_bounds[p + 1],
                );
                let lo = row_ptr[rows.start].to_usize();
                let hi = row_ptr[rows.end].to_usize();
                let mut ghost: Vec<usize> = col_idx[lo..hi]
                    .par_iter()
                    .map(|c| c.to_usize())
                    .filter(|c| !cols.contains(c))
                    .collect();
                ghost.par_sort_unstable();
                ghost.dedup();
                let s = split_lengths(row_ptr, col_idx, rows, cols.clone())?;
                let (layout, l, g) = predict(&s, cols.len(), ghost.len(), opts);
                Ok((ghost, s, layout, l, g))
            })
            .collect::<Result<_, AnalyzeError>>()?;
        let mut transfers = Vec::new();
        for (dst, (ghost, ..)) in per.iter().enumerate() {
            let mut k = 0;
            while k < ghost.len() {
                let src = owner(&col_bounds, ghost[k]);
                let end = k + ghost[k..].partition_point(|&c| c < col_bounds[src + 1]);
                transfers.push(Transfer {
                    src,
                    dst,
                    src_idx: ghost[k..end].iter().map(|&c| c - col_bounds[src]).collect(),
                    dst_offset: k,
                });
                k = end;
            }
        }
        transfers.sort_by_key(|t| (t.src, t.dst));
        let vb = opts.value_bytes;
        let mut parts = Vec::with_capacity(n);
        let mut ghost_cols = Vec::with_capacity(n);
        for (p, (ghost, s, layout, local_us, ghost_us)) in per.into_iter().enumerate() {
            let local_nnz: u64 = s.local.iter().map(|&l| u64::from(l)).sum();
            let ghost_nnz: u64 = s.ghost.iter().map(|&l| u64::from(l)).sum();
            let sent: usize = transfers
                .iter()
                .filter(|t| t.src == p)
                .map(|t| t.src_idx.len())
                .sum();
            parts.push(PartInfo {
                part: p,
                row_start: row_bounds[p],
                rows: row_bounds[p + 1] - row_bounds[p],
                col_start: col_bounds[p],
                cols: col_bounds[p + 1] - col_bounds[p],
                nnz: local_nnz + ghost_nnz,
                local_nnz,
                ghost_nnz,
                ghost_cols: ghost.len() as u64,
                send_bytes: sent as u64 * vb,
                recv_bytes: ghost.len() as u64 * vb,
                layout,
                local_us,
                ghost_us,
                predicted_us: local_us + ghost_us,
            });
            ghost_cols.push(ghost);
        }
        let slowest = parts.iter().map(|p| p.predicted_us).fold(0.0, f64::max);
        let mean = parts.iter().map(|p| p.predicted_us).sum::<f64>() / n as f64;
        let plan = ExchangePlan {
            ghost_cols,
            transfers,
        };
        Ok(Self {
            exchange_bytes: plan.total_values() as u64 * vb,
            row_bounds,
            col_bounds,
            parts,
            device: opts.model.device.clone(),
            imbalance: if mean > 0.0 { slowest / mean } else { 1.0 },
            plan,
        })
    }

    /// Rows of the matrix (the last row cut).
    #[must_use]
    pub fn nrows(&self) -> usize {
        self.row_bounds.last().copied().unwrap_or(0)
    }

    /// Columns of the matrix (the last cut of `x`).
    #[must_use]
    pub fn ncols(&self) -> usize {
        self.col_bounds.last().copied().unwrap_or(0)
    }

    /// Number of parts.
    #[must_use]
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether there are no parts (never, for a built partition).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Rows of part `p`.
    #[must_use]
    pub fn rows(&self, p: usize) -> Range<usize> {
        self.row_bounds[p]..self.row_bounds[p + 1]
    }

    /// Owned entries of `x` of part `p`.
    #[must_use]
    pub fn cols(&self, p: usize) -> Range<usize> {
        self.col_bounds[p]..self.col_bounds[p + 1]
    }

    /// The text `analyze --gpus` prints: one line per part.
    #[must_use]
    pub fn render(&self) -> String {
        let mut s = format!(
            "\npartition over {} GPUs (equal predicted time on {}; slowest/mean {:.3}, {} bytes moved per SpMV)\n",
            self.len(),
            self.device,
            self.imbalance,
            self.exchange_bytes
        );
        s.push_str(&format!(
            "{:>4} {:>12} {:>12} {:>10} {:>12} {:>12} {:>12}  {}\n",
            "part",
            "rows",
            "nnz",
            "ghost_cols",
            "send_bytes",
            "recv_bytes",
            "predicted_us",
            "layout"
        ));
        for p in &self.parts {
            let PartInfo {
                part,
                rows,
                nnz,
                ghost_cols,
                send_bytes,
                recv_bytes,
                ..
            } = p;
            let (t, layout) = (p.predicted_us, p.layout);
            s.push_str(&format!("{part:>4} {rows:>12} {nnz:>12} {ghost_cols:>10} "));
            s.push_str(&format!(
                "{send_bytes:>12} {recv_bytes:>12} {t:>12.1}  {layout}\n"
            ));
        }
        s
    }
}

/// The blocks of one part: `local` (rows of the part × its owned columns,
/// renumbered from 0) and `ghost` (rows of the part × its ghost columns,
/// renumbered as [`ExchangePlan::ghost_cols`] lists them). Every entry of
/// the part's rows is in exactly one of them.
#[derive(Debug, Clone, PartialEq)]
pub struct PartBlocks<T, I> {
    /// The local block.
    pub local: Csr<T, I>,
    /// The ghost block.
    pub ghost: Csr<T, I>,
}

fn structure_err(p: usize, e: sparsetool_formats::FormatError) -> AnalyzeError {
    AnalyzeError::BadStructure(format!("part {p}: {e}"))
}

/// Splits `a` into the local and ghost blocks of every part of `part`
/// (which must have been built from `a`'s structure).
///
/// # Errors
/// [`AnalyzeError::BadStructure`] when `a` does not match the partition.
pub fn split<T: Scalar, I: Index>(
    a: &Csr<T, I>,
    part: &Partition,
) -> Result<Vec<PartBlocks<T, I>>, AnalyzeError> {
    if a.nrows() != part.nrows() || a.ncols() != part.ncols() {
        return Err(AnalyzeError::BadStructure(format!(
            "a {}x{} matrix against a partition of a {}x{} one",
            a.nrows(),
            a.ncols(),
            part.nrows(),
            part.ncols()
        )));
    }
    (0..part.len()).map(|p| split_part(a, part, p)).collect()
}

/// Rows handled by one task of [`split`].
const SPLIT_CHUNK: usize = 1 << 14;

/// One chunk of rows split: row lengths and entries of both blocks.
type Halves<T, I> = ((Vec<usize>, Vec<I>, Vec<T>), (Vec<usize>, Vec<I>, Vec<T>));

fn split_part<T: Scalar, I: Index>(
    a: &Csr<T, I>,
    part: &Partition,
    p: usize,
) -> Result<PartBlocks<T, I>, AnalyzeError> {
    let (rows, cols) = (part.rows(p), part.cols(p));
    let ghost_cols = &part.plan.ghost_cols[p];
    let idx = |v: usize| {
        I::from_usize(v).ok_or_else(|| AnalyzeError::BadStructure(format!("index {v} overflows")))
    };
    let starts: Vec<usize> = rows.clone().step_by(SPLIT_CHUNK).collect();
    let chunks: Vec<Halves<T, I>> = starts
        .into_par_iter()
        .map(|s| {
            let (mut ll, mut lc, mut lv) = (Vec::new(), Vec::new(), Vec::new());
            let (mut gl, mut gc, mut gv) = (Vec::new(), Vec::new(), Vec::new());
            for r in s..(s + SPLIT_CHUNK).min(rows.end) {
                let (cs, vs) = a.row(r);
                let (l0, g0) = (lc.len(), gc.len());
                for (c, &v) in cs.iter().zip(vs) {
                    let c = c.to_usize();
                    if cols.contains(&c) {
                        lc.push(idx(c - cols.start)?);
                        lv.push(v);
                    } else {
                        let g = ghost_cols.binary_search(&c).map_err(|_| {
                            AnalyzeError::BadStructure(format!(
                                "part {p}: column {c} is not in the exchange plan"
                            ))
                        })?;
                        gc.push(idx(g)?);
                        gv.push(v);
                    }
                }
                ll.push(lc.len() - l0);
                gl.push(gc.len() - g0);
            }
            Ok(((ll, lc, lv), (gl, gc, gv)))
        })
        .collect::<Result<_, AnalyzeError>>()?;
    let (local, ghost): (Vec<_>, Vec<_>) = chunks.into_iter().unzip();
    // The pieces are copied into place in parallel: a part of a matrix of
    // billions of entries is tens of GB, which one thread copies in seconds.
    let join = |pieces: Vec<(Vec<usize>, Vec<I>, Vec<T>)>, ncols: usize| {
        let mut base = Vec::with_capacity(pieces.len() + 1);
        base.push(0usize);
        for (_, c, _) in &pieces {
            base.push(base[base.len() - 1] + c.len());
        }
        let nnz = base[base.len() - 1];
        idx(nnz)?; // every row offset fits I when the last one does
        let mut ptr: Vec<I> = try_zeroed(rows.len() + 1, "the row offsets of a part")?;
        let mut ci: Vec<I> = try_zeroed(nnz, "the column indices of a part")?;
        let mut vals: Vec<T> = try_zeroed(nnz, "the values of a part")?;
        // disjoint output slices, one per piece
        let (mut ptr_rest, mut ci_rest, mut vals_rest) =
            (&mut ptr[1..], &mut ci[..], &mut vals[..]);
        let mut outs = Vec::with_capacity(pieces.len());
        for (lens, c, _) in &pieces {
            let (p, pr) = std::mem::take(&mut ptr_rest).split_at_mut(lens.len());
            let (cc, cr) = std::mem::take(&mut ci_rest).split_at_mut(c.len());
            let (vv, vr) = std::mem::take(&mut vals_rest).split_at_mut(c.len());
            (ptr_rest, ci_rest, vals_rest) = (pr, cr, vr);
            outs.push((p, cc, vv));
        }
        pieces.into_par_iter().zip(outs).zip(base).for_each(
            |(((lens, c, v), (p, cc, vv)), mut at)| {
                for (slot, l) in p.iter_mut().zip(lens) {
                    at += l;
                    *slot = I::from_usize(at).unwrap_or_default();
                }
                cc.copy_from_slice(&c);
                vv.copy_from_slice(&v);
            },
        );
        Csr::try_from_parts(rows.len(), ncols, ptr, ci, vals).map_err(|e| structure_err(p, e))
    };
    Ok(PartBlocks {
        local: join(local, cols.len())?,
        ghost: join(ghost, ghost_cols.len())?,
    })
}

/// The distributed product on the host, step by step as the GPUs run it:
/// each part's owned slice of `x`, the exchange of [`ExchangePlan`] into
/// ghost buffers, then `y_p = local · x_p + ghost · ghost_x_p`; returns the
/// whole `y`. The reference the tests hold the plan to.
///
/// # Panics
/// If `x.len() != ncols` or `blocks` does not come from [`split`] of this
/// partition.
#[must_use]
pub fn simulate_spmv<T: Scalar, I: Index>(
    part: &Partition,
    blocks: &[PartBlocks<T, I>],
    x: &[T],
) -> Vec<T> {
    assert_eq!(x.len(), part.ncols(), "x has ncols entries");
    let owned: Vec<&[T]> = (0..part.len()).map(|p| &x[part.cols(p)]).collect();
    let mut ghost_x: Vec<Vec<T>> = part
        .plan
        .ghost_cols
        .iter()
        .map(|g| vec![T::zero(); g.len()])
        .collect();
    for t in &part.plan.transfers {
        for (k, &i) in t.src_idx.iter().enumerate() {
            ghost_x[t.dst][t.dst_offset + k] = owned[t.src][i];
        }
    }
    let mut y = Vec::with_capacity(part.nrows());
    for (p, b) in blocks.iter().enumerate() {
        let mut yl = vec![T::zero(); b.local.nrows()];
        b.local.spmv(owned[p], &mut yl);
        let mut yg = vec![T::zero(); b.ghost.nrows()];
        b.ghost.spmv(&ghost_x[p], &mut yg);
        y.extend(yl.into_iter().zip(yg).map(|(l, g)| l + g));
    }
    y
}

#[cfg(test)]
mod tests;
