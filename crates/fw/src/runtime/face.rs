//! A face with its socket: stream faces (Unix, TCP) with TLV framing and send buffers, WebSocket
//! faces (a TCP stream whose packets travel as WebSocket messages, [`crate::face::websocket`]), UDP
//! faces (one remote endpoint on a shared socket), UDP multicast faces (a LAN's group,
//! [`super::multicast`]), Ethernet faces (a peer or group through an interface's port,
//! [`crate::face::ether`]), and their counters.

use std::io::{self, Read, Write};
use std::net::SocketAddr;

use mio::net::{TcpStream, UnixStream};
use nexthop_wire::packet::frame_len;

use crate::face::reconnect::Reconnect;
use crate::face::uri::FaceUri;
use crate::face::websocket::{put_packet_header, WsCodec};
use crate::face::MAX_PACKET_BYTES;
use crate::face::{FaceId, FaceScope, LinkType, Persistency, FLAG_CONGESTION_MARKING, FLAG_LP_RELIABILITY};
use crate::lp::congestion::Marker;
use crate::lp::reliability::Reliability;
use crate::mgmt::dataset::{FaceCounts, FaceStatus};
use crate::pipeline::outbox::PacketKind;

use super::multicast::MulticastLink;
use crate::face::ether::Mac;

/// The largest UDP payload over IPv4 (65,535 less the IP and UDP headers): the most a UDP
/// face's MTU can be overridden to.
const MAX_UDP_PAYLOAD: usize = 65_507;

/// The socket of a stream face.
#[derive(Debug)]
pub enum StreamSocket {
    /// Unix stream socket.
    Unix(UnixStream),
    /// TCP connection.
    Tcp(TcpStream),
}

impl StreamSocket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            StreamSocket::Unix(s) => s.read(buf),
            StreamSocket::Tcp(s) => s.read(buf),
        }
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            StreamSocket::Unix(s) => s.write(buf),
            StreamSocket::Tcp(s) => s.write(buf),
        }
    }

    /// The socket's file descriptor.
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        match self {
            StreamSocket::Unix(s) => s.as_raw_fd(),
            StreamSocket::Tcp(s) => s.as_raw_fd(),
        }
    }

    /// The mio source.
    pub fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            StreamSocket::Unix(s) => s,
            StreamSocket::Tcp(s) => s,
        }
    }
}

/// A stream face's buffers.
#[derive(Debug)]
pub struct Stream {
    /// The socket.
    pub socket: StreamSocket,
    rbuf: Vec<u8>,
    rstart: usize,
    skip: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    /// Registered for writability (the send buffer did not drain).
    pub want_write: bool,
    /// WebSocket framing instead of bare TLV elements.
    ws: Option<Box<WsCodec>>,
}

/// What reading a stream face gave.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// More may come.
    Open,
    /// The peer closed, or the stream broke (bad framing, socket error).
    Closed,
}

const READ_CHUNK: usize = 128 * 1024;

impl Stream {
    /// A stream face's buffers around `socket`.
    pub fn new(socket: StreamSocket) -> Self {
        Stream { socket, rbuf: Vec::new(), rstart: 0, skip: 0, wbuf: Vec::new(), wpos: 0, want_write: false, ws: None }
    }

    /// A WebSocket face's buffers around an accepted TCP connection (the upgrade request comes
    /// first).
    pub fn websocket(socket: StreamSocket) -> Self {
        Stream { ws: Some(Box::default()), ..Stream::new(socket) }
    }

    /// Reads what has arrived and calls `on_frame` with each whole TLV element; elements over
    /// the packet limit are skipped and reported as `Err(len)`.
    pub fn read_frames(&mut self, mut on_frame: impl FnMut(Result<&[u8], usize>)) -> ReadOutcome {
        loop {
            if self.rbuf.len() - self.rstart < READ_CHUNK {
                // Compact, then make room for one read.
                self.rbuf.drain(..self.rstart);
                self.rstart = 0;
            }
            let filled = self.rbuf.len();
            self.rbuf.resize(filled + READ_CHUNK, 0);
            let n = match self.socket.read(&mut self.rbuf[filled..]) {
                Ok(0) => {
                    self.rbuf.truncate(filled);
                    return ReadOutcome::Closed;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.rbuf.truncate(filled);
                    return ReadOutcome::Open;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    self.rbuf.truncate(filled);
                    continue;
                }
                Err(_) => {
                    self.rbuf.truncate(filled);
                    return ReadOutcome::Closed;
                }
            };
            self.rbuf.truncate(filled + n);
            if let Some(ws) = self.ws.as_mut() {
                // One packet per message; the codec's answers (upgrade, pongs) go out as they are.
                match ws.feed(&self.rbuf[self.rstart..], &mut self.wbuf, |m| on_frame(Ok(m))) {
                    Ok(used) => self.rstart += used,
                    Err(e) => {
                        tracing::debug!("websocket face: {e}");
                        return ReadOutcome::Closed;
                    }
                }
                if ws.is_closed() {
                    return ReadOutcome::Closed;
                }
                continue;
            }
            loop {
                let avail = &self.rbuf[self.rstart..];
                if self.skip > 0 {
                    let k = self.skip.min(avail.len());
                    self.skip -= k;
                    self.rstart += k;
                    if self.skip > 0 {
                        break;
                    }
                    continue;
                }
                match frame_len(avail, usize::MAX) {
                    Ok(Some(len)) if len > MAX_PACKET_BYTES => {
                        on_frame(Err(len));
                        self.skip = len;
                    }
                    Ok(Some(len)) if len <= avail.len() => {
                        on_frame(Ok(&avail[..len]));
                        self.rstart += len;
                    }
                    Ok(_) => break,
                    Err(_) => return ReadOutcome::Closed,
                }
            }
        }
    }

    /// Bytes waiting to be sent.
    pub fn pending(&self) -> usize {
        self.wbuf.len() - self.wpos
    }

    /// Queues a packet (as one binary message on a WebSocket face, once it is open).
    pub fn queue(&mut self, bytes: &[u8]) {
        if let Some(ws) = &self.ws {
            if !ws.is_open() {
                return;
            }
            put_packet_header(bytes.len(), &mut self.wbuf);
        }
        self.wbuf.extend_from_slice(bytes);
    }

    /// Writes what it can; `Err` when the socket failed.
    pub fn flush(&mut self) -> io::Result<()> {
        while self.wpos < self.wbuf.len() {
            match self.socket.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.wpos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        } else if self.wpos > (1 << 20) {
            self.wbuf.drain(..self.wpos);
            self.wpos = 0;
        }
        Ok(())
    }
}

/// How a face reaches its peer.
#[derive(Debug)]
pub enum Link {
    /// A stream socket of its own.
    Stream(Box<Stream>),
    /// A remote endpoint on the shared UDP socket.
    Udp(SocketAddr),
    /// A multicast group on one interface: every node of the LAN that joined it.
    Multicast(Box<MulticastLink>),
    /// An Ethernet peer (a unicast face) or group (a multicast face: every NDN node on the
    /// segment that joined it), through the port of its interface (`Faces::ether_ports`).
    Ether {
        /// The port's index.
        port: usize,
        /// The peer's or the group's address.
        peer: Mac,
    },
}

impl Link {
    /// Whether the link reaches many nodes at once (NFD's multi-access LinkType): no Nack is
    /// sent on it.
    pub fn is_multi_access(&self) -> bool {
        match self {
            Link::Multicast(_) => true,
            Link::Ether { peer, .. } => peer.is_multicast(),
            Link::Stream(_) | Link::Udp(_) => false,
        }
    }
}

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
    /// What the kernel held in the socket's send queue when the first packet since the face's
    /// own queue was last written out was sent (stream faces that mark).
    pub kernel_queued: u64,
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
        match (self.ad_hoc, self.link.is_multi_access()) {
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
    /// [`crate::lp::fragmentation::MIN_MTU`] (64 fragments must carry the largest packet), an
    /// Ethernet face at most its interface's `interface_mtu`, a UDP face at most the largest
    /// UDP payload. `None`: it cannot.
    pub fn mtu_for(&self, mtu: u64, interface_mtu: usize) -> Option<usize> {
        let mtu = usize::try_from(mtu).ok().filter(|&m| m >= crate::lp::fragmentation::MIN_MTU)?;
        match &self.link {
            Link::Stream(_) => None,
            Link::Udp(_) | Link::Multicast(_) => Some(mtu.min(MAX_UDP_PAYLOAD)),
            Link::Ether { .. } => Some(mtu.min(interface_mtu)),
        }
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
