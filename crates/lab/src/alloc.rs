//! Counting what a structure allocates: a global allocator that keeps a running total.
//!
//! Overview: `bytes_per_rule` in the experiments is "everything the structure allocates divided
//! by rules", so it is measured, not estimated: the `nexthop` binary installs [`Counting`] as its
//! global allocator, and an experiment reads [`live_bytes`] before and after building a
//! structure. Any program that does not install it reads 0 ([`is_counting`] says which).

#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

static LIVE: AtomicIsize = AtomicIsize::new(0);
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting live bytes.
#[derive(Debug)]
pub struct Counting;

// SAFETY: every method forwards to `System` with the same arguments, so `Counting` upholds the
// `GlobalAlloc` contract exactly as `System` does; the counter is only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ACTIVE.store(true, Ordering::Relaxed);
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `alloc_zeroed`'s contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged; `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `realloc`'s contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        }
        p
    }
}

/// Bytes currently allocated through [`Counting`].
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed).max(0) as usize
}

/// Whether [`Counting`] is this program's allocator.
pub fn is_counting() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}
