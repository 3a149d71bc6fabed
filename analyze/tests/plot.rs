//! Plot rendering (SVG to a string, PNG to a file).

use plotters::prelude::*;
use sparsetool_analyze::{draw_report, write_plot, AnalyzeOptions, AnalyzeReport, RowLengths};

fn seed_d_report() -> AnalyzeReport {
    let a = sparsetool_fixtures::gen::seed_d::<f64, i32>().unwrap();
    AnalyzeReport::new(
        &RowLengths::from_csr(&a).unwrap(),
        &AnalyzeOptions::default(),
    )
}

#[test]
fn svg_has_both_panels_and_marks() {
    let r = seed_d_report();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1400, 560)).into_drawing_area();
        draw_report(&root, &r, "seed D").unwrap();
    }
    for text in [
        "seed D: 1000 x 1000",
        "row-length histogram",
        "padding versus ELL width",
        "HYB model",
        "CUSP",
        "Ginkgo",
        "ELL = 200",
        "ELL slots (nrows x width)",
        "entries beyond width (to COO)",
    ] {
        assert!(svg.contains(text), "missing {text:?}");
    }
}

#[test]
fn write_plot_picks_backend_by_extension() {
    let r = seed_d_report();
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("d.png");
    write_plot(&png, &r, "seed D").unwrap();
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    let svg = dir.path().join("d.SVG");
    write_plot(&svg, &r, "seed D").unwrap();
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let err = write_plot(&dir.path().join("d.jpg"), &r, "seed D").unwrap_err();
    assert!(err.to_string().contains(".svg or .png"), "{err}");
}

#[test]
fn empty_matrix_plots() {
    let rl = RowLengths {
        nrows: 0,
        ncols: 0,
        rows: vec![],
        cols: vec![],
    };
    let r = AnalyzeReport::new(&rl, &AnalyzeOptions::default());
    let mut svg = String::new();
    let root = SVGBackend::with_string(&mut svg, (800, 400)).into_drawing_area();
    draw_report(&root, &r, "empty").unwrap();
}
