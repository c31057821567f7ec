//! WebSocket faces (RFC 6455) as NFD has them: browser and Node.js apps (NDNts's `WsTransport`,
//! NDN's web clients) reach the forwarder over a WebSocket, one NDN packet per binary message.
//!
//! Overview: [`WsCodec`] is one connection's protocol state, sans I/O. Fed what the TCP stream
//! delivered, it first answers the HTTP upgrade request (parsed by `httparse`; the
//! `Sec-WebSocket-Accept` of the client's key by tungstenite's `derive_accept_key`), then cuts
//! frames (headers by tungstenite's `FrameHeader`), unmasks the client's payloads and hands out
//! whole binary messages, joining continuation frames. It answers a ping with a pong and a close
//! with a close; text frames are not NDN and are skipped. [`put_packet_header`] writes the header
//! of the unmasked binary frame that carries a packet the forwarder sends. A protocol error (a bad upgrade
//! request, an unmasked client frame, a message above the packet limit) is a [`WsError`]: the
//! face closes. The same codec, made by [`WsCodec::client`], is the client side of nexthop's own
//! `nexthop_tools::client::Client` (the traffic generator): it checks the server's 101 response and
//! reads unmasked frames; [`put_client_frame`] masks what it sends.

use std::io::Cursor;

use tungstenite::handshake::derive_accept_key;
use tungstenite::protocol::frame::coding::{Control, Data, OpCode};
use tungstenite::protocol::frame::FrameHeader;

use crate::face::MAX_PACKET_BYTES;

/// Largest upgrade request accepted (bytes before the blank line).
const MAX_REQUEST_BYTES: usize = 8192;

/// Why a WebSocket connection is given up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WsError {
    /// The upgrade request is not one (or too long).
    #[error("bad WebSocket upgrade request: {0}")]
    Handshake(&'static str),
    /// A frame breaks RFC 6455 (unmasked from a client, bad opcode, reserved bits).
    #[error("WebSocket protocol error: {0}")]
    Protocol(String),
    /// A message larger than any NDN packet.
    #[error("WebSocket message of {0} bytes")]
    TooLarge(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting for the HTTP upgrade request (server) or its 101 response (client).
    Upgrade,
    /// Frames flow.
    Open,
    /// A close was exchanged: nothing more is read.
    Closed,
}

/// One WebSocket connection's protocol state.
#[derive(Debug)]
pub struct WsCodec {
    state: State,
    /// The client's side (nexthop's own client, the traffic generator): it reads the 101
    /// response with the accept key it expects, then unmasked frames from the server.
    client_expects: Option<String>,
    /// The message being joined from continuation frames, and while one is: whether it is
    /// binary.
    message: Vec<u8>,
    joining: Option<bool>,
}

impl Default for WsCodec {
    fn default() -> Self {
        WsCodec { state: State::Upgrade, client_expects: None, message: Vec::new(), joining: None }
    }
}

impl WsCodec {
    /// A client's codec, and the upgrade request to send first to `host` (with a key made
    /// from `seed`).
    pub fn client(host: &str, seed: u64) -> (WsCodec, String) {
        let key = data_encoding::BASE64.encode(&[seed.to_le_bytes(), seed.rotate_left(29).to_le_bytes()].concat());
        let request = format!(
            "GET / HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        let expects = derive_accept_key(key.as_bytes());
        (WsCodec { client_expects: Some(expects), ..WsCodec::default() }, request)
    }

    /// Whether the connection has closed (a close frame was received and answered).
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }

    /// Whether the upgrade is done, so packets may be sent.
    pub fn is_open(&self) -> bool {
        self.state == State::Open
    }

    /// Takes what it can of `input`: the upgrade request, then frames. Whole binary messages go
    /// to `on_message`; what must be sent back (the upgrade response, pongs, a close) is appended
    /// to `reply`. Returns how many bytes of `input` it consumed (the rest waits for more).
    ///
    /// # Errors
    /// [`WsError`]: the connection is to be closed.
    pub fn feed(&mut self, input: &[u8], reply: &mut Vec<u8>, mut on_message: impl FnMut(&[u8])) -> Result<usize, WsError> {
        let mut used = 0;
        if self.state == State::Upgrade && self.client_expects.is_some() {
            match upgraded(input, self.client_expects.as_deref().unwrap_or_default())? {
                None => return Ok(0),
                Some(len) => {
                    self.state = State::Open;
                    used = len;
                }
            }
        }
        if self.state == State::Upgrade {
            match upgrade(input)? {
                None => return Ok(0),
                Some((len, response)) => {
                    reply.extend_from_slice(response.as_bytes());
                    self.state = State::Open;
                    used = len;
                }
            }
        }
        while self.state == State::Open {
            let mut cursor = Cursor::new(&input[used..]);
            let (header, len) = match FrameHeader::parse(&mut cursor) {
                Ok(Some(h)) => h,
                Ok(None) => break,
                Err(e) => return Err(WsError::Protocol(e.to_string())),
            };
            let head = cursor.position() as usize;
            if len > MAX_PACKET_BYTES as u64 || self.message.len() as u64 + len > MAX_PACKET_BYTES as u64 {
                return Err(WsError::TooLarge(self.message.len() as u64 + len));
            }
            let Some(payload) = input.get(used + head..used + head + len as usize) else { break };
            let mask = match (header.mask, self.client_expects.is_some()) {
                (Some(mask), false) => mask,
                (None, true) => [0; 4],
                (None, false) => return Err(WsError::Protocol("a client frame without a mask".into())),
                (Some(_), true) => return Err(WsError::Protocol("a masked frame from the server".into())),
            };
            if header.rsv1 || header.rsv2 || header.rsv3 {
                return Err(WsError::Protocol("reserved bits set".into()));
            }
            used += head + payload.len();
            let unmasked = payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]);
            match header.opcode {
                OpCode::Data(d @ (Data::Binary | Data::Text | Data::Continue)) => {
                    let binary = match (d, self.joining) {
                        (Data::Continue, Some(binary)) => binary,
                        (Data::Continue, None) => return Err(WsError::Protocol("a continuation of no message".into())),
                        (_, Some(_)) => return Err(WsError::Protocol("a new message inside a fragmented one".into())),
                        (d, None) => d == Data::Binary,
                    };
                    self.message.extend(unmasked);
                    if header.is_final {
                        if binary {
                            on_message(&self.message);
                        }
                        self.message.clear();
                        self.joining = None;
                    } else {
                        self.joining = Some(binary);
                    }
                }
                OpCode::Control(Control::Ping) => {
                    let body: Vec<u8> = unmasked.collect();
                    reply.extend_from_slice(&frame_header(OpCode::Control(Control::Pong), body.len()));
                    reply.extend_from_slice(&body);
                }
                OpCode::Control(Control::Pong) => {}
                OpCode::Control(Control::Close) => {
                    reply.extend_from_slice(&frame_header(OpCode::Control(Control::Close), 0));
                    self.state = State::Closed;
                }
                OpCode::Data(Data::Reserved(c)) | OpCode::Control(Control::Reserved(c)) => {
                    return Err(WsError::Protocol(format!("reserved opcode {c}")));
                }
            }
        }
        Ok(used)
    }
}

/// The header of one final, unmasked frame of `opcode` carrying `len` bytes (what a server sends).
pub fn frame_header(opcode: OpCode, len: usize) -> Vec<u8> {
    let header = FrameHeader { opcode, ..FrameHeader::default() };
    let mut out = Vec::with_capacity(header.len(len as u64));
    header.format(len as u64, &mut out).expect("a Vec takes any write");
    out
}

/// Appends the header of a binary frame carrying one packet of `len` bytes to `out`.
pub fn put_packet_header(len: usize, out: &mut Vec<u8>) {
    let header = FrameHeader { opcode: OpCode::Data(Data::Binary), ..FrameHeader::default() };
    header.format(len as u64, out).expect("a Vec takes any write");
}

/// Appends one binary frame carrying `packet` as a client sends it: masked with `mask`.
pub fn put_client_frame(packet: &[u8], mask: [u8; 4], out: &mut Vec<u8>) {
    let header = FrameHeader { opcode: OpCode::Data(Data::Binary), mask: Some(mask), ..FrameHeader::default() };
    header.format(packet.len() as u64, out).expect("a Vec takes any write");
    out.extend(packet.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
}

/// The length of an HTTP head that `httparse` parsed from `input_len` bytes (`None`: not all
/// there yet).
fn head_len(parsed: httparse::Result<usize>, input_len: usize) -> Result<Option<usize>, WsError> {
    match parsed {
        Ok(httparse::Status::Complete(len)) => Ok(Some(len)),
        Ok(httparse::Status::Partial) if input_len > MAX_REQUEST_BYTES => Err(WsError::Handshake("too long")),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(_) => Err(WsError::Handshake("not HTTP")),
    }
}

/// The server's 101 response at the front of `input`, if it is all there and accepts the key
/// whose answer is `expects`: its length.
fn upgraded(input: &[u8], expects: &str) -> Result<Option<usize>, WsError> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    let Some(len) = head_len(response.parse(input), input.len())? else { return Ok(None) };
    if response.code != Some(101) {
        return Err(WsError::Handshake("the server refused the upgrade"));
    }
    let accept = response.headers.iter().find(|h| h.name.eq_ignore_ascii_case("Sec-WebSocket-Accept")).map(|h| h.value);
    if accept != Some(expects.as_bytes()) {
        return Err(WsError::Handshake("a wrong Sec-WebSocket-Accept"));
    }
    Ok(Some(len))
}

/// The upgrade request at the front of `input`, if it is all there: its length and the 101
/// response.
fn upgrade(input: &[u8]) -> Result<Option<(usize, String)>, WsError> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut request = httparse::Request::new(&mut headers);
    let Some(len) = head_len(request.parse(input), input.len())? else { return Ok(None) };
    if request.method != Some("GET") {
        return Err(WsError::Handshake("not a GET"));
    }
    let header = |name: &str| request.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value);
    if !header("Upgrade").is_some_and(|v| v.eq_ignore_ascii_case(b"websocket")) {
        return Err(WsError::Handshake("no Upgrade: websocket"));
    }
    let key = header("Sec-WebSocket-Key").ok_or(WsError::Handshake("no Sec-WebSocket-Key"))?;
    let response = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
        derive_accept_key(key)
    );
    Ok(Some((len, response)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client frame: `opcode`, final or not, masked with `mask`.
    fn client_frame(opcode: OpCode, is_final: bool, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
        let header = FrameHeader { opcode, is_final, mask: Some(mask), ..FrameHeader::default() };
        let mut out = Vec::new();
        header.format(payload.len() as u64, &mut out).unwrap();
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        out
    }

    const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

    #[test]
    fn the_upgrade_answers_rfc_6455s_example_key() {
        let mut c = WsCodec::default();
        let mut reply = Vec::new();
        assert_eq!(c.feed(&REQUEST[..20], &mut reply, |_| panic!()), Ok(0), "half a request waits");
        assert_eq!(c.feed(REQUEST, &mut reply, |_| panic!()), Ok(REQUEST.len()));
        let reply = String::from_utf8(reply).unwrap();
        assert!(reply.starts_with("HTTP/1.1 101 "), "{reply}");
        // RFC 6455 section 1.3's example.
        assert!(reply.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), "{reply}");
        assert!(c.is_open());
    }

    #[test]
    fn messages_are_unmasked_joined_and_cut_at_frame_bounds() {
        let mut c = WsCodec::default();
        let mut reply = Vec::new();
        let mut input = REQUEST.to_vec();
        input.extend(client_frame(OpCode::Data(Data::Binary), true, b"\x05\x01a", [1, 2, 3, 4]));
        input.extend(client_frame(OpCode::Data(Data::Binary), false, b"\x06\x03", [9, 9, 9, 9]));
        input.extend(client_frame(OpCode::Control(Control::Ping), true, b"hi", [7, 0, 0, 7]));
        input.extend(client_frame(OpCode::Data(Data::Continue), true, b"xyz", [5, 6, 7, 8]));
        input.extend(client_frame(OpCode::Data(Data::Text), true, b"not ndn", [1, 1, 1, 1]));
        let tail = client_frame(OpCode::Data(Data::Binary), true, b"\x05\x00", [3, 3, 3, 3]);
        input.extend_from_slice(&tail[..3]);
        let mut got = Vec::new();
        let used = c.feed(&input, &mut reply, |m| got.push(m.to_vec())).unwrap();
        assert_eq!(used, input.len() - 3, "the partial frame waits");
        assert_eq!(got, [b"\x05\x01a".to_vec(), b"\x06\x03xyz".to_vec()]);
        // The pong follows the 101 response, unmasked, with the ping's body.
        let mut pong = frame_header(OpCode::Control(Control::Pong), 2);
        pong.extend_from_slice(b"hi");
        assert!(reply.ends_with(&pong));
        // A close is answered, and then nothing more is read.
        let mut rest = tail[3..].to_vec();
        rest.splice(0..0, tail[..3].iter().copied());
        rest.extend(client_frame(OpCode::Control(Control::Close), true, b"", [0, 0, 0, 0]));
        got.clear();
        reply.clear();
        assert_eq!(c.feed(&rest, &mut reply, |m| got.push(m.to_vec())), Ok(rest.len()));
        assert_eq!(got, [b"\x05\x00".to_vec()]);
        assert_eq!(reply, frame_header(OpCode::Control(Control::Close), 0));
        assert!(c.is_closed());
    }

    #[test]
    fn a_client_and_a_server_codec_talk() {
        let (mut client, request) = WsCodec::client("127.0.0.1:9696", 42);
        let (mut server, mut to_client, mut to_server) = (WsCodec::default(), Vec::new(), request.into_bytes());
        put_client_frame(b"\x05\x01z", [4, 3, 2, 1], &mut to_server);
        let mut at_server = Vec::new();
        assert_eq!(server.feed(&to_server, &mut to_client, |m| at_server.push(m.to_vec())), Ok(to_server.len()));
        assert_eq!(at_server, [b"\x05\x01z".to_vec()]);
        put_packet_header(3, &mut to_client);
        to_client.extend_from_slice(b"\x06\x01y");
        let mut at_client = Vec::new();
        assert_eq!(client.feed(&to_client, &mut Vec::new(), |m| at_client.push(m.to_vec())), Ok(to_client.len()));
        assert_eq!(at_client, [b"\x06\x01y".to_vec()]);
        // A server that answers another key is refused.
        let (mut other, _) = WsCodec::client("h", 43);
        assert!(matches!(other.feed(&to_client, &mut Vec::new(), |_| {}), Err(WsError::Handshake(_))));
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let open = || {
            let mut c = WsCodec::default();
            c.feed(REQUEST, &mut Vec::new(), |_| {}).unwrap();
            c
        };
        let mut reply = Vec::new();
        assert!(matches!(WsCodec::default().feed(b"POST / HTTP/1.1\r\n\r\n", &mut reply, |_| {}), Err(WsError::Handshake(_))));
        assert!(matches!(WsCodec::default().feed(b"\x05\x01\x07", &mut reply, |_| {}), Err(WsError::Handshake(_))));
        assert!(matches!(WsCodec::default().feed(&[b'G'; 9000], &mut reply, |_| {}), Err(WsError::Handshake(_))));
        let mut unmasked = Vec::new();
        put_packet_header(2, &mut unmasked);
        unmasked.extend_from_slice(b"\x05\x00");
        assert!(matches!(open().feed(&unmasked, &mut reply, |_| {}), Err(WsError::Protocol(_))));
        let huge = client_frame(OpCode::Data(Data::Binary), true, &vec![0; MAX_PACKET_BYTES + 1], [1, 2, 3, 4]);
        assert!(matches!(open().feed(&huge, &mut reply, |_| {}), Err(WsError::TooLarge(_))));
        let stray = client_frame(OpCode::Data(Data::Continue), true, b"x", [1, 2, 3, 4]);
        assert!(matches!(open().feed(&stray, &mut reply, |_| {}), Err(WsError::Protocol(_))));
        let mut twice = client_frame(OpCode::Data(Data::Binary), false, b"", [1, 2, 3, 4]);
        twice.extend(client_frame(OpCode::Data(Data::Binary), true, b"y", [1, 2, 3, 4]));
        assert!(matches!(open().feed(&twice, &mut reply, |_| {}), Err(WsError::Protocol(_))));
        let reserved = client_frame(OpCode::Control(Control::Reserved(0xb)), true, b"", [1, 2, 3, 4]);
        assert!(open().feed(&reserved, &mut reply, |_| {}).is_err());
    }

    proptest::proptest! {
        /// Any bytes from the network, as an upgrade request or after one, on either side: an
        /// error, a wait or messages, never a panic; what is consumed is never more than given.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200), side in 0..3u8) {
            let mut c = match side {
                0 => WsCodec::default(),
                1 => {
                    let mut c = WsCodec::default();
                    c.feed(REQUEST, &mut Vec::new(), |_| {}).unwrap();
                    c
                }
                _ => WsCodec { state: State::Open, ..WsCodec::client("h", 1).0 },
            };
            if let Ok(used) = c.feed(&bytes, &mut Vec::new(), |m| assert!(m.len() <= MAX_PACKET_BYTES)) {
                proptest::prop_assert!(used <= bytes.len());
            }
        }
    }
}
