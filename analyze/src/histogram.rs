//! Row-length histogram whose bins cover every row exactly once.
//!
//! With at most [`EXACT_MAX_DISTINCT`] distinct lengths there is one bin
//! per length present (`lo == hi`). Otherwise bins are powers of two:
//! `[0,0]`, `[1,1]`, `[2,3]`, `[4,7]`, ... from the bin of the shortest
//! row to the bin of the longest, empty bins in between included, so the
//! picture keeps its scale. Either way bins are disjoint, ascending, and
//! their counts sum to the number of rows.

use serde::Serialize;

use crate::rows::LengthCounts;

/// Most distinct lengths drawn one bin each.
pub const EXACT_MAX_DISTINCT: usize = 16;

/// One bin: rows whose length `l` satisfies `lo <= l <= hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bin {
    /// Smallest length in the bin.
    pub lo: u64,
    /// Largest length in the bin.
    pub hi: u64,
    /// Rows in the bin.
    pub rows: u64,
}

/// Log2 bin index of a length: 0 for 0, else `1 + floor(log2(l))`.
fn log2_bin(l: u64) -> u32 {
    if l == 0 {
        0
    } else {
        64 - l.leading_zeros()
    }
}

/// Bounds of log2 bin `b`.
fn log2_bounds(b: u32) -> (u64, u64) {
    match b {
        0 => (0, 0),
        64 => (1 << 63, u64::MAX),
        b => (1 << (b - 1), (1u64 << b) - 1),
    }
}

/// Builds the histogram of a length table.
#[must_use]
pub fn histogram(counts: &LengthCounts) -> Vec<Bin> {
    if counts.pairs.len() <= EXACT_MAX_DISTINCT {
        return counts
            .pairs
            .iter()
            .map(|&(l, rows)| Bin { lo: l, hi: l, rows })
            .collect();
    }
    let (Some(first), Some(last)) = (counts.pairs.first(), counts.pairs.last()) else {
        return Vec::new();
    };
    let (b0, b1) = (log2_bin(first.0), log2_bin(last.0));
    let mut bins: Vec<Bin> = (b0..=b1)
        .map(|b| {
            let (lo, hi) = log2_bounds(b);
            Bin { lo, hi, rows: 0 }
        })
        .collect();
    for &(l, rows) in &counts.pairs {
        bins[(log2_bin(l) - b0) as usize].rows += rows;
    }
    bins
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_bins() {
        assert_eq!(log2_bounds(log2_bin(0)), (0, 0));
        assert_eq!(log2_bounds(log2_bin(1)), (1, 1));
        assert_eq!(log2_bounds(log2_bin(3)), (2, 3));
        assert_eq!(log2_bounds(log2_bin(4)), (4, 7));
        assert_eq!(log2_bounds(log2_bin(u64::MAX)), (1 << 63, u64::MAX));
    }
}
