"""Variant sweep of the sliced-ELL kernel (gpu/kernels/sell.cu), on the GPU machine.

Builds the unsorted SELL-32 layout (sigma = 1, cuSPARSE's) of every matrix given (SciPy .npz CSR, e.g. from
`sparsetool gen ... -o m.npz`) and times, in f32 and f64, a kernel compiled with CuPy for every combination of
  LANES   threads per row (1, 2, 4): a warp holds 32 / LANES rows of a slice and its lane groups split the slots;
  LOAD    how the column indices and values are loaded: cs (evict-first, as shipped), ldg (read-only cache), plain;
  UNROLL  unroll factor of the slot loop (4, 8), or with PIPE=1 slots per batch;
  MINB    resident blocks of 256 threads the compiler must allow per SM (8: 32 registers a thread, as shipped; 4: 64);
  PIPE    1: batches of UNROLL slots, the next batch's indices and values loaded before this one's gathers;
beside the shipped kernel (sell.cu), each timed as `sparsetool bench` does: launches back to back, median of
REPS batches. Prints time, registers and error against SciPy; the summary line per matrix gives the best.

    LANES=1,2 LOAD=cs UNROLL=4,8 MINB=8,4 PIPE=0,1 python3 scripts/sell-variants.py m1.npz m2.npz ...

Needs cupy and scipy.
"""
import itertools, os, sys
import numpy as np, cupy as cp, scipy.sparse as sp

common = open('gpu/kernels/common.cuh').read()
shipped = common + open('gpu/kernels/sell.cu').read()
axis = lambda name, default: os.environ.get(name, default).split(',')
VL_LANES = [int(v) for v in axis('LANES', '1,2,4')]
LOADS = axis('LOAD', 'cs,ldg,plain')
MINBS = [int(v) for v in axis('MINB', '8,4')]
PIPES = [int(v) for v in axis('PIPE', '0,1')]
VL_UNROLLS = [int(v) for v in axis('UNROLL', '4,8')]
DTYPES = axis('DTYPES', 'f32,f64')
REPS, BATCH = int(os.environ.get('REPS', 20)), int(os.environ.get('BATCH', 10))

variant = r'''
template <typename T> __device__ __forceinline__ T LDM(const T* p) {
#if VL_LOADK == 0
    return __ldcs(p);
#elif VL_LOADK == 1
    return __ldg(p);
#else
    return *p;
#endif
}
template <typename T>
__device__ void sellv(int nrows, const ofs_t* __restrict__ slice_ptr, const int* __restrict__ slice_width,
                      const int* __restrict__ col_idx, const T* __restrict__ vals,
                      const T* __restrict__ x, T* __restrict__ y) {
    const i64 t = global_thread_id();
    const int lane = threadIdx.x & 31;
    constexpr int PER = 32 / VL_LANES;             // rows of the slice per warp
    const i64 warp = t >> 5;
    const i64 slice = warp / VL_LANES;             // VL_LANES warps per 32-row slice
    const int part = (int)(warp - slice * VL_LANES);
    const int r = part * PER + (lane % PER);    // local row
    const int g = lane / PER;                   // lane group: slots g, g + VL_LANES, ...
    const i64 p = slice * 32 + r;
    T sum = T(0);
    if (p < nrows) {
        const int w = ld(slice_width + slice);
        i64 idx = (i64)ld(slice_ptr + slice) + (i64)g * 32 + r;
#if VL_PIPE
        // batches of K slots: the next batch's indices and values are loaded
        // before the current batch's x gathers and products
        constexpr int K = VL_UNROLL;
        const int n = (w - g + VL_LANES - 1) / VL_LANES;  // slots of this lane group
        int cn[K];
        T vn[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const bool in = k < n;
            cn[k] = in ? LDM(col_idx + idx + (i64)k * 32 * VL_LANES) : -1;
            vn[k] = in ? LDM(vals + idx + (i64)k * 32 * VL_LANES) : T(0);
        }
        for (int b = 0; b < n; b += K) {
            int c[K];
            T v[K];
#pragma unroll
            for (int k = 0; k < K; ++k) { c[k] = cn[k]; v[k] = vn[k]; }
            idx += (i64)K * 32 * VL_LANES;
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const bool in = b + K + k < n;
                cn[k] = in ? LDM(col_idx + idx + (i64)k * 32 * VL_LANES) : -1;
                vn[k] = in ? LDM(vals + idx + (i64)k * 32 * VL_LANES) : T(0);
            }
#pragma unroll
            for (int k = 0; k < K; ++k)
                if (c[k] >= 0) sum += v[k] * ld(x + c[k]);
        }
#else
        constexpr int kUnroll = VL_UNROLL;
#pragma unroll kUnroll
        for (int s = g; s < w; s += VL_LANES) {
            const int c = LDM(col_idx + idx);
            const T v = LDM(vals + idx);
            if (c >= 0) sum += v * ld(x + c);
            idx += 32 * VL_LANES;
        }
#endif
    }
    for (int o = PER; o < 32; o <<= 1) sum += shfl_xor(sum, o, 32);
    if (g == 0 && p < nrows) stcs(y + p, sum);
}
extern "C" __global__ void __launch_bounds__(256, VL_MINB) sellv_f32(int n, const ofs_t* sp, const int* sw, const int* ci,
    const float* v, const float* x, float* y) { sellv<float>(n, sp, sw, ci, v, x, y); }
extern "C" __global__ void __launch_bounds__(256, VL_MINB) sellv_f64(int n, const ofs_t* sp, const int* sw, const int* ci,
    const double* v, const double* x, double* y) { sellv<double>(n, sp, sw, ci, v, x, y); }
'''

def sell32(A):
    """The unsorted SELL-32 layout: per slice, width = its longest row, slot-major inside the slice."""
    n = A.shape[0]
    ns = (n + 31) // 32
    lens = np.diff(A.indptr)
    lp = np.zeros(ns * 32, np.int64)
    lp[:n] = lens
    widths = lp.reshape(ns, 32).max(axis=1)
    ptr = np.zeros(ns + 1, np.int64)
    ptr[1:] = np.cumsum(widths * 32)
    col = np.full(ptr[-1], -1, np.int32)
    val = np.zeros(ptr[-1], A.dtype)
    rows = np.repeat(np.arange(n), lens)
    slot = np.arange(A.nnz) - np.repeat(A.indptr[:-1], lens)
    pos = ptr[rows // 32] + slot * 32 + rows % 32
    col[pos] = A.indices
    val[pos] = A.data
    return ptr.astype(np.int32), widths.astype(np.int32), col, val

def timeit(fn):
    for _ in range(3):
        fn()
    ts = []
    for _ in range(REPS):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        for _ in range(BATCH):
            fn()
        b.record(); b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b) / BATCH)
    return float(np.median(ts))

mods = {}
def mod(src, opts):
    k = (src, opts)
    if k not in mods:
        mods[k] = cp.RawModule(code=src, options=('--std=c++17',) + opts)
    return mods[k]

for path in sys.argv[1:]:
    A0 = sp.load_npz(path).tocsr()
    n = A0.shape[0]
    for dt, t in [(d, t) for d, t in ((np.float32, 'f32'), (np.float64, 'f64')) if t in DTYPES]:
        A = A0.astype(dt)
        ptr, widths, col, val = sell32(A)
        x = np.random.default_rng(1).random(A.shape[1]).astype(dt)
        ref = A.astype(np.float64) @ x.astype(np.float64)
        dptr, dw, dc, dv, dx = map(cp.asarray, (ptr, widths, col, val, x))
        y = cp.zeros(n, dt)
        ns = len(widths)
        res = []
        # the shipped kernel: C = 32, cap = every slot, no permutation, no tail
        f = mod(shipped, ()).get_function(f'spmv_sell_{t}')
        grid = (ns * 32 + 255) // 256
        args = (np.int32(n), np.int32(32), np.int32(1 << 30), np.uint64(0), dptr, dw, dc, dv, dx, y)
        run = lambda: f((grid,), (256,), args)
        ms = timeit(run)
        err = float(np.abs(cp.asnumpy(y) - ref).max() / max(np.abs(ref).max(), 1e-30))
        res.append((ms, 'shipped', f.num_regs, err))
        for lanes, load, unroll, minb, pipe in itertools.product(VL_LANES, LOADS, VL_UNROLLS, MINBS, PIPES):
            opts = (f'-DVL_LANES={lanes}', f'-DVL_LOADK={["cs", "ldg", "plain"].index(load)}',
                    f'-DVL_UNROLL={unroll}', f'-DVL_MINB={minb}', f'-DVL_PIPE={pipe}')
            g = mod(common + variant, opts).get_function(f'sellv_{t}')
            grid = (ns * 32 * lanes + 255) // 256
            args = (np.int32(n), dptr, dw, dc, dv, dx, y)
            y.fill(0)
            run = lambda: g((grid,), (256,), args)
            ms = timeit(run)
            err = float(np.abs(cp.asnumpy(y) - ref).max() / max(np.abs(ref).max(), 1e-30))
            res.append((ms, f'lanes={lanes} load={load} unroll={unroll} minb={minb} pipe={pipe}', g.num_regs, err))
        base = res[0][0]
        for ms, name, regs, err in res:
            print(f'{os.path.basename(path):14s} {t} {name:44s} {ms * 1e3:8.2f} us  x{base / ms:5.3f}  regs {regs:3d}  err {err:.1e}')
        best = min(res)
        print(f'BEST {os.path.basename(path)} {t}: {best[1]} {best[0] * 1e3:.2f} us (shipped {base * 1e3:.2f})')
