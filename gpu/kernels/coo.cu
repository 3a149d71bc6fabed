// coo.cu -- SpMV on coordinate triplets.
//
// spmv_coo_<t>:           one thread per entry, atomicAdd into y (y zeroed
//                         before the launch). Works for any entry order.
// spmv_coo_<t>_segmented: entries sorted by row. Each warp takes 128-entry
//                         tiles (4 entries a thread, vector loads), reduces
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
        atomicAdd(&y[ldcs(rows + k)], ldcs(vals + k) * ld(x + ldcs(cols + k)));
    }
}

// Four consecutive entries of each array, one vector load each (streaming):
// `k` is a multiple of 4 and the arrays start 256-byte aligned (cudaMalloc).
__device__ __forceinline__ void ld4(const int* __restrict__ p, int v[4]) {
    const int4 t = __ldcs(reinterpret_cast<const int4*>(p));
    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
}
__device__ __forceinline__ void ld4(const float* __restrict__ p, float v[4]) {
    const float4 t = __ldcs(reinterpret_cast<const float4*>(p));
    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
}
__device__ __forceinline__ void ld4(const double* __restrict__ p, double v[4]) {
    const double2 a = __ldcs(reinterpret_cast<const double2*>(p));
    const double2 b = __ldcs(reinterpret_cast<const double2*>(p + 2));
    v[0] = a.x; v[1] = a.y; v[2] = b.x; v[3] = b.y;
}

// Entries per thread of the segmented kernel (plan::COO_ITEMS on the host).
#define COO_ITEMS 4

// Row-sorted entries, COO_ITEMS consecutive entries per thread (128 per warp
// and tile): the thread loads them with one vector load per array, so four
// gathers of x are in flight per thread instead of one; sums its own entries
// row by row (a row that starts and ends inside the thread is added to y at
// once); then a warp segmented scan over each thread's last row joins the
// rows that cross lanes, and the first row of a thread takes the scan of the
// lane before it. Every row piece is added with atomicAdd (a row can span
// tiles, and HYB adds onto the ELL part).
template <typename T>
__device__ void coo_segmented(i64 nnz, const int* __restrict__ rows,
                              const int* __restrict__ cols,
                              const T* __restrict__ vals,
                              const T* __restrict__ x, T* __restrict__ y) {
    const int lane = threadIdx.x & 31;
    const i64 warp = global_thread_id() >> 5;
    const i64 nwarps = ((i64)gridDim.x * blockDim.x) >> 5;
    const int NONE = 0x7fffffff;  // key of a missing entry: after every row
    for (i64 base = warp * (32 * COO_ITEMS); base < nnz; base += nwarps * (32 * COO_ITEMS)) {
        const i64 k0 = base + (i64)lane * COO_ITEMS;
        int r[COO_ITEMS];
        T p[COO_ITEMS];
        if (k0 + COO_ITEMS <= nnz) {
            int c[COO_ITEMS];
            T v[COO_ITEMS];
            ld4(rows + k0, r);
            ld4(cols + k0, c);
            ld4(vals + k0, v);
#pragma unroll
            for (int j = 0; j < COO_ITEMS; ++j) p[j] = v[j] * ld(x + c[j]);
        } else {
#pragma unroll
            for (int j = 0; j < COO_ITEMS; ++j) {
                const i64 k = k0 + j;
                r[j] = NONE;
                p[j] = T(0);
                if (k < nnz) {
                    r[j] = ldcs(rows + k);
                    p[j] = ldcs(vals + k) * ld(x + ldcs(cols + k));
                }
            }
        }
        // the thread's own rows: the first piece waits for a carry, pieces
        // in the middle are complete, the last goes into the scan
        T first = T(0);
        bool multi = false;
        int cur = r[0];
        T acc = p[0];
#pragma unroll
        for (int j = 1; j < COO_ITEMS; ++j) {
            if (r[j] != cur) {
                if (!multi) {
                    first = acc;
                    multi = true;
                } else if (cur != NONE) {
                    atomicAdd(&y[cur], acc);
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
        const T prev = __shfl_up_sync(0xffffffffu, scan, 1);
        const int prev_key = __shfl_up_sync(0xffffffffu, cur, 1);
        const int next_first = __shfl_down_sync(0xffffffffu, r[0], 1);
        if (multi && r[0] != NONE) {
            atomicAdd(&y[r[0]], first + ((lane > 0 && prev_key == r[0]) ? prev : T(0)));
        }
        if (cur != NONE && (lane == 31 || next_first != cur)) {
            atomicAdd(&y[cur], scan);
        }
    }
}

extern "C" __global__ void SPMV_BOUNDS spmv_coo_f32(i64 nnz, const int* rows, const int* cols,
                                        const float* vals, const float* x, float* y) {
    coo_atomic<float>(nnz, rows, cols, vals, x, y);
}
extern "C" __global__ void SPMV_BOUNDS spmv_coo_f64(i64 nnz, const int* rows, const int* cols,
                                        const double* vals, const double* x, double* y) {
    coo_atomic<double>(nnz, rows, cols, vals, x, y);
}
extern "C" __global__ void SPMV_BOUNDS spmv_coo_f32_segmented(i64 nnz, const int* rows, const int* cols,
                                                  const float* vals, const float* x, float* y) {
    coo_segmented<float>(nnz, rows, cols, vals, x, y);
}
extern "C" __global__ void SPMV_BOUNDS spmv_coo_f64_segmented(i64 nnz, const int* rows, const int* cols,
                                                  const double* vals, const double* x, double* y) {
    coo_segmented<double>(nnz, rows, cols, vals, x, y);
}
