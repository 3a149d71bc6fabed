//! # sparsetool-convert
//!
//! Conversions between the sparse formats of [`sparsetool_formats`]: COO,
//! CSR, CSC, ELL, HYB, JDS and SELL-C-σ.
//!
//! ## Brief overview
//!
//! - Free functions named `<from>_to_<to>`: [`coo_to_csr`], [`csr_to_coo`],
//!   [`csr_to_ell`], [`csr_to_hyb`], [`csr_to_jds`], [`csr_to_sell`],
//!   [`csr_to_csc`] and back ([`ell_to_csr`], [`hyb_to_csr`], [`jds_to_csr`],
//!   [`sell_to_csr`], [`csc_to_csr`]). CSR ↔ CSC is one kernel,
//!   [`transpose`] (a stable counting sort by column): CSC of `A` holds the
//!   arrays of CSR of `Aᵀ`. CSR is the hub: [`convert`] goes from any [`AnyMatrix`] to any format
//!   through it, with [`ConvertParams`].
//! - Two backends with the same kernels: [`serial`] (calling thread) and
//!   [`par`] (rayon; re-exported at the crate root). Both produce the same
//!   bytes for any thread count: work is split into blocks of rows at row
//!   offsets (computed with a serial prefix sum), every output array is
//!   allocated once, and each row is written by one per-row kernel whatever
//!   block it falls in. Sorting by row length is stable, so the
//!   permutations of JDS and SELL are unique.
//! - COO duplicates are summed when converting to CSR (SciPy's and
//!   Ginkgo's convention), in input order.
//! - Parameters are checked, and refusals say what to do instead: an ELL
//!   width below the longest row suggests HYB; ELL padding over
//!   [`MAX_ELL_FILL`]× the entries (beyond [`ELL_FILL_MIN_SLOTS`] slots)
//!   suggests HYB or SELL unless `allow_fill`.
//!
//! ```
//! use sparsetool_convert::{coo_to_csr, csr_to_ell, ell_to_csr};
//! use sparsetool_formats::Coo;
//! // PMPP's 4x4 example, entries in any order.
//! let coo = Coo::<f64, i32>::try_from_parts(
//!     4, 4,
//!     vec![3, 0, 1, 2, 1, 0, 1, 2],
//!     vec![3, 0, 2, 1, 0, 2, 3, 2],
//!     vec![6., 1., 3., 2., 5., 7., 9., 8.],
//! ).unwrap();
//! let csr = coo_to_csr(&coo);
//! assert_eq!(csr.row_ptr(), [0, 2, 5, 7, 8]);
//! let ell = csr_to_ell(&csr, None, false).unwrap();
//! assert_eq!(ell.width(), 3);
//! assert_eq!(ell.col_idx(), [0, 0, 1, 3, 2, 2, 2, -1, -1, 3, -1, -1]);
//! assert_eq!(ell_to_csr(&ell), csr);
//! ```
#![deny(missing_docs)]

mod any;
mod coo_csr;
mod error;
mod imp;
#[macro_use]
mod macros;
#[cfg(unix)]
pub mod ooc;
pub mod par;
mod params;
mod rows;
pub mod serial;
mod util;

pub use any::{convert, from_csr, preflight, to_layout, transposed_csr, ToCsr};
pub use error::ConvertError;
pub use par::{
    coo_to_csr, csc_to_csr, csr_to_coo, csr_to_csc, csr_to_ell, csr_to_hyb, csr_to_jds,
    csr_to_sell, ell_to_csr, hyb_to_csr, jds_to_csr, sell_to_csr, transpose,
};
pub use params::{hyb_auto_width, ConvertParams, HybWidth, ELL_FILL_MIN_SLOTS, MAX_ELL_FILL};
pub use sparsetool_formats::AnyMatrix;
