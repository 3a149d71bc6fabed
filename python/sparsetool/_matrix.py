"""Matrices between Python and the compiled module.

A matrix crosses into Rust as ``(format, shape, arrays, params)``: the
format's name, ``(nrows, ncols)``, its 1-D arrays by their ``.spb`` section
names and its integer parameters. :class:`FormatMatrix` holds the formats
SciPy has no class for (ELL, HYB, JDS, SELL-C-sigma); COO, CSR and CSC are
SciPy's ``coo_array``, ``csr_array`` and ``csc_array``.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Tuple

import numpy as np

from ._errors import InputError

#: The formats SciPy has classes for.
SCIPY_FORMATS = ("coo", "csr", "csc")
#: Every format, as ``read``, ``convert`` and ``FormatMatrix.format`` name them.
FORMATS = ("coo", "csr", "csc", "ell", "hyb", "jds", "sell")
_VALUE_DTYPES = ("float32", "float64", "complex64", "complex128")


class FormatMatrix:
    """A sparse matrix in ELL, HYB, JDS or SELL-C-sigma: NumPy arrays as the
    library (and a GPU kernel) stores them.

    Attributes:
        format: ``"ell"``, ``"hyb"``, ``"jds"`` or ``"sell"``.
        shape: ``(nrows, ncols)``.
        arrays: the 1-D arrays by name, e.g. for SELL ``perm``, ``slice_ptr``,
            ``slice_width``, ``col_idx`` (``-1`` marks padding) and
            ``values``; each is also an attribute (``m.col_idx``).
        params: the integer parameters: ELL/HYB ``width``, SELL ``slice``
            and ``sigma``.

    Example:
        >>> import sparsetool
        >>> m = sparsetool.read("fixtures/matrices/real/bcsstk13.mtx.gz", format="sell")
        >>> m.format, m.shape, m.nnz, m.params["slice"]
        ('sell', (2003, 2003), 83883, 32)
        >>> m.to_scipy().nnz
        83883
    """

    __slots__ = ("format", "shape", "arrays", "params")

    def __init__(
        self,
        format: str,
        shape: Tuple[int, int],
        arrays: Mapping[str, np.ndarray],
        params: Mapping[str, int],
    ) -> None:
        if format not in FORMATS or format in SCIPY_FORMATS:
            raise InputError(f"FormatMatrix holds ell, hyb, jds or sell, not {format!r}")
        self.format = format
        self.shape = (int(shape[0]), int(shape[1]))
        self.arrays: Dict[str, np.ndarray] = dict(arrays)
        self.params: Dict[str, int] = {k: int(v) for k, v in params.items()}

    def __getattr__(self, name: str) -> np.ndarray:
        try:
            return self.arrays[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def dtype(self) -> np.dtype:
        """The value dtype."""
        return self.arrays["ell_values" if self.format == "hyb" else "values"].dtype

    @property
    def nnz(self) -> int:
        """Stored entries, padding excluded."""
        if self.format == "hyb":
            return int(self.arrays["ell_row_nnz"].sum()) + len(self.arrays["coo_values"])
        if self.format == "ell":
            return int(self.arrays["row_nnz"].sum())
        if self.format == "sell":
            return int(np.count_nonzero(self.arrays["col_idx"] >= 0))
        return len(self.arrays["values"])

    def to_scipy(self) -> Any:
        """The matrix as a SciPy ``csr_array`` (converted in Rust)."""
        from . import convert

        return convert(self, "csr")

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v}" for k, v in self.params.items())
        return (
            f"<sparsetool.FormatMatrix {self.format} {self.shape[0]}x{self.shape[1]}, "
            f"{self.nnz} entries, {self.dtype}{extra}>"
        )


def from_native(d: Mapping[str, Any]) -> Any:
    """The object for a matrix the compiled module returned: SciPy for COO,
    CSR and CSC (over the same arrays, no copy), else a FormatMatrix."""
    fmt, shape, a = d["format"], tuple(d["shape"]), d["arrays"]
    if fmt not in SCIPY_FORMATS:
        return FormatMatrix(fmt, shape, a, d["params"])
    import scipy.sparse as sp

    if fmt == "coo":
        m = sp.coo_array((a["values"], (a["rows"], a["cols"])), shape=shape, copy=False)
        return m
    cls, ptr, idx = (
        (sp.csr_array, "row_ptr", "col_idx") if fmt == "csr" else (sp.csc_array, "col_ptr", "row_idx")
    )
    m = cls((a["values"], a[idx], a[ptr]), shape=shape, copy=False)
    # The library's CSR/CSC are canonical (sorted, no duplicates): say so,
    # so SciPy does not check again.
    m.has_sorted_indices = True
    m.has_canonical_format = True
    return m


def _value_array(v: Any) -> np.ndarray:
    v = np.asarray(v)
    if v.dtype.name not in _VALUE_DTYPES:
        if v.dtype.kind == "c":
            v = v.astype(np.complex128)
        elif v.dtype.kind == "f" and v.dtype.itemsize < 4:
            v = v.astype(np.float32)
        elif v.dtype.kind in "biuf":
            v = v.astype(np.float64)
        else:
            raise InputError(f"values of dtype {v.dtype} cannot be stored")
    return np.ascontiguousarray(v)


def _index_arrays(arrays: Dict[str, Any], names: Tuple[str, ...]) -> str:
    """Makes the index arrays one dtype (int32 unless some need int64)."""
    wide = False
    for n in names:
        a = np.asarray(arrays[n])
        if a.dtype.kind not in "iu":
            raise InputError(f"array `{n}` holds {a.dtype}, not integers")
        wide = wide or a.dtype.itemsize > 4 or a.dtype == np.uint32
    dt = np.int64 if wide else np.int32
    for n in names:
        arrays[n] = np.ascontiguousarray(arrays[n], dtype=dt)
    return np.dtype(dt).name


#: A matrix as the compiled module takes it.
Native = Tuple[str, Tuple[int, int], Dict[str, np.ndarray], Dict[str, int], str, str]


def to_native(matrix: Any) -> Native:
    """``(format, shape, arrays, params, value_dtype, index_dtype)`` of any
    SciPy sparse matrix or array, or a FormatMatrix."""
    if isinstance(matrix, FormatMatrix):
        arrays = dict(matrix.arrays)
        fmt, shape, params = matrix.format, matrix.shape, dict(matrix.params)
        values = [n for n in arrays if n.endswith("values")]
    else:
        import scipy.sparse as sp

        if not sp.issparse(matrix):
            raise InputError(
                f"expected a scipy.sparse matrix or array or a sparsetool.FormatMatrix, "
                f"got {type(matrix).__name__}"
            )
        fmt, shape, params = matrix.format, tuple(matrix.shape), {}
        if fmt not in SCIPY_FORMATS:
            matrix, fmt = matrix.tocsr(), "csr"
        if fmt == "coo":
            row, col = (matrix.coords if hasattr(matrix, "coords") else (matrix.row, matrix.col))
            arrays = {"rows": row, "cols": col, "values": matrix.data}
        else:
            if not matrix.has_canonical_format:
                matrix = matrix.copy()
                matrix.sum_duplicates()
            ptr, idx = ("row_ptr", "col_idx") if fmt == "csr" else ("col_ptr", "row_idx")
            arrays = {ptr: matrix.indptr, idx: matrix.indices, "values": matrix.data}
        values = ["values"]
    if not values:
        raise InputError(f"{fmt.upper()} matrix without its `values` array")
    if len(shape) != 2:
        raise InputError(f"a matrix has 2 dimensions, not {len(shape)}")
    for n in values:
        arrays[n] = _value_array(arrays[n])
    vdt = {arrays[n].dtype.name for n in values}
    if len(vdt) != 1:
        # HYB with parts of different dtypes: the wider one.
        dt = np.result_type(*[arrays[n] for n in values])
        for n in values:
            arrays[n] = arrays[n].astype(dt)
    idt = _index_arrays(arrays, tuple(n for n in arrays if n not in values))
    return fmt, (int(shape[0]), int(shape[1])), arrays, params, arrays[values[0]].dtype.name, idt
