//! `sparsetool bench`: time SpMV in every format (GPU: also cuSPARSE) and
//! print one row per kernel, or the JSON object of `docs/cli.md`.

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Instant;

use anyhow::bail;
use serde_json::{Map, Value};
use sparsetool_analyze::{Features, RowLengths};
use sparsetool_convert::{convert, AnyMatrix, ConvertParams, HybWidth, ToCsr};
use sparsetool_formats::{Csr, FormatKind, Index, Scalar};
use sparsetool_gpu::plan::{gflops, Traffic};
use sparsetool_gpu::reference::{rel_error, spmv_ref, tolerance};
use sparsetool_gpu::{
    BenchConfig, BenchOptions, BenchReport, GpuContext, KernelResult, MatrixInfo, Skipped,
};

use crate::args::{BenchArgs, DType, DeviceArg};
use crate::commands::spmv::random_vector;
use crate::dispatch::with_types;
use crate::io::{load, probe};
use crate::EnvError;
use sparsetool_formats::io::Input;

/// Parses `--formats`.
pub fn parse_formats(s: &str) -> anyhow::Result<Vec<FormatKind>> {
    if s.eq_ignore_ascii_case("all") {
        return Ok(FormatKind::ALL.to_vec());
    }
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let k: FormatKind = part.parse()?;
        if !v.contains(&k) {
            v.push(k);
        }
    }
    if v.is_empty() {
        bail!("--formats needs at least one format (or `all`)");
    }
    Ok(v)
}

/// Runs `bench`.
pub fn run(a: &BenchArgs) -> anyhow::Result<()> {
    let formats = parse_formats(&a.formats)?;
    if a.reps == 0 {
        bail!("--reps must be at least 1");
    }
    let src = Input::open(&a.file)?;
    let types = probe(&src, &a.read)?;
    if types.complex {
        bail!("{}: bench times real matrices only (complex values convert and multiply on the CPU with `spmv`)", src.name());
    }
    // Ask for the GPU before reading a large file, so a missing device fails fast.
    let ctx = match a.device {
        DeviceArg::Gpu => Some(GpuContext::new(0).map_err(|e| EnvError(e.to_string()))?),
        DeviceArg::Cpu => None,
    };
    let (report, features) =
        with_types!(types, a.dtype, bench_typed(a, &src, &formats, ctx.as_ref()))?;
    let mut out = std::io::stdout().lock();
    if a.json {
        let mut v = serde_json::to_value(&report)?;
        if let (Some(f), Value::Object(m)) = (features, &mut v) {
            m.insert("features".into(), serde_json::to_value(f)?);
        }
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", render(&report))?;
    }
    Ok(())
}

/// The bench config of a layout: its format, its conversion parameters
/// (`ell_width`, `hyb_width`, `slice`, `sigma`) and its label; `None` for an
/// unknown format name.
pub fn config_of(format: &str, params: &BTreeMap<String, u64>, label: &str) -> Option<BenchConfig> {
    let kind: FormatKind = format.parse().ok()?;
    let p = |k: &str| params.get(k).map(|&v| v as usize);
    let d = ConvertParams::default();
    Some(BenchConfig {
        kind,
        params: ConvertParams {
            ell_width: p("ell_width"),
            hyb_width: p("hyb_width").map_or(d.hyb_width, HybWidth::Fixed),
            slice: p("slice").unwrap_or(d.slice),
            sigma: p("sigma").or(d.sigma),
            allow_fill: true,
        },
        label: label.to_string(),
    })
}

/// The layouts of a sweep: every candidate of `features` whose format is
/// in `formats`.
pub fn sweep_configs(features: &Features, formats: &[FormatKind]) -> Vec<BenchConfig> {
    features
        .candidates
        .iter()
        .filter_map(|c| config_of(&c.format, &c.params, &c.label))
        .filter(|c| formats.contains(&c.kind))
        .collect()
}

/// One config per format with the default parameters (no sweep).
fn default_configs(formats: &[FormatKind]) -> Vec<BenchConfig> {
    formats
        .iter()
        .map(|&kind| BenchConfig {
            kind,
            params: ConvertParams::default(),
            label: String::new(),
        })
        .collect()
}

fn bench_typed<T: Scalar, I: Index>(
    a: &BenchArgs,
    src: &Input,
    formats: &[FormatKind],
    ctx: Option<&GpuContext>,
) -> anyhow::Result<(BenchReport, Option<Features>)> {
    let csr = load::<T, I>(src, &a.read)?.into_csr();
    let features = if a.sweep {
        let rl = RowLengths::from_csr(&csr)?;
        Some(Features::new(&rl, std::mem::size_of::<T>() as u64))
    } else {
        None
    };
    let configs = match &features {
        Some(f) => sweep_configs(f, formats),
        None => Vec::new(),
    };
    let report = match ctx {
        Some(ctx) => {
            let opts = BenchOptions {
                reps: a.reps,
                formats: formats.to_vec(),
                configs,
                ..BenchOptions::default()
            };
            sparsetool_gpu::bench(ctx, &csr, &opts)?
        }
        None => {
            let configs = if configs.is_empty() {
                default_configs(formats)
            } else {
                configs
            };
            cpu_bench(&csr, &configs, a.reps, a.dtype)?
        }
    };
    Ok((report, features))
}

/// Times the CPU SpMV of every format (rayon), with the same fields as the GPU bench.
fn cpu_bench<T: Scalar, I: Index>(
    csr: &Csr<T, I>,
    configs: &[BenchConfig],
    reps: usize,
    dtype: DType,
) -> anyhow::Result<BenchReport> {
    let x: Vec<T> = random_vector(csr.ncols(), 0x5eed);
    let y_ref = spmv_ref(csr, &x);
    let gdt = match dtype {
        DType::F32 => sparsetool_gpu::DType::F32,
        DType::F64 => sparsetool_gpu::DType::F64,
    };
    let tol = tolerance(gdt, csr.max_row_len());
    let src = AnyMatrix::Csr(csr.clone());
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    for cfg in configs {
        let f = cfg.kind;
        let m = match convert(&src, f, &cfg.params) {
            Ok(m) => m,
            Err(e) => {
                skipped.push(Skipped {
                    kernel: if cfg.label.is_empty() {
                        f.name().to_string()
                    } else {
                        cfg.label.clone()
                    },
                    reason: e.to_string(),
                });
                continue;
            }
        };
        let mut y = vec![T::zero(); csr.nrows()];
        for _ in 0..2 {
            m.spmv(&x, &mut y);
        }
        let err = rel_error(&y, &y_ref);
        let mut times: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                m.spmv(&x, &mut y);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        let bytes = stored_bytes(&m);
        let traffic = Traffic::new(bytes, csr.nrows(), csr.ncols(), std::mem::size_of::<T>());
        results.push(KernelResult {
            kernel: format!("cpu-{}", f.name()),
            format: f.name().to_string(),
            baseline: f == FormatKind::Csr,
            params: params_of(&m),
            median_ms: median,
            min_ms: times[0],
            gbps: traffic.gbps(median),
            gflops: gflops(csr.nnz(), median),
            bytes: traffic.total(),
            rel_error: err,
            ok: err <= tol,
            config: cfg.label.clone(),
            batch: 1,
        });
    }
    Ok(BenchReport {
        device: format!("cpu ({} threads)", rayon::current_num_threads()),
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
        bytes_model: "gbps counts every array of the format as stored (padding included) read \
                      once, x read once and y written once, divided by the median time; \
                      copy_gbps is a 256 MiB memcpy, bytes read plus written."
            .to_string(),
        tolerance: tol,
        reps,
        warmup_ms: 0.0,
        results,
        skipped,
    })
}

fn stored_bytes<T: Scalar, I: Index>(m: &AnyMatrix<T, I>) -> u64 {
    let (v, i) = (
        std::mem::size_of::<T>() as u64,
        std::mem::size_of::<I>() as u64,
    );
    let n = |len: usize| len as u64;
    match m {
        AnyMatrix::Coo(a) => n(a.nnz()) * (v + 2 * i),
        AnyMatrix::Csr(a) => n(a.nnz()) * (v + i) + n(a.nrows() + 1) * i,
        AnyMatrix::Ell(a) => n(a.values().len()) * (v + i) + n(a.nrows()) * i,
        AnyMatrix::Hyb(a) => {
            n(a.ell().values().len()) * (v + i) + n(a.nrows()) * i + n(a.coo().nnz()) * (v + 2 * i)
        }
        AnyMatrix::Jds(a) => n(a.nnz()) * (v + i) + n(a.nrows() + a.jd_ptr().len()) * i,
        AnyMatrix::Sell(a) => {
            n(a.values().len()) * (v + i)
                + n(a.nrows() + a.slice_ptr().len() + a.slice_width().len()) * i
        }
    }
}

fn params_of<T: Scalar, I: Index>(m: &AnyMatrix<T, I>) -> Map<String, Value> {
    let mut p = Map::new();
    match m {
        AnyMatrix::Ell(a) => {
            p.insert("width".into(), a.width().into());
        }
        AnyMatrix::Hyb(a) => {
            p.insert("ell_width".into(), a.ell().width().into());
            p.insert("coo_entries".into(), a.coo().nnz().into());
        }
        AnyMatrix::Sell(a) => {
            p.insert("slice".into(), a.slice_height().into());
            p.insert("sigma".into(), a.sigma().into());
        }
        AnyMatrix::Jds(a) => {
            p.insert("diagonals".into(), a.num_diagonals().into());
        }
        AnyMatrix::Coo(_) | AnyMatrix::Csr(_) => {}
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

/// The human table: one row per kernel, cuSPARSE rows marked, ratios to the
/// best baseline.
pub fn render(r: &BenchReport) -> String {
    let mut s = format!(
        "device: {}  driver: {}  dtype: {}  copy: {:.0} GB/s\nmatrix: {} x {}, {} entries (longest row {})\n\n",
        r.device, r.driver, r.dtype, r.copy_gbps, r.matrix.nrows, r.matrix.ncols, r.matrix.nnz, r.matrix.max_row_len
    );
    let best_base = r
        .results
        .iter()
        .filter(|k| k.baseline && k.ok)
        .map(|k| k.median_ms)
        .fold(f64::INFINITY, f64::min);
    s.push_str(&format!(
        "{:<34} {:>6} {:>10} {:>10} {:>9} {:>8} {:>8} {:>10} {:>4}\n",
        "kernel", "format", "median ms", "min ms", "GB/s", "%copy", "GFLOP/s", "rel err", "ok"
    ));
    for k in &r.results {
        s.push_str(&format!(
            "{:<34} {:>6} {:>10.4} {:>10.4} {:>9.1} {:>7.0}% {:>8.1} {:>10.2e} {:>4}{}\n",
            format!(
                "{}{}{}",
                k.kernel,
                if k.config.is_empty() {
                    String::new()
                } else {
                    format!(" @{}", k.config)
                },
                if k.baseline { " *" } else { "" }
            ),
            k.format,
            k.median_ms,
            k.min_ms,
            k.gbps,
            100.0 * k.gbps / r.copy_gbps.max(1e-9),
            k.gflops,
            k.rel_error,
            if k.ok { "yes" } else { "NO" },
            if best_base.is_finite() && !k.baseline {
                format!("  {:.2}x vs best baseline", best_base / k.median_ms)
            } else {
                String::new()
            }
        ));
    }
    for sk in &r.skipped {
        s.push_str(&format!("skipped {}: {}\n", sk.kernel, sk.reason));
    }
    if let Some(g) = r.gather_floor_ms {
        s.push_str(&format!(
            "x-gather floor: {g:.4} ms (a kernel that only reads the column indices in CSR order \
             and gathers x at them: a floor for kernels that walk the entries in that order)\n"
        ));
    }
    s.push_str(&format!("\n* baseline. {}\n", r.bytes_model));
    s
}
