//! Multi-GPU SpMV ([`DistributedMatrix`]): the N-part result equals the
//! one-GPU result (and the f64 CPU reference) within the usual tolerance, for
//! every format, f32 and f64, parts without ghost columns, empty parts, a
//! dense row, more parts than rows, 4 and 8 parts mapped onto 2 devices, and
//! every device of a machine of more (one and two parts per device).
//!
//! Tests that need one device print `SKIPPED: ...` and pass without one;
//! tests that need two print `SKIPPED: ...` with fewer. With
//! `SPARSETOOL_REQUIRE_GPUS=N` a machine with fewer than N devices fails
//! instead (scripts/gpu-dist.sh sets it to 2).

use sparsetool_analyze::partition::{Partition, PartitionOptions};
use sparsetool_convert::{from_csr, ConvertParams};
use sparsetool_fixtures::gen;
use sparsetool_formats::{Csr, FormatKind, Index, Scalar};
use sparsetool_gpu::distributed::{
    bench_distributed_scaling, device_count, spmv_distributed, DistBenchOptions, DistOptions,
    DistributedMatrix,
};
use sparsetool_gpu::reference::{rel_error, spmv_ref, tolerance};
use sparsetool_gpu::{spmv_gpu, GpuContext};

/// `Some(devices)` when at least `need` devices are present; otherwise prints
/// the skip line (or fails under `SPARSETOOL_REQUIRE_GPUS`).
fn devices(need: usize) -> Option<usize> {
    let n = device_count();
    if n >= need {
        return Some(n);
    }
    let required: usize = std::env::var("SPARSETOOL_REQUIRE_GPUS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(
        required < need,
        "SPARSETOOL_REQUIRE_GPUS={required} but {n} device(s) visible"
    );
    println!("SKIPPED: {n} CUDA device(s) visible, this test needs {need}");
    None
}

fn matrices<T: Scalar>() -> Vec<(&'static str, Csr<T, i32>)> {
    let block_diag = {
        // two 400-row blocks without coupling: cut in the middle, no ghosts
        let mut rp = vec![0i32];
        let (mut c, mut v) = (Vec::new(), Vec::new());
        for r in 0..800usize {
            let base = if r < 400 { 0 } else { 400 };
            for k in [0usize, 3, 17] {
                c.push(((base + (r + k) % 400) as i32).min(799));
                v.push(T::from_parts(1.0 + (r % 7) as f64, 0.0));
            }
            let row = c.len() - 3..c.len();
            let mut pairs: Vec<(i32, T)> = row.clone().map(|i| (c[i], v[i])).collect();
            pairs.sort_by_key(|p| p.0);
            pairs.dedup_by_key(|p| p.0);
            c.truncate(row.start);
            v.truncate(row.start);
            for (cc, vv) in pairs {
                c.push(cc);
                v.push(vv);
            }
            rp.push(c.len() as i32);
        }
        Csr::try_from_parts(800, 800, rp, c, v).expect("valid block-diagonal matrix")
    };
    vec![
        ("laplace2d", gen::laplace2d(60).expect("laplace2d")),
        ("uniform", gen::uniform(3000, 3000, 12, 7).expect("uniform")),
        (
            "powerlaw",
            gen::powerlaw(4000, 4000, 8, 2.0, 3).expect("powerlaw"),
        ),
        (
            "dense-row",
            gen::dense_row(2000, 2000, 4, 5).expect("dense row"),
        ),
        (
            "empty-rows",
            gen::empty_rows(2000, 1500, 6, 0.5, 9).expect("empty rows"),
        ),
        ("block-diagonal", block_diag),
        (
            "3x3",
            Csr::try_from_parts(
                3,
                3,
                vec![0, 2, 3, 5],
                vec![0, 2, 1, 0, 2],
                vec![T::one(); 5],
            )
            .expect("3x3"),
        ),
        ("wide", gen::uniform(500, 2000, 10, 4).expect("wide")),
    ]
}

/// One-GPU result, N-part result, CPU reference: both within tolerance.
fn check<T: Scalar, I: Index>(name: &str, a: &Csr<T, I>, opts: &DistOptions, ctx: &GpuContext) {
    let x: Vec<T> = sparsetool_analyze::bench::random_x(a.ncols(), 17);
    let y_ref = spmv_ref(a, &x);
    let tol = tolerance(sparsetool_formats::Precision::of::<T>(), a.max_row_len());
    let kind = opts.format.unwrap_or(FormatKind::Csr);
    let one = match from_csr(a, kind, &opts.params) {
        Ok(m) => spmv_gpu(ctx, &m.as_ref(), &x).expect("1-GPU SpMV"),
        Err(e) => panic!("{name}: {kind} does not build: {e}"),
    };
    let y = spmv_distributed(a, &x, opts)
        .unwrap_or_else(|e| panic!("{name} {kind} {} parts: {e}", opts.parts));
    let e1 = rel_error(&one, &y_ref);
    let en = rel_error(&y, &y_ref);
    let one_f64: Vec<f64> = one.iter().map(|v| v.re()).collect();
    let between = rel_error(&y, &one_f64);
    assert!(
        e1 <= tol && en <= tol && between <= 2.0 * tol,
        "{name} {kind} {} {} parts on {:?}: 1-GPU err {e1:.2e}, N-part err {en:.2e}, between {between:.2e} (tol {tol:.1e})",
        T::NAME,
        opts.parts,
        opts.devices
    );
}

fn every_format<T: Scalar>(parts: &[usize], devices: usize) {
    let ctx = GpuContext::new(0).expect("device 0");
    for (name, a) in matrices::<T>() {
        for kind in FormatKind::ALL {
            for &n in parts {
                let opts = DistOptions {
                    format: Some(kind),
                    params: ConvertParams {
                        allow_fill: true,
                        ..ConvertParams::default()
                    },
                    ..DistOptions::new(n, devices)
                };
                check(name, &a, &opts, &ctx);
            }
        }
    }
}

#[test]
fn every_format_f64_on_two_devices() {
    let Some(_) = devices(2) else { return };
    every_format::<f64>(&[2, 3], 2);
}

#[test]
fn every_format_f32_on_two_devices() {
    let Some(_) = devices(2) else { return };
    every_format::<f32>(&[2, 3], 2);
}

/// Every format across every device of a machine of three or more GPUs
/// (4 or 8), two parts per device (same-device copies and NCCL to several
/// peers in one exchange): the two-device tests above never make a device
/// exchange with more than one peer. One part per device, in the
/// recommended layouts, is `recommended_layouts_on_every_device`.
#[test]
fn every_format_on_every_device() {
    let Some(n) = devices(3) else { return };
    every_format::<f64>(&[2 * n], n);
}

#[test]
fn four_and_eight_parts_on_two_devices() {
    let Some(_) = devices(2) else { return };
    let ctx = GpuContext::new(0).expect("device 0");
    for (name, a) in matrices::<f64>() {
        for n in [4, 8] {
            check(name, &a, &DistOptions::new(n, 2), &ctx);
        }
    }
    for (name, a) in matrices::<f32>() {
        check(name, &a, &DistOptions::new(8, 2), &ctx);
    }
}

#[test]
fn recommended_layouts_on_every_device() {
    let Some(n) = devices(2) else { return };
    let ctx = GpuContext::new(0).expect("device 0");
    for (name, a) in matrices::<f64>() {
        check(name, &a, &DistOptions::new(n, n), &ctx);
        check(name, &a, &DistOptions::new(2 * n, n), &ctx);
    }
}

#[test]
fn more_parts_than_rows() {
    let Some(n) = devices(2) else { return };
    let ctx = GpuContext::new(0).expect("device 0");
    let a: Csr<f64, i32> =
        Csr::try_from_parts(3, 3, vec![0, 2, 3, 5], vec![0, 2, 1, 0, 2], vec![1.0; 5])
            .expect("3x3");
    for parts in [4, 8] {
        check("3x3", &a, &DistOptions::new(parts, n.min(2)), &ctx);
    }
}

#[test]
fn parts_on_one_device_exchange_by_copies() {
    // Runs on a single GPU: every transfer is a device-local copy.
    let Some(_) = devices(1) else { return };
    let ctx = GpuContext::new(0).expect("device 0");
    for (name, a) in matrices::<f64>() {
        for parts in [1, 2, 4, 8] {
            check(name, &a, &DistOptions::new(parts, 1), &ctx);
        }
    }
}

#[test]
fn block_diagonal_needs_no_exchange() {
    let Some(n) = devices(2) else { return };
    let (_, a) = matrices::<f64>()
        .into_iter()
        .find(|(n, _)| *n == "block-diagonal")
        .expect("in the list");
    let (rp, ci, o) = (a.row_ptr(), a.col_idx(), PartitionOptions::default());
    let p = Partition::with_bounds(800, 800, rp, ci, vec![0, 400, 800], &o).expect("partition");
    assert!(p.plan.transfers.is_empty());
    let mut m = DistributedMatrix::with_partition(&a, p, &DistOptions::new(2, n.min(2)))
        .expect("distribute");
    assert_eq!(m.nccl_bytes(), 0);
    let x: Vec<f64> = sparsetool_analyze::bench::random_x(800, 3);
    m.set_x(&x).expect("x");
    m.spmv().expect("spmv");
    m.synchronize().expect("sync");
    let y: Vec<f64> = m.gather_y().expect("y");
    assert!(rel_error(&y, &spmv_ref(&a, &x)) <= 1e-12);
}

#[test]
fn y_stays_on_the_devices_for_the_next_product() {
    let Some(n) = devices(1) else { return };
    let a: Csr<f64, i32> = gen::laplace2d(50).expect("laplace2d");
    let x: Vec<f64> = sparsetool_analyze::bench::random_x(a.ncols(), 5);
    let mut m = DistributedMatrix::new(&a, &DistOptions::new(4, n.min(2))).expect("distribute");
    m.set_x(&x).expect("x");
    m.spmv().expect("spmv 1");
    m.y_to_x().expect("y to x");
    m.spmv().expect("spmv 2");
    m.synchronize().expect("sync");
    let y: Vec<f64> = m.gather_y().expect("y");
    let mut ax = vec![0.0; a.nrows()];
    a.spmv(&x, &mut ax);
    assert!(rel_error(&y, &spmv_ref(&a, &ax)) <= 1e-12);
    // wrong lengths and types are errors, not panics
    assert!(m.set_x(&x[1..]).is_err());
    assert!(m.gather_y::<f32>().is_err());
}

/// A scaling run on one device (1 and 2 parts): every configuration
/// reports beside the same baselines, in the order asked for.
#[test]
fn scaling_runs_share_one_baseline() {
    let Some(_) = devices(1) else { return };
    let a: Csr<f64, i32> = gen::laplace2d(120).expect("laplace2d");
    let configs = [DistOptions::new(1, 1), DistOptions::new(2, 1)];
    let bopts = DistBenchOptions {
        reps: 3,
        warmup_ms: 1.0,
        baseline_formats: 2,
        equal_rows: true,
        ..DistBenchOptions::default()
    };
    let r = bench_distributed_scaling(&a, &configs, &bopts).expect("scaling run");
    assert!(r.failed.is_empty() && r.ok(), "{r:?}");
    assert_eq!(r.runs.iter().map(|x| x.parts).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(r.runs[0].single_gpu, r.runs[1].single_gpu);
    assert!(!r.runs[0].single_gpu.is_empty());
    assert!(r.runs[0].equal_rows_ms.is_none() && r.runs[1].equal_rows_ms.is_some());
    for run in &r.runs {
        assert!(run.dist_ms > 0.0 && run.speedup > 0.0, "{run:?}");
        assert_eq!(run.devices.len(), 1);
    }
}
