//! Stream faces (Unix, TCP, and WebSocket: a TCP stream whose packets travel as WebSocket
//! messages, [`crate::face::websocket`]): the socket of its own each has, TLV framing of what is
//! read, the send buffer the loop writes out when the socket takes it, and congestion measured
//! as that buffer plus what the kernel still holds.

use std::io::{self, Read, Write};

use mio::net::{TcpStream, UnixStream};
use mio::{Interest, Registry, Token};
use nexthop_wire::packet::frame_len;

use super::{LinkSettings, Links, Transport};
use crate::counters::DropReason;
use crate::face::uri::FaceUri;
use crate::face::websocket::{put_packet_header, WsCodec};
use crate::face::{FaceId, MAX_PACKET_BYTES};
use crate::sys::socket_queue;

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
    /// What the kernel held in the socket's send queue when the first packet since the send
    /// buffer was last written out was queued (a face that marks congestion).
    kernel_queued: u64,
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
        Stream { socket, rbuf: Vec::new(), rstart: 0, skip: 0, wbuf: Vec::new(), wpos: 0, want_write: false, ws: None, kernel_queued: 0 }
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

impl Transport for Stream {
    fn attach(&mut self, id: FaceId, _links: &mut Links, registry: &Registry) -> io::Result<()> {
        registry.register(self.socket.source(), Token(id as usize), Interest::READABLE)
    }

    fn detach(&mut self, _id: FaceId, _links: &mut Links, registry: &Registry) {
        let _ = registry.deregister(self.socket.source());
    }

    fn mtu(&self, _links: &Links) -> usize {
        0
    }

    fn max_mtu(&self, _links: &Links) -> Option<usize> {
        None
    }

    /// A TCP face's (a permanent one connects again when its connection is lost); a Unix or
    /// WebSocket face keeps its own.
    fn persistency_changes(&self, uri: &FaceUri) -> bool {
        matches!(uri, FaceUri::Tcp(_))
    }

    fn has_room(&self, bytes: usize, settings: &LinkSettings) -> bool {
        self.pending() + bytes <= settings.send_limit
    }

    fn queued(&mut self, _links: &mut Links) -> u64 {
        if self.pending() == 0 {
            // The first packet since the buffer was written out: what the kernel still holds
            // now (the face may have been idle since it was last looked at).
            self.kernel_queued = socket_queue::unsent_bytes(self.socket.raw_fd()).unwrap_or(0);
        }
        self.pending() as u64 + self.kernel_queued
    }

    fn send(&mut self, id: FaceId, links: &mut Links, piece: &[u8]) -> Result<(), DropReason> {
        if self.pending() == 0 {
            links.dirty.push(id);
        }
        self.queue(piece);
        Ok(())
    }
}
