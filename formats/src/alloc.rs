//! Fallible allocation for sizes that come from input.
//!
//! A file (or a flag) can declare any size; `vec![0; n]` with such an `n`
//! panics (`capacity overflow`) or aborts the process (`memory allocation
//! failed`). Every buffer whose length comes from input is allocated
//! through this module instead: the size is computed with checked
//! arithmetic, the memory is reserved with [`Vec::try_reserve_exact`], and
//! a failure becomes an [`AllocError`] that says what was being sized and
//! how many bytes it needed. Callers add the file name.
//!
//! (No crate offers this for plain `Vec`s on stable Rust: `fallible_collections`
//! is unmaintained and wraps the same `try_reserve`; the allocator API is
//! nightly-only.)
//!
//! ```
//! use sparsetool_formats::alloc::{try_zeroed, AllocError};
//! let v: Vec<u32> = try_zeroed(4, "row lengths").unwrap();
//! assert_eq!(v, [0, 0, 0, 0]);
//! let e: AllocError = try_zeroed::<u64>(usize::MAX / 4, "row pointers").unwrap_err();
//! assert!(e.to_string().contains("row pointers"));
//! ```

use std::fmt;

/// A buffer sized from input could not be allocated (its size overflows
/// the address space or the allocator refused it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocError {
    /// What was being sized, e.g. `"row pointers of CSR (nrows + 1)"`.
    pub what: String,
    /// Elements requested.
    pub elements: u128,
    /// Bytes requested (may exceed `usize::MAX`).
    pub bytes: u128,
}

impl AllocError {
    /// The error for `elements` elements of `elem_size` bytes each.
    #[must_use]
    pub fn new(what: impl Into<String>, elements: u128, elem_size: usize) -> Self {
        Self {
            what: what.into(),
            elements,
            bytes: elements.saturating_mul(elem_size as u128),
        }
    }
}

/// `bytes` in binary units with three significant digits, e.g. `16.0 GiB`.
#[must_use]
pub fn human_bytes(bytes: u128) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot allocate {} ({} bytes) for {}",
            human_bytes(self.bytes),
            self.bytes,
            self.what
        )?;
        if self.elements != self.bytes {
            write!(f, ", {} elements", self.elements)?;
        }
        f.write_str(": more memory than this machine or process can give")
    }
}

impl std::error::Error for AllocError {}

/// An empty vector with room for exactly `n` elements.
///
/// # Errors
/// [`AllocError`] if `n` elements do not fit the address space or the
/// allocator refuses them.
pub fn try_with_capacity<T>(n: usize, what: &str) -> Result<Vec<T>, AllocError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| AllocError::new(what, n as u128, std::mem::size_of::<T>()))?;
    Ok(v)
}

/// A vector of `n` copies of `value`.
///
/// # Errors
/// As [`try_with_capacity`].
pub fn try_filled<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>, AllocError> {
    let mut v = try_with_capacity(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// A vector of `n` zeros (calloc'd for primitive types: pages are touched
/// only when written).
///
/// # Errors
/// As [`try_with_capacity`].
pub fn try_zeroed<T: bytemuck::Zeroable + Clone>(
    n: usize,
    what: &str,
) -> Result<Vec<T>, AllocError> {
    let err = || AllocError::new(what, n as u128, std::mem::size_of::<T>());
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Ok(bytemuck::zeroed_vec(n));
    }
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| err())?;
    // SAFETY: `layout` has a non-zero size (checked above). A non-null
    // result is a zeroed block of `n` `T`s from the global allocator with
    // `T`'s alignment, which is what `Vec::from_raw_parts` requires; all-zero
    // bytes are a valid `T` (`Zeroable`). (`bytemuck::zeroed_vec` does the
    // same but aborts on a null result.)
    unsafe {
        let p = std::alloc::alloc_zeroed(layout).cast::<T>();
        if p.is_null() {
            return Err(err());
        }
        Ok(Vec::from_raw_parts(p, n, n))
    }
}

/// Appends `extra` zeros to `v` (amortised growth, like `Vec::resize`).
///
/// # Errors
/// As [`try_with_capacity`], for the new total length.
pub fn try_grow<T: bytemuck::Zeroable + Clone>(
    v: &mut Vec<T>,
    extra: usize,
    what: &str,
) -> Result<(), AllocError> {
    let total = v.len() as u128 + extra as u128;
    v.try_reserve(extra)
        .map_err(|_| AllocError::new(what, total, std::mem::size_of::<T>()))?;
    v.resize(v.len() + extra, T::zeroed());
    Ok(())
}

/// `a * b` for a size, or an [`AllocError`] naming `what` when the product
/// overflows `usize`.
///
/// # Errors
/// [`AllocError`] on overflow (with the exact product in the message).
pub fn checked_elems(
    a: usize,
    b: usize,
    what: &str,
    elem_size: usize,
) -> Result<usize, AllocError> {
    a.checked_mul(b)
        .ok_or_else(|| AllocError::new(what, a as u128 * b as u128, elem_size))
}

/// Memory this process can still get without the kernel's out-of-memory
/// killer stepping in, in bytes (Linux: `MemAvailable` plus free swap from
/// `/proc/meminfo`), or `None` where unknown.
#[must_use]
pub fn available_memory() -> Option<u128> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |key: &str| -> Option<u128> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        let kb: u128 = line[key.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kb * 1024)
    };
    Some(field("MemAvailable:")? + field("SwapFree:").unwrap_or(0))
}

/// Checks, before work that will allocate about `bytes` bytes in total
/// (for `what`), that it can: the size fits the address space, it does not
/// exceed 90 % of the memory available now ([`available_memory`]: beyond it the
/// kernel's out-of-memory killer, not an error, would end the work, since
/// Linux grants large allocations it cannot back), and the allocator grants
/// it (a process memory limit such as `ulimit -v` shows here). Nothing
/// stays allocated.
///
/// # Errors
/// [`AllocError`] naming `what` and the bytes.
pub fn ensure_available(bytes: u128, what: &str) -> Result<(), AllocError> {
    let err = || AllocError::new(what, bytes, 1);
    if bytes > isize::MAX as u128 {
        return Err(err());
    }
    // A margin of a tenth: the estimate is of the work's main buffers,
    // and `MemAvailable` counts page cache the kernel may not free in time.
    if available_memory().is_some_and(|m| bytes > m / 10 * 9) {
        return Err(err());
    }
    // Reserving (not touching) the block probes the allocator and any
    // address-space limit without using memory.
    drop(try_with_capacity::<u8>(bytes as usize, what)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_impossible_sizes_without_aborting() {
        let e = try_zeroed::<f64>(usize::MAX / 2, "x").unwrap_err();
        assert_eq!(e.elements, (usize::MAX / 2) as u128);
        assert!(e.to_string().contains("for x"), "{e}");
        assert!(try_with_capacity::<u8>(usize::MAX, "y").is_err());
        assert!(try_filled(isize::MAX as usize, 0u16, "z").is_err());
        let mut v = vec![1u32];
        assert!(try_grow(&mut v, usize::MAX - 1, "w").is_err());
        try_grow(&mut v, 2, "w").unwrap();
        assert_eq!(v, [1, 0, 0]);
        assert!(checked_elems(usize::MAX, 2, "e", 8).is_err());
        assert_eq!(checked_elems(3, 4, "e", 8).unwrap(), 12);
    }

    #[test]
    fn availability() {
        ensure_available(1 << 20, "small").unwrap();
        let e = ensure_available(1 << 70, "huge").unwrap_err();
        assert_eq!(e.bytes, 1 << 70);
        if let Some(m) = available_memory() {
            assert!(m > 1 << 20);
            assert!(ensure_available(m + 1, "more than the machine").is_err());
        }
    }

    #[test]
    fn human_units() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(16 << 30), "16.0 GiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }
}
