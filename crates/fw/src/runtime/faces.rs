//! The I/O thread's faces: every face by id with what their links share ([`super::link`]), and
//! what is the same for every kind of link — making and closing faces, a permanent TCP face's
//! reconnection, link reliability, MTU overrides, and sending: NDNLPv2 fragments for packets
//! over the face's MTU, congestion marks where its send queue runs long, drops counted by
//! reason.

use std::collections::HashMap;
use std::io;

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};

use super::face::Face;
use super::link::{Link, Links, Stream, StreamSocket};
use super::Forwarding;
use crate::counters::{DropCounters, DropReason};
use crate::face::local_addresses::LocalAddresses;
use crate::face::reconnect::Reconnect;
use crate::face::uri::FaceUri;
use crate::face::{FaceId, FaceScope, LinkType, Persistency, MANAGEMENT_FACE};
use crate::lp::congestion::{with_mark, Marker};
use crate::lp::fragmentation::{fragment, Reassembler};
use crate::lp::reliability::{sequenced, Reliability};
use crate::mgmt::dataset::{FaceCounts, FaceStatus};
use crate::mgmt::events::FaceEventKind;
use crate::pipeline::outbox::PacketKind;
use crate::pipeline::Control;

/// Packets held for the manager at most between two turns of the loop.
const MAX_TO_MANAGER: usize = 1024;

/// What became of a TCP face's connection ([`Faces::on_connect_event`]).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Connection {
    /// Not made yet.
    Pending,
    /// Made: the face is up.
    Made,
    /// Refused or failed (the error).
    Failed(String),
}

/// Faces and the sockets they share.
#[derive(Debug)]
pub(super) struct Faces {
    pub(super) faces: HashMap<FaceId, Face>,
    /// What the faces' links share: the UDP socket, the Ethernet ports, the settings
    /// ([`super::link`], the face registry).
    pub(super) links: Links,
    pub(super) next_id: FaceId,
    /// Fragments received, waiting for the rest of their packet (every face).
    pub(super) reassembler: Reassembler,
    /// Fragments being sent.
    pub(super) fragments: Vec<Vec<u8>>,
    /// New faces mark congestion (`faces.congestion_marking`).
    pub(super) congestion_marking: bool,
    /// The addresses a TCP face is local between (`faces.tcp_local`).
    pub(super) tcp_local: LocalAddresses,
    /// Now, in ns since the runtime started (set each loop turn), for congestion marking.
    pub(super) now_ns: u64,
    /// A packet being marked.
    pub(super) marked: Vec<u8>,
    /// Faces made and closed since the manager last heard (for `faces/events`).
    pub(super) events: Vec<(FaceEventKind, FaceStatus)>,
    /// The faces with link reliability on.
    pub(super) reliable: Vec<FaceId>,
    /// The permanent TCP faces that are down, connecting again ([`crate::face::reconnect`]).
    pub(super) down: Vec<FaceId>,
    /// The TCP faces whose connection is being made: new ones, and down ones trying again.
    pub(super) connecting: Vec<FaceId>,
    /// What forwarding sent to the management face, for the manager: the certificates and
    /// command answers it waits for, and Interests for the certificates it serves.
    pub(super) to_manager: Vec<Vec<u8>>,
}

impl Faces {
    /// Adds a face; one that reaches beyond this host is made known to the forwarding shards.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn add(
        &mut self,
        registry: &Registry,
        uri: FaceUri,
        local_uri: String,
        persistency: Persistency,
        mut link: Link,
        now_ms: u64,
        forwarding: &mut Forwarding,
    ) -> io::Result<FaceId> {
        let id = self.next_id;
        self.next_id += 1;
        link.transport_mut().attach(id, &mut self.links, registry)?;
        let scope = match uri {
            // Both ends' addresses decide (the remote one twice while the local one is not
            // known yet: a connection being made).
            FaceUri::Tcp(remote) => {
                let local = match crate::sys::interfaces::parse_face_uri(&local_uri) {
                    Ok(FaceUri::Tcp(local)) => local.ip(),
                    _ => remote.ip(),
                };
                self.tcp_local.scope(local, remote.ip())
            }
            _ => uri.scope(),
        };
        let mtu = link.transport().mtu(&self.links);
        let ad_hoc = link.transport().ad_hoc(&self.links.settings);
        tracing::info!(face = id, %uri, "face up");
        if scope == FaceScope::NonLocal {
            forwarding.apply(Control::NonLocalFace(id));
        }
        self.faces.insert(
            id,
            Face {
                id,
                uri,
                local_uri,
                scope,
                persistency,
                link,
                counts: FaceCounts::default(),
                last_rx_ms: now_ms,
                local_fields: false,
                lp_sequence: 0,
                marker: Marker::new(self.congestion_marking, self.links.settings.send_limit as u64),
                reliability: None,
                mtu,
                down: None,
                up_again: None,
                ad_hoc,
            },
        );
        if let Some(f) = self.faces.get(&id) {
            if f.link_type() != LinkType::PointToPoint {
                forwarding.apply(Control::LinkType(id, f.link_type()));
            }
            self.events.push((FaceEventKind::Created, f.status()));
        }
        Ok(id)
    }

    /// Removes face `id` (false: no such face), recording the event for `faces/events`.
    pub(super) fn remove(&mut self, registry: &Registry, id: FaceId) -> bool {
        let Some(mut f) = self.faces.remove(&id) else { return false };
        self.events.push((FaceEventKind::Destroyed, f.status()));
        f.link.transport_mut().detach(id, &mut self.links, registry);
        self.reassembler.face_down(id);
        self.reliable.retain(|&r| r != id);
        self.down.retain(|&d| d != id);
        self.connecting.retain(|&c| c != id);
        tracing::info!(face = id, uri = %f.uri, "face closed");
        true
    }

    /// Takes face `id`, whose connection closed or failed, down instead of closing it, if it is
    /// a face that reconnects ([`Face::reconnects`]): it keeps its id, routes and counters,
    /// what is sent to it is dropped (`face-down`) until it is up again, and its first attempt
    /// to connect starts now. False: it does not reconnect (it is to be closed).
    pub(super) fn go_down(&mut self, registry: &Registry, id: FaceId, now_ms: u64) -> bool {
        let Some(f) = self.faces.get_mut(&id) else { return false };
        if !f.reconnects() {
            return false;
        }
        if f.down.is_some() {
            return true;
        }
        let early = f.up_again.filter(|&(up_ms, wait_ms)| Reconnect::lost_early(up_ms, wait_ms, now_ms));
        let reconnect = match early {
            Some((_, wait_ms)) => Reconnect::resume(now_ms, wait_ms),
            None => Reconnect::start(now_ms),
        };
        f.down = Some(reconnect);
        tracing::warn!(face = id, uri = %f.uri, "connection lost: the permanent face is down, connecting again");
        self.events.push((FaceEventKind::Down, f.status()));
        self.down.push(id);
        self.reassembler.face_down(id);
        if early.is_none() {
            self.connect_again(registry, id);
        } else if let Link::Stream(stream) = &mut f.link {
            // The next attempt starts when this wait is over.
            let _ = registry.deregister(stream.socket.source());
        }
        true
    }

    /// Starts an attempt to connect down face `id` again: a new socket in place of the old,
    /// its buffers empty (what was queued went with the connection, as in NFD), registered to
    /// hear when the connection is made or refused ([`Faces::on_connect_event`]).
    fn connect_again(&mut self, registry: &Registry, id: FaceId) {
        let Some(f) = self.faces.get_mut(&id) else { return };
        let (FaceUri::Tcp(remote), Link::Stream(stream)) = (&f.uri, &mut f.link) else { return };
        // An earlier attempt's socket (or the lost connection's) may be registered still.
        let _ = registry.deregister(stream.socket.source());
        self.connecting.retain(|&c| c != id);
        match TcpStream::connect(*remote) {
            Ok(socket) => {
                let _ = socket.set_nodelay(true);
                **stream = Stream::new(StreamSocket::Tcp(socket));
                match registry.register(stream.socket.source(), Token(id as usize), Interest::READABLE | Interest::WRITABLE) {
                    Ok(()) => self.connecting.push(id),
                    Err(e) => tracing::debug!(face = id, "reconnection not registered: {e}"),
                }
            }
            // Tried again when this attempt's time is up.
            Err(e) => tracing::debug!(face = id, %remote, "reconnection failed at once: {e}"),
        }
    }

    /// Waits for TCP face `id`'s connection, just started: until it is made, the face's socket
    /// is watched for it ([`Faces::on_connect_event`]) and what is sent to it waits in its
    /// buffer.
    pub(super) fn await_connection(&mut self, registry: &Registry, id: FaceId) {
        let Some(Link::Stream(stream)) = self.faces.get_mut(&id).map(|f| &mut f.link) else { return };
        let _ = registry.reregister(stream.socket.source(), Token(id as usize), Interest::READABLE | Interest::WRITABLE);
        self.connecting.push(id);
    }

    /// A readiness event for connecting face `id`'s socket (a new face's first connection, or
    /// a down face's attempt to connect again): whether its connection is made — the face is
    /// up (a down one again, with its UP event) and may have packets to read and to send — or
    /// failed. A down face's failed attempt waits for its time to run out
    /// ([`Faces::retry_reconnects`]).
    pub(super) fn on_connect_event(&mut self, registry: &Registry, id: FaceId, now_ms: u64) -> Connection {
        let Some(f) = self.faces.get_mut(&id) else { return Connection::Pending };
        let Link::Stream(stream) = &mut f.link else { return Connection::Pending };
        let StreamSocket::Tcp(socket) = &stream.socket else { return Connection::Pending };
        match socket.take_error() {
            Ok(None) => {}
            Ok(Some(e)) | Err(e) => {
                tracing::debug!(face = id, uri = %f.uri, "connection failed: {e}");
                let _ = registry.deregister(stream.socket.source());
                self.connecting.retain(|&c| c != id);
                return Connection::Failed(e.to_string());
            }
        }
        // Not connected yet: the event was not the connection's.
        let Ok(_) = socket.peer_addr() else { return Connection::Pending };
        if let Ok(local) = socket.local_addr() {
            f.local_uri = FaceUri::Tcp(local).to_string();
        }
        stream.want_write = stream.pending() > 0;
        let interest = if stream.want_write { Interest::READABLE | Interest::WRITABLE } else { Interest::READABLE };
        let _ = registry.reregister(stream.socket.source(), Token(id as usize), interest);
        self.connecting.retain(|&c| c != id);
        if let Some(r) = f.down.take() {
            f.up_again = Some((now_ms, r.wait_ms()));
            let down_ms = now_ms.saturating_sub(r.down_since_ms);
            tracing::info!(face = id, uri = %f.uri, attempts = r.attempts, down_ms, "the permanent face is up again");
            self.events.push((FaceEventKind::Up, f.status()));
            self.down.retain(|&d| d != id);
        }
        Connection::Made
    }

    /// Starts the next attempt for each down face whose current attempt has had its time;
    /// the down faces no longer permanent (changed by `faces/update`), to be closed as NFD
    /// closes them.
    pub(super) fn retry_reconnects(&mut self, registry: &Registry, now_ms: u64) -> Vec<FaceId> {
        let mut close = Vec::new();
        for id in self.down.clone() {
            let Some(f) = self.faces.get_mut(&id) else { continue };
            if !f.reconnects() {
                close.push(id);
                continue;
            }
            let Some(r) = f.down.as_mut() else { continue };
            if r.attempt_over(now_ms) {
                r.next_attempt(now_ms);
                tracing::debug!(face = id, attempt = r.attempts, wait_ms = r.wait_ms(), "connecting the permanent face again");
                self.connect_again(registry, id);
            }
        }
        close
    }

    /// Turns link reliability on or off on face `id`; on a multi-access face it stays off (an
    /// Ack cannot tell which of the LAN's nodes received). The face's status after, or `None`
    /// if there is no such face.
    /// The MTU face `id` would take if overridden with `mtu` ([`Face::mtu_for`]: at most what
    /// its link carries).
    pub(super) fn mtu_for(&self, id: FaceId, mtu: u64) -> Option<usize> {
        let f = self.faces.get(&id)?;
        f.mtu_for(mtu, f.link.transport().max_mtu(&self.links))
    }

    /// Overrides face `id`'s MTU with `mtu`; its status, or `None` if it has none or cannot
    /// take that MTU.
    pub(super) fn override_mtu(&mut self, id: FaceId, mtu: u64) -> Option<FaceStatus> {
        let taken = self.mtu_for(id, mtu)?;
        let f = self.faces.get_mut(&id)?;
        f.mtu = taken;
        tracing::info!(face = id, mtu = taken, "MTU overridden");
        Some(f.status())
    }

    pub(super) fn set_reliability(&mut self, id: FaceId, on: bool) -> Option<FaceStatus> {
        let f = self.faces.get_mut(&id)?;
        let on = on && !f.link.transport().is_multi_access();
        if on != f.reliability.is_some() {
            f.reliability = on.then(|| Box::new(Reliability::new()));
            self.reliable.retain(|&r| r != id);
            if on {
                self.reliable.push(id);
            }
            tracing::info!(face = id, on, "link reliability");
        }
        Some(f.status())
    }

    /// Sends what link reliability has due on each face that has it (pieces whose Acks did not
    /// come, sent again; IDLE packets with Acks that found no packet to ride on), counting the
    /// packets it gave up. When it next has something due (ms), if ever.
    pub(super) fn poll_reliability(&mut self, drops: &DropCounters) -> Option<u64> {
        let now_ms = self.now_ns / 1_000_000;
        let mut next: Option<u64> = None;
        for &id in &self.reliable {
            let Some(f) = self.faces.get_mut(&id).filter(|f| f.down.is_none()) else { continue };
            let Some(r) = f.reliability.as_deref_mut() else { continue };
            if r.next_deadline().is_some_and(|at| at <= now_ms) {
                self.fragments.clear();
                for _ in 0..r.poll(now_ms, f.mtu, &mut self.fragments) {
                    drops.count(DropReason::RetxExhausted);
                }
                for piece in &self.fragments {
                    if let Err(why) = f.link.transport_mut().send(id, &mut self.links, piece) {
                        drops.count(why);
                    }
                }
            }
            if let Some(at) = r.next_deadline() {
                next = Some(next.map_or(at, |n| n.min(at)));
            }
        }
        next
    }

    /// Queues `bytes` (a packet of `kind`) on face `id`: into a stream face's send buffer
    /// (marked when its queue stays long), the UDP batch, or a multicast face's socket, cut
    /// into fragments over the UDP MTU; what cannot be queued is counted as a drop.
    pub(super) fn send(&mut self, drops: &DropCounters, id: FaceId, kind: PacketKind, bytes: &[u8]) {
        if id == MANAGEMENT_FACE {
            // A certificate the manager fetched, an answer to a propagation or readvertisement,
            // or an Interest for a certificate the manager serves.
            if self.to_manager.len() < MAX_TO_MANAGER {
                self.to_manager.push(bytes.to_vec());
            }
            return;
        }
        let Some(f) = self.faces.get_mut(&id) else {
            drops.count(DropReason::FaceGone);
            return;
        };
        if f.down.is_some() {
            drops.count(DropReason::FaceDown);
            return;
        }
        let link = f.link.transport_mut();
        if kind == PacketKind::Nack && link.is_multi_access() {
            // Never on a multi-access link (as NFD): it would tell the whole LAN.
            drops.count(DropReason::NackOnMultiAccess);
            return;
        }
        if !link.has_room(bytes.len(), &self.links.settings) {
            drops.count(DropReason::SendBufferFull);
            return;
        }
        let links = &mut self.links;
        let marked = marked_if_congested(&mut f.marker, self.now_ns, || link.queued(links), bytes, &mut self.marked);
        let lp = LinkLayer { sequence: &mut f.lp_sequence, reliability: f.reliability.as_deref_mut(), now_ms: self.now_ns / 1_000_000 };
        if let Err(why) = send_fitted(marked, f.mtu, lp, &mut self.fragments, |piece| link.send(id, links, piece)) {
            drops.count(why);
            return;
        }
        f.count_out(kind, bytes.len());
    }
}

/// A face's NDNLPv2 sending state: the Sequence counter its fragments (and, with reliability,
/// all its packets) take, and its link reliability if on.
struct LinkLayer<'a> {
    sequence: &'a mut u64,
    reliability: Option<&'a mut Reliability>,
    now_ms: u64,
}

/// Sends `bytes` through `send`, whole or, over `mtu` (0: no limit), as NDNLPv2 fragments cut
/// into `fragments`; with link reliability, always as sequenced LpPackets kept for
/// retransmission. Why not, as a drop reason.
fn send_fitted(
    bytes: &[u8],
    mtu: usize,
    lp: LinkLayer<'_>,
    fragments: &mut Vec<Vec<u8>>,
    mut send: impl FnMut(&[u8]) -> Result<(), DropReason>,
) -> Result<(), DropReason> {
    if let Some(reliability) = lp.reliability {
        fragments.clear();
        sequenced(bytes, mtu, lp.sequence, fragments)?;
        reliability.outgoing(lp.now_ms, fragments, mtu);
        fragments.iter().try_for_each(|piece| send(piece))
    } else if mtu == 0 || bytes.len() <= mtu {
        send(bytes)
    } else {
        fragments.clear();
        fragment(bytes, mtu, lp.sequence, fragments)?;
        fragments.iter().try_for_each(|piece| send(piece))
    }
}

/// `bytes`, or a copy with CongestionMark (in `marked`) when `marker` says so of `queued()`,
/// the bytes the kernel holds for the link (asked only with marking on) — NFD's rule for its
/// datagram transports, whose whole send queue is the socket's (an Ethernet port's: its
/// transmit backlog).
fn marked_if_congested<'a>(
    marker: &mut Marker,
    now_ns: u64,
    queued: impl FnOnce() -> u64,
    bytes: &'a [u8],
    marked: &'a mut Vec<u8>,
) -> &'a [u8] {
    if !marker.enabled || !marker.should_mark(now_ns, queued()) {
        return bytes;
    }
    marked.clear();
    with_mark(bytes, marked);
    marked
}
