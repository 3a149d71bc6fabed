//! Every refusal of a conversion, with its message.

use sparsetool_convert::{
    convert, csr_to_ell, csr_to_hyb, csr_to_sell, AnyMatrix, ConvertError, ConvertParams, HybWidth,
};
use sparsetool_formats::{Coo, Csr, FormatError, FormatKind};

fn small() -> Csr<f64, i32> {
    // Rows of length 3, 1, 0 in a 3x4 matrix.
    Csr::try_from_parts(3, 4, vec![0, 3, 4, 4], vec![0, 1, 3, 2], vec![1.0; 4]).unwrap()
}

#[test]
fn ell_width_errors() {
    let a = small();
    let e = csr_to_ell(&a, Some(0), false).unwrap_err();
    assert_eq!(
        e,
        ConvertError::ZeroWidth {
            format: FormatKind::Ell
        }
    );
    let e = csr_to_ell(&a, Some(2), false).unwrap_err();
    assert_eq!(
        e,
        ConvertError::EllWidthTooSmall {
            width: 2,
            longest: 3,
            row: 0
        }
    );
    assert!(e.to_string().contains("use HYB"), "{e}");
    let e = csr_to_ell(&a, Some(5), false).unwrap_err();
    assert_eq!(
        e,
        ConvertError::WidthAboveNcols {
            format: FormatKind::Ell,
            width: 5,
            ncols: 4
        }
    );
    assert_eq!(csr_to_ell(&a, Some(4), false).unwrap().width(), 4);
}

#[test]
fn ell_fill_guard() {
    // 2000 rows, one full row of 1000: 2M slots for ~2000 entries.
    let n = 2000;
    let mut r: Vec<i32> = (0..n).collect();
    let mut c: Vec<i32> = (0..n).map(|i| i % 1000).collect();
    r.extend(std::iter::repeat_n(7, 999));
    c.extend((0..1000).filter(|&j| j != 7));
    let v = vec![1.0; r.len()];
    let a = sparsetool_convert::coo_to_csr(
        &Coo::<f64, i32>::try_from_parts(n as usize, 1000, r, c, v).unwrap(),
    );
    let e = csr_to_ell(&a, None, false).unwrap_err();
    assert!(
        matches!(
            e,
            ConvertError::EllFill {
                slots: 2_000_000,
                width: 1000,
                ..
            }
        ),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("HYB or SELL") && msg.contains("x fill"),
        "{msg}"
    );
    assert_eq!(csr_to_ell(&a, None, true).unwrap().slots(), 2_000_000);
    let p = ConvertParams {
        allow_fill: true,
        ..ConvertParams::default()
    };
    assert!(convert(&AnyMatrix::Csr(a.clone()), FormatKind::Ell, &p).is_ok());
    assert!(convert(
        &AnyMatrix::Csr(a),
        FormatKind::Ell,
        &ConvertParams::default()
    )
    .is_err());
}

#[test]
fn hyb_width_errors() {
    let a = small();
    assert_eq!(
        csr_to_hyb(&a, HybWidth::Fixed(0)).unwrap_err(),
        ConvertError::ZeroWidth {
            format: FormatKind::Hyb
        }
    );
    assert_eq!(
        csr_to_hyb(&a, HybWidth::Fixed(5)).unwrap_err(),
        ConvertError::WidthAboveNcols {
            format: FormatKind::Hyb,
            width: 5,
            ncols: 4
        }
    );
    assert_eq!(csr_to_hyb(&a, HybWidth::Auto).unwrap().ell().width(), 0);
}

#[test]
fn sell_parameter_errors() {
    let a = small();
    assert_eq!(csr_to_sell(&a, 0, 1).unwrap_err(), ConvertError::ZeroSlice);
    assert_eq!(
        csr_to_sell(&a, 2, 0).unwrap_err(),
        ConvertError::BadSigma { sigma: 0, slice: 2 }
    );
    let e = csr_to_sell(&a, 2, 3).unwrap_err();
    assert_eq!(e, ConvertError::BadSigma { sigma: 3, slice: 2 });
    assert!(e.to_string().contains("multiple of the slice height 2"));
    let p = ConvertParams {
        slice: 4,
        sigma: Some(6),
        ..ConvertParams::default()
    };
    assert!(matches!(
        convert(&AnyMatrix::Csr(a), FormatKind::Sell, &p),
        Err(ConvertError::BadSigma { sigma: 6, slice: 4 })
    ));
}

#[test]
fn slots_overflow_the_index_type() {
    // 70000 rows, one row of 40000: 2.8e9 ELL slots do not fit i32.
    let n = 70_000usize;
    let r = vec![0i32; 40_000];
    let c: Vec<i32> = (0..40_000).collect();
    let a = sparsetool_convert::coo_to_csr(
        &Coo::<f32, i32>::try_from_parts(n, 40_000, r, c, vec![1.0; 40_000]).unwrap(),
    );
    let e = csr_to_ell(&a, None, true).err();
    assert!(
        matches!(
            e,
            Some(ConvertError::Format(FormatError::IndexOverflow { .. }))
        ),
        "{e:?}"
    );
    // One slice of 65536 rows, 40000 wide.
    let e = csr_to_sell(&a, 1 << 16, 1 << 16).err();
    assert!(
        matches!(
            e,
            Some(ConvertError::Format(FormatError::IndexOverflow { .. }))
        ),
        "{e:?}"
    );
}

#[test]
fn messages() {
    let all = [
        ConvertError::ZeroWidth {
            format: FormatKind::Ell,
        },
        ConvertError::EllWidthTooSmall {
            width: 2,
            longest: 3,
            row: 0,
        },
        ConvertError::WidthAboveNcols {
            format: FormatKind::Hyb,
            width: 5,
            ncols: 4,
        },
        ConvertError::EllFill {
            slots: 2_000_000,
            nnz: 2_999,
            width: 1000,
        },
        ConvertError::ZeroSlice,
        ConvertError::BadSigma { sigma: 3, slice: 2 },
    ];
    let text: Vec<String> = all.iter().map(ToString::to_string).collect();
    insta::assert_debug_snapshot!("convert_error_messages", text);
}

#[test]
fn huge_slice_height_on_empty_rows() {
    let a = Csr::<f64, i32>::empty(3, 2);
    let s = csr_to_sell(&a, 1 << 60, 1).unwrap();
    assert_eq!((s.num_slices(), s.slots()), (1, 0));
    assert_eq!(sparsetool_convert::sell_to_csr(&s), a);
}
