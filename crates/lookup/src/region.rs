//! A byte buffer that grows in place: its bytes never move, so huge pages stay huge.
//!
//! Overview: a [`Region`] reserves address space for its largest size up front (a `PROT_NONE`
//! mapping, which costs no memory and counts against no commit limit) and makes it readable and
//! writable from the start as it grows (`mprotect`), an eighth at a time, as a vector reserves.
//! Unlike a vector it never reallocates, so:
//! - a structure of gigabytes grows without a copy or a move of its pages;
//! - its 2 MiB pages stay whole. The reservation is 2 MiB-aligned and advised for transparent
//!   huge pages (`MADV_HUGEPAGE`; this machine's THP mode is `madvise`) past its first 2 MiB,
//!   so a small region stays on 4 KiB pages. A vector grown by `realloc` is moved by `mremap`,
//!   and the kernel splits a huge page whose new address is not aligned as the old one was.
//!
//! The bytes past [`Region::len`] are zero until written (fresh anonymous memory), so growing
//! writes nothing. The address space is mapped on the first growth, so an empty region costs a
//! struct. [`Region::committed`] is what the region may hold in memory: the readable part.

#![allow(unsafe_code)]

use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;

use crate::mem::HUGE_PAGE;

/// The smallest step by which the readable part grows.
const MIN_GROWTH: usize = 64 << 10;
/// The page size of the readable part's steps.
const PAGE: usize = 4 << 10;

/// Growth past the region's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a region of at most {limit} bytes cannot grow to {wanted}")]
pub struct RegionFull {
    /// The region's limit.
    pub limit: usize,
    /// The length asked for.
    pub wanted: usize,
}

/// A growable byte buffer whose bytes never move (see the module overview).
pub struct Region {
    /// The mapping as returned by `mmap` (`None` before the first growth), and its length.
    mapping: Option<(NonNull<u8>, usize)>,
    /// The first byte: the mapping's first 2 MiB boundary.
    base: NonNull<u8>,
    len: usize,
    /// Bytes from `base` that are readable and writable.
    committed: usize,
    limit: usize,
    huge_pages: bool,
}

// SAFETY: a Region owns its mapping as a Vec<u8> owns its buffer; nothing else points into it,
// and `&Region` gives only shared reads.
unsafe impl Send for Region {}
// SAFETY: as above: shared references allow reads alone.
unsafe impl Sync for Region {}

impl Region {
    /// An empty region that can grow to `limit` bytes; `huge_pages` asks for 2 MiB pages.
    pub fn new(limit: usize, huge_pages: bool) -> Region {
        Region { mapping: None, base: NonNull::dangling(), len: 0, committed: 0, limit, huge_pages }
    }

    /// Bytes in use.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no bytes are in use.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes readable and writable: the most the region holds in memory.
    pub fn committed(&self) -> usize {
        self.committed
    }

    /// The longest the region may grow.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Adds `n` zero bytes at the end, at the same address as ever. Panics only if the system
    /// refuses the address space or the memory (as a vector panics when out of memory).
    pub fn extend_zeroed(&mut self, n: usize) -> Result<(), RegionFull> {
        let wanted = self.len.checked_add(n).filter(|&w| w <= self.limit);
        let wanted = wanted.ok_or(RegionFull { limit: self.limit, wanted: self.len.saturating_add(n) })?;
        if wanted > self.committed {
            let step = (self.committed / 8).max(MIN_GROWTH);
            self.commit(wanted.max(self.committed + step).next_multiple_of(PAGE).min(self.reserved()));
        }
        self.len = wanted;
        Ok(())
    }

    /// Gives back the memory past the bytes in use (whole pages).
    pub fn shrink_to_fit(&mut self) {
        let keep = self.len.next_multiple_of(PAGE);
        if keep >= self.committed {
            return;
        }
        // SAFETY: [keep, committed) lies inside the mapping and holds no byte in use (all are
        // below len ≤ keep); making it inaccessible again and dropping its pages leaves it as
        // the rest of the reservation: zero when next committed.
        let ok = unsafe {
            let at = self.base.as_ptr().add(keep).cast::<libc::c_void>();
            libc::madvise(at, self.committed - keep, libc::MADV_DONTNEED) == 0
                && libc::mprotect(at, self.committed - keep, libc::PROT_NONE) == 0
        };
        if ok {
            self.committed = keep;
        }
    }

    /// Address space reserved past `base`: the limit rounded up to a whole huge page.
    fn reserved(&self) -> usize {
        self.limit.next_multiple_of(HUGE_PAGE)
    }

    /// Makes the first `target` bytes readable and writable, mapping the reservation first.
    fn commit(&mut self, target: usize) {
        if self.mapping.is_none() {
            self.map();
        }
        // SAFETY: [committed, target) lies inside the reservation (target ≤ reserved), which
        // this region owns; making it readable and writable gives zero pages on first touch.
        let rc = unsafe {
            let at = self.base.as_ptr().add(self.committed).cast::<libc::c_void>();
            libc::mprotect(at, target - self.committed, libc::PROT_READ | libc::PROT_WRITE)
        };
        assert!(rc == 0, "out of memory: a region could not grow to {target} bytes ({})", std::io::Error::last_os_error());
        self.committed = target;
    }

    /// Reserves the address space: the limit, plus a huge page to align the base to one.
    fn map(&mut self) {
        let bytes = self.reserved() + HUGE_PAGE;
        // SAFETY: an anonymous private mapping at an address the kernel chooses touches no
        // existing memory; PROT_NONE reserves address space without memory or commit charge.
        let at = unsafe {
            libc::mmap(core::ptr::null_mut(), bytes, libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1, 0)
        };
        assert!(at != libc::MAP_FAILED, "cannot reserve {bytes} bytes of address space ({})", std::io::Error::last_os_error());
        let start = NonNull::new(at.cast::<u8>()).expect("mmap returned null");
        let skip = (start.as_ptr() as usize).next_multiple_of(HUGE_PAGE) - start.as_ptr() as usize;
        // SAFETY: skip < HUGE_PAGE, inside the mapping.
        self.base = unsafe { start.add(skip) };
        self.mapping = Some((start, bytes));
        if self.huge_pages {
            // The reservation past its first huge page (none for a small region). Refused advice
            // is harmless (4 KiB pages), so its result is not checked.
            crate::mem::advise_range(self.base.as_ptr() as usize + HUGE_PAGE, self.reserved().saturating_sub(HUGE_PAGE));
        }
    }
}

impl Deref for Region {
    type Target = [u8];

    #[inline(always)]
    fn deref(&self) -> &[u8] {
        // SAFETY: the first len bytes are committed (len ≤ committed), initialised (zero or
        // written) and owned by this region; base is dangling only when len is 0.
        unsafe { core::slice::from_raw_parts(self.base.as_ptr(), self.len) }
    }
}

impl DerefMut for Region {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and `&mut self` makes the borrow unique.
        unsafe { core::slice::from_raw_parts_mut(self.base.as_ptr(), self.len) }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        if let Some((start, bytes)) = self.mapping {
            // SAFETY: the whole mapping this region made, unmapped once; no borrow outlives self.
            unsafe { libc::munmap(start.as_ptr().cast(), bytes) };
        }
    }
}

impl Clone for Region {
    fn clone(&self) -> Region {
        let mut copy = Region::new(self.limit, self.huge_pages);
        copy.extend_zeroed(self.len).expect("the same limit");
        copy.copy_from_slice(self);
        copy
    }
}

impl core::fmt::Debug for Region {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Region").field("len", &self.len).field("committed", &self.committed).field("limit", &self.limit).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_in_place_with_zeroes_and_keeps_what_was_written() {
        let mut r = Region::new(64 << 20, true);
        assert!(r.is_empty() && r.committed() == 0, "nothing mapped before the first growth");
        r.extend_zeroed(10).unwrap();
        r[3] = 7;
        let at = r.as_ptr();
        assert_eq!(at as usize % HUGE_PAGE, 0, "the base is huge-page aligned");
        for step in [1, 100, 5 << 20, 17, 20 << 20] {
            r.extend_zeroed(step).unwrap();
            assert_eq!(r.as_ptr(), at, "never moves");
            assert!(r.len() <= r.committed() && r.committed() <= r.limit().next_multiple_of(HUGE_PAGE));
        }
        assert_eq!(r[3], 7);
        assert_eq!(r.iter().filter(|&&b| b != 0).count(), 1, "new bytes are zero");
        let last = r.len() - 1;
        r[last] = 9;
        let copy = r.clone();
        assert_eq!(&copy[..], &r[..]);
        assert_ne!(copy.as_ptr(), r.as_ptr());
    }

    #[test]
    fn stops_at_its_limit_and_changes_nothing() {
        let mut r = Region::new(100_000, false);
        r.extend_zeroed(99_999).unwrap();
        assert_eq!(r.extend_zeroed(2), Err(RegionFull { limit: 100_000, wanted: 100_001 }));
        assert_eq!(r.len(), 99_999);
        r.extend_zeroed(1).unwrap();
        assert_eq!(r.len(), 100_000);
        assert!(r.extend_zeroed(usize::MAX).is_err(), "no overflow");
    }

    #[test]
    fn shrinking_gives_back_pages_and_regrowth_is_zero() {
        let mut r = Region::new(16 << 20, false);
        r.extend_zeroed(8 << 20).unwrap();
        r.extend_zeroed(1).unwrap();
        assert_eq!(r.committed(), 9 << 20, "grown by an eighth");
        r.fill(1);
        let used = r.len();
        r.shrink_to_fit();
        assert_eq!(r.committed(), (8 << 20) + PAGE, "back to whole pages of what is used");
        r.extend_zeroed(1 << 20).unwrap();
        assert!(r[used..].iter().all(|&b| b == 0));
        assert!(r[..used].iter().all(|&b| b == 1));
        let empty = Region::new(0, true);
        assert!(empty.is_empty() && empty.clone().is_empty(), "nothing to map or copy");
    }
}
