"""Bad files and bad arguments raise the documented exceptions, with the CLI's messages."""

import numpy as np
import pytest
import scipy.sparse as sp

import sparsetool
from conftest import FIXTURES, tsv_rows

BAD = FIXTURES / "bad"


def test_exception_classes():
    assert issubclass(sparsetool.InputError, sparsetool.Error)
    assert issubclass(sparsetool.InputError, ValueError)
    assert issubclass(sparsetool.FileError, sparsetool.Error)
    assert issubclass(sparsetool.FileError, OSError)
    assert issubclass(sparsetool.GpuUnavailableError, RuntimeError)


@pytest.mark.parametrize("row", tsv_rows("EXPECTED.tsv") + tsv_rows("EXPECTED-spb.tsv"), ids=lambda r: r[0])
def test_bad_file_raises_input_error(row):
    name, expected = row[0], row[1]
    path = BAD / name
    with pytest.raises(sparsetool.InputError) as e:
        sparsetool.read(path)
    msg = str(e.value)
    assert expected in msg
    assert name in msg, "the message names the file"
    if name.endswith(".spb"):
        with pytest.raises(sparsetool.InputError):
            sparsetool.load_spb(path)


@pytest.mark.parametrize("row", tsv_rows("EXPECTED-flags.tsv"), ids=lambda r: r[0])
def test_bad_with_dtype(row):
    name, flags, expected = row
    assert flags == "--dtype f32"
    sparsetool.read(BAD / name)  # valid without the flag
    with pytest.raises(sparsetool.InputError, match=expected.split(" at position")[0].replace("`", ".")):
        sparsetool.read(BAD / name, dtype="float32")


def test_quirks_strict_and_lenient():
    q = FIXTURES / "matrices" / "quirks" / "soc-wiki-Vote.mtx"
    with pytest.raises(ValueError, match="--lenient"):
        sparsetool.read(q)
    with pytest.warns(sparsetool.ReadWarning, match="soc-wiki-Vote.mtx"):
        a = sparsetool.read(q, lenient=True)
    assert a.shape == (889, 889) and a.nnz == 5828


def test_file_errors(tmp_path):
    with pytest.raises(sparsetool.FileError, match="missing.mtx: no such file") as e:
        sparsetool.read(tmp_path / "missing.mtx")
    assert isinstance(e.value, OSError)
    a = sp.eye_array(3, format="csr")
    with pytest.raises(sparsetool.FileError, match="extension"):
        sparsetool.write(tmp_path / "a.txt", a)
    sparsetool.write(tmp_path / "a.mtx", a)
    with pytest.raises(sparsetool.FileError, match="exists"):
        sparsetool.write(tmp_path / "a.mtx", a, overwrite=False)
    sparsetool.write(tmp_path / "a.mtx", a)  # overwrite is the default
    with pytest.raises(sparsetool.FileError):
        sparsetool.write(tmp_path / "no" / "such" / "dir.spb", a)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.mtx"], "nothing left behind"


def test_bad_arguments():
    a = sparsetool.read(FIXTURES / "matrices/real/memplus.mtx.gz")
    with pytest.raises(sparsetool.InputError, match="use HYB"):
        sparsetool.convert(a, "ell", ell_width=2)
    with pytest.raises(sparsetool.InputError, match="sigma"):
        sparsetool.convert(a, "sell", slice=32, sigma=48)
    with pytest.raises(ValueError, match="unknown format"):
        sparsetool.convert(a, "dense")
    with pytest.raises(ValueError, match="length"):
        sparsetool.spmv(a, np.ones(3))
    with pytest.raises(sparsetool.InputError, match="expected a scipy.sparse"):
        sparsetool.write("x.mtx", np.eye(3))
    with pytest.raises(sparsetool.InputError, match="dtype"):
        sparsetool.read(FIXTURES / "matrices/real/memplus.mtx.gz", dtype="int8")


def test_invalid_format_matrix_is_refused():
    a = sparsetool.read(FIXTURES / "matrices/real/memplus.mtx.gz")
    s = sparsetool.convert(a, "sell")
    broken = sparsetool.FormatMatrix("sell", s.shape, dict(s.arrays, perm=np.zeros_like(s.perm)), s.params)
    with pytest.raises(sparsetool.InputError, match="perm"):
        sparsetool.spmv(broken, np.ones(a.shape[1]))
    with pytest.raises(sparsetool.InputError, match="without its `values` array"):
        sparsetool.convert(sparsetool.FormatMatrix("jds", s.shape, {"perm": s.perm}, {}), "csr")
