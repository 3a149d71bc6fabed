//! The multi-GPU side of `analyze --gpus`, `spmv --gpus` and `bench --gpus`:
//! argument checks and printing; the work is in
//! `sparsetool_analyze::partition` and `sparsetool_gpu::distributed`.

use std::io::Write;

use anyhow::{bail, Context};
use sparsetool_analyze::partition::{Partition, PartitionOptions};
use sparsetool_analyze::{AnalyzeOptions, AnalyzeReport, RowLengths, Sizes};
use sparsetool_convert::{ConvertParams, ToCsr};
use sparsetool_formats::io::Input;
use sparsetool_formats::{AnyMatrix, FormatKind, Index, Scalar};
use sparsetool_gpu::distributed::{
    bench_distributed_scaling, device_count, DistBenchOptions, DistOptions, DistScalingReport,
    DistributedMatrix,
};

use crate::args::{AnalyzeArgs, BenchArgs, Gpus, MultiGpuArgs};
use crate::dispatch::with_types;
use crate::io::{dtype, load, probe};
use crate::EnvError;

/// The GPUs and parts a multi-GPU run uses, one `(gpus, parts)` per
/// configuration (several for `bench --gpus 1,2,4`): usage errors first,
/// then exit 2 without a device and a usage error for more GPUs than
/// present. Called before any file is read.
pub fn resolve(m: &MultiGpuArgs) -> anyhow::Result<Option<Vec<(usize, usize)>>> {
    let Some(want) = &m.gpus else {
        return Ok(None);
    };
    if matches!(want, Gpus::List(_)) && m.parts.is_some() {
        bail!("--parts goes with one GPU count: a list of counts runs one part per GPU");
    }
    let present = device_count();
    if present == 0 {
        return Err(EnvError(
            "no CUDA device: --gpus needs at least one NVIDIA GPU (the CUDA driver found none)"
                .to_string(),
        )
        .into());
    }
    let check = |n: usize| {
        if n > present {
            bail!("--gpus {n}: only {present} CUDA device(s) present")
        }
        Ok(n)
    };
    Ok(Some(match want {
        Gpus::All => vec![(present, m.parts.unwrap_or(present))],
        Gpus::Count(n) => vec![(check(*n)?, m.parts.unwrap_or(*n))],
        Gpus::List(l) => l
            .iter()
            .map(|&n| Ok((check(n)?, n)))
            .collect::<anyhow::Result<_>>()?,
    }))
}

/// [`resolve`] for the commands that take one GPU count (`spmv`).
pub fn resolve_one(m: &MultiGpuArgs) -> anyhow::Result<Option<(usize, usize)>> {
    if matches!(m.gpus, Some(Gpus::List(_))) {
        bail!("--gpus takes one count or `all` here; a list of counts (1,2,4) is for bench");
    }
    Ok(resolve(m)?.and_then(|v| v.first().copied()))
}

/// `analyze --gpus N`: the report of the loaded matrix with its partition
/// (text: after the report; JSON: under `partition`).
pub fn analyze(a: &AnalyzeArgs, src: &Input, parts: usize, name: &str) -> anyhow::Result<()> {
    let types = probe(src, &a.read)?;
    with_types!(
        types,
        dtype(a.dtype, &types),
        analyze_typed(a, src, parts, name)
    )
}

fn analyze_typed<T: Scalar, I: Index>(
    a: &AnalyzeArgs,
    src: &Input,
    parts: usize,
    name: &str,
) -> anyhow::Result<()> {
    let csr = load::<T, I>(src, &a.read)?
        .try_into_csr()
        .with_context(|| src.name())?;
    let rl = RowLengths::from_csr(&csr).with_context(|| src.name())?;
    let vb = std::mem::size_of::<T>();
    let sizes = Sizes::auto_index(vb, rl.nrows, rl.ncols, csr.nnz())?;
    let profile = super::analyze::profile(a)?;
    let opts = PartitionOptions {
        value_bytes: vb as u64,
        model: profile.model.clone(),
        ..PartitionOptions::default()
    };
    let report = AnalyzeReport::new(
        &rl,
        &AnalyzeOptions {
            sizes,
            profile,
            ..AnalyzeOptions::default()
        },
    );
    let partition = Partition::of_csr(&csr, parts, &opts).with_context(|| src.name())?;
    let mut out = std::io::stdout().lock();
    if a.json {
        let mut v = serde_json::to_value(&report)?;
        v["partition"] = serde_json::to_value(&partition)?;
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        write!(out, "{}", sparsetool_analyze::render_text(&report, name))?;
        write!(out, "{}", partition.render())?;
    }
    Ok(())
}

/// One part of `spmv --gpus --json`'s `partition`.
#[derive(Debug, serde::Serialize)]
pub struct SpmvPart {
    part: usize,
    device: usize,
    rows: usize,
    nnz: u64,
    ghost_cols: u64,
    layout: String,
    kernel: &'static str,
}

/// `spmv --gpus`: `y = A x` over `gpus` devices in `parts` parts; each part
/// in `format` (else its recommended layout). Returns `y` and the parts.
pub fn spmv<T: Scalar, I: Index>(
    m: &AnyMatrix<T, I>,
    x: &[T],
    (gpus, parts): (usize, usize),
    format: Option<FormatKind>,
    allow_fill: bool,
) -> anyhow::Result<(Vec<T>, Vec<SpmvPart>)> {
    let csr = m.try_as_csr()?;
    let opts = DistOptions {
        format,
        params: ConvertParams {
            allow_fill,
            ..ConvertParams::default()
        },
        ..DistOptions::new(parts, gpus)
    };
    let mut d = DistributedMatrix::new(&csr, &opts)?;
    d.set_x(x)?;
    d.spmv()?;
    d.synchronize()?;
    let y = d.gather_y()?;
    let info = d
        .partition()
        .parts
        .iter()
        .zip(d.part_layouts())
        .map(|(p, (device, layout, kernel))| SpmvPart {
            part: p.part,
            device,
            rows: p.rows,
            nnz: p.nnz,
            ghost_cols: p.ghost_cols,
            layout: layout.to_string(),
            kernel,
        })
        .collect();
    Ok((y, info))
}

/// `bench --gpus`: the multi-GPU SpMV against the best one-GPU layouts, for
/// one configuration or (`--gpus 1,2,4`) each of several in one run.
pub fn bench(a: &BenchArgs, src: &Input, configs: &[(usize, usize)]) -> anyhow::Result<()> {
    if a.sweep || a.transpose {
        bail!("--gpus times y = A x in each part's layout: leave out --sweep and --transpose");
    }
    if !a.formats.eq_ignore_ascii_case("all") {
        bail!("--gpus picks each part's layout by the time model: leave out --formats");
    }
    let types = probe(src, &a.read)?;
    if types.complex {
        bail!("{}: bench times real matrices only", src.name());
    }
    let report = with_types!(types, dtype(a.dtype, &types), bench_typed(a, src, configs))?;
    let mut out = std::io::stdout().lock();
    let scaling = matches!(a.multi.gpus, Some(Gpus::List(_)));
    if a.json {
        let v = match report.runs.first() {
            Some(one) if !scaling => serde_json::to_value(one)?,
            _ => serde_json::to_value(&report)?,
        };
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else if scaling {
        write!(out, "{}", report.render())?;
    } else {
        for r in &report.runs {
            write!(out, "{}", r.render())?;
        }
    }
    if let Some(f) = report.failed.first() {
        bail!(
            "{}: {} of {} GPU counts could not run; on {} GPU(s): {}",
            src.name(),
            report.failed.len(),
            report.failed.len() + report.runs.len(),
            f.gpus,
            f.error
        );
    }
    if let Some(r) = report.runs.iter().find(|r| !r.ok) {
        let on = if scaling {
            format!(" on {} GPU(s)", r.devices.len())
        } else {
            String::new()
        };
        bail!(
            "{}: the multi-GPU result{on} is off by {:.2e} (tolerance {:.1e})",
            src.name(),
            r.rel_error,
            r.tolerance
        );
    }
    Ok(())
}

fn bench_typed<T: Scalar, I: Index>(
    a: &BenchArgs,
    src: &Input,
    configs: &[(usize, usize)],
) -> anyhow::Result<DistScalingReport> {
    let csr = load::<T, I>(src, &a.read)?
        .try_into_csr()
        .with_context(|| src.name())?;
    let configs: Vec<DistOptions> = configs
        .iter()
        .map(|&(gpus, parts)| DistOptions::new(parts, gpus))
        .collect();
    let bopts = DistBenchOptions {
        reps: a.reps as usize,
        equal_rows: a.equal_rows,
        baseline_formats: a.baselines as usize,
        ..DistBenchOptions::default()
    };
    Ok(bench_distributed_scaling(&csr, &configs, &bopts)?)
}
