"""Reading against scipy.io.mmread, and round trips through every container."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import sparsetool
from conftest import FIXTURES, bundled_matrices

FORMATS = ("coo", "csr", "csc", "ell", "hyb", "jds", "sell")
CONTAINERS = (".mtx", ".mtx.gz", ".npz", ".spb")


def canonical(m):
    """A SciPy CSR with duplicates summed and indices sorted."""
    c = sp.csr_array(m)
    c.sum_duplicates()
    c.sort_indices()
    return c


def assert_same(a, b):
    a, b = canonical(a), canonical(b)
    assert a.shape == b.shape
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.data, b.data.astype(a.data.dtype))


@pytest.mark.parametrize("path", bundled_matrices(), ids=lambda p: p.name)
def test_read_equals_mmread(path):
    ref = scipy.io.mmread(path)
    try:
        ours = sparsetool.read(path)
        lenient = False
    except sparsetool.InputError as e:
        # A file SciPy reads as stored but the strict reader refuses (cha.mtx:
        # a hermitian file with a non-real diagonal): lenient mode keeps it.
        assert "--lenient" in str(e)
        with pytest.warns(sparsetool.ReadWarning):
            ours = sparsetool.read(path, lenient=True)
        lenient = True
    assert type(ours).__name__ == "csr_array"
    assert_same(ours, ref)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if lenient else "error")
        coo = sparsetool.read(path, format="coo", lenient=lenient)
    assert type(coo).__name__ == "coo_array"
    assert_same(coo, ref)


def root_base(arr):
    """The object that owns an array's memory (through views and memoryviews)."""
    base = arr
    while isinstance(base, (np.ndarray, memoryview)):
        base = base.base if isinstance(base, np.ndarray) else base.obj
    return base


def test_read_hands_over_rust_buffers():
    a = sparsetool.read(FIXTURES / "matrices/real/bcsstk13.mtx.gz")
    # No NumPy array in the chain owns the data: its owner is the Rust Vec.
    for arr in (a.data, a.indices, a.indptr):
        assert not arr.flags.owndata
        assert root_base(arr) is not None and "PySliceContainer" in type(root_base(arr)).__name__
    assert a.has_canonical_format


def test_read_dtype_and_formats():
    p = FIXTURES / "matrices/real/bcsstk13.mtx.gz"
    ref = sparsetool.read(p)
    f32 = sparsetool.read(p, dtype="float32")
    assert f32.dtype == np.float32
    np.testing.assert_allclose(f32.data, ref.data.astype(np.float32))
    for fmt in FORMATS:
        m = sparsetool.read(p, format=fmt)
        if fmt in ("coo", "csr", "csc"):
            assert m.format == fmt
        else:
            assert isinstance(m, sparsetool.FormatMatrix)
            assert (m.format, m.shape, m.nnz) == (fmt, ref.shape, ref.nnz)
            m = m.to_scipy()
        assert_same(m, ref)


def test_read_complex():
    p = FIXTURES / "matrices/real/young1c.mtx"
    a = sparsetool.read(p)
    assert a.dtype == np.complex128
    assert sparsetool.read(p, dtype=np.float32).dtype == np.complex64
    assert_same(a, scipy.io.mmread(p))


def sample():
    return sparsetool.read(FIXTURES / "matrices/real/memplus.mtx.gz")


@pytest.mark.parametrize("ext", CONTAINERS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip(tmp_path, fmt, ext):
    a = sample()
    m = sparsetool.convert(a, fmt, allow_fill=True)
    out = tmp_path / f"m{ext}"
    sparsetool.write(out, m)
    if ext in (".npz", ".spb"):
        # Binary containers keep the format and its arrays.
        back = sparsetool.read(out, format=fmt)
        if isinstance(m, sparsetool.FormatMatrix):
            assert back.format == fmt and back.params == m.params
            for k, v in m.arrays.items():
                np.testing.assert_array_equal(back.arrays[k], v)
            back = back.to_scipy()
        assert_same(back, a)
    else:
        assert_same(sparsetool.read(out), a)
        assert_same(scipy.io.mmread(out), a)


@pytest.mark.parametrize("fmt", ("coo", "csr", "csc"))
def test_npz_interop_with_scipy(tmp_path, fmt):
    a = sample().asformat(fmt)
    ours = tmp_path / "ours.npz"
    sparsetool.write(ours, a)
    assert_same(sp.load_npz(ours), a)
    theirs = tmp_path / "theirs.npz"
    sp.save_npz(theirs, a)
    assert_same(sparsetool.read(theirs, format=fmt), a)


@pytest.mark.parametrize("fmt", FORMATS)
def test_load_spb_is_memory_mapped(tmp_path, fmt):
    a = sample()
    m = sparsetool.convert(a, fmt, allow_fill=True)
    out = tmp_path / "m.spb"
    sparsetool.write(out, m)
    v = sparsetool.load_spb(out)
    arrays = v.arrays if isinstance(v, sparsetool.FormatMatrix) else None
    if arrays is None:
        arrays = {"data": v.data, "indices": getattr(v, "indices", v.coords[0] if fmt == "coo" else None)}
    for arr in arrays.values():
        assert not arr.flags.writeable and not arr.flags.owndata
        assert type(root_base(arr)).__name__ == "mmap"
    assert_same(v if fmt in ("coo", "csr", "csc") else v.to_scipy(), a)


def test_write_any_scipy_matrix(tmp_path):
    a = sample()
    for m in (a.todia() if a.shape[0] < 100 else a.tobsr(), sp.lil_matrix(a[:50, :50]), sp.dok_array(a[:50, :50])):
        out = tmp_path / "x.mtx"
        sparsetool.write(out, m)
        assert_same(sparsetool.read(out), m)
    ints = sp.csr_array(np.array([[1, 0], [0, 2]], dtype=np.int16))
    sparsetool.write(tmp_path / "i.spb", ints)
    assert sparsetool.read(tmp_path / "i.spb").dtype == np.float64


def test_write_uncanonical_csr_leaves_input_alone(tmp_path):
    a = sp.csr_array((np.array([1.0, 2.0, 3.0]), np.array([1, 0, 0]), np.array([0, 3, 3])), shape=(2, 2))
    a.has_canonical_format = False
    before = a.indices.copy()
    sparsetool.write(tmp_path / "u.spb", a)
    np.testing.assert_array_equal(a.indices, before)
    np.testing.assert_array_equal(sparsetool.read(tmp_path / "u.spb").toarray(), [[5.0, 1.0], [0.0, 0.0]])


GIL_SCRIPT = """
import os, sys, threading, sparsetool
fifo = sys.argv[1]
out = {}
t = threading.Thread(target=lambda: out.update(m=sparsetool.read(fifo)))
t.start()
# The reader blocks in Rust until this thread (which needs the GIL) writes:
# it finishes only if the read released the GIL.
with open(fifo, "w") as f:
    f.write("%%MatrixMarket matrix coordinate real general\\n2 2 1\\n2 1 5.0\\n")
t.join()
print(out["m"].toarray().tolist())
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_read_releases_the_gil(tmp_path):
    fifo = tmp_path / "pipe.mtx"
    os.mkfifo(fifo)
    run = subprocess.run([sys.executable, "-c", GIL_SCRIPT, str(fifo)], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[[0.0, 0.0], [5.0, 0.0]]"
