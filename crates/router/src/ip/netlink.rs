//! The socket the mirror reads the kernel's tables from: rtnetlink, subscribed to route and
//! neighbour changes of both families, then dumped — the control plane's only I/O (the
//! pipeline has none).
//!
//! # Overview
//! [`KernelTables::open`] binds to the IPv4 and IPv6 route groups and the neighbour group;
//! [`KernelTables::dump`] then asks for every route, and, once those are in, every neighbour
//! (one dump at a time, as the kernel allows), so nothing changed meanwhile is missed.
//! [`KernelTables::receive`] drains what has arrived without blocking. If the kernel dropped
//! notifications (its queue for the socket overflowed: `ENOBUFS`), receive says so
//! ([`Received::Overrun`]): the caller starts again from a fresh mirror and a fresh dump.
//!
//! [`RouteWriter`] is the other side, a routing daemon's: it writes routes into the kernel's
//! main table in bulk (many requests a datagram, one acknowledgement at the end), as fast as
//! the kernel takes them — what the `ip-router` experiment drives the mirror with.

use std::io;
use std::net::IpAddr;
use std::os::fd::{AsFd, AsRawFd, RawFd};

use netlink_packet_core::{
    NetlinkBuffer, NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_REPLACE, NLM_F_REQUEST,
};
use netlink_packet_route::neighbour::NeighbourMessage;
use netlink_packet_route::route::{RouteAttribute, RouteHeader, RouteMessage, RouteProtocol, RouteScope, RouteType};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};

use super::route::Prefix;
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

/// The socket's receive buffer: room for a burst of a full table's notifications.
const RECEIVE_BUFFER: usize = 32 << 20;

/// What one [`KernelTables::receive`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// Messages were appended (maybe none): the dump goes on, or is done.
    Messages,
    /// The kernel dropped notifications: the mirror is stale.
    Overrun,
}

/// Which dump is in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dumping {
    Nothing,
    Routes,
    Neighbours,
}

/// An rtnetlink socket on the calling thread's network namespace.
#[derive(Debug)]
pub struct KernelTables {
    socket: Socket,
    buf: Vec<u8>,
    dumping: Dumping,
    sequence: u32,
}

impl KernelTables {
    /// Opens the socket, subscribed to route and neighbour changes, non-blocking.
    ///
    /// # Errors
    /// The kernel refused the socket or a subscription.
    pub fn open() -> io::Result<KernelTables> {
        let mut socket = Socket::new(NETLINK_ROUTE)?;
        socket.bind(&SocketAddr::new(0, 0))?;
        for group in [libc::RTNLGRP_IPV4_ROUTE, libc::RTNLGRP_IPV6_ROUTE, libc::RTNLGRP_NEIGH] {
            socket.add_membership(group)?;
        }
        // Larger than the default, beyond rmem_max where allowed (a best effort).
        let _ = nexthop_io::set_receive_buffer(socket.as_fd(), RECEIVE_BUFFER);
        socket.set_non_blocking(true)?;
        Ok(KernelTables { socket, buf: vec![0; 1 << 20], dumping: Dumping::Nothing, sequence: 0 })
    }

    /// The socket, to poll for readability.
    pub fn fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }

    /// Asks for every route, then every neighbour.
    ///
    /// # Errors
    /// The request could not be sent.
    pub fn dump(&mut self) -> io::Result<()> {
        self.request(RouteNetlinkMessage::GetRoute(RouteMessage::default()))?;
        self.dumping = Dumping::Routes;
        Ok(())
    }

    /// Whether a dump is still coming in.
    pub fn dumping(&self) -> bool {
        self.dumping != Dumping::Nothing
    }

    fn request(&mut self, msg: RouteNetlinkMessage) -> io::Result<()> {
        self.sequence += 1;
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST | NLM_F_DUMP;
        header.sequence_number = self.sequence;
        let mut m = NetlinkMessage::new(header, NetlinkPayload::InnerMessage(msg));
        m.finalize();
        let mut bytes = vec![0; m.buffer_len()];
        m.serialize(&mut bytes);
        self.socket.send(&bytes, 0)?;
        Ok(())
    }

    /// Appends every message that has arrived to `out`, without blocking; a finished route dump
    /// starts the neighbour dump.
    ///
    /// # Errors
    /// The socket failed (not for "nothing more yet").
    pub fn receive(&mut self, out: &mut Vec<RouteNetlinkMessage>) -> io::Result<Received> {
        loop {
            let n = match self.socket.recv(&mut &mut self.buf[..], 0) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Received::Messages),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => return Ok(Received::Overrun),
                Err(e) => return Err(e),
            };
            // A message the parser does not know is not the mirror's.
            let mut done = false;
            for m in messages(&self.buf[..n]) {
                match m.payload {
                    NetlinkPayload::InnerMessage(inner) => out.push(inner),
                    NetlinkPayload::Done(_) => done = true,
                    NetlinkPayload::Overrun(_) => return Ok(Received::Overrun),
                    _ => {}
                }
            }
            if done {
                self.dump_done()?;
            }
        }
    }

    fn dump_done(&mut self) -> io::Result<()> {
        match self.dumping {
            Dumping::Routes => {
                self.request(RouteNetlinkMessage::GetNeighbour(NeighbourMessage::default()))?;
                self.dumping = Dumping::Neighbours;
            }
            Dumping::Neighbours | Dumping::Nothing => self.dumping = Dumping::Nothing,
        }
        Ok(())
    }
}

/// The messages of one datagram the parser knows (a truncated or unknown one is skipped; a
/// malformed length ends the datagram).
fn messages(datagram: &[u8]) -> impl Iterator<Item = NetlinkMessage<RouteNetlinkMessage>> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || loop {
        let b = NetlinkBuffer::new_checked(datagram.get(at..)?).ok()?;
        let len = b.length() as usize;
        if len == 0 || at + len > datagram.len() {
            return None;
        }
        let m = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&datagram[at..at + len]);
        at += (len + 3) & !3;
        if let Ok(m) = m {
            return Some(m);
        }
    })
}

/// Requests a [`RouteWriter`] puts in one datagram (each about 60 bytes).
const WRITES_PER_SEND: usize = 512;

/// Writes routes into the kernel's main table of the calling thread's network namespace.
#[derive(Debug)]
pub struct RouteWriter {
    socket: Socket,
    sequence: u32,
    buf: Vec<u8>,
}

impl RouteWriter {
    /// Opens the socket (blocking).
    ///
    /// # Errors
    /// The kernel refused the socket.
    pub fn open() -> io::Result<RouteWriter> {
        let mut socket = Socket::new(NETLINK_ROUTE)?;
        socket.bind(&SocketAddr::new(0, 0))?;
        let _ = nexthop_io::set_receive_buffer(socket.as_fd(), RECEIVE_BUFFER);
        socket.connect(&SocketAddr::new(0, 0))?;
        Ok(RouteWriter { socket, sequence: 0, buf: vec![0; 1 << 16] })
    }

    /// Adds each route (`prefix` via `gateway`, protocol static) to the main table, replacing
    /// the route to the same prefix if there is one; returns once the kernel has handled all
    /// of them, with how many it refused (a gateway it cannot reach, a family mismatch).
    ///
    /// # Errors
    /// The socket failed.
    pub fn replace(&mut self, routes: &[(Prefix, IpAddr)]) -> io::Result<usize> {
        let (mut refused, mut acked) = (0, routes.is_empty());
        for (c, chunk) in routes.chunks(WRITES_PER_SEND).enumerate() {
            let last_chunk = (c + 1) * WRITES_PER_SEND >= routes.len();
            let mut bytes = Vec::with_capacity(chunk.len() * 64);
            for (i, &(prefix, gateway)) in chunk.iter().enumerate() {
                self.sequence = self.sequence.wrapping_add(1);
                let mut header = NetlinkHeader::default();
                // Only the last request asks for an acknowledgement (errors come anyway).
                header.flags =
                    NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE | if last_chunk && i + 1 == chunk.len() { NLM_F_ACK } else { 0 };
                header.sequence_number = self.sequence;
                let mut m = NetlinkMessage::new(
                    header,
                    NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewRoute(route_message(prefix, gateway))),
                );
                m.finalize();
                let at = bytes.len();
                bytes.resize(at + m.buffer_len(), 0);
                m.serialize(&mut bytes[at..]);
            }
            self.socket.send(&bytes, 0)?;
            // Errors of earlier requests, read as they come so the socket never fills.
            refused += self.read_replies(false, &mut acked)?;
        }
        while !acked {
            refused += self.read_replies(true, &mut acked)?;
        }
        Ok(refused)
    }

    /// Reads the replies waiting (`block`: at least one datagram, waiting for it); the errors
    /// among them. Sets `acked` once the last request's reply is read.
    fn read_replies(&mut self, block: bool, acked: &mut bool) -> io::Result<usize> {
        let mut errors = 0;
        let mut flags = if block { 0 } else { libc::MSG_DONTWAIT };
        loop {
            let n = match self.socket.recv(&mut &mut self.buf[..], flags) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(errors),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            flags = libc::MSG_DONTWAIT;
            for m in messages(&self.buf[..n]) {
                if let NetlinkPayload::Error(e) = &m.payload {
                    errors += usize::from(e.code.is_some());
                    *acked |= m.header.sequence_number == self.sequence;
                }
            }
        }
    }
}

/// The request for `prefix` via `gateway` in the main table.
fn route_message(prefix: Prefix, gateway: IpAddr) -> RouteMessage {
    let mut m = RouteMessage::default();
    let (family, dst, len) = match prefix {
        Prefix::V4 { addr, len } => (AddressFamily::Inet, IpAddr::V4(addr.into()), len),
        Prefix::V6 { addr, len } => (AddressFamily::Inet6, IpAddr::V6(addr.into()), len),
    };
    m.header.address_family = family;
    m.header.destination_prefix_length = len;
    m.header.table = RouteHeader::RT_TABLE_MAIN;
    m.header.protocol = RouteProtocol::Static;
    m.header.scope = RouteScope::Universe;
    m.header.kind = RouteType::Unicast;
    if len > 0 {
        m.attributes.push(RouteAttribute::Destination(dst.into()));
    }
    m.attributes.push(RouteAttribute::Gateway(gateway.into()));
    m
}
