"""sparsetool: read, analyze, convert and multiply sparse matrices at Rust speed.

A thin layer over the sparsetool Rust crates (the same code as the
``sparsetool`` command line): Matrix Market (``.mtx``, ``.mtx.gz``), NumPy
``.npz`` and the zero-copy binary layout ``.spb``; COO, CSR, CSC, ELL, HYB,
JDS and SELL-C-sigma; SpMV on the CPU or an NVIDIA GPU. The GIL is released
while the library works.

Example:
    >>> import numpy as np, sparsetool
    >>> a = sparsetool.read("fixtures/matrices/real/bcsstk13.mtx.gz")   # scipy csr_array
    >>> a.shape, a.nnz
    ((2003, 2003), 83883)
    >>> sparsetool.recommend(a).layout
    'csr'
    >>> s = sparsetool.convert(a, "sell", slice=32, sigma=256)
    >>> bool(np.allclose(sparsetool.spmv(s, np.ones(2003)), a @ np.ones(2003)))
    True

Errors are :class:`Error`; bad input is an :class:`InputError` (a
``ValueError``), unusable files a :class:`FileError` (an ``OSError``), a
missing GPU a :class:`GpuUnavailableError` (a ``RuntimeError``).
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, NamedTuple, Optional, Tuple, Union

import numpy as np

from . import _native
from ._errors import Error, FileError, GpuUnavailableError, InputError, ReadWarning
from ._matrix import FORMATS, FormatMatrix, from_native, to_native

__all__ = [
    "Error",
    "FileError",
    "FormatMatrix",
    "FORMATS",
    "GpuUnavailableError",
    "InputError",
    "ReadWarning",
    "Recommendation",
    "analyze",
    "convert",
    "gpu_available",
    "load_spb",
    "read",
    "recommend",
    "spmv",
    "write",
]
__version__ = "0.1.0"

PathLike = Union[str, "os.PathLike[str]"]
#: What ``read``, ``convert`` and ``load_spb`` return: a SciPy
#: ``coo_array``/``csr_array``/``csc_array`` or a :class:`FormatMatrix`.
Matrix = Any


def _precision(dtype: Any) -> Optional[str]:
    """``"f32"``/``"f64"`` for a dtype (complex64 counts as f32)."""
    if dtype is None:
        return None
    if isinstance(dtype, str) and dtype.lower() in ("f32", "f64"):
        return dtype.lower()
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise InputError(f"unknown dtype {dtype!r} (expected float32 or float64)") from None
    size = dt.itemsize // 2 if dt.kind == "c" else dt.itemsize
    if dt.kind not in "fc" or size not in (4, 8):
        raise InputError(f"unknown dtype {dtype!r} (expected float32 or float64)")
    return "f32" if size == 4 else "f64"


def _format(name: str) -> str:
    f = str(name).lower()
    if f not in FORMATS:
        raise InputError(f"unknown format {name!r} (expected one of {', '.join(FORMATS)})")
    return f


def read(
    path: PathLike,
    *,
    format: str = "csr",
    dtype: Any = None,
    lenient: bool = False,
    verify_checksums: bool = True,
) -> Matrix:
    """Reads a matrix file (``.mtx``, ``.mtx.gz``, ``.npz``, ``.spb``; the
    container is decided by content) into ``format``.

    Args:
        path: the file.
        format: ``"csr"`` (default), ``"coo"`` or ``"csc"`` give a SciPy
            ``csr_array``/``coo_array``/``csc_array``; ``"ell"``, ``"hyb"``,
            ``"jds"``, ``"sell"`` a :class:`FormatMatrix`. COO keeps a
            Matrix Market file's entries as stored (symmetric files expanded);
            every other format sums duplicates.
        dtype: ``float32`` or ``float64`` (complex files: complex64 or
            complex128); default the file's own (``float64`` for text).
        lenient: accept common deviations (each reported as a
            :class:`ReadWarning`), as ``--lenient`` does.
        verify_checksums: ``.spb`` only: hash every section (default on).

    ELL, HYB and SELL get the default parameters; ``convert(path, ...)``
    reads with others (``convert(path, "sell", slice=64)``).

    The arrays are the Rust reader's own buffers, handed to NumPy without a
    copy; the GIL is released while reading.

    Raises:
        InputError: a malformed file (the message names file and line or
            byte offset) or bad parameters.
        FileError: the file cannot be opened or read.

    Example:
        >>> import sparsetool
        >>> a = sparsetool.read("fixtures/matrices/real/bcsstk13.mtx.gz")
        >>> type(a).__name__, a.dtype, a.indptr.dtype
        ('csr_array', dtype('float64'), dtype('int32'))
        >>> sparsetool.read("fixtures/matrices/real/bcsstk13.mtx.gz", format="ell").params
        {'width': 95}
    """
    return _read(path, format, dtype, lenient, verify_checksums, _DEFAULTS, stacklevel=3)


#: The conversion parameters left to the library's defaults.
_DEFAULTS = {"ell_width": None, "hyb_width": None, "slice": None, "sigma": None, "allow_fill": False}


def _read(
    path: PathLike, format: str, dtype: Any, lenient: bool, verify: bool, params: Dict[str, Any], stacklevel: int
) -> Matrix:
    d = _native.read(os.fspath(path), _format(format), _precision(dtype), bool(lenient), bool(verify), params)
    for w in d["warnings"]:
        warnings.warn(w, ReadWarning, stacklevel=stacklevel)
    return from_native(d)


def write(path: PathLike, matrix: Matrix, *, overwrite: bool = True, symmetry: str = "auto") -> None:
    """Writes ``matrix`` to ``path`` in the container its extension names:
    ``.mtx``, ``.mtx.gz``, ``.npz`` (``scipy.sparse.load_npz`` reads COO,
    CSR and CSC ones) or ``.spb``.

    Args:
        path: the output; written to a temporary file beside it and renamed
            into place, so nothing partial is left on error.
        matrix: any ``scipy.sparse`` matrix or array (DIA, BSR, LIL, DOK are
            written as CSR) or a :class:`FormatMatrix`. Integer and boolean
            values are written as float64.
        overwrite: replace an existing file (default); if false an existing
            output is a :class:`FileError`.
        symmetry: Matrix Market only: ``"auto"`` stores an exactly symmetric,
            skew-symmetric or hermitian matrix as such; ``"general"`` always
            writes every entry.

    Raises:
        InputError: an invalid matrix (the message names the array).
        FileError: the output cannot be written or has an unknown extension.

    Example:
        >>> import os, tempfile, scipy.sparse as sp, sparsetool
        >>> out = os.path.join(tempfile.mkdtemp(), "eye.spb")
        >>> sparsetool.write(out, sp.eye_array(3, format="csr"))
        >>> sparsetool.read(out).toarray().trace()
        np.float64(3.0)
    """
    _native.write(os.fspath(path), to_native(matrix), bool(overwrite), str(symmetry))


def load_spb(path: PathLike, *, verify_checksums: bool = True) -> Matrix:
    """Opens a ``.spb`` file as memory-mapped NumPy views (no copy), after
    the library validated it completely: header, section table, checksums
    and the format's invariants (CSR without copying; the other formats
    through a copy that is dropped at once).

    Returns the same kinds of objects as :func:`read` with the file's own
    format and dtypes: a SciPy array for COO, CSR and CSC (its arrays are
    views of the mapping), else a :class:`FormatMatrix`. The views are
    read-only and keep the mapping open for as long as they live.

    Raises:
        InputError: the file is not a valid ``.spb`` (the message gives the
            byte offset).
        FileError: the file cannot be opened.

    Example:
        >>> import os, tempfile, sparsetool
        >>> out = os.path.join(tempfile.mkdtemp(), "b.spb")
        >>> sparsetool.write(out, sparsetool.read("fixtures/matrices/real/bcsstk13.mtx.gz"))
        >>> a = sparsetool.load_spb(out)
        >>> a.nnz, a.data.flags.writeable
        (83883, False)
    """
    p = os.fspath(path)
    fmt, shape, params, sections, size = _native.spb_sections(p, bool(verify_checksums))
    import mmap

    with open(p, "rb") as f:
        if os.fstat(f.fileno()).st_size != size:
            raise InputError(f"{p}: the file changed while it was being opened")
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    arrays = {}
    for name, dt, offset, count in sections:
        # A read-only view of the mapping at the offset the validator checked;
        # the array's base keeps the mapping alive.
        if count:
            arrays[name] = np.frombuffer(mapped, dtype=np.dtype(dt), count=count, offset=offset)
        else:
            arrays[name] = np.empty(0, np.dtype(dt))
    names = {"ell_width": "width", "hyb_width": "width"}
    kept = {names.get(k, k): v for k, v in params if k in ("ell_width", "hyb_width", "slice", "sigma")}
    return from_native({"format": fmt, "shape": shape, "arrays": arrays, "params": kept})


def analyze(path_or_matrix: Union[PathLike, Matrix], *, dtype: Any = None, lenient: bool = False) -> Dict[str, Any]:
    """The report of ``sparsetool analyze --json``, as a dict with the same
    fields: row- and column-length statistics, the histogram, bytes, padding
    and SpMV traffic of every format, the predicted GPU time of each
    candidate layout, and ``recommendation`` (format, layout, parameters,
    reason).

    Args:
        path_or_matrix: a file (Matrix Market files are streamed, as the
            CLI does) or any matrix :func:`write` accepts.
        dtype: the value size the accounting assumes (``float32`` or
            ``float64``); default the file's or matrix's own.
        lenient: as for :func:`read`.

    Example:
        >>> import sparsetool
        >>> r = sparsetool.analyze("fixtures/matrices/real/memplus.mtx.gz")
        >>> r["nrows"], r["row_length"]["max"], r["recommendation"]["layout"]
        (17758, 574, 'hyb-4')
    """
    if isinstance(path_or_matrix, (str, os.PathLike)):
        text = _native.analyze_path(os.fspath(path_or_matrix), _precision(dtype), bool(lenient))
    else:
        text = _native.analyze_matrix(to_native(path_or_matrix), _precision(dtype))
    return json.loads(text)


class Recommendation(NamedTuple):
    """The layout :func:`recommend` picks and why."""

    #: The layout with its parameters, e.g. ``"sell-32-256"`` or ``"csr"``.
    layout: str
    #: The sentence ``sparsetool analyze`` prints after the format's name.
    reason: str
    #: The format, e.g. ``"sell"``.
    format: str
    #: Its parameters, e.g. ``{"slice": 32, "sigma": 256}``.
    params: Dict[str, int]


def recommend(path_or_matrix: Union[PathLike, Matrix], *, dtype: Any = None, lenient: bool = False) -> Recommendation:
    """The recommended layout of :func:`analyze`, and its reason.

    Example:
        >>> import sparsetool
        >>> rec = sparsetool.recommend("fixtures/matrices/real/memplus.mtx.gz")
        >>> rec.layout, rec.reason.startswith("HYB (ELL width 4")
        ('hyb-4', True)
    """
    r = analyze(path_or_matrix, dtype=dtype, lenient=lenient)["recommendation"]
    return Recommendation(r["layout"], r["reason"], r["format"], dict(r.get("params") or {}))


def convert(
    matrix: Union[PathLike, Matrix],
    to: str,
    *,
    ell_width: Optional[int] = None,
    hyb_width: Optional[int] = None,
    slice: Optional[int] = None,
    sigma: Optional[int] = None,
    allow_fill: bool = False,
    dtype: Any = None,
    lenient: bool = False,
) -> Matrix:
    """Converts a matrix (or reads a file) to the format ``to``, in
    parallel, with the library's kernels (through CSR; duplicates summed).

    Args:
        matrix: any matrix :func:`write` accepts, or a file path.
        to: ``"coo"``, ``"csr"``, ``"csc"`` (SciPy arrays) or ``"ell"``,
            ``"hyb"``, ``"jds"``, ``"sell"`` (a :class:`FormatMatrix`).
        ell_width: ELL width (default the longest row).
        hyb_width: the ELL width of HYB (default CUSP's rule).
        slice: SELL slice height C (default 32).
        sigma: SELL sorting window (1 or a multiple of ``slice``; default
            ``32 * slice``).
        allow_fill: accept ELL padding beyond 3x the entries.
        dtype, lenient: for a file, as for :func:`read`.

    Raises:
        InputError: a parameter the matrix refuses, with what to do instead
            (e.g. an ELL width below the longest row suggests HYB).

    Example:
        >>> import scipy.sparse as sp, sparsetool
        >>> a = sp.random_array((1000, 800), density=0.01, format="csr", random_state=1)
        >>> s = sparsetool.convert(a, "sell", slice=32, sigma=256)
        >>> s.format, s.params, s.nnz == a.nnz
        ('sell', {'slice': 32, 'sigma': 256}, True)
        >>> bool((sparsetool.convert(s, "csr") != a).nnz == 0)
        True
    """
    params = dict(_DEFAULTS, ell_width=ell_width, hyb_width=hyb_width, slice=slice, sigma=sigma)
    params["allow_fill"] = bool(allow_fill)
    target = _format(to)
    if isinstance(matrix, (str, os.PathLike)):
        return _read(matrix, target, dtype, lenient, True, params, stacklevel=3)
    return from_native(_native.convert(to_native(matrix), target, params))


def gpu_available() -> Tuple[bool, str]:
    """``(True, device name)`` if a CUDA device can be opened, else
    ``(False, the reason)``."""
    return _native.gpu_available()


def _cuda_vector(x: Any) -> Any:
    """``x`` as a CuPy array if it lives on a CUDA device, else None."""
    on_gpu = hasattr(x, "__cuda_array_interface__")
    if not on_gpu and hasattr(x, "__dlpack_device__"):
        on_gpu = x.__dlpack_device__()[0] in (2, 13)  # kDLCUDA, kDLCUDAManaged
    if not on_gpu:
        return None
    try:
        import cupy
    except ImportError:
        raise InputError("x is a GPU array; CuPy is needed to pass it to sparsetool") from None
    return cupy.asarray(x) if hasattr(x, "__cuda_array_interface__") else cupy.from_dlpack(x)


def spmv(matrix: Matrix, x: Any, *, device: str = "cpu", transpose: bool = False, gpu: int = 0) -> Any:
    """``y = A x`` (``y = Aᵀ x`` with ``transpose=True``) with the library's
    kernel for the matrix's format.

    Args:
        matrix: any matrix :func:`write` accepts (copied into the library
            and validated on each call).
        x: a 1-D array; cast to the matrix's value dtype.
        device: ``"cpu"`` (parallel) or ``"gpu"``. On the GPU, ``x`` may be
            a NumPy array (``y`` comes back as NumPy) or a device array
            (CuPy, or anything with ``__cuda_array_interface__`` or CUDA
            DLPack): it is used in place and ``y`` comes back as a CuPy
            array on the same device. f32 and f64 values only on the GPU.
        transpose: multiply by the transpose.
        gpu: the device ordinal for a host ``x``.

    Raises:
        GpuUnavailableError: ``device="gpu"`` without a CUDA driver or device.
        InputError: a length or dtype that does not fit.

    Example:
        >>> import numpy as np, scipy.sparse as sp, sparsetool
        >>> a = sp.csr_array(np.array([[1.0, 2.0], [0.0, 3.0]]))
        >>> sparsetool.spmv(a, np.array([1.0, 10.0]))
        array([21., 30.])
        >>> sparsetool.spmv(a, np.array([1.0, 10.0]), transpose=True)
        array([ 1., 32.])
    """
    if device not in ("cpu", "gpu"):
        raise InputError(f"device must be \"cpu\" or \"gpu\", not {device!r}")
    native = to_native(matrix)
    shape, vdt = native[1], native[4]
    xlen, ylen = (shape[0], shape[1]) if transpose else (shape[1], shape[0])
    xd = _cuda_vector(x)
    if xd is not None:
        if device != "gpu":
            raise InputError("x is a GPU array: use device=\"gpu\"")
        import cupy

        with cupy.cuda.Device(xd.device.id):
            xd = cupy.ascontiguousarray(xd.astype(vdt, copy=False))
            if xd.ndim != 1 or xd.shape[0] != xlen:
                raise InputError(f"x has shape {xd.shape}, expected ({xlen},)")
            y = cupy.zeros(ylen, dtype=vdt)
            if ylen and xlen:
                # The stream that wrote x is done before ours reads it.
                cupy.cuda.get_current_stream().synchronize()
                _native.spmv_device(native, xd.data.ptr, y.data.ptr, bool(transpose), xd.device.id)
        return y
    xh = np.asarray(x)
    if xh.ndim != 1:
        raise InputError(f"x has shape {xh.shape}, expected ({xlen},)")
    if not np.can_cast(xh.dtype, vdt, casting="same_kind"):
        raise InputError(f"x holds {xh.dtype}; the matrix holds {vdt}")
    xh = np.ascontiguousarray(xh, dtype=vdt)
    return _native.spmv(native, xh, bool(transpose), int(gpu) if device == "gpu" else None)
