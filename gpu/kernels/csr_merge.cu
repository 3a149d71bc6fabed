// csr_merge.cu -- merge-path CSR SpMV (Merrill & Garland 2016), for skewed
// row lengths (csr_balanced.cu splits the entries only).
//
// The work is the merge of the row ends (row_ptr[1..=nrows]) with the entry
// indices (0..nnz): nrows + nnz items, cut into equal chunks of `chunk` items,
// one chunk per warp, whatever the row lengths. A row of a million entries is
// spread over many warps, a run of short (or empty) rows is packed into one,
// and a warp never does more than `chunk` items of either kind.
//
// A warp finds where its chunk starts on the merge path by a cooperative
// 32-way search over row_ptr (about log33(nrows) dependent loads), then walks
// its chunk in tiles of 32 * ITEMS items:
// 1. the ends of the next 32 * ITEMS rows go to shared memory (one coalesced
//    load; kept while the tile starts in the same row, as along a long row);
// 2. the tile's end, and each lane's start, are found by merge-path searches
//    in shared memory;
// 3. the tile's products vals[k] * x[col[k]] are loaded coalesced, ITEMS
//    independent loads per lane (this is what keeps loads in flight), into
//    shared memory;
// 4. each lane walks its ITEMS items: an entry adds its product, a row end
//    closes the row. A lane's first row may have begun in lanes before it: it
//    takes their sum from a warp segmented scan over each lane's last row;
//    rows begun and closed inside a lane are stored at once. The sum of the
//    row still open at the tile's end is carried to the next tile.
// A row cut by a chunk boundary is added with atomicAdd (y is zeroed before
// the launch, inside the timed region); every other row is stored once.

// Items per lane of a tile and resident blocks asked of the compiler
// (__launch_bounds__, hence the register cap), per value type (the items are
// mirrored by plan::merge_items). Chosen on the H100 among 4/8/16 items and
// 4/6/8 blocks on power-law (alpha 1.6, 2.1, 2.4) and 2D Laplacian matrices
// (BENCHMARKS.md, issue 17): f32 16 items at 4 blocks (64 registers: half
// the occupancy, but 16 loads in flight per lane); f64 8 items at 4 blocks
// with the products loaded before the search (MP_SPEC_f64 below, 64
// registers; chosen 2026-11-24 over 6 blocks without it; 16 items take 6 KB
// of shared memory per warp); complex128
// 4 items. Each tile takes 32 * ITEMS * (value + offset) bytes of shared
// memory per warp: at most 48 KB for a block of 8 warps. Each can be set with
// -D (scripts/merge-variants.py does).
#ifndef MP_ITEMS_f32
#define MP_ITEMS_f32 16
#endif
#ifndef MP_ITEMS_f64
#define MP_ITEMS_f64 8
#endif
#ifndef MP_ITEMS_c64
#define MP_ITEMS_c64 8
#endif
#ifndef MP_ITEMS_c128
#define MP_ITEMS_c128 4
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
// When a tile's products are loaded (load_products), per value type: 0 after
// its rows are searched, 1 before (f64: 8 % faster on a 2D Laplacian, 3-7 %
// on uncapped power laws, 3 % slower on a capped one). f32 keeps 0: at 16
// items the early products spill. (Loading them while the tile before is
// walked was slower everywhere, its registers spilling: BENCHMARKS.md.)
#ifndef MP_SPEC_f32
#define MP_SPEC_f32 0
#endif
#ifndef MP_SPEC_f64
#define MP_SPEC_f64 1
#endif
#ifndef MP_SPEC_c64
#define MP_SPEC_c64 0
#endif
#ifndef MP_SPEC_c128
#define MP_SPEC_c128 0
#endif
// Warps per block (plan::BLOCK / 32).
#define MP_WARPS 8

// Rows completed before diagonal `d` of the merge path: the first x in
// [max(0, d - nnz), min(d, nrows)] whose row ends at or after entry d - x
// (row_ptr[x + 1] > d - x - 1). The 32 lanes probe 32 evenly spaced x per
// round and keep the interval where the answer changes sign (the predicate
// is monotone), so about log33(nrows) rounds of one load each. Warp-uniform.
__device__ __forceinline__ i64 merge_search_global(i64 d, int nrows, i64 nnz,
                                                   const ofs_t* __restrict__ row_ptr) {
    const int lane = threadIdx.x & 31;
    i64 lo = max((i64)0, d - nnz);
    i64 hi = min(d, (i64)nrows);
    while (hi - lo > 32) {
        const i64 span = hi - lo;
        const i64 p = lo + span * (lane + 1) / 33;  // strictly increasing, lo < p < hi
        const bool before = (i64)ld(row_ptr + p + 1) <= d - p - 1;
        const int c = __popc(__ballot_sync(0xffffffffu, before));
        const i64 nlo = c > 0 ? __shfl_sync(0xffffffffu, p, c - 1) + 1 : lo;
        const i64 nhi = c < 32 ? __shfl_sync(0xffffffffu, p, c < 32 ? c : 31) : hi;
        lo = nlo;
        hi = nhi;
    }
    const i64 p = lo + lane;
    const bool before = p < hi && (i64)ld(row_ptr + p + 1) <= d - p - 1;
    return lo + __popc(__ballot_sync(0xffffffffu, before));
}

// The same search inside a tile, in shared memory: rows completed before
// relative diagonal `dd`, given the ends `s_end` of the rows from the tile's
// first row on, `ye` entries consumed before the tile, `rows_left` rows and
// `entries_left` entries from the tile's start. Binary search (per lane), in
// offset arithmetic: every s_end[j] >= ye.
__device__ __forceinline__ int merge_search_tile(int dd, const ofs_t* s_end, ofs_t ye,
                                                 int rows_left, ofs_t entries_left) {
    int lo = entries_left < (ofs_t)dd ? dd - (int)entries_left : 0;
    int hi = min(dd, rows_left);
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (s_end[mid] - ye <= (ofs_t)(dd - mid - 1)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// The products vals[k] * x[col[k]] of the TILE entries from `base` on
// (`left` entries remain; past them 0), ITEMS independent loads per lane.
// SPEC 1 loads a tile's products before its rows are searched: a tile takes
// at most TILE entries from its first on, so those are loaded before it is
// known how many it takes (one dependent global round trip less per tile);
// the entries it leaves to the next tile are loaded again there, mostly from
// cache.
template <typename T, int ITEMS>
__device__ __forceinline__ void load_products(T (&p)[ITEMS], ofs_t base, ofs_t left, int lane,
                                              const int* __restrict__ col_idx,
                                              const T* __restrict__ vals, const T* __restrict__ x) {
#pragma unroll
    for (int m = 0; m < ITEMS; ++m) {
        const int j = lane + 32 * m;
        p[m] = (ofs_t)j < left ? ldcs(vals + base + j) * ld(x + ldcs(col_idx + base + j)) : T(0);
    }
}

template <typename T, int ITEMS, int SPEC>
__device__ void csr_merge(int nrows, i64 nnz, int chunk,
                             const ofs_t* __restrict__ row_ptr,
                             const int* __restrict__ col_idx,
                             const T* __restrict__ vals, const T* __restrict__ x,
                             T* __restrict__ y) {
    constexpr int TILE = 32 * ITEMS;
    // products of every warp first (the larger alignment), then row ends
    __shared__ __align__(16) unsigned char smem[MP_WARPS * TILE * (sizeof(T) + sizeof(ofs_t))];
    const int lane = threadIdx.x & 31;
    const int wib = threadIdx.x >> 5;
    T* s_prod = reinterpret_cast<T*>(smem) + wib * TILE;
    ofs_t* s_end = reinterpret_cast<ofs_t*>(smem + MP_WARPS * TILE * sizeof(T)) + wib * TILE;

    const i64 total = (i64)nrows + nnz;
    const i64 d_begin = (global_thread_id() >> 5) * (i64)chunk;
    if (d_begin >= total) return;  // warp-uniform
    const i64 d_end = min(d_begin + (i64)chunk, total);

    int xr = (int)merge_search_global(d_begin, nrows, nnz, row_ptr);  // rows completed
    ofs_t ye = (ofs_t)(d_begin - xr);                                   // entries consumed
    const int first_row = xr;
    // the warp's first row began in an earlier chunk: its pieces are added
    const bool first_cut = xr < nrows && ye > ld(row_ptr + xr);
    int window = -1;  // first row whose end is in s_end
    T carry = T(0);   // sum so far of row xr (lane 0 adds it)

    for (i64 d = d_begin; d < d_end; d += TILE) {
        const int tl = (int)min((i64)TILE, d_end - d);
        const int rows_left = nrows - xr;
        const ofs_t entries_left = (ofs_t)(nnz - ye);
        T prod[ITEMS];  // SPEC 1: the products of the next TILE entries
        if constexpr (SPEC == 1) {
            load_products<T, ITEMS>(prod, ye, entries_left, lane, col_idx, vals, x);
        }
        if (xr != window) {
#pragma unroll
            for (int m = 0; m < ITEMS; ++m) {
                const int j = lane + 32 * m;
                // past the last row: never read (the searches stop at rows_left)
                s_end[j] = j < rows_left ? ld(row_ptr + xr + j + 1) : (ofs_t)0;
            }
            window = xr;
            __syncwarp();
        }
        const int tile_rows = merge_search_tile(tl, s_end, ye, rows_left, entries_left);
        const int tile_entries = tl - tile_rows;
#pragma unroll
        for (int m = 0; m < ITEMS; ++m) {
            const int j = lane + 32 * m;
            if constexpr (SPEC == 1) {
                s_prod[j] = prod[m];
            } else if (j < tile_entries) {
                s_prod[j] = ldcs(vals + ye + j) * ld(x + ldcs(col_idx + ye + j));
            }
        }
        __syncwarp();

        const int d0 = min(lane * ITEMS, tl);
        const int d1 = min(d0 + ITEMS, tl);
        int xl = merge_search_tile(d0, s_end, ye, rows_left, entries_left);
        int yl = d0 - xl;
        T acc = lane == 0 ? carry : T(0);
        T first_val = T(0);
        int first = -1;  // the lane's first closed row (relative), -1: none
#pragma unroll
        for (int s = 0; s < ITEMS; ++s) {
            if (d0 + s < d1) {
                if (ye + yl < s_end[xl]) {
                    acc += s_prod[yl];
                    ++yl;
                } else {
                    if (first < 0) {
                        first = xl;
                        first_val = acc;
                    } else {
                        stcs(y + xr + xl, acc);  // begun and closed in this lane
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
        if (first >= 0) {
            const int r = xr + first;
            const T v = first_val + (lane > 0 ? prev : T(0));
            if (r == first_row && first_cut) {
                atomic_add(y + r, v);
            } else {
                stcs(y + r, v);
            }
        }
        carry = shfl(scan, 31);
        xr += tile_rows;
        ye += tile_entries;
        __syncwarp();  // the next tile overwrites s_prod (and maybe s_end)
    }
    // the row still open at the chunk's end goes on in the next chunk
    if (lane == 0 && xr < nrows) {
        atomic_add(y + xr, carry);
    }
}

#define CSR_MERGE(t, T)                                                                    \
    extern "C" __global__ void __launch_bounds__(256, MP_BLOCKS_##t) spmv_csr_merge_##t(  \
        int nrows, i64 nnz, int chunk, const ofs_t* row_ptr, const int* col_idx, const T* vals, \
        const T* x, T* y) {                                                                \
        csr_merge<T, MP_ITEMS_##t, MP_SPEC_##t>(nrows, nnz, chunk, row_ptr, col_idx, vals, x, y);       \
    }
SPMV_TYPES(CSR_MERGE)
