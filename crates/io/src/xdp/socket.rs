//! One AF_XDP socket: bound to one receive queue of one interface, with its four rings, on the
//! port set's shared UMEM.
//!
//! # Overview
//! The first socket of a set registers the frame pool as the UMEM (`XDP_UMEM_REG`); every later
//! one binds with `XDP_SHARED_UMEM` to a live socket of the set, with fill and completion
//! rings of its own (which the kernel needs for another interface or queue), so a frame
//! received on one port is transmitted on another by its address alone. Binding asks for
//! `XDP_USE_NEED_WAKEUP` and lets the kernel pick zero-copy where the driver has it, copy
//! otherwise; which one it got is [`XskSocket::zero_copy`].

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::ring::Ring;
use crate::pool::{FramePool, FRAME_BYTES};
use crate::sockopt::{self, check};

/// Entries in each of a socket's rings.
pub(crate) const RING_SIZE: u32 = 2048;

/// `XDP_MAX_TX_SKB_BUDGET`: frames one `sendto` transmits in copy mode.
const XDP_MAX_TX_SKB_BUDGET: libc::c_int = 9;
/// The budget asked for.
const TX_BUDGET: u32 = 256;

/// `SO_PREFER_BUSY_POLL`, `SO_BUSY_POLL_BUDGET` (Linux 5.11; `SO_BUSY_POLL` is older).
const SO_PREFER_BUSY_POLL: libc::c_int = 69;
const SO_BUSY_POLL_BUDGET: libc::c_int = 70;
const SO_BUSY_POLL: libc::c_int = 46;
/// Microseconds a busy-polling call spins on the queue's NAPI instance.
const BUSY_POLL_US: libc::c_int = 20;
/// Frames one busy poll processes.
const BUSY_POLL_BUDGET: libc::c_int = 64;

/// Binds tried while the queue is still held by a socket just closed (10 ms apart).
const BIND_TRIES: u32 = 200;

/// An AF_XDP socket and its rings.
#[derive(Debug)]
pub(crate) struct XskSocket {
    // The rings unmap before the socket closes (field order).
    pub(crate) rx: Ring<libc::xdp_desc>,
    pub(crate) tx: Ring<libc::xdp_desc>,
    pub(crate) fill: Ring<u64>,
    pub(crate) completion: Ring<u64>,
    pub(crate) fd: OwnedFd,
    /// Its slot among the set's sockets: the owner tag of the frames lent through it.
    pub(crate) id: u16,
    pub(crate) zero_copy: bool,
    /// Frames lent through the fill ring and not yet received.
    pub(crate) in_fill: u32,
    /// The lengths of the frames in the transmit ring not yet completed, oldest first (the
    /// completion ring gives frames back in the order they were queued), and their sum: what
    /// the port has handed the kernel and it has not sent.
    pub(crate) in_flight_lens: std::collections::VecDeque<u32>,
    pub(crate) in_flight_bytes: u64,
    /// The program drives the queue's NAPI instance by its own calls (preferred busy polling).
    pub(crate) busy_poll: bool,
}

fn set<T>(fd: &OwnedFd, name: libc::c_int, value: &T) -> io::Result<()> {
    sockopt::set(fd, libc::SOL_XDP, name, value)
}

fn get<T: Copy>(fd: &OwnedFd, name: libc::c_int) -> io::Result<T> {
    sockopt::get(fd, libc::SOL_XDP, name)
}

fn setsockopt_socket(fd: &OwnedFd, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
    sockopt::set(fd, libc::SOL_SOCKET, name, &value)
}

impl XskSocket {
    /// A socket on queue `queue` of interface `ifindex`, registering `pool` as its UMEM when
    /// `share` is `None`, sharing the UMEM of socket `share` otherwise.
    /// `busy_poll`: prefer busy polling (the receive work then runs in this program's calls, on
    /// its core, when the interface defers its interrupts: `napi_defer_hard_irqs`,
    /// `gro_flush_timeout`).
    pub(crate) fn open(
        pool: &FramePool,
        ifindex: u32,
        queue: u32,
        share: Option<RawFd>,
        id: u16,
        busy_poll: bool,
    ) -> io::Result<XskSocket> {
        // SAFETY: plain socket creation; the descriptor is owned right after.
        let raw = check(unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })?;
        // SAFETY: a new descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        if share.is_none() {
            let (addr, len) = pool.region();
            let reg = libc::xdp_umem_reg {
                addr: addr as u64,
                len: len as u64,
                chunk_size: FRAME_BYTES,
                headroom: 0,
                flags: 0,
                tx_metadata_len: 0,
            };
            set(&fd, libc::XDP_UMEM_REG, &reg)?;
        }
        set(&fd, libc::XDP_UMEM_FILL_RING, &RING_SIZE)?;
        set(&fd, libc::XDP_UMEM_COMPLETION_RING, &RING_SIZE)?;
        set(&fd, libc::XDP_RX_RING, &RING_SIZE)?;
        set(&fd, libc::XDP_TX_RING, &RING_SIZE)?;
        let off: libc::xdp_mmap_offsets = get(&fd, libc::XDP_MMAP_OFFSETS)?;
        let rx = Ring::map(&fd, &off.rx, RING_SIZE, libc::XDP_PGOFF_RX_RING)?;
        let tx = Ring::map(&fd, &off.tx, RING_SIZE, libc::XDP_PGOFF_TX_RING)?;
        let fill = Ring::map(&fd, &off.fr, RING_SIZE, libc::XDP_UMEM_PGOFF_FILL_RING as libc::off_t)?;
        let completion = Ring::map(&fd, &off.cr, RING_SIZE, libc::XDP_UMEM_PGOFF_COMPLETION_RING as libc::off_t)?;
        let addr = libc::sockaddr_xdp {
            sxdp_family: libc::AF_XDP as u16,
            // Shared sockets take the owner's copy and wake-up modes (the kernel refuses flags).
            sxdp_flags: if share.is_some() { libc::XDP_SHARED_UMEM } else { libc::XDP_USE_NEED_WAKEUP },
            sxdp_ifindex: ifindex,
            sxdp_queue_id: queue,
            sxdp_shared_umem_fd: share.map_or(0, |s| s as u32),
        };
        // A socket closed on this queue a moment ago frees it only once the kernel's deferred
        // release has run: a bind meanwhile is EBUSY, so it is tried again for a while.
        let mut tries = 0;
        loop {
            // SAFETY: `addr` is a live sockaddr_xdp of the size passed.
            let bound = check(unsafe {
                libc::bind(fd.as_raw_fd(), std::ptr::from_ref(&addr).cast(), size_of::<libc::sockaddr_xdp>() as libc::socklen_t)
            });
            match bound {
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) && tries < BIND_TRIES => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                other => {
                    other?;
                    break;
                }
            };
        }
        if busy_poll {
            setsockopt_socket(&fd, SO_PREFER_BUSY_POLL, 1)?;
            setsockopt_socket(&fd, SO_BUSY_POLL, BUSY_POLL_US)?;
            setsockopt_socket(&fd, SO_BUSY_POLL_BUDGET, BUSY_POLL_BUDGET)?;
        }
        let options: libc::xdp_options = get(&fd, libc::XDP_OPTIONS)?;
        // Fewer `sendto`s per batch in copy mode where the kernel has the option (Linux 6.17).
        let _ = set(&fd, XDP_MAX_TX_SKB_BUDGET, &TX_BUDGET);
        // Copy mode charges each frame in flight to the socket's send buffer until the
        // receiving side frees it: room for a transmit ring of full-size frames.
        let room = (RING_SIZE * FRAME_BYTES * 2) as libc::c_int;
        if setsockopt_socket(&fd, libc::SO_SNDBUFFORCE, room).is_err() {
            let _ = setsockopt_socket(&fd, libc::SO_SNDBUF, room);
        }
        Ok(XskSocket {
            rx,
            tx,
            fill,
            completion,
            fd,
            id,
            zero_copy: options.flags & libc::XDP_OPTIONS_ZEROCOPY != 0,
            in_fill: 0,
            in_flight_lens: std::collections::VecDeque::new(),
            in_flight_bytes: 0,
            busy_poll,
        })
    }

    /// The kernel's counters of this socket's drops.
    pub(crate) fn statistics(&self) -> io::Result<libc::xdp_statistics> {
        get(&self.fd, libc::XDP_STATISTICS)
    }

    /// Lends free frames of `pool` to the kernel through the fill ring, keeping it at least half
    /// full.
    pub(crate) fn refill(&mut self, pool: &mut FramePool) {
        let want = RING_SIZE - self.in_fill;
        if want < RING_SIZE / 2 {
            return;
        }
        let n = self.fill.free(want);
        let mut pushed = 0;
        for _ in 0..n {
            let Some(addr) = pool.lend(self.id) else { break };
            self.fill.push(addr);
            pushed += 1;
        }
        if pushed > 0 {
            self.fill.submit();
            self.in_fill += pushed;
        }
    }

    /// Takes back the frames the kernel finished transmitting.
    pub(crate) fn complete(&mut self, pool: &mut FramePool) {
        let n = self.completion.ready(RING_SIZE);
        for _ in 0..n {
            pool.returned(self.completion.pop());
        }
        if n > 0 {
            self.completion.release();
            for _ in 0..n {
                self.in_flight_bytes -= self.in_flight_lens.pop_front().map_or(0, u64::from);
            }
        }
    }

    /// Asks the kernel to transmit what the transmit ring holds. In copy mode each call sends
    /// at most the socket's budget (32 frames unless `XDP_MAX_TX_SKB_BUDGET` raised it) and
    /// says `EAGAIN` while more wait, so this calls again until the ring is drained. `Err` only
    /// for a failure other than "busy, try again".
    pub(crate) fn kick(&self) -> io::Result<()> {
        loop {
            let before = self.tx.unconsumed();
            if before == 0 || !(self.busy_poll || self.tx.needs_wakeup()) {
                return Ok(());
            }
            // SAFETY: a send of no data; the kernel reads nothing from the null buffer.
            let ret = unsafe { libc::sendto(self.fd.as_raw_fd(), std::ptr::null(), 0, libc::MSG_DONTWAIT, std::ptr::null(), 0) };
            let e = (ret < 0).then(io::Error::last_os_error);
            match e.as_ref().and_then(io::Error::raw_os_error) {
                // More to send, or the send buffer is full: again only if that call made progress.
                None | Some(libc::EAGAIN) if self.tx.unconsumed() < before => continue,
                None | Some(libc::EAGAIN | libc::EBUSY | libc::ENOBUFS) => return Ok(()),
                _ => return Err(e.unwrap_or_else(|| io::Error::other("sendto"))),
            }
        }
    }

    /// Wakes the kernel to fill the receive ring when it asks (an empty fill ring seen), or,
    /// busy polling, every time: the call is what runs the queue's receive work.
    pub(crate) fn wake_receive(&self) {
        if self.busy_poll || self.fill.needs_wakeup() {
            // SAFETY: a receive of no data into no buffer.
            unsafe {
                libc::recvfrom(self.fd.as_raw_fd(), std::ptr::null_mut(), 0, libc::MSG_DONTWAIT, std::ptr::null_mut(), std::ptr::null_mut())
            };
        }
    }
}
