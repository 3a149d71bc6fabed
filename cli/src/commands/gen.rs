//! `sparsetool gen`: synthetic matrices for tests and benchmarks.

use std::io::Write;

use anyhow::{bail, Context};
use sparsetool_convert::AnyMatrix;
use sparsetool_fixtures::gen::{generate, uniform_rows, GenKind, GenParams};
use sparsetool_formats::{fits_index, Index, Scalar};

use crate::args::GenArgs;
use crate::commands::convert::written;
use crate::dispatch::with_types;
use crate::io::{save, Target};
use crate::output::Timings;
use sparsetool_formats::io::{Container, OutputKind, Probe};
use sparsetool_formats::mm::{
    default_field, MmError, MmErrorKind, RowBlockWriter, WriteOptions, WriteSymmetry,
};

/// Runs `gen`.
pub fn run(a: &GenArgs) -> anyhow::Result<()> {
    let kind: GenKind = a.kind.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
    let target = Target::new(&a.out, a.json)?;
    let params = GenParams {
        rows: a.rows,
        cols: a.cols,
        nnz_per_row: a.nnz_per_row,
        seed: a.seed,
        alpha: a.alpha,
        max_row_len: a.max_row_len,
    };
    // Upper bound of the entry count decides the index width.
    let cols = a.cols.unwrap_or(a.rows);
    let bound = a.rows.saturating_mul(a.nnz_per_row.max(27)).max(cols);
    let types = Probe {
        container: Container::Mtx,
        complex: a.complex,
        needs_i64: !fits_index::<i32>(a.rows, cols, bound),
        precision: a.dtype,
    };
    with_types!(types, a.dtype, gen_typed(a, kind, &params, &target))
}

fn gen_typed<T: Scalar, I: Index>(
    a: &GenArgs,
    kind: GenKind,
    p: &GenParams,
    target: &Target,
) -> anyhow::Result<()> {
    let mtx = matches!(target.kind, OutputKind::Mtx | OutputKind::MtxGz);
    if kind == GenKind::Uniform && mtx && (a.stream || too_big::<T, I>(p)) {
        return stream_uniform::<T, I>(a, p, target);
    }
    if a.stream {
        bail!("--stream writes uniform matrices to Matrix Market (.mtx, .mtx.gz or -) only");
    }
    let mut t = Timings::new(a.timings);
    let m = generate::<T, I>(kind, p).with_context(|| format!("cannot generate {}", a.kind))?;
    t.phase("generate");
    let m = AnyMatrix::Csr(m);
    let bytes = save(&m, target)?;
    t.phase("write");
    written(&m, target, bytes, &t, None, Some(kind.to_string())).report(a.json)
}

/// Whether the in-memory matrix (CSR) would need more than half the
/// available memory.
fn too_big<T: Scalar, I: Index>(p: &GenParams) -> bool {
    let nnz = p.rows.saturating_mul(p.nnz_per_row) as u128;
    let bytes = nnz * (std::mem::size_of::<T>() + std::mem::size_of::<I>()) as u128
        + (p.rows as u128 + 1) * std::mem::size_of::<I>() as u128;
    sparsetool_formats::alloc::available_memory().is_some_and(|a| bytes > a / 2)
}

/// Rows per generated block (about a million entries).
const BLOCK_ENTRIES: usize = 1 << 20;

/// `gen uniform` to Matrix Market, block by block of rows: the lines
/// `save` writes for the whole matrix (stored `general`), in the memory
/// of one block.
fn stream_uniform<T: Scalar, I: Index>(
    a: &GenArgs,
    p: &GenParams,
    target: &Target,
) -> anyhow::Result<()> {
    let mut t = Timings::new(a.timings);
    let (rows, k) = (p.rows, p.nnz_per_row);
    let cols = p.cols.unwrap_or(rows);
    let Some(nnz) = rows.checked_mul(k) else {
        bail!("uniform: {rows} rows of {k} entries are too many");
    };
    let opts = WriteOptions {
        field: default_field::<T>(),
        comment: Some(format!(
            "written by sparsetool {} from csr storage",
            env!("CARGO_PKG_VERSION")
        )),
        symmetry: WriteSymmetry::General,
        comments: Vec::new(),
    };
    let step = (BLOCK_ENTRIES / k.max(1)).max(1);
    let gz = target.kind == OutputKind::MtxGz;
    let mut failed: Option<anyhow::Error> = None;
    let io = |e: std::io::Error| MmError::new("", None, MmErrorKind::Io(e));
    let mut body = |w: &mut dyn Write| -> Result<(), MmError> {
        let mut rw = RowBlockWriter::new(w, (rows, cols, nnz), &opts)?;
        let mut lo = 0;
        while lo < rows {
            let hi = rows.min(lo + step);
            match uniform_rows::<T, I>(lo..hi, cols, k, p.seed) {
                Ok(b) => rw.rows(&b)?,
                Err(e) => {
                    failed = Some(anyhow::Error::new(e).context("cannot generate uniform"));
                    return Err(io(std::io::Error::other("generation failed")));
                }
            }
            lo = hi;
        }
        rw.finish().map(|_| ())
    };
    let mut write = |w: &mut dyn Write| -> Result<(), MmError> {
        if gz {
            let mut g = flate2::write::GzEncoder::new(&mut *w, flate2::Compression::new(6));
            body(&mut g)?;
            g.try_finish().map_err(io)?;
        } else {
            body(w)?;
        }
        w.flush().map_err(io)
    };
    let written: anyhow::Result<u64> = match &target.path {
        Some(path) => sparsetool_formats::io::write_atomic(path, a.out.force, |w| {
            write(w).map_err(|e| e.with_path(path.display().to_string()).into())
        })
        .map(|()| std::fs::metadata(path).map(|m| m.len()).unwrap_or(0))
        .map_err(Into::into),
        None => {
            let out = std::io::stdout().lock();
            let mut w = CountingWriter(std::io::BufWriter::with_capacity(1 << 20, out), 0);
            write(&mut w)
                .map(|()| w.1)
                .map_err(|e| e.with_path("<stdout>").into())
        }
    };
    if let Some(e) = failed {
        return Err(e);
    }
    let bytes = written?;
    t.phase("generate and write");
    crate::output::Written {
        input: None,
        kind: Some(GenKind::Uniform.to_string()),
        output: target.name(),
        container: crate::io::container_name(target.kind),
        format: "csr".into(),
        nrows: rows,
        ncols: cols,
        nnz,
        dtype: T::NAME.to_string(),
        bytes,
        seconds: t.total(),
        timings: t.phases(),
    }
    .report(a.json)
}

/// A writer that counts the bytes through it.
struct CountingWriter<W>(W, u64);

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        self.1 += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}
