#!/usr/bin/env python3
"""Writes the malformed-input corpus fixtures/bad/ (Matrix Market and .npz cases)
and fixtures/bad/EXPECTED.tsv: file <TAB> substring the error message must contain.
The .spb cases are written by `cargo run -p sparsetool-fixtures --example make_bad_spb`.
Run from the repository root with a Python that has numpy and scipy.
Cases that fail only with flags (e.g. --dtype f32) go to EXPECTED-flags.tsv."""
import gzip, io, os, zipfile

import numpy as np

OUT = "fixtures/bad"
B = "%%MatrixMarket matrix coordinate real general\n"
expected = []


def put(name, data, expect):
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    expected.append((name, expect))


# ---- Matrix Market: banner ----
put("mm-empty.mtx", b"", "empty")
put("mm-only-banner.mtx", B, "size line")
put("mm-no-banner.mtx", "3 3 1\n1 1 1.0\n", "--lenient")
put("mm-banner-single-percent.mtx", "%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1.0\n", "--lenient")
put("mm-comment-before-banner.mtx", "% made by hand\n" + B + "3 3 1\n1 1 1.0\n", "banner")
put("mm-banner-vector.mtx", "%%MatrixMarket vector coordinate real general\n3 3 1\n1 1 1.0\n", "vector")
put("mm-banner-unknown-format.mtx", "%%MatrixMarket matrix sparse real general\n3 3 1\n1 1 1.0\n", "sparse")
put("mm-banner-unknown-field.mtx", "%%MatrixMarket matrix coordinate float general\n3 3 1\n1 1 1.0\n", "float")
put("mm-banner-unknown-symmetry.mtx", "%%MatrixMarket matrix coordinate real upper\n3 3 1\n1 1 1.0\n", "upper")
put("mm-banner-too-few-tokens.mtx", "%%MatrixMarket matrix coordinate real\n3 3 1\n1 1 1.0\n", "banner")
put("mm-banner-pattern-hermitian.mtx", "%%MatrixMarket matrix coordinate pattern hermitian\n3 3 1\n1 1\n", "hermitian")
put("mm-banner-real-hermitian.mtx", "%%MatrixMarket matrix coordinate real hermitian\n3 3 1\n1 1 1.0\n", "hermitian")
put("mm-banner-pattern-skew.mtx", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 1\n2 1\n", "skew")
put("mm-banner-array-pattern.mtx", "%%MatrixMarket matrix array pattern general\n2 2\n", "pattern")
put("mm-utf8-bom.mtx", b"\xef\xbb\xbf" + B.encode() + b"3 3 1\n1 1 1.0\n", "BOM")
# ---- size line ----
put("mm-size-two-tokens.mtx", B + "3 3\n1 1 1.0\n", "size line")
put("mm-size-four-tokens.mtx", B + "3 3 1 1\n1 1 1.0\n", "size line")
put("mm-size-non-numeric.mtx", B + "3 x 1\n1 1 1.0\n", "size line")
put("mm-size-negative.mtx", B + "-3 3 1\n1 1 1.0\n", "size line")
put("mm-size-overflow.mtx", B + "99999999999999999999999 3 1\n1 1 1.0\n", "size line")
put("mm-missing-size-line.mtx", B + "% nothing else\n", "size line")
put("mm-declared-nnz-huge.mtx", B + "3 3 4611686018427387904\n1 1 1.0\n", "declares")
put("mm-declared-array-huge.mtx", "%%MatrixMarket matrix array real general\n1000000000000 1000000000000\n1.0\n", "does not fit")
put("mm-symmetric-non-square.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1.0\n", "square")
# ---- entries and counts ----
put("mm-too-few-entries.mtx", B + "3 3 3\n1 1 1.0\n2 2 2.0\n", "entries")
put("mm-too-many-entries.mtx", B + "3 3 1\n1 1 1.0\n2 2 2.0\n", "--lenient")
put("mm-trailing-junk.mtx", B + "3 3 1\n1 1 1.0\nrank score\n0.1 0.2\n", "--lenient")
put("mm-row-index-zero.mtx", B + "3 3 2\n0 1 1.0\n2 2 2.0\n", "index")
put("mm-col-index-zero.mtx", B + "3 3 2\n1 0 1.0\n2 2 2.0\n", "index")
put("mm-zero-based.mtx", B + "3 3 3\n0 0 1.0\n1 1 2.0\n2 0 3.0\n", "0-based")
put("mm-row-index-too-large.mtx", B + "3 3 1\n4 1 1.0\n", "4")
put("mm-col-index-too-large.mtx", B + "3 3 1\n1 9 1.0\n", "9")
put("mm-negative-index.mtx", B + "3 3 1\n-1 1 1.0\n", "index")
put("mm-index-overflow.mtx", B + "3 3 1\n1 99999999999999999999 1.0\n", "index")
put("mm-float-index.mtx", B + "3 3 1\n1.5 1 1.0\n", "index")
put("mm-non-numeric-index.mtx", B + "3 3 1\na 1 1.0\n", "index")
put("mm-non-numeric-value.mtx", B + "3 3 1\n1 1 abc\n", "abc")
put("mm-value-nan.mtx", B + "3 3 1\n1 1 nan\n", "NaN")
put("mm-value-inf.mtx", B + "3 3 1\n1 1 -inf\n", "inf")
put("mm-value-overflow.mtx", B + "3 3 1\n1 1 1e400\n", "1e400")
put("mm-value-huge-exponent.mtx", B + "3 3 1\n1 1 1e99999999999\n", "1e99999999999")
put("mm-value-double-sign.mtx", B + "3 3 1\n1 1 --1.0\n", "--1.0")
put("mm-real-without-value.mtx", B + "3 3 1\n1 1\n", "value")
put("mm-extra-token.mtx", B + "3 3 1\n1 1 1.0 2.0\n", "2.0")
put("mm-pattern-with-values.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1.0\n", "--lenient")
put("mm-complex-missing-imag.mtx", "%%MatrixMarket matrix coordinate complex general\n3 3 1\n1 1 1.0\n", "imaginary")
put("mm-integer-with-fraction.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", "integer")
put("mm-symmetric-upper-entry.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 1.0\n1 3 2.0\n", "diagonal")
put("mm-skew-with-diagonal.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1.0\n", "diagonal")
put("mm-array-too-few-values.mtx", "%%MatrixMarket matrix array real general\n2 2\n1.0\n2.0\n3.0\n", "values")
put("mm-array-too-many-values.mtx", "%%MatrixMarket matrix array real general\n2 1\n1.0\n2.0\n3.0\n", "--lenient")
put("mm-array-symmetric-non-square.mtx", "%%MatrixMarket matrix array real symmetric\n2 3\n1.0\n2.0\n3.0\n", "square")
put("mm-truncated-last-line.mtx", B + "3 3 2\n1 1 1.0\n2 2", "value")
put("mm-hermitian-nonreal-diagonal.mtx", "%%MatrixMarket matrix coordinate complex hermitian\n2 2 2\n1 1 1.0 0.0\n2 2 3.0 0.5\n",
    "the diagonal of a hermitian matrix is real")
put("mm-hermitian-array-nonreal-diagonal.mtx", "%%MatrixMarket matrix array complex hermitian\n2 2\n1.0 0.0\n2.0 1.0\n3.0 -2.0\n",
    "the diagonal of a hermitian matrix is real")
put("mm-nul-byte.mtx", B.encode() + b"3 3 1\n1 1 1\x00.0\n", "binary")
# ---- not Matrix Market at all ----
rng = np.random.default_rng(7)
put("mm-binary-garbage.mtx", bytes(rng.integers(0, 256, 4096, dtype=np.uint8)), "not a Matrix Market")
put("mm-git-lfs-pointer.mtx", "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345678\n", "Git-LFS")
put("mm-html-page.mtx", "<!DOCTYPE html>\n<html><body>404 Not Found</body></html>\n", "banner")
good = (B + "3 3 2\n1 1 1.0\n2 2 2.0\n").encode()
gz = gzip.compress(good, mtime=0)
put("mm-gzip-truncated.mtx.gz", gz[: len(gz) // 2], "gzip")
put("mm-gzip-corrupt.mtx.gz", gz[:10] + bytes(rng.integers(0, 256, 40, dtype=np.uint8)), "gzip")


# ---- .npz ----
def npz(name, arrays, expect):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    put(name, buf.getvalue(), expect)


def csr_arrays(**over):
    a = dict(format=np.array(b"csr"), shape=np.array([3, 3], dtype=np.int64),
             data=np.array([1.0, 2.0, 3.0]), indices=np.array([0, 1, 2], dtype=np.int32),
             indptr=np.array([0, 1, 2, 3], dtype=np.int32))
    a.update(over)
    return {k: v for k, v in a.items() if v is not None}


put("npz-not-a-zip.npz", "this is not a zip archive\n", "zip")
full = io.BytesIO(); np.savez(full, **csr_arrays()); full = full.getvalue()
put("npz-truncated.npz", full[: len(full) // 2], "zip")
npz("npz-missing-indptr.npz", csr_arrays(indptr=None), "indptr")
npz("npz-missing-format.npz", csr_arrays(format=None), "format")
npz("npz-float-indices.npz", csr_arrays(indices=np.array([0.0, 1.0, 2.0])), "indices")
npz("npz-string-data.npz", csr_arrays(data=np.array(["a", "b", "c"])), "data")
npz("npz-short-data.npz", csr_arrays(data=np.array([1.0, 2.0])), "data")
npz("npz-indptr-decreasing.npz", csr_arrays(indptr=np.array([0, 2, 1, 3], dtype=np.int32)), "decreases")
npz("npz-index-out-of-range.npz", csr_arrays(indices=np.array([0, 1, 7], dtype=np.int32)), "out of bounds")
npz("npz-negative-index.npz", csr_arrays(indices=np.array([0, -1, 2], dtype=np.int32)), "out of bounds")
npz("npz-unknown-format.npz", csr_arrays(format=np.array(b"dia")), "dia")
npz("npz-shape-wrong-length.npz", csr_arrays(shape=np.array([3, 3, 3], dtype=np.int64)), "shape")
npz("npz-shape-negative.npz", csr_arrays(shape=np.array([-3, 3], dtype=np.int64)), "shape")
npz("npz-big-endian.npz", csr_arrays(data=np.array([1.0, 2.0, 3.0], dtype=">f8")), "endian")
npz("npz-coo-length-mismatch.npz", dict(format=np.array(b"coo"), shape=np.array([3, 3], dtype=np.int64),
    data=np.array([1.0, 2.0]), row=np.array([0, 1, 2], dtype=np.int32), col=np.array([0, 1], dtype=np.int32)), "length")
npz("npz-ell-bad-padding.npz", dict(format=np.array(b"ell"), shape=np.array([2, 2], dtype=np.int64),
    width=np.array(2, dtype=np.int64), row_nnz=np.array([1, 2], dtype=np.int32),
    data=np.array([1.0, 2.0, 5.0, 3.0]), indices=np.array([0, 0, 1, 1], dtype=np.int32)), "padding")
npz("npz-jds-bad-perm.npz", dict(format=np.array(b"jds"), shape=np.array([2, 2], dtype=np.int64),
    perm=np.array([0, 0], dtype=np.int32), jd_ptr=np.array([0, 2], dtype=np.int32),
    data=np.array([1.0, 2.0]), indices=np.array([0, 1], dtype=np.int32)), "permutation")
z = io.BytesIO()
with zipfile.ZipFile(z, "w") as zf:
    pass
put("npz-empty-zip.npz", z.getvalue(), "format")
npz("npz-nan-data.npz", csr_arrays(data=np.array([1.0, np.nan, 3.0])), "array `data` holds the non-finite value NaN at position 1")
npz("npz-inf-data.npz", csr_arrays(data=np.array([1.0, 2.0, -np.inf])), "array `data` holds the non-finite value -inf at position 2")
npz("npz-bool-indices.npz", csr_arrays(indices=np.array([False, True, True])), "array `indices` has dtype bool")
import scipy.sparse as sp  # noqa: E402  (only the SciPy-written cases need it)
for kind, m in [("dia", sp.dia_matrix(np.eye(3))), ("bsr", sp.bsr_matrix(np.eye(4), blocksize=(2, 2)))]:
    buf = io.BytesIO()
    sp.save_npz(buf, m)
    put(f"npz-scipy-{kind}.npz", buf.getvalue(), f"format {kind} is not supported (supported formats: coo, csr")

# Cases that fail only with flags: file, flags, substring (EXPECTED-flags.tsv).
flagged = []
def put_flagged(name, data, flags, expect):
    put(name, data, expect)
    expected.pop()
    flagged.append((name, flags, expect))
buf = io.BytesIO()
np.savez(buf, **csr_arrays(data=np.array([1.0, 1e39, 3.0])))
put_flagged("npz-f64-overflows-f32.npz", buf.getvalue(), "--dtype f32", "array `data` holds the value 1e39 at position 1, which is out of range for f32")
put_flagged("mm-value-overflows-f32.mtx", B + "3 3 1\n1 1 1e39\n", "--dtype f32", "out of range for f32")

with open(os.path.join(OUT, "EXPECTED.tsv"), "w") as f:
    f.write("# file\tsubstring the error message must contain (the file name and, for text, the line are checked too)\n")
    for name, e in expected:
        f.write(f"{name}\t{e}\n")
with open(os.path.join(OUT, "EXPECTED-flags.tsv"), "w") as f:
    f.write("# file\tflags for convert\tsubstring the error message must contain (valid without the flags)\n")
    for name, flags, e in flagged:
        f.write(f"{name}\t{flags}\t{e}\n")
print(f"wrote {len(expected) + len(flagged)} files")
