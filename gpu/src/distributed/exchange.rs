//! The `x` exchange of [`DistributedMatrix`]: devices, NCCL communicators,
//! the gather kernel (`gpu/kernels/dist.cu`, [`KernelId::Dist`]) and the
//! enqueueing of one exchange.

use std::sync::Arc;

use cudarc::driver::{CudaStream, PushKernelArg};

use super::{bytes, ghost_kernel, Dev, DistributedMatrix};
use crate::context::GpuContext;
use crate::kernels::{kernel_name, KernelId, ValueType};
use crate::plan::{self, BLOCK};
use crate::GpuError;

/// NCCL's switch for NVLink SHARP (multicast). The exchange never uses
/// it: opening the communicators sets it to `0` when the environment leaves
/// it unset.
pub const NVLS_ENV: &str = "NCCL_NVLS_ENABLE";

/// Where NCCL writes its own messages (`NCCL_DEBUG`); unset, NCCL writes them
/// to standard output, where they would corrupt `--json` output and the
/// Matrix Market `y` of `spmv -o -` (seen on the H200 pair: "NCCL version
/// 2.28.3+cuda13.0" after the JSON). Opening the communicators sets it to
/// standard error when the environment leaves it unset.
pub const DEBUG_FILE_ENV: &str = "NCCL_DEBUG_FILE";

/// Whether `libnccl.so` can be loaded (probing only; never panics). cudarc
/// looks for `libnccl.so` (and a few versioned names, not `libnccl.so.2`):
/// a directory with a `libnccl.so` link to the real library on
/// `LD_LIBRARY_PATH` does it (`scripts/gpu-dist.sh`).
#[must_use]
pub fn nccl_available() -> bool {
    // SAFETY: only tries to open the library; no symbol is called.
    std::panic::catch_unwind(|| unsafe { cudarc::nccl::sys::is_culib_present() }).unwrap_or(false)
}

fn nccl_err(what: &str, e: cudarc::nccl::result::NcclError) -> GpuError {
    GpuError::Nccl(format!("{what} failed: {:?}", e.0))
}

/// Highest-priority non-blocking stream of `ctx` (the exchange must not
/// queue behind the local product's blocks).
fn priority_stream(ctx: &GpuContext) -> Result<Arc<CudaStream>, GpuError> {
    ctx.cuda().bind_to_thread()?;
    match cudarc::driver::result::stream::get_priority_range() {
        Ok((_, greatest)) => Ok(ctx.cuda().new_stream_with_priority(greatest)?),
        Err(_) => Ok(ctx.cuda().new_stream()?),
    }
}

/// Opens device `ordinal` with its exchange stream and kernels.
pub(super) fn open_device(ordinal: usize, dtype: ValueType) -> Result<Dev, GpuError> {
    let ctx = GpuContext::new(ordinal)?;
    let comm_stream = priority_stream(&ctx)?;
    let gather = ctx.function(KernelId::Dist, &kernel_name("dist_gather", dtype, None))?;
    let ghost = ghost_kernel(&ctx, dtype)?;
    Ok(Dev {
        ctx,
        comm_stream,
        gather,
        ghost,
    })
}

/// One NCCL communicator per device, rank `r` on device `r`, on the
/// devices' exchange streams.
pub(super) fn init_nccl(devs: &[Dev]) -> Result<Vec<cudarc::nccl::Comm>, GpuError> {
    if std::env::var_os(NVLS_ENV).is_none() {
        std::env::set_var(NVLS_ENV, "0");
    }
    if std::env::var_os(DEBUG_FILE_ENV).is_none() {
        std::env::set_var(DEBUG_FILE_ENV, "/dev/stderr");
    }
    if !nccl_available() {
        return Err(GpuError::Nccl(
            "libnccl.so could not be loaded; put a directory holding libnccl.so (a link to libnccl.so.2) on LD_LIBRARY_PATH".into(),
        ));
    }
    let streams: Vec<Arc<CudaStream>> = devs.iter().map(|d| d.comm_stream.clone()).collect();
    match std::panic::catch_unwind(move || cudarc::nccl::Comm::from_devices(streams)) {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err(nccl_err("ncclCommInitAll", e)),
        Err(_) => Err(GpuError::Nccl(
            "ncclCommInitAll is missing from libnccl".into(),
        )),
    }
}

/// Enqueues one exchange: gathers on every device's exchange stream, then
/// same-device copies, then every cross-device message in one NCCL group.
/// Messages between a pair of devices are issued in the plan's `(src, dst)`
/// order on both sides, which is how NCCL matches them.
pub(super) fn enqueue(m: &mut DistributedMatrix) -> Result<(), GpuError> {
    let vb = m.value_bytes;
    for part in &mut m.parts {
        let Some(idx) = &part.send_idx else { continue };
        let d = &m.devs[part.dev];
        let n = part.send_buf.len as i64;
        let Some(dims) = plan::dims_for_threads(part.send_buf.len as u64, BLOCK) else {
            continue;
        };
        let mut b = d.comm_stream.launch_builder(&d.gather);
        b.arg(&n)
            .arg(idx)
            .arg(&part.x.buf)
            .arg(&mut part.send_buf.buf);
        // SAFETY: argument list matches dist_gather_<t>; every index is
        // below the part's owned x length (the plan's src_idx).
        unsafe { b.launch(crate::launch::cfg(dims)) }?;
    }
    // Offsets of each message in its sender's buffer.
    let plan = &m.partition.plan;
    let mut offset = vec![0usize; m.parts.len()];
    let mut local = Vec::new();
    let mut remote = Vec::new();
    for t in &plan.transfers {
        let len = t.src_idx.len();
        let src_range = bytes(offset[t.src]..offset[t.src] + len, vb);
        let dst_range = bytes(t.dst_offset..t.dst_offset + len, vb);
        offset[t.src] += len;
        if m.parts[t.src].dev == m.parts[t.dst].dev {
            local.push((t.src, t.dst, src_range, dst_range));
        } else {
            remote.push((t.src, t.dst, src_range, dst_range));
        }
    }
    for (src, dst, sr, dr) in local {
        let (s, d) = pair(&mut m.parts, src, dst);
        let stream = &m.devs[s.dev].comm_stream;
        stream.memcpy_dtod(&s.send_buf.buf.slice(sr), &mut d.ghost_x.buf.slice_mut(dr))?;
    }
    if remote.is_empty() {
        return Ok(());
    }
    cudarc::nccl::group_start().map_err(|e| nccl_err("ncclGroupStart", e))?;
    let mut result = Ok(());
    for (src, dst, sr, dr) in remote {
        let (rs, rd) = (m.parts[src].dev, m.parts[dst].dev);
        let (s, d) = pair(&mut m.parts, src, dst);
        let sent = m.comms[rs].send(&s.send_buf.buf.slice(sr), rd as i32);
        if let Err(e) = sent {
            result = Err(nccl_err("ncclSend", e));
            break;
        }
        let received = m.comms[rd].recv(&mut d.ghost_x.buf.slice_mut(dr), rs as i32);
        if let Err(e) = received {
            result = Err(nccl_err("ncclRecv", e));
            break;
        }
    }
    // The group is closed even after an error, so NCCL is left usable.
    let ended = cudarc::nccl::group_end().map_err(|e| nccl_err("ncclGroupEnd", e));
    result.and(ended.map(|_| ()))
}

/// Makes every part's stream wait for its device's exchange.
pub(super) fn wait_for_exchange(m: &DistributedMatrix) -> Result<(), GpuError> {
    let events = m
        .devs
        .iter()
        .map(|d| d.comm_stream.record_event(None))
        .collect::<Result<Vec<_>, _>>()?;
    for p in &m.parts {
        p.stream.wait(&events[p.dev])?;
    }
    Ok(())
}

/// `(&parts[a], &mut parts[b])` for `a != b`.
fn pair<T>(parts: &mut [T], a: usize, b: usize) -> (&T, &mut T) {
    assert_ne!(a, b, "a part never sends to itself");
    if a < b {
        let (lo, hi) = parts.split_at_mut(b);
        (&lo[a], &mut hi[0])
    } else {
        let (lo, hi) = parts.split_at_mut(a);
        (&hi[0], &mut lo[b])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_borrows_two_parts() {
        let mut v = vec![1, 2, 3];
        let (a, b) = pair(&mut v, 2, 0);
        *b += *a;
        assert_eq!(v, [4, 2, 3]);
        let (a, b) = pair(&mut v, 0, 1);
        *b += *a;
        assert_eq!(v, [4, 6, 3]);
    }
}
