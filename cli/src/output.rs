//! Writing outputs safely: a temporary file beside OUT, renamed into place
//! only on success; removed on error and on Ctrl-C.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context};

/// Temporary files to remove if the process is interrupted.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Installs a SIGINT/SIGTERM handler that removes pending temporary files
/// and exits with status 130.
pub fn install_interrupt_handler() {
    // Failure to install (e.g. a handler already set in tests) is harmless.
    let _ = ctrlc::set_handler(|| {
        if let Ok(list) = PENDING.lock() {
            for p in list.iter() {
                let _ = std::fs::remove_file(p);
            }
        }
        eprintln!("interrupted: no output written");
        std::process::exit(130);
    });
}

fn forget(path: &Path) {
    if let Ok(mut list) = PENDING.lock() {
        list.retain(|p| p != path);
    }
}

/// Refuses to go on when `out` exists and `force` is off (checked before any
/// work starts, so a long conversion does not end in a refusal).
pub fn check_target(out: &Path, force: bool) -> anyhow::Result<()> {
    if !force && out.exists() {
        bail!("{} exists; use --force to overwrite it", out.display());
    }
    let dir = parent_dir(out);
    if !dir.is_dir() {
        bail!(
            "cannot write {}: directory {} does not exist",
            out.display(),
            dir.display()
        );
    }
    Ok(())
}

/// A temporary file in `dir` (same file system as OUT, so the final rename
/// is atomic) whose mode will be what `File::create` gives (0666 less the
/// umask), not the 0600 of a usual temporary file.
pub fn temp_in(dir: &Path, suffix: &str) -> std::io::Result<tempfile::NamedTempFile> {
    let mut b = tempfile::Builder::new();
    b.prefix(".sparsetool-").suffix(suffix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    b.tempfile_in(dir)
}

/// The directory OUT goes into.
pub fn parent_dir(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes `out` atomically: `write` fills a temporary file in the same
/// directory, which is flushed, synced and renamed over `out` (only if `out`
/// does not exist, unless `force`). On any error the temporary file is removed
/// and `out` is untouched.
pub fn write_atomic<F>(out: &Path, force: bool, write: F) -> anyhow::Result<()>
where
    F: FnOnce(&mut BufWriter<File>) -> anyhow::Result<()>,
{
    check_target(out, force)?;
    let dir = parent_dir(out);
    let tmp = temp_in(&dir, ".tmp")
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    let tmp_path = tmp.path().to_path_buf();
    if let Ok(mut list) = PENDING.lock() {
        list.push(tmp_path.clone());
    }
    let result = (|| -> anyhow::Result<()> {
        let file = tmp.reopen().context("cannot reopen the temporary file")?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        write(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        Ok(())
    })();
    let result = result.and_then(|()| {
        let persisted = if force {
            tmp.persist(out)
        } else {
            tmp.persist_noclobber(out)
        };
        persisted
            .map(|_| ())
            .map_err(|e| anyhow::Error::new(e.error))
    });
    forget(&tmp_path);
    result.with_context(|| format!("cannot write {}", out.display()))
}

/// Phase timer for `--timings`: prints `phase: N.NNN s` lines to stderr.
#[derive(Debug)]
pub struct Timings {
    enabled: bool,
    last: Instant,
}

impl Timings {
    /// A timer that prints only when `enabled`.
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            last: Instant::now(),
        }
    }
    /// Ends the current phase.
    pub fn phase(&mut self, name: &str) {
        let now = Instant::now();
        if self.enabled {
            eprintln!("{name}: {:.3} s", (now - self.last).as_secs_f64());
        }
        self.last = now;
    }
}

/// A spinner on stderr for work that may take more than a second; shown only
/// on a terminal and only when `big` says the work is large.
#[derive(Debug)]
pub struct Spinner(Option<indicatif::ProgressBar>);

impl Spinner {
    /// Starts a spinner with `msg`.
    pub fn start(msg: String, big: bool) -> Self {
        use std::io::IsTerminal;
        if !big || !std::io::stderr().is_terminal() {
            return Self(None);
        }
        let pb = indicatif::ProgressBar::new_spinner();
        pb.set_message(msg);
        pb.enable_steady_tick(std::time::Duration::from_millis(120));
        Self(Some(pb))
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(pb) = self.0.take() {
            pb.finish_and_clear();
        }
    }
}
