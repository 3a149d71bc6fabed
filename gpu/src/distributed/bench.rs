//! `sparsetool bench --gpus N`: the multi-GPU SpMV beside the best one-GPU
//! layout of the same run, with the exchange's share, the bytes moved and
//! the parallel efficiency.
//!
//! Method: every SpMV (distributed or one-GPU) is timed the same way, by the
//! host clock around one SpMV and a synchronisation of every stream of every
//! device used, after a warm-up of at least [`DistBenchOptions::warmup_ms`];
//! the median of [`DistBenchOptions::reps`] runs is reported. The one-GPU
//! baseline is the same machinery with one part on the first device (no
//! exchange, no ghost block), in each of the best-predicted layouts of the
//! whole matrix (one per format), each with its kernel
//! ([`super::kernel_for`]). The exchange alone (gathers, copies and NCCL,
//! no product) and the products alone (local and ghost blocks, no exchange)
//! are timed the same way: `exchange_share` is the exchange's time over the
//! full SpMV's.

use std::time::Instant;

use serde::Serialize;
use sparsetool_analyze::bench::{median_min, random_x};
use sparsetool_analyze::partition::{Partition, PartitionOptions};
use sparsetool_analyze::recommend::rank_layouts;
use sparsetool_analyze::{CostModel, Features, RowLengths, TimeModel};
use sparsetool_convert::ConvertParams;
use sparsetool_formats::{Csr, Index, Layout, Scalar};

use super::{DistOptions, DistributedMatrix};
use crate::reference::{rel_error, spmv_ref, tolerance};
use crate::GpuError;

/// What to time.
#[derive(Debug, Clone, PartialEq)]
pub struct DistBenchOptions {
    /// Timed SpMVs per configuration (the median is reported).
    pub reps: usize,
    /// Untimed SpMVs before timing, for at least this long (ms).
    pub warmup_ms: f64,
    /// One-GPU baselines: the best-predicted layout of this many formats.
    pub baseline_formats: usize,
    /// Also time an equal-rows partition of the same part count.
    pub equal_rows: bool,
    /// Seed of the random `x`.
    pub seed: u64,
}

impl Default for DistBenchOptions {
    fn default() -> Self {
        Self {
            reps: 20,
            warmup_ms: 25.0,
            baseline_formats: 3,
            equal_rows: false,
            seed: 0x5eed,
        }
    }
}

/// One part in the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DistPartReport {
    /// Part number.
    pub part: usize,
    /// Device index (into [`DistBenchReport::devices`]).
    pub device: usize,
    /// Rows.
    pub rows: usize,
    /// Entries.
    pub nnz: u64,
    /// Ghost columns (`x` entries received).
    pub ghost_cols: u64,
    /// Local block layout.
    pub layout: Layout,
    /// Its kernel.
    pub kernel: String,
    /// Offset width of the local block: 32, or 64 where its entries need it.
    pub offset_bits: u32,
    /// Predicted µs (local + ghost).
    pub predicted_us: f64,
}

/// One timed one-GPU layout.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SingleGpuResult {
    /// The layout.
    pub layout: Layout,
    /// Its kernel.
    pub kernel: String,
    /// Offset width: 32, or 64 where the whole matrix needs it (2^31
    /// entries or more).
    pub offset_bits: u32,
    /// Median ms per SpMV.
    pub ms: f64,
}

/// What the text report adds after a kernel with 64-bit offsets.
fn wide_note(offset_bits: u32) -> &'static str {
    if offset_bits == 64 {
        " (64-bit offsets)"
    } else {
        ""
    }
}

/// `sparsetool bench --gpus N --json` (documented in `docs/cli.md`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DistBenchReport {
    /// Device names, one per device used.
    pub devices: Vec<String>,
    /// Value type.
    pub dtype: String,
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// Entries.
    pub nnz: usize,
    /// Parts.
    pub parts: usize,
    /// Timed runs per configuration.
    pub reps: usize,
    /// Per part.
    pub part_info: Vec<DistPartReport>,
    /// Median ms of one distributed SpMV.
    pub dist_ms: f64,
    /// Fastest of the timed runs, ms.
    pub dist_min_ms: f64,
    /// Median ms of the exchange alone.
    pub exchange_ms: f64,
    /// Median ms of the products alone (local + ghost, no exchange).
    pub compute_ms: f64,
    /// `exchange_ms / dist_ms`.
    pub exchange_share: f64,
    /// Bytes between devices per SpMV (NCCL).
    pub nccl_bytes: u64,
    /// Bytes of the whole plan per SpMV (same-device copies included).
    pub exchange_bytes: u64,
    /// The one-GPU layouts timed on the first device.
    pub single_gpu: Vec<SingleGpuResult>,
    /// The fastest of them, ms.
    pub best_single_ms: f64,
    /// Its layout.
    pub best_single_layout: Option<Layout>,
    /// `best_single_ms / dist_ms`.
    pub speedup: f64,
    /// `speedup / devices`.
    pub parallel_efficiency: f64,
    /// Median ms of an equal-rows partition of the same part count (when
    /// asked for).
    pub equal_rows_ms: Option<f64>,
    /// Relative error of the distributed `y` against an f64 CPU reference.
    pub rel_error: f64,
    /// The tolerance it is held to.
    pub tolerance: f64,
    /// `rel_error <= tolerance`.
    pub ok: bool,
}

/// Median and minimum ms of `reps` calls of `run` (which must wait for the
/// GPUs before returning), after warming up.
fn time(
    reps: usize,
    warmup_ms: f64,
    mut run: impl FnMut() -> Result<(), GpuError>,
) -> Result<(f64, f64), GpuError> {
    let start = Instant::now();
    let mut n = 0;
    while n < 2 || start.elapsed().as_secs_f64() * 1e3 < warmup_ms {
        run()?;
        n += 1;
    }
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        run()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median_min(&times).unwrap_or((f64::NAN, f64::NAN)))
}

/// The best-predicted layout of each of the first `n` formats for the whole
/// matrix.
fn top_layouts<T: Scalar, I: Index>(
    a: &Csr<T, I>,
    n: usize,
    value_bytes: u64,
) -> Result<Vec<Layout>, GpuError> {
    let rl = RowLengths::from_csr(a).map_err(|e| GpuError::Distributed(e.to_string()))?;
    let f = Features::new(&rl, value_bytes);
    let mut out: Vec<Layout> = Vec::new();
    for (i, _) in rank_layouts(&f, TimeModel::calibrated(), &CostModel::default()) {
        let l = f.candidates[i].layout;
        if out.len() >= n.max(1) {
            break;
        }
        if out.iter().all(|o| o.kind() != l.kind()) {
            out.push(l);
        }
    }
    if out.is_empty() {
        out.push(Layout::Csr);
    }
    Ok(out)
}

/// Times the multi-GPU SpMV of `a` under `opts` against the best one-GPU
/// layouts on `opts.devices[0]` (see the module docs).
///
/// # Errors
/// As [`DistributedMatrix::new`]; [`GpuError::Distributed`] when no
/// one-GPU layout could be built.
pub fn bench_distributed<T: Scalar, I: Index>(
    a: &Csr<T, I>,
    opts: &DistOptions,
    bopts: &DistBenchOptions,
) -> Result<DistBenchReport, GpuError> {
    // one configuration: it either ran or its error is the result
    let mut runs = bench_distributed_scaling(a, std::slice::from_ref(opts), bopts)?.runs;
    runs.pop()
        .ok_or_else(|| GpuError::Distributed("no configuration was timed".into()))
}

/// Times the multi-GPU SpMV of `a` under each of `configs` (for example 1,
/// 2 and 4 GPUs, one part each) in one run: the same `x`, the same f64 CPU
/// reference and the same one-GPU baselines (timed once, on the first
/// device of the first configuration) for every configuration, so the
/// speedups and efficiencies of the runs compare directly.
///
/// ```no_run
/// use sparsetool_gpu::distributed::{bench_distributed_scaling, DistBenchOptions, DistOptions};
/// let a = sparsetool_fixtures::gen::laplace2d::<f32, i32>(2000)?;
/// let configs: Vec<DistOptions> = [1, 2, 4].map(|n| DistOptions::new(n, n)).to_vec();
/// let r = bench_distributed_scaling(&a, &configs, &DistBenchOptions::default())?;
/// for run in &r.runs {
///     println!("{} GPUs: {:.3} ms, efficiency {:.0} %", run.devices.len(), run.dist_ms,
///              100.0 * run.parallel_efficiency);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`bench_distributed`]; [`GpuError::Distributed`] for no
/// configuration or a configuration without devices.
pub fn bench_distributed_scaling<T: Scalar, I: Index>(
    a: &Csr<T, I>,
    configs: &[DistOptions],
    bopts: &DistBenchOptions,
) -> Result<DistScalingReport, GpuError> {
    let device = configs
        .first()
        .and_then(|c| c.devices.first().copied())
        .ok_or_else(|| GpuError::Distributed("no configuration or no device to time".into()))?;
    let dtype = super::real_type::<T>()?;
    let x: Vec<T> = random_x(a.ncols(), bopts.seed);
    let y_ref = spmv_ref(a, &x);
    let tol = tolerance(dtype.precision, a.max_row_len());
    // The configurations first, as a one-configuration bench always ran: a
    // device or NCCL that fails is reported before the baselines' copies
    // of the whole matrix are built. One configuration that fails leaves
    // the others' results standing (a scaling run is minutes of host work);
    // when every one fails, its first error is the result.
    let mut done = Vec::with_capacity(configs.len());
    let mut failed = Vec::new();
    let mut first_err = None;
    for opts in configs {
        match dist_run(a, &x, &y_ref, opts, bopts) {
            Ok(r) => done.push((opts.parts, r)),
            Err(e) => {
                failed.push(FailedRun {
                    gpus: opts.devices.len(),
                    parts: opts.parts,
                    error: e.to_string(),
                });
                first_err.get_or_insert(e);
            }
        }
    }
    if let (true, Some(e)) = (done.is_empty(), first_err) {
        return Err(e);
    }
    let single_gpu = baselines(a, &x, device, bopts)?;
    let best = single_gpu
        .iter()
        .min_by(|p, q| p.ms.total_cmp(&q.ms))
        .cloned()
        .ok_or_else(|| GpuError::Distributed("no one-GPU baseline was timed".into()))?;
    let runs = done
        .into_iter()
        .map(|(parts, r)| {
            let speedup = best.ms / r.dist_ms;
            DistBenchReport {
                devices: r.devices,
                dtype: dtype.name().to_string(),
                nrows: a.nrows(),
                ncols: a.ncols(),
                nnz: a.nnz(),
                parts,
                reps: bopts.reps,
                part_info: r.part_info,
                dist_ms: r.dist_ms,
                dist_min_ms: r.dist_min_ms,
                exchange_ms: r.exchange_ms,
                compute_ms: r.compute_ms,
                exchange_share: r.exchange_ms / r.dist_ms,
                nccl_bytes: r.nccl_bytes,
                exchange_bytes: r.exchange_bytes,
                single_gpu: single_gpu.clone(),
                best_single_ms: best.ms,
                best_single_layout: Some(best.layout),
                speedup,
                parallel_efficiency: speedup / r.ndev as f64,
                equal_rows_ms: r.equal_rows_ms,
                rel_error: r.rel_error,
                tolerance: tol,
                ok: r.rel_error <= tol,
            }
        })
        .collect();
    Ok(DistScalingReport { runs, failed })
}

/// What one configuration measured (the report's per-run fields).
struct DistRun {
    devices: Vec<String>,
    ndev: usize,
    part_info: Vec<DistPartReport>,
    dist_ms: f64,
    dist_min_ms: f64,
    exchange_ms: f64,
    compute_ms: f64,
    nccl_bytes: u64,
    exchange_bytes: u64,
    equal_rows_ms: Option<f64>,
    rel_error: f64,
}

/// Distributes `a` under `opts` and times it (and, when asked, the
/// equal-rows partition of the same part count).
fn dist_run<T: Scalar, I: Index>(
    a: &Csr<T, I>,
    x: &[T],
    y_ref: &[f64],
    opts: &DistOptions,
    bopts: &DistBenchOptions,
) -> Result<DistRun, GpuError> {
    let (reps, warm) = (bopts.reps, bopts.warmup_ms);
    let mut m = DistributedMatrix::new(a, opts)?;
    m.set_x(x)?;
    m.spmv()?;
    m.synchronize()?;
    let y: Vec<T> = m.gather_y()?;
    let rel_error = rel_error(&y, y_ref);
    let (dist_ms, dist_min_ms) = time(reps, warm, || {
        m.spmv()?;
        m.synchronize()
    })?;
    let (exchange_ms, _) = time(reps, warm, || {
        m.enqueue(true, false)?;
        m.synchronize()
    })?;
    let (compute_ms, _) = time(reps, warm, || {
        m.enqueue(false, true)?;
        m.synchronize()
    })?;
    let devices: Vec<String> = (0..m.devices())
        .map(|d| m.device_name(d).to_string())
        .collect();
    let layouts = m.part_layouts();
    let bits = m.part_offset_bits();
    let part_info = m
        .partition()
        .parts
        .iter()
        .zip(layouts.iter().zip(&bits))
        .map(
            |(p, (&(device, layout, kernel), &offset_bits))| DistPartReport {
                part: p.part,
                device,
                rows: p.rows,
                nnz: p.nnz,
                ghost_cols: p.ghost_cols,
                layout,
                kernel: kernel.to_string(),
                offset_bits,
                predicted_us: p.predicted_us,
            },
        )
        .collect();
    let nccl_bytes = m.nccl_bytes();
    let exchange_bytes = m.partition().exchange_bytes;
    let ndev = m.devices();
    drop(m);

    let equal_rows_ms = if bopts.equal_rows && opts.parts > 1 {
        let n = opts.parts;
        let cuts: Vec<usize> = (0..=n).map(|k| k * a.nrows() / n).collect();
        let popts = PartitionOptions {
            value_bytes: std::mem::size_of::<T>() as u64,
            ..PartitionOptions::default()
        };
        let p =
            Partition::with_bounds(a.nrows(), a.ncols(), a.row_ptr(), a.col_idx(), cuts, &popts)
                .map_err(|e| GpuError::Distributed(e.to_string()))?;
        let mut e = DistributedMatrix::with_partition(a, p, opts)?;
        e.set_x(x)?;
        Some(
            time(reps, warm, || {
                e.spmv()?;
                e.synchronize()
            })?
            .0,
        )
    } else {
        None
    };
    Ok(DistRun {
        devices,
        ndev,
        part_info,
        dist_ms,
        dist_min_ms,
        exchange_ms,
        compute_ms,
        nccl_bytes,
        exchange_bytes,
        equal_rows_ms,
        rel_error,
    })
}

/// The one-GPU baselines on `device`: the best-predicted layout of each of
/// the first [`DistBenchOptions::baseline_formats`] formats of the whole
/// matrix, each run as one part (no exchange, no ghost block).
fn baselines<T: Scalar, I: Index>(
    a: &Csr<T, I>,
    x: &[T],
    device: usize,
    bopts: &DistBenchOptions,
) -> Result<Vec<SingleGpuResult>, GpuError> {
    let vb = std::mem::size_of::<T>() as u64;
    let mut single_gpu = Vec::new();
    let mut reasons = Vec::new();
    for layout in top_layouts(a, bopts.baseline_formats, vb)? {
        let one = DistOptions {
            parts: 1,
            devices: vec![device],
            format: Some(layout.kind()),
            params: ConvertParams {
                allow_fill: true,
                ..ConvertParams::for_layout(&layout)
            },
            refine: 0,
        };
        let whole = Partition::with_bounds(
            a.nrows(),
            a.ncols(),
            a.row_ptr(),
            a.col_idx(),
            vec![0, a.nrows()],
            &PartitionOptions {
                value_bytes: vb,
                refine: 0,
                ..PartitionOptions::default()
            },
        )
        .map_err(|e| GpuError::Distributed(e.to_string()))?;
        match DistributedMatrix::with_partition(a, whole, &one) {
            Ok(mut s) => {
                s.set_x(x)?;
                let kernel = s.part_layouts()[0].2.to_string();
                let offset_bits = s.part_offset_bits()[0];
                let (ms, _) = time(bopts.reps, bopts.warmup_ms, || {
                    s.spmv()?;
                    s.synchronize()
                })?;
                single_gpu.push(SingleGpuResult {
                    layout,
                    kernel,
                    offset_bits,
                    ms,
                });
            }
            Err(e) => reasons.push(format!("{layout}: {e}")),
        }
    }
    if single_gpu.is_empty() {
        return Err(GpuError::Distributed(format!(
            "no one-GPU baseline could be built ({})",
            reasons.join("; ")
        )));
    }
    Ok(single_gpu)
}

/// `sparsetool bench --gpus 1,2,4 --json`: one [`DistBenchReport`] per
/// configuration, all of one run (the same `x`, reference and one-GPU
/// baselines).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DistScalingReport {
    /// One report per configuration that ran, in the order asked for.
    pub runs: Vec<DistBenchReport>,
    /// The configurations that could not run (never all of them: then the
    /// bench itself fails with the first one's error).
    pub failed: Vec<FailedRun>,
}

/// A configuration of a scaling run that could not run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailedRun {
    /// GPUs it asked for.
    pub gpus: usize,
    /// Parts it asked for.
    pub parts: usize,
    /// Why it failed.
    pub error: String,
}

impl DistScalingReport {
    /// Whether every configuration ran and its result passed its check.
    #[must_use]
    pub fn ok(&self) -> bool {
        self.failed.is_empty() && self.runs.iter().all(|r| r.ok)
    }

    /// The text `bench --gpus LIST` prints: the matrix and the one-GPU
    /// baselines once, each configuration's parts and times, then one table
    /// row per configuration.
    #[must_use]
    pub fn render(&self) -> String {
        let Some(first) = self.runs.first() else {
            return String::new();
        };
        let mut s = first.header_line(None);
        s.push_str(&first.baseline_lines());
        for r in &self.runs {
            s.push('\n');
            s.push_str(&format!(
                "{} parts on {} device(s)\n",
                r.parts,
                r.devices.len()
            ));
            s.push_str(&r.part_lines());
            s.push_str(&r.dist_lines());
        }
        s.push_str(&format!(
            "\n{:>4} {:>5} {:>10} {:>8} {:>10} {:>9} {:>14} {:>13} {:>9}\n",
            "gpus",
            "parts",
            "ms",
            "speedup",
            "efficiency",
            "exchange",
            "device bytes",
            "equal-rows ms",
            "error"
        ));
        for r in &self.runs {
            let eq = r
                .equal_rows_ms
                .map_or_else(|| "-".to_string(), |e| format!("{e:.4}"));
            s.push_str(&format!(
                "{:>4} {:>5} {:>10.4} {:>7.2}x {:>8.1} % {:>7.1} % {:>14} {:>13} {:>9.2e}{}\n",
                r.devices.len(),
                r.parts,
                r.dist_ms,
                r.speedup,
                100.0 * r.parallel_efficiency,
                100.0 * r.exchange_share,
                r.nccl_bytes,
                eq,
                r.rel_error,
                if r.ok { "" } else { " FAILED" }
            ));
        }
        for f in &self.failed {
            s.push_str(&format!(
                "{:>4} {:>5} failed: {}\n",
                f.gpus, f.parts, f.error
            ));
        }
        s.push_str(&format!(
            "speedup and efficiency against the best 1-GPU layout ({}, {:.4} ms)\n",
            first
                .best_single_layout
                .map(|l| l.to_string())
                .unwrap_or_default(),
            first.best_single_ms
        ));
        s
    }
}

impl DistBenchReport {
    /// The text `bench --gpus` prints.
    #[must_use]
    pub fn render(&self) -> String {
        let mut s = self.header_line(Some((self.parts, &self.devices)));
        s.push_str(&self.part_lines());
        s.push_str(&self.baseline_lines());
        s.push_str(&self.dist_lines());
        s.push_str(&format!(
            "speedup {:.2}x over the best 1-GPU layout ({}), parallel efficiency {:.1} %, {} bytes between devices per SpMV, error {:.2e} ({})\n",
            self.speedup,
            self.best_single_layout.map(|l| l.to_string()).unwrap_or_default(),
            100.0 * self.parallel_efficiency,
            self.nccl_bytes,
            self.rel_error,
            if self.ok { "ok" } else { "FAILED" }
        ));
        s
    }

    /// The first line: the matrix, and with `parts` its parts and devices.
    fn header_line(&self, parts: Option<(usize, &[String])>) -> String {
        let mut s = format!(
            "multi-GPU SpMV: {} x {}, {} entries, {}",
            self.nrows, self.ncols, self.nnz, self.dtype
        );
        if let Some((p, devices)) = parts {
            s.push_str(&format!(
                ", {p} parts on {} device(s) ({})",
                devices.len(),
                devices.join(", ")
            ));
        }
        s.push('\n');
        s
    }

    /// The part table.
    fn part_lines(&self) -> String {
        let mut s = format!(
            "{:>4} {:>6} {:>12} {:>12} {:>10} {:>14}  {:<14} {}\n",
            "part", "device", "rows", "nnz", "ghost_cols", "predicted_us", "layout", "kernel"
        );
        for p in &self.part_info {
            let DistPartReport {
                part,
                device,
                rows,
                nnz,
                ghost_cols,
                ..
            } = p;
            let (t, layout, kernel) = (p.predicted_us, p.layout.to_string(), &p.kernel);
            s.push_str(&format!(
                "{part:>4} {device:>6} {rows:>12} {nnz:>12} {ghost_cols:>10} "
            ));
            let wide = wide_note(p.offset_bits);
            s.push_str(&format!("{t:>14.1}  {layout:<14} {kernel}{wide}\n"));
        }
        s
    }

    /// One line per one-GPU baseline.
    fn baseline_lines(&self) -> String {
        self.single_gpu
            .iter()
            .map(|r| {
                format!(
                    "1 GPU  {:<14} {:<14} {:>10.4} ms{}\n",
                    r.layout.to_string(),
                    r.kernel,
                    r.ms,
                    wide_note(r.offset_bits)
                )
            })
            .collect()
    }

    /// The distributed time, its exchange and products, the equal-rows peer.
    fn dist_lines(&self) -> String {
        let mut s = format!(
            "{} GPUs {:>10.4} ms (exchange alone {:.4} ms, {:.1} % of it; products alone {:.4} ms)\n",
            self.devices.len(),
            self.dist_ms,
            self.exchange_ms,
            100.0 * self.exchange_share,
            self.compute_ms
        );
        if let Some(e) = self.equal_rows_ms {
            s.push_str(&format!("equal-rows partition {e:.4} ms\n"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report of the 2,199,878,976-entry Laplacian on two H200s
    /// (2026-11-24).
    fn two_gpu_report() -> DistBenchReport {
        let part = |p: usize| DistPartReport {
            part: p,
            device: p,
            rows: 219_996_288,
            nnz: 1_099_939_488,
            ghost_cols: 20_976,
            layout: Layout::Hyb { width: 5 },
            kernel: "hyb".into(),
            offset_bits: 32,
            predicted_us: 5627.4,
        };
        let sell = Layout::Sell {
            slice: 32,
            sigma: 1,
        };
        DistBenchReport {
            devices: vec!["NVIDIA H200".into(); 2],
            dtype: "f32".into(),
            nrows: 439_992_576,
            ncols: 439_992_576,
            nnz: 2_199_878_976,
            parts: 2,
            reps: 5,
            part_info: vec![part(0), part(1)],
            dist_ms: 2.71631,
            dist_min_ms: 2.714641,
            exchange_ms: 0.058148,
            compute_ms: 2.638507,
            exchange_share: 0.0214,
            nccl_bytes: 167_808,
            exchange_bytes: 167_808,
            single_gpu: vec![SingleGpuResult {
                layout: sell,
                kernel: "sell".into(),
                offset_bits: 64,
                ms: 6.99739,
            }],
            best_single_ms: 6.99739,
            best_single_layout: Some(sell),
            speedup: 2.576,
            parallel_efficiency: 1.288,
            equal_rows_ms: None,
            rel_error: 4.57e-8,
            tolerance: 1e-4,
            ok: true,
        }
    }

    /// The baseline needs 64-bit offsets, the halves do not, and the text
    /// and JSON say so.
    #[test]
    fn report_names_the_offset_width_of_parts_and_baseline() {
        let r = two_gpu_report();
        let text = r.render();
        assert!(
            text.contains("1 GPU  sell-32-1      sell               6.9974 ms (64-bit offsets)\n"),
            "{text}"
        );
        let hyb_lines: Vec<&str> = text
            .lines()
            .filter(|l| l.ends_with("hyb-5          hyb"))
            .collect();
        assert_eq!(hyb_lines.len(), 2, "{text}");
        assert!(!text.lines().any(|l| l.contains("hyb (64-bit")), "{text}");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["single_gpu"][0]["offset_bits"], 64);
        assert_eq!(json["part_info"][1]["offset_bits"], 32);
    }

    /// A scaling study prints its baselines once, every configuration's
    /// parts, and one table row per configuration; its JSON is `runs`.
    #[test]
    fn scaling_report_prints_baselines_once_and_a_row_per_count() {
        let two = two_gpu_report();
        let mut one = two.clone();
        one.devices.truncate(1);
        one.parts = 1;
        one.part_info.truncate(1);
        one.dist_ms = 7.1;
        one.speedup = two.best_single_ms / 7.1;
        one.parallel_efficiency = one.speedup;
        one.equal_rows_ms = None;
        let mut four = two.clone();
        four.devices = vec!["NVIDIA H200".into(); 4];
        four.parts = 4;
        four.equal_rows_ms = Some(1.9);
        four.ok = false;
        let r = DistScalingReport {
            runs: vec![one, two, four],
            failed: vec![FailedRun {
                gpus: 8,
                parts: 8,
                error: "NCCL: unhandled system error".into(),
            }],
        };
        assert!(!r.ok());
        let text = r.render();
        assert_eq!(text.matches("1 GPU  sell-32-1").count(), 1, "{text}");
        assert_eq!(text.matches("multi-GPU SpMV:").count(), 1, "{text}");
        assert!(text.contains("\n2 parts on 2 device(s)\n"), "{text}");
        let rows: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.trim_start().starts_with("gpus"))
            .skip(1)
            .take(3)
            .collect();
        assert_eq!(rows.len(), 3, "{text}");
        assert!(
            rows[0].starts_with("   1     1     7.1000    0.99x"),
            "{text}"
        );
        assert!(
            rows[1]
                .starts_with("   2     2     2.7163    2.58x    128.8 %     2.1 %         167808"),
            "{text}"
        );
        // every column of a row sits under its header
        let header = text
            .lines()
            .find(|l| l.trim_start().starts_with("gpus"))
            .unwrap();
        assert_eq!(header.len(), rows[1].len(), "{header}\n{}", rows[1]);
        assert!(
            text.contains("\n   8     8 failed: NCCL: unhandled system error\n"),
            "{text}"
        );
        assert!(
            rows[2].contains(" 1.9000 ") && rows[2].ends_with(" FAILED"),
            "{text}"
        );
        assert!(text.ends_with("(sell-32-1, 6.9974 ms)\n"), "{text}");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["runs"].as_array().map(Vec::len), Some(3));
        assert_eq!(json["runs"][2]["equal_rows_ms"], 1.9);
        assert_eq!(json["failed"][0]["gpus"], 8);
    }
}
