//! Files in, files out, by path: which container a file holds, loading it
//! into an [`AnyMatrix`], and saving any matrix atomically.
//!
//! This is what the `sparsetool` command line does with its inputs and
//! outputs, as one library call each:
//!
//! - [`Input::open`] takes a path (`-` is standard input, read once into
//!   memory); [`detect_bytes`] decides the container from the first bytes:
//!   a zip (`PK\x03\x04`) is `.npz`, the `SPBMTX` magic is `.spb`,
//!   anything else is Matrix Market (plain or gzip).
//! - [`probe`] reads only headers and says which value and index types a
//!   load needs (complex values, 64-bit indices); [`load`] reads the matrix.
//! - [`save`] picks the container from the output's extension (`.spb`,
//!   `.npz`, `.mtx`, `.mtx.gz`) and writes through [`write_atomic`]: a
//!   temporary file beside the output, renamed into place only when
//!   complete. [`remove_pending`] deletes the temporary files of writes in
//!   progress; a program calls it from its signal handler.
//!
//! ```
//! use sparsetool_formats::io::{load, save, Input, LoadOptions, SaveOptions};
//! use sparsetool_formats::{AnyMatrix, Coo};
//! let dir = tempfile::tempdir()?;
//! let a = Coo::<f64, i32>::try_from_parts(2, 2, vec![0, 1], vec![1, 0], vec![3.0, 4.0])?;
//! for name in ["a.mtx", "a.npz", "a.spb"] {
//!     let path = dir.path().join(name);
//!     save(&path, (&a).into(), &SaveOptions::default())?;
//!     let back = load::<f64, i32>(&Input::open(&path)?, &LoadOptions::default())?;
//!     assert_eq!(back.matrix, AnyMatrix::Coo(a.clone()));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::binary::{self, SpbError, SpbFile, SpbOptions};
use crate::mm::{self, MmError, MmField, ReadOptions, WriteOptions};
use crate::npz::{self, NpzArchive, NpzError};
use crate::{fits_index, AnyMatrix, Index, MatrixRef, Precision, Scalar};

/// The container a file holds, decided by its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    /// Matrix Market text (plain or gzip-compressed).
    Mtx,
    /// A NumPy zip archive (`scipy.sparse.save_npz` or sparsetool).
    Npz,
    /// A sparsetool binary layout.
    Spb,
}

impl Container {
    /// `mtx`, `npz` or `spb`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Container::Mtx => "mtx",
            Container::Npz => "npz",
            Container::Spb => "spb",
        }
    }
}

/// An error of this module: a container's own error, or a problem with a
/// path (missing input, unwritable output, unknown extension).
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A Matrix Market file could not be read or written.
    Mm(MmError),
    /// An `.npz` archive could not be read or written.
    Npz(NpzError),
    /// A `.spb` file could not be read or written.
    Spb(SpbError),
    /// A file could not be opened, created or renamed.
    Io {
        /// The path (or `<stdin>`).
        path: String,
        /// What was being done, e.g. `cannot open`.
        action: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The path cannot be used as asked (a directory, an existing output
    /// without `force`, an unknown extension, a container that needs a file).
    Path {
        /// The path.
        path: String,
        /// What is wrong, and what to do.
        message: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Mm(e) => e.fmt(f),
            Error::Npz(e) => e.fmt(f),
            Error::Spb(e) => e.fmt(f),
            Error::Io {
                path,
                action,
                source,
            } => write!(f, "{action} {path}: {source}"),
            Error::Path { path, message } => write!(f, "{path}: {message}"),
        }
    }
}

// Every variant's message includes its cause, so there is no `source()`.
impl std::error::Error for Error {}

impl Error {
    /// The underlying I/O error, if this is one (e.g. to treat a closed pipe
    /// or a full disk differently).
    #[must_use]
    pub fn io_error(&self) -> Option<&std::io::Error> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Mm(e) => match e.kind() {
                mm::MmErrorKind::Io(io) => Some(io),
                _ => None,
            },
            Error::Npz(e) => match e.kind() {
                npz::NpzErrorKind::Io(io) => Some(io),
                _ => None,
            },
            Error::Spb(e) => match e.kind() {
                binary::SpbErrorKind::Io(io) => Some(io),
                _ => None,
            },
            Error::Path { .. } => None,
        }
    }

    /// A writer's error for output `out`: I/O errors become "cannot write
    /// OUT: ...", and the others get `out` as their file name.
    fn for_output(self, out: &Path) -> Self {
        let name = out.display().to_string();
        match self {
            Error::Mm(e) => {
                let line = e.line();
                match e.into_kind() {
                    mm::MmErrorKind::Io(io) => Error::io(out, "cannot write", io),
                    k => Error::Mm(MmError::new(name, line, k)),
                }
            }
            Error::Npz(e) => {
                let array = e.array().map(str::to_string);
                match e.into_kind() {
                    npz::NpzErrorKind::Io(io) => Error::io(out, "cannot write", io),
                    k => Error::Npz(NpzError::new(Some(&name), array.as_deref(), k)),
                }
            }
            Error::Spb(e) => match e.into_kind() {
                binary::SpbErrorKind::Io(io) => Error::io(out, "cannot write", io),
                k => Error::Spb(SpbError::new(k).named(&name)),
            },
            other => other,
        }
    }

    fn path(path: &Path, message: impl Into<String>) -> Self {
        Error::Path {
            path: path.display().to_string(),
            message: message.into(),
        }
    }

    fn io(path: &Path, action: &'static str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.display().to_string(),
            action,
            source,
        }
    }
}

impl From<MmError> for Error {
    fn from(e: MmError) -> Self {
        Error::Mm(e)
    }
}
impl From<NpzError> for Error {
    fn from(e: NpzError) -> Self {
        Error::Npz(e)
    }
}
impl From<SpbError> for Error {
    fn from(e: SpbError) -> Self {
        Error::Spb(e)
    }
}

/// Decides the container from a file's first bytes (8 are enough).
#[must_use]
pub fn detect_bytes(head: &[u8]) -> Container {
    if head.len() >= 4 && head[..2] == *b"PK" && matches!(head[2..4], [3, 4] | [5, 6]) {
        Container::Npz
    } else if head.len() >= 6 && head[..6] == binary::MAGIC[..6] {
        Container::Spb
    } else {
        Container::Mtx
    }
}

/// Decides the container of a file from its first bytes.
///
/// # Errors
/// [`Error::Io`] if the file cannot be opened or read.
pub fn detect(path: &Path) -> Result<Container, Error> {
    let f = File::open(path).map_err(|e| Error::io(path, "cannot open", e))?;
    let mut head = Vec::with_capacity(8);
    f.take(8)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(path, "cannot read", e))?;
    Ok(detect_bytes(&head))
}

/// A matrix input: a file, or bytes already read (standard input).
#[derive(Debug)]
pub enum Input {
    /// A file on disk.
    Path(PathBuf),
    /// Bytes read from standard input (or any other source), with the name
    /// used in messages.
    Bytes {
        /// Name for messages, e.g. `<stdin>`.
        name: String,
        /// The content.
        bytes: Vec<u8>,
    },
}

impl Input {
    /// Opens `path`; `-` reads standard input to the end now.
    ///
    /// # Errors
    /// [`Error::Path`] for a missing file or a directory, [`Error::Io`] if
    /// standard input cannot be read.
    pub fn open(path: &Path) -> Result<Self, Error> {
        if path.as_os_str() == "-" {
            let mut bytes = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut bytes)
                .map_err(|e| Error::io(Path::new("<stdin>"), "cannot read", e))?;
            return Ok(Input::Bytes {
                name: "<stdin>".into(),
                bytes,
            });
        }
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(Error::path(path, "no such file"))
            }
            Err(e) => Err(Error::io(path, "cannot open", e)),
            Ok(m) if m.is_dir() => Err(Error::path(path, "is a directory, not a matrix file")),
            Ok(_) => Ok(Input::Path(path.to_path_buf())),
        }
    }

    /// The name used in messages.
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            Input::Bytes { name, .. } => name.clone(),
        }
    }

    /// Size in bytes (0 if unknown).
    #[must_use]
    pub fn len(&self) -> u64 {
        match self {
            Input::Path(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
            Input::Bytes { bytes, .. } => bytes.len() as u64,
        }
    }

    /// Whether the input is empty (or its size unknown).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The container, decided by the content.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be read.
    pub fn container(&self) -> Result<Container, Error> {
        match self {
            Input::Path(p) => detect(p),
            Input::Bytes { bytes, .. } => Ok(detect_bytes(&bytes[..bytes.len().min(8)])),
        }
    }

    /// The file path of a container that must be a file (`.npz`, `.spb`).
    fn file(&self, c: Container) -> Result<&Path, Error> {
        match self {
            Input::Path(p) => Ok(p),
            Input::Bytes { name, .. } => Err(Error::Path {
                path: name.clone(),
                message: format!(
                    "only Matrix Market can be read from standard input; give the .{} file's path",
                    c.name()
                ),
            }),
        }
    }
}

/// How to read inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadOptions {
    /// Matrix Market: accept common deviations from the specification, each
    /// with a warning (see [`crate::mm`]).
    pub lenient: bool,
    /// `.spb`: hash every section and compare with the table (default on).
    pub verify_checksums: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            lenient: false,
            verify_checksums: true,
        }
    }
}

impl LoadOptions {
    fn mm(&self) -> ReadOptions {
        ReadOptions {
            lenient: self.lenient,
            ..ReadOptions::default()
        }
    }
}

/// What a load of an input needs, from its headers alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// The container.
    pub container: Container,
    /// The values are complex.
    pub complex: bool,
    /// Some index or count does not fit `i32`.
    pub needs_i64: bool,
    /// The precision the file stores its values in: `F64` for Matrix
    /// Market text, the value dtype of an `.npz` or `.spb` (complex64 is
    /// `F32`).
    pub precision: Precision,
}

/// Reads only the headers of `input` and says what loading it needs.
///
/// # Errors
/// Any header error of the container.
pub fn probe(input: &Input, opts: &LoadOptions) -> Result<Probe, Error> {
    let container = input.container()?;
    let (complex, needs_i64, precision) = match (container, input) {
        (Container::Mtx, _) => {
            let (h, _) = match input {
                Input::Path(p) => mm::read_header_path_with(p, &opts.mm())?,
                Input::Bytes { name, bytes } => {
                    mm::read_header_bytes_with(bytes, name, &opts.mm())?
                }
            };
            (
                h.field == MmField::Complex,
                !fits_index::<i32>(h.nrows, h.ncols, h.nnz_expanded_max()),
                Precision::F64,
            )
        }
        (Container::Npz, _) => {
            let info = NpzArchive::open(input.file(container)?)?.info()?;
            (
                info.complex,
                !fits_index::<i32>(info.nrows, info.ncols, info.nnz),
                if matches!(info.value_dtype.as_str(), "float32" | "complex64") {
                    Precision::F32
                } else {
                    Precision::F64
                },
            )
        }
        (Container::Spb, _) => {
            let h = SpbFile::read_header(input.file(container)?)?;
            (
                matches!(h.value_dtype, binary::DType::C64 | binary::DType::C128),
                h.index_dtype == binary::DType::I64,
                if matches!(h.value_dtype, binary::DType::F32 | binary::DType::C64) {
                    Precision::F32
                } else {
                    Precision::F64
                },
            )
        }
    };
    Ok(Probe {
        container,
        complex,
        needs_i64,
        precision,
    })
}

/// A loaded matrix and the warnings of lenient Matrix Market reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded<T, I> {
    /// The matrix, in the format the file stores (Matrix Market: COO).
    pub matrix: AnyMatrix<T, I>,
    /// One warning per lenient recovery (always empty for `.npz`, `.spb`).
    pub warnings: Vec<mm::Warning>,
}

/// Reads `input` into a matrix of value type `T` and index type `I`
/// (converting the file's own types where they differ: f32 ↔ f64, i32 ↔ i64,
/// with range checks).
///
/// # Errors
/// Any error of the container's reader, naming the file and the line, byte
/// offset or array.
pub fn load<T: Scalar, I: Index>(input: &Input, opts: &LoadOptions) -> Result<Loaded<T, I>, Error> {
    let container = input.container()?;
    let matrix = match container {
        Container::Mtx => {
            let m = match input {
                Input::Path(p) => mm::read_path::<T, I>(p, &opts.mm())?,
                Input::Bytes { name, bytes } => mm::read_bytes::<T, I>(bytes, name, &opts.mm())?,
            };
            return Ok(Loaded {
                matrix: AnyMatrix::Coo(m.coo),
                warnings: m.warnings,
            });
        }
        Container::Spb => {
            let spb = SpbOptions {
                verify_checksums: opts.verify_checksums,
            };
            SpbFile::open(input.file(container)?, &spb)?.to_matrix::<T, I>()?
        }
        Container::Npz => npz::read_npz::<T, I>(input.file(container)?)?,
    };
    Ok(Loaded {
        matrix,
        warnings: Vec::new(),
    })
}

/// Output containers, chosen by the output's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// `.spb`
    Spb,
    /// `.npz`
    Npz,
    /// `.mtx`
    Mtx,
    /// `.mtx.gz` (gzip level 6)
    MtxGz,
}

impl OutputKind {
    /// The container for `path`'s extension (case-insensitive).
    ///
    /// # Errors
    /// [`Error::Path`] for any other extension.
    pub fn of(path: &Path) -> Result<Self, Error> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if name.ends_with(".npz") {
            Ok(OutputKind::Npz)
        } else if name.ends_with(".spb") {
            Ok(OutputKind::Spb)
        } else if name.ends_with(".mtx.gz") {
            Ok(OutputKind::MtxGz)
        } else if name.ends_with(".mtx") {
            Ok(OutputKind::Mtx)
        } else {
            Err(Error::path(
                path,
                "unknown output extension; use .spb, .npz, .mtx or .mtx.gz",
            ))
        }
    }
}

/// How to save.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SaveOptions {
    /// Replace an existing file (otherwise an existing output is an error,
    /// checked before writing and again at the final rename).
    pub force: bool,
}

/// Writes `m` to `path` in the container its extension names (see
/// [`OutputKind`]), atomically (see [`write_atomic`]). Matrix Market output
/// gets a comment naming the writer and the storage format.
///
/// # Errors
/// [`Error::Path`] for an unknown extension or an existing output without
/// `force`; any writer or I/O error (nothing is left behind).
pub fn save<T: Scalar, I: Index>(
    path: &Path,
    m: MatrixRef<'_, T, I>,
    opts: &SaveOptions,
) -> Result<(), Error> {
    save_as(path, OutputKind::of(path)?, m, opts)
}

/// Like [`save`], in the container `kind` whatever `path`'s extension.
///
/// # Errors
/// As [`save`].
pub fn save_as<T: Scalar, I: Index>(
    path: &Path,
    kind: OutputKind,
    m: MatrixRef<'_, T, I>,
    opts: &SaveOptions,
) -> Result<(), Error> {
    write_atomic(path, opts.force, |w| write_to(w, path, kind, m))
}

/// Writes `m` in the container `kind` to the stream `w` (for standard
/// output: into a buffer first, as `.npz` needs to seek); `name` names the
/// output in errors.
///
/// # Errors
/// Any writer or I/O error.
pub fn write_to<W: Write + Seek, T: Scalar, I: Index>(
    w: &mut W,
    name: &Path,
    kind: OutputKind,
    m: MatrixRef<'_, T, I>,
) -> Result<(), Error> {
    let mtx = || WriteOptions {
        field: mm::default_field::<T>(),
        comment: Some(format!(
            "written by sparsetool {} from {} storage",
            env!("CARGO_PKG_VERSION"),
            m.kind()
        )),
    };
    match kind {
        OutputKind::Npz => npz::write_matrix(w, m)?,
        OutputKind::Spb => binary::write_spb(w, m)?,
        OutputKind::Mtx => mm::write_matrix(w, m, &mtx())?,
        OutputKind::MtxGz => {
            let mut gz = flate2::write::GzEncoder::new(w, flate2::Compression::new(6));
            mm::write_matrix(&mut gz, m, &mtx())?;
            gz.finish()
                .map_err(|e| Error::io(name, "cannot write", e))?;
        }
    }
    Ok(())
}

/// Temporary files of writes in progress (removed by [`remove_pending`]).
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes the temporary files of every [`write_atomic`] in progress. For a
/// signal handler: after it, exit without returning to the writers.
pub fn remove_pending() {
    if let Ok(list) = PENDING.lock() {
        for p in list.iter() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The directory `out` goes into (`.` for a bare file name).
#[must_use]
pub fn parent_dir(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Refuses an output that exists (unless `force`) or whose directory does
/// not; call it before long work so that the work does not end in a refusal.
///
/// # Errors
/// [`Error::Path`] saying which, and what to do.
pub fn check_target(out: &Path, force: bool) -> Result<(), Error> {
    if !force && out.exists() {
        return Err(Error::path(out, "exists; use --force to overwrite it"));
    }
    let dir = parent_dir(out);
    if !dir.is_dir() {
        return Err(Error::path(
            out,
            format!("cannot write: directory {} does not exist", dir.display()),
        ));
    }
    Ok(())
}

/// A temporary file `.sparsetool-*SUFFIX` in `out`'s directory (same file
/// system, so the final rename is atomic), registered for
/// [`remove_pending`], with the mode `File::create` would give (0666 less the
/// umask) rather than a temporary file's 0600.
fn temp_for(out: &Path, suffix: &str) -> Result<tempfile::NamedTempFile, Error> {
    let dir = parent_dir(out);
    let mut b = tempfile::Builder::new();
    b.prefix(".sparsetool-").suffix(suffix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let tmp = b
        .tempfile_in(&dir)
        .map_err(|e| Error::io(&dir, "cannot create a temporary file in", e))?;
    if let Ok(mut list) = PENDING.lock() {
        list.push(tmp.path().to_path_buf());
    }
    Ok(tmp)
}

/// Renames `tmp` over `out` (only if `out` does not exist, unless `force`)
/// and forgets it; on error the temporary file is removed.
fn finish(
    tmp: tempfile::NamedTempFile,
    out: &Path,
    force: bool,
    result: Result<(), Error>,
) -> Result<(), Error> {
    let tmp_path = tmp.path().to_path_buf();
    let result = result.and_then(|()| {
        let persisted = if force {
            tmp.persist(out)
        } else {
            tmp.persist_noclobber(out)
        };
        persisted
            .map(|_| ())
            .map_err(|e| Error::io(out, "cannot write", e.error))
    });
    if let Ok(mut list) = PENDING.lock() {
        list.retain(|p| *p != tmp_path);
    }
    result
}

/// Writes `out` atomically: `write` fills a temporary file in the same
/// directory, which is flushed, synced and renamed over `out` only when
/// `write` succeeded (and only if `out` does not exist, unless `force`). On
/// any error the temporary file is removed and `out` is untouched.
///
/// # Errors
/// [`check_target`]'s errors, `write`'s error, or the I/O error of flushing,
/// syncing or renaming.
pub fn write_atomic<F>(out: &Path, force: bool, write: F) -> Result<(), Error>
where
    F: FnOnce(&mut BufWriter<File>) -> Result<(), Error>,
{
    check_target(out, force)?;
    let tmp = temp_for(out, ".tmp")?;
    let result = (|| {
        let file = tmp
            .reopen()
            .map_err(|e| Error::io(out, "cannot write", e))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        write(&mut w).map_err(|e| e.for_output(out))?;
        w.flush().map_err(|e| Error::io(out, "cannot write", e))?;
        let file = w
            .into_inner()
            .map_err(|e| Error::io(out, "cannot write", e.into_error()))?;
        file.sync_all()
            .map_err(|e| Error::io(out, "cannot write", e))
    })();
    finish(tmp, out, force, result)
}

/// Like [`write_atomic`] for writers that want a path rather than a stream
/// (e.g. an image library): `write` gets the temporary file's path, which
/// ends in `suffix` (e.g. `.png`, for libraries that go by the extension).
///
/// # Errors
/// As [`write_atomic`].
pub fn write_atomic_path<F>(out: &Path, force: bool, suffix: &str, write: F) -> Result<(), Error>
where
    F: FnOnce(&Path) -> Result<(), Error>,
{
    check_target(out, force)?;
    let tmp = temp_for(out, suffix)?;
    let result = write(tmp.path()).map_err(|e| e.for_output(out));
    finish(tmp, out, force, result)
}
