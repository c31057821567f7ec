//! The port of an interface, shared by the Ethernet faces on it (the frame format is
//! `crate::face::ether`'s), on nexthop's packet I/O (`nexthop_io`).
//!
//! # Overview
//! - One [`nexthop_io::PortSet`] of one port per interface, taking NDN's EtherType only: every
//!   other frame stays with the kernel. AF_XDP (an XDP program redirecting 0x8624 to one socket
//!   per receive queue; native mode where the driver has it) unless `faces.ether_io` says
//!   `af-packet` or XDP cannot attach; then a TPACKET_V3 socket, which sends through the
//!   interface's queueing discipline, as NFD's pcap faces do (so traffic control shapes it).
//!   The interface joins the port's group while the port is open.
//! - The payload's MTU is the interface's, at most what a pool frame holds less the header; the
//!   runtime cuts larger packets into NDNLPv2 fragments to fit.
//! - [`EtherPort::receive`] copies a batch of received frames out of the pool (the pipeline
//!   takes packets as byte slices) and hands the frames back; [`EtherPort::take`] says what
//!   each is. [`EtherPort::send`] writes a frame into the pool and queues it;
//!   [`EtherPort::flush`], once a turn, sends what was queued.
//! - The port's descriptors are registered with the runtime's poll under one token; the port
//!   keeps the registration in step if the I/O layer reopens its sockets.
//! - Congestion marking reads [`EtherPort::backlog`]: the bytes handed to the kernel and not
//!   yet sent (AF_XDP's transmit ring, or the AF_PACKET socket's queue in the qdisc).

use std::io;
use std::ops::Range;
use std::os::fd::RawFd;

use nexthop_io::{Backend, PortConfig, PortError, PortId, PortSet, ETHER_HEADER_BYTES, MAX_FRAME_DATA};

use crate::face::ether::{parse_frame, put_header, Frame, Mac, Received, HEADER_BYTES, NDN_ETHERTYPE};
use crate::face::MAX_PACKET_BYTES;

/// Frames in a port's pool, in [`PortSet::FRAMES_PER_SOCKET`]s: one to send from, and one per
/// receive queue (each AF_XDP socket's fill ring) up to this many in all; an interface with more
/// queues shares them.
const POOL_SOCKETS: u32 = 8;

/// The most frames one [`EtherPort::receive`] takes.
pub const RECEIVE_BATCH: usize = 64;

/// Received frames, copied out of the pool: bytes and where each frame lies in them.
#[derive(Debug, Default)]
pub struct ReceivedFrames {
    bytes: Vec<u8>,
    frames: Vec<Range<usize>>,
}

impl ReceivedFrames {
    /// How many frames.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Frame `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        &self.bytes[self.frames[i].clone()]
    }
}

/// One interface's port, shared by the Ethernet faces on it.
#[derive(Debug)]
pub struct EtherPort {
    set: PortSet,
    port: PortId,
    interface: String,
    /// The interface's index: an interface made again under its name gets another.
    index: u32,
    own: Mac,
    group: Option<Mac>,
    mtu: usize,
    /// The descriptors registered with the poll, and the port's opening they belong to.
    registered: Option<(u64, Vec<RawFd>)>,
    /// The frames of a receive, before they are copied out (kept for its capacity).
    frames: Vec<nexthop_io::Frame>,
}

impl EtherPort {
    /// Opens the port of the interface named `interface`, of index `index` and address `own`,
    /// joining `group` if there is one; `backend`: `None` for AF_XDP where it attaches.
    ///
    /// # Errors
    /// A group that is not a multicast address, an MTU too small to carry a fragment, or the
    /// I/O layer's error (no such interface; `EPERM` without `CAP_NET_ADMIN`/`CAP_NET_RAW`;
    /// another program's XDP on the interface with `af-xdp` asked for).
    pub fn open(interface: &str, index: u32, own: Mac, group: Option<Mac>, backend: Option<Backend>) -> io::Result<EtherPort> {
        if let Some(group) = group.filter(|g| !g.is_multicast()) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{group} is not a multicast address")));
        }
        let config = PortConfig {
            backend,
            ethertypes: vec![NDN_ETHERTYPE],
            groups: group.map(|g| g.0).into_iter().collect(),
            qdisc: true,
            ..PortConfig::new(interface)
        };
        let queues = nexthop_io::Interface::lookup(interface).map_err(io_error)?.queues;
        let mut set = PortSet::new((queues + 1).min(POOL_SOCKETS) * PortSet::FRAMES_PER_SOCKET).map_err(io_error)?;
        let port = set.open(config).map_err(io_error)?;
        let info = set.info(port);
        if info.interface.index != index {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("{interface} was made again (index {})", info.interface.index)));
        }
        let mtu = (info.interface.mtu as usize).min(MAX_FRAME_DATA as usize - ETHER_HEADER_BYTES);
        if mtu < crate::lp::fragmentation::MIN_MTU {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{interface}'s MTU of {mtu} is too small for NDN")));
        }
        Ok(EtherPort {
            set,
            port,
            interface: interface.to_string(),
            index,
            own,
            group,
            mtu,
            registered: None,
            frames: Vec::with_capacity(RECEIVE_BATCH),
        })
    }

    /// The interface's name.
    pub fn interface(&self) -> &str {
        &self.interface
    }

    /// The interface's index.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The multicast group it joined, if any.
    pub fn group(&self) -> Option<Mac> {
        self.group
    }

    /// The largest packet one frame carries.
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// What moves its frames: `af-xdp (native)`, `af-xdp (generic)` or `af-packet`.
    pub fn backend(&self) -> String {
        let info = self.set.info(self.port);
        match info.xdp_mode {
            Some(mode) => format!("{} ({})", info.backend.name(), mode.name()),
            None => info.backend.name().to_string(),
        }
    }

    /// The LocalUri of its faces, as NFD shows it: `dev://<interface>`.
    pub fn local_uri(&self) -> String {
        format!("dev://{}", self.interface)
    }

    /// Registers the port's descriptors with `registry` under `token`.
    ///
    /// # Errors
    /// The registration refused.
    pub fn register(&mut self, registry: &mio::Registry, token: mio::Token) -> io::Result<()> {
        let fds = self.set.fds(self.port);
        for fd in &fds {
            registry.register(&mut mio::unix::SourceFd(fd), token, mio::Interest::READABLE)?;
        }
        self.registered = Some((self.set.info(self.port).opened, fds));
        Ok(())
    }

    /// Takes the port's descriptors out of `registry` (those of this opening: a socket the I/O
    /// layer closed left the poll by itself, and its number may be another's now).
    pub fn deregister(&mut self, registry: &mio::Registry) {
        if let Some((opened, fds)) = self.registered.take() {
            if opened == self.set.info(self.port).opened {
                for fd in &fds {
                    let _ = registry.deregister(&mut mio::unix::SourceFd(fd));
                }
            }
        }
    }

    /// Appends up to [`RECEIVE_BATCH`] received frames to `out` (emptied first); whether more
    /// may wait.
    pub fn receive(&mut self, out: &mut ReceivedFrames) -> bool {
        out.bytes.clear();
        out.frames.clear();
        let n = self.set.receive(self.port, &mut self.frames, RECEIVE_BATCH);
        for f in self.frames.drain(..) {
            let at = out.bytes.len();
            out.bytes.extend_from_slice(self.set.pool_ref().bytes(&f));
            out.frames.push(at..out.bytes.len());
            self.set.pool().free(f);
        }
        n == RECEIVE_BATCH
    }

    /// What a frame the port received is to it (`None`: not its, [`Frame::NotOurs`]). A
    /// packet over the packet limit is [`Received::Oversize`].
    pub fn take(&self, frame: &[u8]) -> Option<Received> {
        Some(match parse_frame(frame, self.own, self.group) {
            Frame::NotOurs => return None,
            Frame::Packet { packet, .. } if packet.len() > MAX_PACKET_BYTES => Received::Oversize,
            Frame::Packet { from, to, packet } => Received::Packet { at: HEADER_BYTES..HEADER_BYTES + packet.len(), from, to },
            Frame::Malformed => Received::Malformed,
        })
    }

    /// Queues `packet` (at most [`EtherPort::mtu`] bytes) to `to` (the group or a peer) in one
    /// frame, sent by the next [`EtherPort::flush`].
    ///
    /// # Errors
    /// `WouldBlock` when no frame is free or the transmit ring is full; `InvalidInput` for a
    /// packet over the MTU.
    pub fn send(&mut self, to: Mac, packet: &[u8]) -> io::Result<()> {
        if packet.len() > self.mtu {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a packet over the MTU"));
        }
        let pool = self.set.pool();
        let Some(mut frame) = pool.alloc() else { return Err(io::ErrorKind::WouldBlock.into()) };
        if let Err(e) = pool.set_len(&mut frame, HEADER_BYTES + packet.len()) {
            pool.free(frame);
            return Err(io_error(e));
        }
        if let Some((header, body)) = pool.bytes_mut(&mut frame).split_first_chunk_mut::<HEADER_BYTES>() {
            put_header(header, to, self.own);
            body.copy_from_slice(packet);
        }
        self.set.transmit(self.port, frame).map_err(|_| io::Error::from(io::ErrorKind::WouldBlock))
    }

    /// Sends what was queued, takes back what the kernel sent, and registers the port's new
    /// descriptors with `registry` if the I/O layer reopened it.
    pub fn flush(&mut self, registry: &mio::Registry, token: mio::Token) {
        self.set.flush();
        let opened = self.set.info(self.port).opened;
        if self.registered.as_ref().is_some_and(|(at, _)| *at != opened) {
            if let Err(e) = self.register(registry, token) {
                tracing::warn!("{}: registering the reopened port: {e}", self.interface);
            }
        }
    }

    /// Whether frames wait that the kernel did not take yet: flush again soon.
    pub fn unsent(&self) -> bool {
        self.set.unsent()
    }

    /// Bytes handed to the kernel and not yet sent, for congestion marking.
    pub fn backlog(&self) -> u64 {
        self.set.tx_backlog(self.port)
    }
}

/// The backend `faces.ether_io` names (`None`: either, AF_XDP first); `None` outside
/// [`crate::conf::config::ETHER_IO`].
pub fn backend_of(ether_io: &str) -> Option<Option<Backend>> {
    match ether_io {
        "auto" => Some(None),
        "af-xdp" => Some(Some(Backend::AfXdp)),
        "af-packet" => Some(Some(Backend::AfPacket)),
        _ => None,
    }
}

/// The I/O layer's error as an `io::Error` of its kind, with its whole message.
fn io_error(e: PortError) -> io::Error {
    let kind = match &e {
        PortError::Os { source, .. } => source.kind(),
        PortError::NoSuchInterface(_) => io::ErrorKind::NotFound,
        PortError::Config(_) | PortError::FrameTooLong { .. } => io::ErrorKind::InvalidInput,
    };
    io::Error::new(kind, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value the configuration takes names a backend choice; nothing else does.
    #[test]
    fn each_ether_io_value_names_a_backend() {
        for io in crate::conf::config::ETHER_IO {
            assert!(backend_of(io).is_some(), "{io}");
        }
        assert_eq!(backend_of("af-xdp"), Some(Some(Backend::AfXdp)));
        assert_eq!(backend_of("auto"), Some(None));
        assert_eq!(backend_of("AF_XDP"), None);
    }

    /// Received frames keep their bounds.
    #[test]
    fn received_frames_are_read_back_each_whole() {
        let mut r = ReceivedFrames::default();
        for f in [&b"abc"[..], b"", b"defg"] {
            let at = r.bytes.len();
            r.bytes.extend_from_slice(f);
            r.frames.push(at..r.bytes.len());
        }
        assert_eq!((r.len(), r.get(0), r.get(1), r.get(2)), (3, &b"abc"[..], &b""[..], &b"defg"[..]));
    }
}
