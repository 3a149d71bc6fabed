//! Conversion throughput, compared with a plain memcpy of the output bytes
//! measured in the same run.
//!
//! ```text
//! RAYON_NUM_THREADS=2 cargo run --release -p sparsetool-convert --example bench_convert
//! RAYON_NUM_THREADS=2 cargo run --release -p sparsetool-convert --example bench_convert -- FILE.mtx
//! ```
//!
//! With a Matrix Market file: only `coo_to_csr` on that file's entries (the
//! library figure that `sparsetool convert FILE --to csr --timings`'s convert
//! phase is compared with).
//!
//! - `coo_to_csr`: 10M random unsorted entries (with duplicates, as random
//!   entries have), 1M x 1M;
//! - `csr_to_{ell,hyb,jds,sell}` and back: 1M x 1M, 20 random columns per
//!   row (20M entries).
//!
//! Each figure is the median of 5 runs; results are checked (round trips)
//! so the optimiser cannot drop the work.

use std::hint::black_box;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sparsetool_convert::{
    coo_to_csr, csr_to_ell, csr_to_hyb, csr_to_jds, csr_to_sell, ell_to_csr, hyb_to_csr,
    jds_to_csr, sell_to_csr, HybWidth,
};
use sparsetool_formats::{Coo, Csr};

const REPS: usize = 5;

fn median<R>(mut f: impl FnMut() -> R) -> (Duration, R) {
    let mut times = Vec::with_capacity(REPS);
    let mut last = None;
    for _ in 0..REPS {
        let t = Instant::now();
        let r = black_box(f());
        times.push(t.elapsed());
        last = Some(r);
    }
    times.sort();
    (times[REPS / 2], last.expect("REPS > 0"))
}

/// Median times of copying `bytes` bytes: into a pre-faulted buffer, and
/// into a freshly allocated one (page faults included, as a conversion
/// that allocates its output pays them).
fn memcpy_time(bytes: usize) -> (Duration, Duration) {
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    let warm = median(|| {
        dst.copy_from_slice(black_box(&src));
        dst[bytes / 2]
    })
    .0;
    drop(dst);
    let fresh = median(|| black_box(&src).to_vec()).0;
    (warm, fresh)
}

fn report(name: &str, t: Duration, out_bytes: usize) {
    let (warm, fresh) = memcpy_time(out_bytes);
    println!(
        "{name:<28} {:>8.1} ms {:>6.2} GB/s out | memcpy {:>6.1} ms ({:.2}x) | alloc+memcpy {:>6.1} ms ({:.2}x)",
        t.as_secs_f64() * 1e3,
        out_bytes as f64 / t.as_secs_f64() / 1e9,
        warm.as_secs_f64() * 1e3,
        warm.as_secs_f64() / t.as_secs_f64(),
        fresh.as_secs_f64() * 1e3,
        fresh.as_secs_f64() / t.as_secs_f64(),
    );
}

fn main() {
    println!("rayon threads: {}", rayon::current_num_threads());
    if let Some(path) = std::env::args_os().nth(1) {
        let m = sparsetool_formats::mm::read_path::<f64, i32>(
            std::path::Path::new(&path),
            &Default::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let coo = m.coo;
        let (t, csr) = median(|| coo_to_csr(&coo));
        println!(
            "{}: {} entries -> {} after summing duplicates",
            std::path::Path::new(&path).display(),
            coo.nnz(),
            csr.nnz()
        );
        report(
            "coo_to_csr (file)",
            t,
            csr.nnz() * 12 + (csr.nrows() + 1) * 4,
        );
        return;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(42);

    // COO -> CSR.
    let (n, m) = (1_000_000usize, 10_000_000usize);
    let rows: Vec<i32> = (0..m).map(|_| rng.random_range(0..n as i32)).collect();
    let cols: Vec<i32> = (0..m).map(|_| rng.random_range(0..n as i32)).collect();
    let vals: Vec<f64> = (0..m).map(|_| rng.random::<f64>()).collect();
    let coo = Coo::try_from_parts(n, n, rows, cols, vals).expect("valid COO");
    let (t, csr) = median(|| coo_to_csr(&coo));
    let bytes = csr.nnz() * 12 + (n + 1) * 4;
    report("coo_to_csr (10M, 1M rows)", t, bytes);
    println!("  (nnz after summing duplicates: {})", csr.nnz());
    drop((coo, csr));

    // Uniform 20 per row.
    let per_row = 20usize;
    let mut col_idx = Vec::with_capacity(n * per_row);
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0i32);
    let mut buf = Vec::with_capacity(per_row);
    for _ in 0..n {
        buf.clear();
        while buf.len() < per_row {
            let c = rng.random_range(0..n as i32);
            if !buf.contains(&c) {
                buf.push(c);
            }
        }
        buf.sort_unstable();
        col_idx.extend_from_slice(&buf);
        row_ptr.push(col_idx.len() as i32);
    }
    let values: Vec<f64> = (0..col_idx.len()).map(|_| rng.random::<f64>()).collect();
    let a = Csr::try_from_parts(n, n, row_ptr, col_idx, values).expect("valid CSR");
    let nnz = a.nnz();
    println!("uniform matrix: {n} rows, {nnz} entries");

    let (t, ell) = median(|| csr_to_ell(&a, None, false).expect("ell"));
    report("csr_to_ell", t, ell.slots() * 12 + n * 4);
    let (t, back) = median(|| ell_to_csr(&ell));
    report("ell_to_csr", t, nnz * 12 + (n + 1) * 4);
    assert!(back == a);
    drop((ell, back));

    let (t, hyb) = median(|| csr_to_hyb(&a, HybWidth::Fixed(16)).expect("hyb"));
    report(
        "csr_to_hyb (width 16)",
        t,
        hyb.ell().slots() * 12 + n * 4 + hyb.coo().nnz() * 16,
    );
    let (t, back) = median(|| hyb_to_csr(&hyb));
    report("hyb_to_csr", t, nnz * 12 + (n + 1) * 4);
    assert!(back == a);
    drop((hyb, back));

    let (t, jds) = median(|| csr_to_jds(&a));
    report("csr_to_jds", t, nnz * 12 + n * 4 + jds.jd_ptr().len() * 4);
    let (t, back) = median(|| jds_to_csr(&jds));
    report("jds_to_csr", t, nnz * 12 + (n + 1) * 4);
    assert!(back == a);
    drop((jds, back));

    let (t, sell) = median(|| csr_to_sell(&a, 32, 1024).expect("sell"));
    report(
        "csr_to_sell (C=32, s=1024)",
        t,
        sell.slots() * 12 + n * 4 + sell.num_slices() * 8,
    );
    let (t, back) = median(|| sell_to_csr(&sell));
    report("sell_to_csr", t, nnz * 12 + (n + 1) * 4);
    assert!(back == a);
}
