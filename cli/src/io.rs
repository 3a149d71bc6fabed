//! Reading any supported container into a matrix, and writing one out.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use sparsetool_convert::AnyMatrix;
use sparsetool_formats::binary::{self, MatrixRef, SpbFile, SpbMatrix, SpbOptions};
use sparsetool_formats::mm::{self, MmField, ReadOptions, WriteOptions};
use sparsetool_formats::npz::{self, NpzArchive, NpzMatrix};
use sparsetool_formats::{fits_index, Csr};

use crate::args::ReadArgs;
use crate::dispatch::{Idx, TypePlan, Val};
use crate::output::{write_atomic, Spinner};

/// The container a file holds, decided by its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// Matrix Market text (possibly gzip-compressed).
    Mtx,
    /// A NumPy zip archive.
    Npz,
    /// A sparsetool binary layout.
    Spb,
}

/// An input: a path, or standard input read once into memory.
#[derive(Debug)]
pub enum Source {
    /// A file on disk.
    Path(PathBuf),
    /// Bytes read from standard input.
    Stdin(Vec<u8>),
}

impl Source {
    /// Opens `path` (`-` is standard input, read fully now).
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        if path.as_os_str() == "-" {
            let mut buf = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut buf)
                .context("cannot read standard input")?;
            return Ok(Source::Stdin(buf));
        }
        if !path.exists() {
            bail!("{}: no such file", path.display());
        }
        if path.is_dir() {
            bail!("{}: is a directory, not a matrix file", path.display());
        }
        Ok(Source::Path(path.to_path_buf()))
    }

    /// Name for messages.
    pub fn name(&self) -> String {
        match self {
            Source::Path(p) => p.display().to_string(),
            Source::Stdin(_) => "<stdin>".to_string(),
        }
    }

    /// Size in bytes (for deciding whether to show progress).
    pub fn len(&self) -> u64 {
        match self {
            Source::Path(p) => std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
            Source::Stdin(b) => b.len() as u64,
        }
    }

    /// Sniffs the container from the first bytes.
    pub fn container(&self) -> anyhow::Result<Container> {
        let mut head = [0u8; 8];
        let n = match self {
            Source::Path(p) => {
                let mut f =
                    File::open(p).with_context(|| format!("cannot open {}", p.display()))?;
                read_up_to(&mut f, &mut head)
                    .with_context(|| format!("cannot read {}", p.display()))?
            }
            Source::Stdin(b) => {
                let n = b.len().min(8);
                head[..n].copy_from_slice(&b[..n]);
                n
            }
        };
        Ok(
            if n >= 4 && head[..2] == *b"PK" && matches!(head[2..4], [3, 4] | [5, 6]) {
                Container::Npz
            } else if n >= 6 && head[..6] == binary::MAGIC[..6] {
                Container::Spb
            } else {
                Container::Mtx
            },
        )
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Decides value and index types for `src` without reading all of it.
pub fn type_plan(src: &Source, read: &ReadArgs) -> anyhow::Result<TypePlan> {
    let opts = ReadOptions {
        lenient: read.lenient,
        ..ReadOptions::default()
    };
    match (src.container()?, src) {
        (Container::Mtx, Source::Path(p)) => {
            let (h, _) = mm::read_header_path_with(p, &opts)?;
            Ok(TypePlan {
                complex: h.field == MmField::Complex,
                wide: !fits_index::<i32>(h.nrows, h.ncols, h.nnz_expanded_max()),
            })
        }
        (Container::Mtx, Source::Stdin(b)) => {
            let (h, _) = mm::read_header_bytes_with(b, "<stdin>", &opts)?;
            Ok(TypePlan {
                complex: h.field == MmField::Complex,
                wide: !fits_index::<i32>(h.nrows, h.ncols, h.nnz_expanded_max()),
            })
        }
        (Container::Npz, Source::Path(p)) => {
            let mut a = NpzArchive::open(p)?;
            let info = a.info()?;
            Ok(TypePlan {
                complex: info.complex,
                wide: !fits_index::<i32>(info.nrows, info.ncols, info.nnz),
            })
        }
        (Container::Spb, Source::Path(p)) => {
            let h = SpbFile::read_header(p)?;
            Ok(TypePlan {
                complex: matches!(h.value_dtype, binary::DType::C64 | binary::DType::C128),
                wide: h.index_dtype == binary::DType::I64,
            })
        }
        (Container::Npz | Container::Spb, Source::Stdin(_)) => {
            bail!("<stdin>: only Matrix Market can be read from standard input")
        }
    }
}

/// Prints lenient-mode recoveries as `warning: FILE:LINE: message` on stderr.
pub fn print_warnings(name: &str, warnings: &[mm::Warning]) {
    for w in warnings {
        match w.line {
            Some(l) => eprintln!("warning: {name}:{l}: {}", w.message),
            None => eprintln!("warning: {name}: {}", w.message),
        }
    }
}

/// Reads `src` into a matrix of the requested types. Lenient-mode recoveries
/// are printed as warnings on stderr.
pub fn load<T: Val, I: Idx>(src: &Source, read: &ReadArgs) -> anyhow::Result<AnyMatrix<T, I>> {
    let _spin = Spinner::start(format!("reading {}", src.name()), src.len() > (64 << 20));
    let opts = ReadOptions {
        lenient: read.lenient,
        ..ReadOptions::default()
    };
    match src.container()? {
        Container::Mtx => {
            let m = match src {
                Source::Path(p) => mm::read_path::<T, I>(p, &opts)?,
                Source::Stdin(b) => mm::read_bytes::<T, I>(b, "<stdin>", &opts)?,
            };
            print_warnings(&src.name(), &m.warnings);
            Ok(AnyMatrix::Coo(m.coo))
        }
        Container::Spb => {
            let Source::Path(p) = src else {
                bail!("<stdin>: .spb input must be a file");
            };
            let f = SpbFile::open(
                p,
                &SpbOptions {
                    verify_checksums: !read.no_verify_checksums,
                },
            )?;
            Ok(match f.to_matrix::<T, I>()? {
                SpbMatrix::Coo(m) => AnyMatrix::Coo(m),
                SpbMatrix::Csr(m) => AnyMatrix::Csr(m),
                SpbMatrix::Ell(m) => AnyMatrix::Ell(m),
                SpbMatrix::Hyb(m) => AnyMatrix::Hyb(m),
                SpbMatrix::Jds(m) => AnyMatrix::Jds(m),
                SpbMatrix::Sell(m) => AnyMatrix::Sell(m),
            })
        }
        Container::Npz => {
            let Source::Path(p) = src else {
                bail!("<stdin>: .npz input must be a file");
            };
            Ok(match npz::read_npz::<T, I>(p)? {
                NpzMatrix::Coo(m) => AnyMatrix::Coo(m),
                NpzMatrix::Csr(m) => AnyMatrix::Csr(m),
                NpzMatrix::Ell(m) => AnyMatrix::Ell(m),
                NpzMatrix::Hyb(m) => AnyMatrix::Hyb(m),
                NpzMatrix::Jds(m) => AnyMatrix::Jds(m),
                NpzMatrix::Sell(m) => AnyMatrix::Sell(m),
                #[allow(unreachable_patterns)]
                _ => bail!("{}: unsupported .npz content", p.display()),
            })
        }
    }
}

/// Output containers, by the extension of OUT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutKind {
    /// `.npz`
    Npz,
    /// `.mtx`
    Mtx,
    /// `.mtx.gz`
    MtxGz,
    /// `.spb`
    Spb,
}

/// Picks the output container from OUT's extension.
pub fn out_kind(out: &Path) -> anyhow::Result<OutKind> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".npz") {
        Ok(OutKind::Npz)
    } else if name.ends_with(".spb") {
        Ok(OutKind::Spb)
    } else if name.ends_with(".mtx.gz") {
        Ok(OutKind::MtxGz)
    } else if name.ends_with(".mtx") {
        Ok(OutKind::Mtx)
    } else {
        bail!(
            "{}: unknown output extension; use .spb, .npz, .mtx or .mtx.gz",
            out.display()
        )
    }
}

/// Writes `m` to `out` (atomically; see [`write_atomic`]).
pub fn save<T: Val, I: Idx>(m: &AnyMatrix<T, I>, out: &Path, force: bool) -> anyhow::Result<()> {
    let kind = out_kind(out)?;
    let _spin = Spinner::start(format!("writing {}", out.display()), m.nnz() > 5_000_000);
    write_atomic(out, force, |w| {
        match kind {
            OutKind::Npz => write_npz(m, w)?,
            OutKind::Spb => binary::write_spb(w, matrix_ref(m))?,
            OutKind::Mtx => write_mtx(m, w)?,
            OutKind::MtxGz => {
                let mut gz = flate2::write::GzEncoder::new(w, flate2::Compression::new(6));
                write_mtx(m, &mut gz)?;
                gz.finish()?;
            }
        }
        Ok(())
    })
}

/// Borrows any matrix for the `.spb` writer.
pub fn matrix_ref<T: Val, I: Idx>(m: &AnyMatrix<T, I>) -> MatrixRef<'_, T, I> {
    match m {
        AnyMatrix::Coo(x) => MatrixRef::Coo(x),
        AnyMatrix::Csr(x) => MatrixRef::Csr(x),
        AnyMatrix::Ell(x) => MatrixRef::Ell(x),
        AnyMatrix::Hyb(x) => MatrixRef::Hyb(x),
        AnyMatrix::Jds(x) => MatrixRef::Jds(x),
        AnyMatrix::Sell(x) => MatrixRef::Sell(x),
    }
}

fn write_npz<T: Val, I: Idx>(m: &AnyMatrix<T, I>, w: &mut BufWriter<File>) -> anyhow::Result<()> {
    match m {
        AnyMatrix::Coo(x) => npz::write_coo(w, x)?,
        AnyMatrix::Csr(x) => npz::write_csr(w, x)?,
        AnyMatrix::Ell(x) => npz::write_ell(w, x)?,
        AnyMatrix::Hyb(x) => npz::write_hyb(w, x)?,
        AnyMatrix::Jds(x) => npz::write_jds(w, x)?,
        AnyMatrix::Sell(x) => npz::write_sell(w, x)?,
    }
    Ok(())
}

fn write_mtx<T: Val, I: Idx, W: Write>(m: &AnyMatrix<T, I>, w: W) -> anyhow::Result<()> {
    let opts = WriteOptions {
        field: mm::default_field::<T>(),
        comment: Some(format!(
            "written by sparsetool {} from {} storage",
            env!("CARGO_PKG_VERSION"),
            m.kind()
        )),
    };
    match m {
        AnyMatrix::Coo(x) => mm::write_coo(w, x, &opts)?,
        AnyMatrix::Csr(x) => mm::write_csr(w, x, &opts)?,
        other => {
            let csr: Csr<T, I> = other.to_csr();
            mm::write_csr(w, &csr, &opts)?;
        }
    }
    Ok(())
}
