// csr_scalar.cu -- CSR SpMV, one thread per row (Bell & Garland's "scalar"
// kernel). Best when rows are very short; loads are not coalesced across the
// warp when rows are long.

template <typename T>
__device__ void csr_scalar(int nrows, const int* __restrict__ row_ptr,
                           const int* __restrict__ col_idx,
                           const T* __restrict__ vals, const T* __restrict__ x,
                           T* __restrict__ y) {
    const i64 row = global_thread_id();
    if (row >= nrows) return;
    const int start = ld(row_ptr + row);
    const int end = ld(row_ptr + row + 1);
    T sum = T(0);
#pragma unroll 4
    for (int k = start; k < end; ++k) {
        sum += ldcs(vals + k) * ld(x + ldcs(col_idx + k));
    }
    __stcs(&y[row], sum);
}

extern "C" __global__ void SPMV_BOUNDS spmv_csr_scalar_f32(int nrows, const int* row_ptr, const int* col_idx,
                                               const float* vals, const float* x, float* y) {
    csr_scalar<float>(nrows, row_ptr, col_idx, vals, x, y);
}
extern "C" __global__ void SPMV_BOUNDS spmv_csr_scalar_f64(int nrows, const int* row_ptr, const int* col_idx,
                                               const double* vals, const double* x, double* y) {
    csr_scalar<double>(nrows, row_ptr, col_idx, vals, x, y);
}
