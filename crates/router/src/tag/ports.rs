//! The TagNet router on real interfaces: the pipeline ([`TagRouter`]) on `nexthop-io` ports and
//! UDP tunnels, one thread ([`PortTagRouter::run`]).
//!
//! # Overview
//! - Router ports `0..interfaces` are AF_XDP ports taking TagNet's EtherType only (the kernel
//!   keeps every other frame: IP, ARP, the tunnels' UDP); they share one frame pool, so a
//!   packet forwarded from one to another is not copied in user space. A packet out of several
//!   ports goes out of the last Ethernet one as it is and out of the others as copies, each
//!   with that port's address as its Ethernet source.
//! - Router ports after them are UDP tunnels (a socket bound to the local address, connected to
//!   the remote): a datagram is one TagNet packet, with no Ethernet header. The pipeline sees
//!   it behind a blank one, so both kinds of port run the same code.
//! - Between batches the router's control plane runs ([`TagRouter::maintain`]) and its
//!   messages are sent. The thread sleeps in `poll(2)` on every port's sockets when none has
//!   anything, for at most 10 ms (the control plane's tick is 100 ms).

use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nexthop_io::{Backend, Frame, PortConfig, PortError, PortId, PortSet, XdpMode, MAX_FRAME_DATA};

use super::packet::{ether_header, ETHERTYPE, ETHER_BYTES};
use super::router::{Decision, TagRouter};
use crate::frames::PoolFrames;

/// Frames received from a port at a time.
pub const BATCH: usize = 256;
/// Frames in the shared pool.
const POOL_FRAMES: u32 = 16384;

/// A UDP tunnel: TagNet packets as datagrams between two addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tunnel {
    /// The address its socket is bound to.
    pub local: SocketAddr,
    /// The other end.
    pub remote: SocketAddr,
}

/// How the router's ports open.
#[derive(Debug, Clone, Default)]
pub struct TagPortsConfig {
    /// Ethernet interfaces: router ports `0..`.
    pub interfaces: Vec<String>,
    /// UDP tunnels: router ports after the interfaces.
    pub tunnels: Vec<Tunnel>,
    /// AF_XDP's mode (`None`: native where the driver has it).
    pub xdp_mode: Option<XdpMode>,
    /// Prefer busy polling on the interfaces (their receive work then runs in this thread's
    /// calls; see `nexthop_io::PortConfig::busy_poll`).
    pub busy_poll: bool,
}

impl TagPortsConfig {
    /// Router ports: interfaces and tunnels.
    pub fn ports(&self) -> usize {
        self.interfaces.len() + self.tunnels.len()
    }
}

/// What the router's own I/O counted (the pipeline counts its decisions).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagIoCounters {
    /// Packets the pipeline sent to a port that could not take them (ring full, down, a
    /// tunnel's send failing), copies among them.
    pub transmit_drops: u64,
    /// Copies not made: the pool was empty.
    pub no_frame_for_copy: u64,
    /// Datagrams received on tunnels.
    pub tunnel_received: u64,
    /// Datagrams sent on tunnels.
    pub tunnel_sent: u64,
}

/// The TagNet router on its ports.
#[derive(Debug)]
pub struct PortTagRouter {
    set: PortSet,
    ports: Vec<PortId>,
    macs: Vec<[u8; 6]>,
    tunnels: Vec<UdpSocket>,
    router: TagRouter,
    io: TagIoCounters,
    frames: Vec<Frame>,
    decisions: Vec<Decision>,
    datagrams: Vec<Vec<u8>>,
    copy: Vec<u8>,
}

impl PortTagRouter {
    /// Opens the ports in the calling thread's network namespace for `router`, whose ports
    /// must be the configuration's.
    ///
    /// # Errors
    /// A port or tunnel could not open, or the counts differ.
    pub fn open(config: &TagPortsConfig, router: TagRouter) -> Result<PortTagRouter, PortError> {
        let mut set = PortSet::new(POOL_FRAMES)?;
        let (mut ports, mut macs) = (Vec::new(), Vec::new());
        for name in &config.interfaces {
            let mut pc = PortConfig::new(name);
            pc.backend = Some(Backend::AfXdp);
            pc.xdp_mode = config.xdp_mode;
            pc.ethertypes = vec![ETHERTYPE];
            pc.busy_poll = config.busy_poll;
            let id = set.open(pc)?;
            tracing::info!("tagnet on {name} (AF_XDP {:?})", set.info(id).xdp_mode);
            ports.push(id);
            macs.push(set.info(id).interface.mac);
        }
        let mut tunnels = Vec::new();
        for t in &config.tunnels {
            let failed = |what: &str| {
                let what = format!("{what} the tunnel {} → {}", t.local, t.remote);
                move |e| PortError::os(what, e)
            };
            let s = UdpSocket::bind(t.local).map_err(failed("binding"))?;
            s.connect(t.remote).map_err(failed("connecting"))?;
            s.set_nonblocking(true).map_err(failed("setting up"))?;
            tunnels.push(s);
        }
        Ok(PortTagRouter {
            set,
            ports,
            macs,
            tunnels,
            router,
            io: TagIoCounters::default(),
            frames: Vec::with_capacity(BATCH),
            decisions: Vec::with_capacity(BATCH),
            datagrams: Vec::new(),
            copy: Vec::new(),
        })
    }

    /// The pipeline (its control plane and counters).
    pub fn router(&self) -> &TagRouter {
        &self.router
    }

    /// What the router's I/O counted.
    pub fn io_counters(&self) -> &TagIoCounters {
        &self.io
    }

    /// Routes until `stop` is set.
    pub fn run(&mut self, stop: &AtomicBool) {
        let fds: Vec<RawFd> = self.tunnels.iter().map(AsRawFd::as_raw_fd).collect();
        while !stop.load(Ordering::Relaxed) {
            let busy = self.turn() > 0 || self.set.unsent();
            self.control();
            if !busy {
                self.set.wait_with(&fds, Duration::from_millis(10));
                self.set.maintain();
            }
        }
    }

    /// The control plane's turn: its tick, its messages sent.
    pub fn control(&mut self) {
        if let Err(e) = self.router.maintain(Instant::now()) {
            tracing::warn!("tagnet: the installed descriptors do not compile ({e}); the tables in force stay");
        }
        for (port, bytes) in self.router.take_outbox() {
            if port < self.ports.len() {
                let mut frame = ether_header(self.macs[port]);
                frame.extend_from_slice(&bytes);
                self.send_copy(port, &frame);
            } else {
                self.send_tunnel(port, &bytes);
            }
        }
        self.set.flush();
    }

    /// One batch from each port through the pipeline; the packets received.
    pub fn turn(&mut self) -> usize {
        let now = Instant::now();
        let mut received = 0;
        for i in 0..self.ports.len() {
            self.frames.clear();
            let n = self.set.receive(self.ports[i], &mut self.frames, BATCH);
            if n == 0 {
                continue;
            }
            received += n;
            let mut batch = PoolFrames { pool: self.set.pool(), frames: &mut self.frames };
            self.router.route_batch(now, &mut batch, |_| i, &mut self.decisions);
            let mut frames = std::mem::take(&mut self.frames);
            let decisions = std::mem::take(&mut self.decisions);
            for (frame, &d) in frames.drain(..).zip(&decisions) {
                match d {
                    Decision::Out(mask) => self.out_frame(mask, frame),
                    Decision::Local | Decision::Drop(_) => self.set.pool().free(frame),
                }
            }
            (self.frames, self.decisions) = (frames, decisions);
        }
        for t in 0..self.tunnels.len() {
            received += self.turn_tunnel(now, t);
        }
        self.set.flush();
        received
    }

    /// A batch of datagrams from tunnel `t`, each behind a blank Ethernet header.
    fn turn_tunnel(&mut self, now: Instant, t: usize) -> usize {
        let mut datagrams = std::mem::take(&mut self.datagrams);
        datagrams.resize_with(BATCH, Vec::new);
        let mut n = 0;
        while n < BATCH {
            // A blank Ethernet header, then room for a datagram (grown back only past one
            // that was received: an empty turn writes nothing).
            let d = &mut datagrams[n];
            d.resize(ETHER_BYTES + MAX_FRAME_DATA as usize, 0);
            d[12..14].copy_from_slice(&ETHERTYPE.to_be_bytes());
            match self.tunnels[t].recv(&mut d[ETHER_BYTES..]) {
                Ok(len) => {
                    d.truncate(ETHER_BYTES + len);
                    n += 1;
                }
                // WouldBlock ends the batch; ECONNREFUSED (the other end not there yet) too.
                Err(_) => break,
            }
        }
        if n > 0 {
            self.io.tunnel_received += n as u64;
            let port = self.ports.len() + t;
            self.router.route_batch(now, &mut datagrams[..n], |_| port, &mut self.decisions);
            let decisions = std::mem::take(&mut self.decisions);
            for (d, &decision) in datagrams.iter().zip(&decisions) {
                if let Decision::Out(mask) = decision {
                    self.send_each(ports_of(mask), d);
                }
            }
            self.decisions = decisions;
        }
        self.datagrams = datagrams;
        n
    }

    /// A pool frame out of every port of `mask`: tunnels get its packet, all Ethernet ports but
    /// the last a copy, the last the frame itself.
    fn out_frame(&mut self, mask: u64, mut frame: Frame) {
        let ethernet = mask & low_bits(self.ports.len());
        let last = (ethernet != 0).then(|| 63 - ethernet.leading_zeros() as usize);
        if mask != ethernet || ethernet.count_ones() > 1 {
            self.copy.clear();
            self.copy.extend_from_slice(self.set.pool_ref().bytes(&frame));
        }
        let copy = std::mem::take(&mut self.copy);
        self.send_each(ports_of(mask).filter(|&p| Some(p) != last), &copy);
        self.copy = copy;
        match last {
            Some(p) => {
                self.set.pool().bytes_mut(&mut frame)[6..12].copy_from_slice(&self.macs[p]);
                self.transmit(p, frame);
            }
            None => self.set.pool().free(frame),
        }
    }

    /// `frame` out of each of `ports`: a copy out of an Ethernet port, its packet out of a
    /// tunnel.
    fn send_each(&mut self, ports: impl Iterator<Item = usize>, frame: &[u8]) {
        for p in ports {
            if p < self.ports.len() {
                self.send_copy(p, frame);
            } else {
                self.send_tunnel(p, &frame[ETHER_BYTES..]);
            }
        }
    }

    /// A copy of `frame` out of Ethernet port `p`, from its address.
    fn send_copy(&mut self, p: usize, frame: &[u8]) {
        match self.set.pool().alloc_copy(frame) {
            Some(mut copy) => {
                self.set.pool().bytes_mut(&mut copy)[6..12].copy_from_slice(&self.macs[p]);
                self.transmit(p, copy);
            }
            None => self.io.no_frame_for_copy += 1,
        }
    }

    fn transmit(&mut self, p: usize, frame: Frame) {
        if self.set.transmit(self.ports[p], frame).is_err() {
            self.io.transmit_drops += 1;
        }
    }

    /// `packet` out of router port `p`, a tunnel.
    fn send_tunnel(&mut self, p: usize, packet: &[u8]) {
        match self.tunnels.get(p - self.ports.len()).map(|s| s.send(packet)) {
            Some(Ok(_)) => self.io.tunnel_sent += 1,
            _ => self.io.transmit_drops += 1,
        }
    }
}

/// A mask of ports `0..n`.
fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// The ports of a decision's mask, lowest first.
fn ports_of(mask: u64) -> impl Iterator<Item = usize> {
    (0..64).filter(move |p| mask >> p & 1 == 1)
}
