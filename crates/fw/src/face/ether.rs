//! Ethernet faces, as NFD's `face_system.ether` makes them: NDN packets straight in Ethernet
//! frames of EtherType 0x8624, with no IP configuration at all (an interface needs no address).
//! A *multicast* face sends to the group address 01:00:5e:00:17:aa, a multi-access link to every
//! NDN node on the segment (NFD's `mcast`); a *unicast* face sends to one peer's address, made
//! by management (`faces/create ether://[mac]` with LocalUri `dev://<interface>`) or on demand
//! when a peer's frame arrives addressed to this interface (NFD's `listen`).
//!
//! # Overview
//! - The frame format is sans-I/O: [`put_header`] writes the 14-byte header (destination,
//!   source, EtherType); [`parse_frame`] takes a received frame apart and keeps it only if it is
//!   NDN's EtherType, sent by another node, and addressed to the port's group or to the
//!   interface itself ([`Destination`]). Its payload is cut to its first TLV element: a frame
//!   shorter than Ethernet's 60-byte minimum arrives padded with zeros, which are not part of
//!   the packet (as NFD does).
//! - The runtime's `EtherPort` is one interface's port on nexthop's packet I/O (`nexthop_io`:
//!   AF_XDP, or AF_PACKET where XDP cannot attach), which every Ethernet face on that interface
//!   shares. It sends whole frames; the payload's MTU is the interface's, and the runtime cuts
//!   larger packets into NDNLPv2 fragments to fit.
//! - Which face a frame belongs to (the port's multicast face, or the unicast face of its
//!   sender), making on-demand faces, no Nack on a multi-access link and reassembly per sender
//!   are the runtime's, as for UDP.

use std::fmt;

use nexthop_wire::packet::frame_len;

/// NDN's EtherType.
pub const NDN_ETHERTYPE: u16 = 0x8624;

/// NDN's Ethernet multicast group (NFD's default `mcast_group`).
pub const NDN_ETHER_GROUP: Mac = Mac([0x01, 0x00, 0x5e, 0x00, 0x17, 0xaa]);

/// Bytes of an Ethernet header: destination, source, EtherType.
pub const HEADER_BYTES: usize = 14;

/// An Ethernet (MAC) address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mac(pub [u8; 6]);

impl Mac {
    /// Parses `01:00:5e:00:17:aa` (or with `-` between the bytes; either case).
    pub fn parse(text: &str) -> Option<Mac> {
        let mut out = [0u8; 6];
        let mut parts = text.split([':', '-']);
        for byte in &mut out {
            let part = parts.next()?;
            if part.len() != 2 || !part.bytes().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            *byte = u8::from_str_radix(part, 16).ok()?;
        }
        parts.next().is_none().then_some(Mac(out))
    }

    /// A group (multicast) address: the lowest bit of its first byte is set.
    pub fn is_multicast(self) -> bool {
        self.0[0] & 1 == 1
    }
}

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5])
    }
}

/// Writes the header of a frame from `source` to `destination` carrying an NDN packet.
pub fn put_header(out: &mut [u8; HEADER_BYTES], destination: Mac, source: Mac) {
    out[..6].copy_from_slice(&destination.0);
    out[6..12].copy_from_slice(&source.0);
    out[12..].copy_from_slice(&NDN_ETHERTYPE.to_be_bytes());
}

/// Whom a frame kept by [`parse_frame`] was sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destination {
    /// The port's multicast group, this address.
    Group(Mac),
    /// This interface alone.
    Us,
}

/// What a received frame is to a port whose interface's address is `own` and whose group, if
/// it has one, is `group`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame<'a> {
    /// An NDN packet from another node, to the group or to this interface: its sender, whom it
    /// was sent to and the packet (padding cut).
    Packet {
        /// The sender's address.
        from: Mac,
        /// Whom it was sent to.
        to: Destination,
        /// The packet: the frame's first TLV element.
        packet: &'a [u8],
    },
    /// Not for this port: another EtherType or destination, or its own frame.
    NotOurs,
    /// For this port, but its payload does not start with a whole TLV element.
    Malformed,
}

/// Takes apart a frame received on a port whose interface's address is `own` and whose group
/// is `group` (see [`Frame`]).
pub fn parse_frame(frame: &[u8], own: Mac, group: Option<Mac>) -> Frame<'_> {
    let Some((header, payload)) = frame.split_first_chunk::<HEADER_BYTES>() else { return Frame::NotOurs };
    let mac = |at: usize| Mac(core::array::from_fn(|i| header[at + i]));
    let (destination, from) = (mac(0), mac(6));
    let to = if destination == own {
        Destination::Us
    } else if Some(destination) == group {
        Destination::Group(destination)
    } else {
        return Frame::NotOurs;
    };
    if u16::from_be_bytes([header[12], header[13]]) != NDN_ETHERTYPE || from == own {
        return Frame::NotOurs;
    }
    match frame_len(payload, payload.len()) {
        Ok(Some(len)) if len <= payload.len() => Frame::Packet { from, to, packet: &payload[..len] },
        _ => Frame::Malformed,
    }
}

/// What a received frame is to a port (the runtime's `EtherPort::take`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// A packet from another node, at `at` in the frame.
    Packet {
        /// Where the packet lies in the frame.
        at: std::ops::Range<usize>,
        /// The sender's address.
        from: Mac,
        /// Whom it was sent to.
        to: Destination,
    },
    /// A frame for the port whose payload does not start with a whole TLV element.
    Malformed,
    /// A frame for the port larger than the buffer, or a packet over the packet limit.
    Oversize,
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Mac = Mac([2, 0, 0, 0, 0, 0xa]);
    const B: Mac = Mac([2, 0, 0, 0, 0, 0xb]);

    fn frame(destination: Mac, source: Mac, payload: &[u8]) -> Vec<u8> {
        let mut header = [0u8; HEADER_BYTES];
        put_header(&mut header, destination, source);
        [&header[..], payload].concat()
    }

    #[test]
    fn addresses_parse_and_print_as_nfd_writes_them() {
        assert_eq!(Mac::parse("01:00:5E:00:17:AA"), Some(NDN_ETHER_GROUP));
        assert_eq!(Mac::parse("01-00-5e-00-17-aa"), Some(NDN_ETHER_GROUP));
        assert_eq!(NDN_ETHER_GROUP.to_string(), "01:00:5e:00:17:aa");
        assert!(NDN_ETHER_GROUP.is_multicast() && !A.is_multicast());
        for bad in ["", "01:00:5e:00:17", "01:00:5e:00:17:aa:00", "1:00:5e:00:17:aa", "01:00:5e:00:17:ag", "01:00:5e:00:17:+a"] {
            assert_eq!(Mac::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_frame_for_the_group_from_another_node_gives_its_packet_without_padding() {
        let interest = [0x05, 0x03, 0x07, 0x01, 0x08];
        let mut padded = interest.to_vec();
        padded.resize(46, 0); // Ethernet's minimum payload
        let f = frame(NDN_ETHER_GROUP, B, &padded);
        assert_eq!(f[12..14], [0x86, 0x24]);
        assert_eq!(
            parse_frame(&f, A, Some(NDN_ETHER_GROUP)),
            Frame::Packet { from: B, to: Destination::Group(NDN_ETHER_GROUP), packet: &interest }
        );
        let to_a = frame(A, B, &padded);
        for group in [None, Some(NDN_ETHER_GROUP)] {
            assert_eq!(parse_frame(&to_a, A, group), Frame::Packet { from: B, to: Destination::Us, packet: &interest }, "unicast");
        }
    }

    #[test]
    fn frames_not_for_the_face_are_passed_over_and_bad_ones_are_told_apart() {
        let packet = [0x05, 0x00];
        let group = Some(NDN_ETHER_GROUP);
        assert_eq!(parse_frame(&frame(NDN_ETHER_GROUP, A, &packet), A, group), Frame::NotOurs, "its own");
        assert_eq!(parse_frame(&frame(A, A, &packet), A, group), Frame::NotOurs, "its own, to itself");
        assert_eq!(parse_frame(&frame(B, A, &packet), Mac([2, 0, 0, 0, 0, 0xc]), group), Frame::NotOurs, "to another node");
        assert_eq!(parse_frame(&frame(NDN_ETHER_GROUP, B, &packet), A, None), Frame::NotOurs, "to a group it did not join");
        let other_group = Mac([0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb]);
        assert_eq!(parse_frame(&frame(other_group, B, &packet), A, group), Frame::NotOurs, "to another group");
        let mut ipv4 = frame(NDN_ETHER_GROUP, B, &packet);
        ipv4[12..14].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(parse_frame(&ipv4, A, group), Frame::NotOurs, "another EtherType");
        assert_eq!(parse_frame(&[0u8; 13], A, group), Frame::NotOurs, "shorter than a header");
        for payload in [&[][..], &[0x05][..], &[0x05, 0x09, 0x07][..]] {
            assert_eq!(parse_frame(&frame(NDN_ETHER_GROUP, B, payload), A, group), Frame::Malformed, "{payload:?}");
            assert_eq!(parse_frame(&frame(A, B, payload), A, None), Frame::Malformed, "{payload:?}");
        }
    }

    proptest::proptest! {
        /// Any bytes from the wire: no panic, and a packet is whole, inside the frame, from
        /// another node, to the group or to this interface.
        #[test]
        fn any_frame_is_taken_apart_without_panicking(
            body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
            to_us in proptest::prelude::any::<bool>(),
            ours in proptest::prelude::any::<bool>(),
        ) {
            let mut frame = body.clone();
            if ours && frame.len() >= HEADER_BYTES {
                let mut header = [0u8; HEADER_BYTES];
                put_header(&mut header, if to_us { A } else { NDN_ETHER_GROUP }, B);
                frame[..HEADER_BYTES].copy_from_slice(&header);
            }
            if let Frame::Packet { from, to, packet } = parse_frame(&frame, A, Some(NDN_ETHER_GROUP)) {
                proptest::prop_assert_ne!(from, A);
                proptest::prop_assert!(matches!(to, Destination::Us | Destination::Group(NDN_ETHER_GROUP)));
                proptest::prop_assert_eq!(&frame[HEADER_BYTES..HEADER_BYTES + packet.len()], packet);
                proptest::prop_assert_eq!(frame_len(packet, packet.len()).ok().flatten(), Some(packet.len()));
            }
        }
    }
}
