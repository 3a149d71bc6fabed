//! Files in, files out, by path: which container a file holds, loading it
//! into an [`AnyMatrix`], and saving any matrix atomically.
//!
//! This is what the `sparsetool` command line does with its inputs and
//! outputs, as one library call each:
//!
//! - [`Input::open`] takes a path (`-` is standard input); [`detect_bytes`]
//!   decides the container from the first bytes: a zip (`PK\x03\x04`) is
//!   `.npz`, the `SPBMTX` magic is `.spb`, anything else is Matrix Market
//!   (plain or gzip). Regular files are read in place (memory-mapped);
//!   standard input, pipes and FIFOs are opened once and detected from the
//!   same stream: Matrix Market is streamed in bounded blocks, `.npz` and
//!   `.spb` are copied to a temporary file (they need random access).
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
use crate::mm::{self, MmError, MmField, ReadOptions, WriteOptions, WriteSymmetry};
use crate::npz::{self, NpzArchive, NpzError};
use crate::values::{escape, escape_path};
use crate::{fits_index, AnyMatrix, FormatKind, Index, MatrixRef, Precision, Scalar};

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
            } => write!(f, "{action} {}: {}", escape(path), io_text(source)),
            Error::Path { path, message } => write!(f, "{}: {message}", escape(path)),
        }
    }
}

// Every variant's message includes its cause, so there is no `source()`.
impl std::error::Error for Error {}

/// An I/O error's text for a message: the operating system's words
/// (`No space left on device (os error 28)`), or, for errors built from a
/// kind and a payload (e.g. by the zip writer), the payload's text,
/// escaped.
fn io_text(e: &std::io::Error) -> String {
    escape(&e.to_string()).into_owned()
}

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

/// A matrix input: a file, bytes in memory, or a stream read once.
#[derive(Debug)]
pub enum Input {
    /// A regular file on disk.
    Path(PathBuf),
    /// Bytes in memory, with the name used in messages.
    Bytes {
        /// Name for messages, e.g. `<stdin>`.
        name: String,
        /// The content.
        bytes: Vec<u8>,
    },
    /// Matrix Market text (plain or gzip) from a source that can be read
    /// only once (standard input, a pipe, a FIFO, a process substitution
    /// such as `<(zcat m.mtx.gz)`): the container was decided from its first
    /// bytes, which are kept; [`load`] streams the rest in bounded blocks.
    Stream(Stream),
    /// An `.npz` or `.spb` that arrived on a stream, copied to a temporary
    /// file (those containers need random access); the file is removed
    /// when the input is dropped, and by [`remove_pending`].
    Spooled {
        /// Name for messages, e.g. `<stdin>`.
        name: String,
        /// The container.
        container: Container,
        /// The temporary copy.
        path: tempfile::TempPath,
    },
}

/// A source read once, with the bytes read so far kept so that the header
/// can be read (to probe the types) before the whole load.
pub struct Stream {
    name: String,
    inner: Mutex<Option<Replay>>,
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A reader that records what it reads until [`Replay::stop_recording`],
/// and can be rewound to replay it.
struct Replay {
    buf: Vec<u8>,
    pos: usize,
    recording: bool,
    inner: Box<dyn Read + Send>,
}

impl Replay {
    fn new(inner: Box<dyn Read + Send>) -> Self {
        Self {
            buf: Vec::new(),
            pos: 0,
            recording: true,
            inner,
        }
    }

    fn rewind(&mut self) {
        self.pos = 0;
    }

    /// From now on, what is read past the recorded bytes is not kept.
    fn stop_recording(&mut self) {
        self.recording = false;
    }
}

impl Read for Replay {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos < self.buf.len() {
            let n = out.len().min(self.buf.len() - self.pos);
            out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
            if self.pos == self.buf.len() && !self.recording {
                self.buf = Vec::new();
                self.pos = 0;
            }
            return Ok(n);
        }
        let n = self.inner.read(out)?;
        if self.recording {
            self.buf.extend_from_slice(&out[..n]);
            self.pos += n;
        }
        Ok(n)
    }
}

/// The name of standard input in messages.
const STDIN: &str = "<stdin>";

impl Input {
    /// Opens `path`: a regular file is read where it lies; `-` (standard
    /// input) and anything else that can be read only once (a pipe, a FIFO,
    /// a character device) is opened as a stream, its container decided
    /// from its first bytes: Matrix Market is streamed by [`load`], `.npz`
    /// and `.spb` are copied to a temporary file first.
    ///
    /// # Errors
    /// [`Error::Path`] for a missing file or a directory, [`Error::Io`] if
    /// the input cannot be opened or read.
    pub fn open(path: &Path) -> Result<Self, Error> {
        if path.as_os_str() == "-" {
            return Self::from_reader(Box::new(std::io::stdin()), STDIN);
        }
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(Error::path(path, "no such file"))
            }
            Err(e) => Err(Error::io(path, "cannot open", e)),
            Ok(m) if m.is_dir() => Err(Error::path(path, "is a directory, not a matrix file")),
            Ok(m) if m.is_file() => Ok(Input::Path(path.to_path_buf())),
            Ok(_) => {
                let f = File::open(path).map_err(|e| Error::io(path, "cannot open", e))?;
                Self::from_reader(Box::new(f), &path.display().to_string())
            }
        }
    }

    /// An input read once from `reader` (`name` is used in messages): the
    /// first bytes decide the container; `.npz` and `.spb` content is
    /// copied to a temporary file, Matrix Market is left to stream.
    ///
    /// # Errors
    /// [`Error::Io`] if the reader fails or the temporary copy cannot be
    /// written.
    pub fn from_reader(reader: Box<dyn Read + Send>, name: &str) -> Result<Self, Error> {
        let io_err = |e| Error::Io {
            path: name.to_string(),
            action: "cannot read",
            source: e,
        };
        let mut r = Replay::new(Box::new(crate::progress::Counting(reader)));
        let mut head = [0u8; 8];
        let n = mm::read_up_to(&mut r, &mut head).map_err(io_err)?;
        r.rewind();
        let container = detect_bytes(&head[..n]);
        if container == Container::Mtx {
            return Ok(Input::Stream(Stream {
                name: name.to_string(),
                inner: Mutex::new(Some(r)),
            }));
        }
        // Random access needed: spool to a temporary file (same cleanup as
        // outputs in progress on a signal).
        r.stop_recording();
        let tmp = create_pending(
            || {
                tempfile::Builder::new()
                    .prefix(".sparsetool-spool-")
                    .suffix(&format!(".{}", container.name()))
                    .tempfile()
                    .map_err(|e| {
                        Error::io(
                            &std::env::temp_dir(),
                            "cannot create a temporary file in",
                            e,
                        )
                    })
            },
            tempfile::NamedTempFile::path,
        )?;
        let tmp_path = tmp.path().to_path_buf();
        let copied = (|| {
            let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file());
            std::io::copy(&mut r, &mut w).map_err(io_err)?;
            w.flush()
                .map_err(|e| Error::io(&tmp_path, "cannot write", e))
        })();
        if let Ok(mut list) = PENDING.lock() {
            list.retain(|p| *p != tmp_path);
        }
        copied?;
        Ok(Input::Spooled {
            name: name.to_string(),
            container,
            path: tmp.into_temp_path(),
        })
    }

    /// The name used in messages.
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            Input::Bytes { name, .. } | Input::Spooled { name, .. } => name.clone(),
            Input::Stream(s) => s.name.clone(),
        }
    }

    /// Size in bytes (0 if unknown: a stream).
    #[must_use]
    pub fn len(&self) -> u64 {
        match self {
            Input::Path(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
            Input::Spooled { path, .. } => std::fs::metadata(path).map_or(0, |m| m.len()),
            Input::Bytes { bytes, .. } => bytes.len() as u64,
            Input::Stream(_) => 0,
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
            Input::Stream(_) => Ok(Container::Mtx),
            Input::Spooled { container, .. } => Ok(*container),
        }
    }

    /// The file of a container that must be a file (`.npz`, `.spb`: a
    /// path, or the temporary copy of a stream) and the name for messages.
    ///
    /// # Errors
    /// [`Error::Path`] for bytes in memory or a stream.
    pub fn file(&self, c: Container) -> Result<(&Path, String), Error> {
        match self {
            Input::Path(p) => Ok((p, p.display().to_string())),
            Input::Spooled { path, name, .. } => Ok((path, name.clone())),
            Input::Bytes { name, .. } | Input::Stream(Stream { name, .. }) => Err(Error::Path {
                path: name.clone(),
                message: format!(
                    "a .{} cannot be read from memory here; give the file's path",
                    c.name()
                ),
            }),
        }
    }

    /// Runs `f` on the stream's content from its first byte, keeping what
    /// `f` reads so that the next call starts from the first byte again
    /// (for headers: a few KB).
    fn peek_stream<R>(
        s: &Stream,
        f: impl FnOnce(&mut (dyn Read + Send)) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let mut guard = s.inner.lock().map_err(|_| consumed(&s.name))?;
        let r = guard.as_mut().ok_or_else(|| consumed(&s.name))?;
        r.rewind();
        let out = f(r);
        r.rewind();
        out
    }

    /// The content of a [`Input::Stream`] from its first byte, once (for
    /// a caller that streams it itself, e.g. a structure-only scan).
    ///
    /// # Errors
    /// [`Error::Path`] if the input is not a stream or was already read.
    pub fn take_reader(&self) -> Result<Box<dyn Read + Send>, Error> {
        match self {
            Input::Stream(s) => Ok(Box::new(Input::take_stream(s)?)),
            other => Err(Error::Path {
                path: other.name(),
                message: "is not a stream".into(),
            }),
        }
    }

    /// Takes the stream's content from its first byte, once.
    fn take_stream(s: &Stream) -> Result<Replay, Error> {
        let mut guard = s.inner.lock().map_err(|_| consumed(&s.name))?;
        let mut r = guard.take().ok_or_else(|| consumed(&s.name))?;
        r.rewind();
        r.stop_recording();
        Ok(r)
    }
}

/// The error of a second read of a stream.
fn consumed(name: &str) -> Error {
    Error::Path {
        path: name.to_string(),
        message: "was already read (a stream can be read only once)".into(),
    }
}

/// How to read inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadOptions {
    /// Accept common deviations, each with a warning: Matrix Market's
    /// (see [`crate::mm`]), and NaN/infinite values in `.npz` and `.spb`
    /// (see [`crate::values`]).
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

/// The Matrix Market header of an input holding `.mtx` content (a file,
/// bytes or a stream; a stream is left to be loaded from its start), with
/// the warnings of lenient recoveries.
///
/// # Errors
/// The header's errors, naming the input.
pub fn read_mm_header(
    input: &Input,
    opts: &LoadOptions,
) -> Result<(mm::Header, Vec<mm::Warning>), Error> {
    Ok(match input {
        Input::Path(p) => mm::read_header_path_with(p, &opts.mm())?,
        Input::Bytes { name, bytes } => mm::read_header_bytes_with(bytes, name, &opts.mm())?,
        Input::Stream(s) => Input::peek_stream(s, |r| {
            Ok(mm::read_header_reader_with(r, &s.name, &opts.mm())?)
        })?,
        Input::Spooled { path, .. } => mm::read_header_path_with(path, &opts.mm())?,
    })
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
            let (h, _) = read_mm_header(input, opts)?;
            (
                h.field == MmField::Complex,
                !fits_index::<i32>(h.nrows, h.ncols, h.nnz_expanded_max()),
                Precision::F64,
            )
        }
        (Container::Npz, _) => {
            let (path, name) = input.file(container)?;
            let info = NpzArchive::open_named(path, &name)?.info()?;
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
            let (path, name) = input.file(container)?;
            let h = SpbFile::read_header_named(path, &name)?;
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

/// A loaded matrix and the warnings of lenient reading.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded<T, I> {
    /// The matrix, in the format the file stores (Matrix Market: COO).
    pub matrix: AnyMatrix<T, I>,
    /// One warning per lenient recovery (`.npz`, `.spb`: one per value
    /// array holding NaN or infinities; never a line number).
    pub warnings: Vec<mm::Warning>,
    /// Matrix Market: the header's comment lines without their leading
    /// `%` ([`mm::MmMatrix::comments`]), for [`SaveOptions::comments`];
    /// empty for `.npz` and `.spb`.
    pub comments: Vec<String>,
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
    let (matrix, warnings) = match container {
        Container::Mtx => {
            let m = match input {
                Input::Path(p) => mm::read_path::<T, I>(p, &opts.mm())?,
                Input::Bytes { name, bytes } => mm::read_bytes::<T, I>(bytes, name, &opts.mm())?,
                Input::Stream(s) => {
                    mm::read_reader::<_, T, I>(Input::take_stream(s)?, &s.name, &opts.mm())?
                }
                Input::Spooled { path, .. } => mm::read_path::<T, I>(path, &opts.mm())?,
            };
            return Ok(Loaded {
                matrix: AnyMatrix::Coo(m.coo),
                warnings: m.warnings,
                comments: m.comments,
            });
        }
        Container::Spb => {
            let spb = SpbOptions {
                verify_checksums: opts.verify_checksums,
            };
            let (path, name) = input.file(container)?;
            SpbFile::open_named(path, &name, &spb)?.to_matrix_with::<T, I>(opts.lenient)?
        }
        Container::Npz => {
            let (path, name) = input.file(container)?;
            npz::read_npz_named_with::<T, I>(path, &name, opts.lenient)?
        }
    };
    // Binary containers are read in one go: the whole file counts as read.
    crate::progress::READ.add(input.len());
    Ok(Loaded {
        matrix,
        warnings,
        comments: Vec::new(),
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
    /// Matrix Market only: the storage to declare (default
    /// [`WriteSymmetry::Auto`]: a matrix that is exactly symmetric,
    /// skew-symmetric or hermitian is written as such, lower triangle
    /// only). `.npz` and `.spb` store every entry whatever this says.
    pub symmetry: WriteSymmetry,
    /// Matrix Market only: comment lines written after the banner, e.g. a
    /// loaded file's [`Loaded::comments`] (see
    /// [`WriteOptions::comments`] for how they are sanitised). Ignored by
    /// `.npz` and `.spb`.
    pub comments: Vec<String>,
    /// Matrix Market only: the storage format the writer's comment names
    /// (`written by sparsetool ... from ell storage`); `None` names the
    /// matrix's own. For a matrix written from another format's arrays
    /// (an out-of-core conversion writes the CSR of an ELL target).
    pub storage: Option<FormatKind>,
}

/// Writes `m` to `path` in the container its extension names (see
/// [`OutputKind`]), atomically (see [`write_atomic`]). Matrix Market output
/// gets `opts.comments`, then a comment naming the writer and the storage
/// format, and the storage `opts.symmetry` picks.
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
    write_atomic(path, opts.force, |w| write_to_with(w, path, kind, m, opts))
}

/// Writes `m` in the container `kind` to the stream `w` (for standard
/// output: into a buffer first, as `.npz` needs to seek); `name` names the
/// output in errors. Default [`SaveOptions`]: see [`write_to_with`].
///
/// # Errors
/// Any writer or I/O error.
pub fn write_to<W: Write + Seek, T: Scalar, I: Index>(
    w: &mut W,
    name: &Path,
    kind: OutputKind,
    m: MatrixRef<'_, T, I>,
) -> Result<(), Error> {
    write_to_with(w, name, kind, m, &SaveOptions::default())
}

/// Like [`write_to`], with the Matrix Market options of `opts`
/// ([`SaveOptions::symmetry`], [`SaveOptions::comments`]; `force` does
/// not apply to a stream).
///
/// # Errors
/// Any writer or I/O error.
pub fn write_to_with<W: Write + Seek, T: Scalar, I: Index>(
    w: &mut W,
    name: &Path,
    kind: OutputKind,
    m: MatrixRef<'_, T, I>,
    opts: &SaveOptions,
) -> Result<(), Error> {
    let mtx = || WriteOptions {
        field: mm::default_field::<T>(),
        comment: Some(format!(
            "written by sparsetool {} from {} storage",
            env!("CARGO_PKG_VERSION"),
            opts.storage.unwrap_or(m.kind())
        )),
        symmetry: opts.symmetry,
        comments: opts.comments.clone(),
    };
    match kind {
        OutputKind::Npz => npz::write_matrix(w, m)?,
        OutputKind::Spb => binary::write_spb(w, m)?,
        OutputKind::Mtx => mm::write_matrix(w, m, &mtx())?,
        OutputKind::MtxGz => {
            let gz = flate2::write::GzEncoder::new(w, flate2::Compression::new(6));
            let mut chunks = Chunked::new(gz);
            mm::write_matrix(&mut chunks, m, &mtx())?;
            chunks
                .finish()
                .and_then(flate2::write::GzEncoder::finish)
                .map_err(|e| Error::io(name, "cannot write", e))?;
        }
    }
    Ok(())
}

/// Hands the bytes written to the inner writer in chunks of exactly
/// [`Chunked::SIZE`] bytes (the last one, and one at each `flush`,
/// shorter). The deflate encoder's output depends on how its input is cut
/// into writes, and the Matrix Market writer cuts its text where its
/// blocks of entries end, which differ between formats (a CSR's rows, a
/// COO's entries) and between the in-memory and out-of-core paths: fixed
/// chunks make the same text give the same `.mtx.gz` bytes. (Hand-written:
/// `BufWriter` passes large writes through uncut.)
struct Chunked<W: Write> {
    inner: W,
    buf: Vec<u8>,
}

impl<W: Write> Chunked<W> {
    const SIZE: usize = 1 << 16;

    fn new(inner: W) -> Self {
        Self {
            inner,
            buf: Vec::with_capacity(Self::SIZE),
        }
    }

    /// Writes what is buffered and returns the inner writer.
    fn finish(mut self) -> std::io::Result<W> {
        self.inner.write_all(&self.buf)?;
        self.buf.clear();
        Ok(self.inner)
    }
}

impl<W: Write> Write for Chunked<W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let n = data.len().min(Self::SIZE - self.buf.len());
        self.buf.extend_from_slice(&data[..n]);
        if self.buf.len() == Self::SIZE {
            self.inner.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.write_all(&self.buf)?;
        self.buf.clear();
        self.inner.flush()
    }
}

/// Temporary files of writes in progress (removed by [`remove_pending`]).
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes the temporary files of every [`write_atomic`] in progress, and
/// the paths given to [`track_pending`] (directories with their content).
/// For a signal handler: after it, exit without returning to the writers.
/// The list stays locked afterwards, so a writer on another thread cannot
/// create a new temporary file ([`create_pending`]), and [`interrupted`] turns
/// true so the main thread can wait for the handler's exit instead of
/// reporting the errors the cleanup causes.
pub fn remove_pending() {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
    if let Ok(list) = PENDING.lock() {
        for p in list.iter() {
            if p.is_dir() {
                // A worker may still be adding a file to the directory while
                // it is removed (the buckets of an out-of-core conversion):
                // try again until it is gone, for at most two seconds.
                for _ in 0..200 {
                    let _ = std::fs::remove_dir_all(p);
                    if !p.exists() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            } else {
                let _ = std::fs::remove_file(p);
            }
        }
        std::mem::forget(list);
    }
}

/// Set by [`remove_pending`].
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether [`remove_pending`] has run (a signal is being handled).
#[must_use]
pub fn interrupted() -> bool {
    INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst)
}

/// Registers a temporary file or directory for [`remove_pending`] (e.g.
/// the scratch directory of an out-of-core conversion); forget it with
/// [`untrack_pending`] once it is gone.
pub fn track_pending(path: &Path) {
    if let Ok(mut list) = PENDING.lock() {
        list.push(path.to_path_buf());
    }
}

/// Creates a temporary file or directory with `create` and registers the
/// path it returns for [`remove_pending`], holding the list meanwhile: once
/// [`remove_pending`] has run, nothing new is created (the caller waits for
/// the signal handler's exit instead), so nothing created here is missed.
///
/// # Errors
/// `create`'s error.
pub fn create_pending<T, E>(
    create: impl FnOnce() -> Result<T, E>,
    path: impl Fn(&T) -> &Path,
) -> Result<T, E> {
    let mut list = PENDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let made = create()?;
    list.push(path(&made).to_path_buf());
    Ok(made)
}

/// Forgets a path given to [`track_pending`].
pub fn untrack_pending(path: &Path) {
    if let Ok(mut list) = PENDING.lock() {
        list.retain(|p| p != path);
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

/// Refuses an output that exists (unless `force`), whose directory does
/// not exist, or whose directory is not writable (a probe temporary file is
/// created there and removed); call it before long work so that the work
/// does not end in a refusal.
///
/// # Errors
/// [`Error::Path`] for an existing output or a missing directory,
/// [`Error::Io`] (the operating system's reason) for a directory where no
/// file can be created.
pub fn check_target(out: &Path, force: bool) -> Result<(), Error> {
    if !force && out.exists() {
        return Err(Error::path(out, "exists; use --force to overwrite it"));
    }
    let dir = parent_dir(out);
    if !dir.is_dir() {
        return Err(Error::path(
            out,
            format!(
                "cannot write: directory {} does not exist",
                escape_path(&dir)
            ),
        ));
    }
    // Permissions alone do not tell (ACLs, read-only mounts, root): try.
    tempfile::Builder::new()
        .prefix(".sparsetool-probe-")
        .tempfile_in(&dir)
        .map_err(|e| Error::io(&dir, "cannot write to directory", e))?;
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
    create_pending(
        || {
            b.tempfile_in(&dir)
                .map_err(|e| Error::io(&dir, "cannot create a temporary file in", e))
        },
        tempfile::NamedTempFile::path,
    )
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

/// [`write_atomic`] of a whole text (a JSON document, a report).
///
/// # Errors
/// As [`write_atomic`].
pub fn write_text(out: &Path, force: bool, text: &str) -> Result<(), Error> {
    write_atomic(out, force, |w| {
        w.write_all(text.as_bytes())
            .map_err(|e| Error::io(out, "cannot write", e))
    })
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
