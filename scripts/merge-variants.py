"""Variant sweep of the merge-path CSR kernel (gpu/kernels/csr_merge.cu), on the GPU machine.

Compiles the kernel with CuPy for every combination of items per lane (MP_ITEMS_<t>), rows of the
window in units of 32 (MP_WIN_<t>, at most the items), resident blocks (MP_BLOCKS_<t>, the register
cap) and waves of warps (the host's chunk rule), times each (its partition built once, as the host
does; the product and the carry fix-up timed, y not zeroed) on every matrix given (SciPy .npz CSR,
e.g. from `sparsetool gen ... -o m.npz`) in f32 and f64 beside the entry-split kernel
(csr_balanced.cu, y zeroed inside the timing as it needs) and CuPy's cuSPARSE product, and prints
time, registers, spills and error:

    python3 scripts/merge-variants.py m1.npz m2.npz ...

Each axis can be narrowed by a comma-separated environment variable: ITEMS (8,12,16), WINS (2,4,8; powers of two),
BLOCKS (4,6,8), WAVES (4,8,16), ROUNDS (256: what a chunk is rounded up to, items or 'tile'). DEFS adds an axis of named sets of compiler definitions, for a kernel (MERGE_SRC)
with switches of its own: DEFS='a:-DX=0;b:-DX=1 -DY=2'. DTYPES (f32,f64) narrows the value types. FIXUP=1 also times the carry fix-up alone.

The shipped constants came from this sweep (BENCHMARKS.md, issue 17). Needs cupy and scipy.
"""
import os, sys, itertools, numpy as np, cupy as cp, scipy.sparse as sp
common = open('gpu/kernels/common.cuh').read()
# MERGE_SRC: another version of the kernel to time (e.g. one saved from git before a change)
new_src = common + open(os.environ.get('MERGE_SRC', 'gpu/kernels/csr_merge.cu')).read()
old_src = common + open('gpu/kernels/csr_balanced.cu').read()
SM = cp.cuda.Device().attributes['MultiProcessorCount']
REPS = 20
axis = lambda name, default: [int(v) for v in os.environ.get(name, default).split(',')]
ITEMS, WINS, BLOCKS, WAVES = axis('ITEMS', '8,12,16'), axis('WINS', '2,4,8'), axis('BLOCKS', '4,6,8'), axis('WAVES', '4,8,16')
# ROUNDS: what a chunk is rounded up to: a number of items, or 'tile' (32 * items per lane)
ROUNDS = os.environ.get('ROUNDS', '256').split(',')
DTYPES = os.environ.get('DTYPES', 'f32,f64').split(',')
DEFS = [(d.split(':', 1)[0], tuple(d.split(':', 1)[1].split())) for d in os.environ.get('DEFS', '').split(';') if d] or [('', ())]

def timeit(fn, y, zero=True):
    for _ in range(3):
        y.fill(0); fn()
    ts = []
    for _ in range(REPS):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        if not zero:
            y.fill(1.0)  # outside the timing: the kernel must overwrite y
        a.record()
        if zero:
            y.fill(0)
        fn(); b.record(); b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b))
    return float(np.median(ts))

mods = {}
def mod(src, opts):
    k = (id(src), opts)
    if k not in mods:
        mods[k] = cp.RawModule(code=src, options=('--std=c++17',) + opts)
    return mods[k]

rows = []
for path in sys.argv[1:]:
    A0 = sp.load_npz(path).tocsr()
    n, nnz = A0.shape[0], A0.nnz
    for dt, t in [(d, t) for d, t in ((np.float32, 'f32'), (np.float64, 'f64')) if t in DTYPES]:
        A = A0.astype(dt)
        indptr = cp.asarray(A.indptr.astype(np.int32)); indices = cp.asarray(A.indices.astype(np.int32))
        data = cp.asarray(A.data); x = cp.asarray(np.random.default_rng(1).random(A.shape[1]).astype(dt))
        ref = cp.asarray((A @ cp.asnumpy(x).astype(np.float64)))
        y = cp.zeros(n, dt)
        name = path.split('/')[-1][:-4] + '-' + t
        import cupyx.scipy.sparse as csp
        Ad = csp.csr_matrix((data, indices, indptr), shape=A.shape)
        ms = timeit(lambda: Ad.dot(x), y)
        rows.append((name, 'cupy-cusparse', ms, 0, 0, 0.0))
        # old kernel
        f = mod(old_src, ()).get_function('spmv_csr_balanced_' + t)
        tw = SM * 64 * 4; per = -(-nnz // tw); chunk = min(max(-(-per // 32) * 32, 32), 2048)
        warps = -(-nnz // chunk)
        fn = lambda: f(((warps * 32 + 255) // 256,), (256,), (np.int32(n), np.int64(nnz), np.int32(chunk), indptr, indices, data, x, y))
        ms = timeit(fn, y); err = float(cp.max(cp.abs(y - ref)) / (cp.max(cp.abs(ref)) + 1e-30))
        rows.append((name, 'csr-balanced', ms, f.num_regs, f.local_size_bytes, err))
        for items, win, minb, waves, rnd, (dname, defs) in itertools.product(ITEMS, WINS, BLOCKS, WAVES, ROUNDS, DEFS):
            if win > items:
                continue
            opts = (f'-DMP_ITEMS_{t}={items}', f'-DMP_WIN_{t}={win}', f'-DMP_BLOCKS_{t}={minb}') + defs
            try:
                m = mod(new_src, opts)
                f = m.get_function('spmv_csr_merge_' + t)
            except Exception as e:
                rows.append((name, f'i{items} r{win} b{minb} {dname}: ' + ' '.join(str(e).split())[-300:], 0, 0, 0, 0)); continue
            items_total = n + nnz
            unit = 32 * items if rnd == 'tile' else int(rnd)
            tw = SM * 64 * waves; per = -(-items_total // tw); chunk = max(-(-per // unit) * unit, unit)
            warps = -(-items_total // chunk)
            starts = cp.zeros(2 * (warps + 1), cp.int32)
            crow = cp.zeros(max(warps, 1), cp.int32); cval = cp.zeros(max(warps, 1), dt)
            m.get_function('merge_partition')(((warps + 256) // 256,), (256,), (np.int32(n), np.int64(nnz), np.int32(chunk), np.int64(warps), indptr, starts))
            fixup = m.get_function('merge_fixup_' + t)
            def fn():
                f(((warps * 32 + 255) // 256,), (256,), (np.int32(n), np.int64(nnz), np.int32(chunk), starts, crow, cval, indptr, indices, data, x, y))
                fixup(((warps + 255) // 256,), (256,), (np.int64(warps), crow, cval, y))
            ms = timeit(fn, y, zero=False); y.fill(1.0); fn(); err = float(cp.max(cp.abs(y - ref)) / (cp.max(cp.abs(ref)) + 1e-30))
            rnd_name = '' if len(ROUNDS) == 1 else f' c{rnd}'
            rows.append((name, f'csr-merge i{items} r{win} b{minb} w{waves}{rnd_name} {dname}'.rstrip(), ms, f.num_regs, f.local_size_bytes, err))
            if os.environ.get('FIXUP'):  # the carry fix-up alone (part of the time above)
                ms = timeit(lambda: fixup(((warps + 255) // 256,), (256,), (np.int64(warps), crow, cval, y)), y, zero=False)
                rows.append((name, f'  fix-up of the above ({warps} warps)', ms, fixup.num_regs, 0, 0.0))
        for r in rows:
            if r[0] == name:
                print(f'{r[0]:28s} {r[1]:32s} {r[2]:8.4f} regs {r[3]:3d} spill {r[4]:4d} err {r[5]:.1e}', flush=True)
