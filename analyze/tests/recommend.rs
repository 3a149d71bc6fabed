//! Recommendations: the required outcomes and the width rules.

use sparsetool_analyze::recommend::{
    cusp_hyb_width, ginkgo_hyb_width, hyb_width_with, padding_curve, CostModel,
};
use sparsetool_analyze::rows::LengthCounts;
use sparsetool_analyze::{
    recommend_hyb_width, recommend_sell, AnalyzeOptions, AnalyzeReport, RowLengths,
};
use sparsetool_fixtures::gen;

fn report(rl: &RowLengths) -> AnalyzeReport {
    AnalyzeReport::new(rl, &AnalyzeOptions::default())
}

#[test]
fn seed_d_is_never_ell_and_hyb_keeps_a_small_width() {
    let a = gen::seed_d::<f64, i32>().unwrap();
    let rl = RowLengths::from_csr(&a).unwrap();
    let r = report(&rl);
    let rec = &r.recommendation;
    // ELL would store 20x the entries: uneven rows rule it out
    assert_ne!(rec.format, "ell", "{}", rec.reason);
    assert!(!r.layouts.iter().any(|l| l.format == "ell"));
    assert_eq!(r.formats.ell.ell_width, 200);
    assert!(r.formats.ell.padding_ratio > 0.9);
    // the HYB width rule keeps the ELL part near the typical row
    let w = recommend_hyb_width(&rl) as u64;
    assert!((1..10).contains(&w), "width {w}");
    if rec.format == "hyb" {
        assert!(rec.params["hyb_width"] < 10, "{}", rec.reason);
    }
    assert!(
        rec.reason.contains(&rec.format.to_uppercase()),
        "{}",
        rec.reason
    );
    assert!(rec.reason.contains("µs"), "{}", rec.reason);
    let (c, sigma) = recommend_sell(&rl);
    assert!(
        c == 32 && sigma > 1,
        "uneven rows must be sorted: sigma {sigma}"
    );
}

#[test]
fn laplacian_2d_layouts_use_width_5() {
    for n in [16usize, 50, 100, 400] {
        let a = gen::laplace2d::<f64, i32>(n).unwrap();
        let rl = RowLengths::from_csr(&a).unwrap();
        let r = report(&rl);
        let rec = &r.recommendation;
        match rec.format.as_str() {
            "ell" => assert_eq!(rec.params["ell_width"], 5),
            "hyb" => assert_eq!(rec.params["hyb_width"], 5),
            // no slice wider than the longest row (sorted slices of
            // boundary rows are narrower)
            "sell" => assert!(r.formats.sell.slots <= 5 * 32 * r.formats.sell.slices),
            "csr" | "jds" => {}
            f => panic!("n {n}: {f}: {}", rec.reason),
        }
        // ELL is in the ranking with its exact width
        assert!(
            r.layouts.iter().any(|l| l.layout.to_string() == "ell-5"),
            "n {n}"
        );
        assert_eq!(r.formats.ell.ell_width, 5);
        assert_eq!(recommend_hyb_width(&rl), 5);
    }
}

#[test]
fn ranking_is_sorted_and_names_the_recommendation() {
    let a = crate::common::random_csr(3, 5000, 5000);
    let rl = RowLengths::from_csr(&a).unwrap();
    let r = report(&rl);
    assert!(r
        .layouts
        .windows(2)
        .all(|w| w[0].predicted_us <= w[1].predicted_us));
    assert_eq!(r.layouts[0].layout, r.recommendation.layout);
    let best = r.recommendation.predicted_us[&r.recommendation.format];
    assert!((best - r.layouts[0].predicted_us).abs() < 1e-9);
    // every format present in the ranking has its best prediction listed
    for l in &r.layouts {
        assert!(r.recommendation.predicted_us[&l.format] <= l.predicted_us);
    }
}

#[test]
fn uneven_rows_are_never_ell_or_unsorted_sell() {
    for seed in 0..20u64 {
        let a = crate::common::random_csr(seed, 2000, 3000);
        let rl = RowLengths::from_csr(&a).unwrap();
        let r = report(&rl);
        assert!(r.row_length.cv > 0.5);
        let rec = &r.recommendation;
        assert_ne!(rec.format, "ell", "{}", rec.reason);
        assert!(!r.layouts.iter().any(|l| l.format == "ell"
            || l.layout.to_string().starts_with("sell-32-1-")
            || l.layout.to_string().ends_with("-1") && l.format == "sell"));
        if rec.format == "sell" {
            assert!(rec.params["sigma"] > 1, "{}", rec.reason);
        }
    }
}

fn counts(lens: &[u32]) -> LengthCounts {
    LengthCounts::new(lens)
}

/// CUSP's loop, transcribed.
fn cusp_reference(lens: &[u32]) -> u64 {
    let max = lens.iter().copied().max().unwrap_or(0) as usize;
    let mut hist = vec![0usize; max + 1];
    for &l in lens {
        hist[l as usize] += 1;
    }
    let n = lens.len();
    let mut rows = n;
    for (i, h) in hist.iter().enumerate().take(max) {
        rows -= h;
        if 3.0 * (rows as f32) < n as f32 || rows < 4096 {
            return i as u64;
        }
    }
    max as u64
}

/// Ginkgo's imbalance_bounded_limit(1/3, 0.001), transcribed.
fn ginkgo_reference(lens: &[u32]) -> u64 {
    if lens.is_empty() {
        return 0;
    }
    let mut v = lens.to_vec();
    v.sort_unstable();
    let pos = (v.len() as f64 * (1.0 / 3.0)) as usize;
    u64::from(v[pos]).min((v.len() as f64 * 0.001) as u64)
}

/// The cost model by brute force over every width.
fn model_reference(lens: &[u32], m: &CostModel) -> u64 {
    let c = counts(lens);
    let max = c.max();
    let best = (0..=max)
        .min_by(|&a, &b| {
            m.hyb_cost(&c, a)
                .total_cmp(&m.hyb_cost(&c, b))
                .then(a.cmp(&b))
        })
        .unwrap_or(0);
    if max == 0 {
        0
    } else {
        best.clamp(1, max)
    }
}

#[test]
fn width_rules_match_transcriptions() {
    let mut cases: Vec<Vec<u32>> = vec![
        vec![],
        vec![0, 0],
        vec![3; 10],
        vec![5; 10_000].into_iter().chain(vec![50; 100]).collect(),
        vec![0; 9000]
            .into_iter()
            .chain(vec![1, 7, 9])
            .chain(vec![4; 5000])
            .collect(),
    ];
    for seed in 0..10u64 {
        let a = crate::common::random_csr(seed, 1000 + 1500 * seed as usize, 400);
        cases.push(RowLengths::from_csr(&a).unwrap().rows.to_vec());
    }
    let m = CostModel::default();
    for lens in &cases {
        let c = counts(lens);
        assert_eq!(cusp_hyb_width(&c), cusp_reference(lens), "{:?}", c.pairs);
        assert_eq!(
            ginkgo_hyb_width(&c),
            ginkgo_reference(lens),
            "{:?}",
            c.pairs
        );
        assert_eq!(
            hyb_width_with(&c, &m),
            model_reference(lens, &m),
            "{:?}",
            c.pairs
        );
    }
    // CUSP's documented example: 10000 rows of 5 and 100 of 50 -> 5.
    assert_eq!(cusp_hyb_width(&counts(&cases[3])), 5);
}

#[test]
fn padding_curve_is_exact() {
    let lens = [0u32, 1, 2, 2, 5, 9, 100];
    let c = counts(&lens);
    for p in padding_curve(&c, &[7]) {
        let k = p.width;
        let coo: u64 = lens.iter().map(|&l| u64::from(l).saturating_sub(k)).sum();
        let kept: u64 = lens.iter().map(|&l| u64::from(l).min(k)).sum();
        assert_eq!(p.coo_entries, coo);
        assert_eq!(p.ell_slots, 7 * k);
        assert_eq!(p.padding_slots, 7 * k - kept);
    }
    assert!(padding_curve(&c, &[7]).iter().any(|p| p.width == 100));
}

#[test]
fn empty_matrix_recommends_csr() {
    let rl = RowLengths {
        nrows: 0,
        ncols: 0,
        rows: vec![].into(),
        cols: vec![].into(),
        far: Default::default(),
        spans: Default::default(),
    };
    let r = report(&rl);
    assert_eq!(r.recommendation.format, "csr");
    let rl = RowLengths {
        nrows: 5,
        ncols: 3,
        rows: vec![0; 5].into(),
        cols: vec![0; 3].into(),
        far: Default::default(),
        spans: Default::default(),
    };
    let r = report(&rl);
    assert_eq!(r.recommendation.format, "csr");
    assert_eq!(recommend_hyb_width(&rl), 0);
    assert_eq!(recommend_sell(&rl).0, 32);
}
