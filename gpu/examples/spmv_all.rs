//! Multiplies a Matrix Market file by a random vector with every GPU kernel
//! and prints each kernel's error against the f64 CPU reference. Without a
//! CUDA device it says so and exits with status 2.
//!
//! `cargo run --release -p sparsetool-gpu --example spmv_all -- m.mtx`

use std::process::ExitCode;

use sparsetool_convert::{
    coo_to_csr, csr_to_coo, csr_to_ell, csr_to_hyb, csr_to_jds, csr_to_sell, HybWidth,
};
use sparsetool_formats::mm::{read_path, ReadOptions};
use sparsetool_formats::MatrixRef;
use sparsetool_gpu::reference::{rel_error, spmv_ref};
use sparsetool_gpu::{spmv_gpu_with, GpuContext, GpuKernel};

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn run() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: spmv_all FILE.mtx")?;
    let m = read_path::<f32, i32>(path.as_ref(), &ReadOptions::default())?;
    let csr = coo_to_csr(&m.coo);
    let ctx = match GpuContext::new(0) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("no GPU: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let x: Vec<f32> = (0..csr.ncols())
        .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    let y_ref = spmv_ref(&csr, &x);
    let coo = csr_to_coo(&csr);
    let ell = csr_to_ell(&csr, None, true)?;
    let hyb = csr_to_hyb(&csr, HybWidth::Auto)?;
    let jds = csr_to_jds(&csr);
    let sell = csr_to_sell(&csr, 32, 1024)?;
    let csc = sparsetool_convert::csr_to_csc(&csr);
    println!(
        "{} on {}: {} x {}, {} entries",
        path,
        ctx.device_name(),
        csr.nrows(),
        csr.ncols(),
        csr.nnz()
    );
    for k in GpuKernel::ALL {
        let a = match k.format() {
            sparsetool_formats::FormatKind::Coo => MatrixRef::Coo(&coo),
            sparsetool_formats::FormatKind::Csr => MatrixRef::Csr(&csr),
            sparsetool_formats::FormatKind::Ell => MatrixRef::Ell(&ell),
            sparsetool_formats::FormatKind::Hyb => MatrixRef::Hyb(&hyb),
            sparsetool_formats::FormatKind::Jds => MatrixRef::Jds(&jds),
            sparsetool_formats::FormatKind::Sell => MatrixRef::Sell(&sell),
            sparsetool_formats::FormatKind::Csc => MatrixRef::Csc(&csc),
        };
        let y = match spmv_gpu_with(&ctx, &a, &x, k) {
            Ok(y) => y,
            // sell-u16 on a matrix whose columns do not fit its offsets
            Err(e @ sparsetool_gpu::GpuError::NotApplicable { .. }) => {
                println!("  {:14} skipped: {e}", k.name());
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        println!("  {:14} rel_error {:.2e}", k.name(), rel_error(&y, &y_ref));
    }
    Ok(ExitCode::SUCCESS)
}
