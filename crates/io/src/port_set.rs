//! A set of ports served by one thread, on one frame pool: what a pipeline receives batches of
//! frames from and hands its decisions to.
//!
//! # Overview
//! - [`PortSet::open`] opens a port on an interface: AF_XDP where the redirect program
//!   attaches, AF_PACKET otherwise (or the backend configured).
//! - [`PortSet::receive`] appends up to a batch of frames of one port; the program owns them
//!   and hands each to [`PortSet::transmit`] (to any port of the set: AF_XDP to AF_XDP moves
//!   the frame's address, no copy) or back by [`FramePool::free`]. [`PortSet::flush`] sends
//!   what was queued and takes back what the kernel finished with; [`PortSet::wait`] sleeps
//!   until a port has frames.
//! - [`PortSet::maintain`] follows the interfaces: a port whose interface is gone (deleted, or
//!   made again with another index) closes and gives back its frames; once an interface of its
//!   name is there again, it opens anew. Meanwhile it receives nothing and counts what is sent
//!   to it as dropped (`link-down`).

use std::os::fd::{AsRawFd, RawFd};

use crate::bpf::redirect::Filter;
use crate::counters::{DropReason, PortCounters};
use crate::error::PortError;
use crate::interface::Interface;
use crate::membership::Membership;
use crate::packet::port::PacketPort;
use crate::pool::{Frame, FramePool, ETHER_HEADER_BYTES};
use crate::xdp::port::{XdpMode, XdpPort};

/// How a port moves frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// AF_XDP sockets fed by an XDP program.
    AfXdp,
    /// An AF_PACKET socket with TPACKET_V3 rings.
    AfPacket,
}

impl Backend {
    /// Its name in reports: `af-xdp`, `af-packet`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::AfXdp => "af-xdp",
            Backend::AfPacket => "af-packet",
        }
    }
}

/// What a port is opened with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortConfig {
    /// The interface's name.
    pub interface: String,
    /// The backend; `None`: AF_XDP, or AF_PACKET where XDP cannot attach.
    pub backend: Option<Backend>,
    /// AF_XDP's mode; `None`: native where the driver has it, generic otherwise.
    pub xdp_mode: Option<XdpMode>,
    /// The EtherTypes the port takes; others stay with the kernel. Empty: every frame.
    pub ethertypes: Vec<u16>,
    /// AF_XDP: IPv6 neighbour discovery (ICMPv6 types 133–137) stays with the kernel even where
    /// the port takes IPv6, so that the kernel, seeing it arrive on its interface, resolves
    /// and answers for the interface's addresses (a router's ports).
    pub neighbour_discovery_to_kernel: bool,
    /// AF_XDP: prefer busy polling, so that the interface's receive work runs in this thread's
    /// calls on its core (with the interface's `napi_defer_hard_irqs` and `gro_flush_timeout`
    /// set, the kernel leaves it to them).
    pub busy_poll: bool,
    /// Multicast addresses the interface joins while the port is open, so that its frames to
    /// them are not filtered out by the NIC.
    pub groups: Vec<[u8; 6]>,
    /// AF_PACKET: send through the interface's queueing discipline (traffic control applies;
    /// [`PortSet::tx_backlog`] is the socket's queue in it) instead of straight to the driver.
    /// AF_XDP frames always go straight to the driver.
    pub qdisc: bool,
}

impl PortConfig {
    /// A port on `interface` taking every frame, backend and mode chosen by what works.
    pub fn new(interface: &str) -> PortConfig {
        PortConfig {
            interface: interface.to_string(),
            backend: None,
            xdp_mode: None,
            ethertypes: Vec::new(),
            neighbour_discovery_to_kernel: false,
            busy_poll: false,
            groups: Vec::new(),
            qdisc: false,
        }
    }
}

/// A port of a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortId(pub usize);

/// What a port is now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// Its interface, as last opened.
    pub interface: Interface,
    /// The backend it runs on.
    pub backend: Backend,
    /// Where its XDP program runs (AF_XDP only).
    pub xdp_mode: Option<XdpMode>,
    /// Whether AF_XDP got zero-copy from the driver.
    pub zero_copy: bool,
    /// Whether its interface is there (a port whose interface went is down until it is back).
    pub up: bool,
    /// How many times it has opened: a new value means new sockets ([`PortSet::fds`]).
    pub opened: u64,
}

/// A change [`PortSet::maintain`] made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortEvent {
    /// The port's interface went; the port closed.
    Down(PortId),
    /// Its interface is back; the port opened again.
    Up(PortId),
}

#[derive(Debug)]
enum Open {
    Xdp(XdpPort),
    Packet(PacketPort),
}

#[derive(Debug)]
struct Slot {
    config: PortConfig,
    info: PortInfo,
    open: Option<Open>,
    /// The interface's group memberships, held while it is open.
    groups: Option<Membership>,
    counters: PortCounters,
    /// The kernel's cumulative drop counters as last read (AF_XDP), to add only what is new.
    kernel_seen: [u64; 4],
}

/// Ports served by one thread, sharing one frame pool.
#[derive(Debug)]
pub struct PortSet {
    // The ports close before the pool unmaps (field order).
    slots: Vec<Slot>,
    pool: FramePool,
    next_socket: u16,
}

impl PortSet {
    /// An empty set whose pool holds `frames` frames (each AF_XDP socket lends the kernel up to
    /// [`PortSet::FRAMES_PER_SOCKET`] to receive into).
    ///
    /// # Errors
    /// The pool cannot be mapped.
    pub fn new(frames: u32) -> Result<PortSet, PortError> {
        Ok(PortSet { slots: Vec::new(), pool: FramePool::new(frames)?, next_socket: 0 })
    }

    /// The most frames an AF_XDP socket keeps lent to the kernel.
    pub const FRAMES_PER_SOCKET: u32 = crate::xdp::socket::RING_SIZE;

    /// The frame pool (to allocate frames to send, read received ones, free them).
    pub fn pool(&mut self) -> &mut FramePool {
        &mut self.pool
    }

    /// The frame pool, to read.
    pub fn pool_ref(&self) -> &FramePool {
        &self.pool
    }

    /// The ports, in the order opened.
    pub fn ports(&self) -> impl Iterator<Item = PortId> {
        (0..self.slots.len()).map(PortId)
    }

    fn share(&self) -> Option<RawFd> {
        self.slots.iter().find_map(|s| match &s.open {
            Some(Open::Xdp(p)) => p.sockets.first().map(|s| s.fd.as_raw_fd()),
            _ => None,
        })
    }

    /// Opens `config`'s backend and joins its groups.
    fn open_backend(&mut self, config: &PortConfig) -> Result<(Open, PortInfo, Option<Membership>), PortError> {
        let (open, info) = self.open_io(config)?;
        let groups = if config.groups.is_empty() {
            None
        } else {
            let joined = Membership::join(info.interface.index, &config.groups);
            let joined = joined.map_err(|e| PortError::os(format!("joining {}'s multicast groups", config.interface), e));
            match joined {
                Ok(m) => Some(m),
                Err(e) => {
                    if let Open::Xdp(p) = &open {
                        p.reclaim(&mut self.pool);
                    }
                    return Err(e);
                }
            }
        };
        Ok((open, info, groups))
    }

    fn open_io(&mut self, config: &PortConfig) -> Result<(Open, PortInfo), PortError> {
        if config.ethertypes.len() > crate::bpf::redirect::MAX_ETHERTYPES {
            return Err(PortError::Config(format!("at most {} EtherTypes per port", crate::bpf::redirect::MAX_ETHERTYPES)));
        }
        let interface = Interface::lookup(&config.interface)?;
        let mut xdp = || -> Result<(Open, PortInfo), PortError> {
            let share = self.share();
            let mut next = self.next_socket;
            let filter = Filter { ethertypes: &config.ethertypes, neighbour_discovery_to_kernel: config.neighbour_discovery_to_kernel };
            let p = XdpPort::open(&mut self.pool, &interface, filter, config.xdp_mode, share, &mut next, config.busy_poll);
            self.next_socket = next;
            let p = p?;
            let info = PortInfo {
                interface: interface.clone(),
                backend: Backend::AfXdp,
                xdp_mode: Some(p.mode),
                zero_copy: p.zero_copy(),
                up: true,
                opened: 0,
            };
            Ok((Open::Xdp(p), info))
        };
        let packet = || -> Result<(Open, PortInfo), PortError> {
            let p = PacketPort::open(&interface, &config.ethertypes, config.qdisc)?;
            let info = PortInfo {
                interface: interface.clone(),
                backend: Backend::AfPacket,
                xdp_mode: None,
                zero_copy: false,
                up: true,
                opened: 0,
            };
            Ok((Open::Packet(p), info))
        };
        match config.backend {
            Some(Backend::AfXdp) => xdp(),
            Some(Backend::AfPacket) => packet(),
            None => xdp().or_else(|e| {
                tracing::info!("{}: no AF_XDP ({e}); AF_PACKET", interface.name);
                packet()
            }),
        }
    }

    /// Opens a port.
    ///
    /// # Errors
    /// No such interface; more EtherTypes than a port takes; the backend configured cannot open
    /// (or, with none configured, neither can).
    pub fn open(&mut self, config: PortConfig) -> Result<PortId, PortError> {
        let (open, mut info, groups) = self.open_backend(&config)?;
        info.opened = 1;
        self.slots.push(Slot { config, info, open: Some(open), groups, counters: PortCounters::default(), kernel_seen: [0; 4] });
        Ok(PortId(self.slots.len() - 1))
    }

    fn slot(&mut self, port: PortId) -> &mut Slot {
        &mut self.slots[port.0]
    }

    /// Appends up to `max` frames received on `port` to `out`; how many (0 while it is down).
    ///
    /// # Panics
    /// A `port` not of this set.
    pub fn receive(&mut self, port: PortId, out: &mut Vec<Frame>, max: usize) -> usize {
        let slot = &mut self.slots[port.0];
        match &mut slot.open {
            Some(Open::Xdp(p)) => p.receive(&mut self.pool, out, max, &mut slot.counters),
            Some(Open::Packet(p)) => p.receive(&mut self.pool, out, max, &mut slot.counters),
            None => 0,
        }
    }

    /// Queues `frame` to go out of `port` (sent by [`PortSet::flush`]). A frame that cannot go
    /// (ring full, too long, a port that is down, shorter than an Ethernet header) goes back to
    /// the pool and is counted as dropped.
    ///
    /// # Errors
    /// Why the frame was dropped.
    ///
    /// # Panics
    /// A `port` not of this set.
    pub fn transmit(&mut self, port: PortId, frame: Frame) -> Result<(), DropReason> {
        let slot = &mut self.slots[port.0];
        let why = if frame.len() < ETHER_HEADER_BYTES {
            DropReason::TooShort
        } else if frame.len() > slot.info.interface.mtu as usize + ETHER_HEADER_BYTES {
            DropReason::TooLong
        } else {
            match &mut slot.open {
                Some(Open::Xdp(p)) => return p.transmit(&mut self.pool, frame, &mut slot.counters),
                Some(Open::Packet(p)) => return p.transmit(&mut self.pool, frame, &mut slot.counters),
                None => DropReason::LinkDown,
            }
        };
        slot.counters.drop(why);
        self.pool.free(frame);
        Err(why)
    }

    /// Sends what every port has queued and takes back the frames the kernel is done with. A
    /// port whose kick fails is checked at once (its interface may be gone).
    pub fn flush(&mut self) {
        let mut failed = false;
        for slot in &mut self.slots {
            let r = match &mut slot.open {
                Some(Open::Xdp(p)) => p.flush(&mut self.pool),
                Some(Open::Packet(p)) => p.flush(),
                None => Ok(()),
            };
            if let Err(e) = r {
                tracing::debug!("{}: transmit refused: {e}", slot.info.interface.name);
                failed = true;
            }
        }
        if failed {
            self.maintain();
        }
    }

    /// The descriptors that become readable when `port` has frames to receive (none while it
    /// is down), for a program that waits on its own poll; they change when the port reopens
    /// ([`PortEvent::Up`]).
    ///
    /// # Panics
    /// A `port` not of this set.
    pub fn fds(&self, port: PortId) -> Vec<RawFd> {
        match &self.slots[port.0].open {
            Some(Open::Xdp(p)) => p.fds().collect(),
            Some(Open::Packet(p)) => vec![p.fd()],
            None => Vec::new(),
        }
    }

    /// Bytes `port` was given to send that the kernel has not sent yet: its AF_XDP transmit
    /// ring's frames not yet completed, or its AF_PACKET socket's queue (`SIOCOUTQ`; with
    /// [`PortConfig::qdisc`], what waits in the queueing discipline). For congestion marking.
    ///
    /// # Panics
    /// A `port` not of this set.
    pub fn tx_backlog(&self, port: PortId) -> u64 {
        match &self.slots[port.0].open {
            Some(Open::Xdp(p)) => p.tx_backlog(),
            Some(Open::Packet(p)) => p.tx_backlog(),
            None => 0,
        }
    }

    /// Whether a port holds frames queued that the kernel has not taken yet (its driver or send
    /// buffer was full): flush again soon, the kernel does not say when it has room.
    pub fn unsent(&self) -> bool {
        self.slots.iter().any(|s| match &s.open {
            Some(Open::Xdp(p)) => p.unsent(),
            Some(Open::Packet(p)) => p.unsent(),
            None => false,
        })
    }

    /// Waits until a port of the set has frames to receive or `timeout` passes (a port that is
    /// down is not waited on); whether one has.
    pub fn wait(&self, timeout: std::time::Duration) -> bool {
        self.wait_with(&[], timeout)
    }

    /// [`PortSet::wait`], also waking when one of `others` (sockets of the caller's: a UDP
    /// tunnel's) is readable.
    pub fn wait_with(&self, others: &[RawFd], timeout: std::time::Duration) -> bool {
        let fds: Vec<RawFd> = self.ports().flat_map(|p| self.fds(p)).chain(others.iter().copied()).collect();
        crate::poll::readable(&fds, timeout)
    }

    fn close(&mut self, i: usize) {
        let slot = &mut self.slots[i];
        if let Some(Open::Xdp(p)) = &slot.open {
            p.reclaim(&mut self.pool);
        }
        Self::read_kernel_drops(slot);
        slot.open = None;
        slot.groups = None;
        slot.kernel_seen = [0; 4];
        slot.info.up = false;
        slot.counters.link_downs += 1;
    }

    /// Follows the interfaces (see the module overview); the changes made.
    pub fn maintain(&mut self) -> Vec<PortEvent> {
        let mut events = Vec::new();
        for i in 0..self.slots.len() {
            let now = Interface::index_of(&self.slots[i].config.interface);
            let slot = &self.slots[i];
            if slot.open.is_some() {
                if now != Some(slot.info.interface.index) {
                    tracing::info!("{}: interface gone; port closed", slot.info.interface.name);
                    self.close(i);
                    events.push(PortEvent::Down(PortId(i)));
                }
            } else if now.is_some() {
                let config = slot.config.clone();
                match self.open_backend(&config) {
                    Ok((open, mut info, groups)) => {
                        tracing::info!("{}: interface back; port open again", info.interface.name);
                        let slot = &mut self.slots[i];
                        info.opened = slot.info.opened + 1;
                        slot.open = Some(open);
                        slot.groups = groups;
                        slot.info = info;
                        slot.counters.link_ups += 1;
                        events.push(PortEvent::Up(PortId(i)));
                    }
                    Err(e) => tracing::debug!("{}: not open yet: {e}", config.interface),
                }
            }
        }
        events
    }

    fn read_kernel_drops(slot: &mut Slot) {
        match &slot.open {
            Some(Open::Xdp(p)) => {
                for (k, (why, total)) in p.kernel_drops().into_iter().enumerate() {
                    slot.counters.add(why, total.saturating_sub(slot.kernel_seen[k]));
                    slot.kernel_seen[k] = slot.kernel_seen[k].max(total);
                }
            }
            Some(Open::Packet(p)) => slot.counters.add(DropReason::KernelRxRingFull, p.kernel_drops()),
            None => {}
        }
    }

    /// `port`'s counters, the kernel's drops read now.
    ///
    /// # Panics
    /// A `port` not of this set.
    pub fn counters(&mut self, port: PortId) -> PortCounters {
        let slot = self.slot(port);
        Self::read_kernel_drops(slot);
        slot.counters.clone()
    }

    /// What `port` is now.
    ///
    /// # Panics
    /// A `port` not of this set.
    pub fn info(&self, port: PortId) -> &PortInfo {
        &self.slots[port.0].info
    }
}
