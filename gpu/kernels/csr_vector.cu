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
                           const ofs_t* __restrict__ row_ptr,
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
        const ofs_t start = ld(row_ptr + row);
        const ofs_t end = ld(row_ptr + row + 1);
        // two independent accumulators keep two loads in flight per lane
        T sum2 = T(0);
        ofs_t k = start + lane;
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
        stcs(y + row, sum);
    }
}

#define CSR_VECTOR_T(t, T, L)                                                              \
    extern "C" __global__ void SPMV_BOUNDS spmv_csr_vector_##t##_l##L(                     \
        int nrows, const ofs_t* row_ptr, const int* col_idx, const T* vals, const T* x, T* y) { \
        csr_vector<L, T>(nrows, nullptr, row_ptr, col_idx, vals, x, y);                    \
    }                                                                                      \
    extern "C" __global__ void SPMV_BOUNDS spmv_csr_binned_##t##_l##L(                     \
        int nrows, const int* rows, const ofs_t* row_ptr, const int* col_idx, const T* vals, \
        const T* x, T* y) {                                                                \
        csr_vector<L, T>(nrows, rows, row_ptr, col_idx, vals, x, y);                       \
    }
#define CSR_VECTOR(L)                                                                      \
    CSR_VECTOR_T(f32, float, L)                                                            \
    CSR_VECTOR_T(f64, double, L)                                                           \
    CSR_VECTOR_T(c64, cfloat, L)                                                           \
    CSR_VECTOR_T(c128, cdouble, L)

CSR_VECTOR(1)
CSR_VECTOR(2)
CSR_VECTOR(4)
CSR_VECTOR(8)
CSR_VECTOR(16)
CSR_VECTOR(32)
