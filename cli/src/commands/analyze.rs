//! `sparsetool analyze`: which format suits this matrix, with which
//! parameters, and why.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context};
use sparsetool_analyze::rows::read_row_lengths;
use sparsetool_analyze::{
    render_text, write_plot, AnalyzeOptions, AnalyzeReport, RowLengths, Sizes,
};
use sparsetool_formats::mm::ReadOptions;

use crate::args::AnalyzeArgs;
use crate::dispatch::with_types;
use crate::io::{load, probe};
use crate::output::{check_target, Bar, Unit};
use sparsetool_formats::io::{Container, Input};
use sparsetool_formats::values::{escape, escape_path};
use sparsetool_formats::{Index, Precision, Scalar};

/// The matrix name shown in reports: the file name without `.mtx`/`.gz`/...
pub fn display_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "stdin".into());
    let mut s = name.as_str();
    for ext in [".gz", ".mtx", ".npz", ".spb"] {
        if let Some(t) = s.strip_suffix(ext) {
            s = t;
        }
    }
    if s.is_empty() || s == "-" {
        "stdin".to_string()
    } else {
        s.to_string()
    }
}

/// Row lengths of any input: a streaming pass for Matrix Market files,
/// otherwise the loaded matrix.
pub fn row_lengths(src: &Input, a: &AnalyzeArgs) -> anyhow::Result<RowLengths> {
    if let (Container::Mtx, Input::Path(p)) = (src.container()?, src) {
        let _bar = Bar::follow(
            format!("scanning {}", escape_path(p)),
            &sparsetool_formats::progress::READ,
            Some(src.len()),
            Unit::Bytes,
            src.len() > (64 << 20),
        );
        let opts = ReadOptions {
            lenient: a.read.lenient,
            ..ReadOptions::default()
        };
        let (rl, warnings) = read_row_lengths(p, &opts)?;
        crate::io::print_warnings(&p.display().to_string(), &warnings);
        return Ok(rl);
    }
    // A Matrix Market stream (stdin, a pipe): the same streaming pass, in
    // bounded memory. Array files and lenient reads (whose recoveries may
    // need every entry) are read whole instead: a stream cannot be read
    // twice.
    if let Input::Stream(_) = src {
        let opts = ReadOptions {
            lenient: a.read.lenient,
            ..ReadOptions::default()
        };
        let (h, _) =
            sparsetool_formats::io::read_mm_header(src, &crate::io::load_options(&a.read))?;
        if !a.read.lenient && h.format == sparsetool_formats::mm::MmFormat::Coordinate {
            let _bar = Bar::follow(
                format!("scanning {}", escape(&src.name())),
                &sparsetool_formats::progress::READ,
                Some(0),
                Unit::Bytes,
                true,
            );
            let (rl, warnings) =
                RowLengths::from_mm_reader(src.take_reader()?, &src.name(), &opts)?;
            crate::io::print_warnings(&src.name(), &warnings);
            return Ok(rl);
        }
    }
    let types = probe(src, &a.read)?;
    with_types!(types, Precision::F64, lengths_typed(src, a))
}

fn lengths_typed<T: Scalar, I: Index>(src: &Input, a: &AnalyzeArgs) -> anyhow::Result<RowLengths> {
    let m = load::<T, I>(src, &a.read)?;
    super::convert::row_lengths(&m).with_context(|| src.name())
}

/// The device profile of the predictions: `--profile`, else the one of the
/// GPU present (see `sparsetool_analyze::profile`).
pub fn profile(a: &AnalyzeArgs) -> anyhow::Result<sparsetool_analyze::profile::ProfileChoice> {
    Ok(sparsetool_gpu::calibrate::profile_for_device(
        a.profile.as_deref(),
        0,
    )?)
}

/// Runs `analyze`.
pub fn run(a: &AnalyzeArgs) -> anyhow::Result<()> {
    if let Some(p) = &a.plot {
        let ext = p
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        if !matches!(ext.as_deref(), Some("png" | "svg")) {
            bail!("{}: --plot writes .png or .svg", escape_path(p));
        }
        check_target(p, a.force)?;
    }
    if a.profile.is_some() {
        // a profile asked for is checked before the matrix is read (no
        // device is looked at for it, so checking it twice costs nothing)
        profile(a)?;
    }
    let src = Input::open(&a.file)?;
    if a.measure {
        return measure::run(a, &src);
    }
    if let Some(n) = a.gpus {
        return super::dist::analyze(a, &src, usize::from(n), &display_name(&a.file));
    }
    report_only(a, &src)
}

/// The report (and the plot) without `--measure`.
fn report_only(a: &AnalyzeArgs, src: &Input) -> anyhow::Result<()> {
    let probed = probe(src, &a.read).ok();
    let complex = probed.is_some_and(|t| t.complex);
    let dtype = a
        .dtype
        .or(probed.map(|t| t.precision))
        .unwrap_or(Precision::F64);
    let rl = row_lengths(src, a)?;
    let value_bytes = match (dtype, complex) {
        (p, false) => p.size(),
        (p, true) => 2 * p.size(),
    };
    let nnz = usize::try_from(rl.nnz())?;
    let sizes = Sizes::auto_index(value_bytes, rl.nrows, rl.ncols, nnz)?;
    let report = AnalyzeReport::new(
        &rl,
        &AnalyzeOptions {
            sizes,
            profile: profile(a)?,
            ..AnalyzeOptions::default()
        },
    );
    let name = display_name(&a.file);
    let mut out = std::io::stdout().lock();
    if a.json {
        writeln!(out, "{}", report.to_json()?)?;
    } else {
        write!(out, "{}", render_text(&report, &name))?;
    }
    if let Some(p) = &a.plot {
        plot_atomic(p, &report, &name, a.force)?;
        if !a.json {
            writeln!(out, "plot written to {}", p.display())?;
        }
    }
    Ok(())
}

fn plot_atomic(p: &Path, report: &AnalyzeReport, name: &str, force: bool) -> anyhow::Result<()> {
    let ext = p
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    sparsetool_formats::io::write_atomic_path(p, force, &ext, |tmp| {
        write_plot(tmp, report, name).map_err(|e| sparsetool_formats::io::Error::Path {
            path: p.display().to_string(),
            message: format!("cannot draw: {e}"),
        })
    })?;
    Ok(())
}

/// `analyze --measure`: the report, then the top layouts timed on the GPU.
mod measure {
    use std::io::Write;

    use anyhow::{bail, Context};
    use sparsetool_analyze::{render_text, AnalyzeOptions, AnalyzeReport, RowLengths, Sizes};
    use sparsetool_gpu::GpuContext;

    use super::display_name;
    use crate::args::AnalyzeArgs;
    use crate::dispatch::with_types;
    use crate::io::{load, probe};
    use crate::EnvError;
    use sparsetool_convert::ToCsr;
    use sparsetool_formats::io::Input;
    use sparsetool_formats::{Index, Scalar};

    pub(super) fn run(a: &AnalyzeArgs, src: &Input) -> anyhow::Result<()> {
        if a.plot.is_some() {
            bail!("--measure and --plot are separate runs: draw the plot without --measure");
        }
        let types = probe(src, &a.read)?;
        if types.complex {
            bail!("{}: --measure times real matrices only", src.name());
        }
        // Ask for the GPU before reading a large file; without one, the
        // report is still printed, then the skipped measurement said (exit 2).
        let ctx = match GpuContext::new(0) {
            Ok(ctx) => ctx,
            Err(e) => {
                super::report_only(a, src)?;
                return Err(
                    EnvError(format!("{e}; the measurement (--measure) was skipped")).into(),
                );
            }
        };
        with_types!(
            types,
            crate::io::dtype(a.dtype, &types),
            typed(a, src, &ctx)
        )
    }

    fn typed<T: Scalar, I: Index>(
        a: &AnalyzeArgs,
        src: &Input,
        ctx: &GpuContext,
    ) -> anyhow::Result<()> {
        let csr = load::<T, I>(src, &a.read)?
            .try_into_csr()
            .with_context(|| src.name())?;
        let rl = RowLengths::from_csr(&csr)?;
        let sizes = Sizes::new(std::mem::size_of::<T>(), 4)?;
        let report = AnalyzeReport::new(
            &rl,
            &AnalyzeOptions {
                sizes,
                profile: super::profile(a)?,
                ..AnalyzeOptions::default()
            },
        );
        let outcome = sparsetool_gpu::measure(
            ctx,
            &csr,
            &report,
            usize::from(a.measure_top),
            a.reps as usize,
        )?;
        let mut out = std::io::stdout().lock();
        if a.json {
            let mut v = serde_json::to_value(&report)?;
            if let serde_json::Value::Object(m) = &mut v {
                m.insert("measure".into(), serde_json::to_value(&outcome)?);
            }
            writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        } else {
            write!(out, "{}", render_text(&report, &display_name(&a.file)))?;
            write!(out, "{}", outcome.render())?;
        }
        Ok(())
    }
}
