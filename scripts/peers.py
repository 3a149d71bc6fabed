#!/usr/bin/env python3
"""Peers, measured beside sparsetool on the same file and machine.

Set-up once (any venv):  python3 -m pip install numpy scipy fast_matrix_market
Usage:
  peers.py gen OUT.mtx [--nnz N] [--rows R] [--seed S]    random real general file, 17-digit values
  peers.py read FILE [--threads T] [--reps K]             fast_matrix_market read -> COO, MB/s
  peers.py tocsr FILE [--reps K]                          SciPy coo.tocsr() on the file's entries
  peers.py compare FILE --sparsetool PATH [--threads T]   MM read: fast_matrix_market vs `convert --to coo --timings`
  peers.py compare-csr FILE --sparsetool PATH [--threads T]
                                                          COO->CSR: SciPy tocsr() vs the convert phase of
                                                          `convert --to csr --timings` (what the CLI user gets)
  peers.py compare-spb FILE --sparsetool PATH [--threads T]
                                                          read phase of `convert --to csr --timings` from FILE (the
                                                          Matrix Market parse) against from its CSR `.spb` (mapped)
Times are medians of K runs, the two sides interleaved so that machine noise hits both alike; file reads are
from the page cache (a warm-up round comes first).
"""
import argparse, os, re, statistics, subprocess, sys, tempfile, time


def need():
    try:
        import numpy, scipy, fast_matrix_market  # noqa: F401
    except ImportError as e:
        sys.exit(f"missing {e.name}: python3 -m pip install numpy scipy fast_matrix_market")


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def gen(a):
    need()
    import numpy as np, scipy.sparse as sp, fast_matrix_market as fmm
    rng = np.random.default_rng(a.seed)
    rows = rng.integers(0, a.rows, a.nnz); cols = rng.integers(0, a.rows, a.nnz)
    vals = rng.standard_normal(a.nnz)
    m = sp.coo_matrix((vals, (rows, cols)), shape=(a.rows, a.rows))
    fmm.mmwrite(a.out, m, precision=17)
    print(f"wrote {a.out}: {a.rows}x{a.rows}, {a.nnz} entries, {os.path.getsize(a.out)/1e6:.0f} MB")


def read(a):
    need()
    import fast_matrix_market as fmm
    fmm.read_coo(a.file, parallelism=a.threads)  # warm the page cache
    t = statistics.median(timed(lambda: fmm.read_coo(a.file, parallelism=a.threads)) for _ in range(a.reps))
    mb = os.path.getsize(a.file) / 1e6
    print(f"fast_matrix_market read_coo, {a.threads} threads: {t:.3f} s = {mb/t:.0f} MB/s")


def coo_of(path):
    import scipy.sparse as sp, fast_matrix_market as fmm
    (data, (r, c)), shape = fmm.read_coo(path)
    return sp.coo_matrix((data, (r, c)), shape=shape)


def tocsr(a):
    need()
    m = coo_of(a.file)
    t = statistics.median(timed(m.tocsr) for _ in range(a.reps))
    print(f"scipy coo.tocsr(): {t:.3f} s = {m.nnz/t/1e6:.1f} M entries/s")


def run_sparsetool(a, target, out, src=None):
    env = dict(os.environ, RAYON_NUM_THREADS=str(a.threads))
    t = time.perf_counter()
    p = subprocess.run([a.sparsetool, "convert", src or a.file, "--to", target, "-o", out, "--timings"],
                       env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"sparsetool failed ({p.returncode}): {p.stderr.strip()[:500]}")
    os.remove(out)
    phases = {k: float(v) for k, v in re.findall(r"^(\w+):\s*([0-9.]+)\s*s$", p.stderr, re.M)}
    return phases, wall


def interleave(a, target, peer):
    """Runs peer() and sparsetool alternately, a warm-up round first; returns the medians."""
    t_peer, phases, walls = [], [], []
    with tempfile.TemporaryDirectory() as d:
        for i in range(a.reps + 1):
            tp = peer()
            ph, wall = run_sparsetool(a, target, os.path.join(d, f"o{i}.npz"))
            if i == 0:
                continue
            t_peer.append(tp); phases.append(ph); walls.append(wall)
    med = lambda k: statistics.median(p[k] for p in phases) if all(k in p for p in phases) else None
    return statistics.median(t_peer), med, statistics.median(walls)


def show(a, size, peer, short, t_peer, phase, t_st, wall, wall_note, rate=lambda t: ""):
    """Prints one comparison: the peer's time, sparsetool's `phase` time (when
    --timings gave one) and their ratio, and sparsetool's whole run; the labels
    are padded to line up with the phase label."""
    phase = f"sparsetool {phase} phase (--timings):"
    w = len(phase) + 1
    print(f"file {a.file}: {size}, {a.threads} threads, {a.reps} interleaved runs each")
    print(f"{peer + ':':<{w}}{t_peer:.3f} s{rate(t_peer)}")
    if t_st:
        print(f"{phase:<{w}}{t_st:.3f} s{rate(t_st)}")
        print(f"ratio ({short} time / sparsetool time): {t_peer/t_st:.2f}x")
    print(f"{'sparsetool whole convert to .npz:':<{w}}{wall:.3f} s (process wall time, {wall_note})")


def compare(a):
    need()
    import fast_matrix_market as fmm
    mb = os.path.getsize(a.file) / 1e6
    t_f, med, wall = interleave(a, "coo", lambda: timed(lambda: fmm.read_coo(a.file, parallelism=a.threads)))
    show(a, f"{mb:.0f} MB", "fast_matrix_market read_coo", "fmm", t_f, "read", med("read"), wall,
         "incl. write", rate=lambda t: f"  ({mb/t:.0f} MB/s)")


def compare_csr(a):
    need()
    m = coo_of(a.file)
    t_s, med, wall = interleave(a, "csr", lambda: timed(m.tocsr))
    show(a, f"{m.nnz} entries", "scipy coo.tocsr()", "scipy", t_s, "convert", med("convert"), wall,
         "incl. read and write")


def compare_spb(a):
    """The CLI's read phase from the Matrix Market file and from the same matrix's CSR `.spb`, interleaved
    (sparsetool against itself: the `.spb` is what `convert --to csr -o X.spb` writes)."""
    with tempfile.TemporaryDirectory() as d:
        spb = os.path.join(d, "m.spb")
        p = subprocess.run([a.sparsetool, "convert", a.file, "--to", "csr", "-o", spb], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"sparsetool failed ({p.returncode}): {p.stderr.strip()[:500]}")
        mtx, bin_ = [], []
        for i in range(a.reps + 1):
            ph_m, _ = run_sparsetool(a, "csr", os.path.join(d, "o.spb"))
            ph_b, _ = run_sparsetool(a, "csr", os.path.join(d, "o.spb"), src=spb)
            if i:
                mtx.append(ph_m["read"]); bin_.append(ph_b["read"])
        size = os.path.getsize(spb) / 1e6
    t_m, t_b = statistics.median(mtx), statistics.median(bin_)
    print(f"file {a.file}: {os.path.getsize(a.file)/1e6:.0f} MB, its CSR .spb {size:.0f} MB, {a.threads} threads, "
          f"{a.reps} interleaved runs each")
    print(f"read phase, convert FILE --to csr:     {t_m:.3f} s")
    print(f"read phase, convert FILE.spb --to csr: {t_b:.4f} s")
    print(f"ratio (.mtx read / .spb read): {t_m/t_b:.1f}x")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    s = p.add_subparsers(dest="cmd", required=True)
    g = s.add_parser("gen"); g.add_argument("out"); g.add_argument("--nnz", type=int, default=10_000_000)
    g.add_argument("--rows", type=int, default=1_000_000); g.add_argument("--seed", type=int, default=1)
    r = s.add_parser("read"); r.add_argument("file"); r.add_argument("--threads", type=int, default=2)
    r.add_argument("--reps", type=int, default=3)
    c = s.add_parser("tocsr"); c.add_argument("file"); c.add_argument("--reps", type=int, default=3)
    for name in ("compare", "compare-csr", "compare-spb"):
        m = s.add_parser(name); m.add_argument("file"); m.add_argument("--sparsetool", required=True)
        m.add_argument("--threads", type=int, default=2); m.add_argument("--reps", type=int, default=5)
    a = p.parse_args()
    {"gen": gen, "read": read, "tocsr": tocsr, "compare": compare, "compare-csr": compare_csr,
     "compare-spb": compare_spb}[a.cmd](a)


if __name__ == "__main__":
    main()
