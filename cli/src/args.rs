//! Command-line arguments (clap derive). Converted once into validated
//! settings by the command modules; nothing here calls the libraries.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
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
    /// Write a synthetic matrix (same seed, same matrix on any machine).
    ///
    /// Example: `sparsetool gen laplace2d --rows 1000000 -o lap.mtx`
    Gen(GenArgs),
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
    /// Value type the byte counts assume.
    #[arg(long, value_parser = precision(), default_value = "f64")]
    pub dtype: Precision,
    /// Overwrite the plot file if it exists.
    #[arg(long)]
    pub force: bool,
    /// On a machine with an NVIDIA GPU: time the best-predicted layout of
    /// each of the top formats (see --measure-top) and report the measured
    /// winner and margins next to the prediction. Exit 2 without a GPU.
    #[arg(long)]
    pub measure: bool,
    /// How many formats --measure times (their best-predicted layouts).
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = bounded(1, 16))]
    pub measure_top: usize,
    /// Timed launches per kernel for --measure (median reported).
    #[arg(long, default_value_t = 20, value_parser = bounded(1, MAX_REPS))]
    pub reps: usize,
    #[command(flatten)]
    pub read: ReadArgs,
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
    /// Target format.
    #[arg(long, value_parser = format_kind())]
    pub to: FormatKind,
    /// Output file; its extension picks the container: .spb, .npz, .mtx (also .mtx.gz).
    #[arg(short, long)]
    pub output: PathBuf,
    /// ELL width (default: the longest row; smaller widths are refused: use HYB).
    #[arg(long, value_name = "K", value_parser = bounded(1, u64::MAX))]
    pub ell_width: Option<usize>,
    /// HYB width: a number, or `auto` for the recommended width.
    #[arg(long, value_name = "K|auto", default_value = "auto")]
    pub hyb_width: String,
    /// SELL slice height C (1 to 1024: a slice is one GPU thread block at most).
    #[arg(long, value_name = "C", value_parser = bounded(1, MAX_SLICE))]
    pub slice: Option<usize>,
    /// SELL sorting window sigma (1 = no sorting; a multiple of C).
    #[arg(long, value_name = "S", value_parser = bounded(1, u64::MAX))]
    pub sigma: Option<usize>,
    /// Allow ELL even when padding makes it more than 3x the size of CSR.
    #[arg(long)]
    pub allow_fill: bool,
    /// Value type of the output.
    #[arg(long, value_parser = precision(), default_value = "f64")]
    pub dtype: Precision,
    /// Print the wall time of each phase (read, convert, write) to stderr.
    #[arg(long)]
    pub timings: bool,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub read: ReadArgs,
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
    /// CSR for Matrix Market).
    #[arg(long, value_parser = format_kind())]
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
    /// Write y to this .npy file.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Compute y = A^T x (x has nrows entries, y has ncols); on the GPU
    /// through the CSR kernels on the CSC arrays.
    #[arg(long)]
    pub transpose: bool,
    /// Value type.
    #[arg(long, value_parser = precision(), default_value = "f64")]
    pub dtype: Precision,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `bench` arguments.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Input file.
    pub file: PathBuf,
    /// Formats to time: `all` or a comma-separated list (csr,ell,...).
    #[arg(long, default_value = "all")]
    pub formats: String,
    /// Where to run (default: the GPU when one is present, else the CPU with a
    /// one-line note; `--device gpu` without a GPU exits 2).
    #[arg(long, value_enum)]
    pub device: Option<DeviceArg>,
    /// Value type.
    #[arg(long, value_parser = precision(), default_value = "f32")]
    pub dtype: Precision,
    /// Timed repetitions per kernel (the median is reported).
    #[arg(long, default_value_t = 30, value_parser = bounded(1, MAX_REPS))]
    pub reps: usize,
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
    #[arg(long, default_value_t = 1000)]
    pub rows: usize,
    /// Number of columns (default: square).
    #[arg(long)]
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
    #[arg(long, value_name = "N", value_parser = bounded(1, u64::MAX))]
    pub max_row_len: Option<usize>,
    /// Value type.
    #[arg(long, value_parser = precision(), default_value = "f64")]
    pub dtype: Precision,
    /// Output file (.mtx, .mtx.gz, .npz, .spb).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Overwrite OUT if it exists.
    #[arg(long)]
    pub force: bool,
    /// Print the wall time of each phase to stderr.
    #[arg(long)]
    pub timings: bool,
}
