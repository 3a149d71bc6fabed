//! Inputs and outputs of the commands: [`sparsetool_formats::io`] does the
//! work; this module adds what a terminal user sees (spinners, warnings).

use sparsetool_formats::io::{self, Input, LoadOptions, Probe, SaveOptions};
use sparsetool_formats::values::{escape, escape_path};
use sparsetool_formats::{mm, AnyMatrix, Index, Scalar};

use crate::args::ReadArgs;
use crate::output::Spinner;

/// The load options the read flags ask for.
pub fn load_options(read: &ReadArgs) -> LoadOptions {
    LoadOptions {
        lenient: read.lenient,
        verify_checksums: !read.no_verify_checksums,
    }
}

/// What loading `src` needs (complex values, 64-bit indices), from headers.
pub fn probe(src: &Input, read: &ReadArgs) -> anyhow::Result<Probe> {
    Ok(io::probe(src, &load_options(read))?)
}

/// Prints lenient-mode recoveries as `warning: FILE:LINE: message` on stderr.
pub fn print_warnings(name: &str, warnings: &[mm::Warning]) {
    let name = escape(name);
    for w in warnings {
        match w.line {
            Some(l) => eprintln!("warning: {name}:{l}: {}", w.message),
            None => eprintln!("warning: {name}: {}", w.message),
        }
    }
}

/// Reads `src` into a matrix of the requested types, with a spinner for
/// large inputs; lenient-mode recoveries are printed as warnings.
pub fn load<T: Scalar, I: Index>(src: &Input, read: &ReadArgs) -> anyhow::Result<AnyMatrix<T, I>> {
    let _spin = Spinner::start(
        format!("reading {}", escape(&src.name())),
        src.len() > (64 << 20),
    );
    let loaded = io::load::<T, I>(src, &load_options(read))?;
    print_warnings(&src.name(), &loaded.warnings);
    Ok(loaded.matrix)
}

/// Writes `m` to `out` (atomically, container by extension), with a spinner
/// for large matrices.
pub fn save<T: Scalar, I: Index>(
    m: &AnyMatrix<T, I>,
    out: &std::path::Path,
    force: bool,
) -> anyhow::Result<()> {
    let _spin = Spinner::start(format!("writing {}", escape_path(out)), m.nnz() > 5_000_000);
    io::save(out, m.as_ref(), &SaveOptions { force })?;
    Ok(())
}
