#!/usr/bin/env python3
"""Matrix Market to a SciPy CSR, in Python, in one run on the same file:
sparsetool.read against fast_matrix_market.read_coo + tocsr() and
scipy.io.mmread + tocsr().

Usage (from the repository root, with the package built into .venv):
  .venv/bin/python python/bench/read_bench.py [FILE] [--threads 2] [--reps 3]

FILE defaults to bench/out/peers-10M.mtx, made first if missing by
`scripts/peers.py gen` (10M entries, 17-digit values, 373 MB). Every side
gets the same thread count: RAYON_NUM_THREADS for sparsetool, `parallelism`
for fast_matrix_market, and `scipy.io._fast_matrix_market.PARALLELISM` for
scipy.io.mmread (SciPy >= 1.12 reads through fast_matrix_market's C++
backend; threadpoolctl sets the same variable). Times are
medians of the interleaved runs, after one warm-up round (the file is read
from the page cache). Every CSR result is checked equal to sparsetool's. Two
more rows time the parse alone (to COO, no CSR) on both sides.
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", default=str(ROOT / "bench/out/peers-10M.mtx"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mmread-reps", type=int, default=1, help="scipy.io.mmread is slow: fewer runs")
    a = ap.parse_args()
    # Before sparsetool's thread pool starts.
    os.environ["RAYON_NUM_THREADS"] = str(a.threads)
    if not os.path.exists(a.file):
        os.makedirs(os.path.dirname(a.file), exist_ok=True)
        subprocess.run([sys.executable, str(ROOT / "scripts/peers.py"), "gen", a.file], check=True)

    import fast_matrix_market as fmm
    import numpy as np
    import scipy
    import scipy.io
    import scipy.sparse as sp

    import sparsetool

    try:
        import scipy.io._fast_matrix_market as sfmm

        sfmm.PARALLELISM = a.threads
    except (ImportError, AttributeError):
        pass

    def ours():
        return sparsetool.read(a.file)

    def fast_mm():
        (data, (r, c)), shape = fmm.read_coo(a.file, parallelism=a.threads)
        return sp.coo_array((data, (r, c)), shape=shape).tocsr()

    def mmread():
        return sp.csr_array(scipy.io.mmread(a.file))

    def ours_coo():
        return sparsetool.read(a.file, format="coo")

    def fast_mm_coo():
        return fmm.read_coo(a.file, parallelism=a.threads)

    sides = [
        ("sparsetool.read", ours, a.reps),
        ("fmm.read_coo+tocsr", fast_mm, a.reps),
        ("scipy.io.mmread+tocsr", mmread, a.mmread_reps),
        # The parse alone, to COO (no CSR): where the time goes.
        ("sparsetool.read coo", ours_coo, a.reps),
        ("fmm.read_coo", fast_mm_coo, a.reps),
    ]
    ref = ours()
    ours_coo(), fast_mm_coo()  # warm-up
    for name, fn, _ in sides[1:3]:  # warm-up round, and every result checked
        m = fn()
        m.sum_duplicates()
        assert m.shape == ref.shape and m.nnz == ref.nnz, name
        assert np.array_equal(m.indptr, ref.indptr) and np.array_equal(m.indices, ref.indices), name
        assert np.array_equal(m.data, ref.data), name
    times = {name: [] for name, _, _ in sides}
    for rep in range(a.reps):
        for name, fn, reps in sides:
            if rep < reps:
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
    size = os.path.getsize(a.file) / 1e6
    print(f"file {a.file}: {size:.0f} MB, {ref.shape[0]}x{ref.shape[1]}, {ref.nnz} entries; threads {a.threads}")
    print(
        f"numpy {np.__version__}, scipy {scipy.__version__}, fast_matrix_market {fmm.__version__}, "
        f"sparsetool {sparsetool.__version__}, Python {sys.version.split()[0]}"
    )
    t0 = statistics.median(times["sparsetool.read"])
    for name, _, _ in sides:
        t = statistics.median(times[name])
        runs = ", ".join(f"{x:.3f}" for x in times[name])
        print(f"{name:24s} {t:8.3f} s  {size / t:6.0f} MB/s  {t / t0:5.2f}x sparsetool's time  (runs: {runs})")


if __name__ == "__main__":
    main()
