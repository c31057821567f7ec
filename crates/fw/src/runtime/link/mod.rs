//! The face registry: every kind of link a face can have, and the one interface the runtime
//! uses to tell them apart.
//!
//! # Overview
//! - A face's [`Link`] is one of four kinds, each in its own module: a [`stream`] socket of its
//!   own (Unix, TCP, WebSocket), a remote endpoint on the shared [`udp`] socket, a LAN's
//!   [`multicast`] group, an [`ether`] peer or group through its interface's port.
//! - What the kinds share lives in [`Links`]: the UDP socket with its send batch and its index of
//!   faces by remote, the Ethernet ports with theirs, the stream faces with bytes to write, and
//!   the settings that give new faces their MTU, link type and idle timeout ([`LinkSettings`]).
//! - Each kind implements [`Transport`]: being indexed and polled when its face is made and
//!   forgotten when it closes, its link type, MTU and idle timeout, whether management may
//!   change its persistency, and sending — how much its send queue holds (for congestion
//!   marking), whether it has room, and putting one piece (a packet, or an NDNLPv2 fragment of
//!   one) on the wire. The runtime's faces ([`super::faces`]) do everything else (fragmenting,
//!   link reliability, marking, counting) the same for every kind.
//! - [`Link::transport`] is the one place the kinds are told apart. Adding a kind is a module
//!   here, its variant and its `transport` arm, and its shared parts in [`Links`]; reading its
//!   sockets is the runtime's loop, making its faces the configuration's or management's.

pub mod ether;
pub mod ether_port;
pub mod multicast;
pub mod stream;
pub mod udp;

use std::io;

use mio::Registry;

use crate::conf::config::FacesConfig;
use crate::counters::DropReason;
use crate::face::uri::FaceUri;
use crate::face::FaceId;

pub use ether::{EtherLink, EtherLinks};
pub use multicast::MulticastLink;
pub use stream::{ReadOutcome, Stream, StreamSocket};
pub use udp::{UdpLink, UdpLinks};

/// How a face reaches its peer.
#[derive(Debug)]
pub enum Link {
    /// A stream socket of its own.
    Stream(Box<Stream>),
    /// A remote endpoint on the shared UDP socket.
    Udp(UdpLink),
    /// A multicast group on one interface: every node of the LAN that joined it.
    Multicast(Box<MulticastLink>),
    /// An Ethernet peer (a unicast face) or group (a multicast face), through the port of its
    /// interface.
    Ether(EtherLink),
}

impl Link {
    /// The link's kind, as the runtime uses it.
    pub fn transport(&self) -> &dyn Transport {
        match self {
            Link::Stream(l) => &**l,
            Link::Udp(l) => l,
            Link::Multicast(l) => &**l,
            Link::Ether(l) => l,
        }
    }

    /// The link's kind, to send on and to index.
    pub fn transport_mut(&mut self) -> &mut dyn Transport {
        match self {
            Link::Stream(l) => &mut **l,
            Link::Udp(l) => l,
            Link::Multicast(l) => &mut **l,
            Link::Ether(l) => l,
        }
    }
}

/// What every kind of link does for its face.
pub trait Transport {
    /// Makes face `id` reachable: indexed by its remote, or its socket polled (token `id`).
    ///
    /// # Errors
    /// The socket could not be registered with the poll.
    fn attach(&mut self, id: FaceId, links: &mut Links, registry: &Registry) -> io::Result<()>;

    /// Forgets face `id`, closing: what [`Transport::attach`] did, undone.
    fn detach(&mut self, id: FaceId, links: &mut Links, registry: &Registry);

    /// Whether the link reaches many nodes at once (NFD's multi-access LinkType): no Nack is
    /// sent on it, and link reliability stays off.
    fn is_multi_access(&self) -> bool {
        false
    }

    /// Whether a new face on the link is of NFD's ad hoc link type (packets may leave on it
    /// where they came from).
    fn ad_hoc(&self, _settings: &LinkSettings) -> bool {
        false
    }

    /// The MTU a new face on the link starts with (0: none, a stream).
    fn mtu(&self, links: &Links) -> usize;

    /// The most management may override the MTU to (`None`: the link has no MTU).
    fn max_mtu(&self, links: &Links) -> Option<usize>;

    /// How long an on-demand face on the link lives without receiving (`None`: until its
    /// peer closes it).
    fn idle_timeout_ms(&self, _settings: &LinkSettings) -> Option<u64> {
        None
    }

    /// Whether management may change the persistency of the face to `uri` on this link.
    fn persistency_changes(&self, uri: &FaceUri) -> bool;

    /// Whether a packet of `bytes` fits in what the face may hold unsent.
    fn has_room(&self, _bytes: usize, _settings: &LinkSettings) -> bool {
        true
    }

    /// The bytes the face's send queue holds now (its own and the kernel's), for congestion
    /// marking; asked only of a face that marks.
    fn queued(&mut self, links: &mut Links) -> u64;

    /// Puts `piece` (a packet, or one NDNLPv2 fragment of one) on face `id`'s way out.
    ///
    /// # Errors
    /// Why it was dropped: the socket's buffer was full, or what the link goes through is gone.
    fn send(&mut self, id: FaceId, links: &mut Links, piece: &[u8]) -> Result<(), DropReason>;
}

/// The settings of `faces` the links follow, reloaded with the configuration.
#[derive(Debug, Clone)]
pub struct LinkSettings {
    /// The most a stream face holds unsent (`faces.send_buffer_bytes`).
    pub send_limit: usize,
    /// Largest datagram sent on a UDP face (`faces.udp_mtu`); larger packets go as NDNLPv2
    /// fragments (0: never).
    pub udp_mtu: usize,
    /// New UDP multicast faces are ad hoc (`faces.udp_multicast_ad_hoc`).
    pub udp_multicast_ad_hoc: bool,
    /// New Ethernet multicast faces are ad hoc (`faces.ether_multicast_ad_hoc`).
    pub ether_multicast_ad_hoc: bool,
    /// An on-demand UDP face closes after this long without receiving (`faces.udp_idle_timeout_ms`).
    pub udp_idle_timeout_ms: u64,
    /// An on-demand Ethernet face closes after this long without receiving
    /// (`faces.ether_idle_timeout_ms`).
    pub ether_idle_timeout_ms: u64,
}

impl LinkSettings {
    /// The settings of `faces`.
    pub fn of(faces: &FacesConfig) -> Self {
        LinkSettings {
            send_limit: faces.send_buffer_bytes,
            udp_mtu: faces.udp_mtu,
            udp_multicast_ad_hoc: faces.udp_multicast_ad_hoc,
            ether_multicast_ad_hoc: faces.ether_multicast_ad_hoc,
            udp_idle_timeout_ms: faces.udp_idle_timeout_ms,
            ether_idle_timeout_ms: faces.ether_idle_timeout_ms,
        }
    }
}

/// What the links of every face share.
#[derive(Debug)]
pub struct Links {
    /// The UDP socket the unicast UDP faces share.
    pub udp: UdpLinks,
    /// The Ethernet ports.
    pub ether: EtherLinks,
    /// The stream faces with bytes to write out this turn.
    pub dirty: Vec<FaceId>,
    /// The settings new faces take.
    pub settings: LinkSettings,
}
