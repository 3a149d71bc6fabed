//! `sparsetool gen`: synthetic matrices for tests and benchmarks.

use anyhow::Context;
use sparsetool_convert::AnyMatrix;
use sparsetool_fixtures::gen::{generate, GenKind, GenParams};
use sparsetool_formats::{fits_index, Index, Scalar};

use crate::args::GenArgs;
use crate::commands::convert::written;
use crate::dispatch::with_types;
use crate::io::{save, Target};
use crate::output::Timings;
use sparsetool_formats::io::{Container, Probe};

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
        complex: false,
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
    let mut t = Timings::new(a.timings);
    let m = generate::<T, I>(kind, p).with_context(|| format!("cannot generate {}", a.kind))?;
    t.phase("generate");
    let m = AnyMatrix::Csr(m);
    let bytes = save(&m, target)?;
    t.phase("write");
    written(&m, target, bytes, &t, None, Some(kind.to_string())).report(a.json)
}
