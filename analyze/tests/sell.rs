//! SELL padding from row lengths equals the padding of an actual SELL.

use sparsetool_analyze::recommend::sell_table;
use sparsetool_analyze::{sell_slots, AnalyzeOptions, AnalyzeReport, RowLengths};
use sparsetool_convert::{csr_to_ell, csr_to_hyb, csr_to_jds, csr_to_sell, HybWidth};

use crate::common::random_csr;

#[test]
fn sell_slots_match_convert() {
    for seed in 0..10u64 {
        let nrows = 1 + seed as usize * 97;
        let a = random_csr(seed, nrows, 300);
        let rl = RowLengths::from_csr(&a).unwrap();
        for c in [1usize, 2, 4, 32, 64] {
            let full = nrows.div_ceil(c) * c;
            for sigma in [1, c, 2 * c, 8 * c, full] {
                let sell = csr_to_sell(&a, c, sigma).unwrap();
                assert_eq!(
                    sell_slots(&rl.rows.to_vec(), c, sigma),
                    sell.slots() as u64,
                    "seed {seed}, C {c}, sigma {sigma}"
                );
            }
        }
        // The table uses the same computation.
        for cand in sell_table(&rl.rows, rl.nnz()) {
            let sell = csr_to_sell(&a, cand.slice as usize, cand.sigma as usize).unwrap();
            assert_eq!(cand.slots, sell.slots() as u64);
            let pad = (sell.slots() - sell.nnz()) as f64 / sell.slots().max(1) as f64;
            assert!((cand.padding_ratio - pad).abs() < 1e-12);
        }
    }
}

#[test]
fn report_accounting_matches_built_formats() {
    for seed in 20..26u64 {
        let a = random_csr(seed, 300, 200);
        let rl = RowLengths::from_csr(&a).unwrap();
        let r = AnalyzeReport::new(&rl, &AnalyzeOptions::default());
        let f = &r.formats;
        let ell = csr_to_ell(&a, None, true).unwrap();
        assert_eq!(f.ell.slots, ell.slots() as u64);
        assert_eq!(f.ell.ell_width, ell.width() as u64);
        let hyb = csr_to_hyb(&a, HybWidth::Fixed(f.hyb.hyb_width as usize)).unwrap();
        assert_eq!(f.hyb.coo_entries, hyb.coo().nnz() as u64);
        assert_eq!(f.hyb.ell_slots, hyb.ell().slots() as u64);
        let jds = csr_to_jds(&a);
        assert_eq!(f.jds.diagonals as usize, jds.num_diagonals());
        let sell = csr_to_sell(&a, f.sell.slice as usize, f.sell.sigma as usize).unwrap();
        assert_eq!(f.sell.slots, sell.slots() as u64);
        assert_eq!(f.sell.slices, sell.num_slices() as u64);
        // Storage bytes at f64/i32 match the arrays' sizes.
        let (v, i) = (8u64, 4u64);
        assert_eq!(
            f.csr.bytes,
            (a.nrows() as u64 + 1) * i + a.nnz() as u64 * (i + v)
        );
        assert_eq!(
            f.ell.bytes,
            a.nrows() as u64 * i + ell.slots() as u64 * (i + v)
        );
        assert_eq!(
            f.sell.bytes,
            (sell.perm().len() + sell.slice_ptr().len() + sell.slice_width().len()) as u64 * i
                + sell.slots() as u64 * (i + v)
        );
    }
}
