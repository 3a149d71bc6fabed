//! What every benchmark of sparsetool shares: the typed report of
//! `sparsetool bench --json` (written by the CPU and the GPU bench, read
//! back by `analyze --measure`, the calibration and the sweep parsing),
//! the one median of a list of times, and the one random `x`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sparsetool_formats::{Layout, Scalar};

use crate::candidates::Features;

/// Shape of the benchmarked matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixInfo {
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// Stored entries.
    pub nnz: usize,
    /// Longest row.
    pub max_row_len: usize,
}

/// One timed kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelResult {
    /// Kernel name (`csr-vector`, `sell`, `cusparse-csr-alg2`, `cpu-ell`, ...).
    pub kernel: String,
    /// Format it reads.
    pub format: String,
    /// True for cuSPARSE.
    pub baseline: bool,
    /// Launch and format parameters.
    pub params: Map<String, Value>,
    /// Median time of one SpMV ([`median_min`]), milliseconds.
    pub median_ms: f64,
    /// Fastest time, milliseconds.
    pub min_ms: f64,
    /// GB/s under the minimum-bytes model (see `bytes_model`), at the median.
    pub gbps: f64,
    /// 2 nnz / median time, in GFLOP/s.
    pub gflops: f64,
    /// Bytes counted by the model.
    pub bytes: u64,
    /// `||y - y_ref|| / ||y_ref||`, the worse of the checks before and after timing.
    pub rel_error: f64,
    /// Error within the tolerance.
    pub ok: bool,
    /// The layout timed, in a sweep (`config` in the JSON); absent outside
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Layout>,
    /// Launches per timed interval: the median is of `reps` intervals, each
    /// divided by this (1 on the CPU; absent from the oldest results).
    #[serde(default = "one")]
    pub batch: usize,
}

fn one() -> usize {
    1
}

/// A kernel that was not run, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    /// Kernel name.
    pub kernel: String,
    /// Why.
    pub reason: String,
}

/// The result of a bench; its JSON is `sparsetool bench --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// Device name.
    pub device: String,
    /// Driver version.
    pub driver: String,
    /// Compute capability, e.g. `9.0`.
    pub compute_capability: String,
    /// Value type.
    pub dtype: String,
    /// Copy bandwidth, bytes read + written, GB/s.
    pub copy_gbps: f64,
    /// Median time (ms) of a kernel that only reads the column indices (in
    /// CSR order) and gathers `x` at them: a floor for kernels that walk
    /// the entries in CSR order, set by the column pattern alone (a layout
    /// that reorders rows can gather in a friendlier order and beat it).
    /// `None` on the CPU and for an empty matrix.
    #[serde(default)]
    pub gather_floor_ms: Option<f64>,
    /// The matrix multiplied: with `transpose`, `Aᵀ` (`nrows` is the
    /// column count of the file's matrix).
    pub matrix: MatrixInfo,
    /// `y = Aᵀ x` was timed (`bench --transpose`): every layout holds `Aᵀ`
    /// and the cuSPARSE baselines multiply `A`'s CSR with
    /// `CUSPARSE_OPERATION_TRANSPOSE`. Absent from the JSON when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transpose: bool,
    /// What `gbps` counts.
    pub bytes_model: String,
    /// Tolerance on `rel_error`.
    pub tolerance: f64,
    /// Timed launches per kernel (a kernel slower than 20 ms per launch on
    /// the GPU: 5).
    pub reps: usize,
    /// Wall time of untimed launches before each kernel's timing, ms
    /// (absent from the oldest results).
    #[serde(default)]
    pub warmup_ms: f64,
    /// One entry per kernel.
    pub results: Vec<KernelResult>,
    /// Kernels not run.
    pub skipped: Vec<Skipped>,
}

/// A bench report with the features of the matrix, as `sparsetool bench
/// --sweep --json` writes it (`features` only in a sweep).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// The report.
    #[serde(flatten)]
    pub report: BenchReport,
    /// The matrix's features and candidate layouts (a sweep only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<Features>,
}

/// Median and minimum of a list of times (median of an even count is the mean
/// of the two middle values). `None` for an empty list. Every bench reports
/// this median.
///
/// ```
/// use sparsetool_analyze::bench::median_min;
/// assert_eq!(median_min(&[]), None);
/// assert_eq!(median_min(&[3.0, 1.0, 2.0]), Some((2.0, 1.0)));
/// assert_eq!(median_min(&[4.0, 1.0, 2.0, 3.0]), Some((2.5, 1.0)));
/// ```
#[must_use]
pub fn median_min(times: &[f64]) -> Option<(f64, f64)> {
    if times.is_empty() {
        return None;
    }
    let mut t: Vec<f64> = times.to_vec();
    t.sort_by(f64::total_cmp);
    let n = t.len();
    let median = if n % 2 == 1 {
        t[n / 2]
    } else {
        0.5 * (t[n / 2 - 1] + t[n / 2])
    };
    Some((median, t[0]))
}

/// GFLOP/s of one SpMV (2 flops per stored entry) for a time in milliseconds.
#[must_use]
pub fn gflops(nnz: usize, ms: f64) -> f64 {
    if ms > 0.0 {
        2.0 * nnz as f64 / (ms * 1e-3) / 1e9
    } else {
        0.0
    }
}

/// The splitmix64 generator: small, fast, and the same numbers for a seed
/// on any machine.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next number, uniform in [-1, 1) (53 bits).
    pub fn unit(&mut self) -> f64 {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        2.0 * u - 1.0
    }
}

/// The random `x` of every bench and of `sparsetool spmv --x random`:
/// uniform in [-1, 1) from [`SplitMix64`] (a complex value takes its
/// imaginary part from the next draw), the same for a seed on the CPU and
/// the GPU.
///
/// ```
/// use sparsetool_analyze::bench::random_x;
/// let a: Vec<f64> = random_x(1000, 7);
/// assert_eq!(a, random_x::<f64>(1000, 7));
/// assert!(a.iter().all(|v| (-1.0..1.0).contains(v) && *v != 0.0));
/// assert!(a.iter().any(|v| *v < -0.5) && a.iter().any(|v| *v > 0.5));
/// ```
#[must_use]
pub fn random_x<T: Scalar>(n: usize, seed: u64) -> Vec<T> {
    let mut r = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            let re = r.unit();
            let im = if T::IS_COMPLEX { r.unit() } else { 0.0 };
            T::from_parts(re, im)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(config: Option<Layout>) -> SweepReport {
        SweepReport {
            report: BenchReport {
                device: "d".into(),
                driver: "CUDA driver 13.0".into(),
                compute_capability: "9.0".into(),
                dtype: "f32".into(),
                copy_gbps: 1.0,
                gather_floor_ms: None,
                matrix: MatrixInfo {
                    nrows: 1,
                    ncols: 1,
                    nnz: 1,
                    max_row_len: 1,
                },
                transpose: false,
                bytes_model: "m".into(),
                tolerance: 1e-4,
                reps: 20,
                warmup_ms: 25.0,
                results: vec![KernelResult {
                    kernel: "ell".into(),
                    format: "ell".into(),
                    baseline: false,
                    params: Map::new(),
                    median_ms: 1.0,
                    min_ms: 1.0,
                    gbps: 1.0,
                    gflops: 1.0,
                    bytes: 1,
                    rel_error: 0.0,
                    ok: true,
                    config,
                    batch: 1,
                }],
                skipped: vec![],
            },
            features: None,
        }
    }

    #[test]
    fn report_json_round_trips_with_the_contract_fields() {
        for config in [None, Some(Layout::Ell { width: 3 })] {
            let r = report(config);
            let v = serde_json::to_value(&r).unwrap();
            for k in [
                "device",
                "driver",
                "dtype",
                "copy_gbps",
                "matrix",
                "bytes_model",
                "results",
                "gather_floor_ms",
            ] {
                assert!(v.get(k).is_some(), "{k}");
            }
            assert!(v.get("features").is_none());
            let k0 = &v["results"][0];
            assert_eq!(k0.get("config").is_some(), config.is_some());
            if config.is_some() {
                assert_eq!(k0["config"], "ell-3");
            }
            let back: SweepReport = serde_json::from_value(v).unwrap();
            assert_eq!(back, r);
        }
    }
}
