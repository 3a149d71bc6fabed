//! Out-of-core conversion with tiny budgets: the `.spb` it writes is
//! byte-identical to the in-memory path's (load, convert, write_spb), for
//! every format (the GPU layouts with their parameters too), on the
//! bundled matrices and on made-up ones with symmetric storage,
//! duplicates, empty rows and a dense row.

use std::path::{Path, PathBuf};

use sparsetool_convert::ooc::{
    convert_out_of_core, convert_out_of_core_to, Budget, ChooseParams, CsrView, OocError,
    OocSummary, Output, OOC_FORMATS,
};
use sparsetool_convert::{from_csr, ConvertParams, HybWidth, ToCsr};
use sparsetool_formats::io::{load, write_to_with, Input, LoadOptions, OutputKind, SaveOptions};
use sparsetool_formats::mm::{MmErrorKind, ReadOptions};
use sparsetool_formats::{AnyMatrix, Complex64, FormatKind, Index, Scalar};

/// What `sparsetool convert` writes in memory in the container `kind`
/// (a Matrix Market output carries the input's comments), or the
/// conversion's error.
fn in_memory<T: Scalar, I: Index>(
    path: &Path,
    target: FormatKind,
    params: &ConvertParams,
    kind: OutputKind,
) -> Result<Vec<u8>, String> {
    let opts = LoadOptions {
        lenient: lenient(path),
        ..LoadOptions::default()
    };
    let loaded = load::<T, I>(&Input::Path(path.into()), &opts).unwrap();
    let m = loaded.matrix;
    let out = if m.kind() == FormatKind::Coo && target == FormatKind::Coo {
        m
    } else {
        let csr = m.try_into_csr().unwrap();
        if target == FormatKind::Csr {
            AnyMatrix::Csr(csr)
        } else {
            from_csr(&csr, target, params).map_err(|e| e.to_string())?
        }
    };
    let save = SaveOptions {
        comments: loaded.comments,
        ..SaveOptions::default()
    };
    let mut buf = std::io::Cursor::new(Vec::new());
    write_to_with(&mut buf, Path::new("o"), kind, out.as_ref(), &save).unwrap();
    Ok(buf.into_inner())
}

/// The out-of-core bytes and the number of buckets built, or the error.
fn out_of_core<T: Scalar, I: Index>(
    path: &Path,
    target: FormatKind,
    params: &ConvertParams,
    budget: u64,
    kind: OutputKind,
) -> Result<(Vec<u8>, usize), String> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let f = std::fs::File::open(path).unwrap();
    let b = Budget {
        bytes: budget,
        tmp_dir: dir.path().to_path_buf(),
    };
    let opts = ReadOptions {
        lenient: lenient(path),
        ..ReadOptions::default()
    };
    let output = Output {
        path: &out,
        kind,
        save: &SaveOptions::default(),
    };
    let choose = |_: &CsrView<'_, T, I>| Ok(params.clone());
    let r = convert_out_of_core_to::<T, I>(f, "m.mtx", &opts, target, &choose, &b, &output);
    // Nothing left in the scratch directory's parent but the output.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    let s = match r {
        Ok(s) => s,
        Err(OocError::Convert(e)) => {
            assert!(left.len() <= 1, "{left:?}");
            return Err(e.to_string());
        }
        Err(e) => panic!("{}: {e}", path.display()),
    };
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(s.bytes, bytes.len() as u64);
    assert_eq!(left.len(), 1, "{left:?}");
    Ok((bytes, s.buckets))
}

/// Both paths give the same `.spb` bytes, or the same error.
fn same_as_in_memory<T: Scalar, I: Index>(
    path: &Path,
    target: FormatKind,
    params: &ConvertParams,
    budget: u64,
) -> usize {
    same_in::<T, I>(OutputKind::Spb, path, target, params, budget)
}

/// Both paths give the same bytes in the container `kind`, or the same
/// error.
fn same_in<T: Scalar, I: Index>(
    kind: OutputKind,
    path: &Path,
    target: FormatKind,
    params: &ConvertParams,
    budget: u64,
) -> usize {
    let want = in_memory::<T, I>(path, target, params, kind);
    match out_of_core::<T, I>(path, target, params, budget, kind) {
        Ok((got, buckets)) => {
            let want = want.unwrap_or_else(|e| {
                panic!(
                    "{} to {target}: in memory: {e}, out of core: fine",
                    path.display()
                )
            });
            if kind != OutputKind::Spb && got != want {
                // The text shows where.
                let (g, w) = (
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want),
                );
                let at = g.lines().zip(w.lines()).position(|(a, b)| a != b);
                panic!(
                    "{} to {target} as {kind:?}: bytes differ at line {at:?} ({} and {} bytes)",
                    path.display(),
                    got.len(),
                    want.len()
                );
            }
            assert!(
                got == want,
                "{} to {target} ({params:?}): bytes differ",
                path.display()
            );
            buckets
        }
        Err(e) => {
            assert_eq!(
                want.err().as_deref(),
                Some(e.as_str()),
                "{}",
                path.display()
            );
            0
        }
    }
}

/// The lenient recoveries that need every entry at once (0-based
/// indices, both triangles stored) are refused out of core, with a reason.
fn needs_whole_file(path: &Path) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let b = Budget {
        bytes: 1 << 20,
        tmp_dir: dir.path().to_path_buf(),
    };
    let opts = ReadOptions {
        lenient: lenient(path),
        ..ReadOptions::default()
    };
    let f = std::fs::File::open(path).unwrap();
    let r = convert_out_of_core::<f64, i64>(
        f,
        "m",
        &opts,
        FormatKind::Csr,
        &|_| Ok(ConvertParams::default()),
        &b,
        &dir.path().join("o.spb"),
    );
    match r {
        Err(OocError::Read(e)) => {
            let opts = LoadOptions {
                lenient: lenient(path),
                ..LoadOptions::default()
            };
            match load::<f64, i64>(&Input::Path(path.into()), &opts) {
                // An invalid file: the same error (kind and line) both ways.
                Err(sparsetool_formats::io::Error::Mm(m)) => {
                    assert_eq!(
                        (m.kind().to_string(), m.line()),
                        (e.kind().to_string(), e.line())
                    );
                }
                _ => assert!(
                    matches!(e.kind(), MmErrorKind::ScanUnsupported { .. }),
                    "{e}"
                ),
            }
            true
        }
        Err(e) => panic!("{e}"),
        Ok(_) => false,
    }
}

/// The quirky files need `--lenient`.
fn lenient(path: &Path) -> bool {
    path.to_string_lossy().contains("quirks")
}

fn same<T: Scalar, I: Index>(path: &Path, budget: u64) -> usize {
    same_each::<T, I>(&[OutputKind::Spb], path, budget)
}

/// Every format in every container of `kinds`; the most buckets built.
fn same_each<T: Scalar, I: Index>(kinds: &[OutputKind], path: &Path, budget: u64) -> usize {
    let mut most = 0;
    if needs_whole_file(path) {
        return 0;
    }
    for &kind in kinds {
        for target in OOC_FORMATS {
            let buckets = same_in::<T, I>(kind, path, target, &ConvertParams::default(), budget);
            most = most.max(buckets);
        }
    }
    most
}

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/matrices");
    let mut v = Vec::new();
    for d in ["real", "quirks", "seed"] {
        for e in std::fs::read_dir(root.join(d)).unwrap() {
            let p = e.unwrap().path();
            let name = p.to_string_lossy().to_string();
            if name.ends_with(".mtx") || name.ends_with(".mtx.gz") {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

fn is_array(p: &Path) -> bool {
    let h = sparsetool_formats::io::read_mm_header(&Input::Path(p.into()), &LoadOptions::default());
    matches!(h, Ok((h, _)) if h.format == sparsetool_formats::mm::MmFormat::Array)
}

fn is_complex(p: &Path) -> bool {
    let h = sparsetool_formats::io::read_mm_header(&Input::Path(p.into()), &LoadOptions::default());
    matches!(h, Ok((h, _)) if h.field == sparsetool_formats::mm::MmField::Complex)
}

#[test]
fn bundled_matrices_are_byte_identical_with_a_256k_budget() {
    let mut split = false;
    for p in fixtures() {
        if is_array(&p) {
            continue;
        }
        let buckets = if is_complex(&p) {
            same::<Complex64, i32>(&p, 256 << 10)
        } else {
            same::<f64, i32>(&p, 256 << 10)
        };
        split |= buckets > 4;
    }
    assert!(
        split,
        "no fixture needed several buckets: the budget is too large to test anything"
    );
}

#[test]
fn other_types_are_byte_identical() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/matrices/real");
    same::<f32, i64>(&root.join("bcsstk13.mtx.gz"), 128 << 10);
    same::<f32, i32>(&root.join("arrow.mtx.gz"), 128 << 10);
}

/// A file of `text` in a temporary directory.
fn file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Duplicates (summed in input order: the sums are not associative in
/// floating point), empty rows, a dense row, in every symmetry.
fn made_up(sym: &str, field: &str) -> String {
    let n = 3000;
    let mut lines = Vec::new();
    let v = |k: usize, diagonal: bool| {
        let x = 0.1 + (k % 97) as f64 * 1e-3 + 1e16 * ((k % 3) as f64);
        if field == "complex" {
            let im = if diagonal { 0.0 } else { k as f64 * 0.5 };
            format!("{x} {im}")
        } else {
            format!("{x}")
        }
    };
    let mut k = 0;
    // A dense row (row 1500 in the lower triangle: columns 1..=1500; and
    // all of them for general files).
    let dense_to = if sym == "general" { n } else { 1500 };
    for j in 1..=dense_to {
        if sym == "skew-symmetric" && j == 1500 {
            continue;
        }
        lines.push(format!("1500 {j} {}", v(k, j == 1500)));
        k += 1;
    }
    // Scattered entries, every third row empty, many duplicates.
    for r in 1..=n {
        if r % 3 == 0 {
            continue;
        }
        for t in 0..3 {
            let c = 1 + (r * 7 + t * 13) % r.max(1);
            if sym != "general" && c >= r {
                continue;
            }
            for _dup in 0..(1 + (r + t) % 3) {
                lines.push(format!("{r} {c} {}", v(k, r == c)));
                k += 1;
            }
        }
    }
    format!(
        "%%MatrixMarket matrix coordinate {field} {sym}\n% made up\n{n} {n} {}\n{}\n",
        lines.len(),
        lines.join("\n")
    )
}

#[test]
fn symmetric_duplicates_empty_rows_dense_row() {
    let dir = tempfile::tempdir().unwrap();
    for sym in ["general", "symmetric", "skew-symmetric"] {
        let p = file(dir.path(), &format!("{sym}.mtx"), &made_up(sym, "real"));
        assert!(same::<f64, i32>(&p, 64 << 10) > 1, "{sym}");
    }
    let p = file(dir.path(), "herm.mtx", &made_up("hermitian", "complex"));
    same::<Complex64, i64>(&p, 64 << 10);
    // gzip, as a stream.
    let gz = dir.path().join("sym.mtx.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, made_up("symmetric", "real").as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    same::<f64, i32>(&gz, 64 << 10);
}

/// `.npz` and Matrix Market outputs (plain and gzip) out of core are
/// the in-memory path's bytes, for every format, on every bundled matrix
/// and on the made-up ones: symmetric storage found in place (a COO
/// target through its canonical CSR), duplicates, empty rows, a dense
/// row, the input's comments carried over.
#[test]
fn npz_and_matrix_market_outputs_are_byte_identical() {
    let all = [OutputKind::Npz, OutputKind::Mtx, OutputKind::MtxGz];
    for p in fixtures() {
        if is_array(&p) {
            continue;
        }
        let kinds = &all[..2];
        if is_complex(&p) {
            same_each::<Complex64, i32>(kinds, &p, 256 << 10);
        } else {
            same_each::<f64, i32>(kinds, &p, 256 << 10);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for sym in ["general", "symmetric", "skew-symmetric"] {
        let p = file(dir.path(), &format!("{sym}.mtx"), &made_up(sym, "real"));
        assert!(same_each::<f64, i32>(&all, &p, 64 << 10) > 1, "{sym}");
    }
    let p = file(dir.path(), "herm.mtx", &made_up("hermitian", "complex"));
    same_each::<Complex64, i64>(&all, &p, 64 << 10);
    // A general file holding a symmetric matrix (both triangles, with
    // duplicates): a COO target is canonicalised out of core to find it.
    let sym = made_up("symmetric", "real");
    let mut lines: Vec<String> = sym.lines().skip(3).map(str::to_string).collect();
    let mirrored: Vec<String> = lines
        .iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[0] != f[1]).then(|| format!("{} {} {}", f[1], f[0], f[2]))
        })
        .collect();
    lines.extend(mirrored);
    let text = format!(
        "%%MatrixMarket matrix coordinate real general\n3000 3000 {}\n{}\n",
        lines.len(),
        lines.join("\n")
    );
    let p = file(dir.path(), "both.mtx", &text);
    same_in::<f64, i32>(
        OutputKind::Mtx,
        &p,
        FormatKind::Coo,
        &ConvertParams::default(),
        64 << 10,
    );
    let got = out_of_core::<f64, i32>(
        &p,
        FormatKind::Coo,
        &ConvertParams::default(),
        64 << 10,
        OutputKind::Mtx,
    )
    .unwrap()
    .0;
    assert!(got.starts_with(b"%%MatrixMarket matrix coordinate real symmetric\n"));
    // ... and the layouts' refusals hold for a Matrix Market output too.
    let made = file(dir.path(), "g.mtx", &made_up("general", "real"));
    let narrow = ConvertParams {
        ell_width: Some(3),
        ..ConvertParams::default()
    };
    let e = out_of_core::<f64, i32>(&made, FormatKind::Ell, &narrow, 64 << 10, OutputKind::Mtx)
        .unwrap_err();
    assert!(e.contains("longest row"), "{e}");
    same_in::<f64, i32>(OutputKind::Mtx, &made, FormatKind::Ell, &narrow, 64 << 10);
}

/// `path` converted to `target` at `out` (f64, i32) with a 64 KiB budget
/// and its scratch directory in `scratch`.
fn convert_small(
    path: &Path,
    scratch: &Path,
    target: FormatKind,
    out: &Path,
) -> Result<OocSummary, OocError> {
    let b = Budget {
        bytes: 64 << 10,
        tmp_dir: scratch.to_path_buf(),
    };
    let name = path.file_name().unwrap().to_string_lossy();
    let f = std::fs::File::open(path).unwrap();
    let params = |_: &CsrView<'_, f64, i32>| Ok(ConvertParams::default());
    convert_out_of_core::<f64, i32>(f, &name, &ReadOptions::default(), target, &params, &b, out)
}

#[test]
fn bad_input_is_an_error_naming_the_line_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let text = made_up("general", "real").replacen("1500 7 ", "1500 x7 ", 1);
    let p = file(dir.path(), "bad.mtx", &text);
    let e = convert_small(&p, &scratch, FormatKind::Csr, &dir.path().join("out.spb")).unwrap_err();
    assert!(
        matches!(&e, OocError::Read(m) if m.line() == Some(10)),
        "{e}"
    );
    assert!(e.to_string().contains("bad.mtx"), "{e}");
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
}

/// The GPU layouts with their parameters: explicit widths, HYB's split,
/// SELL's C and σ (unsorted, windows, one global sort larger than a piece
/// of the permutation), JDS over more rows than a piece (the counting
/// sort that places one piece per scan).
#[test]
fn gpu_layouts_with_parameters_are_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let made = file(dir.path(), "g.mtx", &made_up("general", "real"));
    let sym = file(dir.path(), "s.mtx", &made_up("symmetric", "real"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/matrices/real");
    let bundled = root.join("bcsstk13.mtx.gz");
    let d = ConvertParams::default;
    let sell = |slice, sigma| ConvertParams {
        slice,
        sigma: Some(sigma),
        ..d()
    };
    let hyb = |w| ConvertParams {
        hyb_width: w,
        ..d()
    };
    for p in [&made, &sym, &bundled] {
        for (target, params) in [
            (FormatKind::Jds, d()),
            (FormatKind::Hyb, hyb(HybWidth::Auto)),
            (FormatKind::Hyb, hyb(HybWidth::Fixed(2))),
            (FormatKind::Hyb, hyb(HybWidth::Fixed(40))),
            (FormatKind::Sell, sell(4, 1)),
            (FormatKind::Sell, sell(4, 8)),
            (FormatKind::Sell, d()),
            (FormatKind::Sell, sell(8, 1 << 20)),
            (FormatKind::Sell, sell(1, 1 << 20)),
        ] {
            same_as_in_memory::<f64, i32>(p, target, &params, 64 << 10);
        }
    }
    // ELL: its width is the longest row (the made-up dense row makes too
    // much padding: the same refusal both ways), or given.
    for p in [&made, &bundled] {
        same_as_in_memory::<f64, i32>(p, FormatKind::Ell, &d(), 64 << 10);
    }
    let wide = ConvertParams {
        ell_width: Some(200),
        ..d()
    };
    same_as_in_memory::<f32, i64>(&bundled, FormatKind::Ell, &wide, 64 << 10);
    same_as_in_memory::<Complex64, i32>(&sym, FormatKind::Hyb, &hyb(HybWidth::Auto), 64 << 10);
}

#[test]
fn a_layout_that_does_not_fit_is_refused_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = dir.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    let p = file(dir.path(), "a.mtx", &made_up("general", "real"));
    let narrow = ConvertParams {
        ell_width: Some(3),
        ..ConvertParams::default()
    };
    let out = dir.path().join("o.spb");
    let b = Budget {
        bytes: 64 << 10,
        tmp_dir: scratch.clone(),
    };
    let run = |params: &ChooseParams<'_, f64, i32>| {
        let f = std::fs::File::open(&p).unwrap();
        convert_out_of_core::<f64, i32>(
            f,
            "a.mtx",
            &ReadOptions::default(),
            FormatKind::Ell,
            params,
            &b,
            &out,
        )
    };
    let e = run(&|_| Ok(narrow.clone())).unwrap_err();
    assert!(
        e.to_string().contains("longest row") || e.to_string().contains("width"),
        "{e}"
    );
    assert!(matches!(e, OocError::Convert(_)), "{e}");
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
    // The caller's choice sees the CSR built out of core.
    let e = run(&|a| Err(format!("{} rows, {} entries", a.nrows, a.nnz()))).unwrap_err();
    assert!(
        matches!(&e, OocError::Params(m) if m.starts_with("3000 rows, ")),
        "{e}"
    );
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
}
