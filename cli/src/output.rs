//! Output plumbing of the commands: the interrupt handler, atomic writes
//! (through [`sparsetool_formats::io`]), phase timings and spinners.

use std::path::Path;
use std::time::Instant;

/// Installs a SIGINT/SIGTERM handler that removes the temporary files of
/// writes in progress and exits with status 130.
pub fn install_interrupt_handler() {
    // Failure to install (e.g. a handler already set in tests) is harmless.
    let _ = ctrlc::set_handler(|| {
        sparsetool_formats::io::remove_pending();
        eprintln!("interrupted: no output written");
        std::process::exit(130);
    });
}

/// Refuses to go on when `out` exists and `force` is off, or its directory
/// does not exist (checked before any work starts).
pub fn check_target(out: &Path, force: bool) -> anyhow::Result<()> {
    Ok(sparsetool_formats::io::check_target(out, force)?)
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
