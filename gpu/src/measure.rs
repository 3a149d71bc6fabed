//! `analyze --measure`: time the best-predicted layout of each of the top
//! formats of an [`AnalyzeReport`] and set the measurements beside the
//! predictions.

use serde::Serialize;
use sparsetool_analyze::{AnalyzeReport, PredictedLayout};
use sparsetool_formats::{Csr, Index, Layout, Scalar};

use crate::{bench, BenchConfig, BenchOptions, GpuContext, GpuError};

/// One timed layout next to its prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    /// The layout.
    pub layout: Layout,
    /// Its format (`csr`, `sell`, ...).
    pub format: String,
    /// The time model's prediction, µs per SpMV.
    pub predicted_us: f64,
    /// The median of the fastest kernel that runs this layout, µs.
    pub measured_us: f64,
    /// That kernel.
    pub kernel: String,
    /// Measured time over the fastest measured layout's.
    pub vs_fastest: f64,
}

/// What `analyze --measure` found (the `measure` object of its JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasureOutcome {
    /// The GPU.
    pub device: String,
    /// Value type timed (`f32`, `f64`).
    pub dtype: String,
    /// The timed layouts, in the report's ranking order.
    pub measured: Vec<Measured>,
    /// The fastest measured layout.
    pub measured_winner: Option<Layout>,
    /// The report's recommendation.
    pub predicted_winner: Layout,
    /// Measured time of the predicted winner over the measured winner's
    /// (NaN if the recommendation could not be timed).
    pub prediction_slowdown: f64,
}

/// The best-predicted layout of each of the first `top` formats (at least
/// one) of `report`'s ranking.
#[must_use]
pub fn top_layouts(report: &AnalyzeReport, top: usize) -> Vec<&PredictedLayout> {
    let mut out: Vec<&PredictedLayout> = Vec::new();
    for l in &report.layouts {
        if out.len() >= top.max(1) {
            break;
        }
        if out.iter().all(|o| o.format != l.format) {
            out.push(l);
        }
    }
    out
}

/// Times the [`top_layouts`] of `report` for the matrix `csr` (`reps` timed
/// intervals per kernel) and compares them with the predictions.
///
/// # Errors
/// A GPU error, or [`GpuError::Unsupported`] when none of the layouts could
/// be timed (each one's reason is in the message).
pub fn measure<T: Scalar, I: Index>(
    ctx: &GpuContext,
    csr: &Csr<T, I>,
    report: &AnalyzeReport,
    top: usize,
    reps: usize,
) -> Result<MeasureOutcome, GpuError> {
    let picked = top_layouts(report, top);
    let opts = BenchOptions {
        reps,
        configs: picked.iter().map(|l| BenchConfig::from(l.layout)).collect(),
        ..BenchOptions::default()
    };
    let run = bench(ctx, csr, &opts)?;
    let mut measured: Vec<Measured> = picked
        .iter()
        .filter_map(|l| {
            let k = run
                .results
                .iter()
                .filter(|k| k.ok && k.config == Some(l.layout))
                .min_by(|x, y| x.median_ms.total_cmp(&y.median_ms))?;
            Some(Measured {
                layout: l.layout,
                format: l.format.clone(),
                predicted_us: l.predicted_us,
                measured_us: k.median_ms * 1e3,
                kernel: k.kernel.clone(),
                vs_fastest: 0.0,
            })
        })
        .collect();
    let Some(fastest) = measured
        .iter()
        .min_by(|x, y| x.measured_us.total_cmp(&y.measured_us))
        .cloned()
    else {
        let reasons: Vec<String> = run
            .skipped
            .iter()
            .map(|s| format!("{}: {}", s.kernel, s.reason))
            .collect();
        return Err(GpuError::Unsupported {
            format: format!("no layout could be timed ({})", reasons.join("; ")),
            dtype: T::NAME,
        });
    };
    for m in &mut measured {
        m.vs_fastest = m.measured_us / fastest.measured_us;
    }
    let predicted = report.recommendation.layout;
    let prediction_slowdown = measured
        .iter()
        .find(|m| m.layout == predicted)
        .map_or(f64::NAN, |m| m.vs_fastest);
    Ok(MeasureOutcome {
        device: run.device.clone(),
        dtype: run.dtype.clone(),
        measured,
        measured_winner: Some(fastest.layout),
        predicted_winner: predicted,
        prediction_slowdown,
    })
}

impl MeasureOutcome {
    /// The table `analyze --measure` prints after the report.
    #[must_use]
    pub fn render(&self) -> String {
        let mut s = format!(
            "\nmeasured on {} ({}, median of the fastest kernel per layout)\n{:<18} {:>12} {:>12} {:>10}  kernel\n",
            self.device, self.dtype, "layout", "predicted µs", "measured µs", "x fastest"
        );
        for m in &self.measured {
            s.push_str(&format!(
                "{:<18} {:>12.1} {:>12.1} {:>10.2}  {}\n",
                m.layout, m.predicted_us, m.measured_us, m.vs_fastest, m.kernel
            ));
        }
        s.push_str(&format!(
            "measured winner {}; the recommendation {} is {:.2}x its time\n",
            self.measured_winner
                .map(|l| l.to_string())
                .unwrap_or_default(),
            self.predicted_winner,
            self.prediction_slowdown
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparsetool_analyze::{AnalyzeOptions, RowLengths};

    #[test]
    fn top_layouts_takes_one_per_format_in_rank_order() {
        // A power-law-ish matrix: several formats ranked, with repeats.
        let lens: Vec<u32> = (0..5000u32).map(|i| 1 + (i % 97) * (i % 3)).collect();
        let rl = RowLengths {
            nrows: lens.len(),
            ncols: lens.len(),
            rows: lens.into(),
            cols: vec![5; 5000].into(),
            far: Default::default(),
            spans: Default::default(),
        };
        let report = AnalyzeReport::new(&rl, &AnalyzeOptions::default());
        let top = top_layouts(&report, 3);
        assert_eq!(top.len(), 3.min(report.layouts.len()));
        assert_eq!(top[0].layout, report.layouts[0].layout);
        let mut formats: Vec<&str> = top.iter().map(|l| l.format.as_str()).collect();
        formats.dedup();
        assert_eq!(
            formats.len(),
            top.len(),
            "one layout per format: {formats:?}"
        );
        for l in &top {
            let first = report
                .layouts
                .iter()
                .find(|x| x.format == l.format)
                .expect("in the ranking");
            assert_eq!(first.layout, l.layout, "best-ranked layout of {}", l.format);
        }
        assert_eq!(top_layouts(&report, 0).len(), 1);
    }
}
