//! An AF_XDP port: the redirect program attached to the interface, an XSKMAP, and one socket
//! per receive queue, all on the port set's frame pool.
//!
//! # Overview
//! Opening builds the program for the port's EtherTypes ([`crate::bpf::redirect`]), makes the
//! XSKMAP, binds a socket to each queue and puts it in the map, then attaches the program with
//! a BPF link: in the driver's native mode where it has one, the generic mode otherwise (or
//! the one configured). Receiving walks the sockets' receive rings; transmitting goes through
//! the first socket's transmit ring. Closing (dropping) the port detaches the program.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::socket::XskSocket;
use crate::bpf::{redirect, syscall};
use crate::counters::{DropReason, PortCounters};
use crate::error::PortError;
use crate::interface::Interface;
use crate::pool::{Frame, FramePool};

/// Where the XDP program runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XdpMode {
    /// In the driver, before any socket buffer is made.
    Native,
    /// In the kernel's generic hook, after the socket buffer is made (any driver).
    Generic,
}

impl XdpMode {
    /// Its name in reports: `native`, `generic`.
    pub fn name(self) -> &'static str {
        match self {
            XdpMode::Native => "native",
            XdpMode::Generic => "generic",
        }
    }
}

/// An open AF_XDP port.
#[derive(Debug)]
pub(crate) struct XdpPort {
    // Detach first, then the sockets, then the map and program.
    _link: OwnedFd,
    pub(crate) sockets: Vec<XskSocket>,
    _map: OwnedFd,
    _program: OwnedFd,
    pub(crate) mode: XdpMode,
    /// The socket to receive from first next time (queues take turns).
    next_rx: usize,
}

impl XdpPort {
    /// Opens the port on `interface`, taking the frames `filter` names, in `mode`
    /// (`None`: native if the driver has it); `share`: a live socket of the set to share the
    /// UMEM with (`None`: this port's first socket registers it); `next_id`: the next free
    /// socket slot of the set, advanced past this port's.
    pub(crate) fn open(
        pool: &mut FramePool,
        interface: &Interface,
        filter: redirect::Filter<'_>,
        mode: Option<XdpMode>,
        share: Option<RawFd>,
        next_id: &mut u16,
        busy_poll: bool,
    ) -> Result<XdpPort, PortError> {
        let name = &interface.name;
        let map = syscall::xsk_map(interface.queues).map_err(|e| PortError::os(format!("making the XSKMAP of {name}"), e))?;
        let program = syscall::load_xdp(&redirect::program(map.as_raw_fd(), filter), "nexthop_port")
            .map_err(|e| PortError::os(format!("loading the XDP program of {name}"), e))?;
        let mut sockets = Vec::new();
        let mut share = share;
        for queue in 0..interface.queues {
            let s = XskSocket::open(pool, interface.index, queue, share, *next_id, busy_poll)
                .map_err(|e| PortError::os(format!("binding an AF_XDP socket to {name} queue {queue}"), e))?;
            *next_id = next_id.wrapping_add(1);
            syscall::set_xsk(&map, queue, &s.fd).map_err(|e| PortError::os(format!("the XSKMAP slot of {name} queue {queue}"), e))?;
            share.get_or_insert(s.fd.as_raw_fd());
            sockets.push(s);
        }
        let attach = |m: XdpMode| {
            let flags = if m == XdpMode::Native { syscall::XDP_FLAGS_DRV_MODE } else { syscall::XDP_FLAGS_SKB_MODE };
            syscall::attach_xdp(&program, interface.index, flags)
        };
        let (link, mode) = match mode {
            Some(m) => (attach(m).map_err(|e| PortError::os(format!("attaching XDP to {name} in {} mode", m.name()), e))?, m),
            None => match attach(XdpMode::Native) {
                Ok(l) => (l, XdpMode::Native),
                Err(native) => {
                    tracing::info!("{name}: no native XDP ({native}); generic mode");
                    (attach(XdpMode::Generic).map_err(|e| PortError::os(format!("attaching XDP to {name}"), e))?, XdpMode::Generic)
                }
            },
        };
        let mut port = XdpPort { _link: link, sockets, _map: map, _program: program, mode, next_rx: 0 };
        for s in &mut port.sockets {
            s.refill(pool);
        }
        Ok(port)
    }

    /// Whether the kernel gave zero-copy (the driver supports it).
    pub(crate) fn zero_copy(&self) -> bool {
        self.sockets.iter().all(|s| s.zero_copy)
    }

    /// Appends up to `max` received frames to `out`; how many.
    pub(crate) fn receive(&mut self, pool: &mut FramePool, out: &mut Vec<Frame>, max: usize, counters: &mut PortCounters) -> usize {
        let n = self.sockets.len();
        let mut got = 0;
        for k in 0..n {
            let s = &mut self.sockets[(self.next_rx + k) % n];
            if s.busy_poll {
                s.wake_receive();
            }
            let ready = s.rx.ready((max - got) as u32);
            for _ in 0..ready {
                let d = s.rx.pop();
                s.in_fill = s.in_fill.saturating_sub(1);
                match pool.received(d.addr, d.len) {
                    Some(f) => {
                        counters.rx_frames += 1;
                        counters.rx_bytes += u64::from(d.len);
                        out.push(f);
                        got += 1;
                    }
                    None => counters.drop(DropReason::InvalidDescriptor),
                }
            }
            if ready > 0 {
                s.rx.release();
            }
            s.refill(pool);
            if !s.busy_poll {
                s.wake_receive();
            }
            if got == max {
                break;
            }
        }
        self.next_rx = (self.next_rx + 1) % n;
        got
    }

    /// Queues `frame` to transmit (sent by [`XdpPort::flush`]). A full ring is first made room
    /// in: the frames done are taken back, and if none are, the kernel is kicked to send what
    /// the ring holds (in copy mode it sends them in the call). Only a ring still full after
    /// that gives the frame back to the pool and counts the drop.
    pub(crate) fn transmit(&mut self, pool: &mut FramePool, frame: Frame, counters: &mut PortCounters) -> Result<(), DropReason> {
        let s = &mut self.sockets[0];
        if s.tx.free(1) == 0 {
            s.complete(pool);
            if s.tx.free(1) == 0 {
                s.tx.submit();
                // A refused kick leaves the ring full: the frame is dropped below, and the next
                // flush reports the port.
                let _ = s.kick();
                s.complete(pool);
            }
            if s.tx.free(1) == 0 {
                pool.free(frame);
                counters.drop(DropReason::TransmitRingFull);
                return Err(DropReason::TransmitRingFull);
            }
        }
        pool.lend_frame(&frame, s.id);
        counters.tx_frames += 1;
        counters.tx_bytes += u64::from(frame.len);
        s.tx.push(libc::xdp_desc { addr: frame.addr, len: frame.len, options: 0 });
        s.in_flight_lens.push_back(frame.len);
        s.in_flight_bytes += u64::from(frame.len);
        Ok(())
    }

    /// Publishes the queued frames, kicks the kernel, takes back completed frames and refills
    /// the fill rings. `Err`: the kernel refused the kick (the interface may be gone).
    pub(crate) fn flush(&mut self, pool: &mut FramePool) -> std::io::Result<()> {
        let s = &mut self.sockets[0];
        s.tx.submit();
        let kicked = if s.in_flight_lens.is_empty() { Ok(()) } else { s.kick() };
        for s in &mut self.sockets {
            s.complete(pool);
            s.refill(pool);
        }
        kicked
    }

    /// Frames queued that the kernel has not taken yet (the driver was busy).
    pub(crate) fn unsent(&self) -> bool {
        self.sockets[0].tx.unconsumed() > 0
    }

    /// Bytes queued to transmit that the kernel has not sent yet.
    pub(crate) fn tx_backlog(&self) -> u64 {
        self.sockets.iter().map(|s| s.in_flight_bytes).sum()
    }

    /// The sockets, to wait on.
    pub(crate) fn fds(&self) -> impl Iterator<Item = RawFd> + '_ {
        self.sockets.iter().map(|s| s.fd.as_raw_fd())
    }

    /// The kernel's drop counters, summed over the sockets.
    pub(crate) fn kernel_drops(&self) -> [(DropReason, u64); 4] {
        let mut sum = [
            (DropReason::KernelRxDropped, 0),
            (DropReason::KernelRxRingFull, 0),
            (DropReason::KernelFillRingEmpty, 0),
            (DropReason::KernelInvalidDescriptor, 0),
        ];
        for s in &self.sockets {
            if let Ok(st) = s.statistics() {
                sum[0].1 += st.rx_dropped;
                sum[1].1 += st.rx_ring_full;
                sum[2].1 += st.rx_fill_ring_empty_descs;
                sum[3].1 += st.rx_invalid_descs + st.tx_invalid_descs;
            }
        }
        sum
    }

    /// Gives back every frame lent through this port's sockets (it is closing).
    pub(crate) fn reclaim(&self, pool: &mut FramePool) {
        for s in &self.sockets {
            pool.reclaim(s.id);
        }
    }
}
