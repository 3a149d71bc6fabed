//! Cross-checks `.npz` I/O against SciPy: files we write must load with
//! `scipy.sparse.load_npz`, and files `scipy.sparse.save_npz` writes
//! (compressed or not; csr, csc, coo) must read with ours.
//!
//! Python comes from `SPARSETOOL_PYTHON`, else `<workspace>/.venv/bin/python`.
//! Without a Python that has SciPy the tests print a `SKIPPED` line and
//! pass, unless `SPARSETOOL_REQUIRE_PYTHON=1` is set.

use sparsetool_fixtures::support::python;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::Command;

use sparsetool_formats::npz::{
    read_npy, read_npz, write_coo, write_csc, write_csr, write_npy, NpzArchive,
};
use sparsetool_formats::{AnyMatrix, Complex64, Coo, Csc, Csr, Index, Scalar};

fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("npz_scipy_{test}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run_python(py: &Path, script: &str, args: &[&str]) -> String {
    let out = Command::new(py)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Row-major dense copy, summing duplicates.
fn dense_coo<T: Scalar, I: Index>(m: &Coo<T, I>) -> Vec<T> {
    let mut d = vec![T::zero(); m.nrows() * m.ncols()];
    for k in 0..m.nnz() {
        d[m.rows()[k].to_usize() * m.ncols() + m.cols()[k].to_usize()] += m.values()[k];
    }
    d
}

fn dense_csr<T: Scalar, I: Index>(m: &Csr<T, I>) -> Vec<T> {
    let mut d = vec![T::zero(); m.nrows() * m.ncols()];
    for i in 0..m.nrows() {
        let (c, v) = m.row(i);
        for (c, v) in c.iter().zip(v) {
            d[i * m.ncols() + c.to_usize()] += *v;
        }
    }
    d
}

/// Row-major dense copy of a CSC matrix (walked column by column).
fn dense_csc<T: Scalar, I: Index>(m: &Csc<T, I>) -> Vec<T> {
    let mut d = vec![T::zero(); m.nrows() * m.ncols()];
    for j in 0..m.ncols() {
        let (r, v) = m.col(j);
        for (r, v) in r.iter().zip(v) {
            d[r.to_usize() * m.ncols() + j] += *v;
        }
    }
    d
}

fn py_literal<T: Scalar>(d: &[T], ncols: usize) -> String {
    let rows: Vec<String> = d
        .chunks(ncols.max(1))
        .map(|r| {
            let vals: Vec<String> = r
                .iter()
                .map(|v| {
                    if T::IS_COMPLEX {
                        format!("complex({:?}, {:?})", v.re(), v.im())
                    } else {
                        format!("{:?}", v.re())
                    }
                })
                .collect();
            format!("[{}]", vals.join(", "))
        })
        .collect();
    format!("[{}]", rows.join(", "))
}

const CHECK: &str = r#"
import sys, numpy as np, scipy.sparse as sp
path, fmt, dtype, idx, nrows, ncols, expected = sys.argv[1:8]
m = sp.load_npz(path)
assert m.format == fmt, (m.format, fmt)
assert m.shape == (int(nrows), int(ncols)), m.shape
assert m.dtype == np.dtype(dtype), (m.dtype, dtype)
if fmt in ('csr', 'csc'):
    assert m.has_canonical_format
exp = np.array(eval(expected), dtype=dtype).reshape(int(nrows), int(ncols))
assert np.array_equal(m.toarray(), exp), (m.toarray(), exp)
with np.load(path) as z:
    assert z['format'].dtype.kind == 'S' and z['format'].ndim == 0
    assert z['shape'].dtype == np.int64
    keys = ['indices', 'indptr'] if fmt in ('csr', 'csc') else ['row', 'col']
    assert list(z.keys()) == keys + ['format', 'shape', 'data'], list(z.keys())
    for k in keys:
        assert z[k].dtype == np.dtype(idx), (k, z[k].dtype, idx)
    assert z['data'].dtype == np.dtype(dtype)
print('ok')
"#;

fn check_in_python<T: Scalar, I: Index>(
    py: &Path,
    path: &Path,
    fmt: &str,
    dense: &[T],
    nrows: usize,
    ncols: usize,
) {
    let dtype = match T::NAME {
        "f32" => "float32",
        "f64" => "float64",
        "c64" => "complex64",
        _ => "complex128",
    };
    let idx = if I::NAME == "i32" { "int32" } else { "int64" };
    let out = run_python(
        py,
        CHECK,
        &[
            path.to_str().unwrap(),
            fmt,
            dtype,
            idx,
            &nrows.to_string(),
            &ncols.to_string(),
            &py_literal(dense, ncols),
        ],
    );
    assert_eq!(out.trim(), "ok");
}

fn sample_csr<T: Scalar, I: Index>() -> Csr<T, I> {
    // 4x5 with an empty row, non-trivial values.
    let ip = |v: &[usize]| {
        v.iter()
            .map(|&x| I::from_usize(x).unwrap())
            .collect::<Vec<I>>()
    };
    let vals = [1.5, -2.25, 3.0, 0.125, -7.5, 1e-300, 6.0];
    let values: Vec<T> = vals
        .iter()
        .enumerate()
        .map(|(k, &v)| T::from_parts(v, k as f64 - 2.0))
        .collect();
    Csr::try_from_parts(
        4,
        5,
        ip(&[0, 3, 3, 5, 7]),
        ip(&[0, 2, 4, 1, 3, 0, 4]),
        values,
    )
    .unwrap()
}

fn write_check_csr<T, I>(py: &Path, dir: &Path, name: &str)
where
    T: Scalar + sparsetool_formats::npz::NpyElement,
    I: Index + sparsetool_formats::npz::NpyElement,
{
    let m = sample_csr::<T, I>();
    let path = dir.join(format!("{name}.npz"));
    write_csr(BufWriter::new(File::create(&path).unwrap()), &m).unwrap();
    check_in_python::<T, I>(py, &path, "csr", &dense_csr(&m), m.nrows(), m.ncols());
    // And back through our reader.
    match read_npz::<T, I>(&path).unwrap() {
        AnyMatrix::Csr(b) => assert_eq!(b, m),
        other => panic!("{other:?}"),
    }
}

/// The sample matrix as CSC (built column by column from its dense copy),
/// written with `write_csc`, checked by SciPy as a canonical `csc_matrix`,
/// and read back by us as CSC.
fn write_check_csc<T, I>(py: &Path, dir: &Path, name: &str)
where
    T: Scalar + sparsetool_formats::npz::NpyElement,
    I: Index + sparsetool_formats::npz::NpyElement,
{
    let a = sample_csr::<T, I>();
    let dense = dense_csr(&a);
    let (nrows, ncols) = (a.nrows(), a.ncols());
    let (mut ptr, mut rows, mut vals) = (vec![I::default()], Vec::new(), Vec::new());
    for j in 0..ncols {
        for i in 0..nrows {
            let v = dense[i * ncols + j];
            if v != T::zero() {
                rows.push(I::from_usize(i).unwrap());
                vals.push(v);
            }
        }
        ptr.push(I::from_usize(rows.len()).unwrap());
    }
    let m = Csc::try_from_parts(nrows, ncols, ptr, rows, vals).unwrap();
    assert_eq!(dense_csc(&m), dense);
    let path = dir.join(format!("{name}.npz"));
    write_csc(BufWriter::new(File::create(&path).unwrap()), &m).unwrap();
    check_in_python::<T, I>(py, &path, "csc", &dense, nrows, ncols);
    match read_npz::<T, I>(&path).unwrap() {
        AnyMatrix::Csc(b) => assert_eq!(b, m),
        other => panic!("{other:?}"),
    }
}

#[test]
fn scipy_loads_our_files() {
    let Some(py) = python() else { return };
    let dir = scratch("ours");
    write_check_csr::<f64, i32>(&py, &dir, "csr_f64_i32");
    write_check_csr::<f32, i64>(&py, &dir, "csr_f32_i64");
    write_check_csr::<Complex64, i32>(&py, &dir, "csr_c128_i32");
    write_check_csr::<sparsetool_formats::Complex32, i64>(&py, &dir, "csr_c64_i64");
    write_check_csc::<f64, i32>(&py, &dir, "csc_f64_i32");
    write_check_csc::<f32, i64>(&py, &dir, "csc_f32_i64");
    write_check_csc::<Complex64, i64>(&py, &dir, "csc_c128_i64");
    let empty = Csc::<f64, i32>::empty(3, 2);
    let path = dir.join("empty_csc.npz");
    write_csc(BufWriter::new(File::create(&path).unwrap()), &empty).unwrap();
    check_in_python::<f64, i32>(&py, &path, "csc", &[0.0; 6], 3, 2);

    // COO with duplicates and out-of-order entries.
    let coo = Coo::<f64, i64>::try_from_parts(
        3,
        4,
        vec![2, 0, 2, 1],
        vec![3, 1, 3, 0],
        vec![1.0, 2.5, -4.0, 8.0],
    )
    .unwrap();
    let path = dir.join("coo.npz");
    write_coo(BufWriter::new(File::create(&path).unwrap()), &coo).unwrap();
    check_in_python::<f64, i64>(&py, &path, "coo", &dense_coo(&coo), 3, 4);

    // Empty matrices.
    let empty = Csr::<f64, i32>::empty(0, 0);
    let path = dir.join("empty.npz");
    write_csr(BufWriter::new(File::create(&path).unwrap()), &empty).unwrap();
    check_in_python::<f64, i32>(&py, &path, "csr", &[], 0, 0);
    let empty = Coo::<f32, i32>::empty(3, 2);
    let path = dir.join("empty_coo.npz");
    write_coo(BufWriter::new(File::create(&path).unwrap()), &empty).unwrap();
    check_in_python::<f32, i32>(&py, &path, "coo", &[0.0; 6], 3, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

const WRITE: &str = r#"
import os, sys, numpy as np, scipy.sparse as sp
out = sys.argv[1]
rng = np.random.default_rng(7)
dense = rng.random((9, 6))
dense[dense < 0.55] = 0
dense[4, :] = 0
cases = {}
A = sp.csr_matrix(dense)
cases['csr'] = (A, dense)
cases['csr_array'] = (sp.csr_array(dense), dense)
cases['csc'] = (sp.csc_matrix(dense), dense)
cases['csc_array_f32'] = (sp.csc_array(dense.astype(np.float32)), dense.astype(np.float32))
B = sp.csr_matrix(dense)
B.indices = B.indices.astype(np.int64); B.indptr = B.indptr.astype(np.int64)
cases['csr_i64'] = (B, dense)
cases['coo'] = (sp.coo_matrix(dense), dense)
r = np.array([0, 2, 0, 1, 2]); c = np.array([1, 0, 1, 3, 0]); v = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
D = sp.coo_matrix((v, (r, c)), shape=(3, 4))
dd = np.zeros((3, 4)); np.add.at(dd, (r, c), v)
cases['coo_dup'] = (D, dd)
cases['coo_array_dup'] = (sp.coo_array((v, (r, c)), shape=(3, 4)), dd)
U = sp.csr_matrix((np.array([1.0, 2.0, 3.0, 4.0]), np.array([2, 0, 1, 1]), np.array([0, 2, 4])), shape=(2, 3))
assert not U.has_canonical_format
ud = np.array([[2.0, 0, 1.0], [0, 7.0, 0]])
cases['csr_unsorted_dup'] = (U, ud)
V = sp.csc_matrix((np.array([1.0, 2.0, 3.0, 4.0]), np.array([2, 0, 1, 1]), np.array([0, 2, 4])), shape=(3, 2))
assert not V.has_canonical_format
cases['csc_unsorted_dup'] = (V, ud.T)
Z = dense * (1 + 2j)
cases['csr_c128'] = (sp.csr_matrix(Z), Z)
cases['coo_c64'] = (sp.coo_matrix(Z.astype(np.complex64)), Z.astype(np.complex64))
I = (dense * 10).astype(np.int64)
cases['csr_int'] = (sp.csr_matrix(I), I.astype(np.float64))
cases['empty'] = (sp.csr_matrix((0, 0)), np.zeros((0, 0)))
cases['rect_empty'] = (sp.coo_matrix((5, 2)), np.zeros((5, 2)))
for name, (m, d) in cases.items():
    for comp in (False, True):
        tag = name + ('_z' if comp else '_s')
        sp.save_npz(os.path.join(out, tag + '.npz'), m, compressed=comp)
        np.savez(os.path.join(out, tag + '.dense.npz'), dense=np.ascontiguousarray(d))
        print(tag, 'complex' if np.iscomplexobj(d) else 'real', m.format)
"#;

fn compare<T: Scalar>(dir: &Path, tag: &str, format: &str) {
    let path = dir.join(format!("{tag}.npz"));
    let m = read_npz::<T, i32>(&path).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let (nrows, ncols, got) = match &m {
        AnyMatrix::Csr(c) => {
            assert!(
                format == "csr" && !tag.contains("unsorted"),
                "{tag}: got CSR for {format}"
            );
            (c.nrows(), c.ncols(), dense_csr(c))
        }
        AnyMatrix::Csc(c) => {
            assert!(
                format == "csc" && !tag.contains("unsorted"),
                "{tag}: got CSC for {format}"
            );
            (c.nrows(), c.ncols(), dense_csc(c))
        }
        AnyMatrix::Coo(c) => {
            assert!(
                format == "coo" || tag.contains("unsorted"),
                "{tag}: got COO for {format}"
            );
            (c.nrows(), c.ncols(), dense_coo(c))
        }
        other => panic!("{other:?}"),
    };
    let mut dense = NpzArchive::open(&dir.join(format!("{tag}.dense.npz"))).unwrap();
    let expected: Vec<T> = dense.value_array("dense").unwrap();
    assert_eq!(expected.len(), nrows * ncols, "{tag}");
    assert_eq!(got, expected, "{tag}");
    // Also with int64 indices.
    let m64 = read_npz::<T, i64>(&path).unwrap();
    assert_eq!(m64.kind(), m.kind(), "{tag}");
    assert_eq!(m64.nnz(), m.nnz(), "{tag}");
}

#[test]
fn we_read_scipy_files() {
    let Some(py) = python() else { return };
    let dir = scratch("scipy");
    let listing = run_python(&py, WRITE, &[dir.to_str().unwrap()]);
    let mut count = 0;
    for line in listing.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [tag, kind, format] = parts[..] else {
            panic!("bad line {line}")
        };
        if kind == "complex" {
            compare::<Complex64>(&dir, tag, format);
            // Complex data cannot be read into a real type.
            assert!(read_npz::<f64, i32>(&dir.join(format!("{tag}.npz"))).is_err());
        } else {
            compare::<f64>(&dir, tag, format);
            compare::<Complex64>(&dir, tag, format);
        }
        count += 1;
    }
    assert_eq!(count, 30);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn npy_files_match_numpy() {
    let Some(py) = python() else { return };
    let dir = scratch("npy");
    let ours = dir.join("ours.npy");
    write_npy(File::create(&ours).unwrap(), &[1.0f64, -0.5, 2.25]).unwrap();
    let theirs = dir.join("theirs.npy");
    let script = r#"
import sys, numpy as np
x = np.load(sys.argv[1])
assert x.dtype == np.float64 and x.shape == (3,) and list(x) == [1.0, -0.5, 2.25], x
with open(sys.argv[1], 'rb') as f:
    ours = f.read()
import io
b = io.BytesIO(); np.save(b, x)
assert b.getvalue() == ours, (b.getvalue(), ours)
np.save(sys.argv[2], np.array([1 + 2j, 3 - 4j], dtype=np.complex64))
print('ok')
"#;
    let out = run_python(
        &py,
        script,
        &[ours.to_str().unwrap(), theirs.to_str().unwrap()],
    );
    assert_eq!(out.trim(), "ok");
    let z: Vec<Complex64> = read_npy(&theirs).unwrap();
    assert_eq!(z, vec![Complex64::new(1.0, 2.0), Complex64::new(3.0, -4.0)]);
    assert!(read_npy::<f64>(&theirs).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
