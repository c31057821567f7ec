//! Ethernet faces: a peer (a unicast face) or a group (a multicast face: every NDN node on the
//! segment that joined it), reached through the port of its interface ([`super::ether_port`]),
//! which every face on that interface shares. A received frame finds its face by (port, group)
//! or (port, sender); the face's send queue, for congestion marking, is the port's transmit
//! backlog.

use std::collections::HashMap;
use std::io;

use mio::Registry;

use super::ether_port::EtherPort;
use super::{LinkSettings, Links, Transport};
use crate::counters::DropReason;
use crate::face::ether::Mac;
use crate::face::uri::FaceUri;
use crate::face::FaceId;

/// An Ethernet face's place: its interface's port, and its peer's or group's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EtherLink {
    /// The port's index in [`EtherLinks::ports`].
    pub port: usize,
    /// The peer's or the group's address.
    pub peer: Mac,
}

/// The Ethernet ports and the faces on them.
#[derive(Debug, Default)]
pub struct EtherLinks {
    /// One port per interface with Ethernet faces (`None`: a port whose interface went away;
    /// its place, and poll token, are taken by the next port opened).
    pub ports: Vec<Option<EtherPort>>,
    /// The faces by (port, peer or group address).
    pub by_peer: HashMap<(usize, Mac), FaceId>,
}

impl EtherLinks {
    /// Port `port`, if it is open.
    pub fn port(&self, port: usize) -> Option<&EtherPort> {
        self.ports.get(port).and_then(Option::as_ref)
    }

    /// Port `port`, if it is open, to receive and send on.
    pub fn port_mut(&mut self, port: usize) -> Option<&mut EtherPort> {
        self.ports.get_mut(port).and_then(Option::as_mut)
    }

    /// Whether a port holds frames its kernel queue had no room for yet.
    pub fn unsent(&self) -> bool {
        self.ports.iter().flatten().any(EtherPort::unsent)
    }
}

impl Transport for EtherLink {
    fn attach(&mut self, id: FaceId, links: &mut Links, _registry: &Registry) -> io::Result<()> {
        links.ether.by_peer.insert((self.port, self.peer), id);
        Ok(())
    }

    fn detach(&mut self, _id: FaceId, links: &mut Links, _registry: &Registry) {
        links.ether.by_peer.remove(&(self.port, self.peer));
    }

    fn is_multi_access(&self) -> bool {
        self.peer.is_multicast()
    }

    fn ad_hoc(&self, settings: &LinkSettings) -> bool {
        self.peer.is_multicast() && settings.ether_multicast_ad_hoc
    }

    /// The interface's (its port's payload MTU).
    fn mtu(&self, links: &Links) -> usize {
        links.ether.port(self.port).map_or(0, EtherPort::mtu)
    }

    fn max_mtu(&self, links: &Links) -> Option<usize> {
        Some(self.mtu(links))
    }

    fn idle_timeout_ms(&self, settings: &LinkSettings) -> Option<u64> {
        Some(settings.ether_idle_timeout_ms)
    }

    /// A unicast face's; a multicast face is the configuration's.
    fn persistency_changes(&self, _uri: &FaceUri) -> bool {
        !self.peer.is_multicast()
    }

    fn queued(&mut self, links: &mut Links) -> u64 {
        links.ether.port(self.port).map_or(0, EtherPort::backlog)
    }

    fn send(&mut self, _id: FaceId, links: &mut Links, piece: &[u8]) -> Result<(), DropReason> {
        let port = links.ether.port_mut(self.port).ok_or(DropReason::FaceGone)?;
        port.send(self.peer, piece).map_err(|_| DropReason::SendBufferFull)
    }
}
