//! The frame pool of a port set: one memory region cut into fixed-size frames, which the
//! AF_XDP sockets of the set register as their shared UMEM and the AF_PACKET ports copy into
//! and out of.
//!
//! # Overview
//! - A frame is [`FRAME_BYTES`] bytes at an offset multiple of that size; its data starts
//!   [`HEADROOM`] bytes in (where the kernel's copy-mode receive puts it) and holds at most
//!   [`MAX_FRAME_DATA`] bytes.
//! - A [`Frame`] is a handle (offset of its data, length) that the code holding it owns: it is
//!   not `Clone`, and goes back to the pool by [`FramePool::free`] or by being transmitted.
//! - Each frame has an owner tag: free, held by the program, or lent to the kernel through one
//!   socket's rings. A socket that closes (its interface deleted) gives back every frame lent
//!   through it ([`FramePool::reclaim`]), so none leaks however the port went away.

use crate::error::PortError;
use crate::mapping::Mapping;

/// The size of one frame: the kernel's smallest UMEM chunk, enough for a 1500-byte MTU.
pub const FRAME_BYTES: u32 = 2048;
/// Where a frame's data starts in it (`XDP_PACKET_HEADROOM`).
pub const HEADROOM: u32 = 256;
/// An Ethernet header: two addresses and the EtherType.
pub const ETHER_HEADER_BYTES: usize = 14;

/// The EtherType of an Ethernet frame, if it has a whole header.
pub(crate) fn ethertype(frame: &[u8]) -> Option<u16> {
    frame.get(12..ETHER_HEADER_BYTES).map(|t| u16::from_be_bytes([t[0], t[1]]))
}

/// The most bytes a frame holds.
pub const MAX_FRAME_DATA: u32 = FRAME_BYTES - HEADROOM;

/// A frame of the pool: where its data is and how long it is. Owned by whoever holds it.
#[derive(Debug, PartialEq, Eq)]
pub struct Frame {
    /// Offset of the data in the pool's region.
    pub(crate) addr: u64,
    /// Bytes of data.
    pub(crate) len: u32,
}

impl Frame {
    /// Bytes of data.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// No data.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The start of its frame in the region.
    pub(crate) fn base(&self) -> u64 {
        self.addr & !u64::from(FRAME_BYTES - 1)
    }
}

/// Who has a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// In the free list.
    Free,
    /// Handed to the program as a [`Frame`].
    Program,
    /// Lent to the kernel through socket `n`'s fill or transmit ring.
    Kernel(u16),
}

/// The region and its bookkeeping.
#[derive(Debug)]
pub struct FramePool {
    // Unmapped last (field order): the sockets that registered it are dropped before the pool
    // (the port set's field order), so the kernel no longer writes it.
    region: Mapping,
    free: Vec<u64>,
    owners: Vec<Owner>,
}

impl FramePool {
    /// A pool of `frames` frames (a power of two is not needed), all free.
    ///
    /// # Errors
    /// No frames, or the mapping failed.
    pub fn new(frames: u32) -> Result<FramePool, PortError> {
        if frames == 0 {
            return Err(PortError::Config("a frame pool needs at least one frame".into()));
        }
        let bytes = frames as usize * FRAME_BYTES as usize;
        let region = Mapping::anonymous(bytes).map_err(|e| PortError::os("mapping the frame pool", e))?;
        let free = (0..u64::from(frames)).rev().map(|i| i * u64::from(FRAME_BYTES) + u64::from(HEADROOM)).collect();
        Ok(FramePool { region, free, owners: vec![Owner::Free; frames as usize] })
    }

    /// The region's address and length (what a UMEM registers).
    pub(crate) fn region(&self) -> (*mut u8, usize) {
        (self.region.ptr().as_ptr(), self.region.len())
    }

    /// Frames in the pool, free or not.
    pub fn capacity(&self) -> usize {
        self.owners.len()
    }

    /// Frames free now.
    pub fn free_count(&self) -> usize {
        self.free.len()
    }

    fn index(addr: u64) -> usize {
        (addr / u64::from(FRAME_BYTES)) as usize
    }

    /// A free frame of no data, for the program to fill; `None` when every frame is taken.
    pub fn alloc(&mut self) -> Option<Frame> {
        let addr = self.free.pop()?;
        self.owners[Self::index(addr)] = Owner::Program;
        Some(Frame { addr, len: 0 })
    }

    /// Gives `frame` back.
    pub fn free(&mut self, frame: Frame) {
        self.release(frame.base() + u64::from(HEADROOM));
    }

    fn release(&mut self, addr: u64) {
        let i = Self::index(addr);
        debug_assert_ne!(self.owners[i], Owner::Free, "frame {addr:#x} freed twice");
        self.owners[i] = Owner::Free;
        self.free.push((addr & !u64::from(FRAME_BYTES - 1)) + u64::from(HEADROOM));
    }

    /// A free frame's data address lent to the kernel through socket `socket`; `None` when
    /// none is free.
    pub(crate) fn lend(&mut self, socket: u16) -> Option<u64> {
        let addr = self.free.pop()?;
        self.owners[Self::index(addr)] = Owner::Kernel(socket);
        Some(addr)
    }

    /// `frame` lent to the kernel through `socket` (to transmit it).
    pub(crate) fn lend_frame(&mut self, frame: &Frame, socket: u16) {
        self.owners[Self::index(frame.addr)] = Owner::Kernel(socket);
    }

    /// The kernel gave back the frame at `addr` (transmitted, or never filled): free again.
    pub(crate) fn returned(&mut self, addr: u64) {
        if let Some(i) = self.checked_index(addr) {
            if matches!(self.owners[i], Owner::Kernel(_)) {
                self.release(addr);
            }
        }
    }

    /// The kernel filled the frame at `addr` with `len` bytes: it is the program's now.
    /// `None` for an address outside the pool or one not lent (never from a sound kernel; not
    /// trusted all the same).
    pub(crate) fn received(&mut self, addr: u64, len: u32) -> Option<Frame> {
        let i = self.checked_index(addr)?;
        if !matches!(self.owners[i], Owner::Kernel(_)) || addr % u64::from(FRAME_BYTES) + u64::from(len) > u64::from(FRAME_BYTES) {
            return None;
        }
        self.owners[i] = Owner::Program;
        Some(Frame { addr, len })
    }

    fn checked_index(&self, addr: u64) -> Option<usize> {
        let i = Self::index(addr);
        (i < self.owners.len()).then_some(i)
    }

    /// Gives back every frame lent through `socket` (it closed); how many.
    pub(crate) fn reclaim(&mut self, socket: u16) -> usize {
        let lent: Vec<u64> = (0..self.owners.len())
            .filter(|&i| self.owners[i] == Owner::Kernel(socket))
            .map(|i| i as u64 * u64::from(FRAME_BYTES) + u64::from(HEADROOM))
            .collect();
        for &addr in &lent {
            self.release(addr);
        }
        lent.len()
    }

    /// The frame's data.
    pub fn bytes(&self, frame: &Frame) -> &[u8] {
        // SAFETY: a Frame's range lies inside the region (made by this pool: `received`
        // checks it, `alloc` and `set_len` keep it within its frame); the program holds the
        // frame, so the kernel is not writing it.
        unsafe { std::slice::from_raw_parts(self.region.ptr().as_ptr().add(frame.addr as usize), frame.len as usize) }
    }

    /// The frame's data, to change; [`FramePool::set_len`] first to grow it.
    pub fn bytes_mut(&mut self, frame: &mut Frame) -> &mut [u8] {
        // SAFETY: as in `bytes`, and `&mut self` makes this the only live view of the region
        // from this program.
        unsafe { std::slice::from_raw_parts_mut(self.region.ptr().as_ptr().add(frame.addr as usize), frame.len as usize) }
    }

    /// Sets the frame's data length (its bytes past the old length are whatever the frame held).
    ///
    /// # Errors
    /// More than [`MAX_FRAME_DATA`] bytes.
    pub fn set_len(&self, frame: &mut Frame, len: usize) -> Result<(), PortError> {
        let room = u64::from(FRAME_BYTES) - frame.addr % u64::from(FRAME_BYTES);
        if len as u64 > room {
            return Err(PortError::FrameTooLong { len, max: room as usize });
        }
        frame.len = len as u32;
        Ok(())
    }

    /// A frame holding a copy of `data`; `None` when none is free or `data` does not fit.
    pub fn alloc_copy(&mut self, data: &[u8]) -> Option<Frame> {
        if data.len() > MAX_FRAME_DATA as usize {
            return None;
        }
        let mut f = self.alloc()?;
        f.len = data.len() as u32;
        self.bytes_mut(&mut f).copy_from_slice(data);
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_go_round_and_none_leaks() {
        let mut p = FramePool::new(4).unwrap();
        let a = p.alloc_copy(b"hello").unwrap();
        assert_eq!(p.bytes(&a), b"hello");
        let lent = p.lend(3).unwrap();
        let got = p.received(lent, 60).unwrap();
        assert_eq!(got.len(), 60);
        let b = p.lend(3).unwrap();
        assert_eq!(p.free_count(), 1);
        assert_eq!(p.reclaim(3), 1, "the one still lent through socket 3");
        let _ = b;
        p.free(a);
        p.free(got);
        assert_eq!(p.free_count(), 4);
    }

    /// One step of a random run against the pool.
    #[derive(Clone, Debug)]
    enum Step {
        Alloc,
        Free(usize),
        Lend(u16),
        Receive(usize),
        Return(usize),
        Transmit(usize, u16),
        Reclaim(u16),
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            Just(Step::Alloc),
            any::<usize>().prop_map(Step::Free),
            (0u16..3).prop_map(Step::Lend),
            any::<usize>().prop_map(Step::Receive),
            any::<usize>().prop_map(Step::Return),
            (any::<usize>(), 0u16..3).prop_map(|(i, s)| Step::Transmit(i, s)),
            (0u16..3).prop_map(Step::Reclaim),
        ]
    }

    proptest::proptest! {
        /// Against a model that knows where every frame is: no frame is handed out twice, and
        /// free + held by the program + lent to each socket is always every frame.
        #[test]
        fn every_frame_is_in_exactly_one_place(steps in proptest::collection::vec(step(), 1..200)) {
            let mut p = FramePool::new(8).unwrap();
            let mut held: Vec<Frame> = Vec::new();
            let mut lent: Vec<(u64, u16)> = Vec::new();
            for s in steps {
                match s {
                    Step::Alloc => {
                        if let Some(f) = p.alloc() {
                            assert!(held.iter().all(|h| h.base() != f.base()) && lent.iter().all(|&(a, _)| a != f.addr));
                            held.push(f);
                        }
                    }
                    Step::Free(i) if !held.is_empty() => p.free(held.swap_remove(i % held.len())),
                    Step::Lend(s) => {
                        if let Some(a) = p.lend(s) {
                            assert!(held.iter().all(|h| h.addr != a) && lent.iter().all(|&(b, _)| b != a));
                            lent.push((a, s));
                        }
                    }
                    Step::Receive(i) if !lent.is_empty() => {
                        let (a, _) = lent.swap_remove(i % lent.len());
                        held.push(p.received(a, 64).expect("a lent frame is received"));
                    }
                    Step::Return(i) if !lent.is_empty() => p.returned(lent.swap_remove(i % lent.len()).0),
                    Step::Transmit(i, s) if !held.is_empty() => {
                        let f = held.swap_remove(i % held.len());
                        p.lend_frame(&f, s);
                        lent.push((f.addr, s));
                    }
                    Step::Reclaim(s) => {
                        let n = lent.iter().filter(|&&(_, t)| t == s).count();
                        assert_eq!(p.reclaim(s), n);
                        lent.retain(|&(_, t)| t != s);
                    }
                    _ => {}
                }
                assert_eq!(p.free_count() + held.len() + lent.len(), p.capacity());
            }
        }
    }

    #[test]
    fn the_kernel_is_not_trusted_with_addresses() {
        let mut p = FramePool::new(2).unwrap();
        assert!(p.received(1 << 40, 10).is_none(), "outside the region");
        assert!(p.received(u64::from(HEADROOM), 10).is_none(), "a frame never lent");
        let a = p.lend(0).unwrap();
        assert!(p.received(a, FRAME_BYTES).is_none(), "past its frame");
        let mut f = p.alloc().unwrap();
        assert!(matches!(p.set_len(&mut f, 4000), Err(PortError::FrameTooLong { .. })));
    }
}
