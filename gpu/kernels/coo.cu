// coo.cu -- SpMV on coordinate triplets.
//
// spmv_coo_<t>:           one thread per entry, atomicAdd into y (y zeroed
//                         before the launch). Works for any entry order.
// spmv_coo_<t>_segmented: entries sorted by row. Each warp takes 32-entry
//                         tiles, reduces equal rows with a warp segmented
//                         scan, and only the last lane of each row segment
//                         issues an atomicAdd: about one atomic per row and
//                         tile instead of one per entry. Also adds into y, so
//                         it serves as the COO tail of HYB after the ELL part.

template <typename T>
__device__ void coo_atomic(i64 nnz, const int* __restrict__ rows,
                           const int* __restrict__ cols,
                           const T* __restrict__ vals,
                           const T* __restrict__ x, T* __restrict__ y) {
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 k = global_thread_id(); k < nnz; k += stride) {
        atomicAdd(&y[ldcs(rows + k)], ldcs(vals + k) * ld(x + ldcs(cols + k)));
    }
}

template <typename T>
__device__ void coo_segmented(i64 nnz, const int* __restrict__ rows,
                              const int* __restrict__ cols,
                              const T* __restrict__ vals,
                              const T* __restrict__ x, T* __restrict__ y) {
    const int lane = threadIdx.x & 31;
    const i64 warp = global_thread_id() >> 5;
    const i64 nwarps = ((i64)gridDim.x * blockDim.x) >> 5;
    // tile t covers entries [32 t, 32 t + 32)
    for (i64 base = warp * 32; base < nnz; base += nwarps * 32) {
        const i64 k = base + lane;
        int row = -1;
        T v = T(0);
        if (k < nnz) {
            row = ldcs(rows + k);
            v = ldcs(vals + k) * ld(x + ldcs(cols + k));
        }
        v = warp_segmented_scan(row, v);
        const int next_row = __shfl_down_sync(0xffffffffu, row, 1);
        const bool seg_end = (lane == 31) || (next_row != row);
        if (k < nnz && seg_end) {
            atomicAdd(&y[row], v);
        }
    }
}

extern "C" __global__ void SPMV_BOUNDS spmv_coo_f32(i64 nnz, const int* rows, const int* cols,
                                        const float* vals, const float* x, float* y) {
    coo_atomic<float>(nnz, rows, cols, vals, x, y);
}
extern "C" __global__ void SPMV_BOUNDS spmv_coo_f64(i64 nnz, const int* rows, const int* cols,
                                        const double* vals, const double* x, double* y) {
    coo_atomic<double>(nnz, rows, cols, vals, x, y);
}
extern "C" __global__ void SPMV_BOUNDS spmv_coo_f32_segmented(i64 nnz, const int* rows, const int* cols,
                                                  const float* vals, const float* x, float* y) {
    coo_segmented<float>(nnz, rows, cols, vals, x, y);
}
extern "C" __global__ void SPMV_BOUNDS spmv_coo_f64_segmented(i64 nnz, const int* rows, const int* cols,
                                                  const double* vals, const double* x, double* y) {
    coo_segmented<double>(nnz, rows, cols, vals, x, y);
}
