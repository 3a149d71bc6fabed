// util.cu -- kernels of the benchmark that are not SpMV.
//
// bench_delay: one thread waits until `ns` nanoseconds of the GPU's global
//   timer have passed. The benchmark enqueues it in front of a timed sequence
//   so that the host has queued every launch and event before the first of
//   them runs: a 5 us kernel is then timed back to back with the next, not
//   with the host's launch overhead in between (nvbench's blocking kernel,
//   with a time-out instead of a host flag, so it cannot deadlock).
//
// bench_unpin: gives every 128-byte L2 line of a buffer the normal eviction
//   priority again (applypriority), undoing the evict-last hint of the COO
//   kernels' f64 x gathers (ld_pinned in common.cuh), so that each kernel the
//   benchmark times starts from the same L2 state.
//
// gather_floor_<t> (four entries a thread, one int4 load of indices) and
//   gather_floor_<t>_x1 (one entry a thread): the x gather alone. A thread
//   reads column indices in CSR order (streaming, like the SpMV kernels) and
//   x at them, and nothing else: no values, no reduction, no y (a store that
//   never happens keeps the loads alive). The faster of the two (the host
//   times both) is a floor for any kernel that reads this matrix's entries
//   in this order and gathers x at them, which shows how close a format's
//   time is to what the column pattern allows.

extern "C" __global__ void bench_delay(unsigned long long ns) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

extern "C" __global__ void bench_unpin(const char* p, i64 lines) {
    const i64 i = global_thread_id();
    if (i < lines) {
        asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(p + i * 128));
    }
}

template <typename T>
__device__ void gather_floor_x1(i64 nnz, const int* __restrict__ cols, const T* __restrict__ x,
                                T* __restrict__ sink) {
    const i64 k = global_thread_id();
    if (k >= nnz) return;
    const int c = ldcs(cols + k);
    const T v = ld(x + c);
    // x holds values in [-1, 1): this store never happens, but the compiler
    // cannot know, so the gather is not optimised away.
    if (v == T(4096)) sink[0] = v;
}

template <typename T>
__device__ void gather_floor_x4(i64 nnz, const int* __restrict__ cols, const T* __restrict__ x,
                                T* __restrict__ sink) {
    const i64 k = global_thread_id() * 4;
    if (k >= nnz) return;
    T v = T(0);
    if (k + 4 <= nnz) {
        const int4 c = __ldcs(reinterpret_cast<const int4*>(cols + k));
        v = ld(x + c.x) + ld(x + c.y) + ld(x + c.z) + ld(x + c.w);
    } else {
        for (i64 j = k; j < nnz; ++j) v += ld(x + ldcs(cols + j));
    }
    if (v == T(4096)) sink[0] = v;
}

#define GATHER_FLOOR(t, T)                                                                 \
    extern "C" __global__ void SPMV_BOUNDS gather_floor_##t(i64 nnz, const int* cols, const T* x, \
                                                           T* sink) {                       \
        gather_floor_x4<T>(nnz, cols, x, sink);                                            \
    }                                                                                      \
    extern "C" __global__ void SPMV_BOUNDS gather_floor_##t##_x1(i64 nnz, const int* cols,  \
                                                                const T* x, T* sink) {      \
        gather_floor_x1<T>(nnz, cols, x, sink);                                            \
    }
SPMV_TYPES(GATHER_FLOOR)

// widen_indices: a copy of 32-bit indices as 64-bit, for cuSPARSE's 64-bit
// index type (the baseline of a matrix with 64-bit offsets: cuSPARSE takes
// one index type for row offsets and column indices).
extern "C" __global__ void widen_indices(i64 n, const int* __restrict__ src,
                                         long long* __restrict__ dst) {
    const i64 i = global_thread_id();
    if (i < n) dst[i] = (long long)ldcs(src + i);
}
