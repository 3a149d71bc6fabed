// csr_merge.cu -- merge-path CSR SpMV (Merrill & Garland 2016), for skewed
// row lengths (csr_balanced.cu splits the entries only).
//
// The work is the merge of the row ends (row_ptr[1..=nrows]) with the entry
// indices (0..nnz): nrows + nnz items, cut into equal chunks of `chunk` items,
// one chunk per warp, whatever the row lengths. A row of a million entries is
// spread over many warps, a run of short (or empty) rows is packed into one,
// and a warp never does more than `chunk` items of either kind.
//
// Where each warp's chunk starts on the merge path (the rows completed before
// it) is found once per matrix and chunk size by merge_partition, one thread
// per warp (the host runs it when it prepares the kernel, outside the timed
// product, as cuSPARSE's CSR ALG2 does in its preprocessing); a warp reads
// its start with one load. It then walks its chunk in tiles of up to
// 32 * ITEMS items:
// 1. the ends of the next 32 * WROWS rows (the window) are in shared memory,
//    a ring: as the tiles advance, only the row ends the ring lacks, up to
//    the chunk's last row, are loaded (coalesced), so each is read once per
//    warp; a tile ends by the end of the window's last row;
// 2. a tile wholly inside one row (along a long row) sums its products in
//    registers: ITEMS independent loads per lane, a warp sum, no search;
// 3. any other tile: its end, and each lane's start, are found by merge-path
//    searches in shared memory, its products vals[k] * x[col[k]] are loaded
//    coalesced (ITEMS independent loads per lane) into shared memory, and each
//    lane walks its ITEMS items: an entry adds its product, a row end closes
//    the row. A lane's first row may have begun in lanes before it: it takes
//    their sum from a warp segmented scan over each lane's last row. The
//    tile's closed rows are gathered in shared memory and stored together
//    (coalesced). The sum of the row still open at the tile's end is carried
//    to the next tile.
// Tiles and chunks start on 128-byte lines of the entry arrays where they
// can (MP_ALIGN entries): a tile along a long row ends on a multiple of
// MP_ALIGN entries; a tile of rows whose mean length in the tile is over
// MP_MIX_MEAN and that holds at least MP_MIX_ROWS rows ends at the last row
// end before such a multiple (one more search in the window); and
// merge_partition moves each chunk's start back to the path point at the
// multiple at or before it where that is at most MP_ALIGN rows back. The entry arrays are loaded evict-first, so a
// line two tiles (or two warps) share was read twice from DRAM; measured
// with Nsight Compute on the alpha 2.1 power law (f32), the kernel read
// 625 MB from DRAM where cuSPARSE read 603. Chosen with
// scripts/merge-variants.py on 13 matrices (BENCHMARKS.md, issue 17):
// 2.7 % faster in geometric mean in f32 (up to 6 % at alpha 1.6), 1.9 % in
// f64; the gates keep the mixed tiles of FEM matrices and 3D stencils,
// which lost 3-4 % when shortened, as they were.
// Every row is stored once, by the warp that holds its end, so y needs no
// zeroing. The row still open at a chunk's end leaves its sum in the warp's
// carry slot (carry_rows / carry_vals), and merge_fixup adds the slots into
// y after the product (a row spanning several chunks gets one per chunk).
//
// spmv_csr_merge_<t>_acc adds its closed rows into y instead of storing
// them: the column-panel kernel (GpuKernel::CsrPanels) runs the product on
// each column panel of the matrix in turn, the first storing y and the
// others adding, so that each gathers from a part of x that stays in L2.

// Items per lane of a tile, rows of the window in units of 32 (WIN; a power
// of two: the window is a ring) and resident blocks asked of the compiler
// (__launch_bounds__, hence the register cap), per value type (mirrored by
// plan::merge_items and plan::merge_window). Chosen on the H100 with
// scripts/merge-variants.py among 8/12/16 items, windows of 2/4/8 and 4/5
// blocks, on uncapped (alpha 1.6, 2.1, 2.4) and capped power laws
// (BENCHMARKS.md, issue 17): 12 items for f32 and f64, a window of 4 * 32
// rows for f32 and 2 * 32 for f64, 4 blocks (64 registers). Each warp takes
// (32 * ITEMS + WIN) values and WIN offsets of shared memory: at most 48 KB
// for a block of 8 warps. Each can be set with -D (scripts/merge-variants.py
// does).
#ifndef MP_ITEMS_f32
#define MP_ITEMS_f32 12
#endif
#ifndef MP_ITEMS_f64
#define MP_ITEMS_f64 12
#endif
#ifndef MP_ITEMS_c64
#define MP_ITEMS_c64 8
#endif
#ifndef MP_ITEMS_c128
#define MP_ITEMS_c128 4
#endif
#ifndef MP_WIN_f32
#define MP_WIN_f32 4
#endif
#ifndef MP_WIN_f64
#define MP_WIN_f64 2
#endif
#ifndef MP_WIN_c64
#define MP_WIN_c64 2
#endif
#ifndef MP_WIN_c128
#define MP_WIN_c128 2
#endif
#ifndef MP_BLOCKS_f32
#define MP_BLOCKS_f32 4
#endif
#ifndef MP_BLOCKS_f64
#define MP_BLOCKS_f64 4
#endif
#ifndef MP_BLOCKS_c64
#define MP_BLOCKS_c64 6
#endif
#ifndef MP_BLOCKS_c128
#define MP_BLOCKS_c128 6
#endif
// Warps per block (plan::BLOCK / 32).
#define MP_WARPS 8
// Alignment of tiles and chunks, in entries, and the gates of the mixed
// tiles' alignment (above; mirrored by plan::MERGE_ALIGN, MERGE_MIX_MEAN,
// MERGE_MIX_ROWS).
#ifndef MP_ALIGN
#define MP_ALIGN 32
#endif
#ifndef MP_MIX_MEAN
#define MP_MIX_MEAN 8
#endif
#ifndef MP_MIX_ROWS
#define MP_MIX_ROWS 16
#endif

// Rows completed before diagonal `d` of the merge path: the first x in
// [max(0, d - nnz), min(d, nrows)] whose row ends at or after entry d - x
// (row_ptr[x + 1] + x >= d). Binary search by one thread.
__device__ __forceinline__ int merge_rows_before(i64 d, int nrows, i64 nnz,
                                                 const ofs_t* __restrict__ row_ptr) {
    i64 lo = max((i64)0, d - nnz);
    i64 hi = min(d, (i64)nrows);
    while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if ((i64)ld(row_ptr + mid + 1) + mid < d) lo = mid + 1; else hi = mid;
    }
    return (int)lo;
}

// The start of every warp's chunk, and the end of the last: for w in
// 0..=warps, starts[2w] = rows completed before its first item and
// starts[2w + 1] = how far that item lies before diagonal w * chunk (the
// last: the end of the path). A chunk starts at the path point whose entry
// index is the multiple of MP_ALIGN at or before the diagonal's (the rows
// ending at or before that entry completed): never later than the
// diagonal, and in order, since both coordinates grow with the diagonal.
// Unless that point lies more than MP_ALIGN rows back: inside a run of
// empty rows every diagonal would move back to the run's start, and the
// last chunk of the run would walk all of it alone (a column panel of a
// banded matrix, whose rows outside the band are empty in it: 0.3 ms ->
// 247 ms, one warp along 8M rows); the start then stays on the diagonal.
// A start moves back by at most MP_ALIGN rows and MP_ALIGN - 1 entries,
// and never to the diagonal of the chunk before (at or after that chunk's
// start), so the starts stay in order. One thread per slot.
extern "C" __global__ void merge_partition(int nrows, i64 nnz, int chunk, i64 warps,
                                           const ofs_t* __restrict__ row_ptr,
                                           int* __restrict__ starts) {
    const i64 w = global_thread_id();
    if (w > warps) return;
    const i64 d = min(w * (i64)chunk, (i64)nrows + nnz);
    int x = merge_rows_before(d, nrows, nnz, row_ptr);
    i64 e = d - x;
    const i64 ea = e & ~(i64)(MP_ALIGN - 1);
    if (w > 0 && w < warps && ea < e) {
        // the rows ending at or before entry ea: the first row in [0, x]
        // that ends after it
        int lo = 0, hi = x;
        while (lo < hi) {
            const int mid = (lo + hi) >> 1;
            if ((i64)ld(row_ptr + mid + 1) <= ea) lo = mid + 1; else hi = mid;
        }
        if (x - lo <= MP_ALIGN && lo + ea > d - chunk) {
            x = lo;
            e = ea;
        }
    }
    starts[2 * w] = x;
    starts[2 * w + 1] = (int)(d - (x + e));
}

// The same search inside a tile, in shared memory: rows completed before
// relative diagonal `dd`, given the window `s_end` (a ring of WIN row ends,
// row r in slot r & (WIN - 1); `base` is the slot of the tile's first row),
// `ye` entries consumed before the tile, `rows_left` rows (at most WIN) and
// `entries_left` entries from the tile's start. Binary search (per lane), in
// offset arithmetic: every row end in the window is >= ye.
template <int WIN>
__device__ __forceinline__ int merge_search_tile(int dd, const ofs_t* s_end, int base, ofs_t ye,
                                                 int rows_left, ofs_t entries_left) {
    int lo = entries_left < (ofs_t)dd ? dd - (int)entries_left : 0;
    int hi = min(dd, rows_left);
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (s_end[(base + mid) & (WIN - 1)] - ye <= (ofs_t)(dd - mid - 1)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// ACC: add the closed rows into y instead of storing them (every column
// panel after the first, GpuKernel::CsrPanels: y = A[:, panel 0] x + ...).
template <typename T, int ITEMS, int WROWS, bool ACC>
__device__ void csr_merge(int nrows, i64 nnz, int chunk, const int* __restrict__ starts,
                          int* __restrict__ carry_rows, T* __restrict__ carry_vals,
                          const ofs_t* __restrict__ row_ptr, const int* __restrict__ col_idx,
                          const T* __restrict__ vals, const T* __restrict__ x,
                          T* __restrict__ y) {
    dep_launch();  // the carry fix-up may start (it waits before reading)
    constexpr int TILE = 32 * ITEMS;
    constexpr int WIN = 32 * WROWS;
    static_assert((WIN & (WIN - 1)) == 0, "the window is a ring of a power-of-two size");
    // per warp: products, then the row sums of a tile (both T), then row ends
    constexpr int WARP_BYTES = (TILE + WIN) * sizeof(T) + WIN * sizeof(ofs_t);
    __shared__ __align__(16) unsigned char smem[MP_WARPS * WARP_BYTES];
    const int lane = threadIdx.x & 31;
    const int wib = threadIdx.x >> 5;
    T* s_prod = reinterpret_cast<T*>(smem + wib * WARP_BYTES);
    T* s_y = s_prod + TILE;
    ofs_t* s_end = reinterpret_cast<ofs_t*>(s_y + WIN);

    const i64 total = (i64)nrows + nnz;
    const i64 warp = global_thread_id() >> 5;
    if (warp * (i64)chunk >= total) return;  // warp-uniform
    // the chunk, each end moved back to its aligned path point where the
    // partition did (merge_partition)
    const i64 d_begin = warp * (i64)chunk - ld(starts + 2 * warp + 1);
    const i64 d_end = min((warp + 1) * (i64)chunk, total) - ld(starts + 2 * warp + 3);

    int xr = ld(starts + 2 * warp);
    // the rows the chunk touches end before this one: those completed
    // before its end and the row open there (its end tells the entries
    // before the chunk's end apart from the row ends)
    const int row_stop = min(nrows, ld(starts + 2 * warp + 2) + 1);
    ofs_t ye = (ofs_t)(d_begin - xr);  // entries consumed
    int loaded = xr;  // rows below this one have their end in the ring
    T carry = T(0);   // sum so far of row xr (lane 0 adds it)

    for (i64 d = d_begin; d < d_end;) {
        int tl = (int)min((i64)TILE, d_end - d);
        const int rows_left_all = row_stop - xr;
        const int rows_left = min(rows_left_all, WIN);
        const ofs_t entries_left = (ofs_t)(nnz - ye);
        // the ring holds rows xr .. xr + rows_left - 1: load the ones it
        // lacks (each row end is loaded once per warp, coalesced), never
        // past the chunk's last row: a full window at a chunk's start read
        // row ends a chunk of 20-40 rows (a 3D stencil) never uses, 3-9 %
        // of the product's time on 3D stencils and FEM matrices (H100, H200)
        if (loaded < xr + rows_left) {
            const int n = xr + rows_left - loaded;
#pragma unroll
            for (int m = 0; m < WROWS; ++m) {
                const int j = lane + 32 * m;
                if (j < n) s_end[(loaded + j) & (WIN - 1)] = ld(row_ptr + loaded + j + 1);
            }
            loaded += n;
            __syncwarp();
        }
        const int base = xr & (WIN - 1);
        if (rows_left_all > WIN) {
            // the tile ends by the end of the window's last row
            tl = (int)min((i64)tl, (i64)(s_end[(base + WIN - 1) & (WIN - 1)] - ye) + WIN);
        }
        if (s_end[base] - ye >= (ofs_t)tl) {
            // the whole tile is entries of row xr (along a long row): sum
            // them in registers, no search, no shared memory, no scan; the
            // tile ends on an aligned entry unless it ends the chunk
            const ofs_t ea = (ye + (ofs_t)tl) & ~(ofs_t)(MP_ALIGN - 1);
            if (ea > ye && d + tl < d_end) tl = (int)(ea - ye);
            T acc = T(0);
#pragma unroll
            for (int m = 0; m < ITEMS; ++m) {
                const int j = lane + 32 * m;
                if (j < tl) acc += ldcs(vals + ye + j) * ld(x + ldcs(col_idx + ye + j));
            }
            carry += subwarp_sum<32>(acc);
            ye += tl;
            d += tl;
            continue;
        }
        int tile_rows = merge_search_tile<WIN>(tl, s_end, base, ye, rows_left, entries_left);
        int tile_entries = tl - tile_rows;
        if (d + tl < d_end && tile_entries > MP_MIX_MEAN * tile_rows && tile_rows >= MP_MIX_ROWS) {
            // end the tile at the last row end at or before an aligned
            // entry inside it: (rows ending there, that entry) is a point
            // of the path (every row left out ends after it)
            const ofs_t ea = (ye + (ofs_t)tile_entries) & ~(ofs_t)(MP_ALIGN - 1);
            if (ea > ye && ea < ye + (ofs_t)tile_entries) {
                int lo = 0, hi = tile_rows;
                while (lo < hi) {
                    const int mid = (lo + hi) >> 1;
                    if (s_end[(base + mid) & (WIN - 1)] <= ea) lo = mid + 1; else hi = mid;
                }
                tile_rows = lo;
                tile_entries = (int)(ea - ye);
                tl = tile_rows + tile_entries;
            }
        }
#pragma unroll
        for (int m = 0; m < ITEMS; ++m) {
            const int j = lane + 32 * m;
            if (j < tile_entries) {
                s_prod[j] = ldcs(vals + ye + j) * ld(x + ldcs(col_idx + ye + j));
            }
        }
        __syncwarp();

        const int d0 = min(lane * ITEMS, tl);
        const int d1 = min(d0 + ITEMS, tl);
        int xl = merge_search_tile<WIN>(d0, s_end, base, ye, rows_left, entries_left);
        int yl = d0 - xl;
        T acc = lane == 0 ? carry : T(0);
        T first_val = T(0);
        int first = -1;  // the lane's first closed row (relative), -1: none
#pragma unroll
        for (int s = 0; s < ITEMS; ++s) {
            if (d0 + s < d1) {
                if (ye + yl < s_end[(base + xl) & (WIN - 1)]) {
                    acc += s_prod[yl];
                    ++yl;
                } else {
                    if (first < 0) {
                        first = xl;
                        first_val = acc;
                    } else {
                        s_y[xl] = acc;  // begun and closed in this lane
                    }
                    acc = T(0);
                    ++xl;
                }
            }
        }
        // lanes are contiguous on the path: a lane's first row is the row
        // the lane before it ended in, so that lane's scan is its missing part
        const int key = xr + xl;
        const T scan = warp_segmented_scan(key, acc);
        const T prev = shfl_up(scan, 1);
        if (first >= 0) s_y[first] = first_val + (lane > 0 ? prev : T(0));
        __syncwarp();
        // the tile's closed rows, stored together (coalesced)
#pragma unroll
        for (int m = 0; m < WROWS; ++m) {
            const int j = lane + 32 * m;
            if (j < tile_rows) {
                T v = s_y[j];
                if (ACC) v += y[xr + j];
                stcs(y + xr + j, v);
            }
        }
        carry = shfl(scan, 31);
        xr += tile_rows;
        ye += tile_entries;
        d += tl;
        __syncwarp();  // the next tile overwrites s_prod, s_y and the ring
    }
    // the row still open at the chunk's end goes on in the next chunk
    if (lane == 0) {
        carry_rows[warp] = xr < nrows ? xr : -1;
        carry_vals[warp] = carry;
    }
}

// merge_fixup_<t>: adds each warp's carry slot into y, after the product
// (one thread per warp of the product, in whole warps). The slots' rows
// ascend (-1, none, only at the end), so the slots of one row are a run:
// a warp segmented sum first, and one atomic per run and warp. A row of
// millions of entries spans thousands of chunks; their atomics on one
// address took 9.6 us of a 0.39 ms product on the alpha 1.6 power law
// (H200, f64), where a fix-up without such a row takes 4 us.
template <typename T>
__device__ __forceinline__ void merge_fixup(i64 warps, const int* __restrict__ carry_rows,
                                            const T* __restrict__ carry_vals, T* y) {
    dep_wait();  // the carries are the product's
    const i64 w = global_thread_id();
    const int row = w < warps ? carry_rows[w] : -1;
    const T sum = warp_segmented_scan(row, w < warps ? carry_vals[w] : T(0));
    const int next = __shfl_down_sync(0xffffffffu, row, 1);
    if (row >= 0 && ((threadIdx.x & 31) == 31 || next != row)) atomic_add(y + row, sum);
}

#define CSR_MERGE(t, T)                                                                    \
    extern "C" __global__ void __launch_bounds__(256, MP_BLOCKS_##t) spmv_csr_merge_##t(  \
        int nrows, i64 nnz, int chunk, const int* starts, int* carry_rows, T* carry_vals,  \
        const ofs_t* row_ptr, const int* col_idx, const T* vals, const T* x, T* y) {       \
        csr_merge<T, MP_ITEMS_##t, MP_WIN_##t, false>(nrows, nnz, chunk, starts, carry_rows, \
                                                      carry_vals, row_ptr, col_idx, vals, x, y); \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(256, MP_BLOCKS_##t)                       \
        spmv_csr_merge_##t##_acc(int nrows, i64 nnz, int chunk, const int* starts,         \
                                 int* carry_rows, T* carry_vals, const ofs_t* row_ptr,     \
                                 const int* col_idx, const T* vals, const T* x, T* y) {    \
        csr_merge<T, MP_ITEMS_##t, MP_WIN_##t, true>(nrows, nnz, chunk, starts, carry_rows, \
                                                     carry_vals, row_ptr, col_idx, vals, x, y); \
    }                                                                                      \
    extern "C" __global__ void merge_fixup_##t(i64 warps, const int* carry_rows,           \
                                               const T* carry_vals, T* y) {                \
        merge_fixup<T>(warps, carry_rows, carry_vals, y);                                  \
    }
SPMV_TYPES(CSR_MERGE)

// Column panels of a CSR matrix, built on the device (GpuKernel::CsrPanels,
// DevCsr::column_panels), so the host holds row offsets only, never the
// entries. panel_split: for every cut between panels (cut-major) and every
// row, the first entry of the row whose column reaches the cut (a row's
// columns ascend: a binary search). The host turns those positions into each
// panel's row pointers. panel_copy: for every row, its `words`-word items
// from src_start[row] to the panel's row range dst_ptr[row]..dst_ptr[row+1]
// (the column indices: 1 word; the values: 1, 2 or 4), one warp per row.
extern "C" __global__ void panel_split(int nrows, int ncuts, const int* __restrict__ cuts,
                                       const ofs_t* __restrict__ row_ptr,
                                       const int* __restrict__ col_idx,
                                       ofs_t* __restrict__ split) {
    const i64 t = global_thread_id();
    if (t >= (i64)nrows * ncuts) return;
    const int c = (int)(t / nrows);
    const int r = (int)(t - (i64)c * nrows);
    const int cut = cuts[c];
    ofs_t lo = ld(row_ptr + r), hi = ld(row_ptr + r + 1);
    while (lo < hi) {
        const ofs_t mid = lo + ((hi - lo) >> 1);
        if (ld(col_idx + mid) < cut) lo = mid + 1; else hi = mid;
    }
    split[t] = lo;
}

extern "C" __global__ void panel_copy(int nrows, int words, const ofs_t* __restrict__ src_start,
                                      const ofs_t* __restrict__ dst_ptr,
                                      const unsigned* __restrict__ in,
                                      unsigned* __restrict__ out) {
    const i64 row = global_thread_id() >> 5;
    const int lane = threadIdx.x & 31;
    if (row >= nrows) return;
    const i64 src = (i64)ld(src_start + row) * words;
    const i64 dst = (i64)ld(dst_ptr + row) * words;
    const i64 n = ((i64)ld(dst_ptr + row + 1) - (i64)ld(dst_ptr + row)) * words;
    for (i64 k = lane; k < n; k += 32) out[dst + k] = in[src + k];
}
