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
//! | [`Csc`] | column access, `y = Aᵀ x` (its arrays are the CSR of `Aᵀ`) | monotone `col_ptr`, sorted unique rows | none |
//! | [`Ell`] | regular rows on GPUs (coalesced, one thread per row) | `row_nnz <= width`, sorted columns, trailing padding | every row padded to `width` |
//! | [`Hyb`] | mostly regular rows with a few long ones | ELL part + COO tail sorted by (row, col), tail only on full rows | ELL part only |
//! | [`Jds`] | irregular rows without padding | stable descending-length `perm`, shrinking jagged diagonals | none |
//! | [`Sell`] | irregular rows on GPUs/SIMD (SELL-C-σ) | `sigma % C == 0` (or 1), windowed stable sort, slice widths = longest row | each slice padded to its longest row |
//!
//! Value types: `f32`, `f64`, `Complex<f32>`, `Complex<f64>` ([`Scalar`]).
//! Index types: `i32`, `i64` ([`Index`]); `-1` is the padding sentinel.
//!
//! Files: Matrix Market ([`mm`]: parallel reader, writer), NumPy `.npz`
//! ([`npz`], as `scipy.sparse.save_npz` writes it) and the zero-copy binary
//! layout `.spb` ([`binary`]). Conversions between formats live in the
//! `sparsetool-convert` crate.
//!
//! ## Example: read, multiply, store as `.spb`, load back validated
//!
//! ```
//! use sparsetool_formats::binary::{write_spb, SpbFile, SpbOptions};
//! use sparsetool_formats::{AnyMatrix, MatrixRef};
//! use sparsetool_formats::mm::{read_bytes, ReadOptions};
//!
//! let text = "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 2.0\n2 2 3.0\n3 1 1.0\n3 3 4.0\n";
//! let m = read_bytes::<f64, i32>(text.as_bytes(), "a.mtx", &ReadOptions::default())?;
//! let mut y = vec![0.0; 3];
//! m.coo.spmv(&[1.0, 1.0, 1.0], &mut y);
//! assert_eq!(y, [2.0, 3.0, 5.0]);
//!
//! let mut bytes = Vec::new();
//! write_spb(&mut bytes, MatrixRef::Coo(&m.coo))?;
//! let file = SpbFile::from_bytes(&bytes, "a.spb", &SpbOptions::default())?;
//! assert_eq!(file.to_matrix::<f64, i32>()?, AnyMatrix::Coo(m.coo));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod alloc;
mod any;
pub mod binary;
pub mod buffer;
mod coo;
mod csc;
mod csr;
mod ell;
mod error;
mod hyb;
pub mod io;
mod jds;
mod kind;
mod layout;
pub mod mm;
pub mod npz;
pub mod pattern;
mod precision;
pub mod progress;
mod scalar;
mod sell;
pub mod values;

pub use any::{AnyMatrix, MatrixRef};
pub use coo::Coo;
pub use csc::Csc;
pub use csr::Csr;
pub use ell::Ell;
pub use error::FormatError;
pub use hyb::Hyb;
pub use jds::Jds;
pub use kind::{FormatKind, UnknownFormat};
pub use layout::{Layout, UnknownLayout};
pub use precision::{Precision, UnknownPrecision};
pub use scalar::{fits_index, Complex, Complex32, Complex64, Index, Scalar};
pub use sell::{check_sell_params, Sell};
