//! # sparsetool-analyze
//!
//! Structure analysis of sparse matrices: how long the rows are, what each
//! storage format would cost, and which format (with which parameters) to
//! use. Works on the structure alone — row and column lengths — never on
//! values, and depends only on `sparsetool-formats`.
//!
//! ## Brief overview
//!
//! | step | module | what |
//! |---|---|---|
//! | row lengths | [`rows`] | [`RowLengths`] from a [`Csr`](sparsetool_formats::Csr), raw index arrays, or a streaming pass over a Matrix Market file ([`RowLengths::from_mm_path`], `O(nrows + ncols)` memory; [`rows::read_row_lengths`] falls back to the full reader) |
//! | statistics | [`stats`] | min, max, mean, std, cv, median, p90, p99, skewness, empty rows ([`LengthStats`], via `statrs`) |
//! | histogram | [`histogram`] | bins covering every row once: exact lengths, or log2 bins ([`Bin`]) |
//! | formats | [`formats`] | storage bytes, padding and SpMV bytes of COO, CSR, ELL, HYB, JDS, SELL ([`Formats`], [`sell_slots`]) |
//! | rules | [`rules`] | HYB width (cost model, CUSP, Ginkgo), SELL C/σ, uneven rows ([`CostModel`], [`recommend_hyb_width`], [`recommend_sell`]) |
//! | candidates | [`candidates`] | every layout worth weighing (HYB at each rule's width, SELL at several C and σ) with the work it implies ([`Features`], [`Work`]) |
//! | time model | [`timing`], [`profile`] | predicted µs per layout, fitted to GPU timings ([`TimeModel`]); device profiles (shipped in `analyze/calibration/`, or fitted by `sparsetool calibrate`) and which one a prediction uses ([`profile::resolve`]) |
//! | recommendation | [`recommend`] | the layout with the lowest predicted time and a reason ([`Recommendation`]) |
//! | bench reports | [`bench`](mod@bench) | the typed `sparsetool bench --json` report ([`BenchReport`], [`SweepReport`]), the one median ([`bench::median_min`]) and `x` generator ([`bench::random_x`]) of every bench |
//! | output | [`report`], [`plot`] | [`AnalyzeReport`] (serde JSON), [`render_text`], [`write_plot`] (SVG or PNG) |
//!
//! Modules are layered, each using only those above it in the table's
//! order of rules → candidates → time model → recommendation (no module
//! cycle): the rules know no candidates, the candidates no time model,
//! and the time model no recommendation.
//!
//! References: N. Bell and M. Garland, *Efficient Sparse Matrix-Vector
//! Multiplication on CUDA* (NVIDIA NVR-2008-004) for ELL/HYB and CUSP's
//! width rule; M. Kreutzer et al., *A unified sparse matrix data format
//! for efficient general sparse matrix-vector multiplication on modern
//! processors with wide SIMD units* (SIAM J. Sci. Comput. 36(5), 2014) for
//! SELL-C-σ; Ginkgo's `Hybrid::automatic` strategy.
//!
//! ## Example
//!
//! ```
//! use sparsetool_analyze::{render_text, AnalyzeOptions, AnalyzeReport, RowLengths};
//! use sparsetool_formats::Csr;
//!
//! // A 5-point Laplacian on a 32x32 grid.
//! let n = 32;
//! let (mut ptr, mut col) = (vec![0i32], Vec::new());
//! for r in 0..n * n {
//!     let (x, y) = (r % n, r / n);
//!     let mut c = vec![r];
//!     if x > 0 { c.push(r - 1) }
//!     if x + 1 < n { c.push(r + 1) }
//!     if y > 0 { c.push(r - n) }
//!     if y + 1 < n { c.push(r + n) }
//!     c.sort_unstable();
//!     col.extend(c.iter().map(|&c| c as i32));
//!     ptr.push(col.len() as i32);
//! }
//! let vals = vec![1.0f64; col.len()];
//! let a = Csr::try_from_parts(n * n, n * n, ptr, col, vals).unwrap();
//!
//! let rl = RowLengths::from_csr(&a).unwrap();
//! let report = AnalyzeReport::new(&rl, &AnalyzeOptions::default());
//! assert_eq!(report.nnz, 5 * 1024 - 4 * 32);
//! assert_eq!(report.row_length.max, 5);
//! // 1024 rows are latency-bound on a GPU: every layout that runs in one
//! // kernel is within a fraction of a microsecond of the launch cost, and
//! // the calibrated model picks CSR or a layout with (almost) no padding
//! // here, ELL or HYB; the text names it and the runner-up.
//! let pick = report.recommendation.format.as_str();
//! assert!(["csr", "ell", "hyb"].contains(&pick), "{pick}");
//! let text = render_text(&report, "laplace 32x32");
//! assert!(text.contains(&format!("recommendation  {}", pick.to_uppercase())));
//! assert!(text.contains("next "));
//! let json = report.to_json().unwrap();
//! assert!(json.contains("\"padding_ratio\""));
//! ```
#![deny(missing_docs)]

pub mod bench;
pub mod candidates;
mod error;
pub mod formats;
pub mod histogram;
pub mod partition;
pub mod plot;
pub mod profile;
pub mod recommend;
pub mod report;
pub mod rows;
pub mod rules;
pub mod stats;
pub mod timing;

pub use bench::{BenchReport, KernelResult, MatrixInfo, Skipped, SweepReport};
pub use candidates::{Candidate, Features, Work};
pub use error::{is_lenient_recoverable, AnalyzeError};
pub use formats::{sell_slots, stored_bytes, Formats, Sizes, Stored, Traffic};
pub use histogram::Bin;
pub use plot::{draw_report, write_plot, PlotError};
pub use recommend::Recommendation;
pub use report::{render_text, AnalyzeOptions, AnalyzeReport, PredictedLayout};
pub use rows::{Lengths, RowLengths};
pub use rules::{recommend_hyb_width, recommend_sell, CostModel};
pub use stats::LengthStats;
pub use timing::TimeModel;
