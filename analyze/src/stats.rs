//! Summary statistics of row (or column) lengths, computed with `statrs`.
//!
//! Definitions (the ones the tests recompute by hand):
//! - `mean`, `std` (population standard deviation, divided by `n`: the
//!   rows are the whole population, not a sample), `cv = std / mean`
//!   (0 when the mean is 0), `skewness` = `m3 / m2^1.5` (population
//!   moment coefficient, 0 when all lengths are equal);
//! - `median`: the middle length, or the mean of the two middle ones;
//! - `p90`, `p99`: `statrs`' quantile estimator (R's type 8,
//!   median-unbiased, Hyndman & Fan 1996): with `h = (n + 1/3) p + 1/3`,
//!   the sorted lengths `x[1..=n]` interpolated at `h` (clamped to
//!   `x[1]` and `x[n]`);
//! - `empty`: lengths equal to 0.
//!
//! Every field is 0 for an empty list.

use serde::{Deserialize, Serialize};

/// Summary of a list of lengths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LengthStats {
    /// Shortest.
    pub min: u64,
    /// Longest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// Population standard deviation.
    pub std: f64,
    /// Coefficient of variation, `std / mean`.
    pub cv: f64,
    /// Median.
    pub median: f64,
    /// 90th percentile (type 8).
    pub p90: f64,
    /// 99th percentile (type 8).
    pub p99: f64,
    /// Population skewness `m3 / m2^1.5`.
    pub skewness: f64,
    /// Lengths equal to 0.
    pub empty: u64,
}

impl LengthStats {
    /// Statistics of `lengths` (any order).
    #[must_use]
    pub fn new(lengths: &[u32]) -> Self {
        Self::from_counts(&crate::rows::LengthCounts::new(lengths))
    }

    /// Statistics of the lengths a run-length table describes (memory and
    /// time in the number of distinct lengths).
    #[must_use]
    pub fn from_counts(t: &crate::rows::LengthCounts) -> Self {
        let n = t.nrows;
        if n == 0 {
            return Self {
                min: 0,
                max: 0,
                mean: 0.0,
                std: 0.0,
                cv: 0.0,
                median: 0.0,
                p90: 0.0,
                p99: 0.0,
                skewness: 0.0,
                empty: 0,
            };
        }
        let nf = n as f64;
        let mean = t.nnz as f64 / nf;
        let (mut m2, mut m3) = (0.0, 0.0);
        for &(l, c) in &t.pairs {
            let d = l as f64 - mean;
            m2 += c as f64 * d * d;
            m3 += c as f64 * d * d * d;
        }
        let (m2, m3) = (m2 / nf, m3 / nf);
        let std = m2.sqrt();
        let skewness = if m2 > 0.0 { m3 / m2.powf(1.5) } else { 0.0 };
        // The k-th smallest length (1-based).
        let nth = |k: u64| -> f64 {
            let mut seen = 0;
            for &(l, c) in &t.pairs {
                seen += c;
                if seen >= k {
                    return l as f64;
                }
            }
            t.max() as f64
        };
        let min = t.pairs.first().map_or(0, |p| p.0);
        let max = t.max();
        // R's type 8 (statrs' `quantile`): h = (n + 1/3) p + 1/3, the
        // sorted lengths interpolated at h, clamped to the ends.
        let quantile = |p: f64| -> f64 {
            let h = (nf + 1.0 / 3.0) * p + 1.0 / 3.0;
            let hf = h.floor();
            if hf < 1.0 {
                return min as f64;
            }
            if hf >= nf {
                return max as f64;
            }
            let a = nth(hf as u64);
            let b = nth(hf as u64 + 1);
            a + (h - hf) * (b - a)
        };
        let median = if n % 2 == 1 {
            nth(n / 2 + 1)
        } else {
            (nth(n / 2) + nth(n / 2 + 1)) / 2.0
        };
        let empty = t.pairs.first().filter(|p| p.0 == 0).map_or(0, |p| p.1);
        Self {
            min,
            max,
            mean,
            std,
            cv: if mean > 0.0 { std / mean } else { 0.0 },
            median,
            p90: quantile(0.9),
            p99: quantile(0.99),
            skewness: if skewness.is_finite() { skewness } else { 0.0 },
            empty,
        }
    }
}
