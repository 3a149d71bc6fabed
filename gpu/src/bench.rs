//! The benchmark behind `sparsetool bench --device gpu`.
//!
//! Method (see `gpu/README.md`, "Measurement"): every module compiled and every
//! descriptor and buffer created before timing; `x` random in [-1, 1) (never
//! ones or zeros); warm-up launches; `y` poisoned with NaN before each checked
//! run, checked against an f64 CPU reference before and after the timed runs
//! (the larger error is reported, so a race that moves the error shows);
//! `x`'s L2 lines reset to normal priority before each kernel (the COO
//! kernels pin part of an f64 `x`; a kernel timed later must not inherit
//! that); a 25 ms warm-up; then `reps` intervals timed with CUDA events, each
//! of at least [`MIN_INTERVAL_MS`] of back-to-back launches (divided by their
//! count), the whole sequence queued behind a delay kernel so that no host
//! gap falls inside an interval; median and minimum reported; the
//! device-to-device copy bandwidth and the x-gather floor measured in the
//! same run.

use std::collections::BTreeSet;
use std::sync::PoisonError;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, PushKernelArg};
use serde_json::{Map, Value};
use sparsetool_analyze::bench::{gflops, median_min, random_x};
pub use sparsetool_analyze::bench::{BenchReport, KernelResult, MatrixInfo, Skipped};
use sparsetool_analyze::Traffic;
use sparsetool_convert::{ConvertParams, HybWidth};
use sparsetool_formats::{Csr, FormatKind, Index, Layout, Scalar, Sell};

use crate::context::GpuContext;
use crate::cusparse::{self, CusparseAlg, Handle};
use crate::device_matrix::{
    upload_csc_as_coo, upload_csr, upload_csr_as_coo, upload_ell, upload_idx, upload_jds,
    upload_sell, upload_sliced_ell, upload_vals, DevVals, DeviceMatrix,
};
use crate::kernels::{kernel_name, KernelId, Offsets, ValueType};
use crate::launch::{self, GpuKernel};
use crate::layout::{narrow_indices, sliced_ell_from_csr};
use crate::plan::{self, BYTES_MODEL};
use crate::reference::{rel_error, spmv_ref, tolerance};
use crate::spmv::{download, nan};
use crate::GpuError;

/// What to benchmark and how.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchOptions {
    /// Timed launches per kernel (at least 1; 20 or more for the median to
    /// mean something).
    pub reps: usize,
    /// Untimed launches before the checked and timed runs (at least).
    pub warmup: usize,
    /// Untimed launches continue until this much wall time has passed, so
    /// that the SM clock has left its idle state before timing: a 5 µs
    /// kernel repeated 20 times does not raise it, which made the first
    /// corpus run's small matrices noisy (triton's `do_bench` warms up for
    /// 25 ms the same way).
    pub warmup_ms: f64,
    /// Formats to convert to and run (every kernel of each, see
    /// [`GpuKernel::for_format`]).
    pub formats: Vec<FormatKind>,
    /// Also time cuSPARSE: CSR ALG1/ALG2 with `csr`, COO ALG1/ALG2 with
    /// `coo`, sliced ELL with `sell`.
    pub include_cusparse: bool,
    /// Seed of the random `x`.
    pub seed: u64,
    /// SELL slice height C.
    pub sell_slice: usize,
    /// SELL sorting window sigma (`None`: the format's default, 32 * C).
    pub sell_sigma: Option<usize>,
    /// Slice size of cuSPARSE's sliced ELL.
    pub cusparse_slice: usize,
    /// HYB ELL width.
    pub hyb_width: HybWidth,
    /// ELL, and a SELL layout, is skipped (listed in `skipped`) when its
    /// padded arrays would exceed this many bytes.
    pub ell_max_bytes: u64,
    /// Bytes of each buffer of the device-to-device copy measurement.
    pub copy_bytes: usize,
    /// Layouts to time instead of one per entry of `formats` (a parameter
    /// sweep); empty: `formats` with the parameters above.
    pub configs: Vec<BenchConfig>,
    /// Time `y = Aᵀ x` instead of `y = A x`: every layout is built from the
    /// CSR of `Aᵀ` (the arrays of `A`'s CSC, so the `csr` layout runs the
    /// CSR kernels on them), `x` has `nrows` entries, and the cuSPARSE
    /// baselines are CSR ALG1/ALG2 with `CUSPARSE_OPERATION_TRANSPOSE` on
    /// `A`'s own CSR (no COO or sliced-ELL baseline).
    pub transpose: bool,
    /// Width of the offset arrays ([`Offsets::Auto`]: 32-bit where the
    /// matrix fits; [`Offsets::Wide`]: 64-bit for every layout and for
    /// cuSPARSE's index type). Each result's `params.offset_bits` (ours)
    /// or `params.index_bits` (cuSPARSE) says which ran.
    pub offsets: Offsets,
}

/// One layout to time: a format with its conversion parameters, and the
/// [`Layout`] it is in a sweep (copied into [`KernelResult::config`]).
#[derive(Debug, Clone, PartialEq)]
pub struct BenchConfig {
    /// Format.
    pub kind: FormatKind,
    /// ELL width, HYB width, SELL C and σ (the others are ignored).
    pub params: ConvertParams,
    /// The layout of a sweep; `None` for a format at the bench's own
    /// parameters.
    pub layout: Option<Layout>,
}

/// The layouts of a sweep: every candidate of `features` whose format is
/// in `formats` (what `sparsetool bench --sweep` times).
#[must_use]
pub fn sweep_configs(
    features: &sparsetool_analyze::Features,
    formats: &[FormatKind],
) -> Vec<BenchConfig> {
    features
        .candidates
        .iter()
        .filter(|c| formats.contains(&c.layout.kind()))
        .map(|c| BenchConfig::from(c.layout))
        .collect()
}

impl From<Layout> for BenchConfig {
    fn from(layout: Layout) -> Self {
        Self {
            kind: layout.kind(),
            params: ConvertParams::for_layout(&layout),
            layout: Some(layout),
        }
    }
}

impl BenchOptions {
    /// The layouts to time: [`BenchOptions::configs`], or without them one
    /// per format of [`BenchOptions::formats`] (each once) at the
    /// parameters of the options.
    #[must_use]
    pub fn layouts(&self) -> Vec<BenchConfig> {
        if !self.configs.is_empty() {
            return self.configs.clone();
        }
        let mut seen = BTreeSet::new();
        self.formats
            .iter()
            .filter(|&&k| seen.insert(k))
            .map(|&kind| BenchConfig {
                kind,
                params: ConvertParams {
                    hyb_width: self.hyb_width,
                    slice: self.sell_slice,
                    sigma: self.sell_sigma,
                    ..ConvertParams::default()
                },
                layout: None,
            })
            .collect()
    }
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            reps: 20,
            warmup: 3,
            warmup_ms: 25.0,
            formats: FormatKind::ALL.to_vec(),
            include_cusparse: true,
            seed: 0x5eed,
            sell_slice: Sell::<f64, i32>::DEFAULT_SLICE_HEIGHT,
            sell_sigma: None,
            cusparse_slice: 32,
            hyb_width: HybWidth::Auto,
            ell_max_bytes: 16 << 30,
            copy_bytes: 1 << 30,
            configs: Vec::new(),
            transpose: false,
            offsets: Offsets::Auto,
        }
    }
}

/// Something that runs `y = A x` into a device vector it can hand out.
trait Runner {
    fn run(&mut self, ctx: &GpuContext) -> Result<(), GpuError>;
    fn y(&mut self) -> &mut DevVals;
}

struct Ours<'a> {
    p: launch::Prepared<'a>,
    x: &'a DevVals,
    y: DevVals,
}

impl Runner for Ours<'_> {
    fn run(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        self.p.enqueue(ctx.stream(), self.x, &mut self.y)
    }
    fn y(&mut self) -> &mut DevVals {
        &mut self.y
    }
}

impl Runner for cusparse::Prepared<'_> {
    fn run(&mut self, ctx: &GpuContext) -> Result<(), GpuError> {
        self.enqueue(ctx)
    }
    fn y(&mut self) -> &mut DevVals {
        &mut self.y_out
    }
}

/// Each timed interval covers at least this much GPU time: a kernel faster
/// than this is launched several times back to back per interval (its
/// [`KernelResult::batch`]) and the interval divided by the count, so that the
/// ~1 µs resolution and cost of an event pair do not blur a 5 µs kernel.
pub const MIN_INTERVAL_MS: f64 = 0.1;
/// The most launches queued behind one delay kernel.
const MAX_QUEUED: usize = 2000;

/// What the warm-up learnt about a runner.
#[derive(Debug, Clone, Copy)]
struct WarmUp {
    /// Host time to enqueue one launch, ms.
    host_ms: f64,
    /// Wall time per launch including the synchronisations, ms (an upper
    /// bound of the GPU time).
    wall_ms: f64,
}

/// Untimed launches in groups of at least 8 until `opts.warmup` launches and
/// `opts.warmup_ms` of wall time are reached.
fn warm_up(
    ctx: &GpuContext,
    opts: &BenchOptions,
    mut run: impl FnMut() -> Result<(), GpuError>,
) -> Result<WarmUp, GpuError> {
    let start = std::time::Instant::now();
    let group = opts.warmup.max(8);
    let mut launched = 0usize;
    let mut host = 0.0f64;
    loop {
        let t = std::time::Instant::now();
        for _ in 0..group {
            run()?;
        }
        host += t.elapsed().as_secs_f64() * 1e3;
        launched += group;
        ctx.synchronize()?;
        if launched >= opts.warmup && start.elapsed().as_secs_f64() * 1e3 >= opts.warmup_ms {
            break;
        }
    }
    Ok(WarmUp {
        host_ms: host / launched as f64,
        wall_ms: start.elapsed().as_secs_f64() * 1e3 / launched as f64,
    })
}

/// Launches per timed interval for a kernel taking about `per_launch_ms`:
/// enough for [`MIN_INTERVAL_MS`], at most [`MAX_QUEUED`] / `reps`.
fn batch_for(per_launch_ms: f64, reps: usize) -> usize {
    let cap = (MAX_QUEUED / reps.max(1)).max(1);
    if per_launch_ms <= 0.0 || !per_launch_ms.is_finite() {
        return cap;
    }
    ((MIN_INTERVAL_MS / per_launch_ms).ceil() as usize).clamp(1, cap)
}

/// Enqueues the delay kernel: the GPU waits `ms` before the next command.
fn enqueue_delay(ctx: &GpuContext, ms: f64) -> Result<(), GpuError> {
    let f = ctx.function(KernelId::Util, "bench_delay")?;
    let ns = (ms * 1e6) as u64;
    let mut b = ctx.stream().launch_builder(&f);
    b.arg(&ns);
    let cfg = launch::cfg(plan::LaunchDims { grid: 1, block: 32 });
    // SAFETY: bench_delay takes one unsigned long long.
    unsafe { b.launch(cfg) }?;
    Ok(())
}

/// Times `reps` intervals of `batch` back-to-back runs each, one event between
/// consecutive intervals, and returns the time per run of each interval (ms).
/// The whole sequence is queued behind a delay kernel long enough (from the
/// measured host cost of a launch, `host_ms`) for the host to enqueue it all,
/// so no interval contains a host gap.
fn time_reps(
    ctx: &GpuContext,
    reps: usize,
    batch: usize,
    host_ms: f64,
    mut run: impl FnMut() -> Result<(), GpuError>,
) -> Result<Vec<f64>, GpuError> {
    let reps = reps.max(1);
    let batch = batch.max(1);
    let events: Vec<CudaEvent> = (0..=reps)
        .map(|_| ctx.cuda().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)))
        .collect::<Result<_, _>>()?;
    let queue_ms = (reps * batch) as f64 * host_ms.max(0.002) * 1.5 + 0.05 * reps as f64;
    enqueue_delay(ctx, queue_ms.clamp(0.05, 50.0))?;
    events[0].record(ctx.stream())?;
    for e in &events[1..] {
        for _ in 0..batch {
            run()?;
        }
        e.record(ctx.stream())?;
    }
    ctx.synchronize()?;
    events
        .windows(2)
        .map(|w| Ok(f64::from(w[0].elapsed_ms(&w[1])?) / batch as f64))
        .collect()
}

/// Poisons `y`, runs once, and returns the relative error.
fn checked_run<T: Scalar, R: Runner>(
    ctx: &GpuContext,
    r: &mut R,
    y_ref: &[f64],
) -> Result<f64, GpuError> {
    let y = r.y();
    // y_ref holds two parts per complex value: size the poison by y itself
    let poison = vec![nan::<T>(); y.len];
    if y.len > 0 {
        ctx.stream()
            .memcpy_htod(bytemuck::cast_slice::<T, u8>(&poison), &mut y.buf)?;
    }
    r.run(ctx)?;
    ctx.synchronize()?;
    let out: Vec<T> = download(ctx, r.y())?;
    Ok(rel_error(&out, y_ref))
}

struct Check<'a> {
    y_ref: &'a [f64],
    tol: f64,
    nnz: usize,
    /// The x every runner reads: its L2 priority is reset before each.
    x: &'a DevVals,
}

/// Gives every L2 line of `x` the normal eviction priority (`bench_unpin`
/// in `util.cu`), undoing the evict-last hint of the f64 gathers of an
/// earlier kernel, so each timed kernel starts from the same L2 state.
fn unpin(ctx: &GpuContext, x: &DevVals) -> Result<(), GpuError> {
    let bytes = x.buf.len() as u64;
    let lines = bytes.div_ceil(128);
    let Some(dims) = plan::dims_for_threads(lines, plan::BLOCK) else {
        return Ok(());
    };
    let f = ctx.function(KernelId::Util, "bench_unpin")?;
    let lines = lines as i64;
    let mut b = ctx.stream().launch_builder(&f);
    b.arg(&x.buf).arg(&lines);
    let cfg = launch::cfg(dims);
    // SAFETY: bench_unpin takes a pointer and a line count; the lines
    // cover the buffer (cudaMalloc rounds allocations up to 256 bytes, so the
    // last line lies inside the allocation).
    unsafe { b.launch(cfg) }?;
    Ok(())
}

/// Launches slower than this (ms, from the warm-up) are timed only
/// [`SLOW_REPS`] times.
pub const SLOW_KERNEL_MS: f64 = 20.0;
/// Timed launches of a kernel slower than [`SLOW_KERNEL_MS`].
pub const SLOW_REPS: usize = 5;

#[allow(clippy::too_many_arguments)]
fn measure<T: Scalar, R: Runner>(
    ctx: &GpuContext,
    opts: &BenchOptions,
    r: &mut R,
    name: &str,
    format: FormatKind,
    baseline: bool,
    params: Map<String, Value>,
    traffic: Traffic,
    chk: &Check<'_>,
) -> Result<KernelResult, GpuError> {
    unpin(ctx, chk.x)?;
    let w = warm_up(ctx, opts, || r.run(ctx))?;
    // A layout hundreds of times slower than the rest (a thread-per-row
    // kernel on a matrix with a dense row) gets SLOW_REPS timed launches:
    // its median still ranks it, and a sweep does not spend minutes on it.
    let reps = if w.wall_ms > SLOW_KERNEL_MS {
        opts.reps.min(SLOW_REPS)
    } else {
        opts.reps
    };
    let batch = batch_for(w.wall_ms, reps);
    let e1 = checked_run::<T, R>(ctx, r, chk.y_ref)?;
    let times = time_reps(ctx, reps, batch, w.host_ms, || r.run(ctx))?;
    let e2 = checked_run::<T, R>(ctx, r, chk.y_ref)?;
    let rel = if e1.is_nan() || e2.is_nan() {
        f64::INFINITY
    } else {
        e1.max(e2)
    };
    let (median_ms, min_ms) = median_min(&times).unwrap_or((0.0, 0.0));
    Ok(KernelResult {
        kernel: name.to_string(),
        format: format.name().to_string(),
        baseline,
        params,
        median_ms,
        min_ms,
        gbps: traffic.gbps(median_ms),
        gflops: gflops(chk.nnz, median_ms),
        bytes: traffic.total(),
        rel_error: rel,
        ok: rel <= chk.tol,
        config: None,
        batch,
    })
}

/// The x-gather floor (ms): the faster median of the two gather-only
/// kernels of `util.cu` (four entries a thread with one vector load of
/// indices, and one entry a thread), which read the column indices of `a` in
/// CSR order and x at them, nothing else.
fn gather_floor<T: Scalar, I: Index>(
    ctx: &GpuContext,
    opts: &BenchOptions,
    a: &Csr<T, I>,
    x: &DevVals,
    dtype: ValueType,
) -> Result<Option<f64>, GpuError> {
    let nnz = a.nnz();
    if nnz == 0 {
        return Ok(None);
    }
    let stream = ctx.stream();
    let cols = upload_idx(stream, "col_idx", a.col_idx())?;
    let mut sink = upload_vals(stream, &[T::zero()])?;
    let nnz_arg = nnz as i64;
    let mut best: Option<f64> = None;
    for (variant, per_thread) in [(None, 4u64), (Some("x1"), 1)] {
        let Some(dims) = plan::dims_for_threads((nnz as u64).div_ceil(per_thread), plan::BLOCK)
        else {
            continue;
        };
        let f = ctx.function(KernelId::Util, &kernel_name("gather_floor", dtype, variant))?;
        let cfg = launch::cfg(dims);
        unpin(ctx, x)?;
        let mut run = || -> Result<(), GpuError> {
            let mut b = stream.launch_builder(&f);
            b.arg(&nnz_arg)
                .arg(&cols.buf)
                .arg(&x.buf)
                .arg(&mut sink.buf);
            // SAFETY: argument list matches gather_floor_<t>[_x1]; the
            // threads cover the entries, column indices validated by the Csr.
            unsafe { b.launch(cfg) }?;
            Ok(())
        };
        let w = warm_up(ctx, opts, &mut run)?;
        let batch = batch_for(w.wall_ms, opts.reps);
        let times = time_reps(ctx, opts.reps, batch, w.host_ms, &mut run)?;
        if let Some((m, _)) = median_min(&times) {
            best = Some(best.map_or(m, |b| b.min(m)));
        }
    }
    Ok(best)
}

/// Device-to-device copy bandwidth (bytes read + written), GB/s, median of
/// `reps` copies of `bytes` bytes (what `bench` reports as `copy_gbps`).
///
/// # Errors
/// A CUDA error (allocation, copy).
pub fn copy_bandwidth(ctx: &GpuContext, bytes: usize, reps: usize) -> Result<f64, GpuError> {
    let bytes = bytes.max(1 << 20);
    let stream = ctx.stream();
    let src = stream.alloc_zeros::<u8>(bytes)?;
    let mut dst = stream.alloc_zeros::<u8>(bytes)?;
    for _ in 0..2 {
        stream.memcpy_dtod(&src, &mut dst)?;
    }
    ctx.synchronize()?;
    let times = time_reps(ctx, reps.max(5), 1, 0.01, || {
        Ok(stream.memcpy_dtod(&src, &mut dst)?)
    })?;
    let (median, _) = median_min(&times).unwrap_or((0.0, 0.0));
    Ok(if median > 0.0 {
        2.0 * bytes as f64 / (median * 1e-3) / 1e9
    } else {
        0.0
    })
}

/// Our kernels for a format, with report names: every kernel of the format
/// (the column-panel CSR kernel only where `x`, `ncols` values of
/// `value_bytes`, is cut into panels: else it is `csr-merge`), plus the CSR
/// vector kernel at half and twice the planned lanes (named
/// `csr-vector-l<lanes>`), since the best sub-warp width is a guess, and
/// ELL at every lane count of [`plan::ELL_LANES`] (`ell-l<lanes>`; the
/// bench skips the one `ell` ran with).
fn kernels_for(
    kind: FormatKind,
    nrows: usize,
    ncols: usize,
    nnz: usize,
    value_bytes: usize,
) -> Vec<(GpuKernel, String)> {
    let panels = plan::csr_panels(ncols, value_bytes);
    let mut v: Vec<(GpuKernel, String)> = GpuKernel::for_format(kind)
        .into_iter()
        .filter(|k| !matches!(k, GpuKernel::CsrPanels(_)) || panels > 1)
        .map(|k| (k, k.name().to_string()))
        .collect();
    if kind == FormatKind::Ell {
        // every lane count (the planned one, timed as `ell`, is skipped)
        for l in plan::ELL_LANES {
            v.push((GpuKernel::Ell(Some(l)), format!("ell-l{l}")));
        }
    }
    if kind == FormatKind::Csr {
        let lanes = plan::csr_vector_lanes(nrows, nnz);
        for l in [lanes / 2, lanes * 2] {
            if plan::CSR_VECTOR_LANES.contains(&l) {
                v.push((GpuKernel::CsrVector(Some(l)), format!("csr-vector-l{l}")));
            }
        }
    }
    v
}

/// Whether `a`'s entries need 64-bit offsets on the device.
fn nnz_needs_wide<T: Scalar, I: Index>(a: &Csr<T, I>) -> bool {
    Offsets::Auto.wide_for(a.nnz() as u64)
}

/// The matrix a bench multiplies: `a`, or with `transpose` the CSR of `Aᵀ`
/// (the arrays of `a`'s CSC).
pub(crate) fn operand<T: Scalar, I: Index>(
    a: &Csr<T, I>,
    transpose: bool,
) -> std::borrow::Cow<'_, Csr<T, I>> {
    if transpose {
        std::borrow::Cow::Owned(sparsetool_convert::transpose(a))
    } else {
        std::borrow::Cow::Borrowed(a)
    }
}

fn convert_err(format: &'static str, e: impl std::fmt::Display) -> GpuError {
    GpuError::Convert {
        format,
        message: e.to_string(),
    }
}

/// Benchmarks every kernel of every requested format, and the cuSPARSE
/// baselines, on `a` (converted on the CPU to each format, uploaded once per
/// format, freed before the next); `y = Aᵀ x` with
/// [`BenchOptions::transpose`].
///
/// # Errors
/// [`GpuError::IndexOverflow`] for rows or columns beyond 32-bit indices
/// (entry counts beyond them get 64-bit offsets), conversion errors other than ELL's
/// fill guard (ELL is then listed in `skipped`), and driver, compile or
/// cuSPARSE errors. A kernel whose result is wrong is reported with
/// `ok: false`, not as an error.
pub fn bench<T: Scalar, I: Index>(
    ctx: &GpuContext,
    a: &Csr<T, I>,
    opts: &BenchOptions,
) -> Result<BenchReport, GpuError> {
    let dtype = ValueType::of::<T>();
    // With `transpose`, `a` below is the CSR of Aᵀ (every layout, the x,
    // the reference); `orig` stays A, for cuSPARSE's transposed SpMV.
    let orig = a;
    let at = operand(orig, opts.transpose);
    let a: &Csr<T, I> = &at;
    ctx.load_all()?;
    if opts.offsets == Offsets::Wide || nnz_needs_wide(a) {
        ctx.load_all_width(true)?;
    }
    let copy_gbps = copy_bandwidth(ctx, opts.copy_bytes, opts.reps)?;
    let (nrows, ncols, nnz) = (a.nrows(), a.ncols(), a.nnz());
    let max_row_len = a.max_row_len();
    let x: Vec<T> = random_x(ncols, opts.seed);
    let y_ref = spmv_ref(a, &x);
    let tol = tolerance(dtype.precision, max_row_len);
    let stream = ctx.stream();
    let xd = upload_vals(stream, &x)?;
    let chk = Check {
        y_ref: &y_ref,
        tol,
        nnz,
        x: &xd,
    };
    let gather_floor_ms = gather_floor(ctx, opts, a, &xd, dtype)?;
    let handle = if opts.include_cusparse && nnz > 0 {
        Some(Handle::new(ctx)?)
    } else {
        None
    };
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    let new_y = || upload_vals(stream, &vec![nan::<T>(); nrows]);

    let configs = opts.layouts();
    // cuSPARSE runs once per format: CSR and COO with the first config of
    // theirs, sliced ELL (its own unsorted layout) with the SELL config of
    // the same C and sigma = 1 when the sweep has one, else the first.
    let cusparse_sell_at = configs
        .iter()
        .position(|c| {
            c.kind == FormatKind::Sell
                && c.params.slice == opts.cusparse_slice
                && c.params.sigma == Some(1)
        })
        .or_else(|| configs.iter().position(|c| c.kind == FormatKind::Sell));
    let mut cusparse_done = BTreeSet::new();
    let mut row_lengths: Option<Vec<u32>> = None;
    // A padded layout (ELL, SELL) beyond `ell_max_bytes` is skipped with
    // the reason instead of built.
    let oversized = |kernel: &str, label: &str, slots: u64| {
        let bytes = slots * (4 + dtype.size() as u64);
        (bytes > opts.ell_max_bytes).then(|| Skipped {
            kernel: kernel.into(),
            reason: format!(
                "{label} would store {slots} slots ({:.1}x the {nnz} entries, {bytes} bytes)",
                slots as f64 / nnz.max(1) as f64
            ),
        })
    };

    // Progress: layouts timed (a UI polls the counter).
    let progress = &sparsetool_formats::progress::BENCH;
    progress.start(configs.len() as u64);
    for (ci, cfg) in configs.iter().enumerate() {
        progress.add(1);
        let kind = cfg.kind;
        let m = match kind {
            FormatKind::Csr => DeviceMatrix::Csr(upload_csr(stream, a, opts.offsets)?),
            FormatKind::Coo => DeviceMatrix::Coo(upload_csr_as_coo(stream, a)?),
            FormatKind::Ell => {
                let width = cfg.params.ell_width.unwrap_or(max_row_len);
                if let Some(s) = oversized("ell", "ELL", nrows as u64 * width as u64) {
                    skipped.push(s);
                    continue;
                }
                let e = sparsetool_convert::csr_to_ell(a, cfg.params.ell_width, true)
                    .map_err(|e| convert_err("ell", e))?;
                DeviceMatrix::Ell(upload_ell(stream, &e)?)
            }
            FormatKind::Hyb => {
                let h = sparsetool_convert::csr_to_hyb(a, cfg.params.hyb_width)
                    .map_err(|e| convert_err("hyb", e))?;
                DeviceMatrix::Hyb(
                    upload_ell(stream, h.ell())?,
                    crate::device_matrix::upload_coo(stream, h.coo())?,
                )
            }
            FormatKind::Jds => {
                let j = sparsetool_convert::csr_to_jds(a);
                DeviceMatrix::Jds(upload_jds(stream, &j, opts.offsets)?)
            }
            FormatKind::Csc => DeviceMatrix::Coo(upload_csc_as_coo(
                stream,
                &sparsetool_convert::csr_to_csc(a),
            )?),
            FormatKind::Sell => {
                let c = cfg.params.slice;
                let sigma = cfg
                    .params
                    .sigma
                    .unwrap_or_else(|| Sell::<T, I>::default_sigma(c));
                // The same storage guard as ELL's: a slice holding a row of
                // millions of entries pads every one of its rows to it
                // (uncapped power laws), and beyond 16 GiB of slots (2^31
                // slots for 4-byte values) the layout is skipped, not the
                // bench failed.
                let lengths = row_lengths.get_or_insert_with(|| {
                    (0..nrows)
                        .map(|i| u32::try_from(a.row_len(i)).unwrap_or(u32::MAX))
                        .collect::<Vec<u32>>()
                });
                let label = cfg.layout.map_or_else(|| "sell".into(), |l| l.to_string());
                let slots = sparsetool_analyze::sell_slots(lengths, c, sigma);
                if let Some(s) = oversized("sell", &label, slots) {
                    skipped.push(s);
                    continue;
                }
                let s = sparsetool_convert::csr_to_sell(a, c, sigma)
                    .map_err(|e| convert_err("sell", e))?;
                DeviceMatrix::Sell(upload_sell(stream, &s, opts.offsets)?)
            }
        };
        let value_bytes = dtype.size() as u64;
        let traffic = Traffic::new(
            m.matrix_bytes(dtype),
            nrows as u64,
            ncols as u64,
            value_bytes,
        );
        // the lanes `ell` ran with: its `ell-l<lanes>` twin is not timed again
        let mut planned_lanes = None;
        for (kernel, name) in kernels_for(kind, nrows, ncols, nnz, dtype.size()) {
            if let GpuKernel::Ell(Some(l)) = kernel {
                if planned_lanes == Some(l) {
                    continue;
                }
            }
            let p = match launch::prepare(ctx, kernel, &m, dtype) {
                Ok(p) => p,
                // the column panels are a second copy of the matrix: where
                // it does not fit, that kernel is skipped, not the bench;
                // so are the 16-bit kernels where their offsets do not fit
                Err(e)
                    if matches!(kernel, GpuKernel::CsrPanels(_))
                        || matches!(e, GpuError::NotApplicable { .. }) =>
                {
                    // in a sweep, the layout it was refused on
                    let at = cfg.layout.map(|l| format!("{l}: ")).unwrap_or_default();
                    skipped.push(Skipped {
                        kernel: name,
                        reason: format!("{at}{e}"),
                    });
                    continue;
                }
                Err(e) => return Err(e),
            };
            let params = p.params.clone();
            if kernel == GpuKernel::Ell(None) {
                planned_lanes = params
                    .get("lanes")
                    .and_then(Value::as_u64)
                    .and_then(|l| u32::try_from(l).ok());
            }
            let traffic = match kernel {
                // The binned kernel also reads its row list (4 bytes a row).
                GpuKernel::CsrBinned => Traffic {
                    matrix: traffic.matrix + 4 * nrows as u64,
                    ..traffic
                },
                // Each panel after the first reads its row pointers and
                // reads and writes y once more.
                GpuKernel::CsrPanels(_) => {
                    let more = u64::from(plan::csr_panels(ncols, dtype.size()).max(1) - 1);
                    let ofs = if m.wide() { 8 } else { 4 };
                    Traffic {
                        matrix: traffic.matrix
                            + more * (ofs * (nrows as u64 + 1) + 2 * value_bytes * nrows as u64),
                        ..traffic
                    }
                }
                // the main kernel's columns as 16-bit pairs, a base column
                // and a start a slice, instead of its 32-bit indices
                GpuKernel::SellU16 | GpuKernel::SellU16Batched => match &m {
                    DeviceMatrix::Sell(s) => {
                        let set = s.u16.lock().unwrap_or_else(PoisonError::into_inner);
                        match set.as_ref() {
                            Some(Ok(n)) => Traffic {
                                matrix: (traffic.matrix + n.bytes).saturating_sub(4 * n.main_slots),
                                ..traffic
                            },
                            _ => traffic,
                        }
                    }
                    _ => traffic,
                },
                // the columns as 16-bit pairs (and the 32-bit indices where
                // a group's rows do not fit them), a base column per 32 rows
                // (JDS: sorted rows, and a start per pair of diagonals)
                GpuKernel::EllU16
                | GpuKernel::HybU16
                | GpuKernel::JdsU16
                | GpuKernel::JdsU16Batched => Traffic {
                    matrix: traffic
                        .matrix
                        .saturating_add_signed(m.u16_extra().unwrap_or(0)),
                    ..traffic
                },
                _ => traffic,
            };
            let mut r = Ours {
                p,
                x: &xd,
                y: new_y()?,
            };
            let mut res =
                measure::<T, _>(ctx, opts, &mut r, &name, kind, false, params, traffic, &chk)?;
            res.config = cfg.layout;
            results.push(res);
        }
        let Some(handle) = handle.as_ref() else {
            continue;
        };
        let algs: &[CusparseAlg] = match kind {
            FormatKind::Csr if cusparse_done.insert(kind) => {
                &[CusparseAlg::CsrAlg1, CusparseAlg::CsrAlg2]
            }
            FormatKind::Coo if !opts.transpose && cusparse_done.insert(kind) => {
                &[CusparseAlg::CooAlg1, CusparseAlg::CooAlg2]
            }
            FormatKind::Sell if !opts.transpose && cusparse_sell_at == Some(ci) => {
                &[CusparseAlg::SellAlg1]
            }
            _ => &[],
        };
        // cuSPARSE's sliced ELL is its own layout: C = cusparse_slice, sigma = 1.
        let cusparse_layout = match cfg.layout {
            Some(Layout::Sell { .. }) => Some(Layout::Sell {
                slice: opts.cusparse_slice as u64,
                sigma: 1,
            }),
            other => other,
        };
        let sliced;
        // cuSPARSE's own matrix where it differs from ours: its sliced ELL
        // (unsorted), or with `transpose` A's own CSR, multiplied with the
        // transpose operation (`nrows`/`ncols` are Aᵀ's: y's and x's lengths).
        let (mat, traffic) = if !algs.is_empty() && (kind == FormatKind::Sell || opts.transpose) {
            drop(m);
            sliced = if kind == FormatKind::Sell {
                let rp = narrow_indices("row_ptr", a.row_ptr());
                let ci = narrow_indices("col_idx", a.col_idx());
                match (rp, ci) {
                    (Ok(rp), Ok(ci)) => {
                        let host = sliced_ell_from_csr(&rp, &ci, a.values(), opts.cusparse_slice)?;
                        DeviceMatrix::Sell(upload_sliced_ell(stream, &host, ncols, nnz)?)
                    }
                    (Err(e), _) | (_, Err(e)) => {
                        skipped.push(Skipped {
                            kernel: CusparseAlg::SellAlg1.name().into(),
                            reason: e.to_string(),
                        });
                        continue;
                    }
                }
            } else {
                DeviceMatrix::Csr(upload_csr(stream, orig, opts.offsets)?)
            };
            let t = Traffic::new(
                sliced.matrix_bytes(dtype),
                nrows as u64,
                ncols as u64,
                value_bytes,
            );
            (&sliced, t)
        } else {
            sliced = m;
            (&sliced, traffic)
        };
        for &alg in algs {
            let prepared =
                cusparse::prepare(ctx, handle, alg, mat, dtype, opts.transpose, &xd, new_y()?);
            let mut p = match prepared {
                Ok(p) => p,
                Err(e) => {
                    skipped.push(Skipped {
                        kernel: alg.name().into(),
                        reason: e.to_string(),
                    });
                    continue;
                }
            };
            let params = p.params.clone();
            // a cuSPARSE status error is recorded, not fatal; driver errors
            // (the context may be unusable) still end the bench
            match measure::<T, _>(
                ctx,
                opts,
                &mut p,
                alg.name(),
                kind,
                true,
                params,
                traffic,
                &chk,
            ) {
                Ok(mut r) => {
                    r.config = cusparse_layout;
                    results.push(r);
                }
                Err(e @ GpuError::Cusparse { .. }) => {
                    skipped.push(Skipped {
                        kernel: alg.name().into(),
                        reason: e.to_string(),
                    });
                }
                Err(e) => return Err(e),
            }
        }
    }

    let (major, minor) = ctx.compute_capability();
    Ok(BenchReport {
        device: ctx.device_name().to_string(),
        driver: ctx.driver(),
        compute_capability: format!("{major}.{minor}"),
        dtype: dtype.name().to_string(),
        copy_gbps,
        gather_floor_ms,
        matrix: MatrixInfo {
            nrows,
            ncols,
            nnz,
            max_row_len,
        },
        transpose: opts.transpose,
        bytes_model: BYTES_MODEL.to_string(),
        tolerance: tol,
        reps: opts.reps.max(1),
        warmup_ms: opts.warmup_ms,
        results,
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_lists() {
        let names = |nrows, nnz| -> Vec<String> {
            kernels_for(FormatKind::Csr, nrows, nrows, nnz, 8)
                .into_iter()
                .map(|k| k.1)
                .collect()
        };
        let ours = [
            "csr-scalar",
            "csr-vector",
            "csr-balanced",
            "csr-merge",
            "csr-binned",
        ];
        assert_eq!(names(100, 500)[..5], ours);
        assert_eq!(names(100, 500)[5..], ["csr-vector-l4", "csr-vector-l16"]);
        assert_eq!(names(1, 100)[..5], ours);
        assert_eq!(names(1, 100)[5..], ["csr-vector-l16"]);
        // x of 33.6 MB in f64: the column-panel kernel too
        let wide: Vec<String> = kernels_for(FormatKind::Csr, 4_200_000, 4_200_000, 1 << 26, 8)
            .into_iter()
            .map(|k| k.1)
            .collect();
        assert_eq!(wide[5], "csr-panels");
        let hyb: Vec<String> = kernels_for(FormatKind::Hyb, 1, 1, 1, 8)
            .into_iter()
            .map(|k| k.1)
            .collect();
        assert_eq!(hyb, ["hyb", "hyb-u16"]);
        let ell: Vec<String> = kernels_for(FormatKind::Ell, 1, 1, 1, 8)
            .into_iter()
            .map(|k| k.1)
            .collect();
        assert_eq!(ell, ["ell", "ell-u16", "ell-l1", "ell-l2", "ell-l4"]);
        let sell: Vec<String> = kernels_for(FormatKind::Sell, 1, 1, 1, 8)
            .into_iter()
            .map(|k| k.1)
            .collect();
        assert_eq!(
            sell,
            ["sell", "sell-batched", "sell-u16", "sell-u16-batched"]
        );
        let jds: Vec<String> = kernels_for(FormatKind::Jds, 1, 1, 1, 8)
            .into_iter()
            .map(|k| k.1)
            .collect();
        assert_eq!(jds, ["jds", "jds-batched", "jds-u16", "jds-u16-batched"]);
        assert_eq!(kernels_for(FormatKind::Coo, 1, 1, 1, 8).len(), 2);
        let csc: Vec<String> = kernels_for(FormatKind::Csc, 1, 1, 1, 8)
            .into_iter()
            .map(|k| k.1)
            .collect();
        assert_eq!(csc, ["csc-scatter"]);
    }
}
