//! Round trips, SpMV agreement, serial == parallel, and thread-count
//! independence, on random matrices (proptest) and on larger ones that
//! exercise the multi-block paths.

use std::collections::BTreeMap;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use sparsetool_convert::{
    convert, from_csr, par, serial, AnyMatrix, ConvertParams, HybWidth, ToCsr,
};
use sparsetool_fixtures::support::in_pool;
use sparsetool_formats::{Coo, Csr, FormatKind};

use crate::common::{random_coo, Revalidate};

/// The (row, col) → summed value map of a COO matrix.
fn reference(coo: &Coo<f64, i32>) -> BTreeMap<(i32, i32), f64> {
    let mut m = BTreeMap::new();
    for k in 0..coo.nnz() {
        *m.entry((coo.rows()[k], coo.cols()[k])).or_insert(0.0) += coo.values()[k];
    }
    m
}

/// Parameter sets for every target format, valid for `a`.
fn param_sets(a: &Csr<f64, i32>) -> Vec<(FormatKind, ConvertParams)> {
    let d = ConvertParams::default;
    let longest = a.max_row_len();
    let mut v = vec![
        (FormatKind::Coo, d()),
        (FormatKind::Csr, d()),
        (FormatKind::Ell, d()),
        (FormatKind::Hyb, d()),
        (FormatKind::Jds, d()),
        (FormatKind::Csc, d()),
    ];
    if longest < a.ncols() {
        v.push((
            FormatKind::Ell,
            ConvertParams {
                ell_width: Some(longest + 1),
                ..d()
            },
        ));
    }
    for k in [1, 2, 5] {
        if k <= a.ncols() {
            v.push((
                FormatKind::Hyb,
                ConvertParams {
                    hyb_width: HybWidth::Fixed(k),
                    ..d()
                },
            ));
        }
    }
    for (slice, sigma) in [
        (1, Some(1)),
        (2, Some(4)),
        (3, Some(1)),
        (3, Some(9)),
        (4, Some(1 << 20)),
        (3, Some(3 << 20)),
        (32, None),
    ] {
        v.push((
            FormatKind::Sell,
            ConvertParams {
                slice,
                sigma,
                ..d()
            },
        ));
    }
    v
}

fn check_any(m: &AnyMatrix<f64, i32>) {
    match m {
        AnyMatrix::Coo(x) => x.revalidate(),
        AnyMatrix::Csr(x) => x.revalidate(),
        AnyMatrix::Ell(x) => x.revalidate(),
        AnyMatrix::Hyb(x) => x.revalidate(),
        AnyMatrix::Jds(x) => x.revalidate(),
        AnyMatrix::Sell(x) => x.revalidate(),
        AnyMatrix::Csc(x) => x.revalidate(),
    }
}

/// `Aᵀ` entry by entry, as a sorted (col, row) → value map of `A`.
fn transposed_entries(a: &Csr<f64, i32>) -> BTreeMap<(i32, i32), f64> {
    let mut m = BTreeMap::new();
    for i in 0..a.nrows() {
        let (c, v) = a.row(i);
        for (c, v) in c.iter().zip(v) {
            m.insert((*c, i as i32), *v);
        }
    }
    m
}

/// The transpose holds exactly the swapped entries (checked against a map,
/// independently of the kernel), transposing twice gives `A` back, and the
/// CSC of `A` is the transpose reinterpreted; `y = Aᵀ x` of every format
/// agrees with the transpose's CSR SpMV.
fn check_transpose(a: &Csr<f64, i32>) {
    let t = par::transpose(a);
    t.revalidate();
    assert_eq!(
        (t.nrows(), t.ncols(), t.nnz()),
        (a.ncols(), a.nrows(), a.nnz())
    );
    let mut got = BTreeMap::new();
    for i in 0..t.nrows() {
        let (c, v) = t.row(i);
        for (c, v) in c.iter().zip(v) {
            got.insert((i as i32, *c), *v);
        }
    }
    assert_eq!(got, transposed_entries(a));
    assert_eq!(par::transpose(&t), *a);
    let csc = par::csr_to_csc(a);
    assert_eq!(csc.transposed(), &t);
    assert_eq!((csc.nrows(), csc.ncols()), (a.nrows(), a.ncols()));
    assert_eq!(par::csc_to_csr(&csc), *a);
    let x: Vec<f64> = (0..a.nrows()).map(|i| 1.0 / (i as f64 + 2.3)).collect();
    let mut y_ref = vec![0.0; a.ncols()];
    t.spmv(&x, &mut y_ref);
    for (kind, params) in param_sets(a) {
        // (ELL of a large matrix with a dense row is refused: skipped)
        let Ok(m) = from_csr(a, kind, &params) else {
            continue;
        };
        let mut y = vec![f64::NAN; a.ncols()];
        m.spmv_transpose(&x, &mut y);
        for (u, v) in y.iter().zip(&y_ref) {
            assert!(
                (u - v).abs() <= 1e-12 * (1.0 + v.abs()),
                "{kind} {params:?}: {u} vs {v}"
            );
        }
    }
}

/// Every serial conversion equals the parallel one.
fn serial_eq_par(a: &Csr<f64, i32>, coo: &Coo<f64, i32>) {
    assert_eq!(serial::coo_to_csr(coo), par::coo_to_csr(coo));
    assert_eq!(serial::csr_to_coo(a), par::csr_to_coo(a));
    assert_eq!(
        serial::csr_to_ell(a, None, true),
        par::csr_to_ell(a, None, true)
    );
    for w in [HybWidth::Auto, HybWidth::Fixed(1), HybWidth::Fixed(3)] {
        let (s, p) = (serial::csr_to_hyb(a, w), par::csr_to_hyb(a, w));
        assert_eq!(s, p);
        if let Ok(h) = p {
            assert_eq!(serial::hyb_to_csr(&h), par::hyb_to_csr(&h));
        }
    }
    let j = par::csr_to_jds(a);
    assert_eq!(serial::csr_to_jds(a), j);
    assert_eq!(serial::jds_to_csr(&j), par::jds_to_csr(&j));
    for (c, s) in [(1, 1), (2, 4), (32, 1024), (3, 3 << 20)] {
        let sp = par::csr_to_sell(a, c, s).unwrap();
        assert_eq!(serial::csr_to_sell(a, c, s).unwrap(), sp);
        assert_eq!(serial::sell_to_csr(&sp), par::sell_to_csr(&sp));
    }
    let e = par::csr_to_ell(a, None, true).unwrap();
    assert_eq!(serial::ell_to_csr(&e), par::ell_to_csr(&e));
    let c = par::csr_to_csc(a);
    assert_eq!(serial::csr_to_csc(a), c);
    assert_eq!(serial::csc_to_csr(&c), par::csc_to_csr(&c));
    assert_eq!(serial::transpose(a), par::transpose(a));
}

/// The full check on one COO matrix.
fn check_matrix(coo: &Coo<f64, i32>) {
    let a = par::coo_to_csr(coo);
    a.revalidate();
    // CSR holds exactly the summed entries.
    let want = reference(coo);
    let mut got = BTreeMap::new();
    for i in 0..a.nrows() {
        let (c, v) = a.row(i);
        for (c, v) in c.iter().zip(v) {
            got.insert((i as i32, *c), *v);
        }
    }
    assert_eq!(got, want);
    // x with non-integer values, so the summation order matters.
    let x: Vec<f64> = (0..a.ncols()).map(|j| 1.0 / (j as f64 + 1.7)).collect();
    let mut y_ref = vec![0.0; a.nrows()];
    a.spmv(&x, &mut y_ref);
    let any = AnyMatrix::Coo(coo.clone());
    for (kind, params) in param_sets(&a) {
        let m = convert(&any, kind, &params).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(m.kind(), kind);
        assert_eq!(
            (m.nrows(), m.ncols(), m.nnz()),
            (a.nrows(), a.ncols(), a.nnz())
        );
        check_any(&m);
        assert_eq!(m.to_csr(), a, "{kind} {params:?} round trip");
        let mut y = vec![f64::NAN; a.nrows()];
        m.spmv(&x, &mut y);
        if matches!(kind, FormatKind::Coo | FormatKind::Csc) {
            // Scattered by entry or column: another summation order.
            for (u, v) in y.iter().zip(&y_ref) {
                assert!((u - v).abs() <= 1e-12 * (1.0 + v.abs()));
            }
        } else {
            // Same summation order as CSR: bitwise equal.
            assert_eq!(y, y_ref, "{kind} {params:?} spmv");
        }
        // Any -> any: converting the result again gives the same matrix.
        let again = convert(&m, kind, &params).unwrap();
        assert_eq!(again, m);
    }
    check_transpose(&a);
    serial_eq_par(&a, coo);
}

/// Strategy: shapes from 0x0 up, entries (with duplicates) inside the
/// shape, sometimes one dense row.
fn coo_strategy() -> impl Strategy<Value = Coo<f64, i32>> {
    (0usize..24, 0usize..24, any::<bool>()).prop_flat_map(|(nr, nc, dense)| {
        let entry = if nr > 0 && nc > 0 {
            (0..nr as i32, 0..nc as i32, -4i32..5).boxed()
        } else {
            Just((0, 0, 0)).boxed()
        };
        let n = if nr > 0 && nc > 0 {
            0..(nr * nc * 2).min(120) + 1
        } else {
            0..1
        };
        proptest::collection::vec(entry, n).prop_map(move |es| {
            let (mut r, mut c, mut v): (Vec<i32>, Vec<i32>, Vec<f64>) =
                (Vec::new(), Vec::new(), Vec::new());
            for (i, j, x) in es {
                r.push(i);
                c.push(j);
                v.push(f64::from(x) * 0.5);
            }
            if dense && nr > 0 {
                for j in 0..nc as i32 {
                    r.push((nr / 2) as i32);
                    c.push(j);
                    v.push(0.25);
                }
            }
            Coo::try_from_parts(nr, nc, r, c, v).unwrap()
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/props.proptest-regressions",
        ))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn round_trips_and_spmv(coo in coo_strategy()) {
        check_matrix(&coo);
    }
}

#[test]
fn empty_shapes() {
    for (r, c) in [(0, 0), (5, 0), (0, 5), (3, 3)] {
        check_matrix(&Coo::try_from_parts(r, c, vec![], vec![], vec![]).unwrap());
    }
}

/// Larger matrices: several blocks per conversion, parallel checks, and
/// the same bytes with 1 and 4 threads.
#[test]
fn large_matrices_any_thread_count() {
    for (nrows, ncols, per_row, dense, seed) in [
        (20_000, 5_000, 12, true, 1),
        (3_000, 70_000, 40, false, 2),
        (50_000, 50, 3, true, 3),
    ] {
        let coo = random_coo(nrows, ncols, per_row, dense, seed);
        let run = |threads: usize| {
            in_pool(threads, || {
                let a = par::coo_to_csr(&coo);
                let e = par::csr_to_ell(&a, None, true).unwrap();
                let h = par::csr_to_hyb(&a, HybWidth::Auto).unwrap();
                let h3 = par::csr_to_hyb(&a, HybWidth::Fixed(3)).unwrap();
                let j = par::csr_to_jds(&a);
                let s = par::csr_to_sell(&a, 32, 1024).unwrap();
                let s1 = par::csr_to_sell(&a, 8, 1).unwrap();
                let sg = par::csr_to_sell(&a, 4, 1 << 30).unwrap();
                let cs = par::csr_to_csc(&a);
                let back = [
                    par::csc_to_csr(&cs),
                    par::ell_to_csr(&e),
                    par::hyb_to_csr(&h),
                    par::hyb_to_csr(&h3),
                    par::jds_to_csr(&j),
                    par::sell_to_csr(&s),
                    par::sell_to_csr(&s1),
                    par::sell_to_csr(&sg),
                ];
                (a, e, h, h3, j, s, s1, sg, cs, back)
            })
        };
        let one = run(1);
        let four = run(4);
        assert_eq!(one, four);
        let (a, e, h, h3, j, s, s1, sg, cs, back) = four;
        for b in &back {
            assert_eq!(b, &a);
        }
        a.revalidate();
        e.revalidate();
        h.revalidate();
        h3.revalidate();
        j.revalidate();
        s.revalidate();
        s1.revalidate();
        sg.revalidate();
        cs.revalidate();
        check_transpose(&a);
        serial_eq_par(&a, &coo);
        assert_eq!(reference(&coo).len(), a.nnz());
        let x: Vec<f64> = (0..ncols).map(|j| 1.0 / (j as f64 + 1.7)).collect();
        let mut y_ref = vec![0.0; nrows];
        a.spmv(&x, &mut y_ref);
        let mut y = vec![0.0; nrows];
        for m in [
            AnyMatrix::from(e),
            h.into(),
            h3.into(),
            j.into(),
            s.into(),
            s1.into(),
            sg.into(),
            cs.into(),
        ] {
            m.spmv(&x, &mut y);
            if m.kind() == FormatKind::Csc {
                for (u, v) in y.iter().zip(&y_ref) {
                    assert!((u - v).abs() <= 1e-12 * (1.0 + v.abs()), "csc spmv");
                }
            } else {
                assert_eq!(y, y_ref, "{}", m.kind());
            }
        }
    }
}
