//! Command-line arguments (clap derive). Converted once into validated
//! settings by the command modules; nothing here calls the libraries.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use sparsetool_formats::io::OutputKind;
use sparsetool_formats::mm::WriteSymmetry;
use sparsetool_formats::{FormatKind, Precision};

/// Inspect, analyze, convert and benchmark sparse matrices.
///
/// FILE may be Matrix Market (`.mtx`, `.mtx.gz`), a sparsetool binary layout
/// (`.spb`) or an `.npz` written by sparsetool or `scipy.sparse.save_npz`;
/// the content decides, not the extension. `-` reads Matrix Market from stdin.
///
/// Exit codes: 0 success, 1 bad input or usage, 2 environment problem
/// (for example `--device gpu` without a CUDA device).
#[derive(Debug, Parser)]
#[command(
    name = "sparsetool",
    version,
    about,
    long_about,
    propagate_version = true
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
    /// Print only results and errors: no warnings, notes, summary or timing
    /// lines, no spinners.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Worker threads for reading, converting, analyzing and CPU SpMV
    /// (default: RAYON_NUM_THREADS, else one per logical CPU).
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show shape, entry count, field and symmetry (reads only the header of a .mtx).
    Info(InfoArgs),
    /// Row-length statistics, per-format storage and traffic, and the recommended
    /// format with its parameters and the reason.
    ///
    /// Example: `sparsetool analyze m.mtx --plot m.png`
    Analyze(AnalyzeArgs),
    /// Convert a matrix to another format and container (.npz, .mtx, .spb).
    ///
    /// Example: `sparsetool convert m.mtx --to sell --slice 32 -o m.npz`
    Convert(ConvertArgs),
    /// Multiply the matrix by a vector (y = A x) in a chosen format.
    Spmv(SpmvArgs),
    /// Time SpMV in every format (and cuSPARSE on a GPU), one table row per kernel.
    Bench(BenchArgs),
    /// Fit a device profile for this GPU (about a minute): time every format
    /// on a fixed suite of generated matrices and fit `analyze`'s time model.
    ///
    /// Example: `sparsetool calibrate && sparsetool analyze m.mtx`
    Calibrate(CalibrateArgs),
    /// Write a synthetic matrix (same seed, same matrix on any machine).
    ///
    /// Example: `sparsetool gen laplace2d --rows 1000000 -o lap.mtx`
    Gen(GenArgs),
    /// Print a shell completion script on stdout.
    ///
    /// Example: `sparsetool completions bash > ~/.local/share/bash-completion/completions/sparsetool`
    Completions(CompletionsArgs),
    /// Print the manual page (roff) on stdout, or write one page per command
    /// into a directory.
    ///
    /// Example: `sparsetool man | man -l -`
    Man(ManArgs),
}

/// `completions` arguments.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum, ignore_case = true)]
    pub shell: clap_complete::Shell,
}

/// `man` arguments.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write sparsetool.1 and one sparsetool-COMMAND.1 per command into this
    /// existing directory instead of printing the main page.
    #[arg(short, long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Overwrite pages that exist in DIR.
    #[arg(long)]
    pub force: bool,
}

/// Containers a matrix can be written in (`--output-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MatrixOut {
    /// NumPy zip archive.
    Npz,
    /// sparsetool binary layout.
    Spb,
    /// Matrix Market text.
    Mtx,
    /// gzip-compressed Matrix Market text.
    #[value(name = "mtx.gz")]
    MtxGz,
}

impl From<MatrixOut> for OutputKind {
    fn from(k: MatrixOut) -> Self {
        match k {
            MatrixOut::Npz => OutputKind::Npz,
            MatrixOut::Spb => OutputKind::Spb,
            MatrixOut::Mtx => OutputKind::Mtx,
            MatrixOut::MtxGz => OutputKind::MtxGz,
        }
    }
}

/// Storage of a Matrix Market output (`convert --symmetry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SymmetryArg {
    /// `symmetric`, `skew-symmetric` or `hermitian` (lower triangle only)
    /// when the matrix is exactly so, else `general`.
    Auto,
    /// Always `general`: every entry.
    General,
}

impl From<SymmetryArg> for WriteSymmetry {
    fn from(s: SymmetryArg) -> Self {
        match s {
            SymmetryArg::Auto => WriteSymmetry::Auto,
            SymmetryArg::General => WriteSymmetry::General,
        }
    }
}

/// Containers a vector can be written in (`spmv --output-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VectorOut {
    /// Matrix Market `array real general` (n x 1) text.
    Mtx,
    /// NumPy `.npy`.
    Npy,
}

/// Where a matrix goes: `-o`, `--output-format`, `--force`.
#[derive(Debug, Args, Clone)]
pub struct MatrixOutArgs {
    /// Output file; its extension picks the container (.spb, .npz, .mtx,
    /// .mtx.gz) unless --output-format says; `-` writes to stdout (Matrix
    /// Market text unless --output-format says).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Container of OUT, whatever its extension.
    #[arg(
        long,
        value_enum,
        ignore_case = true,
        value_name = "npz|spb|mtx|mtx.gz"
    )]
    pub output_format: Option<MatrixOut>,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Options shared by every command that reads a matrix.
#[derive(Debug, Args, Clone)]
pub struct ReadArgs {
    /// Accept common real-world deviations from the Matrix Market spec (single-%
    /// banner, missing banner, trailing junk, 0-based indices, values in pattern
    /// files, both triangles of a symmetric file), with one warning per recovery.
    #[arg(long)]
    pub lenient: bool,
    /// Skip hashing the sections of a .spb input (trusted files only). Sizes,
    /// offsets, index bounds and every structural check still run.
    #[arg(long)]
    pub no_verify_checksums: bool,
}

/// `info` arguments.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Input file (.mtx, .mtx.gz, .npz, .spb).
    pub file: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Validate the whole file (every entry, checksums and structural
    /// invariants, by loading it) and print one line `FILE: ok (...)`.
    #[arg(long, conflicts_with = "json")]
    pub verify: bool,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `analyze` arguments.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Input file.
    pub file: PathBuf,
    /// Print one JSON object instead of the report.
    #[arg(long)]
    pub json: bool,
    /// Also draw the row-length histogram and the padding-versus-width curve
    /// (.png or .svg).
    #[arg(long, value_name = "OUT.png|OUT.svg")]
    pub plot: Option<PathBuf>,
    /// Value type the byte counts assume (default: the file's own precision;
    /// f64 for Matrix Market).
    #[arg(long, value_parser = precision(), ignore_case = true)]
    pub dtype: Option<Precision>,
    /// Overwrite the plot file if it exists.
    #[arg(long)]
    pub force: bool,
    /// On a machine with an NVIDIA GPU: time the best-predicted layout of
    /// each of the top formats (see --measure-top) and report the measured
    /// winner and margins next to the prediction. Exit 2 without a GPU.
    #[arg(long)]
    pub measure: bool,
    /// How many formats --measure times (their best-predicted layouts).
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=16))]
    pub measure_top: u16,
    /// Timed intervals per kernel for --measure (median reported).
    #[arg(long, default_value_t = 30, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_REPS as i64))]
    pub reps: u32,
    /// Also report the partition for SpMV on N GPUs (no GPU needed): rows
    /// cut into N parts of equal predicted time, per part rows, entries,
    /// ghost columns, bytes sent and received, predicted time and layout.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=MAX_PARTS as i64), conflicts_with_all = ["measure", "plot"])]
    pub gpus: Option<u16>,
    /// The device profile to predict with: a file written by `sparsetool
    /// calibrate`, a shipped profile (h100, h200) or the name of one of
    /// yours. Default: your profile of the GPU present (by UUID), else the
    /// shipped one of its name, else the shipped one closest in copy
    /// bandwidth; without a GPU, the shipped h100.
    #[arg(long, value_name = "FILE|NAME")]
    pub profile: Option<String>,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `calibrate` arguments.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Write the profile here instead of your cache directory
    /// (`$XDG_CACHE_HOME/sparsetool/profiles/<GPU UUID>.json`, where
    /// `analyze` finds it on this GPU).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print the calibration (profile, suite, measured bandwidth and
    /// latency) as one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// The profile's name (`analyze --profile NAME`) [default: `local-`
    /// and the first 8 hex digits of the GPU's UUID].
    #[arg(long, value_name = "NAME", value_parser = profile_name)]
    pub name: Option<String>,
    /// Timed intervals per kernel (median used).
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = clap::value_parser!(u32).range(3..=MAX_REPS as i64))]
    pub reps: u32,
    /// Overwrite --output if it exists (the cache file is always replaced).
    #[arg(long)]
    pub force: bool,
    /// Also keep the raw timings: one `bench --sweep --json` report per
    /// matrix (`<matrix>-<dtype>.json`) in this directory (created if
    /// missing), to refit or score profiles later (scripts/calibrate.sh).
    #[arg(long, value_name = "DIR")]
    pub save_runs: Option<PathBuf>,
}

/// A profile name: letters, digits, `-`, `_`, `.`, at most 64.
fn profile_name(s: &str) -> Result<String, String> {
    if sparsetool_analyze::profile::SHIPPED
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case(s))
    {
        return Err(format!(
            "`{s}` is the name of a shipped profile: choose another"
        ));
    }
    if !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        Ok(s.to_string())
    } else {
        Err("letters, digits, '-', '_' and '.' only, 1 to 64 of them".into())
    }
}

/// The most parts a multi-GPU partition may have.
pub const MAX_PARTS: u64 = 1024;

/// How many GPUs a multi-GPU command uses (`--gpus N|all|N,M,...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gpus {
    /// Every device present.
    All,
    /// This many (at least 1).
    Count(usize),
    /// `bench` only: each of these counts in turn, in one run (a scaling
    /// study: `1,2,4`).
    List(Vec<usize>),
}

/// The `--gpus` value parser: a positive count, `all`, or a comma-separated
/// list of distinct counts.
fn gpus(s: &str) -> Result<Gpus, String> {
    if s.eq_ignore_ascii_case("all") {
        return Ok(Gpus::All);
    }
    let count = |t: &str| match t.parse::<u64>() {
        Ok(n) if (1..=MAX_PARTS).contains(&n) => Ok(n as usize),
        _ => Err(format!(
            "expected a count from 1 to {MAX_PARTS}, `all`, or a list of counts such as 1,2,4"
        )),
    };
    if !s.contains(',') {
        return count(s).map(Gpus::Count);
    }
    let list = s.split(',').map(count).collect::<Result<Vec<_>, _>>()?;
    let mut seen = list.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != list.len() {
        return Err(format!("a GPU count appears twice in `{s}`"));
    }
    Ok(Gpus::List(list))
}

/// `--gpus`, `--parts` of `spmv` and `bench`.
#[derive(Debug, Args, Clone)]
pub struct MultiGpuArgs {
    /// Run on N GPUs of this machine (`all`: every device), one process
    /// driving them, the x exchange through NCCL; N above the devices
    /// present is a usage error, no GPU exits 2. `bench` also takes a list
    /// (`1,2,4`): each count in turn, one part per GPU, in one run beside
    /// the same one-GPU baselines.
    #[arg(long, value_name = "N|all|N,M,..", value_parser = gpus)]
    pub gpus: Option<Gpus>,
    /// Cut the rows into P parts (default: one per GPU), mapped onto the
    /// GPUs in contiguous groups (P = 4 on 2 GPUs: parts 0-1 on the first).
    #[arg(long, value_name = "P", requires = "gpus", value_parser = bounded(1, MAX_PARTS))]
    pub parts: Option<usize>,
}

/// The most timed repetitions a bench may ask for (a value beyond would run
/// for hours on any matrix worth timing).
pub const MAX_REPS: u64 = 100_000;

/// The largest SELL slice height: one CUDA thread block.
pub const MAX_SLICE: u64 = 1024;

/// A `usize` flag within `lo..=hi` (out of range: a usage error naming the
/// range).
fn bounded(lo: u64, hi: u64) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(lo..=hi)
}

/// The `--dtype` value parser: the names of
/// [`Precision`], listed in `--help`.
fn precision() -> impl clap::builder::TypedValueParser<Value = Precision> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new([
        PossibleValue::new("f32").help("32-bit floats (complex files: complex64)"),
        PossibleValue::new("f64").help("64-bit floats (complex files: complex128)"),
    ])
    .try_map(|s| s.parse::<Precision>())
}

/// The value parser of counts that must be positive (`--slice`, `--rows`, ...).
fn positive() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
}

/// The `--to`/`--format` value parser: the names of
/// [`FormatKind`], listed in `--help`.
fn format_kind() -> impl clap::builder::TypedValueParser<Value = FormatKind> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        FormatKind::ALL.map(|k| PossibleValue::new(k.name()).help(k.description())),
    )
    .try_map(|s| s.parse::<FormatKind>())
}

/// `convert` arguments.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Input file.
    pub file: PathBuf,
    /// Target format (`--format` is the same flag).
    #[arg(long, visible_alias = "format", value_parser = format_kind(), ignore_case = true)]
    pub to: FormatKind,
    #[command(flatten)]
    pub out: MatrixOutArgs,
    /// ELL width (default: the longest row; smaller widths are refused: use HYB).
    #[arg(long, value_name = "K", value_parser = positive())]
    pub ell_width: Option<usize>,
    /// HYB width: a number, or `auto` for the recommended width.
    #[arg(long, value_name = "K|auto", default_value = "auto")]
    pub hyb_width: String,
    /// SELL slice height C (1 to 1024: a slice is one GPU thread block at most).
    #[arg(long, value_name = "C", value_parser = bounded(1, MAX_SLICE))]
    pub slice: Option<usize>,
    /// SELL sorting window sigma (1 = no sorting; a multiple of C).
    #[arg(long, value_name = "S", value_parser = positive())]
    pub sigma: Option<usize>,
    /// Allow ELL even when padding makes it more than 3x the size of CSR.
    #[arg(long)]
    pub allow_fill: bool,
    /// Matrix Market output (.mtx, .mtx.gz) only: `auto` writes a matrix that
    /// is exactly symmetric, skew-symmetric or hermitian as such (lower
    /// triangle only), `general` writes every entry [default: auto].
    #[arg(long, value_enum, ignore_case = true, value_name = "auto|general")]
    pub symmetry: Option<SymmetryArg>,
    /// Value type of the output (default: the input's own precision; f64
    /// for Matrix Market).
    #[arg(long, value_parser = precision(), ignore_case = true)]
    pub dtype: Option<Precision>,
    /// Print the wall time of each phase (read, convert, write) to stderr.
    #[arg(long)]
    pub timings: bool,
    /// Print one JSON object (what was written, timings) on stdout.
    #[arg(long)]
    pub json: bool,
    /// Memory budget: `auto` (half the available memory) or a size such as
    /// `512M`, `8G`. A conversion that needs more runs out of core
    /// (Matrix Market input, any output file; see docs/out-of-core.md).
    #[arg(long, value_name = "SIZE|auto", default_value = "auto", value_parser = memory_limit)]
    pub memory_limit: MemoryLimit,
    /// Directory of the out-of-core conversion's temporary buckets
    /// (default: the output's directory).
    #[arg(long, value_name = "DIR")]
    pub tmp_dir: Option<PathBuf>,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `bench --offsets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OffsetsArg {
    /// 32-bit where the matrix fits, 64-bit beyond.
    Auto,
    /// 64-bit always.
    #[value(name = "64")]
    Wide,
}

/// `--memory-limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryLimit {
    /// Half the available memory.
    Auto,
    /// This many bytes.
    Bytes(u64),
}

/// Parses `--memory-limit`: `auto`, or a number of bytes with an optional
/// binary suffix `K`, `M`, `G`, `T` (`KB`, `MiB`, ... accepted).
pub fn memory_limit(s: &str) -> Result<MemoryLimit, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("auto") {
        return Ok(MemoryLimit::Auto);
    }
    let bad = || format!("`{s}` is not a size: use e.g. 512M, 8G, 300K or auto");
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..digits].parse().map_err(|_| bad())?;
    let unit = t[digits..].trim().to_ascii_uppercase();
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(bad()),
    };
    let bytes = n.checked_mul(1 << shift).ok_or_else(bad)?;
    if bytes < 64 << 10 {
        return Err(format!("--memory-limit {s} is below the minimum of 64K"));
    }
    Ok(MemoryLimit::Bytes(bytes))
}

/// Where SpMV runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeviceArg {
    /// The CPU (rayon).
    Cpu,
    /// The first CUDA device.
    Gpu,
}

/// `spmv` arguments.
#[derive(Debug, Args)]
pub struct SpmvArgs {
    /// Input file.
    pub file: PathBuf,
    /// Storage format to multiply in (default: the format the file stores;
    /// CSR for Matrix Market). `--to` is the same flag.
    #[arg(long, visible_alias = "to", value_parser = format_kind(), ignore_case = true)]
    pub format: Option<FormatKind>,
    /// Where to run.
    #[arg(long, value_enum, default_value = "cpu")]
    pub device: DeviceArg,
    /// x: `ones`, `zeros`, `random` (uniform in [-1, 1), see --seed), or a
    /// vector file: .npy, or Matrix Market (n x 1 or 1 x n).
    #[arg(long, default_value = "ones", value_name = "ones|zeros|random|FILE")]
    pub x: String,
    /// Seed of `--x random` (the same seed gives the same x on every machine).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Write y to this file: .mtx (Matrix Market array, n x 1) or .npy, by
    /// extension unless --output-format says; `-` writes to stdout.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Compute y = A^T x (x has nrows entries, y has ncols); on the GPU
    /// through the CSR kernels on the CSC arrays.
    #[arg(long)]
    pub transpose: bool,
    /// Container of OUT, whatever its extension (stdout: mtx by default).
    #[arg(long, value_enum, ignore_case = true, value_name = "mtx|npy")]
    pub output_format: Option<VectorOut>,
    /// Value type (default: the file's own precision; f64 for Matrix Market).
    #[arg(long, value_parser = precision(), ignore_case = true)]
    pub dtype: Option<Precision>,
    /// Allow building ELL even when padding makes it more than 3x the size of CSR.
    #[arg(long)]
    pub allow_fill: bool,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    pub force: bool,
    /// Print one JSON object (shape, format, time, norm of y, output) on stdout.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub multi: MultiGpuArgs,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `bench` arguments.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Input file.
    pub file: PathBuf,
    /// Formats to time: `all` or a comma-separated list (csr,ell,...);
    /// `--format` is the same flag.
    #[arg(long, visible_alias = "format", default_value = "all")]
    pub formats: String,
    /// Where to run (default: the GPU when one is present, else the CPU with a
    /// one-line note; `--device gpu` without a GPU exits 2).
    #[arg(long, value_enum)]
    pub device: Option<DeviceArg>,
    /// Value type (default: the file's own precision; f64 for Matrix Market).
    #[arg(long, value_parser = precision(), ignore_case = true)]
    pub dtype: Option<Precision>,
    /// Timed intervals per kernel (the median is reported).
    #[arg(long, default_value_t = 30, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=MAX_REPS as i64))]
    pub reps: u32,
    /// Time ELL even when padding makes it more than 3x the size of CSR.
    #[arg(long)]
    pub allow_fill: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Time every candidate layout `analyze` weighs (HYB at each rule's
    /// width, SELL at several C and sigma) instead of one per format; the
    /// JSON then carries the candidates' work counts (`features`).
    #[arg(long)]
    pub sweep: bool,
    /// Time y = A^T x: every layout holds A^T (csr: the CSR kernels on A's
    /// CSC arrays); GPU baseline: cuSPARSE's transpose operation on A's CSR.
    #[arg(long)]
    pub transpose: bool,
    /// Device offset width: `auto` (32-bit where the matrix fits, 64-bit
    /// beyond 2^31 - 1 entries) or `64` (every layout and cuSPARSE with
    /// 64-bit offsets, to compare); each result's `params` says which ran.
    #[arg(long, value_enum, default_value = "auto")]
    pub offsets: OffsetsArg,
    #[command(flatten)]
    pub multi: MultiGpuArgs,
    /// With --gpus: also time an equal-rows partition of the same part
    /// count (the predicted-time partition's peer).
    #[arg(long, requires = "gpus")]
    pub equal_rows: bool,
    /// With --gpus: the one-GPU baselines, the best-predicted layout of
    /// this many formats (each is a copy of the whole matrix built on the
    /// CPU: 1 for a matrix of billions of entries).
    #[arg(long, requires = "gpus", default_value_t = 3, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=6))]
    pub baselines: u32,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `gen` arguments.
#[derive(Debug, Args)]
pub struct GenArgs {
    /// Kind: laplace2d, laplace3d, uniform, powerlaw, banded, dense-row, empty-rows, fem,
    /// circuit.
    pub kind: String,
    /// Number of rows (Laplacians: rounded to a square/cubic grid).
    #[arg(long, default_value_t = 1000, value_parser = positive())]
    pub rows: usize,
    /// Number of columns (default: square).
    #[arg(long, value_parser = positive())]
    pub cols: Option<usize>,
    /// Mean entries per row (uniform, powerlaw, banded, dense-row, empty-rows, fem,
    /// circuit).
    #[arg(long, default_value_t = 16)]
    pub nnz_per_row: usize,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Power-law exponent.
    #[arg(long, default_value_t = 2.0)]
    pub alpha: f64,
    /// Longest row a power-law matrix may have (default: the column count).
    #[arg(long, value_name = "N", value_parser = positive())]
    pub max_row_len: Option<usize>,
    /// Value type.
    #[arg(long, value_parser = precision(), ignore_case = true, default_value = "f64")]
    pub dtype: Precision,
    /// Complex values (complex64 with `--dtype f32`, complex128 with `f64`):
    /// each value gets a random imaginary part.
    #[arg(long)]
    pub complex: bool,
    /// Write a `uniform` matrix to Matrix Market (.mtx, .mtx.gz, -) block by
    /// block of rows, holding one block at a time (implied when the matrix
    /// would need more than half the available memory).
    #[arg(long)]
    pub stream: bool,
    #[command(flatten)]
    pub out: MatrixOutArgs,
    /// Print the wall time of each phase to stderr.
    #[arg(long)]
    pub timings: bool,
    /// Print one JSON object (what was written, timings) on stdout.
    #[arg(long)]
    pub json: bool,
}
