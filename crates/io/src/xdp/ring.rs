//! The four single-producer single-consumer rings of an AF_XDP socket, mapped from the kernel.
//!
//! # Overview
//! Each ring is a power-of-two array of entries with a producer and a consumer index (free
//! running `u32`s) and a flags word (`XDP_RING_NEED_WAKEUP`). The program produces into the
//! fill and transmit rings and consumes the receive and completion rings. Indices are read with
//! acquire and published with release ordering, as in the kernel's `xsk_queue.h`; each side
//! caches the other's index and reloads it only when the cache says the ring looks full (or
//! empty).

use std::io;
use std::os::fd::OwnedFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::mapping::Mapping;

/// One mapped ring of entries `T` (`u64` addresses or `xdp_desc`).
#[derive(Debug)]
pub(crate) struct Ring<T> {
    producer: NonNull<AtomicU32>,
    consumer: NonNull<AtomicU32>,
    flags: NonNull<AtomicU32>,
    entries: NonNull<T>,
    size: u32,
    /// This side's own index (producer's or consumer's), ahead of the published one.
    local: u32,
    /// The other side's index, as last read.
    cached: u32,
    /// Unmapped after every pointer above is last used (field order).
    _map: Mapping,
}

// SAFETY: the pointers point into the mapping this value owns (the socket it belongs to moves
// with it); the kernel's side synchronises through the atomics.
unsafe impl<T> Send for Ring<T> {}

impl<T: Copy> Ring<T> {
    /// Maps the ring of `size` entries at page offset `pgoff` of socket `fd`, laid out by
    /// `off` (from `XDP_MMAP_OFFSETS`).
    pub(crate) fn map(fd: &OwnedFd, off: &libc::xdp_ring_offset, size: u32, pgoff: libc::off_t) -> io::Result<Ring<T>> {
        let map = Mapping::shared(fd, off.desc as usize + size as usize * size_of::<T>(), pgoff)?;
        let base = map.ptr();
        // SAFETY: the offsets lie within the mapping (the kernel's layout) and are aligned for
        // their types.
        let at = |o: u64| unsafe { base.add(o as usize) };
        let ring = Ring {
            producer: at(off.producer).cast(),
            consumer: at(off.consumer).cast(),
            flags: at(off.flags).cast(),
            entries: at(off.desc).cast(),
            size,
            local: 0,
            cached: 0,
            _map: map,
        };
        Ok(ring)
    }

    fn producer(&self) -> &AtomicU32 {
        // SAFETY: points into the live mapping, at the kernel's aligned index word.
        unsafe { self.producer.as_ref() }
    }

    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as `producer`.
        unsafe { self.consumer.as_ref() }
    }

    /// The kernel asks to be woken (`sendto`/`recvfrom`/`poll`) to make progress on this ring.
    pub(crate) fn needs_wakeup(&self) -> bool {
        // SAFETY: as `producer`.
        unsafe { self.flags.as_ref() }.load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }

    fn slot(&self, index: u32) -> *mut T {
        // SAFETY: masked by the power-of-two size, the slot lies inside the entries array.
        unsafe { self.entries.as_ptr().add((index & (self.size - 1)) as usize) }
    }

    // ---- producer side (fill, transmit) ----

    /// Entries free to produce, up to `want` (reloading the consumer's index if short).
    pub(crate) fn free(&mut self, want: u32) -> u32 {
        let mut free = self.size - self.local.wrapping_sub(self.cached);
        if free < want {
            self.cached = self.consumer().load(Ordering::Acquire);
            free = self.size - self.local.wrapping_sub(self.cached);
        }
        free.min(want)
    }

    /// Writes the next entry (after [`Ring::free`] said there is room); published by
    /// [`Ring::submit`].
    pub(crate) fn push(&mut self, entry: T) {
        // SAFETY: `free` found this slot consumed by the kernel, so it is ours to write.
        unsafe { self.slot(self.local).write(entry) };
        self.local = self.local.wrapping_add(1);
    }

    /// Entries pushed that the kernel has not consumed yet.
    pub(crate) fn unconsumed(&self) -> u32 {
        self.local.wrapping_sub(self.consumer().load(Ordering::Acquire))
    }

    /// Publishes every entry pushed.
    pub(crate) fn submit(&self) {
        self.producer().store(self.local, Ordering::Release);
    }

    // ---- consumer side (receive, completion) ----

    /// Entries ready to consume, up to `want` (reloading the producer's index if short).
    pub(crate) fn ready(&mut self, want: u32) -> u32 {
        let mut ready = self.cached.wrapping_sub(self.local);
        if ready < want {
            self.cached = self.producer().load(Ordering::Acquire);
            ready = self.cached.wrapping_sub(self.local);
        }
        ready.min(want)
    }

    /// Reads the next entry (after [`Ring::ready`] said there is one); given back to the kernel
    /// by [`Ring::release`].
    pub(crate) fn pop(&mut self) -> T {
        // SAFETY: `ready` saw the kernel publish this slot; it will not change it until released.
        let entry = unsafe { self.slot(self.local).read() };
        self.local = self.local.wrapping_add(1);
        entry
    }

    /// Gives every entry popped back to the kernel.
    pub(crate) fn release(&self) {
        self.consumer().store(self.local, Ordering::Release);
    }
}
