"""Refits variants of `analyze`'s time model from one corpus and scores each the way docs/recommendation.md does.

Input: the samples CSV of the `calibrate` example (every measured run x layout x kernel with its terms), for the
corpus and held-out names of scripts/calibrate.sh (RESULTS, or the folders of H200 joined by '+', each a --results):

    cargo run -q -p sparsetool-analyze --example calibrate -- --results DIR1 [--results DIR2 ...] \
        --holdout "$HOLDOUT" --samples h100.csv --report /dev/null
    python3 scripts/model-variants.py h100.csv [h200.csv ...]

Variants (each fitted like timing::fit: relative least squares, non-negative constants, layouts within 3x of a
run's fastest, one scale per run held near 1, on the training runs only, all models at once with one rows_m and
one far_m constant for all, timing::SHARED_TERMS; the variants said to be as before 2026-11-24 share them too):
- format: one model per format, cuSPARSE's sliced ELL and CSR's row-per-sub-warp kernels (csr-vector) apart (what
  ships; its held-out score must match the report);
- no-run-scale: the same without the run scales (every run's scale 1, as timing::fit did before 2026-11-24);
- csr-one-model: one model for every CSR kernel, its serial term capped at 1024 (as shipped until the split);
- csr-unshared: that, with CSR's serial term the longest row up to 1024, not shared by the vector kernel's lanes
  (as before 2026-11-24); before-11-24: that without the run scales, the model as it shipped before;
- csr-vector-capped: the shipped split with csr-vector's serial term capped at 1024 like csr's;
- own-vs-cusparse: every cuSPARSE kernel (CSR ALG1/ALG2, COO ALG1/ALG2, sliced ELL) a model of its own, our
  kernels one model per format (csr-vector apart, as shipped);
- kernel: every kernel a model of its own (the csr-vector lane variants as one);
- hyb-composed: HYB predicted as the ELL model on its ELL part plus the COO model on its COO part plus one
  constant, fitted on the training HYB runs (issue 21: "HYB = its ELL part + its COO part + a launch"), or
  HYB_DELTA (µs) from the environment.
CSR_CAP (entries, 0 for no serial term, "none" for no cap) from the environment sets the csr model's cap in every
variant that keeps the split (timing::CSR_SERIAL_CAP, 1024).
Scores: held-out runs (within 10 % of the fastest layout, geometric-mean slowdown, worst) and every matrix left
out of its own fit. Needs numpy and scipy.
"""
import csv, math, os, sys
from collections import defaultdict
import numpy as np
from scipy.optimize import nnls

TERMS = ['fixed', 'mbytes', 'serial_k', 'tail_m', 'tail_serial_k', 'rows_m', 'tail_launch', 'scrambled_m', 'dram_m',
         'far_m']
CACHE_MB = 50.0


def load(path):
    rows = list(csv.DictReader(open(path)))
    for r in rows:
        r['t'] = np.array([float(r.get(k) or 0) for k in TERMS])  # far_m: absent in CSVs before it
        for k in ('kernel_us', 'layout_us'):
            r[k] = float(r[k])
        for k in ('held_out', 'excluded', 'nrows', 'nnz', 'max_row', 'slots', 'tail', 'matrix_bytes', 'vector_bytes'):
            r[k] = int(r[k])
    fastest = defaultdict(lambda: math.inf)
    for r in rows:
        fastest[r['run']] = min(fastest[r['run']], r['layout_us'])
    for r in rows:
        r['fastest'] = fastest[r['run']]
    return rows


GROUPS = {
    'format': lambda r: r['model'],
    'own-vs-cusparse': lambda r: r['kernel'] if r['kernel'].startswith('cusparse') else r['model'],
    'kernel': lambda r: 'csr-vector' if r['kernel'].startswith('csr-vector') else r['kernel'],
}


def grouped(rows, group):
    """Each (run, layout, model) once, at its fastest kernel."""
    best = {}
    for r in rows:
        m = group(r)
        k = (r['run'], r['layout'], m)
        if k not in best or r['kernel_us'] < best[k]['us']:
            best[k] = dict(r, m=m, us=r['kernel_us'])
    return list(best.values())


RUN_SCALE_PRIOR = 1.0  # timing::RUN_SCALE_PRIOR
SHARED_TERMS = [5, 9]  # timing::SHARED_TERMS: rows_m, far_m


def nnls_gram(g, h):
    """Non-negative least squares from the normal equations (g = A'A, h = A'1)."""
    x = np.zeros(len(h))
    use = np.diag(g) > 0
    if use.any():
        gu = g[np.ix_(use, use)] + 1e-12 * np.trace(g) * np.eye(use.sum())
        r = np.linalg.cholesky(gu).T  # gu = r'r
        x[use] = nnls(r, np.linalg.solve(r.T, h[use]), maxiter=1000)[0]
    return x


def fit(samples, scaled=True):
    """timing::fit: relative least squares, non-negative constants, layouts within 3x of a run's fastest; with
    `scaled`, one scale per run (its matrix x dtype) held near 1 by RUN_SCALE_PRIOR, alternated to convergence."""
    v = [s for s in samples if s['us'] <= 3 * s['fastest']]
    runs = sorted({s['run'] for s in v})
    ri = {r: i for i, r in enumerate(runs)}
    by = defaultdict(list)
    for s in v:
        by[s['m']].append(s)
    arrays = {m: (np.array([s['t'] for s in ss]), np.array([s['us'] for s in ss]),
                  np.array([ri[s['run']] for s in ss])) for m, ss in by.items()}
    # timing::SHARED_TERMS: one rows_m and one far_m constant for every model (columns 0, 1), then each model's own
    own = [j for j in range(len(TERMS)) if j not in SHARED_TERMS]
    cols = {m: np.array([SHARED_TERMS.index(j) if j in SHARED_TERMS else len(SHARED_TERMS) + i * len(own) + own.index(j)
                         for j in range(len(TERMS))]) for i, m in enumerate(arrays)}
    n = len(SHARED_TERMS) + len(arrays) * len(own)
    scale = np.ones(len(runs))
    for _ in range(20000 if scaled else 1):
        g, h, grams = np.zeros((n, n)), np.zeros(n), {}
        for m, (t, us, run) in arrays.items():
            a = t * (scale[run] / us)[:, None]
            grams[m] = a.T @ a
            np.add.at(g, (cols[m][:, None], cols[m][None, :]), grams[m])
            np.add.at(h, cols[m], a.sum(axis=0))
        k = nnls_gram(g, h)
        out = {m: np.where([j in SHARED_TERMS and grams[m][j, j] == 0 for j in range(len(TERMS))], 0, k[c])
               for m, c in cols.items()}  # a shared term none of a model's samples has: 0 in it (JointLayout::split)
        num = np.full(len(runs), RUN_SCALE_PRIOR)
        den = np.full(len(runs), RUN_SCALE_PRIOR)
        for m, (t, us, run) in arrays.items():
            q = t @ out[m] / us
            np.add.at(num, run, q)
            np.add.at(den, run, q * q)
        new = num / den
        moved = np.max(np.abs(new / scale - 1))
        scale = new
        if moved <= 1e-10:
            break
    return out


def capped_serial(cap, models):
    """The serial term of `models` as the csr model has it, the longest row up to `cap` over the vector kernel's
    lanes (cap None: not capped)."""
    def change(samples):
        out = []
        for s in samples:
            if s['m'] in models:
                s = dict(s, t=s['t'].copy())
                m = s['max_row'] if cap is None else min(s['max_row'], cap)
                s['t'][2] = -(-m // csr_vector_lanes(s['nrows'], s['nnz'])) / 1e3
            out.append(s)
        return out
    return change


def csr_vector_lanes(nrows, nnz):
    """timing::csr_vector_lanes: the power of two at or above the mean row length, 2 to 32."""
    mean = max(-(-nnz // max(nrows, 1)), 1)
    return max(min(1 << (mean - 1).bit_length(), 32), 2)


ONE_CSR = lambda r: 'csr' if r['model'] == 'csr-vector' else r['model']  # one model for every CSR kernel


def one_csr(shared=True):
    """The serial term of ONE_CSR's csr model: the longest row up to 1024, over the vector kernel's lanes when
    `shared` (before 2026-11-24: not)."""
    def change(samples):
        out = []
        for s in samples:
            if s['m'] == 'csr':
                s = dict(s, t=s['t'].copy())
                lanes = csr_vector_lanes(s['nrows'], s['nnz']) if shared else 1
                s['t'][2] = -(-min(s['max_row'], 1024) // lanes) / 1e3
            out.append(s)
        return out
    return change


def hyb_parts(s):
    """Terms of HYB's ELL part (as an ELL layout) and of its COO part (as a COO layout)."""
    vb = 4 if s['dtype'] == 'f32' else 8
    width = int(s['layout'].split('-')[1])
    ell_b = s['slots'] * (vb + 4)
    ell_mb = (ell_b + s['vector_bytes']) / 1e6
    coo_mb = (s['matrix_bytes'] - ell_b + s['vector_bytes']) / 1e6
    far = s['t'][9]  # the far gathers of the whole matrix, counted once (on the ELL part)
    ell = np.array([1, ell_mb, width / 1e3, 0, 0, s['nrows'] / 1e6, 0, 0, max(0, ell_mb - CACHE_MB), far])
    coo = np.array([1, coo_mb, 0, 0, 0, s['nrows'] / 1e6, 0, 0, max(0, coo_mb - CACHE_MB), 0])
    return ell, coo


def predictor(train, composed, scaled=True):
    if not composed:
        c = fit(train, scaled)
        return lambda s: c[s['m']] @ s['t'] if s['m'] in c else math.inf
    c = fit([s for s in train if s['m'] != 'hyb'])
    base = lambda s: c['ell'] @ hyb_parts(s)[0] + (c['coo'] @ hyb_parts(s)[1] if s['tail'] > 0 else 0)
    # the constant: relative least squares over the training HYB runs with a COO part
    v = [s for s in train if s['m'] == 'hyb' and s['tail'] > 0 and s['us'] <= 3 * s['fastest']]
    delta = sum((1 - base(s) / s['us']) / s['us'] for s in v) / max(sum(1 / s['us'] ** 2 for s in v), 1e-30)
    if 'HYB_DELTA' in os.environ:  # a constant given instead of fitted (to study it, not to choose it)
        delta = float(os.environ['HYB_DELTA'])
    return lambda s: (base(s) + (delta if s['tail'] > 0 else 0)) if s['m'] == 'hyb' else (
        c[s['m']] @ s['t'] if s['m'] in c else math.inf)


def slowdowns(samples, predict):
    """Per run: the measured time of the layout with the lowest prediction over the fastest layout."""
    cand = {}
    for s in samples:
        k = (s['run'], s['layout'])
        p = predict(s)
        if k not in cand:
            cand[k] = [p, s['layout_us'], s['excluded'], s['fastest']]
        else:
            cand[k][0] = min(cand[k][0], p)
    runs = defaultdict(list)
    for (run, layout), c in cand.items():
        runs[run].append((layout, c))
    out = {}
    for run, cs in runs.items():
        layout, c = min((x for x in cs if not x[1][2]), key=lambda x: x[1][0])
        out[run] = (c[1] / c[3], layout)
    return out


def summary(sl):
    s = np.array(sl)
    return f'{100 * (s <= 1.1).mean():5.1f} % {np.exp(np.log(s).mean()):.3f}x {s.max():.2f}x'


for path in sys.argv[1:]:
    rows = load(path)
    print(f'{path}: {len({r["run"] for r in rows})} runs; held out / every matrix left out of its own fit '
          '(within 10 %, geometric mean, worst)')
    cap = os.environ.get('CSR_CAP', '1024')
    same = capped_serial(None if cap == 'none' else int(cap), ('csr',))
    for name, group, composed, scaled, change in [
            ('format', GROUPS['format'], False, True, same),
            ('no-run-scale', GROUPS['format'], False, False, same),
            ('csr-one-model', ONE_CSR, False, True, one_csr()),
            ('csr-unshared', ONE_CSR, False, True, one_csr(False)),
            ('before-11-24', ONE_CSR, False, False, one_csr(False)),
            ('csr-vector-capped', GROUPS['format'], False, True,
             lambda v: capped_serial(1024, ('csr-vector',))(same(v))),
            ('own-vs-cusparse', GROUPS['own-vs-cusparse'], False, True, same),
            ('kernel', GROUPS['kernel'], False, True, same),
            ('hyb-composed', GROUPS['format'], True, True, same)]:
        samples = change(grouped(rows, group))
        held = slowdowns([s for s in samples if s['held_out']],
                         predictor([s for s in samples if not s['held_out']], composed, scaled))
        misses = sorted(f'{run} {lay} {x:.2f}x' for run, (x, lay) in held.items() if x > 1.1)
        loo = []
        for matrix in sorted({s['matrix'] for s in samples}):
            p = predictor([s for s in samples if s['matrix'] != matrix], composed, scaled)
            loo += [x for x, _ in slowdowns([s for s in samples if s['matrix'] == matrix], p).values()]
        print(f'  {name:16s} held out {summary([x for x, _ in held.values()])} ({len(held)})   '
              f'left out {summary(loo)} ({len(loo)})   misses: {", ".join(misses)}')
