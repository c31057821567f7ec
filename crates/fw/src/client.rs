//! A small blocking NDN client over a Unix or TCP face: what `nexthop ctl`, the tests and the
//! traffic generator use to talk to a forwarder (nexthop or NFD). It sends Interests and reads
//! back Data or Nacks, signs management commands (v0.3 signed Interests, DigestSha256) and
//! fetches segmented status datasets.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use nexthop_wire::packet::frame_len;
use nexthop_wire::{Component, DataView, Emit, Interest, Kind, NackReason, Name};

use crate::face::FaceUri;
use crate::mgmt::params::{ControlParameters, ControlResponse};
use crate::packet::{classify, Network};

/// What went wrong talking to the forwarder.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Socket trouble.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// No answer in time.
    #[error("no answer to {0} in time")]
    Timeout(String),
    /// The forwarder said Nack.
    #[error("Nack {0:?} for {1}")]
    Nack(NackReason, String),
    /// An answer that does not decode.
    #[error("bad answer: {0}")]
    Bad(String),
}

enum Conn {
    Unix(UnixStream),
    Tcp(TcpStream),
}

/// A connection to a forwarder.
pub struct Client {
    conn: Conn,
    buf: Vec<u8>,
    nonce: u32,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").finish_non_exhaustive()
    }
}

/// An answer to an Interest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A Data packet (its wire bytes).
    Data(Vec<u8>),
    /// A Nack.
    Nack(NackReason),
}

impl Client {
    /// Connects to `unix://…` or `tcp4://…`.
    ///
    /// # Errors
    /// Socket errors; other schemes are refused.
    pub fn connect(uri: &FaceUri) -> io::Result<Self> {
        let conn = match uri {
            FaceUri::Unix(p) => Conn::Unix(UnixStream::connect(p)?),
            FaceUri::Tcp(a) => {
                let s = TcpStream::connect(a)?;
                s.set_nodelay(true)?;
                Conn::Tcp(s)
            }
            _ => return Err(io::Error::new(io::ErrorKind::Unsupported, "connect over unix:// or tcp://")),
        };
        Ok(Client { conn, buf: Vec::new(), nonce: std::process::id().wrapping_mul(2_654_435_761) })
    }

    fn stream(&mut self) -> &mut dyn ReadWrite {
        match &mut self.conn {
            Conn::Unix(s) => s,
            Conn::Tcp(s) => s,
        }
    }

    /// Sends raw bytes (one or more packets).
    ///
    /// # Errors
    /// Socket errors.
    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream().write_all(bytes)
    }

    /// The next packet received, waiting at most `timeout`; `Ok(None)` on timeout.
    ///
    /// # Errors
    /// Socket errors, a closed connection, or a corrupt stream.
    pub fn recv(&mut self, timeout: Duration) -> io::Result<Option<Vec<u8>>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(p) = self.recv_buffered() {
                return Ok(Some(p));
            }
            if frame_len(&self.buf, usize::MAX).is_err() {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "corrupt stream"));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let s = self.stream();
            s.set_timeout(Some(left))?;
            let mut chunk = [0u8; 65536];
            match s.read(&mut chunk) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => return Ok(None),
                Err(e) => return Err(e),
            }
        }
    }

    /// The next packet already read from the socket, without waiting.
    pub fn recv_buffered(&mut self) -> Option<Vec<u8>> {
        let n = frame_len(&self.buf, usize::MAX).ok()??;
        if n > self.buf.len() {
            return None;
        }
        let rest = self.buf.split_off(n);
        Some(std::mem::replace(&mut self.buf, rest))
    }

    /// A fresh nonce.
    pub fn next_nonce(&mut self) -> [u8; 4] {
        self.nonce = self.nonce.wrapping_mul(1_103_515_245).wrapping_add(12345);
        self.nonce.to_be_bytes()
    }

    /// Sends `interest` and waits for its Data or Nack (other packets are skipped).
    ///
    /// # Errors
    /// [`ClientError::Timeout`], socket errors.
    pub fn express(&mut self, interest: &Interest, timeout: Duration) -> Result<Answer, ClientError> {
        self.send(&interest.to_bytes())?;
        let deadline = Instant::now() + timeout;
        let want = interest.name.clone();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(p) = self.recv(left)? else { return Err(ClientError::Timeout(want.to_string())) };
            match classify(&p) {
                Ok(Some(inc)) => match inc.packet {
                    Network::Data(d) => {
                        let n = d.name().to_name();
                        if n == want || (interest.can_be_prefix && want.is_prefix_of(&n)) {
                            return Ok(Answer::Data(d.wire().to_vec()));
                        }
                    }
                    Network::Nack(r, i) if i.name().to_name() == want => return Ok(Answer::Nack(r)),
                    _ => {}
                },
                _ => continue,
            }
        }
    }

    /// Sends a management command and returns the forwarder's ControlResponse.
    ///
    /// # Errors
    /// Timeout, Nack, socket errors, or an answer that is not a ControlResponse.
    pub fn command(&mut self, module: &str, verb: &str, params: &ControlParameters) -> Result<ControlResponse, ClientError> {
        let name = Name::from_uri(&format!("/localhost/nfd/{module}/{verb}")).expect("valid").with(Component::generic(params.encode()));
        let mut i = Interest::new(name);
        i.nonce = Some(self.next_nonce());
        i.lifetime_ms = Some(4000);
        i.set_app_parameters(Vec::new());
        i.sign_digest_sha256();
        let name = i.name.to_string();
        match self.express(&i, Duration::from_secs(4))? {
            Answer::Data(w) => {
                let d = DataView::decode(&w).map_err(|e| ClientError::Bad(e.to_string()))?;
                ControlResponse::decode(d.content().unwrap_or_default()).map_err(|e| ClientError::Bad(e.to_string()))
            }
            Answer::Nack(r) => Err(ClientError::Nack(r, name)),
        }
    }

    /// Fetches every segment of a status dataset and returns its content.
    ///
    /// # Errors
    /// Timeout, Nack, socket errors.
    pub fn dataset(&mut self, prefix: &str) -> Result<Vec<u8>, ClientError> {
        let base = Name::from_uri(prefix).map_err(|e| ClientError::Bad(e.to_string()))?;
        let mut first = Interest::new(base.clone());
        first.can_be_prefix = true;
        first.must_be_fresh = true;
        first.nonce = Some(self.next_nonce());
        let mut content = Vec::new();
        let mut next = first;
        loop {
            let w = match self.express(&next, Duration::from_secs(4))? {
                Answer::Data(w) => w,
                Answer::Nack(r) => return Err(ClientError::Nack(r, next.name.to_string())),
            };
            let d = DataView::decode(&w).map_err(|e| ClientError::Bad(e.to_string()))?;
            content.extend_from_slice(d.content().unwrap_or_default());
            let name = d.name();
            let last = d.meta_info().and_then(|m| m.final_block_id).map(|c| c.to_owned());
            let this = name.last().map(|c| c.to_owned());
            if last.is_none() || last == this {
                return Ok(content);
            }
            let Some(Kind::Segment(s)) = name.last().map(|c| c.kind()) else { return Ok(content) };
            let mut i = Interest::new(name.prefix(name.len() - 1).to_name().with(Component::segment(s + 1)));
            i.nonce = Some(self.next_nonce());
            next = i;
        }
    }
}

trait ReadWrite: Read + Write {
    fn set_timeout(&self, t: Option<Duration>) -> io::Result<()>;
}

impl ReadWrite for UnixStream {
    fn set_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(t)
    }
}

impl ReadWrite for TcpStream {
    fn set_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        self.set_read_timeout(t)
    }
}
