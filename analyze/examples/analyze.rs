//! Analyses a Matrix Market file: `cargo run -p sparsetool-analyze --example
//! analyze -- FILE.mtx [PLOT.png|PLOT.svg] [--json]`.
//!
//! Row lengths come from the streaming pass; when it cannot handle the file
//! (array format, lenient quirks) the matrix is read in full instead.

use std::path::Path;
use std::process::ExitCode;

use sparsetool_analyze::{render_text, write_plot, AnalyzeOptions, AnalyzeReport, RowLengths};
use sparsetool_formats::mm::{read_path, ReadOptions};

fn row_lengths(path: &Path) -> Result<RowLengths, Box<dyn std::error::Error>> {
    match RowLengths::from_mm_path(path) {
        Ok(rl) => Ok(rl),
        Err(e) if e.needs_full_read() => {
            eprintln!("note: {e}");
            let opts = ReadOptions {
                lenient: true,
                ..ReadOptions::default()
            };
            let m = read_path::<f64, i64>(path, &opts)?;
            let (rows, cols) = (m.coo.rows(), m.coo.cols());
            Ok(RowLengths::from_coords(
                m.coo.nrows(),
                m.coo.ncols(),
                rows,
                cols,
            )?)
        }
        Err(e) => Err(e.into()),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let files: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let Some(file) = files.first() else {
        eprintln!("usage: analyze FILE.mtx [PLOT.png|PLOT.svg] [--json]");
        return ExitCode::from(1);
    };
    let path = Path::new(file.as_str());
    let rl = match row_lengths(path) {
        Ok(rl) => rl,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let report = AnalyzeReport::new(&rl, &AnalyzeOptions::default());
    let name = path
        .file_name()
        .map_or_else(|| file.to_string(), |n| n.to_string_lossy().into_owned());
    if json {
        match report.to_json() {
            Ok(j) => println!("{j}"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        print!("{}", render_text(&report, &name));
    }
    if let Some(out) = files.get(1) {
        if let Err(e) = write_plot(Path::new(out.as_str()), &report, &name) {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}
