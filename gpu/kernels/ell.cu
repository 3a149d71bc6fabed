// ell.cu -- ELLPACK SpMV, one thread per row.
//
// Layout (formats::Ell): nrows * width slots, slot-major ("column-major"):
// slot s of row i is at s * nrows + i, so at every step the threads of a warp
// read consecutive addresses (coalesced). Padding slots (value 0, index -1)
// follow a row's entries. Every thread runs all `width` slots with the x load
// predicated on the index: row_nnz is not read at all (4 bytes per row less
// traffic, which is 5 % of a 5-point stencil's bytes), the trip count is
// uniform across the warp so the unrolled loads are independent, and a
// padding slot costs only its index load. Also the first half of HYB (the COO tail is added afterwards by
// spmv_coo_<t>_segmented on the same stream).

template <typename T>
__device__ void ell(int nrows, int width, const int* __restrict__ row_nnz,
                    const int* __restrict__ col_idx, const T* __restrict__ vals,
                    const T* __restrict__ x, T* __restrict__ y) {
    const i64 row = global_thread_id();
    if (row >= nrows) return;
    (void)row_nnz;  // kept in the signature: HYB and ELL share the launch code
    T sum = T(0);
    i64 idx = row;
#pragma unroll 4
    for (int s = 0; s < width; ++s) {
        const int c = ldcs(col_idx + idx);
        const T v = ldcs(vals + idx);
        if (c >= 0) sum += v * ld(x + c);
        idx += nrows;
    }
    stcs(y + row, sum);
}

#define ELL(t, T)                                                                          \
    extern "C" __global__ void SPMV_BOUNDS spmv_ell_##t(int nrows, int width, const int* row_nnz, \
                                                       const int* col_idx, const T* vals,   \
                                                       const T* x, T* y) {                  \
        ell<T>(nrows, width, row_nnz, col_idx, vals, x, y);                                \
    }
SPMV_TYPES(ELL)
