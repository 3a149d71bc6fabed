//! The format recommendation (the rules it builds on, HYB width and SELL
//! C/σ, are in [`crate::rules`] and re-exported here).
//!
//! # Format
//! [`recommend`] picks the candidate layout ([`crate::candidates`]) with the
//! lowest time predicted by the calibrated [`TimeModel`]
//! ([`crate::timing`]); ELL and unsorted SELL are excluded for uneven rows
//! ([`rank_layouts`]). CSR for a matrix without entries.

use std::collections::BTreeMap;

use serde::Serialize;
use sparsetool_formats::Layout;

use crate::candidates::{Candidate, Features};
use crate::formats::Formats;
pub use crate::rules::*;
use crate::stats::LengthStats;
use crate::timing::TimeModel;

/// The recommended layout, why, and what the model predicted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    /// Format name (`csr`, `coo`, `ell`, `hyb`, `jds`, `sell`).
    pub format: String,
    /// Its parameters (`ell_width`, `hyb_width`, `slice` and `sigma`).
    pub params: BTreeMap<String, u64>,
    /// The layout.
    pub layout: Layout,
    /// One sentence citing the numbers behind the choice.
    pub reason: String,
    /// Predicted microseconds of one SpMV per format (its best layout) on
    /// [`Recommendation::device`].
    pub predicted_us: BTreeMap<String, f64>,
    /// The GPU the time model was calibrated on.
    pub device: String,
}

fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

/// A count in k/M/G.
#[must_use]
pub fn short(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2}G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e4 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

/// Whether the recommendation rules `layout` out for this matrix whatever
/// its prediction: ELL and unsorted SELL when the rows are uneven (see
/// [`CostModel::is_uneven`]), since both pad every short row of a slice to
/// its longest.
#[must_use]
pub fn ruled_out(f: &Features, model: &CostModel, layout: Layout) -> bool {
    let st = &f.row_length;
    matches!(layout, Layout::Ell { .. } | Layout::Sell { sigma: 1, .. })
        && model.is_uneven(st.cv, st.mean, st.max)
}

/// Candidate layouts ranked by predicted time, fastest first (indices into
/// `f.candidates`, microseconds), less those [`ruled_out`].
#[must_use]
pub fn rank_layouts(f: &Features, time: &TimeModel, model: &CostModel) -> Vec<(usize, f64)> {
    time.rank(f, |c| !ruled_out(f, model, c.layout))
}

fn layout_words(c: &Candidate) -> String {
    match c.layout {
        Layout::Ell { width } => format!("ELL (width {width})"),
        Layout::Hyb { width } => format!("HYB (ELL width {width}, {} COO entries)", c.work.tail),
        Layout::Sell { slice, sigma } => format!("SELL (C = {slice}, sigma = {sigma})"),
        Layout::Csr | Layout::Coo | Layout::Jds => c.layout.kind().name().to_uppercase(),
    }
}

fn bytes_words(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.1} kB", b / 1e3)
    }
}

fn us(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0} µs")
    } else {
        format!("{x:.1} µs")
    }
}

/// The recommendation: the layout with the lowest predicted time
/// ([`rank_layouts`] under `time`); CSR for a matrix without entries.
#[must_use]
pub fn recommend(
    stats: &LengthStats,
    f: &Formats,
    features: &Features,
    time: &TimeModel,
    model: &CostModel,
) -> Recommendation {
    let ranked = rank_layouts(features, time, model);
    let mut predicted_us = BTreeMap::new();
    for &(i, t) in &ranked {
        predicted_us
            .entry(features.candidates[i].layout.kind().name().to_string())
            .or_insert(t);
    }
    let device = time.device.clone();
    let Some(&(best, t_best)) = ranked.first().filter(|_| features.nnz > 0) else {
        return Recommendation {
            format: "csr".into(),
            params: BTreeMap::new(),
            layout: Layout::Csr,
            reason: "CSR: the matrix has no entries, so there is nothing to lay out.".into(),
            predicted_us,
            device,
        };
    };
    let c = &features.candidates[best];
    let uneven = model.is_uneven(stats.cv, stats.mean, stats.max);
    let shape = if uneven {
        format!(
            "rows are uneven (cv {:.2}, longest {} vs median {})",
            stats.cv, stats.max, stats.median
        )
    } else {
        format!(
            "rows are even (cv {:.2}, lengths {}..{})",
            stats.cv, stats.min, stats.max
        )
    };
    let runner = ranked
        .iter()
        .find(|&&(i, _)| features.candidates[i].layout.kind() != c.layout.kind())
        .map(|&(i, t)| {
            format!(
                "; next {} at {}, {:.2}x",
                layout_words(&features.candidates[i]),
                us(t),
                t / t_best.max(1e-9)
            )
        })
        .unwrap_or_default();
    let reason = format!(
        "{}: predicted {} per SpMV on {} (profile {}; {} moved{runner}); {shape}, ELL would pad {}.",
        layout_words(c),
        us(t_best),
        device,
        time.label(),
        bytes_words((c.work.mbytes() * 1e6) as u64),
        pct(f.ell.padding_ratio),
    );
    Recommendation {
        format: c.layout.kind().name().to_string(),
        params: c.layout.params(),
        layout: c.layout,
        reason,
        predicted_us,
        device,
    }
}
