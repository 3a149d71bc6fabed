//! The error type of the GPU crate.

use cudarc::driver::DriverError;

/// Everything that can go wrong on the GPU path.
///
/// None of these are panics: a machine without a driver, a kernel that does
/// not compile, a cuSPARSE failure or an unsupported value type all come back
/// here, so the CLI can print a sentence and exit with code 2.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GpuError {
    /// No usable CUDA driver or device (library missing, no device at that
    /// ordinal, driver initialisation failed). The string is a plain sentence.
    #[error("no CUDA device: {0}")]
    NoDevice(String),
    /// A CUDA driver call failed.
    #[error("CUDA driver error: {0}")]
    Driver(#[from] DriverError),
    /// NVRTC could not compile one of the kernel sources.
    #[error("NVRTC failed to compile kernel source `{kernel}`: {log}")]
    Compile {
        /// Source file name (e.g. `ell.cu`).
        kernel: &'static str,
        /// Compiler log or error.
        log: String,
    },
    /// A kernel symbol was not found in its compiled module.
    #[error("kernel `{0}` not found in its compiled module")]
    MissingKernel(String),
    /// A cuSPARSE call failed (or the library is missing).
    #[error("cuSPARSE call `{call}` failed: {status}")]
    Cusparse {
        /// The cuSPARSE function.
        call: &'static str,
        /// Status returned, as text.
        status: String,
    },
    /// This format cannot run with this value type on the GPU (complex values).
    #[error("GPU SpMV does not support format `{format}` with values of type `{dtype}`")]
    Unsupported {
        /// Format name.
        format: String,
        /// Value type name (`c64`, `c128`, ...).
        dtype: &'static str,
    },
    /// A size or index does not fit the 32-bit indices the kernels use.
    #[error("{what} = {value} does not fit the 32-bit indices of the GPU kernels")]
    IndexOverflow {
        /// What overflowed.
        what: &'static str,
        /// Its value.
        value: u64,
    },
    /// A kernel was asked to run a matrix of another format.
    #[error("kernel `{kernel}` cannot run a matrix stored as {format}")]
    KernelMismatch {
        /// Kernel name.
        kernel: &'static str,
        /// Format of the matrix.
        format: &'static str,
    },
    /// An input vector has the wrong length.
    #[error("{what} has length {actual}, expected {expected}")]
    Shape {
        /// Which vector.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        actual: usize,
    },
    /// Converting the matrix to a format failed.
    #[error("converting to {format} failed: {message}")]
    Convert {
        /// Target format.
        format: &'static str,
        /// The converter's message.
        message: String,
    },
    /// NCCL (the multi-GPU exchange) failed or its library is missing.
    #[error("NCCL: {0}")]
    Nccl(String),
    /// A multi-GPU request that cannot be met (parts, devices, partition).
    #[error("multi-GPU SpMV: {0}")]
    Distributed(String),
    /// A kernel that only some matrices allow was asked for another
    /// (`sell-u16` on a slice whose columns span more than 16 bits reach,
    /// `ell-u16` on a layout none of whose groups of 32 rows they fit).
    #[error("kernel `{kernel}` does not apply to this matrix: {reason}")]
    NotApplicable {
        /// Kernel name.
        kernel: &'static str,
        /// Why, naming the part of the matrix.
        reason: String,
    },
    /// The calibration suite could not be built (see [`crate::calibrate`]).
    #[error("calibration: {0}")]
    Calibrate(String),
}
