//! SpMV on vectors that live in someone else's device memory (a CuPy or
//! PyTorch array in the primary context, which cudarc shares): `x` and `y`
//! are borrowed by pointer, never copied to or from the host.

use cudarc::driver::CudaSlice;
use sparsetool_formats::{Index, MatrixRef, Scalar};

use crate::context::GpuContext;
use crate::device_matrix::{upload, DevVals};
use crate::kernels::{Offsets, ValueType};
use crate::launch::{prepare, GpuKernel};
use crate::GpuError;

/// `y = A x` (or `y = Aᵀ x` if `transpose`, on the CSR of `Aᵀ` as
/// [`crate::spmv_gpu_transpose`] runs it) with the kernel
/// [`GpuKernel::default_for_matrix`] chooses, where `x_ptr` and `y_ptr` are device pointers in `ctx`'s
/// (primary) context. The matrix is uploaded; `x` and `y` are used in place.
/// Returns once `y` is written (the stream is synchronised).
///
/// # Safety
/// `x_ptr` must point to at least `ncols` (`nrows` if `transpose`) values of
/// type `T`, and `y_ptr` to `nrows` (`ncols`) writable ones, both
/// allocated in `ctx`'s context and alive until this returns; no other work
/// may write `x` or touch `y` meanwhile. The memory stays the caller's: it
/// is never freed here.
///
/// # Errors
/// As [`crate::spmv_gpu`].
pub unsafe fn spmv_gpu_device<T: Scalar, I: Index>(
    ctx: &GpuContext,
    a: &MatrixRef<'_, T, I>,
    x_ptr: u64,
    y_ptr: u64,
    transpose: bool,
) -> Result<(), GpuError> {
    let t;
    let a = if transpose {
        t = sparsetool_convert::transposed_csr(*a);
        MatrixRef::Csr(&*t)
    } else {
        *a
    };
    let dtype = ValueType::of::<T>();
    let (nrows, ncols, _) = a.shape();
    if nrows == 0 {
        return Ok(());
    }
    let kernel = GpuKernel::default_for_matrix(&a);
    let stream = ctx.stream();
    let m = upload(stream, &a, Offsets::Auto)?;
    let p = prepare(ctx, kernel, &m, dtype)?;
    let size = std::mem::size_of::<T>();
    // SAFETY: the caller guarantees both ranges (see above); a zero-length
    // `x` is never read, so a one-byte length keeps the slice non-empty.
    let (xbuf, ybuf): (CudaSlice<u8>, CudaSlice<u8>) = unsafe {
        (
            stream.upgrade_device_ptr(x_ptr, (ncols * size).max(1)),
            stream.upgrade_device_ptr(y_ptr, nrows * size),
        )
    };
    let x = DevVals {
        buf: xbuf,
        len: ncols,
    };
    let mut y = DevVals {
        buf: ybuf,
        len: nrows,
    };
    let done = p
        .enqueue(stream, &x, &mut y)
        .and_then(|()| ctx.synchronize());
    // The memory is the caller's: hand the pointers back without freeing.
    x.buf.leak();
    y.buf.leak();
    done
}
