//! Statistics and histogram against independent computations.

use sparsetool_analyze::histogram::{histogram, EXACT_MAX_DISTINCT};
use sparsetool_analyze::rows::LengthCounts;
use sparsetool_analyze::{LengthStats, RowLengths};

use crate::common::random_csr;

/// Type-8 quantile of sorted data, written from Hyndman & Fan.
fn quantile8(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len() as f64;
    let h = (n + 1.0 / 3.0) * p + 1.0 / 3.0;
    let hf = h.floor();
    if hf < 1.0 {
        return sorted[0];
    }
    if hf >= n {
        return sorted[sorted.len() - 1];
    }
    let lo = sorted[hf as usize - 1];
    let hi = sorted[hf as usize];
    lo + (h - hf) * (hi - lo)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn stats_match_hand_computation() {
    for seed in 0..12u64 {
        let (nr, nc) = (
            1 + (seed as usize * 37) % 500,
            1 + (seed as usize * 53) % 300,
        );
        let a = random_csr(seed, nr, nc);
        let rl = RowLengths::from_csr(&a).unwrap();
        // Row lengths by hand from row_ptr.
        let ptr = a.row_ptr();
        let lens: Vec<f64> = (0..nr).map(|i| f64::from(ptr[i + 1] - ptr[i])).collect();
        assert_eq!(
            rl.rows
                .to_vec()
                .iter()
                .map(|&r| f64::from(r))
                .collect::<Vec<_>>(),
            lens
        );
        // Column lengths by hand.
        let mut cl = vec![0u32; nc];
        for &c in a.col_idx() {
            cl[c as usize] += 1;
        }
        assert_eq!(rl.cols.to_vec(), cl);

        let st = LengthStats::new(&rl.rows.to_vec());
        let n = lens.len() as f64;
        let mean = lens.iter().sum::<f64>() / n;
        let m2 = lens.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        let m3 = lens.iter().map(|x| (x - mean).powi(3)).sum::<f64>() / n;
        let std = m2.sqrt();
        let skew = if m2 == 0.0 { 0.0 } else { m3 / m2.powf(1.5) };
        let mut sorted = lens.clone();
        sorted.sort_by(f64::total_cmp);
        let median = if sorted.len() % 2 == 1 {
            sorted[sorted.len() / 2]
        } else {
            (sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) / 2.0
        };
        assert_eq!(st.min as f64, sorted[0], "seed {seed}");
        assert_eq!(st.max as f64, *sorted.last().unwrap(), "seed {seed}");
        assert!(
            close(st.mean, mean),
            "seed {seed}: mean {} vs {mean}",
            st.mean
        );
        assert!(close(st.std, std), "seed {seed}: std {} vs {std}", st.std);
        assert!(
            close(st.cv, if mean > 0.0 { std / mean } else { 0.0 }),
            "seed {seed}"
        );
        assert!(
            close(st.skewness, skew),
            "seed {seed}: skew {} vs {skew}",
            st.skewness
        );
        assert!(close(st.median, median), "seed {seed}");
        assert!(
            close(st.p90, quantile8(&sorted, 0.9)),
            "seed {seed}: p90 {}",
            st.p90
        );
        assert!(
            close(st.p99, quantile8(&sorted, 0.99)),
            "seed {seed}: p99 {}",
            st.p99
        );
        assert_eq!(st.empty, lens.iter().filter(|&&l| l == 0.0).count() as u64);
    }
}

#[test]
fn stats_of_nothing_are_zero() {
    let st = LengthStats::new(&[]);
    assert_eq!(
        (st.min, st.max, st.mean, st.std, st.cv, st.p99),
        (0, 0, 0.0, 0.0, 0.0, 0.0)
    );
    let st = LengthStats::new(&[4, 4, 4]);
    assert_eq!(
        (st.std, st.cv, st.skewness, st.median),
        (0.0, 0.0, 0.0, 4.0)
    );
}

fn check_bins(lens: &[u32]) {
    let counts = LengthCounts::new(lens);
    let bins = histogram(&counts);
    assert_eq!(bins.iter().map(|b| b.rows).sum::<u64>(), lens.len() as u64);
    for w in bins.windows(2) {
        assert!(w[0].hi < w[1].lo, "bins overlap or are unordered: {w:?}");
    }
    for &l in lens {
        let l = u64::from(l);
        assert_eq!(
            bins.iter().filter(|b| b.lo <= l && l <= b.hi).count(),
            1,
            "length {l}"
        );
    }
    for b in &bins {
        let inside = lens
            .iter()
            .filter(|&&l| b.lo <= u64::from(l) && u64::from(l) <= b.hi)
            .count();
        assert_eq!(b.rows, inside as u64);
    }
    if counts.pairs.len() <= EXACT_MAX_DISTINCT {
        assert!(bins.iter().all(|b| b.lo == b.hi));
    } else {
        for b in &bins {
            assert!(b.lo == b.hi && b.lo <= 1 || (b.lo.is_power_of_two() && b.hi == 2 * b.lo - 1));
        }
    }
}

#[test]
fn histogram_bins_cover_every_row_once() {
    for seed in 0..12u64 {
        let a = random_csr(seed, 50 + seed as usize * 40, 400);
        check_bins(&RowLengths::from_csr(&a).unwrap().rows.to_vec());
    }
    check_bins(&[]);
    check_bins(&[0, 0, 0]);
    check_bins(&(0..17).collect::<Vec<u32>>());
    check_bins(&[
        0,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9,
        10,
        11,
        12,
        13,
        14,
        15,
        1 << 20,
        u32::MAX,
    ]);
}

/// The statistics agree with `statrs` (the reference implementation), and
/// a sparse axis (huge, nearly empty) gives exactly what the dense one
/// gives, for the statistics, the length table and SELL slot counts.
#[test]
fn stats_agree_with_statrs_and_sparse_axes() {
    use rand::{Rng, SeedableRng};
    use sparsetool_analyze::{sell_slots, Lengths};
    use statrs::statistics::{Data, OrderStatistics, Statistics};
    for seed in 0..20u64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let n = rng.random_range(1..3000usize);
        let lens: Vec<u32> = (0..n)
            .map(|_| {
                if rng.random_bool(0.7) {
                    0
                } else {
                    rng.random_range(1..40)
                }
            })
            .collect();
        let st = LengthStats::new(&lens);
        let xs: Vec<f64> = lens.iter().map(|&l| f64::from(l)).collect();
        let mut data = Data::new(xs.clone());
        assert!(close(st.mean, xs.iter().mean()), "seed {seed}");
        assert!(close(st.std, xs.iter().population_std_dev()), "seed {seed}");
        assert!(close(st.median, data.median()), "seed {seed}");
        assert!(close(st.p90, data.quantile(0.9)), "seed {seed}");
        assert!(close(st.p99, data.quantile(0.99)), "seed {seed}");

        let mut idx = Vec::new();
        for (i, &l) in lens.iter().enumerate() {
            idx.extend(std::iter::repeat_n(i as u64, l as usize));
        }
        let sparse = Lengths::from_indices(n, idx, "row length").unwrap();
        let dense = Lengths::Dense(lens.clone());
        assert_eq!(sparse, dense);
        assert_eq!(sparse.counts(), LengthCounts::new(&lens));
        assert_eq!(sparse.stats(), st);
        for (c, sigma) in [
            (1, 1),
            (4, 1),
            (32, 1),
            (4, 8),
            (32, 64),
            (32, 4096),
            (3, 7),
        ] {
            assert_eq!(
                sparse.sell_slots(c, sigma),
                sell_slots(&lens, c, sigma),
                "seed {seed} C {c} sigma {sigma}"
            );
        }
    }
}

/// A matrix declaring 2^40 rows and columns with three entries: its row
/// lengths, statistics and report take memory for three entries.
#[test]
fn huge_nearly_empty_axes_stay_sparse() {
    let n = 1usize << 40;
    let rl = RowLengths::from_coords(n, n, &[5i64, 5, 1 << 39], &[0i64, 7, 1 << 39]).unwrap();
    assert!(matches!(
        rl.rows,
        sparsetool_analyze::Lengths::Sparse { .. }
    ));
    assert_eq!(rl.nnz(), 3);
    assert_eq!(rl.max_row(), 2);
    let st = rl.rows.stats();
    assert_eq!((st.empty, st.max, st.median), (n as u64 - 2, 2, 0.0));
    let report = sparsetool_analyze::AnalyzeReport::new(&rl, &Default::default());
    assert_eq!(report.nnz, 3);
}
