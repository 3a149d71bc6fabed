//! `sparsetool convert`: read, convert, write, with phase timings.

use anyhow::{bail, Context};
use sparsetool_analyze::{recommend_hyb_width, recommend_sell, RowLengths};
use sparsetool_convert::{from_csr, ConvertParams, HybWidth};
use sparsetool_formats::Csr;
use sparsetool_formats::FormatKind;

use crate::args::{ConvertArgs, FormatArg};
use crate::dispatch::{with_types, Idx, Val};
use crate::io::{load, out_kind, save, type_plan, Source};
use crate::output::{check_target, Timings};

/// Maps the CLI format to the library's.
pub fn kind(f: FormatArg) -> FormatKind {
    match f {
        FormatArg::Coo => FormatKind::Coo,
        FormatArg::Csr => FormatKind::Csr,
        FormatArg::Ell => FormatKind::Ell,
        FormatArg::Hyb => FormatKind::Hyb,
        FormatArg::Jds => FormatKind::Jds,
        FormatArg::Sell => FormatKind::Sell,
    }
}

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

/// Fills in what the user left to us from the analysis of the row lengths:
/// `--hyb-width auto` becomes the cost-model width, and a SELL conversion
/// without `--slice`/`--sigma` gets the recommended C and sigma.
pub fn recommended_params<T: Val, I: Idx>(
    csr: &Csr<T, I>,
    plan: &Plan,
) -> anyhow::Result<ConvertParams> {
    let mut p = plan.params.clone();
    let needs_hyb = plan.target == FormatKind::Hyb && p.hyb_width == HybWidth::Auto;
    let needs_sell = plan.target == FormatKind::Sell && (!plan.slice_given || p.sigma.is_none());
    if needs_hyb || needs_sell {
        let rl = RowLengths::from_csr(csr)?;
        if needs_hyb {
            p.hyb_width = HybWidth::Fixed(recommend_hyb_width(&rl).max(1));
        }
        if needs_sell {
            let (c, sigma) = recommend_sell(&rl);
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
        let target = kind(a.to);
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
    out_kind(&a.output)?;
    check_target(&a.output, a.force)?;
    let mut t = Timings::new(a.timings);
    let src = Source::open(&a.file)?;
    let types = type_plan(&src, &a.read)?;
    with_types!(types, a.dtype, run_typed(a, &plan, &src, &mut t))
}

fn run_typed<T: Val, I: Idx>(
    a: &ConvertArgs,
    plan: &Plan,
    src: &Source,
    t: &mut Timings,
) -> anyhow::Result<()> {
    let m = load::<T, I>(src, &a.read)?;
    t.phase("read");
    let out = if m.kind() == plan.target && plan.target == FormatKind::Coo {
        m
    } else {
        let csr = m.into_csr();
        let params = recommended_params(&csr, plan)?;
        from_csr(&csr, plan.target, &params)
            .with_context(|| format!("cannot convert {} to {}", src.name(), plan.target))?
    };
    t.phase("convert");
    save(&out, &a.output, a.force)?;
    t.phase("write");
    Ok(())
}
