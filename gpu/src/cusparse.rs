//! cuSPARSE baselines through `cudarc::cusparse::sys` (cudarc 0.19 has only
//! handle creation in its safe layer): `cusparseSpMV` on CSR (ALG1, ALG2),
//! COO (ALG1, ALG2) and sliced ELL (SELL_ALG1), `y = A x` or `y = Aᵀ x`
//! (`CUSPARSE_OPERATION_TRANSPOSE`), with descriptors and the
//! external buffer created once, outside any timed region, on the crate's
//! stream.

use std::ffi::c_void;
use std::panic::AssertUnwindSafe;

use cudarc::cusparse::sys::{
    self, cudaDataType, cusparseDnVecDescr_t, cusparseHandle_t, cusparseIndexBase_t,
    cusparseIndexType_t, cusparseOperation_t, cusparseSpMVAlg_t, cusparseSpMatDescr_t,
    cusparseStatus_t,
};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, PushKernelArg};
use serde_json::{json, Map, Value};

use crate::context::GpuContext;
use crate::device_matrix::{DevIdx, DevVals, DeviceMatrix};
use crate::kernels::{KernelId, ValueType};

use crate::GpuError;
use sparsetool_formats::Precision;

/// A cuSPARSE SpMV algorithm on one of its formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CusparseAlg {
    /// `CUSPARSE_SPMV_CSR_ALG1` (row-per-warp style, not deterministic across runs).
    CsrAlg1,
    /// `CUSPARSE_SPMV_CSR_ALG2` (merge-path style, deterministic).
    CsrAlg2,
    /// `CUSPARSE_SPMV_COO_ALG1`.
    CooAlg1,
    /// `CUSPARSE_SPMV_COO_ALG2` (deterministic, row-sorted input).
    CooAlg2,
    /// `CUSPARSE_SPMV_SELL_ALG1` on `cusparseCreateSlicedEll`.
    SellAlg1,
}

impl CusparseAlg {
    /// Every algorithm.
    pub const ALL: [CusparseAlg; 5] = [
        CusparseAlg::CsrAlg1,
        CusparseAlg::CsrAlg2,
        CusparseAlg::CooAlg1,
        CusparseAlg::CooAlg2,
        CusparseAlg::SellAlg1,
    ];

    /// Report name, e.g. `cusparse-csr-alg2`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            CusparseAlg::CsrAlg1 => "cusparse-csr-alg1",
            CusparseAlg::CsrAlg2 => "cusparse-csr-alg2",
            CusparseAlg::CooAlg1 => "cusparse-coo-alg1",
            CusparseAlg::CooAlg2 => "cusparse-coo-alg2",
            CusparseAlg::SellAlg1 => "cusparse-sell",
        }
    }

    fn sys_alg(self) -> cusparseSpMVAlg_t {
        match self {
            CusparseAlg::CsrAlg1 => cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG1,
            CusparseAlg::CsrAlg2 => cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG2,
            CusparseAlg::CooAlg1 => cusparseSpMVAlg_t::CUSPARSE_SPMV_COO_ALG1,
            CusparseAlg::CooAlg2 => cusparseSpMVAlg_t::CUSPARSE_SPMV_COO_ALG2,
            CusparseAlg::SellAlg1 => cusparseSpMVAlg_t::CUSPARSE_SPMV_SELL_ALG1,
        }
    }

    fn sys_alg_name(self) -> &'static str {
        match self {
            CusparseAlg::CsrAlg1 => "CUSPARSE_SPMV_CSR_ALG1",
            CusparseAlg::CsrAlg2 => "CUSPARSE_SPMV_CSR_ALG2",
            CusparseAlg::CooAlg1 => "CUSPARSE_SPMV_COO_ALG1",
            CusparseAlg::CooAlg2 => "CUSPARSE_SPMV_COO_ALG2",
            CusparseAlg::SellAlg1 => "CUSPARSE_SPMV_SELL_ALG1",
        }
    }
}

/// Whether `libcusparse` can be loaded.
#[must_use]
pub fn cusparse_available() -> bool {
    // SAFETY: only tries to open the library.
    std::panic::catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false)
}

/// Runs one cuSPARSE call, turning a bad status or a loader panic (missing
/// library or symbol) into [`GpuError::Cusparse`].
fn call(name: &'static str, f: impl FnOnce() -> cusparseStatus_t) -> Result<(), GpuError> {
    match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(cusparseStatus_t::CUSPARSE_STATUS_SUCCESS) => Ok(()),
        Ok(status) => Err(GpuError::Cusparse {
            call: name,
            status: format!("{status:?}"),
        }),
        Err(_) => Err(GpuError::Cusparse {
            call: name,
            status: "libcusparse or the symbol could not be loaded".to_string(),
        }),
    }
}

/// A cuSPARSE handle bound to the context's stream.
pub(crate) struct Handle(cusparseHandle_t);

impl Handle {
    pub(crate) fn new(ctx: &GpuContext) -> Result<Self, GpuError> {
        if !cusparse_available() {
            return Err(GpuError::Cusparse {
                call: "cusparseCreate",
                status: "libcusparse could not be loaded".to_string(),
            });
        }
        ctx.cuda().bind_to_thread()?;
        let mut h: cusparseHandle_t = std::ptr::null_mut();
        // SAFETY: writes one handle.
        call("cusparseCreate", || unsafe { sys::cusparseCreate(&mut h) })?;
        let handle = Handle(h);
        let stream = ctx.stream().cu_stream() as sys::cudaStream_t;
        // SAFETY: the stream outlives the handle (both owned by the context's user).
        call("cusparseSetStream", || unsafe {
            sys::cusparseSetStream(handle.0, stream)
        })?;
        Ok(handle)
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: created by cusparseCreate, destroyed once.
        let _ = call("cusparseDestroy", || unsafe {
            sys::cusparseDestroy(self.0)
        });
    }
}

struct SpMat(cusparseSpMatDescr_t);
impl Drop for SpMat {
    fn drop(&mut self) {
        // SAFETY: created by a cusparseCreate* call, destroyed once.
        let _ = call("cusparseDestroySpMat", || unsafe {
            sys::cusparseDestroySpMat(self.0)
        });
    }
}

struct DnVec(cusparseDnVecDescr_t);
impl DnVec {
    /// A dense-vector descriptor over `len` values of type `vt` at `p`,
    /// which must hold that many.
    fn new(len: usize, p: *mut c_void, vt: cudaDataType) -> Result<Self, GpuError> {
        let mut v: cusparseDnVecDescr_t = std::ptr::null_mut();
        // SAFETY: writes one descriptor; the caller vouches for `p`.
        call("cusparseCreateDnVec", || unsafe {
            sys::cusparseCreateDnVec(&mut v, len as i64, p, vt)
        })?;
        Ok(DnVec(v))
    }
}
impl Drop for DnVec {
    fn drop(&mut self) {
        // SAFETY: created by cusparseCreateDnVec, destroyed once.
        let _ = call("cusparseDestroyDnVec", || unsafe {
            sys::cusparseDestroyDnVec(self.0)
        });
    }
}

/// `alpha = 1` and `beta = 0`, as host pointers to the value type (a
/// complex value is two parts: `1 + 0i`, `0 + 0i`).
fn one_zero(d: ValueType) -> (*const c_void, *const c_void) {
    // Aligned as cuDoubleComplex (16 bytes): cuSPARSE loads a complex
    // scalar with aligned vector instructions, and a merely 8-byte aligned
    // static made it fault.
    #[repr(C, align(16))]
    struct Scalars<T>([T; 4]);
    static F32: Scalars<f32> = Scalars([1.0, 0.0, 0.0, 0.0]);
    static F64: Scalars<f64> = Scalars([1.0, 0.0, 0.0, 0.0]);
    let beta = if d.complex { 2 } else { 1 };
    match d.precision {
        Precision::F32 => (
            std::ptr::from_ref(&F32.0[0]).cast(),
            std::ptr::from_ref(&F32.0[beta]).cast(),
        ),
        Precision::F64 => (
            std::ptr::from_ref(&F64.0[0]).cast(),
            std::ptr::from_ref(&F64.0[beta]).cast(),
        ),
    }
}

fn value_type(d: ValueType) -> cudaDataType {
    match (d.precision, d.complex) {
        (Precision::F32, false) => cudaDataType::CUDA_R_32F,
        (Precision::F64, false) => cudaDataType::CUDA_R_64F,
        (Precision::F32, true) => cudaDataType::CUDA_C_32F,
        (Precision::F64, true) => cudaDataType::CUDA_C_64F,
    }
}

/// A 64-bit copy of a 32-bit device index array (`widen_indices` in
/// `util.cu`), for cuSPARSE's 64-bit index type.
fn widen(ctx: &GpuContext, src: &DevIdx) -> Result<CudaSlice<i64>, GpuError> {
    let stream = ctx.stream();
    let mut dst = stream.alloc_zeros::<i64>(src.len.max(1))?;
    if let Some(dims) = crate::plan::dims_for_threads(src.len as u64, crate::plan::BLOCK) {
        let f = ctx.function(KernelId::Util, "widen_indices")?;
        let n = src.len as i64;
        let mut b = stream.launch_builder(&f);
        b.arg(&n).arg(&src.buf).arg(&mut dst);
        // SAFETY: widen_indices(n, src, dst) with n values in src and dst.
        unsafe { b.launch(crate::launch::cfg(dims)) }?;
    }
    Ok(dst)
}

/// One prepared `cusparseSpMV`: matrix and vector descriptors over the device
/// arrays, external buffer allocated. The borrowed matrix and `x` stay alive
/// while this exists (the lifetime sees to it); `y` is owned here, so its
/// device address cannot change under the descriptor.
pub(crate) struct Prepared<'a> {
    handle: &'a Handle,
    _x_alive: &'a DevVals,
    /// The output vector the descriptor points at.
    pub y_out: DevVals,
    alg: CusparseAlg,
    dtype: ValueType,
    op: cusparseOperation_t,
    mat: SpMat,
    x: DnVec,
    y: DnVec,
    buffer: CudaSlice<u8>,
    /// 64-bit copies of 32-bit index arrays (64-bit index type), dropped
    /// after the descriptors.
    _wide: Vec<CudaSlice<i64>>,
    /// Parameters for the report.
    pub params: Map<String, Value>,
}

fn dptr<T>(ctx: &GpuContext, s: &CudaSlice<T>) -> *mut c_void {
    let (p, _sync) = s.device_ptr(ctx.stream());
    p as usize as *mut c_void
}

/// Builds the descriptors for `alg` on `m` (which must be CSR for the CSR
/// algorithms, COO for COO, and a sliced ELL without permutation for SELL),
/// for `y = A x`, or `y = Aᵀ x` with `transpose` (then `x` holds `nrows`
/// values and `y` `ncols`). cuSPARSE refuses the algorithms that do not
/// support the transpose with a status, returned as [`GpuError::Cusparse`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare<'a>(
    ctx: &GpuContext,
    handle: &'a Handle,
    alg: CusparseAlg,
    m: &'a DeviceMatrix,
    dtype: ValueType,
    transpose: bool,
    x: &'a DevVals,
    mut y: DevVals,
) -> Result<Prepared<'a>, GpuError> {
    let vt = value_type(dtype);
    let i32t = cusparseIndexType_t::CUSPARSE_INDEX_32I;
    let base = cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO;
    let mut params = Map::new();
    params.insert("alg".into(), json!(alg.sys_alg_name()));
    let (nrows, ncols, nnz) = m.shape();
    let (nr, nc, nz) = (nrows as i64, ncols as i64, nnz as i64);
    let p = |buf: &CudaSlice<i32>| dptr(ctx, buf);
    let i64t = cusparseIndexType_t::CUSPARSE_INDEX_64I;
    let mut wide: Vec<CudaSlice<i64>> = Vec::new();
    let mut mat: cusparseSpMatDescr_t = std::ptr::null_mut();
    match (alg, m) {
        (CusparseAlg::CsrAlg1 | CusparseAlg::CsrAlg2, DeviceMatrix::Csr(c)) => {
            let rp = dptr(ctx, &c.row_ptr.buf);
            let (ci, it) = if c.row_ptr.wide {
                // one index type for offsets and columns: 64-bit columns too
                wide.push(widen(ctx, &c.col_idx)?);
                (dptr(ctx, &wide[0]), i64t)
            } else {
                (p(&c.col_idx.buf), i32t)
            };
            params.insert(
                "index_bits".into(),
                json!(if c.row_ptr.wide { 64 } else { 32 }),
            );
            let v = dptr(ctx, &c.vals.buf);
            // SAFETY: pointers to live device arrays of the stated lengths and types.
            call("cusparseCreateCsr", || unsafe {
                sys::cusparseCreateCsr(&mut mat, nr, nc, nz, rp, ci, v, it, it, base, vt)
            })?;
        }
        (CusparseAlg::CooAlg1 | CusparseAlg::CooAlg2, DeviceMatrix::Coo(c)) => {
            let (r, ci, it) = if nnz > i32::MAX as usize {
                wide.push(widen(ctx, &c.rows)?);
                wide.push(widen(ctx, &c.cols)?);
                (dptr(ctx, &wide[0]), dptr(ctx, &wide[1]), i64t)
            } else {
                (p(&c.rows.buf), p(&c.cols.buf), i32t)
            };
            params.insert("index_bits".into(), json!(if it == i64t { 64 } else { 32 }));
            let v = dptr(ctx, &c.vals.buf);
            // SAFETY: as above.
            call("cusparseCreateCoo", || unsafe {
                sys::cusparseCreateCoo(&mut mat, nr, nc, nz, r, ci, v, it, base, vt)
            })?;
        }
        (CusparseAlg::SellAlg1, DeviceMatrix::Sell(s)) if s.perm.is_none() && !s.slice_ptr.wide => {
            params.insert("slice_size".into(), json!(s.slice_height));
            let (sp, ci, v) = (
                dptr(ctx, &s.slice_ptr.buf),
                p(&s.col_idx.buf),
                dptr(ctx, &s.vals.buf),
            );
            let (slots, height) = (s.col_idx.len as i64, s.slice_height as i64);
            // SAFETY: as above; the layout is cuSPARSE's (layout::sliced_ell_from_csr).
            call("cusparseCreateSlicedEll", || unsafe {
                sys::cusparseCreateSlicedEll(
                    &mut mat, nr, nc, nz, slots, height, sp, ci, v, i32t, i32t, base, vt,
                )
            })?;
        }
        _ => {
            return Err(GpuError::KernelMismatch {
                kernel: alg.name(),
                format: m.kind().name(),
            })
        }
    }
    let mat = SpMat(mat);
    let (op, x_len, y_len) = if transpose {
        (
            cusparseOperation_t::CUSPARSE_OPERATION_TRANSPOSE,
            nrows,
            ncols,
        )
    } else {
        (
            cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
            ncols,
            nrows,
        )
    };
    params.insert("op".into(), json!(format!("{op:?}")));
    for (what, expected, actual) in [("x", x_len, x.len), ("y", y_len, y.len)] {
        if expected != actual {
            return Err(GpuError::Shape {
                what,
                expected,
                actual,
            });
        }
    }
    // SAFETY (both): x holds x_len values, y holds y_len values (checked).
    let vx = DnVec::new(x_len, dptr(ctx, &x.buf), vt)?;
    let yp = {
        let (p, _sync) = y.buf.device_ptr_mut(ctx.stream());
        p as usize as *mut c_void
    };
    let vy = DnVec::new(y_len, yp, vt)?;

    let (alpha, beta) = one_zero(dtype);
    let mut size = 0usize;
    // SAFETY: descriptors are live; alpha/beta point to host scalars of the value type.
    call("cusparseSpMV_bufferSize", || unsafe {
        sys::cusparseSpMV_bufferSize(
            handle.0,
            op,
            alpha,
            mat.0,
            vx.0,
            beta,
            vy.0,
            vt,
            alg.sys_alg(),
            &mut size,
        )
    })?;
    let buffer = ctx.stream().alloc_zeros::<u8>(size.max(16))?;
    params.insert("buffer_bytes".into(), json!(size));
    let p = Prepared {
        handle,
        _x_alive: x,
        y_out: y,
        alg,
        dtype,
        op,
        _wide: wide,
        mat,
        x: vx,
        y: vy,
        buffer,
        params,
    };
    if matches!(alg, CusparseAlg::CsrAlg1 | CusparseAlg::CsrAlg2) {
        // Optional analysis step (CUDA 12.4+); ignored where not supported.
        let _ = p.run_inner("cusparseSpMV_preprocess", ctx, true);
    }
    Ok(p)
}

impl Prepared<'_> {
    /// Enqueues one `y = op(A) x` on the context's stream.
    pub(crate) fn enqueue(&self, ctx: &GpuContext) -> Result<(), GpuError> {
        self.run_inner("cusparseSpMV", ctx, false)
    }

    fn run_inner(
        &self,
        name: &'static str,
        ctx: &GpuContext,
        preprocess: bool,
    ) -> Result<(), GpuError> {
        let vt = value_type(self.dtype);
        let (alpha, beta) = one_zero(self.dtype);
        let buf = dptr(ctx, &self.buffer);
        let op = self.op;
        let spmv = if preprocess {
            sys::cusparseSpMV_preprocess
        } else {
            sys::cusparseSpMV
        };
        // SAFETY: every descriptor and the buffer are live; alpha/beta are
        // host scalars that live for the whole program (host pointer mode).
        call(name, || unsafe {
            spmv(
                self.handle.0,
                op,
                alpha,
                self.mat.0,
                self.x.0,
                beta,
                self.y.0,
                vt,
                self.alg.sys_alg(),
                buf,
            )
        })
    }
}
