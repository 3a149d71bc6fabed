//! The column span of each group of rows: where the GPU kernels can read
//! 16-bit column offsets instead of 32-bit indices.
//!
//! `sparsetool-gpu`'s `ell-u16` and `hyb-u16` kernels give each warp of 32
//! rows a base column and read every slot as a 16-bit offset from it, where
//! the group's columns lie at most [`U16_SPAN`] apart (the other groups
//! read their 32-bit indices); `sell-u16` does the same per slice, and runs
//! only where every slice fits. Those layouts then move about a quarter
//! fewer bytes in f32 (a sixth in f64): a stencil or a FEM mesh of any size
//! fits, and so does any matrix of at most 65 535 columns; random columns
//! beyond that do not. The time model needs the bytes a layout really
//! moves, so the candidates count them ([`crate::Work::u16_bytes`]) from
//! these spans.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;
use sparsetool_formats::Index;

/// Rows per group: one warp of the `ell-u16` kernels, and the height of a
/// SELL slice of the sweep's smallest C (larger C and sorting windows are
/// whole groups).
pub const SPAN_GROUP: usize = 32;

/// The widest span of columns a group's 16-bit offsets reach (offsets run
/// `0..=65534`; the largest value marks padding).
pub const U16_SPAN: u64 = 65_534;

/// The smallest and largest column of each group of [`SPAN_GROUP`]
/// consecutive rows. Empty where the source did not record them (a part of
/// a partition): then only a matrix of at most `U16_SPAN + 1` columns is
/// taken to fit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnSpans {
    /// Per group `(smallest, largest)` column, saturated at `u32::MAX`;
    /// `(u32::MAX, 0)` for a group without entries.
    groups: Vec<(u32, u32)>,
}

/// Whether a group of columns `lo..=hi` takes 16-bit offsets: they lie at
/// most [`U16_SPAN`] apart and the base fits an `i32` (the kernels' base
/// column). A group without entries does (its base is 0).
pub(crate) fn fits((lo, hi): (u32, u32)) -> bool {
    lo > hi || (u64::from(hi - lo) <= U16_SPAN && lo <= i32::MAX as u32)
}

pub(crate) fn union(a: (u32, u32), b: (u32, u32)) -> (u32, u32) {
    (a.0.min(b.0), a.1.max(b.1))
}

/// The span of a group without entries.
pub(crate) const EMPTY: (u32, u32) = (u32::MAX, 0);

fn col32(j: u64) -> u32 {
    u32::try_from(j).unwrap_or(u32::MAX)
}

impl ColumnSpans {
    /// The spans of compressed-row arrays (`row_ptr` already checked:
    /// monotone, ending at `col_idx.len()`).
    #[must_use]
    pub fn from_row_ptr<I: Index>(row_ptr: &[I], col_idx: &[I]) -> Self {
        let nrows = row_ptr.len().saturating_sub(1);
        let groups = (0..nrows.div_ceil(SPAN_GROUP))
            .into_par_iter()
            .with_min_len(1024)
            .map(|g| {
                let (s, e) = (g * SPAN_GROUP, ((g + 1) * SPAN_GROUP).min(nrows));
                col_idx[row_ptr[s].to_usize()..row_ptr[e].to_usize()]
                    .iter()
                    .fold(EMPTY, |acc, j| {
                        let j = col32(j.to_usize() as u64);
                        union(acc, (j, j))
                    })
            })
            .collect();
        Self { groups }
    }

    /// The span of the group of [`SPAN_GROUP`] rows holding row `i`;
    /// `None` where the spans were not recorded.
    #[must_use]
    pub fn group_of_row(&self, i: u64) -> Option<(u32, u32)> {
        self.groups.get((i / SPAN_GROUP as u64) as usize).copied()
    }

    /// Rows (of `nrows`) in groups whose columns take 16-bit offsets: every
    /// row for a matrix of at most `U16_SPAN + 1` columns, none where the
    /// spans were not recorded.
    #[must_use]
    pub fn narrow_rows(&self, nrows: usize, ncols: usize) -> u64 {
        if ncols as u64 <= U16_SPAN + 1 {
            return nrows as u64;
        }
        self.groups
            .iter()
            .enumerate()
            .filter(|(_, &s)| fits(s))
            .map(|(g, _)| (SPAN_GROUP.min(nrows.saturating_sub(g * SPAN_GROUP))) as u64)
            .sum()
    }

    /// Whether every slice of a SELL-C-σ layout (`c` rows a slice, rows
    /// sorted by length within windows of σ rows, rounded up to whole
    /// slices) takes 16-bit offsets: judged by the window (a slice's rows
    /// all come from one window, so its columns lie within the window's
    /// span), the slice itself when σ is at most C. Always for a matrix of
    /// at most `U16_SPAN + 1` columns; never where the spans were not
    /// recorded otherwise.
    #[must_use]
    pub fn sell_fits(&self, nrows: usize, ncols: usize, c: usize, sigma: usize) -> bool {
        if ncols as u64 <= U16_SPAN + 1 {
            return true;
        }
        if self.groups.is_empty() || c == 0 {
            return false;
        }
        let window = sigma.max(1).div_ceil(c).saturating_mul(c).min(nrows.max(1));
        let per = window.div_ceil(SPAN_GROUP).max(1);
        self.groups
            .chunks(per)
            .all(|w| fits(w.iter().fold(EMPTY, |a, &b| union(a, b))))
    }
}

/// Collects [`ColumnSpans`] from entries visited in any order, from many
/// threads (atomic minimum and maximum per group).
#[derive(Debug)]
pub struct SpanCounter {
    lo: Vec<AtomicU32>,
    hi: Vec<AtomicU32>,
}

impl SpanCounter {
    /// A counter for `nrows` rows.
    #[must_use]
    pub fn new(nrows: usize) -> Self {
        let n = nrows.div_ceil(SPAN_GROUP);
        Self {
            lo: (0..n).map(|_| AtomicU32::new(u32::MAX)).collect(),
            hi: (0..n).map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// Adds the entry at row `i` (in range), column `j`.
    pub fn add(&self, i: u64, j: u64) {
        let g = (i / SPAN_GROUP as u64) as usize;
        let j = col32(j);
        if let (Some(lo), Some(hi)) = (self.lo.get(g), self.hi.get(g)) {
            lo.fetch_min(j, Ordering::Relaxed);
            hi.fetch_max(j, Ordering::Relaxed);
        }
    }

    /// The spans.
    #[must_use]
    pub fn finish(self) -> ColumnSpans {
        ColumnSpans {
            groups: self
                .lo
                .into_iter()
                .zip(self.hi)
                .map(|(lo, hi)| (lo.into_inner(), hi.into_inner()))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_windows_and_small_matrices() {
        // 96 rows, 200 000 columns: rows 0..64 near their diagonal, row 70
        // spans 0..=100 000
        let mut row_ptr = vec![0i64];
        let mut cols = Vec::new();
        for r in 0..96i64 {
            cols.push(r * 1000);
            if r == 70 {
                cols.push(r * 1000 + 100_000);
            }
            row_ptr.push(cols.len() as i64);
        }
        let s = ColumnSpans::from_row_ptr(&row_ptr, &cols);
        assert_eq!(s.narrow_rows(96, 200_000), 64);
        // slices of 32 (sigma 1 or 32): the third does not fit
        assert!(!s.sell_fits(96, 200_000, 32, 1));
        // the same spans from entries visited in any order
        let c = SpanCounter::new(96);
        for r in (0..96).rev() {
            for k in row_ptr[r]..row_ptr[r + 1] {
                c.add(r as u64, cols[k as usize] as u64);
            }
        }
        assert_eq!(c.finish(), s);
        // one entry a row: slices of 32 rows span 31 000 columns and fit,
        // windows of 64 rows span 63 000 and fit, of 96 rows 95 000 and not
        let row_ptr: Vec<i64> = (0..=96).collect();
        let cols: Vec<i64> = (0..96).map(|r| r * 1000).collect();
        let s = ColumnSpans::from_row_ptr(&row_ptr, &cols);
        assert_eq!(s.narrow_rows(96, 200_000), 96);
        assert!(s.sell_fits(96, 200_000, 32, 1));
        assert!(s.sell_fits(96, 200_000, 64, 64));
        assert!(!s.sell_fits(96, 200_000, 32, 96));
        assert!(!s.sell_fits(96, 200_000, 32, 1 << 20));
        // at most 65 535 columns: everything fits, recorded or not
        let none = ColumnSpans::default();
        assert_eq!(none.narrow_rows(96, 65_535), 96);
        assert!(none.sell_fits(96, 65_535, 32, 1 << 20));
        assert_eq!(none.narrow_rows(96, 65_536), 0);
        assert!(!none.sell_fits(96, 65_536, 32, 1));
    }
}
