//! Registry of the CUDA kernel sources (`gpu/kernels/*.cu`) and their names.
//!
//! Each source file is one NVRTC module, identified by a [`KernelId`]. The
//! shared header `common.cuh` is prepended to every source before compilation
//! because NVRTC does not see the crate's folders at run time. Kernel symbols
//! are `spmv_<format>_<f32|f64|c64|c128>[_<variant>]`, built by
//! [`kernel_name`]. Each module is compiled in two widths of its offsets
//! ([`Offsets`]): 32-bit, and 64-bit (`-DSPMV_OFFSET64`) for matrices whose
//! entries do not fit 32-bit offsets; the 64-bit module is compiled only
//! when such a matrix is uploaded.

use cudarc::nvrtc::{CompileOptions, Ptx};
use sparsetool_formats::{Precision, Scalar};

use crate::GpuError;

/// Shared device helpers, prepended to every kernel source.
pub const COMMON_SRC: &str = include_str!("../kernels/common.cuh");
const COO_SRC: &str = include_str!("../kernels/coo.cu");
const CSR_SCALAR_SRC: &str = include_str!("../kernels/csr_scalar.cu");
const CSR_VECTOR_SRC: &str = include_str!("../kernels/csr_vector.cu");
const CSR_BALANCED_SRC: &str = include_str!("../kernels/csr_balanced.cu");
const CSR_MERGE_SRC: &str = include_str!("../kernels/csr_merge.cu");
const ELL_SRC: &str = include_str!("../kernels/ell.cu");
const JDS_SRC: &str = include_str!("../kernels/jds.cu");
const SELL_SRC: &str = include_str!("../kernels/sell.cu");
const UTIL_SRC: &str = include_str!("../kernels/util.cu");
const DIST_SRC: &str = include_str!("../kernels/dist.cu");

/// One kernel source file, compiled as one module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelId {
    /// `coo.cu`: atomic and row-segmented COO (also the HYB tail).
    Coo,
    /// `csr_scalar.cu`: one thread per row.
    CsrScalar,
    /// `csr_vector.cu`: a sub-warp of 2..32 lanes per row.
    CsrVector,
    /// `csr_balanced.cu`: equal nnz chunks per warp (skewed rows).
    CsrBalanced,
    /// `csr_merge.cu`: merge path, equal chunks of rows plus entries per
    /// warp, tiles staged in shared memory (skewed rows).
    CsrMerge,
    /// `ell.cu`: one, two or four threads per row, slot-major (also the HYB
    /// ELL part).
    Ell,
    /// `jds.cu`: one thread per sorted row along the jagged diagonals.
    Jds,
    /// `sell.cu`: C threads per slice of SELL-C-sigma.
    Sell,
    /// `util.cu`: the benchmark's delay and L2-reset kernels and the x-gather floor.
    Util,
    /// `dist.cu`: the send-buffer gather of the multi-GPU exchange.
    Dist,
}

impl KernelId {
    /// Every kernel source.
    pub const ALL: [KernelId; 10] = [
        KernelId::Coo,
        KernelId::CsrScalar,
        KernelId::CsrVector,
        KernelId::CsrBalanced,
        KernelId::CsrMerge,
        KernelId::Ell,
        KernelId::Jds,
        KernelId::Sell,
        KernelId::Util,
        KernelId::Dist,
    ];

    /// File name under `gpu/kernels/`.
    #[must_use]
    pub fn file(self) -> &'static str {
        match self {
            KernelId::Coo => "coo.cu",
            KernelId::CsrScalar => "csr_scalar.cu",
            KernelId::CsrVector => "csr_vector.cu",
            KernelId::CsrBalanced => "csr_balanced.cu",
            KernelId::CsrMerge => "csr_merge.cu",
            KernelId::Ell => "ell.cu",
            KernelId::Jds => "jds.cu",
            KernelId::Sell => "sell.cu",
            KernelId::Util => "util.cu",
            KernelId::Dist => "dist.cu",
        }
    }

    /// The kernel source without the shared header.
    #[must_use]
    pub fn source(self) -> &'static str {
        match self {
            KernelId::Coo => COO_SRC,
            KernelId::CsrScalar => CSR_SCALAR_SRC,
            KernelId::CsrVector => CSR_VECTOR_SRC,
            KernelId::CsrBalanced => CSR_BALANCED_SRC,
            KernelId::CsrMerge => CSR_MERGE_SRC,
            KernelId::Ell => ELL_SRC,
            KernelId::Jds => JDS_SRC,
            KernelId::Sell => SELL_SRC,
            KernelId::Util => UTIL_SRC,
            KernelId::Dist => DIST_SRC,
        }
    }

    /// The full translation unit handed to NVRTC: `common.cuh` + the source.
    ///
    /// For kernel development without rebuilding, `SPARSETOOL_KERNEL_DIR`
    /// names a folder whose `common.cuh` and `<kernel>.cu` replace the
    /// embedded copies (files missing there keep the embedded source).
    #[must_use]
    pub fn full_source(self) -> String {
        let over = |name: &str| -> Option<String> {
            let dir = std::env::var_os("SPARSETOOL_KERNEL_DIR")?;
            std::fs::read_to_string(std::path::Path::new(&dir).join(name)).ok()
        };
        let common = over("common.cuh").unwrap_or_else(|| COMMON_SRC.to_string());
        let source = over(self.file()).unwrap_or_else(|| self.source().to_string());
        let mut s = String::with_capacity(common.len() + source.len() + 64);
        s.push_str(&common);
        s.push_str("\n#line 1 \"");
        s.push_str(self.file());
        s.push_str("\"\n");
        s.push_str(&source);
        s
    }
}

/// The value type a kernel runs: `f32`, `f64`, `c64` (complex64) or `c128`
/// (complex128), the suffix of its symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ValueType {
    /// Precision of the parts.
    pub precision: Precision,
    /// Complex values (two parts).
    pub complex: bool,
}

impl ValueType {
    /// The value type of `T`.
    #[must_use]
    pub fn of<T: Scalar>() -> Self {
        Self {
            precision: Precision::of::<T>(),
            complex: T::IS_COMPLEX,
        }
    }

    /// `f32`, `f64`, `c64` or `c128` (as [`Scalar::NAME`]).
    #[must_use]
    pub fn name(self) -> &'static str {
        match (self.precision, self.complex) {
            (Precision::F32, false) => "f32",
            (Precision::F64, false) => "f64",
            (Precision::F32, true) => "c64",
            (Precision::F64, true) => "c128",
        }
    }

    /// Bytes of one value: 4, 8, 8 or 16.
    #[must_use]
    pub fn size(self) -> usize {
        self.precision.size() * if self.complex { 2 } else { 1 }
    }
}

/// Width of the offset arrays on the device (CSR row pointers, JDS
/// diagonal pointers, SELL slice pointers, and cuSPARSE's index type):
/// 32-bit unless a matrix's entries or padded slots exceed `i32::MAX`
/// ([`Offsets::Auto`]), or 64-bit on request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Offsets {
    /// 32-bit where the matrix fits (faster: half the pointer traffic),
    /// else 64-bit.
    #[default]
    Auto,
    /// 64-bit always (to test or time the wide path on any matrix).
    Wide,
}

impl Offsets {
    /// Whether a matrix whose largest offset is `max_offset` gets 64-bit
    /// offsets.
    #[must_use]
    pub fn wide_for(self, max_offset: u64) -> bool {
        self == Offsets::Wide || max_offset > i32::MAX as u64
    }
}

/// Kernel symbol for a base name, a value type and an optional variant:
/// `kernel_name("spmv_ell", f32, None)` is `spmv_ell_f32`,
/// `kernel_name("spmv_csr_vector", c128, Some("l8"))` is
/// `spmv_csr_vector_c128_l8`.
#[must_use]
pub fn kernel_name(base: &str, dtype: ValueType, variant: Option<&str>) -> String {
    match variant {
        Some(v) => format!("{base}_{}_{v}", dtype.name()),
        None => format!("{base}_{}", dtype.name()),
    }
}

/// NVRTC options for a virtual architecture such as `compute_90`, with
/// 64-bit offsets (`-DSPMV_OFFSET64`) when `wide`.
#[must_use]
pub fn compile_options(arch: &str, wide: bool) -> CompileOptions {
    let mut options = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
        "-lineinfo".to_string(),
    ];
    if wide {
        options.push("-DSPMV_OFFSET64".to_string());
    }
    CompileOptions {
        options,
        name: None,
        ..Default::default()
    }
}

/// Whether `libnvrtc` can be loaded on this machine.
#[must_use]
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to open the library; no symbol is called.
    std::panic::catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() }).unwrap_or(false)
}

/// Environment variable naming a directory where compiled PTX is kept
/// between processes (keyed by a hash of the source, options and
/// architecture), so that many short `sparsetool bench` runs compile each
/// kernel once. Unset: no cache.
pub const PTX_CACHE_ENV: &str = "SPARSETOOL_PTX_CACHE";

fn cache_path(id: KernelId, arch: &str, wide: bool, src: &str) -> Option<std::path::PathBuf> {
    use std::hash::{Hash, Hasher};
    let dir = std::env::var_os(PTX_CACHE_ENV)?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    src.hash(&mut h);
    compile_options(arch, wide).options.hash(&mut h);
    let stem = id.file().trim_end_matches(".cu");
    Some(std::path::Path::new(&dir).join(format!("{stem}-{arch}-{:016x}.ptx", h.finish())))
}

/// Compiles one kernel source to PTX for `arch` (e.g. `compute_90`), with
/// 64-bit offsets when `wide`, or reads it from the [`PTX_CACHE_ENV`]
/// directory.
///
/// # Errors
/// [`GpuError::Compile`] with the NVRTC log, or when libnvrtc is missing.
pub fn compile(id: KernelId, arch: &str, wide: bool) -> Result<Ptx, GpuError> {
    let src = id.full_source();
    let cached = cache_path(id, arch, wide, &src);
    if let Some(text) = cached
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
    {
        return Ok(Ptx::from_src(text));
    }
    let ptx = compile_src(id, src, arch, wide)?;
    if let Some(p) = cached {
        // A cache that cannot be written only costs a recompile next time;
        // write beside and rename so a concurrent reader never sees half a file.
        let tmp = p.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::create_dir_all(p.parent().unwrap_or(&p)).is_ok()
            && std::fs::write(&tmp, ptx.to_src()).is_ok()
        {
            let _ = std::fs::rename(&tmp, &p);
        }
    }
    Ok(ptx)
}

fn compile_src(id: KernelId, src: String, arch: &str, wide: bool) -> Result<Ptx, GpuError> {
    if !nvrtc_available() {
        return Err(GpuError::Compile {
            kernel: id.file(),
            log: "libnvrtc could not be loaded".to_string(),
        });
    }
    let opts = compile_options(arch, wide);
    match std::panic::catch_unwind(move || cudarc::nvrtc::compile_ptx_with_opts(src, opts)) {
        Ok(Ok(ptx)) => Ok(ptx),
        Ok(Err(e)) => Err(GpuError::Compile {
            kernel: id.file(),
            log: compile_log(&e),
        }),
        Err(_) => Err(GpuError::Compile {
            kernel: id.file(),
            log: "NVRTC panicked (missing symbol in libnvrtc?)".to_string(),
        }),
    }
}

fn compile_log(e: &cudarc::nvrtc::CompileError) -> String {
    match e {
        cudarc::nvrtc::CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `#define`s the host plans with: `SEG_SPAN` (common.cuh) and
    /// `JDS_STAGED` (jds.cu, the diagonal starts the batched main kernels
    /// stage and every main kernel walks at most, which must hold every cap
    /// `long_row_cap` gives).
    #[test]
    fn kernel_constants_match_the_plan() {
        let define = |src: &str, name: &str| -> usize {
            let line = src
                .lines()
                .find(|l| l.starts_with(&format!("#define {name} ")))
                .unwrap_or_else(|| panic!("no #define {name}"));
            line.rsplit(' ')
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap()
        };
        assert_eq!(define(COMMON_SRC, "SEG_SPAN"), crate::plan::SEG_SPAN);
        assert_eq!(define(JDS_SRC, "JDS_STAGED"), crate::plan::LONG_ROW_MIN);
        assert_eq!(define(COMMON_SRC, "BAND_ROWS"), crate::plan::BAND_ROWS);
    }

    #[test]
    fn names() {
        assert_eq!(
            kernel_name("spmv_ell", ValueType::of::<f32>(), None),
            "spmv_ell_f32"
        );
        assert_eq!(
            kernel_name("spmv_csr_vector", ValueType::of::<f64>(), Some("l8")),
            "spmv_csr_vector_f64_l8"
        );
        let c128 = ValueType::of::<sparsetool_formats::Complex64>();
        assert_eq!((c128.name(), c128.size()), ("c128", 16));
        let c64 = ValueType::of::<sparsetool_formats::Complex32>();
        assert_eq!((c64.name(), c64.size()), ("c64", 8));
        assert_eq!(
            kernel_name("spmv_jds", c64, Some("tail")),
            "spmv_jds_c64_tail"
        );
        assert!(!Offsets::Auto.wide_for(i32::MAX as u64));
        assert!(Offsets::Auto.wide_for(i32::MAX as u64 + 1));
        assert!(Offsets::Wide.wide_for(0));
    }

    #[test]
    fn every_source_has_its_kernels() {
        for id in KernelId::ALL {
            let src = id.full_source();
            assert!(
                src.contains("subwarp_sum"),
                "{} lacks common.cuh",
                id.file()
            );
            assert!(
                src.contains("SPMV_TYPES("),
                "{} is not instantiated for every value type",
                id.file()
            );
        }
    }

    /// Compiles every `.cu` with NVRTC. Needs only libnvrtc, not a device;
    /// skipped (loudly) where the library is missing.
    #[test]
    fn every_source_compiles_with_nvrtc() {
        if !nvrtc_available() {
            println!("SKIPPED: no libnvrtc");
            return;
        }
        // SPARSETOOL_PTX_DIR=dir writes the PTX for inspection (ptxas -v, SASS).
        let dump = std::env::var_os("SPARSETOOL_PTX_DIR").map(std::path::PathBuf::from);
        // Every symbol the launch code asks for, in both offset widths.
        let mut expected: Vec<String> = Vec::new();
        for t in ["f32", "f64", "c64", "c128"] {
            for base in [
                "spmv_coo",
                "spmv_csr_scalar",
                "spmv_csr_balanced",
                "spmv_csr_merge",
                "merge_fixup",
                "spmv_ell",
            ] {
                expected.push(format!("{base}_{t}"));
            }
            expected.push(format!("spmv_coo_{t}_segmented"));
            expected.push(format!("spmv_coo_{t}_segmented_merge"));
            expected.push(format!("spmv_csr_merge_{t}_acc"));
            for base in ["spmv_jds", "spmv_sell"] {
                expected.push(format!("{base}_{t}"));
                expected.push(format!("{base}_{t}_tail"));
            }
            for v in ["b4", "deep"] {
                expected.push(format!("spmv_ell_{t}_{v}"));
                expected.push(format!("spmv_sell_{t}_{v}"));
            }
            for v in ["u16", "deep", "u16_deep", "wide", "u16_wide", "tail_first"] {
                expected.push(format!("spmv_jds_{t}_{v}"));
            }
            expected.push(format!("spmv_sell_{t}_u16"));
            expected.push(format!("spmv_sell_{t}_u16_deep"));
            for l in crate::plan::CSR_VECTOR_LANES {
                expected.push(format!("spmv_csr_vector_{t}_l{l}"));
                expected.push(format!("spmv_csr_binned_{t}_l{l}"));
            }
            expected.push(format!("gather_floor_{t}"));
            expected.push(format!("gather_floor_{t}_x1"));
            expected.push(format!("dist_gather_{t}"));
        }
        expected.push("merge_partition".to_string());
        for wide in [false, true] {
            let mut all = String::new();
            for id in KernelId::ALL {
                match compile(id, "compute_90", wide) {
                    Ok(ptx) => {
                        all.push_str(&ptx.to_src());
                        if let Some(dir) = &dump {
                            let suffix = if wide { "-o64.ptx" } else { ".ptx" };
                            let path = dir.join(id.file().replace(".cu", suffix));
                            std::fs::write(&path, ptx.to_src()).expect("write PTX");
                        }
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            for name in &expected {
                assert!(
                    all.contains(&format!(".entry {name}(")),
                    "no kernel {name} (wide: {wide})"
                );
            }
        }
    }
}
