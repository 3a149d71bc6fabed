// csr_vector.cu -- CSR SpMV with a sub-warp of LANES lanes per row
// (Bell & Garland's "vector" kernel, generalised from a full warp to 2..32
// lanes). The host picks LANES from the mean row length (plan.rs), so short
// rows do not leave most of a warp idle. Lane l of a row sums entries
// l, l + LANES, ... (coalesced across the sub-warp), then the sub-warp reduces
// with shuffles. Rows past the end still run the shuffles (with zeros) so every
// lane named in the full mask takes part.

//
// The binned variant (spmv_csr_binned_<t>_l<L>) runs the same code over a list
// of rows: the host sorts rows into bins by length once (plan::binned_lanes)
// and launches one kernel per bin with the sub-warp width that fits the bin,
// so a matrix mixing rows of 1 and 1000 entries wastes no lanes on either.

template <int LANES, typename T>
__device__ void csr_vector(int nrows, const int* __restrict__ row_list,
                           const int* __restrict__ row_ptr,
                           const int* __restrict__ col_idx,
                           const T* __restrict__ vals, const T* __restrict__ x,
                           T* __restrict__ y) {
    const i64 tid = global_thread_id();
    const i64 slot = tid / LANES;
    const int lane = (int)(tid & (LANES - 1));
    const bool active = slot < nrows;
    const i64 row = (active && row_list) ? (i64)ld(row_list + slot) : slot;
    T sum = T(0);
    if (active) {
        const int start = ld(row_ptr + row);
        const int end = ld(row_ptr + row + 1);
        // two independent accumulators keep two loads in flight per lane
        T sum2 = T(0);
        int k = start + lane;
        for (; k + LANES < end; k += 2 * LANES) {
            sum += ldcs(vals + k) * ld(x + ldcs(col_idx + k));
            sum2 += ldcs(vals + k + LANES) * ld(x + ldcs(col_idx + k + LANES));
        }
        if (k < end) {
            sum += ldcs(vals + k) * ld(x + ldcs(col_idx + k));
        }
        sum += sum2;
    }
    sum = subwarp_sum<LANES>(sum);
    if (active && lane == 0) {
        __stcs(&y[row], sum);
    }
}

#define CSR_VECTOR(L)                                                                          \
    extern "C" __global__ void SPMV_BOUNDS spmv_csr_vector_f32_l##L(int nrows, const int* row_ptr,         \
                                                        const int* col_idx, const float* vals, \
                                                        const float* x, float* y) {            \
        csr_vector<L, float>(nrows, nullptr, row_ptr, col_idx, vals, x, y);                    \
    }                                                                                          \
    extern "C" __global__ void SPMV_BOUNDS spmv_csr_vector_f64_l##L(int nrows, const int* row_ptr,         \
                                                        const int* col_idx,                    \
                                                        const double* vals, const double* x,   \
                                                        double* y) {                           \
        csr_vector<L, double>(nrows, nullptr, row_ptr, col_idx, vals, x, y);                   \
    }                                                                                          \
    extern "C" __global__ void SPMV_BOUNDS spmv_csr_binned_f32_l##L(                           \
        int nrows, const int* rows, const int* row_ptr, const int* col_idx, const float* vals, \
        const float* x, float* y) {                                                            \
        csr_vector<L, float>(nrows, rows, row_ptr, col_idx, vals, x, y);                       \
    }                                                                                          \
    extern "C" __global__ void SPMV_BOUNDS spmv_csr_binned_f64_l##L(                           \
        int nrows, const int* rows, const int* row_ptr, const int* col_idx,                    \
        const double* vals, const double* x, double* y) {                                      \
        csr_vector<L, double>(nrows, rows, row_ptr, col_idx, vals, x, y);                      \
    }

CSR_VECTOR(1)
CSR_VECTOR(2)
CSR_VECTOR(4)
CSR_VECTOR(8)
CSR_VECTOR(16)
CSR_VECTOR(32)
