//! The layouts the recommender weighs — and `sparsetool bench --sweep`
//! times — for one matrix: every format, HYB at the widths of each rule,
//! SELL at several slice heights and sorting windows.
//!
//! Each [`Candidate`] carries the [`Work`] it implies (rows, stored slots,
//! COO tail, bytes as a GPU kernel reads them), computed from the row
//! lengths alone, so a time model can be fitted to measured timings and
//! evaluated without the matrix ([`crate::timing`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sparsetool_formats::Layout;

use crate::formats::{self, Shape, Sizes, Traffic};
use crate::rows::{LengthCounts, Lengths, RowLengths};
use crate::rules::{
    cusp_hyb_width, ginkgo_hyb_width, hyb_width_with, sell_sigmas, CostModel, SellCandidate,
};
use crate::stats::LengthStats;

/// What one SpMV in a layout touches, from the row lengths alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Work {
    /// Rows of the matrix.
    pub rows: u64,
    /// Stored entries of the matrix.
    pub nnz: u64,
    /// Slots the main kernel walks: entries plus padding (ELL, SELL, the
    /// ELL part of HYB), entries otherwise.
    pub slots: u64,
    /// Entries in HYB's COO tail (0 for the other formats).
    pub tail: u64,
    /// Bytes of the stored arrays, 32-bit indices (the matrix term of the
    /// minimum-bytes model of `sparsetool bench`).
    pub matrix_bytes: u64,
    /// Bytes of `x` read once and `y` written once.
    pub vector_bytes: u64,
    /// [`Work::matrix_bytes`] with 16-bit column offsets, for the layouts
    /// whose GPU kernels read them where the columns allow
    /// ([`crate::rows::spans`]): ELL and HYB's ELL part per group of 32
    /// rows and JDS per group of 32 sorted rows (the other groups keep
    /// 32-bit indices), SELL where every slice fits. `None` for CSR and
    /// COO, where no group fits (JDS: or the offsets save no bytes), and in
    /// results written before it was counted (calibration then takes it
    /// from the timed `-u16` kernels' bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub u16_bytes: Option<u64>,
}

impl Work {
    /// The bytes one SpMV moves, in 1e6 bytes: the matrix's (with 16-bit
    /// column offsets where its kernels read them) and the vectors'.
    #[must_use]
    pub fn mbytes(&self) -> f64 {
        (self.u16_bytes.unwrap_or(self.matrix_bytes) as f64 + self.vector_bytes as f64) / 1e6
    }
}

/// [`Work::u16_bytes`] of JDS (`matrix_bytes` with 32-bit indices), as
/// `sparsetool-gpu`'s `jds-u16` counts them: a base column per 32 sorted
/// rows, a start per pair of the diagonals its main kernel walks (up to
/// `cap`) and the pairs' words replace the 32-bit indices of the entries of
/// the groups that fit ([`crate::rows::Lengths::jds_u16`]); `None` where
/// that saves no bytes (the GPU then refuses the kernel).
fn jds_u16_bytes(
    matrix_bytes: u64,
    rl: &RowLengths,
    counts: &LengthCounts,
    sh: Shape,
    cap: u32,
) -> Option<u64> {
    let (narrow, words) = rl.rows.jds_u16(counts, &rl.spans, rl.ncols, cap)?;
    let groups = sh.nrows.div_ceil(crate::rows::spans::SPAN_GROUP as u64);
    let starts = sh.max_len.min(u64::from(cap)).div_ceil(2) + 1;
    let stored = groups
        .saturating_add(words)
        .saturating_mul(4)
        .saturating_add(starts.saturating_mul(8));
    // as the GPU, none where they would not save bytes
    (stored < narrow.saturating_mul(4))
        .then(|| matrix_bytes.saturating_add(stored) - narrow.saturating_mul(4))
}

/// [`Work::u16_bytes`] of an ELL part of `width` slots over `nrows` rows,
/// `narrow` of them in groups that take offsets (as `sparsetool-gpu`'s
/// `ell-u16` counts them: a base column per 32 rows and `ceil(width / 2)`
/// words a row replace the 32-bit indices of the narrow rows).
fn ell_u16_bytes(matrix_bytes: u64, nrows: u64, width: u64, narrow: u64) -> Option<u64> {
    let groups = nrows.div_ceil(crate::rows::spans::SPAN_GROUP as u64);
    // saturating: a declared shape of 2^62 rows must not overflow
    (narrow > 0 && width > 0).then(|| {
        let words = width.div_ceil(2).saturating_mul(nrows);
        matrix_bytes
            .saturating_add(groups.saturating_add(words).saturating_mul(4))
            .saturating_sub(narrow.saturating_mul(width).saturating_mul(4))
    })
}

/// One layout with the work it implies. Its JSON (in `sparsetool bench
/// --sweep --json`) names the layout three ways, as the stored results do:
/// `format`, `label` (the [`Layout`] text) and `params`
/// ([`Layout::params`]); reading it parses `label`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "CandidateJson", try_from = "CandidateJson")]
pub struct Candidate {
    /// The layout.
    pub layout: Layout,
    /// The work this layout implies.
    pub work: Work,
}

/// The JSON form of a [`Candidate`].
#[derive(Serialize, Deserialize)]
struct CandidateJson {
    format: String,
    label: Layout,
    #[serde(default)]
    params: BTreeMap<String, u64>,
    work: Work,
}

impl From<Candidate> for CandidateJson {
    fn from(c: Candidate) -> Self {
        Self {
            format: c.layout.kind().name().to_string(),
            label: c.layout,
            params: c.layout.params(),
            work: c.work,
        }
    }
}

impl TryFrom<CandidateJson> for Candidate {
    type Error = String;
    fn try_from(j: CandidateJson) -> Result<Self, String> {
        if j.format != j.label.kind().name() {
            return Err(format!("candidate `{}` has format `{}`", j.label, j.format));
        }
        Ok(Self {
            layout: j.label,
            work: j.work,
        })
    }
}

/// A matrix as the time model sees it: shape, row-length statistics and
/// every candidate layout. Serialised into `sparsetool bench --sweep --json`
/// so that calibration needs only the bench results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Features {
    /// Rows.
    pub nrows: u64,
    /// Columns.
    pub ncols: u64,
    /// Stored entries.
    pub nnz: u64,
    /// Bytes per value (4 or 8).
    pub value_bytes: u64,
    /// Row-length statistics.
    pub row_length: LengthStats,
    /// The candidate layouts.
    pub candidates: Vec<Candidate>,
    /// Share of the entries a global sort of the rows by length moves away
    /// from their neighbours ([`crate::rows::Lengths::sort_scatter`]): the `x` locality
    /// JDS and fully sorted SELL give up. 0 in results written before it
    /// was measured.
    #[serde(default)]
    pub sort_scatter: f64,
    /// Entries whose `x` gather falls outside the cache's window of `x`
    /// ([`RowLengths::far_gathers`] for these values: 0 where `x` fits in
    /// [`crate::rows::X_CACHE_BYTES`], and in results written before it was
    /// counted).
    #[serde(default)]
    pub far: u64,
}

/// Slice heights of the SELL sweep besides 32 (each at σ = 32·C).
pub const SWEEP_EXTRA_SLICES: [usize; 2] = [64, 128];

/// ELL candidates are left out beyond this many slots (32-bit indices).
pub const MAX_ELL_SLOTS: u64 = i32::MAX as u64;

impl Features {
    /// Features of a matrix with these row lengths, for values of
    /// `value_bytes` bytes (4 or 8) and 32-bit indices.
    ///
    /// Candidates: CSR, COO, JDS; ELL at the longest row (left out beyond
    /// [`MAX_ELL_SLOTS`]); HYB at the widths of the model, CUSP and Ginkgo
    /// rules and the rounded mean (each at least 1, duplicates dropped);
    /// SELL with C = 32 at every σ of [`sell_sigmas`] and with C in
    /// [`SWEEP_EXTRA_SLICES`] at σ = 32·C (capped at a full sort).
    ///
    /// ```
    /// use sparsetool_analyze::{Features, RowLengths};
    /// use sparsetool_formats::Layout;
    /// let rl = RowLengths { nrows: 4, ncols: 4, rows: vec![3, 2, 1, 3].into(), cols: vec![2, 2, 3, 2].into(), far: Default::default(), spans: Default::default() };
    /// let f = Features::new(&rl, 8);
    /// let labels: Vec<String> = f.candidates.iter().map(|c| c.layout.to_string()).collect();
    /// assert!(labels.contains(&"csr".into()) && labels.contains(&"ell-3".into()));
    /// let ell = f.candidates.iter().find(|c| c.layout == Layout::Ell { width: 3 }).unwrap();
    /// assert_eq!(ell.work.slots, 12);
    /// ```
    #[must_use]
    pub fn new(rl: &RowLengths, value_bytes: u64) -> Self {
        let counts = rl.rows.counts();
        Self::from_parts(
            rl,
            value_bytes,
            &counts,
            LengthStats::from_counts(&counts),
            &[],
        )
    }

    /// [`Features::new`] from what an analysis already computed: the
    /// length table, the statistics and SELL slot counts (any entry of
    /// `sell` whose C and σ match a candidate is used instead of counting
    /// the slots again).
    pub(crate) fn from_parts(
        rl: &RowLengths,
        value_bytes: u64,
        counts: &LengthCounts,
        row_length: LengthStats,
        sell: &[SellCandidate],
    ) -> Self {
        let s = Sizes {
            value: value_bytes,
            index: 4,
        };
        let sh = Shape {
            nrows: rl.nrows as u64,
            ncols: rl.ncols as u64,
            nnz: counts.nnz,
            max_len: counts.max(),
        };
        let vector_bytes = Traffic::new(0, sh.nrows, sh.ncols, s.value).total();
        let base = Work {
            rows: sh.nrows,
            nnz: sh.nnz,
            slots: sh.nnz,
            tail: 0,
            matrix_bytes: 0,
            vector_bytes,
            u16_bytes: None,
        };
        let narrow = rl.spans.narrow_rows(rl.nrows, rl.ncols);
        // SELL's main kernel walks each slice up to the long-row cap, in
        // pairs of slots: the slots of the rows cut at the cap, rounded up
        // to even (the same sort), are the offsets it reads
        let cap = crate::timing::long_row_cap(rl.nrows, sh.nnz as usize, sh.max_len as usize);
        let cap = u32::try_from(cap).unwrap_or(u32::MAX);
        let mut pairs: Option<(Lengths, Lengths)> = None;
        let mut out = Vec::new();
        let mut push = |layout: Layout, work: Work| {
            if out.iter().all(|c: &Candidate| c.layout != layout) {
                out.push(Candidate { layout, work });
            }
        };
        let with_bytes = |matrix_bytes: u64| Work {
            matrix_bytes,
            ..base
        };
        push(Layout::Csr, with_bytes(formats::csr(sh, s).bytes));
        push(Layout::Coo, with_bytes(formats::coo(sh, s).bytes));
        let jds = formats::jds(sh, s).bytes;
        push(
            Layout::Jds,
            Work {
                u16_bytes: jds_u16_bytes(jds, rl, counts, sh, cap),
                ..with_bytes(jds)
            },
        );
        let ell = formats::ell(sh, s);
        if ell.slots <= MAX_ELL_SLOTS && sh.nnz > 0 {
            push(
                Layout::Ell {
                    width: ell.ell_width,
                },
                Work {
                    slots: ell.slots,
                    u16_bytes: ell_u16_bytes(ell.bytes, sh.nrows, ell.ell_width, narrow),
                    ..with_bytes(ell.bytes)
                },
            );
        }
        if sh.nnz > 0 {
            let model = CostModel::default();
            let mean = (sh.nnz as f64 / sh.nrows.max(1) as f64).round() as u64;
            for w in [
                hyb_width_with(counts, &model),
                cusp_hyb_width(counts),
                ginkgo_hyb_width(counts),
                mean,
            ] {
                let w = w.clamp(1, sh.max_len.max(1));
                let h = formats::hyb(sh, counts, w, s);
                if h.ell_slots > MAX_ELL_SLOTS {
                    continue;
                }
                push(
                    Layout::Hyb { width: w },
                    Work {
                        slots: h.ell_slots,
                        tail: h.coo_entries,
                        u16_bytes: ell_u16_bytes(h.bytes, sh.nrows, w, narrow),
                        ..with_bytes(h.bytes)
                    },
                );
            }
        }
        let mut sells: Vec<(usize, usize)> = sell_sigmas(32, rl.nrows)
            .into_iter()
            .map(|sigma| (32, sigma))
            .collect();
        for c in SWEEP_EXTRA_SLICES {
            let full = rl.nrows.div_ceil(c).max(1) * c;
            sells.push((c, (32 * c).min(full)));
        }
        for (c, sigma) in sells {
            let known = sell
                .iter()
                .find(|k| k.slice == c as u64 && k.sigma == sigma as u64)
                .map(|k| k.slots);
            let slots = known.unwrap_or_else(|| rl.rows.sell_slots(c, sigma));
            let r = formats::sell_report(sh, c, sigma, slots, s);
            let fits = sh.nnz > 0 && rl.spans.sell_fits(rl.nrows, rl.ncols, c, sigma);
            let u16_bytes = fits.then(|| {
                let (main, even) = pairs.get_or_insert_with(|| {
                    (
                        rl.rows.map(|l| l.min(cap)),
                        rl.rows.map(|l| l.min(cap).next_multiple_of(2)),
                    )
                });
                let (main, even) = (main.sell_slots(c, sigma), even.sell_slots(c, sigma));
                let nslices = sh.nrows.div_ceil(c as u64);
                r.bytes
                    .saturating_add(even.saturating_mul(2))
                    .saturating_add(nslices.saturating_mul(12))
                    .saturating_sub(main.saturating_mul(4))
            });
            push(
                Layout::Sell {
                    slice: c as u64,
                    sigma: sigma as u64,
                },
                Work {
                    slots: r.slots,
                    u16_bytes,
                    ..with_bytes(r.bytes)
                },
            );
        }
        Self {
            nrows: sh.nrows,
            ncols: sh.ncols,
            nnz: sh.nnz,
            value_bytes,
            row_length,
            candidates: out,
            sort_scatter: rl.rows.sort_scatter(counts),
            far: rl.far_gathers(value_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rl(rows: Vec<u32>) -> RowLengths {
        let ncols = rows.len().max(1);
        RowLengths::of_counts(rows, vec![0; ncols])
    }

    #[test]
    fn labels_are_unique_and_stable() {
        let f = Features::new(&rl((0..5000).map(|i| 1 + (i % 13) as u32).collect()), 4);
        let mut labels: Vec<String> = f.candidates.iter().map(|c| c.layout.to_string()).collect();
        let n = labels.len();
        labels.sort_unstable();
        labels.dedup();
        assert_eq!(labels.len(), n);
        for c in &f.candidates {
            assert!(c.work.slots >= c.work.nnz - c.work.tail, "{}", c.layout);
            let json = serde_json::to_value(c).unwrap();
            assert_eq!(json["label"], c.layout.to_string());
            assert_eq!(json["format"], c.layout.kind().name());
            assert_eq!(serde_json::from_value::<Candidate>(json).unwrap(), *c);
        }
        for want in ["csr", "coo", "jds", "ell-13", "sell-32-1", "sell-64-2048"] {
            assert!(
                labels.iter().any(|l| l == want),
                "{want} missing from {labels:?}"
            );
        }
    }

    #[test]
    fn sixteen_bit_offsets_where_the_columns_fit() {
        // 100 000 rows of 3 entries near the diagonal, but row 40 (group
        // 1) also spans 90 000 columns: ELL at width 4 (row 40) takes
        // offsets in every group but that one; SELL slices of unsorted or
        // windowed rows fit except theirs, so no SELL layout does
        let n = 100_000usize;
        let mut row_ptr = vec![0i64];
        let mut cols: Vec<i64> = Vec::new();
        for r in 0..n as i64 {
            cols.extend([(r - 1).max(0), r, (r + 1).min(n as i64 - 1)]);
            if r == 40 {
                cols.push(90_040);
            }
            row_ptr.push(cols.len() as i64);
        }
        let rl = RowLengths::from_row_ptr(n, n, &row_ptr, &cols).unwrap();
        let f = Features::new(&rl, 4);
        let ell = f
            .candidates
            .iter()
            .find(|c| c.layout == Layout::Ell { width: 4 });
        let w = ell.unwrap().work;
        // sparsetool-gpu's ell_u16: a base per 32 rows and ceil(4 / 2)
        // words a row, instead of the 32-bit indices of 99 968 rows
        let groups = n.div_ceil(32) as u64;
        let want = w.matrix_bytes + 4 * groups + 4 * 2 * n as u64 - 4 * 4 * (n as u64 - 32);
        assert_eq!(w.u16_bytes, Some(want));
        assert!(w.mbytes() < (w.matrix_bytes + w.vector_bytes) as f64 / 1e6);
        for c in &f.candidates {
            match c.layout {
                Layout::Sell { .. } | Layout::Csr | Layout::Coo => {
                    assert_eq!(c.work.u16_bytes, None, "{}", c.layout);
                }
                Layout::Ell { .. } | Layout::Hyb { .. } | Layout::Jds => {
                    assert!(c.work.u16_bytes.is_some(), "{}", c.layout);
                }
            }
        }
        // JDS sorted by length: row 40 first, then rows 0.. in order; the
        // first two groups of 32 sorted rows (rows 0..64) include rows of
        // original group 1 (rows 32..64, with row 40's far column), so the
        // count (bounding a group by its rows' original groups) gives them
        // no offsets, though sparsetool-gpu's jds_u16 gives the second one
        // a base; the others take them (a base per 32 sorted rows, a start
        // per pair of the 4 diagonals and one more, 2 words a row)
        let jds = f.candidates.iter().find(|c| c.layout == Layout::Jds);
        let w = jds.unwrap().work;
        let narrow = 3 * n as u64 + 1 - (4 + 31 * 3 + 32 * 3);
        let want = w.matrix_bytes + 4 * groups + 8 * 3 + 4 * 2 * n as u64 - 4 * narrow;
        assert_eq!(w.u16_bytes, Some(want));
        // without row 40's far entry every SELL layout but a full sort
        // fits (a window of all rows spans 100 000 columns)
        let mut cols2 = cols.clone();
        cols2[3 * 40 + 3] = 40;
        let rl = RowLengths::from_row_ptr(n, n, &row_ptr, &cols2).unwrap();
        let f = Features::new(&rl, 4);
        for c in &f.candidates {
            if let Layout::Sell { sigma, .. } = c.layout {
                assert_eq!(
                    c.work.u16_bytes.is_some(),
                    (sigma as usize) < n,
                    "{}",
                    c.layout
                );
            }
        }
        // the JSON keeps it, and reads results written before it
        let json = serde_json::to_value(&f.candidates[3]).unwrap();
        let back: Candidate = serde_json::from_value(json).unwrap();
        assert_eq!(back, f.candidates[3]);
        let old = r#"{"format":"csr","label":"csr","work":{"matrix_bytes":1,"nnz":1,"rows":1,"slots":1,"tail":0,"vector_bytes":8}}"#;
        let c: Candidate = serde_json::from_str(old).unwrap();
        assert_eq!(c.work.u16_bytes, None);
    }

    #[test]
    fn empty_and_tiny() {
        let f = Features::new(&rl(vec![]), 8);
        assert!(f.candidates.iter().all(|c| c.work.nnz == 0));
        assert!(!f
            .candidates
            .iter()
            .any(|c| matches!(c.layout, Layout::Ell { .. } | Layout::Hyb { .. })));
        let f = Features::new(&rl(vec![0, 0, 3]), 8);
        let hyb: Vec<u64> = f
            .candidates
            .iter()
            .filter_map(|c| match c.layout {
                Layout::Hyb { width } => Some(width),
                _ => None,
            })
            .collect();
        assert!(hyb.iter().all(|&w| (1..=3).contains(&w)), "{hyb:?}");
    }
}
