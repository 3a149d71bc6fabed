//! Times loading a CSR `.spb` (memory-map, checksums, full structural
//! validation, zero-copy view) against parsing the same matrix from `.mtx`,
//! and against reading the `.spb` bytes from the page cache.
//!
//! `cargo run --release -p sparsetool-formats --example spb_load -- M.spb M.mtx [reps]`
//! (make both with `sparsetool gen ... -o M.mtx` and `sparsetool convert M.mtx --to csr -o M.spb`).

use std::io::Read;
use std::path::Path;
use std::time::Instant;

use sparsetool_formats::binary::{SpbFile, SpbOptions};
use sparsetool_formats::mm::{read_path, ReadOptions};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    f(); // warm the page cache
    median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        return Err("usage: spb_load M.spb M.mtx [reps]".into());
    }
    let (spb, mtx) = (Path::new(&args[1]), Path::new(&args[2]));
    let reps: usize = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(5);
    let size = std::fs::metadata(spb)?.len() as f64;
    let load = |verify: bool| {
        move || {
            let f = SpbFile::open(
                spb,
                &SpbOptions {
                    verify_checksums: verify,
                },
            )
            .expect("valid .spb");
            let v = f.csr_view::<f64, i32>().expect("valid CSR");
            std::hint::black_box(v.values.len());
        }
    };
    let full = time(reps, load(true));
    let nochk = time(reps, load(false));
    let mut buf = Vec::new();
    let raw = time(reps, || {
        buf.clear();
        std::fs::File::open(spb)
            .and_then(|mut f| f.read_to_end(&mut buf))
            .expect("read");
        std::hint::black_box(buf.len());
    });
    let parse = time(reps.min(3), || {
        let m = read_path::<f64, i32>(mtx, &ReadOptions::default()).expect("valid .mtx");
        std::hint::black_box(m.coo.nnz());
    });
    let f = SpbFile::open(spb, &SpbOptions::default())?;
    let nnz = f.csr_view::<f64, i32>()?.values.len();
    println!(
        "matrix: {nnz} entries, .spb {:.0} MB, {} rayon threads",
        size / 1e6,
        rayon::current_num_threads()
    );
    println!("parse .mtx -> COO:                         {parse:.4} s");
    println!(
        "load .spb, full validation (checksums):    {full:.4} s  ({:.1}x faster than parsing)",
        parse / full
    );
    println!(
        "load .spb, --no-verify-checksums:          {nochk:.4} s  ({:.1}x faster than parsing)",
        parse / nochk
    );
    println!(
        "read the .spb bytes (page cache, 1 thread): {raw:.4} s  ({:.0} MB/s)",
        size / raw / 1e6
    );
    Ok(())
}
