//! An AF_PACKET port: a raw packet socket with TPACKET_V3 receive and transmit rings mapped
//! from the kernel — the fallback where XDP cannot attach, with the AF_XDP port's API.
//!
//! # Overview
//! - Receive: the kernel fills blocks of frames and hands a block over (`TP_STATUS_USER`) when
//!   it is full or [`RETIRE_MS`] after its first frame; the port copies each frame into a pool
//!   frame and gives the block back (`TP_STATUS_KERNEL`) once every frame in it is taken.
//! - Transmit: a frame is copied into the next free slot of the transmit ring and marked
//!   `TP_STATUS_SEND_REQUEST`; one `send` per batch hands them all to the driver, past the
//!   queueing discipline (`PACKET_QDISC_BYPASS`) unless the port is configured to go through it
//!   (then traffic control shapes what it sends, and `SIOCOUTQ` shows the backlog).
//! - The socket takes one EtherType in the kernel when one is named, every frame otherwise (and
//!   keeps those of the named types when several are); frames this host sends are not seen.
//!   Unlike AF_XDP, the kernel still gets its own copy of every frame.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::counters::{DropReason, PortCounters};
use crate::error::PortError;
use crate::interface::Interface;
use crate::mapping::Mapping;
use crate::pool::{Frame, FramePool};
use crate::sockopt::{self, check};

/// Bytes of one ring block.
const BLOCK_BYTES: u32 = 1 << 18;
/// Receive blocks.
const RX_BLOCKS: u32 = 16;
/// Transmit blocks (2048 slots, as an AF_XDP transmit ring).
const TX_BLOCKS: u32 = 16;
/// Bytes of one transmit slot (and the receive ring's nominal frame).
const SLOT_BYTES: u32 = 2048;
/// A receive block goes to the program at the latest this long after its first frame.
pub const RETIRE_MS: u32 = 1;
/// Where a transmit slot's frame starts: after the aligned `tpacket3_hdr`.
const TX_DATA_OFFSET: usize = libc::TPACKET3_HDRLEN - size_of::<libc::sockaddr_ll>();
const ETH_P_ALL: u16 = 0x0003;

/// An open AF_PACKET port.
#[derive(Debug)]
pub(crate) struct PacketPort {
    // Unmapped before the socket closes (field order).
    ring: Mapping,
    fd: OwnedFd,
    /// Frames kept when the socket takes every EtherType but several are named.
    filter: Vec<u16>,
    /// The receive block being read and where in it: (block, frames left, offset of the next).
    rx_block: u32,
    rx_cursor: Option<(u32, u32)>,
    tx_slot: u32,
    /// Frames written to the transmit ring the kernel has not taken yet, and their bytes.
    tx_pending: u32,
    tx_pending_bytes: u64,
}

fn set<T>(fd: &OwnedFd, name: libc::c_int, value: &T) -> io::Result<()> {
    sockopt::set(fd, libc::SOL_PACKET, name, value)
}

/// A status word in the ring, shared with the kernel.
fn status(at: *mut u8) -> &'static AtomicU32 {
    // SAFETY: callers pass the address of an aligned u32 status word inside the live ring
    // mapping, which outlives every use (the reference never leaves the method that took it).
    unsafe { &*at.cast::<AtomicU32>() }
}

impl PacketPort {
    /// Opens the port on `interface`, taking frames of `ethertypes` (empty: all); `qdisc`: send
    /// through the interface's queueing discipline instead of straight to the driver.
    pub(crate) fn open(interface: &Interface, ethertypes: &[u16], qdisc: bool) -> Result<PacketPort, PortError> {
        let name = &interface.name;
        let os = |what: &str| {
            let what = format!("{what} of {name}");
            move |e| PortError::os(what, e)
        };
        let protocol = if let [one] = ethertypes { *one } else { ETH_P_ALL };
        // SAFETY: plain socket creation; the descriptor is owned right after.
        let raw = check(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, i32::from(protocol.to_be())) })
            .map_err(os("the packet socket"))?;
        // SAFETY: a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        set(&fd, libc::PACKET_VERSION, &(libc::tpacket_versions::TPACKET_V3 as libc::c_int)).map_err(os("TPACKET_V3"))?;
        if !qdisc {
            set(&fd, libc::PACKET_QDISC_BYPASS, &1i32).map_err(os("PACKET_QDISC_BYPASS"))?;
        }
        // Each frame the kernel took from the ring is charged to the send buffer until the
        // driver frees it (in the qdisc, until it leaves): room for the whole ring.
        let room = (TX_BLOCKS * BLOCK_BYTES * 2) as libc::c_int;
        if sockopt::set(&fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &room).is_err() {
            let _ = sockopt::set(&fd, libc::SOL_SOCKET, libc::SO_SNDBUF, &room);
        }
        set(&fd, libc::PACKET_IGNORE_OUTGOING, &1i32).map_err(os("PACKET_IGNORE_OUTGOING"))?;
        let req = |blocks: u32, retire: u32| libc::tpacket_req3 {
            tp_block_size: BLOCK_BYTES,
            tp_block_nr: blocks,
            tp_frame_size: SLOT_BYTES,
            tp_frame_nr: blocks * (BLOCK_BYTES / SLOT_BYTES),
            tp_retire_blk_tov: retire,
            tp_sizeof_priv: 0,
            tp_feature_req_word: 0,
        };
        set(&fd, libc::PACKET_RX_RING, &req(RX_BLOCKS, RETIRE_MS)).map_err(os("the receive ring"))?;
        set(&fd, libc::PACKET_TX_RING, &req(TX_BLOCKS, 0)).map_err(os("the transmit ring"))?;
        let ring = Mapping::shared(&fd, ((RX_BLOCKS + TX_BLOCKS) * BLOCK_BYTES) as usize, 0).map_err(os("mapping the rings"))?;
        let port = PacketPort {
            ring,
            fd,
            filter: if ethertypes.len() > 1 { ethertypes.to_vec() } else { Vec::new() },
            rx_block: 0,
            rx_cursor: None,
            tx_slot: 0,
            tx_pending: 0,
            tx_pending_bytes: 0,
        };
        // SAFETY: sockaddr_ll is plain data, valid all zeros.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = protocol.to_be();
        addr.sll_ifindex = interface.index as i32;
        // SAFETY: `addr` is a live sockaddr_ll of the size passed.
        check(unsafe {
            libc::bind(port.fd.as_raw_fd(), std::ptr::from_ref(&addr).cast(), size_of::<libc::sockaddr_ll>() as libc::socklen_t)
        })
        .map_err(os("binding the packet socket"))?;
        Ok(port)
    }

    fn block(&self, i: u32) -> *mut u8 {
        // SAFETY: receive block `i < RX_BLOCKS` lies inside the mapping.
        unsafe { self.ring.ptr().as_ptr().add((i * BLOCK_BYTES) as usize) }
    }

    fn slot(&self, i: u32) -> *mut u8 {
        // SAFETY: transmit slot `i` lies inside the mapping, after the receive blocks.
        unsafe { self.ring.ptr().as_ptr().add((RX_BLOCKS * BLOCK_BYTES + i * SLOT_BYTES) as usize) }
    }

    /// Appends up to `max` received frames (copied into pool frames) to `out`; how many.
    pub(crate) fn receive(&mut self, pool: &mut FramePool, out: &mut Vec<Frame>, max: usize, counters: &mut PortCounters) -> usize {
        let mut got = 0;
        while got < max {
            let block = self.block(self.rx_block);
            let status_word = status(block.wrapping_add(std::mem::offset_of!(libc::tpacket_block_desc, hdr)));
            let (left, offset) = match self.rx_cursor {
                Some(c) => c,
                None => {
                    if status_word.load(Ordering::Acquire) & libc::TP_STATUS_USER == 0 {
                        break;
                    }
                    // SAFETY: the block is ours (TP_STATUS_USER); its descriptor is at its start.
                    let h = unsafe { block.cast::<libc::tpacket_block_desc>().read().hdr.bh1 };
                    (h.num_pkts, h.offset_to_first_pkt)
                }
            };
            if left == 0 || offset as usize + size_of::<libc::tpacket3_hdr>() > BLOCK_BYTES as usize {
                status_word.store(libc::TP_STATUS_KERNEL, Ordering::Release);
                self.rx_block = (self.rx_block + 1) % RX_BLOCKS;
                self.rx_cursor = None;
                continue;
            }
            // SAFETY: the frame header lies inside the block (checked above), which is ours.
            let h = unsafe { block.add(offset as usize).cast::<libc::tpacket3_hdr>().read() };
            let start = offset as usize + usize::from(h.tp_mac);
            let len = h.tp_snaplen as usize;
            let next = if h.tp_next_offset == 0 { BLOCK_BYTES } else { offset.saturating_add(h.tp_next_offset) };
            self.rx_cursor = Some((left - 1, next));
            if start + len > BLOCK_BYTES as usize {
                counters.drop(DropReason::InvalidDescriptor);
                continue;
            }
            // SAFETY: the frame's bytes lie inside the block (checked), which is ours.
            let data = unsafe { std::slice::from_raw_parts(block.add(start), len) };
            if !self.filter.is_empty() && !crate::pool::ethertype(data).is_some_and(|t| self.filter.contains(&t)) {
                continue;
            }
            match pool.alloc_copy(data) {
                Some(f) => {
                    counters.rx_frames += 1;
                    counters.rx_bytes += len as u64;
                    out.push(f);
                    got += 1;
                }
                None if len > crate::pool::MAX_FRAME_DATA as usize => counters.drop(DropReason::TooLong),
                None => counters.drop(DropReason::NoFreeFrame),
            }
        }
        got
    }

    /// Copies `frame` into the next free transmit slot (sent by [`PacketPort::flush`]) and gives
    /// it back to the pool; counts the drop when the ring is full or the frame too long.
    pub(crate) fn transmit(&mut self, pool: &mut FramePool, frame: Frame, counters: &mut PortCounters) -> Result<(), DropReason> {
        let slot = self.slot(self.tx_slot);
        let word = status(slot.wrapping_add(std::mem::offset_of!(libc::tpacket3_hdr, tp_status)));
        let data = pool.bytes(&frame);
        let s = word.load(Ordering::Acquire);
        let sent = if data.len() > SLOT_BYTES as usize - TX_DATA_OFFSET {
            Err(DropReason::TooLong)
        } else if s != libc::TP_STATUS_AVAILABLE && s != libc::TP_STATUS_WRONG_FORMAT {
            Err(DropReason::TransmitRingFull)
        } else {
            if s == libc::TP_STATUS_WRONG_FORMAT {
                counters.drop(DropReason::KernelInvalidDescriptor);
            }
            // SAFETY: the slot is ours (available) and the frame fits in it after the header.
            unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), slot.add(TX_DATA_OFFSET), data.len());
                let h = slot.cast::<libc::tpacket3_hdr>();
                (*h).tp_len = data.len() as u32;
                (*h).tp_snaplen = data.len() as u32;
                (*h).tp_next_offset = 0;
            }
            counters.tx_frames += 1;
            counters.tx_bytes += data.len() as u64;
            word.store(libc::TP_STATUS_SEND_REQUEST, Ordering::Release);
            self.tx_slot = (self.tx_slot + 1) % (TX_BLOCKS * (BLOCK_BYTES / SLOT_BYTES));
            self.tx_pending += 1;
            self.tx_pending_bytes += data.len() as u64;
            Ok(())
        };
        if let Err(why) = sent {
            counters.drop(why);
        }
        pool.free(frame);
        sent
    }

    /// Hands the queued frames to the driver; those it could not take yet (the socket's send
    /// buffer full: frames wait in the qdisc) stay queued for the next flush. `Err`: the kernel
    /// refused (the interface may be gone).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        if self.tx_pending == 0 {
            return Ok(());
        }
        // SAFETY: a send of no data: the kernel sends what the ring holds.
        let ret = unsafe { libc::send(self.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT) };
        let e = (ret < 0).then(io::Error::last_os_error);
        // The kernel takes frames in ring order: those still asking to be sent are the newest.
        let slots = TX_BLOCKS * (BLOCK_BYTES / SLOT_BYTES);
        let asking = |i: u32| {
            let slot = self.slot((self.tx_slot + slots - 1 - i) % slots);
            let asks = status(slot.wrapping_add(std::mem::offset_of!(libc::tpacket3_hdr, tp_status))).load(Ordering::Acquire)
                == libc::TP_STATUS_SEND_REQUEST;
            // SAFETY: the slot's header lies inside the live ring mapping; the kernel does not
            // write a slot it has not taken.
            asks.then(|| u64::from(unsafe { (*slot.cast::<libc::tpacket3_hdr>()).tp_len }))
        };
        let (left, bytes) = (0..self.tx_pending).map_while(asking).fold((0, 0), |(n, sum), len| (n + 1, sum + len));
        (self.tx_pending, self.tx_pending_bytes) = (left, bytes);
        match e.as_ref().and_then(io::Error::raw_os_error) {
            None | Some(libc::EAGAIN | libc::ENOBUFS) => Ok(()),
            _ => Err(e.unwrap_or_else(|| io::Error::other("send"))),
        }
    }

    /// Frames queued that the kernel has not taken yet.
    pub(crate) fn unsent(&self) -> bool {
        self.tx_pending > 0
    }

    /// The socket, to wait on.
    pub(crate) fn fd(&self) -> std::os::fd::RawFd {
        self.fd.as_raw_fd()
    }

    /// Bytes queued that are not sent yet: those in the transmit ring the kernel has not taken,
    /// and those it holds (`SIOCOUTQ`: the socket's frames waiting in the queueing discipline or
    /// the driver's queue).
    pub(crate) fn tx_backlog(&self) -> u64 {
        let mut queued: libc::c_int = 0;
        // SAFETY: SIOCOUTQ writes one int into the live variable the pointer names.
        let ret = unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::TIOCOUTQ, &raw mut queued) };
        let held = if ret < 0 { 0 } else { u64::try_from(queued).unwrap_or(0) };
        held + self.tx_pending_bytes
    }

    /// Frames the kernel dropped because the receive ring was full (since the last call).
    pub(crate) fn kernel_drops(&self) -> u64 {
        sockopt::get::<libc::tpacket_stats_v3>(&self.fd, libc::SOL_PACKET, libc::PACKET_STATISTICS).map_or(0, |st| u64::from(st.tp_drops))
    }
}
