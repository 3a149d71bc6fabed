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
