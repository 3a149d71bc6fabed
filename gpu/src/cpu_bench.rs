//! The CPU benchmark behind `sparsetool bench --device cpu`: every layout
//! converted on the CPU and multiplied with rayon, reported with the fields,
//! the `x`, the median and the byte model of the GPU bench.

use std::time::Instant;

use serde_json::{Map, Value};
use sparsetool_analyze::bench::{gflops, median_min, random_x};
use sparsetool_analyze::{stored_bytes, Sizes, Stored, Traffic};
use sparsetool_convert::{from_csr, AnyMatrix};
use sparsetool_formats::{Csr, FormatKind, Index, Scalar};

use crate::bench::{BenchOptions, BenchReport, KernelResult, MatrixInfo, Skipped};
use crate::reference::{rel_error, spmv_ref, tolerance};
use crate::GpuError;

/// What the CPU bench's `gbps` counts.
pub const CPU_BYTES_MODEL: &str = "gbps counts every array of the format as stored (padding \
     included) read once, x read once and y written once, divided by the median time; \
     copy_gbps is a 256 MiB memcpy, bytes read plus written.";

/// Two untimed runs of `run`, then `reps` timed ones (ms each).
fn time_runs(reps: usize, mut run: impl FnMut()) -> Vec<f64> {
    for _ in 0..2 {
        run();
    }
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            run();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect()
}

/// Times the CPU SpMV (rayon) of every layout of `opts`
/// ([`BenchOptions::layouts`]): two untimed runs, then `opts.reps` timed
/// ones; `x` is [`random_x`] of `opts.seed`, as on the GPU. A layout that
/// cannot be built is listed in `skipped`.
///
/// With [`BenchOptions::transpose`], `y = Aᵀ x`: every layout is built from
/// the CSR of `Aᵀ` (the `csr` layout is then the gather over `A`'s CSC
/// arrays), and the baseline `cpu-csr-scatter` is
/// [`Csr::spmv_transpose`] on `A`'s own CSR.
///
/// # Errors
/// Conversion errors of a requested layout (real and complex values are
/// both supported).
pub fn cpu_bench<T: Scalar, I: Index>(
    csr: &Csr<T, I>,
    opts: &BenchOptions,
) -> Result<BenchReport, GpuError> {
    let dtype = sparsetool_formats::Precision::of::<T>();
    let orig = csr;
    let at = crate::bench::operand(orig, opts.transpose);
    let csr: &Csr<T, I> = &at;
    let reps = opts.reps.max(1);
    let x: Vec<T> = random_x(csr.ncols(), opts.seed);
    let y_ref = spmv_ref(csr, &x);
    let tol = tolerance(dtype, csr.max_row_len());
    // One result: `run` (which writes y) timed, its y checked.
    let timed = |kernel: String,
                 f: FormatKind,
                 baseline: bool,
                 params: Map<String, Value>,
                 matrix_bytes: u64,
                 run: &mut dyn FnMut(&mut [T]),
                 config| {
        let mut y = vec![T::zero(); csr.nrows()];
        let times = time_runs(reps, || run(&mut y));
        let err = rel_error(&y, &y_ref);
        let (median, min) = median_min(&times).unwrap_or((0.0, 0.0));
        let traffic = Traffic::new(
            matrix_bytes,
            csr.nrows() as u64,
            csr.ncols() as u64,
            std::mem::size_of::<T>() as u64,
        );
        KernelResult {
            kernel,
            format: f.name().to_string(),
            baseline,
            params,
            median_ms: median,
            min_ms: min,
            gbps: traffic.gbps(median),
            gflops: gflops(csr.nnz(), median),
            bytes: traffic.total(),
            rel_error: err,
            ok: err <= tol,
            config,
            batch: 1,
        }
    };
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    // Progress: layouts timed (a UI polls the counter).
    let layouts = opts.layouts();
    let progress = &sparsetool_formats::progress::BENCH;
    progress.start(layouts.len() as u64);
    for cfg in layouts {
        progress.add(1);
        let f = cfg.kind;
        let m = match from_csr(csr, f, &cfg.params) {
            Ok(m) => m,
            Err(e) => {
                skipped.push(Skipped {
                    kernel: cfg
                        .layout
                        .map_or_else(|| f.name().to_string(), |l| l.to_string()),
                    reason: e.to_string(),
                });
                continue;
            }
        };
        let bytes = stored_bytes(f, &stored(&m), Sizes::of::<T, I>());
        let kernel = format!("cpu-{}", f.name());
        let baseline = f == FormatKind::Csr && !opts.transpose;
        let run = &mut |y: &mut [T]| m.spmv(&x, y);
        results.push(timed(
            kernel,
            f,
            baseline,
            params_of(&m),
            bytes,
            run,
            cfg.layout,
        ));
    }
    if opts.transpose {
        let st = Stored {
            nrows: orig.nrows() as u64,
            ncols: orig.ncols() as u64,
            nnz: orig.nnz() as u64,
            ..Stored::default()
        };
        let bytes = stored_bytes(FormatKind::Csr, &st, Sizes::of::<T, I>());
        let run = &mut |y: &mut [T]| orig.spmv_transpose(&x, y);
        let kernel = "cpu-csr-scatter".to_string();
        results.push(timed(
            kernel,
            FormatKind::Csr,
            true,
            Map::new(),
            bytes,
            run,
            None,
        ));
    }
    Ok(BenchReport {
        device: match rayon::current_num_threads() {
            1 => "cpu (1 thread)".to_string(),
            n => format!("cpu ({n} threads)"),
        },
        driver: "-".to_string(),
        compute_capability: "-".to_string(),
        dtype: T::NAME.to_string(),
        copy_gbps: cpu_copy_gbps(),
        gather_floor_ms: None,
        matrix: MatrixInfo {
            nrows: csr.nrows(),
            ncols: csr.ncols(),
            nnz: csr.nnz(),
            max_row_len: csr.max_row_len(),
        },
        transpose: opts.transpose,
        bytes_model: CPU_BYTES_MODEL.to_string(),
        tolerance: tol,
        reps,
        warmup_ms: 0.0,
        results,
        skipped,
    })
}

/// The counts of a stored matrix that the byte model reads.
fn stored<T: Scalar, I: Index>(m: &AnyMatrix<T, I>) -> Stored {
    let n = |len: usize| len as u64;
    let base = Stored {
        nrows: n(m.nrows()),
        ncols: n(m.ncols()),
        nnz: n(m.nnz()),
        ..Stored::default()
    };
    match m {
        AnyMatrix::Coo(_) | AnyMatrix::Csr(_) | AnyMatrix::Csc(_) => base,
        AnyMatrix::Ell(a) => Stored {
            slots: n(a.values().len()),
            ..base
        },
        AnyMatrix::Hyb(a) => Stored {
            slots: n(a.ell().values().len()),
            tail: n(a.coo().nnz()),
            ..base
        },
        AnyMatrix::Jds(a) => Stored {
            diagonals: n(a.jd_ptr().len().saturating_sub(1)),
            ..base
        },
        AnyMatrix::Sell(a) => Stored {
            slots: n(a.values().len()),
            slices: n(a.slice_width().len()),
            ..base
        },
    }
}

fn params_of<T: Scalar, I: Index>(m: &AnyMatrix<T, I>) -> Map<String, Value> {
    let mut p = Map::new();
    match m {
        AnyMatrix::Ell(a) => {
            p.insert("ell_width".into(), a.width().into());
        }
        AnyMatrix::Hyb(a) => {
            p.insert("hyb_width".into(), a.ell().width().into());
            p.insert("coo_entries".into(), a.coo().nnz().into());
        }
        AnyMatrix::Sell(a) => {
            p.insert("slice".into(), a.slice_height().into());
            p.insert("sigma".into(), a.sigma().into());
        }
        AnyMatrix::Jds(a) => {
            p.insert("diagonals".into(), a.num_diagonals().into());
        }
        AnyMatrix::Coo(_) | AnyMatrix::Csr(_) | AnyMatrix::Csc(_) => {}
    }
    p
}

fn cpu_copy_gbps() -> f64 {
    let n = 32 << 20; // 32 Mi f64 = 256 MiB
    let src = vec![1.0f64; n];
    let mut dst = vec![0.0f64; n];
    dst.copy_from_slice(&src);
    let mut best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        dst.copy_from_slice(&src);
        best = best.min(t.elapsed().as_secs_f64());
    }
    std::hint::black_box(&dst);
    (2 * n * 8) as f64 / best / 1e9
}
