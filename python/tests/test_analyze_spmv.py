"""analyze/recommend against the CLI, convert and spmv against SciPy, the GPU path."""

import doctest
import json
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetool
from sparsetool import _matrix, _native
from conftest import FIXTURES, ROOT, cli_binary

FORMATS = ("coo", "csr", "csc", "ell", "hyb", "jds", "sell")
MEMPLUS = FIXTURES / "matrices/real/memplus.mtx.gz"


@pytest.mark.parametrize("name", ["memplus.mtx.gz", "bcsstk13.mtx.gz", "young1c.mtx"])
def test_analyze_equals_cli_json(name):
    path = FIXTURES / "matrices/real" / name
    ours = sparsetool.analyze(path)
    assert {"nrows", "row_length", "formats", "layouts", "recommendation"} <= set(ours)
    # The same report from a matrix in memory.
    assert sparsetool.analyze(sparsetool.read(path, format="coo")) == ours
    exe = cli_binary()
    if exe is None:
        pytest.skip("no sparsetool binary in target/debug (cargo build -p sparsetool)")
    cli = json.loads(subprocess.run([exe, "analyze", "--json", path], check=True, capture_output=True).stdout)
    assert ours == cli
    cli32 = subprocess.run([exe, "analyze", "--json", "--dtype", "f32", path], check=True, capture_output=True)
    assert sparsetool.analyze(path, dtype=np.float32) == json.loads(cli32.stdout)


def test_recommend():
    rec = sparsetool.recommend(MEMPLUS)
    r = sparsetool.analyze(MEMPLUS)["recommendation"]
    assert (rec.layout, rec.reason, rec.format) == (r["layout"], r["reason"], r["format"])
    assert rec.reason


@pytest.mark.parametrize("fmt", FORMATS)
def test_convert_and_spmv_match_scipy(fmt):
    a = sparsetool.read(MEMPLUS)
    m = sparsetool.convert(a, fmt, allow_fill=True)
    x = np.random.default_rng(1).standard_normal(a.shape[1])
    np.testing.assert_allclose(sparsetool.spmv(m, x), a @ x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sparsetool.spmv(m, x, transpose=True), a.T @ x, rtol=1e-12, atol=1e-12)
    back = m if fmt in ("coo", "csr", "csc") else m.to_scipy()
    assert abs(sp.csr_array(back) - a).max() == 0


def test_convert_parameters():
    a = sparsetool.read(MEMPLUS)
    s = sparsetool.convert(a, "sell", slice=32, sigma=256)
    assert s.params == {"slice": 32, "sigma": 256}
    assert len(s.slice_width) == -(-a.shape[0] // 32)
    h = sparsetool.convert(a, "hyb", hyb_width=4)
    assert h.params == {"width": 4}
    e = sparsetool.convert(MEMPLUS, "ell", allow_fill=True)
    assert e.params["width"] == 574
    assert "sell" in repr(s) and "slice=32" in repr(s)


def test_complex_spmv():
    a = sparsetool.read(FIXTURES / "matrices/real/young1c.mtx")
    x = np.arange(a.shape[1]) * (1 + 2j)
    np.testing.assert_allclose(sparsetool.spmv(a, x), a @ x, rtol=1e-12)
    with pytest.raises(sparsetool.InputError, match="holds complex128"):
        sparsetool.spmv(sparsetool.read(MEMPLUS), np.ones(17758, dtype=complex))


def test_docstring_examples():
    for module in (sparsetool, _matrix):
        failed, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert tried > 0 and failed == 0, f"{module.__name__}: {failed} of {tried} examples failed"


def test_stub_lists_every_native_function():
    stub = (ROOT / "python/sparsetool/_native.pyi").read_text()
    names = {n for n in dir(_native) if not n.startswith("_") and callable(getattr(_native, n))}
    declared = {line.split("(")[0][4:] for line in stub.splitlines() if line.startswith("def ")}
    assert names == declared


def gpu_or_skip():
    ok, why = sparsetool.gpu_available()
    if not ok:
        print(f"SKIPPED: {why}")
        pytest.skip(why)


def test_no_gpu_is_a_clear_runtime_error():
    ok, why = sparsetool.gpu_available()
    if ok:
        pytest.skip(f"a CUDA device is present ({why})")
    a = sparsetool.read(MEMPLUS)
    with pytest.raises(RuntimeError, match="no CUDA device") as e:
        sparsetool.spmv(a, np.ones(a.shape[1]), device="gpu")
    assert isinstance(e.value, sparsetool.GpuUnavailableError)


@pytest.mark.parametrize("fmt", FORMATS)
def test_gpu_spmv_host_vectors(fmt):
    gpu_or_skip()
    a = sparsetool.read(MEMPLUS)
    m = sparsetool.convert(a, fmt, allow_fill=True)
    x = np.random.default_rng(2).standard_normal(a.shape[1])
    np.testing.assert_allclose(sparsetool.spmv(m, x, device="gpu"), a @ x, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(sparsetool.spmv(m, x, device="gpu", transpose=True), a.T @ x, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("fmt", FORMATS)
def test_gpu_spmv_cupy_vectors(fmt):
    gpu_or_skip()
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    a = sparsetool.read(MEMPLUS, dtype=np.float32)
    m = sparsetool.convert(a, fmt, allow_fill=True)
    x = np.random.default_rng(3).standard_normal(a.shape[1]).astype(np.float32)
    y = sparsetool.spmv(m, cupy.asarray(x), device="gpu")
    assert isinstance(y, cupy.ndarray) and y.dtype == np.float32
    np.testing.assert_allclose(cupy.asnumpy(y), a @ x, rtol=1e-4, atol=1e-4)
    yt = sparsetool.spmv(m, cupy.asarray(np.ones(a.shape[0], np.float32)), device="gpu", transpose=True)
    np.testing.assert_allclose(cupy.asnumpy(yt), a.T @ np.ones(a.shape[0], np.float32), rtol=1e-4, atol=1e-4)


def test_docs_examples():
    """The `>>>` examples of docs/python.md's python blocks run as written."""
    text = (ROOT / "docs/python.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    blocks = [b for b in blocks if ">>>" in b]
    assert blocks
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    # One namespace for all blocks, as a reader types them in one session.
    with pytest.warns(sparsetool.ReadWarning):  # the lenient example's
        runner.run(parser.get_doctest("\n".join(blocks), {}, "docs/python.md", "docs/python.md", 0))
    failed, tried = runner.summarize(verbose=False)
    assert tried > 0 and failed == 0
