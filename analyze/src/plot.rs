//! Plots of a report: the row-length histogram and the padding-versus-width
//! curve, side by side.
//!
//! [`draw_report`] draws on any plotters [`DrawingBackend`] (tests use
//! `SVGBackend::with_string`); [`write_plot`] writes an `.svg` (SVG
//! backend) or a `.png` (bitmap backend, encoded with the `png` crate)
//! chosen by the extension.
//!
//! Text uses DejaVu Sans, embedded in the library (`assets/`, Bitstream
//! Vera licence, see `assets/LICENSE-DejaVuSans.txt`) and registered with
//! plotters' `ab_glyph` font support, so no system font (fontconfig) is
//! needed.

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{register_font, FontStyle};
use thiserror::Error;

use crate::report::AnalyzeReport;

/// The embedded font (DejaVu Sans).
const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Size of the image written by [`write_plot`], in pixels.
pub const PLOT_SIZE: (u32, u32) = (1400, 560);

/// What can go wrong while plotting.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PlotError {
    /// The output extension is neither `.svg` nor `.png`.
    #[error("cannot plot to `{0}`: the file name must end in .svg or .png")]
    Extension(String),
    /// The embedded font could not be registered.
    #[error("the embedded font could not be loaded")]
    Font,
    /// A drawing backend failed.
    #[error("drawing failed: {0}")]
    Draw(String),
    /// Writing the image failed.
    #[error("cannot write `{path}`: {source}")]
    Io {
        /// The output file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// PNG encoding failed.
    #[error("cannot encode `{path}` as PNG: {detail}")]
    Png {
        /// The output file.
        path: String,
        /// The encoder's message.
        detail: String,
    },
}

fn ensure_font() -> Result<(), PlotError> {
    static OK: OnceLock<bool> = OnceLock::new();
    if *OK.get_or_init(|| register_font("sans-serif", FontStyle::Normal, FONT).is_ok()) {
        Ok(())
    } else {
        Err(PlotError::Font)
    }
}

fn draw_err<E: std::fmt::Display>(e: E) -> PlotError {
    PlotError::Draw(e.to_string())
}

const FONT_FAMILY: &str = "sans-serif";
const SERIES_COLORS: [RGBColor; 3] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
];
const MARK_COLORS: [RGBColor; 4] = [
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
];

/// Draws the two panels (histogram, padding-versus-width curve) with a
/// title naming the matrix on `root`.
///
/// # Errors
/// [`PlotError::Font`] if the embedded font cannot be registered;
/// [`PlotError::Draw`] for backend errors.
pub fn draw_report<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &AnalyzeReport,
    name: &str,
) -> Result<(), PlotError> {
    ensure_font()?;
    root.fill(&WHITE).map_err(draw_err)?;
    let title = format!(
        "{name}: {} x {}, {} entries, recommended {}",
        report.nrows,
        report.ncols,
        report.nnz,
        report.recommendation.format.to_uppercase()
    );
    let body = root.titled(&title, (FONT_FAMILY, 24)).map_err(draw_err)?;
    let (w, _) = body.dim_in_pixel();
    let (left, right) = body.split_horizontally(w / 2);
    draw_histogram(&left, report)?;
    draw_curve(&right, report)?;
    root.present().map_err(draw_err)?;
    Ok(())
}

/// Compact axis label: 950, 2.5k, 10k, 1M, 100M, 2.2G; fractions kept
/// to one decimal below 10.
fn axis_label(v: f64) -> String {
    let a = v.abs();
    let trim = |x: f64, unit: &str| {
        let s = format!("{x:.1}");
        let s = s.strip_suffix(".0").unwrap_or(&s).to_string();
        format!("{s}{unit}")
    };
    if a >= 1e9 {
        trim(v / 1e9, "G")
    } else if a >= 1e6 {
        trim(v / 1e6, "M")
    } else if a >= 1e3 {
        trim(v / 1e3, "k")
    } else if a >= 10.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        trim(v, "")
    }
}

fn bin_label(report: &AnalyzeReport, i: usize) -> String {
    report
        .histogram
        .get(i)
        .map_or_else(String::new, |b| b.lo.to_string())
}

macro_rules! histogram_body {
    ($chart:ident, $report:ident, $base:expr, $ydesc:expr) => {{
        let n = $report.histogram.len();
        let exact = $report.histogram.iter().all(|b| b.lo == b.hi);
        $chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n.clamp(1, 16))
            .x_label_formatter(&|v: &SegmentValue<u32>| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    bin_label($report, *i as usize)
                }
                SegmentValue::Last => String::new(),
            })
            .x_desc(if exact {
                "row length"
            } else {
                "row length (bin lower bound; bin = [2^k, 2^(k+1) - 1])"
            })
            .y_desc($ydesc)
            .y_label_formatter(&|v: &f64| axis_label(*v))
            .label_style((FONT_FAMILY, 14))
            .axis_desc_style((FONT_FAMILY, 15))
            .draw()
            .map_err(draw_err)?;
        $chart
            // One rectangle per bin, in bin order (plotters' `Histogram`
            // collects through a HashMap, which made the SVG's element
            // order differ from run to run).
            .draw_series(
                $report
                    .histogram
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.rows > 0)
                    .map(|(i, b)| {
                        let x = i as u32;
                        let next = if i + 1 < n {
                            SegmentValue::Exact(x + 1)
                        } else {
                            SegmentValue::Last
                        };
                        let mut rect = Rectangle::new(
                            [(SegmentValue::Exact(x), b.rows as f64), (next, $base)],
                            SERIES_COLORS[0].filled(),
                        );
                        rect.set_margin(0, 0, 2, 2);
                        rect
                    }),
            )
            .map_err(draw_err)?;
    }};
}

/// A chart on `area` with the caption, margin and label areas both charts use.
fn chart_builder<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(caption, (FONT_FAMILY, 18))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(72);
    builder
}

fn draw_histogram<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    report: &AnalyzeReport,
) -> Result<(), PlotError> {
    let n = report.histogram.len().max(1) as u32;
    let max = report
        .histogram
        .iter()
        .map(|b| b.rows)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let min = report
        .histogram
        .iter()
        .map(|b| b.rows)
        .filter(|&r| r > 0)
        .min()
        .unwrap_or(1) as f64;
    let log = max / min >= 100.0;
    let mut builder = chart_builder(area, "row-length histogram");
    if log {
        let mut chart = builder
            .build_cartesian_2d(
                (0u32..n - 1).into_segmented(),
                (0.5f64..max * 2.0).log_scale(),
            )
            .map_err(draw_err)?;
        histogram_body!(chart, report, 0.5, "rows (log scale)");
    } else {
        let mut chart = builder
            .build_cartesian_2d((0u32..n - 1).into_segmented(), 0f64..max * 1.1)
            .map_err(draw_err)?;
        histogram_body!(chart, report, 0.0, "rows");
    }
    Ok(())
}

/// Vertical marks: (width, label), widths merged when equal.
fn marks(report: &AnalyzeReport) -> Vec<(u64, String)> {
    let mut items: Vec<(u64, &str)> = vec![(report.formats.ell.ell_width, "ELL")];
    for r in &report.hyb_rules {
        let label = match r.rule {
            "model" => "HYB model",
            "cusp" => "CUSP",
            "ginkgo" => "Ginkgo",
            other => other,
        };
        items.push((r.width, label));
    }
    let mut out: Vec<(u64, String)> = Vec::new();
    for (w, l) in items {
        match out.iter_mut().find(|(ow, _)| *ow == w) {
            Some((_, ol)) => {
                ol.push_str(", ");
                ol.push_str(l);
            }
            None => out.push((w, l.to_string())),
        }
    }
    out.sort_by_key(|(w, _)| *w);
    out.into_iter()
        .map(|(w, l)| (w, format!("{l} = {w}")))
        .collect()
}

macro_rules! curve_body {
    ($chart:ident, $report:ident, $xmin:expr, $xmax:expr, $ytop:expr, $xdesc:expr) => {{
        $chart
            .configure_mesh()
            .x_desc($xdesc)
            .y_desc("slots or entries (log scale)")
            .x_label_formatter(&|v: &f64| axis_label(*v))
            .y_label_formatter(&|v: &f64| axis_label(*v))
            .label_style((FONT_FAMILY, 14))
            .axis_desc_style((FONT_FAMILY, 15))
            .draw()
            .map_err(draw_err)?;
        let pts = &$report.padding_curve;
        let series: [(&str, Box<dyn Fn(&crate::rules::CurvePoint) -> u64>); 3] = [
            ("ELL slots (nrows x width)", Box::new(|p| p.ell_slots)),
            ("padding slots", Box::new(|p| p.padding_slots)),
            ("entries beyond width (to COO)", Box::new(|p| p.coo_entries)),
        ];
        for (k, (label, get)) in series.iter().enumerate() {
            let color = SERIES_COLORS[k];
            let data: Vec<(f64, f64)> = pts
                .iter()
                .filter(|p| p.width as f64 >= $xmin && get(p) >= 1)
                .map(|p| (p.width as f64, get(p) as f64))
                .collect();
            $chart
                .draw_series(LineSeries::new(data, color.stroke_width(2)))
                .map_err(draw_err)?
                .label(*label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        let span = ($xmax as f64).max(1.0);
        for (j, (w, label)) in marks($report).into_iter().enumerate() {
            let color = MARK_COLORS[j % MARK_COLORS.len()];
            let x = (w as f64).max($xmin);
            $chart
                .draw_series(LineSeries::new(
                    vec![(x, 1.0), (x, $ytop)],
                    color.stroke_width(1),
                ))
                .map_err(draw_err)?;
            let right_half = if $xmin > 0.0 {
                x.ln() > span.ln() * 0.55
            } else {
                x > span * 0.55
            };
            let (dx, pos) = if right_half {
                (-5, Pos::new(HPos::Right, VPos::Top))
            } else {
                (5, Pos::new(HPos::Left, VPos::Top))
            };
            let style = TextStyle::from((FONT_FAMILY, 14).into_font())
                .color(&color)
                .pos(pos);
            let text = if w == 0 {
                format!("{label} (all COO)")
            } else {
                label
            };
            $chart
                .plotting_area()
                .draw(
                    &(EmptyElement::at((x, $ytop))
                        + Text::new(text, (dx, 6 + 18 * j as i32), style)),
                )
                .map_err(draw_err)?;
        }
        $chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font((FONT_FAMILY, 14))
            .draw()
            .map_err(draw_err)?;
    }};
}

fn draw_curve<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    report: &AnalyzeReport,
) -> Result<(), PlotError> {
    let max_w = report.padding_curve.last().map_or(1, |p| p.width).max(1);
    let top = report
        .padding_curve
        .iter()
        .map(|p| p.ell_slots.max(p.coo_entries))
        .max()
        .unwrap_or(1)
        .max(10) as f64;
    let ytop = top * 30.0;
    let mut builder = chart_builder(area, "padding versus ELL width");
    if max_w <= 64 {
        let xmax = max_w as f64 + 0.5;
        let mut chart = builder
            .build_cartesian_2d(-0.5f64..xmax, (0.5f64..ytop).log_scale())
            .map_err(draw_err)?;
        curve_body!(chart, report, 0.0, xmax, ytop, "ELL width");
    } else {
        let xmax = max_w as f64 * 1.3;
        let mut chart = builder
            .build_cartesian_2d((1f64..xmax).log_scale(), (0.5f64..ytop).log_scale())
            .map_err(draw_err)?;
        curve_body!(
            chart,
            report,
            1.0,
            xmax,
            ytop,
            "ELL width (log scale; width 0 drawn at 1)"
        );
    }
    Ok(())
}

/// Writes the plot of `report` to `path`: SVG for `.svg`, PNG for `.png`
/// (case-insensitive), [`PLOT_SIZE`] pixels.
///
/// # Errors
/// [`PlotError::Extension`] for another extension; drawing, encoding and
/// I/O errors.
pub fn write_plot(path: &Path, report: &AnalyzeReport, name: &str) -> Result<(), PlotError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let shown = path.display().to_string();
    match ext.as_deref() {
        Some("svg") => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, PLOT_SIZE).into_drawing_area();
                draw_report(&root, report, name)?;
            }
            std::fs::write(path, svg).map_err(|source| PlotError::Io {
                path: shown,
                source,
            })
        }
        Some("png") => {
            let (w, h) = PLOT_SIZE;
            let mut buf = vec![0u8; (w * h * 3) as usize];
            {
                let root = BitMapBackend::with_buffer(&mut buf, PLOT_SIZE).into_drawing_area();
                draw_report(&root, report, name)?;
            }
            let file = std::fs::File::create(path).map_err(|source| PlotError::Io {
                path: shown.clone(),
                source,
            })?;
            let png_err = |e: png::EncodingError| PlotError::Png {
                path: shown.clone(),
                detail: e.to_string(),
            };
            let mut enc = png::Encoder::new(std::io::BufWriter::new(file), w, h);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            let mut writer = enc.write_header().map_err(png_err)?;
            writer.write_image_data(&buf).map_err(png_err)?;
            writer.finish().map_err(png_err)
        }
        _ => Err(PlotError::Extension(shown)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_labels_are_compact() {
        assert_eq!(axis_label(1.0), "1");
        assert_eq!(axis_label(0.5), "0.5");
        assert_eq!(axis_label(2500.0), "2.5k");
        assert_eq!(axis_label(1e8), "100M");
        assert_eq!(axis_label(2.2e9), "2.2G");
    }
}
