//! `From` impls wrapping each format in [`AnyMatrix`].
//!
//! (`From<&Csr> for Ell` and friends cannot live here: both types belong to
//! `sparsetool-formats`, and conversions can fail on parameters anyway, so
//! they are the free functions of [`crate::par`] and [`crate::serial`].)

use sparsetool_formats::{Coo, Csr, Ell, Hyb, Jds, Sell};

use crate::AnyMatrix;

macro_rules! wrap {
    ($($t:ident),*) => {$(
        impl<T, I> From<$t<T, I>> for AnyMatrix<T, I> {
            fn from(m: $t<T, I>) -> Self {
                AnyMatrix::$t(m)
            }
        }
    )*};
}
wrap!(Coo, Csr, Ell, Hyb, Jds, Sell);
