// coo.cu -- SpMV on coordinate triplets.
//
// spmv_coo_<t>:           one thread per entry, atomicAdd into y (y zeroed
//                         before the launch). Works for any entry order.
// spmv_coo_<t>_segmented: entries sorted by row. Each warp takes tiles of
//                         32 x 4 (f32) or 32 x 2 (f64) entries (vector loads), reduces
//                         equal rows in the thread and then across the warp
//                         with a segmented scan, and issues one atomicAdd per
//                         row piece: about one atomic per row and tile
//                         instead of one per entry. Also adds into y, so it
//                         serves as the COO tail of HYB after the ELL part.

template <typename T>
__device__ void coo_atomic(i64 nnz, const int* __restrict__ rows,
                           const int* __restrict__ cols,
                           const T* __restrict__ vals,
                           const T* __restrict__ x, T* __restrict__ y) {
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 k = global_thread_id(); k < nnz; k += stride) {
        atomic_add(y + ldcs(rows + k), ldcs(vals + k) * ld_pinned(x + ldcs(cols + k)));
    }
}

// N consecutive entries of an array, one or two vector loads (streaming):
// `p` is N-entry aligned (k a multiple of N, arrays 256-byte aligned by
// cudaMalloc).
__device__ __forceinline__ void ldv(const int* __restrict__ p, int (&v)[4]) {
    const int4 t = __ldcs(reinterpret_cast<const int4*>(p));
    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
}
__device__ __forceinline__ void ldv(const int* __restrict__ p, int (&v)[2]) {
    const int2 t = __ldcs(reinterpret_cast<const int2*>(p));
    v[0] = t.x; v[1] = t.y;
}
__device__ __forceinline__ void ldv(const float* __restrict__ p, float (&v)[4]) {
    const float4 t = __ldcs(reinterpret_cast<const float4*>(p));
    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
}
__device__ __forceinline__ void ldv(const float* __restrict__ p, float (&v)[2]) {
    const float2 t = __ldcs(reinterpret_cast<const float2*>(p));
    v[0] = t.x; v[1] = t.y;
}
__device__ __forceinline__ void ldv(const double* __restrict__ p, double (&v)[4]) {
    const double2 a = __ldcs(reinterpret_cast<const double2*>(p));
    const double2 b = __ldcs(reinterpret_cast<const double2*>(p + 2));
    v[0] = a.x; v[1] = a.y; v[2] = b.x; v[3] = b.y;
}
__device__ __forceinline__ void ldv(const double* __restrict__ p, double (&v)[2]) {
    const double2 t = __ldcs(reinterpret_cast<const double2*>(p));
    v[0] = t.x; v[1] = t.y;
}

__device__ __forceinline__ void ldv(const cfloat* __restrict__ p, cfloat (&v)[2]) {
    const float4 t = __ldcs(reinterpret_cast<const float4*>(p));
    v[0] = cfloat(t.x, t.y); v[1] = cfloat(t.z, t.w);
}
template <typename T>
__device__ __forceinline__ void ldv(const T* __restrict__ p, T (&v)[1]) {
    v[0] = ldcs(p);
}

// Entries per thread of the segmented kernel, per value type (mirrored by
// plan::coo_items on the host): 16 bytes of values per thread. f64 takes 2:
// with 4 the 32-register cap of SPMV_BOUNDS made the power-law tail 6 %
// slower in f64 (run A), while f32 gained 1 %.
#define COO_ITEMS_f32 4
#define COO_ITEMS_f64 2
#define COO_ITEMS_c64 2
#define COO_ITEMS_c128 1

// Row-sorted entries, ITEMS consecutive entries per thread (32 * ITEMS per
// warp and tile): the thread loads them with one vector load per array, so
// ITEMS gathers of x are in flight per thread instead of one; sums its own
// entries row by row (a row that starts and ends inside the thread is added
// to y at once); then a warp segmented scan over each thread's last row
// joins the rows that cross lanes, and the first row of a thread takes the
// scan of the lane before it. Every row piece is added with atomicAdd (a row
// can span tiles, and HYB adds onto the ELL part).
//
// With MERGE (spmv_coo_<t>_segmented_merge), each warp's last piece, the one
// that may go on into the next tile, is not added at once: the warps of a
// block leave those in shared memory and one thread adds them, pieces of the
// same row summed first, so a row of many tiles takes one atomic a block
// instead of one a warp on the one address where they serialise. The warps
// of a block then walk the same number of tiles (tiles past the end hold no
// entry), so every thread reaches the barriers. Measured on the H100
// (BENCHMARKS.md, issue 17), in f64: HYB on a matrix with dense rows 16.7 ->
// 14.3 us, on circ-8m 62.6 -> 59.4, COO on the arrowhead 5.8 -> 5.5; but
// 1-4 % slower on power laws of rows up to 1000 entries; in f32, 4-15 %
// faster on rows of 3 906 tiles and more (HYB on a circuit of 10M rows 349
// -> 297 us, on a dense row of 1M entries 86.4 -> 74.9), 2-9 % slower on
// rows of 625 tiles and fewer (the arrowhead, circ-8m). The host runs it
// on rows of 64 tiles or longer in values of 8 bytes or more, 2 048 tiles
// in f32 (plan::coo_merge).
template <typename T, int ITEMS, bool MERGE>
__device__ void coo_segmented(i64 nnz, const int* __restrict__ rows,
                              const int* __restrict__ cols,
                              const T* __restrict__ vals,
                              const T* __restrict__ x, T* __restrict__ y) {
    const int lane = threadIdx.x & 31;
    const int wib = threadIdx.x >> 5;  // warp in block
    const int nw = blockDim.x >> 5;
    const i64 tile = 32 * ITEMS;
    const int NONE = 0x7fffffff;  // key of a missing entry: after every row
    // MERGE: blocks walk tiles of nw warps; else each warp its own tiles
    const i64 first = MERGE ? (i64)blockIdx.x * nw * tile : (global_thread_id() >> 5) * tile;
    const i64 step = MERGE ? (i64)gridDim.x * nw * tile
                           : (((i64)gridDim.x * blockDim.x) >> 5) * tile;
    for (i64 base = first; base < nnz; base += step) {
        const i64 k0 = base + (MERGE ? wib * tile : 0) + (i64)lane * ITEMS;
        int r[ITEMS];
        T p[ITEMS];
        if (k0 + ITEMS <= nnz) {
            int c[ITEMS];
            T v[ITEMS];
            ldv(rows + k0, r);
            ldv(cols + k0, c);
            ldv(vals + k0, v);
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) p[j] = v[j] * ld_pinned(x + c[j]);
        } else {
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                const i64 k = k0 + j;
                r[j] = NONE;
                p[j] = T(0);
                if (k < nnz) {
                    r[j] = ldcs(rows + k);
                    p[j] = ldcs(vals + k) * ld_pinned(x + ldcs(cols + k));
                }
            }
        }
        // y is added to from here on: as HYB's tail, after the ELL part
        dep_wait();
        // the thread's own rows: the first piece waits for a carry, pieces
        // in the middle are complete, the last goes into the scan
        T head = T(0);
        bool multi = false;
        int cur = r[0];
        T acc = p[0];
#pragma unroll
        for (int j = 1; j < ITEMS; ++j) {
            if (r[j] != cur) {
                if (!multi) {
                    head = acc;
                    multi = true;
                } else if (cur != NONE) {
                    atomic_add(y + cur, acc);
                }
                cur = r[j];
                acc = p[j];
            } else {
                acc += p[j];
            }
        }
        // keys are non-decreasing across lanes, so equal last rows mean the
        // lanes in between hold only that row
        const T scan = warp_segmented_scan(cur, acc);
        const T prev = shfl_up(scan, 1);
        const int prev_key = __shfl_up_sync(0xffffffffu, cur, 1);
        const int next_first = __shfl_down_sync(0xffffffffu, r[0], 1);
        if (multi && r[0] != NONE) {
            atomic_add(y + r[0], head + ((lane > 0 && prev_key == r[0]) ? prev : T(0)));
        }
        if (cur != NONE && (lane == 31 ? !MERGE : next_first != cur)) {
            atomic_add(y + cur, scan);
        }
        if constexpr (MERGE) {
            __shared__ int tail_row[32];
            __shared__ T tail_sum[32];
            // the warp's last piece (lane 31's row; NONE past the end)
            if (lane == 31) {
                tail_row[wib] = cur;
                tail_sum[wib] = scan;
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                int row = tail_row[0];
                T sum = tail_sum[0];
                for (int w = 1; w < nw; ++w) {
                    if (tail_row[w] == row) {
                        sum += tail_sum[w];
                    } else {
                        if (row != NONE) atomic_add(y + row, sum);
                        row = tail_row[w];
                        sum = tail_sum[w];
                    }
                }
                if (row != NONE) atomic_add(y + row, sum);
            }
            __syncthreads();
        }
    }
}

#define COO(t, T)                                                                          \
    extern "C" __global__ void SPMV_BOUNDS spmv_coo_##t(i64 nnz, const int* rows, const int* cols, \
                                                       const T* vals, const T* x, T* y) {   \
        coo_atomic<T>(nnz, rows, cols, vals, x, y);                                        \
    }                                                                                      \
    extern "C" __global__ void SPMV_BOUNDS spmv_coo_##t##_segmented(                       \
        i64 nnz, const int* rows, const int* cols, const T* vals, const T* x, T* y) {      \
        coo_segmented<T, COO_ITEMS_##t, false>(nnz, rows, cols, vals, x, y);               \
    }                                                                                      \
    extern "C" __global__ void SPMV_BOUNDS spmv_coo_##t##_segmented_merge(                 \
        i64 nnz, const int* rows, const int* cols, const T* vals, const T* x, T* y) {      \
        coo_segmented<T, COO_ITEMS_##t, true>(nnz, rows, cols, vals, x, y);                \
    }
SPMV_TYPES(COO)
