//! The IP router on real interfaces: the pipeline ([`IpRouter`]) on `nexthop-io` ports, the
//! kernel's tables mirrored into it, a TAP beside each port for what the fast path leaves to
//! the kernel. One thread runs it all ([`PortRouter::run`]).
//!
//! # Overview
//! - Each routed interface is an AF_XDP port taking IPv4 and IPv6 (ARP, IPv6 neighbour
//!   discovery and every other EtherType stay with the kernel on the interface itself); the
//!   ports share one frame pool, so a frame forwarded from one port to another is never copied
//!   in user space. AF_PACKET is refused: its sockets see copies, and the kernel would forward
//!   every packet a second time.
//! - Each port has a TAP (`nh-<interface>`, the port's Ethernet address) that the frames the
//!   pipeline hands the kernel are written to: the kernel delivers what is for it (the
//!   router's addresses, any interface's: Linux is a weak host), answers TTL expiry with ICMP
//!   time exceeded, and forwards what has no neighbour yet, resolving it (which the mirror
//!   then brings to the fast path). Its replies leave by the interfaces themselves (the
//!   kernel's sends are not the XDP program's). Reverse-path filtering is turned off on the
//!   TAPs (a packet from the port's subnet arrives on the TAP), as is IPv6 address
//!   generation (no router solicitations of their own).
//! - The mirror ([`Mirror`]) is fed by [`KernelTables`] between batches: routes and neighbours
//!   the kernel's tables gain or lose reach the pipeline within 16 busy turns, or 10 ms when
//!   idle. An
//!   overrun of the kernel's notifications, or a port's interface made again (a new index),
//!   starts the FIB and neighbours again from a fresh dump.
//! - The kernel's forwarding must be on (`net.ipv4.ip_forward`, `net.ipv6.conf.all.forwarding`)
//!   for the TAP's packets it forwards; the router does not change it.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use netlink_packet_route::RouteNetlinkMessage;
use nexthop_io::{Backend, Frame, Interface, PortConfig, PortError, PortEvent, PortId, PortSet, Tap, XdpMode};

use super::header::{ETHERTYPE_IPV4, ETHERTYPE_IPV6};
use super::mirror::{Change, Mirror};
use super::netlink::{KernelTables, Received};
use super::route::Port;
use super::router::{Decision, IpRouter};
use super::{Counters, Fib};
use crate::frames::PoolFrames;

/// Frames received from a port at a time.
pub const BATCH: usize = 64;
/// Busy turns between two reads of the kernel's tables (each a system call).
const SYNC_EVERY: u32 = 16;
/// Frames in the shared pool.
const POOL_FRAMES: u32 = 16384;

/// How the router's ports open.
#[derive(Debug, Clone)]
pub struct RouterConfig {
    /// The interfaces routed.
    pub interfaces: Vec<String>,
    /// AF_XDP's mode (`None`: native where the driver has it).
    pub xdp_mode: Option<XdpMode>,
}

/// One routed interface.
#[derive(Debug)]
struct RoutedPort {
    id: PortId,
    interface: Interface,
    tap: Tap,
}

/// What the router's own I/O counted (the pipeline counts its decisions).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IoCounters {
    /// Frames the pipeline forwarded that the port could not take (ring full, too long, down).
    pub transmit_drops: u64,
    /// Frames for the kernel its TAP did not take (queue full).
    pub tap_drops: u64,
    /// Frames the kernel sent out of a TAP (not expected: dropped).
    pub from_tap: u64,
    /// Changes from the kernel's tables the FIB refused.
    pub refused_changes: u64,
    /// Times the kernel's tables were read again from scratch (its notifications overran, or a
    /// port's interface was made again).
    pub resyncs: u64,
}

/// The IP router on its ports.
#[derive(Debug)]
pub struct PortRouter {
    set: PortSet,
    ports: Vec<RoutedPort>,
    router: IpRouter,
    mirror: Mirror,
    tables: KernelTables,
    io: IoCounters,
    /// Changes from the kernel's tables applied so far (shared: see [`PortRouter::applied`]).
    applied: Arc<AtomicU64>,
    frames: Vec<Frame>,
    decisions: Vec<Decision>,
    messages: Vec<RouteNetlinkMessage>,
    changes: Vec<Change>,
    tap_buf: Vec<u8>,
}

/// Writes `value` to the sysctl at `path` (under `/proc/sys`, of the calling thread's network
/// namespace).
fn sysctl(path: &str, value: &str) -> io::Result<()> {
    std::fs::write(format!("/proc/sys/{path}"), value)
}

impl PortRouter {
    /// Opens the ports, their TAPs and the kernel's tables, in the calling thread's network
    /// namespace, and starts the dump.
    ///
    /// # Errors
    /// A port, a TAP or the netlink socket could not open.
    pub fn open(config: &RouterConfig) -> Result<PortRouter, PortError> {
        let mut set = PortSet::new(POOL_FRAMES)?;
        let mut router = IpRouter::new(Fib::new());
        let mut mirror = Mirror::new();
        let mut ports = Vec::new();
        for (i, name) in config.interfaces.iter().enumerate() {
            let mut pc = PortConfig::new(name);
            pc.backend = Some(Backend::AfXdp);
            pc.xdp_mode = config.xdp_mode;
            pc.ethertypes = vec![ETHERTYPE_IPV4, ETHERTYPE_IPV6];
            pc.neighbour_discovery_to_kernel = true;
            let id = set.open(pc)?;
            let interface = set.info(id).interface.clone();
            let tap_name = format!("nh-{name}");
            let mut end = tap_name.len().min(libc::IFNAMSIZ - 1);
            while !tap_name.is_char_boundary(end) {
                end -= 1;
            }
            let tap_name = &tap_name[..end];
            let tap = Tap::open(tap_name, interface.mac)?;
            // No IPv6 address of its own (a best effort: a kernel without IPv6 has no file).
            let _ = sysctl(&format!("net/ipv6/conf/{tap_name}/addr_gen_mode"), "1");
            sysctl(&format!("net/ipv4/conf/{tap_name}/rp_filter"), "0")
                .map_err(|e| PortError::os(format!("rp_filter of {tap_name}"), e))?;
            tap.up()?;
            let port = Port(i as u32);
            router.neighbours_mut().set_port(port, interface.mac);
            mirror.set_port(interface.index, port);
            tracing::info!("routing on {name} (AF_XDP {:?}), its kernel path {tap_name}", set.info(id).xdp_mode);
            ports.push(RoutedPort { id, interface, tap });
        }
        let mut tables = KernelTables::open().map_err(|e| PortError::os("the kernel's routing tables (rtnetlink)", e))?;
        tables.dump().map_err(|e| PortError::os("dumping the kernel's routes", e))?;
        Ok(PortRouter {
            set,
            ports,
            router,
            mirror,
            tables,
            io: IoCounters::default(),
            applied: Arc::new(AtomicU64::new(0)),
            frames: Vec::with_capacity(BATCH),
            decisions: Vec::with_capacity(BATCH),
            messages: Vec::new(),
            changes: Vec::new(),
            tap_buf: vec![0; 1 << 16],
        })
    }

    /// The pipeline (its FIB, neighbours and counters).
    pub fn router(&self) -> &IpRouter {
        &self.router
    }

    /// The pipeline's decisions so far.
    pub fn counters(&self) -> &Counters {
        self.router.counters()
    }

    /// What the router's I/O counted.
    pub fn io_counters(&self) -> &IoCounters {
        &self.io
    }

    /// Each routed interface's port counters (frames, bytes, drops by reason, the kernel's
    /// among them: what its AF_XDP socket lost before the router saw it), in configuration
    /// order.
    pub fn port_counters(&mut self) -> Vec<(String, nexthop_io::PortCounters)> {
        self.ports.iter().map(|p| (p.interface.name.clone(), self.set.counters(p.id))).collect()
    }

    /// A counter of the changes from the kernel's tables handled (applied, or refused and counted;
    /// routes and neighbours, the dump's included), readable from other threads while the router
    /// runs: how far the FIB has followed a batch of route changes.
    pub fn applied(&self) -> Arc<AtomicU64> {
        self.applied.clone()
    }

    /// Whether the first dump of the kernel's tables is still coming in.
    pub fn syncing(&self) -> bool {
        self.tables.dumping()
    }

    /// Routes until `stop` is set.
    ///
    /// # Errors
    /// The netlink socket failed.
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<()> {
        let mut busy_turns = 0;
        while !stop.load(Ordering::Relaxed) {
            if self.turn() > 0 || self.set.unsent() {
                // Under load the kernel's tables are read every few batches, not every one.
                busy_turns += 1;
                if busy_turns % SYNC_EVERY == 0 {
                    self.sync()?;
                }
                continue;
            }
            self.sync()?;
            self.set.wait(Duration::from_millis(10));
            self.drain_taps();
            self.maintain()?;
        }
        Ok(())
    }

    /// Follows the interfaces: a port whose interface is made again (another index) is the
    /// mirror's under its new index, and the kernel's tables are read again for its routes.
    ///
    /// # Errors
    /// The netlink socket failed.
    fn maintain(&mut self) -> io::Result<()> {
        let mut moved = false;
        for event in self.set.maintain() {
            let PortEvent::Up(id) = event else { continue };
            let Some(p) = self.ports.iter_mut().find(|p| p.id == id) else { continue };
            let interface = self.set.info(id).interface.clone();
            moved |= interface.index != p.interface.index;
            tracing::info!("routing on {} again (index {})", interface.name, interface.index);
            p.interface = interface;
        }
        if moved {
            self.resync()?;
        }
        Ok(())
    }

    /// Applies what the kernel's tables changed since the last call.
    ///
    /// # Errors
    /// The netlink socket failed.
    pub fn sync(&mut self) -> io::Result<()> {
        self.messages.clear();
        if self.tables.receive(&mut self.messages)? == Received::Overrun {
            self.resync()?;
            return Ok(());
        }
        self.changes.clear();
        for m in &self.messages {
            self.mirror.apply(m, &mut self.changes);
        }
        for c in &self.changes {
            if let Err(e) = self.router.apply(*c) {
                self.io.refused_changes += 1;
                tracing::warn!("the FIB refused {c:?}: {e}");
            }
        }
        self.applied.fetch_add(self.changes.len() as u64, Ordering::Release);
        Ok(())
    }

    /// Starts again from an empty FIB, no neighbour, a new mirror and a fresh dump.
    fn resync(&mut self) -> io::Result<()> {
        self.io.resyncs += 1;
        tracing::warn!("reading the kernel's tables again");
        *self.router.fib_mut() = Fib::new();
        self.router.neighbours_mut().clear_neighbours();
        let mut mirror = Mirror::new();
        for (i, p) in self.ports.iter().enumerate() {
            mirror.set_port(p.interface.index, Port(i as u32));
        }
        self.mirror = mirror;
        self.tables = KernelTables::open()?;
        self.tables.dump()
    }

    /// One batch from each port through the pipeline; the frames received.
    pub fn turn(&mut self) -> usize {
        let mut received = 0;
        for i in 0..self.ports.len() {
            self.frames.clear();
            let n = self.set.receive(self.ports[i].id, &mut self.frames, BATCH);
            if n == 0 {
                continue;
            }
            received += n;
            let mut batch = PoolFrames { pool: self.set.pool(), frames: &mut self.frames };
            self.router.route_batch(&mut batch, &mut self.decisions);
            for (frame, &d) in self.frames.drain(..).zip(&self.decisions) {
                match d {
                    Decision::Transmit(Port(p)) => match self.ports.get(p as usize) {
                        Some(out) => {
                            if self.set.transmit(out.id, frame).is_err() {
                                self.io.transmit_drops += 1;
                            }
                        }
                        None => {
                            self.io.transmit_drops += 1;
                            self.set.pool().free(frame);
                        }
                    },
                    Decision::Kernel(_) => {
                        if self.ports[i].tap.send(self.set.pool_ref().bytes(&frame)).is_err() {
                            self.io.tap_drops += 1;
                        }
                        self.set.pool().free(frame);
                    }
                    Decision::Drop(_) => self.set.pool().free(frame),
                }
            }
        }
        self.set.flush();
        received
    }

    /// Reads (and drops) what the kernel sent out of the TAPs.
    fn drain_taps(&mut self) {
        for p in &self.ports {
            while let Ok(Some(_)) = p.tap.receive(&mut self.tap_buf) {
                self.io.from_tap += 1;
            }
        }
    }
}
