// ell.cu -- ELLPACK SpMV, one thread per row.
//
// Layout (formats::Ell): nrows * width slots, slot-major ("column-major"):
// slot s of row i is at s * nrows + i, so at every step the threads of a warp
// read consecutive addresses (coalesced). Padding slots (value 0, index -1)
// follow a row's entries; the loop stops at row_nnz[i], so padding is never
// read. Also the first half of HYB (the COO tail is added afterwards by
// spmv_coo_<t>_segmented on the same stream).

template <typename T>
__device__ void ell(int nrows, int width, const int* __restrict__ row_nnz,
                    const int* __restrict__ col_idx, const T* __restrict__ vals,
                    const T* __restrict__ x, T* __restrict__ y) {
    const i64 row = global_thread_id();
    if (row >= nrows) return;
    const int len = min(ld(row_nnz + row), width);
    T sum = T(0);
    i64 idx = row;
#pragma unroll 4
    for (int s = 0; s < len; ++s) {
        sum += ld(vals + idx) * ld(x + ld(col_idx + idx));
        idx += nrows;
    }
    y[row] = sum;
}

extern "C" __global__ void SPMV_BOUNDS spmv_ell_f32(int nrows, int width, const int* row_nnz,
                                        const int* col_idx, const float* vals, const float* x,
                                        float* y) {
    ell<float>(nrows, width, row_nnz, col_idx, vals, x, y);
}
extern "C" __global__ void SPMV_BOUNDS spmv_ell_f64(int nrows, int width, const int* row_nnz,
                                        const int* col_idx, const double* vals, const double* x,
                                        double* y) {
    ell<double>(nrows, width, row_nnz, col_idx, vals, x, y);
}
