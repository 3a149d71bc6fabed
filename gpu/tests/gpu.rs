//! GPU tests, written once and run over every kernel x {f32, f64} x every test
//! matrix (seed examples, empty rows, empty matrices, a single dense row,
//! random and power-law-like matrices, and every `.mtx` / `.mtx.gz` under
//! `fixtures/matrices/real/`, found from the current directory or
//! `SPARSETOOL_FIXTURES`).
//!
//! Without a CUDA device each test prints `SKIPPED: no CUDA device` and
//! passes, unless `SPARSETOOL_REQUIRE_GPU=1`, where it fails instead.
//! `SPARSETOOL_TEST_KERNELS=jds,sell` runs the every-kernel tests over the
//! kernels whose names start with one of those words only (and says so),
//! for a kernel's change when device time is short.

use std::path::{Path, PathBuf};

use sparsetool_analyze::bench::{random_x, SplitMix64};
use sparsetool_convert::HybWidth;
use sparsetool_convert::{from_csr, transposed_csr, ConvertParams};
use sparsetool_fixtures::seed;
use sparsetool_formats::{
    Complex32, Complex64, Coo, Csr, Ell, FormatKind, Index, Jds, MatrixRef, Precision, Scalar, Sell,
};
use sparsetool_gpu::layout;
use sparsetool_gpu::reference::{rel_error, spmv_ref, tolerance};
use sparsetool_gpu::{
    bench, cusparse_available, driver_available, spmv_cusparse, spmv_gpu, spmv_gpu_transpose,
    spmv_gpu_transpose_with, spmv_gpu_with, spmv_gpu_with_offsets, BenchOptions, CusparseAlg,
    GpuContext, GpuError, GpuKernel, Offsets,
};

fn require_gpu() -> bool {
    std::env::var("SPARSETOOL_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// The device, or `None` after printing the skip line.
fn ctx() -> Option<GpuContext> {
    match GpuContext::new(0) {
        Ok(c) => Some(c),
        Err(e) => {
            assert!(
                !require_gpu(),
                "SPARSETOOL_REQUIRE_GPU=1 but no device: {e}"
            );
            println!("SKIPPED: {e}");
            None
        }
    }
}

#[test]
fn context_without_driver_is_an_error_not_a_panic() {
    let r = std::panic::catch_unwind(|| GpuContext::new(0).map(|_| ()));
    let r = r.expect("GpuContext::new panicked");
    if !driver_available() {
        assert!(matches!(r, Err(GpuError::NoDevice(_))), "{r:?}");
        let msg = r.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("libcuda"), "{msg}");
    }
    // a device ordinal that cannot exist is an error on any machine
    let far = std::panic::catch_unwind(|| GpuContext::new(4096).map(|_| ()));
    assert!(matches!(far, Ok(Err(GpuError::NoDevice(_)))), "{far:?}");
}

#[test]
fn device_identity_matches_the_context() {
    let probed = sparsetool_gpu::probe_device(0);
    let Some(ctx) = ctx() else {
        assert!(probed.is_none(), "a device without a context: {probed:?}");
        return;
    };
    let info = ctx.device_info();
    assert_eq!(probed.as_ref(), Some(&info));
    assert!(!info.name.is_empty());
    // what `calibrate` stores a profile under: GPU-8-4-4-4-12 hex digits
    let uuid = info.uuid.expect("the driver reports a UUID");
    let groups: Vec<usize> = uuid
        .trim_start_matches("GPU-")
        .split('-')
        .map(str::len)
        .collect();
    assert!(uuid.starts_with("GPU-"), "{uuid}");
    assert_eq!(groups, [8, 4, 4, 4, 12], "{uuid}");
    assert!(sparsetool_gpu::probe_device(4096).is_none());
}

// ---------------------------------------------------------------- matrices

fn splitmix(seed: u64) -> impl FnMut() -> u64 {
    let mut r = SplitMix64::new(seed);
    move || r.next_u64()
}

fn unit(r: &mut impl FnMut() -> u64) -> f64 {
    (r() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

fn csr(n: usize, m: usize, rp: Vec<i32>, c: Vec<i32>, v: Vec<f64>) -> Csr<f64, i32> {
    Csr::try_from_parts(n, m, rp, c, v).expect("valid test matrix")
}

/// Rows with lengths from `len(i)`, random distinct columns, random values.
fn by_lengths(
    nrows: usize,
    ncols: usize,
    seed: u64,
    len: impl Fn(usize, u64) -> usize,
) -> Csr<f64, i32> {
    let mut r = splitmix(seed);
    let (mut rp, mut col, mut val) = (vec![0i32], Vec::new(), Vec::new());
    for i in 0..nrows {
        let l = len(i, r()).min(ncols);
        let mut cs: Vec<i32> = if l * 2 > ncols {
            (0..ncols as i32)
                .filter(|_| (r() % ncols as u64) < l as u64 * 2)
                .take(l)
                .collect()
        } else {
            let mut s = std::collections::BTreeSet::new();
            while s.len() < l {
                s.insert((r() % ncols as u64) as i32);
            }
            s.into_iter().collect()
        };
        cs.sort_unstable();
        for c in cs {
            col.push(c);
            val.push(unit(&mut r));
        }
        rp.push(col.len() as i32);
    }
    csr(nrows, ncols, rp, col, val)
}

fn builtin_matrices() -> Vec<(String, Csr<f64, i32>)> {
    let mut v = vec![
        // The worked examples in fixtures/src/seed.rs.
        ("seed-A".into(), seed::A.csr().unwrap()),
        ("seed-B".into(), seed::B.csr().unwrap()),
        ("seed-C".into(), seed::C.csr().unwrap()),
        ("empty-0x0".into(), Csr::empty(0, 0)),
        ("empty-5x7".into(), Csr::empty(5, 7)),
        ("empty-1x0".into(), Csr::empty(1, 0)),
        (
            "one-entry".into(),
            csr(1, 1, vec![0, 1], vec![0], vec![2.5]),
        ),
        (
            "dense-row".into(),
            // one full row of 5000 among short rows and empty rows
            by_lengths(300, 5000, 11, |i, r| {
                if i == 150 {
                    5000
                } else if i % 3 == 0 {
                    0
                } else {
                    (r % 4) as usize
                }
            }),
        ),
        (
            "empty-rows".into(),
            by_lengths(1000, 800, 12, |i, r| {
                if i % 2 == 0 {
                    0
                } else {
                    1 + (r % 5) as usize
                }
            }),
        ),
        ("uniform-16".into(), by_lengths(5000, 5000, 13, |_, _| 16)),
        (
            "random".into(),
            by_lengths(3001, 2003, 14, |_, r| (r % 12) as usize),
        ),
        (
            "power-law".into(),
            by_lengths(20_000, 20_000, 15, |_, r| {
                let u = ((r >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
                ((u.powf(-1.0 / 1.2)) as usize).min(4000)
            }),
        ),
        (
            "long-rows".into(),
            by_lengths(40, 100_000, 16, |i, _| 300 * (i + 1)),
        ),
        (
            // no cap on the row length: rows of up to all 30000 columns
            // (the JDS and SELL tails split them over many threads)
            "power-law-uncapped".into(),
            by_lengths(30_000, 30_000, 18, |_, r| {
                let u = ((r >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
                ((u.powf(-1.0 / 1.1)) as usize).min(30_000)
            }),
        ),
    ];
    // banded, 100k columns: sell-u16's slice bases beyond 16 bits
    let n = 100_000usize;
    let (mut rp, mut ci, mut va) = (vec![0i32], Vec::new(), Vec::new());
    for i in 0..n {
        for j in i.saturating_sub(300)..(i + 3).min(n) {
            if j + 300 == i || j + 7 == i || j >= i {
                ci.push(j as i32);
                va.push(1.0 + ((i * 7 + j) % 11) as f64 / 8.0);
            }
        }
        rp.push(ci.len() as i32);
    }
    v.push(("band-100k".into(), csr(n, n, rp, ci, va)));
    // banded, 140k columns, and every 5000th row 7 entries more, 20 000
    // columns apart: sorted by length, those 14 rows lead the first group
    // of 32, whose columns (all walked: rows of at most 10 entries fit the
    // cap) lie beyond 16-bit offsets, so its rows read the 32-bit indices;
    // every other group fits (jds-u16's groups of both kinds in one
    // product, and a warp of ell-u16's first group without a base)
    let (n, m) = (70_000usize, 140_000usize);
    let (mut rp, mut ci, mut va) = (vec![0i32], Vec::new(), Vec::new());
    for i in 0..n {
        let mut cols: Vec<usize> = (i..i + 3).collect();
        if i % 5000 == 0 {
            cols.extend((0..7).map(|k| k * 20_000));
            cols.sort_unstable();
            cols.dedup();
        }
        for j in cols {
            ci.push(j as i32);
            va.push(1.0 + ((i * 5 + j) % 13) as f64 / 8.0);
        }
        rp.push(ci.len() as i32);
    }
    let far = csr(n, m, rp, ci, va);
    // the claim above, checked on the layout the kernel reads
    let j = sparsetool_convert::csr_to_jds(&far);
    let narrow = jds_u16_of(&j).expect("jds-u16 applies");
    assert_eq!(narrow.base[0], -1, "band-far-rows: first group");
    assert!(narrow.base[1..].iter().all(|&b| b >= 0), "band-far-rows");
    v.push(("band-far-rows".into(), far));
    // 2D 5-point Laplacian on a 70x70 grid
    v.push((
        "laplace2d-70".into(),
        sparsetool_fixtures::gen::laplace2d(70).expect("laplace2d"),
    ));
    // a circuit: rows of 1 to 4 entries at random over 300k rows, whose
    // sort by length interleaves (JDS's and fully sorted SELL's main units
    // go in window order: three windows), and 8 supply rows of 300 entries
    // (the tails' bands; longer ones would pad ELL beyond the host's memory)
    v.push((
        "circuit-300k".into(),
        by_lengths(300_000, 300_000, 19, |i, r| {
            if i % 37_501 == 18_000 {
                300
            } else {
                1 + (r % 4) as usize
            }
        }),
    ));
    // long runs of empty rows (more than 32 rows inside one 32-entry tile)
    v.push((
        "empty-runs".into(),
        by_lengths(20_000, 300, 17, |i, r| {
            if i % 97 == 0 {
                1 + (r % 40) as usize
            } else {
                0
            }
        }),
    ));
    v
}

fn fixtures_dir() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("SPARSETOOL_FIXTURES") {
        return Some(PathBuf::from(p));
    }
    ["fixtures/matrices/real", "../fixtures/matrices/real"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_dir())
}

fn real_matrices() -> Vec<(String, Csr<f64, i32>)> {
    let Some(dir) = fixtures_dir() else {
        println!("note: no fixtures/matrices/real found (set SPARSETOOL_FIXTURES)");
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| {
        let n = p.to_string_lossy();
        n.ends_with(".mtx") || n.ends_with(".mtx.gz")
    });
    files.sort();
    let mut out = Vec::new();
    for p in files {
        match read_mtx(&p) {
            Ok(a) => out.push((
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                a,
            )),
            Err(e) => println!("note: {} not used: {e}", p.display()),
        }
    }
    out
}

fn read_mtx(p: &Path) -> Result<Csr<f64, i32>, String> {
    let m = sparsetool_formats::mm::read_path::<f64, i32>(p, &Default::default())
        .map_err(|e| e.to_string())?;
    Ok(sparsetool_convert::coo_to_csr(&m.coo))
}

fn all_matrices() -> Vec<(String, Csr<f64, i32>)> {
    let mut v = builtin_matrices();
    v.extend(real_matrices());
    v
}

fn cast<T: Scalar, I: Index>(a: &Csr<f64, i32>) -> Csr<T, I> {
    let rp = a
        .row_ptr()
        .iter()
        .map(|&v| I::from_usize_unchecked(v as usize))
        .collect();
    let ci = a
        .col_idx()
        .iter()
        .map(|&v| I::from_usize_unchecked(v as usize))
        .collect();
    // complex values get an imaginary part of their own
    let vals = a
        .values()
        .iter()
        .map(|&v| T::from_parts(v, 0.5 - 0.75 * v))
        .collect();
    Csr::try_from_parts(a.nrows(), a.ncols(), rp, ci, vals).expect("cast")
}

fn x_for<T: Scalar>(n: usize, seed: u64) -> Vec<T> {
    random_x(n, seed)
}

// ----------------------------------------------------------------- checks

/// Every kernel variant to test, with the format conversion it needs.
fn kernels() -> Vec<GpuKernel> {
    let mut k = GpuKernel::ALL.to_vec();
    for l in sparsetool_gpu::plan::CSR_VECTOR_LANES {
        k.push(GpuKernel::CsrVector(Some(l)));
    }
    // ELL at every lane count, whatever the plan picks for the test matrix
    for l in sparsetool_gpu::plan::ELL_LANES {
        k.push(GpuKernel::Ell(Some(l)));
    }
    k.push(GpuKernel::CsrBalanced(Some(32)));
    k.push(GpuKernel::CsrBalanced(Some(256)));
    // chunks shorter than a tile and not a multiple of it: most rows are cut
    k.push(GpuKernel::CsrMerge(Some(7)));
    k.push(GpuKernel::CsrMerge(Some(300)));
    // column panels: two and three (some of them empty on narrow matrices)
    k.push(GpuKernel::CsrPanels(Some(2)));
    k.push(GpuKernel::CsrPanels(Some(3)));
    k
}

/// Runs one kernel on one matrix in one format: on the GPU, or on the CPU
/// through the kernel's reference twin.
type Runner<'r, T, I> =
    dyn Fn(&MatrixRef<'_, T, I>, &[T], GpuKernel) -> Result<Vec<f64>, String> + 'r;

/// Our kernels on the GPU with `offsets`; `y` as `spmv_ref` gives it (the
/// parts of a complex value in turn).
fn gpu_runner_with<T: Scalar, I: Index>(
    ctx: &GpuContext,
    offsets: Offsets,
) -> Box<Runner<'_, T, I>> {
    Box::new(move |a, x, k| {
        spmv_gpu_with_offsets(ctx, a, x, k, offsets)
            .map(|y| {
                y.iter()
                    .flat_map(|v| {
                        [v.re(), v.im()]
                            .into_iter()
                            .take(1 + usize::from(T::IS_COMPLEX))
                    })
                    .collect()
            })
            .map_err(|e| e.to_string())
    })
}

fn gpu_runner<T: Scalar, I: Index>(ctx: &GpuContext) -> Box<Runner<'_, T, I>> {
    gpu_runner_with(ctx, Offsets::Auto)
}

/// The CPU twin of each kernel (reference.rs), reading the same arrays the
/// GPU would, in the same order.
fn cpu_runner<T: Scalar, I: Index>() -> Box<Runner<'static, T, I>> {
    use sparsetool_gpu::plan;
    use sparsetool_gpu::reference as r;
    Box::new(|a, x, k| {
        let sorted = |c: &Coo<T, I>| {
            let mut o: Vec<usize> = (0..c.nnz()).collect();
            o.sort_by_key(|&i| c.rows()[i]);
            let rows: Vec<I> = o.iter().map(|&i| c.rows()[i]).collect();
            let cols: Vec<I> = o.iter().map(|&i| c.cols()[i]).collect();
            let vals: Vec<T> = o.iter().map(|&i| c.values()[i]).collect();
            (rows, cols, vals)
        };
        Ok(match (a, k) {
            (MatrixRef::Csr(m), GpuKernel::CsrScalar) => {
                r::spmv_csr_scalar(m.row_ptr(), m.col_idx(), m.values(), x)
            }
            (MatrixRef::Csr(m), GpuKernel::CsrVector(l)) => {
                let l = l.unwrap_or_else(|| plan::csr_vector_lanes(m.nrows(), m.nnz()));
                r::spmv_csr_vector(l as usize, m.row_ptr(), m.col_idx(), m.values(), x)
            }
            (MatrixRef::Csr(m), GpuKernel::CsrBinned) => {
                r::spmv_csr_binned(m.row_ptr(), m.col_idx(), m.values(), x)
            }
            (MatrixRef::Csr(m), GpuKernel::CsrBalanced(c)) => {
                let c = c.unwrap_or_else(|| plan::balanced_chunk(m.nnz(), 132));
                let mut y = vec![0.0; m.nrows()];
                r::spmv_csr_balanced(c as usize, m.row_ptr(), m.col_idx(), m.values(), x, &mut y);
                y
            }
            (MatrixRef::Csr(m), GpuKernel::CsrPanels(k)) => {
                let size = std::mem::size_of::<T>();
                let k = k.unwrap_or_else(|| plan::csr_panels(m.ncols(), size));
                r::spmv_csr_panels(
                    plan::merge_items(size, T::IS_COMPLEX),
                    plan::merge_window(size),
                    |items| plan::merge_chunk(items, 132) as usize,
                    &plan::panel_cuts(m.ncols(), k),
                    m.row_ptr(),
                    m.col_idx(),
                    m.values(),
                    x,
                )
            }
            (MatrixRef::Csr(m), GpuKernel::CsrMerge(c)) => {
                let c = c.unwrap_or_else(|| plan::merge_chunk(m.nrows() + m.nnz(), 132));
                let mut y = vec![0.0; m.nrows()];
                let items = plan::merge_items(std::mem::size_of::<T>(), T::IS_COMPLEX);
                let (rp, ci, v) = (m.row_ptr(), m.col_idx(), m.values());
                let window = plan::merge_window(std::mem::size_of::<T>());
                r::spmv_csr_merge(items, window, c as usize, rp, ci, v, x, &mut y);
                y
            }
            (MatrixRef::Coo(m), GpuKernel::CooAtomic) => {
                let mut y = vec![0.0; m.nrows()];
                r::spmv_coo(m.rows(), m.cols(), m.values(), x, &mut y);
                y
            }
            (MatrixRef::Coo(m), GpuKernel::CooSegmented) => {
                let (rows, cols, vals) = sorted(m);
                let mut y = vec![0.0; m.nrows()];
                r::spmv_coo_segmented(
                    plan::coo_items(std::mem::size_of::<T>()),
                    &rows,
                    &cols,
                    &vals,
                    x,
                    &mut y,
                );
                y
            }
            (MatrixRef::Ell(m), GpuKernel::Ell(_)) => r::spmv_ell(
                m.nrows(),
                m.width(),
                m.row_nnz(),
                m.col_idx(),
                m.values(),
                x,
            ),
            (MatrixRef::Ell(m), GpuKernel::EllU16) => {
                let narrow = ell_u16_of(m).map_err(|e| e.to_string())?;
                r::spmv_ell_u16(m.nrows(), m.width(), m.col_idx(), &narrow, m.values(), x)
            }
            (MatrixRef::Hyb(h), GpuKernel::Hyb | GpuKernel::HybU16) => {
                let e = h.ell();
                let mut y = if k == GpuKernel::HybU16 {
                    let narrow = ell_u16_of(e).map_err(|e| e.to_string())?;
                    r::spmv_ell_u16(e.nrows(), e.width(), e.col_idx(), &narrow, e.values(), x)
                } else {
                    r::spmv_ell(
                        e.nrows(),
                        e.width(),
                        e.row_nnz(),
                        e.col_idx(),
                        e.values(),
                        x,
                    )
                };
                let c = h.coo();
                r::spmv_coo_segmented(
                    plan::coo_items(std::mem::size_of::<T>()),
                    c.rows(),
                    c.cols(),
                    c.values(),
                    x,
                    &mut y,
                );
                y
            }
            (MatrixRef::Jds(m), GpuKernel::Jds | GpuKernel::JdsBatched) => r::spmv_jds(
                m.nrows(),
                jds_cap(m),
                m.perm(),
                m.jd_ptr(),
                m.col_idx(),
                m.values(),
                x,
            ),
            (MatrixRef::Jds(m), GpuKernel::JdsU16 | GpuKernel::JdsU16Batched) => {
                let narrow = jds_u16_of(m).map_err(|e| e.to_string())?;
                r::spmv_jds_u16(
                    m.nrows(),
                    jds_cap(m),
                    m.perm(),
                    m.jd_ptr(),
                    m.col_idx(),
                    &narrow,
                    m.values(),
                    x,
                )
            }
            (MatrixRef::Sell(m), GpuKernel::SellU16 | GpuKernel::SellU16Batched) => {
                let narrow = sell_u16_of(m).map_err(|e| e.to_string())?;
                r::spmv_sell_u16(
                    m.nrows(),
                    m.slice_height(),
                    sell_cap(m),
                    Some(m.perm()),
                    m.slice_ptr(),
                    m.slice_width(),
                    m.col_idx(),
                    &narrow,
                    m.values(),
                    x,
                )
            }
            (MatrixRef::Sell(m), GpuKernel::Sell | GpuKernel::SellBatched) => r::spmv_sell(
                m.nrows(),
                m.slice_height(),
                sell_cap(m),
                Some(m.perm()),
                m.slice_ptr(),
                m.slice_width(),
                m.col_idx(),
                m.values(),
                x,
            ),
            (MatrixRef::Csc(m), GpuKernel::CscScatter) => {
                let mut y = vec![0.0; m.nrows()];
                r::spmv_csc_scatter(m.col_ptr(), m.row_idx(), m.values(), x, &mut y);
                y
            }
            (a, k) => return Err(format!("kernel {} cannot read {}", k.name(), a.kind())),
        })
    })
}

/// Slots a thread of the SELL kernel walks on `m` (as the upload plans).
fn sell_cap<T: Scalar, I: Index>(m: &Sell<T, I>) -> usize {
    let longest = m.slice_width().iter().map(|w| w.to_usize()).max();
    sparsetool_gpu::plan::long_row_cap(m.nrows(), m.nnz(), longest.unwrap_or(0))
}

/// Diagonals a thread of the JDS kernel walks on `m` (as the upload plans).
fn jds_cap<T: Scalar, I: Index>(m: &Jds<T, I>) -> usize {
    sparsetool_gpu::plan::long_row_cap(m.nrows(), m.nnz(), m.jd_ptr().len().saturating_sub(1))
}

/// The 16-bit columns of `jds-u16` for `m`, or why it has none.
fn jds_u16_of<T: Scalar, I: Index>(m: &Jds<T, I>) -> Result<layout::JdsU16, GpuError> {
    layout::jds_u16(m.nrows(), jds_cap(m), m.jd_ptr(), m.col_idx())
}

/// A failure unless `y` is the refusal of a kernel that does not apply
/// (`why`: what the layout says).
fn not_refused(
    name: &str,
    label: &str,
    why: &GpuError,
    y: Result<Vec<f64>, String>,
) -> Option<String> {
    match y {
        Err(e) if e.contains("does not apply") => None,
        other => Some(format!(
            "{name} {label}: {why}, but the kernel gave {other:?}"
        )),
    }
}

/// The 16-bit columns of `ell-u16` (and `hyb-u16` on HYB's ELL part) for
/// `m`, or why it has none.
fn ell_u16_of<T: Scalar, I: Index>(m: &Ell<T, I>) -> Result<layout::EllU16, GpuError> {
    layout::ell_u16(m.nrows(), m.width(), m.col_idx())
}

/// The 16-bit columns of `sell-u16` for `m`, or why it has none.
fn sell_u16_of<T: Scalar, I: Index>(m: &Sell<T, I>) -> Result<layout::SellU16, GpuError> {
    layout::sell_u16(
        m.slice_height(),
        sell_cap(m),
        m.slice_ptr(),
        m.slice_width(),
        m.col_idx(),
    )
}

/// Runs `kernel` on `a` (converted to the kernel's format in every variant
/// worth testing) and returns a list of failures.
fn check_kernel<T: Scalar, I: Index>(
    run: &Runner<'_, T, I>,
    name: &str,
    a: &Csr<T, I>,
    kernel: GpuKernel,
    dtype: Precision,
) -> Vec<String> {
    let x: Vec<T> = x_for(a.ncols(), 0xabc ^ a.nnz() as u64);
    let y_ref = spmv_ref(a, &x);
    let tol = tolerance(dtype, a.max_row_len());
    let mut fails = Vec::new();
    let mut conv_fails = Vec::new();
    let mut check = |label: String, r: Result<Vec<f64>, String>| match r {
        Ok(y) => {
            let e = rel_error(&y, &y_ref);
            if e.is_nan() || e > tol {
                fails.push(format!(
                    "{name} {label} {}: rel_error {e:.3e} > {tol:.1e}",
                    T::NAME
                ));
            }
        }
        Err(e) => fails.push(format!("{name} {label} {}: {e}", T::NAME)),
    };
    let label = format!("{}/{kernel:?}/{}", kernel.name(), I::NAME);
    match kernel {
        GpuKernel::CsrScalar
        | GpuKernel::CsrVector(_)
        | GpuKernel::CsrBalanced(_)
        | GpuKernel::CsrMerge(_)
        | GpuKernel::CsrBinned
        | GpuKernel::CsrPanels(_) => {
            check(label, run(&MatrixRef::Csr(a), &x, kernel));
        }
        GpuKernel::CooAtomic | GpuKernel::CooSegmented => {
            let coo = sparsetool_convert::csr_to_coo(a);
            check(label.clone(), run(&MatrixRef::Coo(&coo), &x, kernel));
            // the same entries in reverse order (unsorted COO)
            let (n, m, r, c, v) = coo.into_parts();
            let rev = Coo::try_from_parts(
                n,
                m,
                r.into_iter().rev().collect(),
                c.into_iter().rev().collect(),
                v.into_iter().rev().collect(),
            )
            .expect("reversed coo");
            check(label + "/unsorted", run(&MatrixRef::Coo(&rev), &x, kernel));
        }
        GpuKernel::Ell(_) => match sparsetool_convert::csr_to_ell(a, None, true) {
            Ok(e) => check(label, run(&MatrixRef::Ell(&e), &x, kernel)),
            Err(e) => println!("note: {name}: no ELL ({e})"),
        },
        GpuKernel::EllU16 => match sparsetool_convert::csr_to_ell(a, None, true) {
            Ok(e) => {
                let y = run(&MatrixRef::Ell(&e), &x, kernel);
                // no warp's columns within 16 bits: refused, and says so
                match ell_u16_of(&e) {
                    Err(why) => conv_fails.extend(not_refused(name, &label, &why, y)),
                    Ok(_) => check(label, y),
                }
            }
            Err(e) => println!("note: {name}: no ELL ({e})"),
        },
        GpuKernel::Hyb | GpuKernel::HybU16 => {
            let mut widths = vec![HybWidth::Auto];
            if a.ncols() >= 2 {
                widths.push(HybWidth::Fixed(2));
            }
            for w in widths {
                match sparsetool_convert::csr_to_hyb(a, w) {
                    Ok(h) => {
                        let label = format!("{label}/{w:?}");
                        let y = run(&MatrixRef::Hyb(&h), &x, kernel);
                        match ell_u16_of(h.ell()) {
                            Err(why) if kernel == GpuKernel::HybU16 => {
                                conv_fails.extend(not_refused(name, &label, &why, y));
                            }
                            _ => check(label, y),
                        }
                    }
                    Err(e) => conv_fails.push(format!("{name} {label}: conversion: {e}")),
                }
            }
        }
        GpuKernel::CscScatter => {
            let c = sparsetool_convert::csr_to_csc(a);
            check(label, run(&MatrixRef::Csc(&c), &x, kernel));
        }
        GpuKernel::Jds | GpuKernel::JdsBatched => {
            let j = sparsetool_convert::csr_to_jds(a);
            check(label, run(&MatrixRef::Jds(&j), &x, kernel));
        }
        GpuKernel::JdsU16 | GpuKernel::JdsU16Batched => {
            let j = sparsetool_convert::csr_to_jds(a);
            let y = run(&MatrixRef::Jds(&j), &x, kernel);
            // no group's columns within 16 bits: refused, and says so
            match jds_u16_of(&j) {
                Err(why) => conv_fails.extend(not_refused(name, &label, &why, y)),
                Ok(_) => check(label, y),
            }
        }
        GpuKernel::Sell
        | GpuKernel::SellBatched
        | GpuKernel::SellU16
        | GpuKernel::SellU16Batched => {
            // the default window, small slices, none, and a sort over all
            // rows (window-ordered slices where the lengths interleave:
            // 4, 32 and 128 threads a unit)
            let all = |c: usize| a.nrows().next_multiple_of(c).max(c);
            for (c, sigma) in [
                (32, Sell::<T, I>::default_sigma(32)),
                (4, 8),
                (1, 1),
                (32, 1),
                (32, all(32)),
                (4, all(4)),
                (128, all(128)),
            ] {
                let s = match sparsetool_convert::csr_to_sell(a, c, sigma) {
                    Ok(s) => s,
                    Err(e) => {
                        conv_fails.push(format!("{name} {label}: conversion: {e}"));
                        continue;
                    }
                };
                let label = format!("{label}/C{c}s{sigma}");
                let y = run(&MatrixRef::Sell(&s), &x, kernel);
                let u16 = matches!(kernel, GpuKernel::SellU16 | GpuKernel::SellU16Batched);
                // a slice spanning more than 16 bits: refused, and says so
                match (u16, sell_u16_of(&s)) {
                    (true, Err(why)) => conv_fails.extend(not_refused(name, &label, &why, y)),
                    _ => check(label, y),
                }
            }
        }
    }
    fails.extend(conv_fails);
    fails
}

/// The kernels of `kernels()` that `SPARSETOOL_TEST_KERNELS` names (every
/// kernel without it).
fn chosen_kernels() -> Vec<GpuKernel> {
    let Ok(only) = std::env::var("SPARSETOOL_TEST_KERNELS") else {
        return kernels();
    };
    println!("SPARSETOOL_TEST_KERNELS={only}: those kernels only");
    kernels()
        .into_iter()
        .filter(|k| only.split(',').any(|w| k.name().starts_with(w.trim())))
        .collect()
}

fn run_all<T: Scalar, I: Index>(
    run: &Runner<'_, T, I>,
    dtype: Precision,
    matrices: &[(String, Csr<f64, i32>)],
) -> Vec<String> {
    let mut fails = Vec::new();
    for (name, a) in matrices {
        let a: Csr<T, I> = cast(a);
        for k in chosen_kernels() {
            fails.extend(check_kernel(run, name, &a, k, dtype));
        }
    }
    fails
}

fn report(fails: &[String]) {
    for f in fails {
        println!("FAIL {f}");
    }
    assert!(
        fails.is_empty(),
        "{} failing cases (listed above)",
        fails.len()
    );
}

#[test]
fn every_kernel_f32() {
    let Some(ctx) = ctx() else { return };
    report(&run_all::<f32, i32>(
        &*gpu_runner(&ctx),
        Precision::F32,
        &all_matrices(),
    ));
}

#[test]
fn every_kernel_f64() {
    let Some(ctx) = ctx() else { return };
    report(&run_all::<f64, i32>(
        &*gpu_runner(&ctx),
        Precision::F64,
        &all_matrices(),
    ));
}

/// Complex values in every kernel and format (complex64 on the built-in
/// matrices, complex128 on all of them).
#[test]
fn every_kernel_complex() {
    let Some(ctx) = ctx() else { return };
    let mut fails =
        run_all::<Complex32, i32>(&*gpu_runner(&ctx), Precision::F32, &builtin_matrices());
    fails.extend(run_all::<Complex64, i32>(
        &*gpu_runner(&ctx),
        Precision::F64,
        &all_matrices(),
    ));
    report(&fails);
}

/// The 64-bit-offset kernels (chosen automatically beyond 2^31 - 1
/// entries) on every matrix, forced with `Offsets::Wide`.
#[test]
fn every_kernel_wide_offsets() {
    let Some(ctx) = ctx() else { return };
    let mut fails = run_all::<f64, i32>(
        &*gpu_runner_with(&ctx, Offsets::Wide),
        Precision::F64,
        &all_matrices(),
    );
    fails.extend(run_all::<Complex32, i64>(
        &*gpu_runner_with(&ctx, Offsets::Wide),
        Precision::F32,
        &builtin_matrices(),
    ));
    report(&fails);
}

#[test]
fn every_kernel_i64_indices() {
    let Some(ctx) = ctx() else { return };
    report(&run_all::<f64, i64>(
        &*gpu_runner(&ctx),
        Precision::F64,
        &builtin_matrices(),
    ));
}

/// The CPU twins of every kernel on every matrix and format: runs on any
/// machine, so layout misunderstandings show up without a GPU.
#[test]
fn cpu_twins_of_every_kernel() {
    let m = all_matrices();
    report(&run_all::<f64, i32>(&*cpu_runner(), Precision::F64, &m));
    report(&run_all::<f32, i64>(
        &*cpu_runner(),
        Precision::F32,
        &builtin_matrices(),
    ));
}

/// The one-shot products choose their CSR kernel from the row lengths
/// (`GpuKernel::for_csr`): the merge-path kernel on a matrix with a dense
/// row, the vector kernel at the mean's lanes on a regular one. Both, and
/// the transposed product (whose rows are the columns: one dense column),
/// match the CPU product.
#[test]
fn one_shot_products_choose_the_csr_kernel_by_row_lengths() {
    let n = 3000;
    let skewed = by_lengths(n, n, 7, |i, _| if i == 17 { n } else { 1 + i % 5 });
    let regular = by_lengths(n, n, 8, |_, r| 8 + (r % 3) as usize);
    assert_eq!(
        GpuKernel::default_for_matrix(&MatrixRef::Csr(&skewed)),
        GpuKernel::CsrMerge(None)
    );
    assert!(matches!(
        GpuKernel::default_for_matrix(&MatrixRef::Csr(&regular)),
        GpuKernel::CsrVector(Some(8))
    ));
    let Some(ctx) = ctx() else { return };
    let close = |got: &[f64], want: &[f64], what: &str| {
        assert_eq!(got.len(), want.len(), "{what}");
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1.0),
                "{what}: y[{i}] = {g}, want {w}"
            );
        }
    };
    for (name, a) in [("skewed", &skewed), ("regular", &regular)] {
        let x: Vec<f64> = x_for(n, 3);
        let mut want = vec![0.0; n];
        a.spmv(&x, &mut want);
        let got = spmv_gpu(&ctx, &MatrixRef::Csr(a), &x).expect("spmv");
        close(&got, &want, name);
        let t = sparsetool_convert::transposed_csr(MatrixRef::Csr(a));
        let mut want_t = vec![0.0; n];
        t.spmv(&x, &mut want_t);
        let got_t = spmv_gpu_transpose(&ctx, &MatrixRef::Csr(a), &x).expect("transposed");
        close(&got_t, &want_t, &format!("{name}, transposed"));
    }
}

#[test]
fn default_kernels_and_errors() {
    let Some(ctx) = ctx() else { return };
    let a: Csr<f64, i32> = seed::A.csr().unwrap();
    let y = spmv_gpu(&ctx, &MatrixRef::Csr(&a), &[1.0, 1.0, 1.0]).expect("spmv");
    assert_eq!(y, vec![3.0, 3.0, 9.0]);
    assert!(matches!(
        spmv_gpu(&ctx, &MatrixRef::Csr(&a), &[1.0]),
        Err(GpuError::Shape {
            expected: 3,
            actual: 1,
            ..
        })
    ));
    assert!(matches!(
        spmv_gpu_with(&ctx, &MatrixRef::Csr(&a), &[1.0; 3], GpuKernel::Ell(None)),
        Err(GpuError::KernelMismatch { .. })
    ));
    // complex: (1 + i)(2 - 3i) = 5 - i
    let z: Csr<Complex64, i32> =
        Csr::try_from_parts(1, 1, vec![0, 1], vec![0], vec![Complex64::new(1.0, 1.0)]).expect("c");
    let y = spmv_gpu(&ctx, &MatrixRef::Csr(&z), &[Complex64::new(2.0, -3.0)]).expect("complex");
    assert_eq!(y, vec![Complex64::new(5.0, -1.0)]);
    let y = spmv_cusparse(
        &ctx,
        &z,
        &[Complex64::new(2.0, -3.0)],
        CusparseAlg::CsrAlg2,
        false,
    )
    .expect("cusparse complex");
    assert_eq!(y, vec![Complex64::new(5.0, -1.0)]);
    // repeated runs give the same answer (a moving error would be a race)
    let p = &builtin_matrices()[11].1;
    let x: Vec<f64> = x_for(p.ncols(), 5);
    for k in [
        GpuKernel::CsrBalanced(Some(32)),
        GpuKernel::CsrMerge(Some(300)),
        GpuKernel::CooSegmented,
    ] {
        let m = if k == GpuKernel::CooSegmented {
            let c = sparsetool_convert::csr_to_coo(p);
            let y1 = spmv_gpu_with(&ctx, &MatrixRef::Coo(&c), &x, k).expect("run");
            let y2 = spmv_gpu_with(&ctx, &MatrixRef::Coo(&c), &x, k).expect("run");
            rel_error(&y1, &y2)
        } else {
            let y1 = spmv_gpu_with(&ctx, &MatrixRef::Csr(p), &x, k).expect("run");
            let y2 = spmv_gpu_with(&ctx, &MatrixRef::Csr(p), &x, k).expect("run");
            rel_error(&y1, &y2)
        };
        assert!(m < 1e-13, "{k:?} moved by {m:e}");
    }
}

#[test]
fn bench_small_matrix_all_ok() {
    let Some(ctx) = ctx() else { return };
    let m = builtin_matrices();
    let by_name = |n: &str| m.iter().find(|(name, _)| name == n).expect(n);
    for (name, a) in [
        by_name("power-law"),
        by_name("laplace2d-70"),
        by_name("power-law-uncapped"),
    ] {
        let opts = BenchOptions {
            reps: 5,
            warmup: 1,
            copy_bytes: 64 << 20,
            ..Default::default()
        };
        let wide = BenchOptions {
            offsets: Offsets::Wide,
            ..opts.clone()
        };
        let a32: Csr<f32, i32> = cast(a);
        let c64: Csr<Complex32, i32> = cast(a);
        let c128: Csr<Complex64, i32> = cast(a);
        let r = bench(&ctx, &a32, &opts).expect("bench f32");
        let r64 = bench(&ctx, a, &opts).expect("bench f64");
        let rc64 = bench(&ctx, &c64, &opts).expect("bench c64");
        let rc128 = bench(&ctx, &c128, &opts).expect("bench c128");
        let rw = bench(&ctx, a, &wide).expect("bench f64 wide");
        assert_eq!((rc64.dtype.as_str(), rc128.dtype.as_str()), ("c64", "c128"));
        // every layout with offset arrays, and cuSPARSE's CSR, run 64-bit
        // (COO has no offsets: its index type follows the entry count)
        for k in &rw.results {
            let bits = k.params.get("offset_bits").or_else(|| {
                k.kernel
                    .starts_with("cusparse-csr")
                    .then(|| k.params.get("index_bits"))
                    .flatten()
            });
            if let Some(bits) = bits {
                assert_eq!(bits, 64, "{name} {}: not 64-bit", k.kernel);
            }
        }
        assert!(
            rw.results
                .iter()
                .any(|k| k.params.get("index_bits") == Some(&serde_json::json!(64))),
            "{name}: no cuSPARSE run with 64-bit indices: {:?}",
            rw.skipped
        );
        for rep in [&r, &r64, &rc64, &rc128, &rw] {
            println!("{}", serde_json::to_string(rep).unwrap_or_default());
            assert!(rep.copy_gbps > 0.0);
            for k in &rep.results {
                assert!(
                    k.ok,
                    "{name} {} {}: rel_error {:e}",
                    rep.dtype, k.kernel, k.rel_error
                );
                assert!(k.median_ms > 0.0 && k.min_ms <= k.median_ms);
            }
            assert!(
                rep.results.iter().any(|k| k.baseline),
                "no cuSPARSE result: {:?}",
                rep.skipped
            );
            // the second launch of HYB and csr-merge goes as a dependent
            // launch where the device has them (compute capability 9.0)
            let pdl = ctx.compute_capability().0 >= 9
                && std::env::var("SPARSETOOL_PDL").map_or(true, |v| v != "0");
            let two_launches = rep.results.iter().filter(|k| {
                let tail = k.params.get("coo_entries").and_then(|v| v.as_u64());
                k.kernel == "csr-merge" || (k.kernel == "hyb" && tail > Some(0))
            });
            let mut seen = 0;
            for k in two_launches {
                assert_eq!(
                    k.params.get("dependent_launch"),
                    Some(&serde_json::json!(pdl)),
                    "{name} {} {}: {:?}",
                    rep.dtype,
                    k.kernel,
                    k.params
                );
                seen += 1;
            }
            assert!(seen > 0, "{name} {}: no csr-merge result", rep.dtype);
            // at most 30 000 columns: the 16-bit kernels always run (ELL's
            // where the matrix has an ELL layout)
            let has_ell = rep.results.iter().any(|k| k.kernel == "ell");
            let u16s = [
                "sell-u16",
                "sell-u16-batched",
                "hyb-u16",
                "jds-u16",
                "jds-u16-batched",
                "ell-u16",
            ];
            for kernel in &u16s[..if has_ell { 6 } else { 5 }] {
                assert!(
                    rep.results.iter().any(|k| k.kernel == *kernel
                        && k.params.get("column_bits") == Some(&serde_json::json!(16))),
                    "{name} {}: no {kernel} result: {:?}",
                    rep.dtype,
                    rep.skipped
                );
            }
        }
    }
}

/// `bench`'s options for JDS's kernels alone: `reps` timed intervals after
/// `warmup` launches, a 1 MiB copy, no cuSPARSE.
fn jds_bench(reps: usize, warmup: usize) -> BenchOptions {
    BenchOptions {
        reps,
        warmup,
        copy_bytes: 1 << 20,
        formats: vec![FormatKind::Jds],
        include_cusparse: false,
        ..Default::default()
    }
}

/// JDS's plain kernels run their 40-register build (`registers` 40) for
/// f64 and complex rows of 16 diagonals or more (plan::jds_wide), and the
/// 32-register one for f32 and for short rows; the batched kernels 64, but
/// `jds-u16-batched` 48 in f64 (U16_DEEP_BOUNDS); every product checked.
#[test]
fn jds_plain_kernels_take_more_registers_on_long_rows_in_f64() {
    let Some(ctx) = ctx() else { return };
    let m = builtin_matrices();
    let by_name = |n: &str| &m.iter().find(|(name, _)| name == n).expect(n).1;
    let opts = jds_bench(3, 1);
    let long = by_name("uniform-16");
    let short = by_name("laplace2d-70");
    let c128: Csr<Complex64, i32> = cast(long);
    let f32s: Csr<f32, i32> = cast(long);
    let runs = [
        (
            "uniform-16 f64",
            bench(&ctx, long, &opts).expect("f64"),
            40,
            48,
        ),
        (
            "uniform-16 c128",
            bench(&ctx, &c128, &opts).expect("c128"),
            40,
            64,
        ),
        (
            "uniform-16 f32",
            bench(&ctx, &f32s, &opts).expect("f32"),
            32,
            64,
        ),
        (
            "laplace2d-70 f64",
            bench(&ctx, short, &opts).expect("f64"),
            32,
            48,
        ),
    ];
    for (name, rep, plain, u16_deep) in runs {
        let mut seen = 0;
        for k in &rep.results {
            assert!(k.ok, "{name} {}: rel_error {:e}", k.kernel, k.rel_error);
            let want = match k.kernel.as_str() {
                "jds-u16-batched" => u16_deep,
                "jds-batched" => 64,
                _ => plain,
            };
            assert_eq!(
                k.params.get("registers"),
                Some(&serde_json::json!(want)),
                "{name} {}",
                k.kernel
            );
            seen += 1;
        }
        assert_eq!(seen, 4, "{name}: {:?}", rep.skipped);
    }
}

/// JDS's tail goes first on a power law of 4M entries or more (its chunk 0
/// holding the long rows whole, their parts meeting in per-row sums that
/// the last part stores and zeroes; `tail_threads` counts chunk 0's rows):
/// every JDS kernel's product, checked by `bench` before and after its
/// timed runs (hundreds of products in a row, so sums not zeroed between
/// products would show), in f32, f64 and complex128. The every-kernel
/// tests' matrices are smaller, so their tails go after the main kernel.
/// Two matrices: 400k rows, whose main blocks past the long rows go in
/// window order, and 120k rows (one window), whose go in sorted order, so
/// that a warp's rows may cross a run's end (the row length counted by
/// warp, then searched between the counts: `jds_len` in jds.cu).
#[test]
fn jds_tail_first_on_a_power_law_of_4m_entries() {
    let Some(ctx) = ctx() else { return };
    let mut windows = Vec::new();
    for (n, base) in [(400_000, 8), (120_000, 36)] {
        let a = by_lengths(n, n, 23, |_, r| {
            let u = ((r >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
            base + ((u.powf(-1.0 / 1.2)) as usize).min(20_000)
        });
        let j = sparsetool_convert::csr_to_jds(&a);
        let jd = j.jd_ptr();
        let ndiag = jd.len() - 1;
        let dlen = |d: usize| (jd[d + 1] - jd[d]) as usize;
        let cap = sparsetool_gpu::plan::long_row_cap(n, a.nnz(), ndiag);
        assert!(
            sparsetool_gpu::plan::jds_tail_first(a.nnz(), ndiag, cap, dlen),
            "{n} rows, {} entries, cap {cap}: the tail should go first",
            a.nnz()
        );
        // going first, the tail's chunks hold chunk 0's rows too
        let (items, _) = sparsetool_gpu::plan::jds_tail_items(ndiag, cap, true, dlen);
        let threads = items.last().copied();
        let perm = j.perm();
        let (_, window) =
            sparsetool_gpu::plan::jds_main_blocks(n, dlen(cap)..n, ndiag, dlen, |p| {
                perm[p] as usize
            });
        windows.push(window);
        let opts = jds_bench(5, 2);
        let f32s: Csr<f32, i32> = cast(&a);
        let c128: Csr<Complex64, i32> = cast(&a);
        for (name, rep) in [
            ("f64", bench(&ctx, &a, &opts).expect("f64")),
            ("f32", bench(&ctx, &f32s, &opts).expect("f32")),
            ("c128", bench(&ctx, &c128, &opts).expect("c128")),
        ] {
            // (jds-u16 may refuse columns this far apart: not asserted)
            let kernels: Vec<&str> = rep.results.iter().map(|k| k.kernel.as_str()).collect();
            assert!(
                kernels.contains(&"jds") && kernels.contains(&"jds-batched"),
                "{n} {name}: {kernels:?} {:?}",
                rep.skipped
            );
            for k in &rep.results {
                assert!(k.ok, "{n} {name} {}: rel_error {:e}", k.kernel, k.rel_error);
                for (key, want) in [
                    ("tail_threads", threads.map(serde_json::Value::from)),
                    ("window_blocks", Some(serde_json::Value::from(window))),
                ] {
                    assert_eq!(
                        k.params.get(key),
                        want.as_ref(),
                        "{n} {name} {} {key}: {:?}",
                        k.kernel,
                        k.params
                    );
                }
            }
        }
    }
    assert_eq!(windows, [true, false], "one matrix in each order");
}

// ------------------------------------------------------- y = Aᵀ x

/// `Aᵀ x` in f64 by scattering every entry of the CSR of `A`
/// (independent of the transpose kernel the GPU path uses).
fn transposed_ref<T: Scalar, I: Index>(a: &Csr<T, I>, x: &[T]) -> Vec<f64> {
    let mut y = vec![0.0; a.ncols()];
    for (i, xi) in x.iter().enumerate().take(a.nrows()) {
        let (c, v) = a.row(i);
        for (c, v) in c.iter().zip(v) {
            y[c.to_usize()] += v.re() * xi.re();
        }
    }
    y
}

/// The CSR kernels (every lane and chunk variant of [`kernels`]).
fn csr_kernels() -> Vec<GpuKernel> {
    kernels()
        .into_iter()
        .filter(|k| k.format() == FormatKind::Csr)
        .collect()
}

/// `y = Aᵀ x` of `a` stored in every format, through `run` (which gets the
/// format's matrix, `x` and a CSR kernel), against [`transposed_ref`].
fn check_transposed<T: Scalar, I: Index>(
    name: &str,
    a: &Csr<T, I>,
    dtype: Precision,
    run: &Runner<'_, T, I>,
) -> Vec<String> {
    let x: Vec<T> = x_for(a.nrows(), 0x7e ^ a.nnz() as u64);
    let y_ref = transposed_ref(a, &x);
    let longest_col = transposed_csr(MatrixRef::Csr(a)).max_row_len();
    let tol = tolerance(dtype, longest_col);
    let params = ConvertParams {
        allow_fill: true,
        ..ConvertParams::default()
    };
    let mut fails = Vec::new();
    for f in FormatKind::ALL {
        let m = match from_csr(a, f, &params) {
            Ok(m) => m,
            Err(e) => {
                println!("note: {name}: no {f} ({e})");
                continue;
            }
        };
        for k in csr_kernels() {
            let label = format!("{name} transposed {f}/{k:?} {}/{}", T::NAME, I::NAME);
            match run(&m.as_ref(), &x, k) {
                Ok(y) => {
                    let e = rel_error(&y, &y_ref);
                    if e.is_nan() || e > tol {
                        fails.push(format!("{label}: rel_error {e:.3e} > {tol:.1e}"));
                    }
                }
                Err(e) => fails.push(format!("{label}: {e}")),
            }
        }
    }
    fails
}

fn run_transposed_gpu<T: Scalar, I: Index>(ctx: &GpuContext, dtype: Precision) -> Vec<String> {
    let run = |m: &MatrixRef<'_, T, I>, x: &[T], k: GpuKernel| {
        spmv_gpu_transpose_with(ctx, m, x, k)
            .map(|y| y.iter().map(|v| v.re()).collect())
            .map_err(|e| e.to_string())
    };
    let mut fails = Vec::new();
    for (name, a) in builtin_matrices() {
        fails.extend(check_transposed::<T, I>(&name, &cast(&a), dtype, &run));
    }
    fails
}

/// `y = Aᵀ x` on the GPU, every format x every CSR kernel, f32 and f64.
#[test]
fn transposed_every_format_gpu() {
    let Some(ctx) = ctx() else { return };
    let mut fails = run_transposed_gpu::<f32, i32>(&ctx, Precision::F32);
    fails.extend(run_transposed_gpu::<f64, i64>(&ctx, Precision::F64));
    report(&fails);
}

/// The host half of the GPU's `y = Aᵀ x` (the CSR of `Aᵀ` from every
/// format) with the CPU twins of the CSR kernels: runs without a GPU.
#[test]
fn transposed_every_format_cpu_twins() {
    use sparsetool_gpu::plan;
    use sparsetool_gpu::reference as r;
    let run = |m: &MatrixRef<'_, f64, i32>, x: &[f64], k: GpuKernel| {
        let t = transposed_csr(*m);
        let (rp, ci, v) = (t.row_ptr(), t.col_idx(), t.values());
        Ok(match k {
            GpuKernel::CsrScalar => r::spmv_csr_scalar(rp, ci, v, x),
            GpuKernel::CsrVector(l) => {
                let l = l.unwrap_or_else(|| plan::csr_vector_lanes(t.nrows(), t.nnz()));
                r::spmv_csr_vector(l as usize, rp, ci, v, x)
            }
            GpuKernel::CsrBinned => r::spmv_csr_binned(rp, ci, v, x),
            GpuKernel::CsrBalanced(c) => {
                let c = c.unwrap_or_else(|| plan::balanced_chunk(t.nnz(), 132));
                let mut y = vec![0.0; t.nrows()];
                r::spmv_csr_balanced(c as usize, rp, ci, v, x, &mut y);
                y
            }
            GpuKernel::CsrMerge(c) => {
                let c = c.unwrap_or_else(|| plan::merge_chunk(t.nrows() + t.nnz(), 132));
                let mut y = vec![0.0; t.nrows()];
                r::spmv_csr_merge(
                    plan::merge_items(8, false),
                    plan::merge_window(8),
                    c as usize,
                    rp,
                    ci,
                    v,
                    x,
                    &mut y,
                );
                y
            }
            GpuKernel::CsrPanels(k) => r::spmv_csr_panels(
                plan::merge_items(8, false),
                plan::merge_window(8),
                |items| plan::merge_chunk(items, 132) as usize,
                &plan::panel_cuts(
                    t.ncols(),
                    k.unwrap_or_else(|| plan::csr_panels(t.ncols(), 8)),
                ),
                rp,
                ci,
                v,
                x,
            ),
            other => return Err(format!("{other:?} is not a CSR kernel")),
        })
    };
    let mut fails = Vec::new();
    for (name, a) in all_matrices() {
        fails.extend(check_transposed::<f64, i32>(
            &name,
            &a,
            Precision::F64,
            &run,
        ));
    }
    report(&fails);
}

/// Our transposed SpMV against cuSPARSE's `CUSPARSE_OPERATION_TRANSPOSE`
/// on the CSR of `A` (both against the f64 reference, and each other).
#[test]
fn transposed_matches_cusparse() {
    let Some(ctx) = ctx() else { return };
    if !cusparse_available() {
        assert!(
            !require_gpu(),
            "SPARSETOOL_REQUIRE_GPU=1 but no libcusparse"
        );
        println!("SKIPPED: libcusparse not found");
        return;
    }
    let mut fails = Vec::new();
    for (name, a) in all_matrices() {
        let a32: Csr<f32, i32> = cast(&a);
        let x: Vec<f32> = x_for(a.nrows(), 31);
        let y_ref = transposed_ref(&a32, &x);
        let tol = tolerance(
            Precision::F32,
            transposed_csr(MatrixRef::Csr(&a32)).max_row_len(),
        );
        let csc = sparsetool_convert::csr_to_csc(&a32);
        let ours = spmv_gpu_transpose(&ctx, &MatrixRef::Csc(&csc), &x);
        for alg in [CusparseAlg::CsrAlg1, CusparseAlg::CsrAlg2] {
            match (spmv_cusparse(&ctx, &a32, &x, alg, true), &ours) {
                (Ok(theirs), Ok(ours)) => {
                    let e_theirs = rel_error(&theirs, &y_ref);
                    let theirs64: Vec<f64> = theirs.iter().map(|v| f64::from(*v)).collect();
                    let e_between = rel_error(ours, &theirs64);
                    if !(e_theirs <= tol && e_between <= 2.0 * tol) {
                        fails.push(format!(
                            "{name} {}: cuSPARSE {e_theirs:.3e}, ours vs cuSPARSE {e_between:.3e} (tol {tol:.1e})",
                            alg.name()
                        ));
                    }
                }
                // ALG2 may not support the transpose: a status, not a crash.
                (Err(GpuError::Cusparse { .. }), _) if alg == CusparseAlg::CsrAlg2 => {}
                (Err(e), _) => fails.push(format!("{name} {}: {e}", alg.name())),
                (_, Err(e)) => fails.push(format!("{name} ours: {e}")),
            }
        }
    }
    report(&fails);
}

#[test]
fn csc_and_transposed_defaults_and_errors() {
    let Some(ctx) = ctx() else { return };
    // A = [[1 0 2] [0 3 0] [4 0 5]]
    let a: Csr<f64, i32> = seed::A.csr().unwrap();
    let csc = seed::A.csc_matrix::<f64, i32>().unwrap();
    let y = spmv_gpu(&ctx, &MatrixRef::Csc(&csc), &[1.0, 10.0, 100.0]).expect("csc spmv");
    assert_eq!(y, vec![201.0, 30.0, 504.0]);
    for m in [MatrixRef::Csc(&csc), MatrixRef::Csr(&a)] {
        let yt = spmv_gpu_transpose(&ctx, &m, &[1.0, 10.0, 100.0]).expect("transposed");
        assert_eq!(yt, vec![401.0, 30.0, 502.0]);
    }
    assert!(matches!(
        spmv_gpu_transpose(&ctx, &MatrixRef::Csc(&csc), &[1.0]),
        Err(GpuError::Shape {
            expected: 3,
            actual: 1,
            ..
        })
    ));
    assert!(matches!(
        spmv_gpu_transpose_with(&ctx, &MatrixRef::Csc(&csc), &[1.0; 3], GpuKernel::Ell(None)),
        Err(GpuError::KernelMismatch { .. })
    ));
    assert!(matches!(
        spmv_gpu_with(&ctx, &MatrixRef::Csc(&csc), &[1.0; 3], GpuKernel::CooAtomic),
        Err(GpuError::KernelMismatch { .. })
    ));
    // rectangular: 3 x 5 (seed C is 4 x 5)
    let c: Csr<f64, i32> = seed::C.csr().unwrap();
    let x: Vec<f64> = x_for(4, 3);
    let yt = spmv_gpu_transpose(&ctx, &MatrixRef::Csr(&c), &x).expect("rect");
    assert!(rel_error(&yt, &transposed_ref(&c, &x)) < 1e-14);
}

#[test]
fn bench_transposed_small_matrix_all_ok() {
    let Some(ctx) = ctx() else { return };
    let (name, a) = &builtin_matrices()[11];
    let opts = BenchOptions {
        reps: 5,
        warmup: 1,
        copy_bytes: 64 << 20,
        transpose: true,
        ..Default::default()
    };
    let a32: Csr<f32, i32> = cast(a);
    let rep = bench(&ctx, &a32, &opts).expect("bench transposed");
    println!("{}", serde_json::to_string(&rep).unwrap_or_default());
    assert!(rep.transpose);
    assert_eq!((rep.matrix.nrows, rep.matrix.ncols), (a.ncols(), a.nrows()));
    for k in &rep.results {
        assert!(k.ok, "{name} {}: rel_error {:e}", k.kernel, k.rel_error);
    }
    assert!(rep.results.iter().any(|k| k.kernel == "csc-scatter"));
    let base: Vec<_> = rep.results.iter().filter(|k| k.baseline).collect();
    assert!(!base.is_empty(), "no cuSPARSE result: {:?}", rep.skipped);
    for k in base {
        assert!(k.kernel.starts_with("cusparse-csr"), "{}", k.kernel);
        assert_eq!(
            k.params.get("op").and_then(|v| v.as_str()),
            Some("CUSPARSE_OPERATION_TRANSPOSE")
        );
    }
}
