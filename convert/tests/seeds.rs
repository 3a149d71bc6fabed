//! The worked examples in fixtures/src/seed.rs: converting each example with
//! the parameters it states gives exactly the arrays fixtures lists for
//! every format; snapshots of the results; example D's HYB advantage.

use sparsetool_convert::{
    convert, coo_to_csr, csr_to_ell, csr_to_hyb, AnyMatrix, ConvertParams, HybWidth,
};
use sparsetool_fixtures::seed::{self, seed_d, SeedExample, SEED_D_LONG_ROW};
use sparsetool_formats::{Coo, FormatKind};

use crate::common::Revalidate;

/// The parameters the worked examples state: ELL at the longest row, HYB
/// with ELL width 2, SELL with C = 2 and sigma = 4.
fn stated_params() -> ConvertParams {
    ConvertParams {
        ell_width: None,
        hyb_width: HybWidth::Fixed(2),
        slice: 2,
        sigma: Some(4),
        allow_fill: false,
    }
}

/// `e` converted from its CSR to `k` with the stated parameters.
fn converted(e: &SeedExample, k: FormatKind) -> AnyMatrix<f64, i32> {
    let csr = AnyMatrix::Csr(e.csr::<f64, i32>().unwrap());
    convert(&csr, k, &stated_params()).unwrap_or_else(|err| panic!("{} -> {k}: {err}", e.name))
}

/// `e` in format `k` built from the arrays fixtures lists (through the
/// checked constructors, so the arrays are valid).
fn fixture_matrix(e: &SeedExample, k: FormatKind) -> AnyMatrix<f64, i32> {
    match k {
        FormatKind::Coo => AnyMatrix::Coo(e.coo().unwrap()),
        FormatKind::Csr => AnyMatrix::Csr(e.csr().unwrap()),
        FormatKind::Ell => AnyMatrix::Ell(e.ell_matrix().unwrap()),
        FormatKind::Hyb => AnyMatrix::Hyb(e.hyb_matrix().unwrap()),
        FormatKind::Jds => AnyMatrix::Jds(e.jds_matrix().unwrap()),
        FormatKind::Sell => AnyMatrix::Sell(e.sell_matrix().unwrap()),
        FormatKind::Csc => AnyMatrix::Csc(e.csc_matrix().unwrap()),
    }
}

#[test]
fn every_example_converts_to_the_fixture_arrays_of_every_format() {
    for e in seed::ALL {
        for k in FormatKind::ALL {
            // Equality compares every array (padding slots included) and
            // every parameter (width, C, sigma) exactly.
            assert_eq!(converted(e, k), fixture_matrix(e, k), "{} in {k}", e.name);
        }
    }
}

/// The dense matrix as COO with its entries in reverse order, so that
/// building CSR has to sort them.
fn reversed_coo(e: &SeedExample) -> Coo<f64, i32> {
    let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for (i, row) in e.dense.iter().enumerate().rev() {
        for (j, &x) in row.iter().enumerate().rev() {
            if x != 0.0 {
                r.push(i as i32);
                c.push(j as i32);
                v.push(x);
            }
        }
    }
    Coo::try_from_parts(e.nrows, e.ncols, r, c, v).unwrap()
}

#[test]
fn unsorted_coo_of_every_example_gives_the_fixture_csr() {
    for e in seed::ALL {
        let csr = coo_to_csr(&reversed_coo(e));
        csr.revalidate();
        assert_eq!(csr, e.csr().unwrap(), "{}", e.name);
    }
}

#[test]
fn seed_snapshots() {
    let cases = [
        ("seed_a_ell", &seed::A, FormatKind::Ell),
        ("seed_b_ell", &seed::B, FormatKind::Ell),
        ("seed_b_hyb2", &seed::B, FormatKind::Hyb),
        ("seed_b_jds", &seed::B, FormatKind::Jds),
        ("seed_c_ell", &seed::C, FormatKind::Ell),
        ("seed_c_hyb2", &seed::C, FormatKind::Hyb),
        ("seed_c_jds", &seed::C, FormatKind::Jds),
        ("seed_c_sell_c2_s4", &seed::C, FormatKind::Sell),
    ];
    for (name, e, k) in cases {
        match converted(e, k) {
            AnyMatrix::Ell(m) => insta::assert_debug_snapshot!(name, m),
            AnyMatrix::Hyb(m) => insta::assert_debug_snapshot!(name, m),
            AnyMatrix::Jds(m) => insta::assert_debug_snapshot!(name, m),
            AnyMatrix::Sell(m) => insta::assert_debug_snapshot!(name, m),
            _ => panic!("{name}: no snapshot for {k}"),
        }
    }
}

#[test]
fn seed_d_hyb_beats_ell() {
    // 1000 x 1000, rows of 1 to 9 entries, one row of 200.
    let a = seed_d::<f64, i32>().unwrap();
    assert_eq!(a.row_lengths()[SEED_D_LONG_ROW], 200);
    let e = csr_to_ell(&a, None, false).unwrap();
    assert_eq!(e.slots(), 200_000);
    let h = csr_to_hyb(&a, HybWidth::Fixed(9)).unwrap();
    assert_eq!(h.coo().nnz(), 191);
    assert_eq!(h.ell().slots(), 9000);
}
