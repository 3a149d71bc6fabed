//! The analysis report: one serde-serialisable struct (the `analyze
//! --json` contract of `docs/cli.md`, plus extra tables) and its human text.

use std::fmt::Write as _;

use serde::Serialize;
use sparsetool_formats::Layout;

use std::collections::BTreeMap;

use crate::candidates::Features;
use crate::formats::{self, Formats, Shape, Sizes};
use crate::histogram::{histogram, Bin};
use crate::profile::ProfileChoice;
use crate::recommend::{rank_layouts, recommend, Recommendation};
use crate::rows::RowLengths;
use crate::rules::{
    choose_sell, hyb_rules, padding_curve, sell_table, CostModel, CurvePoint, HybRule,
    SellCandidate,
};
use crate::stats::LengthStats;

/// What a report is built with.
#[derive(Debug, Clone, PartialEq)]
pub struct AnalyzeOptions {
    /// Value and index sizes of the accounting (the time model assumes
    /// the value size with 32-bit indices, as the GPU kernels use).
    pub sizes: Sizes,
    /// Structural rules (HYB width rule, unevenness, SELL σ tolerance).
    pub model: CostModel,
    /// The device profile (calibrated time model) that ranks the layouts,
    /// and why it was chosen ([`crate::profile::resolve`]).
    pub profile: ProfileChoice,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        Self {
            sizes: Sizes::default(),
            model: CostModel::default(),
            profile: crate::profile::default_choice(),
        }
    }
}

/// A candidate layout with its predicted time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PredictedLayout {
    /// The layout, e.g. `hyb-6`.
    pub layout: Layout,
    /// Format name.
    pub format: String,
    /// Parameters.
    pub params: BTreeMap<String, u64>,
    /// Predicted microseconds of one SpMV.
    pub predicted_us: f64,
}

/// Everything `analyze` reports. Field names are the `analyze --json`
/// contract (`docs/cli.md`): `nrows`, `ncols`, `nnz`, `empty_rows`,
/// `row_length`, `histogram`, `formats`, `recommendation`; the other
/// fields are extras.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnalyzeReport {
    /// Rows.
    pub nrows: u64,
    /// Columns.
    pub ncols: u64,
    /// Entries (after symmetric expansion).
    pub nnz: u64,
    /// Rows without entries.
    pub empty_rows: u64,
    /// Value bytes used by the accounting.
    pub value_bytes: u64,
    /// Index bytes used by the accounting.
    pub index_bytes: u64,
    /// Row-length statistics.
    pub row_length: LengthStats,
    /// Row-length histogram (bins cover every row once).
    pub histogram: Vec<Bin>,
    /// Column-length statistics.
    pub column_length: LengthStats,
    /// Columns without entries.
    pub empty_cols: u64,
    /// Per-format accounting at the recommended parameters.
    pub formats: Formats,
    /// HYB width by the cost model, CUSP's rule and Ginkgo's.
    pub hyb_rules: Vec<HybRule>,
    /// SELL padding for C in {32, 64, 128} and several σ.
    pub sell_table: Vec<SellCandidate>,
    /// ELL slots and COO entries as a function of the width.
    pub padding_curve: Vec<CurvePoint>,
    /// The structural rules used.
    pub cost_model: CostModel,
    /// Every candidate layout the time model ranked, fastest first
    /// (ELL and unsorted SELL are left out for uneven rows).
    pub layouts: Vec<PredictedLayout>,
    /// The recommended format.
    pub recommendation: Recommendation,
    /// The device profile the predictions are for, and why.
    pub profile: ProfileChoice,
}

impl AnalyzeReport {
    /// Builds the report of a matrix's row lengths.
    ///
    /// ```
    /// use sparsetool_analyze::{AnalyzeOptions, AnalyzeReport, RowLengths};
    /// let rl = RowLengths { nrows: 3, ncols: 3, rows: vec![2, 1, 2].into(), cols: vec![2, 1, 2].into(), far: Default::default(), spans: Default::default() };
    /// let r = AnalyzeReport::new(&rl, &AnalyzeOptions::default());
    /// assert_eq!((r.nnz, r.formats.ell.ell_width), (5, 2));
    /// ```
    #[must_use]
    pub fn new(rl: &RowLengths, opts: &AnalyzeOptions) -> Self {
        let counts = rl.rows.counts();
        let model = &opts.model;
        let s = opts.sizes;
        let row_length = LengthStats::from_counts(&counts);
        let column_length = rl.cols.stats();
        let shape = Shape {
            nrows: rl.nrows as u64,
            ncols: rl.ncols as u64,
            nnz: counts.nnz,
            max_len: counts.max(),
        };
        let rules = hyb_rules(&counts, model);
        let hyb_width = rules.first().map_or(0, |r| r.width);
        let table = sell_table(&rl.rows, counts.nnz);
        let uneven = model.is_uneven(row_length.cv, row_length.mean, row_length.max);
        let (c, sigma) = choose_sell(&table, model, uneven);
        let formats = Formats {
            coo: formats::coo(shape, s),
            csr: formats::csr(shape, s),
            ell: formats::ell(shape, s),
            hyb: formats::hyb(shape, &counts, hyb_width, s),
            jds: formats::jds(shape, s),
            sell: formats::sell_report(shape, c, sigma, rl.rows.sell_slots(c, sigma), s),
        };
        let marks: Vec<u64> = rules.iter().map(|r| r.width).collect();
        let features = Features::from_parts(rl, s.value, &counts, row_length.clone(), &table);
        let ranked = rank_layouts(&features, &opts.profile.model, model);
        let layouts = ranked
            .iter()
            .map(|&(i, t)| {
                let c = &features.candidates[i];
                PredictedLayout {
                    layout: c.layout,
                    format: c.layout.kind().name().to_string(),
                    params: c.layout.params(),
                    predicted_us: t,
                }
            })
            .collect();
        let recommendation =
            recommend(&row_length, &formats, &features, &opts.profile.model, model);
        Self {
            nrows: shape.nrows,
            ncols: shape.ncols,
            nnz: counts.nnz,
            empty_rows: row_length.empty,
            value_bytes: s.value,
            index_bytes: s.index,
            histogram: histogram(&counts),
            padding_curve: padding_curve(&counts, &marks),
            row_length,
            empty_cols: column_length.empty,
            column_length,
            formats,
            hyb_rules: rules,
            sell_table: table,
            cost_model: model.clone(),
            layouts,
            recommendation,
            profile: opts.profile.clone(),
        }
    }

    /// The report as pretty JSON (the `analyze --json` output).
    ///
    /// # Errors
    /// Never in practice (every field serialises); the serde error is
    /// passed on.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }
}

/// Width of a bar, in columns.
const BAR_COLUMNS: usize = 40;

/// A bar of `frac * BAR_COLUMNS` columns drawn with full blocks and an
/// eighth-block tail; at least one eighth for a nonzero count.
fn bar(rows: u64, max: u64) -> String {
    if rows == 0 || max == 0 {
        return String::new();
    }
    let eighths = ((rows as f64 / max as f64) * (BAR_COLUMNS * 8) as f64)
        .round()
        .max(1.0) as usize;
    let mut s = "█".repeat(eighths / 8);
    const PARTS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    s.push_str(PARTS[eighths % 8]);
    s
}

fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

fn stats_line(out: &mut String, label: &str, st: &LengthStats) {
    let _ = writeln!(
        out,
        "{label:<16}min {}  max {}  mean {:.2}  std {:.2}  cv {:.2}",
        st.min, st.max, st.mean, st.std, st.cv
    );
    let _ = writeln!(
        out,
        "{:<16}median {:.1}  p90 {:.1}  p99 {:.1}  skewness {:.2}",
        "", st.median, st.p90, st.p99, st.skewness
    );
}

/// The human report: shape, statistics, the histogram drawn with bars
/// (40 columns for the largest bin, counts at the right), the format
/// table, the HYB rules, the SELL table and the recommendation.
/// Deterministic (no timings), so it can be snapshotted.
#[must_use]
pub fn render_text(r: &AnalyzeReport, name: &str) -> String {
    let mut out = String::new();
    // The header block, its labels in the 16-column field of `stats_line`.
    let _ = writeln!(
        out,
        "matrix          {name}\n\
         shape           {} x {}, {} entries, {} empty rows, {} empty columns\n\
         accounting      {}-byte values, {}-byte indices",
        r.nrows, r.ncols, r.nnz, r.empty_rows, r.empty_cols, r.value_bytes, r.index_bytes
    );
    out.push('\n');
    stats_line(&mut out, "row lengths", &r.row_length);
    stats_line(&mut out, "column lengths", &r.column_length);
    out.push('\n');
    let _ = writeln!(out, "row-length histogram");
    let labels: Vec<String> = r
        .histogram
        .iter()
        .map(|b| {
            if b.lo == b.hi {
                b.lo.to_string()
            } else {
                format!("{}..{}", b.lo, b.hi)
            }
        })
        .collect();
    let lw = labels
        .iter()
        .map(String::len)
        .max()
        .unwrap_or(0)
        .max("length".len());
    let max = r.histogram.iter().map(|b| b.rows).max().unwrap_or(0);
    let cw = r
        .histogram
        .iter()
        .map(|b| b.rows.to_string().len())
        .max()
        .unwrap_or(0)
        .max(4);
    let _ = writeln!(
        out,
        "  {:>lw$}  {:<BAR_COLUMNS$}  {:>cw$}",
        "length", "", "rows"
    );
    for (b, label) in r.histogram.iter().zip(&labels) {
        let bar = bar(b.rows, max);
        let pad = BAR_COLUMNS.saturating_sub(bar.chars().count());
        let _ = writeln!(
            out,
            "  {label:>lw$}  {bar}{}  {:>cw$}",
            " ".repeat(pad),
            b.rows
        );
    }
    out.push('\n');
    let f = &r.formats;
    let _ = writeln!(
        out,
        "{:<8}{:>14}{:>10}{:>16}  parameters",
        "format", "bytes", "padding", "SpMV bytes"
    );
    let mut row = |name: &str, bytes: u64, pad: f64, spmv: u64, params: String| {
        let _ = writeln!(
            out,
            "{name:<8}{bytes:>14}{:>10}{spmv:>16}  {params}",
            pct(pad)
        );
    };
    row(
        "coo",
        f.coo.bytes,
        f.coo.padding_ratio,
        f.coo.spmv_bytes,
        String::new(),
    );
    row(
        "csr",
        f.csr.bytes,
        f.csr.padding_ratio,
        f.csr.spmv_bytes,
        String::new(),
    );
    row(
        "ell",
        f.ell.bytes,
        f.ell.padding_ratio,
        f.ell.spmv_bytes,
        format!("width {}", f.ell.ell_width),
    );
    row(
        "hyb",
        f.hyb.bytes,
        f.hyb.padding_ratio,
        f.hyb.spmv_bytes,
        format!(
            "width {}, {} COO entries",
            f.hyb.hyb_width, f.hyb.coo_entries
        ),
    );
    row(
        "jds",
        f.jds.bytes,
        f.jds.padding_ratio,
        f.jds.spmv_bytes,
        format!("{} diagonals, perm {} B", f.jds.diagonals, f.jds.perm_bytes),
    );
    row(
        "sell",
        f.sell.bytes,
        f.sell.padding_ratio,
        f.sell.spmv_bytes,
        format!(
            "C {}, sigma {}, {} slices",
            f.sell.slice, f.sell.sigma, f.sell.slices
        ),
    );
    out.push('\n');
    let _ = writeln!(
        out,
        "{:<10}{:>8}{:>14}{:>10}{:>14}{:>11}{:>14}",
        "HYB rule", "width", "ELL slots", "padding", "COO entries", "COO share", "model cost"
    );
    for h in &r.hyb_rules {
        let _ = writeln!(
            out,
            "{:<10}{:>8}{:>14}{:>10}{:>14}{:>11}{:>14.0}",
            h.rule,
            h.width,
            h.ell_slots,
            pct(h.padding_ratio),
            h.coo_entries,
            pct(h.coo_share),
            h.cost
        );
    }
    out.push('\n');
    let _ = writeln!(out, "SELL padding (sigma: padding)");
    for c in crate::rules::SELL_SLICES {
        let cells: Vec<String> = r
            .sell_table
            .iter()
            .filter(|s| s.slice == c as u64)
            .map(|s| format!("{}: {}", s.sigma, pct(s.padding_ratio)))
            .collect();
        let _ = writeln!(out, "  C = {c:<4} {}", cells.join("   "));
    }
    out.push('\n');
    let params: Vec<String> = r
        .recommendation
        .params
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let _ = writeln!(
        out,
        "recommendation  {}{}",
        r.recommendation.format.to_uppercase(),
        if params.is_empty() {
            String::new()
        } else {
            format!(" ({})", params.join(", "))
        }
    );
    let _ = writeln!(out, "  {}", r.recommendation.reason);
    let mut per_format: Vec<(&String, &f64)> = r.recommendation.predicted_us.iter().collect();
    per_format.sort_by(|a, b| a.1.total_cmp(b.1));
    if !per_format.is_empty() {
        let cells: Vec<String> = per_format
            .iter()
            .map(|(f, t)| format!("{} {t:.1}", f.to_uppercase()))
            .collect();
        let _ = writeln!(out, "  predicted µs per SpMV: {}", cells.join(", "));
        if let Some([lo, hi]) = r.profile.model.spread {
            let _ = writeln!(
                out,
                "  (80 % of the matrices the profile was fitted on ran {lo:.2}-{hi:.2}x their predictions, \
                 by how their x gathers hit the cache, which moves every layout alike)"
            );
        }
    }
    let _ = writeln!(out, "  {}", r.profile.sentence());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_scale_to_forty_columns() {
        assert_eq!(bar(0, 10), "");
        assert_eq!(bar(10, 10).chars().count(), BAR_COLUMNS);
        assert_eq!(bar(5, 10), "█".repeat(20));
        assert_eq!(bar(1, 1_000_000), "▏");
    }

    #[test]
    fn text_is_deterministic() {
        let rl = RowLengths::of_counts(vec![3, 2, 1, 3], vec![1; 5]);
        let r = AnalyzeReport::new(&rl, &AnalyzeOptions::default());
        assert_eq!(render_text(&r, "C"), render_text(&r, "C"));
        assert!(render_text(&r, "C").contains("recommendation"));
    }
}
