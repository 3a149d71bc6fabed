//! Execution helpers shared by every conversion: the serial/parallel
//! switch, work splitting at row offsets, and a writer for disjoint
//! scattered output.

use std::marker::PhantomData;

use rayon::prelude::*;
use sparsetool_formats::Index;

/// How a conversion runs: on the calling thread, or split into blocks on
/// the current rayon pool. Both run the same per-row kernels and give the
/// same bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Par {
    /// One block, on the calling thread.
    Seq,
    /// Blocks of rows on the current rayon thread pool.
    Rayon,
}

impl Par {
    /// Runs `f` on every job, serially or in parallel.
    pub(crate) fn for_each<J: Send>(self, jobs: Vec<J>, f: impl Fn(J) + Sync + Send) {
        match self {
            Par::Seq => jobs.into_iter().for_each(f),
            Par::Rayon => jobs.into_par_iter().for_each(f),
        }
    }

    /// Number of blocks to aim for with `work` units of work.
    fn blocks(self, work: usize) -> usize {
        match self {
            Par::Seq => 1,
            Par::Rayon => {
                let by_size = work / MIN_BLOCK_WORK;
                by_size.clamp(1, rayon::current_num_threads() * 8)
            }
        }
    }

    /// Copies a slice into a new vector (in parallel for `Rayon`).
    pub(crate) fn copy<X: Copy + Send + Sync>(self, src: &[X]) -> Vec<X> {
        match self {
            Par::Rayon if src.len() > MIN_BLOCK_WORK => src.par_iter().copied().collect(),
            _ => src.to_vec(),
        }
    }

    /// Cuts `0..n` into consecutive ranges of about equal `weight`, where
    /// `cum(i)` is the (non-decreasing) cumulative weight of items `0..i`.
    /// Returns the cut points, starting at 0 and ending at `n`. The result
    /// decides only how work is split, never what is written.
    pub(crate) fn cuts(self, n: usize, cum: impl Fn(usize) -> usize) -> Vec<usize> {
        cuts_into(n, self.blocks(cum(n)), cum)
    }

    /// Row cuts of a compressed structure balanced on rows + entries.
    pub(crate) fn row_cuts<I: Index>(self, ptr: &[I]) -> Vec<usize> {
        let n = ptr.len().saturating_sub(1);
        self.cuts(n, |i| ptr[i].to_usize() + i)
    }
}

/// [`Par::cuts`] into at most `nb` blocks (at least one).
pub(crate) fn cuts_into(n: usize, nb: usize, cum: impl Fn(usize) -> usize) -> Vec<usize> {
    let total = cum(n);
    let nb = nb.max(1);
    let mut cuts = Vec::with_capacity(nb + 1);
    cuts.push(0);
    for b in 1..nb {
        let target = total / nb * b;
        // First i with cum(i) >= target.
        let (mut lo, mut hi) = (*cuts.last().unwrap_or(&0), n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if cum(mid) < target {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo > *cuts.last().unwrap_or(&0) && lo < n {
            cuts.push(lo);
        }
    }
    cuts.push(n);
    cuts
}

/// Smallest amount of work (entries + rows) worth a block of its own.
pub(crate) const MIN_BLOCK_WORK: usize = 1 << 15;

/// Splits `data` into consecutive pieces at the absolute offsets `at`
/// (ascending, first 0, last `data.len()`); piece `k` is
/// `data[at[k]..at[k+1]]`.
pub(crate) fn split_at_offsets<'a, X>(mut data: &'a mut [X], at: &[usize]) -> Vec<&'a mut [X]> {
    let mut out = Vec::with_capacity(at.len().saturating_sub(1));
    for w in at.windows(2) {
        let (head, tail) = data.split_at_mut(w[1] - w[0]);
        out.push(head);
        data = tail;
    }
    out
}

/// Shared write access to a slice for parallel tasks that write disjoint,
/// scattered positions (slot-major layouts, counting-sort scatter).
///
/// Writes are bounds-checked; the one thing the caller promises (hence
/// `unsafe`) is that no position is written by two tasks at once.
pub(crate) struct Scatter<'a, X> {
    ptr: *mut X,
    len: usize,
    _borrow: PhantomData<&'a mut [X]>,
}

// SAFETY: a `Scatter` is a `&mut [X]` split among tasks; sending or sharing
// it is sound when `X` may move between threads, given the disjointness
// promised by every `write` call.
unsafe impl<X: Send> Send for Scatter<'_, X> {}
// SAFETY: as above.
unsafe impl<X: Send> Sync for Scatter<'_, X> {}

impl<'a, X: Copy> Scatter<'a, X> {
    /// Borrows `data` for scattered writes.
    pub(crate) fn new(data: &'a mut [X]) -> Self {
        Self {
            ptr: data.as_mut_ptr(),
            len: data.len(),
            _borrow: PhantomData,
        }
    }

    /// Writes `v` at position `i`.
    ///
    /// # Panics
    /// If `i` is out of bounds.
    ///
    /// # Safety
    /// No other task writes or reads position `i` while this `Scatter` is
    /// alive.
    #[inline]
    pub(crate) unsafe fn write(&self, i: usize, v: X) {
        assert!(
            i < self.len,
            "scatter position {i} out of bounds ({})",
            self.len
        );
        // SAFETY: in bounds (checked above) and not aliased (caller's
        // promise); the borrow of the slice outlives `self`.
        unsafe { self.ptr.add(i).write(v) }
    }
}

/// Converts a count that the caller knows fits `I`.
#[inline]
pub(crate) fn ix<I: Index>(v: usize) -> I {
    I::from_usize_unchecked(v)
}

/// `above[l]`: how many of `lens` exceed `l`, for `l` in `0..=longest`
/// (`longest` at least the largest length). In a stable sort by
/// descending length, the rows of length `l` start at position
/// `above[l]`, and JDS diagonal `d` holds `above[d]` rows.
pub(crate) fn longer_than(longest: usize, lens: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut hist = vec![0usize; longest + 1];
    for l in lens {
        hist[l] += 1;
    }
    let mut above = vec![0usize; longest + 1];
    let mut run = 0;
    for l in (0..=longest).rev() {
        above[l] = run;
        run += hist[l];
    }
    above
}

/// Exclusive prefix sum of `lens` into an offsets array of `lens + 1`.
pub(crate) fn offsets<I: Index>(lens: impl Iterator<Item = usize>, n: usize) -> Vec<I> {
    let mut ptr = Vec::with_capacity(n + 1);
    let mut run = 0usize;
    ptr.push(ix(0));
    for l in lens {
        run += l;
        ptr.push(ix(run));
    }
    ptr
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_cover_everything() {
        for par in [Par::Seq, Par::Rayon] {
            assert_eq!(par.cuts(0, |i| i), [0, 0]);
            let c = par.cuts(1_000_000, |i| i);
            assert_eq!(c.first(), Some(&0));
            assert_eq!(c.last(), Some(&1_000_000));
            assert!(c.windows(2).all(|w| w[0] < w[1]));
        }
        // One heavy row: no empty block.
        let ptr: Vec<i32> = vec![0, 1_000_000, 1_000_000, 1_000_001];
        let c = Par::Rayon.row_cuts(&ptr);
        assert!(c.windows(2).all(|w| w[0] < w[1]), "{c:?}");
        assert_eq!(*c.last().unwrap(), 3);
    }

    #[test]
    fn split() {
        let mut v = [1, 2, 3, 4, 5];
        let p = split_at_offsets(&mut v, &[0, 2, 2, 5]);
        assert_eq!(p.len(), 3);
        assert_eq!(&*p[2], &[3, 4, 5]);
    }
}
