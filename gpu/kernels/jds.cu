// jds.cu -- jagged diagonal SpMV, one thread per sorted row.
//
// Layout (formats::Jds): rows sorted by descending length (perm[p] = original
// row at sorted position p); jagged diagonal d holds entry d of every row
// longer than d, in sorted order, at jd_ptr[d] .. jd_ptr[d+1]. Thread p finds
// its row length by binary search over the diagonal lengths, then walks that
// many diagonals: reads of one diagonal are coalesced across the warp, and
// jd_ptr is a broadcast. The result is scattered through perm. No padding is
// stored or read.

template <typename T>
__device__ void jds(int nrows, int ndiag, const int* __restrict__ perm,
                    const int* __restrict__ jd_ptr, const int* __restrict__ col_idx,
                    const T* __restrict__ vals, const T* __restrict__ x,
                    T* __restrict__ y) {
    const i64 p = global_thread_id();
    if (p >= nrows) return;
    // Length of sorted row p = number of diagonals longer than p; diagonal
    // lengths never increase, so binary search (jd_ptr loads are nearly
    // warp-uniform and cached). With the trip count known, the loop below
    // unrolls and its loads are independent.
    int lo = 0, hi = ndiag;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (ld(jd_ptr + mid + 1) - ld(jd_ptr + mid) > p) lo = mid + 1; else hi = mid;
    }
    const int len = lo;
    T sum = T(0);
#pragma unroll 4
    for (int d = 0; d < len; ++d) {
        const i64 idx = (i64)ld(jd_ptr + d) + p;
        sum += ldcs(vals + idx) * ld(x + ldcs(col_idx + idx));
    }
    y[ld(perm + p)] = sum;
}

extern "C" __global__ void SPMV_BOUNDS spmv_jds_f32(int nrows, int ndiag, const int* perm, const int* jd_ptr,
                                        const int* col_idx, const float* vals, const float* x,
                                        float* y) {
    jds<float>(nrows, ndiag, perm, jd_ptr, col_idx, vals, x, y);
}
extern "C" __global__ void SPMV_BOUNDS spmv_jds_f64(int nrows, int ndiag, const int* perm, const int* jd_ptr,
                                        const int* col_idx, const double* vals, const double* x,
                                        double* y) {
    jds<double>(nrows, ndiag, perm, jd_ptr, col_idx, vals, x, y);
}
