//! The calibrated time model behind the format recommendation.
//!
//! For a candidate layout ([`Candidate`]) of format `f`, the predicted time
//! of one SpMV is a non-negative combination of six terms ([`TERMS`]):
//!
//! ```text
//! t_f = c0 + c1 * MB + c2 * serial/1e3 + c3 * tail/1e6 + c4 * tail_serial/1e3 + c5 * rows/1e6   [µs]
//! ```
//!
//! - `MB`: bytes one SpMV moves under the minimum-bytes model (the stored
//!   arrays with their padding, `x` read once, `y` written once), in 1e6 bytes;
//! - `serial`: the longest run of entries one thread walks in a
//!   thread-per-row kernel (the longest row for ELL, SELL and JDS, the
//!   longest row up to [`CSR_SERIAL_CAP`] for CSR, the ELL width for HYB, 0
//!   for COO): the critical path of a skewed matrix;
//! - `tail`: entries of HYB's COO part; `tail_serial`: the longest row's
//!   overflow into it (atomics on one `y` element serialise);
//! - `rows`: the rows, i.e. the threads or warps launched.
//!
//! `c0` is the fixed cost of the format's launches (why small matrices are
//! latency-bound and favour one-kernel formats), `c1` its inverse effective
//! bandwidth. The six constants of each format are fitted to
//! `sparsetool bench --sweep --json` results by [`fit`] (a relative
//! least-squares fit with non-negative constants: every subset of terms is
//! solved and the best non-negative solution kept; layouts more than
//! [`FIT_MAX_SLOWDOWN`] times slower than a run's fastest are left out), and
//! stored as JSON in
//! `analyze/calibration/` (see `docs/recommendation.md`). The time of a
//! format is that of its fastest kernel, cuSPARSE included, as measured.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::candidates::{Candidate, Features};

/// Number of terms of the model.
pub const NTERMS: usize = 6;

/// Names of the terms, in order.
pub const TERMS: [&str; NTERMS] = [
    "fixed",
    "mbytes",
    "serial_k",
    "tail_m",
    "tail_serial_k",
    "rows_m",
];

/// The terms of a candidate (see the module docs).
///
/// ```
/// use sparsetool_analyze::{Features, RowLengths};
/// use sparsetool_analyze::timing::terms;
/// let rl = RowLengths { nrows: 2, ncols: 2, rows: vec![2, 1], cols: vec![1, 2] };
/// let f = Features::new(&rl, 8);
/// let ell = f.candidates.iter().find(|c| c.format == "ell").unwrap();
/// let t = terms(ell, &f);
/// assert_eq!(t[0], 1.0);
/// assert_eq!(t[2], 2.0 / 1e3); // the longest row
/// ```
#[must_use]
pub fn terms(c: &Candidate, f: &Features) -> [f64; NTERMS] {
    let w = &c.work;
    let max = f.row_length.max;
    let width = c.params.get("hyb_width").copied().unwrap_or(0);
    let serial = match c.format.as_str() {
        "coo" => 0,
        "hyb" => width,
        "csr" => max.min(CSR_SERIAL_CAP),
        _ => max,
    };
    let tail_serial = if c.format == "hyb" {
        max.saturating_sub(width)
    } else {
        0
    };
    [
        1.0,
        (w.matrix_bytes + w.vector_bytes) as f64 / 1e6,
        serial as f64 / 1e3,
        w.tail as f64 / 1e6,
        tail_serial as f64 / 1e3,
        w.rows as f64 / 1e6,
    ]
}

/// The CSR `serial` term stops growing at this row length: CSR's fastest
/// kernel on a longer row is a load-balanced one (`csr-balanced`, cuSPARSE
/// ALG1), whose time does not follow the longest row, while below it the
/// sub-warp-per-row kernels are slowed by it. Chosen among 64, 256, 1024,
/// 4096 and no cap by the fit's score on its training runs
/// (docs/recommendation.md).
pub const CSR_SERIAL_CAP: u64 = 1024;

/// Fitted constants per format and where they come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeModel {
    /// The GPU the timings were taken on.
    pub device: String,
    /// What the fit saw (results folder, matrices held out).
    pub fitted_on: String,
    /// Constants per format name, in the order of [`TERMS`], microseconds.
    pub formats: BTreeMap<String, [f64; NTERMS]>,
}

/// The calibration shipped with the crate (H100, see `docs/recommendation.md`).
pub const CALIBRATION_JSON: &str = include_str!("../calibration/h100.json");

impl TimeModel {
    /// The shipped calibration ([`CALIBRATION_JSON`]), parsed once.
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

    /// Predicted microseconds of one SpMV in this layout, `None` for a
    /// format the model has no constants for.
    #[must_use]
    pub fn predict_us(&self, c: &Candidate, f: &Features) -> Option<f64> {
        let k = self.formats.get(&c.format)?;
        let t = terms(c, f);
        Some(k.iter().zip(t).map(|(a, b)| a * b).sum())
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

/// One measured layout: its format, its terms, its best time (µs).
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Format name.
    pub format: String,
    /// [`terms`] of the layout.
    pub terms: [f64; NTERMS],
    /// Measured time of the fastest kernel for this layout, microseconds.
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
    pub best: BTreeMap<String, (f64, String)>,
    /// Best cuSPARSE CSR time (µs), ALG1 or ALG2.
    pub cusparse_csr_us: Option<f64>,
    /// Device name.
    pub device: String,
    /// Driver.
    pub driver: String,
    /// Value type (`f32`, `f64`).
    pub dtype: String,
}

impl SweepRun {
    /// Reads a bench report; `None` without `features` (not a sweep).
    ///
    /// # Errors
    /// The serde error of a malformed `features` object.
    pub fn from_json(v: &serde_json::Value) -> Result<Option<Self>, serde_json::Error> {
        let Some(fv) = v.get("features") else {
            return Ok(None);
        };
        let features: Features = serde_json::from_value(fv.clone())?;
        let mut best: BTreeMap<String, (f64, String)> = BTreeMap::new();
        let mut cusparse_csr_us: Option<f64> = None;
        for r in v["results"].as_array().into_iter().flatten() {
            if r["ok"] != serde_json::Value::Bool(true) {
                continue;
            }
            let (Some(cfg), Some(ms), Some(kernel)) = (
                r["config"].as_str(),
                r["median_ms"].as_f64(),
                r["kernel"].as_str(),
            ) else {
                continue;
            };
            let t = ms * 1e3;
            if kernel.starts_with("cusparse-csr") {
                cusparse_csr_us = Some(cusparse_csr_us.map_or(t, |c| c.min(t)));
            }
            let e = best
                .entry(cfg.to_string())
                .or_insert((f64::INFINITY, String::new()));
            if t < e.0 {
                *e = (t, kernel.to_string());
            }
        }
        let text = |k: &str| v[k].as_str().unwrap_or("?").to_string();
        Ok(Some(Self {
            features,
            best,
            cusparse_csr_us,
            device: text("device"),
            driver: text("driver"),
            dtype: text("dtype"),
        }))
    }

    /// One [`Sample`] per measured candidate layout within
    /// [`FIT_MAX_SLOWDOWN`] of this run's fastest layout: the fit describes
    /// the competitive region, where the choice is made, and is not pulled
    /// by layouts hundreds of times slower (a thread-per-row kernel on a
    /// dense row), which the uneven-rows rule and the serial term already
    /// keep out of reach.
    #[must_use]
    pub fn samples(&self) -> Vec<Sample> {
        let fastest = self
            .best
            .values()
            .map(|b| b.0)
            .fold(f64::INFINITY, f64::min);
        self.features
            .candidates
            .iter()
            .filter_map(|c| {
                let (t, _) = self.best.get(&c.label)?;
                if *t > FIT_MAX_SLOWDOWN * fastest {
                    return None;
                }
                Some(Sample {
                    format: c.format.clone(),
                    terms: terms(c, &self.features),
                    us: *t,
                })
            })
            .collect()
    }
}

/// Every sweep result (`*.json` with `features`) in `dir`, sorted by file
/// name: `(matrix, run)`, the matrix name being the file stem without its
/// `-<dtype>` suffix (`l2d-1m-f32.json` → `l2d-1m`).
///
/// # Errors
/// A message naming the file that cannot be read or parsed.
pub fn load_sweep_dir(dir: &std::path::Path) -> Result<Vec<(String, SweepRun)>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        let Some(run) = SweepRun::from_json(&v).map_err(|e| format!("{}: {e}", p.display()))?
        else {
            continue;
        };
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let matrix = stem
            .strip_suffix(&format!("-{}", run.dtype))
            .unwrap_or(&stem)
            .to_string();
        out.push((matrix, run));
    }
    Ok(out)
}

/// Fits each format's constants to the samples: minimises
/// `sum(((pred - t) / t)^2)` (relative error, so small and large matrices
/// weigh alike) over non-negative constants, by solving the least-squares
/// problem on every subset of terms and keeping the best solution whose
/// constants are all non-negative (64 subsets: exact and simple).
#[must_use]
pub fn fit(samples: &[Sample], device: &str, fitted_on: &str) -> TimeModel {
    let mut by_format: BTreeMap<&str, Vec<&Sample>> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.us > 0.0 && s.us.is_finite()) {
        by_format.entry(s.format.as_str()).or_default().push(s);
    }
    let formats = by_format
        .into_iter()
        .map(|(f, v)| (f.to_string(), nnls_relative(&v)))
        .collect();
    TimeModel {
        device: device.to_string(),
        fitted_on: fitted_on.to_string(),
        formats,
    }
}

fn nnls_relative(v: &[&Sample]) -> [f64; NTERMS] {
    let mut best: Option<(f64, [f64; NTERMS])> = None;
    for mask in 1u32..(1 << NTERMS) {
        let idx: Vec<usize> = (0..NTERMS).filter(|i| mask & (1 << i) != 0).collect();
        // Normal equations of rows x_i / t_i against 1.
        let k = idx.len();
        let mut ata = vec![0.0f64; k * k];
        let mut atb = vec![0.0f64; k];
        for s in v {
            for (a, &i) in idx.iter().enumerate() {
                let xa = s.terms[i] / s.us;
                atb[a] += xa;
                for (b, &j) in idx.iter().enumerate() {
                    ata[a * k + b] += xa * s.terms[j] / s.us;
                }
            }
        }
        let Some(sol) = solve(&mut ata, &mut atb, k) else {
            continue;
        };
        if sol.iter().any(|&x| x < 0.0 || !x.is_finite()) {
            continue;
        }
        let mut full = [0.0; NTERMS];
        for (a, &i) in idx.iter().enumerate() {
            full[i] = sol[a];
        }
        let resid: f64 = v
            .iter()
            .map(|s| {
                let p: f64 = full.iter().zip(s.terms).map(|(a, b)| a * b).sum();
                (p / s.us - 1.0).powi(2)
            })
            .sum();
        if best.as_ref().is_none_or(|b| resid < b.0 - 1e-12) {
            best = Some((resid, full));
        }
    }
    best.map_or([0.0; NTERMS], |b| b.1)
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
        for f in ["csr", "coo", "ell", "hyb", "jds", "sell"] {
            let k = m.formats.get(f).unwrap_or_else(|| panic!("{f} missing"));
            assert!(k.iter().all(|&x| x >= 0.0 && x.is_finite()), "{f}: {k:?}");
            assert!(k[0] > 0.0, "{f}: a launch costs something");
        }
    }

    #[test]
    fn fit_recovers_known_constants() {
        // t = 4 + 0.5 MB + 100 serial_k, exactly; with a few terms unused.
        let truth = [4.0, 0.5, 100.0, 0.0, 0.0, 0.0];
        let mut samples = Vec::new();
        for i in 0..40 {
            let t = [
                1.0,
                1.0 + f64::from(i) * 7.0,
                f64::from(i % 5) * 0.01,
                0.0,
                0.0,
                f64::from(i) * 0.1,
            ];
            let us: f64 = truth.iter().zip(t).map(|(a, b)| a * b).sum();
            samples.push(Sample {
                format: "ell".into(),
                terms: t,
                us,
            });
        }
        let m = fit(&samples, "test", "synthetic");
        for (a, b) in m.formats["ell"].iter().zip(truth) {
            assert!((a - b).abs() < 1e-6, "{:?}", m.formats["ell"]);
        }
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
}
