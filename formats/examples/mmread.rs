//! Reads a Matrix Market file into COO and reports the time.
//!
//! ```text
//! cargo run --release -p sparsetool-formats --example mmread -- FILE [--lenient] [--i64]
//! ```
//! Prints `read: N.NNN s` and the number of entries. Index type i32 unless
//! the header needs more (or `--i64`). Threads: `RAYON_NUM_THREADS`.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use sparsetool_formats::mm::{read_header_path_with, read_path, ReadOptions};
use sparsetool_formats::{fits_index, Index};

fn run<I: Index>(path: &Path, opts: &ReadOptions) -> Result<(), String> {
    let t = Instant::now();
    let m = read_path::<f64, I>(path, opts).map_err(|e| e.to_string())?;
    let dt = t.elapsed().as_secs_f64();
    for w in &m.warnings {
        eprintln!("warning: {}: {w}", path.display());
    }
    println!("read: {dt:.3} s");
    println!(
        "nnz: {} ({} x {}, index {})",
        m.coo.nnz(),
        m.coo.nrows(),
        m.coo.ncols(),
        I::NAME
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: mmread FILE [--lenient] [--i64]");
        return ExitCode::from(1);
    };
    let opts = ReadOptions {
        lenient: args.iter().any(|a| a == "--lenient"),
        ..Default::default()
    };
    let path = Path::new(file);
    // The header alone (stdin can be read only once: use i64 there).
    let t = Instant::now();
    let wide = args.iter().any(|a| a == "--i64")
        || file == "-"
        || match read_header_path_with(path, &opts) {
            Ok((h, _)) => !fits_index::<i32>(h.nrows, h.ncols, h.nnz_expanded_max()),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        };
    eprintln!("header: {:.3} ms", t.elapsed().as_secs_f64() * 1e3);
    let r = if wide {
        run::<i64>(path, &opts)
    } else {
        run::<i32>(path, &opts)
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
