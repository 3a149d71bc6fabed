// sell.cu -- SELL-C-sigma SpMV (Kreutzer et al. 2014), C threads per slice.
//
// Layout (formats::Sell): rows sorted by descending length inside windows of
// sigma rows (perm[p] = original row at sorted position p), cut into slices of
// C = slice_height sorted rows; slice k has slice_width[k] slots per row,
// slot-major inside the slice: slot s of local row r is at
// slice_ptr[k] + s * C + r. The last slice is padded to C rows. Padding slots
// (value 0, index -1) follow a row's entries and are skipped (only their
// column index is read). Thread t handles slice t / C, local row t % C (with
// C = 32 this is one warp per slice); the result is scattered through perm.
//
// The same kernel runs cuSPARSE's sliced-ELL layout (no permutation) when
// `perm` is null.

template <typename T>
__device__ void sell(int nrows, int C, const int* __restrict__ perm,
                     const int* __restrict__ slice_ptr,
                     const int* __restrict__ slice_width,
                     const int* __restrict__ col_idx, const T* __restrict__ vals,
                     const T* __restrict__ x, T* __restrict__ y) {
    const i64 t = global_thread_id();
    const i64 slice = t / C;
    const int r = (int)(t - slice * C);
    const i64 p = slice * C + r;  // sorted position
    if (p >= nrows) return;
    const int w = ld(slice_width + slice);
    i64 idx = (i64)ld(slice_ptr + slice) + r;
    T sum = T(0);
    // Every lane of a slice runs the slice's width (no divergence in the trip
    // count), so the unrolled column loads are independent and in flight
    // together; value and x loads of padding slots are predicated off.
#pragma unroll 4
    for (int s = 0; s < w; ++s) {
        // Both loads are issued before the branch, so the value load does not
        // wait for the index (padding values are 0 and never used).
        const int c = ldcs(col_idx + idx);
        const T v = ldcs(vals + idx);
        if (c >= 0) sum += v * ld(x + c);
        idx += C;
    }
    const i64 row = perm ? (i64)ld(perm + p) : p;
    __stcs(&y[row], sum);
}

extern "C" __global__ void SPMV_BOUNDS spmv_sell_f32(int nrows, int C, const int* perm, const int* slice_ptr,
                                         const int* slice_width, const int* col_idx,
                                         const float* vals, const float* x, float* y) {
    sell<float>(nrows, C, perm, slice_ptr, slice_width, col_idx, vals, x, y);
}
extern "C" __global__ void SPMV_BOUNDS spmv_sell_f64(int nrows, int C, const int* perm, const int* slice_ptr,
                                         const int* slice_width, const int* col_idx,
                                         const double* vals, const double* x, double* y) {
    sell<double>(nrows, C, perm, slice_ptr, slice_width, col_idx, vals, x, y);
}
