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

use std::io;
use std::os::fd::{AsRawFd, RawFd};

use netlink_packet_core::{NetlinkBuffer, NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_DUMP, NLM_F_REQUEST};
use netlink_packet_route::neighbour::NeighbourMessage;
use netlink_packet_route::route::RouteMessage;
use netlink_packet_route::RouteNetlinkMessage;
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
        // Larger than the default if the kernel allows it (rmem_max); the default otherwise.
        let _ = socket.set_rx_buf_sz(RECEIVE_BUFFER);
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
            let mut at = 0;
            while at < n {
                let Ok(b) = NetlinkBuffer::new_checked(&self.buf[at..n]) else { break };
                let len = b.length() as usize;
                if len == 0 {
                    break;
                }
                // A message the parser does not know is not the mirror's.
                if let Ok(m) = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&self.buf[at..at + len]) {
                    match m.payload {
                        NetlinkPayload::InnerMessage(inner) => out.push(inner),
                        NetlinkPayload::Done(_) => self.dump_done()?,
                        NetlinkPayload::Overrun(_) => return Ok(Received::Overrun),
                        _ => {}
                    }
                }
                at += (len + 3) & !3;
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
