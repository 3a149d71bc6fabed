//! `sparsetool convert`: read, convert, write, with phase timings.

use std::borrow::Borrow;

use anyhow::{bail, Context};
use sparsetool_analyze::{recommend_hyb_width, recommend_sell, RowLengths};
use sparsetool_convert::{from_csr, ConvertError, ConvertParams, HybWidth, ToCsr};
use sparsetool_formats::{AnyMatrix, Csr, FormatKind, Index, Scalar};

use crate::args::ConvertArgs;
use crate::dispatch::with_types;
use crate::io::{container_name, dtype, load_with_comments, probe, save, Target};
use crate::output::{Timings, Written};
use sparsetool_formats::io::{Input, OutputKind};

/// Parses `--hyb-width`.
pub fn hyb_width(s: &str) -> anyhow::Result<HybWidth> {
    if s.eq_ignore_ascii_case("auto") {
        return Ok(HybWidth::Auto);
    }
    let k: usize = s
        .parse()
        .with_context(|| format!("--hyb-width must be a number or `auto`, got `{s}`"))?;
    Ok(HybWidth::Fixed(k))
}

/// Fills in what the user left to us from the analysis of the row lengths
/// (`rows`, read only when needed): `--hyb-width auto` becomes the
/// cost-model width, and a SELL conversion without `--slice`/`--sigma`
/// gets the recommended C and sigma. The in-memory and the out-of-core
/// paths both call this, so they choose the same parameters.
pub fn recommended_params<R: Borrow<RowLengths>, E: Into<anyhow::Error>>(
    plan: &Plan,
    rows: impl FnOnce() -> Result<R, E>,
) -> anyhow::Result<ConvertParams> {
    let mut p = plan.params.clone();
    let needs_hyb = plan.target == FormatKind::Hyb && p.hyb_width == HybWidth::Auto;
    let needs_sell = plan.target == FormatKind::Sell && (!plan.slice_given || p.sigma.is_none());
    if needs_hyb || needs_sell {
        let rl = rows().map_err(Into::into)?;
        let rl = rl.borrow();
        if needs_hyb {
            p.hyb_width = HybWidth::Fixed(recommend_hyb_width(rl).max(1));
        }
        if needs_sell {
            let (c, sigma) = recommend_sell(rl);
            if !plan.slice_given {
                p.slice = c;
            }
            if p.sigma.is_none() {
                // The recommended window is for the recommended C; keep it a multiple of C.
                let c = p.slice.max(1);
                p.sigma = Some(if sigma <= 1 { 1 } else { sigma.div_ceil(c) * c });
            }
        }
    }
    Ok(p)
}

/// The layout parameters `convert --to target` chooses when given no
/// layout flag (`--hyb-width auto`'s cost-model width, the recommended SELL
/// C and sigma), from the row lengths `rows` (computed only for HYB and
/// SELL): `spmv --format` converts with them and `bench` times them, so
/// that both run the layout `convert` would write.
///
/// # Errors
/// `rows` fails.
pub fn chosen_params<R: Borrow<RowLengths>>(
    target: FormatKind,
    allow_fill: bool,
    rows: impl FnOnce() -> anyhow::Result<R>,
) -> anyhow::Result<ConvertParams> {
    let plan = Plan {
        target,
        params: ConvertParams {
            allow_fill,
            ..ConvertParams::default()
        },
        slice_given: false,
    };
    recommended_params(&plan, rows)
}

/// The row lengths of any matrix. COO (an .npz coo, or Matrix Market read
/// whole) is counted as stored, like the streaming pass counts a .mtx,
/// without building CSR (whose row pointers alone would be huge for a huge,
/// nearly empty matrix); the others go through CSR, borrowed when they are
/// CSR.
///
/// # Errors
/// The conversion to CSR or the analysis fails.
pub fn row_lengths<T: Scalar, I: Index>(m: &AnyMatrix<T, I>) -> anyhow::Result<RowLengths> {
    Ok(match m {
        AnyMatrix::Coo(c) => RowLengths::from_coo(c)?,
        m => RowLengths::from_csr(m.try_as_csr()?.as_ref())?,
    })
}

/// Validated conversion settings.
#[derive(Debug)]
pub struct Plan {
    target: FormatKind,
    params: ConvertParams,
    slice_given: bool,
}

impl TryFrom<&ConvertArgs> for Plan {
    type Error = anyhow::Error;
    fn try_from(a: &ConvertArgs) -> anyhow::Result<Self> {
        let target = a.to;
        if a.ell_width.is_some() && target != FormatKind::Ell {
            bail!("--ell-width applies to --to ell only (for HYB use --hyb-width)");
        }
        if (a.slice.is_some() || a.sigma.is_some()) && target != FormatKind::Sell {
            bail!("--slice and --sigma apply to --to sell only");
        }
        let mut params = ConvertParams {
            ell_width: a.ell_width,
            hyb_width: hyb_width(&a.hyb_width)?,
            sigma: a.sigma,
            allow_fill: a.allow_fill,
            ..ConvertParams::default()
        };
        if let Some(c) = a.slice {
            params.slice = c;
        }
        Ok(Plan {
            target,
            params,
            slice_given: a.slice.is_some(),
        })
    }
}

/// Runs `convert`.
pub fn run(a: &ConvertArgs) -> anyhow::Result<()> {
    let plan = Plan::try_from(a)?;
    let mut target = Target::new(&a.out, a.json)?;
    if let Some(s) = a.symmetry {
        if !matches!(target.kind, OutputKind::Mtx | OutputKind::MtxGz) {
            bail!(
                "--symmetry applies to Matrix Market output (.mtx, .mtx.gz) only, not {}",
                container_name(target.kind)
            );
        }
        target.symmetry = s.into();
    }
    let mut t = Timings::new(a.timings);
    let src = Input::open(&a.file)?;
    let types = probe(&src, &a.read)?;
    // Out of core when the in-memory path would exceed --memory-limit.
    let ooc = crate::commands::ooc::wanted(a, &src, &types, &target)?;
    let job = Job {
        a,
        plan: &plan,
        src: &src,
        target: &target,
    };
    with_types!(types, dtype(a.dtype, &types), run_typed(job, ooc, &mut t))
}

/// One `convert` run with its input open, for either path (in memory or
/// out of core): the arguments, their plan, the input and the output.
#[derive(Clone, Copy)]
pub struct Job<'a> {
    /// The command line.
    pub a: &'a ConvertArgs,
    /// The validated settings.
    pub plan: &'a Plan,
    /// The input.
    pub src: &'a Input,
    /// Where the result goes.
    pub target: &'a Target,
}

/// Runs `job` for one value and index type: out of core where `ooc` (see
/// [`crate::commands::ooc::wanted`]), else in memory.
fn run_typed<T: Scalar, I: Index>(job: Job<'_>, ooc: bool, t: &mut Timings) -> anyhow::Result<()> {
    if ooc {
        return crate::commands::ooc::run_typed::<T, I>(job, t);
    }
    let Job {
        a,
        plan,
        src,
        target,
    } = job;
    let (m, comments) = load_with_comments::<T, I>(src, &a.read)?;
    t.phase("read");
    let cannot = || format!("cannot convert {} to {}", src.name(), plan.target);
    // Entries converted: each pass (to CSR, then to the target) counts
    // every entry once.
    let passes = if m.kind() == plan.target {
        0
    } else {
        u64::from(m.kind() != FormatKind::Csr)
            + u64::from(!matches!(plan.target, FormatKind::Csr | FormatKind::Coo))
    };
    let _bar = crate::output::Bar::follow(
        format!("converting {} to {}", m.kind(), plan.target),
        &sparsetool_formats::progress::CONVERT,
        Some(m.nnz() as u64 * passes),
        crate::output::Unit::Count("entries"),
        m.nnz() > 5_000_000 && passes > 0,
    );
    let out = if m.kind() == plan.target && plan.target == FormatKind::Coo {
        m
    } else if plan.target == FormatKind::Csr {
        // Moved, not copied: `from_csr` would clone the CSR it is given.
        AnyMatrix::Csr(into_csr_freeing(m).with_context(cannot)?)
    } else {
        let csr = into_csr_freeing(m).with_context(cannot)?;
        let params = recommended_params(plan, || RowLengths::from_csr(&csr))?;
        let out = from_csr(&csr, plan.target, &params).with_context(cannot)?;
        drop_in_background(csr);
        out
    };
    t.phase("convert");
    // The input's header comments go on into a Matrix Market output.
    let target = Target {
        comments,
        ..target.clone()
    };
    let bytes = save(&out, &target)?;
    t.phase("write");
    written(&out, &target, bytes, t, Some(src.name()), None).report(a.json)
}

/// Frees `v` on a thread of its own: returning the pages of a matrix of
/// 10M entries to the system takes 15-20 ms, which the next phase (the
/// write) overlaps instead of waiting for.
/// (Without a thread to be had, the value is freed here, with the closure.)
fn drop_in_background<V: Send + 'static>(v: V) {
    let _ = std::thread::Builder::new().spawn(move || drop(v));
}

/// `m` as CSR: moved when it is one, else converted, and `m` freed in the
/// background.
fn into_csr_freeing<T: Scalar, I: Index>(m: AnyMatrix<T, I>) -> Result<Csr<T, I>, ConvertError> {
    match m {
        AnyMatrix::Csr(c) => Ok(c),
        m => {
            let c = m.try_as_csr()?.into_owned();
            drop_in_background(m);
            Ok(c)
        }
    }
}

/// The summary of a write, shared by `convert` and `gen`.
pub fn written<T: Scalar, I: Index>(
    m: &AnyMatrix<T, I>,
    target: &Target,
    bytes: u64,
    t: &Timings,
    input: Option<String>,
    kind: Option<String>,
) -> Written {
    Written {
        input,
        kind,
        output: target.name(),
        container: container_name(target.kind),
        format: m.kind().to_string(),
        nrows: m.nrows(),
        ncols: m.ncols(),
        nnz: m.nnz(),
        dtype: T::NAME.to_string(),
        bytes,
        seconds: t.total(),
        timings: t.phases(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CSR of `lens.len()` rows, row i holding `lens[i]` entries in its first
    /// columns.
    fn rows_of(lens: &[usize]) -> AnyMatrix<f64, i32> {
        let ncols = lens.iter().copied().max().unwrap_or(0).max(1);
        let mut row_ptr = vec![0i32];
        let mut cols = Vec::new();
        for &l in lens {
            cols.extend((0..l).map(|c| c as i32));
            row_ptr.push(cols.len() as i32);
        }
        let vals = vec![1.0; cols.len()];
        AnyMatrix::Csr(Csr::try_from_parts(lens.len(), ncols, row_ptr, cols, vals).unwrap())
    }

    #[test]
    fn spmv_converts_with_the_parameters_convert_chooses() {
        // even rows: SELL needs no sorting (sigma 1, where the format's
        // default would be 32 * C)
        let even = rows_of(&[3; 100]);
        let p = chosen_params(FormatKind::Sell, false, || row_lengths(&even)).unwrap();
        assert_eq!((p.slice, p.sigma), (32, Some(1)));
        // 999 rows of 4 and one of 200: HYB at width 4, as `convert
        // --hyb-width auto` (the cost-model width, not CUSP's rule)
        let mut lens = vec![4; 1000];
        lens[10] = 200;
        let skewed = rows_of(&lens);
        let rl = row_lengths(&skewed).unwrap();
        let p = chosen_params(FormatKind::Hyb, true, || row_lengths(&skewed)).unwrap();
        assert_eq!(p.hyb_width, HybWidth::Fixed(recommend_hyb_width(&rl)));
        assert_eq!(p.hyb_width, HybWidth::Fixed(4));
        assert!(p.allow_fill);
        let (c, sigma) = recommend_sell(&rl);
        let p = chosen_params(FormatKind::Sell, false, || row_lengths(&skewed)).unwrap();
        let sigma = if sigma <= 1 { 1 } else { sigma.div_ceil(c) * c };
        assert_eq!((p.slice, p.sigma), (c, Some(sigma)));
        // the same from COO (a Matrix Market input)
        let coo = sparsetool_convert::convert(&skewed, FormatKind::Coo, &ConvertParams::default())
            .unwrap();
        let q = chosen_params(FormatKind::Sell, false, || row_lengths(&coo)).unwrap();
        assert_eq!((q.slice, q.sigma), (p.slice, p.sigma));
        // other targets keep the defaults
        let p = chosen_params(FormatKind::Ell, false, || row_lengths(&skewed)).unwrap();
        assert_eq!(p.hyb_width, HybWidth::Auto);
        assert_eq!(p.sigma, None);
    }
}
