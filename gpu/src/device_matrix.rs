//! Uploading a matrix once, in any format, into typed device structs.
//!
//! Index arrays become 32-bit (`i32`) device arrays: borrowed without a copy
//! when the host uses `i32`, narrowed (with an overflow check) when it uses
//! `i64`. Value arrays are uploaded as raw bytes and typed by [`Precision`].

use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr};
use sparsetool_formats::{Coo, Csc, Csr, Ell, FormatKind, Index, Jds, Scalar, Sell};

use crate::layout::{check_i32, coo_rows_from_row_ptr, narrow_indices, SlicedEllHost};
use crate::GpuError;
use sparsetool_formats::Precision;

use sparsetool_formats::MatrixRef;

/// A device array of 32-bit indices with its logical length (the allocation
/// has at least one element, since zero-byte allocations are not allowed).
#[derive(Debug)]
pub(crate) struct DevIdx {
    pub buf: CudaSlice<i32>,
    pub len: usize,
}

/// A device array of values (raw bytes) with its logical length in values.
#[derive(Debug)]
pub(crate) struct DevVals {
    pub buf: CudaSlice<u8>,
    pub len: usize,
}

fn htod<D: DeviceRepr + Default + Copy>(
    stream: &std::sync::Arc<CudaStream>,
    data: &[D],
) -> Result<CudaSlice<D>, GpuError> {
    if data.is_empty() {
        Ok(stream.clone_htod(&[D::default()])?)
    } else {
        Ok(stream.clone_htod(data)?)
    }
}

pub(crate) fn upload_idx<I: Index>(
    stream: &std::sync::Arc<CudaStream>,
    what: &'static str,
    src: &[I],
) -> Result<DevIdx, GpuError> {
    let narrowed = narrow_indices(what, src)?;
    Ok(DevIdx {
        buf: htod(stream, &narrowed)?,
        len: src.len(),
    })
}

pub(crate) fn upload_i32(
    stream: &std::sync::Arc<CudaStream>,
    src: &[i32],
) -> Result<DevIdx, GpuError> {
    Ok(DevIdx {
        buf: htod(stream, src)?,
        len: src.len(),
    })
}

pub(crate) fn upload_vals<T: Scalar>(
    stream: &std::sync::Arc<CudaStream>,
    src: &[T],
) -> Result<DevVals, GpuError> {
    let bytes: &[u8] = bytemuck::cast_slice(src);
    Ok(DevVals {
        buf: htod(stream, bytes)?,
        len: src.len(),
    })
}

/// `nrows`, `ncols` and `nnz` of a device matrix, each checked to fit `i32`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dims {
    pub nrows: usize,
    pub ncols: usize,
    pub nnz: usize,
}

impl Dims {
    fn checked(nrows: usize, ncols: usize, nnz: usize) -> Result<Self, GpuError> {
        check_i32("nrows", nrows)?;
        check_i32("ncols", ncols)?;
        check_i32("nnz", nnz)?;
        Ok(Dims { nrows, ncols, nnz })
    }
}

/// CSR on the device.
#[derive(Debug)]
pub(crate) struct DevCsr {
    pub dims: Dims,
    pub row_ptr: DevIdx,
    pub col_idx: DevIdx,
    pub vals: DevVals,
    /// Rows grouped by bin for the binned kernel ([`crate::plan::csr_bins`]).
    pub bin_rows: DevIdx,
    /// `(lanes, start, count)` of each non-empty bin in `bin_rows`.
    pub bins: Vec<(u32, usize, usize)>,
}

/// COO on the device, always sorted by row (unsorted input is sorted on upload).
#[derive(Debug)]
pub(crate) struct DevCoo {
    pub dims: Dims,
    pub rows: DevIdx,
    pub cols: DevIdx,
    pub vals: DevVals,
}

/// ELL on the device.
#[derive(Debug)]
pub(crate) struct DevEll {
    pub dims: Dims,
    pub width: usize,
    pub row_nnz: DevIdx,
    pub col_idx: DevIdx,
    pub vals: DevVals,
}

/// JDS on the device.
#[derive(Debug)]
pub(crate) struct DevJds {
    pub dims: Dims,
    pub ndiag: usize,
    pub perm: DevIdx,
    pub jd_ptr: DevIdx,
    pub col_idx: DevIdx,
    pub vals: DevVals,
}

/// SELL-C-sigma (with `perm`) or cuSPARSE sliced ELL (without) on the device.
#[derive(Debug)]
pub(crate) struct DevSell {
    pub dims: Dims,
    pub slice_height: usize,
    pub sigma: usize,
    pub nslices: usize,
    pub perm: Option<DevIdx>,
    pub slice_ptr: DevIdx,
    pub slice_width: DevIdx,
    pub col_idx: DevIdx,
    pub vals: DevVals,
}

/// A matrix uploaded to the device.
#[derive(Debug)]
pub(crate) enum DeviceMatrix {
    Coo(DevCoo),
    Csr(DevCsr),
    Ell(DevEll),
    Hyb(DevEll, DevCoo),
    Jds(DevJds),
    Sell(DevSell),
}

fn idx_bytes(a: &DevIdx) -> u64 {
    a.len as u64 * 4
}

impl DeviceMatrix {
    pub fn kind(&self) -> FormatKind {
        match self {
            DeviceMatrix::Coo(_) => FormatKind::Coo,
            DeviceMatrix::Csr(_) => FormatKind::Csr,
            DeviceMatrix::Ell(_) => FormatKind::Ell,
            DeviceMatrix::Hyb(..) => FormatKind::Hyb,
            DeviceMatrix::Jds(_) => FormatKind::Jds,
            DeviceMatrix::Sell(_) => FormatKind::Sell,
        }
    }

    /// `(nrows, ncols, nnz)`.
    pub fn shape(&self) -> (usize, usize, usize) {
        match self {
            DeviceMatrix::Hyb(e, c) => (e.dims.nrows, e.dims.ncols, e.dims.nnz + c.dims.nnz),
            DeviceMatrix::Coo(DevCoo { dims, .. })
            | DeviceMatrix::Csr(DevCsr { dims, .. })
            | DeviceMatrix::Ell(DevEll { dims, .. })
            | DeviceMatrix::Jds(DevJds { dims, .. })
            | DeviceMatrix::Sell(DevSell { dims, .. }) => (dims.nrows, dims.ncols, dims.nnz),
        }
    }

    /// Bytes of the stored arrays on the device (the matrix term of the
    /// minimum-bytes model).
    pub fn matrix_bytes(&self, dtype: Precision) -> u64 {
        let v = |d: &DevVals| d.len as u64 * dtype.size() as u64;
        let coo = |m: &DevCoo| idx_bytes(&m.rows) + idx_bytes(&m.cols) + v(&m.vals);
        let ell = |m: &DevEll| idx_bytes(&m.row_nnz) + idx_bytes(&m.col_idx) + v(&m.vals);
        match self {
            DeviceMatrix::Coo(m) => coo(m),
            DeviceMatrix::Csr(m) => idx_bytes(&m.row_ptr) + idx_bytes(&m.col_idx) + v(&m.vals),
            DeviceMatrix::Ell(m) => ell(m),
            DeviceMatrix::Hyb(e, c) => ell(e) + coo(c),
            DeviceMatrix::Jds(m) => {
                idx_bytes(&m.perm) + idx_bytes(&m.jd_ptr) + idx_bytes(&m.col_idx) + v(&m.vals)
            }
            DeviceMatrix::Sell(m) => {
                m.perm.as_ref().map_or(0, idx_bytes)
                    + idx_bytes(&m.slice_ptr)
                    + idx_bytes(&m.slice_width)
                    + idx_bytes(&m.col_idx)
                    + v(&m.vals)
            }
        }
    }
}

pub(crate) fn upload_csr<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Csr<T, I>,
) -> Result<DevCsr, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    let lens = m
        .row_ptr()
        .windows(2)
        .map(|w| w[1].to_usize() - w[0].to_usize());
    let (bin_rows, bins) = crate::plan::csr_bins(lens);
    Ok(DevCsr {
        dims,
        row_ptr: upload_idx(s, "row_ptr", m.row_ptr())?,
        col_idx: upload_idx(s, "col_idx", m.col_idx())?,
        vals: upload_vals(s, m.values())?,
        bin_rows: upload_i32(s, &bin_rows)?,
        bins,
    })
}

/// Uploads CSR as row-sorted COO (rows expanded from `row_ptr`).
pub(crate) fn upload_csr_as_coo<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Csr<T, I>,
) -> Result<DevCoo, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    let row_ptr = narrow_indices("row_ptr", m.row_ptr())?;
    let rows = coo_rows_from_row_ptr(&row_ptr);
    Ok(DevCoo {
        dims,
        rows: upload_i32(s, &rows)?,
        cols: upload_idx(s, "col_idx", m.col_idx())?,
        vals: upload_vals(s, m.values())?,
    })
}

/// Uploads CSC as COO in column order (the input of
/// [`crate::GpuKernel::CscScatter`]): rows as stored, each entry's column
/// expanded from `col_ptr`.
pub(crate) fn upload_csc_as_coo<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Csc<T, I>,
) -> Result<DevCoo, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    let col_ptr = narrow_indices("col_ptr", m.col_ptr())?;
    let cols = coo_rows_from_row_ptr(&col_ptr);
    Ok(DevCoo {
        dims,
        rows: upload_idx(s, "row_idx", m.row_idx())?,
        cols: upload_i32(s, &cols)?,
        vals: upload_vals(s, m.values())?,
    })
}

pub(crate) fn upload_coo<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Coo<T, I>,
) -> Result<DevCoo, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    let sorted = m.rows().windows(2).all(|w| w[0] <= w[1]);
    let (rows, cols, vals) = if sorted {
        (
            upload_idx(s, "rows", m.rows())?,
            upload_idx(s, "cols", m.cols())?,
            upload_vals(s, m.values())?,
        )
    } else {
        // stable sort by row: the segmented kernel needs row-sorted entries
        let mut order: Vec<usize> = (0..m.nnz()).collect();
        order.sort_by_key(|&k| m.rows()[k]);
        let r: Vec<I> = order.iter().map(|&k| m.rows()[k]).collect();
        let c: Vec<I> = order.iter().map(|&k| m.cols()[k]).collect();
        let v: Vec<T> = order.iter().map(|&k| m.values()[k]).collect();
        (
            upload_idx(s, "rows", &r)?,
            upload_idx(s, "cols", &c)?,
            upload_vals(s, &v)?,
        )
    };
    Ok(DevCoo {
        dims,
        rows,
        cols,
        vals,
    })
}

pub(crate) fn upload_ell<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Ell<T, I>,
) -> Result<DevEll, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    check_i32("ELL width", m.width())?;
    check_i32(
        "ELL slots (nrows * width)",
        m.nrows().saturating_mul(m.width()),
    )?;
    Ok(DevEll {
        dims,
        width: m.width(),
        row_nnz: upload_idx(s, "row_nnz", m.row_nnz())?,
        col_idx: upload_idx(s, "col_idx", m.col_idx())?,
        vals: upload_vals(s, m.values())?,
    })
}

pub(crate) fn upload_jds<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Jds<T, I>,
) -> Result<DevJds, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    Ok(DevJds {
        dims,
        ndiag: m.jd_ptr().len().saturating_sub(1),
        perm: upload_idx(s, "perm", m.perm())?,
        jd_ptr: upload_idx(s, "jd_ptr", m.jd_ptr())?,
        col_idx: upload_idx(s, "col_idx", m.col_idx())?,
        vals: upload_vals(s, m.values())?,
    })
}

pub(crate) fn upload_sell<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Sell<T, I>,
) -> Result<DevSell, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    check_i32("SELL slice height", m.slice_height())?;
    check_i32("SELL slots", m.col_idx().len())?;
    Ok(DevSell {
        dims,
        slice_height: m.slice_height(),
        sigma: m.sigma(),
        nslices: m.slice_width().len(),
        perm: Some(upload_idx(s, "perm", m.perm())?),
        slice_ptr: upload_idx(s, "slice_ptr", m.slice_ptr())?,
        slice_width: upload_idx(s, "slice_width", m.slice_width())?,
        col_idx: upload_idx(s, "col_idx", m.col_idx())?,
        vals: upload_vals(s, m.values())?,
    })
}

/// Uploads cuSPARSE's sliced-ELL layout (no permutation).
pub(crate) fn upload_sliced_ell<T: Scalar>(
    s: &std::sync::Arc<CudaStream>,
    m: &SlicedEllHost<T>,
    ncols: usize,
    nnz: usize,
) -> Result<DevSell, GpuError> {
    Ok(DevSell {
        dims: Dims::checked(m.nrows, ncols, nnz)?,
        slice_height: m.slice_size,
        sigma: 1,
        nslices: m.slice_width.len(),
        perm: None,
        slice_ptr: upload_i32(s, &m.slice_ptr)?,
        slice_width: upload_i32(s, &m.slice_width)?,
        col_idx: upload_i32(s, &m.col_idx)?,
        vals: upload_vals(s, &m.values)?,
    })
}

/// Uploads any format once.
pub(crate) fn upload<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    a: &MatrixRef<'_, T, I>,
) -> Result<DeviceMatrix, GpuError> {
    Ok(match a {
        MatrixRef::Coo(m) => DeviceMatrix::Coo(upload_coo(s, m)?),
        MatrixRef::Csr(m) => DeviceMatrix::Csr(upload_csr(s, m)?),
        MatrixRef::Ell(m) => DeviceMatrix::Ell(upload_ell(s, m)?),
        MatrixRef::Hyb(m) => DeviceMatrix::Hyb(upload_ell(s, m.ell())?, upload_coo(s, m.coo())?),
        MatrixRef::Jds(m) => DeviceMatrix::Jds(upload_jds(s, m)?),
        MatrixRef::Sell(m) => DeviceMatrix::Sell(upload_sell(s, m)?),
        MatrixRef::Csc(m) => DeviceMatrix::Coo(upload_csc_as_coo(s, m)?),
    })
}
