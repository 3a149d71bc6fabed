//! Conversion between any two formats, through CSR.

use std::borrow::Cow;

use sparsetool_formats::{AnyMatrix, Coo, Csr, FormatKind, Index, Layout, MatrixRef, Scalar};

use crate::{par, ConvertError, ConvertParams};

/// CSR views of an [`AnyMatrix`], converting through this crate's kernels
/// when the matrix is in another format.
pub trait ToCsr<T: Scalar, I: Index> {
    /// The matrix in CSR, borrowed when it already is (COO duplicates summed).
    fn as_csr(&self) -> Cow<'_, Csr<T, I>>;
    /// The matrix in CSR (a copy for CSR).
    fn to_csr(&self) -> Csr<T, I>;
    /// The matrix in CSR, consuming it (no copy for CSR).
    fn into_csr(self) -> Csr<T, I>;
    /// Like [`ToCsr::as_csr`], after checking that the memory the
    /// conversion needs can be had (see [`preflight`]).
    ///
    /// # Errors
    /// [`ConvertError::Alloc`].
    fn try_as_csr(&self) -> Result<Cow<'_, Csr<T, I>>, ConvertError>;
    /// Like [`ToCsr::into_csr`], after the check of [`ToCsr::try_as_csr`].
    ///
    /// # Errors
    /// [`ConvertError::Alloc`].
    fn try_into_csr(self) -> Result<Csr<T, I>, ConvertError>;
}

impl<T: Scalar, I: Index> ToCsr<T, I> for AnyMatrix<T, I> {
    fn as_csr(&self) -> Cow<'_, Csr<T, I>> {
        match self {
            AnyMatrix::Coo(m) => Cow::Owned(par::coo_to_csr(m)),
            AnyMatrix::Csr(m) => Cow::Borrowed(m),
            AnyMatrix::Csc(m) => Cow::Owned(par::csc_to_csr(m)),
            AnyMatrix::Ell(m) => Cow::Owned(par::ell_to_csr(m)),
            AnyMatrix::Hyb(m) => Cow::Owned(par::hyb_to_csr(m)),
            AnyMatrix::Jds(m) => Cow::Owned(par::jds_to_csr(m)),
            AnyMatrix::Sell(m) => Cow::Owned(par::sell_to_csr(m)),
        }
    }
    fn to_csr(&self) -> Csr<T, I> {
        self.as_csr().into_owned()
    }
    fn into_csr(self) -> Csr<T, I> {
        match self {
            AnyMatrix::Csr(c) => c,
            other => other.to_csr(),
        }
    }
    fn try_as_csr(&self) -> Result<Cow<'_, Csr<T, I>>, ConvertError> {
        if !matches!(self, AnyMatrix::Csr(_)) {
            let (isz, vsz) = sizes::<T, I>();
            let bytes = csr_bytes(self.nrows(), self.nnz(), isz, vsz)
                // The COO sort's scratch: a second copy of the entries.
                + self.nnz() as u128 * (isz + vsz + 2);
            preflight(bytes, "the conversion to CSR")?;
        }
        Ok(self.as_csr())
    }
    fn try_into_csr(self) -> Result<Csr<T, I>, ConvertError> {
        match self {
            AnyMatrix::Csr(c) => Ok(c),
            other => Ok(other.try_as_csr()?.into_owned()),
        }
    }
}

/// Index and value sizes in bytes.
fn sizes<T, I>() -> (u128, u128) {
    (
        std::mem::size_of::<I>() as u128,
        std::mem::size_of::<T>() as u128,
    )
}

/// Bytes of a CSR matrix.
fn csr_bytes(nrows: usize, nnz: usize, isz: u128, vsz: u128) -> u128 {
    (nrows as u128 + 1) * isz + nnz as u128 * (isz + vsz)
}

/// Checks that about `bytes` bytes can be allocated for `what` before a
/// conversion starts (the sizes come from the input: a matrix declaring
/// billions of rows needs billions of row pointers), so that a conversion
/// that cannot fit fails with an error instead of an abort or the
/// out-of-memory killer. See [`sparsetool_formats::alloc::ensure_available`].
///
/// # Errors
/// [`ConvertError::Alloc`].
pub fn preflight(bytes: u128, what: &str) -> Result<(), ConvertError> {
    Ok(sparsetool_formats::alloc::ensure_available(bytes, what)?)
}

/// An upper estimate of the bytes [`from_csr`] allocates for `target`.
fn footprint<T: Scalar, I: Index>(
    a: &Csr<T, I>,
    target: FormatKind,
    params: &ConvertParams,
) -> u128 {
    let (isz, vsz) = sizes::<T, I>();
    let (n, nnz) = (a.nrows() as u128, a.nnz() as u128);
    let longest = a
        .row_ptr()
        .windows(2)
        .map(|w| w[1].to_usize().saturating_sub(w[0].to_usize()))
        .max()
        .unwrap_or(0) as u128;
    let entries = nnz * (isz + vsz);
    match target {
        FormatKind::Coo => nnz * (2 * isz + vsz),
        FormatKind::Csr => csr_bytes(a.nrows(), a.nnz(), isz, vsz),
        FormatKind::Ell => {
            let slots = n * params.ell_width.map_or(longest, |w| w as u128).max(1);
            // Without --allow-fill, a fill beyond the limit is refused
            // (with its own message) before anything is allocated.
            let refused_above =
                (crate::MAX_ELL_FILL as u128 * nnz).max(crate::ELL_FILL_MIN_SLOTS as u128);
            let slots = if params.allow_fill {
                slots
            } else {
                slots.min(refused_above)
            };
            // More slots than the index type counts: the conversion
            // refuses that itself, with the more useful message.
            if slots > I::MAX_USIZE as u128 {
                0
            } else {
                slots * (isz + vsz)
            }
        }
        FormatKind::Hyb => n * (isz + vsz + 8) + entries + nnz * isz,
        // Permutation and its inverse, pointers, entries.
        FormatKind::Jds => n * (isz + 8) + (longest + 2) * 16 + entries,
        // The permutation, slice pointers and widths, and the entries (the
        // padded slots are checked exactly once the widths are known).
        FormatKind::Sell => entries + n * (2 * isz + 8),
        // The transposed arrays and the counting sort's column counts.
        FormatKind::Csc => csr_bytes(a.ncols(), a.nnz(), isz, vsz) + a.ncols() as u128 * 8,
    }
}

/// Converts a CSR matrix to `target` with `params`.
///
/// # Errors
/// The target's parameter errors (see [`par::csr_to_ell`],
/// [`par::csr_to_hyb`], [`par::csr_to_sell`]).
pub fn from_csr<T: Scalar, I: Index>(
    a: &Csr<T, I>,
    target: FormatKind,
    params: &ConvertParams,
) -> Result<AnyMatrix<T, I>, ConvertError> {
    preflight(
        footprint(a, target, params),
        &format!("the conversion to {}", target.name().to_uppercase()),
    )?;
    Ok(match target {
        FormatKind::Coo => AnyMatrix::Coo(par::csr_to_coo(a)),
        FormatKind::Csr => AnyMatrix::Csr(a.clone()),
        FormatKind::Csc => AnyMatrix::Csc(par::csr_to_csc(a)),
        FormatKind::Ell => AnyMatrix::Ell(par::csr_to_ell(a, params.ell_width, params.allow_fill)?),
        FormatKind::Hyb => AnyMatrix::Hyb(par::csr_to_hyb(a, params.hyb_width)?),
        FormatKind::Jds => AnyMatrix::Jds(par::csr_to_jds(a)),
        FormatKind::Sell => AnyMatrix::Sell(par::csr_to_sell(
            a,
            params.slice,
            params.sigma_or_default(),
        )?),
    })
}

/// Converts a CSR matrix to `layout` ([`ConvertParams::for_layout`]).
///
/// # Errors
/// The layout's parameter errors, as [`from_csr`].
///
/// ```
/// use sparsetool_convert::to_layout;
/// use sparsetool_formats::{Csr, Layout};
/// let a = Csr::<f64, i32>::try_from_parts(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 2.0, 3.0]).unwrap();
/// let m = to_layout(&a, &Layout::Ell { width: 2 }).unwrap();
/// assert_eq!((m.kind().name(), m.nnz()), ("ell", 3));
/// ```
pub fn to_layout<T: Scalar, I: Index>(
    a: &Csr<T, I>,
    layout: &Layout,
) -> Result<AnyMatrix<T, I>, ConvertError> {
    from_csr(a, layout.kind(), &ConvertParams::for_layout(layout))
}

/// Converts any matrix to `target`, through CSR (so COO duplicates are
/// summed and every result is canonical). Parameters that do not concern
/// `target` are ignored.
///
/// # Errors
/// The target's parameter errors; see [`ConvertError`].
///
/// ```
/// use sparsetool_convert::{convert, AnyMatrix, ConvertParams};
/// use sparsetool_formats::{Coo, FormatKind};
/// let coo = Coo::<f64, i32>::try_from_parts(2, 2, vec![0, 1, 0], vec![0, 1, 0], vec![1.0, 2.0, 3.0]).unwrap();
/// let m = convert(&AnyMatrix::Coo(coo), FormatKind::Sell, &ConvertParams::default()).unwrap();
/// assert_eq!(m.nnz(), 2);
/// let mut y = vec![0.0; 2];
/// m.spmv(&[1.0, 1.0], &mut y);
/// assert_eq!(y, [4.0, 2.0]);
/// ```
pub fn convert<T: Scalar, I: Index>(
    m: &AnyMatrix<T, I>,
    target: FormatKind,
    params: &ConvertParams,
) -> Result<AnyMatrix<T, I>, ConvertError> {
    if target == FormatKind::Csr {
        return Ok(AnyMatrix::Csr(m.try_as_csr()?.into_owned()));
    }
    from_csr(&*m.try_as_csr()?, target, params)
}

/// The CSR of `Aᵀ` for `A` in any format: the CSC's own arrays, borrowed
/// (no copy), for CSC; [`par::transpose`] of the CSR for CSR and for the
/// formats converted to CSR first; for COO, its entries swapped and summed
/// by [`par::coo_to_csr`]. The GPU runs `y = Aᵀ x` as the CSR kernels on
/// this matrix.
///
/// ```
/// use sparsetool_convert::{csr_to_csc, transposed_csr};
/// use sparsetool_formats::{Csr, MatrixRef};
/// let a = Csr::<f64, i32>::try_from_parts(2, 3, vec![0, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0]).unwrap();
/// let t = transposed_csr(MatrixRef::Csr(&a));
/// assert_eq!((t.nrows(), t.ncols(), t.row_ptr()), (3, 2, &[0, 1, 2, 3][..]));
/// let c = csr_to_csc(&a);
/// assert!(matches!(transposed_csr(MatrixRef::Csc(&c)), std::borrow::Cow::Borrowed(_)));
/// ```
#[must_use]
pub fn transposed_csr<T: Scalar, I: Index>(m: MatrixRef<'_, T, I>) -> Cow<'_, Csr<T, I>> {
    match m {
        MatrixRef::Csc(c) => Cow::Borrowed(c.transposed()),
        MatrixRef::Csr(a) => Cow::Owned(par::transpose(a)),
        MatrixRef::Coo(a) => {
            // SAFETY: the entries of a valid COO, rows and columns swapped,
            // are in range for the swapped shape.
            let t = unsafe {
                Coo::from_parts_unchecked(
                    a.ncols(),
                    a.nrows(),
                    a.cols().to_vec(),
                    a.rows().to_vec(),
                    a.values().to_vec(),
                )
            };
            Cow::Owned(par::coo_to_csr(&t))
        }
        MatrixRef::Ell(a) => Cow::Owned(par::transpose(&par::ell_to_csr(a))),
        MatrixRef::Hyb(a) => Cow::Owned(par::transpose(&par::hyb_to_csr(a))),
        MatrixRef::Jds(a) => Cow::Owned(par::transpose(&par::jds_to_csr(a))),
        MatrixRef::Sell(a) => Cow::Owned(par::transpose(&par::sell_to_csr(a))),
    }
}
