//! Process-wide progress counters that long operations advance and a user
//! interface polls (the `sparsetool` CLI draws them as progress bars).
//!
//! The readers add the input bytes they have consumed to [`READ`]: the
//! Matrix Market parser per chunk of a mapped file, and per block of the
//! raw (still compressed) bytes of a stream, so that the total is the
//! file's size on disk. Conversions add the entries they have placed to
//! [`CONVERT`], benchmarks the layouts they have timed to [`BENCH`]. Counters are relaxed atomics: cheap enough
//! to bump once per chunk, never per entry.
//!
//! ```
//! use sparsetool_formats::progress::READ;
//! READ.start(100);
//! READ.add(40);
//! assert_eq!(READ.get(), (40, 100));
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

/// A `done / total` pair of counters.
#[derive(Debug)]
pub struct Progress {
    done: AtomicU64,
    total: AtomicU64,
}

impl Progress {
    /// A counter at `0 / 0`.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
        }
    }

    /// Restarts at `0 / total` (`total` 0: unknown).
    pub fn start(&self, total: u64) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }

    /// Advances by `n`.
    pub fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// `(done, total)`; `done` may pass `total` when work is redone (e.g.
    /// a second parse pass), callers clamp.
    #[must_use]
    pub fn get(&self) -> (u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

/// Input bytes consumed by the readers.
pub static READ: Progress = Progress::new();

/// Entries converted (each conversion pass over the entries adds them).
pub static CONVERT: Progress = Progress::new();

/// Layouts timed by a benchmark (the benchmark sets the total).
pub static BENCH: Progress = Progress::new();

/// A reader that adds the bytes it reads to [`READ`].
#[derive(Debug)]
pub struct Counting<R>(pub R);

impl<R: std::io::Read> std::io::Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        READ.add(n as u64);
        Ok(n)
    }
}
