//! Inputs and outputs of the commands: [`sparsetool_formats::io`] does the
//! work; this module adds what a terminal user sees (spinners, warnings).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use sparsetool_formats::values::{escape, escape_path};

use anyhow::bail;
use sparsetool_formats::io::{self, Input, LoadOptions, OutputKind, Probe, SaveOptions};
use sparsetool_formats::mm::{self, WriteSymmetry};
use sparsetool_formats::{AnyMatrix, Index, Precision, Scalar};

use crate::args::{MatrixOutArgs, ReadArgs};
use crate::output::{note, Bar, Spinner, Unit};

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
            Some(l) => note!("warning: {name}:{l}: {}", w.message),
            None => note!("warning: {name}: {}", w.message),
        }
    }
}

/// Reads `src` into a matrix of the requested types, with a spinner for
/// large inputs; lenient-mode recoveries are printed as warnings.
pub fn load<T: Scalar, I: Index>(src: &Input, read: &ReadArgs) -> anyhow::Result<AnyMatrix<T, I>> {
    Ok(load_with_comments(src, read)?.0)
}

/// Like [`load`], also returning the input's header comments (Matrix
/// Market; empty for `.npz` and `.spb`).
pub fn load_with_comments<T: Scalar, I: Index>(
    src: &Input,
    read: &ReadArgs,
) -> anyhow::Result<(AnyMatrix<T, I>, Vec<String>)> {
    // Bytes read of the file's size (a stream: bytes so far).
    let len = src.len();
    let _bar = Bar::follow(
        format!("reading {}", escape(&src.name())),
        &sparsetool_formats::progress::READ,
        Some(len),
        Unit::Bytes,
        len > (64 << 20) || matches!(src, Input::Stream(_)),
    );
    let loaded = io::load::<T, I>(src, &load_options(read))?;
    print_warnings(&src.name(), &loaded.warnings);
    Ok((loaded.matrix, loaded.comments))
}

/// The value type a command runs in: `--dtype`, else the file's own.
pub fn dtype(given: Option<Precision>, probe: &Probe) -> Precision {
    given.unwrap_or(probe.precision)
}

/// The name `--output-format` and the summary give a container.
pub fn container_name(k: OutputKind) -> &'static str {
    match k {
        OutputKind::Spb => "spb",
        OutputKind::Npz => "npz",
        OutputKind::Mtx => "mtx",
        OutputKind::MtxGz => "mtx.gz",
    }
}

/// Where a matrix is written: a file (atomically) or standard output.
#[derive(Debug, Clone)]
pub struct Target {
    /// The file, or `None` for standard output (`-o -`).
    pub path: Option<PathBuf>,
    /// The container.
    pub kind: OutputKind,
    /// `--force`.
    pub force: bool,
    /// Matrix Market storage (default auto: symmetric storage when exact).
    pub symmetry: WriteSymmetry,
    /// Comment lines carried into a Matrix Market output.
    pub comments: Vec<String>,
}

impl Target {
    /// The writer's options: `--force`, `--symmetry`, the comments.
    pub fn save_options(&self) -> SaveOptions {
        SaveOptions {
            force: self.force,
            symmetry: self.symmetry,
            comments: self.comments.clone(),
            storage: None,
        }
    }

    /// Validates `-o`, `--output-format` and `--force` before any work: the
    /// container (by extension unless `--output-format` says; Matrix
    /// Market on stdout), an existing file, a missing directory, binary
    /// data for a terminal.
    pub fn new(a: &MatrixOutArgs, json: bool) -> anyhow::Result<Self> {
        let given = a.output_format.map(OutputKind::from);
        if a.output.as_os_str() == "-" {
            let kind = given.unwrap_or(OutputKind::Mtx);
            if json {
                bail!(
                    "-o - writes the matrix to stdout; --json would mix into it: write to a file"
                );
            }
            refuse_binary_terminal(kind != OutputKind::Mtx, container_name(kind))?;
            return Ok(Self {
                path: None,
                kind,
                force: a.force,
                symmetry: WriteSymmetry::Auto,
                comments: Vec::new(),
            });
        }
        let kind = match given {
            Some(k) => k,
            None => OutputKind::of(&a.output)?,
        };
        crate::output::check_target(&a.output, a.force)?;
        Ok(Self {
            path: Some(a.output.clone()),
            kind,
            force: a.force,
            symmetry: WriteSymmetry::Auto,
            comments: Vec::new(),
        })
    }

    /// The output as `--json` names it: the path, or `-`.
    pub fn name(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| "-".to_string(), |p| p.display().to_string())
    }
}

/// Refuses binary output (`what`) to a terminal.
pub fn refuse_binary_terminal(binary: bool, what: &str) -> anyhow::Result<()> {
    if binary && std::io::stdout().is_terminal() {
        bail!("-o -: stdout is a terminal; refusing to write binary {what} data there (redirect it or use a file)");
    }
    Ok(())
}

/// Writes `m` to `target` (atomically for a file), with a spinner for
/// large matrices; returns the bytes written.
pub fn save<T: Scalar, I: Index>(m: &AnyMatrix<T, I>, target: &Target) -> anyhow::Result<u64> {
    let name = match &target.path {
        Some(p) => escape_path(p),
        None => target.name(),
    };
    let _spin = Spinner::start(format!("writing {name}"), m.nnz() > 5_000_000);
    let opts = target.save_options();
    match &target.path {
        Some(p) => {
            io::save_as(p, target.kind, m.as_ref(), &opts)?;
            Ok(std::fs::metadata(p).map(|md| md.len()).unwrap_or(0))
        }
        None => {
            let mut buf = std::io::Cursor::new(Vec::new());
            io::write_to_with(
                &mut buf,
                Path::new("<stdout>"),
                target.kind,
                m.as_ref(),
                &opts,
            )?;
            let bytes = buf.into_inner();
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)?;
            out.flush()?;
            Ok(bytes.len() as u64)
        }
    }
}
