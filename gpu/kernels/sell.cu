// sell.cu -- SELL-C-sigma SpMV (Kreutzer et al. 2014): C threads per slice,
// and the slots of wide slices past `cap` spread over many threads.
//
// Layout (formats::Sell): rows sorted by descending length inside windows of
// sigma rows (perm[p] = original row at sorted position p), cut into slices of
// C = slice_height sorted rows; slice k has slice_width[k] slots per row,
// slot-major inside the slice: slot s of local row r is at
// slice_ptr[k] + s * C + r. The last slice is padded to C rows. Padding slots
// (value 0, index -1) follow a row's entries and are skipped (only their
// column index is read).
//
// spmv_sell_<t>: thread t handles slice t / C, local row t % C (with C = 32
// one warp per slice), slots 0 .. min(width, cap), and stores the sum
// through perm. When the host gives `blocks` (plan::sell_slice_blocks: a
// sort over all rows whose lengths interleave), the threads of unit t / C
// take slice blocks[2u] instead (blocks[2u + 1] is 1, 0 for the padding
// of the last block), the units in the order of their first original row
// as JDS's main kernel (jds.cu), so that a block's slices store whole
// sectors of y and gather the same part of x.
//
// spmv_sell_<t>_tail: the slots past `cap` of the slices wider than `cap`
// (a slice holding a row of 2.5M entries took 553 ms with one thread per
// row): tail item j is chunk tail_chunk[j] >= 1 (slots [c * cap, (c + 1) *
// cap)) of slice tail_slice[j], C threads each, reads coalesced across the
// slice's rows as in the main kernel; each thread adds its partial sum with
// one atomic, after the main kernel stored the first part on the same stream.
// A wide slice whose rows longer than cap are its first m rows (a sorted
// slice) gets bands instead (sell_band below): the first R =
// m.next_power_of_two() rows of about SEG_SPAN / R slots a block, lane t on
// row t % R, so a block reads those rows' contiguous slots and no other
// row's padding (a circuit sorted over all rows keeps its 8 supply rows in
// one slice, whose chunks kept 8 of every 32 threads busy). An unsorted
// wide slice with fewer than plan::NARROW_ROWS rows longer than cap has no
// chunks: each of those rows' stored slots past cap are walked by whole
// blocks, a segment of up to SEG_SPAN slots each (row_segment in
// common.cuh), without reading the other rows' padding. The chunks' threads
// fill the first blocks, then each segment one block, then each band. The
// host (plan::sell_tail_items) lists them; slices no wider than cap have
// none.
//
// The same kernels run cuSPARSE's sliced-ELL layout (no permutation) when
// `perm` is null.

// Slots s0 .. s1 of local row r of a slice whose slots start at idx: C
// apart (slot_sum in common.cuh). Every lane of a slice runs the same slots,
// so the trip count does not diverge.
template <int K, typename T>
__device__ __forceinline__ T sell_slots(int C, i64 idx, int s0, int s1,
                                        const int* __restrict__ col_idx,
                                        const T* __restrict__ vals, const T* __restrict__ x) {
    return slot_sum<K>(idx + (i64)s0 * C, (i64)C, s1 - s0, col_idx, vals, x);
}

// What a thread of the main kernel sums: its first w slots (local row r of
// `slice`, values from vidx, C apart), through the stored 32-bit indices
// (Slots32, slot_sum's batches of K) or `sell-u16`'s pairs (SlotsU16,
// batches of KP pairs).
template <int K>
struct Slots32 {
    const int* __restrict__ col_idx;
    template <typename T>
    __device__ __forceinline__ T operator()(i64, int, i64 vidx, int w, int C,
                                            const T* __restrict__ vals,
                                            const T* __restrict__ x) const {
        return sell_slots<K>(C, vidx, 0, w, col_idx, vals, x);
    }
};
template <int KP>
struct SlotsU16 {
    const int* __restrict__ base;
    const i64* __restrict__ u16_ptr;
    const unsigned short* __restrict__ cols;
    template <typename T>
    __device__ __forceinline__ T operator()(i64 slice, int r, i64 vidx, int w, int C,
                                            const T* __restrict__ vals,
                                            const T* __restrict__ x) const {
        const unsigned* cp = reinterpret_cast<const unsigned*>(cols + ld(u16_ptr + slice)) + r;
        return pair_sum<KP>(vidx, (i64)C, w, cp, ld(base + slice), vals, x);
    }
};

template <typename T, typename Slots>
__device__ void sell(int nrows, int C, int cap, const int* __restrict__ blocks,
                     const int* __restrict__ perm,
                     const ofs_t* __restrict__ slice_ptr,
                     const int* __restrict__ slice_width, const Slots slots,
                     const T* __restrict__ vals, const T* __restrict__ x, T* __restrict__ y) {
    dep_launch();  // the long-row tail may start (it waits before adding)
    const i64 t = global_thread_id();
    i64 slice = t / C;
    int r = (int)(t - slice * C);
    if (blocks) {
        // the slice's unit: (slice, 1), (0, 0) past the units
        const int* b = blocks + 2 * slice;
        if (ld(b + 1) == 0) return;
        slice = ld(b);
    }
    const i64 p = slice * C + r;  // sorted position
    if (p >= nrows) return;
    const int w = min(ld(slice_width + slice), cap);
    const T sum = slots(slice, r, (i64)ld(slice_ptr + slice) + r, w, C, vals, x);
    stcs(y + (perm ? (i64)ld(perm + p) : p), sum);
}

// Band (slice k, R, s0, s1) of the tail (plan::SellTailPlan::bands): slots
// [s0, s1) of the first R local rows of slice k, lane t on row t % R (rows
// past C idle) and slots s0 + t / R, + blockDim.x / R, ...; padding skipped.
// The lanes of a row sum in shared memory (band_fold), then one atomic a
// row.
template <typename T>
__device__ __forceinline__ void sell_band(const int* __restrict__ band, int nrows, int C,
                                          const int* __restrict__ perm,
                                          const ofs_t* __restrict__ slice_ptr,
                                          const int* __restrict__ col_idx,
                                          const T* __restrict__ vals, const T* __restrict__ x,
                                          T* __restrict__ y) {
    const int k = ld(band), R = ld(band + 1), s0 = ld(band + 2), s1 = ld(band + 3);
    const int q = (int)threadIdx.x & (R - 1);
    const int step = (int)blockDim.x / R;
    T sum = T(0);
    if (q < C) {
        const i64 base = (i64)ld(slice_ptr + k) + q;
#pragma unroll 4
        for (int s = s0 + (int)threadIdx.x / R; s < s1; s += step) {
            const i64 idx = base + (i64)s * C;
            const int c = ldcs(col_idx + idx);
            if (c >= 0) sum += ldcs(vals + idx) * ld(x + c);
        }
    }
    sum = band_fold(sum, R);
    const i64 p = (i64)k * C + threadIdx.x;
    if ((int)threadIdx.x < R && (int)threadIdx.x < C && p < nrows) {
        dep_wait();  // after the main kernel's store of y
        atomic_add(y + (perm ? (i64)ld(perm + p) : p), sum);
    }
}

template <typename T>
__device__ void sell_tail(i64 nitems, int nrows, int C, int cap, const int* __restrict__ perm,
                          const ofs_t* __restrict__ slice_ptr,
                          const int* __restrict__ slice_width,
                          const int* __restrict__ tail_slice,
                          const int* __restrict__ tail_chunk, const int* __restrict__ segs,
                          int nsegs, const int* __restrict__ bands,
                          const int* __restrict__ col_idx, const T* __restrict__ vals,
                          const T* __restrict__ x, T* __restrict__ y) {
    const i64 chunk_blocks = (nitems * C + blockDim.x - 1) / blockDim.x;
    if ((i64)blockIdx.x >= chunk_blocks + nsegs) {
        sell_band(bands + 4 * ((i64)blockIdx.x - chunk_blocks - nsegs), nrows, C, perm, slice_ptr,
                  col_idx, vals, x, y);
        return;
    }
    if ((i64)blockIdx.x >= chunk_blocks) {
        // slot s of sorted row p: slice_ptr[p / C] + s * C + p % C
        const auto at = [&](int p, int s) {
            return (i64)ld(slice_ptr + p / C) + (i64)s * C + p % C;
        };
        row_segment(segs + 3 * ((i64)blockIdx.x - chunk_blocks), at, perm, col_idx, vals, x, y);
        return;
    }
    const i64 t = global_thread_id();
    const i64 j = t / C;
    if (j >= nitems) return;
    const int r = (int)(t - j * C);
    const int slice = ld(tail_slice + j);
    const i64 p = (i64)slice * C + r;
    if (p >= nrows) return;
    const int s0 = ld(tail_chunk + j) * cap;
    const int s1 = min(s0 + cap, ld(slice_width + slice));
    const T sum = sell_slots<0>(C, (i64)ld(slice_ptr + slice) + r, s0, s1, col_idx, vals, x);
    dep_wait();  // after the main kernel's store of y
    atomic_add(y + (perm ? (i64)ld(perm + p) : p), sum);
}

// spmv_sell_<t>: the plain loop, spmv_sell_<t>_b4: batches of 4 slots (32
// registers), spmv_sell_<t>_deep: batches of 8 (64 registers); complex64's
// _b4 takes 2, complex128 half of either (slot_sum in common.cuh,
// plan::slot_batch). The host runs the plain kernel as `sell` and the
// batched ones as `sell-batched`; the tail runs the plain loop.
// spmv_sell_<t>_u16: the plain loop over `sell-u16`'s column pairs,
// spmv_sell_<t>_u16_deep: batches of 4 pairs (8 slots; complex128 2) under
// 64 registers, 48 in f64 (U16_DEEP_BOUNDS in common.cuh;
// `sell-u16-batched`); the tail reads the 32-bit indices.
#define SELL_VARIANT(t, T, suffix, BOUNDS, IDX, SLOTS)                                     \
    extern "C" __global__ void BOUNDS spmv_sell_##t##suffix(                               \
        int nrows, int C, int cap, const int* blocks, const int* perm, const ofs_t* slice_ptr, \
        const int* slice_width, IDX, const T* vals, const T* x, T* y) {                    \
        sell<T>(nrows, C, cap, blocks, perm, slice_ptr, slice_width, SLOTS, vals, x, y);   \
    }
#define SELL_I32 const int *col_idx
#define SELL_U16 const int *base, const i64 *u16_ptr, const unsigned short *cols
#define SELL(t, T)                                                                         \
    SELL_VARIANT(t, T, , SPMV_BOUNDS, SELL_I32, Slots32<0>{col_idx})                       \
    SELL_VARIANT(t, T, _b4, SPMV_BOUNDS, SELL_I32, (Slots32<SlotBatch<T, 4>::value>{col_idx})) \
    SELL_VARIANT(t, T, _deep, SLOT_BOUNDS_DEEP, SELL_I32,                                  \
                 (Slots32<SlotBatch<T, 8>::value>{col_idx}))                               \
    SELL_VARIANT(t, T, _u16, SPMV_BOUNDS, SELL_U16, (SlotsU16<0>{base, u16_ptr, cols}))    \
    SELL_VARIANT(t, T, _u16_deep, U16_DEEP_BOUNDS(T), SELL_U16,                            \
                 (SlotsU16<SlotBatch<T, 8>::value / 2>{base, u16_ptr, cols}))              \
    extern "C" __global__ void SPMV_BOUNDS spmv_sell_##t##_tail(                           \
        i64 nitems, int nrows, int C, int cap, const int* perm, const ofs_t* slice_ptr,    \
        const int* slice_width, const int* tail_slice, const int* tail_chunk,              \
        const int* segs, int nsegs, const int* bands, const int* col_idx, const T* vals,   \
        const T* x, T* y) {                                                                \
        sell_tail<T>(nitems, nrows, C, cap, perm, slice_ptr, slice_width, tail_slice,      \
                     tail_chunk, segs, nsegs, bands, col_idx, vals, x, y);                 \
    }
SPMV_TYPES(SELL)
