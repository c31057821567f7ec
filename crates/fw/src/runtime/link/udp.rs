//! Unicast UDP faces: each a remote endpoint on the one UDP socket they share (`faces.udp`),
//! found by the sender's address when a datagram arrives. What they send is batched for one
//! `sendmmsg` after each receive batch and each turn of the loop; their send queue, for
//! congestion marking, is that batch and the socket's kernel queue.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

use mio::net::UdpSocket;
use mio::Registry;

use super::{LinkSettings, Links, Transport};
use crate::counters::{DropCounters, DropReason};
use crate::face::uri::FaceUri;
use crate::face::FaceId;
use crate::runtime::listen::Dual;
use crate::sys::socket_queue;
use crate::sys::udp_batch::SendBatch;

/// The largest UDP payload over IPv4 (65,535 less the IP and UDP headers): the most a UDP
/// face's MTU can be overridden to.
pub const MAX_UDP_PAYLOAD: usize = 65_507;

/// A UDP face's remote endpoint, in the shared socket's form (a dual-stack socket's IPv4 peer
/// IPv4-mapped, [`Dual::socket_form`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpLink(pub SocketAddr);

/// The UDP socket and what its faces share.
#[derive(Debug)]
pub struct UdpLinks {
    /// The socket (`None`: no `faces.udp`).
    pub socket: Option<UdpSocket>,
    /// Its address.
    pub local: Option<SocketAddr>,
    /// Whether it is dual-stack.
    pub dual: Dual,
    /// Datagrams to send, flushed with `sendmmsg` after each receive batch and each loop turn.
    pub out: SendBatch,
    /// What the socket's kernel send queue held when the first datagram of `out` was queued
    /// (read then only if a face marks congestion): with `out`, the UDP faces' queue.
    pub kernel_queued: u64,
    /// The faces by remote endpoint (the socket's form).
    pub by_remote: HashMap<SocketAddr, FaceId>,
}

impl UdpLinks {
    /// The faces of `socket`, none yet.
    pub fn new(socket: Option<UdpSocket>) -> Self {
        let local = socket.as_ref().and_then(|s| s.local_addr().ok());
        UdpLinks {
            socket,
            local,
            dual: local.map_or(Dual(false), Dual::of),
            out: SendBatch::default(),
            kernel_queued: 0,
            by_remote: HashMap::new(),
        }
    }

    /// Takes `socket` in place of the one the faces shared (a reload that moved `faces.udp`):
    /// the faces stay, and reach their peers from it.
    pub fn rebind(&mut self, socket: UdpSocket) {
        self.local = socket.local_addr().ok();
        self.dual = self.local.map_or(Dual(false), Dual::of);
        self.socket = Some(socket);
    }

    /// Sends the datagrams batched so far; those the socket refuses are counted as drops.
    pub fn flush(&mut self, drops: &DropCounters) {
        let Some(sock) = self.socket.as_ref() else { return };
        if !self.out.is_empty() {
            for _ in 0..self.out.flush(sock.as_raw_fd()) {
                drops.count(DropReason::SendBufferFull);
            }
        }
    }
}

impl Transport for UdpLink {
    fn attach(&mut self, id: FaceId, links: &mut Links, _registry: &Registry) -> io::Result<()> {
        links.udp.by_remote.insert(self.0, id);
        Ok(())
    }

    fn detach(&mut self, _id: FaceId, links: &mut Links, _registry: &Registry) {
        links.udp.by_remote.remove(&self.0);
    }

    fn mtu(&self, links: &Links) -> usize {
        links.settings.udp_mtu
    }

    fn max_mtu(&self, _links: &Links) -> Option<usize> {
        Some(MAX_UDP_PAYLOAD)
    }

    fn idle_timeout_ms(&self, settings: &LinkSettings) -> Option<u64> {
        Some(settings.udp_idle_timeout_ms)
    }

    fn persistency_changes(&self, _uri: &FaceUri) -> bool {
        true
    }

    fn queued(&mut self, links: &mut Links) -> u64 {
        let udp = &mut links.udp;
        if udp.out.is_empty() {
            // The first datagram since the batch was flushed: what the kernel holds now.
            udp.kernel_queued = udp.socket.as_ref().and_then(|s| socket_queue::unsent_bytes(s.as_raw_fd())).unwrap_or(0);
        }
        udp.kernel_queued + udp.out.bytes() as u64
    }

    fn send(&mut self, _id: FaceId, links: &mut Links, piece: &[u8]) -> Result<(), DropReason> {
        if links.udp.socket.is_none() {
            return Err(DropReason::FaceGone);
        }
        links.udp.out.push(piece, Some(self.0));
        Ok(())
    }
}
