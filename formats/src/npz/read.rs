//! Reading `.npz` archives (stored or deflate-compressed entries).

use std::fs::File;
use std::io::{BufReader, Cursor, Read, Seek};
use std::path::Path;

use zip::ZipArchive;

use super::error::{NpzError, NpzErrorKind};
use super::npy::{parse_dict, parse_preamble, DKind, Header, MAX_DICT_LEN};
use crate::alloc::{try_with_capacity, try_zeroed};
use crate::mm::Warning;
use crate::values::{escape, ValueCheck};
use crate::{Index, Scalar};

trait ReadSeek: Read + Seek + Send {}
impl<T: Read + Seek + Send> ReadSeek for T {}

/// An open `.npz` archive. Arrays are read by name (without `.npy`) and
/// converted to the requested type with range checks.
pub struct NpzArchive {
    zip: ZipArchive<Box<dyn ReadSeek>>,
    name: String,
    /// Length of the whole archive in bytes.
    len: u64,
    /// Accept NaN and infinite values (with a warning).
    lenient: bool,
    /// One warning per value array that held NaN or infinities (lenient).
    warnings: Vec<Warning>,
}

impl std::fmt::Debug for NpzArchive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzArchive")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Bytes read per chunk when converting between dtypes.
const CHUNK: usize = 1 << 16;

impl NpzArchive {
    /// Opens the archive at `path`.
    ///
    /// # Errors
    /// The file cannot be opened, or is not a zip archive.
    pub fn open(path: &Path) -> Result<Self, NpzError> {
        Self::open_named(path, &path.display().to_string())
    }

    /// Opens the archive at `path`, naming it `name` in messages (e.g. a
    /// temporary copy of standard input).
    ///
    /// # Errors
    /// As [`NpzArchive::open`].
    pub fn open_named(path: &Path, name: &str) -> Result<Self, NpzError> {
        let name = name.to_string();
        let file = File::open(path).map_err(|e| NpzError::from(e).with_file(&name))?;
        let len = file
            .metadata()
            .map_err(|e| NpzError::from(e).with_file(&name))?
            .len();
        Self::from_reader(Box::new(BufReader::new(file)), name, len)
    }

    /// Opens an archive held in memory; `name` is used in error messages.
    ///
    /// # Errors
    /// The bytes are not a zip archive.
    pub fn from_bytes(bytes: Vec<u8>, name: &str) -> Result<Self, NpzError> {
        let len = bytes.len() as u64;
        Self::from_reader(Box::new(Cursor::new(bytes)), name.to_string(), len)
    }

    fn from_reader(r: Box<dyn ReadSeek>, name: String, len: u64) -> Result<Self, NpzError> {
        let zip = ZipArchive::new(r).map_err(|e| {
            let kind = match e {
                zip::result::ZipError::Io(io) if io.kind() != std::io::ErrorKind::UnexpectedEof => {
                    NpzErrorKind::Io(io)
                }
                other => NpzErrorKind::NotZip(other.to_string()),
            };
            NpzError::new(Some(&name), None, kind)
        })?;
        Ok(Self {
            zip,
            name,
            len,
            lenient: false,
            warnings: Vec::new(),
        })
    }

    /// Lenient mode: value arrays may hold NaN and infinities (each such
    /// array gives a warning, see [`NpzArchive::take_warnings`]); strict
    /// mode (the default) refuses them. A finite value that overflows the
    /// value type read into (`f64` into `f32`) is refused in both modes.
    pub fn set_lenient(&mut self, lenient: bool) {
        self.lenient = lenient;
    }

    /// The warnings of lenient reads so far (emptied).
    pub fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    /// The name used in error messages (the path, or the name given to
    /// [`NpzArchive::from_bytes`]).
    #[must_use]
    pub fn file_name(&self) -> &str {
        &self.name
    }

    /// Names of the arrays in the archive (entry names without `.npy`).
    #[must_use]
    pub fn names(&self) -> Vec<String> {
        self.zip
            .file_names_raw()
            .map(|raw| {
                let s = String::from_utf8_lossy(raw);
                s.strip_suffix(".npy").unwrap_or(&s).to_string()
            })
            .collect()
    }

    /// Whether the archive holds array `name`.
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        self.zip.index_for_name(&format!("{name}.npy")).is_some()
            || self.zip.index_for_name(name).is_some()
    }

    fn err(&self, array: &str, kind: NpzErrorKind) -> NpzError {
        NpzError::new(Some(&self.name), Some(array), kind)
    }

    /// Opens entry `name`, parses its header, checks that the entry holds
    /// the bytes the header declares, and hands the reader to `f`.
    fn with_entry<R>(
        &mut self,
        name: &str,
        f: impl FnOnce(&Header, &mut dyn Read) -> Result<R, NpzErrorKind>,
    ) -> Result<R, NpzError> {
        let file_name = self.name.clone();
        let err = |kind| NpzError::new(Some(&file_name), Some(name), kind);
        let idx = self
            .zip
            .index_for_name(&format!("{name}.npy"))
            .or_else(|| self.zip.index_for_name(name))
            .ok_or_else(|| err(NpzErrorKind::MissingArray))?;
        let entry = self
            .zip
            .by_index(idx)
            .map_err(|e| NpzError::from(e).with_file(&file_name).with_array(name))?;
        // A deflate stream expands at most ~1032:1, so an entry cannot hold
        // more than that many bytes: a header or zip directory declaring
        // more is rejected before anything is allocated.
        let size = entry.size().min(
            entry
                .compressed_size()
                .min(self.len)
                .saturating_mul(1100)
                .saturating_add(1 << 16),
        );
        // The zip reader checks sizes and CRC at the end of the entry; a
        // short entry shows up as UnexpectedEof.
        let mut entry = entry;
        let header = read_header(&mut entry).map_err(&err)?;
        check_declared(&header, size).map_err(&err)?;
        f(&header, &mut entry).map_err(err)
    }

    /// Reads an index array (`int8..int64`, `uint8..uint64`) into `I`,
    /// checking that every value fits. Negative values are kept (the `-1`
    /// padding sentinel is validated by the format). Any shape is read in
    /// C order.
    ///
    /// # Errors
    /// Missing array, non-integer dtype, truncated entry, or a value that
    /// does not fit `I`.
    pub fn index_array<I: Index>(&mut self, name: &str) -> Result<Vec<I>, NpzError> {
        self.with_entry(name, |h, r| read_indices(h, r))
    }

    /// Reads a value array into `T`: `float32/64`, `complex64/128` (only
    /// into complex `T`), integers and booleans. Any shape is read in C
    /// order. Every value is checked by the rule of [`crate::values`]: NaN
    /// and infinities are refused (lenient mode: accepted with a warning),
    /// and so is a finite value that overflows `T`.
    ///
    /// # Errors
    /// Missing array, unsupported dtype (complex into a real type, strings),
    /// a truncated entry, or a value the rule refuses
    /// ([`NpzErrorKind::BadValue`], naming its position).
    pub fn value_array<T: Scalar>(&mut self, name: &str) -> Result<Vec<T>, NpzError> {
        let mut check = ValueCheck::new(self.lenient);
        let v = self.with_entry(name, |h, r| read_values(h, r, &mut check))?;
        if let Some(pos) = check.first_non_finite() {
            self.warnings.push(Warning {
                line: None,
                message: format!(
                    "array `{}`: NaN or infinite values accepted (first at position {pos})",
                    escape(name)
                ),
            });
        }
        Ok(v)
    }

    /// The dtype descriptor and shape of array `name`, without reading its
    /// data.
    ///
    /// # Errors
    /// Missing array or bad header.
    pub fn array_header(&mut self, name: &str) -> Result<ArrayHeader, NpzError> {
        self.with_entry(name, |h, _| {
            Ok(ArrayHeader {
                descr: h.dtype.descr.clone(),
                shape: h.shape.clone(),
            })
        })
    }

    /// A summary of the matrix in the archive, reading only headers and the
    /// small arrays it needs (`row_nnz` for ELL/HYB; `indices` for SELL,
    /// whose data includes padding).
    ///
    /// # Errors
    /// Missing `format`/`shape`/`data`, or a bad header.
    pub fn info(&mut self) -> Result<NpzInfo, NpzError> {
        let format = self.format_tag()?;
        super::check_tag(&format).map_err(|k| self.err("format", k))?;
        let (nrows, ncols) = self.shape()?;
        // Saturating: the counts are not validated here, and a damaged
        // archive must not overflow (fuzzing: `row_nnz` of `i64::MAX`s).
        let sum = |v: Vec<i64>| {
            v.iter()
                .map(|&x| usize::try_from(x).unwrap_or(0))
                .fold(0usize, usize::saturating_add)
        };
        let (data, index) = match format.as_str() {
            "coo" => (
                "data",
                if self.contains("row") {
                    "row"
                } else {
                    "coords"
                },
            ),
            "hyb" => ("ell_data", "ell_indices"),
            _ => ("data", "indices"),
        };
        let value = self.array_header(data)?;
        let index_h = self.array_header(index)?;
        let nnz = match format.as_str() {
            "ell" => sum(self.index_array("row_nnz")?),
            "hyb" => sum(self.index_array("ell_row_nnz")?)
                .saturating_add(self.array_header("coo_data")?.len()),
            "sell" => {
                let idx: Vec<i64> = self.index_array("indices")?;
                idx.iter().filter(|&&c| c >= 0).count()
            }
            _ => value.len(),
        };
        let complex = value.descr.contains('c');
        Ok(NpzInfo {
            format,
            nrows,
            ncols,
            nnz,
            complex,
            value_dtype: value.dtype_name(),
            index_dtype: index_h.dtype_name(),
        })
    }

    /// Reads an integer scalar: a 0-d array or a 1-element array.
    ///
    /// # Errors
    /// Missing array, non-integer dtype, or more than one element.
    pub fn i64_scalar(&mut self, name: &str) -> Result<i64, NpzError> {
        let v: Vec<i64> = self.index_array(name)?;
        match v.as_slice() {
            [x] => Ok(*x),
            _ => Err(self.err(
                name,
                NpzErrorKind::WrongShape(format!("expected a single value, found {}", v.len())),
            )),
        }
    }

    /// Reads `format`: a bytes (`|S`) or unicode (`<U`) scalar, with
    /// trailing NULs removed, e.g. `"csr"`.
    ///
    /// # Errors
    /// Missing array, or not a string scalar.
    pub fn format_tag(&mut self) -> Result<String, NpzError> {
        self.with_entry("format", |h, r| {
            if h.count() != Some(1) {
                return Err(NpzErrorKind::WrongShape(format!(
                    "expected a scalar, found shape {:?}",
                    h.shape
                )));
            }
            let mut bytes = vec![0u8; h.dtype.size];
            read_exact(r, &mut bytes)?;
            let text = match h.dtype.kind {
                DKind::Bytes => String::from_utf8_lossy(&bytes).into_owned(),
                DKind::Unicode => bytes
                    .chunks_exact(4)
                    .map(|c| char::from_u32(u32::from_le_bytes(le4(c))).unwrap_or('\u{fffd}'))
                    .collect(),
                _ => {
                    return Err(NpzErrorKind::WrongDtype {
                        found: h.dtype.descr.clone(),
                        expected: "a bytes or str scalar".to_string(),
                    })
                }
            };
            Ok(text.trim_end_matches('\0').to_string())
        })
    }

    /// Reads `shape`: two non-negative integers.
    ///
    /// # Errors
    /// Missing array, wrong dtype, not two elements, or a negative value.
    pub fn shape(&mut self) -> Result<(usize, usize), NpzError> {
        let v: Vec<i64> = self.index_array("shape")?;
        let bad = |msg: String| self.err("shape", NpzErrorKind::WrongShape(msg));
        match v.as_slice() {
            [r, c] => {
                let conv =
                    |x: i64| usize::try_from(x).map_err(|_| bad(format!("negative dimension {x}")));
                Ok((conv(*r)?, conv(*c)?))
            }
            _ => Err(bad(format!("expected 2 dimensions, found {}", v.len()))),
        }
    }
}

/// Reads a `.npy` header (preamble and dict) from `r` and rejects
/// multi-dimensional fortran-order arrays.
/// Checks that the data `header` declares fits in a stream of `size` bytes
/// (the header included).
fn check_declared(header: &Header, size: u64) -> Result<(), NpzErrorKind> {
    let declared = header.data_bytes().unwrap_or(u64::MAX);
    let available = size.saturating_sub(header.len as u64);
    if declared > available {
        return Err(NpzErrorKind::Truncated {
            declared,
            available,
        });
    }
    Ok(())
}

fn read_header(r: &mut dyn Read) -> Result<Header, NpzErrorKind> {
    let mut pre = [0u8; 12];
    read_exact(r, &mut pre[..10])?;
    let (dict_len, pre_len) = match parse_preamble(&pre[..10]) {
        Ok(v) => v,
        Err(_) if pre[..6] == *super::npy::MAGIC && pre[6] >= 2 => {
            read_exact(r, &mut pre[10..12])?;
            parse_preamble(&pre)?
        }
        Err(e) => return Err(e),
    };
    if dict_len > MAX_DICT_LEN {
        return Err(NpzErrorKind::BadHeader(format!(
            "header length {dict_len} is too large"
        )));
    }
    let mut dict = vec![0u8; dict_len];
    read_exact(r, &mut dict)?;
    let header = parse_dict(&dict, pre_len + dict_len)?;
    if header.fortran_order && header.shape.len() > 1 {
        return Err(NpzErrorKind::FortranOrder);
    }
    Ok(header)
}

/// Reads a standalone `.npy` file (e.g. a vector `x` for SpMV) into `T`,
/// with the conversions of [`NpzArchive::value_array`]. Any shape is read
/// in C order.
///
/// # Errors
/// I/O errors, a bad header, an unsupported dtype, or a file shorter than
/// its header declares.
pub fn read_npy<T: Scalar>(path: &Path) -> Result<Vec<T>, NpzError> {
    let name = path.display().to_string();
    let err = |kind| NpzError::new(Some(&name), None, kind);
    let file = File::open(path).map_err(|e| err(NpzErrorKind::Io(e)))?;
    let len = file.metadata().map_err(|e| err(NpzErrorKind::Io(e)))?.len();
    let mut r = BufReader::new(file);
    let header = read_header(&mut r).map_err(err)?;
    check_declared(&header, len).map_err(err)?;
    // A vector, not a stored matrix: NaN and infinities are passed on (as
    // lenient mode does), an overflow into `T` is still refused.
    read_values(&header, &mut r, &mut ValueCheck::new(true)).map_err(err)
}

/// What [`NpzArchive::info`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpzInfo {
    /// The `format` tag (`csr`, `coo`, `ell`, ...).
    pub format: String,
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// Stored entries (padding excluded).
    pub nnz: usize,
    /// Whether the values are complex.
    pub complex: bool,
    /// NumPy name of the value dtype, e.g. `float64`.
    pub value_dtype: String,
    /// NumPy name of the index dtype, e.g. `int32`.
    pub index_dtype: String,
}

/// Dtype and shape of one array (see [`NpzArchive::array_header`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayHeader {
    /// NumPy dtype descriptor as stored, e.g. `<f8`.
    pub descr: String,
    /// Shape (empty for a 0-d array).
    pub shape: Vec<usize>,
}

impl ArrayHeader {
    /// Number of elements (1 for a 0-d array; saturates on overflow).
    #[must_use]
    pub fn len(&self) -> usize {
        self.shape.iter().fold(1usize, |a, &d| a.saturating_mul(d))
    }

    /// Whether the array has no elements.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// NumPy's name of the dtype, e.g. `float64`, `int32`, `complex128`
    /// (the descriptor itself if unknown).
    #[must_use]
    pub fn dtype_name(&self) -> String {
        dtype_name(&self.descr)
    }
}

/// NumPy's name of a dtype descriptor, e.g. `float64` for `<f8`, `bool`
/// for `|b1` (the descriptor itself if unknown).
#[must_use]
pub(crate) fn dtype_name(descr: &str) -> String {
    let code = descr.trim_start_matches(['<', '>', '|', '=']);
    let name = match code {
        "f4" => "float32",
        "f8" => "float64",
        "c8" => "complex64",
        "c16" => "complex128",
        "i1" => "int8",
        "i2" => "int16",
        "i4" => "int32",
        "i8" => "int64",
        "u1" => "uint8",
        "u2" => "uint16",
        "u4" => "uint32",
        "u8" => "uint64",
        "b1" | "?" => "bool",
        _ => return descr.to_string(),
    };
    name.to_string()
}

/// Reads an integer array of header `h` from `r` into `I` (see
/// [`NpzArchive::index_array`]).
pub(crate) fn read_indices<I: Index>(h: &Header, r: &mut dyn Read) -> Result<Vec<I>, NpzErrorKind> {
    let n = h.count().unwrap_or(0);
    if h.dtype.descr.ends_with(&I::NPY_DESCR[1..]) && matches!(h.dtype.kind, DKind::Int) {
        return read_verbatim::<I>(r, n);
    }
    let size = h.dtype.size;
    let conv: fn(&[u8]) -> Option<i64> = match (h.dtype.kind, size) {
        (DKind::Int, 1) => |b| Some(i64::from(b[0] as i8)),
        (DKind::Int, 2) => |b| Some(i64::from(i16::from_le_bytes([b[0], b[1]]))),
        (DKind::Int, 4) => |b| Some(i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        (DKind::Int, 8) => |b| Some(i64::from_le_bytes(le8(b))),
        (DKind::UInt, 1) => |b| Some(i64::from(b[0])),
        (DKind::UInt, 2) => |b| Some(i64::from(u16::from_le_bytes([b[0], b[1]]))),
        (DKind::UInt, 4) => |b| Some(i64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        (DKind::UInt, 8) => |b| i64::try_from(u64::from_le_bytes(le8(b))).ok(),
        // Booleans, floats, strings: an index array holds integers only.
        _ => {
            return Err(NpzErrorKind::WrongDtype {
                found: h.dtype.descr.clone(),
                expected: "an integer dtype (int8 to int64, uint8 to uint64)".to_string(),
            })
        }
    };
    let mut out =
        try_with_capacity(n, "the array").map_err(|e| NpzErrorKind::Alloc(Box::new(e)))?;
    read_converted(r, n, size, |pos, b| {
        let v = conv(b).ok_or_else(|| {
            NpzErrorKind::OutOfRange(format!("value at position {pos} exceeds int64"))
        })?;
        let idx = i64_to_index::<I>(v).ok_or_else(|| {
            NpzErrorKind::OutOfRange(format!(
                "value {v} at position {pos} does not fit index type {}",
                I::NAME
            ))
        })?;
        out.push(idx);
        Ok(())
    })?;
    Ok(out)
}

/// Reads a numeric array of header `h` from `r` into `T` (see
/// [`NpzArchive::value_array`]).
pub(crate) fn read_values<T: Scalar>(
    h: &Header,
    r: &mut dyn Read,
    check: &mut ValueCheck,
) -> Result<Vec<T>, NpzErrorKind> {
    let n = h.count().unwrap_or(0);
    if h.dtype.descr.ends_with(&T::NPY_DESCR[1..])
        && matches!(h.dtype.kind, DKind::Float | DKind::Complex)
    {
        let v = read_verbatim::<T>(r, n)?;
        check.check_all(&v).map_err(NpzErrorKind::BadValue)?;
        return Ok(v);
    }
    let size = h.dtype.size;
    let wrong = || NpzErrorKind::WrongDtype {
        found: h.dtype.descr.clone(),
        expected: if T::IS_COMPLEX {
            "a numeric dtype".to_string()
        } else {
            format!("a real numeric dtype (the values are read as {})", T::NAME)
        },
    };
    let conv: fn(&[u8]) -> (f64, f64) = match (h.dtype.kind, size) {
        (DKind::Bool | DKind::UInt, 1) => |b| (f64::from(b[0]), 0.0),
        (DKind::Int, 1) => |b| (f64::from(b[0] as i8), 0.0),
        (DKind::Int, 2) => |b| (f64::from(i16::from_le_bytes([b[0], b[1]])), 0.0),
        (DKind::UInt, 2) => |b| (f64::from(u16::from_le_bytes([b[0], b[1]])), 0.0),
        (DKind::Int, 4) => |b| (f64::from(i32::from_le_bytes(le4(b))), 0.0),
        (DKind::UInt, 4) => |b| (f64::from(u32::from_le_bytes(le4(b))), 0.0),
        (DKind::Int, 8) => |b| (i64::from_le_bytes(le8(b)) as f64, 0.0),
        (DKind::UInt, 8) => |b| (u64::from_le_bytes(le8(b)) as f64, 0.0),
        (DKind::Float, 4) => |b| (f64::from(f32::from_le_bytes(le4(b))), 0.0),
        (DKind::Float, 8) => |b| (f64::from_le_bytes(le8(b)), 0.0),
        (DKind::Complex, 8) if T::IS_COMPLEX => |b| {
            (
                f64::from(f32::from_le_bytes(le4(b))),
                f64::from(f32::from_le_bytes(le4(&b[4..]))),
            )
        },
        (DKind::Complex, 16) if T::IS_COMPLEX => {
            |b| (f64::from_le_bytes(le8(b)), f64::from_le_bytes(le8(&b[8..])))
        }
        _ => return Err(wrong()),
    };
    let mut out =
        try_with_capacity(n, "the array").map_err(|e| NpzErrorKind::Alloc(Box::new(e)))?;
    read_converted(r, n, size, |pos, b| {
        let (re, im) = conv(b);
        let v = T::from_parts(re, im);
        check
            .check_one(pos, re, im, v)
            .map_err(NpzErrorKind::BadValue)?;
        out.push(v);
        Ok(())
    })?;
    Ok(out)
}

fn le4(b: &[u8]) -> [u8; 4] {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    a
}

fn le8(b: &[u8]) -> [u8; 8] {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    a
}

fn i64_to_index<I: Index>(v: i64) -> Option<I> {
    if v >= 0 {
        return I::from_usize(usize::try_from(v).ok()?);
    }
    // Negative values (the -1 padding sentinel, or garbage the format's
    // validation rejects later) are kept if `I` can represent them.
    match bytemuck::try_cast::<i64, I>(v) {
        Ok(i) => Some(i),
        Err(_) => bytemuck::try_cast::<i32, I>(i32::try_from(v).ok()?).ok(),
    }
}

fn read_exact(r: &mut dyn Read, buf: &mut [u8]) -> Result<(), NpzErrorKind> {
    r.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            NpzErrorKind::BadHeader("the entry ends before its data does (truncated)".to_string())
        }
        _ => NpzErrorKind::Io(e),
    })
}

/// Reads `n` elements stored exactly as `T` (little-endian host).
fn read_verbatim<T: bytemuck::Pod>(r: &mut dyn Read, n: usize) -> Result<Vec<T>, NpzErrorKind> {
    let mut out: Vec<T> =
        try_zeroed(n, "the array").map_err(|e| NpzErrorKind::Alloc(Box::new(e)))?;
    read_exact(r, bytemuck::cast_slice_mut(&mut out))?;
    #[cfg(target_endian = "big")]
    {
        let _ = &mut out;
        return Err(NpzErrorKind::InvalidArgument(
            "big-endian hosts are not supported".to_string(),
        ));
    }
    #[allow(unreachable_code)]
    Ok(out)
}

/// Reads `n` elements of `size` bytes, in chunks, handing each to `f`.
fn read_converted(
    r: &mut dyn Read,
    n: usize,
    size: usize,
    mut f: impl FnMut(usize, &[u8]) -> Result<(), NpzErrorKind>,
) -> Result<(), NpzErrorKind> {
    let per_chunk = (CHUNK / size.max(1)).max(1);
    let mut buf = vec![0u8; per_chunk * size];
    let mut done = 0;
    while done < n {
        let m = per_chunk.min(n - done);
        let bytes = &mut buf[..m * size];
        read_exact(r, bytes)?;
        for (k, b) in bytes.chunks_exact(size).enumerate() {
            f(done + k, b)?;
        }
        done += m;
    }
    Ok(())
}
