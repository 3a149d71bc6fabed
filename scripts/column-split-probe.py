"""Does splitting a matrix into column panels cut SpMV time on a GPU? A probe with cuSPARSE alone (issue 17).

On the uncapped power laws `x` is gathered at random over all columns, and in f64 it (33.6 MB at 4.2M columns) does
not stay in L2 beside the matrix stream: about half of the gathers go to DRAM (BENCHMARKS.md, Nsight Compute). A
product by column panels, y = A[:, 0:c1] x[0:c1] + A[:, c1:c2] x[c1:c2] + ..., gathers from one panel of `x` at a
time, which fits, at the price of streaming y and the row pointers once per panel. This times cuSPARSE's SpMV
(CuPy) on the whole matrix against the same product by K panels (each panel a CSR matrix of its own, y accumulated
with beta = 1), in f32 and f64, median of REPS launches each, on the GPU machine:

    sparsetool gen powerlaw --rows 4200000 --nnz-per-row 16 --alpha 2.1 -o a21.npz
    python3 scripts/column-split-probe.py a21.npz [more.npz ...]

PANELS (2,4) sets the panel counts, REPS (20) the launches. Needs cupy and scipy.
"""
import os, sys, numpy as np, cupy as cp, scipy.sparse as sp, cupyx.scipy.sparse as csp
from cupyx import cusparse

PANELS = [int(v) for v in os.environ.get('PANELS', '2,4').split(',')]
REPS = int(os.environ.get('REPS', '20'))


def median_ms(fn):
    for _ in range(3):
        fn()
    ts = []
    for _ in range(REPS):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b))
    return float(np.median(ts))


rows = []
for path in sys.argv[1:]:
    a = sp.load_npz(path).tocsr()
    m, n = a.shape
    for dt in (np.float32, np.float64):
        A = csp.csr_matrix(a.astype(dt))
        x = cp.asarray(np.random.default_rng(1).random(n).astype(dt))
        y = cp.zeros(m, dt)
        full = median_ms(lambda: cusparse.spmv(A, x, y=y, alpha=1, beta=0))
        ref = y.copy()
        name = os.path.basename(path)
        rows.append((name, np.dtype(dt).name, 1, full, 1.0, 0.0))
        for k in PANELS:
            cuts = np.linspace(0, n, k + 1).astype(np.int64)
            panels = [(csp.csr_matrix(a[:, c0:c1].astype(dt)), x[c0:c1]) for c0, c1 in zip(cuts, cuts[1:])]

            def split():
                for i, (p, xp) in enumerate(panels):
                    cusparse.spmv(p, xp, y=y, alpha=1, beta=0 if i == 0 else 1)

            t = median_ms(split)
            err = float(cp.abs(y - ref).max() / max(float(cp.abs(ref).max()), 1e-30))
            rows.append((name, np.dtype(dt).name, k, t, full / t, err))
            del panels
        del A
print(f'{"matrix":24s} {"dtype":8s} {"panels":>6s} {"ms":>9s} {"speedup":>8s} {"rel err":>9s}')
for r in rows:
    print(f'{r[0]:24s} {r[1]:8s} {r[2]:6d} {r[3]:9.3f} {r[4]:8.3f} {r[5]:9.1e}')
