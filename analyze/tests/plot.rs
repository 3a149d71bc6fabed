//! Plot rendering (SVG to a string, PNG to a file): what the picture says
//! and shows, not only that it is drawn.

use plotters::prelude::*;
use sparsetool_analyze::plot::PLOT_SIZE;
use sparsetool_analyze::{draw_report, write_plot, AnalyzeOptions, AnalyzeReport, RowLengths};
use sparsetool_fixtures::seed;
use sparsetool_formats::Csr;

fn report_of(a: &Csr<f64, i32>) -> AnalyzeReport {
    AnalyzeReport::new(
        &RowLengths::from_csr(a).unwrap(),
        &AnalyzeOptions::default(),
    )
}

fn seed_d_report() -> AnalyzeReport {
    report_of(&seed::seed_d().unwrap())
}

fn svg_of(r: &AnalyzeReport, name: &str) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, PLOT_SIZE).into_drawing_area();
        draw_report(&root, r, name).unwrap();
    }
    svg
}

/// The histogram's bars: rectangles filled with the first series colour.
const BAR_FILL: &str = "fill=\"#1F77B4\"";

fn bars(svg: &str) -> usize {
    svg.lines()
        .filter(|l| l.contains("<rect") && l.contains(BAR_FILL))
        .count()
}

fn sorted_lines(svg: &str) -> Vec<&str> {
    let mut v: Vec<&str> = svg.lines().collect();
    v.sort_unstable();
    v
}

#[test]
fn svg_names_the_matrix_axes_recommendation_and_marks() {
    let r = seed_d_report();
    let svg = svg_of(&r, "seed D");
    let title = format!(
        "seed D: 1000 x 1000, {} entries, recommended {}",
        r.nnz,
        r.recommendation.format.to_uppercase()
    );
    for text in [
        title.as_str(),
        // panels and axes
        "row-length histogram",
        "rows (log scale)",
        "row length",
        "padding versus ELL width",
        "ELL width (log scale; width 0 drawn at 1)",
        "slots or entries (log scale)",
        // legend and width marks (the longest row is 200)
        "ELL slots (nrows x width)",
        "padding slots",
        "entries beyond width (to COO)",
        "ELL = 200",
        "HYB model",
        "CUSP",
        "Ginkgo",
    ] {
        assert!(svg.contains(text), "missing {text:?}");
    }
    // One bar per non-empty histogram bin of the report.
    let filled = r.histogram.iter().filter(|b| b.rows > 0).count();
    assert!(filled >= 2, "{:?}", r.histogram);
    assert_eq!(bars(&svg), filled);
}

#[test]
fn svg_of_another_matrix_differs() {
    let d = svg_of(&seed_d_report(), "seed D");
    let b = seed::B.csr::<f64, i32>().unwrap();
    let r = report_of(&b);
    let svg = svg_of(&r, "seed B");
    assert!(svg != d, "the same picture for another matrix");
    assert!(
        svg.contains("seed B: 4 x 4, 8 entries, recommended"),
        "title"
    );
    assert!(!svg.contains("seed D"));
    // Rows of 1, 2 and 3 entries: few rows per bin, a linear axis.
    assert!(svg.contains("row length") && !svg.contains("rows (log scale)"));
    assert!(svg.contains("ELL = 3"));
    let filled = r.histogram.iter().filter(|b| b.rows > 0).count();
    assert_eq!(bars(&svg), filled);
    // The same report and name draw the same elements (plotters' histogram
    // keeps its bins in a HashMap, so the bars come out in varying order).
    assert!(
        sorted_lines(&svg) == sorted_lines(&svg_of(&r, "seed B")),
        "two drawings differ"
    );
}

#[test]
fn write_plot_picks_backend_by_extension() {
    let r = seed_d_report();
    let dir = tempfile::tempdir().unwrap();
    let png = dir.path().join("d.png");
    write_plot(&png, &r, "seed D").unwrap();
    let decoder = png::Decoder::new(std::fs::File::open(&png).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buf).unwrap();
    assert_eq!((frame.width, frame.height), PLOT_SIZE);
    assert_eq!(frame.color_type, png::ColorType::Rgb);
    assert_eq!(frame.bit_depth, png::BitDepth::Eight);
    let pixels: Vec<&[u8]> = buf[..frame.buffer_size()].chunks(3).collect();
    // A white page with drawing on it, the bars in the series colour.
    let white = pixels.iter().filter(|p| **p == [255, 255, 255]).count();
    let bar = pixels.iter().filter(|p| **p == [31, 119, 180]).count();
    let n = pixels.len();
    assert!(white > n / 2, "{white} of {n} pixels white");
    assert!(white < n - n / 50, "{white} of {n} pixels white: blank?");
    assert!(bar > 100, "{bar} bar pixels");

    let svg = dir.path().join("d.SVG");
    write_plot(&svg, &r, "seed D").unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "not an SVG file");
    assert!(
        sorted_lines(&text) == sorted_lines(&svg_of(&r, "seed D")),
        "the file is not the drawn SVG"
    );
    let err = write_plot(&dir.path().join("d.jpg"), &r, "seed D").unwrap_err();
    assert!(err.to_string().contains(".svg or .png"), "{err}");
    assert!(!dir.path().join("d.jpg").exists());
}

#[test]
fn empty_matrix_plots() {
    let rl = RowLengths {
        nrows: 0,
        ncols: 0,
        rows: vec![].into(),
        cols: vec![].into(),
        far: Default::default(),
        spans: Default::default(),
    };
    let r = AnalyzeReport::new(&rl, &AnalyzeOptions::default());
    let svg = svg_of(&r, "empty");
    assert!(svg.contains("empty: 0 x 0, 0 entries"), "title");
    assert_eq!(bars(&svg), 0);
}
