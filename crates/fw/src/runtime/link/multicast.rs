//! UDP multicast faces, as NFD's `face_system.udp` makes them (`mcast`, group 224.0.23.170 and
//! ff02::1234, port 56363): one face per interface and address family, a *multi-access* link to
//! every NDN node on that LAN that joined the group — what lets forwarders on one network reach
//! each other without configuring one another.
//!
//! # Overview
//! - Two sockets per face. The receiving one is bound to the group's address and port (so it
//!   takes that group's datagrams only, and several forwarders on one host can each bind it:
//!   `SO_REUSEADDR`), joined on the interface, and takes only what arrives for its own
//!   memberships (`IP_MULTICAST_ALL` off). The sending one is bound to the interface's address
//!   (IPv6: its link-local address) and sends to the group through it (`IP_MULTICAST_IF`), with
//!   loopback on, so forwarders on one host hear each other, and a hop limit of 1.
//! - A datagram whose source is the face's own sending socket is its own packet come back, and
//!   is skipped.
//! - What the runtime does differently for such a face: it never sends a Nack on it (as NFD: a
//!   Nack to the whole LAN would tell every node), fragments from different senders are put
//!   back together apart (the sender's address is part of the reassembly key), and
//!   `faces/list` shows its LinkType as multi-access.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};

use mio::{Interest, Registry, Token};
use socket2::{Domain, Protocol, Socket, Type};

use super::udp::MAX_UDP_PAYLOAD;
use super::{LinkSettings, Links, Transport};
use crate::counters::DropReason;
use crate::face::uri::FaceUri;
use crate::face::FaceId;
use crate::sys::socket_queue;

/// A multicast face's group on one interface: what tells the faces of one configuration apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MulticastPlace {
    /// The group (IPv6: scoped to the interface).
    pub group: SocketAddr,
    /// The interface's address the face sends from (IPv6: its link-local address).
    pub address: IpAddr,
    /// The interface's index.
    pub index: u32,
}

/// A multicast face's sockets.
#[derive(Debug)]
pub struct MulticastLink {
    recv: mio::net::UdpSocket,
    send: UdpSocket,
    own: SocketAddr,
    /// The group (IPv6: with the interface's index as its scope).
    group: SocketAddr,
    interface: IpAddr,
    /// The interface's index: an interface made again, with the same address, gets another.
    index: u32,
}

impl MulticastLink {
    /// Joins `group` on the interface whose address is `interface` and index `index`.
    ///
    /// # Errors
    /// The socket call that failed (no such interface address, a group that is not multicast).
    pub fn open(group: SocketAddrV4, interface: Ipv4Addr, index: u32) -> io::Result<Self> {
        if !group.ip().is_multicast() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a multicast address", group.ip())));
        }
        let recv = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
        recv.set_reuse_address(true)?;
        recv.bind(&SocketAddr::V4(group).into())?;
        recv.join_multicast_v4(group.ip(), &interface)?;
        recv.set_multicast_all_v4(false)?;
        let send = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
        send.bind(&SocketAddr::V4(SocketAddrV4::new(interface, 0)).into())?;
        send.set_multicast_if_v4(&interface)?;
        send.set_multicast_loop_v4(true)?;
        send.set_multicast_ttl_v4(1)?;
        MulticastLink::finish(recv, send, SocketAddr::V4(group), IpAddr::V4(interface), index)
    }

    /// Joins the IPv6 `group` on the interface of index `interface`, sending from `address`, its
    /// link-local address.
    ///
    /// # Errors
    /// As [`MulticastLink::open`].
    pub fn open_v6(group: SocketAddrV6, interface: u32, address: Ipv6Addr) -> io::Result<Self> {
        if !group.ip().is_multicast() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a multicast address", group.ip())));
        }
        let group = SocketAddrV6::new(*group.ip(), group.port(), 0, interface);
        let recv = Socket::new(Domain::IPV6, Type::DGRAM, Some(Protocol::UDP))?;
        recv.set_only_v6(true)?;
        recv.set_reuse_address(true)?;
        recv.bind(&SocketAddr::V6(group).into())?;
        recv.join_multicast_v6(group.ip(), interface)?;
        recv.set_multicast_all_v6(false)?;
        let send = Socket::new(Domain::IPV6, Type::DGRAM, Some(Protocol::UDP))?;
        send.set_only_v6(true)?;
        send.bind(&SocketAddr::V6(SocketAddrV6::new(address, 0, 0, interface)).into())?;
        send.set_multicast_if_v6(interface)?;
        send.set_multicast_loop_v6(true)?;
        send.set_multicast_hops_v6(1)?;
        MulticastLink::finish(recv, send, SocketAddr::V6(group), IpAddr::V6(address), interface)
    }

    /// The link from its two sockets, both made non-blocking.
    fn finish(recv: Socket, send: Socket, group: SocketAddr, interface: IpAddr, index: u32) -> io::Result<Self> {
        recv.set_nonblocking(true)?;
        send.set_nonblocking(true)?;
        crate::sys::udp_batch::set_socket_buffers(std::os::fd::AsRawFd::as_raw_fd(&recv), crate::sys::udp_batch::SOCKET_BUFFER_BYTES);
        let send: UdpSocket = send.into();
        let own = send.local_addr()?;
        Ok(MulticastLink { recv: mio::net::UdpSocket::from_std(recv.into()), send, own, group, interface, index })
    }

    /// The group, as the face's remote URI names it (IPv6: scoped to the interface).
    pub fn group(&self) -> SocketAddr {
        self.group
    }

    /// Where the link is: its group on which interface.
    pub fn place(&self) -> MulticastPlace {
        MulticastPlace { group: self.group, address: self.interface, index: self.index }
    }

    /// The next datagram from another node, into `buf`: its length and sender; `None` once
    /// nothing is waiting. Its own datagrams, come back, are skipped.
    ///
    /// # Errors
    /// A receive error other than would-block.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<(usize, SocketAddr)>> {
        loop {
            match self.recv.recv_from(buf) {
                Ok((_, from)) if from == self.own => continue,
                Ok((n, from)) => return Ok(Some((n, from))),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends one datagram to the group.
    ///
    /// # Errors
    /// The send error (would-block when the socket's buffer is full).
    pub fn send(&self, bytes: &[u8]) -> io::Result<()> {
        self.send.send_to(bytes, self.group).map(|_| ())
    }

    /// The sending socket, whose kernel queue is the face's send queue.
    pub fn send_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.send)
    }

    /// The receiving socket, for the poll.
    pub fn source(&mut self) -> &mut mio::net::UdpSocket {
        &mut self.recv
    }

    /// The face's LocalUri: the interface's address and the group's port (as NFD shows it; an
    /// IPv6 one scoped by the interface's index, where NFD writes its name).
    pub fn local_uri(&self) -> String {
        match (self.interface, self.group) {
            (IpAddr::V6(a), SocketAddr::V6(g)) => format!("udp6://{}", SocketAddrV6::new(a, g.port(), 0, g.scope_id())),
            (a, g) => format!("udp4://{a}:{}", g.port()),
        }
    }
}

impl Transport for MulticastLink {
    fn attach(&mut self, id: FaceId, _links: &mut Links, registry: &Registry) -> io::Result<()> {
        registry.register(self.source(), Token(id as usize), Interest::READABLE)
    }

    fn detach(&mut self, _id: FaceId, _links: &mut Links, registry: &Registry) {
        let _ = registry.deregister(self.source());
    }

    fn is_multi_access(&self) -> bool {
        true
    }

    fn ad_hoc(&self, settings: &LinkSettings) -> bool {
        settings.udp_multicast_ad_hoc
    }

    fn mtu(&self, links: &Links) -> usize {
        links.settings.udp_mtu
    }

    fn max_mtu(&self, _links: &Links) -> Option<usize> {
        Some(MAX_UDP_PAYLOAD)
    }

    /// Never: a multicast face is the configuration's.
    fn persistency_changes(&self, _uri: &FaceUri) -> bool {
        false
    }

    fn queued(&mut self, _links: &mut Links) -> u64 {
        socket_queue::unsent_bytes(self.send_fd()).unwrap_or(0)
    }

    fn send(&mut self, _id: FaceId, _links: &mut Links, piece: &[u8]) -> Result<(), DropReason> {
        MulticastLink::send(self, piece).map_err(|_| DropReason::SendBufferFull)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `b` hears what `a` sends to the group, and `a` does not hear itself.
    fn hear_each_other_not_themselves(a: &MulticastLink, b: &MulticastLink) {
        a.send(b"from a").unwrap();
        let mut buf = [0u8; 64];
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        let got = loop {
            if let Some((n, from)) = b.recv(&mut buf).unwrap() {
                break (buf[..n].to_vec(), from);
            }
            assert!(std::time::Instant::now() < deadline, "b never heard a");
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(got, (b"from a".to_vec(), a.own));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(a.recv(&mut buf).unwrap(), None, "a skips its own datagram");
    }

    /// Two links on loopback in one group: each hears the other, never itself.
    #[test]
    fn links_hear_each_other_not_themselves() {
        let port = 40_000 + (std::process::id() % 20_000) as u16;
        let group = SocketAddrV4::new(Ipv4Addr::new(224, 0, 23, 170), port);
        let a = MulticastLink::open(group, Ipv4Addr::LOCALHOST, 1).unwrap();
        let b = MulticastLink::open(group, Ipv4Addr::LOCALHOST, 1).unwrap();
        hear_each_other_not_themselves(&a, &b);
        assert_eq!(a.local_uri(), format!("udp4://127.0.0.1:{port}"));
        let unicast = SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 1), port);
        assert!(MulticastLink::open(unicast, Ipv4Addr::LOCALHOST, 1).is_err());
    }

    /// Two IPv6 links on the host's first interface that can carry them (IPv6 multicast does
    /// not loop back on `lo`): each hears the other, never itself.
    #[test]
    fn ipv6_links_hear_each_other_not_themselves() {
        let all = crate::sys::interfaces::interface_addresses().unwrap();
        let chosen = crate::sys::interfaces::udp_v6(&all, &crate::face::interface_rule::InterfaceRules::default()).unwrap();
        let Some(&(index, address, _)) = chosen.first() else {
            eprintln!("no interface with an IPv6 link-local address that can multicast: nothing to join");
            return;
        };
        let port = 40_000 + (std::process::id() % 20_000) as u16;
        let group = SocketAddrV6::new("ff02::1234".parse().unwrap(), port, 0, 0);
        let a = MulticastLink::open_v6(group, index, address).unwrap();
        let b = MulticastLink::open_v6(group, index, address).unwrap();
        hear_each_other_not_themselves(&a, &b);
        assert_eq!(a.group(), SocketAddr::V6(SocketAddrV6::new(*group.ip(), port, 0, index)));
        assert_eq!(a.local_uri(), format!("udp6://[{address}%{index}]:{port}"));
        let parsed = crate::sys::interfaces::parse_face_uri(&format!("udp6://[ff02::1234%{index}]:{port}")).unwrap();
        assert_eq!(parsed, crate::face::uri::FaceUri::Udp(a.group()), "the face's remote URI parses back");
    }
}
