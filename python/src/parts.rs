//! A matrix as Python sees it: its format name, shape, named 1-D NumPy
//! arrays (the `.spb` section names) and integer parameters.
//!
//! Rust to Python moves every `Vec` into a NumPy array without copying
//! ([`IntoPyArray`]: the array owns the Rust allocation). Python to Rust
//! copies each array once into the `Vec` the format owns, and every format
//! invariant is checked by its `try_from_parts`.

use numpy::{Element, IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use sparsetool_formats::{
    AnyMatrix, Coo, Csc, Csr, Ell, FormatKind, Hyb, Index, Jds, Scalar, Sell,
};

use crate::errors::Failure;

/// Value types NumPy can hold.
pub trait Value: Scalar + Element {}
impl<T: Scalar + Element> Value for T {}

/// Index types NumPy can hold.
pub trait Idx: Index + Element {}
impl<I: Index + Element> Idx for I {}

/// Moves `m`'s arrays into a dict `{"format", "shape", "arrays", "params"}`
/// of NumPy arrays that own the Rust buffers (no copy).
///
/// # Errors
/// Only Python's (allocation of the dict).
pub fn to_py<'py, T: Value, I: Idx>(
    py: Python<'py>,
    m: AnyMatrix<T, I>,
) -> PyResult<Bound<'py, PyDict>> {
    let kind = m.kind();
    let (nrows, ncols, _) = m.shape();
    let arrays = PyDict::new(py);
    let params = PyDict::new(py);
    let idx = |name: &str, v: Vec<I>| arrays.set_item(name, v.into_pyarray(py));
    // The usual trio: two index arrays, then the values.
    let trio = |names: [&str; 2], a: Vec<I>, b: Vec<I>, v: Vec<T>| {
        idx(names[0], a)?;
        idx(names[1], b)?;
        arrays.set_item(
            if names[0].starts_with("coo_") {
                "coo_values"
            } else {
                "values"
            },
            v.into_pyarray(py),
        )
    };
    match m {
        AnyMatrix::Coo(a) => {
            let (_, _, rows, cols, values) = a.into_parts();
            trio(["rows", "cols"], rows, cols, values)?;
        }
        AnyMatrix::Csr(a) => {
            let (_, _, row_ptr, col_idx, values) = a.into_parts();
            trio(["row_ptr", "col_idx"], row_ptr, col_idx, values)?;
        }
        AnyMatrix::Csc(a) => {
            let (_, _, col_ptr, row_idx, values) = a.into_parts();
            trio(["col_ptr", "row_idx"], col_ptr, row_idx, values)?;
        }
        AnyMatrix::Ell(a) => {
            let (_, _, width, row_nnz, col_idx, values) = a.into_parts();
            params.set_item("width", width)?;
            trio(["row_nnz", "col_idx"], row_nnz, col_idx, values)?;
        }
        AnyMatrix::Hyb(a) => {
            let (ell, coo) = a.into_parts();
            let (_, _, width, row_nnz, col_idx, values) = ell.into_parts();
            params.set_item("width", width)?;
            idx("ell_row_nnz", row_nnz)?;
            idx("ell_col_idx", col_idx)?;
            arrays.set_item("ell_values", values.into_pyarray(py))?;
            let (_, _, rows, cols, values) = coo.into_parts();
            trio(["coo_rows", "coo_cols"], rows, cols, values)?;
        }
        AnyMatrix::Jds(a) => {
            let (_, _, perm, jd_ptr, col_idx, values) = a.into_parts();
            idx("perm", perm)?;
            trio(["jd_ptr", "col_idx"], jd_ptr, col_idx, values)?;
        }
        AnyMatrix::Sell(a) => {
            let (_, _, slice, sigma, perm, slice_ptr, slice_width, col_idx, values) =
                a.into_parts();
            params.set_item("slice", slice)?;
            params.set_item("sigma", sigma)?;
            idx("perm", perm)?;
            idx("slice_ptr", slice_ptr)?;
            trio(["slice_width", "col_idx"], slice_width, col_idx, values)?;
        }
    }
    let out = PyDict::new(py);
    out.set_item("format", kind.name())?;
    out.set_item("shape", (nrows, ncols))?;
    out.set_item("arrays", arrays)?;
    out.set_item("params", params)?;
    Ok(out)
}

/// A matrix handed over from Python: `(format, nrows, ncols, arrays,
/// params)` as [`to_py`] makes them.
#[derive(Debug)]
pub struct Parts<'py> {
    /// The format.
    pub kind: FormatKind,
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// The arrays by name.
    pub arrays: Bound<'py, PyDict>,
    /// The integer parameters by name.
    pub params: Bound<'py, PyDict>,
}

impl<'py> Parts<'py> {
    /// Gathers the parts, checking the format name.
    ///
    /// # Errors
    /// `InputError` for an unknown format.
    pub fn new(
        py: Python<'py>,
        format: &str,
        shape: (usize, usize),
        arrays: Bound<'py, PyDict>,
        params: Bound<'py, PyDict>,
    ) -> PyResult<Self> {
        let kind = format
            .parse::<FormatKind>()
            .map_err(|e| Failure::input(e).into_py(py))?;
        Ok(Self {
            kind,
            nrows: shape.0,
            ncols: shape.1,
            arrays,
            params,
        })
    }

    fn array<E: Element + Copy>(&self, name: &str) -> PyResult<Vec<E>> {
        let py = self.arrays.py();
        let Some(obj) = self.arrays.get_item(name)? else {
            return Err(Failure::input(format!(
                "{} matrix without its `{name}` array",
                self.kind.name().to_uppercase()
            ))
            .into_py(py));
        };
        let a: PyReadonlyArray1<'_, E> = obj.extract().map_err(|_| {
            Failure::input(format!(
                "array `{name}` must be a 1-D contiguous array of {}",
                std::any::type_name::<E>()
            ))
            .into_py(py)
        })?;
        Ok(a.as_slice()
            .map_err(|_| Failure::input(format!("array `{name}` is not contiguous")).into_py(py))?
            .to_vec())
    }

    fn param(&self, name: &str) -> PyResult<usize> {
        let py = self.params.py();
        match self.params.get_item(name)? {
            Some(v) => v.extract(),
            None => Err(Failure::input(format!(
                "{} matrix without its `{name}` parameter",
                self.kind.name().to_uppercase()
            ))
            .into_py(py)),
        }
    }

    /// Copies the arrays into a matrix of value type `T` and index type `I`,
    /// every invariant checked.
    ///
    /// # Errors
    /// `InputError` for a missing or mistyped array or a broken invariant.
    pub fn matrix<T: Value, I: Idx>(&self) -> PyResult<AnyMatrix<T, I>> {
        let py = self.arrays.py();
        let (n, m) = (self.nrows, self.ncols);
        // Two index arrays and the values (`prefix` names HYB's parts).
        let trio = |prefix: &str, a: &str, b: &str| -> PyResult<(Vec<I>, Vec<I>, Vec<T>)> {
            Ok((
                self.array(&format!("{prefix}{a}"))?,
                self.array(&format!("{prefix}{b}"))?,
                self.array(&format!("{prefix}values"))?,
            ))
        };
        let built = match self.kind {
            FormatKind::Coo => {
                let (r, c, v) = trio("", "rows", "cols")?;
                Coo::try_from_parts(n, m, r, c, v).map(AnyMatrix::Coo)
            }
            FormatKind::Csr => {
                let (p, c, v) = trio("", "row_ptr", "col_idx")?;
                Csr::try_from_parts(n, m, p, c, v).map(AnyMatrix::Csr)
            }
            FormatKind::Csc => {
                let (p, r, v) = trio("", "col_ptr", "row_idx")?;
                Csc::try_from_parts(n, m, p, r, v).map(AnyMatrix::Csc)
            }
            FormatKind::Ell => {
                let (l, c, v) = trio("", "row_nnz", "col_idx")?;
                Ell::try_from_parts(n, m, self.param("width")?, l, c, v).map(AnyMatrix::Ell)
            }
            FormatKind::Hyb => {
                let (r, c, v) = trio("coo_", "rows", "cols")?;
                let coo = Coo::try_from_parts(n, m, r, c, v);
                let (l, c, v) = trio("ell_", "row_nnz", "col_idx")?;
                Ell::try_from_parts(n, m, self.param("width")?, l, c, v)
                    .and_then(|ell| Hyb::try_from_parts(ell, coo?))
                    .map(AnyMatrix::Hyb)
            }
            FormatKind::Jds => {
                let (d, c, v) = trio("", "jd_ptr", "col_idx")?;
                Jds::try_from_parts(n, m, self.array("perm")?, d, c, v).map(AnyMatrix::Jds)
            }
            FormatKind::Sell => {
                let (w, c, v) = trio("", "slice_width", "col_idx")?;
                let (slice, sigma) = (self.param("slice")?, self.param("sigma")?);
                let (perm, ptr) = (self.array("perm")?, self.array("slice_ptr")?);
                Sell::try_from_parts(n, m, slice, sigma, perm, ptr, w, c, v).map(AnyMatrix::Sell)
            }
        };
        built.map_err(|e| Failure::from(e).into_py(py))
    }
}
