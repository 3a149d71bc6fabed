//! The worked examples of `seed-examples.md`: exact arrays, and snapshots.

use sparsetool_convert::{
    coo_to_csr, csr_to_coo, csr_to_ell, csr_to_hyb, csr_to_jds, csr_to_sell, HybWidth,
};
use sparsetool_formats::{Coo, Csr};

use crate::common::Revalidate;

/// Builds a COO matrix from a dense row-major listing, entries emitted in
/// reverse order (so the conversion has to sort them).
fn coo_from_dense(nrows: usize, ncols: usize, dense: &[f64]) -> Coo<f64, i32> {
    let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for k in (0..nrows * ncols).rev() {
        if dense[k] != 0.0 {
            r.push((k / ncols) as i32);
            c.push((k % ncols) as i32);
            v.push(dense[k]);
        }
    }
    Coo::try_from_parts(nrows, ncols, r, c, v).unwrap()
}

fn seed_a() -> Csr<f64, i32> {
    coo_to_csr(&coo_from_dense(3, 3, &[1., 0., 2., 0., 3., 0., 4., 0., 5.]))
}
fn seed_b() -> Csr<f64, i32> {
    coo_to_csr(&coo_from_dense(
        4,
        4,
        &[
            1., 0., 7., 0., 5., 0., 3., 9., 0., 2., 8., 0., 0., 0., 0., 6.,
        ],
    ))
}
fn seed_c() -> Csr<f64, i32> {
    coo_to_csr(&coo_from_dense(
        4,
        5,
        &[
            1., 0., 2., 0., 3., 0., 4., 0., 5., 0., 6., 0., 0., 0., 0., 0., 7., 8., 0., 9.,
        ],
    ))
}

const P: i32 = -1;
const Z: f64 = 0.0;

#[test]
fn seed_a_csr_ell() {
    let a = seed_a();
    assert_eq!(a.row_ptr(), [0, 2, 3, 5]);
    assert_eq!(a.col_idx(), [0, 2, 1, 0, 2]);
    assert_eq!(a.values(), [1., 2., 3., 4., 5.]);
    let e = csr_to_ell(&a, None, false).unwrap();
    e.revalidate();
    assert_eq!(e.width(), 2);
    assert_eq!(e.values(), [1., 3., 4., 2., Z, 5.]);
    assert_eq!(e.col_idx(), [0, 1, 0, 2, P, 2]);
    insta::assert_debug_snapshot!("seed_a_ell", e);
}

#[test]
fn seed_b_all() {
    let b = seed_b();
    let coo = csr_to_coo(&b);
    assert_eq!(coo.rows(), [0, 0, 1, 1, 1, 2, 2, 3]);
    assert_eq!(coo.cols(), [0, 2, 0, 2, 3, 1, 2, 3]);
    assert_eq!(coo.values(), [1., 7., 5., 3., 9., 2., 8., 6.]);
    assert_eq!(b.row_ptr(), [0, 2, 5, 7, 8]);

    let e = csr_to_ell(&b, None, false).unwrap();
    e.revalidate();
    assert_eq!(e.row_nnz(), [2, 3, 2, 1]);
    assert_eq!(e.values(), [1., 5., 2., 6., 7., 3., 8., Z, Z, 9., Z, Z]);
    assert_eq!(e.col_idx(), [0, 0, 1, 3, 2, 2, 2, P, P, 3, P, P]);

    let h = csr_to_hyb(&b, HybWidth::Fixed(2)).unwrap();
    h.revalidate();
    assert_eq!(h.ell().values(), [1., 5., 2., 6., 7., 3., 8., Z]);
    assert_eq!(h.ell().col_idx(), [0, 0, 1, 3, 2, 2, 2, P]);
    assert_eq!(
        (h.coo().rows(), h.coo().cols(), h.coo().values()),
        (&[1][..], &[3][..], &[9.][..])
    );

    let j = csr_to_jds(&b);
    j.revalidate();
    assert_eq!(j.perm(), [1, 0, 2, 3]);
    assert_eq!(j.jd_ptr(), [0, 4, 7, 8]);
    assert_eq!(j.values(), [5., 1., 2., 6., 3., 7., 8., 9.]);
    assert_eq!(j.col_idx(), [0, 0, 1, 3, 2, 2, 2, 3]);

    insta::assert_debug_snapshot!("seed_b_ell", e);
    insta::assert_debug_snapshot!("seed_b_hyb2", h);
    insta::assert_debug_snapshot!("seed_b_jds", j);
}

#[test]
fn seed_c_all() {
    let c = seed_c();
    let e = csr_to_ell(&c, None, false).unwrap();
    e.revalidate();
    assert_eq!(e.row_nnz(), [3, 2, 1, 3]);
    assert_eq!(e.slots() - e.nnz(), 3);
    assert_eq!(e.values(), [1., 4., 6., 7., 2., 5., Z, 8., 3., Z, Z, 9.]);
    assert_eq!(e.col_idx(), [0, 1, 0, 1, 2, 3, P, 2, 4, P, P, 4]);

    let j = csr_to_jds(&c);
    j.revalidate();
    assert_eq!(j.perm(), [0, 3, 1, 2]);
    assert_eq!(j.jd_ptr(), [0, 4, 7, 9]);
    assert_eq!(j.values(), [1., 7., 4., 6., 2., 8., 5., 3., 9.]);
    assert_eq!(j.col_idx(), [0, 1, 1, 0, 2, 2, 3, 4, 4]);

    let h = csr_to_hyb(&c, HybWidth::Fixed(2)).unwrap();
    h.revalidate();
    assert_eq!(h.ell().values(), [1., 4., 6., 7., 2., 5., Z, 8.]);
    assert_eq!(h.ell().col_idx(), [0, 1, 0, 1, 2, 3, P, 2]);
    assert_eq!(h.coo().rows(), [0, 3]);
    assert_eq!(h.coo().cols(), [4, 4]);
    assert_eq!(h.coo().values(), [3., 9.]);

    let s = csr_to_sell(&c, 2, 4).unwrap();
    s.revalidate();
    assert_eq!(s.perm(), [0, 3, 1, 2]);
    assert_eq!(s.slice_ptr(), [0, 6, 10]);
    assert_eq!(s.slice_width(), [3, 2]);
    assert_eq!(s.values(), [1., 7., 2., 8., 3., 9., 4., 6., 5., Z]);
    assert_eq!(s.col_idx(), [0, 1, 2, 2, 4, 4, 1, 0, 3, P]);
    assert_eq!(s.slots() - s.nnz(), 1);

    insta::assert_debug_snapshot!("seed_c_ell", e);
    insta::assert_debug_snapshot!("seed_c_jds", j);
    insta::assert_debug_snapshot!("seed_c_hyb2", h);
    insta::assert_debug_snapshot!("seed_c_sell_c2_s4", s);
}

#[test]
fn seed_d_hyb_beats_ell() {
    // 1000 x 1000, rows of at most 9 entries, one row of 200.
    let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..1000usize {
        let len = if i == 500 { 200 } else { i % 10 };
        for k in 0..len {
            r.push(i as i32);
            c.push(((i + k * 5) % 1000) as i32);
            v.push(1.0);
        }
    }
    let a = coo_to_csr(&Coo::<f64, i32>::try_from_parts(1000, 1000, r, c, v).unwrap());
    let e = csr_to_ell(&a, None, false).unwrap();
    assert_eq!(e.slots(), 200_000);
    let h = csr_to_hyb(&a, HybWidth::Fixed(9)).unwrap();
    assert_eq!(h.coo().nnz(), 191);
    assert_eq!(h.ell().slots(), 9000);
}
