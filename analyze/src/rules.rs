//! The structural rules: HYB widths and SELL C/σ from the row lengths
//! alone, and what counts as uneven rows. They depend on nothing above
//! them: the candidates ([`crate::candidates`]) use them, the time model
//! ([`crate::timing`]) ranks the candidates, and [`crate::recommend`]
//! picks among the ranked ones.
//!
//! # HYB width
//! Three rules side by side, all from the row lengths alone:
//! - **model** ([`hyb_width_with`]): the width `k` minimising
//!   `ell_slot_cost * nrows * k + coo_entry_cost * overflow(k)`, where
//!   `overflow(k) = sum(max(0, len - k))` is what the COO tail holds. The
//!   cost is convex in `k`: widening by one adds `nrows` ELL slots and
//!   removes one COO entry from each row longer than `k`, so the optimum
//!   is the smallest `k` with `coo_entry_cost * rows_longer_than(k) <=
//!   ell_slot_cost * nrows`. Clamped to at least 1 when the matrix has
//!   entries (a HYB of width 0 is a COO matrix; `convert` rejects it).
//! - **CUSP** ([`cusp_hyb_width`]), `compute_optimal_entries_per_row`
//!   with relative speed 3 and break-even 4096: the smallest `k` such that
//!   `3 * rows_longer_than(k) < nrows` or `rows_longer_than(k) < 4096`,
//!   i.e. the largest width reached by at least `max(4096, nrows / 3)`
//!   rows (0 for matrices under 4096 rows: all COO).
//! - **Ginkgo** ([`ginkgo_hyb_width`]), the `automatic` strategy
//!   `imbalance_bounded_limit(1/3, 0.001)`: sort the lengths ascending,
//!   take `len[floor(nrows / 3)]` (the `imbalance_limit(1/3)` percentile)
//!   and bound it by `floor(nrows * 0.001)`.
//!
//! # SELL
//! [`sell_table`] computes the exact padding for C in {32, 64, 128} and σ
//! in {1, C, 8C, 32C, full sort}; [`choose_sell`] keeps C = 32 (one warp)
//! and the smallest σ whose padding is within
//! [`CostModel::sell_padding_tolerance`] of the full sort's (σ = 1 is
//! never chosen for uneven rows).
//!

use serde::Serialize;

use crate::rows::{LengthCounts, Lengths, RowLengths};

/// The structural rules: the HYB width rule's relative costs (in "ELL
/// slot" units, one coalesced index + value load; CUSP's rule of thumb
/// that a COO entry costs about three ELL slots), what counts as uneven
/// rows, and the SELL σ tolerance. The format itself is chosen by the
/// calibrated [`TimeModel`](crate::TimeModel).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostModel {
    /// One ELL slot (padding included).
    pub ell_slot_cost: f64,
    /// One COO entry (row + column + value, atomic or segmented update).
    pub coo_entry_cost: f64,
    /// Rows are uneven when `cv` exceeds this...
    pub uneven_cv: f64,
    /// ...or the longest row exceeds this many times the mean.
    pub uneven_max_over_mean: f64,
    /// SELL σ is the smallest whose padding ratio is within this of the
    /// full sort's.
    pub sell_padding_tolerance: f64,
}

/// Named defaults of [`CostModel`].
impl CostModel {
    /// Default [`CostModel::ell_slot_cost`].
    pub const ELL_SLOT_COST: f64 = 1.0;
    /// Default [`CostModel::coo_entry_cost`] (CUSP's relative speed).
    pub const COO_ENTRY_COST: f64 = 3.0;
    /// Default [`CostModel::uneven_cv`].
    pub const UNEVEN_CV: f64 = 0.5;
    /// Default [`CostModel::uneven_max_over_mean`].
    pub const UNEVEN_MAX_OVER_MEAN: f64 = 4.0;
    /// Default [`CostModel::sell_padding_tolerance`].
    pub const SELL_PADDING_TOLERANCE: f64 = 0.05;
}

impl Default for CostModel {
    fn default() -> Self {
        Self {
            ell_slot_cost: Self::ELL_SLOT_COST,
            coo_entry_cost: Self::COO_ENTRY_COST,
            uneven_cv: Self::UNEVEN_CV,
            uneven_max_over_mean: Self::UNEVEN_MAX_OVER_MEAN,
            sell_padding_tolerance: Self::SELL_PADDING_TOLERANCE,
        }
    }
}

impl CostModel {
    /// Whether rows are uneven enough to rule out ELL and unsorted SELL.
    #[must_use]
    pub fn is_uneven(&self, cv: f64, mean: f64, max: u64) -> bool {
        cv > self.uneven_cv || max as f64 > self.uneven_max_over_mean * mean.max(1.0)
    }

    /// Cost of a HYB layout of width `k` (slot units).
    #[must_use]
    pub fn hyb_cost(&self, counts: &LengthCounts, k: u64) -> f64 {
        self.ell_slot_cost * (counts.nrows as f64 * k as f64)
            + self.coo_entry_cost * counts.overflow(k) as f64
    }
}

/// Mean, population std and cv of a length table.
fn moments(counts: &LengthCounts) -> (f64, f64) {
    if counts.nrows == 0 {
        return (0.0, 0.0);
    }
    let n = counts.nrows as f64;
    let mean = counts.nnz as f64 / n;
    let var = counts
        .pairs
        .iter()
        .map(|&(l, c)| c as f64 * (l as f64 - mean).powi(2))
        .sum::<f64>()
        / n;
    (mean, var.sqrt())
}

fn uneven_counts(model: &CostModel, counts: &LengthCounts) -> bool {
    let (mean, std) = moments(counts);
    let cv = if mean > 0.0 { std / mean } else { 0.0 };
    model.is_uneven(cv, mean, counts.max())
}

/// HYB width by the cost model (see the module docs).
#[must_use]
pub fn hyb_width_with(counts: &LengthCounts, model: &CostModel) -> u64 {
    let max = counts.max();
    if max == 0 {
        return 0;
    }
    let budget = model.ell_slot_cost * counts.nrows as f64;
    let mut longer = counts.nrows;
    // rows_longer_than(k) only changes at the lengths present.
    let mut best = max;
    let mut k = 0;
    for &(l, c) in &counts.pairs {
        // For k in [previous length, l): rows longer than k = `longer`.
        if k < l && model.coo_entry_cost * longer as f64 <= budget {
            best = k;
            break;
        }
        longer -= c;
        k = l;
        if model.coo_entry_cost * longer as f64 <= budget {
            best = l;
            break;
        }
    }
    best.clamp(1, max)
}

/// CUSP's HYB width (see the module docs).
#[must_use]
pub fn cusp_hyb_width(counts: &LengthCounts) -> u64 {
    let n = counts.nrows;
    let max = counts.max();
    let ok = |rows: u64| 3 * rows < n || rows < 4096;
    // rows_longer_than(i) only changes at the lengths present, so the
    // smallest i of CUSP's loop `for i in 0..max` is 0 or one of them.
    let mut cands = vec![0u64];
    cands.extend(
        counts
            .pairs
            .iter()
            .map(|p| p.0)
            .filter(|&l| l > 0 && l < max),
    );
    let (mut longer, mut idx) = (n, 0);
    for i in cands.into_iter().filter(|&i| i < max) {
        while idx < counts.pairs.len() && counts.pairs[idx].0 <= i {
            longer -= counts.pairs[idx].1;
            idx += 1;
        }
        if ok(longer) {
            return i;
        }
    }
    max
}

/// Ginkgo's `imbalance_bounded_limit(1/3, 0.001)` HYB width (see the
/// module docs).
#[must_use]
pub fn ginkgo_hyb_width(counts: &LengthCounts) -> u64 {
    let n = counts.nrows;
    if n == 0 {
        return 0;
    }
    let pos = (n as f64 * (1.0 / 3.0)) as u64;
    let mut seen = 0;
    let mut at = counts.max();
    for &(l, c) in &counts.pairs {
        seen += c;
        if seen > pos {
            at = l;
            break;
        }
    }
    at.min((n as f64 * 0.001) as u64)
}

/// One HYB width rule and what it gives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HybRule {
    /// `model`, `cusp` or `ginkgo`.
    pub rule: &'static str,
    /// ELL width.
    pub width: u64,
    /// `nrows * width`.
    pub ell_slots: u64,
    /// ELL-part padding / (ELL slots + COO entries).
    pub padding_ratio: f64,
    /// Entries in the COO tail.
    pub coo_entries: u64,
    /// COO entries / all entries.
    pub coo_share: f64,
    /// Cost under the model (slot units).
    pub cost: f64,
}

fn hyb_rule(rule: &'static str, counts: &LengthCounts, width: u64, model: &CostModel) -> HybRule {
    let ell_slots = counts.nrows.saturating_mul(width);
    let coo = counts.overflow(width);
    let kept = counts.nnz - coo;
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    HybRule {
        rule,
        width,
        ell_slots,
        padding_ratio: ratio(ell_slots - kept, ell_slots + coo),
        coo_entries: coo,
        coo_share: ratio(coo, counts.nnz),
        cost: model.hyb_cost(counts, width),
    }
}

/// The three HYB rules: model, CUSP, Ginkgo.
#[must_use]
pub fn hyb_rules(counts: &LengthCounts, model: &CostModel) -> Vec<HybRule> {
    vec![
        hyb_rule("model", counts, hyb_width_with(counts, model), model),
        hyb_rule("cusp", counts, cusp_hyb_width(counts), model),
        hyb_rule("ginkgo", counts, ginkgo_hyb_width(counts), model),
    ]
}

/// One point of the padding-versus-width curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CurvePoint {
    /// ELL width `k`.
    pub width: u64,
    /// `nrows * k`.
    pub ell_slots: u64,
    /// ELL slots holding padding.
    pub padding_slots: u64,
    /// Entries beyond `k` (COO tail of a HYB of width `k`).
    pub coo_entries: u64,
}

/// The padding-versus-width curve: every width up to 64, then widths
/// growing by about 25 % up to the longest row, plus `extra` widths (the
/// chosen ones).
#[must_use]
pub fn padding_curve(counts: &LengthCounts, extra: &[u64]) -> Vec<CurvePoint> {
    let max = counts.max();
    let mut widths: Vec<u64> = (0..=max.min(64)).collect();
    let mut w = 64u64;
    while w < max {
        w = (w + w / 4).min(max);
        widths.push(w);
    }
    widths.extend(extra.iter().copied().filter(|&e| e <= max));
    widths.sort_unstable();
    widths.dedup();
    widths
        .into_iter()
        .map(|k| {
            let coo = counts.overflow(k);
            let slots = counts.nrows.saturating_mul(k);
            CurvePoint {
                width: k,
                ell_slots: slots,
                padding_slots: slots - (counts.nnz - coo),
                coo_entries: coo,
            }
        })
        .collect()
}

/// One SELL-C-σ candidate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SellCandidate {
    /// Slice height C.
    pub slice: u64,
    /// Sorting window σ.
    pub sigma: u64,
    /// Slots.
    pub slots: u64,
    /// Padding slots / slots.
    pub padding_ratio: f64,
}

/// Slice heights tried.
pub const SELL_SLICES: [usize; 3] = [32, 64, 128];

/// σ values tried for slice height `c`: 1, C, 8C, 32C and the full sort
/// (`nrows` rounded up to a multiple of C); windows at least as large as
/// the full sort are the full sort and appear once.
#[must_use]
pub fn sell_sigmas(c: usize, nrows: usize) -> Vec<usize> {
    let full = nrows.div_ceil(c).max(1) * c;
    let mut v: Vec<usize> = vec![1];
    v.extend([c, 8 * c, 32 * c].into_iter().filter(|&s| s < full));
    v.push(full);
    v.dedup();
    v
}

/// Exact SELL padding for every candidate (see the module docs).
#[must_use]
pub fn sell_table(rows: &Lengths, nnz: u64) -> Vec<SellCandidate> {
    let mut out = Vec::new();
    for c in SELL_SLICES {
        for sigma in sell_sigmas(c, rows.len()) {
            let slots = rows.sell_slots(c, sigma);
            let padding_ratio = if slots == 0 {
                0.0
            } else {
                (slots - nnz.min(slots)) as f64 / slots as f64
            };
            out.push(SellCandidate {
                slice: c as u64,
                sigma: sigma as u64,
                slots,
                padding_ratio,
            });
        }
    }
    out
}

/// Chooses (C, σ) from a table: C = 32, the smallest σ within the
/// tolerance of the full sort's padding; σ = 1 excluded when `uneven`.
#[must_use]
pub fn choose_sell(table: &[SellCandidate], model: &CostModel, uneven: bool) -> (usize, usize) {
    let c32: Vec<&SellCandidate> = table.iter().filter(|s| s.slice == 32).collect();
    let Some(full) = c32.last() else {
        return (32, 1);
    };
    let pick = c32
        .iter()
        .filter(|s| !(uneven && s.sigma == 1))
        .find(|s| s.padding_ratio <= full.padding_ratio + model.sell_padding_tolerance)
        .unwrap_or(full);
    (32, pick.sigma as usize)
}

/// HYB width for `convert --hyb-width auto`: the cost-model rule with the
/// default [`CostModel`] (at least 1 when the matrix has entries).
///
/// ```
/// use sparsetool_analyze::{recommend_hyb_width, RowLengths};
/// // 999 rows of 4 entries and one of 200: width 4, the long row's
/// // overflow goes to COO.
/// let mut rows = vec![4u32; 1000];
/// rows[10] = 200;
/// let rl = RowLengths { nrows: 1000, ncols: 1000, rows: rows.into(), cols: vec![0; 1000].into(), far: Default::default(), spans: Default::default() };
/// assert_eq!(recommend_hyb_width(&rl), 4);
/// ```
#[must_use]
pub fn recommend_hyb_width(rl: &RowLengths) -> usize {
    hyb_width_with(&rl.rows.counts(), &CostModel::default()) as usize
}

/// SELL (C, σ) defaults for `convert`: [`choose_sell`] over
/// [`sell_table`] with the default [`CostModel`].
///
/// ```
/// use sparsetool_analyze::{recommend_sell, RowLengths};
/// let rl = RowLengths { nrows: 4, ncols: 4, rows: vec![3, 3, 3, 3].into(), cols: vec![3; 4].into(), far: Default::default(), spans: Default::default() };
/// assert_eq!(recommend_sell(&rl), (32, 1)); // uniform rows: no sorting needed
/// ```
#[must_use]
pub fn recommend_sell(rl: &RowLengths) -> (usize, usize) {
    let counts = rl.rows.counts();
    let model = CostModel::default();
    let table = sell_table(&rl.rows, counts.nnz);
    choose_sell(&table, &model, uneven_counts(&model, &counts))
}
