//! A face: its link ([`super::link`], the face registry), what it is (URI, scope, persistency,
//! link type), its NDNLPv2 state (fragment sequence, reliability, congestion marking, MTU), a
//! permanent TCP face's reconnection, and its counters.

use crate::face::reconnect::Reconnect;
use crate::face::uri::FaceUri;
use crate::face::MAX_PACKET_BYTES;
use crate::face::{FaceId, FaceScope, LinkType, Persistency, FLAG_CONGESTION_MARKING, FLAG_LP_RELIABILITY};
use crate::lp::congestion::Marker;
use crate::lp::reliability::Reliability;
use crate::mgmt::dataset::{FaceCounts, FaceStatus};
use crate::pipeline::outbox::PacketKind;

use super::link::Link;

/// A face.
#[derive(Debug)]
pub struct Face {
    /// Id.
    pub id: FaceId,
    /// Remote FaceUri.
    pub uri: FaceUri,
    /// Local FaceUri.
    pub local_uri: String,
    /// Scope.
    pub scope: FaceScope,
    /// Persistency.
    pub persistency: Persistency,
    /// Socket.
    pub link: Link,
    /// Counters.
    pub counts: FaceCounts,
    /// Last packet received (ms).
    pub last_rx_ms: u64,
    /// IncomingFaceId requested.
    pub local_fields: bool,
    /// The NDNLPv2 Sequence of the next fragment sent (UDP faces cut packets above the MTU).
    pub lp_sequence: u64,
    /// Congestion marking of a stream face's send queue.
    pub marker: Marker,
    /// NDNLPv2 link reliability, when turned on (`faces/create` or `faces/update`, Flags bit 1).
    pub reliability: Option<Box<Reliability>>,
    /// The largest packet sent whole; larger ones leave as NDNLPv2 fragments (0: a stream face,
    /// no limit). A UDP face starts at `faces.udp_mtu`, an Ethernet face at its interface's;
    /// `faces/create` and `faces/update` can override it ([`Face::mtu_for`]).
    pub mtu: usize,
    /// A permanent TCP face whose connection was lost: its attempts to connect again
    /// ([`crate::face::reconnect`]); `None` while it is up.
    pub down: Option<Reconnect>,
    /// When a down face last came up again, and the time given to the attempt that connected
    /// it (ms): lost again sooner, it goes on backing off ([`Reconnect::resume`]).
    pub up_again: Option<(u64, u64)>,
    /// A multicast face of NFD's ad hoc link type (`faces.udp_multicast_ad_hoc`,
    /// `faces.ether_multicast_ad_hoc`): packets may leave on it where they came from.
    pub ad_hoc: bool,
}

impl Face {
    /// Its link type: multi-access on a multicast link, ad hoc where configured so.
    pub fn link_type(&self) -> LinkType {
        match (self.ad_hoc, self.link.transport().is_multi_access()) {
            (true, _) => LinkType::AdHoc,
            (false, true) => LinkType::MultiAccess,
            (false, false) => LinkType::PointToPoint,
        }
    }

    /// Whether the face outlives its connection and connects again when it is lost: a
    /// permanent TCP face, as NFD's are (a WebSocket face's URI is `wsclient://`).
    pub fn reconnects(&self) -> bool {
        self.persistency == Persistency::Permanent && matches!(self.uri, FaceUri::Tcp(_))
    }

    /// The MTU this face takes when management overrides it with `mtu`, as NFD's does: a
    /// datagram face only (a stream face has none to override), at least
    /// [`crate::lp::fragmentation::MIN_MTU`] (64 fragments must carry the largest packet) and at
    /// most what its link carries ([`Transport::max_mtu`]: an Ethernet face its interface's, a
    /// UDP face the largest UDP payload). `None`: it cannot.
    pub fn mtu_for(&self, mtu: u64, max: Option<usize>) -> Option<usize> {
        let mtu = usize::try_from(mtu).ok().filter(|&m| m >= crate::lp::fragmentation::MIN_MTU)?;
        Some(mtu.min(max?))
    }

    /// Counts a packet received.
    pub fn count_in(&mut self, kind: PacketKind, bytes: usize, now_ms: u64) {
        let c = &mut self.counts;
        c.in_bytes += bytes as u64;
        match kind {
            PacketKind::Interest => c.in_interests += 1,
            PacketKind::Data => c.in_data += 1,
            PacketKind::Nack => c.in_nacks += 1,
        }
        self.last_rx_ms = now_ms;
    }

    /// Counts a packet sent.
    pub fn count_out(&mut self, kind: PacketKind, bytes: usize) {
        let c = &mut self.counts;
        c.out_bytes += bytes as u64;
        match kind {
            PacketKind::Interest => c.out_interests += 1,
            PacketKind::Data => c.out_data += 1,
            PacketKind::Nack => c.out_nacks += 1,
        }
    }

    /// The face as `faces/list` shows it.
    pub fn status(&self) -> FaceStatus {
        FaceStatus {
            face_id: self.id,
            uri: self.uri.to_string(),
            local_uri: self.local_uri.clone(),
            scope: self.scope.code(),
            persistency: self.persistency.code(),
            link_type: self.link_type().code(),
            flags: u64::from(self.local_fields)
                | if self.reliability.is_some() { FLAG_LP_RELIABILITY } else { 0 }
                | if self.marker.enabled { FLAG_CONGESTION_MARKING } else { 0 },
            marking: (self.marker.interval_ns, self.marker.threshold),
            // As NFD shows it: a face without a limit, or above it, at the largest packet.
            mtu: if self.mtu == 0 { MAX_PACKET_BYTES } else { self.mtu.min(MAX_PACKET_BYTES) } as u64,
            counters: self.counts,
        }
    }
}
