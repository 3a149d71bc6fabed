//! The calibrated time model behind the format recommendation.
//!
//! For a candidate layout ([`Candidate`]) of format `f`, the predicted time
//! of one SpMV is a non-negative combination of ten terms ([`TERMS`]):
//!
//! ```text
//! t_f = c0 + c1 * MB + c2 * serial/1e3 + c3 * tail/1e6 + c4 * tail_serial/1e3 + c5 * rows/1e6
//!          + c6 * tail_launch + c7 * scrambled/1e6 + c8 * beyond_cache_MB + c9 * far/1e6   [µs]
//! ```
//!
//! - `MB`: bytes one SpMV moves under the minimum-bytes model (the stored
//!   arrays with their padding, `x` read once, `y` written once), in 1e6 bytes;
//! - `serial`: the longest run of entries one thread walks in a
//!   thread-per-row kernel (the longest row for ELL; for CSR the longest
//!   row shared by the lanes its vector kernel gives a row,
//!   [`csr_vector_lanes`], up to [`CSR_SERIAL_CAP`] for the load-balanced
//!   kernels; the ELL width for HYB, 0 for COO; for windowed SELL the
//!   longest row up to [`long_row_cap`], plus up to as much again in its
//!   tail launch; 0 for JDS and SELL sorted over all rows, whose longest
//!   rows come first, start in the launch's first wave and are overlapped
//!   by the rest): the critical path of a skewed matrix;
//! - `tail`: entries of HYB's COO part; `tail_serial`: the longest row's
//!   overflow into it (atomics on one `y` element serialise);
//! - `rows`: the rows, i.e. the threads or warps launched;
//! - `tail_launch`: 1 for a HYB layout with a non-empty COO part, or a JDS
//!   or SELL layout with rows longer than [`long_row_cap`] (the second
//!   kernel launch), 0 otherwise.
//! - `scrambled`: entries whose rows a global sort by length moves away from
//!   their neighbours (JDS, and SELL sorted over all rows): the stored
//!   entries times [`Features::sort_scatter`], the share of entries whose
//!   warp of 32 sorted rows came from more than 64 original rows. The sort
//!   is stable, so equal rows (a stencil) keep their order and their `x`
//!   locality; rows of interleaved lengths (a FEM mesh: lengths 15 to 43,
//!   cv 0.1) are spread apart, and the `x` gathers of neighbouring threads
//!   scatter. SELL sorted inside windows keeps its rows near their
//!   neighbours and has none. (Until 2026-11 the term was the entries times
//!   the lengths' cv, which called a FEM mesh 90 % unmoved.)
//! - `beyond_cache_MB`: the part of `MB` beyond [`CACHE_MB`], the L2 cache
//!   of the H100 and H200: a matrix that fits stays in L2 across repeated
//!   products (as `bench` times them and as an iterative solver runs them),
//!   and only bytes beyond it pay the DRAM bandwidth.
//! - `far`: the entries whose `x` gather falls outside the window of `x`
//!   the cache keeps ([`Features::far`], [`crate::rows::Far`]): 0 on a
//!   stencil or wherever `x` fits in [`crate::rows::X_CACHE_BYTES`], about
//!   `nnz · (1 − X_CACHE_BYTES / bytes of x)` with random columns. Those
//!   gathers miss L2 in every layout but one: CSR's `csr-panels` kernel
//!   splits the columns into panels of that many bytes of `x` and gathers
//!   each panel's in turn, so the `csr` model has no `far` term (its time
//!   is its best kernel's; see [`model_terms`]), and the others pay it.
//!
//! `c0` is the fixed cost of the format's launches (why small matrices are
//! latency-bound and favour one-kernel formats), `c1` its inverse effective
//! bandwidth. The ten constants of each model are fitted to
//! `sparsetool bench --sweep --json` results by [`fit`] (a relative
//! least-squares fit with non-negative constants and a common scale per
//! measured matrix, for what moves all of its layouts alike; layouts more
//! than [`FIT_MAX_SLOWDOWN`] times slower than a run's fastest are left
//! out; the per-row and far-gather constants, [`SHARED_TERMS`], are one
//! for every model), and
//! stored as JSON in
//! `analyze/calibration/` (see `docs/recommendation.md`).
//!
//! A layout's time is that of its fastest kernel, cuSPARSE included. Most
//! formats have one set of constants for all their kernels (fitted on the
//! best of them); a kernel or family of [`OWN_MODELS`] has constants of its
//! own (cuSPARSE's sliced ELL runs the unsorted SELL layout with C = 32 at
//! its own, lower costs; CSR's row-per-sub-warp kernels launch cheaply but
//! follow the longest row, its load-balanced ones do not), and the
//! prediction of a layout is the smallest of the models that run it
//! ([`model_runs`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use sparsetool_formats::{FormatKind, Layout};

use crate::bench::SweepReport;
use crate::candidates::{Candidate, Features};

/// Number of terms of the model.
pub const NTERMS: usize = 10;

/// Names of the terms, in order.
pub const TERMS: [&str; NTERMS] = [
    "fixed",
    "mbytes",
    "serial_k",
    "tail_m",
    "tail_serial_k",
    "rows_m",
    "tail_launch",
    "scrambled_m",
    "dram_m",
    "far_m",
];

/// The cache size (MB) beyond which a product's bytes pay the DRAM
/// bandwidth (the `dram_m` term): the 50 MB L2 cache of the H100 and the
/// H200. A profile fitted on another GPU keeps this threshold; its
/// constants absorb the difference.
pub const CACHE_MB: f64 = 50.0;

/// The terms of a candidate (see the module docs).
///
/// ```
/// use sparsetool_analyze::{Features, RowLengths};
/// use sparsetool_analyze::timing::terms;
/// use sparsetool_formats::Layout;
/// let rl = RowLengths { nrows: 2, ncols: 2, rows: vec![2, 1].into(), cols: vec![1, 2].into(), far: Default::default(), spans: Default::default() };
/// let f = Features::new(&rl, 8);
/// let ell = f.candidates.iter().find(|c| c.layout == Layout::Ell { width: 2 }).unwrap();
/// let t = terms(ell, &f);
/// assert_eq!(t[0], 1.0);
/// assert_eq!(t[2], 2.0 / 1e3); // the longest row
/// assert_eq!(t[6], 0.0); // one launch
/// ```
#[must_use]
pub fn terms(c: &Candidate, f: &Features) -> [f64; NTERMS] {
    let w = &c.work;
    let max = f.row_length.max;
    // JDS and SELL walk at most `cap` slots per thread, then (rows longer
    // than that) a second launch walks the rest in chunks of `cap`: two
    // launches one after the other, each with `cap` slots on its critical
    // path.
    let cap = long_row_cap(f.nrows as usize, f.nnz as usize, max as usize) as u64;
    let split = matches!(c.layout, Layout::Jds | Layout::Sell { .. }) && max > cap;
    let (serial, tail_serial) = match c.layout {
        Layout::Coo => (0, 0),
        Layout::Hyb { width } => (width, max.saturating_sub(width)),
        Layout::Csr => {
            let lanes = u64::from(csr_vector_lanes(f.nrows as usize, f.nnz as usize));
            (max.min(CSR_SERIAL_CAP).div_ceil(lanes), 0)
        }
        // sorted by length, longest first: the threads with the most slots
        // start in the first wave and the rest of the launch overlaps them
        _ if sorted_over_all_rows(c.layout, f) => (0, 0),
        Layout::Jds | Layout::Sell { .. } if split => (cap + (max - cap).min(cap), 0),
        _ => (max, 0),
    };
    let mb = w.mbytes();
    [
        1.0,
        mb,
        serial as f64 / 1e3,
        w.tail as f64 / 1e6,
        tail_serial as f64 / 1e3,
        w.rows as f64 / 1e6,
        if (matches!(c.layout, Layout::Hyb { .. }) && w.tail > 0) || split {
            1.0
        } else {
            0.0
        },
        scrambled(c.layout, f) / 1e6,
        (mb - CACHE_MB).max(0.0),
        if c.layout == Layout::Csr {
            0.0
        } else {
            f.far as f64 / 1e6
        },
    ]
}

/// Whether `layout` sorts all the rows by length, longest first: JDS, and
/// SELL whose sorting window covers every row.
fn sorted_over_all_rows(layout: Layout, f: &Features) -> bool {
    match layout {
        Layout::Jds => true,
        Layout::Sell { sigma, .. } => sigma >= f.nrows && f.nrows > 1,
        _ => false,
    }
}

/// The `scrambled` term of layout `c` before scaling (see the module docs).
fn scrambled(layout: Layout, f: &Features) -> f64 {
    if sorted_over_all_rows(layout, f) {
        f.nnz as f64 * f.sort_scatter.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The terms of layout `c` as `model` runs it: [`terms`], except that
/// cuSPARSE's sliced ELL has no long-row tail (one thread walks a whole
/// row), and that CSR's row-per-thread and row-per-sub-warp kernels
/// (`csr-vector`) walk the whole longest row, uncapped (the kernels of the
/// `csr` model stop following it, see [`CSR_SERIAL_CAP`]), over the lanes
/// the vector kernel's plan gives a row ([`csr_vector_lanes`]; the scalar
/// kernel and the fixed-width variants, timed beside it, share its term),
/// and pay the `far` gathers that the `csr` model's panel kernel avoids.
///
/// ```
/// use sparsetool_analyze::{Features, RowLengths};
/// use sparsetool_analyze::timing::{model_terms, terms};
/// // one row of 4000 entries among 1000 of 4: mean 8 -> 8 lanes
/// let mut rows = vec![4u32; 1000];
/// rows.push(4000);
/// let rl = RowLengths { nrows: 1001, ncols: 4000, rows: rows.into(), cols: vec![2; 4000].into(), far: Default::default(), spans: Default::default() };
/// let f = Features::new(&rl, 8);
/// let csr = &f.candidates[0];
/// assert_eq!(model_terms("csr-vector", csr, &f)[2], 500.0 / 1e3); // 4000 / 8
/// assert_eq!(terms(csr, &f)[2], 128.0 / 1e3); // 1024 / 8
/// ```
#[must_use]
pub fn model_terms(model: &str, c: &Candidate, f: &Features) -> [f64; NTERMS] {
    let mut t = terms(c, f);
    if model == "cusparse-sell" {
        t[2] = f.row_length.max as f64 / 1e3;
        t[6] = 0.0;
        // 32-bit indices always
        let mb = (c.work.matrix_bytes as f64 + c.work.vector_bytes as f64) / 1e6;
        t[1] = mb;
        t[8] = (mb - CACHE_MB).max(0.0);
    }
    if model == CSR_VECTOR {
        let lanes = u64::from(csr_vector_lanes(f.nrows as usize, f.nnz as usize));
        t[2] = f.row_length.max.div_ceil(lanes) as f64 / 1e3;
        t[9] = f.far as f64 / 1e6;
    }
    t
}

/// Rows (JDS) or slices (SELL) no longer than this many diagonals or slots
/// are walked by one thread each; the kernels need no tail below it, and
/// no thread walks more ([`long_row_cap`]).
pub const LONG_ROW_MIN: usize = 256;

/// The most diagonals (JDS) or slots (SELL) one thread of the GPU kernels
/// walks, at most [`LONG_ROW_MIN`]. Rows up to the smaller of
/// [`LONG_ROW_MIN`] and a budget of one slot per 50 000 entries (at least
/// 16) are walked whole, one thread each, with no tail launch (the large
/// regular matrices run as before). Longer rows stop at 4 mean rows rounded
/// up to a warp (at least 64), or at that budget (at least 8) where it is
/// smaller, and the rest goes to the tail, so that a row of millions of
/// entries is spread over tens of thousands of threads instead of one, and
/// a thread's walk on a small matrix does not outlast the matrix's own
/// stream. H100, BENCHMARKS.md, issue 17: on matrices of 24 000 to 140 000
/// entries with rows of 32 to 46 500, JDS went from 2.8-18.9x its x-gather
/// floor to 2.0-2.6x, SELL from 1.8-10.4x to 1.6-2.5x.
///
/// ```
/// use sparsetool_analyze::timing::long_row_cap;
/// assert_eq!(long_row_cap(100, 500, 5), 5); // short rows: no tail
/// assert_eq!(long_row_cap(10_000, 100_000, 993), 8); // small: cap 8
/// assert_eq!(long_row_cap(1_000_000, 10_000_000, 993), 64);
/// ```
#[must_use]
pub fn long_row_cap(nrows: usize, nnz: usize, longest: usize) -> usize {
    let cap = ((4 * nnz.div_ceil(nrows.max(1))).div_ceil(32).max(2) * 32).min(LONG_ROW_MIN);
    let budget = (nnz / 50_000).max(8).next_multiple_of(8);
    if longest <= LONG_ROW_MIN.min(budget.max(16)) {
        longest.max(1)
    } else {
        cap.min(budget)
    }
}

/// The formats a profile must model: those of the candidate layouts (CSC
/// is CSR's arrays of the transpose and is never a candidate).
pub const MODELLED: [&str; 6] = ["coo", "csr", "ell", "hyb", "jds", "sell"];

/// Kernels, or families of kernels, with constants of their own instead
/// of their format's:
/// - cuSPARSE's sliced ELL runs the unsorted SELL layout with C = 32 at its
///   own, lower costs;
/// - [`CSR_VECTOR`]: CSR's kernels that give each row one thread or one
///   sub-warp (`csr-scalar`, `csr-vector`, `csr-vector-l2` … `-l32`) cost
///   little to launch but follow the longest row; the others, the `csr`
///   model, do not: the load-balanced ones (`csr-merge`, `csr-balanced`,
///   cuSPARSE's ALG1 and ALG2) split the entries evenly and pay for it in
///   their fixed cost, and `csr-binned` gives the long rows a full warp in
///   a launch of their own. One model for all had to average them, and
///   picked CSR over COO on small skewed matrices (a power law of 100 000
///   entries, one dense row), where no CSR kernel is fast.
///
/// (One model per kernel was tried, see `docs/recommendation.md`: fitted on
/// the competitive region only, each kernel's model extrapolates badly
/// where the kernel is slow, and the held-out score fell on both GPUs.)
pub const OWN_MODELS: [&str; 2] = ["cusparse-sell", CSR_VECTOR];

/// The model of CSR's row-per-thread and row-per-sub-warp kernels (see
/// [`OWN_MODELS`]).
pub const CSR_VECTOR: &str = "csr-vector";

/// The model a kernel's time on layout `c` is a sample of: the kernel's
/// own or its family's ([`OWN_MODELS`]), else its layout's format (the best
/// of the format's other kernels).
///
/// ```
/// use sparsetool_analyze::{Features, RowLengths};
/// use sparsetool_analyze::timing::sample_model;
/// let rl = RowLengths { nrows: 2, ncols: 2, rows: vec![2, 1].into(), cols: vec![1, 2].into(), far: Default::default(), spans: Default::default() };
/// let f = Features::new(&rl, 8);
/// let csr = &f.candidates[0];
/// assert_eq!(sample_model("csr-vector-l16", csr), "csr-vector");
/// assert_eq!(sample_model("csr-scalar", csr), "csr-vector");
/// assert_eq!(sample_model("csr-merge", csr), "csr");
/// assert_eq!(sample_model("cusparse-csr-alg1", csr), "csr");
/// assert_eq!(sample_model("cusparse-sell", csr), "cusparse-sell");
/// ```
#[must_use]
pub fn sample_model<'a>(kernel: &'a str, c: &Candidate) -> &'a str {
    let row_per_warp = kernel == "csr-scalar"
        || kernel
            .strip_prefix(CSR_VECTOR)
            .is_some_and(|r| r.is_empty() || r.starts_with('-'));
    if row_per_warp {
        CSR_VECTOR
    } else if OWN_MODELS.contains(&kernel) {
        kernel
    } else {
        c.layout.kind().name()
    }
}

/// The format a model belongs to: a format's own name (the per-format
/// models of earlier profiles), or a kernel of it (`csr-balanced` → `csr`,
/// `cusparse-sell` → `sell`); `None` for an unknown name.
///
/// ```
/// use sparsetool_analyze::timing::model_format;
/// assert_eq!(model_format("csr-balanced"), Some("csr"));
/// assert_eq!(model_format("cusparse-coo"), Some("coo"));
/// assert_eq!(model_format("hyb"), Some("hyb"));
/// assert_eq!(model_format("bogus"), None);
/// ```
#[must_use]
pub fn model_format(model: &str) -> Option<&'static str> {
    let base = model.strip_prefix("cusparse-").unwrap_or(model);
    MODELLED
        .into_iter()
        .find(|f| base == *f || base.strip_prefix(f).is_some_and(|r| r.starts_with('-')))
}

/// Whether `model` runs layout `c`: any model of the layout's format,
/// except that cuSPARSE's sliced ELL runs only SELL with slices of 32 rows
/// and no sorting (σ = 1), as `sparsetool bench` times it.
///
/// ```
/// use sparsetool_analyze::{Features, RowLengths};
/// use sparsetool_analyze::timing::model_runs;
/// use sparsetool_formats::Layout;
/// let rl = RowLengths { nrows: 2, ncols: 2, rows: vec![2, 1].into(), cols: vec![1, 2].into(), far: Default::default(), spans: Default::default() };
/// let f = Features::new(&rl, 8);
/// let sell = |sigma| f.candidates.iter().find(|c| c.layout == Layout::Sell { slice: 32, sigma }).unwrap();
/// assert!(model_runs("cusparse-sell", sell(1)));
/// assert!(!model_runs("cusparse-sell", sell(32)));
/// assert!(model_runs("sell", sell(32)));
/// assert!(!model_runs("csr-scalar", sell(1)));
/// ```
#[must_use]
pub fn model_runs(model: &str, c: &Candidate) -> bool {
    if model == "cusparse-sell" {
        return c.layout
            == Layout::Sell {
                slice: 32,
                sigma: 1,
            };
    }
    model_format(model) == Some(c.layout.kind().name())
}

/// Sub-warp width (lanes per row) of the CSR vector kernel for a mean row
/// length: the power of two at or above the mean, between 2 and 32. A row of
/// 5 entries gets 8 lanes (one load each, 3 idle), a row of 27 gets 32; rows
/// averaging 1 entry still get 2 lanes (the smallest shuffle width that
/// pays). The GPU kernels plan with it, and CSR's `serial` term divides the
/// longest row by it: on a matrix of short rows the longest row is walked
/// by few lanes.
///
/// ```
/// use sparsetool_analyze::timing::csr_vector_lanes;
/// assert_eq!(csr_vector_lanes(100, 500), 8);
/// assert_eq!(csr_vector_lanes(100, 100), 2);
/// assert_eq!(csr_vector_lanes(10, 10_000), 32);
/// ```
#[must_use]
pub fn csr_vector_lanes(nrows: usize, nnz: usize) -> u32 {
    if nrows == 0 {
        return 2;
    }
    let mean = nnz.div_ceil(nrows).max(1);
    (mean.next_power_of_two().min(32) as u32).max(2)
}

/// The `serial` term of the `csr` model (CSR's load-balanced kernels,
/// `csr-merge`, `csr-balanced`, cuSPARSE ALG1 and ALG2, and `csr-binned`)
/// stops growing at this row length: their time does not follow a longer
/// row (the [`CSR_VECTOR`] model of the row-per-sub-warp kernels is not
/// capped). Chosen, when one model stood for every CSR kernel, among 64,
/// 256, 1024, 4096 and no cap by the fit's score on its training runs;
/// with the kernels split, every cap scores the same on the held-out runs
/// of both GPUs, and 64 and 1024 tie for the best left-out score on the
/// H100 (BENCHMARKS.md).
pub const CSR_SERIAL_CAP: u64 = 1024;

/// Fitted constants per format and where they come from: a **device
/// profile** (the shipped ones are in `analyze/calibration/`, see
/// [`crate::profile`]; `sparsetool calibrate` fits one for the GPU at hand).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeModel {
    /// The GPU the timings were taken on.
    pub device: String,
    /// What the fit saw (results folder, matrices held out).
    pub fitted_on: String,
    /// Short name of the profile (`h100`, `h200`; a user's own profile is
    /// named by `sparsetool calibrate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// UUID of the GPU the timings were taken on (`GPU-…`, as `nvidia-smi
    /// -L` prints it): a user's own profile is matched by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Device-to-device copy bandwidth measured on that GPU (GB/s, bytes
    /// read plus written): a GPU without a profile of its own gets the
    /// profile closest in bandwidth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_gbps: Option<f64>,
    /// Constants per model (a format name, or a kernel or family of kernels of [`OWN_MODELS`]),
    /// in the order of [`TERMS`], microseconds. A profile written before
    /// the `far` term (nine constants per model) reads with that constant 0.
    #[serde(deserialize_with = "constants")]
    pub models: BTreeMap<String, [f64; NTERMS]>,
    /// The 10th and 90th percentiles of the fitted runs' scales (see
    /// [`fit`]): the measured times of most matrices of the corpus were
    /// this many times the prediction, by how their `x` gathers hit the
    /// cache. Absent in profiles fitted before 2026-11-24.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<[f64; 2]>,
}

/// The `models` of a profile: [`NTERMS`] constants per model, or one
/// fewer (profiles fitted before the `far` term), padded with 0.
fn constants<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, [f64; NTERMS]>, D::Error> {
    use serde::de::Error;
    BTreeMap::<String, Vec<f64>>::deserialize(d)?
        .into_iter()
        .map(|(m, v)| {
            if v.len() + 1 < NTERMS || v.len() > NTERMS {
                return Err(D::Error::custom(format!(
                    "{m}: {} constants, expected {NTERMS}",
                    v.len()
                )));
            }
            let mut k = [0.0; NTERMS];
            k[..v.len()].copy_from_slice(&v);
            Ok((m, k))
        })
        .collect()
}

/// The default calibration shipped with the crate (H100, see
/// `docs/recommendation.md`); [`crate::profile::SHIPPED`] lists them all.
pub const CALIBRATION_JSON: &str = include_str!("../calibration/h100.json");

impl TimeModel {
    /// The shipped default profile ([`CALIBRATION_JSON`], the H100's),
    /// parsed once: what `analyze` predicts for without a GPU.
    ///
    /// # Panics
    /// Never for the shipped file (a unit test parses it).
    #[must_use]
    pub fn calibrated() -> &'static TimeModel {
        static MODEL: OnceLock<TimeModel> = OnceLock::new();
        MODEL.get_or_init(|| {
            serde_json::from_str(CALIBRATION_JSON).expect("the shipped calibration parses")
        })
    }

    /// The profile's name for people: its `name`, else its device.
    #[must_use]
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.device)
    }

    /// Checks what a profile read from a file must hold: constants for
    /// every format, each finite and non-negative, a positive fixed cost.
    ///
    /// # Errors
    /// A sentence naming the first model at fault.
    pub fn validate(&self) -> Result<(), String> {
        // a kernel or family of its own does not stand for its format:
        // cuSPARSE's sliced ELL runs only some layouts, CSR's
        // row-per-sub-warp kernels are slow on long rows; every format needs
        // a model of its own
        for f in MODELLED {
            if !self
                .models
                .keys()
                .any(|m| model_format(m) == Some(f) && !OWN_MODELS.contains(&m.as_str()))
            {
                return Err(format!("no constants for {f}"));
            }
        }
        for (m, k) in &self.models {
            if model_format(m).is_none() {
                return Err(format!("{m}: not a kernel or format"));
            }
            if let Some(x) = k.iter().find(|x| !x.is_finite() || **x < 0.0) {
                return Err(format!(
                    "{m}: constant {x} is not a finite non-negative number"
                ));
            }
            if k[0] <= 0.0 {
                return Err(format!("{m}: the fixed cost must be positive"));
            }
        }
        Ok(())
    }

    /// Predicted microseconds of one SpMV in this layout: the smallest
    /// prediction of the models that run it ([`model_runs`]); `None` when
    /// none of them has constants.
    #[must_use]
    pub fn predict_us(&self, c: &Candidate, f: &Features) -> Option<f64> {
        self.predict_by_model(c, f)
            .into_iter()
            .map(|(_, t)| t)
            .min_by(f64::total_cmp)
    }

    /// Every model that runs layout `c` with its prediction (µs), by model
    /// name.
    #[must_use]
    pub fn predict_by_model(&self, c: &Candidate, f: &Features) -> Vec<(&str, f64)> {
        self.models
            .iter()
            .filter(|(m, _)| model_runs(m, c))
            .map(|(m, k)| {
                let t = model_terms(m, c, f);
                (m.as_str(), k.iter().zip(t).map(|(a, b)| a * b).sum::<f64>())
            })
            .collect()
    }

    /// Candidates with predictions, fastest first (index into
    /// `f.candidates`, microseconds); `keep` filters candidates.
    #[must_use]
    pub fn rank(&self, f: &Features, keep: impl Fn(&Candidate) -> bool) -> Vec<(usize, f64)> {
        let mut v: Vec<(usize, f64)> = f
            .candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| keep(c))
            .filter_map(|(i, c)| self.predict_us(c, f).map(|t| (i, t)))
            .collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// One measured layout for one model: the model (a format, or a kernel or
/// family of [`OWN_MODELS`], see [`sample_model`]), the layout's terms, and
/// the time (µs) of the model's fastest kernel on it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Model name (see [`TimeModel::models`]).
    pub model: String,
    /// [`terms`] of the layout.
    pub terms: [f64; NTERMS],
    /// Measured time of the model's fastest kernel for this layout,
    /// microseconds.
    pub us: f64,
}

/// Layouts slower than this many times a run's fastest are left out of the
/// fit (see [`SweepRun::samples`]).
pub const FIT_MAX_SLOWDOWN: f64 = 3.0;

/// One `sparsetool bench --sweep --json` result, as calibration reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRun {
    /// The matrix's features (the JSON's `features`).
    pub features: Features,
    /// Best median time (µs) and kernel of each measured layout (results
    /// with `ok: true` only).
    pub best: BTreeMap<Layout, (f64, String)>,
    /// Median time (µs) of every kernel of each measured layout (`ok: true`
    /// only): layout → kernel → µs.
    pub kernels: BTreeMap<Layout, BTreeMap<String, f64>>,
    /// Best cuSPARSE CSR time (µs), ALG1 or ALG2.
    pub cusparse_csr_us: Option<f64>,
    /// Device name.
    pub device: String,
    /// Driver.
    pub driver: String,
    /// Value type (`f32`, `f64`).
    pub dtype: String,
    /// Device-to-device copy bandwidth of the run, GB/s.
    pub copy_gbps: f64,
}

impl SweepRun {
    /// Reads a bench report (its JSON, deserialised as [`SweepReport`]);
    /// `None` without `features` (not a sweep).
    ///
    /// # Errors
    /// The serde error of a malformed report.
    pub fn from_json(text: &str) -> Result<Option<Self>, serde_json::Error> {
        Ok(Self::from_report(serde_json::from_str(text)?))
    }

    /// The run of a sweep report; `None` without features (not a sweep).
    #[must_use]
    pub fn from_report(r: SweepReport) -> Option<Self> {
        let mut features = r.features?;
        // Results written before the candidates counted their 16-bit
        // offsets: the timed `-u16` kernels' bytes are them (the GPU built
        // those layouts, and ran them only where the columns fit).
        for c in features
            .candidates
            .iter_mut()
            .filter(|c| c.work.u16_bytes.is_none())
        {
            c.work.u16_bytes = r
                .report
                .results
                .iter()
                .find(|k| k.config == Some(c.layout) && k.kernel.contains("-u16") && k.bytes > 0)
                .map(|k| k.bytes.saturating_sub(c.work.vector_bytes));
        }
        let mut kernels: BTreeMap<Layout, BTreeMap<String, f64>> = BTreeMap::new();
        let mut cusparse_csr_us: Option<f64> = None;
        for k in r.report.results.iter().filter(|k| k.ok) {
            let Some(layout) = k.config else {
                continue;
            };
            let t = k.median_ms * 1e3;
            if k.kernel.starts_with("cusparse-csr") {
                cusparse_csr_us = Some(cusparse_csr_us.map_or(t, |c| c.min(t)));
            }
            let e = kernels
                .entry(layout)
                .or_default()
                .entry(k.kernel.clone())
                .or_insert(f64::INFINITY);
            *e = e.min(t);
        }
        // each layout's fastest kernel (the first by name on a tie)
        let best: BTreeMap<Layout, (f64, String)> = kernels
            .iter()
            .filter_map(|(layout, ks)| {
                let (k, t) = ks.iter().min_by(|a, b| a.1.total_cmp(b.1))?;
                Some((*layout, (*t, k.clone())))
            })
            .collect();
        Some(Self {
            features,
            best,
            kernels,
            cusparse_csr_us,
            device: r.report.device,
            driver: r.report.driver,
            dtype: r.report.dtype,
            copy_gbps: r.report.copy_gbps,
        })
    }

    /// Replaces this run's results of the formats `newer` measured (their
    /// layouts, every kernel of them, cuSPARSE's included) with `newer`'s,
    /// and keeps those of the other formats: a later run of the same matrix
    /// and value type in some formats only (`bench --formats jds,sell`)
    /// updates them alone. A `newer` that measured every format this run
    /// holds replaces it whole (its device, driver and copy bandwidth too);
    /// otherwise this run keeps its own, and its features (the same
    /// matrix's) but the work of `newer`'s formats' candidates (their
    /// 16-bit offsets counted from `newer`'s `-u16` kernels).
    pub fn overlay(&mut self, newer: SweepRun) {
        let kinds: BTreeSet<FormatKind> = newer.kernels.keys().map(|l| l.kind()).collect();
        if self.kernels.keys().all(|l| kinds.contains(&l.kind())) {
            *self = newer;
            return;
        }
        self.kernels.retain(|l, _| !kinds.contains(&l.kind()));
        self.best.retain(|l, _| !kinds.contains(&l.kind()));
        self.kernels.extend(newer.kernels);
        self.best.extend(newer.best);
        if kinds.contains(&FormatKind::Csr) {
            self.cusparse_csr_us = newer.cusparse_csr_us;
        }
        for c in &mut self.features.candidates {
            if kinds.contains(&c.layout.kind()) {
                if let Some(n) = newer
                    .features
                    .candidates
                    .iter()
                    .find(|n| n.layout == c.layout)
                {
                    c.work = n.work;
                }
            }
        }
    }

    /// The [`Sample`]s of this run: for each measured candidate layout, one
    /// per model timed on it ([`sample_model`]: each model's from the best
    /// of its kernels: `cusparse-sell` and `csr-vector` their own, the
    /// format's the rest),
    /// each kept when within [`FIT_MAX_SLOWDOWN`] of this run's fastest
    /// layout: the fit describes the competitive region, where the choice is
    /// made, and is not pulled by layouts hundreds of times slower (a
    /// thread-per-row kernel on a dense row), which the uneven-rows rule and
    /// the serial term already keep out of reach.
    #[must_use]
    pub fn samples(&self) -> Vec<Sample> {
        let fastest = self
            .best
            .values()
            .map(|b| b.0)
            .fold(f64::INFINITY, f64::min);
        let mut out = Vec::new();
        for c in &self.features.candidates {
            let Some(ks) = self.kernels.get(&c.layout) else {
                continue;
            };
            let mut per_model: BTreeMap<&str, f64> = BTreeMap::new();
            for (k, &t) in ks {
                let e = per_model.entry(sample_model(k, c)).or_insert(f64::INFINITY);
                *e = e.min(t);
            }
            for (m, us) in per_model {
                if us <= FIT_MAX_SLOWDOWN * fastest {
                    out.push(Sample {
                        model: m.to_string(),
                        terms: model_terms(m, c, &self.features),
                        us,
                    });
                }
            }
        }
        out
    }
}

/// The sweep results of several folders ([`load_sweep_dir`] each): a later
/// folder's run of a matrix and value type replaces an earlier one's
/// results of the formats it measured ([`SweepRun::overlay`]: all of them
/// for a whole sweep, only JDS and SELL for a `bench --formats jds,sell`
/// run), so a corpus re-measured in part, or in some formats, is its first
/// folder, then the new runs; runs keep the order of their first appearance.
///
/// # Errors
/// A message naming the folder or file that cannot be read or parsed.
pub fn load_sweep_dirs<P: AsRef<std::path::Path>>(
    dirs: &[P],
) -> Result<Vec<(String, SweepRun)>, String> {
    let mut out: Vec<(String, SweepRun)> = Vec::new();
    for d in dirs {
        for (matrix, run) in load_sweep_dir(d.as_ref())? {
            match out
                .iter_mut()
                .find(|(m, r)| *m == matrix && r.dtype == run.dtype)
            {
                Some(slot) => slot.1.overlay(run),
                None => out.push((matrix, run)),
            }
        }
    }
    Ok(out)
}

/// Every sweep result (`*.json` with `features`, or the same gzipped as
/// `*.json.gz`, as the repository stores older raw results) in `dir`, sorted
/// by file name: `(matrix, run)`, the matrix name being the file name
/// without `.json[.gz]` and its `-<dtype>` suffix (`l2d-1m-f32.json` →
/// `l2d-1m`).
///
/// # Errors
/// A message naming the file that cannot be read, decompressed or parsed.
pub fn load_sweep_dir(dir: &std::path::Path) -> Result<Vec<(String, SweepRun)>, String> {
    use std::io::Read;
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<(std::path::PathBuf, String, bool)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            let (stem, gz) = match name.strip_suffix(".json.gz") {
                Some(s) => (s.to_string(), true),
                None => (name.strip_suffix(".json")?.to_string(), false),
            };
            Some((p, stem, gz))
        })
        .collect();
    files.sort();
    let mut out = Vec::new();
    for (p, stem, gz) in files {
        let at = |e: &dyn std::fmt::Display| format!("{}: {e}", p.display());
        let file = std::fs::File::open(&p).map_err(|e| at(&e))?;
        let mut text = String::new();
        if gz {
            flate2::read::GzDecoder::new(file).read_to_string(&mut text)
        } else {
            std::io::BufReader::new(file).read_to_string(&mut text)
        }
        .map_err(|e| at(&e))?;
        let Some(run) = SweepRun::from_json(&text).map_err(|e| at(&e))? else {
            continue;
        };
        let matrix = stem
            .strip_suffix(&format!("-{}", run.dtype))
            .unwrap_or(&stem)
            .to_string();
        out.push((matrix, run));
    }
    Ok(out)
}

/// How firmly [`fit`] holds each run's scale to 1: the weight of `(s - 1)^2`
/// beside the run's relative residuals (a run has 10 to 40 samples), as much
/// as one sample's. It keeps the scales of a corpus near 1 (the profile's
/// constants describe a typical matrix) without pulling a matrix whose
/// gathers are all cache hits (a stencil, scale about 0.3) or all misses
/// (uniform random columns, about 1.8) into the constants. Compared
/// afterwards by the leave-one-matrix-out score (BENCHMARKS.md): 3 ties on
/// the H100 and loses 11 points on the H200, 10 loses 6 points on the H100.
pub const RUN_SCALE_PRIOR: f64 = 1.0;

/// The terms whose constant [`fit`] shares among all models: `rows_m` and
/// `far_m`.
pub const SHARED_TERMS: [usize; 2] = [5, 9];

/// [`fit`] stops when no run's scale moves by more than this (relative).
const SCALE_TOLERANCE: f64 = 1e-10;

/// [`fit`] gives up refining the scales after this many rounds (it needs a
/// few hundred on the shipped corpora).
const MAX_SCALE_ROUNDS: usize = 20_000;

/// Fits each model's constants to the measured runs (`runs[i]` holds run
/// `i`'s samples: one matrix and value type, every layout measured on it).
///
/// Each run `r` has a scale `s_r`, and the fit minimises
/// `sum over runs and samples of (s_r * pred / t - 1)^2 + RUN_SCALE_PRIOR *
/// sum over runs of (s_r - 1)^2` over non-negative constants and positive
/// scales: relative errors, so small and large matrices weigh alike, and a
/// common factor per matrix for what moves all of its layouts alike and no
/// term measures (how often the `x` gathers hit the cache: a stencil's
/// neighbours share lines, uniform random columns never do). Without it that
/// factor, which changes no ranking, would bend the constants that make the
/// ranking (`docs/recommendation.md`). Predictions are for a scale of 1.
///
/// The constants of [`SHARED_TERMS`] are one for all models: a row costs
/// its `y` element and its pointer whatever the format, a gather beyond the
/// cache a DRAM access; fitted apart, each model's row constant took up
/// whatever its own runs left unexplained, and they differed by up to 1.4x,
/// which no kernel explains.
///
/// Alternates exactly: given the scales, the constants of all models at
/// once are the non-negative least-squares solution of the joint normal
/// equations (Lawson and Hanson's active-set method, started from the
/// previous round's set); given the constants, each scale has a closed form.
#[must_use]
pub fn fit(runs: &[Vec<Sample>], device: &str, fitted_on: &str) -> TimeModel {
    let runs: Vec<Vec<&Sample>> = runs
        .iter()
        .map(|r| {
            r.iter()
                .filter(|s| s.us > 0.0 && s.us.is_finite())
                .collect()
        })
        .collect();
    let names: BTreeSet<&str> = runs.iter().flatten().map(|x| x.model.as_str()).collect();
    let layout = JointLayout::new(&names);
    let mut scale = vec![1.0; runs.len()];
    let mut passive = vec![false; layout.ncols];
    let mut models: BTreeMap<String, [f64; NTERMS]> = BTreeMap::new();
    for _ in 0..MAX_SCALE_ROUNDS {
        let mut grams: BTreeMap<&str, Gram> = BTreeMap::new();
        for (v, s) in runs.iter().zip(&scale) {
            for x in v {
                grams
                    .entry(x.model.as_str())
                    .or_default()
                    .add(&x.terms, x.us / s);
            }
        }
        let (ata, atb) = layout.assemble(&grams);
        let k = nnls(&ata, &atb, &mut passive);
        models = layout.split(&k, &grams);
        let mut moved: f64 = 0.0;
        for (v, s) in runs.iter().zip(scale.iter_mut()) {
            let (mut num, mut den) = (RUN_SCALE_PRIOR, RUN_SCALE_PRIOR);
            for x in v {
                let q = dot(&models[x.model.as_str()], &x.terms) / x.us;
                num += q;
                den += q * q;
            }
            let new = if den > 0.0 { num / den } else { 1.0 };
            moved = moved.max((new / *s - 1.0).abs());
            *s = new;
        }
        if moved <= SCALE_TOLERANCE {
            break;
        }
    }
    let mut fitted: Vec<f64> = runs
        .iter()
        .zip(&scale)
        .filter(|(v, _)| !v.is_empty())
        .map(|(_, s)| *s)
        .collect();
    fitted.sort_by(f64::total_cmp);
    let at = |q: f64| fitted[((fitted.len() - 1) as f64 * q).round() as usize];
    TimeModel {
        device: device.to_string(),
        fitted_on: fitted_on.to_string(),
        name: None,
        uuid: None,
        copy_gbps: None,
        models,
        spread: (!fitted.is_empty()).then(|| [at(0.1), at(0.9)]),
    }
}

/// Where each model's constants sit in the joint unknowns of [`fit`]: one
/// column per [`SHARED_TERMS`] term for all models, then the other terms of
/// each model.
struct JointLayout<'a> {
    /// Per model, the column of each term.
    index: Vec<(&'a str, [usize; NTERMS])>,
    ncols: usize,
}

impl<'a> JointLayout<'a> {
    fn new(names: &BTreeSet<&'a str>) -> Self {
        let mut ncols = SHARED_TERMS.len();
        let index = names
            .iter()
            .map(|&m| {
                let mut cols = [0; NTERMS];
                for (j, c) in cols.iter_mut().enumerate() {
                    *c = match SHARED_TERMS.iter().position(|&t| t == j) {
                        Some(p) => p,
                        None => {
                            ncols += 1;
                            ncols - 1
                        }
                    };
                }
                (m, cols)
            })
            .collect();
        Self { index, ncols }
    }

    /// The joint normal equations (row-major `ata`, `atb`) from each
    /// model's own.
    fn assemble(&self, grams: &BTreeMap<&str, Gram>) -> (Vec<f64>, Vec<f64>) {
        let n = self.ncols;
        let (mut ata, mut atb) = (vec![0.0; n * n], vec![0.0; n]);
        for (m, cols) in &self.index {
            let Some(g) = grams.get(m) else { continue };
            for i in 0..NTERMS {
                atb[cols[i]] += g.atb[i];
                for j in 0..NTERMS {
                    ata[cols[i] * n + cols[j]] += g.ata[i][j];
                }
            }
        }
        (ata, atb)
    }

    /// Each model's constants from the joint solution; a shared term that
    /// none of a model's samples has (the `csr` model's far gathers) is 0
    /// in it.
    fn split(&self, k: &[f64], grams: &BTreeMap<&str, Gram>) -> BTreeMap<String, [f64; NTERMS]> {
        self.index
            .iter()
            .map(|(m, cols)| {
                let mut c = cols.map(|c| k[c]);
                for j in SHARED_TERMS {
                    if grams.get(m).is_none_or(|g| g.ata[j][j] == 0.0) {
                        c[j] = 0.0;
                    }
                }
                (m.to_string(), c)
            })
            .collect()
    }
}

/// Non-negative least squares from the normal equations (`ata` row-major,
/// `n` unknowns): the `x >= 0` minimising `|Ax - b|^2`, by Lawson and
/// Hanson's active-set method (no crate of the workspace's dependencies has
/// one). `passive` holds the unknowns free to be positive: the previous
/// round's solution is the starting guess, the final set comes back.
fn nnls(ata: &[f64], atb: &[f64], passive: &mut [bool]) -> Vec<f64> {
    let n = atb.len();
    let tol = 1e-12 * atb.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    let mut x = vec![0.0; n];
    // the previous set, when its solution is still feasible
    match solve_passive(ata, atb, passive) {
        Some(z) if passive.iter().zip(&z).all(|(&p, &v)| !p || v > 0.0) => x = z,
        _ => passive.iter_mut().for_each(|p| *p = false),
    }
    let mut banned = vec![false; n];
    for _ in 0..4 * n + 16 {
        // the gradient: the unknown that lowers the residual fastest enters
        let grad = |x: &[f64], i: usize| atb[i] - dot(&ata[i * n..(i + 1) * n], x);
        let Some(j) = (0..n)
            .filter(|&i| !passive[i] && !banned[i])
            .map(|i| (i, grad(&x, i)))
            .filter(|&(_, g)| g > tol)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
        else {
            break;
        };
        passive[j] = true;
        loop {
            let Some(z) = solve_passive(ata, atb, passive) else {
                // collinear with the set: leave it out
                passive[j] = false;
                banned[j] = true;
                break;
            };
            if (0..n).all(|i| !passive[i] || z[i] > 0.0) {
                x = z;
                break;
            }
            // step from x towards z until an unknown reaches 0, drop those
            let alpha = (0..n)
                .filter(|&i| passive[i] && z[i] <= 0.0)
                .map(|i| x[i] / (x[i] - z[i]))
                .fold(1.0f64, f64::min);
            for i in 0..n {
                if passive[i] {
                    x[i] += alpha * (z[i] - x[i]);
                    if x[i] <= 1e-15 {
                        x[i] = 0.0;
                        passive[i] = false;
                    }
                }
            }
        }
    }
    x
}

/// The least-squares solution on the `passive` unknowns (zero elsewhere);
/// `None` when singular. An empty set gives all zeros.
fn solve_passive(ata: &[f64], atb: &[f64], passive: &[bool]) -> Option<Vec<f64>> {
    let n = atb.len();
    let idx: Vec<usize> = (0..n).filter(|&i| passive[i]).collect();
    let k = idx.len();
    let mut a: Vec<f64> = idx
        .iter()
        .flat_map(|&i| idx.iter().map(move |&j| ata[i * n + j]))
        .collect();
    let mut b: Vec<f64> = idx.iter().map(|&i| atb[i]).collect();
    let sol = solve(&mut a, &mut b, k)?;
    let mut full = vec![0.0; n];
    for (v, &i) in sol.into_iter().zip(&idx) {
        full[i] = v;
    }
    Some(full)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The normal equations of a relative least-squares problem: rows
/// `terms / t` against 1.
#[derive(Default)]
struct Gram {
    ata: [[f64; NTERMS]; NTERMS],
    atb: [f64; NTERMS],
}

impl Gram {
    fn add(&mut self, terms: &[f64; NTERMS], t: f64) {
        let x = terms.map(|v| v / t);
        for ((row, b), xi) in self.ata.iter_mut().zip(&mut self.atb).zip(x) {
            *b += xi;
            for (a, xj) in row.iter_mut().zip(x) {
                *a += xi * xj;
            }
        }
    }
}

/// Gaussian elimination with partial pivoting; `None` when singular.
fn solve(a: &mut [f64], b: &mut [f64], n: usize) -> Option<Vec<f64>> {
    for col in 0..n {
        let piv =
            (col..n).max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))?;
        if a[piv * n + col].abs() < 1e-12 {
            return None;
        }
        if piv != col {
            for j in 0..n {
                a.swap(piv * n + j, col * n + j);
            }
            b.swap(piv, col);
        }
        for r in col + 1..n {
            let f = a[r * n + col] / a[col * n + col];
            for j in col..n {
                a[r * n + j] -= f * a[col * n + j];
            }
            b[r] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|j| a[r * n + j] * x[j]).sum();
        x[r] = (b[r] - s) / a[r * n + r];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_calibration_parses_and_covers_every_format() {
        let m = TimeModel::calibrated();
        m.validate().unwrap();
        for f in MODELLED {
            let n = m
                .models
                .keys()
                .filter(|k| model_format(k) == Some(f))
                .count();
            assert!(n >= 1, "{f} missing");
        }
    }

    #[test]
    fn fit_recovers_known_constants() {
        // t = 4 + 0.5 MB + 100 serial_k + 2 scrambled_m + 0.3 dram_m
        // + 1.5 far_m, exactly; with a few terms unused.
        let truth = [4.0, 0.5, 100.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.3, 1.5];
        let mut samples = Vec::new();
        for i in 0..40 {
            let t = [
                1.0,
                1.0 + f64::from(i) * 7.0,
                f64::from(i % 5) * 0.01,
                0.0,
                0.0,
                f64::from(i) * 0.1,
                f64::from(i % 2),
                f64::from(i % 3) * 0.5,
                (f64::from(i) * 7.0 - 50.0).max(0.0),
                f64::from((i * 3) % 7),
            ];
            let us: f64 = truth.iter().zip(t).map(|(a, b)| a * b).sum();
            samples.push(Sample {
                model: "ell".into(),
                terms: t,
                us,
            });
        }
        // one run: its scale stays 1, the constants are found exactly
        let m = fit(&[samples.clone()], "test", "synthetic");
        for (a, b) in m.models["ell"].iter().zip(truth) {
            assert!((a - b).abs() < 1e-6, "{:?}", m.models["ell"]);
        }
        // every time of a second matrix twice the first's (its gathers miss
        // the cache): the scales take the factor and the shape stays; the
        // prior puts the constants near 5/3 of the first matrix's (scales
        // 3/5 and 6/5, the closest pair to 1 with a ratio of 2; a little
        // below, where 40 samples' residuals balance the prior)
        let twice: Vec<Sample> = samples
            .iter()
            .map(|s| Sample {
                us: 2.0 * s.us,
                ..s.clone()
            })
            .collect();
        let m = fit(&[samples, twice], "test", "synthetic");
        let k = m.models["ell"];
        let ratio = k[0] / truth[0];
        assert!((1.6..=5.0 / 3.0).contains(&ratio), "{k:?}");
        for (a, b) in k.iter().zip(truth) {
            assert!((a - ratio * b).abs() < 1e-6 * b.max(1.0), "{k:?}");
        }
    }

    #[test]
    fn csr_serial_is_the_longest_row_over_the_lanes() {
        use crate::rows::RowLengths;
        // 63 rows of 1 entry and one of 129: mean 3 -> 4 lanes
        let mut rows = vec![1u32; 63];
        rows.push(129);
        let n = rows.len();
        let rl = RowLengths::of_counts(rows, vec![3; 64]);
        let f = Features::new(&rl, 4);
        assert_eq!(csr_vector_lanes(n, 192), 4);
        let csr = f
            .candidates
            .iter()
            .find(|c| c.layout == Layout::Csr)
            .unwrap();
        assert_eq!(terms(csr, &f)[2], 33.0 / 1e3);
    }

    /// A sweep run of `features` with these `(layout, kernel, ms, ok)`
    /// results, through its JSON as calibration reads it.
    fn sweep_run(features: &Features, results: &[(&str, &str, f64, bool)]) -> SweepRun {
        let res = |&(config, kernel, ms, ok): &(&str, &str, f64, bool)| crate::KernelResult {
            kernel: kernel.into(),
            format: String::new(),
            baseline: false,
            params: serde_json::Map::new(),
            median_ms: ms,
            min_ms: ms,
            gbps: 0.0,
            gflops: 0.0,
            bytes: 0,
            rel_error: 0.0,
            ok,
            config: config.parse().ok(),
            batch: 1,
        };
        let report = SweepReport {
            report: crate::BenchReport {
                device: "test".into(),
                driver: "test".into(),
                compute_capability: "-".into(),
                dtype: "f32".into(),
                copy_gbps: 0.0,
                gather_floor_ms: None,
                matrix: crate::MatrixInfo {
                    nrows: features.nrows as usize,
                    ncols: features.ncols as usize,
                    nnz: features.nnz as usize,
                    max_row_len: features.row_length.max as usize,
                },
                transpose: false,
                bytes_model: String::new(),
                tolerance: 0.0,
                reps: 1,
                warmup_ms: 0.0,
                results: results.iter().map(res).collect(),
                skipped: vec![],
            },
            features: Some(features.clone()),
        };
        let json = serde_json::to_string(&report).unwrap();
        SweepRun::from_json(&json).unwrap().unwrap()
    }

    #[test]
    fn csr_vector_samples_and_predictions_walk_the_whole_row() {
        use crate::rows::RowLengths;
        // 63 rows of 1 entry and one of 3000: mean 48 -> 32 lanes; the csr
        // model caps the row at 1024 (32 per lane), csr-vector does not (94)
        let mut rows = vec![1u32; 63];
        rows.push(3000);
        let f = Features::new(&RowLengths::of_counts(rows, vec![1; 3063]), 4);
        let run = sweep_run(
            &f,
            &[
                ("csr", "csr-vector", 0.005, true),
                ("csr", "cusparse-csr-alg1", 0.006, true),
            ],
        );
        let mut serial: Vec<(String, f64)> = run
            .samples()
            .into_iter()
            .map(|s| (s.model, s.terms[2]))
            .collect();
        serial.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            serial,
            [
                ("csr".to_string(), 0.032),
                ("csr-vector".to_string(), 0.094)
            ]
        );
        let mut m = fit(&[], "test", "test");
        let k = [1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        m.models.insert("csr".into(), k);
        m.models.insert(CSR_VECTOR.into(), k);
        let mut p = m.predict_by_model(&f.candidates[0], &f);
        p.sort_by(|a, b| a.0.cmp(b.0));
        assert_eq!(p, [("csr", 1.032), ("csr-vector", 1.094)]);
    }

    #[test]
    fn a_later_run_in_some_formats_replaces_only_those() {
        use crate::rows::RowLengths;
        let rl = RowLengths::of_counts(vec![2, 2, 2, 2], vec![2, 2, 2, 2]);
        let f = Features::new(&rl, 4);
        let sell32 = Layout::Sell {
            slice: 32,
            sigma: 1,
        };
        let mut run = sweep_run(
            &f,
            &[
                ("csr", "csr-vector", 0.005, true),
                ("csr", "cusparse-csr-alg1", 0.006, true),
                ("jds", "jds", 0.013, true),
                ("sell-32-1", "sell", 0.010, true),
                ("sell-32-1", "cusparse-sell", 0.004, true),
            ],
        );
        // JDS and SELL again (bench --formats jds,sell): cuSPARSE's SELL
        // is re-measured with them, a kernel no longer run is gone
        run.overlay(sweep_run(
            &f,
            &[
                ("jds", "jds", 0.007, true),
                ("sell-32-1", "sell-batched", 0.008, true),
            ],
        ));
        assert_eq!(run.best[&Layout::Csr], (5.0, "csr-vector".to_string()));
        assert_eq!(run.cusparse_csr_us, Some(6.0));
        assert_eq!(run.best[&Layout::Jds], (7.0, "jds".to_string()));
        assert_eq!(run.best[&sell32], (8.0, "sell-batched".to_string()));
        assert_eq!(run.kernels[&sell32].len(), 1);
        // CSR alone replaces CSR and cuSPARSE's CSR, keeps the rest
        run.overlay(sweep_run(&f, &[("csr", "csr-scalar", 0.002, true)]));
        assert_eq!(run.kernels.len(), 3);
        assert_eq!(run.best[&Layout::Csr], (2.0, "csr-scalar".to_string()));
        assert_eq!(run.cusparse_csr_us, None);
        // a run of every format this one holds replaces it whole
        let all = sweep_run(
            &f,
            &[
                ("csr", "csr-vector", 0.003, true),
                ("jds", "jds", 0.009, true),
                ("sell-32-1", "sell", 0.011, true),
            ],
        );
        run.overlay(all.clone());
        assert_eq!(run.best, all.best);
        assert_eq!(run.kernels, all.kernels);
    }

    #[test]
    fn own_kernel_models_get_their_own_samples_and_predictions() {
        use crate::rows::RowLengths;
        let rl = RowLengths::of_counts(vec![2, 2, 2, 2], vec![2, 2, 2, 2]);
        let features = Features::new(&rl, 4);
        let run = sweep_run(
            &features,
            &[
                ("sell-32-1", "sell", 0.010, true),
                ("sell-32-1", "cusparse-sell", 0.004, true),
                ("csr", "csr-vector", 0.005, true),
                ("csr", "csr-vector-l16", 0.0045, true),
                ("csr", "cusparse-csr-alg1", 0.006, true),
                // more than FIT_MAX_SLOWDOWN x the fastest (4 µs): left out
                ("jds", "jds", 0.013, true),
                ("coo", "coo", 0.001, false),
            ],
        );
        let sell32 = Layout::Sell {
            slice: 32,
            sigma: 1,
        };
        assert_eq!(run.best[&sell32], (4.0, "cusparse-sell".to_string()));
        assert_eq!(run.cusparse_csr_us, Some(6.0));
        assert!(!run.best.contains_key(&Layout::Coo));
        let mut got: Vec<(String, f64)> = run
            .samples()
            .into_iter()
            .map(|s| (s.model, (s.us * 1e6).round() / 1e6))
            .collect();
        got.sort_by(|a, b| a.0.cmp(&b.0));
        // CSR: the row-per-sub-warp kernels' best (4.5) and the
        // load-balanced ones' (6.0), each a sample of its own model
        assert_eq!(
            got,
            [
                ("csr".to_string(), 6.0),
                ("csr-vector".to_string(), 4.5),
                ("cusparse-sell".to_string(), 4.0),
                ("sell".to_string(), 10.0)
            ]
        );
        // a layout is predicted by the cheapest model that runs it
        let mut m = fit(&[], "test", "test");
        let sell = features
            .candidates
            .iter()
            .find(|c| c.layout == sell32)
            .unwrap();
        assert_eq!(m.predict_us(sell, &features), None);
        m.models.insert(
            "sell".into(),
            [9.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        );
        assert_eq!(m.predict_us(sell, &features), Some(9.0));
        m.models.insert(
            "cusparse-sell".into(),
            [3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        );
        assert_eq!(m.predict_us(sell, &features), Some(3.0));
        let sorted = features
            .candidates
            .iter()
            .find(|c| matches!(c.layout, Layout::Sell { sigma, .. } if sigma != 1))
            .unwrap();
        assert_eq!(m.predict_us(sorted, &features), Some(9.0));
        // CSR: the `csr` model alone (a profile fitted before the split),
        // then the cheaper of it and `csr-vector`
        let csr = &features.candidates[0];
        assert_eq!(csr.layout, Layout::Csr);
        m.models.insert(
            "csr".into(),
            [7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        );
        assert_eq!(m.predict_us(csr, &features), Some(7.0));
        m.models.insert(
            CSR_VECTOR.into(),
            [5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        );
        assert_eq!(m.predict_us(csr, &features), Some(5.0));
        assert_eq!(m.predict_us(sell, &features), Some(3.0));
    }

    #[test]
    fn shared_terms_have_one_constant_for_every_model() {
        // two models with their own fixed and byte costs and one row and
        // far-gather cost between them, exactly
        let own = [("ell", 2.0, 0.3), ("sell", 3.0, 0.2)];
        let (rows_k, far_k) = (40.0, 12.0);
        let mut samples = Vec::new();
        for i in 0..30 {
            for (m, fixed, mb) in own {
                let mut t = [0.0; NTERMS];
                t[0] = 1.0;
                t[1] = 1.0 + f64::from(i) * 3.0;
                t[5] = f64::from(i % 7) * 0.2;
                t[9] = f64::from((i * 5) % 11) * 0.1;
                let us = fixed + mb * t[1] + rows_k * t[5] + far_k * t[9];
                samples.push(Sample {
                    model: m.into(),
                    terms: t,
                    us,
                });
            }
        }
        let m = fit(&[samples], "test", "synthetic");
        for (name, fixed, mb) in own {
            let k = m.models[name];
            let want = [fixed, mb, 0.0, 0.0, 0.0, rows_k, 0.0, 0.0, 0.0, far_k];
            for (a, b) in k.iter().zip(want) {
                assert!((a - b).abs() < 1e-6, "{name}: {k:?}");
            }
        }
    }

    #[test]
    fn nnls_keeps_constants_non_negative() {
        // |x0 + x1 - 1|^2 + |x0 - x1 + 2|^2 + |x1 - 2|^2: the unconstrained
        // optimum is x0 = -1/2; with x0 = 0 it is x1 = 5/3 (the mean of 1, 2
        // and 2)
        let rows = [[1.0, 1.0, 1.0], [1.0, -1.0, -2.0], [0.0, 1.0, 2.0]];
        let mut ata = vec![0.0; 4];
        let mut atb = vec![0.0; 2];
        for r in rows {
            for i in 0..2 {
                atb[i] += r[i] * r[2];
                for j in 0..2 {
                    ata[i * 2 + j] += r[i] * r[j];
                }
            }
        }
        // from nothing, from an infeasible start, from the answer's own set
        for start in [[false, false], [true, true], [false, true]] {
            let mut passive = start;
            let x = nnls(&ata, &atb, &mut passive);
            assert_eq!(x[0], 0.0);
            assert!((x[1] - 5.0 / 3.0).abs() < 1e-12, "{x:?}");
            assert_eq!(passive, [false, true]);
        }
    }

    #[test]
    fn hyb_tail_launch_term() {
        use crate::rows::RowLengths;
        let rl = RowLengths {
            nrows: 3,
            ncols: 8,
            rows: vec![1, 1, 8].into(),
            cols: vec![2, 2, 1, 1, 1, 1, 1, 1].into(),
            far: Default::default(),
            spans: Default::default(),
        };
        let f = Features::new(&rl, 8);
        let hyb = |c: &&Candidate| matches!(c.layout, Layout::Hyb { .. });
        for c in f.candidates.iter().filter(hyb) {
            let want = if c.work.tail > 0 { 1.0 } else { 0.0 };
            assert_eq!(terms(c, &f)[6], want, "{}", c.layout);
        }
        assert!(f.candidates.iter().filter(hyb).any(|c| c.work.tail > 0));
    }

    #[test]
    fn solver_handles_singular_and_pivoting() {
        let mut a = vec![0.0, 1.0, 1.0, 0.0];
        let mut b = vec![2.0, 3.0];
        assert_eq!(solve(&mut a, &mut b, 2), Some(vec![3.0, 2.0]));
        let mut a = vec![1.0, 2.0, 2.0, 4.0];
        let mut b = vec![1.0, 2.0];
        assert_eq!(solve(&mut a, &mut b, 2), None);
    }
    #[test]
    fn far_gathers_cost_every_layout_but_the_csr_model() {
        use crate::rows::RowLengths;
        // 1000 rows x 8M columns (x of 64 MB in f64): row i's diagonal
        // place is column 8000 i; one entry there, one 4M columns away (far)
        let n = 1000u32;
        let row_ptr: Vec<i32> = (0..=n as i32).map(|i| 2 * i).collect();
        let cols: Vec<i32> = (0..n as i32)
            .flat_map(|i| [8000 * i, (8000 * i + 4_000_000) % 8_000_000])
            .collect();
        let rl = RowLengths::from_row_ptr(n as usize, 8_000_000, &row_ptr, &cols).unwrap();
        let f = Features::new(&rl, 8);
        assert_eq!(f.far, 1000);
        for c in &f.candidates {
            let far = if c.layout == Layout::Csr { 0.0 } else { 1e-3 };
            assert_eq!(terms(c, &f)[9], far, "{}", c.layout);
        }
        let csr = f
            .candidates
            .iter()
            .find(|c| c.layout == Layout::Csr)
            .unwrap();
        assert_eq!(model_terms(CSR_VECTOR, csr, &f)[9], 1e-3);
        assert_eq!(model_terms("csr", csr, &f)[9], 0.0);
        // 1M columns in f32: x fits, nothing is far
        let small: Vec<i32> = (0..n).flat_map(|_| [0, 999_999]).collect();
        let rl = RowLengths::from_row_ptr(n as usize, 1_000_000, &row_ptr, &small).unwrap();
        assert_eq!(Features::new(&rl, 4).far, 0);
    }

    #[test]
    fn profiles_before_the_far_term_read_with_it_zero() {
        let nine =
            r#"{"device": "d", "fitted_on": "f", "models": {"csr": [1, 2, 3, 4, 5, 6, 7, 8, 9]}}"#;
        let m: TimeModel = serde_json::from_str(nine).unwrap();
        assert_eq!(
            m.models["csr"],
            [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 0.0]
        );
        let eight =
            r#"{"device": "d", "fitted_on": "f", "models": {"csr": [1, 2, 3, 4, 5, 6, 7, 8]}}"#;
        let e = serde_json::from_str::<TimeModel>(eight).unwrap_err();
        assert!(
            e.to_string().contains("csr: 8 constants, expected 10"),
            "{e}"
        );
    }
}
