// common.cuh -- prepended by the Rust side to every kernel source before NVRTC
// compiles it (NVRTC cannot see the crate's folders at run time).
//
// Conventions for every kernel in gpu/kernels/:
// - row and column indices are 32-bit signed (`int`); the padding sentinel
//   is -1; offsets into the entry arrays (CSR row pointers, JDS diagonal
//   pointers, SELL slice pointers) are `ofs_t`: 32-bit, or 64-bit when the
//   host compiles the module with -DSPMV_OFFSET64 for a matrix whose entries
//   or padded slots do not fit 2^31 - 1 (32-bit is the default: half the
//   pointer traffic);
// - values are float, double, cfloat or cdouble (complex64 / complex128,
//   below); every kernel is instantiated for the four by SPMV_TYPES;
// - thread and entry counters are 64-bit (`long long`) so that a grid larger
//   than 2^31 threads cannot overflow;
// - read-only arrays are `const T* __restrict__`; the gathered `x` (and row
//   pointers) are loaded with __ldg (the COO kernels' f64 x with an L2
//   evict-last hint on part of it, see ld_pinned below), the matrix arrays read once (values,
//   column and row indices) with __ldcs (ldcs below: cache-streaming,
//   evict-first) and y is stored with __stcs, so the stream of matrix data does
//   not evict x from L2. Measured on the H100 (BENCHMARKS.md, run 5): uniform
//   random 16/row f64 0.564 -> 0.488 ms, power-law f32 0.660 -> 0.576 ms;
// - kernel symbols are `extern "C"` and named
//   spmv_<format>_<f32|f64|c64|c128>[_<variant>].

typedef long long i64;

#ifdef SPMV_OFFSET64
typedef long long ofs_t;
#else
typedef int ofs_t;
#endif

// Complex values, laid out as numpy's complex64 / complex128 and
// num_complex::Complex<f32/f64> (re, im): aligned to their pair type so a
// value is one float2 / double2 load. T(0) is the additive identity in every
// kernel, hence the one-argument constructor.
#define SPMV_COMPLEX(C, R, R2, MAKE2)                                                   \
    struct __align__(sizeof(R2)) C {                                                  \
        R re, im;                                                                     \
        __device__ __forceinline__ C() {}                                             \
        __device__ __forceinline__ C(R r) : re(r), im(R(0)) {}                        \
        __device__ __forceinline__ C(R r, R i) : re(r), im(i) {}                      \
    };                                                                                \
    __device__ __forceinline__ C operator+(C a, C b) { return C(a.re + b.re, a.im + b.im); } \
    __device__ __forceinline__ C& operator+=(C& a, C b) {                             \
        a.re += b.re;                                                                 \
        a.im += b.im;                                                                 \
        return a;                                                                     \
    }                                                                                 \
    __device__ __forceinline__ C operator*(C a, C b) {                                \
        return C(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);               \
    }                                                                                 \
    __device__ __forceinline__ bool operator==(C a, C b) { return a.re == b.re && a.im == b.im; } \
    __device__ __forceinline__ C ld(const C* __restrict__ p) {                        \
        const R2 v = __ldg(reinterpret_cast<const R2*>(p));                           \
        return C(v.x, v.y);                                                           \
    }                                                                                 \
    __device__ __forceinline__ C ldcs(const C* __restrict__ p) {                      \
        const R2 v = __ldcs(reinterpret_cast<const R2*>(p));                          \
        return C(v.x, v.y);                                                           \
    }                                                                                 \
    __device__ __forceinline__ C ld_pinned(const C* __restrict__ p) { return ld(p); } \
    __device__ __forceinline__ C ldcg(const C* p) {                                   \
        const R2 v = __ldcg(reinterpret_cast<const R2*>(p));                          \
        return C(v.x, v.y);                                                           \
    }                                                                                 \
    __device__ __forceinline__ void stcs(C* p, C v) {                                 \
        __stcs(reinterpret_cast<R2*>(p), MAKE2(v.re, v.im));                          \
    }                                                                                 \
    __device__ __forceinline__ void atomic_add(C* p, C v) {                           \
        atomicAdd(&p->re, v.re);                                                      \
        atomicAdd(&p->im, v.im);                                                      \
    }                                                                                 \
    __device__ __forceinline__ C shfl_xor(C v, int m, int w) {                        \
        return C(__shfl_xor_sync(0xffffffffu, v.re, m, w),                            \
                 __shfl_xor_sync(0xffffffffu, v.im, m, w));                           \
    }                                                                                 \
    __device__ __forceinline__ C shfl_up(C v, int d) {                                \
        return C(__shfl_up_sync(0xffffffffu, v.re, d), __shfl_up_sync(0xffffffffu, v.im, d)); \
    }                                                                                 \
    __device__ __forceinline__ C shfl_down(C v, int d) {                              \
        return C(__shfl_down_sync(0xffffffffu, v.re, d),                              \
                 __shfl_down_sync(0xffffffffu, v.im, d));                             \
    }                                                                                 \
    __device__ __forceinline__ C shfl(C v, int src) {                                 \
        return C(__shfl_sync(0xffffffffu, v.re, src), __shfl_sync(0xffffffffu, v.im, src)); \
    }

// Every value type a kernel is instantiated for: X(symbol suffix, C type).
#define SPMV_TYPES(X) X(f32, float) X(f64, double) X(c64, cfloat) X(c128, cdouble)

// Every kernel is launched with 256-thread blocks (plan::BLOCK) and asks for 8
// resident blocks per multiprocessor: a cap of 32 registers, full occupancy
// (2048 threads), which memory-bound SpMV needs to keep loads in flight.
#define SPMV_BOUNDS __launch_bounds__(256, 8)

// Global id of the calling thread (64-bit).
__device__ __forceinline__ i64 global_thread_id() {
    return (i64)blockIdx.x * (i64)blockDim.x + (i64)threadIdx.x;
}

// Programmatic dependent launch (compute capability 9.0 and later; no-ops
// below it and when the launch did not ask for it). A product of two
// launches (HYB's ELL part then its COO tail, SELL's long-row tail,
// csr-merge's carry fix-up) launches its second kernel as a dependent
// (launch.rs, `dependent_launch` in bench's report): dep_launch() in the
// first kernel lets the second's blocks start as the first's last blocks
// drain, and the second calls dep_wait() before it touches y (or anything
// else the first wrote), which returns once the first kernel has finished
// and its writes are visible. The second kernel's loads and x gathers
// before dep_wait() overlap the first's last wave instead of waiting for
// the grid boundary. JDS's tail with chunks in a matrix of 4M entries or
// more (plan::jds_tail_first) goes the other way round: the
// tail first, the main kernel as the dependent, which waits in one thread
// only (so that its grid ends after the tail's) and leaves the long rows to
// the tail (their sums meet in HeadSums below): the main kernel's blocks
// start once the tail's have all started, and the two run side by side.
__device__ __forceinline__ void dep_launch() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void dep_wait() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Read-only load through the non-coherent cache (x and row pointers).
template <typename T>
__device__ __forceinline__ T ld(const T* __restrict__ p) {
    return __ldg(p);
}

// ld_pinned: the x gather of the COO kernels (coo.cu, also HYB's tail). In
// f64 a fraction X_PIN_FRACTION of x's L2 lines (the hardware picks which,
// by address) get the evict-last priority, the rest keep theirs. An f64 x of
// a large matrix (48 MB for 6M columns) does not fit the 50 MB L2 next to the
// matrix stream, and a random gather over all of it thrashes: L2 hit rate
// 26-28 % on the power-law matrix (ncu, bench/results/...-run8/ncu). Holding
// a fixed quarter of it keeps that quarter's hits. Measured on the H100
// (BENCHMARKS.md, run 9, same run): power-law f64 HYB 1.2231 -> 1.1724 ms.
// Pinning every kernel's x instead cost the 2D Laplacian's ELL 3 % (its x is
// read with good locality) and SELL up to 20 %; with every kernel pinned,
// fractions 0.1 and 0.4 did worse than 0.25 on the power-law matrix. f32 x
// fits in L2 and is left alone. bench resets the priority before timing each kernel (bench_unpin in
// util.cu), so a kernel timed after ours does not inherit the pinned lines.
#ifndef X_PIN_FRACTION
#define X_PIN_FRACTION 0.25
#endif
#define SPMV_STR2(v) #v
#define SPMV_STR(v) SPMV_STR2(v)
template <typename T>
__device__ __forceinline__ T ld_pinned(const T* __restrict__ p) {
    return __ldg(p);
}
template <>
__device__ __forceinline__ double ld_pinned<double>(const double* __restrict__ p) {
    unsigned long long pol;
    asm volatile("createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %0, "
                 SPMV_STR(X_PIN_FRACTION) ";" : "=l"(pol));
    double v;
    asm volatile("ld.global.nc.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(v) : "l"(p), "l"(pol));
    return v;
}
// Streaming loads for the matrix arrays (read once): evict-first, so that the
// gathered x stays in L2.
template <typename T>
__device__ __forceinline__ T ldcs(const T* __restrict__ p) {
    return __ldcs(p);
}
// A load from L2, past the multiprocessor's L1 (which other blocks' atomics
// do not update): a long row's total (head_add below).
template <typename T>
__device__ __forceinline__ T ldcg(const T* p) {
    return __ldcg(p);
}
// Streaming store of y, atomic add into y, and the warp shuffles of a value:
// the hardware's for real types, part by part for complex ones (below).
template <typename T>
__device__ __forceinline__ void stcs(T* p, T v) {
    __stcs(p, v);
}
template <typename T>
__device__ __forceinline__ void atomic_add(T* p, T v) {
    atomicAdd(p, v);
}
template <typename T>
__device__ __forceinline__ T shfl_xor(T v, int m, int w) {
    return __shfl_xor_sync(0xffffffffu, v, m, w);
}
template <typename T>
__device__ __forceinline__ T shfl_up(T v, int d) {
    return __shfl_up_sync(0xffffffffu, v, d);
}
template <typename T>
__device__ __forceinline__ T shfl_down(T v, int d) {
    return __shfl_down_sync(0xffffffffu, v, d);
}
template <typename T>
__device__ __forceinline__ T shfl(T v, int src) {
    return __shfl_sync(0xffffffffu, v, src);
}

SPMV_COMPLEX(cfloat, float, float2, make_float2)
SPMV_COMPLEX(cdouble, double, double2, make_double2)

// Sum of `v` over the `LANES` consecutive lanes of a sub-warp (LANES a power of
// two, 1..32); every lane of the sub-warp gets the sum.
template <int LANES, typename T>
__device__ __forceinline__ T subwarp_sum(T v) {
#pragma unroll
    for (int off = LANES / 2; off > 0; off /= 2) {
        v += shfl_xor(v, off, LANES);
    }
    return v;
}

// Inclusive segmented scan over a full warp: lanes holding the same `key`
// (keys are non-decreasing across lanes, as for row-sorted entries) are summed;
// lane i ends with the sum of lanes j <= i that share its key.
template <typename T>
__device__ __forceinline__ T warp_segmented_scan(int key, T v) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int off = 1; off < 32; off *= 2) {
        T other = shfl_up(v, off);
        int other_key = __shfl_up_sync(0xffffffffu, key, off);
        if (lane >= off && other_key == key) {
            v += other;
        }
    }
    return v;
}

// Sum over `n` slots of one row that lie `step` elements apart from `idx` in
// the slot-major arrays of ELL and SELL, slots in order; a padding slot
// (index -1, value 0) gathers nothing. K = 0: a plain loop unrolled by 4
// (SELL's `sell`). K > 0: in batches of K slots, the next batch's column
// indices and values are loaded before this batch's x gathers and products,
// so that 2 K slots' loads of the entry stream are in flight per thread where
// the plain loop had 4: `sell-batched` and ELL with 2 or 4 threads per row
// (plan::slot_batch mirrors SlotBatch). K = 4 under the 32-register cap of
// SPMV_BOUNDS (the `_b4` kernels); K = 8 from plan::DEEP_SLOTS slots a thread
// on, under a 64-register cap (SLOT_BOUNDS_DEEP, half the resident threads:
// the `_deep` kernels); complex values take fewer (SlotBatch: 2 for
// complex64's `_b4`, which spilled 140 bytes with 4 (ptxas -v, sm_90); half
// for complex128). On the H100 (BENCHMARKS.md, issue 17) the batches
// took SELL on a 27-point stencil of 300k rows from 30.8 to 27.2 us (f32),
// and most small matrices 0.5-0.9x, but random columns in f64 up to 1.66x
// (half the threads gathering x from L2); hence `bench` times both.
#define SLOT_BOUNDS_DEEP __launch_bounds__(256, 4)
// The register cap of the deep kernels over 16-bit column pairs
// (spmv_sell_<t>_u16_deep, spmv_jds_<t>_u16_deep): 48 (five blocks of 256 a
// multiprocessor) in f64, whose batches of 4 pairs fit them unspilled
// (ptxas -v, sm_90), else SLOT_BOUNDS_DEEP's 64. On the H200 (BENCHMARKS.md,
// issue 17) 48 took SELL on a 27-point stencil of 301k rows from 26.9 to
// 24.1 us and a FEM matrix of 270k rows from 26.1 to 25.1 in f64; in f32 it
// lost on the FEM matrix (18.6 -> 19.8 us), and the 32-bit deep kernels
// spill under it in f64 (168 bytes in SELL's).
template <typename T>
struct U16DeepBlocks {
    static constexpr int value = 4;
};
template <>
struct U16DeepBlocks<double> {
    static constexpr int value = 5;
};
#define U16_DEEP_BOUNDS(T) __launch_bounds__(256, U16DeepBlocks<T>::value)
template <typename T, int BATCH>
struct SlotBatch {
    static constexpr int value = BATCH;
};
// complex64: the batch of 4 spilled under 32 registers (ptxas -v)
template <int BATCH>
struct SlotBatch<cfloat, BATCH> {
    static constexpr int value = BATCH == 4 ? 2 : BATCH;
};
template <int BATCH>
struct SlotBatch<cdouble, BATCH> {
    static constexpr int value = BATCH / 2;
};
// The batched loop over n slots (slot_sum below, and `jds-batched` in
// jds.cu): load(k, s, c, v) gives slot s's column index and value (index
// -1 past the thread's slots), slot k of its batch; the next K slots are
// loaded before this batch's gathers from x, after next() (slot_sum moves
// its index there: an index computed from s spilled up to 144 bytes in the
// 32-register kernels, ptxas -v).
template <int K, typename T, typename Load, typename Next>
__device__ __forceinline__ T slot_batches(int n, Load load, Next next,
                                          const T* __restrict__ x) {
    int cn[K];
    T vn[K];
#pragma unroll
    for (int k = 0; k < K; ++k) load(k, k, cn[k], vn[k]);
    T sum = T(0);
    for (int b = 0; b < n; b += K) {
        int c[K];
        T v[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
            c[k] = cn[k];
            v[k] = vn[k];
        }
        next();
#pragma unroll
        for (int k = 0; k < K; ++k) load(k, b + K + k, cn[k], vn[k]);
#pragma unroll
        for (int k = 0; k < K; ++k) {
            if (c[k] >= 0) sum += v[k] * ld(x + c[k]);
        }
    }
    return sum;
}
template <int K, typename T>
__device__ __forceinline__ T slot_sum(i64 idx, i64 step, int n, const int* __restrict__ col_idx,
                                      const T* __restrict__ vals, const T* __restrict__ x) {
    if constexpr (K == 0) {
        // Every lane of a warp runs the same trip count (a row's padded
        // slots), so the unrolled loads are independent; the value load is
        // issued before the branch (padding values are 0 and never used).
        T sum = T(0);
#pragma unroll 4
        for (int s = 0; s < n; ++s) {
            const int c = ldcs(col_idx + idx);
            const T v = ldcs(vals + idx);
            if (c >= 0) sum += v * ld(x + c);
            idx += step;
        }
        return sum;
    } else {
        // slot s (k of its batch, which starts at idx) and its value
        // (padding past the thread's n slots)
        auto load = [&](int k, int s, int& c, T& v) {
            const bool in = s < n;
            c = in ? ldcs(col_idx + idx + k * step) : -1;
            v = in ? ldcs(vals + idx + k * step) : T(0);
        };
        return slot_batches<K>(n, load, [&] { idx += K * step; }, x);
    }
}

// 16-bit columns (`sell-u16`, `ell-u16`, `hyb-u16`): a base column per
// slice (SELL) or per warp of 32 rows (ELL, HYB's ELL part) and 16-bit
// offsets from it in pairs: slots 2j and 2j + 1 of a row are the low and
// high half of one 32-bit word, the words of a row C apart as its slots are
// (one 4-byte load gathers two columns; 2-byte loads, one a slot, ran slower
// than the 32-bit indices in f64). SELL_U16_PAD marks padding, and the high
// half past an odd width. Built by layout::sell_u16 (for the first `cap`
// slots) and layout::ell_u16.
#define SELL_U16_PAD 0xFFFFu

// The batched loop over np pairs of 16-bit columns (pair_sum below, and
// `jds-u16-batched` in jds.cu): load(q, pr, a, b) gives pair q's word and
// its two values (a word of SELL_U16_PAD halves past the thread's pairs),
// the next KP pairs are loaded before this batch's gathers from xb.
template <int KP, typename T, typename Load>
__device__ __forceinline__ T pair_batches(int np, Load load, const T* __restrict__ xb) {
    T sum = T(0);
    unsigned pn[KP];
    T an[KP], bn[KP];
#pragma unroll
    for (int k = 0; k < KP; ++k) load(k, pn[k], an[k], bn[k]);
    for (int j = 0; j < np; j += KP) {
        unsigned pr[KP];
        T a[KP], b[KP];
#pragma unroll
        for (int k = 0; k < KP; ++k) {
            pr[k] = pn[k];
            a[k] = an[k];
            b[k] = bn[k];
        }
        // the next batch's pairs
#pragma unroll
        for (int k = 0; k < KP; ++k) load(j + KP + k, pn[k], an[k], bn[k]);
#pragma unroll
        for (int k = 0; k < KP; ++k) {
            const unsigned c0 = pr[k] & 0xFFFFu, c1 = pr[k] >> 16;
            if (c0 != SELL_U16_PAD) sum += a[k] * ld(xb + (int)c0);
            if (c1 != SELL_U16_PAD) sum += b[k] * ld(xb + (int)c1);
        }
    }
    return sum;
}

// Sum over the first n slots of a thread whose values start at vidx, C
// apart, its column pairs at cp, C words apart; KP = 0: a plain loop (2
// pairs a trip for 4-byte values, else 1), KP > 0: batches of KP pairs
// loaded ahead of their gathers, as slot_sum's batches.
template <int KP, typename T>
__device__ __forceinline__ T pair_sum(i64 vidx, i64 C, int n, const unsigned* __restrict__ cp,
                                      int base, const T* __restrict__ vals,
                                      const T* __restrict__ x) {
    T sum = T(0);
    const int np = (n + 1) >> 1;
    if constexpr (KP == 0) {
// two pairs a trip spilled 60 bytes in f64 under 32 registers
#pragma unroll(sizeof(T) == 4 ? 2 : 1)
        for (int j = 0; j < np; ++j) {
            const unsigned pr = ldcs(cp + (i64)j * C);
            const T v0 = ldcs(vals + vidx + (i64)(2 * j) * C);
            const T v1 = 2 * j + 1 < n ? ldcs(vals + vidx + (i64)(2 * j + 1) * C) : T(0);
            const unsigned c0 = pr & 0xFFFFu, c1 = pr >> 16;
            if (c0 != SELL_U16_PAD) sum += v0 * ld(x + base + (int)c0);
            if (c1 != SELL_U16_PAD) sum += v1 * ld(x + base + (int)c1);
        }
    } else {
        // pair q's columns and values (padding past the thread's slots)
        auto load = [&](int q, unsigned& pr, T& a, T& b) {
            pr = q < np ? ldcs(cp + (i64)q * C) : (SELL_U16_PAD << 16 | SELL_U16_PAD);
            a = 2 * q < n ? ldcs(vals + vidx + (i64)(2 * q) * C) : T(0);
            b = 2 * q + 1 < n ? ldcs(vals + vidx + (i64)(2 * q + 1) * C) : T(0);
        };
        sum = pair_batches<KP>(np, load, x + base);
    }
    return sum;
}

// One segment of a long row in a long-row tail (JDS's and SELL's; the host's
// plan::Segments): seg[0] = the row's sorted position p, [seg[1], seg[2]) its
// slots, at most SEG_SPAN. The block's threads take consecutive slots
// (thread k slots s0 + k + i * blockDim.x), so that a row with few others
// beside it reads its own entries, coalesced where they are contiguous,
// instead of one thread walking them; the block sums them (warp shuffles,
// then shared memory) and thread 0 adds the sum into y[row] with one atomic,
// after dep_wait(). `at(p, s)` is the position of slot s of p in col_idx and
// vals; y's row is perm[p] (p without perm). Called by whole blocks (no
// early return before it).
#define SEG_SPAN 1024
// Lanes of a band's block, and the most rows a band holds (plan::BAND_ROWS):
// jds_band (jds.cu) and sell_band (sell.cu).
#define BAND_ROWS 256
// The lanes of a block of BAND_ROWS threads congruent modulo R (a power of
// two up to BAND_ROWS) summed: lane t < R returns the sum of lanes t, t + R,
// t + 2R, ... (the upper half folded onto the lower down to R lanes); the
// other lanes return partial sums. Called by whole blocks.
template <typename T>
__device__ __forceinline__ T band_fold(T sum, int R) {
    __shared__ __align__(16) unsigned char red_raw[BAND_ROWS * sizeof(T)];
    T* red = reinterpret_cast<T*>(red_raw);
    red[threadIdx.x] = sum;
    for (int h = (int)blockDim.x / 2; h >= R; h >>= 1) {
        __syncthreads();
        if ((int)threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
    }
    return red[threadIdx.x];  // lane t < R wrote it last itself
}
// The sums of the long rows of a tail that holds them whole and runs beside
// its main kernel (JDS's tail with chunks in a matrix of 4M entries or more
// goes first, the main kernel as its dependent launch, which waits in one
// thread only and leaves those rows out). The sorted positions p that cnt
// counts are the long rows; cnt[p] threads of the tail add a part of p's
// sum (one per chunk and band that holds p; plan::jds_head_counts).
// Each adds its part into acc[p] (zero between products), then counts
// itself in done[p]; the one that counts last stores the total at *yp and
// zeroes acc[p] and done[p] for the next product. Going after the main
// kernel instead and waiting for it (dep_wait), the tail's blocks held
// their multiprocessors idle (28 % slower on a power law of 8M entries,
// H100); side by side, from 4M entries on (the figures at
// plan::jds_tail_first).
template <typename T>
struct HeadSums {
    const int* __restrict__ cnt;
    T* acc;
    unsigned* done;
    __device__ __forceinline__ void add(i64 p, T part, T* yp) const {
        atomic_add(acc + p, part);
        __threadfence();  // the part before the count
        if (atomicAdd(done + p, 1u) + 1u == (unsigned)ld(cnt + p)) {
            __threadfence();  // every other part before the total
            *yp = ldcg(acc + p);
            acc[p] = T(0);
            done[p] = 0u;
        }
    }
};

template <typename T, typename At>
__device__ __forceinline__ void row_segment(const int* __restrict__ seg, At at,
                                            const int* __restrict__ perm,
                                            const int* __restrict__ col_idx,
                                            const T* __restrict__ vals,
                                            const T* __restrict__ x, T* __restrict__ y) {
    const int p = ld(seg), s0 = ld(seg + 1), s1 = ld(seg + 2);
    T sum = T(0);
#pragma unroll 4
    for (int s = s0 + (int)threadIdx.x; s < s1; s += blockDim.x) {
        const i64 idx = at(p, s);
        sum += ldcs(vals + idx) * ld(x + ldcs(col_idx + idx));
    }
    sum = subwarp_sum<32>(sum);
    __shared__ __align__(16) unsigned char part_raw[32 * sizeof(T)];
    T* part = reinterpret_cast<T*>(part_raw);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nwarps = blockDim.x >> 5;
    if (lane == 0) part[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = lane < nwarps ? part[lane] : T(0);
        sum = subwarp_sum<32>(sum);
        if (lane == 0) {
            dep_wait();  // after the main kernel's store of y
            atomic_add(y + (perm ? (i64)ld(perm + p) : (i64)p), sum);
        }
    }
}
