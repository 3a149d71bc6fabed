//! `sparsetool info`: what a file holds, from its header where possible.

use std::io::Write;

use serde::Serialize;
use sparsetool_formats::binary::SpbFile;
use sparsetool_formats::mm::{MmFormat, MmSymmetry};
use sparsetool_formats::npz::NpzArchive;

use crate::args::{InfoArgs, ReadArgs};
use sparsetool_formats::io::{Container, Input};

/// The `info --json` object (documented in `docs/cli.md`).
#[derive(Debug, Serialize)]
pub struct InfoReport {
    /// The path as given.
    pub path: String,
    /// `mtx`, `npz` or `spb`.
    pub container: &'static str,
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// Stored entries.
    pub nnz: usize,
    /// Entries after symmetric expansion, when known from the header.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nnz_expanded: Option<usize>,
    /// Upper bound of the expanded count (symmetric files, before reading).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nnz_expanded_max: Option<usize>,
    /// `real`, `integer`, `complex` or `pattern`.
    pub field: String,
    /// Matrix Market symmetry, or `general`.
    pub symmetry: String,
    /// Storage format (`coordinate`/`array` for .mtx; the format for npz/spb).
    pub format: String,
    /// Value dtype stored in the file (npz/spb).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_dtype: Option<String>,
    /// Index dtype stored in the file (npz/spb).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_dtype: Option<String>,
    /// Format parameters (spb): ell_width, hyb_width/coo_entries, slice/sigma, diagonals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<serde_json::Value>,
    /// Layout version (spb).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// Builds the report for a source.
pub fn report(src: &Input, display: &str, read: &ReadArgs) -> anyhow::Result<InfoReport> {
    match src.container()? {
        Container::Mtx => {
            let (h, warnings) =
                sparsetool_formats::io::read_mm_header(src, &crate::io::load_options(read))?;
            crate::io::print_warnings(display, &warnings);
            let general = h.symmetry == MmSymmetry::General;
            Ok(InfoReport {
                path: display.to_string(),
                container: "mtx",
                nrows: h.nrows,
                ncols: h.ncols,
                nnz: h.entries,
                nnz_expanded: (general && h.format == MmFormat::Coordinate).then_some(h.entries),
                nnz_expanded_max: (!general).then(|| h.nnz_expanded_max()),
                field: h.field.to_string(),
                symmetry: h.symmetry.to_string(),
                format: h.format.to_string(),
                value_dtype: None,
                index_dtype: None,
                params: None,
                version: None,
            })
        }
        Container::Npz => {
            let (p, name) = src.file(Container::Npz)?;
            let mut a = NpzArchive::open_named(p, &name)?;
            let i = a.info()?;
            Ok(InfoReport {
                path: display.to_string(),
                container: "npz",
                nrows: i.nrows,
                ncols: i.ncols,
                nnz: i.nnz,
                nnz_expanded: Some(i.nnz),
                nnz_expanded_max: None,
                field: if i.complex { "complex" } else { "real" }.to_string(),
                symmetry: "general".to_string(),
                format: i.format.clone(),
                value_dtype: Some(i.value_dtype.clone()),
                index_dtype: Some(i.index_dtype.clone()),
                params: None,
                version: None,
            })
        }
        Container::Spb => {
            let (p, name) = src.file(Container::Spb)?;
            let h = SpbFile::read_header_named(p, &name)?;
            let params: serde_json::Map<String, serde_json::Value> = h
                .params()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.into()))
                .collect();
            let complex = matches!(h.value_dtype.name(), "complex64" | "complex128");
            Ok(InfoReport {
                path: display.to_string(),
                container: "spb",
                nrows: usize::try_from(h.nrows)?,
                ncols: usize::try_from(h.ncols)?,
                nnz: usize::try_from(h.nnz)?,
                nnz_expanded: Some(usize::try_from(h.nnz)?),
                nnz_expanded_max: None,
                field: if complex { "complex" } else { "real" }.to_string(),
                symmetry: "general".to_string(),
                format: h.format.to_string(),
                value_dtype: Some(h.value_dtype.name().to_string()),
                index_dtype: Some(h.index_dtype.name().to_string()),
                params: Some(params.into()),
                version: Some(format!("{}.{}", h.major, h.minor)),
            })
        }
    }
}

/// Runs `info`.
pub fn run(a: &InfoArgs) -> anyhow::Result<()> {
    let src = Input::open(&a.file)?;
    let r = report(&src, &a.file.display().to_string(), &a.read)?;
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer_pretty(&mut out, &r)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", render(&r))?;
    }
    Ok(())
}

/// The human-readable table.
pub fn render(r: &InfoReport) -> String {
    let mut rows: Vec<(&str, String)> = vec![
        ("path", r.path.clone()),
        ("container", r.container.to_string()),
        ("shape", format!("{} x {}", r.nrows, r.ncols)),
        ("stored entries", r.nnz.to_string()),
    ];
    if let Some(e) = r.nnz_expanded {
        rows.push(("entries (expanded)", e.to_string()));
    }
    if let Some(e) = r.nnz_expanded_max {
        rows.push(("entries (expanded, at most)", e.to_string()));
    }
    rows.push(("format", r.format.clone()));
    rows.push(("field", r.field.clone()));
    rows.push(("symmetry", r.symmetry.clone()));
    if let Some(v) = &r.value_dtype {
        rows.push(("value dtype", v.clone()));
    }
    if let Some(v) = &r.index_dtype {
        rows.push(("index dtype", v.clone()));
    }
    if let Some(serde_json::Value::Object(p)) = &r.params {
        for (k, v) in p {
            rows.push((k.as_str(), v.to_string()));
        }
    }
    if let Some(v) = &r.version {
        rows.push(("layout version", v.clone()));
    }
    if r.nrows > 0 && r.ncols > 0 {
        let density = r.nnz as f64 / (r.nrows as f64 * r.ncols as f64);
        rows.push(("density", format!("{density:.3e}")));
        rows.push((
            "mean entries/row",
            format!("{:.2}", r.nnz as f64 / r.nrows as f64),
        ));
    }
    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(k, v)| format!("{k:<w$}  {v}\n"))
        .collect()
}
