//! TagNet packets on the wire: the engine's address header, then a packet header, then the
//! payload; in an Ethernet frame of EtherType [`ETHERTYPE`] or as a UDP datagram's payload.
//!
//! # Overview
//! A TagNet packet is
//! - the address header of `nexthop_lookup::tag::Address` (28 bytes by descriptor, 24 by
//!   locator: docs/tagnet.md);
//! - the packet header, 6 bytes: the [`Kind`] (push, interest, data), the TTL each router
//!   decrements, flags (bit 0: a reply locator follows), a reserved byte, the payload's length
//!   (2 bytes LE);
//! - with the flag, a reply locator in the address header's locator form (24 bytes): an
//!   interest carries its consumer's, a data packet its producer's (the paper's section 4.5);
//! - the payload.
//!
//! A first byte of address type [`TYPE_CONTROL`] marks a link-local control message instead
//! (`message.rs`), which no router forwards. Frames: a 14-byte Ethernet header (TagNet links
//! are point to point: the destination is the broadcast address, the source the sending port's
//! own), then the packet; bytes after the payload (an Ethernet minimum frame's padding) are
//! ignored.

use nexthop_lookup::tag::{Address, Label, TagError, DESCRIPTOR_HEADER, LOCATOR_HEADER};

/// TagNet's EtherType: IEEE 802's Local Experimental EtherType 1.
pub const ETHERTYPE: u16 = 0x88b5;
/// The UDP port TagNet tunnels use unless configured otherwise.
pub const UDP_PORT: u16 = 6464;
/// Bytes of an Ethernet header (no VLAN tag).
pub const ETHER_BYTES: usize = 14;
/// The address type of a link-local control message.
pub const TYPE_CONTROL: u8 = 3;
/// Bytes of the packet header after the address.
pub const PACKET_HEADER: usize = 6;
/// A new packet's TTL.
pub const DEFAULT_TTL: u8 = 32;
/// The header flag: a reply locator follows.
const FLAG_REPLY: u8 = 1;

/// What a packet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Published content, to every subscriber whose descriptor it matches (up to the fan-out).
    Push = 1,
    /// A request, to the producer whose descriptor is the largest subset (fan-out 1), or by
    /// locator to a producer met before.
    Interest = 2,
    /// A producer's answer, by the consumer's locator.
    Data = 3,
}

impl Kind {
    fn from_byte(b: u8) -> Result<Kind, PacketError> {
        match b {
            1 => Ok(Kind::Push),
            2 => Ok(Kind::Interest),
            3 => Ok(Kind::Data),
            k => Err(PacketError::BadKind(k)),
        }
    }
}

/// A locator on a tree: where a reply goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Locator {
    /// The tree.
    pub tree: u16,
    /// The node's label on it.
    pub label: Label,
}

impl Locator {
    /// The address that sends a packet to this locator.
    pub fn address(&self) -> Address {
        Address::Locator { tree: self.tree, label: self.label }
    }
}

/// Why bytes are not a TagNet packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PacketError {
    /// The address header is not one (`nexthop_lookup::tag::Address::parse`).
    #[error("address: {0}")]
    Address(#[from] TagError),
    /// The packet header, reply locator or payload is cut short.
    #[error("the packet is cut short")]
    Truncated,
    /// Neither push, interest nor data.
    #[error("unknown packet kind {0}")]
    BadKind(u8),
    /// A reply field that is not a locator.
    #[error("the reply address is not a locator")]
    BadReply,
    /// A payload longer than a length field holds.
    #[error("a payload of {0} bytes is longer than 65,535")]
    TooLong(usize),
}

/// A packet to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet<'a> {
    /// Where it goes.
    pub address: Address,
    /// What it is.
    pub kind: Kind,
    /// Hops it may still take.
    pub ttl: u8,
    /// Where a reply goes.
    pub reply: Option<Locator>,
    /// The content.
    pub payload: &'a [u8],
}

impl Packet<'_> {
    /// Appends the packet to `out`.
    ///
    /// # Errors
    /// [`PacketError::TooLong`]: nothing is appended.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<(), PacketError> {
        let len = u16::try_from(self.payload.len()).map_err(|_| PacketError::TooLong(self.payload.len()))?;
        self.address.encode(out);
        let flags = if self.reply.is_some() { FLAG_REPLY } else { 0 };
        out.extend_from_slice(&[self.kind as u8, self.ttl, flags, 0]);
        out.extend_from_slice(&len.to_le_bytes());
        if let Some(r) = self.reply {
            r.address().encode(out);
        }
        out.extend_from_slice(self.payload);
        Ok(())
    }

    /// The packet in an Ethernet frame from `source`, to the broadcast address.
    ///
    /// # Errors
    /// [`PacketError::TooLong`].
    pub fn frame(&self, source: [u8; 6]) -> Result<Vec<u8>, PacketError> {
        let mut out = ether_header(source);
        self.encode(&mut out)?;
        Ok(out)
    }
}

/// An Ethernet header of TagNet from `source` to the broadcast address.
pub fn ether_header(source: [u8; 6]) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(&[0xff; 6]);
    out.extend_from_slice(&source);
    out.extend_from_slice(&ETHERTYPE.to_be_bytes());
    out
}

/// The TagNet packet in an Ethernet frame, or `None` for a frame of another EtherType (or
/// shorter than its header).
pub fn in_frame(frame: &[u8]) -> Option<&[u8]> {
    let ethertype = frame.get(12..14)?;
    (u16::from_be_bytes([ethertype[0], ethertype[1]]) == ETHERTYPE).then(|| &frame[ETHER_BYTES..])
}

/// Whether a TagNet packet is a control message (by its first byte; empty bytes are not).
pub fn is_control(packet: &[u8]) -> bool {
    packet.first().is_some_and(|b| b & 0x0f == TYPE_CONTROL)
}

/// A parsed packet, borrowing its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parsed<'a> {
    /// Where it goes.
    pub address: Address,
    /// What it is.
    pub kind: Kind,
    /// Hops it may still take.
    pub ttl: u8,
    /// Where the TTL byte is in the packet (a router decrements it in place).
    pub ttl_at: usize,
    /// Where a reply goes.
    pub reply: Option<Locator>,
    /// The content.
    pub payload: &'a [u8],
}

/// Reads a TagNet packet.
///
/// # Errors
/// A [`PacketError`] for bytes that are not a whole packet (bytes after the payload are
/// allowed).
pub fn parse(packet: &[u8]) -> Result<Parsed<'_>, PacketError> {
    let address = Address::parse(packet)?;
    let at = match address {
        Address::Descriptor { .. } => DESCRIPTOR_HEADER,
        Address::Locator { .. } => LOCATOR_HEADER,
    };
    let h = packet.get(at..at + PACKET_HEADER).ok_or(PacketError::Truncated)?;
    let kind = Kind::from_byte(h[0])?;
    let (ttl, flags) = (h[1], h[2]);
    let len = usize::from(u16::from_le_bytes([h[4], h[5]]));
    let mut rest = at + PACKET_HEADER;
    let reply = if flags & FLAG_REPLY != 0 {
        let bytes = packet.get(rest..rest + LOCATOR_HEADER).ok_or(PacketError::Truncated)?;
        rest += LOCATOR_HEADER;
        match Address::parse(bytes) {
            Ok(Address::Locator { tree, label }) => Some(Locator { tree, label }),
            Ok(Address::Descriptor { .. }) | Err(_) => return Err(PacketError::BadReply),
        }
    } else {
        None
    };
    let payload = packet.get(rest..rest + len).ok_or(PacketError::Truncated)?;
    Ok(Parsed { address, kind, ttl, ttl_at: at + 1, reply, payload })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nexthop_lookup::tag::{Descriptor, Fanout};

    fn push(payload: &[u8]) -> Packet<'_> {
        let descriptor = Descriptor::from_tags(["news", "sport"]).unwrap();
        Packet {
            address: Address::Descriptor { descriptor, fanout: Fanout::ALL, tree: 2 },
            kind: Kind::Push,
            ttl: DEFAULT_TTL,
            reply: None,
            payload,
        }
    }

    #[test]
    fn packets_round_trip_in_frames() {
        let reply = Locator { tree: 2, label: Label { id: 7, list: 0b101, mask: 0b100 } };
        let interest = Packet { kind: Kind::Interest, reply: Some(reply), ..push(b"q") };
        for p in [push(b"hello"), push(b""), interest] {
            let frame = p.frame([2, 0, 0, 0, 0, 1]).unwrap();
            let bytes = in_frame(&frame).unwrap();
            assert!(!is_control(bytes));
            let got = parse(bytes).unwrap();
            assert_eq!((got.address, got.kind, got.ttl, got.reply, got.payload), (p.address, p.kind, p.ttl, p.reply, p.payload));
            assert_eq!(bytes[got.ttl_at], p.ttl);
            // Padding after the payload is ignored.
            let mut padded = bytes.to_vec();
            padded.extend_from_slice(&[0; 20]);
            assert_eq!(parse(&padded).unwrap().payload, p.payload);
        }
    }

    #[test]
    fn bad_packets_are_typed_errors() {
        let mut bytes = Vec::new();
        push(b"hello").encode(&mut bytes).unwrap();
        for cut in 0..bytes.len() {
            assert!(parse(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = bytes.clone();
        bad[DESCRIPTOR_HEADER] = 9;
        assert_eq!(parse(&bad), Err(PacketError::BadKind(9)));
        let mut zero = bytes.clone();
        zero[1] = 0;
        assert_eq!(parse(&zero), Err(PacketError::Address(TagError::ZeroFanout)));
        let mut reply = bytes.clone();
        reply[DESCRIPTOR_HEADER + 2] = FLAG_REPLY;
        reply.splice(DESCRIPTOR_HEADER + PACKET_HEADER..DESCRIPTOR_HEADER + PACKET_HEADER, bytes[..24].iter().copied());
        assert_eq!(parse(&reply), Err(PacketError::BadReply));
        assert_eq!(push(&vec![0; 70_000]).encode(&mut Vec::new()), Err(PacketError::TooLong(70_000)));
        assert_eq!(in_frame(&[0; 13]), None);
        assert_eq!(in_frame(&[0; 60]), None);
    }
}
