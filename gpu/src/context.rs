//! [`GpuContext`]: one CUDA context, its stream, and the compiled kernels.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};

use crate::kernels::{self, KernelId};
use crate::GpuError;

/// A CUDA device opened for SpMV: context, one stream (every launch, copy and
/// cuSPARSE call of this crate goes to it, in order), and the NVRTC-compiled
/// kernel modules, compiled once per context for the device's compute
/// capability and cached per [`KernelId`] and offset width.
pub struct GpuContext {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    name: String,
    driver_version: i32,
    compute_capability: (i32, i32),
    sm_count: u32,
    modules: Mutex<HashMap<(KernelId, bool), Arc<CudaModule>>>,
    functions: Mutex<HashMap<(String, bool), CudaFunction>>,
}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("device", &self.name)
            .field("ordinal", &self.ctx.ordinal())
            .field("compute_capability", &self.compute_capability)
            .field("sm_count", &self.sm_count)
            .finish_non_exhaustive()
    }
}

/// Whether the CUDA driver library can be loaded (probing only; never panics).
#[must_use]
pub fn driver_available() -> bool {
    // SAFETY: only tries to open the library; no symbol is called.
    std::panic::catch_unwind(|| unsafe { cudarc::driver::sys::is_culib_present() }).unwrap_or(false)
}

/// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, as `nvidia-smi -L` prints a
/// device's UUID.
fn uuid_text(u: &cudarc::driver::sys::CUuuid) -> String {
    let b: Vec<u8> = u.bytes.iter().map(|&c| c as u8).collect();
    let hex =
        |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )
}

/// Name and UUID of device `ordinal` without opening a context (cheaper
/// than [`GpuContext::new`]); `None` without a driver or such a device.
#[must_use]
pub fn probe_device(ordinal: usize) -> Option<sparsetool_analyze::profile::DeviceInfo> {
    use cudarc::driver::result;
    if !driver_available() {
        return None;
    }
    std::panic::catch_unwind(|| {
        result::init().ok()?;
        let dev = result::device::get(i32::try_from(ordinal).ok()?).ok()?;
        let name = result::device::get_name(dev).ok()?;
        let uuid = result::device::get_uuid(dev).ok().map(|u| uuid_text(&u));
        Some(sparsetool_analyze::profile::DeviceInfo { name, uuid })
    })
    .ok()
    .flatten()
}

impl GpuContext {
    /// Name and UUID of this device (what a device profile is matched by).
    #[must_use]
    pub fn device_info(&self) -> sparsetool_analyze::profile::DeviceInfo {
        sparsetool_analyze::profile::DeviceInfo {
            name: self.name.clone(),
            uuid: self.ctx.uuid().ok().map(|u| uuid_text(&u)),
        }
    }

    /// Opens device `ordinal`.
    ///
    /// # Errors
    /// [`GpuError::NoDevice`] with a plain sentence when the driver library is
    /// missing, the driver fails to initialise, or there is no such device.
    /// Never panics, even without libcuda (the dynamic loader's panic is
    /// caught).
    pub fn new(ordinal: usize) -> Result<Self, GpuError> {
        if !driver_available() {
            return Err(GpuError::NoDevice(
                "the CUDA driver library (libcuda) could not be loaded; is an NVIDIA driver installed?"
                    .to_string(),
            ));
        }
        let ctx = match std::panic::catch_unwind(|| CudaContext::new(ordinal)) {
            Ok(Ok(ctx)) => ctx,
            Ok(Err(e)) => {
                let count = std::panic::catch_unwind(CudaContext::device_count)
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or(0);
                return Err(GpuError::NoDevice(format!(
                    "could not open CUDA device {ordinal} ({count} device(s) visible): {e}"
                )));
            }
            Err(_) => {
                return Err(GpuError::NoDevice(
                    "the CUDA driver could not be initialised (a driver symbol is missing)"
                        .to_string(),
                ))
            }
        };
        let stream = ctx.default_stream();
        let name = ctx
            .name()
            .unwrap_or_else(|_| format!("CUDA device {ordinal}"));
        let compute_capability = ctx.compute_capability()?;
        let sm_count = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_or(1, |v| v.max(1) as u32);
        let mut driver_version = 0i32;
        // SAFETY: writes one int; the driver is initialised by CudaContext::new.
        let _ = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver_version) };
        Ok(Self {
            ctx,
            stream,
            name,
            driver_version,
            compute_capability,
            sm_count,
            modules: Mutex::new(HashMap::new()),
            functions: Mutex::new(HashMap::new()),
        })
    }

    /// Device name, e.g. `NVIDIA H100 80GB HBM3`.
    #[must_use]
    pub fn device_name(&self) -> &str {
        &self.name
    }

    /// Driver version as text, e.g. `CUDA driver 13.0`.
    #[must_use]
    pub fn driver(&self) -> String {
        format!(
            "CUDA driver {}.{}",
            self.driver_version / 1000,
            (self.driver_version % 1000) / 10
        )
    }

    /// Compute capability `(major, minor)`.
    #[must_use]
    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// Number of streaming multiprocessors.
    #[must_use]
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// NVRTC virtual architecture for this device, e.g. `compute_90`.
    #[must_use]
    pub fn arch(&self) -> String {
        format!(
            "compute_{}{}",
            self.compute_capability.0, self.compute_capability.1
        )
    }

    /// The underlying cudarc context.
    #[must_use]
    pub fn cuda(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream every operation of this crate uses.
    #[must_use]
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Compiles and loads every kernel module (32-bit offsets) now
    /// (otherwise each is compiled on first use), so that compilation stays
    /// out of any timing.
    ///
    /// # Errors
    /// The first compile or load error.
    pub fn load_all(&self) -> Result<(), GpuError> {
        self.load_all_width(false)
    }

    /// As [`GpuContext::load_all`], for the 32-bit (`wide == false`) or the
    /// 64-bit offset modules.
    ///
    /// # Errors
    /// The first compile or load error.
    pub fn load_all_width(&self, wide: bool) -> Result<(), GpuError> {
        for id in KernelId::ALL {
            self.module(id, wide)?;
        }
        Ok(())
    }

    fn module(&self, id: KernelId, wide: bool) -> Result<Arc<CudaModule>, GpuError> {
        let mut modules = self
            .modules
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(m) = modules.get(&(id, wide)) {
            return Ok(m.clone());
        }
        let ptx = kernels::compile(id, &self.arch(), wide)?;
        let m = self.ctx.load_module(ptx)?;
        modules.insert((id, wide), m.clone());
        Ok(m)
    }

    /// The kernel `name` of module `id` with 32-bit offsets (compiled and
    /// loaded on first use).
    ///
    /// # Errors
    /// Compile or load errors, [`GpuError::MissingKernel`] for an unknown name.
    pub(crate) fn function(&self, id: KernelId, name: &str) -> Result<CudaFunction, GpuError> {
        self.function_width(id, name, false)
    }

    /// The kernel `name` of module `id`, from the module with 64-bit offsets
    /// when `wide`.
    ///
    /// # Errors
    /// As [`GpuContext::function`].
    pub(crate) fn function_width(
        &self,
        id: KernelId,
        name: &str,
        wide: bool,
    ) -> Result<CudaFunction, GpuError> {
        let key = (name.to_string(), wide);
        {
            let f = self
                .functions
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(func) = f.get(&key) {
                return Ok(func.clone());
            }
        }
        let m = self.module(id, wide)?;
        let func = m
            .load_function(name)
            .map_err(|_| GpuError::MissingKernel(name.to_string()))?;
        self.functions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, func.clone());
        Ok(func)
    }

    /// Waits for the stream and reports any asynchronous error.
    ///
    /// # Errors
    /// The driver error of a failed launch or copy.
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.stream.synchronize()?;
        self.ctx.check_err()?;
        Ok(())
    }
}
