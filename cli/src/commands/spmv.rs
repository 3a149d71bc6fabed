//! `sparsetool spmv`: y = A x in a chosen format, on the CPU or a GPU.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use serde::Serialize;
use sparsetool_convert::{convert, AnyMatrix};

use crate::args::{DeviceArg, SpmvArgs, VectorOut};
use crate::dispatch::with_types;
use crate::io::{dtype, load, probe, refuse_binary_terminal};
use crate::output::{check_target, note};
use crate::EnvError;
use sparsetool_formats::alloc::{ensure_available, try_filled};
use sparsetool_formats::io::{Container, Input};
use sparsetool_formats::values::{escape, escape_path};
use sparsetool_formats::{FormatKind, Index, Scalar};

/// Builds x of length `n`: `ones`, `zeros`, `random` (seeded, uniform in
/// [-1, 1)), a `.npy` vector or a Matrix Market vector (`n x 1` or `1 x n`,
/// array or coordinate; missing entries are zero).
pub fn make_x<T: Scalar>(spec: &str, n: usize, seed: u64) -> anyhow::Result<Vec<T>> {
    let what = "x (one entry per column of the matrix)";
    let x: Vec<T> = match spec {
        "ones" => return Ok(try_filled(n, T::one(), what)?),
        "zeros" => return Ok(try_filled(n, T::zero(), what)?),
        "random" => {
            ensure_available(n as u128 * std::mem::size_of::<T>() as u128, what)?;
            return Ok(sparsetool_analyze::bench::random_x(n, seed));
        }
        path => {
            let p = Path::new(path);
            let name = path.to_ascii_lowercase();
            let path = escape(path);
            if !p.is_file() {
                bail!(
                    "--x {path}: not `ones`, `zeros`, `random`, nor an existing .npy or .mtx file"
                );
            }
            if name.ends_with(".mtx") || name.ends_with(".mtx.gz") {
                mtx_vector(p, n)?
            } else if name.ends_with(".npy") {
                sparsetool_formats::npz::read_npy(p)
                    .with_context(|| format!("cannot read x from {path}"))?
            } else {
                bail!(
                    "--x {path}: a vector file must be .npy or .mtx (or `ones`, `zeros`, `random`)"
                );
            }
        }
    };
    if x.len() != n {
        bail!(
            "{}: x has {} entries, the matrix has {n} columns",
            escape(spec),
            x.len()
        );
    }
    Ok(x)
}

/// A Matrix Market vector (`n x 1` or `1 x n`) as a dense vector.
fn mtx_vector<T: Scalar>(p: &Path, n: usize) -> anyhow::Result<Vec<T>> {
    let m = sparsetool_formats::mm::read_path::<T, i64>(p, &Default::default())?;
    let (r, c) = (m.coo.nrows(), m.coo.ncols());
    if r.min(c) != 1 {
        bail!(
            "{}: x must be a vector (n x 1 or 1 x n), not {r} x {c}",
            escape_path(p)
        );
    }
    if r.max(c) != n {
        bail!(
            "{}: x has {} entries, the matrix has {n} columns",
            escape_path(p),
            r.max(c)
        );
    }
    let mut x = try_filled(n, T::zero(), "x")?;
    for ((&i, &j), &v) in m.coo.rows().iter().zip(m.coo.cols()).zip(m.coo.values()) {
        x[(i.max(j)) as usize] += v;
    }
    Ok(x)
}

/// Where `spmv -o` writes y: a file (atomically) or stdout, as Matrix
/// Market or `.npy`.
#[derive(Debug)]
struct VectorTarget {
    path: Option<PathBuf>,
    kind: VectorOut,
}

impl VectorTarget {
    fn new(a: &SpmvArgs) -> anyhow::Result<Option<Self>> {
        let Some(out) = &a.output else {
            if a.output_format.is_some() {
                bail!("--output-format needs -o OUT");
            }
            return Ok(None);
        };
        if out.as_os_str() == "-" {
            let kind = a.output_format.unwrap_or(VectorOut::Mtx);
            if a.json {
                bail!("-o - writes y to stdout; --json would mix into it: write y to a file");
            }
            refuse_binary_terminal(kind == VectorOut::Npy, "npy")?;
            return Ok(Some(Self { path: None, kind }));
        }
        let kind = match a.output_format {
            Some(k) => k,
            None => {
                let name = out
                    .file_name()
                    .map(|n| n.to_string_lossy().to_ascii_lowercase())
                    .unwrap_or_default();
                if name.ends_with(".mtx") {
                    VectorOut::Mtx
                } else if name.ends_with(".npy") {
                    VectorOut::Npy
                } else {
                    bail!(
                        "{}: unknown output extension for a vector; use .mtx or .npy (or --output-format mtx|npy)",
                        out.display()
                    );
                }
            }
        };
        check_target(out, a.force)?;
        Ok(Some(Self {
            path: Some(out.clone()),
            kind,
        }))
    }

    fn name(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| "-".to_string(), |p| p.display().to_string())
    }

    fn write<T: Scalar>(&self, y: &[T], force: bool) -> anyhow::Result<()> {
        let kind = self.kind;
        let write = |w: &mut dyn Write| -> std::io::Result<()> {
            match kind {
                VectorOut::Npy => sparsetool_formats::npz::write_npy(&mut *w, y)
                    .map_err(|e| std::io::Error::other(e.to_string())),
                VectorOut::Mtx => write_mtx_vector(w, y),
            }
        };
        match &self.path {
            Some(p) => sparsetool_formats::io::write_atomic(p, force, |w| {
                write(w).map_err(|e| sparsetool_formats::io::Error::Path {
                    path: p.display().to_string(),
                    message: format!("cannot write: {e}"),
                })
            })?,
            None => {
                let mut out = std::io::stdout().lock();
                write(&mut out)?;
                out.flush()?;
            }
        }
        Ok(())
    }
}

/// Writes `y` as a Matrix Market `array` `real` (or `complex`) `general`
/// n x 1 matrix, values in shortest round-trip notation.
pub fn write_mtx_vector<T: Scalar>(w: &mut dyn Write, y: &[T]) -> std::io::Result<()> {
    let single = std::mem::size_of::<T>() == if T::IS_COMPLEX { 8 } else { 4 };
    let num = |x: f64| {
        if single {
            format!("{:e}", x as f32)
        } else {
            format!("{x:e}")
        }
    };
    let field = if T::IS_COMPLEX { "complex" } else { "real" };
    let mut buf = std::io::BufWriter::new(w);
    writeln!(buf, "%%MatrixMarket matrix array {field} general")?;
    writeln!(
        buf,
        "% y = A x, written by sparsetool {}",
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(buf, "{} 1", y.len())?;
    for v in y {
        if T::IS_COMPLEX {
            writeln!(buf, "{} {}", num(v.re()), num(v.im()))?;
        } else {
            writeln!(buf, "{}", num(v.re()))?;
        }
    }
    buf.flush()
}

/// The `spmv --json` object (documented in `docs/cli.md`).
#[derive(Debug, Serialize)]
struct SpmvReport {
    input: String,
    format: String,
    /// y = A^T x.
    transpose: bool,
    device: &'static str,
    dtype: &'static str,
    nrows: usize,
    ncols: usize,
    nnz: usize,
    ms: f64,
    norm2: f64,
    output: Option<String>,
    /// GPUs used by `--gpus` (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    gpus: Option<usize>,
    /// The parts of `--gpus` (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    partition: Option<Vec<super::dist::SpmvPart>>,
}

/// Runs `spmv`.
pub fn run(a: &SpmvArgs) -> anyhow::Result<()> {
    let target = VectorTarget::new(a)?;
    if a.multi.gpus.is_some() && a.transpose {
        bail!("--gpus computes y = A x: leave out --transpose");
    }
    // Ask for the GPUs before reading a large file.
    let gp = super::dist::resolve_one(&a.multi)?;
    let src = Input::open(&a.file)?;
    let types = probe(&src, &a.read)?;
    with_types!(
        types,
        dtype(a.dtype, &types),
        run_typed(a, &src, target.as_ref(), gp)
    )
}

fn run_typed<T: Scalar, I: Index>(
    a: &SpmvArgs,
    src: &Input,
    target: Option<&VectorTarget>,
    gp: Option<(usize, usize)>,
) -> anyhow::Result<()> {
    let m = load::<T, I>(src, &a.read)?;
    // A Matrix Market file stores no layout (it loads as COO): CSR then.
    let target_kind = match (a.format, src.container()?) {
        (Some(f), _) => f,
        (None, Container::Mtx) => FormatKind::Csr,
        (None, _) => m.kind(),
    };
    let m = if m.kind() == target_kind {
        m
    } else {
        let cannot = || format!("cannot convert {} to {target_kind}", src.name());
        let params = super::convert::chosen_params(target_kind, a.allow_fill, || {
            super::convert::row_lengths(&m)
        })
        .with_context(cannot)?;
        convert(&m, target_kind, &params).with_context(cannot)?
    };
    // y = A^T x reads x along the rows and writes y along the columns.
    let (x_len, y_len) = if a.transpose {
        (m.nrows(), m.ncols())
    } else {
        (m.ncols(), m.nrows())
    };
    let x = make_x::<T>(&a.x, x_len, a.seed)
        .map_err(|e| {
            if a.transpose {
                e.context("with --transpose, x has one entry per row of the matrix")
            } else {
                e
            }
        })
        .with_context(|| src.name())?;
    let t0 = Instant::now();
    let mut parts = None;
    let y = match (a.device, a.transpose, gp) {
        (_, _, Some(g)) => {
            let (y, p) = super::dist::spmv(&m, &x, g, a.format, a.allow_fill)?;
            parts = Some(p);
            y
        }
        (DeviceArg::Cpu, false, None) => {
            let mut y = try_filled(y_len, T::zero(), "y").with_context(|| src.name())?;
            m.spmv(&x, &mut y);
            y
        }
        (DeviceArg::Cpu, true, None) => {
            let mut y = try_filled(y_len, T::zero(), "y").with_context(|| src.name())?;
            m.spmv_transpose(&x, &mut y);
            y
        }
        (DeviceArg::Gpu, transpose, None) => gpu_spmv(&m, &x, transpose)?,
    };
    let dt = t0.elapsed().as_secs_f64();
    let norm = y.iter().map(|v| v.abs2()).sum::<f64>().sqrt();
    let device = match (a.device, gp) {
        (_, Some(_)) => "gpus",
        (DeviceArg::Cpu, None) => "cpu",
        (DeviceArg::Gpu, None) => "gpu",
    };
    if let Some(t) = target {
        t.write(&y, a.force)?;
    }
    // With --gpus and no --format, every part has its own layout.
    let format = match (gp, a.format) {
        (Some(_), None) => "per-part".to_string(),
        _ => m.kind().to_string(),
    };
    if a.json {
        let r = SpmvReport {
            input: src.name(),
            format: format.clone(),
            transpose: a.transpose,
            device,
            dtype: T::NAME,
            nrows: m.nrows(),
            ncols: m.ncols(),
            nnz: m.nnz(),
            ms: dt * 1e3,
            norm2: norm,
            output: target.map(VectorTarget::name),
            gpus: gp.map(|g| g.0),
            partition: parts,
        };
        let mut out = std::io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &r)?;
        writeln!(out)?;
    } else {
        let on = match gp {
            Some((g, p)) => format!("{g} GPUs ({p} parts, each in its layout)"),
            None => device.to_string(),
        };
        note!(
            "spmv{} {} on {on}: {} x {}, {} entries, {:.3} ms, ||y||_2 = {norm:.6e}",
            if a.transpose { " (y = A^T x)" } else { "" },
            format,
            m.nrows(),
            m.ncols(),
            m.nnz(),
            dt * 1e3
        );
    }
    Ok(())
}

fn gpu_spmv<T: Scalar, I: Index>(
    m: &AnyMatrix<T, I>,
    x: &[T],
    transpose: bool,
) -> anyhow::Result<Vec<T>> {
    let ctx = sparsetool_gpu::GpuContext::new(0).map_err(|e| EnvError(e.to_string()))?;
    let y_len = if transpose { m.ncols() } else { m.nrows() };
    let y_bytes = y_len as u128 * std::mem::size_of::<T>() as u128;
    ensure_available(y_bytes, "y")
        .with_context(|| format!("{} x {} matrix", m.nrows(), m.ncols()))?;
    Ok(if transpose {
        sparsetool_gpu::spmv_gpu_transpose(&ctx, &m.as_ref(), x)?
    } else {
        sparsetool_gpu::spmv_gpu(&ctx, &m.as_ref(), x)?
    })
}
