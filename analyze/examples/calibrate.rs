//! Fits the time model of `sparsetool analyze` to `sparsetool bench --sweep
//! --json` results and writes the accuracy report.
//!
//! ```text
//! cargo run --release -p sparsetool-analyze --example calibrate -- \
//!     --results bench/results/2026-11-22-h100-corpus2 \
//!     [--repeat DIR2 [--repeat-of DIR1]] \
//!     --holdout real-,circ-,pl25-,fem- \
//!     --model analyze/calibration/h100.json --report docs/recommendation.md \
//!     [--name h100] [--compare quick=OTHER_PROFILE.json ...]
//! ```
//! (`scripts/calibrate.sh` runs exactly this.) `--results` may repeat: a
//! later folder's run of a matrix and value type replaces an earlier one's
//! (a corpus re-measured in part). The fit sees only the
//! matrices whose names do not start with a `--holdout` prefix; the report
//! evaluates the recommendation on the held-out ones and, separately, on all.
//! `--samples FILE` writes every measured (run, layout, kernel) as CSV: the
//! terms of the model that kernel is fitted under, the layout's work, the
//! kernel's time, the layout's best time and whether the run is held out
//! (`scripts/model-variants.py` refits variants of the model from it).
//! With `EXPLAIN=prefix,...` in the environment it also prints, on stderr,
//! every measured layout of the runs whose names start with a prefix, with
//! its measured time and each model's prediction (to study the misses), for
//! the `--results` corpus and then for each `--gpu` corpus under its own fit.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sparsetool_analyze::recommend::{rank_layouts, ruled_out, CostModel};
use sparsetool_analyze::timing::{fit, load_sweep_dirs, Sample, SweepRun, TimeModel, TERMS};
use sparsetool_formats::{FormatKind, Layout};

/// One bench run: a matrix in one dtype.
struct Case {
    /// File stem, e.g. `l2d-1m-f32`.
    name: String,
    /// Matrix name without the dtype.
    matrix: String,
    run: SweepRun,
}

impl Case {
    fn oracle(&self) -> Option<(Layout, f64, &str)> {
        self.run
            .best
            .iter()
            .min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
            .map(|(l, (t, k))| (*l, *t, k.as_str()))
    }
}

fn cases_of(dirs: &[PathBuf]) -> Result<Vec<Case>, Box<dyn std::error::Error>> {
    Ok(load_sweep_dirs(dirs)?
        .into_iter()
        .map(|(matrix, run)| Case {
            name: format!("{matrix}-{}", run.dtype),
            matrix,
            run,
        })
        .collect())
}

/// Each case's samples, one run apiece (see [`fit`]).
fn samples(cases: &[&Case]) -> Vec<Vec<Sample>> {
    cases.iter().map(|c| c.run.samples()).collect()
}

/// The recommendation's measured outcome on one case.
struct Outcome {
    rec: String,
    rec_pred: f64,
    rec_us: f64,
    rec_kernel: String,
    oracle: String,
    oracle_us: f64,
    oracle_kernel: String,
    slowdown: f64,
    /// Slowdown of what `analyze --measure` would pick (see [`measured_top`]).
    measured_slowdown: f64,
    base: Option<f64>,
    /// Best time per format, fastest first.
    formats: Vec<(String, f64)>,
}

/// The ranked layouts that were measured (ELL beyond 16 GiB is not).
fn measured_ranking(c: &Case, model: &TimeModel) -> Vec<(usize, f64)> {
    rank_layouts(&c.run.features, model, &CostModel::default())
        .into_iter()
        .filter(|&(i, _)| {
            c.run
                .best
                .contains_key(&c.run.features.candidates[i].layout)
        })
        .collect()
}

/// What `analyze --measure --measure-top k` would pick from `ranking`: the
/// measured fastest (µs) of the best-ranked layouts of the first `k` formats.
fn measured_top(c: &Case, ranking: &[(usize, f64)], k: usize) -> f64 {
    let mut seen: Vec<FormatKind> = Vec::new();
    let mut best = f64::INFINITY;
    for &(i, _) in ranking {
        let cand = &c.run.features.candidates[i];
        if seen.contains(&cand.layout.kind()) {
            continue;
        }
        seen.push(cand.layout.kind());
        best = best.min(c.run.best[&cand.layout].0);
        if seen.len() == k {
            break;
        }
    }
    best
}

fn outcome(c: &Case, model: &TimeModel) -> Option<Outcome> {
    let ranking = measured_ranking(c, model);
    let (i, pred) = ranking.first().copied()?;
    let rec = &c.run.features.candidates[i].layout;
    let (rec_us, rec_kernel) = c.run.best[rec].clone();
    let (oracle, oracle_us, oracle_kernel) = c.oracle()?;
    let mut formats: BTreeMap<String, f64> = BTreeMap::new();
    for cand in &c.run.features.candidates {
        if let Some((t, _)) = c.run.best.get(&cand.layout) {
            let e = formats
                .entry(cand.layout.kind().name().to_string())
                .or_insert(f64::INFINITY);
            *e = e.min(*t);
        }
    }
    let mut formats: Vec<(String, f64)> = formats.into_iter().collect();
    formats.sort_by(|a, b| a.1.total_cmp(&b.1));
    Some(Outcome {
        rec: rec.to_string(),
        rec_pred: pred,
        rec_us,
        rec_kernel,
        oracle: oracle.to_string(),
        oracle_us,
        oracle_kernel: oracle_kernel.to_string(),
        slowdown: rec_us / oracle_us,
        measured_slowdown: measured_top(c, &ranking, MEASURE_TOP) / oracle_us,
        base: c.run.cusparse_csr_us.map(|b| b / oracle_us),
        formats,
    })
}

struct Summary {
    n: usize,
    within: f64,
    gmean: f64,
    worst: f64,
}

fn summarize(x: &[f64]) -> Summary {
    let n = x.len();
    let within = x.iter().filter(|&&s| s <= 1.10 + 1e-12).count() as f64 / n.max(1) as f64;
    let gmean = (x.iter().map(|s| s.ln()).sum::<f64>() / n.max(1) as f64).exp();
    let worst = x.iter().copied().fold(0.0, f64::max);
    Summary {
        n,
        within,
        gmean,
        worst,
    }
}

fn summary_rows<S: AsRef<str>>(out: &mut String, label: &str, policies: &[(S, Vec<f64>)]) {
    for (who, x) in policies {
        let who = who.as_ref();
        let s = summarize(x);
        let _ = writeln!(
            out,
            "| {label} | {who} | {} | {:.1} % | {:.3}x | {:.2}x |",
            s.n,
            100.0 * s.within,
            s.gmean,
            s.worst
        );
    }
}

/// Slowdowns of the recommendation, of `analyze --measure` with its default
/// top 3 and of always cuSPARSE CSR.
fn policies(os: &[&Outcome]) -> [(&'static str, Vec<f64>); 3] {
    [
        ("recommendation", os.iter().map(|o| o.slowdown).collect()),
        (
            "`analyze --measure` (top 3 formats timed)",
            os.iter().map(|o| o.measured_slowdown).collect(),
        ),
        (
            "always cuSPARSE CSR",
            os.iter().filter_map(|o| o.base).collect(),
        ),
    ]
}

/// `analyze --measure`'s default number of formats timed.
const MEASURE_TOP: usize = 3;

/// Leave-one-matrix-out: each matrix (both dtypes) is predicted by a model
/// fitted on every other matrix of `cases`.
fn cross_validated(cases: &[&Case]) -> [(&'static str, Vec<f64>); 3] {
    let mut matrices: Vec<&str> = cases.iter().map(|c| c.matrix.as_str()).collect();
    matrices.sort_unstable();
    matrices.dedup();
    let mut acc: [(&'static str, Vec<f64>); 3] = Default::default();
    for m in matrices {
        let (out, inn): (Vec<&Case>, Vec<&Case>) = cases.iter().partition(|c| c.matrix == m);
        let model = fit(&samples(&inn), "cv", "cv");
        let os: Vec<Outcome> = out.iter().filter_map(|c| outcome(c, &model)).collect();
        for (a, (who, x)) in acc.iter_mut().zip(policies(&os.iter().collect::<Vec<_>>())) {
            a.0 = who;
            a.1.extend(x);
        }
    }
    acc
}

/// The median, `None` for no values.
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

struct Args {
    results: Vec<PathBuf>,
    repeat: Option<PathBuf>,
    repeat_of: Option<PathBuf>,
    holdout: Vec<String>,
    model: Option<PathBuf>,
    report: Option<PathBuf>,
    /// The profile's name.
    name: Option<String>,
    /// Other profiles scored on the same runs: (label, file).
    compare: Vec<(String, PathBuf)>,
    /// Other GPUs for the per-GPU table: (label, corpus results, model
    /// output, quick profile).
    gpus: Vec<OtherGpu>,
    /// Where to write the samples as CSV.
    samples: Option<PathBuf>,
}

/// `--gpu LABEL=RESULTS[+MORE...][,model=OUT.json][,quick=QUICK.json]`:
/// the folders after the first replace its runs in the formats they
/// measured, as `--results` does.
struct OtherGpu {
    label: String,
    results: Vec<PathBuf>,
    model: Option<PathBuf>,
    quick: Option<PathBuf>,
}

impl OtherGpu {
    fn parse(v: &str) -> Result<Self, String> {
        let (label, rest) = v
            .split_once('=')
            .ok_or("--gpu takes LABEL=RESULTS[+MORE][,model=OUT][,quick=FILE]")?;
        let mut parts = rest.split(',');
        let mut g = OtherGpu {
            label: label.to_string(),
            results: parts
                .next()
                .unwrap_or_default()
                .split('+')
                .map(PathBuf::from)
                .collect(),
            model: None,
            quick: None,
        };
        for p in parts {
            match p.split_once('=') {
                Some(("model", f)) => g.model = Some(f.into()),
                Some(("quick", f)) => g.quick = Some(f.into()),
                _ => return Err(format!("--gpu: unknown part {p}")),
            }
        }
        Ok(g)
    }
}

/// Held-out slowdowns of the recommendation under `model`.
fn held_slowdowns(cases: &[Case], held: &dyn Fn(&Case) -> bool, model: &TimeModel) -> Vec<f64> {
    cases
        .iter()
        .filter(|c| held(c))
        .filter_map(|c| outcome(c, model).map(|o| o.slowdown))
        .collect()
}

/// One GPU's rows of the per-GPU table: its corpus profile, its quick
/// profile (if any) and always cuSPARSE CSR, on its own held-out runs.
fn gpu_rows(
    out: &mut String,
    label: &str,
    cases: &[Case],
    held: &dyn Fn(&Case) -> bool,
    corpus: &TimeModel,
    quick: Option<&(PathBuf, TimeModel)>,
) {
    let held_os: Vec<Outcome> = cases
        .iter()
        .filter(|c| held(c))
        .filter_map(|c| outcome(c, corpus))
        .collect();
    let base: Vec<f64> = held_os.iter().filter_map(|o| o.base).collect();
    let mut rows: Vec<(String, Vec<f64>)> = vec![(
        "corpus profile".into(),
        held_os.iter().map(|o| o.slowdown).collect(),
    )];
    if let Some((p, q)) = quick {
        rows.push((
            format!("quick profile (`sparsetool calibrate`, `{}`)", p.display()),
            held_slowdowns(cases, held, q),
        ));
    }
    rows.push(("always cuSPARSE CSR".into(), base));
    // the steadier score: every matrix predicted by a fit without it
    let [(_, cv), ..] = cross_validated(&cases.iter().collect::<Vec<_>>());
    rows.push((
        "corpus profile, every matrix left out of its own fit".into(),
        cv,
    ));
    summary_rows(out, label, &rows);
}

/// What a profile's `fitted_on` says about the held-out matrices.
fn held_text(holdout: &[String]) -> String {
    if holdout.is_empty() {
        "none held out".into()
    } else {
        format!("held out: names starting with {}", holdout.join(", "))
    }
}

/// Result folders as a profile's `fitted_on` and the report name them.
fn joined(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A profile's `fitted_on`: its folders, the runs it trained on of all, and
/// what was held out.
fn fitted_on(dirs: &[PathBuf], train: usize, runs: usize, holdout: &[String]) -> String {
    format!(
        "{} ({train} of {runs} matrix x dtype runs; {})",
        joined(dirs),
        held_text(holdout)
    )
}

/// With `EXPLAIN=prefix,...` set: [`explain`] for each run whose name
/// starts with a prefix, under a header naming the fit (`label`: the
/// `--results` corpus' model, or a `--gpu` corpus' own).
fn explain_matching(label: &str, cases: &[Case], model: &TimeModel) {
    if let Ok(prefixes) = std::env::var("EXPLAIN") {
        eprintln!("EXPLAIN under the {label} fit:");
        for c in cases
            .iter()
            .filter(|c| prefixes.split(',').any(|p| c.name.starts_with(p)))
        {
            explain(c, model);
        }
    }
}

/// Every measured layout of a run, its measured time and each model's
/// prediction, on stderr (to study misses).
fn explain(c: &Case, model: &TimeModel) {
    let f = &c.run.features;
    eprintln!(
        "{}: rows {} nnz {} row length mean {:.1} max {} cv {:.2}",
        c.name, f.nrows, f.nnz, f.row_length.mean, f.row_length.max, f.row_length.cv
    );
    let mut v: Vec<_> = f
        .candidates
        .iter()
        .filter_map(|cand| c.run.best.get(&cand.layout).map(|b| (cand, b)))
        .collect();
    v.sort_by(|a, b| a.1 .0.total_cmp(&b.1 .0));
    for (cand, (us, k)) in v {
        let t = sparsetool_analyze::timing::terms(cand, f);
        // a model whose serial term differs from the layout's says its own
        let preds: Vec<String> = model
            .predict_by_model(cand, f)
            .iter()
            .map(|(m, p)| {
                let serial = sparsetool_analyze::timing::model_terms(m, cand, f)[2];
                if serial == t[2] {
                    format!("{m} {p:.1}")
                } else {
                    format!("{m} {p:.1} (serial {:.0})", serial * 1e3)
                }
            })
            .collect();
        eprintln!(
            "  {:<18} {:>9.1} µs {:<22} pred [{}]  MB {:.2} serial {:.0} tail {:.0} rows {:.0}",
            cand.layout.to_string(),
            us,
            k,
            preds.join(", "),
            t[1],
            t[2] * 1e3,
            t[3] * 1e6,
            t[5] * 1e6
        );
    }
}

/// Every measured (run, layout, kernel) as CSV (see `--samples`).
fn samples_csv(cases: &[Case], held: &dyn Fn(&Case) -> bool) -> String {
    use sparsetool_analyze::timing::{model_terms, sample_model};
    let rules = CostModel::default();
    let mut out = format!(
        "run,matrix,dtype,held_out,nrows,nnz,max_row,layout,excluded,kernel,model,kernel_us,layout_us,\
         slots,tail,matrix_bytes,vector_bytes,{}\n",
        TERMS.join(",")
    );
    for c in cases {
        let f = &c.run.features;
        for cand in &f.candidates {
            let (Some(ks), Some((best, _))) = (
                c.run.kernels.get(&cand.layout),
                c.run.best.get(&cand.layout),
            ) else {
                continue;
            };
            let excluded = ruled_out(f, &rules, cand.layout);
            for (k, us) in ks {
                let m = sample_model(k, cand);
                let t = model_terms(m, cand, f);
                let w = &cand.work;
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{k},{m},{us},{best},{},{},{},{},{}",
                    c.name,
                    c.matrix,
                    c.run.dtype,
                    u8::from(held(c)),
                    f.nrows,
                    f.nnz,
                    f.row_length.max,
                    cand.layout,
                    u8::from(excluded),
                    w.slots,
                    w.tail,
                    w.matrix_bytes,
                    w.vector_bytes,
                    t.map(|x| x.to_string()).join(",")
                );
            }
        }
    }
    out
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        results: Vec::new(),
        repeat: None,
        repeat_of: None,
        holdout: Vec::new(),
        model: None,
        report: None,
        name: None,
        compare: Vec::new(),
        gpus: Vec::new(),
        samples: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut val = || it.next().ok_or(format!("{k} needs a value"));
        match k.as_str() {
            "--results" => a.results.push(val()?.into()),
            "--repeat" => a.repeat = Some(val()?.into()),
            "--repeat-of" => a.repeat_of = Some(val()?.into()),
            "--holdout" => {
                a.holdout = val()?.split(',').map(str::to_string).collect();
            }
            "--model" => a.model = Some(val()?.into()),
            "--report" => a.report = Some(val()?.into()),
            "--name" => a.name = Some(val()?),
            "--gpu" => a.gpus.push(OtherGpu::parse(&val()?)?),
            "--samples" => a.samples = Some(val()?.into()),
            "--compare" => {
                let v = val()?;
                let (label, file) = v.split_once('=').ok_or("--compare takes LABEL=FILE")?;
                a.compare.push((label.to_string(), file.into()));
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.results.is_empty() {
        return Err("usage: calibrate --results DIR [--repeat DIR] [--holdout p1,p2] [--model OUT.json] [--report OUT.md]".into());
    }
    Ok(a)
}

/// Replaces `path` with `text` atomically (through the one atomic writer of
/// `sparsetool_formats::io`).
fn write_atomic(path: &Path, text: &str) -> Result<(), sparsetool_formats::io::Error> {
    sparsetool_formats::io::write_text(path, true, text)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let cases = cases_of(&args.results)?;
    let held = |c: &Case| {
        args.holdout
            .iter()
            .any(|p| c.matrix.starts_with(p.as_str()))
    };
    let train: Vec<&Case> = cases.iter().filter(|c| !held(c)).collect();
    let device = cases
        .first()
        .map_or("?".to_string(), |c| c.run.device.clone());
    let driver = cases
        .first()
        .map_or("?".to_string(), |c| c.run.driver.clone());
    let fitted = fitted_on(&args.results, train.len(), cases.len(), &args.holdout);
    let mut model = fit(&samples(&train), &device, &fitted);
    model.name.clone_from(&args.name);
    model.copy_gbps = median(cases.iter().map(|c| c.run.copy_gbps).collect());
    let json = serde_json::to_string_pretty(&model)? + "\n";
    if let Some(p) = &args.model {
        write_atomic(p, &json)?;
        eprintln!("wrote {}", p.display());
    }

    if let Some(p) = &args.samples {
        write_atomic(p, &samples_csv(&cases, &held))?;
        eprintln!("wrote {}", p.display());
    }
    explain_matching(args.name.as_deref().unwrap_or("--results"), &cases, &model);
    let outcomes: Vec<(&Case, Outcome)> = cases
        .iter()
        .filter_map(|c| outcome(c, &model).map(|o| (c, o)))
        .collect();
    let mut r = String::new();
    let _ = writeln!(r, "# How good is `sparsetool analyze`'s recommendation?\n");
    let _ = writeln!(
        r,
        "Generated by `scripts/calibrate.sh` (the `calibrate` example of `sparsetool-analyze`) from \
         `sparsetool bench --sweep --json` results in {}: {} runs (matrix x dtype) on {device}, \
         driver {driver}. Do not edit by hand.\n",
        args.results
            .iter()
            .map(|d| format!("`{}`", d.display()))
            .collect::<Vec<_>>()
            .join(", "),
        cases.len()
    );
    let _ = writeln!(r, "## Method\n");
    let _ = writeln!(
        r,
        "- **Candidates.** For each matrix, `analyze` weighs every layout of `sparsetool_analyze::candidates`: \
         CSR, COO, JDS, ELL at the longest row, HYB at the widths of the cost-model, CUSP and Ginkgo rules \
         and the mean, SELL with C = 32 at σ = 1, 32, 256, 1024 and a full sort, and C = 64/128 at σ = 32·C. \
         `bench --sweep` timed every one of them (every kernel of the format, cuSPARSE included: CSR ALG1/ALG2, \
         COO ALG1/ALG2, sliced ELL as the layout `sell-32-1`) after a 25 ms warm-up: the median of 20 timed \
         intervals, each at least 0.1 ms of back-to-back launches (divided by their count), the whole sequence \
         queued behind a delay kernel so that no host gap falls inside an interval.\n\
         - **Time of a layout** = its fastest kernel. **Oracle** = the fastest layout measured. **Slowdown** of \
         the recommendation = its layout's measured time / the oracle's. **Baseline**: always CSR through \
         cuSPARSE (the better of ALG1 and ALG2), against the same oracle.\n\
         - **Model** (`sparsetool_analyze::timing`): per format (and for two kinds of kernel, below), `t = c0 + c1 MB + c2 serial/1e3 + c3 tail/1e6 + \
         c4 tail_serial/1e3 + c5 rows/1e6 + c6 tail_launch + c7 scrambled/1e6 + c8 max(0, MB - 50) + c9 far/1e6` µs, with MB the bytes of the minimum-bytes model \
         (the `c8` term: the bytes beyond the 50 MB L2 cache of the H100 and H200, the only ones that pay the DRAM bandwidth when products repeat), `serial` the longest \
         run of entries one thread walks (for CSR the longest row shared by the lanes its vector kernel gives a row, \
         `timing::csr_vector_lanes`: a power of two from the mean row length, 2 to 32; capped at `CSR_SERIAL_CAP` = 1024 \
         entries for the `csr` model below, see BENCHMARKS.md), `tail`/`tail_serial` HYB's COO part and its longest row's share, \
         `rows` the rows launched, `tail_launch` 1 for a second launch: HYB's COO part, or the long-row tail of JDS \
         and SELL (their kernels walk at most `timing::long_row_cap` slots per thread, then the rest of a longer \
         row in a second launch, so windowed SELL's `serial` is that cap plus up to as much again in the tail; JDS and \
         SELL sorted over all rows have none: their longest rows come first, start in the launch's first wave and \
         the rest of the launch overlaps them). \
         `scrambled` the entries whose warp of 32 rows, after the global (stable) sort by length of JDS and fully \
         sorted SELL, came from more than 64 original rows (`Features::sort_scatter`): the sort scatters the `x` \
         gathers of neighbouring threads (windowed SELL and equal rows keep their order). \
         `far` the entries whose column lies more than 24 MB of `x` / 2 from their row's place on the diagonal, where `x` is larger than \
         24 MB (`rows::Far`, `Features::far`: none on a stencil of any size, about `nnz (1 - 24 MB / bytes of x)` with random columns): \
         gathers that miss the cache in every layout but CSR, whose `csr-panels` kernel gathers `x` by column panels of 24 MB, so the \
         `csr` model has no `far` term (the `csr-vector` model has). \
         Two kinds of kernel have constants of their own, fitted on their times alone: cuSPARSE's sliced ELL \
         (`cusparse-sell`, which runs the layout `sell-32-1`), and CSR's kernels that give a row one thread or one \
         sub-warp (`csr-vector`: `csr-scalar`, `csr-vector`, `csr-vector-l2` to `-l32`; cheap to launch, slowed by the \
         longest row), apart from its other kernels (`csr`: the load-balanced `csr-merge`, `csr-balanced` and cuSPARSE \
         ALG1 and ALG2, and `csr-binned`, which gives the long rows a full warp; a higher fixed cost, the longest row capped). A layout's prediction is the smallest of the \
         models that run it. \
         The constants of `rows` and `far` are one for all models (`timing::SHARED_TERMS`: a row costs its `y` \
         element and pointer, a gather beyond the cache a DRAM access, whatever the format; fitted apart, each model's \
         row constant took up what its own runs left unexplained and they differed by up to 1.4x, which no kernel \
         explains). \
         Fitted by relative least squares with non-negative constants (all models at once, Lawson and Hanson's \
         active-set method) on the training runs only, on the layouts within 3x of each run's fastest (the competitive region), with one free scale per run \
         (matrix x dtype) that multiplies all of its layouts' predictions, held near 1 by a prior (`timing::RUN_SCALE_PRIOR`): \
         it takes up what moves every layout of a matrix alike and no term measures, chiefly how often the `x` gathers hit the \
         cache (the H100 corpus' scales run from 0.30 for a 2D stencil to 1.8 for uniform random columns), which would \
         otherwise bend the constants that decide the ranking. Predictions are for a scale of 1; the profile records the \
         10th and 90th percentiles of its runs' scales (`spread`) and `analyze` prints them under its predictions. The recommendation is the layout with the lowest prediction; uneven rows (cv > 0.5 or \
         longest > 4x mean) exclude ELL and unsorted SELL.\n\
         - **`analyze --measure`** times the best-ranked layout of each of the first 3 formats of the ranking and \
         reports the fastest: its row below is that choice replayed on these measurements.\n\
         - **Cross-validation.** Besides the fixed held-out set, every matrix in turn (both dtypes) is predicted by a \
         model fitted on all the other matrices, held-out ones included: {} runs, each judged by a fit that never \
         saw it. That score moves less with the choice of the held-out set.\n\
         - **Held out** (never seen by the fit): matrices whose names start with {}. Training: the other {} runs.\n",
        cases.len(),
        args.holdout
            .iter()
            .map(|h| format!("`{h}`"))
            .collect::<Vec<_>>()
            .join(", "),
        train.len()
    );
    let _ = writeln!(r, "## Summary\n");
    let _ = writeln!(
        r,
        "| set | policy | runs | within 10 % of oracle | geometric-mean slowdown | worst |\n|---|---|---:|---:|---:|---:|"
    );
    let held_os: Vec<&Outcome> = outcomes
        .iter()
        .filter(|(c, _)| held(c))
        .map(|(_, o)| o)
        .collect();
    let all_os: Vec<&Outcome> = outcomes.iter().map(|(_, o)| o).collect();
    summary_rows(&mut r, "held out", &policies(&held_os));
    for (label, file) in &args.compare {
        let other = sparsetool_analyze::profile::load(file)?;
        let x = held_slowdowns(&cases, &held, &other);
        let who = format!("recommendation, {label} profile (`{}`)", file.display());
        summary_rows(&mut r, "held out", &[(who.as_str(), x)]);
    }
    summary_rows(
        &mut r,
        "every matrix, left out of its own fit",
        &cross_validated(&cases.iter().collect::<Vec<_>>()),
    );
    summary_rows(&mut r, "all (in-sample)", &policies(&all_os)[..1]);
    let _ = writeln!(
        r,
        "\nTargets (issue 8): within 10 % on >= 95 % of the evaluation matrices, geometric mean <= 1.02x, \
         no case worse than 1.5x.\n"
    );

    if !args.gpus.is_empty() {
        let _ = writeln!(r, "## Per GPU\n");
        let _ = writeln!(
            r,
            "Each GPU's corpus profile is fitted on its own training runs and scored on its own held-out runs \
             (the same held-out names). The quick profile is the one `sparsetool calibrate` fitted on that GPU \
             from its own short suite (none of the held-out families in it). The last row of each GPU is the \
             leave-one-matrix-out score of its corpus (every run predicted by a fit that never saw its matrix).\n"
        );
        let _ = writeln!(
            r,
            "| GPU | policy | runs | within 10 % of oracle | geometric-mean slowdown | worst |\n|---|---|---:|---:|---:|---:|"
        );
        let quick = match args.compare.first() {
            Some((_, f)) => Some((f.clone(), sparsetool_analyze::profile::load(f)?)),
            None => None,
        };
        gpu_rows(&mut r, &device, &cases, &held, &model, quick.as_ref());
        for g in &args.gpus {
            let gcases = cases_of(&g.results)?;
            let gtrain: Vec<&Case> = gcases.iter().filter(|c| !held(c)).collect();
            let gdevice = gcases
                .first()
                .map_or(g.label.clone(), |c| c.run.device.clone());
            let mut gm = fit(
                &samples(&gtrain),
                &gdevice,
                &fitted_on(&g.results, gtrain.len(), gcases.len(), &args.holdout),
            );
            gm.name = Some(g.label.clone());
            gm.copy_gbps = median(gcases.iter().map(|c| c.run.copy_gbps).collect());
            explain_matching(&g.label, &gcases, &gm);
            if let Some(p) = &g.model {
                write_atomic(p, &(serde_json::to_string_pretty(&gm)? + "\n"))?;
                eprintln!("wrote {}", p.display());
            }
            let q = match &g.quick {
                Some(f) => Some((f.clone(), sparsetool_analyze::profile::load(f)?)),
                None => None,
            };
            gpu_rows(&mut r, &gdevice, &gcases, &held, &gm, q.as_ref());
        }
        let _ = writeln!(
            r,
            "\nTargets (issue 21), on each GPU: within 10 % on >= 95 % of the held-out runs, geometric mean <= 1.02x, \
             none worse than 1.3x; the quick profile within 3 points of the corpus profile.\n"
        );
    }

    if let Some(rep) = &args.repeat {
        let again = cases_of(std::slice::from_ref(rep))?;
        // the first run of the repeated matrices: the results, or --repeat-of
        let first_run = match &args.repeat_of {
            Some(d) => cases_of(std::slice::from_ref(d))?,
            None => Vec::new(),
        };
        let cases: &[Case] = if args.repeat_of.is_some() {
            &first_run
        } else {
            &cases
        };
        let first_dir = args
            .repeat_of
            .as_ref()
            .map_or(joined(&args.results), |d| d.display().to_string());
        let mut spread = Vec::new();
        let mut flips = 0usize;
        let mut t = String::new();
        for c2 in &again {
            let Some(c1) = cases.iter().find(|c| c.name == c2.name) else {
                continue;
            };
            let (Some(o1), Some(o2)) = (c1.oracle(), c2.oracle()) else {
                continue;
            };
            // the first run's oracle layout, timed again in the repeat
            let same = c2.run.best.get(&o1.0).map(|x| x.0);
            let s = o2.1.max(o1.1) / o2.1.min(o1.1);
            spread.push(s);
            if o1.0 != o2.0 {
                flips += 1;
            }
            let _ = writeln!(
                t,
                "| {} | {} {:.1} µs | {} {:.1} µs | {} | {:.2}x |",
                c2.name,
                o1.0,
                o1.1,
                o2.0,
                o2.1,
                same.map_or("-".into(), |x| format!("{x:.1} µs")),
                same.map_or(f64::NAN, |x| x / o2.1)
            );
        }
        let s = summarize(&spread);
        // a perfect predictor of run 1 judged by run 2: run 1's oracle layout re-timed
        let ceiling: Vec<f64> = again
            .iter()
            .filter_map(|c2| {
                let c1 = cases.iter().find(|c| c.name == c2.name)?;
                let o1 = c1.oracle()?;
                Some(c2.run.best.get(&o1.0)?.0 / c2.oracle()?.1)
            })
            .collect();
        let ceil = summarize(&ceiling);
        let _ = writeln!(r, "## Run-to-run noise\n");
        let _ = writeln!(
            r,
            "The small matrices (latency-bound, 4–15 µs) of `{first_dir}` were benchmarked a second time, with \
             the same binaries, in `{}`. \
             The oracle's time differs between the runs by a geometric mean of {:.3}x (worst {:.2}x); \
             the fastest layout changed in {flips} of {} runs. Run 1's fastest layout, timed again in run 2, \
             is within 10 % of run 2's fastest in {:.1} % of the runs (geometric mean {:.3}x, worst {:.2}x): \
             that is the best score any predictor of run 1 could get on these matrices. A slowdown within \
             that spread cannot be told from noise.\n",
            rep.display(),
            s.gmean,
            s.worst,
            s.n,
            100.0 * ceil.within,
            ceil.gmean,
            ceil.worst
        );
        let _ = writeln!(
            r,
            "| run | oracle, run 1 | oracle, run 2 | run 1's oracle layout in run 2 | its slowdown in run 2 |\n|---|---|---|---|---:|"
        );
        r.push_str(&t);
        r.push('\n');
    }

    let _ = writeln!(r, "## Fitted constants (µs)\n");
    let _ = writeln!(r, "| model | {} |", TERMS.join(" | "));
    let _ = writeln!(r, "|---|{}", "---:|".repeat(TERMS.len()));
    for (f, k) in &model.models {
        let cells: Vec<String> = k.iter().map(|x| format!("{x:.4}")).collect();
        let _ = writeln!(r, "| {f} | {} |", cells.join(" | "));
    }
    r.push('\n');

    for (title, want_held) in [
        ("Held-out runs", true),
        ("Training runs (in-sample)", false),
    ] {
        let _ = writeln!(r, "## {title}\n");
        let _ = writeln!(
            r,
            "| run | nnz | recommended | predicted µs | measured µs (kernel) | fastest layout (kernel) | µs | slowdown | cuSPARSE CSR | top formats (measured, x fastest) |\n|---|---:|---|---:|---|---|---:|---:|---:|---|"
        );
        for (c, o) in outcomes.iter().filter(|(c, _)| held(c) == want_held) {
            let top: Vec<String> = o
                .formats
                .iter()
                .take(3)
                .map(|(f, t)| format!("{f} {:.2}", t / o.oracle_us))
                .collect();
            let _ = writeln!(
                r,
                "| {} | {} | {} | {:.1} | {:.1} ({}) | {} ({}) | {:.1} | {} | {} | {} |",
                c.name,
                c.run.features.nnz,
                o.rec,
                o.rec_pred,
                o.rec_us,
                o.rec_kernel,
                o.oracle,
                o.oracle_kernel,
                o.oracle_us,
                if o.slowdown > 1.10 {
                    format!("**{:.2}x**", o.slowdown)
                } else {
                    format!("{:.2}x", o.slowdown)
                },
                o.base.map_or("-".into(), |b| format!("{b:.2}x")),
                top.join(", ")
            );
        }
        r.push('\n');
    }
    if let Some(p) = &args.report {
        write_atomic(p, &r)?;
        eprintln!("wrote {}", p.display());
    } else {
        print!("{r}");
    }
    Ok(())
}
