//! `sparsetool info`: what a file holds, from its header where possible.

use std::io::Write;

use serde::Serialize;
use sparsetool_formats::binary::{SpbFile, SpbOptions};
use sparsetool_formats::mm::{MmFormat, MmSymmetry};
use sparsetool_formats::npz::NpzArchive;
use sparsetool_formats::{Index, Scalar};

use crate::args::{InfoArgs, ReadArgs};
use crate::dispatch::with_types;
use crate::io::{load, probe};
use crate::output::plural;
use sparsetool_formats::io::{Container, Input};

/// The `info --json` object (documented in `docs/cli.md`): the same keys
/// for every container, `null` where a key does not apply.
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
    /// Entries after symmetric expansion, at most (exact unless the file
    /// is a symmetric or `array` Matrix Market file, whose count is known
    /// only after reading).
    pub nnz_expanded_max: usize,
    /// Whether `nnz_expanded_max` is the exact count.
    #[serde(skip)]
    pub expanded_exact: bool,
    /// `real`, `integer`, `complex` or `pattern`.
    pub field: String,
    /// Matrix Market symmetry, or `general`.
    pub symmetry: String,
    /// Storage format (`coordinate`/`array` for .mtx; the format for npz/spb).
    pub format: String,
    /// Value dtype stored in the file (npz/spb; `null` for .mtx).
    pub value_dtype: Option<String>,
    /// Index dtype stored in the file (npz/spb; `null` for .mtx).
    pub index_dtype: Option<String>,
    /// Format parameters (spb): ell_width, hyb_width/coo_entries,
    /// slice/sigma, diagonals; `null` for other containers.
    pub params: Option<serde_json::Value>,
    /// Layout version (spb; `null` otherwise).
    pub version: Option<String>,
    /// Stored entries / (nrows × ncols); `null` for an empty shape.
    pub density: Option<f64>,
    /// Stored entries / nrows; `null` without rows.
    pub mean_row_length: Option<f64>,
}

impl InfoReport {
    fn new(path: &str, container: &'static str, nrows: usize, ncols: usize, nnz: usize) -> Self {
        Self {
            path: path.to_string(),
            container,
            nrows,
            ncols,
            nnz,
            nnz_expanded_max: nnz,
            expanded_exact: true,
            field: "real".to_string(),
            symmetry: "general".to_string(),
            format: String::new(),
            value_dtype: None,
            index_dtype: None,
            params: None,
            version: None,
            density: (nrows > 0 && ncols > 0).then(|| nnz as f64 / (nrows as f64 * ncols as f64)),
            mean_row_length: (nrows > 0).then(|| nnz as f64 / nrows as f64),
        }
    }
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
                nnz_expanded_max: h.nnz_expanded_max(),
                expanded_exact: general && h.format == MmFormat::Coordinate,
                field: h.field.to_string(),
                symmetry: h.symmetry.to_string(),
                format: h.format.to_string(),
                ..InfoReport::new(display, "mtx", h.nrows, h.ncols, h.entries)
            })
        }
        Container::Npz => {
            let (p, name) = src.file(Container::Npz)?;
            let mut a = NpzArchive::open_named(p, &name)?;
            let i = a.info()?;
            Ok(InfoReport {
                field: if i.complex { "complex" } else { "real" }.to_string(),
                format: i.format.clone(),
                value_dtype: Some(i.value_dtype.clone()),
                index_dtype: Some(i.index_dtype.clone()),
                ..InfoReport::new(display, "npz", i.nrows, i.ncols, i.nnz)
            })
        }
        Container::Spb => {
            let (p, name) = src.file(Container::Spb)?;
            // Opening validates sizes, offsets and (unless
            // --no-verify-checksums) every section's checksum.
            let spb = SpbFile::open_named(
                p,
                &name,
                &SpbOptions {
                    verify_checksums: !read.no_verify_checksums,
                },
            )?;
            let h = spb.header();
            let params: serde_json::Map<String, serde_json::Value> = h
                .params()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.into()))
                .collect();
            let complex = matches!(h.value_dtype.name(), "complex64" | "complex128");
            Ok(InfoReport {
                field: if complex { "complex" } else { "real" }.to_string(),
                format: h.format.to_string(),
                value_dtype: Some(h.value_dtype.name().to_string()),
                index_dtype: Some(h.index_dtype.name().to_string()),
                params: Some(params.into()),
                version: Some(format!("{}.{}", h.major, h.minor)),
                ..InfoReport::new(
                    display,
                    "spb",
                    usize::try_from(h.nrows)?,
                    usize::try_from(h.ncols)?,
                    usize::try_from(h.nnz)?,
                )
            })
        }
    }
}

/// Runs `info`.
pub fn run(a: &InfoArgs) -> anyhow::Result<()> {
    let src = Input::open(&a.file)?;
    if a.verify {
        return verify(&src, a);
    }
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
    if r.expanded_exact {
        rows.push(("entries (expanded)", r.nnz_expanded_max.to_string()));
    } else {
        rows.push((
            "entries (expanded, at most)",
            r.nnz_expanded_max.to_string(),
        ));
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
    if let (Some(d), Some(m)) = (r.density, r.mean_row_length) {
        rows.push(("density", format!("{d:.3e}")));
        rows.push(("mean entries/row", format!("{m:.2}")));
    }
    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(k, v)| format!("{k:<w$}  {v}\n"))
        .collect()
}

/// `info --verify`: loads the whole file (every entry; for `.spb` the
/// checksums and every structural invariant) and prints one line.
fn verify(src: &Input, a: &InfoArgs) -> anyhow::Result<()> {
    let types = probe(src, &a.read)?;
    let (kind, nrows, ncols, nnz) = with_types!(types, types.precision, load_shape(src, &a.read))?;
    let checks = match types.container {
        Container::Spb if a.read.no_verify_checksums => ", checksums not verified",
        Container::Spb => ", checksums verified",
        _ => "",
    };
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}: ok ({}{}, {nrows} x {ncols}, {}{checks})",
        a.file.display(),
        types.container.name(),
        kind.map(|k| format!(" {k}")).unwrap_or_default(),
        plural(nnz, "entry", "entries")
    )?;
    Ok(())
}

fn load_shape<T: Scalar, I: Index>(
    src: &Input,
    read: &ReadArgs,
) -> anyhow::Result<(Option<String>, usize, usize, usize)> {
    let m = load::<T, I>(src, read)?;
    // Matrix Market stores no layout (it loads as COO).
    let kind = (src.container()? != Container::Mtx).then(|| m.kind().to_string());
    Ok((kind, m.nrows(), m.ncols(), m.nnz()))
}
