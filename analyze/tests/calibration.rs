//! The shipped calibration is what `scripts/calibrate.sh` fits from the
//! benchmark results kept in the repository (data, not hand-tuned numbers).

use std::path::Path;

use sparsetool_analyze::timing::{fit, load_sweep_dirs, TimeModel};

/// `fitted_on` reads "DIR[, DIR2 ...] (N of M matrix x dtype runs; held
/// out: names starting with P1, P2, ...)".
fn parse_fitted_on(s: &str) -> (Vec<String>, Vec<String>) {
    let (dir, rest) = s
        .split_once(" (")
        .expect("fitted_on names the results folder");
    let held = rest
        .split_once("starting with ")
        .map(|(_, h)| h.trim_end_matches(')'))
        .unwrap_or("");
    let prefixes = held
        .split(", ")
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    (dir.split(", ").map(str::to_string).collect(), prefixes)
}

#[test]
fn shipped_calibration_is_the_fit_of_the_kept_results() {
    let shipped = TimeModel::calibrated();
    let (dirs, held) = parse_fitted_on(&shipped.fitted_on);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let paths: Vec<_> = dirs.iter().map(|d| root.join(d)).collect();
    let mut samples = Vec::new();
    let mut runs = 0;
    for (matrix, run) in load_sweep_dirs(&paths).unwrap_or_else(|e| panic!("{e}")) {
        if held.iter().any(|h| matrix.starts_with(h.as_str())) {
            continue;
        }
        runs += 1;
        samples.push(run.samples());
    }
    assert!(runs >= 40, "only {runs} training runs found in {dirs:?}");
    let refit = fit(&samples, &shipped.device, &shipped.fitted_on);
    assert_eq!(refit.models.len(), shipped.models.len());
    for (f, k) in &shipped.models {
        let r = &refit.models[f];
        for (a, b) in k.iter().zip(r) {
            assert!(
                (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                "{f}: shipped {k:?} vs refit {r:?}: run scripts/calibrate.sh"
            );
        }
    }
}

/// The matrices whose 16-bit column offsets the stored GPU runs moved,
/// with their row lengths and spans: a circuit of 200 000 rows, a power
/// law and a 3D stencil (generated as the corpus does) and four real ones.
fn offset_cases() -> Vec<(String, sparsetool_analyze::RowLengths)> {
    use sparsetool_analyze::RowLengths;
    use sparsetool_fixtures::gen::{generate, GenKind, GenParams};
    use sparsetool_formats::mm::{read_path, ReadOptions};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut cases: Vec<(String, RowLengths)> = Vec::new();
    for (name, kind, rows, k, alpha, max) in [
        ("circ-1m", GenKind::Circuit, 200_000, 5, 2.0, None),
        ("pl22-1m", GenKind::Powerlaw, 100_000, 10, 2.2, Some(1000)),
        ("l3d-1m", GenKind::Laplace3d, 39_304, 27, 2.0, None),
    ] {
        let p = GenParams {
            rows,
            nnz_per_row: k,
            alpha,
            max_row_len: max,
            ..GenParams::default()
        };
        let a = generate::<f32, i32>(kind, &p).unwrap();
        cases.push((name.into(), RowLengths::from_csr(&a).unwrap()));
    }
    for f in [
        "luxembourg.mtx.gz",
        "memplus.mtx.gz",
        "bcsstk13.mtx.gz",
        "jagmesh7.mtx",
    ] {
        let path = root.join("fixtures/matrices/real").join(f);
        let m = read_path::<f64, i64>(&path, &ReadOptions::default()).unwrap();
        let name = format!("real-{}", f.split('.').next().unwrap_or(f));
        cases.push((name, RowLengths::from_coo(&m.coo).unwrap()));
    }
    cases
}

/// The bytes of the `-u16` kernel of `layout` in a stored run (`j`) less
/// the vectors', as the GPU counted them; `None` where it did not run.
fn gpu_u16_bytes(j: &serde_json::Value, layout: &str, vector_bytes: u64) -> Option<u64> {
    let r = j["results"].as_array()?.iter().find(|r| {
        r["config"] == layout && r["kernel"].as_str().is_some_and(|k| k.contains("-u16"))
    })?;
    Some(r["bytes"].as_u64()? - vector_bytes)
}

/// The stored run `<name>-f32.json` of `dir` (under bench/results).
fn stored_run(dir: &str, name: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bench/results")
        .join(dir)
        .join(format!("{name}-f32.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The 16-bit column offsets the SELL candidates count
/// (`Work::u16_bytes`) are the bytes `sell-u16` moved in the stored corpus
/// run of the landed kernels, on real matrices of the corpus and on
/// generated ones whose columns outgrow 16 bits (a circuit of 200 000 rows,
/// a power law, a 3D stencil): the same layouts take offsets, within 1 %
/// of the bytes. (ELL's and HYB's per-group offsets were stored as one
/// 16-bit load a slot in that corpus, since paired: their count follows
/// `sparsetool-gpu`'s `ell_u16` by construction, see the candidates' unit
/// tests.)
#[test]
fn sell_candidates_count_the_16_bit_offsets_the_gpu_kernels_read() {
    use sparsetool_analyze::Features;
    use sparsetool_formats::Layout;
    let cases = offset_cases();
    let (mut compared, mut none) = (0, 0);
    for (name, rl) in &cases {
        let j = stored_run("2026-11-28-h100-corpus-jds-sell", name);
        let f = Features::new(rl, 4);
        let sell = f
            .candidates
            .iter()
            .filter(|c| matches!(c.layout, Layout::Sell { .. }));
        for c in sell {
            let label = c.layout.to_string();
            let want = gpu_u16_bytes(&j, &label, c.work.vector_bytes);
            match (c.work.u16_bytes, want) {
                (Some(got), Some(want)) => {
                    let rel = got as f64 / want as f64 - 1.0;
                    assert!(
                        rel.abs() < 0.01,
                        "{name} {label}: counted {got}, the GPU moved {want}"
                    );
                    compared += 1;
                }
                (None, None) => none += 1,
                (got, want) => panic!("{name} {label}: counted {got:?}, the GPU moved {want:?}"),
            }
        }
    }
    assert!(
        compared >= 20 && none >= 10,
        "{compared} with offsets, {none} without"
    );
}

/// JDS's count of `jds-u16`'s bytes against the H200 runs of the kernel on
/// the same matrices (run before it refused layouts where its offsets save
/// no bytes): each sorted group of 32 rows is bounded by the spans of the
/// groups of original rows it comes from, so the count never takes a group
/// the GPU does not (never below the GPU's bytes). It is exact on the
/// stencil, the FEM-like and two of the real matrices and within 1 % on the
/// circuit. It counts none on the power law, where the GPU took offsets for
/// 3 % of the rows and moved more bytes than `jds` (the kernel now refuses
/// such a layout), and none on the road network (luxembourg), where the
/// bound misses groups that fit: 19 % more bytes than the GPU's, no fewer
/// than `jds`'s.
#[test]
fn jds_candidates_count_the_16_bit_offsets_the_gpu_kernel_reads() {
    use sparsetool_analyze::Features;
    use sparsetool_formats::Layout;
    for (name, rl) in &offset_cases() {
        let j = stored_run("2026-11-28-h200-jds-u16/bytes", name);
        let f = Features::new(rl, 4);
        let c = f.candidates.iter().find(|c| c.layout == Layout::Jds);
        let w = c.unwrap().work;
        let gpu = gpu_u16_bytes(&j, "jds", w.vector_bytes).expect("a jds-u16 result");
        let Some(got) = w.u16_bytes else {
            match name.as_str() {
                "pl22-1m" => assert!(gpu > w.matrix_bytes, "{name}: the GPU moved {gpu}"),
                "real-luxembourg" => assert!(gpu < w.matrix_bytes, "{name}: the GPU moved {gpu}"),
                _ => panic!("{name}: counted none, the GPU moved {gpu}"),
            }
            continue;
        };
        let rel = got as f64 / gpu as f64 - 1.0;
        assert!(
            (0.0..=0.01).contains(&rel) && got < w.matrix_bytes,
            "{name}: counted {got}, the GPU moved {gpu}"
        );
    }
}

/// A folder of gzipped results (`*.json.gz`, as the repository stores older
/// raw results) loads the same runs, under the same names, as the plain
/// files, and a corrupt archive is an error that names it.
#[test]
fn gzipped_results_load_as_the_plain_ones() {
    use std::io::Write;
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../bench/results/2026-11-28-h200-jds-u16/bytes");
    let plain = tempfile::tempdir().unwrap();
    let gz = tempfile::tempdir().unwrap();
    let mut n = 0;
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".json") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(plain.path().join(&name), &bytes).unwrap();
        let f = std::fs::File::create(gz.path().join(format!("{name}.gz"))).unwrap();
        let mut w = flate2::write::GzEncoder::new(f, flate2::Compression::default());
        w.write_all(&bytes).unwrap();
        w.finish().unwrap();
        n += 1;
    }
    assert!(n >= 2, "{n} stored runs in {}", src.display());
    let a = sparsetool_analyze::timing::load_sweep_dir(plain.path()).unwrap();
    let b = sparsetool_analyze::timing::load_sweep_dir(gz.path()).unwrap();
    assert_eq!(a.len(), b.len());
    assert!(!a.is_empty());
    for ((ma, ra), (mb, rb)) in a.iter().zip(&b) {
        assert_eq!(ma, mb);
        assert!(!ma.ends_with(".json") && !ma.contains(".gz"), "{ma}");
        assert_eq!(ra.dtype, rb.dtype);
        assert_eq!(ra.samples().len(), rb.samples().len());
    }
    std::fs::write(gz.path().join("broken-f32.json.gz"), b"not gzip").unwrap();
    let e = sparsetool_analyze::timing::load_sweep_dir(gz.path()).unwrap_err();
    assert!(e.contains("broken-f32.json.gz"), "{e}");
}
