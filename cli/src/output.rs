//! Output plumbing of the commands: the interrupt handler, atomic writes
//! (through [`sparsetool_formats::io`]), phase timings and spinners.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::Serialize;

/// `--quiet`: no warnings, notes, summary or timing lines, no spinners.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Sets `--quiet` for the whole run.
pub fn set_quiet(q: bool) {
    QUIET.store(q, Ordering::Relaxed);
}

/// Whether `--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Prints a line on stderr unless `--quiet` (warnings, notes, summaries).
macro_rules! note {
    ($($t:tt)*) => {
        if !$crate::output::quiet() {
            eprintln!($($t)*);
        }
    };
}
pub(crate) use note;

/// `--threads N`: sizes rayon's global pool (before any parallel work).
pub fn set_threads(n: Option<u16>) -> anyhow::Result<()> {
    if let Some(n) = n {
        rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(n))
            .build_global()
            .map_err(|e| anyhow::anyhow!("--threads {n}: {e}"))?;
    }
    Ok(())
}

/// `N one` or `N many`: `plural(1, "thread", "threads")` is `1 thread`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What `convert` and `gen` wrote: their summary line on stderr and their
/// `--json` object on stdout (documented in `docs/cli.md`).
#[derive(Debug, Serialize)]
pub struct Written {
    /// The input path (`convert`), or `null`.
    pub input: Option<String>,
    /// The generator kind (`gen`), or `null`.
    pub kind: Option<String>,
    /// The output path, or `-` for standard output.
    pub output: String,
    /// `spb`, `npz`, `mtx` or `mtx.gz`.
    pub container: &'static str,
    /// Storage format written.
    pub format: String,
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// Stored entries.
    pub nnz: usize,
    /// Value type (`f32`, `f64`, `c64`, `c128`).
    pub dtype: String,
    /// Bytes written.
    pub bytes: u64,
    /// Wall time of the whole command, seconds.
    pub seconds: f64,
    /// Wall time of each phase, seconds.
    pub timings: std::collections::BTreeMap<String, f64>,
}

impl Written {
    /// Prints the summary line on stderr (unless `--quiet`), or with `json`
    /// the JSON object on stdout.
    pub fn report(&self, json: bool) -> anyhow::Result<()> {
        use std::io::Write;
        if json {
            let mut out = std::io::stdout().lock();
            serde_json::to_writer_pretty(&mut out, self)?;
            writeln!(out)?;
            return Ok(());
        }
        let what = match &self.kind {
            Some(k) => format!("generated {k}, wrote"),
            None => "wrote".to_string(),
        };
        note!(
            "{what} {} ({}): {}, {} x {}, {}, {}, {} bytes, {:.3} s",
            if self.output == "-" {
                "<stdout>"
            } else {
                &self.output
            },
            self.container,
            self.format,
            self.nrows,
            self.ncols,
            plural(self.nnz, "entry", "entries"),
            self.dtype,
            self.bytes,
            self.seconds
        );
        Ok(())
    }
}
/// Installs a SIGINT/SIGTERM handler that removes the temporary files of
/// writes in progress and exits with status 130.
pub fn install_interrupt_handler() {
    // Failure to install (e.g. a handler already set in tests) is harmless.
    let _ = ctrlc::set_handler(|| {
        sparsetool_formats::io::remove_pending();
        // not eprintln!: it panics on a closed stderr, and this thread must
        // reach the exit the main thread waits for
        let _ =
            std::io::Write::write_all(&mut std::io::stderr(), b"interrupted: no output written\n");
        std::process::exit(130);
    });
}

/// Refuses to go on when `out` exists and `force` is off, or its directory
/// does not exist (checked before any work starts).
pub fn check_target(out: &Path, force: bool) -> anyhow::Result<()> {
    Ok(sparsetool_formats::io::check_target(out, force)?)
}

/// Phase timer for `--timings`: prints `phase: N.NNN s` lines to stderr
/// and keeps every phase for `--json`.
#[derive(Debug)]
pub struct Timings {
    enabled: bool,
    start: Instant,
    last: Instant,
    phases: std::collections::BTreeMap<String, f64>,
}

impl Timings {
    /// A timer that prints only when `enabled` (and not `--quiet`).
    pub fn new(enabled: bool) -> Self {
        let now = Instant::now();
        Self {
            enabled: enabled && !quiet(),
            start: now,
            last: now,
            phases: std::collections::BTreeMap::new(),
        }
    }
    /// Ends the current phase.
    pub fn phase(&mut self, name: &str) {
        let now = Instant::now();
        let secs = (now - self.last).as_secs_f64();
        if self.enabled {
            eprintln!("{name}: {secs:.3} s");
        }
        *self.phases.entry(name.to_string()).or_default() += secs;
        self.last = now;
    }
    /// Seconds since the timer started.
    pub fn total(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
    /// The phases so far, seconds each.
    pub fn phases(&self) -> std::collections::BTreeMap<String, f64> {
        self.phases.clone()
    }
}

/// What a [`Bar`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Input bytes (reading): `1.2 GiB/3.4 GiB`.
    Bytes,
    /// Units of work (entries converted, kernels timed), shown as `N/M`
    /// with the word given.
    Count(&'static str),
}

/// A progress bar on stderr that follows one of the libraries' progress
/// counters ([`sparsetool_formats::progress`]): done of total, percentage
/// and time left, redrawn ten times a second by a polling thread. A
/// counter whose total is unknown (0, e.g. a stream) shows a spinner with
/// the count so far. Shown only on a terminal, without `--quiet`, and
/// when `big` says the work is worth it; nothing otherwise.
#[derive(Debug)]
pub struct Bar {
    pb: Option<indicatif::ProgressBar>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    poll: Option<std::thread::JoinHandle<()>>,
}

impl Bar {
    /// Follows `counter` (restarted at `0 / total` here unless
    /// `keep_total`: the work sets its own total) under `msg`.
    pub fn follow(
        msg: String,
        counter: &'static sparsetool_formats::progress::Progress,
        total: Option<u64>,
        unit: Unit,
        big: bool,
    ) -> Self {
        use std::io::IsTerminal;
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        if let Some(t) = total {
            counter.start(t);
        }
        if !big || quiet() || !std::io::stderr().is_terminal() {
            return Self {
                pb: None,
                stop,
                poll: None,
            };
        }
        let pb = indicatif::ProgressBar::new(total.unwrap_or(0));
        let (with_total, without) = match unit {
            Unit::Bytes => (
                "{msg} [{bar:30}] {bytes}/{total_bytes} ({percent}%, {eta} left)".to_string(),
                "{spinner} {msg}: {bytes} ({bytes_per_sec})".to_string(),
            ),
            Unit::Count(word) => (
                format!("{{msg}} [{{bar:30}}] {{human_pos}}/{{human_len}} {word} ({{percent}}%, {{eta}} left)"),
                format!("{{spinner}} {{msg}}: {{human_pos}} {word}"),
            ),
        };
        let style = |t: &str| {
            indicatif::ProgressStyle::with_template(t)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> ")
        };
        let initial = total.unwrap_or(0) > 0;
        pb.set_style(style(if initial { &with_total } else { &without }));
        pb.set_message(msg);
        let poll = {
            let (pb, stop) = (pb.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut known = Some(initial);
                while !stop.load(Ordering::Relaxed) {
                    let (done, total) = counter.get();
                    if known != Some(total > 0) {
                        known = Some(total > 0);
                        pb.set_style(style(if total > 0 { &with_total } else { &without }));
                    }
                    if total > 0 {
                        pb.set_length(total);
                        pb.set_position(done.min(total));
                    } else {
                        pb.set_position(done);
                        pb.tick();
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            })
        };
        Self {
            pb: Some(pb),
            stop,
            poll: Some(poll),
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(h) = self.poll.take() {
            let _ = h.join();
        }
        if let Some(pb) = self.pb.take() {
            pb.finish_and_clear();
        }
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
        if !big || quiet() || !std::io::stderr().is_terminal() {
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
