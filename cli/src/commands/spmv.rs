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
use sparsetool_formats::io::{Container, Input};
use sparsetool_formats::{FormatKind, Index, Scalar};

/// Builds x of length `n`: `ones`, `random` (fixed seed, uniform in [-1, 1)) or a .npy file.
pub fn make_x<T: Scalar>(spec: &str, n: usize) -> anyhow::Result<Vec<T>> {
    match spec {
        "ones" => Ok(vec![T::one(); n]),
        "random" => Ok(sparsetool_analyze::bench::random_x(n, 42)),
        path => {
            let x: Vec<T> = sparsetool_formats::npz::read_npy(Path::new(path))
                .with_context(|| format!("cannot read x from {path}"))?;
            if x.len() != n {
                bail!(
                    "{path}: x has {} entries, the matrix has {n} columns",
                    x.len()
                );
            }
            Ok(x)
        }
    }
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
        convert(&m, target, &ConvertParams::default())?
    };
    let x = make_x::<T>(&a.x, m.ncols())?;
    let t0 = Instant::now();
    let y = match a.device {
        DeviceArg::Cpu => {
            let mut y = vec![T::zero(); m.nrows()];
            m.spmv(&x, &mut y);
            y
        }
        DeviceArg::Gpu => gpu_spmv(&m, &x)?,
    };
    let dt = t0.elapsed().as_secs_f64();
    let norm = y.iter().map(|v| v.abs2()).sum::<f64>().sqrt();
    eprintln!(
        "spmv {} on {}: {} x {}, {} entries, {:.3} ms, ||y||_2 = {norm:.6e}",
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

fn gpu_spmv<T: Scalar, I: Index>(m: &AnyMatrix<T, I>, x: &[T]) -> anyhow::Result<Vec<T>> {
    let ctx = sparsetool_gpu::GpuContext::new(0).map_err(|e| EnvError(e.to_string()))?;
    Ok(sparsetool_gpu::spmv_gpu(&ctx, &m.as_ref(), x)?)
}
