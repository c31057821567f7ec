//! Memory primitives the tables share: software prefetch and transparent huge pages.
//!
//! Overview: a lookup in a table of gigabytes is a chain of cache misses, and each miss on 4 KiB
//! pages is also a TLB miss. Two things help, and both live here so the unsafe code is in one
//! place: [`prefetch`] asks for a cache line ahead of its use, so a batch of lookups keeps many
//! misses in flight at once; [`advise_huge_pages`] asks the kernel to back a large array with
//! 2 MiB pages (`madvise(MADV_HUGEPAGE)`: this machine's THP mode is `madvise`, so nothing is
//! huge unless asked for).

#![allow(unsafe_code)]

/// Arrays smaller than this are left on normal pages (a huge page would be mostly empty).
pub const HUGE_PAGE: usize = 2 << 20;

/// Hints the CPU to bring the cache line holding `*ptr` into L1. Never faults, whatever `ptr`.
#[inline(always)]
pub fn prefetch<T>(ptr: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: PREFETCHT0 is a hint: it reads no memory architecturally and cannot fault, even
        // for an invalid address; SSE is part of the x86_64 baseline.
        unsafe { core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(ptr.cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ptr;
}

/// Asks the kernel to back the whole 2 MiB pages inside `slice` with transparent huge pages.
/// Returns whether the advice was given (false for small slices or if the kernel refused).
pub fn advise_huge_pages<T>(slice: &[T]) -> bool {
    advise_range(slice.as_ptr() as usize, core::mem::size_of_val(slice))
}

/// Asks the kernel to back the whole 2 MiB pages of `bytes` bytes from address `start` with
/// transparent huge pages; the range must lie in memory this process owns (an allocation or a
/// mapping of its own). Returns whether the advice was given.
pub(crate) fn advise_range(start: usize, bytes: usize) -> bool {
    let end = start + bytes;
    let aligned_start = start.next_multiple_of(HUGE_PAGE);
    let aligned_end = end / HUGE_PAGE * HUGE_PAGE;
    if aligned_end <= aligned_start {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: the range lies inside memory this process owns (a slice, a vector's buffer or
        // a mapping, as the callers pass; rounded inwards to whole huge pages), and madvise with
        // MADV_HUGEPAGE changes only how the kernel backs it, never its contents or validity.
        let rc = unsafe { libc::madvise(aligned_start as *mut libc::c_void, aligned_end - aligned_start, libc::MADV_HUGEPAGE) };
        rc == 0
    }
    #[cfg(not(target_os = "linux"))]
    false
}

/// [`advise_huge_pages`] over a vector's whole allocation, spare capacity included: call it
/// right after reserving and before filling, so the pages are huge from their first touch.
pub fn advise_huge_pages_for<T>(v: &mut Vec<T>) -> bool {
    let len = v.len();
    let spare = v.spare_capacity_mut();
    let start = spare.as_ptr().cast::<T>().wrapping_sub(len);
    let bytes = (len + spare.len()) * core::mem::size_of::<T>();
    advise_range(start as usize, bytes)
}

/// `items` collected into a vector of exactly their number, on huge pages when it is large
/// enough (for a structure built by pushing, whose buffer moved as it grew and lost them).
pub fn huge_collect<T>(items: impl ExactSizeIterator<Item = T>) -> Vec<T> {
    let mut v = Vec::with_capacity(items.len());
    advise_huge_pages_for(&mut v);
    v.extend(items);
    v
}

/// A vector of `len` copies of `value`, on huge pages when it is large enough.
pub fn huge_vec<T: Clone>(len: usize, value: T) -> Vec<T> {
    let mut v = Vec::with_capacity(len);
    advise_huge_pages_for(&mut v);
    v.resize(len, value);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_of_any_address_is_harmless() {
        let x = 5u64;
        prefetch(&x);
        prefetch(core::ptr::null::<u64>());
        prefetch(usize::MAX as *const u64);
    }

    #[test]
    fn small_slices_are_left_alone() {
        assert!(!advise_huge_pages(&[0u8; 4096]));
    }

    #[test]
    fn large_slices_get_advice() {
        let v = vec![0u64; 3 * HUGE_PAGE / 8];
        assert!(advise_huge_pages(&v));
        let mut w: Vec<u64> = Vec::with_capacity(3 * HUGE_PAGE / 8);
        assert!(advise_huge_pages_for(&mut w));
    }
}
