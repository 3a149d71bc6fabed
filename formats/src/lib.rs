//! # sparsetool-formats
//!
//! Sparse matrix storage formats with validated invariants, and the readers
//! and writers that move them in and out of files.
//!
//! ## Brief overview
//!
//! | Format | best for | invariants (checked by `try_from_parts`) | padding |
//! |---|---|---|---|
//! | [`Coo`] | assembly, interchange | indices in range | none |
//! | [`Csr`] | general SpMV, the hub of every conversion | monotone `row_ptr`, sorted unique columns | none |
//! | [`Ell`] | regular rows on GPUs (coalesced, one thread per row) | `row_nnz <= width`, sorted columns, trailing padding | every row padded to `width` |
//! | [`Hyb`] | mostly regular rows with a few long ones | ELL part + COO tail sorted by (row, col), tail only on full rows | ELL part only |
//! | [`Jds`] | irregular rows without padding | stable descending-length `perm`, shrinking jagged diagonals | none |
//! | [`Sell`] | irregular rows on GPUs/SIMD (SELL-C-σ) | `sigma % C == 0` (or 1), windowed stable sort, slice widths = longest row | each slice padded to its longest row |
//!
//! Value types: `f32`, `f64`, `Complex<f32>`, `Complex<f64>` ([`Scalar`]).
//! Index types: `i32`, `i64` ([`Index`]); `-1` is the padding sentinel.
#![deny(missing_docs)]

pub mod binary;
mod coo;
// Matrix Market (owned by the mm work), .npz, and the GPU formats.
mod csr;
mod ell;
mod error;
mod hyb;
mod jds;
mod kind;
pub mod mm;
pub mod npz;
pub mod pattern;
mod scalar;
mod sell;

pub use coo::Coo;
pub use csr::Csr;
pub use ell::Ell;
pub use error::FormatError;
pub use hyb::Hyb;
pub use jds::Jds;
pub use kind::{FormatKind, UnknownFormat};
pub use scalar::{fits_index, Complex, Complex32, Complex64, Index, Scalar};
pub use sell::{check_sell_params, Sell};
