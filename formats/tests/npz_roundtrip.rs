//! Property test: random matrices survive `.npz` write -> read exactly.

use std::io::Cursor;

use proptest::prelude::*;
use sparsetool_formats::npz::{read_npz_bytes, write_coo, write_csr};
use sparsetool_formats::AnyMatrix;
use sparsetool_formats::{Complex64, Coo, Csr, Index, Scalar};

/// Random COO: shape up to 40 x 40 (zero allowed), up to 200 entries with
/// duplicates, values of any sign up to 1e30 (finite in f32, so summed
/// duplicates never make inf - inf).
fn coo<T: Scalar, I: Index>() -> impl Strategy<Value = Coo<T, I>> {
    (0usize..40, 0usize..40).prop_flat_map(|(nr, nc)| {
        let n = if nr == 0 || nc == 0 { 0 } else { 200 };
        prop::collection::vec(
            (0..nr.max(1), 0..nc.max(1), -1e30f64..1e30, -1e3f64..1e3),
            0..=n,
        )
        .prop_map(move |e| {
            let rows = e.iter().map(|t| I::from_usize(t.0).unwrap()).collect();
            let cols = e.iter().map(|t| I::from_usize(t.1).unwrap()).collect();
            let vals = e.iter().map(|t| T::from_parts(t.2, t.3)).collect();
            Coo::try_from_parts(nr, nc, rows, cols, vals).unwrap()
        })
    })
}

/// Canonical CSR from a COO (sorted, duplicates summed) built by hand.
fn csr_of<T: Scalar, I: Index>(c: &Coo<T, I>) -> Csr<T, I> {
    let mut e: Vec<(usize, usize, T)> = (0..c.nnz())
        .map(|k| {
            (
                c.rows()[k].to_usize(),
                c.cols()[k].to_usize(),
                c.values()[k],
            )
        })
        .collect();
    e.sort_by_key(|t| (t.0, t.1));
    let mut merged: Vec<(usize, usize, T)> = Vec::new();
    for t in e {
        match merged.last_mut() {
            Some(l) if l.0 == t.0 && l.1 == t.1 => l.2 += t.2,
            _ => merged.push(t),
        }
    }
    let mut ptr = vec![I::default(); c.nrows() + 1];
    let mut count = vec![0usize; c.nrows() + 1];
    for t in &merged {
        count[t.0 + 1] += 1;
    }
    for i in 0..c.nrows() {
        count[i + 1] += count[i];
        ptr[i + 1] = I::from_usize(count[i + 1]).unwrap();
    }
    Csr::try_from_parts(
        c.nrows(),
        c.ncols(),
        ptr,
        merged.iter().map(|t| I::from_usize(t.1).unwrap()).collect(),
        merged.iter().map(|t| t.2).collect(),
    )
    .unwrap()
}

fn check<T, I>(c: Coo<T, I>) -> Result<(), TestCaseError>
where
    T: Scalar + sparsetool_formats::npz::NpyElement,
    I: Index + sparsetool_formats::npz::NpyElement,
{
    let mut buf = Cursor::new(Vec::new());
    write_coo(&mut buf, &c).unwrap();
    match read_npz_bytes::<T, I>(buf.into_inner(), "c.npz").unwrap() {
        AnyMatrix::Coo(back) => prop_assert_eq!(back, c.clone()),
        other => prop_assert!(false, "coo came back as {other:?}"),
    }
    let csr = csr_of(&c);
    let mut buf = Cursor::new(Vec::new());
    write_csr(&mut buf, &csr).unwrap();
    match read_npz_bytes::<T, I>(buf.into_inner(), "r.npz").unwrap() {
        AnyMatrix::Csr(back) => prop_assert_eq!(back, csr),
        other => prop_assert!(false, "csr came back as {other:?}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn f64_i32(c in coo::<f64, i32>()) { check(c)?; }
    #[test]
    fn f32_i64(c in coo::<f32, i64>()) { check(c)?; }
    #[test]
    fn c128_i32(c in coo::<Complex64, i32>()) { check(c)?; }
}
