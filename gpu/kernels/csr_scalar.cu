// csr_scalar.cu -- CSR SpMV, one thread per row (Bell & Garland's "scalar"
// kernel). Best when rows are very short; loads are not coalesced across the
// warp when rows are long.

template <typename T>
__device__ void csr_scalar(int nrows, const ofs_t* __restrict__ row_ptr,
                           const int* __restrict__ col_idx,
                           const T* __restrict__ vals, const T* __restrict__ x,
                           T* __restrict__ y) {
    const i64 row = global_thread_id();
    if (row >= nrows) return;
    const ofs_t start = ld(row_ptr + row);
    const ofs_t end = ld(row_ptr + row + 1);
    T sum = T(0);
#pragma unroll 4
    for (ofs_t k = start; k < end; ++k) {
        sum += ldcs(vals + k) * ld(x + ldcs(col_idx + k));
    }
    stcs(y + row, sum);
}

#define CSR_SCALAR(t, T)                                                                   \
    extern "C" __global__ void SPMV_BOUNDS spmv_csr_scalar_##t(                            \
        int nrows, const ofs_t* row_ptr, const int* col_idx, const T* vals, const T* x, T* y) { \
        csr_scalar<T>(nrows, row_ptr, col_idx, vals, x, y);                                \
    }
SPMV_TYPES(CSR_SCALAR)
