//! Uploading a matrix once, in any format, into typed device structs.
//!
//! Index arrays become 32-bit (`i32`) device arrays: borrowed without a copy
//! when the host uses `i32`, narrowed (with an overflow check) when it uses
//! `i64`. Offset arrays (CSR row pointers, JDS diagonal pointers, SELL slice
//! pointers) are 32-bit too unless the matrix's entries or slots exceed
//! `i32::MAX` or 64-bit offsets are asked for ([`Offsets`]): then they are
//! 64-bit, and the kernels come from the module compiled with 64-bit offsets.
//! Value arrays are uploaded as raw bytes and typed by [`ValueType`].

use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr};
use sparsetool_formats::{Coo, Csc, Csr, Ell, FormatKind, Index, Jds, Scalar, Sell};

use crate::kernels::{Offsets, ValueType};
use crate::layout::{check_i32, coo_rows_from_row_ptr, narrow_indices, SlicedEllHost};
use crate::plan;
use crate::GpuError;

use sparsetool_formats::MatrixRef;

/// A device array of 32-bit indices with its logical length (the allocation
/// has at least one element, since zero-byte allocations are not allowed).
#[derive(Debug)]
pub(crate) struct DevIdx {
    pub buf: CudaSlice<i32>,
    pub len: usize,
}

/// A device array of offsets (raw bytes: `i32`, or `i64` when `wide`) with
/// its logical length.
#[derive(Debug)]
pub(crate) struct DevOfs {
    pub buf: CudaSlice<u8>,
    pub len: usize,
    pub wide: bool,
}

/// Uploads an offset array, 64-bit when `wide` (borrowed when the host
/// already holds `i64`), else narrowed to 32-bit.
pub(crate) fn upload_ofs<I: Index>(
    stream: &std::sync::Arc<CudaStream>,
    what: &'static str,
    src: &[I],
    wide: bool,
) -> Result<DevOfs, GpuError> {
    let buf = if wide {
        let owned: Vec<i64>;
        let v: &[i64] = match bytemuck::try_cast_slice::<I, i64>(src) {
            Ok(v) if std::mem::size_of::<I>() == 8 => v,
            _ => {
                owned = src.iter().map(|v| v.to_i64()).collect();
                &owned
            }
        };
        htod(stream, bytemuck::cast_slice::<i64, u8>(v))?
    } else {
        let narrowed = narrow_indices(what, src)?;
        htod(stream, bytemuck::cast_slice::<i32, u8>(&narrowed))?
    };
    Ok(DevOfs {
        buf,
        len: src.len(),
        wide,
    })
}

/// A device array of values (raw bytes) with its logical length in values.
#[derive(Debug)]
pub(crate) struct DevVals {
    pub buf: CudaSlice<u8>,
    pub len: usize,
}

fn htod<D: DeviceRepr + Default + Copy>(
    stream: &std::sync::Arc<CudaStream>,
    data: &[D],
) -> Result<CudaSlice<D>, GpuError> {
    if data.is_empty() {
        Ok(stream.clone_htod(&[D::default()])?)
    } else {
        Ok(stream.clone_htod(data)?)
    }
}

pub(crate) fn upload_idx<I: Index>(
    stream: &std::sync::Arc<CudaStream>,
    what: &'static str,
    src: &[I],
) -> Result<DevIdx, GpuError> {
    let narrowed = narrow_indices(what, src)?;
    Ok(DevIdx {
        buf: htod(stream, &narrowed)?,
        len: src.len(),
    })
}

pub(crate) fn upload_i32(
    stream: &std::sync::Arc<CudaStream>,
    src: &[i32],
) -> Result<DevIdx, GpuError> {
    Ok(DevIdx {
        buf: htod(stream, src)?,
        len: src.len(),
    })
}

pub(crate) fn upload_vals<T: Scalar>(
    stream: &std::sync::Arc<CudaStream>,
    src: &[T],
) -> Result<DevVals, GpuError> {
    let bytes: &[u8] = bytemuck::cast_slice(src);
    Ok(DevVals {
        buf: htod(stream, bytes)?,
        len: src.len(),
    })
}

/// `nrows`, `ncols` and `nnz` of a device matrix; rows and columns are
/// checked to fit `i32` (row and column indices stay 32-bit), the entry
/// count may exceed it (64-bit offsets).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dims {
    pub nrows: usize,
    pub ncols: usize,
    pub nnz: usize,
}

impl Dims {
    fn checked(nrows: usize, ncols: usize, nnz: usize) -> Result<Self, GpuError> {
        check_i32("nrows", nrows)?;
        check_i32("ncols", ncols)?;
        Ok(Dims { nrows, ncols, nnz })
    }
}

/// CSR on the device.
#[derive(Debug)]
pub(crate) struct DevCsr {
    pub dims: Dims,
    pub row_ptr: DevOfs,
    pub col_idx: DevIdx,
    pub vals: DevVals,
    /// Rows grouped by bin for the binned kernel ([`crate::plan::csr_bins`]).
    pub bin_rows: DevIdx,
    /// `(lanes, start, count)` of each non-empty bin in `bin_rows`.
    pub bins: Vec<(u32, usize, usize)>,
    /// The merge-path kernel's partition and carry slots for the last chunk
    /// size it was prepared with ([`crate::launch`] builds it on first use:
    /// once per matrix and chunk size, as cuSPARSE's CSR ALG2 preprocesses).
    /// Products of one matrix run one after another on one stream, which
    /// is what lets them share the carry slots.
    pub merge: std::sync::Mutex<Option<MergePlan>>,
    /// The column panels of [`crate::GpuKernel::CsrPanels`] for the last
    /// panel count it was prepared with, each a CSR matrix of its own with
    /// its own merge plan ([`DevCsr::column_panels`]; built on first use,
    /// once per matrix and count, outside any timed product).
    pub panels: std::sync::Mutex<Option<(u32, Vec<DevCsr>)>>,
}

/// `n` values of a plain type from the start of a raw device array.
fn download_as<P: bytemuck::Pod>(
    s: &std::sync::Arc<CudaStream>,
    buf: &CudaSlice<u8>,
    n: usize,
) -> Result<Vec<P>, GpuError> {
    let bytes: Vec<u8> = s.clone_dtoh(buf)?;
    let len = (n * std::mem::size_of::<P>()).min(bytes.len());
    Ok(bytemuck::pod_collect_to_vec::<u8, P>(&bytes[..len]))
}

/// The first `n` offsets in `buf` (64-bit where `wide`, else 32-bit) as
/// `i64`.
fn download_ofs(
    s: &std::sync::Arc<CudaStream>,
    buf: &CudaSlice<u8>,
    wide: bool,
    n: usize,
) -> Result<Vec<i64>, GpuError> {
    Ok(if wide {
        download_as::<i64>(s, buf, n)?
    } else {
        download_as::<i32>(s, buf, n)?
            .into_iter()
            .map(i64::from)
            .collect()
    })
}

impl DevCsr {
    /// This matrix cut into `count` column panels of equal width
    /// ([`plan::panel_cuts`]; the layout of [`crate::layout::column_panels`]),
    /// each a CSR matrix of its own (global column indices, offsets of this
    /// matrix's width), built on the device from this matrix's arrays
    /// (`panel_split` and `panel_copy` in `csr_merge.cu`): the host holds
    /// only row offsets (one per row and panel), never the entries;
    /// `value_bytes` is the size of one value (a multiple of 4).
    pub(crate) fn column_panels(
        &self,
        ctx: &crate::GpuContext,
        count: u32,
        value_bytes: usize,
    ) -> Result<Vec<DevCsr>, GpuError> {
        use cudarc::driver::PushKernelArg;
        let s = ctx.stream();
        let cuts = plan::panel_cuts(self.dims.ncols, count);
        let npanels = cuts.len() - 1;
        let (nrows, wide) = (self.dims.nrows, self.row_ptr.wide);
        // offsets of the module's width, widened
        let row_ptr = download_ofs(s, &self.row_ptr.buf, wide, nrows + 1)?;
        let launch = |name: &str, threads: u64| -> Result<_, GpuError> {
            let f = ctx.function_width(crate::kernels::KernelId::CsrMerge, name, wide)?;
            Ok((f, plan::dims_for_threads(threads, plan::BLOCK)))
        };
        // where each row reaches each cut between panels (cut-major)
        let ncuts = npanels - 1;
        let split: Vec<i64> = if ncuts > 0 && nrows > 0 {
            let inner: Vec<i32> = cuts[1..npanels]
                .iter()
                .map(|&c| check_i32("panel cut", c))
                .collect::<Result<_, _>>()?;
            let cuts_d = htod(s, &inner)?;
            let mut out = s.alloc_zeros::<u8>(ncuts * nrows * if wide { 8 } else { 4 })?;
            let (f, dims) = launch("panel_split", (nrows * ncuts) as u64)?;
            if let Some(d) = dims {
                let (n, c) = (nrows as i32, ncuts as i32);
                let mut b = s.launch_builder(&f);
                b.arg(&n).arg(&c).arg(&cuts_d);
                b.arg(&self.row_ptr.buf)
                    .arg(&self.col_idx.buf)
                    .arg(&mut out);
                // SAFETY: argument list matches panel_split; `out` holds
                // ncuts * nrows offsets of the module's width, `cuts_d`
                // ncuts ints, row_ptr nrows + 1 offsets, col_idx its entries.
                unsafe { b.launch(crate::launch::cfg(d)) }?;
            }
            download_ofs(s, &out, wide, ncuts * nrows)?
        } else {
            Vec::new()
        };
        // panel p of row r: from its start at cut p to its start at cut p + 1
        let bound = |p: usize, r: usize| -> i64 {
            if p == 0 {
                row_ptr[r]
            } else if p == npanels {
                row_ptr[r + 1]
            } else {
                split[(p - 1) * nrows + r]
            }
        };
        let words = (value_bytes / 4) as i32;
        let (copy, copy_dims) = launch("panel_copy", nrows as u64 * 32)?;
        (0..npanels)
            .map(|p| {
                let starts: Vec<i64> = (0..nrows).map(|r| bound(p, r)).collect();
                let mut ptr = Vec::with_capacity(nrows + 1);
                let mut at = 0i64;
                ptr.push(0);
                for r in 0..nrows {
                    at += bound(p + 1, r) - bound(p, r);
                    ptr.push(at);
                }
                let nnz = at as usize;
                let starts_d = upload_ofs(s, "panel starts", &starts, wide)?;
                let ptr_d = upload_ofs(s, "row_ptr", &ptr, wide)?;
                let mut cols = s.alloc_zeros::<i32>(nnz.max(1))?;
                let mut vals = s.alloc_zeros::<u8>((nnz * value_bytes).max(1))?;
                if let (Some(d), true) = (copy_dims, nnz > 0) {
                    let n = nrows as i32;
                    let one = 1i32;
                    let mut b = s.launch_builder(&copy);
                    b.arg(&n).arg(&one).arg(&starts_d.buf).arg(&ptr_d.buf);
                    b.arg(&self.col_idx.buf).arg(&mut cols);
                    // SAFETY: argument list matches panel_copy; each row's
                    // range lies inside col_idx (its starts come from
                    // row_ptr and panel_split) and inside `cols` (`ptr`,
                    // whose last offset is nnz).
                    unsafe { b.launch(crate::launch::cfg(d)) }?;
                    let mut b = s.launch_builder(&copy);
                    b.arg(&n).arg(&words).arg(&starts_d.buf).arg(&ptr_d.buf);
                    b.arg(&self.vals.buf).arg(&mut vals);
                    // SAFETY: as above, in 32-bit words: `words` per value.
                    unsafe { b.launch(crate::launch::cfg(d)) }?;
                }
                Ok(DevCsr {
                    dims: Dims { nnz, ..self.dims },
                    row_ptr: ptr_d,
                    col_idx: DevIdx {
                        buf: cols,
                        len: nnz,
                    },
                    vals: DevVals {
                        buf: vals,
                        len: nnz,
                    },
                    bin_rows: upload_i32(s, &[])?,
                    bins: Vec::new(),
                    merge: std::sync::Mutex::new(None),
                    panels: std::sync::Mutex::new(None),
                })
            })
            .collect()
    }
}

/// Where each warp of the merge-path CSR kernel starts, and the slots its
/// open rows are left in (`csr_merge.cu`).
#[derive(Debug)]
pub(crate) struct MergePlan {
    /// Items per warp.
    pub chunk: u32,
    /// Warps of the product.
    pub warps: u64,
    /// For each warp and the end of the path (`warps + 1` slots), the rows
    /// completed before its first item and how far that item lies before
    /// the warp's diagonal (`merge_partition`: chunks start on aligned
    /// entries where that moves them back by at most `MERGE_ALIGN` rows).
    pub starts: CudaSlice<i32>,
    /// The row each warp leaves open at its chunk's end, or -1.
    pub carry_rows: CudaSlice<i32>,
    /// That row's partial sum (one value per warp, raw bytes).
    pub carry_vals: CudaSlice<u8>,
}

/// COO on the device, always sorted by row (unsorted input is sorted on upload).
#[derive(Debug)]
pub(crate) struct DevCoo {
    pub dims: Dims,
    /// Entries of the longest row ([`plan::coo_merge`]; 0 for a CSC's
    /// entries in column order, which the segmented kernel does not run).
    pub longest: usize,
    pub rows: DevIdx,
    pub cols: DevIdx,
    pub vals: DevVals,
}

/// ELL on the device (also HYB's ELL part).
#[derive(Debug)]
pub(crate) struct DevEll {
    pub dims: Dims,
    pub width: usize,
    pub row_nnz: DevIdx,
    pub col_idx: DevIdx,
    pub vals: DevVals,
    /// The 16-bit columns of `ell-u16` and `hyb-u16` ([`DevEll::u16_columns`];
    /// built on first use, once per matrix, outside any timed product), or
    /// why this matrix has none.
    pub u16: Built<DevEllU16>,
}

/// [`crate::layout::EllU16`] on the device.
#[derive(Debug)]
pub(crate) struct DevEllU16 {
    /// Base column of every group of 32 rows (-1: its warp reads the 32-bit
    /// indices).
    pub base: DevIdx,
    /// Two 16-bit offsets a word, slot-major.
    pub words: CudaSlice<u32>,
    /// Rows whose columns are read as offsets.
    pub narrow_rows: usize,
    /// Bytes of columns the kernel reads beyond the 32-bit indices' (less
    /// than 0: fewer): the bases and every row's pairs, plus the 32-bit
    /// indices of the rows of groups without a base only.
    pub extra: i64,
}

/// Arrays built from a device matrix on first use and kept with it (the
/// 16-bit columns), or why the matrix has none.
pub(crate) type Built<U> = std::sync::Mutex<Option<Result<U, String>>>;

/// `f` of the arrays built in `slot`; `None` where they were not built or
/// the matrix has none.
pub(crate) fn built_ok<U, R>(slot: &Built<U>, f: impl FnOnce(&U) -> R) -> Option<R> {
    let set = slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    set.as_ref()?.as_ref().ok().map(f)
}

/// [`Built`] arrays locked for a launch.
pub(crate) type BuiltGuard<'a, U> = std::sync::MutexGuard<'a, Option<Result<U, String>>>;

/// Builds `slot`'s arrays with `build` on first use and keeps them, or keeps
/// why this matrix has none and returns it as [`GpuError::NotApplicable`]
/// for `kernel` every time; a driver or memory error is returned as it is
/// and not kept.
pub(crate) fn ensure_built<U>(
    slot: &Built<U>,
    kernel: &'static str,
    build: impl FnOnce() -> Result<U, GpuError>,
) -> Result<(), GpuError> {
    let mut set = slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if set.is_none() {
        *set = Some(match build() {
            Ok(n) => Ok(n),
            Err(GpuError::NotApplicable { reason, .. }) => Err(reason),
            Err(e) => return Err(e),
        });
    }
    match set.as_ref() {
        Some(Err(reason)) => Err(GpuError::NotApplicable {
            kernel,
            reason: reason.clone(),
        }),
        _ => Ok(()),
    }
}

impl DevEll {
    /// Builds the 16-bit columns of `ell-u16` and `hyb-u16` from this
    /// layout's column indices (downloaded, on `s`, the stream it was
    /// uploaded on), or says why it cannot ([`crate::layout::ell_u16`]).
    pub(crate) fn u16_columns(
        &self,
        s: &std::sync::Arc<CudaStream>,
    ) -> Result<DevEllU16, GpuError> {
        let mut cols: Vec<i32> = s.clone_dtoh(&self.col_idx.buf)?;
        cols.truncate(self.col_idx.len);
        let h = crate::layout::ell_u16(self.dims.nrows, self.width, &cols)?;
        drop(cols);
        let bytes = |n: usize| 4 * n as i64;
        Ok(DevEllU16 {
            base: upload_i32(s, &h.base)?,
            words: htod(s, &h.words)?,
            narrow_rows: h.narrow_rows,
            extra: bytes(h.base.len() + h.words.len()) - bytes(h.narrow_rows * self.width),
        })
    }
}

/// JDS on the device.
#[derive(Debug)]
pub(crate) struct DevJds {
    pub dims: Dims,
    pub ndiag: usize,
    /// Diagonals walked by one thread ([`plan::long_row_cap`]).
    pub cap: usize,
    /// Entries of the first `cap` diagonals, for [`plan::jds_wide`] (the
    /// long rows' too, which a tail that goes first walks instead: the
    /// choice was measured so).
    pub main_entries: usize,
    /// The rows longer than `cap` (`None`: none; boxed, as few layouts
    /// have them).
    pub tail: Option<Box<JdsTail>>,
    /// The main kernel's blocks ([`plan::jds_main_blocks`]: in window order,
    /// or in sorted order past the long rows a tail that goes first holds;
    /// `None`: sorted order over all rows; boxed, as few layouts have them).
    pub blocks: Option<Box<DevIdx>>,
    /// Whether `blocks` go in window order.
    pub window: bool,
    pub perm: DevIdx,
    pub jd_ptr: DevOfs,
    pub col_idx: DevIdx,
    pub vals: DevVals,
    /// The 16-bit columns of `jds-u16` ([`DevJds::u16_columns`]; built on
    /// first use, once per matrix, outside any timed product), or why this
    /// matrix has none.
    pub u16: Built<DevJdsU16>,
}

/// [`crate::layout::JdsU16`] on the device: per group of 32 sorted rows a
/// base column and per row its words, as ELL's ([`DevEllU16`], whose
/// `extra` also counts `ptr`), and where each pair of diagonals starts in
/// the words.
#[derive(Debug)]
pub(crate) struct DevJdsU16 {
    pub groups: DevEllU16,
    pub ptr: CudaSlice<i64>,
}

impl DevJds {
    /// Builds the 16-bit columns of `jds-u16` from this layout's arrays
    /// (downloaded, on `s`, the stream it was uploaded on), or says why it
    /// cannot ([`crate::layout::jds_u16`]).
    pub(crate) fn u16_columns(
        &self,
        s: &std::sync::Arc<CudaStream>,
    ) -> Result<DevJdsU16, GpuError> {
        let jd_ptr = download_ofs(s, &self.jd_ptr.buf, self.jd_ptr.wide, self.ndiag + 1)?;
        let mut cols: Vec<i32> = s.clone_dtoh(&self.col_idx.buf)?;
        cols.truncate(self.col_idx.len);
        let h = crate::layout::jds_u16(self.dims.nrows, self.cap, &jd_ptr, &cols)?;
        drop(cols);
        let stored = 4 * (h.base.len() + h.words.len()) + 8 * h.ptr.len();
        Ok(DevJdsU16 {
            groups: DevEllU16 {
                base: upload_i32(s, &h.base)?,
                words: htod(s, &h.words)?,
                narrow_rows: h.narrow.0,
                extra: stored as i64 - 4 * h.narrow.1 as i64,
            },
            ptr: htod(s, &h.ptr)?,
        })
    }
}

/// JDS's long-row tail ([`plan::jds_tail_items`]).
#[derive(Debug)]
pub(crate) struct JdsTail {
    /// First thread of each chunk, `nchunks + 1` entries.
    pub item_ptr: CudaSlice<i64>,
    pub nchunks: usize,
    /// Threads of the chunks.
    pub threads: u64,
    /// The bands past the chunks ([`plan::Bands`]), one block each.
    pub bands: DevIdx,
    /// Where the parts of the long rows' sums meet when the tail goes
    /// first, holding those rows whole ([`plan::jds_tail_first`]; `None`:
    /// it goes after the main kernel and adds into `y`).
    pub head: Option<HeadSums>,
}

/// The sums of a product's long rows, whose parts the threads of a tail
/// that goes first add (`HeadSums` in `common.cuh`): per long row
/// (the first sorted positions, one per count) the number of parts
/// ([`plan::jds_head_counts`]), the sum so far and the parts counted so
/// far, both zero between products (the kernels' last adder of each row
/// zeroes them). The kernels write `acc` and `done`: the products of one
/// device matrix go on its context's one stream, one at a time.
#[derive(Debug)]
pub(crate) struct HeadSums {
    /// A count per long row (`cnt.len` of them).
    pub cnt: DevIdx,
    pub acc: DevVals,
    pub done: CudaSlice<u32>,
}

impl HeadSums {
    fn upload(
        s: &std::sync::Arc<CudaStream>,
        cnt: &[i32],
        value_bytes: usize,
    ) -> Result<Self, GpuError> {
        let n = cnt.len();
        Ok(Self {
            cnt: upload_i32(s, cnt)?,
            acc: DevVals {
                buf: s.alloc_zeros::<u8>((n * value_bytes).max(1))?,
                len: n,
            },
            done: s.alloc_zeros::<u32>(n.max(1))?,
        })
    }
}

/// SELL's long-slice tail ([`plan::sell_tail_items`]).
#[derive(Debug)]
pub(crate) struct SellTailItems {
    /// `(slice, chunk)` items, `slice_height` threads each.
    pub slices: DevIdx,
    pub chunks: DevIdx,
    /// The narrow rows' segments ([`plan::Segments`]), one block each.
    pub segs: DevIdx,
    /// The sorted slices' bands ([`plan::SellTailPlan::bands`]), one block
    /// each.
    pub bands: DevIdx,
}

/// The long-slice tail of a SELL layout (`None`: no slice wider than the cap).
/// Boxed: a layout has few of them and `DeviceMatrix` stays small.
pub(crate) type SellTail = Option<Box<SellTailItems>>;

/// SELL-C-sigma (with `perm`) or cuSPARSE sliced ELL (without) on the device.
#[derive(Debug)]
pub(crate) struct DevSell {
    pub dims: Dims,
    pub slice_height: usize,
    pub sigma: usize,
    pub nslices: usize,
    /// Slots walked by one thread ([`plan::long_row_cap`]).
    pub cap: usize,
    /// Tail items (slice, chunk) of the slices wider than `cap`, and their
    /// count (`None`: none).
    pub tail: SellTail,
    /// Slots a thread of the main kernel walks on average: the slices'
    /// widths up to `cap` (the rest is the tail's).
    pub main_slots: usize,
    /// The main kernel's units in window order, a slice each, padded to
    /// whole blocks ([`plan::sell_slice_blocks`]; `None`: one block per
    /// `BLOCK / slice_height` consecutive slices;
    /// boxed, as few layouts have them).
    pub blocks: Option<Box<DevIdx>>,
    pub perm: Option<DevIdx>,
    pub slice_ptr: DevOfs,
    pub slice_width: DevIdx,
    pub col_idx: DevIdx,
    pub vals: DevVals,
    /// The 16-bit columns of `sell-u16` ([`DevSell::u16_columns`]; built on
    /// first use, once per matrix, outside any timed product), or why this
    /// matrix has none.
    pub u16: Built<DevU16>,
}

/// [`crate::layout::SellU16`] on the device.
#[derive(Debug)]
pub(crate) struct DevU16 {
    /// Base column of every slice.
    pub base: DevIdx,
    /// Where each slice's pairs start in `cols` (16-bit units).
    pub ptr: CudaSlice<i64>,
    /// 16-bit column offsets in pairs.
    pub cols: CudaSlice<u16>,
    /// Bytes the main kernel reads for its columns: 2 a stored offset, the
    /// base and the start of every slice.
    pub bytes: u64,
    /// Slots the main kernel walks ([`crate::layout::SellU16::main_slots`]),
    /// whose 32-bit indices it no longer reads.
    pub main_slots: u64,
}

impl DevSell {
    /// Builds the 16-bit columns of `sell-u16` from this layout's arrays
    /// (downloaded: 4 bytes a slot and one offset and width a slice, on
    /// `s`, the stream it was uploaded on), or says why it cannot
    /// ([`crate::layout::sell_u16`]).
    pub(crate) fn u16_columns(&self, s: &std::sync::Arc<CudaStream>) -> Result<DevU16, GpuError> {
        let n = self.nslices;
        let slice_ptr = download_ofs(s, &self.slice_ptr.buf, self.slice_ptr.wide, n + 1)?;
        let mut widths: Vec<i32> = s.clone_dtoh(&self.slice_width.buf)?;
        widths.truncate(n);
        let mut cols: Vec<i32> = s.clone_dtoh(&self.col_idx.buf)?;
        cols.truncate(self.col_idx.len);
        let h = crate::layout::sell_u16(self.slice_height, self.cap, &slice_ptr, &widths, &cols)?;
        drop(cols);
        Ok(DevU16 {
            base: upload_i32(s, &h.base)?,
            ptr: htod(s, &h.ptr)?,
            cols: htod(s, &h.cols)?,
            bytes: 2 * h.cols.len() as u64 + 12 * n as u64,
            main_slots: h.main_slots,
        })
    }
}

/// A matrix uploaded to the device.
#[derive(Debug)]
pub(crate) enum DeviceMatrix {
    Coo(DevCoo),
    Csr(DevCsr),
    Ell(DevEll),
    Hyb(DevEll, DevCoo),
    Jds(DevJds),
    Sell(DevSell),
}

fn idx_bytes(a: &DevIdx) -> u64 {
    a.len as u64 * 4
}

fn ofs_bytes(a: &DevOfs) -> u64 {
    a.len as u64 * if a.wide { 8 } else { 4 }
}

impl DeviceMatrix {
    /// Bytes of columns the 16-bit kernel of ELL, HYB's ELL part or JDS
    /// reads beyond the 32-bit indices' (`extra` of its built offsets);
    /// `None` for other formats or where they were not built.
    pub fn u16_extra(&self) -> Option<i64> {
        match self {
            DeviceMatrix::Ell(e) | DeviceMatrix::Hyb(e, _) => built_ok(&e.u16, |n| n.extra),
            DeviceMatrix::Jds(j) => built_ok(&j.u16, |n| n.groups.extra),
            _ => None,
        }
    }

    pub fn kind(&self) -> FormatKind {
        match self {
            DeviceMatrix::Coo(_) => FormatKind::Coo,
            DeviceMatrix::Csr(_) => FormatKind::Csr,
            DeviceMatrix::Ell(_) => FormatKind::Ell,
            DeviceMatrix::Hyb(..) => FormatKind::Hyb,
            DeviceMatrix::Jds(_) => FormatKind::Jds,
            DeviceMatrix::Sell(_) => FormatKind::Sell,
        }
    }

    /// `(nrows, ncols, nnz)`.
    pub fn shape(&self) -> (usize, usize, usize) {
        match self {
            DeviceMatrix::Hyb(e, c) => (e.dims.nrows, e.dims.ncols, e.dims.nnz + c.dims.nnz),
            DeviceMatrix::Coo(DevCoo { dims, .. })
            | DeviceMatrix::Csr(DevCsr { dims, .. })
            | DeviceMatrix::Ell(DevEll { dims, .. })
            | DeviceMatrix::Jds(DevJds { dims, .. })
            | DeviceMatrix::Sell(DevSell { dims, .. }) => (dims.nrows, dims.ncols, dims.nnz),
        }
    }

    /// Whether the offsets are 64-bit (the kernels then come from the
    /// 64-bit module); formats without offset arrays are never wide.
    pub fn wide(&self) -> bool {
        match self {
            DeviceMatrix::Csr(c) => c.row_ptr.wide,
            DeviceMatrix::Jds(j) => j.jd_ptr.wide,
            DeviceMatrix::Sell(s) => s.slice_ptr.wide,
            DeviceMatrix::Coo(_) | DeviceMatrix::Ell(_) | DeviceMatrix::Hyb(..) => false,
        }
    }

    /// Bytes of the stored arrays on the device (the matrix term of the
    /// minimum-bytes model).
    pub fn matrix_bytes(&self, dtype: ValueType) -> u64 {
        let v = |d: &DevVals| d.len as u64 * dtype.size() as u64;
        let coo = |m: &DevCoo| idx_bytes(&m.rows) + idx_bytes(&m.cols) + v(&m.vals);
        let ell = |m: &DevEll| idx_bytes(&m.row_nnz) + idx_bytes(&m.col_idx) + v(&m.vals);
        match self {
            DeviceMatrix::Coo(m) => coo(m),
            DeviceMatrix::Csr(m) => ofs_bytes(&m.row_ptr) + idx_bytes(&m.col_idx) + v(&m.vals),
            DeviceMatrix::Ell(m) => ell(m),
            DeviceMatrix::Hyb(e, c) => ell(e) + coo(c),
            DeviceMatrix::Jds(m) => {
                idx_bytes(&m.perm) + ofs_bytes(&m.jd_ptr) + idx_bytes(&m.col_idx) + v(&m.vals)
            }
            DeviceMatrix::Sell(m) => {
                m.perm.as_ref().map_or(0, idx_bytes)
                    + ofs_bytes(&m.slice_ptr)
                    + idx_bytes(&m.slice_width)
                    + idx_bytes(&m.col_idx)
                    + v(&m.vals)
            }
        }
    }
}

pub(crate) fn upload_csr<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Csr<T, I>,
    offsets: Offsets,
) -> Result<DevCsr, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    let lens = m
        .row_ptr()
        .windows(2)
        .map(|w| w[1].to_usize() - w[0].to_usize());
    let (bin_rows, bins) = crate::plan::csr_bins(lens);
    Ok(DevCsr {
        dims,
        row_ptr: upload_ofs(s, "row_ptr", m.row_ptr(), offsets.wide_for(m.nnz() as u64))?,
        col_idx: upload_idx(s, "col_idx", m.col_idx())?,
        vals: upload_vals(s, m.values())?,
        bin_rows: upload_i32(s, &bin_rows)?,
        bins,
        merge: std::sync::Mutex::new(None),
        panels: std::sync::Mutex::new(None),
    })
}

/// Uploads CSR as row-sorted COO (rows expanded from `row_ptr`).
pub(crate) fn upload_csr_as_coo<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Csr<T, I>,
) -> Result<DevCoo, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    let rows = coo_rows_from_row_ptr(m.row_ptr());
    Ok(DevCoo {
        dims,
        longest: m.max_row_len(),
        rows: upload_i32(s, &rows)?,
        cols: upload_idx(s, "col_idx", m.col_idx())?,
        vals: upload_vals(s, m.values())?,
    })
}

/// Uploads CSC as COO in column order (the input of
/// [`crate::GpuKernel::CscScatter`]): rows as stored, each entry's column
/// expanded from `col_ptr`.
pub(crate) fn upload_csc_as_coo<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Csc<T, I>,
) -> Result<DevCoo, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    let cols = coo_rows_from_row_ptr(m.col_ptr());
    Ok(DevCoo {
        dims,
        longest: 0,
        rows: upload_idx(s, "row_idx", m.row_idx())?,
        cols: upload_i32(s, &cols)?,
        vals: upload_vals(s, m.values())?,
    })
}

pub(crate) fn upload_coo<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Coo<T, I>,
) -> Result<DevCoo, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    let sorted = m.rows().windows(2).all(|w| w[0] <= w[1]);
    let (longest, rows, cols, vals) = if sorted {
        (
            longest_run(m.rows()),
            upload_idx(s, "rows", m.rows())?,
            upload_idx(s, "cols", m.cols())?,
            upload_vals(s, m.values())?,
        )
    } else {
        // stable sort by row: the segmented kernel needs row-sorted entries
        let mut order: Vec<usize> = (0..m.nnz()).collect();
        order.sort_by_key(|&k| m.rows()[k]);
        let r: Vec<I> = order.iter().map(|&k| m.rows()[k]).collect();
        let c: Vec<I> = order.iter().map(|&k| m.cols()[k]).collect();
        let v: Vec<T> = order.iter().map(|&k| m.values()[k]).collect();
        (
            longest_run(&r),
            upload_idx(s, "rows", &r)?,
            upload_idx(s, "cols", &c)?,
            upload_vals(s, &v)?,
        )
    };
    Ok(DevCoo {
        dims,
        longest,
        rows,
        cols,
        vals,
    })
}

/// Entries of the longest run of equal rows in row-sorted `rows`.
fn longest_run<I: Index>(rows: &[I]) -> usize {
    rows.chunk_by(|a, b| a == b)
        .map(<[I]>::len)
        .max()
        .unwrap_or(0)
}

pub(crate) fn upload_ell<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Ell<T, I>,
) -> Result<DevEll, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    check_i32("ELL width", m.width())?;
    Ok(DevEll {
        dims,
        width: m.width(),
        row_nnz: upload_idx(s, "row_nnz", m.row_nnz())?,
        col_idx: upload_idx(s, "col_idx", m.col_idx())?,
        vals: upload_vals(s, m.values())?,
        u16: std::sync::Mutex::new(None),
    })
}

pub(crate) fn upload_jds<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Jds<T, I>,
    offsets: Offsets,
) -> Result<DevJds, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    let jd = m.jd_ptr();
    let ndiag = jd.len().saturating_sub(1);
    let cap = plan::long_row_cap(m.nrows(), m.nnz(), ndiag);
    let dlen = |d: usize| jd[d + 1].to_usize() - jd[d].to_usize();
    let first = plan::jds_tail_first(m.nnz(), ndiag, cap, dlen);
    let (items, bands) = plan::jds_tail_items(ndiag, cap, first, dlen);
    // the long rows a tail that goes first holds whole
    let nhead = if first { dlen(cap) } else { 0 };
    let tail = if items.is_empty() && bands.is_empty() {
        None
    } else {
        let head = if nhead > 0 {
            let counts = plan::jds_head_counts(ndiag, cap, &items, &bands, dlen);
            Some(HeadSums::upload(s, &counts, std::mem::size_of::<T>())?)
        } else {
            None
        };
        Some(Box::new(JdsTail {
            nchunks: items.len().saturating_sub(1),
            threads: items.last().map_or(0, |&t| t as u64),
            item_ptr: htod(s, &items)?,
            bands: upload_i32(s, &bands)?,
            head,
        }))
    };
    let perm = m.perm();
    let rows = nhead..m.nrows();
    let (blocks, window) =
        plan::jds_main_blocks(m.nrows(), rows, ndiag, dlen, |p| perm[p].to_usize());
    Ok(DevJds {
        dims,
        ndiag,
        cap,
        main_entries: jd.get(ndiag.min(cap)).map_or(0, |e| e.to_usize()),
        tail,
        blocks: if blocks.is_empty() {
            None
        } else {
            Some(Box::new(upload_i32(s, &blocks)?))
        },
        window,
        perm: upload_idx(s, "perm", m.perm())?,
        jd_ptr: upload_ofs(s, "jd_ptr", jd, offsets.wide_for(m.nnz() as u64))?,
        col_idx: upload_idx(s, "col_idx", m.col_idx())?,
        vals: upload_vals(s, m.values())?,
        u16: std::sync::Mutex::new(None),
    })
}

/// The long-slice tail of a SELL layout on the device: the cap, the tail
/// and the slots a thread of the main kernel walks on average (the slices'
/// widths up to the cap). `stored(slot)` tells an entry from padding
/// (index -1) in `col_idx`, whose slices of `c` rows start at `start(k)`.
fn sell_tail(
    s: &std::sync::Arc<CudaStream>,
    (nrows, nnz, c): (usize, usize, usize),
    widths: impl Iterator<Item = usize>,
    start: impl Fn(usize) -> usize,
    stored: impl Fn(usize) -> bool,
) -> Result<(usize, SellTail, usize), GpuError> {
    let width: Vec<usize> = widths.collect();
    let cap = plan::long_row_cap(nrows, nnz, width.iter().copied().max().unwrap_or(0));
    let main_slots = width.iter().map(|&w| w.min(cap)).sum::<usize>() / width.len().max(1);
    let row_len =
        |k: usize, r: usize| plan::stored_len(width[k], |slot| stored(start(k) + slot * c + r));
    let t = plan::sell_tail_items(width.iter().copied(), c, cap, row_len);
    let tail = if t.is_empty() {
        None
    } else {
        Some(Box::new(SellTailItems {
            slices: upload_i32(s, &t.slices)?,
            chunks: upload_i32(s, &t.chunks)?,
            segs: upload_i32(s, &t.segs)?,
            bands: upload_i32(s, &t.bands)?,
        }))
    };
    Ok((cap, tail, main_slots))
}

pub(crate) fn upload_sell<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    m: &Sell<T, I>,
    offsets: Offsets,
) -> Result<DevSell, GpuError> {
    let dims = Dims::checked(m.nrows(), m.ncols(), m.nnz())?;
    check_i32("SELL slice height", m.slice_height())?;
    let slots = m.col_idx().len() as u64;
    let (cap, tail, main_slots) = sell_tail(
        s,
        (m.nrows(), m.nnz(), m.slice_height()),
        m.slice_width().iter().map(|w| w.to_usize()),
        |k| m.slice_ptr()[k].to_usize(),
        |slot| m.col_idx()[slot].to_i64() >= 0,
    )?;
    let widths: Vec<usize> = m.slice_width().iter().map(|w| w.to_usize()).collect();
    let perm = m.perm();
    let shape = (m.slice_height(), m.sigma());
    let blocks = plan::sell_slice_blocks(m.nrows(), shape, &widths, |p| perm[p].to_usize());
    Ok(DevSell {
        dims,
        slice_height: m.slice_height(),
        sigma: m.sigma(),
        nslices: m.slice_width().len(),
        cap,
        tail,
        main_slots,
        blocks: if blocks.is_empty() {
            None
        } else {
            Some(Box::new(upload_i32(s, &blocks)?))
        },
        perm: Some(upload_idx(s, "perm", m.perm())?),
        slice_ptr: upload_ofs(s, "slice_ptr", m.slice_ptr(), offsets.wide_for(slots))?,
        slice_width: upload_idx(s, "slice_width", m.slice_width())?,
        col_idx: upload_idx(s, "col_idx", m.col_idx())?,
        vals: upload_vals(s, m.values())?,
        u16: std::sync::Mutex::new(None),
    })
}

/// Uploads cuSPARSE's sliced-ELL layout (no permutation).
pub(crate) fn upload_sliced_ell<T: Scalar>(
    s: &std::sync::Arc<CudaStream>,
    m: &SlicedEllHost<T>,
    ncols: usize,
    nnz: usize,
) -> Result<DevSell, GpuError> {
    let (cap, tail, main_slots) = sell_tail(
        s,
        (m.nrows, nnz, m.slice_size),
        m.slice_width.iter().map(|&w| w.max(0) as usize),
        |k| m.slice_ptr[k].max(0) as usize,
        |slot| m.col_idx[slot] >= 0,
    )?;
    Ok(DevSell {
        dims: Dims::checked(m.nrows, ncols, nnz)?,
        slice_height: m.slice_size,
        sigma: 1,
        nslices: m.slice_width.len(),
        cap,
        tail,
        main_slots,
        blocks: None,
        perm: None,
        slice_ptr: upload_ofs(s, "slice_ptr", &m.slice_ptr, false)?,
        slice_width: upload_i32(s, &m.slice_width)?,
        col_idx: upload_i32(s, &m.col_idx)?,
        vals: upload_vals(s, &m.values)?,
        u16: std::sync::Mutex::new(None),
    })
}

/// Uploads any format once.
pub(crate) fn upload<T: Scalar, I: Index>(
    s: &std::sync::Arc<CudaStream>,
    a: &MatrixRef<'_, T, I>,
    offsets: Offsets,
) -> Result<DeviceMatrix, GpuError> {
    Ok(match a {
        MatrixRef::Coo(m) => DeviceMatrix::Coo(upload_coo(s, m)?),
        MatrixRef::Csr(m) => DeviceMatrix::Csr(upload_csr(s, m, offsets)?),
        MatrixRef::Ell(m) => DeviceMatrix::Ell(upload_ell(s, m)?),
        MatrixRef::Hyb(m) => DeviceMatrix::Hyb(upload_ell(s, m.ell())?, upload_coo(s, m.coo())?),
        MatrixRef::Jds(m) => DeviceMatrix::Jds(upload_jds(s, m, offsets)?),
        MatrixRef::Sell(m) => DeviceMatrix::Sell(upload_sell(s, m, offsets)?),
        MatrixRef::Csc(m) => DeviceMatrix::Coo(upload_csc_as_coo(s, m)?),
    })
}
