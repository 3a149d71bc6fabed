#!/usr/bin/env python3
"""GPU checks of the Python package, for a machine with a GPU, Python, NumPy
and CuPy but no Rust toolchain (SciPy and pytest optional): run by
python/tests/gpu_check.sh with the extension built elsewhere and carried.

For every format (COO, CSR and CSC only when SciPy is there), f32 and f64,
on bundled matrices: sparsetool.spmv on the GPU, with a NumPy x and with a
CuPy x (y must come back as CuPy), A x and Aᵀ x, against the library's CPU
SpMV. Prints one line per check and exits 1 if any failed.
"""
import pathlib
import sys

import numpy as np

import sparsetool

ROOT = pathlib.Path(__file__).resolve().parents[2]
MATRICES = ["memplus.mtx.gz", "bcsstk13.mtx.gz", "add32.mtx.gz"]


def main() -> int:
    ok, why = sparsetool.gpu_available()
    if not ok:
        print(f"SKIPPED: {why}")
        return 1
    print(f"device: {why}")
    try:
        import cupy
    except ImportError:
        cupy = None
        print("CuPy not installed: device-vector checks skipped")
    try:
        import scipy  # noqa: F401

        formats = sparsetool.FORMATS
    except ImportError:
        formats = ("ell", "hyb", "jds", "sell")
        print("SciPy not installed: COO/CSR/CSC skipped")
    failures = 0
    rng = np.random.default_rng(7)
    for name in MATRICES:
        path = ROOT / "fixtures/matrices/real" / name
        for dtype, tol in ((np.float64, 1e-9), (np.float32, 2e-3)):
            for fmt in formats:
                m = sparsetool.convert(path, fmt, dtype=dtype, allow_fill=True)
                for transpose in (False, True):
                    n = m.shape[0] if transpose else m.shape[1]
                    x = rng.standard_normal(n).astype(dtype)
                    ref = sparsetool.spmv(m, x, transpose=transpose)
                    scale = max(1.0, float(np.abs(ref).max()))
                    results = [("numpy x", sparsetool.spmv(m, x, device="gpu", transpose=transpose))]
                    if cupy is not None:
                        y = sparsetool.spmv(m, cupy.asarray(x), device="gpu", transpose=transpose)
                        if not isinstance(y, cupy.ndarray):
                            print(f"FAIL {name} {fmt} {np.dtype(dtype).name}: y is {type(y)}, not CuPy")
                            failures += 1
                            continue
                        results.append(("cupy x", cupy.asnumpy(y)))
                    for how, y in results:
                        err = float(np.abs(y - ref).max()) / scale if len(ref) else 0.0
                        good = y.dtype == ref.dtype and err <= tol
                        failures += not good
                        op = "A^T x" if transpose else "A x"
                        print(f"{'ok  ' if good else 'FAIL'} {name:18s} {fmt:4s} {np.dtype(dtype).name:7s} {op:5s} {how}: max rel err {err:.1e}")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
