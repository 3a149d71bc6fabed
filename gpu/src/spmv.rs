//! One-shot GPU SpMV: upload, run one kernel, download.

use sparsetool_formats::{Index, Scalar};

use crate::context::GpuContext;
use crate::device_matrix::{upload, upload_vals, DevVals};
use crate::kernels::kernel_precision;
use crate::launch::{prepare, GpuKernel};
use crate::GpuError;
use sparsetool_formats::MatrixRef;

/// `y = A x` on the GPU with the default kernel of the matrix's format
/// ([`GpuKernel::default_for`]).
///
/// # Errors
/// [`GpuError::Unsupported`] for complex values, [`GpuError::Shape`] when
/// `x.len() != ncols`, [`GpuError::IndexOverflow`] when the matrix does not
/// fit 32-bit indices, and any driver or compile error.
pub fn spmv_gpu<T: Scalar, I: Index>(
    ctx: &GpuContext,
    a: &MatrixRef<'_, T, I>,
    x: &[T],
) -> Result<Vec<T>, GpuError> {
    spmv_gpu_with(ctx, a, x, GpuKernel::default_for(a.kind()))
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
    let dtype = kernel_precision::<T>(a.kind().name())?;
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
    let m = upload(stream, a)?;
    let p = prepare(ctx, kernel, &m, dtype)?;
    let xd = upload_vals(stream, x)?;
    let mut yd = upload_vals(stream, &vec![nan::<T>(); nrows])?;
    p.enqueue(stream, &xd, &mut yd)?;
    ctx.synchronize()?;
    download(ctx, &yd)
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
