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
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

/// One mapped ring of entries `T` (`u64` addresses or `xdp_desc`).
#[derive(Debug)]
pub(crate) struct Ring<T> {
    map: NonNull<u8>,
    map_len: usize,
    producer: NonNull<AtomicU32>,
    consumer: NonNull<AtomicU32>,
    flags: NonNull<AtomicU32>,
    entries: NonNull<T>,
    size: u32,
    /// This side's own index (producer's or consumer's), ahead of the published one.
    local: u32,
    /// The other side's index, as last read.
    cached: u32,
}

// SAFETY: the ring's mapping is owned by this value alone (the socket it belongs to moves with
// it); the kernel's side synchronises through the atomics.
unsafe impl<T> Send for Ring<T> {}

impl<T: Copy> Ring<T> {
    /// Maps the ring of `size` entries at page offset `pgoff` of socket `fd`, laid out by
    /// `off` (from `XDP_MMAP_OFFSETS`).
    pub(crate) fn map(fd: &OwnedFd, off: &libc::xdp_ring_offset, size: u32, pgoff: libc::off_t) -> io::Result<Ring<T>> {
        let map_len = off.desc as usize + size as usize * size_of::<T>();
        // SAFETY: a new shared mapping of the socket's ring, of the length the kernel's offsets
        // give; nothing else refers to the address range.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd.as_raw_fd(),
                pgoff,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let map = NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        // SAFETY: the offsets lie within the mapping (the kernel's layout) and are aligned for
        // their types.
        let at = |o: u64| unsafe { map.add(o as usize) };
        let ring = Ring {
            map,
            map_len,
            producer: at(off.producer).cast(),
            consumer: at(off.consumer).cast(),
            flags: at(off.flags).cast(),
            entries: at(off.desc).cast(),
            size,
            local: 0,
            cached: 0,
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

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        // SAFETY: the mapping this ring made, of this length; nothing refers to it after.
        unsafe { libc::munmap(self.map.as_ptr().cast(), self.map_len) };
    }
}
