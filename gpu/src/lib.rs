//! # sparsetool-gpu
//!
//! SpMV on NVIDIA GPUs for every sparsetool format, with cuSPARSE baselines
//! and a benchmark that follows the measurement method of the project
//! (events, warm-up, medians, random `x`, poisoned `y`, f64 references).
//!
//! ## Brief overview
//!
//! | kernel | format | idea |
//! |---|---|---|
//! | `coo` | COO | thread per entry, atomicAdd |
//! | `coo-segmented` | COO (row-sorted) | warp segmented scan, one atomic per row segment (on a row of 64 tiles or more in 8-byte values and wider, 2 048 tiles in f32: the warps' last pieces summed per block first) |
//! | `csr-scalar` | CSR | thread per row |
//! | `csr-vector` | CSR | 2..32 lanes per row (from the mean row length), shuffles |
//! | `csr-balanced` | CSR | equal nnz per warp, segmented scan, atomics only at chunk edges |
//! | `csr-merge` | CSR | merge path: equal row ends + entries per warp from a partition built once per matrix, tiles staged in shared memory (long-row tiles summed in registers), chunk-edge rows added by a fix-up kernel (no zeroing of `y`) |
//! | `ell` | ELL | slot-major (coalesced); a thread per row, or 2 or 4 with batched loads on matrices of few rows |
//! | `ell-u16` | ELL | `ell` with a thread per row reading 16-bit column offsets from a base column per 32 rows, two in one 4-byte load (the warps whose rows' columns lie 65535 or more apart read the 32-bit indices) |
//! | `hyb` | HYB | `ell` then `coo-segmented` on the tail, one stream; the tail as a dependent launch (below) |
//! | `hyb-u16` | HYB | `hyb` with `ell-u16` on the ELL part |
//! | `jds` | JDS | thread per sorted row along the jagged diagonals (under 40 registers instead of 32 in f64 and complex where rows average 16 diagonals or more, [`plan::jds_wide`]) |
//! | `jds-u16` | JDS | `jds` reading 16-bit column offsets from a base column per 32 sorted rows, two diagonals' in one 4-byte load (the groups whose columns lie 65535 or more apart, and the long-row tail, read the 32-bit indices) |
//! | `jds-batched`, `jds-u16-batched` | JDS | `jds` and `jds-u16` with each thread's indices and values loaded a batch of diagonals ahead of its `x` gathers, under 64 registers (48 in f64 `jds-u16-batched`) |
//! | `sell` | SELL-C-sigma | C threads per slice (a warp when C = 32) |
//! | `sell-batched` | SELL-C-sigma | `sell` with each thread's indices and values loaded a batch ahead of its `x` gathers |
//! | `sell-u16`, `sell-u16-batched` | SELL-C-sigma | `sell` and `sell-batched` reading 16-bit column offsets from a base column per slice, two in one 4-byte load (where each slice's columns, up to the long-row cap, lie at most 65534 apart) |
//! | `csc-scatter` | CSC | the `coo` kernel on the entries in column order |
//!
//! Products of two launches (HYB's COO tail, `sell`'s long-row tail, the
//! carry fix-ups of `csr-merge` and `csr-panels`) launch the second kernel
//! as a *programmatic dependent launch* on compute capability 9.0 and later:
//! its blocks start while the first kernel's last blocks run and wait only
//! before they add into `y`, instead of at the grid boundary
//! (`SPARSETOOL_PDL=0` turns this off; `bench` reports
//! `dependent_launch`).
//!
//! `y = Aᵀ x` ([`spmv_gpu_transpose`]) needs no kernel of its own: the CSC
//! of `A` has the arrays of the CSR of `Aᵀ`, so the CSR kernels run on a
//! CSC's arrays as they are (other formats are transposed on the host
//! first); [`spmv_cusparse`] is the baseline, `CUSPARSE_OPERATION_TRANSPOSE`
//! on the CSR of `A`.
//!
//! Kernels are CUDA C in `gpu/kernels/*.cu`, embedded with `include_str!`,
//! compiled by NVRTC once per context for the device's compute capability
//! ([`kernels`]). Values are `f32`, `f64`, complex64 or complex128 (every
//! kernel and the cuSPARSE baselines); row and column indices are 32-bit on
//! the device (`i64` host indices are narrowed, with an overflow check),
//! offsets (CSR row pointers, JDS and SELL pointers) 32-bit where the matrix
//! fits and 64-bit beyond 2^31 - 1 entries or slots ([`Offsets`]).
//!
//! The crate builds without CUDA (cudarc loads the libraries at run time):
//! [`GpuContext::new`] then returns [`GpuError::NoDevice`].
//!
//! ```no_run
//! use sparsetool_formats::Csr;
//! use sparsetool_gpu::{spmv_gpu, GpuContext};
//! use sparsetool_formats::MatrixRef;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let a = Csr::<f32, i32>::try_from_parts(2, 2, vec![0, 1, 2], vec![0, 1], vec![2.0, 3.0])?;
//! let ctx = GpuContext::new(0)?;
//! let y = spmv_gpu(&ctx, &MatrixRef::Csr(&a), &[1.0, 1.0])?;
//! assert_eq!(y, vec![2.0, 3.0]);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

mod bench;
pub mod calibrate;
mod context;
mod cpu_bench;
mod cusparse;
mod device_matrix;
pub mod distributed;
mod error;
mod external;
pub mod kernels;
mod launch;
pub mod layout;
mod measure;
pub mod plan;
pub mod reference;
mod spmv;

pub use bench::{
    bench, copy_bandwidth, sweep_configs, BenchConfig, BenchOptions, BenchReport, KernelResult,
    MatrixInfo, Skipped, MIN_INTERVAL_MS,
};
pub use context::{driver_available, probe_device, GpuContext};
pub use cpu_bench::{cpu_bench, CPU_BYTES_MODEL};
pub use cusparse::{cusparse_available, CusparseAlg};
pub use error::GpuError;
pub use external::spmv_gpu_device;
pub use kernels::{KernelId, Offsets, ValueType};
pub use launch::GpuKernel;
pub use measure::{measure, top_layouts, MeasureOutcome, Measured};
pub use spmv::{
    spmv_cusparse, spmv_gpu, spmv_gpu_transpose, spmv_gpu_transpose_with, spmv_gpu_with,
    spmv_gpu_with_offsets,
};
