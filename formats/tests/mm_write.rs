//! The Matrix Market writer's symmetry detection and carried comments.

use sparsetool_fixtures::real_matrix;
use sparsetool_formats::mm::{
    read_bytes, read_path, symmetry_of, write_coo, write_csr, MmField, MmSymmetry, ReadOptions,
    WriteOptions, WriteSymmetry,
};
use sparsetool_formats::{Complex64, Coo, Csr, Index, Scalar};

fn coo<T: Scalar>(n: usize, m: usize, e: &[(i32, i32, T)]) -> Coo<T, i32> {
    Coo::try_from_parts(
        n,
        m,
        e.iter().map(|t| t.0).collect(),
        e.iter().map(|t| t.1).collect(),
        e.iter().map(|t| t.2).collect(),
    )
    .unwrap()
}

/// Writes `m` with `opts`; returns the text.
fn write<T: Scalar>(m: &Coo<T, i32>, opts: &WriteOptions) -> String {
    let mut out = Vec::new();
    write_coo(&mut out, m, opts).unwrap();
    String::from_utf8(out).unwrap()
}

/// The storage keyword of a written file's banner.
fn banner_symmetry(text: &str) -> &str {
    text.lines().next().unwrap().rsplit(' ').next().unwrap()
}

/// Sorted (row, col, value).
fn sorted<T: Scalar, I: Index>(m: &Coo<T, I>) -> Vec<(usize, usize, T)> {
    let mut e: Vec<(usize, usize, T)> = Vec::with_capacity(m.nnz());
    sparsetool_formats::MatrixRef::Coo(m).for_each_entry(|r, c, v| e.push((r, c, v)));
    e.sort_by_key(|t| (t.0, t.1));
    e
}

/// Writes `m` (auto), checks the banner says `want`, and that reading the
/// file back gives the same entries.
fn check<T: Scalar>(m: &Coo<T, i32>, opts: &WriteOptions, want: &str) -> String {
    let text = write(m, opts);
    assert_eq!(banner_symmetry(&text), want, "{text}");
    if opts.field != MmField::Pattern {
        let back = read_bytes::<T, i32>(text.as_bytes(), "rt", &ReadOptions::default()).unwrap();
        assert_eq!(sorted(&back.coo), sorted(m), "{text}");
    }
    text
}

fn c(re: f64, im: f64) -> Complex64 {
    Complex64::new(re, im)
}

#[test]
fn real_kinds_detected() {
    let o = WriteOptions::default();
    let sym = coo(
        3,
        3,
        &[
            (0, 0, 2.0),
            (1, 0, -1.0),
            (0, 1, -1.0),
            (2, 1, 4.0),
            (1, 2, 4.0),
        ],
    );
    let text = check(&sym, &o, "symmetric");
    assert!(
        text.ends_with("3 3 3\n1 1 2.0\n2 1 -1.0\n3 2 4.0\n"),
        "{text}"
    );
    // Nearly symmetric: one value differs in the last bit.
    let near = coo(2, 2, &[(1, 0, 1.0), (0, 1, 1.0000000000000002)]);
    check(&near, &o, "general");
    // Structurally asymmetric: an explicit zero without its mirror.
    check(&coo(2, 2, &[(1, 0, 0.0)]), &o, "general");
    // Non-square, even if its square part is symmetric.
    check(&coo(2, 3, &[(1, 0, 1.0), (0, 1, 1.0)]), &o, "general");
    // Skew-symmetric: strictly lower triangle only.
    let skew = coo(
        3,
        3,
        &[(1, 0, 1.5), (0, 1, -1.5), (2, 0, -2.0), (0, 2, 2.0)],
    );
    let text = check(&skew, &o, "skew-symmetric");
    assert!(text.ends_with("3 3 2\n2 1 1.5\n3 1 -2.0\n"), "{text}");
    // Skew off the diagonal, but a nonzero diagonal: general.
    let d = coo(2, 2, &[(0, 0, 1.0), (1, 0, 1.5), (0, 1, -1.5)]);
    check(&d, &o, "general");
    // An explicit zero on the diagonal cannot be stored skew-symmetric.
    let d = coo(2, 2, &[(0, 0, 0.0), (1, 0, 1.5), (0, 1, -1.5)]);
    check(&d, &o, "general");
    // Duplicates are summed before the check.
    let dup = coo(2, 2, &[(1, 0, 1.0), (0, 1, 3.0), (1, 0, 2.0)]);
    let text = write(&dup, &o);
    assert!(text.starts_with("%%MatrixMarket matrix coordinate real symmetric\n"));
    assert!(text.ends_with("2 2 1\n2 1 3.0\n"), "{text}");
    // NaN equals nothing.
    let nan = write(&coo(1, 1, &[(0, 0, f64::NAN)]), &o);
    assert_eq!(banner_symmetry(&nan), "general");
    // --symmetry general writes every entry.
    let g = WriteOptions {
        symmetry: WriteSymmetry::General,
        ..WriteOptions::default()
    };
    let text = check(&sym, &g, "general");
    assert!(text.contains("\n3 3 5\n"), "{text}");
}

#[test]
fn complex_and_pattern_kinds_detected() {
    let o = WriteOptions::for_type::<Complex64>();
    let herm = coo(
        2,
        2,
        &[
            (0, 0, c(2.0, 0.0)),
            (1, 0, c(1.0, 2.0)),
            (0, 1, c(1.0, -2.0)),
        ],
    );
    let text = check(&herm, &o, "hermitian");
    assert!(
        text.ends_with("2 2 2\n1 1 2.0 0.0\n2 1 1.0 2.0\n"),
        "{text}"
    );
    // A complex diagonal is not hermitian.
    let bad = coo(
        2,
        2,
        &[
            (0, 0, c(2.0, 1.0)),
            (1, 0, c(1.0, 2.0)),
            (0, 1, c(1.0, -2.0)),
        ],
    );
    check(&bad, &o, "general");
    // Complex symmetric (not conjugated).
    let csym = coo(2, 2, &[(1, 0, c(1.0, 2.0)), (0, 1, c(1.0, 2.0))]);
    check(&csym, &o, "symmetric");
    let cskew = coo(2, 2, &[(1, 0, c(1.0, 2.0)), (0, 1, c(-1.0, -2.0))]);
    check(&cskew, &o, "skew-symmetric");
    // Written as `real` (imaginary parts zero), hermitian is not a choice.
    let realh = coo(2, 2, &[(1, 0, c(1.0, 0.0)), (0, 1, c(1.0, 0.0))]);
    check(&realh, &WriteOptions::default(), "symmetric");

    // Pattern: structure only; symmetric or general, never skew.
    let p = WriteOptions {
        field: MmField::Pattern,
        ..WriteOptions::default()
    };
    let skew = coo(2, 2, &[(1, 0, 1.5), (0, 1, -1.5)]);
    let text = check(&skew, &p, "symmetric");
    assert!(text.ends_with("2 2 1\n2 1\n"), "{text}");
    check(&coo(2, 2, &[(1, 0, 1.5)]), &p, "general");
    let csr =
        Csr::<f64, i32>::try_from_parts(2, 2, vec![0, 1, 2], vec![1, 0], vec![3.0, 4.0]).unwrap();
    assert_eq!(symmetry_of(&csr, MmField::Real), MmSymmetry::General);
    assert_eq!(symmetry_of(&csr, MmField::Pattern), MmSymmetry::Symmetric);
}

#[test]
fn csr_writer_detects_too() {
    let csr = Csr::<f64, i32>::try_from_parts(
        2,
        2,
        vec![0, 2, 4],
        vec![0, 1, 0, 1],
        vec![1.0, 5.0, 5.0, 2.0],
    )
    .unwrap();
    let mut out = Vec::new();
    write_csr(&mut out, &csr, &WriteOptions::default()).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("%%MatrixMarket matrix coordinate real symmetric\n"));
    assert!(
        text.ends_with("2 2 3\n1 1 1.0\n2 1 5.0\n2 2 2.0\n"),
        "{text}"
    );
}

/// A bundled symmetric matrix: read, written back (auto) with half the
/// entries, read again equal; the carried comments come back too.
#[test]
fn bcsstk13_round_trip_half_the_entries_and_comments() {
    let path = real_matrix("bcsstk13").unwrap().path;
    let a = read_path::<f64, i32>(&path, &ReadOptions::default()).unwrap();
    assert_eq!(a.header.symmetry, MmSymmetry::Symmetric);
    assert_eq!(a.comments.len(), 12, "{:?}", a.comments);
    assert_eq!(
        a.comments[2],
        " http://www.cise.ufl.edu/research/sparse/matrices/HB/bcsstk13"
    );
    let o = WriteOptions {
        comments: a.comments.clone(),
        ..WriteOptions::default()
    };
    let text = write(&a.coo, &o);
    assert!(text.starts_with(
        "%%MatrixMarket matrix coordinate real symmetric\n%----------------------------------"
    ));
    let back = read_bytes::<f64, i32>(text.as_bytes(), "b", &ReadOptions::default()).unwrap();
    assert_eq!(back.header.entries, a.header.entries);
    assert!(2 * back.header.entries < a.coo.nnz() + 2003 + 1);
    assert_eq!(sorted(&back.coo), sorted(&a.coo));
    // Carried comments, then the writer's own line.
    assert_eq!(back.comments[..12], a.comments[..]);
    assert_eq!(back.comments[12], " written by sparsetool");
    // Written again: the writer's own line is not carried twice.
    let again = write(
        &back.coo,
        &WriteOptions {
            comments: back.comments.clone(),
            ..WriteOptions::default()
        },
    );
    assert_eq!(again, text);
    let general = write(
        &a.coo,
        &WriteOptions {
            symmetry: WriteSymmetry::General,
            ..WriteOptions::default()
        },
    );
    assert!(general.starts_with("%%MatrixMarket matrix coordinate real general\n"));
    assert!(general.contains(&format!("\n2003 2003 {}\n", a.coo.nnz())));
    assert!(
        general.len() > text.len() * 17 / 10,
        "{} vs {}",
        general.len(),
        text.len()
    );
}

#[test]
fn bundled_skew_hermitian_pattern_keep_their_storage() {
    let skew = read_path::<f64, i32>(
        &real_matrix("plskz362").unwrap().path,
        &ReadOptions::default(),
    )
    .unwrap();
    let text = write(&skew.coo, &WriteOptions::default());
    assert!(text.starts_with("%%MatrixMarket matrix coordinate real skew-symmetric\n"));
    assert!(text.contains("\n362 362 880\n"));
    // `cha` declares hermitian but has a complex diagonal (read leniently):
    // it is not hermitian, so it is written general.
    let lenient = ReadOptions {
        lenient: true,
        ..ReadOptions::default()
    };
    let cha = read_path::<Complex64, i32>(&real_matrix("cha").unwrap().path, &lenient).unwrap();
    let text = write(&cha.coo, &WriteOptions::for_type::<Complex64>());
    assert!(text.starts_with("%%MatrixMarket matrix coordinate complex general\n"));
    assert!(text.contains(&format!("\n3 3 {}\n", cha.coo.nnz())));
    let jag = read_path::<f64, i32>(
        &real_matrix("jagmesh7").unwrap().path,
        &ReadOptions::default(),
    )
    .unwrap();
    let p = WriteOptions {
        field: MmField::Pattern,
        ..WriteOptions::default()
    };
    let text = write(&jag.coo, &p);
    assert!(text.starts_with("%%MatrixMarket matrix coordinate pattern symmetric\n"));
    assert!(text.contains(&format!(" {}\n", jag.header.entries)));
}

#[test]
fn comments_read_from_every_source_and_sanitised_on_write() {
    let text = "%%MatrixMarket matrix coordinate real general\n% first\n\n%%GraphBLAS type\n  %indented\r\n%\n2 2 1\n1 2 3\n";
    let want = [" first", "%GraphBLAS type", "indented", ""];
    let m = read_bytes::<f64, i32>(text.as_bytes(), "a", &ReadOptions::default()).unwrap();
    assert_eq!(m.comments, want);
    // Gzip: the streamed header path keeps them too.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let m = read_bytes::<f64, i32>(&gz, "a.gz", &ReadOptions::default()).unwrap();
    assert_eq!(m.comments, want);
    let m = sparsetool_formats::mm::read_reader::<_, f64, i32>(
        text.as_bytes(),
        "<stdin>",
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(m.comments, want);
    // No comments.
    let m = read_bytes::<f64, i32>(
        b"%%MatrixMarket matrix coordinate real general\n1 1 0\n",
        "b",
        &ReadOptions::default(),
    )
    .unwrap();
    assert!(m.comments.is_empty());

    // Control characters cannot break the file; line breaks make lines.
    let o = WriteOptions {
        comments: vec![
            " ok".into(),
            "two\nlines".into(),
            "nul\0 esc\x1b cr\r del\x7f tab\t.".into(),
            "\n5 5 5".into(),
        ],
        comment: Some("own\x07".into()),
        ..WriteOptions::default()
    };
    let out = write(&coo(1, 2, &[(0, 1, 1.0)]), &o);
    assert_eq!(
        out,
        "%%MatrixMarket matrix coordinate real general\n% ok\n%two\n%lines\n%nul\u{FFFD} esc\u{FFFD} cr\u{FFFD} del\u{FFFD} tab\t.\n%\n%5 5 5\n% own\u{FFFD}\n1 2 1\n1 2 1.0\n"
    );
    let back = read_bytes::<f64, i32>(out.as_bytes(), "c", &ReadOptions::default()).unwrap();
    assert_eq!(back.coo.nnz(), 1);
    assert_eq!(back.comments.len(), 7);
}

/// `io::save` takes the writer's options through `SaveOptions`; `io::load`
/// gives the comments back (none for `.npz`).
#[test]
fn io_save_and_load_carry_symmetry_and_comments() {
    use sparsetool_formats::io::{load, save, Input, LoadOptions, SaveOptions};
    use sparsetool_formats::AnyMatrix;
    let dir = tempfile::tempdir().unwrap();
    let a = coo(2, 2, &[(0, 0, 1.0), (1, 0, 2.0), (0, 1, 2.0)]);
    let opts = SaveOptions {
        comments: vec![" kept".into()],
        ..SaveOptions::default()
    };
    for name in ["a.mtx", "a.mtx.gz"] {
        let p = dir.path().join(name);
        save(&p, (&a).into(), &opts).unwrap();
        let m = read_path::<f64, i32>(&p, &ReadOptions::default()).unwrap();
        assert_eq!(m.header.symmetry, MmSymmetry::Symmetric, "{name}");
        assert_eq!(m.header.entries, 2);
        let l = load::<f64, i32>(&Input::open(&p).unwrap(), &LoadOptions::default()).unwrap();
        assert_eq!(l.comments[0], " kept");
        assert!(l.comments[1].starts_with(" written by sparsetool"));
        let AnyMatrix::Coo(b) = l.matrix else {
            panic!("not COO")
        };
        assert_eq!(sorted(&b), sorted(&a));
    }
    let p = dir.path().join("g.mtx");
    let general = SaveOptions {
        symmetry: WriteSymmetry::General,
        ..opts.clone()
    };
    save(&p, (&a).into(), &general).unwrap();
    let m = read_path::<f64, i32>(&p, &ReadOptions::default()).unwrap();
    assert_eq!(
        (m.header.symmetry, m.header.entries),
        (MmSymmetry::General, 3)
    );
    let p = dir.path().join("a.npz");
    save(&p, (&a).into(), &opts).unwrap();
    let l = load::<f64, i32>(&Input::open(&p).unwrap(), &LoadOptions::default()).unwrap();
    assert!(l.comments.is_empty());
}

/// The same text gives the same `.mtx.gz` bytes whatever way the writer
/// cuts it: a CSR (blocks of rows) and the COO of its entries (blocks of
/// entries) are cut differently past the first block.
#[test]
fn gzip_output_does_not_depend_on_the_writers_blocks() {
    use sparsetool_formats::io::{write_to_with, OutputKind, SaveOptions};
    use sparsetool_formats::{Csr, MatrixRef};
    let n = 40_000usize;
    let mut ptr = vec![0i32];
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..n {
        for k in 0..3 {
            rows.push(r as i32);
            cols.push(((r * 7 + k * 1000) % n) as i32);
            vals.push((r * 3 + k) as f64 * 0.37);
        }
        let row = rows.len() - 3..rows.len();
        let mut idx: Vec<usize> = row.clone().collect();
        idx.sort_by_key(|&i| cols[i]);
        let (c, v): (Vec<i32>, Vec<f64>) = idx.iter().map(|&i| (cols[i], vals[i])).unzip();
        cols.splice(row.clone(), c);
        vals.splice(row, v);
        ptr.push(rows.len() as i32);
    }
    let csr = Csr::<f64, i32>::try_from_parts(n, n, ptr, cols.clone(), vals.clone()).unwrap();
    let coo = Coo::<f64, i32>::try_from_parts(n, n, rows, cols, vals).unwrap();
    let opts = SaveOptions {
        symmetry: WriteSymmetry::General,
        storage: Some(sparsetool_formats::FormatKind::Csr),
        ..SaveOptions::default()
    };
    let gz = |m: MatrixRef<'_, f64, i32>| {
        let mut buf = std::io::Cursor::new(Vec::new());
        write_to_with(
            &mut buf,
            std::path::Path::new("a"),
            OutputKind::MtxGz,
            m,
            &opts,
        )
        .unwrap();
        buf.into_inner()
    };
    let (a, b) = (gz(MatrixRef::Csr(&csr)), gz(MatrixRef::Coo(&coo)));
    assert!(a.len() > 100_000, "{}", a.len());
    assert!(a == b, "the same text compressed differently");
}
