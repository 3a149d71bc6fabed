//! `sparsetool spmv`: y = A x in a chosen format, on the CPU or a GPU.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context};
use sparsetool_convert::{convert, AnyMatrix, ConvertParams};

use crate::args::{DeviceArg, SpmvArgs};
use crate::dispatch::with_types;
use crate::io::{load, probe};
use crate::output::check_target;
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

/// Runs `spmv`.
pub fn run(a: &SpmvArgs) -> anyhow::Result<()> {
    if let Some(out) = &a.output {
        check_target(out, a.force)?;
    }
    let src = Input::open(&a.file)?;
    let types = probe(&src, &a.read)?;
    with_types!(types, a.dtype, run_typed(a, &src))
}

fn run_typed<T: Scalar, I: Index>(a: &SpmvArgs, src: &Input) -> anyhow::Result<()> {
    let m = load::<T, I>(src, &a.read)?;
    // A Matrix Market file stores no layout (it loads as COO): CSR then.
    let target = match (a.format, src.container()?) {
        (Some(f), _) => f,
        (None, Container::Mtx) => FormatKind::Csr,
        (None, _) => m.kind(),
    };
    let m = if m.kind() == target {
        m
    } else {
        convert(&m, target, &ConvertParams::default()).with_context(|| src.name())?
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
    let y = match (a.device, a.transpose) {
        (DeviceArg::Cpu, false) => {
            let mut y = try_filled(y_len, T::zero(), "y").with_context(|| src.name())?;
            m.spmv(&x, &mut y);
            y
        }
        (DeviceArg::Cpu, true) => {
            let mut y = try_filled(y_len, T::zero(), "y").with_context(|| src.name())?;
            m.spmv_transpose(&x, &mut y);
            y
        }
        (DeviceArg::Gpu, transpose) => gpu_spmv(&m, &x, transpose)?,
    };
    let dt = t0.elapsed().as_secs_f64();
    let norm = y.iter().map(|v| v.abs2()).sum::<f64>().sqrt();
    eprintln!(
        "spmv{} {} on {}: {} x {}, {} entries, {:.3} ms, ||y||_2 = {norm:.6e}",
        if a.transpose { " (y = A^T x)" } else { "" },
        m.kind(),
        match a.device {
            DeviceArg::Cpu => "cpu",
            DeviceArg::Gpu => "gpu",
        },
        m.nrows(),
        m.ncols(),
        m.nnz(),
        dt * 1e3
    );
    if let Some(out) = &a.output {
        sparsetool_formats::io::write_atomic(out, a.force, |w| {
            Ok(sparsetool_formats::npz::write_npy(w, &y)?)
        })?;
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
