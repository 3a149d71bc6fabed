//! The binary's global allocator: the system allocator, with transparent
//! huge pages asked for on large blocks.
//!
//! A matrix of 10M entries lives in blocks of 40-160 MB, allocated fresh
//! (and faulted in 4 KiB at a time) by each phase. Where the kernel gives
//! huge pages only on request (`/sys/kernel/mm/transparent_hugepage/enabled`
//! set to `madvise`, the common default), `madvise(MADV_HUGEPAGE)` on each
//! such block cuts its page faults 512-fold. No crate does just this (the
//! allocator crates replace malloc altogether), so it is a dozen lines here.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks from this size up are advised.
const HUGE_MIN: usize = 8 << 20;

/// [`System`], advising large blocks to use huge pages.
#[derive(Debug)]
pub struct Allocator;

// SAFETY: every method forwards to `System` with the caller's arguments and
// returns its result; `advise` only changes how the kernel backs the pages
// of a block just returned, never its contents or extent.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        advise(p, new_size);
        p
    }
}

/// Asks for huge pages on the whole 2 MiB pages inside `[p, p + size)`.
#[cfg(target_os = "linux")]
fn advise(p: *mut u8, size: usize) {
    const HUGE: usize = 2 << 20;
    if p.is_null() || size < HUGE_MIN {
        return;
    }
    let start = (p as usize).next_multiple_of(HUGE);
    let end = (p as usize + size) & !(HUGE - 1);
    if end > start {
        // SAFETY: the range lies inside the block just allocated; the
        // advice changes no byte of it. A failure (no THP support) leaves
        // the block as it was, which is fine.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_: *mut u8, _: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Advised blocks behave as the system's: zeroed when asked, their
    /// contents kept across a reallocation.
    #[test]
    fn large_blocks_are_plain_memory() {
        let a = Allocator;
        let n = 3 * HUGE_MIN + 12_345;
        let layout = Layout::from_size_align(n, 8).expect("layout");
        // SAFETY: a non-zero size; every pointer is checked, used inside its
        // block and freed once with its layout.
        unsafe {
            let p = a.alloc_zeroed(layout);
            assert!(!p.is_null());
            let s = std::slice::from_raw_parts_mut(p, n);
            assert!(s.iter().all(|&b| b == 0));
            s.iter_mut()
                .enumerate()
                .for_each(|(i, b)| *b = (i % 251) as u8);
            let q = a.realloc(p, layout, 2 * n);
            assert!(!q.is_null());
            let s = std::slice::from_raw_parts(q, n);
            assert!(s.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
            a.dealloc(q, Layout::from_size_align(2 * n, 8).expect("layout"));
        }
    }
}
