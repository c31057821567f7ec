//! Faces as the forwarding core sees them: an id, a scope and how it came to be, and the
//! sans-I/O part of each transport kind. The sockets behind them live in `runtime` (and the
//! system calls in `sys`); the core only names faces.
//!
//! # Overview
//! - [`uri`]: where a face leads, as an NFD FaceUri.
//! - [`ether`]: Ethernet frames of NDN's EtherType; [`websocket`]: WebSocket framing and the
//!   HTTP upgrade.
//! - [`interface_rule`]: which interfaces a kind of face goes on; [`local_addresses`]: which
//!   TCP faces are local.
//! - [`reconnect`]: when a permanent TCP face tries to connect again.
//!
//! Face ids follow NFD: 0 is never a face, 1 is the management face (`internal://`), 255 the
//! null face, and faces with sockets count up from 256.

pub mod ether;
pub mod interface_rule;
pub mod local_addresses;
pub mod reconnect;
pub mod uri;
pub mod websocket;

/// The largest NDN packet a face carries (NFD's `MAX_NDN_PACKET_SIZE`).
pub const MAX_PACKET_BYTES: usize = 8800;

/// A face's id (NFD's FaceId).
pub type FaceId = u64;

/// The management face: Interests to `/localhost/nfd` go there and its answers come from it.
pub const MANAGEMENT_FACE: FaceId = 1;

/// The first id given to a face with a socket.
pub const FIRST_FACE_ID: FaceId = 256;

/// Face flag (FaceStatus, faces/create and faces/update): congestion marking is on (NFD's
/// CongestionMarkingEnabled, bit 2).
pub const FLAG_CONGESTION_MARKING: u64 = 4;
/// Face flag: NDNLPv2 link reliability is on (NFD's LpReliabilityEnabled, bit 1).
pub const FLAG_LP_RELIABILITY: u64 = 2;

/// Whether a face reaches only this host (`/localhost` packets may cross it) or the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaceScope {
    /// Unix socket or loopback peer.
    Local,
    /// Anything else.
    NonLocal,
}

impl FaceScope {
    /// NFD's FaceScope code.
    pub fn code(self) -> u64 {
        match self {
            FaceScope::NonLocal => 0,
            FaceScope::Local => 1,
        }
    }
}

/// How many nodes a face's link reaches (NFD's LinkType): it decides how a repeated nonce is
/// taken, whether Nacks are sent, and whether a packet may leave where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LinkType {
    /// One peer (a stream, a unicast datagram peer): the same nonce again from it is a
    /// retransmission, a loop is Nacked.
    #[default]
    PointToPoint,
    /// A LAN's multicast group: the same nonce again is a loop, dropped without a Nack, and no
    /// Nack is ever sent on it.
    MultiAccess,
    /// A multicast group on a wireless medium where neighbours may not hear each other: as
    /// multi-access, and a packet may leave on the face it came from.
    AdHoc,
}

impl LinkType {
    /// NFD's LinkType code.
    pub fn code(self) -> u64 {
        match self {
            LinkType::PointToPoint => 0,
            LinkType::MultiAccess => 1,
            LinkType::AdHoc => 2,
        }
    }
}

/// How long a face lives (NFD's FacePersistency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Persistency {
    /// Made by management or configuration; closed on a socket error.
    Persistent,
    /// Made because a peer showed up (an accepted stream, a datagram from a new endpoint);
    /// closed when the peer goes away or falls idle.
    OnDemand,
    /// Made by management or configuration; kept through socket errors.
    Permanent,
}

impl Persistency {
    /// NFD's FacePersistency code.
    pub fn code(self) -> u64 {
        match self {
            Persistency::Persistent => 0,
            Persistency::OnDemand => 1,
            Persistency::Permanent => 2,
        }
    }

    /// From NFD's code.
    pub fn from_code(code: u64) -> Option<Self> {
        match code {
            0 => Some(Persistency::Persistent),
            1 => Some(Persistency::OnDemand),
            2 => Some(Persistency::Permanent),
            _ => None,
        }
    }

    /// NFD's name for it (`nfdc`'s): `persistent`, `on-demand` or `permanent`.
    pub fn name(self) -> &'static str {
        match self {
            Persistency::Persistent => "persistent",
            Persistency::OnDemand => "on-demand",
            Persistency::Permanent => "permanent",
        }
    }

    /// From its name.
    pub fn from_name(name: &str) -> Option<Self> {
        [Persistency::Persistent, Persistency::OnDemand, Persistency::Permanent].into_iter().find(|p| p.name() == name)
    }
}
