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
use statrs::statistics::{Accumulate, Data, OnlineMoments, OrderStatistics};

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
        if lengths.is_empty() {
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
        let moments = lengths
            .iter()
            .fold(OnlineMoments::<3>::default(), |m, &l| m.push(f64::from(l)));
        let mean = moments.mean().unwrap_or(0.0);
        let std = moments.population_std_dev().unwrap_or(0.0);
        let skewness = moments.skewness().unwrap_or(0.0);
        let mut data = Data::new(lengths.iter().map(|&l| f64::from(l)).collect::<Vec<f64>>());
        let median = data.median();
        let p90 = data.quantile(0.9);
        let p99 = data.quantile(0.99);
        let min = lengths.iter().copied().min().map_or(0, u64::from);
        let max = lengths.iter().copied().max().map_or(0, u64::from);
        let empty = lengths.iter().filter(|&&l| l == 0).count() as u64;
        Self {
            min,
            max,
            mean,
            std,
            cv: if mean > 0.0 { std / mean } else { 0.0 },
            median,
            p90,
            p99,
            skewness: if skewness.is_finite() { skewness } else { 0.0 },
            empty,
        }
    }
}
