//! SpMV over several GPUs of one host: [`DistributedMatrix`].
//!
//! The design of PETSc's MPIAIJ and Ginkgo's `distributed::Matrix`, driven by
//! one process: the rows are cut into parts of equal predicted time
//! ([`sparsetool_analyze::partition`]); each part lives on one GPU (parts are
//! mapped onto the devices in contiguous groups, so 4 parts on 2 GPUs put
//! parts 0–1 on the first and 2–3 on the second) as
//!
//! - a **local block** (its rows × the `x` entries it owns) in the part's own
//!   recommended layout, run by this crate's kernel for that format;
//! - a **ghost block** (its rows × the `x` entries owned elsewhere,
//!   renumbered compactly), uploaded as row-sorted COO and run by the
//!   segmented COO kernel, which **adds** into `y` (as HYB's tail adds onto
//!   its ELL part).
//!
//! One SpMV ([`DistributedMatrix::spmv`]):
//!
//! 1. on each device's exchange stream (created at the device's highest
//!    priority): a gather kernel (`gpu/kernels/dist.cu`) packs the `x`
//!    entries each part sends into one buffer; parts on the same device copy
//!    their segments device-to-device; parts on other devices get theirs
//!    through NCCL point-to-point calls, all in one NCCL group;
//! 2. meanwhile, on each part's own stream: the local block's SpMV
//!    (`y = A_local · x_owned`);
//! 3. each part's stream waits for its device's exchange (an event), then the
//!    ghost block adds `A_ghost · x_ghost` into `y`.
//!
//! `y` stays on the devices, cut like the rows ([`DistributedMatrix::y_to_x`]
//! makes it the next `x` of a square matrix without leaving the GPUs);
//! [`DistributedMatrix::gather_y`] brings it back.
//!
//! NCCL is loaded at run time (`libnccl.so` must be on the library path; see
//! `docs/distributed.md`); NVLink SHARP (`NCCL_NVLS_ENABLE`) is switched off
//! unless the environment says otherwise. One device needs no NCCL.

mod bench;
mod exchange;

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, PushKernelArg};
use sparsetool_analyze::partition::{split, Partition, PartitionOptions};
use sparsetool_convert::{from_csr, to_layout, AnyMatrix, ConvertParams};
use sparsetool_formats::{Csr, FormatKind, Index, Layout, Scalar};

use crate::context::GpuContext;
use crate::device_matrix::{upload, upload_csr_as_coo, upload_vals, DevCoo, DevVals, DeviceMatrix};
use crate::kernels::{kernel_name, KernelId, Offsets, ValueType};
use crate::launch::{self, prepare, GpuKernel};
use crate::plan::{self, BLOCK};
use crate::GpuError;

pub use bench::{
    bench_distributed, bench_distributed_scaling, DistBenchOptions, DistBenchReport,
    DistPartReport, DistScalingReport, FailedRun, SingleGpuResult,
};
pub use exchange::{nccl_available, NVLS_ENV};

/// How to distribute a matrix.
#[derive(Debug, Clone)]
pub struct DistOptions {
    /// Number of parts (at least 1; more parts than rows leaves some empty).
    pub parts: usize,
    /// CUDA device ordinals, distinct (at least 1); parts are mapped onto
    /// them in contiguous groups ([`device_of`]).
    pub devices: Vec<usize>,
    /// Every part's local block in this format (its parameters from
    /// `params`); `None`: each part in the layout the time model
    /// recommends for it.
    pub format: Option<FormatKind>,
    /// Conversion parameters for `format` (ELL fill guard, HYB width, SELL
    /// C and σ).
    pub params: ConvertParams,
    /// Refinement steps of the partition ([`PartitionOptions::refine`]).
    pub refine: usize,
}

impl DistOptions {
    /// `parts` parts on devices `0..devices`, each in its recommended layout.
    #[must_use]
    pub fn new(parts: usize, devices: usize) -> Self {
        Self {
            parts,
            devices: (0..devices).collect(),
            format: None,
            params: ConvertParams::default(),
            refine: PartitionOptions::default().refine,
        }
    }
}

/// Number of CUDA devices visible (0 without a driver; never panics).
#[must_use]
pub fn device_count() -> usize {
    if !crate::driver_available() {
        return 0;
    }
    std::panic::catch_unwind(cudarc::driver::CudaContext::device_count)
        .ok()
        .and_then(Result::ok)
        .map_or(0, |n| usize::try_from(n).unwrap_or(0))
}

/// The device (index into the device list) of part `p` of `parts` on
/// `devices` devices: contiguous groups, as even as possible.
///
/// ```
/// use sparsetool_gpu::distributed::device_of;
/// assert_eq!((0..4).map(|p| device_of(p, 4, 2)).collect::<Vec<_>>(), [0, 0, 1, 1]);
/// assert_eq!((0..3).map(|p| device_of(p, 3, 2)).collect::<Vec<_>>(), [0, 0, 1]);
/// assert_eq!(device_of(5, 8, 1), 0);
/// ```
#[must_use]
pub fn device_of(p: usize, parts: usize, devices: usize) -> usize {
    if parts == 0 || devices == 0 {
        return 0;
    }
    (p * devices / parts).min(devices - 1)
}

/// One device: its context, the exchange stream and the gather kernel.
struct Dev {
    ctx: GpuContext,
    comm_stream: Arc<CudaStream>,
    gather: cudarc::driver::CudaFunction,
    ghost: cudarc::driver::CudaFunction,
}

/// One part on its device.
struct PartDev {
    dev: usize,
    stream: Arc<CudaStream>,
    local: DeviceMatrix,
    kernel: GpuKernel,
    layout: Layout,
    ghost: Option<DevCoo>,
    /// Owned entries of `x`.
    x: DevVals,
    /// The part's rows of `y`.
    y: DevVals,
    /// Received `x` entries, as the plan's ghost columns.
    ghost_x: DevVals,
    /// Indices into `x` of every value sent, by receiver.
    send_idx: Option<CudaSlice<i32>>,
    send_buf: DevVals,
}

/// A matrix cut into row parts over one or more GPUs (see the module docs).
pub struct DistributedMatrix {
    // NCCL communicators first: dropped before the contexts they use.
    comms: Vec<cudarc::nccl::Comm>,
    parts: Vec<PartDev>,
    devs: Vec<Dev>,
    partition: Partition,
    dtype: ValueType,
    value_bytes: usize,
}

impl std::fmt::Debug for DistributedMatrix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistributedMatrix")
            .field("parts", &self.parts.len())
            .field("devices", &self.devs.len())
            .field("row_bounds", &self.partition.row_bounds)
            .finish_non_exhaustive()
    }
}

fn dist_err(msg: impl Into<String>) -> GpuError {
    GpuError::Distributed(msg.into())
}

/// `(start, len)` in bytes of values `start..start + len`.
fn bytes(range: std::ops::Range<usize>, vb: usize) -> std::ops::Range<usize> {
    range.start * vb..range.end * vb
}

impl DistributedMatrix {
    /// Partitions `a` ([`Partition::new`] under the calibrated time model)
    /// and uploads every part to its device.
    ///
    /// # Errors
    /// [`GpuError::Distributed`] for no parts, no devices or repeated
    /// devices; [`GpuError::NoDevice`] for a device that cannot be opened;
    /// [`GpuError::Nccl`] when several devices are used and NCCL is missing or
    /// fails; conversion, upload and compile errors.
    pub fn new<T: Scalar, I: Index>(a: &Csr<T, I>, opts: &DistOptions) -> Result<Self, GpuError> {
        let dtype = real_type::<T>()?;
        let popts = PartitionOptions {
            value_bytes: dtype.size() as u64,
            refine: opts.refine,
            ..PartitionOptions::default()
        };
        let partition =
            Partition::of_csr(a, opts.parts, &popts).map_err(|e| dist_err(e.to_string()))?;
        Self::with_partition(a, partition, opts)
    }

    /// Uploads `a` cut as `partition` (built from `a`'s structure, e.g. by
    /// [`Partition::with_bounds`] for equal rows); `opts.parts` is ignored.
    ///
    /// # Errors
    /// As [`DistributedMatrix::new`].
    pub fn with_partition<T: Scalar, I: Index>(
        a: &Csr<T, I>,
        partition: Partition,
        opts: &DistOptions,
    ) -> Result<Self, GpuError> {
        let dtype = real_type::<T>()?;
        let vb = dtype.size();
        let nparts = partition.len();
        if nparts == 0 {
            return Err(dist_err("at least one part is needed"));
        }
        let mut ordinals = opts.devices.clone();
        ordinals.sort_unstable();
        ordinals.dedup();
        if opts.devices.is_empty() || ordinals.len() != opts.devices.len() {
            return Err(dist_err(format!(
                "devices must be distinct and at least one: {:?}",
                opts.devices
            )));
        }
        let ndev = opts.devices.len().min(nparts);
        let blocks = split(a, &partition).map_err(|e| dist_err(e.to_string()))?;
        let mut devs = Vec::with_capacity(ndev);
        for &ordinal in &opts.devices[..ndev] {
            devs.push(exchange::open_device(ordinal, dtype)?);
        }
        let plan = &partition.plan;
        let mut parts = Vec::with_capacity(nparts);
        for (p, b) in blocks.into_iter().enumerate() {
            let dev = device_of(p, nparts, ndev);
            let d = &devs[dev];
            let stream = d.ctx.cuda().new_stream()?;
            let conv_err =
                |kind: FormatKind, e: sparsetool_convert::ConvertError| GpuError::Convert {
                    format: kind.name(),
                    message: e.to_string(),
                };
            // A part without local entries stays CSR (nothing to lay out).
            let converted = match opts.format {
                _ if b.local.nnz() == 0 => AnyMatrix::Csr(b.local.clone()),
                Some(kind) => {
                    from_csr(&b.local, kind, &opts.params).map_err(|e| conv_err(kind, e))?
                }
                None => {
                    let l = partition.parts[p].layout;
                    to_layout(&b.local, &l).map_err(|e| conv_err(l.kind(), e))?
                }
            };
            let layout = layout_of(&converted.as_ref());
            let local = upload(&stream, &converted.as_ref(), Offsets::Auto)?;
            let kernel = GpuKernel::default_for_matrix(&converted.as_ref());
            let ghost = if b.ghost.nnz() > 0 {
                Some(upload_csr_as_coo(&stream, &b.ghost)?)
            } else {
                None
            };
            let cols = partition.cols(p);
            let zeros = |n: usize| upload_vals(&stream, &vec![T::zero(); n]);
            let sends: Vec<i32> = plan
                .transfers
                .iter()
                .filter(|t| t.src == p)
                .flat_map(|t| t.src_idx.iter().copied())
                .map(|i| {
                    i32::try_from(i).map_err(|_| GpuError::IndexOverflow {
                        what: "owned x entries of a part",
                        value: i as u64,
                    })
                })
                .collect::<Result<_, _>>()?;
            let send_idx = if sends.is_empty() {
                None
            } else {
                Some(stream.clone_htod(&sends)?)
            };
            parts.push(PartDev {
                dev,
                local,
                kernel,
                layout,
                ghost,
                x: zeros(cols.len())?,
                y: zeros(partition.rows(p).len())?,
                ghost_x: zeros(plan.ghost_cols[p].len())?,
                send_buf: zeros(sends.len())?,
                send_idx,
                stream,
            });
        }
        for p in &parts {
            p.stream.synchronize()?;
        }
        let comms = if devs.len() > 1 {
            exchange::init_nccl(&devs)?
        } else {
            Vec::new()
        };
        Ok(Self {
            comms,
            parts,
            devs,
            partition,
            dtype,
            value_bytes: vb,
        })
    }

    /// The partition (row and `x` cuts, per-part predictions, exchange plan).
    #[must_use]
    pub fn partition(&self) -> &Partition {
        &self.partition
    }

    /// Number of devices in use (at most the parts).
    #[must_use]
    pub fn devices(&self) -> usize {
        self.devs.len()
    }

    /// Name of device `d` (index into the devices in use).
    #[must_use]
    pub fn device_name(&self, d: usize) -> &str {
        self.devs.get(d).map_or("", |d| d.ctx.device_name())
    }

    /// Per part: device index, layout and kernel of its local block.
    #[must_use]
    pub fn part_layouts(&self) -> Vec<(usize, Layout, &'static str)> {
        self.parts
            .iter()
            .map(|p| (p.dev, p.layout, p.kernel.name()))
            .collect()
    }

    /// The offset width (32 or 64 bits) of each part's local block, in part
    /// order: 64 only where a part's entries (or padded slots) need it.
    #[must_use]
    pub fn part_offset_bits(&self) -> Vec<u32> {
        self.parts
            .iter()
            .map(|p| if p.local.wide() { 64 } else { 32 })
            .collect()
    }

    /// Bytes that cross between devices per SpMV (through NCCL); transfers
    /// between parts on one device are device-local copies and not counted.
    #[must_use]
    pub fn nccl_bytes(&self) -> u64 {
        self.partition
            .plan
            .transfers
            .iter()
            .filter(|t| self.parts[t.src].dev != self.parts[t.dst].dev)
            .map(|t| (t.src_idx.len() * self.value_bytes) as u64)
            .sum()
    }

    /// Uploads `x` (`ncols` entries): each part receives its owned slice.
    ///
    /// # Errors
    /// [`GpuError::Shape`] for a wrong length; driver errors.
    pub fn set_x<T: Scalar>(&mut self, x: &[T]) -> Result<(), GpuError> {
        self.check_type::<T>()?;
        if x.len() != self.partition.ncols() {
            return Err(GpuError::Shape {
                what: "x",
                expected: self.partition.ncols(),
                actual: x.len(),
            });
        }
        for (p, part) in self.parts.iter_mut().enumerate() {
            let own = &x[self.partition.cols(p)];
            if !own.is_empty() {
                let bytes: &[u8] = bytemuck::cast_slice(own);
                part.stream.memcpy_htod(bytes, &mut part.x.buf)?;
            }
        }
        self.synchronize()
    }

    fn check_type<T: Scalar>(&self) -> Result<(), GpuError> {
        if real_type::<T>()? != self.dtype {
            return Err(dist_err(format!(
                "the matrix holds {} values, not {}",
                self.dtype.name(),
                T::NAME
            )));
        }
        Ok(())
    }

    /// `y = A x` on every part (asynchronous; [`DistributedMatrix::synchronize`]
    /// waits): the exchange and the local products overlap, then the ghost
    /// blocks add in.
    ///
    /// # Errors
    /// Driver, NCCL and launch errors.
    pub fn spmv(&mut self) -> Result<(), GpuError> {
        self.enqueue(true, true)
    }

    /// Enqueues the exchange (`exchange`) and/or the local and ghost
    /// products (`compute`); both is one SpMV. One alone is for timing the
    /// phases.
    pub(crate) fn enqueue(&mut self, exchange: bool, compute: bool) -> Result<(), GpuError> {
        if exchange {
            exchange::enqueue(self)?;
        }
        if compute {
            for part in &mut self.parts {
                let d = &self.devs[part.dev];
                let p = prepare(&d.ctx, part.kernel, &part.local, self.dtype)?;
                p.enqueue(&part.stream, &part.x, &mut part.y)?;
            }
        }
        if exchange {
            exchange::wait_for_exchange(self)?;
        }
        if compute {
            for part in &mut self.parts {
                let Some(g) = &part.ghost else { continue };
                let d = &self.devs[part.dev];
                let Some(dims) = plan::dims_for_threads(
                    plan::coo_segmented_threads(g.dims.nnz, self.value_bytes),
                    BLOCK,
                ) else {
                    continue;
                };
                let nnz = g.dims.nnz as i64;
                let mut b = part.stream.launch_builder(&d.ghost);
                b.arg(&nnz)
                    .arg(&g.rows.buf)
                    .arg(&g.cols.buf)
                    .arg(&g.vals.buf);
                b.arg(&part.ghost_x.buf).arg(&mut part.y.buf);
                // SAFETY: argument list matches spmv_coo_<t>_segmented (coo.cu);
                // the kernel adds into the y the local block wrote before it
                // on this stream, reading the ghost x received before the
                // wait on the exchange's event.
                unsafe { b.launch(launch::cfg(dims)) }?;
            }
        }
        Ok(())
    }

    /// Waits for every stream of every device.
    ///
    /// # Errors
    /// The driver error of a failed launch, copy or NCCL call.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        for d in &self.devs {
            d.comm_stream.synchronize()?;
        }
        for p in &self.parts {
            p.stream.synchronize()?;
        }
        for d in &self.devs {
            d.ctx.cuda().check_err()?;
        }
        Ok(())
    }

    /// Makes `y` the next `x` without leaving the devices (a square matrix:
    /// each part's rows of `y` are its owned entries of `x`).
    ///
    /// # Errors
    /// [`GpuError::Distributed`] for a matrix that is not square; driver
    /// errors.
    pub fn y_to_x(&mut self) -> Result<(), GpuError> {
        if self.partition.row_bounds != self.partition.col_bounds {
            return Err(dist_err("y becomes x only for a square matrix"));
        }
        for p in &mut self.parts {
            if p.y.len > 0 {
                let n = p.y.len * self.value_bytes;
                let src = p.y.buf.slice(0..n);
                let mut dst = p.x.buf.slice_mut(0..n);
                p.stream.memcpy_dtod(&src, &mut dst)?;
            }
        }
        Ok(())
    }

    /// Copies the distributed `y` back (after [`DistributedMatrix::spmv`]).
    ///
    /// # Errors
    /// Driver errors; [`GpuError::Distributed`] for another value type.
    pub fn gather_y<T: Scalar>(&self) -> Result<Vec<T>, GpuError> {
        self.check_type::<T>()?;
        let mut y = Vec::with_capacity(self.partition.nrows());
        for p in &self.parts {
            if p.y.len == 0 {
                continue;
            }
            let raw: Vec<u8> = p.stream.clone_dtoh(&p.y.buf)?;
            let n = p.y.len * self.value_bytes;
            y.extend(bytemuck::pod_collect_to_vec::<u8, T>(
                &raw[..n.min(raw.len())],
            ));
        }
        Ok(y)
    }
}

/// The layout of a converted matrix (CSC, which has no layout label of its
/// own, reads as CSR: its arrays are those of a CSR; its kernel comes from
/// the matrix's kind, not from this label).
fn layout_of<T: Scalar, I: Index>(m: &sparsetool_formats::MatrixRef<'_, T, I>) -> Layout {
    use sparsetool_formats::MatrixRef;
    match m {
        MatrixRef::Ell(e) => Layout::Ell {
            width: e.width() as u64,
        },
        MatrixRef::Hyb(h) => Layout::Hyb {
            width: h.ell().width() as u64,
        },
        MatrixRef::Sell(s) => Layout::Sell {
            slice: s.slice_height() as u64,
            sigma: s.sigma() as u64,
        },
        MatrixRef::Coo(_) => Layout::Coo,
        MatrixRef::Jds(_) => Layout::Jds,
        MatrixRef::Csr(_) | MatrixRef::Csc(_) => Layout::Csr,
    }
}

/// `y = A x` over several GPUs in one call: distribute, upload `x`, one
/// SpMV, gather `y`.
///
/// # Errors
/// As [`DistributedMatrix::new`] and [`DistributedMatrix::set_x`].
pub fn spmv_distributed<T: Scalar, I: Index>(
    a: &Csr<T, I>,
    x: &[T],
    opts: &DistOptions,
) -> Result<Vec<T>, GpuError> {
    let mut m = DistributedMatrix::new(a, opts)?;
    m.set_x(x)?;
    m.spmv()?;
    m.synchronize()?;
    m.gather_y()
}

/// The ghost kernel's symbol (coo.cu's segmented COO, which adds into `y`).
/// The value type of a distributed matrix: `f32` or `f64` (the exchange
/// moves real values; complex values are refused).
pub(crate) fn real_type<T: Scalar>() -> Result<ValueType, GpuError> {
    if T::IS_COMPLEX {
        return Err(GpuError::Unsupported {
            format: "distributed".to_string(),
            dtype: T::NAME,
        });
    }
    Ok(ValueType::of::<T>())
}

fn ghost_kernel(
    ctx: &GpuContext,
    dtype: ValueType,
) -> Result<cudarc::driver::CudaFunction, GpuError> {
    ctx.function(
        KernelId::Coo,
        &kernel_name("spmv_coo", dtype, Some("segmented")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_map_onto_devices_in_contiguous_groups() {
        for (parts, devs) in [(1, 1), (2, 2), (4, 2), (8, 2), (8, 4), (3, 2), (5, 8)] {
            let map: Vec<usize> = (0..parts).map(|p| device_of(p, parts, devs)).collect();
            assert!(map.windows(2).all(|w| w[0] <= w[1]), "{map:?}");
            assert!(map.iter().all(|&d| d < devs));
            if parts >= devs {
                for d in 0..devs {
                    let n = map.iter().filter(|&&x| x == d).count();
                    assert!(n == parts / devs || n == parts.div_ceil(devs), "{map:?}");
                }
            }
        }
        assert_eq!(device_of(0, 0, 2), 0);
    }

    #[test]
    fn byte_ranges() {
        assert_eq!(bytes(2..5, 8), 16..40);
    }
}
