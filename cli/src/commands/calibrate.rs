//! `sparsetool calibrate`: a device profile for this GPU.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use sparsetool_gpu::calibrate::{calibrate, CalibrateOptions, Calibration};
use sparsetool_gpu::GpuContext;

use crate::args::CalibrateArgs;
use crate::output::{check_target, note};
use crate::EnvError;

/// Runs `calibrate`.
pub fn run(a: &CalibrateArgs) -> anyhow::Result<()> {
    if let Some(p) = &a.output {
        check_target(p, a.force)?;
    }
    let ctx = GpuContext::new(0).map_err(|e| EnvError(format!("{e}; calibrate needs a GPU")))?;
    if let Some(dir) = &a.save_runs {
        // before the minute of timing, not after it
        std::fs::create_dir_all(dir)
            .with_context(|| format!("{}: cannot create the directory", dir.display()))?;
    }
    let info = ctx.device_info();
    let target: PathBuf = match (&a.output, &info.uuid) {
        (Some(p), _) => p.clone(),
        (None, Some(uuid)) => {
            let Some(dir) = sparsetool_analyze::profile::user_dir() else {
                bail!("neither XDG_CACHE_HOME nor HOME is set: give --output FILE");
            };
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("{}: cannot create the profile directory", dir.display()))?;
            sparsetool_analyze::profile::user_path(&dir, uuid)
        }
        (None, None) => bail!(
            "the driver gives no UUID for {}: give --output FILE and use it with analyze --profile FILE",
            info.name
        ),
    };
    note!(
        "calibrating {} ({} matrices, a minute or two)",
        info.name,
        sparsetool_gpu::calibrate::suite().len()
    );
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| default_name(info.uuid.as_deref()));
    let opts = CalibrateOptions {
        reps: a.reps as usize,
        name,
        ..CalibrateOptions::default()
    };
    let cal = calibrate(&ctx, &opts, |m, i, n| {
        note!("  [{i}/{n}] {} ({})", m.name, m.why);
    })?;
    // a profile analyze would refuse is not written (it would be passed
    // over on every run)
    cal.profile
        .validate()
        .map_err(|e| anyhow::anyhow!("the fit is not a usable profile: {e}; nothing written"))?;
    let json = serde_json::to_string_pretty(&cal.profile)? + "\n";
    // the cache file is ours to replace; --output follows --force
    let force = a.force || a.output.is_none();
    write_text(&target, force, &json)?;
    if let Some(dir) = &a.save_runs {
        for (name, report) in &cal.reports {
            let p = dir.join(format!("{name}.json"));
            let text = serde_json::to_string_pretty(&serde_json::to_value(report)?)? + "\n";
            write_text(&p, true, &text)?;
        }
    }
    let mut out = std::io::stdout().lock();
    if a.json {
        let mut v = serde_json::to_value(&cal)?;
        if let serde_json::Value::Object(m) = &mut v {
            m.insert("written".into(), target.display().to_string().into());
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        write!(out, "{}", render(&cal, &target))?;
    }
    Ok(())
}

/// The name of a profile without `--name`: `local-` and the first 8 hex
/// digits of the GPU's UUID, so profiles of several GPUs differ.
fn default_name(uuid: Option<&str>) -> String {
    let hex: String = uuid
        .unwrap_or_default()
        .trim_start_matches("GPU-")
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(8)
        .collect();
    if hex.is_empty() {
        "local".into()
    } else {
        format!("local-{hex}")
    }
}

/// Writes `text` to `path` through a temporary file and a rename.
fn write_text(path: &std::path::Path, force: bool, text: &str) -> anyhow::Result<()> {
    Ok(sparsetool_formats::io::write_text(path, force, text)?)
}

/// The human summary: one row per suite matrix, then the measured device
/// figures and where the profile went.
fn render(c: &Calibration, target: &std::path::Path) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<10} {:>5} {:>10} {:>7}  {:<34} {:>9} {:>9}  {:<16} {:>6}",
        "matrix",
        "dtype",
        "entries",
        "layouts",
        "fastest (kernel)",
        "µs",
        "fit µs",
        "fit picks",
        "x"
    );
    for r in &c.runs {
        let _ = writeln!(
            s,
            "{:<10} {:>5} {:>10} {:>7}  {:<34} {:>9.1} {:>9.1}  {:<16} {:>6.2}",
            r.matrix,
            r.dtype,
            r.nnz,
            r.layouts,
            r.fastest,
            r.fastest_us,
            r.predicted_us,
            r.recommended,
            r.slowdown
        );
    }
    let _ = writeln!(
        s,
        "\ndevice {} ({})\ncopy bandwidth {:.0} GB/s, launch latency {:.1} µs, x gather {:.3} ns per entry",
        c.profile.device,
        c.profile.uuid.as_deref().unwrap_or("no UUID"),
        c.copy_gbps,
        c.launch_us,
        c.gather_ns_per_entry
    );
    let _ = writeln!(
        s,
        "profile {}: {} measurements fitted in {:.0} s, written to {}",
        c.profile.label(),
        c.samples,
        c.seconds,
        target.display()
    );
    let _ = writeln!(
        s,
        "`sparsetool analyze` on this GPU now predicts with it (or: analyze --profile {})",
        target.display()
    );
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn default_names_follow_the_uuid() {
        assert_eq!(
            super::default_name(Some("GPU-3ebb8fda-e1f8-1538-6667-d6b9224efbbd")),
            "local-3ebb8fda"
        );
        assert_eq!(super::default_name(None), "local");
    }
}
