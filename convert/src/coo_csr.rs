//! COO → CSR: a two-pass, cache-friendly, stable bucket sort by row.
//!
//! A plain counting sort scatters every entry to a random place in a
//! 100 MB output, one cache miss per entry. Instead:
//!
//! 1. **Buckets of rows.** Rows are grouped into buckets of `2^shift`
//!    consecutive rows (at most 65536, about [`BUCKET_ENTRIES`] entries per
//!    bucket). Each chunk of entries counts its buckets, a prefix sum over
//!    (bucket, chunk) gives each chunk its own write positions, and the
//!    chunks scatter their entries — column, value and the row's low bits
//!    (`u16`) — into bucket order, straight into the output arrays. Each
//!    thread writes a few hundred sequential streams, not random lines.
//! 2. **Inside each bucket** (buckets in parallel, each small enough for
//!    the L2 cache): a counting sort by row through a scratch buffer
//!    reused across buckets, then per row a stable sort by column and a
//!    left-to-right sum of duplicates ([`crate::rows::sort_sum_row`]),
//!    compacting the bucket's rows towards its start.
//!
//! If duplicates were summed, buckets are moved left once at the end.
//! Both passes are stable, so each row's entries reach the column sort in
//! input order and the result is the same for any chunk count, bucket
//! count or thread count.

use rayon::prelude::*;
use sparsetool_formats::{Coo, Csr, Index, Scalar};

use crate::imp::csr;
use crate::rows::sort_sum_row;
use crate::util::{ix, offsets, split_at_offsets, Par, Scatter};

/// Entries per bucket to aim for (a bucket's columns, values and counters
/// should fit in a per-core L2 cache).
pub(crate) const BUCKET_ENTRIES: usize = 1 << 16;
/// Most buckets (write streams per thread in pass 1).
const MAX_BUCKETS: usize = 2048;

/// Scratch buffers of pass 2, reused across the buckets of one task.
struct Scratch<T, I> {
    counts: Vec<usize>,
    next: Vec<usize>,
    cols: Vec<I>,
    vals: Vec<T>,
    sort: Vec<(I, T)>,
}

impl<T, I> Default for Scratch<T, I> {
    fn default() -> Self {
        Self {
            counts: Vec::new(),
            next: Vec::new(),
            cols: Vec::new(),
            vals: Vec::new(),
            sort: Vec::new(),
        }
    }
}

/// `log2` of the rows per bucket for `n` rows and `m` entries.
fn bucket_shift(n: usize, m: usize) -> u32 {
    let per_row = (m / n.max(1)).max(1);
    let target = (BUCKET_ENTRIES / per_row).clamp(1, 1 << 16);
    let mut shift = usize::BITS - 1 - target.leading_zeros();
    while n.div_ceil(1 << shift) > MAX_BUCKETS && shift < 16 {
        shift += 1;
    }
    shift
}

/// One bucket of pass 2: sorts the bucket's region by (row, column), sums
/// duplicates, writes each row's unique count into `uniq` and compacts the
/// rows to the front of the region. Returns the bucket's unique count.
fn sort_bucket<T: Scalar, I: Index>(
    s: &mut Scratch<T, I>,
    cols: &mut [I],
    vals: &mut [T],
    lo: &[u16],
    uniq: &mut [I],
) -> usize {
    let nr = uniq.len();
    s.counts.clear();
    s.counts.resize(nr + 1, 0);
    for &l in lo {
        s.counts[l as usize + 1] += 1;
    }
    for i in 0..nr {
        s.counts[i + 1] += s.counts[i];
    }
    s.next.clear();
    s.next.extend_from_slice(&s.counts[..nr]);
    s.cols.clear();
    s.cols.extend_from_slice(cols);
    s.vals.clear();
    s.vals.extend_from_slice(vals);
    for (e, &l) in lo.iter().enumerate() {
        let p = &mut s.next[l as usize];
        cols[*p] = s.cols[e];
        vals[*p] = s.vals[e];
        *p += 1;
    }
    let mut w = 0;
    for (i, u) in uniq.iter_mut().enumerate() {
        let (a, b) = (s.counts[i], s.counts[i + 1]);
        let k = sort_sum_row(&mut cols[a..b], &mut vals[a..b], &mut s.sort);
        if w != a {
            cols.copy_within(a..a + k, w);
            vals.copy_within(a..a + k, w);
        }
        *u = ix(k);
        w += k;
    }
    w
}

/// COO → CSR (see the module docs for the algorithm).
pub(crate) fn coo_to_csr<T: Scalar, I: Index>(par: Par, coo: &Coo<T, I>) -> Csr<T, I> {
    let (n, m) = (coo.nrows(), coo.nnz());
    if m == 0 {
        return Csr::empty(n, coo.ncols());
    }
    let (rows, cols, vals) = (coo.rows(), coo.cols(), coo.values());
    let shift = bucket_shift(n, m);
    let mask = (1usize << shift) - 1;
    let nb = n.div_ceil(1 << shift);
    let k = match par {
        Par::Seq => 1,
        Par::Rayon => rayon::current_num_threads().min(m.div_ceil(1 << 16)).max(1),
    };
    let chunk = m.div_ceil(k);

    // Pass 1a: per-chunk bucket histograms.
    let mut hist = vec![0usize; k * nb];
    let count = |(h, rs): (&mut [usize], &[I])| {
        for r in rs {
            h[r.to_usize() >> shift] += 1;
        }
    };
    match par {
        Par::Seq => hist.chunks_mut(nb).zip(rows.chunks(chunk)).for_each(count),
        Par::Rayon => hist
            .par_chunks_mut(nb)
            .zip(rows.par_chunks(chunk))
            .for_each(count),
    }
    // Bucket b, chunk j writes from sum(buckets < b) + sum(chunks < j of b).
    let mut bstart = Vec::with_capacity(nb + 1);
    let mut run = 0usize;
    for b in 0..nb {
        bstart.push(run);
        for j in 0..k {
            let h = std::mem::replace(&mut hist[j * nb + b], run);
            run += h;
        }
    }
    bstart.push(run);

    // Pass 1b: scatter into bucket order.
    let mut out_c = vec![I::default(); m];
    let mut out_v = vec![T::zero(); m];
    let mut lo = vec![0u16; m];
    {
        let (sc, sv, sl) = (
            Scatter::new(&mut out_c),
            Scatter::new(&mut out_v),
            Scatter::new(&mut lo),
        );
        let scatter = |(j, h): (usize, &mut [usize])| {
            let a = (j * chunk).min(m);
            let b = (a + chunk).min(m);
            for e in a..b {
                let r = rows[e].to_usize();
                let p = &mut h[r >> shift];
                // SAFETY: the positions of (bucket, chunk) pairs are
                // disjoint, and each is used once.
                unsafe {
                    sc.write(*p, cols[e]);
                    sv.write(*p, vals[e]);
                    // `r & mask < 2^16`: shift is at most 16.
                    sl.write(*p, (r & mask) as u16);
                }
                *p += 1;
            }
            // The scatter is the pass over every entry that a progress
            // bar can follow (the bucket sorts after it are short).
            sparsetool_formats::progress::CONVERT.add((b - a) as u64);
        };
        match par {
            Par::Seq => hist.chunks_mut(nb).enumerate().for_each(scatter),
            Par::Rayon => hist.par_chunks_mut(nb).enumerate().for_each(scatter),
        }
    }
    drop(hist);

    // Pass 2: sort inside each bucket.
    let mut uniq = vec![I::default(); n];
    let row_cuts: Vec<usize> = (0..=nb).map(|b| (b << shift).min(n)).collect();
    let totals: Vec<usize> = {
        let lo = &lo;
        let jobs: Vec<_> = split_at_offsets(&mut out_c, &bstart)
            .into_iter()
            .zip(split_at_offsets(&mut out_v, &bstart))
            .zip(split_at_offsets(&mut uniq, &row_cuts))
            .enumerate()
            .map(|(b, ((c, v), u))| (c, v, &lo[bstart[b]..bstart[b + 1]], u))
            .collect();
        let work = |s: &mut Scratch<T, I>, (c, v, l, u): (&mut [I], &mut [T], &[u16], &mut [I])| {
            sort_bucket(s, c, v, l, u)
        };
        match par {
            Par::Seq => {
                let mut s = Scratch::default();
                jobs.into_iter().map(|j| work(&mut s, j)).collect()
            }
            Par::Rayon => jobs
                .into_par_iter()
                .map_init(Scratch::default, work)
                .collect(),
        }
    };
    drop(lo);
    let total: usize = totals.iter().sum();
    let row_ptr: Vec<I> = offsets(uniq.iter().map(|u| u.to_usize()), n);
    if total != m {
        // Duplicates were summed: close the gaps between buckets.
        let mut dst = 0;
        for (b, &len) in totals.iter().enumerate() {
            let src = bstart[b];
            if src != dst {
                out_c.copy_within(src..src + len, dst);
                out_v.copy_within(src..src + len, dst);
            }
            dst += len;
        }
        out_c.truncate(total);
        out_v.truncate(total);
    }
    csr(n, coo.ncols(), row_ptr, out_c, out_v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifts() {
        assert_eq!(bucket_shift(1_000_000, 10_000_000), 12);
        assert!(1_000_000_000usize.div_ceil(1 << bucket_shift(1_000_000_000, 10)) <= 1 << 14);
        assert_eq!(bucket_shift(1, 100_000_000), 0);
    }
}
