#!/usr/bin/env python3
"""Cross-checks sparsetool against SciPy, a real client rather than a mirror of our code.

  scipy_crosscheck.py mtx2csr MTX NPZ   NPZ (written by `sparsetool convert MTX --to csr`) must equal
                                        scipy.io.mmread(MTX).tocsr() after summing duplicates
  scipy_crosscheck.py spb SPB NPZ       the numpy-only .spb reader (scripts/spb_reader.py) must see the
                                        same arrays as the .npz of the same conversion
Exit status 0 when equal; 1 with a reason otherwise."""
import gzip, io, os, sys

import numpy as np
import scipy.io
import scipy.sparse as sp


def load_mtx(path):
    if path.endswith(".gz"):
        with gzip.open(path, "rb") as f:
            data = f.read()
        m = scipy.io.mmread(io.BytesIO(data))
    else:
        m = scipy.io.mmread(path)
    if not sp.issparse(m):
        m = sp.csr_matrix(np.asarray(m))  # array files: sparsetool keeps the nonzeros
    m = sp.csr_matrix(m)
    m.sum_duplicates()
    m.sort_indices()
    return m


def mtx2csr(mtx, npz):
    want = load_mtx(mtx)
    got = sp.load_npz(npz).tocsr()
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if not np.array_equal(got.indptr, want.indptr):
        return "indptr differs"
    if not np.array_equal(got.indices, want.indices):
        return "indices differ"
    gd, wd = got.data, want.data
    if np.iscomplexobj(wd) != np.iscomplexobj(gd):
        return f"value kinds differ: {gd.dtype} vs {wd.dtype}"
    if not np.array_equal(gd.astype(np.complex128), wd.astype(np.complex128)):
        bad = np.flatnonzero(gd.astype(np.complex128) != wd.astype(np.complex128))[:3]
        return f"values differ at {bad.tolist()}: {gd[bad]} vs {wd[bad]}"
    return None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    mode, a, b = sys.argv[1:]
    if mode == "mtx2csr":
        err = mtx2csr(a, b)
    elif mode == "spb":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import spb_reader
        err = None if spb_reader.compare(a, b) == 0 else "arrays differ"
    else:
        sys.exit(__doc__)
    if err:
        print(f"{a}: {err}")
        sys.exit(1)


if __name__ == "__main__":
    main()
