//! Per-format accounting from the structure alone: storage bytes, padding
//! and the bytes one SpMV moves, for COO, CSR, ELL, HYB, JDS and SELL.
//!
//! # Byte model
//! `bytes` is the storage of the arrays exactly as `sparsetool-formats`
//! holds them, at `v` bytes per value and `i` bytes per index:
//!
//! | format | arrays | bytes |
//! |---|---|---|
//! | COO | row, col, val | `nnz (2i + v)` |
//! | CSR | row_ptr, col, val | `(nrows + 1) i + nnz (i + v)` |
//! | ELL (width `w`) | row_nnz, col, val | `nrows i + nrows w (i + v)` |
//! | HYB (width `k`) | ELL part + COO tail of `t` entries | `nrows i + nrows k (i + v) + t (2i + v)` |
//! | JDS | perm, jd_ptr, col, val | `nrows i + (max_len + 1) i + nnz (i + v)` |
//! | SELL-C-σ | perm, slice_ptr, slice_width, col, val | `nrows i + (2 nslices + 1) i + slots (i + v)` |
//! | CSC | col_ptr, row, val | `(ncols + 1) i + nnz (i + v)` |
//!
//! CSC has a byte count ([`stored_bytes`], for the CPU bench) but no report
//! in [`Formats`] and is never a candidate of the recommendation: its
//! `y = A x` scatters into `y` (atomics or private copies of `y`, which this
//! model does not count), while its bytes differ from CSR's only in the
//! pointer array (`ncols + 1` instead of `nrows + 1` indices), so CSR's
//! gather is the better `y = A x` on every matrix this model can tell
//! apart. CSC's use is `y = Aᵀ x`,
//! which is the CSR kernel on its arrays (`sparsetool spmv --transpose`).
//!
//! `spmv_bytes` is the traffic of one `y = A x` under the simplest model:
//! every matrix array (row structure included) is read once, `x` is read
//! once (`ncols v`, perfect cache reuse) and `y` is written once
//! (`nrows v`): `spmv_bytes = bytes + (ncols + nrows) v`. Padding slots
//! count as read (GPU kernels load them). JDS and SELL with σ > 1 write
//! `y` through the permutation: the same bytes, scattered
//! ([`JdsReport::scattered_y_bytes`]).
//!
//! `padding_ratio` is padding slots / stored slots (ELL and SELL slots;
//! HYB: ELL-part padding over ELL slots plus COO entries); 0 for COO, CSR
//! and JDS.

use rayon::prelude::*;
use serde::Serialize;
use sparsetool_formats::FormatKind;

use crate::rows::LengthCounts;
use crate::AnalyzeError;

/// Value and index sizes in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Sizes {
    /// Bytes per value: 4 (f32), 8 (f64 or complex f32), 16 (complex f64).
    pub value: u64,
    /// Bytes per index: 4 (i32) or 8 (i64).
    pub index: u64,
}

impl Default for Sizes {
    fn default() -> Self {
        Self { value: 8, index: 4 }
    }
}

impl Sizes {
    /// Checked sizes.
    ///
    /// # Errors
    /// [`AnalyzeError::BadSize`] unless `value` is 4, 8 or 16 and `index`
    /// is 4 or 8.
    ///
    /// ```
    /// use sparsetool_analyze::Sizes;
    /// assert!(Sizes::new(8, 4).is_ok());
    /// assert!(Sizes::new(2, 4).is_err());
    /// ```
    pub fn new(value: usize, index: usize) -> Result<Self, AnalyzeError> {
        if !matches!(value, 4 | 8 | 16) {
            return Err(AnalyzeError::BadSize {
                what: "value",
                bytes: value,
                expected: "4, 8 or 16",
            });
        }
        if !matches!(index, 4 | 8) {
            return Err(AnalyzeError::BadSize {
                what: "index",
                bytes: index,
                expected: "4 or 8",
            });
        }
        Ok(Self {
            value: value as u64,
            index: index as u64,
        })
    }

    /// Checked value size with the index size SciPy would choose: 4 bytes
    /// when every index and count fits `i32`, else 8.
    ///
    /// # Errors
    /// [`AnalyzeError::BadSize`] for a value size other than 4, 8 or 16.
    ///
    /// ```
    /// use sparsetool_analyze::Sizes;
    /// assert_eq!(Sizes::auto_index(8, 10, 10, 100).unwrap().index, 4);
    /// assert_eq!(Sizes::auto_index(4, 10, 10, 1 << 31).unwrap().index, 8);
    /// ```
    pub fn auto_index(
        value: usize,
        nrows: usize,
        ncols: usize,
        nnz: usize,
    ) -> Result<Self, AnalyzeError> {
        let index = if sparsetool_formats::fits_index::<i32>(nrows, ncols, nnz) {
            4
        } else {
            8
        };
        Self::new(value, index)
    }

    /// Sizes of the value type `T` and index type `I`.
    #[must_use]
    pub fn of<T, I>() -> Self {
        Self {
            value: std::mem::size_of::<T>() as u64,
            index: std::mem::size_of::<I>() as u64,
        }
    }
}

/// The shape of the matrix the accounting needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    pub nrows: u64,
    pub ncols: u64,
    pub nnz: u64,
    pub max_len: u64,
}

impl Shape {
    /// `spmv_bytes` of a layout storing `bytes`.
    fn spmv(&self, bytes: u64, s: Sizes) -> u64 {
        Traffic::new(bytes, self.nrows, self.ncols, s.value).total()
    }
}

/// Bytes one SpMV must move under the minimum-bytes model: every array of the
/// stored matrix read once, `x` read once, `y` written once (see the module
/// docs). The `spmv_bytes` of the accounting and the `bytes` and `gbps` of
/// every bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traffic {
    /// Bytes of the matrix arrays as stored (padding included).
    pub matrix: u64,
    /// Bytes of `x` (`ncols` values).
    pub x: u64,
    /// Bytes of `y` (`nrows` values).
    pub y: u64,
}

impl Traffic {
    /// Traffic for a matrix whose arrays take `matrix` bytes.
    ///
    /// ```
    /// use sparsetool_analyze::Traffic;
    /// // CSR f32, 4 rows, 10 nnz: row_ptr 5*4 + col 10*4 + vals 10*4
    /// let t = Traffic::new(20 + 40 + 40, 4, 4, 4);
    /// assert_eq!(t.total(), 100 + 16 + 16);
    /// assert!((t.gbps(1.0) - 132.0 / 1e-3 / 1e9).abs() < 1e-12);
    /// assert_eq!(t.gbps(0.0), 0.0);
    /// ```
    #[must_use]
    pub fn new(matrix: u64, nrows: u64, ncols: u64, value_bytes: u64) -> Self {
        Self {
            matrix,
            x: ncols.saturating_mul(value_bytes),
            y: nrows.saturating_mul(value_bytes),
        }
    }

    /// Total bytes.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.matrix.saturating_add(self.x).saturating_add(self.y)
    }

    /// GB/s (1e9 bytes per second) for a time in milliseconds.
    #[must_use]
    pub fn gbps(&self, ms: f64) -> f64 {
        if ms > 0.0 {
            self.total() as f64 / (ms * 1e-3) / 1e9
        } else {
            0.0
        }
    }
}

/// `sum(count * size)` in bytes, saturating at `u64::MAX` (a matrix
/// declaring 2^63 rows is valid, its byte counts are not representable).
fn sum(terms: &[(u64, u64)]) -> u64 {
    terms.iter().fold(0u64, |acc, &(n, size)| {
        acc.saturating_add(n.saturating_mul(size))
    })
}

/// What a stored matrix holds, counted: the inputs of [`stored_bytes`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stored {
    /// Rows.
    pub nrows: u64,
    /// Columns (read by CSC only).
    pub ncols: u64,
    /// Stored entries.
    pub nnz: u64,
    /// Slots of the padded part: ELL and SELL slots, the ELL part of HYB
    /// (unused by the other formats).
    pub slots: u64,
    /// Entries of HYB's COO tail.
    pub tail: u64,
    /// Jagged diagonals of JDS.
    pub diagonals: u64,
    /// Slices of SELL.
    pub slices: u64,
}

/// Bytes of the arrays of a matrix in format `kind` (the table of the
/// module docs), as `sparsetool-formats` stores them.
///
/// ```
/// use sparsetool_analyze::{stored_bytes, Sizes, Stored};
/// use sparsetool_formats::FormatKind;
/// let st = Stored { nrows: 4, nnz: 10, ..Stored::default() };
/// assert_eq!(stored_bytes(FormatKind::Csr, &st, Sizes { value: 4, index: 4 }), 100);
/// ```
#[must_use]
pub fn stored_bytes(kind: FormatKind, st: &Stored, s: Sizes) -> u64 {
    let (i, v) = (s.index, s.value);
    match kind {
        FormatKind::Coo => sum(&[(st.nnz, 2 * i + v)]),
        FormatKind::Csr => sum(&[(st.nrows, i), (1, i), (st.nnz, i + v)]),
        FormatKind::Ell => sum(&[(st.nrows, i), (st.slots, i + v)]),
        FormatKind::Hyb => sum(&[(st.nrows, i), (st.slots, i + v), (st.tail, 2 * i + v)]),
        FormatKind::Jds => sum(&[(st.nrows, i), (st.diagonals, i), (1, i), (st.nnz, i + v)]),
        FormatKind::Sell => sum(&[(st.nrows, i), (st.slices, 2 * i), (1, i), (st.slots, i + v)]),
        FormatKind::Csc => sum(&[(st.ncols, i), (1, i), (st.nnz, i + v)]),
    }
}

fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

/// COO accounting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CooReport {
    /// Storage bytes.
    pub bytes: u64,
    /// Always 0.
    pub padding_ratio: f64,
    /// Estimated bytes moved by one SpMV.
    pub spmv_bytes: u64,
}

/// CSR accounting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CsrReport {
    /// Storage bytes.
    pub bytes: u64,
    /// Always 0.
    pub padding_ratio: f64,
    /// Estimated bytes moved by one SpMV.
    pub spmv_bytes: u64,
}

/// ELL accounting (width = longest row).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EllReport {
    /// Storage bytes.
    pub bytes: u64,
    /// Padding slots / slots.
    pub padding_ratio: f64,
    /// Estimated bytes moved by one SpMV.
    pub spmv_bytes: u64,
    /// Slots per row.
    pub ell_width: u64,
    /// `nrows * ell_width`.
    pub slots: u64,
}

/// HYB accounting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HybReport {
    /// Storage bytes.
    pub bytes: u64,
    /// ELL-part padding / (ELL slots + COO entries).
    pub padding_ratio: f64,
    /// Estimated bytes moved by one SpMV.
    pub spmv_bytes: u64,
    /// Width of the ELL part.
    pub hyb_width: u64,
    /// `nrows * hyb_width`.
    pub ell_slots: u64,
    /// Entries beyond the width, stored in the COO tail.
    pub coo_entries: u64,
}

/// JDS accounting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JdsReport {
    /// Storage bytes.
    pub bytes: u64,
    /// Always 0.
    pub padding_ratio: f64,
    /// Estimated bytes moved by one SpMV.
    pub spmv_bytes: u64,
    /// Number of jagged diagonals (= longest row).
    pub diagonals: u64,
    /// Bytes of the permutation (`nrows` indices).
    pub perm_bytes: u64,
    /// Bytes of `y` written through the permutation (scattered).
    pub scattered_y_bytes: u64,
}

/// SELL-C-σ accounting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SellReport {
    /// Storage bytes.
    pub bytes: u64,
    /// Padding slots / slots.
    pub padding_ratio: f64,
    /// Estimated bytes moved by one SpMV.
    pub spmv_bytes: u64,
    /// Slice height C.
    pub slice: u64,
    /// Sorting window σ.
    pub sigma: u64,
    /// Slots (each slice is `C x` its longest row, the last one included).
    pub slots: u64,
    /// Number of slices.
    pub slices: u64,
}

/// The accounting of every format.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Formats {
    /// COO.
    pub coo: CooReport,
    /// CSR.
    pub csr: CsrReport,
    /// ELL at the longest row.
    pub ell: EllReport,
    /// HYB at the recommended width.
    pub hyb: HybReport,
    /// JDS.
    pub jds: JdsReport,
    /// SELL at the recommended C and σ.
    pub sell: SellReport,
}

impl Shape {
    /// The counts of a layout of this matrix with `st`'s padded parts.
    fn stored(&self, st: Stored) -> Stored {
        Stored {
            nrows: self.nrows,
            ncols: self.ncols,
            nnz: self.nnz,
            ..st
        }
    }
}

pub(crate) fn coo(sh: Shape, s: Sizes) -> CooReport {
    let bytes = stored_bytes(FormatKind::Coo, &sh.stored(Stored::default()), s);
    CooReport {
        bytes,
        padding_ratio: 0.0,
        spmv_bytes: sh.spmv(bytes, s),
    }
}

pub(crate) fn csr(sh: Shape, s: Sizes) -> CsrReport {
    let bytes = stored_bytes(FormatKind::Csr, &sh.stored(Stored::default()), s);
    CsrReport {
        bytes,
        padding_ratio: 0.0,
        spmv_bytes: sh.spmv(bytes, s),
    }
}

pub(crate) fn ell(sh: Shape, s: Sizes) -> EllReport {
    let slots = sh.nrows.saturating_mul(sh.max_len);
    let st = sh.stored(Stored {
        slots,
        ..Stored::default()
    });
    let bytes = stored_bytes(FormatKind::Ell, &st, s);
    EllReport {
        bytes,
        padding_ratio: ratio(slots - sh.nnz.min(slots), slots),
        spmv_bytes: sh.spmv(bytes, s),
        ell_width: sh.max_len,
        slots,
    }
}

pub(crate) fn hyb(sh: Shape, counts: &LengthCounts, width: u64, s: Sizes) -> HybReport {
    let ell_slots = sh.nrows.saturating_mul(width);
    let tail = counts.overflow(width);
    let kept = sh.nnz - tail;
    let st = sh.stored(Stored {
        slots: ell_slots,
        tail,
        ..Stored::default()
    });
    let bytes = stored_bytes(FormatKind::Hyb, &st, s);
    HybReport {
        bytes,
        padding_ratio: ratio(ell_slots - kept, ell_slots.saturating_add(tail)),
        spmv_bytes: sh.spmv(bytes, s),
        hyb_width: width,
        ell_slots,
        coo_entries: tail,
    }
}

pub(crate) fn jds(sh: Shape, s: Sizes) -> JdsReport {
    let perm_bytes = sh.nrows.saturating_mul(s.index);
    let st = sh.stored(Stored {
        diagonals: sh.max_len,
        ..Stored::default()
    });
    let bytes = stored_bytes(FormatKind::Jds, &st, s);
    JdsReport {
        bytes,
        padding_ratio: 0.0,
        spmv_bytes: sh.spmv(bytes, s),
        diagonals: sh.max_len,
        perm_bytes,
        scattered_y_bytes: sh.nrows.saturating_mul(s.value),
    }
}

/// The SELL report of a layout with `slots` slots.
pub(crate) fn sell_report(sh: Shape, c: usize, sigma: usize, slots: u64, s: Sizes) -> SellReport {
    let slices = (sh.nrows as usize).div_ceil(c.max(1)) as u64;
    let st = sh.stored(Stored {
        slots,
        slices,
        ..Stored::default()
    });
    let bytes = stored_bytes(FormatKind::Sell, &st, s);
    SellReport {
        bytes,
        padding_ratio: ratio(slots - sh.nnz.min(slots), slots),
        spmv_bytes: sh.spmv(bytes, s),
        slice: c as u64,
        sigma: sigma as u64,
        slots,
        slices,
    }
}

/// Slots of a SELL-C-σ layout of rows with these lengths (in row order),
/// computed exactly from the lengths: inside each window of σ rows the
/// lengths are sorted descending (a stable sort of rows by length gives
/// the same multiset per slice), each slice of C sorted rows is as wide as
/// its first (longest) row, and every slice has C row slots, the last one
/// included. `O(nrows log σ)`, parallel over windows.
///
/// σ must be 1 or a multiple of C (as [`sparsetool_formats::Sell`]
/// requires); another σ is rounded up to a multiple of C. C = 0 gives 0.
///
/// ```
/// // Seed example C: lengths [3, 2, 1, 3], C = 2, σ = 4 -> 6 + 4 slots.
/// assert_eq!(sparsetool_analyze::sell_slots(&[3, 2, 1, 3], 2, 4), 10);
/// // Unsorted (σ = 1): slices {3, 2} and {1, 3} -> 6 + 6.
/// assert_eq!(sparsetool_analyze::sell_slots(&[3, 2, 1, 3], 2, 1), 12);
/// ```
#[must_use]
pub fn sell_slots(rows: &[u32], c: usize, sigma: usize) -> u64 {
    if c == 0 || rows.is_empty() {
        return 0;
    }
    let c64 = c as u64;
    if sigma <= 1 {
        return rows
            .par_chunks(c)
            .with_min_len(256)
            .map(|ch| c64 * u64::from(ch.iter().copied().max().unwrap_or(0)))
            .sum();
    }
    let sigma = sigma.div_ceil(c).saturating_mul(c);
    let window = |w: &[u32]| -> u64 {
        let mut v = w.to_vec();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v.iter().step_by(c).map(|&m| c64 * u64::from(m)).sum()
    };
    if sigma >= rows.len() {
        let mut v = rows.to_vec();
        v.par_sort_unstable_by(|a, b| b.cmp(a));
        return v.iter().step_by(c).map(|&m| c64 * u64::from(m)).sum();
    }
    rows.par_chunks(sigma).map(window).sum()
}
