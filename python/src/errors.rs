//! The library crates' errors as the exceptions of `sparsetool._errors`
//! (`InputError` is a `ValueError`, `FileError` an `OSError`,
//! `GpuUnavailableError` a `RuntimeError`, all of them `sparsetool.Error`),
//! carrying the messages the command line prints.

use std::fmt::Display;
use std::io::ErrorKind;

use pyo3::prelude::*;
use sparsetool_analyze::AnalyzeError;
use sparsetool_convert::ConvertError;
use sparsetool_formats::binary::SpbError;
use sparsetool_formats::io;
use sparsetool_formats::FormatError;
use sparsetool_gpu::GpuError;

/// Which exception class of `sparsetool._errors` a failure becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bad content or parameters: `InputError` (a `ValueError`).
    Input,
    /// A file cannot be opened, read, written or used as asked:
    /// `FileError` (an `OSError`).
    File,
    /// No CUDA driver or device: `GpuUnavailableError` (a `RuntimeError`).
    NoGpu,
    /// Anything else (a driver failure, a kernel that does not compile):
    /// `Error`.
    Other,
}

impl Kind {
    fn class(self) -> &'static str {
        match self {
            Kind::Input => "InputError",
            Kind::File => "FileError",
            Kind::NoGpu => "GpuUnavailableError",
            Kind::Other => "Error",
        }
    }
}

/// A failure of the library crates, computed without the GIL and turned
/// into a Python exception afterwards ([`Failure::into_py`]).
#[derive(Debug)]
pub struct Failure {
    /// The exception class.
    pub kind: Kind,
    /// The message, as the command line prints it after `error: `.
    pub message: String,
}

impl Failure {
    /// A failure of `kind` with `message`.
    pub fn new(kind: Kind, message: impl Display) -> Self {
        Self {
            kind,
            message: message.to_string(),
        }
    }

    /// Bad input with `message`.
    pub fn input(message: impl Display) -> Self {
        Self::new(Kind::Input, message)
    }

    /// The Python exception (an instance of the class of `sparsetool._errors`).
    pub fn into_py(self, py: Python<'_>) -> PyErr {
        let made = py
            .import("sparsetool._errors")
            .and_then(|m| m.getattr(self.kind.class()))
            .and_then(|cls| cls.call1((self.message.clone(),)));
        match made {
            Ok(instance) => PyErr::from_value(instance),
            // The package is broken (the module is missing): still say what failed.
            Err(e) => e,
        }
    }
}

/// Whether an I/O error means the bytes are bad (a corrupt gzip stream, a
/// truncated file) rather than the file unusable.
fn is_data_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::InvalidData | ErrorKind::InvalidInput | ErrorKind::UnexpectedEof
    )
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        let kind = match (&e, e.io_error()) {
            (io::Error::Io { .. } | io::Error::Path { .. }, _) => Kind::File,
            (_, Some(source)) if !is_data_error(source) => Kind::File,
            _ => Kind::Input,
        };
        Self::new(kind, e)
    }
}

impl From<SpbError> for Failure {
    fn from(e: SpbError) -> Self {
        io::Error::from(e).into()
    }
}

/// `From` for errors that are always of one kind.
macro_rules! of_kind {
    ($kind:expr => $($t:ty),+) => {$(
        impl From<$t> for Failure {
            fn from(e: $t) -> Self {
                Self::new($kind, e)
            }
        }
    )+};
}
of_kind!(Kind::Input => FormatError, ConvertError, AnalyzeError);
of_kind!(Kind::Other => serde_json::Error);

impl From<GpuError> for Failure {
    fn from(e: GpuError) -> Self {
        let kind = match e {
            GpuError::NoDevice(_) => Kind::NoGpu,
            GpuError::Unsupported { .. }
            | GpuError::IndexOverflow { .. }
            | GpuError::Shape { .. }
            | GpuError::Convert { .. } => Kind::Input,
            _ => Kind::Other,
        };
        Self::new(kind, e)
    }
}

/// `PyResult` of a fallible library call: the failure as its exception.
pub trait IntoPyResult<T> {
    /// Converts the error into the Python exception of its kind.
    ///
    /// # Errors
    /// The exception.
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Failure> {
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|f| f.into_py(py))
    }
}
