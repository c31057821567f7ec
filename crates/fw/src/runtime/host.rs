//! The runtime as the management protocol sees it ([`Host`]): faces made and destroyed by
//! `faces/create` and `faces/destroy`, the shards' counters added up for the status datasets,
//! the content store's forwarder-wide settings (`cs/config`, `cs/erase`), and Interests the
//! manager expresses itself.

use std::net::SocketAddr;

use mio::net::TcpStream;
use mio::Registry;
use nexthop_wire::Name;

use super::face::Face;
use super::link::ether_port::EtherPort;
use super::link::{EtherLink, Link, Stream, StreamSocket, UdpLink};
use super::{Faces, Forwarding, Listening};
use crate::counters::{DropCounters, ShardCounters};
use crate::face::uri::FaceUri;
use crate::face::{FaceId, FaceScope, Persistency, MANAGEMENT_FACE};
use crate::lp::packet::classify;
use crate::lp::reliability::ReliabilityCounts;
use crate::mgmt::dataset::{CsInfo, FaceStatus, GeneralStatus};
use crate::mgmt::params::ControlResponse;
use crate::mgmt::Host;
use crate::pipeline::outbox::Outbox;
use crate::pipeline::{Control, CsPolicy};

/// The runtime as the manager sees it.
pub(super) struct RuntimeHost<'a> {
    pub(super) faces: &'a mut Faces,
    pub(super) forwarding: &'a mut Forwarding,
    pub(super) registry: &'a Registry,
    pub(super) io_drops: &'a DropCounters,
    pub(super) cs: &'a mut CsState,
    pub(super) listening: &'a Listening,
    pub(super) now_ms: u64,
}

/// The content store as `cs/config` left it, forwarder-wide (each shard has its own store).
#[derive(Debug, Clone, Copy)]
pub(super) struct CsState {
    /// The packets each shard's store allocated (0: no content store).
    pub(super) allocated: u32,
    pub(super) shards: u32,
    /// What every shard was told.
    pub(super) policy: CsPolicy,
}

impl CsState {
    /// Packets all shards may hold together.
    fn capacity(&self) -> u64 {
        u64::from(self.policy.limit) * u64::from(self.shards)
    }

    /// `cs/info`'s Flags: bit 0 admit, bit 1 serve.
    fn flags(&self) -> u64 {
        u64::from(self.policy.admit) | u64::from(self.policy.serve) << 1
    }
}

/// A management error answer.
fn refuse(code: u64, text: impl ToString) -> Box<ControlResponse> {
    Box::new(ControlResponse::error(code, text.to_string()))
}

impl RuntimeHost<'_> {
    /// An existing face asked for again (`faces/create`'s 409): an on-demand one takes the
    /// persistency asked for.
    fn found(&mut self, id: FaceId, persistency: Persistency) -> (FaceStatus, bool) {
        let f = self.faces.faces.get_mut(&id).expect("indexed face exists");
        if f.persistency == Persistency::OnDemand {
            f.persistency = persistency;
        }
        (f.status(), false)
    }

    /// A new face to `uri` over `link`, from `local`.
    fn made(
        &mut self,
        uri: &FaceUri,
        local: String,
        persistency: Persistency,
        link: Link,
    ) -> Result<(FaceStatus, bool), Box<ControlResponse>> {
        let id = self
            .faces
            .add(self.registry, uri.clone(), local, persistency, link, self.now_ms, self.forwarding)
            .map_err(|e| refuse(504, e))?;
        Ok((self.faces.faces[&id].status(), true))
    }

    /// The Ethernet port an Ethernet face from `local` (`dev://<interface>`) goes through; with
    /// no LocalUri, the only port there is.
    fn ether_port(&self, local: Option<&str>) -> Result<usize, Box<ControlResponse>> {
        let open = || self.faces.links.ether.ports.iter().enumerate().filter_map(|(i, p)| Some((i, p.as_ref()?)));
        match local {
            Some(l) => {
                let name = l.strip_prefix("dev://").ok_or_else(|| refuse(400, format!("LocalUri {l:?} is not dev://<interface>")))?;
                open()
                    .find(|(_, p)| p.interface() == name)
                    .map(|(i, _)| i)
                    .ok_or_else(|| refuse(406, format!("no Ethernet faces on {name:?}")))
            }
            None => match (open().next(), open().count()) {
                (Some((i, _)), 1) => Ok(i),
                (None, _) => Err(refuse(406, "no Ethernet faces (faces.ether_multicast, faces.ether_listen)")),
                _ => Err(refuse(400, "LocalUri dev://<interface> is required: several interfaces have Ethernet faces")),
            },
        }
    }
}

impl Host for RuntimeHost<'_> {
    fn face(&self, id: FaceId) -> Option<FaceStatus> {
        self.faces.faces.get(&id).map(Face::status)
    }

    fn faces(&self) -> Vec<FaceStatus> {
        let mut v: Vec<FaceStatus> = self.faces.faces.values().map(Face::status).collect();
        v.sort_by_key(|f| f.face_id);
        v
    }

    fn set_persistency(&mut self, id: FaceId, persistency: Persistency) -> bool {
        let Some(f) = self.faces.faces.get_mut(&id) else { return false };
        // Datagram faces to one peer and TCP faces change (a permanent TCP face connects again
        // when its connection is lost; a down one made anything else is closed, as in NFD);
        // Unix, WebSocket and multicast faces keep theirs.
        if f.link.transport().persistency_changes(&f.uri) {
            f.persistency = persistency;
        }
        f.persistency == persistency
    }

    fn update_marking(&mut self, id: FaceId, on: Option<bool>, interval_ns: Option<u64>, threshold: Option<u64>) -> Option<FaceStatus> {
        let f = self.faces.faces.get_mut(&id)?;
        let m = &mut f.marker;
        m.enabled = on.unwrap_or(m.enabled);
        m.interval_ns = interval_ns.unwrap_or(m.interval_ns);
        m.threshold = threshold.unwrap_or(m.threshold);
        Some(f.status())
    }

    fn set_reliability(&mut self, id: FaceId, on: bool) -> Option<FaceStatus> {
        self.faces.set_reliability(id, on)
    }

    fn can_override_mtu(&self, id: FaceId, mtu: u64) -> bool {
        self.faces.mtu_for(id, mtu).is_some()
    }

    fn override_mtu(&mut self, id: FaceId, mtu: u64) -> Option<FaceStatus> {
        self.faces.override_mtu(id, mtu)
    }

    fn channels(&self) -> Vec<String> {
        let l = self.listening;
        let ip = |scheme: &str, a: &SocketAddr| format!("{scheme}{}://{a}", if a.is_ipv4() { "4" } else { "6" });
        let mut v: Vec<String> = l.unix.iter().map(|p| format!("unix://{p}")).collect();
        // A dual-stack listener is NFD's two channels, IPv4 and IPv6.
        let both = |scheme: &'static str, a: &SocketAddr| {
            let v4 = super::listen::Dual::of(*a).0.then(|| ip(scheme, &SocketAddr::from(([0, 0, 0, 0], a.port()))));
            v4.into_iter().chain([ip(scheme, a)])
        };
        v.extend(l.tcp.iter().flat_map(|a| both("tcp", a)));
        v.extend(l.udp.iter().flat_map(|a| both("udp", a)));
        v.extend(l.websocket.iter().map(|a| format!("ws://{a}")));
        v.extend(self.faces.links.ether.ports.iter().flatten().map(EtherPort::local_uri));
        v
    }

    fn create_face(
        &mut self,
        uri: &FaceUri,
        local: Option<&str>,
        persistency: Persistency,
    ) -> Result<(FaceStatus, bool), Box<ControlResponse>> {
        match uri {
            FaceUri::Ether(peer) => {
                let port = self.ether_port(local)?;
                if let Some(&id) = self.faces.links.ether.by_peer.get(&(port, *peer)) {
                    return Ok(self.found(id, persistency));
                }
                if peer.is_multicast() {
                    return Err(refuse(406, "Ethernet multicast faces are made from faces.ether_multicast"));
                }
                let local = self.faces.links.ether.port(port).map(EtherPort::local_uri).unwrap_or_default();
                self.made(uri, local, persistency, Link::Ether(EtherLink { port, peer: *peer }))
            }
            FaceUri::Udp(remote) if remote.ip().is_multicast() => {
                // The group is reached through a multicast face of the configuration (the first,
                // if several interfaces have one): a route to the group's URI uses it.
                match self.faces.faces.values().find(|f| f.link.transport().is_multi_access() && f.uri == *uri) {
                    Some(f) => Ok((f.status(), false)),
                    None => Err(refuse(406, "multicast faces are made from faces.udp_multicast")),
                }
            }
            FaceUri::Udp(remote) => {
                let dual = self.faces.links.udp.dual;
                let peer = dual.socket_form(*remote);
                if let Some(&id) = self.faces.links.udp.by_remote.get(&peer) {
                    return Ok(self.found(id, persistency));
                }
                let Some(local) = self.faces.links.udp.local else { return Err(refuse(406, "no UDP listener")) };
                if !dual.reaches(local, *remote) {
                    return Err(refuse(406, "the UDP listener is of the other address family"));
                }
                self.made(uri, FaceUri::Udp(dual.local_for(local, *remote)).to_string(), persistency, Link::Udp(UdpLink(peer)))
            }
            FaceUri::Tcp(remote) => {
                if let Some(f) = self.faces.faces.values().find(|f| f.uri == *uri) {
                    return Ok((f.status(), false));
                }
                let s = TcpStream::connect(*remote).map_err(|e| refuse(504, e))?;
                let _ = s.set_nodelay(true);
                let local = s.local_addr().map(|a| FaceUri::Tcp(a).to_string()).unwrap_or_default();
                let made = self.made(uri, local, persistency, Link::Stream(Box::new(Stream::new(StreamSocket::Tcp(s)))))?;
                self.faces.await_connection(self.registry, made.0.face_id);
                Ok(made)
            }
            _ => Err(refuse(406, "unsupported scheme")),
        }
    }

    fn is_connecting(&self, id: FaceId) -> bool {
        self.faces.connecting.contains(&id)
    }

    fn destroy_face(&mut self, id: FaceId) -> bool {
        self.faces.remove(self.registry, id)
    }

    fn apply(&mut self, op: Control) {
        if let Control::LocalFields(id, on) = op {
            if let Some(f) = self.faces.faces.get_mut(&id) {
                f.local_fields = on;
            }
        }
        self.forwarding.apply(op);
    }

    fn general(&self) -> (GeneralStatus, CsInfo) {
        let mut g = GeneralStatus::default();
        let mut cs = CsInfo { capacity: self.cs.capacity(), flags: self.cs.flags(), ..Default::default() };
        for f in self.faces.faces.values() {
            let c = &f.counts;
            g.counts.in_interests += c.in_interests;
            g.counts.in_data += c.in_data;
            g.counts.in_nacks += c.in_nacks;
            g.counts.out_interests += c.out_interests;
            g.counts.out_data += c.out_data;
            g.counts.out_nacks += c.out_nacks;
        }
        for s in self.forwarding.counters() {
            g.fib_entries = s.fib_entries.get(); // one FIB, shared or the only shard's
            g.pit_entries += s.pit_entries.get();
            g.cs_entries += s.cs_entries.get();
            g.satisfied += s.satisfied.get();
            g.unsatisfied += s.unsatisfied.get();
            cs.entries += s.cs_entries.get();
            cs.hits += s.cs_hits.get();
            cs.misses += s.cs_misses.get();
        }
        (g, cs)
    }

    fn configure_cs(&mut self, capacity: Option<u64>, admit: Option<bool>, serve: Option<bool>) -> (u64, u64) {
        let cs = &mut *self.cs;
        if let Some(c) = capacity {
            let per_shard = c.div_ceil(u64::from(cs.shards.max(1)));
            cs.policy.limit = per_shard.min(u64::from(cs.allocated)) as u32;
        }
        cs.policy.admit = admit.unwrap_or(cs.policy.admit);
        cs.policy.serve = serve.unwrap_or(cs.policy.serve);
        self.forwarding.apply(Control::ConfigureCs(cs.policy));
        // Answered once in force, so that cs/info then shows the store within its new limit.
        self.forwarding.wait_done();
        (cs.capacity(), cs.flags())
    }

    fn erase_cs(&mut self, prefix: &Name, max: usize) -> (usize, bool) {
        self.forwarding.erase_cs(prefix, max)
    }

    fn drops(&self) -> Vec<(&'static str, u64)> {
        let mut v = self.io_drops.snapshot();
        for s in self.forwarding.counters() {
            add_up(&mut v, s.drops.snapshot());
        }
        v
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let mut v = ShardCounters::default().snapshot();
        for s in self.forwarding.counters() {
            add_up(&mut v, s.snapshot());
        }
        // The I/O thread's own: packets it marked congested, the faces there are now together.
        v.push(("congestion_marks", self.faces.faces.values().map(|f| f.marker.marked).sum()));
        // Permanent TCP faces down now, connecting again.
        v.push(("faces_down", self.faces.down.len() as u64));
        // Link reliability, over the faces that have it now.
        let mut lp = ReliabilityCounts::default().labelled();
        for r in self.faces.faces.values().filter_map(|f| f.reliability.as_deref()) {
            add_up(&mut lp, r.counts.labelled().to_vec());
        }
        v.extend(lp);
        v
    }

    fn express(&mut self, interest: &[u8]) {
        let Ok(Some(incoming)) = classify(interest) else { return };
        let mut out = Outbox::new();
        self.forwarding.forward(self.now_ms, MANAGEMENT_FACE, FaceScope::Local, &incoming, interest, &mut out);
        for (face, kind, bytes) in out.iter() {
            self.faces.send(self.io_drops, face, kind, bytes);
        }
    }
}

/// Adds `more` (the same labels in the same order) into `total`.
fn add_up(total: &mut [(&'static str, u64)], more: Vec<(&'static str, u64)>) {
    for (t, (_, n)) in total.iter_mut().zip(more) {
        t.1 += n;
    }
}
