//! Out-of-core conversion: a Matrix Market file (plain or gzip, from a
//! file or a stream) to a `.spb` file in a memory budget, for matrices
//! that do not fit in memory. See `docs/out-of-core.md`.
//!
//! 1. **Scatter** — one streaming pass over the input with the reader's
//!    own block parser ([`EntryStream`]: blocks of whole lines parsed by
//!    the parallel chunk parser, symmetric, skew-symmetric and hermitian
//!    files expanded) appends every entry `(major, minor, value)` to the
//!    file of its bucket — a contiguous range of rows (CSR, and the GPU
//!    layouts) or of columns (CSC) — in a scratch directory, through one
//!    bounded buffer per bucket. COO keeps the entries in the reader's
//!    order (stored ones, then their mirrors) in two files.
//! 2. **Build** — bucket by bucket, in order: a counting sort by major,
//!    then per major the in-memory conversion's own kernel (a stable sort
//!    by minor and a left-to-right sum of duplicates); the bucket's part
//!    of every section is appended to the output at its offset in the
//!    file's layout and hashed as it goes. A bucket over its share of the
//!    budget (skewed rows) is split in two or more once more.
//! 3. **Finish** — if duplicates were summed, the sections after the
//!    first shrunken one move left; the header and the section table
//!    (with the checksums) go at offset 0.
//! 4. **GPU layouts** (ELL, HYB, JDS, SELL) need the row lengths first:
//!    steps 1-3 write the CSR into the scratch directory, which is then
//!    mapped and read in row blocks (ELL, HYB) or in sorted order (JDS,
//!    SELL) to write the layout in bounded pieces (`layouts.rs`).
//!
//! The file is byte-identical to the one the in-memory path writes, for
//! any budget: both sum duplicates in input order with the same kernel
//! and lay the sections out with the same [`Layout`].
//!
//! [`Layout`]: sparsetool_formats::binary::Layout

mod build;
mod layouts;
mod out;
mod scatter;

pub use sparsetool_formats::binary::CsrView;

use std::io::Read;
use std::path::{Path, PathBuf};

use sparsetool_formats::binary::{SectionSpec, SpbError, SpbFile, SpbOptions};
use sparsetool_formats::io::{OutputKind, SaveOptions};
use sparsetool_formats::mm::{
    self, EntryBlock, EntryStream, Header, MmError, MmSymmetry, ReadOptions, Warning, WriteSymmetry,
};
use sparsetool_formats::{AnyMatrix, Coo, FormatKind, Index, MatrixRef, Scalar};

use crate::{ConvertError, ConvertParams};

use out::{fields, SpbOut};
use scatter::{read_records, record_size, Buckets};

/// Why an out-of-core conversion failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OocError {
    /// The input could not be read (names the file, and the line where
    /// it applies).
    #[error(transparent)]
    Read(#[from] MmError),
    /// A temporary or output file could not be written or read.
    #[error("{path}: {what}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What was being done.
        what: &'static str,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The disk is full, or too small for the conversion.
    #[error("{path}: not enough disk space: the conversion needs about {} there, {} {}", human(*needed), human(*available), if *during { "were free when it started" } else { "are free" })]
    NoSpace {
        /// The directory or file.
        path: String,
        /// Bytes the conversion needs there (an estimate).
        needed: u64,
        /// Bytes free there.
        available: u64,
        /// The write failed midway (`false`: refused up front).
        during: bool,
    },
    /// What this conversion cannot do out of core.
    #[error("{0}")]
    Unsupported(String),
    /// The output layout could not be computed, or a scratch `.spb` file
    /// could not be read back.
    #[error(transparent)]
    Spb(#[from] SpbError),
    /// The `.npz` or Matrix Market output could not be written.
    #[error(transparent)]
    Output(Box<sparsetool_formats::io::Error>),
    /// The GPU layout's parameters do not fit the matrix (an ELL width
    /// below the longest row, too much padding, an index overflow).
    #[error(transparent)]
    Convert(#[from] ConvertError),
    /// The caller's choice of parameters failed.
    #[error("{0}")]
    Params(String),
    /// A broken invariant of the engine (a bug).
    #[error("internal error: {0}")]
    Internal(String),
}

fn human(b: u64) -> String {
    sparsetool_formats::alloc::human_bytes(u128::from(b))
}

impl OocError {
    pub(crate) fn io(path: &Path, what: &'static str, source: std::io::Error) -> Self {
        let path = path.display().to_string();
        if source.kind() == std::io::ErrorKind::StorageFull {
            return OocError::NoSpace {
                path,
                needed: 0,
                available: 0,
                during: true,
            };
        }
        OocError::Io { path, what, source }
    }
}

/// Memory and scratch space of an out-of-core conversion.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Bytes of memory to stay within (buffers, the bucket being built);
    /// the input's and output's pages in the page cache are the
    /// kernel's, not the budget's.
    pub bytes: u64,
    /// Where the scratch directory of buckets goes.
    pub tmp_dir: PathBuf,
}

/// What an out-of-core conversion wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OocSummary {
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// Stored entries of the output.
    pub nnz: usize,
    /// Entries read (after symmetric expansion, duplicates included).
    pub entries: u64,
    /// Buckets built (splits included).
    pub buckets: usize,
    /// Bytes of the output file.
    pub bytes: u64,
    /// Warnings of lenient recoveries.
    pub warnings: Vec<Warning>,
}

/// An upper estimate of the memory the in-memory path needs to convert a
/// Matrix Market file with header `h` to `target` (the entries as read,
/// the CSR and the target), to decide between it and
/// [`convert_out_of_core`].
#[must_use]
pub fn in_memory_estimate<T: Scalar, I: Index>(h: &Header, target: FormatKind) -> u128 {
    let (isz, vsz) = (
        std::mem::size_of::<I>() as u128,
        std::mem::size_of::<T>() as u128,
    );
    let e = h.nnz_expanded_max() as u128;
    let coo = e * (2 * isz + vsz);
    let csr = (h.nrows as u128 + 1) * isz + e * (isz + vsz);
    match target {
        FormatKind::Coo => coo,
        FormatKind::Csr => coo + csr,
        _ => coo + 2 * csr,
    }
}

/// Whether [`convert_out_of_core`] can convert a file with header `h` to
/// `target` within `budget` bytes: the rows (CSC: columns) must spread
/// over at most 4096 buckets whose counters fit the budget. Files with
/// absurd dimensions (2^63 rows) are left to the in-memory path's own
/// refusal.
#[must_use]
pub fn fits<T, I>(h: &Header, target: FormatKind, budget: u64) -> bool {
    let plan = Plan::new::<T, I>(budget);
    let majors = if target == FormatKind::Csc {
        h.ncols
    } else {
        h.nrows
    };
    let nb = plan.buckets(h.nnz_expanded_max(), majors);
    majors.div_ceil(nb) <= plan.bucket_majors
}

/// How [`convert_out_of_core`] gets the GPU layouts' parameters: from the
/// CSR matrix it built (an error is reported as [`OocError::Params`]).
pub type ChooseParams<'a, T, I> = dyn Fn(&CsrView<'_, T, I>) -> Result<ConvertParams, String> + 'a;

/// The formats [`convert_out_of_core`] writes: all of them.
pub const OOC_FORMATS: [FormatKind; 7] = FormatKind::ALL;

/// Bytes free for an unprivileged user on the file system of `dir`.
#[must_use]
pub fn free_space(dir: &Path) -> Option<u64> {
    let s = nix::sys::statvfs::statvfs(dir).ok()?;
    Some((s.blocks_available() as u64).saturating_mul(s.fragment_size() as u64))
}

/// The file system holding `dir` (to add up what two directories on one
/// file system need).
fn device_of(dir: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).ok().map(|m| m.dev())
}

/// How the budget is spent.
#[derive(Debug, Clone, Copy)]
struct Plan {
    /// Bytes of a block of input lines.
    block: usize,
    /// Most entries a bucket may hold to be built in memory.
    bucket_entries: usize,
    /// Most majors per bucket (their counters).
    bucket_majors: usize,
    /// Bytes of a bucket's write buffer.
    buffer: usize,
    /// Bytes of a read buffer.
    chunk: usize,
}

impl Plan {
    fn new<T, I>(budget: u64) -> Self {
        let b = usize::try_from(budget).unwrap_or(usize::MAX);
        // Build memory per entry: its minor and value; per major: two
        // counters.
        let per_entry = std::mem::size_of::<I>() + std::mem::size_of::<T>();
        let build = b / 10 * 6;
        Self {
            block: (b / 16).clamp(64 << 10, 16 << 20),
            bucket_entries: (build / per_entry).max(1024),
            bucket_majors: (build / 4 / 16).max(1024),
            buffer: (b / 4).max(4096),
            chunk: (b / 32).clamp(16 << 10, 4 << 20),
        }
    }

    /// Buckets for `entries` entries over `majors` majors.
    fn buckets(&self, entries: usize, majors: usize) -> usize {
        entries
            .div_ceil(self.bucket_entries)
            .max(majors.div_ceil(self.bucket_majors))
            .clamp(1, 4096)
    }
}

/// Converts the Matrix Market text read from `input` (plain or gzip;
/// `name` is used in messages) to a `.spb` file at `out` holding `target`
/// (any format), within `budget`. The file is byte-identical to what the
/// in-memory path writes for the same input, types and parameters.
///
/// `params` gives the GPU layouts' parameters (ELL and HYB widths, SELL's
/// C and σ), as [`crate::from_csr`] takes them; it is called once, with
/// the CSR matrix built out of core, so that a choice that depends on the
/// row lengths (a recommended width) sees them. It is not called for CSR,
/// CSC and COO.
///
/// `out` is written in place (the caller writes to a temporary name and
/// renames). The scratch directory is created in `budget.tmp_dir`,
/// registered for [`sparsetool_formats::io::remove_pending`] (signals)
/// and removed on return, success or not.
///
/// # Errors
/// The input's errors (file and line), a full disk (path and bytes
/// needed; checked up front too), I/O errors, parameters that do not fit
/// the matrix ([`OocError::Convert`], [`OocError::Params`]).
///
/// ```
/// use sparsetool_convert::ooc::{convert_out_of_core, Budget};
/// use sparsetool_convert::ConvertParams;
/// use sparsetool_formats::{mm::ReadOptions, FormatKind};
/// let mtx = "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1\n2 2 2\n3 1 3\n3 3 4\n";
/// let dir = tempfile::tempdir().unwrap();
/// let out = dir.path().join("m.spb");
/// let budget = Budget { bytes: 256 << 10, tmp_dir: dir.path().to_path_buf() };
/// let s = convert_out_of_core::<f64, i32>(
///     mtx.as_bytes(), "m.mtx", &ReadOptions::default(), FormatKind::Ell,
///     &|_| Ok(ConvertParams::default()), &budget, &out,
/// ).unwrap();
/// assert_eq!((s.nrows, s.nnz), (3, 4));
/// ```
pub fn convert_out_of_core<T: Scalar, I: Index>(
    input: impl Read + Send,
    name: &str,
    opts: &ReadOptions,
    target: FormatKind,
    params: &ChooseParams<'_, T, I>,
    budget: &Budget,
    out: &Path,
) -> Result<OocSummary, OocError> {
    let output = Output {
        path: out,
        kind: OutputKind::Spb,
        save: &SaveOptions::default(),
    };
    convert_out_of_core_to(input, name, opts, target, params, budget, &output)
}

/// Where an out-of-core conversion writes, and in which container.
#[derive(Debug, Clone, Copy)]
pub struct Output<'a> {
    /// The file, written in place (the caller writes to a temporary name
    /// and renames).
    pub path: &'a Path,
    /// The container: `.spb`, `.npz`, `.mtx` or `.mtx.gz`.
    pub kind: OutputKind,
    /// Matrix Market options: the storage to declare, and comment lines
    /// (written after the input's own header comments, which a Matrix
    /// Market output carries over as the in-memory path does).
    pub save: &'a SaveOptions,
}

/// [`convert_out_of_core`] into any container, byte-identical to what the
/// in-memory path writes for the same input (`io::write_to_with` of the
/// converted matrix, the input's header comments carried into a Matrix
/// Market output):
///
/// - `.spb`: written as the conversion goes.
/// - `.npz`: the `.spb` is built in the scratch directory, then mapped
///   and copied into the archive array by array (stored entries, no
///   compression: the arrays stream from the page cache).
/// - `.mtx`, `.mtx.gz`: a Matrix Market file holds the entries, not the
///   layout: the CSR is built in the scratch directory (a GPU layout's
///   parameters are still checked, so what fails in memory fails here),
///   mapped, and written row by row, symmetric storage found in place. A
///   COO target keeps the stored order: its `.spb` is built, and when it
///   may be symmetric its canonical CSR too (a second out-of-core pass,
///   over the mapped COO) to decide.
///
/// # Errors
/// As [`convert_out_of_core`], and the output's write errors.
///
/// ```
/// use sparsetool_convert::ooc::{convert_out_of_core_to, Budget, Output};
/// use sparsetool_convert::ConvertParams;
/// use sparsetool_formats::io::{OutputKind, SaveOptions};
/// use sparsetool_formats::{mm::ReadOptions, FormatKind};
/// let mtx = "%%MatrixMarket matrix coordinate real symmetric\n% kept\n3 3 3\n1 1 1\n2 1 2\n3 3 4\n";
/// let dir = tempfile::tempdir().unwrap();
/// let out = dir.path().join("m.mtx");
/// let budget = Budget { bytes: 256 << 10, tmp_dir: dir.path().to_path_buf() };
/// let output = Output { path: &out, kind: OutputKind::Mtx, save: &SaveOptions::default() };
/// let s = convert_out_of_core_to::<f64, i32>(
///     mtx.as_bytes(), "m.mtx", &ReadOptions::default(), FormatKind::Csr,
///     &|_| Ok(ConvertParams::default()), &budget, &output,
/// ).unwrap();
/// assert_eq!((s.nrows, s.nnz), (3, 4));
/// let text = std::fs::read_to_string(&out).unwrap();
/// assert!(text.starts_with("%%MatrixMarket matrix coordinate real symmetric\n% kept\n"));
/// assert!(text.ends_with("3 3 3\n1 1 1.0\n2 1 2.0\n3 3 4.0\n"));
/// ```
pub fn convert_out_of_core_to<T: Scalar, I: Index>(
    input: impl Read + Send,
    name: &str,
    opts: &ReadOptions,
    target: FormatKind,
    params: &ChooseParams<'_, T, I>,
    budget: &Budget,
    output: &Output<'_>,
) -> Result<OocSummary, OocError> {
    let stream = EntryStream::open(input, name, opts)?;
    let h = *stream.header();
    let plan = Plan::new::<T, I>(budget.bytes);
    if !fits::<T, I>(&h, target, budget.bytes) {
        return Err(OocError::Unsupported(format!(
            "{name}: {} x {} is too large to convert out of core in {}",
            h.nrows,
            h.ncols,
            human(budget.bytes)
        )));
    }
    let out = output.path;
    check_space::<T, I>(&h, target, output.kind, budget, out)?;
    let scratch = sparsetool_formats::io::create_pending(
        || {
            tempfile::Builder::new()
                .prefix(".sparsetool-ooc-")
                .tempdir_in(&budget.tmp_dir)
                .map_err(|e| {
                    OocError::io(&budget.tmp_dir, "cannot create a scratch directory in", e)
                })
        },
        tempfile::TempDir::path,
    )?;
    let dir = scratch.path();
    let mut save = output.save.clone();
    save.comments = stream
        .comments()
        .iter()
        .cloned()
        .chain(save.comments)
        .collect();
    let feed = |sink: &mut dyn FnMut(EntryBlock<'_, T, I>) -> bool| {
        stream.for_each_block::<T, I>(plan.block, sink)
    };
    let job = Job {
        h: &h,
        target,
        params,
        plan: &plan,
        dir,
    };
    let result = match output.kind {
        OutputKind::Spb => to_spb(feed, &job, target, out),
        OutputKind::Npz => to_npz(feed, &job, output, &save),
        OutputKind::Mtx | OutputKind::MtxGz => to_mtx(feed, &job, output, save),
    };
    sparsetool_formats::io::untrack_pending(dir);
    let dir = dir.to_path_buf();
    drop(scratch);
    result.map_err(|e| with_need::<T, I>(e, &h, target, output.kind, &dir, out))
}

/// Bytes the scratch directory and the output need (upper estimates
/// from the header; a Matrix Market output's size is not known, and 0).
fn needs<T, I>(h: &Header, target: FormatKind, kind: OutputKind) -> (u64, u64) {
    let (scratch, spb) = needs_spb::<T, I>(h, target);
    match kind {
        OutputKind::Spb => (scratch, spb),
        // The `.spb` built in the scratch directory, then the archive.
        OutputKind::Npz => (scratch.saturating_add(spb), spb.saturating_add(4096)),
        // The CSR (a COO target: the COO and its CSR).
        OutputKind::Mtx | OutputKind::MtxGz => (scratch.saturating_add(spb.saturating_mul(2)), 0),
    }
}

/// [`needs`] of a `.spb` output.
fn needs_spb<T, I>(h: &Header, target: FormatKind) -> (u64, u64) {
    let e = h.nnz_expanded_max() as u64;
    let (isz, vsz) = (
        std::mem::size_of::<I>() as u64,
        std::mem::size_of::<T>() as u64,
    );
    let mut scratch = e.saturating_mul(record_size::<T, I>() as u64);
    let majors = if target == FormatKind::Csc {
        h.ncols
    } else {
        h.nrows
    } as u64;
    let csr = e
        .saturating_mul(isz + vsz)
        .saturating_add((majors + 1).saturating_mul(isz))
        .saturating_add(4096);
    // The GPU layouts are built from a CSR in the scratch directory; their
    // own size (at least the CSR's) is checked once the widths are known.
    let output = match target {
        FormatKind::Coo => e.saturating_mul(2 * isz + vsz).saturating_add(4096),
        FormatKind::Csr | FormatKind::Csc => csr,
        _ => {
            scratch = scratch.saturating_add(csr);
            csr
        }
    };
    (scratch, output)
}

/// Refuses up front when the scratch directory's and the output's file
/// systems cannot hold what the header says the conversion writes.
fn check_space<T, I>(
    h: &Header,
    target: FormatKind,
    kind: OutputKind,
    budget: &Budget,
    out: &Path,
) -> Result<(), OocError> {
    let (scratch, output) = needs::<T, I>(h, target, kind);
    let out_dir = sparsetool_formats::io::parent_dir(out);
    let same =
        device_of(&budget.tmp_dir).is_some() && device_of(&budget.tmp_dir) == device_of(&out_dir);
    let mut wants = vec![(budget.tmp_dir.clone(), scratch)];
    if same {
        // Buckets are deleted as the output grows: the peak is below the
        // sum, but the sum is what can be promised.
        wants[0].1 = scratch.saturating_add(output);
    } else {
        wants.push((out_dir, output));
    }
    for (dir, needed) in wants {
        if let Some(available) = free_space(&dir) {
            if available < needed {
                return Err(OocError::NoSpace {
                    path: dir.display().to_string(),
                    needed,
                    available,
                    during: false,
                });
            }
        }
    }
    Ok(())
}

/// Fills in what a disk-full error midway needed and had.
fn with_need<T, I>(
    e: OocError,
    h: &Header,
    target: FormatKind,
    kind: OutputKind,
    scratch: &Path,
    out: &Path,
) -> OocError {
    match e {
        OocError::NoSpace {
            path, during: true, ..
        } => {
            let (s, o) = needs::<T, I>(h, target, kind);
            let in_scratch = Path::new(&path).starts_with(scratch);
            let dir = if in_scratch {
                scratch.to_path_buf()
            } else {
                out.to_path_buf()
            };
            OocError::NoSpace {
                available: free_space(&sparsetool_formats::io::parent_dir(&dir)).unwrap_or(0),
                path,
                needed: if in_scratch { s } else { o },
                during: true,
            }
        }
        e => e,
    }
}

/// What every step of one conversion shares.
struct Job<'a, 'p, T, I> {
    h: &'a Header,
    target: FormatKind,
    params: &'a ChooseParams<'p, T, I>,
    plan: &'a Plan,
    /// The scratch directory.
    dir: &'a Path,
}

/// Hands the entries over in blocks (a `false` from the sink stops it)
/// and returns the warnings of reading them: the reader's blocks, or a
/// mapped COO's ([`coo_feed`]).
trait Feed<T, I>:
    FnOnce(&mut dyn FnMut(EntryBlock<'_, T, I>) -> bool) -> Result<Vec<Warning>, MmError>
{
}

impl<T, I, F> Feed<T, I> for F where
    F: FnOnce(&mut dyn FnMut(EntryBlock<'_, T, I>) -> bool) -> Result<Vec<Warning>, MmError>
{
}

/// The entries of a COO matrix (a mapped scratch file), in stored order,
/// as blocks of about `block` bytes.
fn coo_feed<'c, T: Scalar, I: Index>(coo: &'c Coo<T, I>, block: usize) -> impl Feed<T, I> + 'c {
    move |sink: &mut dyn FnMut(EntryBlock<'_, T, I>) -> bool| {
        let (r, c, v) = (coo.rows(), coo.cols(), coo.values());
        let step = (block / record_size::<T, I>()).max(1);
        let mut s = 0;
        while s < v.len() {
            let e = (s + step).min(v.len());
            let b = EntryBlock {
                stored: (&r[s..e], &c[s..e], &v[s..e]),
                mirrored: (&[][..], &[][..], &[][..]),
            };
            if !sink(b) {
                break;
            }
            s = e;
        }
        Ok(Vec::new())
    }
}

/// `target` as a `.spb` file at `out`.
fn to_spb<T: Scalar, I: Index>(
    feed: impl Feed<T, I>,
    job: &Job<'_, '_, T, I>,
    target: FormatKind,
    out: &Path,
) -> Result<OocSummary, OocError> {
    if matches!(target, FormatKind::Coo | FormatKind::Csr | FormatKind::Csc) {
        return build_plain(feed, job, target, out);
    }
    let csr = job.dir.join("csr.spb");
    let mut s = build_plain(feed, job, FormatKind::Csr, &csr)?;
    s.bytes = layout(job, &csr, s.nnz, Some(out))?;
    let _ = std::fs::remove_file(&csr);
    Ok(s)
}

/// Step 4: the GPU layout `job.target` built from the CSR file `csr` (of
/// `nnz` entries) at `out`; without `out`, only the check that the
/// parameters fit the matrix.
fn layout<T: Scalar, I: Index>(
    job: &Job<'_, '_, T, I>,
    csr: &Path,
    nnz: usize,
    out: Option<&Path>,
) -> Result<u64, OocError> {
    let (nrows, ncols) = (job.h.nrows, job.h.ncols);
    let mapped = layouts::MappedCsr::open::<T, I>(csr, nrows, nnz)?;
    let view = mapped.view::<T, I>(nrows, ncols)?;
    let p = (job.params)(&view).map_err(OocError::Params)?;
    layouts::write(&view, job.target, &p, job.plan, out)
}

/// `.npz`: the `.spb` in the scratch directory, then the archive from its
/// mapped arrays.
fn to_npz<T: Scalar, I: Index>(
    feed: impl Feed<T, I>,
    job: &Job<'_, '_, T, I>,
    output: &Output<'_>,
    save: &SaveOptions,
) -> Result<OocSummary, OocError> {
    let spb = job.dir.join("out.spb");
    let mut s = to_spb(feed, job, job.target, &spb)?;
    let m = open_mapped::<T, I>(&spb)?;
    s.bytes = write_container(output, m.as_ref(), save)?;
    Ok(s)
}

/// `.mtx` and `.mtx.gz` (see [`convert_out_of_core_to`]).
fn to_mtx<T: Scalar, I: Index>(
    feed: impl Feed<T, I>,
    job: &Job<'_, '_, T, I>,
    output: &Output<'_>,
    mut save: SaveOptions,
) -> Result<OocSummary, OocError> {
    let csr_path = job.dir.join("csr.spb");
    save.storage = Some(job.target);
    if job.target != FormatKind::Coo {
        let mut s = build_plain(feed, job, FormatKind::Csr, &csr_path)?;
        if !matches!(job.target, FormatKind::Csr | FormatKind::Csc) {
            layout(job, &csr_path, s.nnz, None)?;
        }
        let csr = open_mapped::<T, I>(&csr_path)?;
        s.bytes = write_container(output, csr.as_ref(), &save)?;
        return Ok(s);
    }
    let coo_path = job.dir.join("coo.spb");
    let mut s = build_plain(feed, job, FormatKind::Coo, &coo_path)?;
    let AnyMatrix::Coo(coo) = open_mapped::<T, I>(&coo_path)? else {
        return Err(OocError::Internal(
            "the scratch COO file holds another format".into(),
        ));
    };
    if save.symmetry == WriteSymmetry::Auto && mm::may_be_symmetric(&coo) {
        // As the in-memory writer: the canonical CSR (sorted, duplicates
        // summed in stored order) decides; a symmetric one is written.
        let h = Header {
            symmetry: MmSymmetry::General,
            entries: coo.nnz(),
            ..*job.h
        };
        let sub = Job { h: &h, ..*job };
        let c = build_plain(
            coo_feed(&coo, job.plan.block),
            &sub,
            FormatKind::Csr,
            &csr_path,
        )?;
        let csr = open_mapped::<T, I>(&csr_path)?;
        if let AnyMatrix::Csr(m) = &csr {
            if mm::symmetry_of(m, mm::default_field::<T>()) != MmSymmetry::General {
                s.bytes = write_container(output, csr.as_ref(), &save)?;
                s.buckets += c.buckets;
                return Ok(s);
            }
        }
        drop(csr);
        let _ = std::fs::remove_file(&csr_path);
        save.symmetry = WriteSymmetry::General;
    }
    s.bytes = write_container(output, MatrixRef::Coo(&coo), &save)?;
    Ok(s)
}

/// Opens a scratch `.spb` file (mapped: every format's arrays are read in
/// place, so they are page cache, not budget).
fn open_mapped<T: Scalar, I: Index>(path: &Path) -> Result<AnyMatrix<T, I>, OocError> {
    // Written by this process just now: its checksums are not read back,
    // its structure is still checked. Values were checked by the reader
    // (non-finite ones only when it was lenient).
    let f = SpbFile::open(
        path,
        &SpbOptions {
            verify_checksums: false,
        },
    )?;
    Ok(f.to_matrix_with::<T, I>(true)?.0)
}

/// Writes `m` to the output in its container; returns the bytes written.
fn write_container<T: Scalar, I: Index>(
    output: &Output<'_>,
    m: MatrixRef<'_, T, I>,
    save: &SaveOptions,
) -> Result<u64, OocError> {
    let path = output.path;
    let io = |e| OocError::io(path, "cannot write", e);
    let file = std::fs::File::create(path).map_err(io)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    sparsetool_formats::io::write_to_with(&mut w, path, output.kind, m, save)
        .map_err(|e| OocError::Output(Box::new(e)))?;
    let file = w.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)?;
    Ok(file.metadata().map_err(io)?.len())
}

/// Steps 1-3: the scatter pass, then the build of `kind` (COO, CSR or
/// CSC) at `out`.
fn build_plain<T: Scalar, I: Index>(
    feed: impl Feed<T, I>,
    job: &Job<'_, '_, T, I>,
    kind: FormatKind,
    out: &Path,
) -> Result<OocSummary, OocError> {
    let (h, plan, dir, target) = (job.h, job.plan, job.dir, kind);
    let csc = target == FormatKind::Csc;
    let majors = if csc { h.ncols } else { h.nrows };
    let coo = target == FormatKind::Coo;
    let nb = if coo {
        1
    } else {
        plan.buckets(h.nnz_expanded_max(), majors)
    };
    // Buffers of a few MB make large sequential writes; more would only
    // hold memory.
    let cap = (plan.buffer / nb).clamp(4096, 8 << 20);
    // Bucket files named after the output, so that two builds in one
    // scratch directory (a COO and its CSR) never share one.
    let stem = match out.file_stem().and_then(|s| s.to_str()) {
        Some(s) if out.parent() == Some(dir) => s,
        _ => "out",
    };
    let mut main = Buckets::new(dir, &format!("{stem}-b"), 0, majors.max(1), nb, cap);
    // COO: the mirrors go after every stored entry, as the reader puts them.
    let mut mirrors = Buckets::new(dir, &format!("{stem}-m"), 0, majors.max(1), 1, cap);
    let mut failed = None;
    let mut entries = 0u64;
    let read = feed(&mut |b: EntryBlock<'_, T, I>| {
        let r = (|| {
            let (sr, sc, sv) = b.stored;
            let (mr, mc, mv) = b.mirrored;
            entries += (sv.len() + mv.len()) as u64;
            if csc {
                push_all(&mut main, sc, sr, sv)?;
                push_all(&mut main, mc, mr, mv)
            } else {
                push_all(&mut main, sr, sc, sv)?;
                push_all(if coo { &mut mirrors } else { &mut main }, mr, mc, mv)
            }
        })();
        match r {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let warnings = read?;
    main.finish()?;
    mirrors.finish()?;
    if entries > I::MAX_USIZE as u64 {
        return Err(OocError::Read(MmError::new(
            "",
            None,
            sparsetool_formats::mm::MmErrorKind::IndexOverflow {
                what: "nnz after symmetric expansion",
                value: u128::from(entries),
                index: I::NAME,
            },
        )));
    }
    let e = entries as usize;
    let (nnz, buckets, bytes) = match target {
        FormatKind::Coo => {
            let bytes = write_coo::<T, I>(h, [&main, &mirrors], e, plan, out)?;
            (e, 1, bytes)
        }
        _ => write_compressed::<T, I>(h, target, &main, e, plan, out)?,
    };
    Ok(OocSummary {
        nrows: h.nrows,
        ncols: h.ncols,
        nnz,
        entries,
        buckets,
        bytes,
        warnings,
    })
}

fn push_all<T: Scalar, I: Index>(
    b: &mut Buckets,
    major: &[I],
    minor: &[I],
    v: &[T],
) -> Result<(), OocError> {
    for ((&i, &j), &x) in major.iter().zip(minor).zip(v) {
        b.push(i, j, x)?;
    }
    Ok(())
}

/// COO: the entries in the reader's order, three sections.
fn write_coo<T: Scalar, I: Index>(
    h: &Header,
    parts: [&Buckets; 2],
    e: usize,
    plan: &Plan,
    out: &Path,
) -> Result<u64, OocError> {
    let n = e as u64;
    let mut o = SpbOut::create(out, &specs::<T, I>(["rows", "cols"], [n, n])?)?;
    sparsetool_formats::progress::CONVERT.start(2);
    let cap = (plan.chunk / record_size::<T, I>()).max(1);
    let (mut r, mut c, mut v) = (
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
    );
    for part in parts {
        let path = part.path(0);
        read_records::<T, I>(&path, plan.chunk, |i, j, x| {
            r.push(i);
            c.push(j);
            v.push(x);
            if v.len() == cap {
                o.append_entries(0, &mut r, &mut c, &mut v)?;
            }
            Ok(())
        })?;
        o.append_entries(0, &mut r, &mut c, &mut v)?;
        let _ = std::fs::remove_file(&path);
        sparsetool_formats::progress::CONVERT.add(1);
    }
    o.finish(
        &fields::<T, I>(FormatKind::Coo, h.nrows, h.ncols, n, (0, 0))?,
        &[n, n, n],
    )
}

/// Sections of the given names, kinds (`true`: values) and counts, in
/// this order.
fn sections<T: Scalar, I: Index>(
    list: &[(&'static str, bool, u64)],
) -> Result<Vec<SectionSpec>, OocError> {
    let (idx, val) = dtypes::<T, I>()?;
    Ok(list
        .iter()
        .map(|&(name, is_value, count)| SectionSpec {
            name,
            dtype: if is_value { val } else { idx },
            count,
        })
        .collect())
}

/// Two index sections of `counts` elements, then `values` of as many
/// as the second (COO, CSR, CSC).
fn specs<T: Scalar, I: Index>(
    names: [&'static str; 2],
    counts: [u64; 2],
) -> Result<Vec<SectionSpec>, OocError> {
    sections::<T, I>(&[
        (names[0], false, counts[0]),
        (names[1], false, counts[1]),
        ("values", true, counts[1]),
    ])
}

fn dtypes<T: Scalar, I: Index>() -> Result<
    (
        sparsetool_formats::binary::DType,
        sparsetool_formats::binary::DType,
    ),
    OocError,
> {
    use sparsetool_formats::binary::DType;
    let bad = || OocError::Internal("unsupported value or index type".into());
    Ok((
        DType::of_index(I::NAME).ok_or_else(bad)?,
        DType::of_value(T::NAME).ok_or_else(bad)?,
    ))
}

/// CSR (CSC: the CSR of the transpose): bucket by bucket.
fn write_compressed<T: Scalar, I: Index>(
    h: &Header,
    target: FormatKind,
    main: &Buckets,
    e: usize,
    plan: &Plan,
    out: &Path,
) -> Result<(usize, usize, u64), OocError> {
    let csc = target == FormatKind::Csc;
    let majors = if csc { h.ncols } else { h.nrows };
    let names = if csc {
        ["col_ptr", "row_idx"]
    } else {
        ["row_ptr", "col_idx"]
    };
    let counts = [majors as u64 + 1, e as u64];
    let mut o = SpbOut::create(out, &specs::<T, I>(names, counts)?)?;
    o.append(0, &[I::default()])?;
    let mut nnz = 0usize;
    let mut built = 0usize;
    sparsetool_formats::progress::CONVERT.start(main.len() as u64);
    let mut todo: Vec<(PathBuf, (usize, usize), u64, usize)> = Vec::new();
    for k in (0..main.len()).rev() {
        todo.push((main.path(k), main.range(k), main.counts[k], 0));
    }
    // Depth-first: a bucket too big for the budget is split into
    // sub-buckets that take its place, in order.
    while let Some((path, (lo, hi), n, depth)) = todo.pop() {
        if hi <= lo {
            continue;
        }
        let n = n as usize;
        if n > plan.bucket_entries && hi - lo > 1 && depth < 8 {
            let parts = n.div_ceil(plan.bucket_entries).max(2) * 2;
            let tag = format!(
                "{}-s",
                path.file_stem().and_then(|s| s.to_str()).unwrap_or("b")
            );
            let dir = path.parent().unwrap_or(Path::new("."));
            let mut sub = Buckets::new(
                dir,
                &tag,
                lo,
                hi,
                parts.min(hi - lo),
                plan.buffer / parts.max(1),
            );
            read_records::<T, I>(&path, plan.chunk, |i, j, v| sub.push(i, j, v))?;
            sub.finish()?;
            let _ = std::fs::remove_file(&path);
            for s in (0..sub.len()).rev() {
                todo.push((sub.path(s), sub.range(s), sub.counts[s], depth + 1));
            }
            continue;
        }
        let b = build::build::<T, I>(&path, (lo, hi), n, nnz, plan.chunk)?;
        let _ = std::fs::remove_file(&path);
        o.append(0, &b.ptr)?;
        o.append(1, &b.idx)?;
        o.append(2, &b.vals)?;
        nnz += b.idx.len();
        built += 1;
        if depth == 0 {
            sparsetool_formats::progress::CONVERT.add(1);
        }
    }
    let counts = [majors as u64 + 1, nnz as u64, nnz as u64];
    let f = fields::<T, I>(target, h.nrows, h.ncols, nnz as u64, (0, 0))?;
    let bytes = o.finish(&f, &counts)?;
    Ok((nnz, built, bytes))
}
