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
            rl.rows.iter().map(|&r| f64::from(r)).collect::<Vec<_>>(),
            lens
        );
        // Column lengths by hand.
        let mut cl = vec![0u32; nc];
        for &c in a.col_idx() {
            cl[c as usize] += 1;
        }
        assert_eq!(rl.cols, cl);

        let st = LengthStats::new(&rl.rows);
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
        check_bins(&RowLengths::from_csr(&a).unwrap().rows);
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
