// jds.cu -- jagged diagonal SpMV: one thread per sorted row, and the long
// rows' remaining diagonals in chunks spread over many threads.
//
// Layout (formats::Jds): rows sorted by descending length (perm[p] = original
// row at sorted position p); jagged diagonal d holds entry d of every row
// longer than d, in sorted order, at jd_ptr[d] .. jd_ptr[d+1]. No padding is
// stored or read.
//
// spmv_jds_<t>: thread p walks the first min(len(p), cap) diagonals of sorted
// row p: reads of one diagonal are coalesced across the warp, the diagonals'
// starts come through the read-only cache (the batched kernels stage them in
// shared memory, see kStaged); it stores the sum through perm. The row
// length comes from the diagonal lengths (they never increase; counted by
// the warp or searched per thread, jds_row), so the trip count is known and
// the unrolled loads are independent. Block b takes sorted positions
// b * 256 .. b * 256 + 255, or, when the host gives `blocks`
// (plan::jds_main_blocks), the blocks[2b + 1] positions from blocks[2b]: the
// runs of equal length cut into blocks, in the order of their first
// original row, so that the blocks running together write whole sectors of
// y and gather the same part of x (a circuit's lengths 2 to 8 interleave;
// in sorted order its main kernel wrote 196 MB for 40 MB of y). Units of
// a warp instead (SELL's, sell.cu), a block's warps of every length from
// about the same original rows, shared x through the L1 (hit rate 41 to
// 61 % on a circuit in f64, ncu) but lost occupancy (88 to 80 %) to their
// warps' unequal lengths: up to 10 % slower on circuits in f32, no faster
// in f64 (H200, BENCHMARKS.md, issue 17).
//
// spmv_jds_<t>_tail and _tail_first: the diagonals past `cap` of the rows
// longer than `cap` (the head of the sorted order), which one thread would
// otherwise walk alone: a row of 2.5M entries took 408 ms. Chunk c covers
// diagonals [c * cap, (c + 1) * cap); the rows active in it are the first
// len(diagonal c * cap) sorted rows, one thread each (consecutive threads on
// consecutive rows, so a diagonal's reads stay coalesced). item_ptr[c] is
// the first thread of chunk c (host prefix sum, nchunks + 1 entries): of
// chunk c + 1 in a tail without chunk 0 (one that goes after the main
// kernel, below).
// Chunks run while their first diagonal has more than plan::BAND_ROWS (256)
// rows; the diagonals from there on are bands (jds_band below), one block
// each, after the chunks' blocks (item_ptr[nchunks] = nitems threads of
// them). The host picks cap (plan::long_row_cap) so that no thread walks
// more than cap diagonals; matrices whose rows all fit cap launch no tail.
//
// spmv_jds_<t>_tail_first: a tail with chunks (a power law's head: more
// than 256 rows longer than cap) of a matrix of 4M entries or more
// (plan::jds_tail_first), which holds the long rows whole: its chunk 0 is
// their first cap diagonals, which the main kernel leaves to it (its blocks
// start past them, plan::jds_main_blocks). It goes first and the main
// kernel as its dependent launch, which waits in one thread only (jds):
// every part of a long row (a sorted position the head sums count) meets
// the others in HeadSums::add (common.cuh), whose last adder stores the
// row's y. Any other tail (bands only: a circuit's supply rows; or a
// smaller matrix's) is spmv_jds_<t>_tail: no chunk 0, its chunks starting
// at diagonal cap; it goes after the main kernel as its dependent launch
// and adds its parts into y once the main kernel has stored it
// (jds_tail_add).

// The most diagonals the main kernel walks (cap is at most
// plan::LONG_ROW_MIN, 256): the size of the batched kernels' shared copy of
// the diagonals' starts.
#define JDS_STAGED 256

// What a thread of the main kernel sums over the first len diagonals of
// sorted row p (their starts at jd): through the stored 32-bit indices
// (Cols32), or `jds-u16`'s 16-bit offsets (ColsU16). begin(p) is issued
// before the row length's search, so that a load it needs overlaps it.
//
// kStaged: the batched kernels (K, KP > 0) stage the diagonals' starts (and
// ColsU16's word starts, stage()) in shared memory behind a barrier, so that
// each batch's addresses cost a shared-memory read on its dependent chain;
// the plain kernels read them through the read-only cache and start their
// rows without a barrier. Without the barrier, in the same runs on the H200
// (BENCHMARKS.md, issue 17), the plain kernels took the 2D Laplacian of 62M
// entries from 252.2 to 234.4 us in f64, 1.6M-row stencils and circuits of
// 54M entries 3-5 % less; with it, the batched kernels kept FEM matrices of
// 1M entries 3 % faster.
//
// K = 0: a plain loop unrolled by 4 (`jds`, `jds-u16`). K > 0 (`jds-batched`,
// `jds-u16-batched`, under SLOT_BOUNDS_DEEP's 64 registers): batches of K
// diagonals (KP pairs), the next batch's indices and values loaded before
// this batch's x gathers, as slot_sum's batches (common.cuh). On the H200
// (BENCHMARKS.md, issue 17) the batches took FEM matrices of 30 entries a
// row in f64 from 37.0 to 34.4 us (270k rows, `jds-batched`) and 190.0 to
// 180.6 us (1.8M rows, `jds-u16-batched`), but lost up to 1.5x on rows of
// 5 entries (half the resident threads): `bench` times both.
template <int K>
struct Cols32 {
    const int* __restrict__ col_idx;
    static constexpr bool kStaged = K > 0;
    __device__ __forceinline__ void stage(int) const {}
    __device__ __forceinline__ int begin(i64) const { return 0; }
    template <typename T>
    __device__ __forceinline__ T sum(int, i64 p, int len, const ofs_t* jd,
                                     const T* __restrict__ vals,
                                     const T* __restrict__ x) const {
        T s = T(0);
        if constexpr (K == 0) {
#pragma unroll 4
            for (int d = 0; d < len; ++d) {
                const i64 idx = (i64)jd[d] + p;
                s += ldcs(vals + idx) * ld(x + ldcs(col_idx + idx));
            }
        } else {
            // diagonal d's index and value (index -1 past the row's length)
            auto load = [&](int, int d, int& c, T& v) {
                const bool in = d < len;
                const i64 idx = (i64)jd[in ? d : 0] + p;
                c = in ? ldcs(col_idx + idx) : -1;
                v = in ? ldcs(vals + idx) : T(0);
            };
            s = slot_batches<K>(len, load, [] {}, x);
        }
        return s;
    }
};

// `jds-u16` (layout::jds_u16): each group of 32 sorted rows has a base
// column, and diagonals 2j and 2j + 1 of row p are the two halves of word
// wptr[j] + p, so one 4-byte load gives two columns (2 bytes an entry
// less). A group whose columns lie 65535 or more apart (base -1) reads the
// 32-bit indices; when the main blocks run in window order a warp may hold
// rows of two groups, so that branch is per thread.
template <int KP>
struct ColsU16 {
    const int* __restrict__ base;
    const i64* __restrict__ wptr;
    const unsigned* __restrict__ words;
    const int* __restrict__ col_idx;
    static constexpr bool kStaged = KP > 0;
    __device__ __forceinline__ i64* staged() const {
        __shared__ i64 wp[JDS_STAGED / 2 + 1];
        return wp;
    }
    __device__ __forceinline__ void stage(int nd) const {
        i64* wp = staged();
        for (int i = threadIdx.x; i <= (nd + 1) / 2; i += blockDim.x) wp[i] = ld(wptr + i);
    }
    // the word starts: staged (batched) or read through the cache (plain)
    __device__ __forceinline__ const i64* word_starts() const {
        if constexpr (kStaged) return staged();
        else return wptr;
    }
    __device__ __forceinline__ int begin(i64 p) const { return ld(base + (p >> 5)); }
    template <typename T>
    __device__ __forceinline__ T sum(int b, i64 p, int len, const ofs_t* jd,
                                     const T* __restrict__ vals,
                                     const T* __restrict__ x) const {
        if (b < 0) return Cols32<2 * KP>{col_idx}.sum(0, p, len, jd, vals, x);
        const i64* wp = word_starts();
        const T* xb = x + b;
        T s = T(0);
        // whole pairs, their loads unconditional (so that the unrolled
        // trips' loads issue together), then an odd row's last diagonal;
        // four pairs a trip were no faster and spilled in complex128
        const int full = len >> 1;
        if constexpr (KP == 0) {
#pragma unroll 2
            for (int j = 0; j < full; ++j) {
                const unsigned pr = ldcs(words + wp[j] + p);
                const T v0 = ldcs(vals + (i64)jd[2 * j] + p);
                const T v1 = ldcs(vals + (i64)jd[2 * j + 1] + p);
                s += v0 * ld(xb + (int)(pr & 0xFFFFu));
                s += v1 * ld(xb + (int)(pr >> 16));
            }
        } else {
            // whole pair q's offsets and values (padding past the row's pairs)
            auto load = [&](int q, unsigned& pr, T& v0, T& v1) {
                const bool in = q < full;
                const int i = in ? q : 0;
                pr = in ? ldcs(words + wp[i] + p) : (SELL_U16_PAD << 16 | SELL_U16_PAD);
                v0 = in ? ldcs(vals + (i64)jd[2 * i] + p) : T(0);
                v1 = in ? ldcs(vals + (i64)jd[2 * i + 1] + p) : T(0);
            };
            s = pair_batches<KP>(full, load, xb);
        }
        if (len & 1) {
            const unsigned pr = ldcs(words + wp[full] + p);
            s += ldcs(vals + (i64)jd[len - 1] + p) * ld(xb + (int)(pr & 0xFFFFu));
        }
        return s;
    }
};

// The length of sorted row p within the first nd diagonals (starts at jd):
// the diagonals longer than p, as the lengths never increase. The warp's
// rows are consecutive sorted positions, first..last, so lane l reads the
// lengths of diagonals l, l + 32, ... and two ballots count those longer
// than first and than last: where the counts agree (every block in window
// order lies within one run of equal length, but for a warp partly past its
// block's rows, whose idle lanes hold nrows; in sorted order all but a warp
// across a run's end), that is every lane's length, one read and no
// search; else each lane searches between the two (jds_search: the
// diagonals of [lo, hi) longer than p, by bisection). A search of its own
// (log2 nd dependent reads) stood before every row's loads.
__device__ __forceinline__ int jds_search(i64 p, int lo, int hi, const ofs_t* jd) {
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if ((i64)(jd[mid + 1] - jd[mid]) > p) lo = mid + 1; else hi = mid;
    }
    return lo;
}

__device__ __forceinline__ int jds_len(i64 p, i64 first, i64 last, int nd, const ofs_t* jd) {
    const int lane = (int)threadIdx.x & 31;
    int most = 0, least = 0;
    for (int d0 = 0; d0 < nd; d0 += 32) {
        const int d = d0 + lane;
        const i64 len = d < nd ? (i64)(jd[d + 1] - jd[d]) : 0;
        most += __popc(__ballot_sync(0xffffffffu, len > first));
        least += __popc(__ballot_sync(0xffffffffu, len > last));
    }
    return jds_search(p, least, most, jd);
}

// The row of one thread of the main kernel, the diagonals' starts at jd
// (shared memory or jd_ptr, see kStaged). The plain kernels load the row's
// perm entry before the length, to be in hand at the store; the batched
// ones after the sum (held through it, the register cost them up to 15 %
// in f32 on FEM matrices and 3D stencils, H200).
//
// The length: a warp at once (jds_len, the whole warp taking part, its
// lanes past the rows too) in the batched kernels, in 4-byte values, and
// wherever the host gives the blocks. In window order each block lies
// within one run of equal length, so the count is the length without a
// search; the host also gives blocks past the long rows that a tail going
// first holds. Only the plain kernels in 8- and 16-byte values over the
// sorted order search per thread, as before jds_len. There, under 32
// registers, the warp's count cost the sum's loads their order: up to 6 %
// on 2D Laplacians in f64, where it gained up to 9 % in f32 and 5 % in the
// batched kernels. In window order the count took circuits of 8.6M and 54M
// entries 3 % and 1.5 % less in f64; the _wide builds (40 registers) count
// there too, l3d-54m f64 0.8 % slower (H200, BENCHMARKS.md, issue 17).
template <typename T, typename Cols>
__device__ __forceinline__ void jds_row(int nrows, int nd, const int* __restrict__ blocks,
                                        const int* __restrict__ perm, const ofs_t* jd,
                                        const Cols& cols, const T* __restrict__ vals,
                                        const T* __restrict__ x, T* __restrict__ y) {
    i64 p = global_thread_id();
    if (blocks) {
        const int* b = blocks + 2 * (i64)blockIdx.x;
        p = (int)threadIdx.x < ld(b + 1) ? (i64)ld(b) + threadIdx.x : (i64)nrows;
    }
    int begin, row, len;
    if (Cols::kStaged || sizeof(T) <= 4 || blocks) {
        // positions increase with the lane; lanes past the rows hold nrows
        // or more
        const i64 first = __shfl_sync(0xffffffffu, p, 0);
        if (first >= nrows) return;  // the whole warp
        const i64 last = min(__shfl_sync(0xffffffffu, p, 31), (i64)nrows - 1);
        const bool in = p < nrows;
        begin = in ? cols.begin(p) : 0;
        row = Cols::kStaged || !in ? 0 : ld(perm + p);
        len = jds_len(p, first, last, nd, jd);
        if (!in) return;
    } else {
        if (p >= nrows) return;
        begin = cols.begin(p);
        row = ld(perm + p);
        len = jds_search(p, 0, nd, jd);
    }
    const T sum = cols.sum(begin, p, len, jd, vals, x);
    y[Cols::kStaged ? ld(perm + p) : row] = sum;
}

template <typename T, typename Cols>
__device__ void jds(int nrows, int ndiag, int cap, const int* __restrict__ blocks,
                    const int* __restrict__ perm, const ofs_t* __restrict__ jd_ptr,
                    const Cols cols, const T* __restrict__ vals, const T* __restrict__ x,
                    T* __restrict__ y) {
    // lets a tail that goes after it start; it waits before adding (launch.rs)
    dep_launch();
    // As the dependent launch of a tail that goes first, one thread waits
    // for the tail (a no-op otherwise): the grid then ends after the tail,
    // and the work queued after it on the stream (a copy of y, or the next
    // product, whose tail must not add to sums the last one's has not yet
    // stored and zeroed) waits for both. A dependent grid must wait
    // somewhere (PTX ISA, griddepcontrol). The waiting thread is in the
    // last block, the last to start, so that the tail has mostly ended by
    // then: in block 0 it held back the sorted order's longest rows (and,
    // behind the batched kernels' barrier, its whole block) until the tail
    // ended, 17 % slower on a power law of 8M entries; waiting after the
    // row instead changed the loops' code (circuits up to 7 % slower in
    // f32; H200, BENCHMARKS.md, issue 17).
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) dep_wait();
    const int nd = min(min(ndiag, cap), JDS_STAGED);
    if constexpr (Cols::kStaged) {
        __shared__ ofs_t jd[JDS_STAGED + 1];
        for (int i = threadIdx.x; i <= nd; i += blockDim.x) jd[i] = ld(jd_ptr + i);
        cols.stage(nd);
        __syncthreads();
        jds_row(nrows, nd, blocks, perm, jd, cols, vals, x, y);
    } else {
        jds_row(nrows, nd, blocks, perm, jd_ptr, cols, vals, x, y);
    }
}

// A part of long row p's sum from the tail, whose y is *yp: into the head
// sums when the tail went first and holds the row whole (First), else into
// y once the main kernel before it has stored the row's first part. The
// order is the kernel's, not a parameter's: with the head sums' code behind
// a branch on a parameter (the long rows' count), the tail that goes after
// took 0.3-0.7 us longer on products of 6-8 us (matrices below 4M entries,
// H200, BENCHMARKS.md).
template <bool First, typename T>
__device__ __forceinline__ void jds_tail_add(const HeadSums<T>& head, i64 p, T part, T* yp) {
    if constexpr (First) {
        head.add(p, part, yp);
    } else {
        dep_wait();  // after the main kernel's store of y
        atomic_add(yp, part);
    }
}

// A band's loop over a lane's n entries in batches of K: load(k, s, c, v)
// gives entry s (k of its batch; index -1 past the lane's entries or where
// its row has none), the batch's loads issued before its gathers from x.
// The plain loop over the diagonals (stride blockDim.x / R) kept its
// unrolled trips in order (SASS): each trip's loads of the diagonal's
// starts waited on the last trip's gather.
template <int K, typename T, typename Load>
__device__ __forceinline__ T band_batches(int n, Load load, const T* __restrict__ x) {
    T sum = T(0);
    for (int b = 0; b < n; b += K) {
        int c[K];
        T v[K];
#pragma unroll
        for (int k = 0; k < K; ++k) load(k, b + k, c[k], v[k]);
#pragma unroll
        for (int k = 0; k < K; ++k) {
            if (c[k] >= 0) sum += v[k] * ld(x + c[k]);
        }
    }
    return sum;
}

// Band (R, d0, d1) of the tail (plan::Bands): diagonals [d0, d1) of the
// first R sorted rows, R a power of two up to blockDim.x, no fewer than the
// rows of diagonal d0. They are stored contiguously, diagonal after
// diagonal, so lane t takes row t % R of diagonals d0 + t / R, + blockDim.x
// / R, ...: a warp's loads are consecutive entries whatever R (a circuit's 8
// supply rows: one row per block strode 8 entries between lanes). A row
// shorter than a diagonal's count has no entry there. The lanes of one row
// (t % R equal) sum in shared memory (band_fold, common.cuh), then each row
// adds its part (jds_tail_add); its perm entry is loaded before the loop,
// not after the fold. Where every diagonal of the band holds R rows (a
// circuit's supply rows, all of one length), entry (d, q) lies at
// jd_ptr[d0] + (d - d0) * R + q, and lane t takes entries t, t +
// blockDim.x, ... of the band directly: row t % R each time (R divides
// blockDim.x), without the diagonals' starts on its chain of loads. Else
// (a power law's head, rows of many lengths) the lane's diagonals go in
// batches (band_batches): on the H200 they took an uncapped power law of
// 59M entries 8 % less in f32 and the real matrix rajat01 10 % less. The
// direct loop stays a plain one (complex128 aside): in batches there, a
// circuit's random gathers of x beside the main kernel's last blocks took
// circ-8m 2 % longer, though arrow's one dense row took 13 % less
// (BENCHMARKS.md, issue 17).
template <bool First, typename T>
__device__ __forceinline__ void jds_band(const int* __restrict__ band,
                                         const int* __restrict__ perm,
                                         const ofs_t* __restrict__ jd_ptr,
                                         const int* __restrict__ col_idx,
                                         const T* __restrict__ vals, const T* __restrict__ x,
                                         T* __restrict__ y, const HeadSums<T>& head) {
    const int R = ld(band), d0 = ld(band + 1), d1 = ld(band + 2);
    const int q = (int)threadIdx.x & (R - 1);
    const i64 s0 = (i64)ld(jd_ptr + d0), s1 = (i64)ld(jd_ptr + d1);
    const bool owner = (i64)threadIdx.x < (i64)ld(jd_ptr + d0 + 1) - s0;
    T* const yp = y + (owner ? ld(perm + threadIdx.x) : 0);
    const bool full = s1 - s0 == (i64)(d1 - d0) * R;
    T sum = T(0);
    if (full && sizeof(T) < 16) {
#pragma unroll 4
        for (i64 idx = s0 + threadIdx.x; idx < s1; idx += blockDim.x) {
            sum += ldcs(vals + idx) * ld(x + ldcs(col_idx + idx));
        }
    } else if (full) {
        // complex128: one entry at a time (the loop above spilled beside
        // the batches below under 32 registers)
        const int m = (int)(s1 - s0), t = (int)threadIdx.x, bd = (int)blockDim.x;
        const int n = t < m ? (m - t + bd - 1) / bd : 0;
        auto load = [&](int, int s, int& c, T& v) {
            const bool in = s < n;
            const i64 idx = s0 + t + (i64)s * bd;
            c = in ? ldcs(col_idx + idx) : -1;
            v = in ? ldcs(vals + idx) : T(0);
        };
        sum = band_batches<1>(n, load, x);
    } else {
        // diagonal first + s * step's entry of row q (index -1 where the
        // row is shorter); batches of 4 in f32, 2 in f64 and complex64, 1
        // in complex128 (more spilled under 32 registers)
        const int step = (int)blockDim.x / R, first = d0 + (int)threadIdx.x / R;
        const int n = first < d1 ? (d1 - first + step - 1) / step : 0;
        auto load = [&](int, int s, int& c, T& v) {
            const int d = first + s * step;
            const bool in = s < n;
            const i64 a = in ? (i64)ld(jd_ptr + d) : 0, b = in ? (i64)ld(jd_ptr + d + 1) : 0;
            const bool has = b - a > q;
            c = has ? ldcs(col_idx + a + q) : -1;
            v = has ? ldcs(vals + a + q) : T(0);
        };
        sum = band_batches<(sizeof(T) >= 16 ? 1 : sizeof(T) >= 8 ? 2 : 4)>(n, load, x);
    }
    sum = band_fold(sum, R);
    if (owner) jds_tail_add<First>(head, threadIdx.x, sum, yp);
}

template <bool First, typename T>
__device__ void jds_tail(i64 nitems, int nchunks, int cap, int ndiag,
                         const int* __restrict__ perm, const ofs_t* __restrict__ jd_ptr,
                         const i64* __restrict__ item_ptr, const int* __restrict__ bands,
                         const int* __restrict__ col_idx,
                         const T* __restrict__ vals, const T* __restrict__ x,
                         T* __restrict__ y, const HeadSums<T> head) {
    if constexpr (First) dep_launch();  // the main kernel after it may start (one thread waits)
    const i64 chunk_blocks = (nitems + blockDim.x - 1) / blockDim.x;
    if ((i64)blockIdx.x >= chunk_blocks) {
        jds_band<First>(bands + 3 * ((i64)blockIdx.x - chunk_blocks), perm, jd_ptr, col_idx, vals,
                        x, y, head);
        return;
    }
    const i64 t = global_thread_id();
    if (t >= nitems) return;
    // chunk of thread t: the last c with item_ptr[c] <= t
    int lo = 0, hi = nchunks - 1;
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if (ld(item_ptr + mid) <= t) lo = mid; else hi = mid - 1;
    }
    const i64 p = t - ld(item_ptr + lo);
    // chunk 0 (the long rows' first cap diagonals) is the tail's only when
    // it goes first; else its chunks start at diagonal cap
    const int d0 = (First ? lo : lo + 1) * cap;
    // diagonals of [d0, min(d0 + cap, ndiag)) longer than p
    int a = d0, b = min(d0 + cap, ndiag);
    while (a < b) {
        const int mid = a + (b - a) / 2;
        if ((i64)(ld(jd_ptr + mid + 1) - ld(jd_ptr + mid)) > p) a = mid + 1; else b = mid;
    }
    T sum = T(0);
#pragma unroll 4
    for (int d = d0; d < a; ++d) {
        const i64 idx = (i64)ld(jd_ptr + d) + p;
        sum += ldcs(vals + idx) * ld(x + ldcs(col_idx + idx));
    }
    jds_tail_add<First>(head, p, sum, y + ld(perm + p));
}

// spmv_jds_<t>: the plain loop, spmv_jds_<t>_deep: batches of 8 diagonals
// (complex128 4) under 64 registers; spmv_jds_<t>_u16 and _u16_deep the
// same over `jds-u16`'s pairs (4 pairs a batch, complex128 2; 48 registers
// in f64, U16_DEEP_BOUNDS in common.cuh, as SELL's). _wide and
// _u16_wide: the plain loops under 40 registers (6 blocks a multiprocessor
// instead of 8), which f64 and complex rows of 16 diagonals or more run
// (plan::jds_wide): with 32 their unrolled trip issues its loads in two
// rounds.
#define JDS_MAIN(t, T, suffix, BOUNDS, IDX, COLS)                                          \
    extern "C" __global__ void BOUNDS spmv_jds_##t##suffix(                                \
        int nrows, int ndiag, int cap, const int* blocks, const int* perm, const ofs_t* jd_ptr, \
        IDX, const T* vals, const T* x, T* y) {                                            \
        jds<T>(nrows, ndiag, cap, blocks, perm, jd_ptr, COLS, vals, x, y);                 \
    }
#define JDS_WIDE_BOUNDS __launch_bounds__(256, 6)
#define JDS_I32 const int *col_idx
#define JDS_U16 const int *base, const i64 *wptr, const unsigned *words, const int *col_idx
#define JDS(t, T)                                                                          \
    JDS_MAIN(t, T, , SPMV_BOUNDS, JDS_I32, Cols32<0>{col_idx})                             \
    JDS_MAIN(t, T, _deep, SLOT_BOUNDS_DEEP, JDS_I32,                                       \
             (Cols32<SlotBatch<T, 8>::value>{col_idx}))                                    \
    JDS_MAIN(t, T, _u16, SPMV_BOUNDS, JDS_U16, (ColsU16<0>{base, wptr, words, col_idx}))   \
    JDS_MAIN(t, T, _wide, JDS_WIDE_BOUNDS, JDS_I32, Cols32<0>{col_idx})                    \
    JDS_MAIN(t, T, _u16_wide, JDS_WIDE_BOUNDS, JDS_U16,                                    \
             (ColsU16<0>{base, wptr, words, col_idx}))                                     \
    JDS_MAIN(t, T, _u16_deep, U16_DEEP_BOUNDS(T), JDS_U16,                                 \
             (ColsU16<SlotBatch<T, 8>::value / 2>{base, wptr, words, col_idx}))            \
    extern "C" __global__ void SPMV_BOUNDS spmv_jds_##t##_tail(                            \
        i64 nitems, int nchunks, int cap, int ndiag, const int* perm, const ofs_t* jd_ptr, \
        const i64* item_ptr, const int* bands, const int* col_idx, const T* vals, const T* x, \
        T* y) {                                                                            \
        jds_tail<false, T>(nitems, nchunks, cap, ndiag, perm, jd_ptr, item_ptr, bands, col_idx, \
                           vals, x, y, HeadSums<T>{nullptr, nullptr, nullptr});             \
    }                                                                                      \
    extern "C" __global__ void SPMV_BOUNDS spmv_jds_##t##_tail_first(                      \
        i64 nitems, int nchunks, int cap, int ndiag, const int* perm, const ofs_t* jd_ptr, \
        const i64* item_ptr, const int* bands, const int* col_idx, const T* vals, const T* x, \
        T* y, const int* hcnt, T* hacc, unsigned* hdone) {                                \
        jds_tail<true, T>(nitems, nchunks, cap, ndiag, perm, jd_ptr, item_ptr, bands, col_idx, \
                          vals, x, y, HeadSums<T>{hcnt, hacc, hdone});                      \
    }
SPMV_TYPES(JDS)
