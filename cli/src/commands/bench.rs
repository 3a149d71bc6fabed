//! `sparsetool bench`: time SpMV in every format (GPU: also cuSPARSE) and
//! print one row per kernel, or the JSON object of `docs/cli.md`.

use std::io::Write;

use anyhow::{bail, Context};
use sparsetool_analyze::{Features, RowLengths, SweepReport};
use sparsetool_formats::FormatKind;
use sparsetool_gpu::{BenchOptions, BenchReport, GpuContext};

use crate::args::{BenchArgs, DeviceArg, OffsetsArg};
use crate::commands::convert::chosen_params;
use crate::dispatch::with_types;
use crate::io::{dtype, load, probe};
use crate::output::note;
use crate::EnvError;
use sparsetool_convert::{ConvertParams, HybWidth, ToCsr};
use sparsetool_formats::io::Input;
use sparsetool_formats::{AnyMatrix, Index, Scalar};

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
    if a.multi.gpus.is_some() && a.device == Some(DeviceArg::Cpu) {
        bail!("--gpus runs on GPUs: leave out --device cpu");
    }
    // Ask for the GPUs before reading a large file.
    if let Some(configs) = super::dist::resolve(&a.multi)? {
        let src = Input::open(&a.file)?;
        return super::dist::bench(a, &src, &configs);
    }
    let src = Input::open(&a.file)?;
    let types = probe(&src, &a.read)?;
    // Ask for the GPU before reading a large file, so a missing device fails fast.
    let ctx = match a.device {
        Some(DeviceArg::Gpu) => Some(GpuContext::new(0).map_err(|e| EnvError(e.to_string()))?),
        Some(DeviceArg::Cpu) => None,
        None => match GpuContext::new(0) {
            Ok(ctx) => Some(ctx),
            Err(e) => {
                note!("note: {e}; timing on the CPU (--device cpu)");
                None
            }
        },
    };
    let report = with_types!(
        types,
        dtype(a.dtype, &types),
        bench_typed(a, &src, &formats, ctx.as_ref())
    )?;
    if report.report.results.is_empty() {
        let why: Vec<String> = report
            .report
            .skipped
            .iter()
            .map(|s| format!("{}: {}", s.kernel, s.reason))
            .collect();
        bail!(
            "{}: none of the requested formats could be timed ({})",
            src.name(),
            why.join("; ")
        );
    }
    let mut out = std::io::stdout().lock();
    if a.json {
        // through a `Value`: the keys come out sorted, as they always have
        serde_json::to_writer_pretty(&mut out, &serde_json::to_value(&report)?)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", render(&report.report))?;
    }
    Ok(())
}

fn bench_typed<T: Scalar, I: Index>(
    a: &BenchArgs,
    src: &Input,
    formats: &[FormatKind],
    ctx: Option<&GpuContext>,
) -> anyhow::Result<SweepReport> {
    let m = load::<T, I>(src, &a.read)?;
    // An ELL file is timed in its own width: the user already has the fill.
    let stored_ell_width = match &m {
        AnyMatrix::Ell(e) => Some(e.width()),
        _ => None,
    };
    // A HYB or SELL file in its own layout too (of A: not for A^T).
    let stored = match &m {
        AnyMatrix::Hyb(h) if !a.transpose => Some(ConvertParams {
            hyb_width: HybWidth::Fixed(h.ell().width()),
            ..ConvertParams::default()
        }),
        AnyMatrix::Sell(s) if !a.transpose => Some(ConvertParams {
            slice: s.slice_height(),
            sigma: Some(s.sigma()),
            ..ConvertParams::default()
        }),
        _ => None,
    }
    .map(|p| (m.kind(), p));
    let csr = m.try_into_csr().with_context(|| src.name())?;
    // The row lengths the sweep's candidates and the HYB and SELL layouts
    // come from; those of a transposed bench hold A^T: its rows decide.
    let needs_rows = a.sweep
        || formats.iter().any(|f| {
            matches!(f, FormatKind::Hyb | FormatKind::Sell)
                && stored.as_ref().is_none_or(|(k, _)| k != f)
        });
    let rows = if needs_rows {
        Some(if a.transpose {
            RowLengths::from_csr(&sparsetool_convert::transpose(&csr))?
        } else {
            RowLengths::from_csr(&csr)?
        })
    } else {
        None
    };
    let features = match &rows {
        Some(rl) if a.sweep => Some(Features::new(rl, std::mem::size_of::<T>() as u64)),
        _ => None,
    };
    let mut opts = BenchOptions {
        reps: a.reps as usize,
        formats: formats.to_vec(),
        configs: features
            .as_ref()
            .map(|f| sparsetool_gpu::sweep_configs(f, formats))
            .unwrap_or_default(),
        transpose: a.transpose,
        offsets: match a.offsets {
            OffsetsArg::Auto => sparsetool_gpu::Offsets::Auto,
            OffsetsArg::Wide => sparsetool_gpu::Offsets::Wide,
        },
        ..BenchOptions::default()
    };
    if features.is_none() {
        // One layout per format: the stored one, else the one `convert`
        // would write (HYB's cost-model width, the recommended SELL C and
        // sigma; ELL at the longest row).
        let mut configs = opts.layouts();
        for c in &mut configs {
            match c.kind {
                FormatKind::Ell => {
                    c.params.allow_fill = a.allow_fill || stored_ell_width.is_some();
                    c.params.ell_width = c.params.ell_width.or(stored_ell_width);
                }
                FormatKind::Hyb | FormatKind::Sell => {
                    let kept = stored.as_ref().filter(|(k, _)| *k == c.kind);
                    c.params = match kept {
                        Some((_, p)) => p.clone(),
                        None => chosen_params(c.kind, false, || {
                            rows.as_ref().context("the row lengths were not read")
                        })?,
                    };
                }
                _ => {}
            }
        }
        opts.configs = configs;
    }
    // Layouts timed so far (the bench sets the total).
    let _bar = crate::output::Bar::follow(
        format!(
            "timing {} on the {}",
            src.name(),
            if ctx.is_some() { "GPU" } else { "CPU" }
        ),
        &sparsetool_formats::progress::BENCH,
        None,
        crate::output::Unit::Count("layouts"),
        true,
    );
    let report = match ctx {
        Some(ctx) => sparsetool_gpu::bench(ctx, &csr, &opts)?,
        None => sparsetool_gpu::cpu_bench(&csr, &opts)?,
    };
    Ok(SweepReport { report, features })
}

/// The human table: one row per kernel, cuSPARSE rows marked, ratios to the
/// best baseline.
pub fn render(r: &BenchReport) -> String {
    let mut s = format!(
        "device: {}  driver: {}  dtype: {}  copy: {:.0} GB/s\nmatrix{}: {} x {}, {} entries (longest row {})\n\n",
        r.device, r.driver, r.dtype, r.copy_gbps,
        if r.transpose { " A^T (y = A^T x)" } else { "" },
        r.matrix.nrows, r.matrix.ncols, r.matrix.nnz, r.matrix.max_row_len
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
                k.config.map(|c| format!(" @{c}")).unwrap_or_default(),
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
