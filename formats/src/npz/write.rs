//! Writing `.npz` archives (stored, uncompressed entries, as `numpy.savez`).

use std::borrow::Cow;
use std::io::{Seek, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

use super::error::{NpzError, NpzErrorKind};
use super::npy::{header_bytes, NpyElement};
use crate::{Coo, Csc, Csr, Index, Scalar};

/// Writes named arrays into an `.npz` archive (one stored `NAME.npy` entry
/// per array, like `numpy.savez`). Entries are written in the order added;
/// the timestamps are fixed, so the same arrays give the same bytes.
pub struct NpzWriter<W: Write + Seek> {
    zip: ZipWriter<W>,
    names: Vec<String>,
}

impl<W: Write + Seek> std::fmt::Debug for NpzWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NpzWriter")
            .field("names", &self.names)
            .finish_non_exhaustive()
    }
}

/// The little-endian bytes of `data`, as `.npy` stores them: borrowed on a
/// little-endian target, byte-swapped per element (per part, for complex
/// values) on a big-endian one.
fn le_bytes<T: NpyElement>(data: &[T]) -> Cow<'_, [u8]> {
    #[cfg(target_endian = "little")]
    {
        Cow::Borrowed(bytemuck::cast_slice(data))
    }
    #[cfg(target_endian = "big")]
    {
        let size = std::mem::size_of::<T>();
        let elem = if T::DESCR.contains('c') {
            size / 2
        } else {
            size
        };
        let mut bytes = bytemuck::cast_slice::<T, u8>(data).to_vec();
        bytes.chunks_mut(elem).for_each(<[u8]>::reverse);
        Cow::Owned(bytes)
    }
}

fn arg_err(name: &str, msg: String) -> NpzError {
    NpzError::new(None, Some(name), NpzErrorKind::InvalidArgument(msg))
}

impl<W: Write + Seek> NpzWriter<W> {
    /// Starts an archive on `w`.
    pub fn new(w: W) -> Self {
        Self {
            zip: ZipWriter::new(w),
            names: Vec::new(),
        }
    }

    fn start(&mut self, name: &str, total_bytes: u64) -> Result<(), NpzError> {
        if name.is_empty() || name.contains(['/', '\\', '\0']) {
            return Err(arg_err(name, format!("`{name}` is not a valid array name")));
        }
        if self.names.iter().any(|n| n == name) {
            return Err(arg_err(name, format!("array `{name}` was already added")));
        }
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .last_modified_time(DateTime::DEFAULT)
            .unix_permissions(0o644)
            .large_file(total_bytes >= u64::from(u32::MAX));
        self.zip
            .start_file(format!("{name}.npy"), options)
            .map_err(|e| NpzError::from(e).with_array(name))?;
        self.names.push(name.to_string());
        Ok(())
    }

    fn write_raw(
        &mut self,
        name: &str,
        descr: &str,
        shape: &[usize],
        data: &[u8],
    ) -> Result<(), NpzError> {
        let header =
            header_bytes(descr, false, shape).map_err(|k| NpzError::new(None, Some(name), k))?;
        self.start(name, header.len() as u64 + data.len() as u64)?;
        let io = |e: std::io::Error| NpzError::from(e).with_array(name);
        self.zip.write_all(&header).map_err(io)?;
        self.zip.write_all(data).map_err(io)?;
        Ok(())
    }

    /// Adds array `name` (without `.npy`) of the given shape (C order).
    /// The data is streamed into the archive without a copy.
    ///
    /// # Errors
    /// An invalid or repeated name, a shape whose product differs from
    /// `data.len()`, or an I/O error.
    pub fn add_array<T: NpyElement>(
        &mut self,
        name: &str,
        shape: &[usize],
        data: &[T],
    ) -> Result<(), NpzError> {
        let count = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        if count != Some(data.len()) {
            return Err(arg_err(
                name,
                format!(
                    "shape {shape:?} does not match the {} elements given",
                    data.len()
                ),
            ));
        }
        self.write_raw(name, T::DESCR, shape, &le_bytes(data))
    }

    /// Adds a 0-d `int64` array.
    ///
    /// # Errors
    /// As [`NpzWriter::add_array`].
    pub fn add_i64_scalar(&mut self, name: &str, v: i64) -> Result<(), NpzError> {
        self.write_raw(name, "<i8", &[], &v.to_le_bytes())
    }

    /// Adds `format`: a 0-d NumPy bytes scalar of dtype `|S{len}`, as
    /// `scipy.sparse.save_npz` writes it (e.g. `b'csr'`).
    ///
    /// # Errors
    /// A tag that is empty or not ASCII, or an I/O error.
    pub fn add_format_tag(&mut self, tag: &str) -> Result<(), NpzError> {
        if tag.is_empty() || !tag.is_ascii() || tag.contains('\0') {
            return Err(arg_err(
                "format",
                format!("format tag `{tag}` must be non-empty ascii"),
            ));
        }
        self.write_raw("format", &format!("|S{}", tag.len()), &[], tag.as_bytes())
    }

    /// Adds `shape`: `int64[2]` holding `[nrows, ncols]`.
    ///
    /// # Errors
    /// A dimension over `i64::MAX`, or an I/O error.
    pub fn add_shape(&mut self, nrows: usize, ncols: usize) -> Result<(), NpzError> {
        let conv = |v: usize| {
            i64::try_from(v)
                .map_err(|_| arg_err("shape", format!("dimension {v} does not fit int64")))
        };
        let shape = [conv(nrows)?, conv(ncols)?];
        self.add_array("shape", &[2], &shape)
    }

    /// Writes the central directory and returns the underlying writer.
    ///
    /// # Errors
    /// An I/O error.
    pub fn finish(self) -> Result<W, NpzError> {
        self.zip.finish().map_err(NpzError::from)
    }
}

/// Writes a standalone 1-d `.npy` file (v1.0, like `numpy.save`), e.g. the
/// result vector of SpMV.
///
/// # Errors
/// An I/O error.
pub fn write_npy<W: Write, T: NpyElement>(mut w: W, data: &[T]) -> Result<(), NpzError> {
    let header =
        header_bytes(T::DESCR, false, &[data.len()]).map_err(|k| NpzError::new(None, None, k))?;
    w.write_all(&header)?;
    w.write_all(&le_bytes(data))?;
    w.flush()?;
    Ok(())
}

/// Writes the layout of `scipy.sparse.save_npz` for CSR, CSC and COO: the two
/// 1-d index arrays, `format` (`tag`), `shape`, then `data`.
fn write_scipy<W, T, I>(
    w: W,
    tag: &str,
    (nrows, ncols): (usize, usize),
    index: [(&str, &[I]); 2],
    data: &[T],
) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: NpyElement,
    I: NpyElement,
{
    let mut z = NpzWriter::new(w);
    for (name, a) in index {
        z.add_array(name, &[a.len()], a)?;
    }
    z.add_format_tag(tag)?;
    z.add_shape(nrows, ncols)?;
    z.add_array("data", &[data.len()], data)?;
    z.finish()?;
    Ok(())
}

/// Writes a CSR matrix with exactly the layout of `scipy.sparse.save_npz`:
/// entries `indices`, `indptr`, `format` (`b'csr'`), `shape`, `data`.
///
/// # Errors
/// An I/O error.
pub fn write_csr<W, T, I>(w: W, m: &Csr<T, I>) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: Scalar + NpyElement,
    I: Index + NpyElement,
{
    let index = [("indices", m.col_idx()), ("indptr", m.row_ptr())];
    write_scipy(w, "csr", (m.nrows(), m.ncols()), index, m.values())
}

/// Writes a CSC matrix with exactly the layout of `scipy.sparse.save_npz`
/// for a `csc_matrix`: entries `indices` (row indices), `indptr` (column
/// offsets), `format` (`b'csc'`), `shape`, `data`.
///
/// ```
/// use std::io::Cursor;
/// use sparsetool_formats::npz::{read_npz_bytes, write_csc};
/// use sparsetool_formats::{AnyMatrix, Csc};
/// let a = Csc::<f64, i32>::try_from_parts(3, 2, vec![0, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0])?;
/// let mut buf = Cursor::new(Vec::new());
/// write_csc(&mut buf, &a)?;
/// assert_eq!(read_npz_bytes::<f64, i32>(buf.into_inner(), "a.npz")?, AnyMatrix::Csc(a));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// An I/O error.
pub fn write_csc<W, T, I>(w: W, m: &Csc<T, I>) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: Scalar + NpyElement,
    I: Index + NpyElement,
{
    let index = [("indices", m.row_idx()), ("indptr", m.col_ptr())];
    write_scipy(w, "csc", (m.nrows(), m.ncols()), index, m.values())
}

/// Writes a COO matrix with exactly the layout of `scipy.sparse.save_npz`
/// for 2-d COO: entries `row`, `col`, `format` (`b'coo'`), `shape`, `data`.
///
/// # Errors
/// An I/O error.
pub fn write_coo<W, T, I>(w: W, m: &Coo<T, I>) -> Result<(), NpzError>
where
    W: Write + Seek,
    T: Scalar + NpyElement,
    I: Index + NpyElement,
{
    let index = [("row", m.rows()), ("col", m.cols())];
    write_scipy(w, "coo", (m.nrows(), m.ncols()), index, m.values())
}
