// dist.cu -- the x exchange of the multi-GPU SpMV (gpu/src/distributed/).
//
// dist_gather_<t>: out[k] = x[idx[k]] for k < n -- packs the entries of this
// part's x that other parts need (the send lists of the exchange plan,
// concatenated) into one contiguous send buffer, so that NCCL moves one
// contiguous segment per receiver. Grid-stride loop, 64-bit counters.

template <typename T>
__device__ void gather(i64 n, const int* __restrict__ idx, const T* __restrict__ x,
                       T* __restrict__ out) {
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 k = global_thread_id(); k < n; k += stride) {
        out[k] = ld(x + ld(idx + k));
    }
}

#define DIST_GATHER(t, T)                                                                  \
    extern "C" __global__ void SPMV_BOUNDS dist_gather_##t(i64 n, const int* idx, const T* x, \
                                                          T* out) {                         \
        gather<T>(n, idx, x, out);                                                         \
    }
SPMV_TYPES(DIST_GATHER)
