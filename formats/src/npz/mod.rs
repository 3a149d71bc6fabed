//! `.npz` I/O: NumPy zip archives of `.npy` arrays, in the layout of
//! `scipy.sparse.save_npz` / `load_npz`.
//!
//! - [`NpzWriter`] writes named arrays (stored entries, `.npy` v1.0 headers
//!   padded to 64 bytes like NumPy); [`write_csr`], [`write_csc`] and [`write_coo`] write
//!   exactly what `scipy.sparse.save_npz` writes, so `load_npz` reads them.
//! - [`NpzArchive`] reads stored or deflate-compressed archives
//!   (`save_npz(compressed=True)`, the default) and converts arrays to the
//!   requested index/value types with range checks; [`read_npz`] turns a
//!   `csr`, `csc` or `coo` archive into a validated matrix.
//!
//! ```
//! use std::io::Cursor;
//! use sparsetool_formats::npz::{read_npz_bytes, write_csr};
//! use sparsetool_formats::AnyMatrix;
//! use sparsetool_formats::Csr;
//! let a = Csr::<f64, i32>::try_from_parts(2, 2, vec![0, 1, 2], vec![1, 0], vec![3.0, 4.0]).unwrap();
//! let mut buf = Cursor::new(Vec::new());
//! write_csr(&mut buf, &a).unwrap();
//! let AnyMatrix::Csr(b) = read_npz_bytes::<f64, i32>(buf.into_inner(), "a.npz").unwrap() else { panic!() };
//! assert_eq!(a, b);
//! ```

mod error;
mod gpu_formats;
mod npy;
mod read;
mod write;

use std::path::Path;

pub use error::{NpzError, NpzErrorKind};
use gpu_formats::array_at_fault;
pub use gpu_formats::{
    read_ell, read_hyb, read_jds, read_sell, write_ell, write_hyb, write_jds, write_sell,
};
pub use npy::NpyElement;
pub use read::{read_npy, ArrayHeader, NpzArchive, NpzInfo};
pub use write::{write_coo, write_csc, write_csr, write_npy, NpzWriter};

use crate::mm::Warning;
use crate::pattern::check_offsets;
use crate::{AnyMatrix, Coo, Csc, Csr, FormatError, FormatKind, Index, MatrixRef, Scalar};

/// Reads a sparse matrix written by `scipy.sparse.save_npz` (format `csr`,
/// `csc` or `coo`) or by sparsetool.
///
/// A `csr` archive whose rows are sorted and duplicate-free becomes
/// [`AnyMatrix::Csr`], a `csc` archive whose columns are becomes
/// [`AnyMatrix::Csc`]; otherwise (SciPy allows unsorted and duplicate
/// indices) it becomes [`AnyMatrix::Coo`] holding the same entries. Every
/// length, pointer and index is validated.
///
/// # Errors
/// [`NpzError`] naming the file and the array: not a zip, missing array,
/// wrong dtype, bad header, truncated entry, unsupported format tag, or a
/// broken matrix invariant ([`NpzErrorKind::Format`]).
pub fn read_npz<T: Scalar, I: Index>(path: &Path) -> Result<AnyMatrix<T, I>, NpzError> {
    let mut a = NpzArchive::open(path)?;
    read_matrix(&mut a)
}

/// [`read_npz`], in lenient mode if `lenient` (NaN and infinite values
/// accepted, one warning per value array holding them; see
/// [`NpzArchive::set_lenient`]). Returns the matrix and the warnings.
///
/// # Errors
/// As [`read_npz`].
pub fn read_npz_with<T: Scalar, I: Index>(
    path: &Path,
    lenient: bool,
) -> Result<(AnyMatrix<T, I>, Vec<Warning>), NpzError> {
    read_npz_named_with(path, &path.display().to_string(), lenient)
}

/// [`read_npz_with`], naming the file `name` in messages (e.g. a temporary
/// copy of standard input).
///
/// # Errors
/// As [`read_npz`].
pub fn read_npz_named_with<T: Scalar, I: Index>(
    path: &Path,
    name: &str,
    lenient: bool,
) -> Result<(AnyMatrix<T, I>, Vec<Warning>), NpzError> {
    let mut a = NpzArchive::open_named(path, name)?;
    a.set_lenient(lenient);
    let m = read_matrix(&mut a)?;
    Ok((m, a.take_warnings()))
}

/// The `format` tags this reader handles: every [`FormatKind`] and SciPy's
/// `csc` (read only), in that order.
#[must_use]
pub fn supported_tags() -> Vec<&'static str> {
    let mut tags: Vec<&'static str> = FormatKind::ALL.iter().map(|k| k.name()).collect();
    for extra in READ_ONLY_TAGS {
        if !tags.contains(extra) {
            tags.push(extra);
        }
    }
    tags
}

/// Tags read but never written (SciPy layouts without a [`FormatKind`]).
const READ_ONLY_TAGS: &[&str] = &["csc"];

/// Refuses a `format` tag this reader does not handle (e.g. SciPy's `dia`
/// and `bsr`), before any other array is looked for.
pub(crate) fn check_tag(tag: &str) -> Result<(), NpzErrorKind> {
    if supported_tags().contains(&tag) {
        Ok(())
    } else {
        Err(NpzErrorKind::UnsupportedFormat(tag.to_string()))
    }
}

/// [`read_npz`] on an archive held in memory; `name` is used in errors.
///
/// # Errors
/// As [`read_npz`].
pub fn read_npz_bytes<T: Scalar, I: Index>(
    bytes: Vec<u8>,
    name: &str,
) -> Result<AnyMatrix<T, I>, NpzError> {
    let mut a = NpzArchive::from_bytes(bytes, name)?;
    read_matrix(&mut a)
}

/// Reads the matrix held by an open archive (see [`read_npz`]).
///
/// # Errors
/// As [`read_npz`].
pub fn read_matrix<T: Scalar, I: Index>(a: &mut NpzArchive) -> Result<AnyMatrix<T, I>, NpzError> {
    let tag = a.format_tag()?;
    let file = a.file_name().to_string();
    check_tag(&tag).map_err(|k| NpzError::new(Some(&file), Some("format"), k))?;
    let (nrows, ncols) = a.shape()?;
    let ferr = |array: &str, e: FormatError| NpzError::from(e).with_file(&file).with_array(array);
    match tag.as_str() {
        "ell" => return Ok(AnyMatrix::Ell(read_ell(a)?)),
        "hyb" => return Ok(AnyMatrix::Hyb(read_hyb(a)?)),
        "jds" => return Ok(AnyMatrix::Jds(read_jds(a)?)),
        "sell" => return Ok(AnyMatrix::Sell(read_sell(a)?)),
        _ => {}
    }
    match tag.as_str() {
        "csr" | "csc" => {
            let data: Vec<T> = a.value_array("data")?;
            let indices: Vec<I> = a.index_array("indices")?;
            let indptr: Vec<I> = a.index_array("indptr")?;
            let nnz = data.len();
            if indices.len() != nnz {
                return Err(ferr(
                    "indices",
                    FormatError::Length {
                        array: "indices",
                        expected: nnz,
                        actual: indices.len(),
                    },
                ));
            }
            let outer = if tag == "csr" { nrows } else { ncols };
            crate::coo::check_dims::<I>(nrows, ncols, nnz).map_err(|e| ferr("shape", e))?;
            check_offsets("indptr", &indptr, outer + 1, nnz).map_err(|e| ferr("indptr", e))?;
            // The arrays holding row and column indices, for messages.
            let (row_arr, col_arr) = if tag == "csr" {
                ("indptr", "indices")
            } else {
                ("indices", "indptr")
            };
            let at_fault = |e: FormatError| {
                let array = array_at_fault(&e, row_arr, col_arr, "");
                ferr(&array, e)
            };
            if rows_canonical(&indptr, &indices) {
                return if tag == "csr" {
                    Csr::try_from_parts(nrows, ncols, indptr, indices, data)
                        .map(AnyMatrix::Csr)
                        .map_err(at_fault)
                } else {
                    Csc::try_from_parts(nrows, ncols, indptr, indices, data)
                        .map(AnyMatrix::Csc)
                        .map_err(at_fault)
                };
            }
            let outer_idx = expand_ptr(&indptr, nnz);
            let (rows, cols) = if tag == "csr" {
                (outer_idx, indices)
            } else {
                (indices, outer_idx)
            };
            let m = Coo::try_from_parts(nrows, ncols, rows, cols, data).map_err(at_fault)?;
            Ok(AnyMatrix::Coo(m))
        }
        "coo" => {
            let data: Vec<T> = a.value_array("data")?;
            let coords = !a.contains("row") && a.contains("coords");
            let (rows, cols): (Vec<I>, Vec<I>) = if coords {
                let mut coords: Vec<I> = a.index_array("coords")?;
                if coords.len() != 2 * data.len() {
                    return Err(ferr(
                        "coords",
                        FormatError::Length {
                            array: "coords",
                            expected: 2 * data.len(),
                            actual: coords.len(),
                        },
                    ));
                }
                let cols = coords.split_off(data.len());
                (coords, cols)
            } else {
                (a.index_array("row")?, a.index_array("col")?)
            };
            let nnz = data.len();
            for (name, arr) in [("row", &rows), ("col", &cols)] {
                if arr.len() != nnz {
                    return Err(ferr(
                        name,
                        FormatError::Length {
                            array: name,
                            expected: nnz,
                            actual: arr.len(),
                        },
                    ));
                }
            }
            let (row_arr, col_arr) = if coords {
                ("coords", "coords")
            } else {
                ("row", "col")
            };
            let m = Coo::try_from_parts(nrows, ncols, rows, cols, data).map_err(|e| {
                let array = array_at_fault(&e, row_arr, col_arr, "");
                ferr(&array, e)
            })?;
            Ok(AnyMatrix::Coo(m))
        }
        other => Err(NpzError::new(
            Some(&file),
            Some("format"),
            NpzErrorKind::UnsupportedFormat(other.to_string()),
        )),
    }
}

/// Writes any matrix as an `.npz` archive: `csr`, `csc` and `coo` exactly as
/// `scipy.sparse.save_npz` writes them, the GPU formats with the arrays
/// listed in the module documentation.
///
/// # Errors
/// I/O errors, and values or sizes the archive cannot hold.
pub fn write_matrix<W, T, I>(w: W, m: MatrixRef<'_, T, I>) -> Result<(), NpzError>
where
    W: std::io::Write + std::io::Seek,
    T: Scalar + NpyElement,
    I: Index + NpyElement,
{
    match m {
        MatrixRef::Coo(x) => write_coo(w, x),
        MatrixRef::Csr(x) => write_csr(w, x),
        MatrixRef::Csc(x) => write_csc(w, x),
        MatrixRef::Ell(x) => write_ell(w, x),
        MatrixRef::Hyb(x) => write_hyb(w, x),
        MatrixRef::Jds(x) => write_jds(w, x),
        MatrixRef::Sell(x) => write_sell(w, x),
    }
}

/// Whether every row (pointer range; columns of a `csc` archive) holds
/// strictly ascending indices.
/// `ptr` must be valid.
fn rows_canonical<I: Index>(ptr: &[I], idx: &[I]) -> bool {
    use rayon::prelude::*;
    let row_ok = |w: &[I]| {
        let s = &idx[w[0].to_usize()..w[1].to_usize()];
        s.windows(2).all(|p| p[0] < p[1])
    };
    if idx.len() > crate::pattern::PAR_THRESHOLD {
        ptr.par_windows(2).with_min_len(1024).all(row_ok)
    } else {
        ptr.windows(2).all(row_ok)
    }
}

/// Expands a valid pointer array into one outer index per entry.
fn expand_ptr<I: Index>(ptr: &[I], nnz: usize) -> Vec<I> {
    let mut out = Vec::with_capacity(nnz);
    for (i, w) in ptr.windows(2).enumerate() {
        let len = w[1].to_usize() - w[0].to_usize();
        out.extend(std::iter::repeat_n(I::from_usize_unchecked(i), len));
    }
    out
}

#[cfg(test)]
mod tests;
