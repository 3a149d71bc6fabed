//! One-shot GPU SpMV: upload, run one kernel, download; `y = A x` and
//! `y = Aᵀ x` with our kernels, and the cuSPARSE baseline of either.

use sparsetool_formats::{Csr, Index, Scalar};

use crate::context::GpuContext;
use crate::cusparse::{self, CusparseAlg, Handle};
use crate::device_matrix::{upload, upload_csr, upload_vals, DevVals, DeviceMatrix};
use crate::kernels::{Offsets, ValueType};
use crate::launch::{prepare, GpuKernel};
use crate::GpuError;
use sparsetool_formats::MatrixRef;

/// `y = A x` on the GPU with the kernel [`GpuKernel::default_for_matrix`]
/// chooses for the matrix (for CSR, from its row lengths).
///
/// # Errors
/// [`GpuError::Shape`] when `x.len() != ncols`, [`GpuError::IndexOverflow`]
/// when the rows or columns do not fit 32-bit indices (entry counts beyond
/// them get 64-bit offsets), and any driver or compile error.
pub fn spmv_gpu<T: Scalar, I: Index>(
    ctx: &GpuContext,
    a: &MatrixRef<'_, T, I>,
    x: &[T],
) -> Result<Vec<T>, GpuError> {
    spmv_gpu_with(ctx, a, x, GpuKernel::default_for_matrix(a))
}

/// `y = A x` on the GPU with a chosen kernel (it must read the matrix's
/// format). `y` is poisoned with NaN before the launch, so an element the
/// kernel fails to write shows up.
///
/// # Errors
/// As [`spmv_gpu`], plus [`GpuError::KernelMismatch`].
pub fn spmv_gpu_with<T: Scalar, I: Index>(
    ctx: &GpuContext,
    a: &MatrixRef<'_, T, I>,
    x: &[T],
    kernel: GpuKernel,
) -> Result<Vec<T>, GpuError> {
    spmv_gpu_with_offsets(ctx, a, x, kernel, Offsets::Auto)
}

/// [`spmv_gpu_with`] with a choice of offset width: [`Offsets::Wide`] runs
/// the 64-bit-offset kernels on any matrix (they are chosen automatically
/// beyond 2^31 - 1 entries).
///
/// # Errors
/// As [`spmv_gpu_with`].
pub fn spmv_gpu_with_offsets<T: Scalar, I: Index>(
    ctx: &GpuContext,
    a: &MatrixRef<'_, T, I>,
    x: &[T],
    kernel: GpuKernel,
    offsets: Offsets,
) -> Result<Vec<T>, GpuError> {
    let dtype = ValueType::of::<T>();
    if kernel.format() != a.kind() {
        return Err(GpuError::KernelMismatch {
            kernel: kernel.name(),
            format: a.kind().name(),
        });
    }
    let (nrows, ncols, _) = a.shape();
    if x.len() != ncols {
        return Err(GpuError::Shape {
            what: "x",
            expected: ncols,
            actual: x.len(),
        });
    }
    let stream = ctx.stream();
    let m = upload(stream, a, offsets)?;
    let p = prepare(ctx, kernel, &m, dtype)?;
    let xd = upload_vals(stream, x)?;
    let mut yd = upload_vals(stream, &vec![nan::<T>(); nrows])?;
    p.enqueue(stream, &xd, &mut yd)?;
    ctx.synchronize()?;
    download(ctx, &yd)
}

/// `y = Aᵀ x` on the GPU (`x` has `nrows` entries, `y` has `ncols`) with
/// the CSR kernel [`GpuKernel::for_csr`] chooses for the CSR of `Aᵀ`: for
/// CSC the matrix's own arrays, uploaded as they are; for the other formats
/// that CSR is built on the host first
/// ([`sparsetool_convert::transposed_csr`]). No kernel of its own: CSC of
/// `A` is CSR of `Aᵀ`.
///
/// # Errors
/// As [`spmv_gpu`], with `x` checked against `nrows`.
///
/// ```no_run
/// use sparsetool_formats::{Csr, MatrixRef};
/// use sparsetool_gpu::{spmv_gpu_transpose, GpuContext};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // [[1 2]
/// //  [0 3]]
/// let a = Csr::<f64, i32>::try_from_parts(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0, 2.0, 3.0])?;
/// let ctx = GpuContext::new(0)?;
/// let csc = sparsetool_convert::csr_to_csc(&a);
/// let y = spmv_gpu_transpose(&ctx, &MatrixRef::Csc(&csc), &[1.0, 10.0])?;
/// assert_eq!(y, vec![1.0, 32.0]);
/// # Ok(())
/// # }
/// ```
pub fn spmv_gpu_transpose<T: Scalar, I: Index>(
    ctx: &GpuContext,
    a: &MatrixRef<'_, T, I>,
    x: &[T],
) -> Result<Vec<T>, GpuError> {
    check_transpose_x(a, x)?;
    let t = sparsetool_convert::transposed_csr(*a);
    let t = MatrixRef::Csr(&t);
    spmv_gpu_with(ctx, &t, x, GpuKernel::default_for_matrix(&t))
}

/// [`GpuError::Shape`] unless `x` has one entry per row of `a` (the `x` of
/// `Aᵀ x`).
fn check_transpose_x<T: Scalar, I: Index>(
    a: &MatrixRef<'_, T, I>,
    x: &[T],
) -> Result<(), GpuError> {
    if x.len() != a.nrows() {
        return Err(GpuError::Shape {
            what: "x",
            expected: a.nrows(),
            actual: x.len(),
        });
    }
    Ok(())
}

/// `y = Aᵀ x` on the GPU with a chosen CSR kernel ([`GpuKernel::CsrScalar`],
/// [`GpuKernel::CsrVector`], [`GpuKernel::CsrBalanced`],
/// [`GpuKernel::CsrBinned`]) on the CSR of `Aᵀ` (see
/// [`spmv_gpu_transpose`]), `y` poisoned with NaN before the launch.
///
/// # Errors
/// As [`spmv_gpu_with`]; [`GpuError::KernelMismatch`] for a kernel that
/// does not read CSR; [`GpuError::Shape`] when `x.len() != nrows`.
pub fn spmv_gpu_transpose_with<T: Scalar, I: Index>(
    ctx: &GpuContext,
    a: &MatrixRef<'_, T, I>,
    x: &[T],
    kernel: GpuKernel,
) -> Result<Vec<T>, GpuError> {
    if kernel.format() != sparsetool_formats::FormatKind::Csr {
        return Err(GpuError::KernelMismatch {
            kernel: kernel.name(),
            format: "csr (of the transpose)",
        });
    }
    check_transpose_x(a, x)?;
    let t = sparsetool_convert::transposed_csr(*a);
    spmv_gpu_with(ctx, &MatrixRef::Csr(&t), x, kernel)
}

/// `y = A x`, or `y = Aᵀ x` with `transpose` (`CUSPARSE_OPERATION_TRANSPOSE`
/// on the same CSR arrays), with cuSPARSE's `cusparseSpMV` on `a`: the
/// baseline our kernels are checked and timed against. `alg` must be a CSR
/// algorithm ([`CusparseAlg::CsrAlg1`], [`CusparseAlg::CsrAlg2`]).
///
/// # Errors
/// [`GpuError::KernelMismatch`] for another algorithm,
/// [`GpuError::Shape`] for a wrong `x`, [`GpuError::Cusparse`] when
/// libcusparse is missing or refuses the call (e.g. an algorithm without
/// transpose support), and the errors of [`spmv_gpu`].
pub fn spmv_cusparse<T: Scalar, I: Index>(
    ctx: &GpuContext,
    a: &Csr<T, I>,
    x: &[T],
    alg: CusparseAlg,
    transpose: bool,
) -> Result<Vec<T>, GpuError> {
    let dtype = ValueType::of::<T>();
    if !matches!(alg, CusparseAlg::CsrAlg1 | CusparseAlg::CsrAlg2) {
        return Err(GpuError::KernelMismatch {
            kernel: alg.name(),
            format: "csr",
        });
    }
    let (x_len, y_len) = if transpose {
        (a.nrows(), a.ncols())
    } else {
        (a.ncols(), a.nrows())
    };
    if x.len() != x_len {
        return Err(GpuError::Shape {
            what: "x",
            expected: x_len,
            actual: x.len(),
        });
    }
    let stream = ctx.stream();
    let handle = Handle::new(ctx)?;
    let m = DeviceMatrix::Csr(upload_csr(stream, a, Offsets::Auto)?);
    let xd = upload_vals(stream, x)?;
    let yd = upload_vals(stream, &vec![nan::<T>(); y_len])?;
    let p = cusparse::prepare(ctx, &handle, alg, &m, dtype, transpose, &xd, yd)?;
    p.enqueue(ctx)?;
    ctx.synchronize()?;
    download(ctx, &p.y_out)
}

/// A NaN of type `T` (the poison written into `y` before checked runs).
pub(crate) fn nan<T: Scalar>() -> T {
    T::from_parts(f64::NAN, 0.0)
}

/// Copies a device vector back.
pub(crate) fn download<T: Scalar>(ctx: &GpuContext, y: &DevVals) -> Result<Vec<T>, GpuError> {
    if y.len == 0 {
        return Ok(Vec::new());
    }
    let bytes: Vec<u8> = ctx.stream().clone_dtoh(&y.buf)?;
    let n = y.len * std::mem::size_of::<T>();
    Ok(bytemuck::pod_collect_to_vec::<u8, T>(
        &bytes[..n.min(bytes.len())],
    ))
}
