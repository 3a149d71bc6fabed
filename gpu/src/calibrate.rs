//! A device profile for the GPU at hand (`sparsetool calibrate`).
//!
//! [`calibrate`] times every candidate layout of a fixed, short suite of
//! generated matrices ([`suite`]) with every kernel (cuSPARSE included),
//! exactly as `sparsetool bench --sweep` does on the calibration corpus,
//! and fits the time model of `sparsetool_analyze::timing` to those times:
//! a [`TimeModel`] of the same schema as the shipped profiles, carrying the
//! GPU's name, UUID and copy bandwidth. Each matrix of the suite pins down
//! terms of the model: a tiny stencil the fixed (launch) cost, large even
//! matrices the bandwidth, capped power laws the longest-row (`serial`)
//! term and (with a dense-row matrix) HYB's COO tail, empty rows and a
//! tall matrix the per-row cost, a wide matrix the cost of gathering `x`.
//! It also reports the copy bandwidth, the launch latency (the fastest SpMV
//! of the suite) and the x-gather cost per entry.
//!
//! [`profile_for_device`] chooses the profile a prediction uses on this
//! machine ([`sparsetool_analyze::profile::resolve`] with the GPU found
//! here).

use std::time::Instant;

use serde::Serialize;
use sparsetool_analyze::profile::{resolve, ProfileChoice};
use sparsetool_analyze::timing::{fit, Sample, SweepRun};
use sparsetool_analyze::{AnalyzeError, Features, RowLengths, SweepReport, TimeModel};
use sparsetool_fixtures::gen::{generate, GenKind, GenParams};
use sparsetool_formats::{Csr, FormatKind, Scalar};

use crate::bench::{bench, copy_bandwidth, sweep_configs, BenchOptions};
use crate::{GpuContext, GpuError};

/// One matrix of the calibration suite (timed in f32 and in f64).
#[derive(Debug, Clone, PartialEq)]
pub struct SuiteMatrix {
    /// Short name (the corpus's naming: family and entries).
    pub name: &'static str,
    /// Generator.
    pub kind: GenKind,
    /// Generator parameters (seed 1).
    pub params: GenParams,
    /// The terms of the model it pins down.
    pub why: &'static str,
}

/// The fixed suite: sixteen generated matrices of at most ~8M entries,
/// the families and sizes of the calibration corpus (`bench/corpus.tsv`)
/// where each term of the model shows, each timed in f32 and f64. The
/// families the corpus holds out to score profiles (circuit, FEM, the
/// power law with α = 2.5, the real matrices) are not in it, so a quick
/// profile is scored on matrices it never saw.
#[must_use]
pub fn suite() -> Vec<SuiteMatrix> {
    let m = |name, kind, rows, cols: Option<usize>, k, alpha: f64, cap: Option<usize>, why| {
        SuiteMatrix {
            name,
            kind,
            params: GenParams {
                rows,
                cols,
                nnz_per_row: k,
                seed: 1,
                alpha,
                max_row_len: cap,
            },
            why,
        }
    };
    use GenKind::{Banded, DenseRow, EmptyRows, Laplace2d, Laplace3d, Powerlaw, Uniform};
    let no = None;
    vec![
        m("l2d-20k", Laplace2d, 4096, no, 5, 2.0, no, "launch cost"),
        m(
            "l2d-1m",
            Laplace2d,
            200_000,
            no,
            5,
            2.0,
            no,
            "launch cost, bandwidth",
        ),
        m(
            "l2d-8m",
            Laplace2d,
            1_600_000,
            no,
            5,
            2.0,
            no,
            "bandwidth, rows",
        ),
        m(
            "l3d-1m",
            Laplace3d,
            39_304,
            no,
            27,
            2.0,
            no,
            "bandwidth at 27 per row",
        ),
        m("l3d-8m", Laplace3d, 300_000, no, 27, 2.0, no, "bandwidth"),
        m("band-8m", Banded, 800_000, no, 11, 2.0, no, "bandwidth"),
        m("uni-100k", Uniform, 6250, no, 16, 2.0, no, "launch cost"),
        m(
            "uni-8m",
            Uniform,
            500_000,
            no,
            16,
            2.0,
            no,
            "bandwidth, gather",
        ),
        m(
            "wide-8m",
            Uniform,
            200_000,
            Some(2_000_000),
            40,
            2.0,
            no,
            "gather of a long x",
        ),
        m(
            "far-8m",
            Uniform,
            200_000,
            Some(8_000_000),
            40,
            2.0,
            no,
            "gathers beyond the cache (x of 8M values)",
        ),
        m(
            "tall-8m",
            Uniform,
            2_000_000,
            Some(200_000),
            4,
            2.0,
            no,
            "per-row cost",
        ),
        m(
            "empty-1m",
            EmptyRows,
            125_000,
            no,
            16,
            2.0,
            no,
            "per-row cost",
        ),
        m(
            "pl22-100k",
            Powerlaw,
            10_000,
            no,
            10,
            2.2,
            Some(1000),
            "longest row",
        ),
        m(
            "pl22-1m",
            Powerlaw,
            100_000,
            no,
            10,
            2.2,
            Some(1000),
            "longest row",
        ),
        m(
            "pl18-8m",
            Powerlaw,
            800_000,
            no,
            10,
            1.8,
            Some(1000),
            "longest row",
        ),
        m(
            "pl30-8m",
            Powerlaw,
            800_000,
            no,
            10,
            3.0,
            Some(1000),
            "longest row",
        ),
        m(
            "dense-1m",
            DenseRow,
            125_000,
            no,
            8,
            2.0,
            no,
            "HYB tail, one long row",
        ),
    ]
}

/// Options of [`calibrate`].
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrateOptions {
    /// Timed intervals per kernel (each at least 0.1 ms of launches).
    pub reps: usize,
    /// Bytes of each buffer of the copy-bandwidth measurement.
    pub copy_bytes: usize,
    /// The profile's name.
    pub name: String,
}

impl Default for CalibrateOptions {
    fn default() -> Self {
        Self {
            reps: 10,
            copy_bytes: 256 << 20,
            name: "calibrated".into(),
        }
    }
}

/// One timed matrix of the suite.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationRun {
    /// Suite name.
    pub matrix: String,
    /// `f32` or `f64`.
    pub dtype: String,
    /// Entries.
    pub nnz: usize,
    /// Layouts timed.
    pub layouts: usize,
    /// The fastest layout and its kernel.
    pub fastest: String,
    /// Its median time, µs.
    pub fastest_us: f64,
    /// What the fitted profile predicts for that layout, µs (in sample).
    pub predicted_us: f64,
    /// The layout the fitted profile would recommend, and its measured
    /// time over the fastest (in sample: a check of the fit, not a score).
    pub recommended: String,
    /// That slowdown.
    pub slowdown: f64,
    /// The x-gather floor of this matrix, µs (`bench`'s `gather_floor`).
    pub gather_floor_us: Option<f64>,
    /// Seconds spent (generate, convert, time).
    pub seconds: f64,
}

/// What [`calibrate`] measured and fitted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    /// The fitted profile (`analyze --profile`, or matched by UUID).
    pub profile: TimeModel,
    /// Device-to-device copy bandwidth, GB/s (bytes read plus written).
    pub copy_gbps: f64,
    /// Launch latency: the fastest SpMV of the suite, µs.
    pub launch_us: f64,
    /// Cost of gathering `x` per entry (the gather floor over the entries,
    /// median over the suite's matrices of a million entries or more), ns.
    pub gather_ns_per_entry: f64,
    /// The suite, as timed.
    pub runs: Vec<CalibrationRun>,
    /// Measurements the fit used.
    pub samples: usize,
    /// Seconds of the whole calibration.
    pub seconds: f64,
    /// The raw sweep of each matrix, named `<matrix>-<dtype>` (what `bench
    /// --sweep --json` prints): to refit or score profiles later.
    #[serde(skip)]
    pub reports: Vec<(String, SweepReport)>,
}

fn time_one<T: Scalar>(
    ctx: &GpuContext,
    m: &SuiteMatrix,
    opts: &BenchOptions,
    copy_gbps: f64,
) -> Result<(SweepRun, SweepReport, usize, Option<f64>), GpuError> {
    let csr: Csr<T, i32> = generate(m.kind, &m.params)
        .map_err(|e| GpuError::Calibrate(format!("{}: cannot generate: {e}", m.name)))?;
    let rl =
        RowLengths::from_csr(&csr).map_err(|e| GpuError::Calibrate(format!("{}: {e}", m.name)))?;
    let features = Features::new(&rl, std::mem::size_of::<T>() as u64);
    let mut o = opts.clone();
    o.configs = sweep_configs(&features, &FormatKind::ALL);
    let mut report = bench(ctx, &csr, &o)?;
    // the bandwidth measured once for the whole suite, not the small copy
    // each matrix's bench made
    report.copy_gbps = copy_gbps;
    let gather = report.gather_floor_ms.map(|g| g * 1e3);
    let sweep = SweepReport {
        report,
        features: Some(features),
    };
    let run = SweepRun::from_report(sweep.clone())
        .ok_or_else(|| GpuError::Calibrate(format!("{}: not a sweep", m.name)))?;
    Ok((run, sweep, csr.nnz(), gather))
}

/// Times the [`suite`] on `ctx`'s GPU and fits a profile to it; `each` is
/// called after every matrix (progress).
///
/// # Errors
/// A CUDA or cuSPARSE error; a kernel whose result is wrong is left out of
/// the fit (its `ok` is false), not an error.
pub fn calibrate(
    ctx: &GpuContext,
    opts: &CalibrateOptions,
    mut each: impl FnMut(&SuiteMatrix, usize, usize),
) -> Result<Calibration, GpuError> {
    let start = Instant::now();
    let copy_gbps = copy_bandwidth(ctx, opts.copy_bytes, opts.reps)?;
    let bench_opts = BenchOptions {
        reps: opts.reps,
        // measured once above, not per matrix
        copy_bytes: 1 << 20,
        ..BenchOptions::default()
    };
    let matrices = suite();
    let mut timed = Vec::new();
    let mut reports = Vec::new();
    for (i, m) in matrices.iter().enumerate() {
        for double in [false, true] {
            let t0 = Instant::now();
            let (run, sweep, nnz, gather) = if double {
                time_one::<f64>(ctx, m, &bench_opts, copy_gbps)?
            } else {
                time_one::<f32>(ctx, m, &bench_opts, copy_gbps)?
            };
            reports.push((format!("{}-{}", m.name, run.dtype), sweep));
            timed.push((m, run, nnz, gather, t0.elapsed().as_secs_f64()));
        }
        each(m, i + 1, matrices.len());
    }
    let samples: Vec<Vec<Sample>> = timed.iter().map(|t| t.1.samples()).collect();
    let info = ctx.device_info();
    let mut profile = fit(
        &samples,
        &info.name,
        &format!(
            "sparsetool calibrate: {} runs (matrix x dtype) of the quick suite, {} reps",
            timed.len(),
            opts.reps
        ),
    );
    profile.name = Some(opts.name.clone());
    profile.uuid = info.uuid;
    profile.copy_gbps = Some(copy_gbps);
    let runs: Vec<CalibrationRun> = timed
        .iter()
        .map(|(m, run, nnz, gather, secs)| summarize(m, run, *nnz, *gather, *secs, &profile))
        .collect();
    let launch_us = runs
        .iter()
        .map(|r| r.fastest_us)
        .fold(f64::INFINITY, f64::min);
    let mut per_entry: Vec<f64> = runs
        .iter()
        .filter(|r| r.nnz >= 1_000_000)
        .filter_map(|r| r.gather_floor_us.map(|g| g * 1e3 / r.nnz as f64))
        .collect();
    per_entry.sort_by(f64::total_cmp);
    let gather_ns_per_entry = per_entry.get(per_entry.len() / 2).copied().unwrap_or(0.0);
    Ok(Calibration {
        profile,
        copy_gbps,
        launch_us,
        gather_ns_per_entry,
        runs,
        samples: samples.len(),
        seconds: start.elapsed().as_secs_f64(),
        reports,
    })
}

fn summarize(
    m: &SuiteMatrix,
    run: &SweepRun,
    nnz: usize,
    gather_floor_us: Option<f64>,
    seconds: f64,
    profile: &TimeModel,
) -> CalibrationRun {
    let f = &run.features;
    let (fast_layout, (fast_us, fast_kernel)) = run
        .best
        .iter()
        .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
        .map_or((None, (f64::NAN, String::new())), |(l, b)| {
            (Some(*l), b.clone())
        });
    let predict = |l| {
        f.candidates
            .iter()
            .find(|c| c.layout == l)
            .and_then(|c| profile.predict_us(c, f))
    };
    let predicted_us = fast_layout.and_then(predict).unwrap_or(f64::NAN);
    // the recommendation among the layouts timed
    let rec = sparsetool_analyze::recommend::rank_layouts(f, profile, &Default::default())
        .into_iter()
        .map(|(i, _)| f.candidates[i].layout)
        .find(|l| run.best.contains_key(l));
    let (recommended, slowdown) = rec.map_or((String::new(), f64::NAN), |l| {
        (l.to_string(), run.best[&l].0 / fast_us)
    });
    CalibrationRun {
        matrix: m.name.to_string(),
        dtype: run.dtype.clone(),
        nnz,
        layouts: run.best.len(),
        fastest: fast_layout.map_or(String::new(), |l| format!("{l} ({fast_kernel})")),
        fastest_us: fast_us,
        predicted_us,
        recommended,
        slowdown,
        gather_floor_us,
        seconds,
    }
}

/// The profile a prediction uses on this machine: `explicit`
/// (`--profile`), else the one matching GPU `ordinal` (the user's own by
/// UUID, a shipped one by name, else the shipped one closest in copy
/// bandwidth, measured here only then), else, without a GPU, the shipped
/// default.
///
/// # Errors
/// An `explicit` profile that cannot be found or read.
pub fn profile_for_device(
    explicit: Option<&str>,
    ordinal: usize,
) -> Result<ProfileChoice, AnalyzeError> {
    let device = crate::context::probe_device(ordinal);
    let dir = sparsetool_analyze::profile::user_dir();
    resolve(explicit, device.as_ref(), dir.as_deref(), || {
        let ctx = GpuContext::new(ordinal).ok()?;
        copy_bandwidth(&ctx, 256 << 20, 5).ok()
    })
}
