// ell.cu -- ELLPACK SpMV, one to four threads per row.
//
// Layout (formats::Ell): nrows * width slots, slot-major ("column-major"):
// slot s of row i is at s * nrows + i, so at every step the threads of a warp
// read consecutive addresses (coalesced). Padding slots (value 0, index -1)
// follow a row's entries. Every thread runs all its slots with the x load
// predicated on the index: row_nnz is not read at all (4 bytes per row less
// traffic, which is 5 % of a 5-point stencil's bytes), the trip count is
// uniform across the warp so the unrolled loads are independent, and a
// padding slot costs only its index load. Also the first half of HYB (the
// COO tail is added afterwards by spmv_coo_<t>_segmented on the same
// stream). One thread per row runs the plain loop (spmv_ell_<t>); two or
// four run the batched loads of slot_sum (common.cuh): spmv_ell_<t>_b4, and
// spmv_ell_<t>_deep from plan::DEEP_SLOTS slots a thread on.

template <int K, typename T>
__device__ void ell(int nrows, int width, int lanes, const int* __restrict__ row_nnz,
                    const int* __restrict__ col_idx, const T* __restrict__ vals,
                    const T* __restrict__ x, T* __restrict__ y) {
    // `lanes` threads per row (2 or 4 here; plan::ell_lanes): a warp holds
    // 32 / lanes rows, and its lane group g = lane / (32 / lanes) takes
    // slots g, g + lanes, ... of them, so each step still reads 32 / lanes
    // consecutive rows of one slot (whole 32-byte sectors for 4-byte
    // values). A matrix of few rows then keeps more loads in flight: a FEM
    // matrix of 3.3k rows (30 slots) 5.5 -> 3.7 us with four lanes, a
    // 27-point stencil of 39k rows 5.4 -> 5.1 us with two (H100, f32). The
    // lane groups' sums meet by shuffles, and group 0 stores.
    (void)row_nnz;  // kept in the signature: HYB and ELL share the launch code
    dep_launch();   // HYB's COO tail may start (it waits before adding)
    const i64 t = global_thread_id();
    const int lane = (int)(threadIdx.x & 31);
    const int shift = __ffs(lanes) - 1;  // log2(lanes)
    const int per_warp = 32 >> shift;     // rows per warp
    const i64 row = (t >> 5) * per_warp + (lane & (per_warp - 1));
    const int group = lane >> (5 - shift);
    T sum = T(0);
    if (row < nrows && group < width) {
        // slots group, group + lanes, ... (slot_sum in common.cuh)
        const int n = (width - group + lanes - 1) / lanes;
        sum = slot_sum<K>(row + (i64)group * nrows, (i64)lanes * nrows, n, col_idx, vals, x);
    }
    // every lane of the warp is here (whole warps are launched)
    for (int o = per_warp; o < 32; o <<= 1) sum += shfl_xor(sum, o, 32);
    if (group == 0 && row < nrows) stcs(y + row, sum);
}

// One thread per row, the plain loop: the kernel as it was before lanes and
// batches. Batches with one thread per row measured 4-20 % slower on rows of
// 1 to 6 slots (HYB's ELL part on power laws and circuits, 2D stencils) and
// mixed on wider ones (H100, BENCHMARKS.md, issue 17).
template <typename T>
__device__ void ell_plain(int nrows, int width, const int* __restrict__ col_idx,
                          const T* __restrict__ vals, const T* __restrict__ x,
                          T* __restrict__ y) {
    dep_launch();  // HYB's COO tail may start (it waits before adding)
    const i64 row = global_thread_id();
    if (row >= nrows) return;
    stcs(y + row, slot_sum<0>(row, nrows, width, col_idx, vals, x));
}

// `ell-u16` and HYB's ELL part as `hyb-u16`: one thread per row reading
// each column as a 16-bit offset from a base column of the warp's 32 rows
// (pair_sum in common.cuh; the words of slot pair j at j * nrows + row, as
// the slots), 2 bytes a slot less, in batches of 2 pairs loaded ahead of
// their gathers (complex values 1: SlotBatch<T, 4> / 2). On the H100
// (BENCHMARKS.md, issue 17) against `ell`/`hyb`: a 2D stencil of 12.5M rows
// 203 -> 178 us (f32), a 27-point stencil 29.3 -> 22.5, a FEM matrix's HYB
// 27.3 -> 22.8, a circuit's HYB 297 -> 273; the plain loop over the pairs
// gained only on wide rows (FEM) and lost on 5-slot stencils. A warp whose
// rows' columns lie 65535 or more apart (base -1: the dense rows of a
// circuit, which HYB keeps the first slots of) finds padding in its pairs
// and then reads the 32-bit indices; that branch is warp-uniform, since a
// warp holds exactly one group of 32 rows (one thread per row, whole
// warps). layout::ell_u16 builds the bases and words.
template <typename T>
__device__ void ell_u16(int nrows, int width, const int* __restrict__ base,
                        const unsigned* __restrict__ words, const int* __restrict__ col_idx,
                        const T* __restrict__ vals, const T* __restrict__ x,
                        T* __restrict__ y) {
    dep_launch();  // HYB's COO tail may start (it waits before adding)
    const i64 row = global_thread_id();
    if (row >= nrows) return;
    const int b = ld(base + (row >> 5));
    // the pairs and values are loaded whatever the base (a group without
    // one holds padding only, so nothing is gathered), so their loads do
    // not wait for it; a branch on the base first ran at the 32-bit
    // kernel's speed or slower (2D stencil f32 204.6 against 202.9 us)
    T sum = pair_sum<SlotBatch<T, 4>::value / 2>(row, (i64)nrows, width, words + row, b, vals, x);
    if (b < 0) sum = slot_sum<0>(row, nrows, width, col_idx, vals, x);
    stcs(y + row, sum);
}

// spmv_ell_<t>: ell_plain (one thread per row), spmv_ell_<t>_b4: batches of 4 slots (32
// registers), spmv_ell_<t>_deep: batches of 8 (64 registers); complex64's
// _b4 takes 2, complex128 half of either (slot_sum in common.cuh,
// plan::slot_batch); spmv_ell_<t>_u16: ell_u16.
#define ELL(t, T)                                                                          \
    extern "C" __global__ void SPMV_BOUNDS spmv_ell_##t(int nrows, int width, int lanes,   \
                                                       const int* row_nnz,                  \
                                                       const int* col_idx, const T* vals,   \
                                                       const T* x, T* y) {                  \
        (void)lanes; /* 1: the host launches it one thread per row */                      \
        (void)row_nnz;                                                                     \
        ell_plain<T>(nrows, width, col_idx, vals, x, y);                                   \
    }                                                                                      \
    extern "C" __global__ void SPMV_BOUNDS spmv_ell_##t##_b4(                              \
        int nrows, int width, int lanes, const int* row_nnz, const int* col_idx,           \
        const T* vals, const T* x, T* y) {                                                 \
        ell<SlotBatch<T, 4>::value, T>(nrows, width, lanes, row_nnz, col_idx, vals, x, y); \
    }                                                                                      \
    extern "C" __global__ void SLOT_BOUNDS_DEEP spmv_ell_##t##_deep(                       \
        int nrows, int width, int lanes, const int* row_nnz, const int* col_idx,           \
        const T* vals, const T* x, T* y) {                                                 \
        ell<SlotBatch<T, 8>::value, T>(nrows, width, lanes, row_nnz, col_idx, vals, x, y); \
    }                                                                                      \
    extern "C" __global__ void SPMV_BOUNDS spmv_ell_##t##_u16(                             \
        int nrows, int width, const int* base, const unsigned* words, const int* col_idx,  \
        const T* vals, const T* x, T* y) {                                                 \
        ell_u16<T>(nrows, width, base, words, col_idx, vals, x, y);                        \
    }
SPMV_TYPES(ELL)
