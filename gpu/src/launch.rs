//! The thin cudarc layer: which kernel runs a device matrix, with which
//! launch dims (from [`crate::plan`]), and the launch itself.

use cudarc::driver::{
    sys, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig, PushKernelArg,
    SyncOnDrop,
};
use serde_json::{json, Map, Value};
use sparsetool_formats::FormatKind;
use std::sync::PoisonError;

use crate::context::GpuContext;
use crate::device_matrix::{
    built_ok, ensure_built, Built, BuiltGuard, DevCoo, DevCsr, DevEll, DevJds, DevVals,
    DeviceMatrix, MergePlan,
};
use crate::kernels::{kernel_name, KernelId, ValueType};
use crate::plan::{self, LaunchDims, BLOCK};
use crate::GpuError;

/// One of our SpMV kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GpuKernel {
    /// COO, one thread per entry, atomicAdd (`spmv_coo_<t>`).
    CooAtomic,
    /// Row-sorted COO, warp segmented reduction (`spmv_coo_<t>_segmented`).
    CooSegmented,
    /// CSR, one thread per row.
    CsrScalar,
    /// CSR, a sub-warp per row; `None` picks the lanes from the mean row length.
    CsrVector(Option<u32>),
    /// CSR, equal nnz chunks per warp; `None` picks the chunk size.
    CsrBalanced(Option<u32>),
    /// CSR, merge path: equal chunks of rows plus entries per warp; `None`
    /// picks the chunk size.
    CsrMerge(Option<u32>),
    /// CSR, rows binned by length, one sub-warp-width launch per bin.
    CsrBinned,
    /// CSR by column panels: the matrix cut into column panels of equal
    /// width (a copy of its arrays, made when the kernel is prepared: it
    /// takes the matrix's size once more on the device, and about twice on
    /// the host while it is built), the
    /// merge-path kernel on each, the panels after the first adding into
    /// `y`, so that each gathers from a part of `x` that stays in L2
    /// ([`plan::PANEL_X_BYTES`]); `None` picks the count
    /// ([`plan::csr_panels`]; with one panel it is `CsrMerge` on the matrix
    /// itself).
    CsrPanels(Option<u32>),
    /// ELL with this many threads per row (one of [`plan::ELL_LANES`]);
    /// `None` picks them from the rows, the width and the device
    /// ([`plan::ell_lanes`]).
    Ell(Option<u32>),
    /// [`GpuKernel::Ell`] with one thread per row reading each column as a
    /// 16-bit offset from a base column of its warp's 32 rows, two slots'
    /// in one 4-byte load (2 bytes a slot less: stencils, banded and FEM
    /// matrices, the short rows of circuits, any matrix of at most 65535
    /// columns); a warp whose rows' columns lie 65535 or more apart reads
    /// the 32-bit indices. The offsets are built from the layout on first
    /// use ([`crate::layout::ell_u16`]); a matrix none of whose warps they
    /// fit gets [`GpuError::NotApplicable`] (`bench` lists it as skipped).
    EllU16,
    /// HYB: the ELL kernel (at [`plan::ell_lanes`]), then the segmented COO
    /// kernel on the tail.
    Hyb,
    /// HYB with [`GpuKernel::EllU16`] on its ELL part, then the segmented
    /// COO kernel on the tail.
    HybU16,
    /// JDS, one thread per sorted row (up to a cap of diagonals; the long
    /// rows' remaining diagonals in chunks over many threads).
    Jds,
    /// [`GpuKernel::Jds`] reading each column of the diagonals its main
    /// kernel walks as a 16-bit offset from a base column of its 32 sorted
    /// rows, two diagonals' in one 4-byte load (2 bytes an entry less:
    /// stencils, banded and FEM matrices, whose rows of one length keep
    /// their order when sorted; any matrix of at most 65535 columns); a
    /// group whose columns lie 65535 or more apart reads the 32-bit indices,
    /// and so does the long-row tail. The offsets are built from the layout
    /// on first use ([`crate::layout::jds_u16`]); a matrix none of whose
    /// groups they fit, or where they would save no bytes, gets
    /// [`GpuError::NotApplicable`] (`bench` lists it as skipped).
    JdsU16,
    /// [`GpuKernel::Jds`] with each thread's column indices and values
    /// loaded a batch of 8 diagonals (complex128 4) ahead of its `x`
    /// gathers, under a 64-register cap (half the resident threads). Faster
    /// on rows of about 30 entries in f64 (FEM matrices), slower on short
    /// rows (BENCHMARKS.md, issue 17), so `bench` times both and the
    /// one-shot products run [`GpuKernel::Jds`].
    JdsBatched,
    /// [`GpuKernel::JdsU16`] with batched loads as
    /// [`GpuKernel::JdsBatched`]'s: batches of 4 pairs of diagonals
    /// (complex128 2).
    JdsU16Batched,
    /// SELL-C-sigma, C threads per slice (up to a cap of slots; the wide
    /// slices' remaining slots in chunks over many threads).
    Sell,
    /// [`GpuKernel::Sell`] with each thread's column indices and values
    /// loaded a batch ahead of its `x` gathers: batches of 4, or of 8 under
    /// a 64-register cap (half the resident threads) from
    /// [`plan::DEEP_SLOTS`] slots a thread on. Faster on stencils, FEM
    /// matrices and small matrices, slower on random columns in f64
    /// (BENCHMARKS.md, issue 17), so `bench` times both and the one-shot
    /// products run [`GpuKernel::Sell`].
    SellBatched,
    /// [`GpuKernel::Sell`] reading each column as a 16-bit offset from a
    /// base column of its slice instead of a 32-bit index, two slots' in one
    /// 4-byte load (2 bytes a slot less: stencils, banded and FEM matrices,
    /// any matrix of at most 65535 columns); the offsets are built from the
    /// layout on first use ([`crate::layout::sell_u16`]) for the slots the
    /// main kernel walks (the long-row tail reads the 32-bit indices), and a
    /// matrix with a slice whose columns there lie 65535 or more apart gets
    /// [`GpuError::NotApplicable`] (`bench` lists it as skipped).
    SellU16,
    /// [`GpuKernel::SellU16`] with batched loads as
    /// [`GpuKernel::SellBatched`]'s deep kernel: batches of 4 pairs (8
    /// slots; complex128 2 pairs) under a 64-register cap, 48 in f64
    /// (five blocks a multiprocessor, unspilled).
    SellU16Batched,
    /// CSC `y = A x`: the COO atomic kernel (`spmv_coo_<t>`) on the CSC's
    /// entries in column order (row indices as stored, columns expanded
    /// from `col_ptr`), one thread per entry scattering into a zeroed `y`.
    CscScatter,
}

impl GpuKernel {
    /// Every kernel (automatic parameters).
    pub const ALL: [GpuKernel; 21] = [
        GpuKernel::CooAtomic,
        GpuKernel::CooSegmented,
        GpuKernel::CsrScalar,
        GpuKernel::CsrVector(None),
        GpuKernel::CsrBalanced(None),
        GpuKernel::CsrMerge(None),
        GpuKernel::CsrBinned,
        GpuKernel::CsrPanels(None),
        GpuKernel::Ell(None),
        GpuKernel::EllU16,
        GpuKernel::Hyb,
        GpuKernel::HybU16,
        GpuKernel::Jds,
        GpuKernel::JdsBatched,
        GpuKernel::JdsU16,
        GpuKernel::JdsU16Batched,
        GpuKernel::Sell,
        GpuKernel::SellBatched,
        GpuKernel::SellU16,
        GpuKernel::SellU16Batched,
        GpuKernel::CscScatter,
    ];

    /// Name used in reports: `coo`, `coo-segmented`, `csr-scalar`,
    /// `csr-vector`, `csr-balanced`, `csr-merge`, `csr-binned`, `csr-panels`, `ell`,
    /// `ell-u16`, `hyb`, `hyb-u16`, `jds`, `jds-batched`, `jds-u16`, `jds-u16-batched`, `sell`,
    /// `sell-batched`, `sell-u16`, `sell-u16-batched`, `csc-scatter`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            GpuKernel::CooAtomic => "coo",
            GpuKernel::CooSegmented => "coo-segmented",
            GpuKernel::CsrScalar => "csr-scalar",
            GpuKernel::CsrVector(_) => "csr-vector",
            GpuKernel::CsrBalanced(_) => "csr-balanced",
            GpuKernel::CsrMerge(_) => "csr-merge",
            GpuKernel::CsrBinned => "csr-binned",
            GpuKernel::CsrPanels(_) => "csr-panels",
            GpuKernel::Ell(_) => "ell",
            GpuKernel::EllU16 => "ell-u16",
            GpuKernel::Hyb => "hyb",
            GpuKernel::HybU16 => "hyb-u16",
            GpuKernel::Jds => "jds",
            GpuKernel::JdsU16 => "jds-u16",
            GpuKernel::JdsBatched => "jds-batched",
            GpuKernel::JdsU16Batched => "jds-u16-batched",
            GpuKernel::Sell => "sell",
            GpuKernel::SellBatched => "sell-batched",
            GpuKernel::SellU16 => "sell-u16",
            GpuKernel::SellU16Batched => "sell-u16-batched",
            GpuKernel::CscScatter => "csc-scatter",
        }
    }

    /// The format this kernel reads.
    #[must_use]
    pub fn format(self) -> FormatKind {
        match self {
            GpuKernel::CooAtomic | GpuKernel::CooSegmented => FormatKind::Coo,
            GpuKernel::CsrScalar
            | GpuKernel::CsrVector(_)
            | GpuKernel::CsrBalanced(_)
            | GpuKernel::CsrMerge(_)
            | GpuKernel::CsrBinned
            | GpuKernel::CsrPanels(_) => FormatKind::Csr,
            GpuKernel::Ell(_) | GpuKernel::EllU16 => FormatKind::Ell,
            GpuKernel::Hyb | GpuKernel::HybU16 => FormatKind::Hyb,
            GpuKernel::Jds
            | GpuKernel::JdsBatched
            | GpuKernel::JdsU16
            | GpuKernel::JdsU16Batched => FormatKind::Jds,
            GpuKernel::Sell
            | GpuKernel::SellBatched
            | GpuKernel::SellU16
            | GpuKernel::SellU16Batched => FormatKind::Sell,
            GpuKernel::CscScatter => FormatKind::Csc,
        }
    }

    /// The kernels that read `kind`.
    #[must_use]
    pub fn for_format(kind: FormatKind) -> Vec<GpuKernel> {
        GpuKernel::ALL
            .into_iter()
            .filter(|k| k.format() == kind)
            .collect()
    }

    /// The kernel of `kind` for a matrix whose shape is unknown: a
    /// format's only kernel, and for CSR the vector kernel at its planned
    /// lanes ([`GpuKernel::for_csr`] chooses better from the row lengths;
    /// [`GpuKernel::default_for_matrix`] uses it).
    #[must_use]
    pub fn default_for(kind: FormatKind) -> GpuKernel {
        match kind {
            FormatKind::Coo => GpuKernel::CooSegmented,
            FormatKind::Csr => GpuKernel::CsrVector(None),
            FormatKind::Ell => GpuKernel::Ell(None),
            FormatKind::Hyb => GpuKernel::Hyb,
            FormatKind::Jds => GpuKernel::Jds,
            FormatKind::Sell => GpuKernel::Sell,
            FormatKind::Csc => GpuKernel::CscScatter,
        }
    }
}

impl GpuKernel {
    /// The kernel the one-shot products ([`crate::spmv_gpu`],
    /// [`crate::spmv_gpu_transpose`], the device-pointer product of
    /// [`crate::spmv_gpu_device`]) and each part of a multi-GPU product run on
    /// `a`: [`GpuKernel::for_csr`] for CSR, else the format's kernel.
    #[must_use]
    pub fn default_for_matrix<T: sparsetool_formats::Scalar, I: sparsetool_formats::Index>(
        a: &sparsetool_formats::MatrixRef<'_, T, I>,
    ) -> GpuKernel {
        match a {
            sparsetool_formats::MatrixRef::Csr(c) => {
                GpuKernel::for_csr(c.nrows(), c.nnz(), c.max_row_len())
            }
            other => GpuKernel::default_for(other.kind()),
        }
    }

    /// The CSR kernel for a matrix of `nrows` rows, `nnz` entries and
    /// rows of at most `max_row_len`, chosen from the shape alone (no
    /// timing):
    /// - rows longer than 32 times the mean and than 64 entries (a skewed
    ///   or power-law matrix): [`GpuKernel::CsrMerge`], whose warps take
    ///   equal shares of rows plus entries, so that no row is walked by
    ///   one sub-warp;
    /// - else [`GpuKernel::CsrVector`] with the power of two of lanes at or
    ///   below the mean row length ([`plan::lanes_at_or_below_mean`]).
    ///
    /// Never [`GpuKernel::CsrPanels`]: its panel copy is built once per
    /// matrix, far more than one product gains from it (`bench` times it).
    ///
    /// Chosen on the 98 matrix and value-type runs of each of the H100 and
    /// H200 corpora (`bench --sweep`, BENCHMARKS.md): the rule's kernel
    /// takes 1.046x (H100) and 1.044x (H200) the fastest of our CSR kernels
    /// in geometric mean, at worst 1.69x (small matrices of a few hundred
    /// thousand entries, where the vector kernel wins by microseconds).
    /// The vector kernel at its planned lanes, the default before this
    /// rule, took 1.73x and 1.79x, at worst 119x (a matrix with a dense
    /// row).
    ///
    /// ```
    /// use sparsetool_gpu::GpuKernel;
    /// // a 5-point stencil
    /// assert_eq!(GpuKernel::for_csr(1_000_000, 4_996_000, 5), GpuKernel::CsrVector(Some(4)));
    /// // a power law with a row of a million entries
    /// assert_eq!(GpuKernel::for_csr(1_000_000, 16_000_000, 1_000_000), GpuKernel::CsrMerge(None));
    /// ```
    #[must_use]
    pub fn for_csr(nrows: usize, nnz: usize, max_row_len: usize) -> GpuKernel {
        let mean = nnz as f64 / nrows.max(1) as f64;
        if max_row_len > 64 && max_row_len as f64 > 32.0 * mean {
            GpuKernel::CsrMerge(None)
        } else {
            GpuKernel::CsrVector(Some(plan::lanes_at_or_below_mean(nrows, nnz)))
        }
    }
}

/// A kernel bound to a device matrix, its functions resolved and its launch
/// dims computed, ready to be enqueued many times.
pub(crate) struct Prepared<'m> {
    m: &'m DeviceMatrix,
    main: Option<(CudaFunction, LaunchDims)>,
    /// A second launch on the same stream that adds into y: HYB's COO
    /// part, the long-row tail of JDS and SELL, or the merge-path kernel's
    /// carry fix-up.
    tail: Option<(CudaFunction, LaunchDims)>,
    /// Binned CSR: one launch per bin, `(function, dims, start, count)`.
    bins: Vec<(CudaFunction, LaunchDims, usize, usize)>,
    zero_y: bool,
    /// The merge-path CSR kernel: its partition and carry slots are
    /// arguments, and its tail is `merge_fixup_<t>`.
    merge: bool,
    chunk: u32,
    /// Threads per row of the ELL kernel (ELL and HYB's first part).
    lanes: u32,
    /// The column-panel kernel: the merge kernel, its adding twin and the
    /// fix-up, and per panel of the matrix's panel set its chunk and the
    /// dims of its product and fix-up.
    panels: Option<PanelLaunch>,
    /// ELL, HYB, JDS or SELL with the 16-bit columns of their `u16`.
    u16: bool,
    /// Whether `tail` (and the column panels' fix-ups) go as programmatic
    /// dependent launches ([`dependent_launch`]).
    dependent: bool,
    /// Parameters for the report.
    pub params: Map<String, Value>,
}

/// How [`GpuKernel::CsrPanels`] launches: `[merge, merge_acc, fixup]`
/// and, per panel, `(chunk, product dims, fix-up dims)`.
struct PanelLaunch {
    funcs: [CudaFunction; 3],
    runs: Vec<(u32, LaunchDims, LaunchDims)>,
}

/// Pushes the arguments of the COO kernels: `nnz, rows, cols, vals, x, y`.
fn coo_args<'a>(
    b: &mut cudarc::driver::LaunchArgs<'a>,
    nnz: &'a i64,
    c: &'a crate::device_matrix::DevCoo,
    x: &'a DevVals,
    y: &'a mut DevVals,
) {
    b.arg(nnz)
        .arg(&c.rows.buf)
        .arg(&c.cols.buf)
        .arg(&c.vals.buf);
    b.arg(&x.buf).arg(&mut y.buf);
}

/// The environment variable that turns programmatic dependent launches off
/// (`SPARSETOOL_PDL=0`), for comparisons with the same binary.
pub const PDL_ENV: &str = "SPARSETOOL_PDL";

/// Whether the second launch of a two-launch product (HYB's COO tail,
/// SELL's long-row tail, the carry fix-ups of csr-merge and csr-panels,
/// JDS's tail, or its main kernel after a tail with chunks that goes
/// first from 4M entries on) goes as
/// a programmatic dependent launch: on compute capability 9.0 and later,
/// unless [`PDL_ENV`] is `0`. Its blocks then start while the first
/// kernel's last blocks run, load their entries and gather `x`, and wait
/// (`dep_wait` in `common.cuh`) only before they add into `y`, instead of
/// starting at the grid boundary; JDS's main kernel after its tail waits in
/// one thread only ([`plan::jds_tail_first`]).
pub(crate) fn dependent_launch(ctx: &GpuContext) -> bool {
    ctx.compute_capability().0 >= 9 && std::env::var_os(PDL_ENV).is_none_or(|v| v != "0")
}

/// Kernel arguments for [`RawArgs::launch`], which cudarc's launch builder
/// cannot make: it has no launch attributes, and a programmatic dependent
/// launch needs `cuLaunchKernelEx` with one. Every argument is one 64-bit
/// word: a device pointer, an `i64`, or an `i32` in the low half (the
/// driver reads its 4 bytes first: little-endian hosts only, which every
/// CUDA host is).
struct RawArgs<'a> {
    stream: &'a CudaStream,
    words: Vec<u64>,
    /// The buffers' read and write records, kept until the launch is queued.
    syncs: Vec<SyncOnDrop<'a>>,
}

impl<'a> RawArgs<'a> {
    fn new(stream: &'a CudaStream) -> Self {
        Self {
            stream,
            words: Vec::with_capacity(16),
            syncs: Vec::with_capacity(16),
        }
    }

    fn int(&mut self, v: i32) -> &mut Self {
        self.words.push(u64::from(v as u32));
        self
    }

    fn long(&mut self, v: i64) -> &mut Self {
        self.words.push(v as u64);
        self
    }

    fn buf<T>(&mut self, b: &'a CudaSlice<T>) -> &mut Self {
        let (ptr, sync) = b.device_ptr(self.stream);
        self.words.push(ptr);
        self.syncs.push(sync);
        self
    }

    fn buf_mut<T>(&mut self, b: &'a mut CudaSlice<T>) -> &mut Self {
        let (ptr, sync) = b.device_ptr_mut(self.stream);
        self.words.push(ptr);
        self.syncs.push(sync);
        self
    }

    /// Queues `func` on the stream with these arguments, one-dimensional
    /// dims `d`; with `dependent`, as a programmatic dependent launch of the
    /// kernel before it on the stream.
    ///
    /// # Safety
    /// The arguments must match the kernel's parameter list in number,
    /// order and size, and the launch must stay within the buffers; with
    /// `dependent`, the kernel must call `dep_wait()` before it reads
    /// anything the kernel before it writes, or writes anything it reads.
    unsafe fn launch(
        &mut self,
        func: &CudaFunction,
        d: LaunchDims,
        dependent: bool,
    ) -> Result<(), GpuError> {
        self.stream.context().bind_to_thread()?;
        let mut ptrs: Vec<*mut std::ffi::c_void> = self
            .words
            .iter_mut()
            .map(|w| (w as *mut u64).cast())
            .collect();
        // SAFETY: zero is a valid value of the attribute's plain-data union
        let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attr.value.programmaticStreamSerializationAllowed = 1;
        let config = sys::CUlaunchConfig {
            gridDimX: d.grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: d.block,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: 0,
            hStream: self.stream.cu_stream(),
            attrs: if dependent {
                &mut attr
            } else {
                std::ptr::null_mut()
            },
            numAttrs: u32::from(dependent),
        };
        // SAFETY: the caller's contract; `ptrs` points at `self.words`,
        // which outlive the call (the driver copies the arguments).
        unsafe {
            sys::cuLaunchKernelEx(
                &config,
                func.cu_function(),
                ptrs.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()?;
        self.syncs.clear();
        // a failed wait or record on a buffer's event is kept by the context
        // (device_ptr cannot return it): report it as cudarc's builder does
        self.stream.context().check_err()?;
        Ok(())
    }
}

/// A one-dimensional launch of `d`, no shared memory.
pub(crate) fn cfg(d: LaunchDims) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (d.grid, 1, 1),
        block_dim: (d.block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The merge plan `plan` holds for `chunk`: an error when there is none, or
/// when the matrix was prepared since with another chunk size (the plan is
/// one per matrix), never a partition of the wrong size.
fn merge_plan(plan: &Option<MergePlan>, chunk: u32) -> Result<&MergePlan, GpuError> {
    plan.as_ref().filter(|p| p.chunk == chunk).ok_or_else(|| {
        GpuError::MissingKernel(format!(
            "the merge-path partition for {chunk} items per warp (prepare the kernel again)"
        ))
    })
}

/// Builds `c`'s merge-path partition for `chunk` items per warp, and its
/// carry slots for `value_bytes`-byte values, unless it holds them already:
/// `merge_partition` on the context's stream (after the whole context, so
/// after the upload on any stream), then a wait. Once per matrix and chunk
/// size, outside any timed product.
fn ensure_merge_plan(
    ctx: &GpuContext,
    c: &DevCsr,
    chunk: u32,
    warps: u64,
    value_bytes: usize,
    wide: bool,
) -> Result<(), GpuError> {
    let mut plan = c.merge.lock().unwrap_or_else(PoisonError::into_inner);
    let n = warps as usize;
    if plan
        .as_ref()
        .is_some_and(|p| p.chunk == chunk && p.carry_vals.len() == n * value_bytes)
    {
        return Ok(());
    }
    if warps == 0 {
        return Ok(());
    }
    // one slot per warp and one for the end of the path
    let Some(dims) = threads(warps + 1) else {
        return Ok(());
    };
    let s = ctx.stream();
    let mut starts = s.alloc_zeros::<i32>(2 * (n + 1))?;
    let carry_rows = s.alloc_zeros::<i32>(n)?;
    let carry_vals = s.alloc_zeros::<u8>(n * value_bytes)?;
    let func = ctx.function_width(KernelId::CsrMerge, "merge_partition", wide)?;
    let (nrows, nnz) = (c.dims.nrows as i32, c.dims.nnz as i64);
    let (chunk_arg, warps_arg) = (chunk as i32, warps as i64);
    ctx.cuda().synchronize()?;
    let mut b = s.launch_builder(&func);
    b.arg(&nrows).arg(&nnz).arg(&chunk_arg).arg(&warps_arg);
    b.arg(&c.row_ptr.buf).arg(&mut starts);
    // SAFETY: argument list matches merge_partition; `starts` holds two
    // ints for each of warps + 1 slots, row_ptr nrows + 1 offsets of the
    // module's width.
    unsafe { b.launch(cfg(dims)) }?;
    s.synchronize()?;
    *plan = Some(MergePlan {
        chunk,
        warps,
        starts,
        carry_rows,
        carry_vals,
    });
    Ok(())
}

/// The merge-path kernel on `c`: its chunk (`chunk`, else the plan's) and,
/// unless `c` has no rows, the dims of its product and of its fix-up, with
/// `c`'s partition and carry slots built for them.
fn merge_launch(
    ctx: &GpuContext,
    c: &DevCsr,
    chunk: Option<u32>,
    dtype: ValueType,
    wide: bool,
) -> Result<(u32, Option<(LaunchDims, LaunchDims)>), GpuError> {
    let items = c.dims.nrows + c.dims.nnz;
    let chunk = chunk
        .unwrap_or_else(|| plan::merge_chunk(items, ctx.sm_count()))
        .max(1);
    let warps = plan::balanced_warps(items, chunk);
    let (Some(d), Some(fix)) = (threads(warps * 32), threads(warps)) else {
        return Ok((chunk, None));
    };
    ensure_merge_plan(ctx, c, chunk, warps, dtype.size(), wide)?;
    Ok((chunk, Some((d, fix))))
}

/// Threads per row of the ELL kernel on `e`: `lanes`, else
/// [`plan::ell_lanes`]; an error for a count the kernel has no layout for.
fn ell_lanes(ctx: &GpuContext, e: &DevEll, lanes: Option<u32>) -> Result<u32, GpuError> {
    let lanes = lanes.unwrap_or_else(|| plan::ell_lanes(e.dims.nrows, e.width, ctx.sm_count()));
    if plan::ELL_LANES.contains(&lanes) {
        Ok(lanes)
    } else {
        Err(GpuError::MissingKernel(format!(
            "spmv_ell with {lanes} lanes"
        )))
    }
}

/// The ELL kernel's launch on `e` (ELL, and HYB's first part): its threads
/// per row (`lanes`, else planned), its variant and its dims.
fn ell_main(
    ctx: &GpuContext,
    p: &mut Prepared<'_>,
    e: &DevEll,
    lanes: Option<u32>,
    dtype: ValueType,
) -> Result<(), GpuError> {
    p.lanes = ell_lanes(ctx, e, lanes)?;
    p.params.insert("lanes".into(), json!(p.lanes));
    let slots = e.width.div_ceil(p.lanes as usize);
    let v = slot_variant(&mut p.params, slots, p.lanes > 1, dtype);
    if let Some(d) = threads(plan::ell_threads(e.dims.nrows, p.lanes)) {
        let name = kernel_name("spmv_ell", dtype, v);
        p.main = Some((ctx.function_width(KernelId::Ell, &name, p.m.wide())?, d));
    }
    Ok(())
}

/// The 16-bit columns in `slot`, locked for a launch, where the prepared
/// kernel reads them (`want`); an error where they were not built (the
/// kernel was not prepared for them).
fn narrow_columns<U>(want: bool, slot: &Built<U>) -> Result<Option<BuiltGuard<'_, U>>, GpuError> {
    if !want {
        return Ok(None);
    }
    let set = slot.lock().unwrap_or_else(PoisonError::into_inner);
    if matches!(set.as_ref(), Some(Ok(_))) {
        Ok(Some(set))
    } else {
        Err(GpuError::MissingKernel(
            "the 16-bit columns (prepare the kernel again)".into(),
        ))
    }
}

/// Pushes the first arguments of SELL's main kernels: `nrows`, slice
/// height, `cap` (`head`), then `blocks` (null without window-ordered
/// units; JDS's go through [`Prepared::enqueue_jds`]).
fn sorted_head<'a>(
    b: &mut cudarc::driver::LaunchArgs<'a>,
    head: &'a [i32; 3],
    blocks: Option<&'a crate::device_matrix::DevIdx>,
    null: &'a u64,
) {
    b.arg(&head[0]).arg(&head[1]).arg(&head[2]);
    match blocks {
        Some(blocks) => b.arg(&blocks.buf),
        None => b.arg(null),
    };
}

/// The ELL kernel with 16-bit columns (`spmv_ell_<t>_u16`, one thread per
/// row), for ELL or HYB's ELL part: builds the offsets first, so that a
/// matrix they fit no warp of gets no kernel.
fn ell_u16_main(
    ctx: &GpuContext,
    p: &mut Prepared<'_>,
    e: &DevEll,
    kernel: GpuKernel,
    dtype: ValueType,
) -> Result<(), GpuError> {
    ensure_built(&e.u16, kernel.name(), || e.u16_columns(ctx.stream()))?;
    if let Some(rows) = built_ok(&e.u16, |n| n.narrow_rows) {
        p.params.insert("narrow_rows".into(), json!(rows));
    }
    p.u16 = true;
    p.lanes = 1;
    p.params.insert("lanes".into(), json!(1));
    // batches of SlotBatch<T, 4> slots (ell_u16 in ell.cu)
    let batch = plan::slot_batch(0, dtype.size(), dtype.complex);
    p.params.insert("slot_batch".into(), json!(batch));
    p.params.insert("column_bits".into(), json!(16));
    if let Some(d) = threads(plan::ell_threads(e.dims.nrows, 1)) {
        let name = kernel_name("spmv_ell", dtype, Some("u16"));
        p.main = Some((ctx.function_width(KernelId::Ell, &name, p.m.wide())?, d));
    }
    Ok(())
}

/// The variant of the ELL or SELL kernel for threads that walk `slots`
/// slots each: with `batched`, `_b4` or, from [`plan::DEEP_SLOTS`] on,
/// `_deep`, their batch in the report's `slot_batch`; else the plain
/// kernel (`slot_batch` 0). ELL runs batched with more than one thread per
/// row (its plain kernel has one), SELL as [`GpuKernel::SellBatched`].
fn slot_variant(
    params: &mut Map<String, Value>,
    slots: usize,
    batched: bool,
    dtype: ValueType,
) -> Option<&'static str> {
    let batch = if batched {
        plan::slot_batch(slots, dtype.size(), dtype.complex)
    } else {
        0
    };
    params.insert("slot_batch".into(), json!(batch));
    if !batched {
        None
    } else if slots >= plan::DEEP_SLOTS {
        Some("deep")
    } else {
        Some("b4")
    }
}

/// Slots (JDS: diagonals) a batch of the `_deep` kernels loads ahead
/// (`slot_batch` in the report), 0 for the plain loop.
fn deep_batch(deep: bool, dtype: ValueType) -> u32 {
    if deep {
        plan::slot_batch(plan::DEEP_SLOTS, dtype.size(), dtype.complex)
    } else {
        0
    }
}

/// The segmented COO kernel for `c`: `segmented_merge` where
/// [`plan::coo_merge`] says so (the report's `block_merge`), else
/// `segmented`.
fn coo_variant(params: &mut Map<String, Value>, c: &DevCoo, dtype: ValueType) -> &'static str {
    let merge = plan::coo_merge(c.longest, dtype.size());
    params.insert("block_merge".into(), json!(merge));
    if merge {
        "segmented_merge"
    } else {
        "segmented"
    }
}

fn threads(n: u64) -> Option<LaunchDims> {
    plan::dims_for_threads(n, BLOCK)
}

fn mismatch(kernel: GpuKernel, m: &DeviceMatrix) -> GpuError {
    GpuError::KernelMismatch {
        kernel: kernel.name(),
        format: m.kind().name(),
    }
}

/// Resolves `kernel` for `m` (compiling its module on first use).
pub(crate) fn prepare<'m>(
    ctx: &GpuContext,
    kernel: GpuKernel,
    m: &'m DeviceMatrix,
    dtype: ValueType,
) -> Result<Prepared<'m>, GpuError> {
    let mut p = Prepared {
        m,
        main: None,
        tail: None,
        bins: Vec::new(),
        zero_y: false,
        merge: false,
        chunk: 0,
        lanes: 1,
        panels: None,
        u16: false,
        dependent: dependent_launch(ctx),
        params: Map::new(),
    };
    let wide = m.wide();
    let f = |id: KernelId, base: &str, variant: Option<&str>| {
        ctx.function_width(id, &kernel_name(base, dtype, variant), wide)
    };
    p.params.insert("block".into(), json!(BLOCK));
    if matches!(
        m,
        DeviceMatrix::Csr(_) | DeviceMatrix::Jds(_) | DeviceMatrix::Sell(_)
    ) {
        p.params
            .insert("offset_bits".into(), json!(if wide { 64 } else { 32 }));
    }
    match (kernel, m) {
        (GpuKernel::CooAtomic | GpuKernel::CscScatter, DeviceMatrix::Coo(c)) => {
            p.zero_y = true;
            if let Some(d) = threads(c.dims.nnz as u64) {
                p.main = Some((f(KernelId::Coo, "spmv_coo", None)?, d));
            }
        }
        (GpuKernel::CooSegmented, DeviceMatrix::Coo(c)) => {
            p.zero_y = true;
            let v = coo_variant(&mut p.params, c, dtype);
            if let Some(d) = threads(plan::coo_segmented_threads(c.dims.nnz, dtype.size())) {
                p.main = Some((f(KernelId::Coo, "spmv_coo", Some(v))?, d));
            }
        }
        (GpuKernel::CsrScalar, DeviceMatrix::Csr(c)) => {
            if let Some(d) = threads(c.dims.nrows as u64) {
                p.main = Some((f(KernelId::CsrScalar, "spmv_csr_scalar", None)?, d));
            }
        }
        (GpuKernel::CsrVector(lanes), DeviceMatrix::Csr(c)) => {
            let lanes = lanes.unwrap_or_else(|| plan::csr_vector_lanes(c.dims.nrows, c.dims.nnz));
            if !plan::CSR_VECTOR_LANES.contains(&lanes) {
                return Err(GpuError::MissingKernel(format!(
                    "spmv_csr_vector with {lanes} lanes"
                )));
            }
            p.params.insert("lanes".into(), json!(lanes));
            if let Some(d) = threads(c.dims.nrows as u64 * u64::from(lanes)) {
                let v = format!("l{lanes}");
                p.main = Some((f(KernelId::CsrVector, "spmv_csr_vector", Some(&v))?, d));
            }
        }
        (GpuKernel::CsrBalanced(chunk), DeviceMatrix::Csr(c)) => {
            let chunk = chunk.unwrap_or_else(|| plan::balanced_chunk(c.dims.nnz, ctx.sm_count()));
            let chunk = (chunk.max(32) / 32) * 32;
            p.chunk = chunk;
            p.zero_y = true;
            p.params.insert("chunk".into(), json!(chunk));
            if let Some(d) = threads(plan::balanced_warps(c.dims.nnz, chunk) * 32) {
                p.main = Some((f(KernelId::CsrBalanced, "spmv_csr_balanced", None)?, d));
            }
        }
        (GpuKernel::CsrMerge(chunk), DeviceMatrix::Csr(c)) => {
            let (chunk, dims) = merge_launch(ctx, c, chunk, dtype, wide)?;
            p.chunk = chunk;
            p.merge = true;
            p.params.insert("chunk".into(), json!(chunk));
            if let Some((d, fix)) = dims {
                p.main = Some((f(KernelId::CsrMerge, "spmv_csr_merge", None)?, d));
                p.tail = Some((f(KernelId::CsrMerge, "merge_fixup", None)?, fix));
            }
        }
        (GpuKernel::CsrPanels(count), DeviceMatrix::Csr(c)) => {
            let count = count
                .unwrap_or_else(|| plan::csr_panels(c.dims.ncols, dtype.size()))
                .max(1);
            if count == 1 {
                let mut q = prepare(ctx, GpuKernel::CsrMerge(None), m, dtype)?;
                q.params.insert("panels".into(), json!(1));
                return Ok(q);
            }
            p.params.insert("panels".into(), json!(count));
            let mut set = c.panels.lock().unwrap_or_else(PoisonError::into_inner);
            if set.as_ref().map(|(k, _)| *k) != Some(count) {
                // the old panels' memory first; then wait for the whole
                // context, so after the upload on any stream
                *set = None;
                ctx.cuda().synchronize()?;
                *set = Some((count, c.column_panels(ctx, count, dtype.size())?));
            }
            let mut runs = Vec::new();
            for panel in set.iter().flat_map(|(_, mats)| mats) {
                if let (chunk, Some((d, fix))) = merge_launch(ctx, panel, None, dtype, wide)? {
                    runs.push((chunk, d, fix));
                }
            }
            p.params.insert(
                "chunks".into(),
                json!(runs.iter().map(|r| r.0).collect::<Vec<_>>()),
            );
            p.panels = Some(PanelLaunch {
                funcs: [
                    f(KernelId::CsrMerge, "spmv_csr_merge", None)?,
                    f(KernelId::CsrMerge, "spmv_csr_merge", Some("acc"))?,
                    f(KernelId::CsrMerge, "merge_fixup", None)?,
                ],
                runs,
            });
        }
        (GpuKernel::CsrBinned, DeviceMatrix::Csr(c)) => {
            let mut desc = Vec::new();
            for &(lanes, start, count) in &c.bins {
                if let Some(d) = threads(count as u64 * u64::from(lanes)) {
                    let v = format!("l{lanes}");
                    p.bins.push((
                        f(KernelId::CsrVector, "spmv_csr_binned", Some(&v))?,
                        d,
                        start,
                        count,
                    ));
                    desc.push(json!({ "lanes": lanes, "rows": count }));
                }
            }
            p.params.insert("bins".into(), Value::Array(desc));
        }
        (GpuKernel::Ell(lanes), DeviceMatrix::Ell(e)) => {
            p.params.insert("ell_width".into(), json!(e.width));
            ell_main(ctx, &mut p, e, lanes, dtype)?;
        }
        (GpuKernel::EllU16, DeviceMatrix::Ell(e)) => {
            p.params.insert("ell_width".into(), json!(e.width));
            ell_u16_main(ctx, &mut p, e, kernel, dtype)?;
        }
        (GpuKernel::Hyb | GpuKernel::HybU16, DeviceMatrix::Hyb(e, c)) => {
            p.params.insert("hyb_width".into(), json!(e.width));
            p.params.insert("coo_entries".into(), json!(c.dims.nnz));
            if kernel == GpuKernel::HybU16 {
                ell_u16_main(ctx, &mut p, e, kernel, dtype)?;
            } else {
                ell_main(ctx, &mut p, e, None, dtype)?;
            }
            let v = coo_variant(&mut p.params, c, dtype);
            if let Some(d) = threads(plan::coo_segmented_threads(c.dims.nnz, dtype.size())) {
                p.tail = Some((f(KernelId::Coo, "spmv_coo", Some(v))?, d));
            }
        }
        (
            GpuKernel::Jds | GpuKernel::JdsBatched | GpuKernel::JdsU16 | GpuKernel::JdsU16Batched,
            DeviceMatrix::Jds(j),
        ) => {
            p.u16 = matches!(kernel, GpuKernel::JdsU16 | GpuKernel::JdsU16Batched);
            let deep = matches!(kernel, GpuKernel::JdsBatched | GpuKernel::JdsU16Batched);
            p.params
                .insert("slot_batch".into(), json!(deep_batch(deep, dtype)));
            let wide = !deep && plan::jds_wide(j.main_entries, j.dims.nrows, dtype.size());
            if p.u16 {
                // offsets first: a matrix they fit no group of gets no kernel
                ensure_built(&j.u16, kernel.name(), || j.u16_columns(ctx.stream()))?;
                if let Some(rows) = built_ok(&j.u16, |n| n.groups.narrow_rows) {
                    p.params.insert("narrow_rows".into(), json!(rows));
                }
                p.params.insert("column_bits".into(), json!(16));
            }
            // the build and its register cap (jds.cu's JDS; U16_DEEP_BOUNDS
            // in common.cuh: 48 in f64)
            let (v, registers) = match (p.u16, deep, wide) {
                (true, true, _) if dtype == ValueType::of::<f64>() => (Some("u16_deep"), 48),
                (true, true, _) => (Some("u16_deep"), 64),
                (true, false, true) => (Some("u16_wide"), 40),
                (true, false, false) => (Some("u16"), 32),
                (false, true, _) => (Some("deep"), 64),
                (false, false, true) => (Some("wide"), 40),
                (false, false, false) => (None, 32),
            };
            p.params.insert("registers".into(), json!(registers));
            p.params.insert("diagonals".into(), json!(j.ndiag));
            p.params.insert("cap".into(), json!(j.cap));
            let main_threads = match &j.blocks {
                Some(b) => (b.len / 2) as u64 * u64::from(plan::BLOCK),
                None => j.dims.nrows as u64,
            };
            p.params.insert("window_blocks".into(), json!(j.window));
            if let Some(d) = threads(main_threads) {
                p.main = Some((f(KernelId::Jds, "spmv_jds", v)?, d));
            }
            if let Some(t) = &j.tail {
                p.params.insert("tail_chunks".into(), json!(t.nchunks));
                p.params.insert("tail_threads".into(), json!(t.threads));
                p.params.insert("tail_bands".into(), json!(t.bands.len / 3));
                if let Some(d) = threads(plan::tail_threads(t.threads, t.bands.len, 0)) {
                    // the order is the kernel's (jds.cu): a tail that goes
                    // first adds into the long rows' sums
                    let v = if t.head.is_some() {
                        "tail_first"
                    } else {
                        "tail"
                    };
                    p.tail = Some((f(KernelId::Jds, "spmv_jds", Some(v))?, d));
                }
            }
        }
        (
            GpuKernel::Sell
            | GpuKernel::SellBatched
            | GpuKernel::SellU16
            | GpuKernel::SellU16Batched,
            DeviceMatrix::Sell(s),
        ) => {
            p.params.insert("slice".into(), json!(s.slice_height));
            p.params.insert("sigma".into(), json!(s.sigma));
            p.params.insert("cap".into(), json!(s.cap));
            p.u16 = matches!(kernel, GpuKernel::SellU16 | GpuKernel::SellU16Batched);
            if s.dims.nrows > 0 {
                let v = if p.u16 {
                    // offsets first: a matrix they do not fit gets no kernel
                    ensure_built(&s.u16, kernel.name(), || s.u16_columns(ctx.stream()))?;
                    let deep = kernel == GpuKernel::SellU16Batched;
                    p.params
                        .insert("slot_batch".into(), json!(deep_batch(deep, dtype)));
                    p.params.insert("column_bits".into(), json!(16));
                    Some(if deep { "u16_deep" } else { "u16" })
                } else {
                    let batched = kernel == GpuKernel::SellBatched;
                    slot_variant(&mut p.params, s.main_slots, batched, dtype)
                };
                let main_threads = match &s.blocks {
                    Some(b) => (b.len / 2 * s.slice_height) as u64,
                    None => plan::sell_threads(s.nslices, s.slice_height),
                };
                p.params
                    .insert("window_blocks".into(), json!(s.blocks.is_some()));
                if let Some(d) = threads(main_threads) {
                    p.main = Some((f(KernelId::Sell, "spmv_sell", v)?, d));
                }
                if let Some(t) = &s.tail {
                    p.params.insert("tail_chunks".into(), json!(t.slices.len));
                    p.params
                        .insert("tail_segments".into(), json!(t.segs.len / 3));
                    p.params.insert("tail_bands".into(), json!(t.bands.len / 4));
                    let wide = plan::sell_threads(t.slices.len, s.slice_height);
                    if let Some(d) = threads(plan::tail_threads(wide, t.segs.len, t.bands.len)) {
                        p.tail = Some((f(KernelId::Sell, "spmv_sell", Some("tail"))?, d));
                    }
                }
            }
        }
        _ => return Err(mismatch(kernel, m)),
    }
    if p.tail.is_some() || p.panels.is_some() {
        p.params
            .insert("dependent_launch".into(), json!(p.dependent));
    }
    Ok(p)
}

/// [`GpuKernel::CsrPanels`]: per panel, the merge kernel (adding into `y`
/// after the first panel) and its fix-up, in order on `stream`; the fix-ups
/// as dependent launches with `dependent`.
fn enqueue_panels(
    stream: &std::sync::Arc<CudaStream>,
    pl: &PanelLaunch,
    c: &DevCsr,
    x: &DevVals,
    y: &mut DevVals,
    dependent: bool,
) -> Result<(), GpuError> {
    let set = c.panels.lock().unwrap_or_else(PoisonError::into_inner);
    let Some((_, mats)) = set.as_ref() else {
        return Err(GpuError::MissingKernel(
            "the column panels (prepare the kernel again)".into(),
        ));
    };
    for (i, (panel, &(chunk, dims, fix))) in mats.iter().zip(&pl.runs).enumerate() {
        let plan = panel.merge.lock().unwrap_or_else(PoisonError::into_inner);
        let plan = merge_plan(&plan, chunk)?;
        let (nrows, nnz, chunk_arg) =
            (panel.dims.nrows as i32, panel.dims.nnz as i64, chunk as i32);
        let mut b = stream.launch_builder(&pl.funcs[usize::from(i > 0)]);
        b.arg(&nrows).arg(&nnz).arg(&chunk_arg);
        b.arg(&plan.starts)
            .arg(&plan.carry_rows)
            .arg(&plan.carry_vals);
        b.arg(&panel.row_ptr.buf)
            .arg(&panel.col_idx.buf)
            .arg(&panel.vals.buf);
        b.arg(&x.buf).arg(&mut y.buf);
        // SAFETY: argument list matches spmv_csr_merge_<t>[_acc]; the panel's
        // merge plan was built for this chunk (prepare), one start and one
        // carry slot per warp of `dims`; its columns index the whole `x`.
        unsafe { b.launch(cfg(dims)) }?;
        let mut b = RawArgs::new(stream);
        fixup_args(&mut b, plan, y);
        // SAFETY: see fixup_args.
        unsafe { b.launch(&pl.funcs[2], fix, dependent) }?;
    }
    Ok(())
}

impl Prepared<'_> {
    /// Enqueues one `y = A x` on `stream` (y zeroed first where the kernel
    /// accumulates). Does not synchronise.
    pub(crate) fn enqueue(
        &self,
        stream: &std::sync::Arc<CudaStream>,
        x: &DevVals,
        y: &mut DevVals,
    ) -> Result<(), GpuError> {
        if self.zero_y && y.len > 0 {
            stream.memset_zeros(&mut y.buf)?;
        }
        if let (Some(pl), DeviceMatrix::Csr(c)) = (&self.panels, self.m) {
            return enqueue_panels(stream, pl, c, x, y, self.dependent);
        }
        if let DeviceMatrix::Csr(c) = self.m {
            for (func, dims, start, count) in &self.bins {
                let n = *count as i32;
                let rows = c.bin_rows.buf.slice(*start..*start + *count);
                let mut b = stream.launch_builder(func);
                b.arg(&n).arg(&rows).arg(&c.row_ptr.buf).arg(&c.col_idx.buf);
                b.arg(&c.vals.buf).arg(&x.buf).arg(&mut y.buf);
                // SAFETY: argument list matches spmv_csr_binned_<t>_l<L>; the
                // bins partition the rows, so every y element is written once.
                unsafe { b.launch(cfg(*dims)) }?;
            }
            if !self.bins.is_empty() {
                return Ok(());
            }
        }
        let Some((func, dims)) = &self.main else {
            return Ok(());
        };
        if let DeviceMatrix::Jds(j) = self.m {
            return self.enqueue_jds(stream, j, func, *dims, x, y);
        }
        let main_cfg = cfg(*dims);
        let mut b = stream.launch_builder(func);
        // Every argument must outlive the launch: bind them first.
        match self.m {
            DeviceMatrix::Coo(c) => {
                let nnz = c.dims.nnz as i64;
                coo_args(&mut b, &nnz, c, x, y);
                // SAFETY: argument list matches spmv_coo_<t>[_segmented[_merge]].
                unsafe { b.launch(main_cfg) }?;
            }
            DeviceMatrix::Csr(c) => {
                let nrows = c.dims.nrows as i32;
                let nnz = c.dims.nnz as i64;
                let chunk = self.chunk as i32;
                b.arg(&nrows);
                if self.chunk > 0 {
                    b.arg(&nnz).arg(&chunk);
                }
                let plan = c.merge.lock().unwrap_or_else(PoisonError::into_inner);
                if self.merge {
                    let plan = merge_plan(&plan, self.chunk)?;
                    b.arg(&plan.starts)
                        .arg(&plan.carry_rows)
                        .arg(&plan.carry_vals);
                }
                b.arg(&c.row_ptr.buf).arg(&c.col_idx.buf).arg(&c.vals.buf);
                b.arg(&x.buf).arg(&mut y.buf);
                // SAFETY: argument list matches spmv_csr_{scalar,vector,balanced,merge}_<t>;
                // the merge plan was built for this chunk (prepare), one
                // start and one carry slot per warp of main_cfg.
                unsafe { b.launch(main_cfg) }?;
            }
            DeviceMatrix::Ell(e) | DeviceMatrix::Hyb(e, _) => {
                let nrows = e.dims.nrows as i32;
                let width = e.width as i32;
                let lanes = self.lanes as i32;
                b.arg(&nrows).arg(&width);
                let set = narrow_columns(self.u16, &e.u16)?;
                if let Some(Some(Ok(n))) = set.as_deref() {
                    b.arg(&n.base.buf).arg(&n.words).arg(&e.col_idx.buf);
                } else {
                    b.arg(&lanes).arg(&e.row_nnz.buf).arg(&e.col_idx.buf);
                }
                b.arg(&e.vals.buf).arg(&x.buf).arg(&mut y.buf);
                // SAFETY: argument list matches spmv_ell_<t>[_b4|_deep] or,
                // with the 16-bit columns (built from this layout: a base
                // per 32 rows, ceil(width / 2) * nrows words),
                // spmv_ell_<t>_u16; the grid holds whole warps of 32 / lanes
                // rows (plan::ell_threads; lanes 1 for _u16).
                unsafe { b.launch(main_cfg) }?;
            }
            // launched above
            DeviceMatrix::Jds(_) => {}
            DeviceMatrix::Sell(s) => {
                let head = [s.dims.nrows as i32, s.slice_height as i32, s.cap as i32];
                let null: u64 = 0;
                sorted_head(&mut b, &head, s.blocks.as_deref(), &null);
                match &s.perm {
                    Some(p) => b.arg(&p.buf),
                    None => b.arg(&null),
                };
                b.arg(&s.slice_ptr.buf).arg(&s.slice_width.buf);
                let set = narrow_columns(self.u16, &s.u16)?;
                if let Some(Some(Ok(n))) = set.as_deref() {
                    b.arg(&n.base.buf).arg(&n.ptr).arg(&n.cols);
                } else {
                    b.arg(&s.col_idx.buf);
                }
                b.arg(&s.vals.buf).arg(&x.buf).arg(&mut y.buf);
                // SAFETY: argument list matches spmv_sell_<t>[_b4|_deep] (the
                // column indices) or spmv_sell_<t>_u16[_deep] (base, pair
                // starts and offsets, built from this layout with its cap,
                // every start even); a null perm is allowed; blocks (when
                // given) holds (first slice, slices) pairs within the
                // slices, one per block of the grid (plan::sell_slice_blocks).
                unsafe { b.launch(main_cfg) }?;
            }
        }
        if let Some((func, dims)) = &self.tail {
            self.enqueue_tail(stream, func, *dims, x, y)?;
        }
        Ok(())
    }

    /// JDS's product: the main kernel (`func`, `dims`) and its tail (when
    /// it has one). A tail with chunks of a matrix of 4M entries or more
    /// goes first (`spmv_jds_<t>_tail_first`), and the main kernel as its
    /// dependent launch, which waits for it in one thread only (so that the
    /// stream's next work waits for both): the tail holds the long rows
    /// whole, their parts meeting in
    /// [`HeadSums`](crate::device_matrix::HeadSums), and the main kernel's
    /// blocks leave them out. Any other tail (`spmv_jds_<t>_tail`) goes
    /// after the main kernel, as its dependent launch, and adds into `y`
    /// ([`plan::jds_tail_first`]).
    fn enqueue_jds(
        &self,
        stream: &std::sync::Arc<CudaStream>,
        j: &DevJds,
        func: &CudaFunction,
        dims: LaunchDims,
        x: &DevVals,
        y: &mut DevVals,
    ) -> Result<(), GpuError> {
        let head = j.tail.as_ref().and_then(|t| t.head.as_ref());
        let tail = self.tail.as_ref();
        let set = narrow_columns(self.u16, &j.u16)?;
        if j.tail.is_some() && tail.is_none() {
            // the long rows' diagonals past cap (and, going first, the
            // whole rows, which the main kernel's blocks leave out)
            return Err(GpuError::MissingKernel(
                "JDS's long-row tail (its grid could not be sized)".into(),
            ));
        }
        if let (Some((func, dims)), Some(_)) = (tail, head) {
            self.enqueue_tail(stream, func, *dims, x, y)?;
        }
        let mut b = RawArgs::new(stream);
        b.int(j.dims.nrows as i32)
            .int(j.ndiag as i32)
            .int(j.cap as i32);
        match &j.blocks {
            Some(blocks) => b.buf(&blocks.buf),
            None => b.long(0),
        };
        b.buf(&j.perm.buf).buf(&j.jd_ptr.buf);
        if let Some(Some(Ok(n))) = set.as_deref() {
            b.buf(&n.groups.base.buf).buf(&n.ptr).buf(&n.groups.words);
        }
        b.buf(&j.col_idx.buf).buf(&j.vals.buf).buf(&x.buf);
        b.buf_mut(&mut y.buf);
        // SAFETY: argument list matches spmv_jds_<t> or, with the 16-bit
        // columns (built from this layout with its cap: a base per 32
        // sorted rows, a start per pair of diagonals and a word per row of
        // each pair's first), spmv_jds_<t>_u16; blocks (when given) holds
        // (first position, rows) pairs within nrows, one per block of the
        // grid (plan::jds_main_blocks). As a dependent launch of the tail it
        // reads nothing the tail writes and writes y's other rows only (its
        // blocks leave out the long rows).
        unsafe { b.launch(func, dims, self.dependent && head.is_some()) }?;
        if let (Some((func, dims)), None) = (tail, head) {
            drop(b);
            drop(set);
            self.enqueue_tail(stream, func, *dims, x, y)?;
        }
        Ok(())
    }

    /// The second launch: HYB's COO part, the long-row tail of JDS or SELL,
    /// or csr-merge's carry fix-up, each of which adds into the `y` the main
    /// launch wrote before it on the same stream; or JDS's tail of chunks,
    /// launched before its main kernel ([`Self::enqueue_jds`]).
    fn enqueue_tail(
        &self,
        stream: &std::sync::Arc<CudaStream>,
        func: &CudaFunction,
        dims: LaunchDims,
        x: &DevVals,
        y: &mut DevVals,
    ) -> Result<(), GpuError> {
        let mut b = RawArgs::new(stream);
        match self.m {
            DeviceMatrix::Hyb(_, c) => {
                b.long(c.dims.nnz as i64);
                b.buf(&c.rows.buf).buf(&c.cols.buf).buf(&c.vals.buf);
                b.buf(&x.buf).buf_mut(&mut y.buf);
                // SAFETY: argument list matches spmv_coo_<t>_segmented[_merge],
                // which waits before its first atomic.
                unsafe { b.launch(func, dims, self.dependent) }
            }
            DeviceMatrix::Jds(j) => {
                let Some(t) = &j.tail else {
                    return Ok(());
                };
                b.long(t.threads as i64).int(t.nchunks as i32);
                b.int(j.cap as i32).int(j.ndiag as i32);
                b.buf(&j.perm.buf).buf(&j.jd_ptr.buf).buf(&t.item_ptr);
                b.buf(&t.bands.buf);
                b.buf(&j.col_idx.buf).buf(&j.vals.buf).buf(&x.buf);
                b.buf_mut(&mut y.buf);
                if let Some(h) = &t.head {
                    // the kernel writes acc and done, scratch of the layout
                    // that it leaves zero again (HeadSums in common.cuh)
                    b.buf(&h.cnt.buf).buf(&h.acc.buf).buf(&h.done);
                }
                // SAFETY: argument list matches spmv_jds_<t>_tail, or with
                // the head sums spmv_jds_<t>_tail_first (prepare); item_ptr
                // has nchunks + 1 entries ending at nitems, the grid has
                // their blocks and then one per band of rows and diagonals
                // of this layout (plan::jds_tail_items, plan::tail_threads);
                // the head sums have a count per long row
                // (plan::jds_head_counts). With them it goes first, not as a
                // dependent launch; without, after the main kernel, and it
                // waits before its atomics.
                unsafe { b.launch(func, dims, self.dependent && t.head.is_none()) }
            }
            DeviceMatrix::Sell(s) => {
                let Some(t) = &s.tail else {
                    return Ok(());
                };
                b.long(t.slices.len as i64).int(s.dims.nrows as i32);
                b.int(s.slice_height as i32).int(s.cap as i32);
                match &s.perm {
                    Some(p) => b.buf(&p.buf),
                    None => b.long(0),
                };
                b.buf(&s.slice_ptr.buf).buf(&s.slice_width.buf);
                b.buf(&t.slices.buf).buf(&t.chunks.buf).buf(&t.segs.buf);
                b.int((t.segs.len / 3) as i32).buf(&t.bands.buf);
                b.buf(&s.col_idx.buf).buf(&s.vals.buf).buf(&x.buf);
                b.buf_mut(&mut y.buf);
                // SAFETY: argument list matches spmv_sell_<t>_tail, which
                // waits before its atomic; the items name slices of this
                // layout and chunks below their width, the grid has their
                // blocks, then one per segment of a row's stored slots
                // (nsegs of them), then one per band of a slice's first
                // rows and slots within its width (plan::sell_tail_items,
                // plan::tail_threads); a null perm is allowed.
                unsafe { b.launch(func, dims, self.dependent) }
            }
            DeviceMatrix::Csr(c) => {
                let plan = c.merge.lock().unwrap_or_else(PoisonError::into_inner);
                let plan = merge_plan(&plan, self.chunk)?;
                let mut b = RawArgs::new(stream);
                fixup_args(&mut b, plan, y);
                // SAFETY: see fixup_args.
                unsafe { b.launch(func, dims, self.dependent) }
            }
            DeviceMatrix::Coo(_) | DeviceMatrix::Ell(_) => Ok(()),
        }
    }
}

/// Pushes the arguments of `merge_fixup_<t>` for `plan`: one carry slot per
/// warp, each naming a row of `y` or -1; the kernel waits before it reads
/// them, so it may go as a dependent launch of the product that wrote them.
fn fixup_args<'a>(b: &mut RawArgs<'a>, plan: &'a MergePlan, y: &'a mut DevVals) {
    b.long(plan.warps as i64);
    b.buf(&plan.carry_rows).buf(&plan.carry_vals);
    b.buf_mut(&mut y.buf);
}

#[cfg(test)]
mod tests {
    use super::GpuKernel;
    use sparsetool_formats::{Coo, Csr, FormatKind, MatrixRef};

    #[test]
    fn csr_kernel_follows_the_row_lengths() {
        let (vector, merge) = (|l| GpuKernel::CsrVector(Some(l)), GpuKernel::CsrMerge(None));
        for ((nrows, nnz, longest), want) in [
            // rows at the mean: the vector kernel, lanes at or below the mean
            ((1000, 27_000, 27), vector(16)),
            ((1000, 2000, 3), vector(2)),
            ((10, 10_000, 1000), vector(32)),
            // a row of 64 entries is not long; 65 at 32x the mean is
            ((1000, 1000, 64), vector(2)),
            ((1000, 1000, 65), merge),
            // long, but not 32x the mean
            ((100, 50_000, 10_000), vector(32)),
            ((0, 0, 0), vector(2)),
        ] {
            assert_eq!(
                GpuKernel::for_csr(nrows, nnz, longest),
                want,
                "{nrows} {nnz} {longest}"
            );
        }
    }

    #[test]
    fn default_for_matrix_reads_a_csr_row_lengths() {
        // one dense row of 100 entries among 99 rows of one
        let n = 100;
        let mut rows = vec![0i32; n];
        let mut cols: Vec<i32> = (0..n as i32).collect();
        rows.extend(1..n as i32);
        cols.extend(1..n as i32);
        let vals = vec![1.0f64; rows.len()];
        let coo = Coo::<f64, i32>::try_from_parts(n, n, rows, cols, vals).expect("valid");
        let csr: Csr<f64, i32> = sparsetool_convert::coo_to_csr(&coo);
        assert_eq!(
            GpuKernel::default_for_matrix(&MatrixRef::Csr(&csr)),
            GpuKernel::CsrMerge(None)
        );
        assert_eq!(
            GpuKernel::default_for_matrix(&MatrixRef::Coo(&coo)),
            GpuKernel::default_for(FormatKind::Coo)
        );
    }
}
