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

use crate::args::{AnalyzeArgs, DType};
use crate::dispatch::{with_types, Idx, Val};
use crate::io::{load, type_plan, Container, Source};
use crate::output::{check_target, Spinner};

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
pub fn row_lengths(src: &Source, a: &AnalyzeArgs) -> anyhow::Result<RowLengths> {
    if let (Container::Mtx, Source::Path(p)) = (src.container()?, src) {
        let _spin = Spinner::start(format!("scanning {}", p.display()), src.len() > (64 << 20));
        let opts = ReadOptions {
            lenient: a.read.lenient,
            ..ReadOptions::default()
        };
        let (rl, warnings) = read_row_lengths(p, &opts)?;
        crate::io::print_warnings(&p.display().to_string(), &warnings);
        return Ok(rl);
    }
    let types = type_plan(src, &a.read)?;
    with_types!(types, DType::F64, lengths_typed(src, a))
}

fn lengths_typed<T: Val, I: Idx>(src: &Source, a: &AnalyzeArgs) -> anyhow::Result<RowLengths> {
    let m = load::<T, I>(src, &a.read)?;
    Ok(RowLengths::from_csr(&m.to_csr())?)
}

/// Runs `analyze`.
pub fn run(a: &AnalyzeArgs) -> anyhow::Result<()> {
    if let Some(p) = &a.plot {
        let ext = p
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        if !matches!(ext.as_deref(), Some("png" | "svg")) {
            bail!("{}: --plot writes .png or .svg", p.display());
        }
        check_target(p, a.force)?;
    }
    let src = Source::open(&a.file)?;
    let complex = type_plan(&src, &a.read).map(|t| t.complex).unwrap_or(false);
    let rl = row_lengths(&src, a)?;
    let value_bytes = match (a.dtype, complex) {
        (DType::F32, false) => 4,
        (DType::F64, false) | (DType::F32, true) => 8,
        (DType::F64, true) => 16,
    };
    let nnz = rl.rows.iter().map(|&r| r as usize).sum::<usize>();
    let sizes = Sizes::auto_index(value_bytes, rl.nrows, rl.ncols, nnz)?;
    let report = AnalyzeReport::new(
        &rl,
        &AnalyzeOptions {
            sizes,
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
    let dir = crate::output::parent_dir(p);
    let ext = p
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    let tmp = crate::output::temp_in(&dir, &ext)?;
    write_plot(tmp.path(), report, name).with_context(|| format!("cannot draw {}", p.display()))?;
    let r = if force {
        tmp.persist(p)
    } else {
        tmp.persist_noclobber(p)
    };
    r.map(|_| ())
        .map_err(|e| anyhow::Error::new(e.error))
        .with_context(|| format!("cannot write {}", p.display()))
}
