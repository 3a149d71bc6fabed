//! `sparsetool._native`: the compiled half of the `sparsetool` Python
//! package. Every function here is a thin call into the library crates
//! (`sparsetool-formats`, `-convert`, `-analyze`, `-gpu`) with the GIL
//! released for the work; `python/sparsetool/__init__.py` turns the
//! results into SciPy and NumPy objects.
//!
//! Matrices cross the boundary as `(format, shape, arrays, params)` (see
//! `parts.rs`): Rust buffers become NumPy arrays without a copy.
#![deny(missing_docs)]

mod errors;
mod parts;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use sparsetool_analyze::{AnalyzeOptions, AnalyzeReport, RowLengths, Sizes};
use sparsetool_convert::{convert as convert_any, ConvertParams, HybWidth, ToCsr};
use sparsetool_formats::binary::{SpbFile, SpbOptions};
use sparsetool_formats::io::{self, Container, Input, LoadOptions, Probe, SaveOptions};
use sparsetool_formats::mm::WriteSymmetry;
use sparsetool_formats::{AnyMatrix, FormatKind, Precision, Scalar};
use sparsetool_gpu::GpuContext;

use crate::errors::{Failure, IntoPyResult};
use crate::parts::{to_py, Idx, Parts, Value};

/// Calls `$f::<T, I>(args)` for a value type (`VType`) and whether the
/// indices are 64-bit.
macro_rules! typed {
    ($v:expr, $wide:expr, $f:ident ( $($arg:expr),* $(,)? )) => {{
        use sparsetool_formats::{Complex32, Complex64};
        match ($v, $wide) {
            (VType::F64, false) => $f::<f64, i32>($($arg),*),
            (VType::F64, true) => $f::<f64, i64>($($arg),*),
            (VType::F32, false) => $f::<f32, i32>($($arg),*),
            (VType::F32, true) => $f::<f32, i64>($($arg),*),
            (VType::C128, false) => $f::<Complex64, i32>($($arg),*),
            (VType::C128, true) => $f::<Complex64, i64>($($arg),*),
            (VType::C64, false) => $f::<Complex32, i32>($($arg),*),
            (VType::C64, true) => $f::<Complex32, i64>($($arg),*),
        }
    }};
}

/// The value types of the library, by their NumPy names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VType {
    F32,
    F64,
    C64,
    C128,
}

impl VType {
    fn of_numpy(py: Python<'_>, name: &str) -> PyResult<Self> {
        Ok(match name {
            "float32" => VType::F32,
            "float64" => VType::F64,
            "complex64" => VType::C64,
            "complex128" => VType::C128,
            other => {
                return Err(Failure::input(format!(
                    "values of dtype {other} (expected float32, float64, complex64 or complex128)"
                ))
                .into_py(py))
            }
        })
    }

    fn of(complex: bool, p: Precision) -> Self {
        match (complex, p) {
            (false, Precision::F32) => VType::F32,
            (false, Precision::F64) => VType::F64,
            (true, Precision::F32) => VType::C64,
            (true, Precision::F64) => VType::C128,
        }
    }
}

/// `int32` → false, `int64` → true.
fn wide_index(py: Python<'_>, name: &str) -> PyResult<bool> {
    match name {
        "int32" => Ok(false),
        "int64" => Ok(true),
        other => Err(Failure::input(format!(
            "indices of dtype {other} (expected int32 or int64)"
        ))
        .into_py(py)),
    }
}

fn precision(py: Python<'_>, dtype: Option<&str>) -> PyResult<Option<Precision>> {
    dtype
        .map(|d| d.parse::<Precision>())
        .transpose()
        .map_err(|e| Failure::input(e).into_py(py))
}

fn format_kind(py: Python<'_>, name: &str) -> PyResult<FormatKind> {
    name.parse::<FormatKind>()
        .map_err(|e| Failure::input(e).into_py(py))
}

/// Conversion parameters as the CLI's `convert` flags give them.
#[derive(Debug, Clone, Copy, Default, FromPyObject)]
#[pyo3(from_item_all)]
struct Params {
    ell_width: Option<usize>,
    hyb_width: Option<usize>,
    slice: Option<usize>,
    sigma: Option<usize>,
    allow_fill: bool,
}

impl Params {
    fn convert(&self) -> ConvertParams {
        let d = ConvertParams::default();
        ConvertParams {
            ell_width: self.ell_width,
            hyb_width: self.hyb_width.map_or(HybWidth::Auto, HybWidth::Fixed),
            slice: self.slice.unwrap_or(d.slice),
            sigma: self.sigma,
            allow_fill: self.allow_fill,
        }
    }
}

/// `m` in `target` (no work when it is there already; CSR and COO
/// moved, not copied).
fn to_format<T: Scalar, I: sparsetool_formats::Index>(
    m: AnyMatrix<T, I>,
    target: FormatKind,
    params: &ConvertParams,
) -> Result<AnyMatrix<T, I>, Failure> {
    if m.kind() == target {
        return Ok(m);
    }
    if target == FormatKind::Csr {
        return Ok(AnyMatrix::Csr(m.try_into_csr()?));
    }
    Ok(convert_any(&m, target, params)?)
}

fn load_opts(lenient: bool, verify_checksums: bool) -> LoadOptions {
    LoadOptions {
        lenient,
        verify_checksums,
    }
}

/// Opens `path` and reads its headers (the types a load needs).
fn open(py: Python<'_>, path: &Path, opts: &LoadOptions) -> PyResult<(Input, Probe)> {
    py.detach(|| -> Result<_, Failure> {
        let input = Input::open(path)?;
        let probe = io::probe(&input, opts)?;
        Ok((input, probe))
    })
    .py(py)
}

fn read_typed<'py, T: Value, I: Idx>(
    py: Python<'py>,
    input: &Input,
    opts: &LoadOptions,
    target: FormatKind,
    params: &ConvertParams,
) -> PyResult<Bound<'py, PyDict>> {
    let (m, warnings) = py
        .detach(|| -> Result<_, Failure> {
            let loaded = io::load::<T, I>(input, opts)?;
            Ok((to_format(loaded.matrix, target, params)?, loaded.warnings))
        })
        .py(py)?;
    let out = to_py(py, m)?;
    let name = input.name();
    let texts: Vec<String> = warnings
        .iter()
        .map(|w| match w.line {
            Some(l) => format!("{name}:{l}: {}", w.message),
            None => format!("{name}: {}", w.message),
        })
        .collect();
    out.set_item("warnings", PyList::new(py, texts)?)?;
    Ok(out)
}

/// Reads a matrix file (`.mtx`, `.mtx.gz`, `.npz`, `.spb`) into `format`,
/// as the dict of `parts::to_py` plus `warnings` (lenient recoveries).
#[pyfunction]
#[pyo3(signature = (path, format, dtype, lenient, verify_checksums, params))]
fn read<'py>(
    py: Python<'py>,
    path: PathBuf,
    format: &str,
    dtype: Option<&str>,
    lenient: bool,
    verify_checksums: bool,
    params: Params,
) -> PyResult<Bound<'py, PyDict>> {
    let target = format_kind(py, format)?;
    let dtype = precision(py, dtype)?;
    let opts = load_opts(lenient, verify_checksums);
    let (input, probe) = open(py, &path, &opts)?;
    let v = VType::of(probe.complex, dtype.unwrap_or(probe.precision));
    let params = params.convert();
    typed!(
        v,
        probe.needs_i64,
        read_typed(py, &input, &opts, target, &params)
    )
}

/// A matrix handed over from Python as one tuple (what
/// `sparsetool._matrix.to_native` makes): `(format, (nrows, ncols), arrays,
/// params, value_dtype, index_dtype)`.
#[derive(Debug, FromPyObject)]
struct MatrixArg<'py>(
    String,
    (usize, usize),
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    String,
    String,
);

impl<'py> MatrixArg<'py> {
    /// The parts, the value type and whether the indices are 64-bit.
    fn parts(self, py: Python<'py>) -> PyResult<(Parts<'py>, VType, bool)> {
        let MatrixArg(format, shape, arrays, params, value_dtype, index_dtype) = self;
        Ok((
            Parts::new(py, &format, shape, arrays, params)?,
            VType::of_numpy(py, &value_dtype)?,
            wide_index(py, &index_dtype)?,
        ))
    }
}

fn write_typed<T: Value, I: Idx>(
    py: Python<'_>,
    parts: &Parts<'_>,
    path: &Path,
    opts: &SaveOptions,
) -> PyResult<()> {
    let m = parts.matrix::<T, I>()?;
    py.detach(|| -> Result<(), Failure> { Ok(io::save(path, m.as_ref(), opts)?) })
        .py(py)
}

/// Writes a matrix to `path`, the container chosen by the extension,
/// atomically (a temporary file renamed into place).
#[pyfunction]
#[pyo3(signature = (path, matrix, overwrite, symmetry))]
fn write<'py>(
    py: Python<'py>,
    path: PathBuf,
    matrix: MatrixArg<'py>,
    overwrite: bool,
    symmetry: &str,
) -> PyResult<()> {
    let (parts, v, wide) = matrix.parts(py)?;
    let symmetry = match symmetry {
        "auto" => WriteSymmetry::Auto,
        "general" => WriteSymmetry::General,
        other => {
            return Err(Failure::input(format!(
                "symmetry `{other}` (expected \"auto\" or \"general\")"
            ))
            .into_py(py))
        }
    };
    let opts = SaveOptions {
        force: overwrite,
        symmetry,
        ..SaveOptions::default()
    };
    typed!(v, wide, write_typed(py, &parts, &path, &opts))
}

fn convert_typed<'py, T: Value, I: Idx>(
    py: Python<'py>,
    parts: &Parts<'py>,
    target: FormatKind,
    params: &ConvertParams,
) -> PyResult<Bound<'py, PyDict>> {
    let m = parts.matrix::<T, I>()?;
    let out = py.detach(|| to_format(m, target, params)).py(py)?;
    to_py(py, out)
}

/// Converts a matrix handed over from Python to `target`.
#[pyfunction]
#[pyo3(signature = (matrix, target, convert_params))]
fn convert<'py>(
    py: Python<'py>,
    matrix: MatrixArg<'py>,
    target: &str,
    convert_params: Params,
) -> PyResult<Bound<'py, PyDict>> {
    let (parts, v, wide) = matrix.parts(py)?;
    let target = format_kind(py, target)?;
    let cp = convert_params.convert();
    typed!(v, wide, convert_typed(py, &parts, target, &cp))
}

/// The `analyze --json` report of row lengths, accounted with values of
/// `value_bytes` bytes (and the index width the sizes need).
fn report(rl: &RowLengths, value_bytes: usize) -> Result<String, Failure> {
    let nnz = usize::try_from(rl.nnz()).map_err(Failure::input)?;
    let sizes = Sizes::auto_index(value_bytes, rl.nrows, rl.ncols, nnz)?;
    let report = AnalyzeReport::new(
        rl,
        &AnalyzeOptions {
            sizes,
            ..AnalyzeOptions::default()
        },
    );
    Ok(report.to_json()?)
}

fn value_bytes(complex: bool, p: Precision) -> usize {
    if complex {
        2 * p.size()
    } else {
        p.size()
    }
}

fn lengths_typed<T: Value, I: Idx>(
    py: Python<'_>,
    input: &Input,
    opts: &LoadOptions,
) -> PyResult<RowLengths> {
    py.detach(|| -> Result<RowLengths, Failure> {
        // COO is counted as stored (as the CLI counts a streamed .mtx).
        Ok(match io::load::<T, I>(input, opts)?.matrix {
            AnyMatrix::Coo(c) => RowLengths::from_coo(&c)?,
            m => RowLengths::from_csr(&*m.try_as_csr()?)?,
        })
    })
    .py(py)
}

/// `sparsetool analyze --json FILE [--dtype D]` as a JSON string.
#[pyfunction]
#[pyo3(signature = (path, dtype, lenient))]
fn analyze_path(
    py: Python<'_>,
    path: PathBuf,
    dtype: Option<&str>,
    lenient: bool,
) -> PyResult<String> {
    let dtype = precision(py, dtype)?;
    let opts = load_opts(lenient, true);
    let (input, probe) = open(py, &path, &opts)?;
    let rl = match (probe.container, &input) {
        // Matrix Market files: the CLI's streaming pass (no matrix in memory).
        (Container::Mtx, Input::Path(p)) => py
            .detach(|| -> Result<RowLengths, Failure> {
                let mm = sparsetool_formats::mm::ReadOptions {
                    lenient,
                    ..Default::default()
                };
                Ok(sparsetool_analyze::rows::read_row_lengths(p, &mm)?.0)
            })
            .py(py)?,
        _ => typed!(
            VType::of(probe.complex, Precision::F64),
            probe.needs_i64,
            lengths_typed(py, &input, &opts)
        )?,
    };
    let vb = value_bytes(probe.complex, dtype.unwrap_or(probe.precision));
    py.detach(|| report(&rl, vb)).py(py)
}

fn matrix_lengths<T: Value, I: Idx>(py: Python<'_>, parts: &Parts<'_>) -> PyResult<RowLengths> {
    let m = parts.matrix::<T, I>()?;
    py.detach(|| -> Result<RowLengths, Failure> {
        Ok(match &m {
            AnyMatrix::Coo(c) => RowLengths::from_coo(c)?,
            m => RowLengths::from_csr(&*m.try_as_csr()?)?,
        })
    })
    .py(py)
}

/// The `analyze --json` report of a matrix handed over from Python.
#[pyfunction]
#[pyo3(signature = (matrix, dtype))]
fn analyze_matrix<'py>(
    py: Python<'py>,
    matrix: MatrixArg<'py>,
    dtype: Option<&str>,
) -> PyResult<String> {
    let (parts, v, wide) = matrix.parts(py)?;
    let rl = typed!(v, wide, matrix_lengths(py, &parts))?;
    let complex = matches!(v, VType::C64 | VType::C128);
    let stored = if matches!(v, VType::F32 | VType::C64) {
        Precision::F32
    } else {
        Precision::F64
    };
    let vb = value_bytes(complex, precision(py, dtype)?.unwrap_or(stored));
    py.detach(|| report(&rl, vb)).py(py)
}

fn spmv_typed<'py, T: Value, I: Idx>(
    py: Python<'py>,
    parts: &Parts<'py>,
    x: &Bound<'py, PyAny>,
    transpose: bool,
    gpu: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let m = parts.matrix::<T, I>()?;
    let x: PyReadonlyArray1<'_, T> = x.extract().map_err(|_| {
        Failure::input("x must be a 1-D array of the matrix's value type").into_py(py)
    })?;
    let x = x
        .as_slice()
        .map_err(|_| Failure::input("x is not contiguous").into_py(py))?;
    let (nrows, ncols, _) = m.shape();
    let (xlen, ylen) = if transpose {
        (nrows, ncols)
    } else {
        (ncols, nrows)
    };
    if x.len() != xlen {
        return Err(
            Failure::input(format!("x has length {}, expected {xlen}", x.len())).into_py(py),
        );
    }
    let y = py
        .detach(|| -> Result<Vec<T>, Failure> {
            match gpu {
                None => {
                    let mut y = vec![T::zero(); ylen];
                    if transpose {
                        m.spmv_transpose(x, &mut y);
                    } else {
                        m.spmv(x, &mut y);
                    }
                    Ok(y)
                }
                Some(ordinal) => {
                    let ctx = context(ordinal)?;
                    Ok(if transpose {
                        sparsetool_gpu::spmv_gpu_transpose(&ctx, &m.as_ref(), x)?
                    } else {
                        sparsetool_gpu::spmv_gpu(&ctx, &m.as_ref(), x)?
                    })
                }
            }
        })
        .py(py)?;
    Ok(y.into_pyarray(py).into_any())
}

/// `y = A x` (or `Aᵀ x`) for a host `x`, on the CPU (`gpu=None`) or on the
/// GPU of that ordinal; `y` is a new NumPy array.
#[pyfunction]
#[pyo3(signature = (matrix, x, transpose, gpu))]
fn spmv<'py>(
    py: Python<'py>,
    matrix: MatrixArg<'py>,
    x: Bound<'py, PyAny>,
    transpose: bool,
    gpu: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let (parts, v, wide) = matrix.parts(py)?;
    typed!(v, wide, spmv_typed(py, &parts, &x, transpose, gpu))
}

fn spmv_device_typed<T: Value, I: Idx>(
    py: Python<'_>,
    parts: &Parts<'_>,
    ptrs: (u64, u64),
    transpose: bool,
    ordinal: usize,
) -> PyResult<()> {
    let m = parts.matrix::<T, I>()?;
    py.detach(|| -> Result<(), Failure> {
        let ctx = context(ordinal)?;
        // SAFETY: the Python caller passes the data pointers of two
        // contiguous device arrays of the matrix's value type on device
        // `ordinal`, `x` of the length the product reads and `y` of the
        // length it writes (checked there against the shape), both alive
        // for this call.
        unsafe { sparsetool_gpu::spmv_gpu_device(&ctx, &m.as_ref(), ptrs.0, ptrs.1, transpose)? };
        Ok(())
    })
    .py(py)
}

/// `y = A x` (or `Aᵀ x`) with `x` and `y` already on the GPU (CuPy arrays'
/// device pointers), on the device of that ordinal. The caller has checked
/// the lengths and dtypes and synchronised the stream that wrote `x`.
#[pyfunction]
#[pyo3(signature = (matrix, x_ptr, y_ptr, transpose, ordinal))]
fn spmv_device<'py>(
    py: Python<'py>,
    matrix: MatrixArg<'py>,
    x_ptr: u64,
    y_ptr: u64,
    transpose: bool,
    ordinal: usize,
) -> PyResult<()> {
    let (parts, v, wide) = matrix.parts(py)?;
    typed!(
        v,
        wide,
        spmv_device_typed(py, &parts, (x_ptr, y_ptr), transpose, ordinal)
    )
}

/// The context of device `ordinal`, made once per process: a context
/// compiles its kernels on first use, which a second call should not pay
/// again. A failure (no device) is not kept, so it is tried again.
fn context(ordinal: usize) -> Result<Arc<GpuContext>, Failure> {
    static CONTEXTS: Mutex<Vec<(usize, Arc<GpuContext>)>> = Mutex::new(Vec::new());
    let mut made = CONTEXTS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, ctx)) = made.iter().find(|(o, _)| *o == ordinal) {
        return Ok(Arc::clone(ctx));
    }
    let ctx = Arc::new(GpuContext::new(ordinal)?);
    made.push((ordinal, Arc::clone(&ctx)));
    Ok(ctx)
}

/// Whether a CUDA device can be opened (the reason when not).
#[pyfunction]
fn gpu_available(py: Python<'_>) -> (bool, String) {
    match py.detach(|| context(0)) {
        Ok(ctx) => (true, ctx.device_name().to_string()),
        Err(e) => (false, e.message),
    }
}

fn validate_spb<T: Scalar, I: sparsetool_formats::Index>(file: &SpbFile) -> Result<(), Failure> {
    if file.header().format == FormatKind::Csr {
        file.csr_view::<T, I>()?;
    } else {
        // Every format's invariants, checked through its `try_from_parts`
        // on a copy that is dropped at once.
        file.to_matrix::<T, I>()?;
    }
    Ok(())
}

/// Opens and fully validates a `.spb` file (header, table, checksums and
/// the format's invariants) and returns where its sections lie:
/// `(format, (nrows, ncols), params, [(name, dtype, offset, count)], size)`.
#[pyfunction]
#[pyo3(signature = (path, verify_checksums))]
#[allow(clippy::type_complexity)]
fn spb_sections(
    py: Python<'_>,
    path: PathBuf,
    verify_checksums: bool,
) -> PyResult<(
    String,
    (u64, u64),
    Vec<(&'static str, u64)>,
    Vec<(String, &'static str, u64, u64)>,
    u64,
)> {
    py.detach(|| -> Result<_, Failure> {
        let file = SpbFile::open(&path, &SpbOptions { verify_checksums })?;
        let h = file.header();
        let complex = matches!(
            h.value_dtype,
            sparsetool_formats::binary::DType::C64 | sparsetool_formats::binary::DType::C128
        );
        let p = if matches!(
            h.value_dtype,
            sparsetool_formats::binary::DType::F32 | sparsetool_formats::binary::DType::C64
        ) {
            Precision::F32
        } else {
            Precision::F64
        };
        let wide = h.index_dtype == sparsetool_formats::binary::DType::I64;
        typed!(VType::of(complex, p), wide, validate_spb(&file))?;
        let sections = file
            .sections()
            .iter()
            .map(|s| (s.name.clone(), s.dtype.name(), s.offset, s.count))
            .collect();
        let size = std::fs::metadata(&path)
            .map_err(|e| Failure::new(errors::Kind::File, e))?
            .len();
        Ok((
            h.format.name().to_string(),
            (h.nrows, h.ncols),
            h.params(),
            sections,
            size,
        ))
    })
    .py(py)
}

/// The compiled module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(write, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_path, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(spmv, m)?)?;
    m.add_function(wrap_pyfunction!(spmv_device, m)?)?;
    m.add_function(wrap_pyfunction!(gpu_available, m)?)?;
    m.add_function(wrap_pyfunction!(spb_sections, m)?)?;
    Ok(())
}
