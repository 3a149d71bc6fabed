//! `convert` out of core: taken when the in-memory path would need more
//! than `--memory-limit` (the work is `sparsetool_convert::ooc`'s).

use std::io::Read;

use anyhow::bail;
use sparsetool_analyze::RowLengths;
use sparsetool_convert::ooc::{
    convert_out_of_core_to, fits, in_memory_estimate, Budget, CsrView, Output,
};
use sparsetool_formats::alloc::human_bytes;
use sparsetool_formats::io::{read_mm_header, Container, Input, Probe};
use sparsetool_formats::mm::{Header, MmFormat};
use sparsetool_formats::values::escape;
use sparsetool_formats::{FormatKind, Index, Scalar};

use crate::args::{ConvertArgs, MemoryLimit};
use crate::commands::convert::{recommended_params, Job};
use crate::dispatch::with_types;
use crate::io::{container_name, dtype, load_options, print_warnings, Target};
use crate::output::{Bar, Timings, Unit, Written};

/// The budget `--memory-limit` gives: its size, or half the available
/// memory (`auto`; 4 GiB where that cannot be read).
pub fn budget(limit: MemoryLimit) -> u64 {
    match limit {
        MemoryLimit::Bytes(b) => b,
        MemoryLimit::Auto => sparsetool_formats::alloc::available_memory()
            .map_or(4 << 30, |a| u64::try_from(a / 2).unwrap_or(u64::MAX)),
    }
}

/// The in-memory estimate, that of the entries alone (as read), and
/// whether out of core can do it in `limit`.
fn estimate<T: Scalar, I: Index>(h: &Header, target: FormatKind, limit: u64) -> (u128, u128, bool) {
    (
        in_memory_estimate::<T, I>(h, target),
        in_memory_estimate::<T, I>(h, FormatKind::Coo),
        fits::<T, I>(h, target, limit),
    )
}

/// Whether `convert` must run out of core: a Matrix Market input whose
/// in-memory conversion would need more than the budget. Refuses (usage
/// errors) what cannot then be done: standard output, an array file.
pub fn wanted(
    a: &ConvertArgs,
    src: &Input,
    types: &Probe,
    target: &Target,
) -> anyhow::Result<bool> {
    if !matches!(src.container()?, Container::Mtx) {
        return Ok(false);
    }
    let (h, _) = read_mm_header(src, &load_options(&a.read))?;
    let limit = budget(a.memory_limit);
    let (need, entries, can) =
        with_types!(*types, dtype(a.dtype, types), estimate(&h, a.to, limit));
    // Dimensions no budget holds (2^63 rows) get the in-memory path's own
    // refusal.
    if need <= u128::from(limit) || !can {
        return Ok(false);
    }
    // With `auto`, only the entries' own size sends a conversion out of
    // core: offsets larger than memory for a handful of entries (billions
    // of declared rows) get the in-memory allocation check's refusal
    // rather than gigabytes written to disk.
    if a.memory_limit == MemoryLimit::Auto && entries <= u128::from(limit) {
        return Ok(false);
    }
    // A plain file cannot hold more entry lines than a quarter of its
    // bytes (`1 1\n`): a header declaring more is refused by the reader
    // with its own message.
    if matches!(src, Input::Path(_)) && !is_gz(src) && h.entries as u64 > src.len() / 4 {
        return Ok(false);
    }
    let possible = target.path.is_some() && h.format != MmFormat::Array;
    // Without an explicit limit, what cannot run out of core is tried in
    // memory, where its own allocation checks apply.
    if !possible && a.memory_limit == MemoryLimit::Auto {
        return Ok(false);
    }
    let why = format!(
        "{}: converting it in memory needs about {}, more than --memory-limit {}",
        escape(&src.name()),
        human_bytes(need),
        human_bytes(u128::from(limit))
    );
    if target.path.is_none() {
        bail!(
            "{why}; out of core, convert writes a file (its scratch files go beside it): give -o FILE, or raise --memory-limit"
        );
    }
    if h.format == MmFormat::Array {
        bail!("{why}; an array (dense) file is converted in memory only: raise --memory-limit");
    }
    Ok(true)
}

/// Runs the out-of-core conversion ([`wanted`] said yes) for one value and
/// index type.
pub fn run_typed<T: Scalar, I: Index>(job: Job<'_>, t: &mut Timings) -> anyhow::Result<()> {
    let Job {
        a,
        plan,
        src,
        target,
    } = job;
    let Some(out) = target.path.clone() else {
        bail!("out-of-core conversion writes a file: give -o FILE");
    };
    let tmp_dir = a
        .tmp_dir
        .clone()
        .unwrap_or_else(|| sparsetool_formats::io::parent_dir(&out));
    if !tmp_dir.is_dir() {
        bail!(
            "--tmp-dir {}: not a directory",
            escape(&tmp_dir.display().to_string())
        );
    }
    let reader: Box<dyn Read + Send> = match src {
        Input::Path(p) => Box::new(
            std::fs::File::open(p)
                .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", escape(&src.name())))?,
        ),
        Input::Stream(_) => src.take_reader()?,
        Input::Bytes { bytes, .. } => Box::new(std::io::Cursor::new(bytes.clone())),
        Input::Spooled { .. } => bail!("{}: not a Matrix Market input", escape(&src.name())),
    };
    let name = src.name();
    let budget = Budget {
        bytes: budget(a.memory_limit),
        tmp_dir,
    };
    // The bar counts the text parsed: for gzip content that is not the
    // file's size.
    let gz = is_gz(src);
    let big = src.len() > (64 << 20) || matches!(src, Input::Stream(_));
    let _read = Bar::follow(
        format!("reading {}", escape(&name)),
        &sparsetool_formats::progress::READ,
        Some(if gz { 0 } else { src.len() }),
        Unit::Bytes,
        big,
    );
    let _built = Bar::follow(
        format!("building {} out of core", a.to),
        &sparsetool_formats::progress::CONVERT,
        Some(0),
        Unit::Count("buckets"),
        big,
    );
    let opts = sparsetool_formats::mm::ReadOptions {
        lenient: a.read.lenient,
        ..Default::default()
    };
    let mut failed = None;
    let mut summary = None;
    let written = sparsetool_formats::io::write_atomic_path(&out, target.force, ".tmp", |tmp| {
        // The GPU layouts' parameters, chosen as in memory, from the
        // CSR built out of core.
        let params = |v: &CsrView<'_, T, I>| {
            recommended_params(plan, || {
                RowLengths::from_row_ptr(v.nrows, v.ncols, v.row_ptr, v.col_idx)
            })
            .map_err(|e| format!("{}: {e:#}", escape(&name)))
        };
        let output = Output {
            path: tmp,
            kind: target.kind,
            save: &target.save_options(),
        };
        match convert_out_of_core_to::<T, I>(reader, &name, &opts, a.to, &params, &budget, &output)
        {
            Ok(s) => {
                summary = Some(s);
                Ok(())
            }
            Err(e) => {
                failed = Some(e);
                Err(sparsetool_formats::io::Error::Path {
                    path: name.clone(),
                    message: "out-of-core conversion failed".into(),
                })
            }
        }
    });
    if let Some(e) = failed {
        return Err(match e {
            // As in memory: the conversion's reason, after the file's name.
            sparsetool_convert::ooc::OocError::Convert(c) => {
                anyhow::Error::new(c).context(format!("cannot convert {} to {}", name, a.to))
            }
            e => e.into(),
        });
    }
    written?;
    let Some(s) = summary else {
        bail!("out-of-core conversion of {} wrote nothing", escape(&name));
    };
    print_warnings(&name, &s.warnings);
    t.phase("convert (out of core)");
    Written {
        input: Some(name),
        kind: None,
        output: target.name(),
        container: container_name(target.kind),
        format: a.to.to_string(),
        nrows: s.nrows,
        ncols: s.ncols,
        nnz: s.nnz,
        dtype: T::NAME.to_string(),
        bytes: s.bytes,
        seconds: t.total(),
        timings: t.phases(),
    }
    .report(a.json)
}

/// Whether the input is gzip content (a stream counts as one: its size is
/// unknown either way).
fn is_gz(src: &Input) -> bool {
    match src {
        Input::Path(p) => {
            let mut magic = [0u8; 2];
            let n = std::fs::File::open(p)
                .and_then(|mut f| sparsetool_formats::mm::read_up_to(&mut f, &mut magic))
                .unwrap_or(0);
            n == 2 && magic == [0x1f, 0x8b]
        }
        _ => true,
    }
}
