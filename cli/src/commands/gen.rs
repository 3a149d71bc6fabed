//! `sparsetool gen`: synthetic matrices for tests and benchmarks.

use anyhow::Context;
use sparsetool_convert::AnyMatrix;
use sparsetool_fixtures::gen::{generate, GenKind, GenParams};
use sparsetool_formats::fits_index;

use crate::args::GenArgs;
use crate::dispatch::{with_types, Idx, TypePlan, Val};
use crate::io::{out_kind, save};
use crate::output::{check_target, Timings};

/// Runs `gen`.
pub fn run(a: &GenArgs) -> anyhow::Result<()> {
    let kind: GenKind = a.kind.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
    out_kind(&a.output)?;
    check_target(&a.output, a.force)?;
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
    let types = TypePlan {
        complex: false,
        wide: !fits_index::<i32>(a.rows, cols, bound),
    };
    with_types!(types, a.dtype, gen_typed(a, kind, &params))
}

fn gen_typed<T: Val, I: Idx>(a: &GenArgs, kind: GenKind, p: &GenParams) -> anyhow::Result<()> {
    let mut t = Timings::new(a.timings);
    let m = generate::<T, I>(kind, p).with_context(|| format!("cannot generate {}", a.kind))?;
    t.phase("generate");
    eprintln!(
        "generated {}: {} x {}, {} entries",
        a.kind,
        m.nrows(),
        m.ncols(),
        m.nnz()
    );
    save(&AnyMatrix::Csr(m), &a.output, a.force)?;
    t.phase("write");
    Ok(())
}
