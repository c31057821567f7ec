//! The I/O thread's faces: every face by id, the UDP socket the unicast UDP faces share with
//! its index by remote address, the Ethernet ports with their index by peer, and sending — each
//! face's send buffer, UDP datagrams batched for `sendmmsg`, NDNLPv2 fragments for packets over
//! the link's MTU, congestion marks on every face whose send queue can be measured.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

use mio::net::{TcpStream, UdpSocket};
use mio::{Interest, Registry, Token};

use super::ether_port::EtherPort;
use super::face::{Face, Link, Stream, StreamSocket};
use super::Forwarding;
use crate::counters::{DropCounters, DropReason};
use crate::face::ether::Mac;
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
use crate::sys::socket_queue;
use crate::sys::udp_batch::SendBatch;

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
    pub(super) by_udp_remote: HashMap<SocketAddr, FaceId>,
    /// The Ethernet ports, one per interface with Ethernet faces (`None`: a port whose
    /// interface went away; its place, and token, are taken by the next port opened).
    pub(super) ether_ports: Vec<Option<EtherPort>>,
    /// The Ethernet faces by (port, peer or group address).
    pub(super) by_ether_peer: HashMap<(usize, Mac), FaceId>,
    pub(super) udp: Option<UdpSocket>,
    pub(super) udp_local: Option<SocketAddr>,
    /// Whether the UDP socket is dual-stack: its faces then keep an IPv4 peer IPv4-mapped (the
    /// socket's form, in their `Link::Udp` and in `by_udp_remote`).
    pub(super) udp_dual: super::listen::Dual,
    /// Datagrams to send, flushed with `sendmmsg` after each receive batch and each loop turn.
    pub(super) udp_out: SendBatch,
    /// What the UDP socket's kernel send queue held when the first datagram of `udp_out` was
    /// queued (read then only if a face marks congestion): with `udp_out`, the UDP faces' queue.
    pub(super) udp_kernel_queued: u64,
    pub(super) next_id: FaceId,
    pub(super) dirty: Vec<FaceId>,
    pub(super) send_limit: usize,
    /// Largest datagram sent on a UDP face; larger packets go as NDNLPv2 fragments (0: never).
    pub(super) udp_mtu: usize,
    /// Fragments received, waiting for the rest of their packet (every face).
    pub(super) reassembler: Reassembler,
    /// Fragments being sent.
    pub(super) fragments: Vec<Vec<u8>>,
    /// New faces mark congestion (`faces.congestion_marking`).
    pub(super) congestion_marking: bool,
    /// The addresses a TCP face is local between (`faces.tcp_local`).
    pub(super) tcp_local: LocalAddresses,
    /// New UDP multicast faces are ad hoc (`faces.udp_multicast_ad_hoc`).
    pub(super) udp_multicast_ad_hoc: bool,
    /// New Ethernet multicast faces are ad hoc (`faces.ether_multicast_ad_hoc`).
    pub(super) ether_multicast_ad_hoc: bool,
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
    /// Whether an Ethernet port holds frames its kernel queue had no room for yet.
    pub(super) fn ether_unsent(&self) -> bool {
        self.ether_ports.iter().flatten().any(EtherPort::unsent)
    }

    /// Ethernet port `port`, if it is open.
    pub(super) fn ether_port(&self, port: usize) -> Option<&EtherPort> {
        self.ether_ports.get(port).and_then(Option::as_ref)
    }

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
        match &mut link {
            Link::Stream(s) => registry.register(s.socket.source(), Token(id as usize), Interest::READABLE)?,
            Link::Multicast(m) => registry.register(m.source(), Token(id as usize), Interest::READABLE)?,
            Link::Ether { port, peer } => {
                self.by_ether_peer.insert((*port, *peer), id);
            }
            Link::Udp(a) => {
                self.by_udp_remote.insert(*a, id);
            }
        }
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
        let mtu = self.link_mtu(&link);
        let ad_hoc = match &link {
            Link::Multicast(_) => self.udp_multicast_ad_hoc,
            Link::Ether { peer, .. } => peer.is_multicast() && self.ether_multicast_ad_hoc,
            Link::Stream(_) | Link::Udp(_) => false,
        };
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
                marker: Marker::new(self.congestion_marking, self.send_limit as u64),
                kernel_queued: 0,
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
        match &mut f.link {
            Link::Stream(s) => {
                let _ = registry.deregister(s.socket.source());
            }
            Link::Udp(a) => {
                self.by_udp_remote.remove(a);
            }
            Link::Multicast(m) => {
                let _ = registry.deregister(m.source());
            }
            Link::Ether { port, peer } => {
                self.by_ether_peer.remove(&(*port, *peer));
            }
        }
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
    /// The MTU a face on `link` starts with: `faces.udp_mtu` over UDP, the interface's over
    /// Ethernet, none (0) on a stream.
    fn link_mtu(&self, link: &Link) -> usize {
        match link {
            Link::Udp(_) | Link::Multicast(_) => self.udp_mtu,
            Link::Ether { port, .. } => self.ether_port(*port).map_or(0, EtherPort::mtu),
            Link::Stream(_) => 0,
        }
    }

    /// The MTU face `id` would take if overridden with `mtu` ([`Face::mtu_for`]; an Ethernet
    /// face at most its interface's).
    pub(super) fn mtu_for(&self, id: FaceId, mtu: u64) -> Option<usize> {
        let f = self.faces.get(&id)?;
        f.mtu_for(mtu, self.link_mtu(&f.link))
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
        let on = on && !f.link.is_multi_access();
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
                    let sent = match &mut f.link {
                        Link::Stream(s) => {
                            if s.pending() == 0 {
                                self.dirty.push(id);
                            }
                            s.queue(piece);
                            Ok(())
                        }
                        Link::Udp(remote) => {
                            self.udp_out.push(piece, Some(*remote));
                            Ok(())
                        }
                        Link::Multicast(m) => m.send(piece),
                        Link::Ether { port, peer } => {
                            self.ether_ports.get_mut(*port).and_then(Option::as_mut).map_or(Ok(()), |p| p.send(*peer, piece))
                        }
                    };
                    if sent.is_err() {
                        drops.count(DropReason::SendBufferFull);
                    }
                }
            }
            if let Some(at) = r.next_deadline() {
                next = Some(next.map_or(at, |n| n.min(at)));
            }
        }
        next
    }

    /// Sends the UDP datagrams batched so far; those the socket refuses are counted as drops.
    pub(super) fn flush_udp(&mut self, drops: &DropCounters) {
        let Some(sock) = self.udp.as_ref() else { return };
        if !self.udp_out.is_empty() {
            for _ in 0..self.udp_out.flush(sock.as_raw_fd()) {
                drops.count(DropReason::SendBufferFull);
            }
        }
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
        let now_ms = self.now_ns / 1_000_000;
        match &mut f.link {
            Link::Stream(s) => {
                if s.pending() + bytes.len() > self.send_limit {
                    drops.count(DropReason::SendBufferFull);
                    return;
                }
                if s.pending() == 0 {
                    self.dirty.push(id);
                    // The first packet since the face's queue was written out: what the kernel
                    // still holds now (the face may have been idle since it was last looked at).
                    if f.marker.enabled {
                        f.kernel_queued = socket_queue::unsent_bytes(s.socket.raw_fd()).unwrap_or(0);
                    }
                }
                let bytes = if f.marker.should_mark(self.now_ns, s.pending() as u64 + f.kernel_queued) {
                    self.marked.clear();
                    with_mark(bytes, &mut self.marked);
                    &self.marked[..]
                } else {
                    bytes
                };
                let queue = |piece: &[u8]| {
                    s.queue(piece);
                    Ok(())
                };
                let lp = LinkLayer { sequence: &mut f.lp_sequence, reliability: f.reliability.as_deref_mut(), now_ms };
                if let Err(why) = send_fitted(bytes, 0, lp, &mut self.fragments, queue) {
                    drops.count(why);
                    return;
                }
            }
            link if kind == PacketKind::Nack && link.is_multi_access() => {
                // Never on a multi-access link (as NFD): it would tell the whole LAN.
                drops.count(DropReason::NackOnMultiAccess);
                return;
            }
            Link::Multicast(m) => {
                let queued = || socket_queue::unsent_bytes(m.send_fd()).unwrap_or(0);
                let bytes = marked_if_congested(&mut f.marker, self.now_ns, queued, bytes, &mut self.marked);
                let lp = LinkLayer { sequence: &mut f.lp_sequence, reliability: f.reliability.as_deref_mut(), now_ms };
                if let Err(why) = send_fitted(bytes, f.mtu, lp, &mut self.fragments, |p| m.send(p)) {
                    drops.count(why);
                    return;
                }
            }
            Link::Ether { port, peer } => {
                let Some(p) = self.ether_ports.get_mut(*port).and_then(Option::as_mut) else { return };
                let bytes = marked_if_congested(&mut f.marker, self.now_ns, || p.backlog(), bytes, &mut self.marked);
                let lp = LinkLayer { sequence: &mut f.lp_sequence, reliability: f.reliability.as_deref_mut(), now_ms };
                if let Err(why) = send_fitted(bytes, f.mtu, lp, &mut self.fragments, |piece| p.send(*peer, piece)) {
                    drops.count(why);
                    return;
                }
            }
            Link::Udp(remote) => {
                let Some(sock) = self.udp.as_ref() else { return };
                let bytes = if f.marker.enabled {
                    if self.udp_out.is_empty() {
                        // The first datagram since the batch was flushed: what the kernel holds now.
                        self.udp_kernel_queued = socket_queue::unsent_bytes(sock.as_raw_fd()).unwrap_or(0);
                    }
                    let queued = self.udp_kernel_queued + self.udp_out.bytes() as u64;
                    if f.marker.should_mark(self.now_ns, queued) {
                        self.marked.clear();
                        with_mark(bytes, &mut self.marked);
                        &self.marked[..]
                    } else {
                        bytes
                    }
                } else {
                    bytes
                };
                let udp_out = &mut self.udp_out;
                let queue = |piece: &[u8]| {
                    udp_out.push(piece, Some(*remote));
                    Ok(())
                };
                let lp = LinkLayer { sequence: &mut f.lp_sequence, reliability: f.reliability.as_deref_mut(), now_ms };
                if let Err(why) = send_fitted(bytes, f.mtu, lp, &mut self.fragments, queue) {
                    drops.count(why);
                    return;
                }
            }
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
/// retransmission. Why not, as a drop reason (a send error is a full send buffer).
fn send_fitted(
    bytes: &[u8],
    mtu: usize,
    lp: LinkLayer<'_>,
    fragments: &mut Vec<Vec<u8>>,
    mut send: impl FnMut(&[u8]) -> io::Result<()>,
) -> Result<(), DropReason> {
    let sent = if let Some(reliability) = lp.reliability {
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
    };
    sent.map_err(|_| DropReason::SendBufferFull)
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
