//! Helpers shared by the tests: re-validation of every output through the
//! checked constructors, and a deterministic random matrix generator.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sparsetool_formats::{Coo, Csc, Csr, Ell, Hyb, Index, Jds, Scalar, Sell};

/// Re-checks a matrix built with `from_parts_unchecked` through `try_from_parts`.
pub trait Revalidate {
    /// Panics if an invariant is broken.
    fn revalidate(&self);
}

/// `Revalidate` for the formats whose `into_parts` hands back exactly
/// what their `try_from_parts` takes (named here), checked under the
/// format's name; the rebuilt matrix must count the same entries.
macro_rules! revalidate_parts {
    ($($ty:ident($($part:ident),+): $name:literal;)*) => {$(
        impl<T: Scalar, I: Index> Revalidate for $ty<T, I> {
            fn revalidate(&self) {
                let ($($part),+) = self.clone().into_parts();
                let back = $ty::try_from_parts($($part),+).expect(concat!("valid ", $name));
                assert_eq!(back.nnz(), self.nnz());
            }
        }
    )*};
}

revalidate_parts! {
    Csr(a, b, c, d, e): "CSR";
    Csc(a, b, c, d, e): "CSC";
    Coo(a, b, c, d, e): "COO";
    Ell(a, b, c, d, e, f): "ELL";
    Jds(a, b, c, d, e, f): "JDS";
    Sell(a, b, c, d, e, f, g, h, i): "SELL";
}

impl<T: Scalar, I: Index> Revalidate for Hyb<T, I> {
    fn revalidate(&self) {
        self.ell().revalidate();
        self.coo().revalidate();
        let (e, c) = self.clone().into_parts();
        Hyb::try_from_parts(e, c).expect("valid HYB");
    }
}

/// A random COO matrix: `per_row` random entries per row on average
/// (unsorted, with duplicates), one dense row if `dense_row`, every tenth
/// row empty. Integer values so sums are exact.
pub fn random_coo(
    nrows: usize,
    ncols: usize,
    per_row: usize,
    dense_row: bool,
    seed: u64,
) -> Coo<f64, i32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
    if ncols > 0 {
        for _ in 0..nrows * per_row {
            let row = rng.random_range(0..nrows);
            if row % 10 == 3 {
                continue;
            }
            r.push(row as i32);
            c.push(rng.random_range(0..ncols) as i32);
            v.push(f64::from(rng.random_range(-8i32..8)));
        }
        if dense_row && nrows > 0 {
            for col in (0..ncols).rev() {
                r.push((nrows / 2) as i32);
                c.push(col as i32);
                v.push(1.0);
            }
        }
    }
    Coo::try_from_parts(nrows, ncols, r, c, v).expect("valid COO")
}
