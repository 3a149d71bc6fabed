#!/usr/bin/env python3
"""The numpy-only .spb reader of docs/binary-layout.md, and a checker used by CI.

  spb_reader.py FILE.spb                 print format, shape and the arrays' dtypes/lengths
  spb_reader.py --compare FILE.spb FILE.npz
      checks that every array of the .spb equals the matching array of the .npz
      that sparsetool wrote for the same conversion (exit 1 on any difference)
"""
import sys

import numpy as np

DT = {1: np.float32, 2: np.float64, 3: np.complex64, 4: np.complex128, 5: np.int32, 6: np.int64}
FORMATS = ["coo", "csr", "ell", "hyb", "jds", "sell", "csc"]


def read_spb(path):
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    assert bytes(raw[:8]) == b"SPBMTX\r\n", "not a .spb file"
    h = raw[:128]
    major, minor = h[8:12].view("<u2")
    assert major == 1 and h[12:16].view("<u4")[0] == 0x01020304
    fmt = FORMATS[h[20:24].view("<u4")[0]]
    nsec = int(h[28:32].view("<u4")[0])
    nrows, ncols, nnz, p0, p1 = (int(v) for v in h[32:72].view("<u8"))
    arrays = {}
    for i in range(nsec):
        e = raw[128 + 64 * i: 192 + 64 * i]
        name = bytes(e[:16]).rstrip(b"\0").decode()
        count, offset = (int(v) for v in e[24:40].view("<u8"))
        arrays[name] = np.frombuffer(raw, dtype=np.dtype(DT[int(e[16])]).newbyteorder("<"),
                                     count=count, offset=offset)  # zero-copy view of the map
    return fmt, (nrows, ncols), nnz, (p0, p1), arrays


# .spb section name -> .npz array name (docs/cli.md, "The .npz schema"), per format
NPZ_NAMES = {
    "coo": {"rows": "row", "cols": "col", "values": "data"},
    "csr": {"row_ptr": "indptr", "col_idx": "indices", "values": "data"},
    "csc": {"col_ptr": "indptr", "row_idx": "indices", "values": "data"},
    "ell": {"row_nnz": "row_nnz", "col_idx": "indices", "values": "data"},
    "hyb": {"ell_row_nnz": "ell_row_nnz", "ell_col_idx": "ell_indices", "ell_values": "ell_data",
            "coo_rows": "coo_row", "coo_cols": "coo_col", "coo_values": "coo_data"},
    "jds": {"perm": "perm", "jd_ptr": "jd_ptr", "col_idx": "indices", "values": "data"},
    "sell": {"perm": "perm", "slice_ptr": "slice_ptr", "slice_width": "slice_width",
             "col_idx": "indices", "values": "data"},
}
PARAMS = {"ell": [("width", 0)], "hyb": [("ell_width", 0)], "sell": [("slice_height", 0), ("sigma", 1)]}


def compare(spb, npz):
    fmt, shape, nnz, params, arrays = read_spb(spb)
    z = np.load(npz)
    tag = z["format"].item()
    tag = tag.decode() if isinstance(tag, bytes) else str(tag)
    problems = []
    if tag != fmt:
        problems.append(f"format {fmt} vs {tag}")
    if tuple(int(v) for v in z["shape"]) != shape:
        problems.append(f"shape {shape} vs {tuple(z['shape'])}")
    for sec, name in NPZ_NAMES[fmt].items():
        a, b = arrays[sec], z[name]
        if a.shape != b.shape or not np.array_equal(a, b):
            problems.append(f"array {sec} differs from {name}")
    for name, i in PARAMS.get(fmt, []):
        if int(z[name]) != params[i]:
            problems.append(f"parameter {name}: {params[i]} vs {int(z[name])}")
    if problems:
        print(f"{spb}: " + "; ".join(problems))
        return 1
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    fmt, shape, nnz, params, arrays = read_spb(sys.argv[1])
    print(f"{fmt} {shape[0]}x{shape[1]} nnz={nnz} params={params}")
    for k, v in arrays.items():
        print(f"  {k}: {v.dtype} [{v.size}]")


if __name__ == "__main__":
    main()
