// util.cu -- kernels of the benchmark that are not SpMV.
//
// bench_delay_f32 / _f64: one thread waits until `ns` nanoseconds of the GPU's
//   global timer have passed (the two names are the same kernel; the value
//   type only keeps the naming rule). The benchmark enqueues it in front of a
//   timed sequence so that the host has queued every launch and event before
//   the first of them runs: a 5 us kernel is then timed back to back with the
//   next, not with the host's launch overhead in between (nvbench's blocking
//   kernel, with a time-out instead of a host flag, so it cannot deadlock).
//
// gather_floor_f32 / _f64: the x gather alone. One thread per entry reads the
//   column index (streaming, like the SpMV kernels) and x at it, and nothing
//   else: no values, no reduction, no y (a store that never happens keeps the
//   loads alive). Its time is a floor for any kernel that reads this matrix's
//   entries in this order and gathers x at them, which shows how close a
//   format's time is to what the column pattern allows.

template <typename T>
__device__ void delay(unsigned long long ns) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

extern "C" __global__ void bench_delay_f32(unsigned long long ns) { delay<float>(ns); }
extern "C" __global__ void bench_delay_f64(unsigned long long ns) { delay<double>(ns); }

template <typename T>
__device__ void gather_floor(i64 nnz, const int* __restrict__ cols, const T* __restrict__ x,
                             T* __restrict__ sink) {
    const i64 k = global_thread_id();
    if (k >= nnz) return;
    const int c = ldcs(cols + k);
    const T v = (c >= 0) ? ld(x + c) : T(0);
    // x holds values in [-1, 1): this store never happens, but the compiler
    // cannot know, so the gather is not optimised away.
    if (v == T(4096)) sink[0] = v;
}

extern "C" __global__ void SPMV_BOUNDS gather_floor_f32(i64 nnz, const int* cols, const float* x,
                                                       float* sink) {
    gather_floor<float>(nnz, cols, x, sink);
}
extern "C" __global__ void SPMV_BOUNDS gather_floor_f64(i64 nnz, const int* cols, const double* x,
                                                        double* sink) {
    gather_floor<double>(nnz, cols, x, sink);
}
