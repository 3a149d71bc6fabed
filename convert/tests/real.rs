//! Every real test matrix converts to every format and back exactly
//! (values are moved, never recomputed, so equality is exact), and the CPU
//! SpMV of every format equals CSR's.

use sparsetool_convert::{convert, AnyMatrix, ConvertError, ConvertParams, HybWidth, ToCsr};
use sparsetool_fixtures::real_matrices;
use sparsetool_formats::mm::{read_path, ReadOptions};
use sparsetool_formats::{Complex64, FormatKind, Scalar};

fn round_trip<T: Scalar>(name: &str, a: &AnyMatrix<T, i32>) {
    let csr = a.to_csr();
    let src = AnyMatrix::Csr(csr.clone());
    let x: Vec<T> = (0..csr.ncols())
        .map(|i| T::from_parts(1.0 + (i % 7) as f64, (i % 3) as f64))
        .collect();
    let mut y_ref = vec![T::zero(); csr.nrows()];
    csr.spmv(&x, &mut y_ref);
    let params = [
        ConvertParams::default(),
        ConvertParams {
            // memplus_rhs1 has one column: a HYB width above ncols is (rightly) refused
            hyb_width: HybWidth::Fixed(2.min(csr.ncols().max(1))),
            slice: 4,
            sigma: Some(8),
            ..ConvertParams::default()
        },
        ConvertParams {
            slice: 32,
            sigma: Some(1),
            ..ConvertParams::default()
        },
    ];
    for p in &params {
        for k in FormatKind::ALL {
            let m = match convert(
                &src,
                k,
                &ConvertParams {
                    allow_fill: true,
                    ..p.clone()
                },
            ) {
                Ok(m) => m,
                // ELL of arrow (one row of 46,500 among rows of 2-3) needs 2.2e9
                // slots: more than i32 can count. The refusal is the right answer.
                Err(ConvertError::Format(e)) if k == FormatKind::Ell && name == "arrow" => {
                    assert!(e.to_string().contains("does not fit"), "{e}");
                    continue;
                }
                Err(e) => panic!("{name} -> {k}: {e}"),
            };
            assert_eq!(m.to_csr(), csr, "{name}: {k} and back with {p:?}");
            let mut y = vec![T::zero(); csr.nrows()];
            m.spmv(&x, &mut y);
            assert_eq!(y, y_ref, "{name}: spmv in {k}");
        }
    }
}

#[test]
fn every_real_matrix_every_format_and_back() {
    let all = real_matrices();
    assert_eq!(all.len(), 18);
    for r in all {
        // `cha` (a non-real hermitian diagonal) reads only leniently.
        let opts = ReadOptions {
            lenient: r.quirk.is_some(),
            ..ReadOptions::default()
        };
        match read_path::<f64, i32>(&r.path, &opts) {
            Ok(m) => round_trip(r.name, &AnyMatrix::Coo(m.coo)),
            Err(_) => {
                // complex files
                let m = read_path::<Complex64, i32>(&r.path, &opts).expect("complex read");
                round_trip(r.name, &AnyMatrix::Coo(m.coo));
            }
        }
    }
}
