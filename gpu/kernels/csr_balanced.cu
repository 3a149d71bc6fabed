// csr_balanced.cu -- load-balanced CSR SpMV for skewed row lengths.
//
// The nnz entries are cut into equal chunks of `chunk` entries (a multiple of
// 32), one chunk per warp, whatever the row lengths: a row of a million
// entries is spread over many warps and a run of short rows is packed into
// one. Each warp finds the row of its first entry by binary search in row_ptr,
// walks its chunk in 32-entry tiles (the row of each entry found by binary
// lifting over 32 row ends held in registers), reduces equal rows with a warp
// segmented scan and carries a row that continues into the next tile. A row that starts
// and ends inside the chunk is stored directly; a row cut by a chunk boundary
// is added with atomicAdd, so y must be zeroed before the launch (the host
// does, inside the timed region). This is the nnz-split half of merge-path
// SpMV (Merrill & Garland 2016) without the row-count term.

template <typename T>
__device__ void csr_balanced(int nrows, i64 nnz, int chunk,
                             const ofs_t* __restrict__ row_ptr,
                             const int* __restrict__ col_idx,
                             const T* __restrict__ vals, const T* __restrict__ x,
                             T* __restrict__ y) {
    const int lane = threadIdx.x & 31;
    const i64 warp = global_thread_id() >> 5;
    const i64 begin = warp * (i64)chunk;
    if (begin >= nnz) return;  // warp-uniform
    const i64 end = min(begin + (i64)chunk, nnz);

    // Row holding entry `begin`: the last r with row_ptr[r] <= begin.
    int lo = 0, hi = nrows;
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if ((i64)ld(row_ptr + mid) <= begin) lo = mid; else hi = mid - 1;
    }
    int row_cur = lo;
    int carry_row = -1;
    T carry = T(0);

    for (i64 tile = begin; tile < end; tile += 32) {
        const i64 k = tile + lane;
        const bool valid = k < end;
        // Row of entry k without a per-lane walk: lane j loads the end of row
        // row_cur + j (one coalesced load), and each lane counts the rows
        // that end at or before its entry by binary lifting over those 32
        // sorted ends with shuffles.
        const int rr = row_cur + lane;
        const i64 e = (rr < nrows) ? (i64)ld(row_ptr + rr + 1) : (i64)0x7fffffffffffffffLL;
        int lo = 0;
#pragma unroll
        for (int step = 16; step > 0; step >>= 1) {
            const i64 ej = __shfl_sync(0xffffffffu, e, lo + step - 1);
            if (ej <= k) lo += step;
        }
        const i64 elo = __shfl_sync(0xffffffffu, e, lo);
        if (elo <= k) lo += 1;  // all 32 rows end at or before k
        int r = row_cur + lo;
        T v = T(0);
        int key = nrows;  // larger than every row: invalid lanes form their own segment
        bool row_end = false;
        if (valid) {
            i64 end_r = elo;
            if (lo == 32) {
                // more than 32 rows (a run of empty rows) lie between: search
                int a = row_cur + 32, b = nrows - 1;
                while (a < b) {
                    const int mid = a + (b - a + 1) / 2;
                    if ((i64)ld(row_ptr + mid) <= k) a = mid; else b = mid - 1;
                }
                r = a;
                end_r = ld(row_ptr + r + 1);
            }
            key = r;
            v = ldcs(vals + k) * ld(x + ldcs(col_idx + k));
            row_end = (k + 1 == end_r);
        }
        if (lane == 0 && key == carry_row) v += carry;
        v = warp_segmented_scan(key, v);
        const int next_key = __shfl_down_sync(0xffffffffu, key, 1);
        const bool seg_end = (lane == 31) || (next_key != key);
        if (valid && seg_end) {
            if (row_end) {
                if ((i64)ld(row_ptr + r) >= begin) {
                    y[r] = v;  // the whole row lies in this chunk
                } else {
                    atomic_add(y + r, v);
                }
            } else if (k + 1 == end) {
                atomic_add(y + r, v);  // the row goes on in the next chunk
            }
            // else: lane 31 and the row goes on in the next tile -> carry
        }
        const int last_key = __shfl_sync(0xffffffffu, key, 31);
        const bool last_end = __shfl_sync(0xffffffffu, row_end, 31);
        carry = shfl(v, 31);
        carry_row = last_end ? -1 : last_key;
        row_cur = __shfl_sync(0xffffffffu, r, 31);
    }
}

#define CSR_BALANCED(t, T)                                                                 \
    extern "C" __global__ void SPMV_BOUNDS spmv_csr_balanced_##t(                          \
        int nrows, i64 nnz, int chunk, const ofs_t* row_ptr, const int* col_idx, const T* vals, \
        const T* x, T* y) {                                                                \
        csr_balanced<T>(nrows, nnz, chunk, row_ptr, col_idx, vals, x, y);                  \
    }
SPMV_TYPES(CSR_BALANCED)
