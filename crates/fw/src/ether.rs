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
//! - [`EtherPort`] is one interface's socket, which every Ethernet face on that interface
//!   shares: a raw packet socket (`AF_PACKET`, which needs `CAP_NET_RAW`) bound to the
//!   interface and to NDN's EtherType, a member of the group when there is one
//!   (`PACKET_ADD_MEMBERSHIP`). It sends whole frames; the payload's MTU is the interface's,
//!   and the runtime cuts larger packets into NDNLPv2 fragments to fit. The runtime receives
//!   frames in batches (`recvmmsg`, [`crate::udp_batch::RecvBatch`]) and hands each to
//!   [`EtherPort::take`].
//! - Which face a frame belongs to (the port's multicast face, or the unicast face of its
//!   sender), making on-demand faces, no Nack on a multi-access link and reassembly per sender
//!   are the runtime's, as for UDP.

use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use nexthop_wire::packet::frame_len;

use crate::packet::MAX_PACKET_BYTES;

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

/// What a received frame is to a port ([`EtherPort::take`]).
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

/// One interface's Ethernet socket, shared by the Ethernet faces on it.
#[derive(Debug)]
pub struct EtherPort {
    fd: OwnedFd,
    interface: String,
    /// The interface's index: an interface made again under its name gets another.
    index: u32,
    own: Mac,
    group: Option<Mac>,
    mtu: usize,
}

/// The `sockaddr_ll` of interface `index` for NDN's EtherType.
fn link_address(index: u32) -> io::Result<libc::sockaddr_ll> {
    // SAFETY: sockaddr_ll is plain data, valid all zeros.
    let mut a: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    a.sll_family = libc::AF_PACKET as u16;
    a.sll_protocol = NDN_ETHERTYPE.to_be();
    a.sll_ifindex = i32::try_from(index).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface index out of range"))?;
    Ok(a)
}

/// -1 from a libc call as the error it set.
fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

impl EtherPort {
    /// Opens the port of the interface named `interface`, of index `index` and address `own`,
    /// joining `group` if there is one.
    ///
    /// # Errors
    /// A group that is not a multicast address; the socket call that failed (`EPERM` without
    /// `CAP_NET_RAW`, `ENODEV` for an interface that went away); an MTU too small to carry a
    /// fragment.
    pub fn open(interface: &str, index: u32, own: Mac, group: Option<Mac>) -> io::Result<EtherPort> {
        if let Some(group) = group.filter(|g| !g.is_multicast()) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{group} is not a multicast address")));
        }
        let kind = libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC;
        // SAFETY: socket takes no pointers; a non-negative result is a new descriptor we own.
        let fd = check(unsafe { libc::socket(libc::AF_PACKET, kind, i32::from(NDN_ETHERTYPE.to_be())) })?;
        // SAFETY: `fd` was just returned by socket and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mtu = interface_mtu(fd.as_raw_fd(), interface)?;
        if mtu < crate::fragmentation::MIN_MTU {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{interface}'s MTU of {mtu} is too small for NDN")));
        }
        let address = link_address(index)?;
        // SAFETY: the pointer and length describe `address`, a live sockaddr_ll.
        check(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&raw const address).cast::<libc::sockaddr>(),
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        if let Some(group) = group {
            // SAFETY: packet_mreq is plain data, valid all zeros.
            let mut membership: libc::packet_mreq = unsafe { std::mem::zeroed() };
            membership.mr_ifindex = address.sll_ifindex;
            membership.mr_type = libc::PACKET_MR_MULTICAST as u16;
            membership.mr_alen = 6;
            membership.mr_address[..6].copy_from_slice(&group.0);
            // SAFETY: the pointer and length describe `membership`, a live packet_mreq.
            check(unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_PACKET,
                    libc::PACKET_ADD_MEMBERSHIP,
                    (&raw const membership).cast::<libc::c_void>(),
                    std::mem::size_of::<libc::packet_mreq>() as libc::socklen_t,
                )
            })?;
        }
        crate::udp_batch::set_socket_buffers(fd.as_raw_fd(), crate::udp_batch::SOCKET_BUFFER_BYTES);
        Ok(EtherPort { fd, interface: interface.to_string(), index, own, group, mtu })
    }

    /// The interface's name.
    pub fn interface(&self) -> &str {
        &self.interface
    }

    /// The interface's index.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The multicast group it joined, if any.
    pub fn group(&self) -> Option<Mac> {
        self.group
    }

    /// The largest packet one frame carries (the interface's MTU).
    pub fn mtu(&self) -> usize {
        self.mtu
    }

    /// The LocalUri of its faces, as NFD shows it: `dev://<interface>`.
    pub fn local_uri(&self) -> String {
        format!("dev://{}", self.interface)
    }

    /// The socket, for the poll.
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// What a frame the port's socket received is to it (`None`: not its, [`Frame::NotOurs`]);
    /// `cut_short` says the frame was longer than the buffer it was received into (which holds
    /// more than any packet). A packet over the packet limit, or in a frame cut short, is
    /// [`Received::Oversize`].
    pub fn take(&self, frame: &[u8], cut_short: bool) -> Option<Received> {
        Some(match parse_frame(frame, self.own, self.group) {
            Frame::NotOurs => return None,
            _ if cut_short => Received::Oversize,
            Frame::Packet { packet, .. } if packet.len() > MAX_PACKET_BYTES => Received::Oversize,
            Frame::Packet { from, to, packet } => Received::Packet { at: HEADER_BYTES..HEADER_BYTES + packet.len(), from, to },
            Frame::Malformed => Received::Malformed,
        })
    }

    /// Sends `packet` (at most [`EtherPort::mtu`] bytes) to `to` (the group or a peer) in one
    /// frame.
    ///
    /// # Errors
    /// The send error (would-block when the socket's buffer is full).
    pub fn send(&self, to: Mac, packet: &[u8]) -> io::Result<()> {
        let mut header = [0u8; HEADER_BYTES];
        put_header(&mut header, to, self.own);
        let parts = [
            libc::iovec { iov_base: header.as_mut_ptr().cast(), iov_len: HEADER_BYTES },
            libc::iovec { iov_base: packet.as_ptr().cast_mut().cast(), iov_len: packet.len() },
        ];
        // SAFETY: both iovecs describe live buffers of their lengths, which writev only reads.
        let n = unsafe { libc::writev(self.fd.as_raw_fd(), parts.as_ptr(), 2) };
        check(n as libc::c_int).map(|_| ())
    }
}

/// The MTU of the interface named `interface`, asked of the kernel through socket `fd`
/// (`SIOCGIFMTU`): the interface of the socket's network namespace, which sysfs, mounted for
/// another, may not show.
fn interface_mtu(fd: RawFd, interface: &str) -> io::Result<usize> {
    let name = interface.as_bytes();
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(&0) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("{interface:?} is not an interface name")));
    }
    // SAFETY: ifreq is plain data, valid all zeros.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (to, &b) in request.ifr_name.iter_mut().zip(name) {
        *to = b as libc::c_char;
    }
    // SAFETY: SIOCGIFMTU reads the name from, and writes the MTU into, the live ifreq the
    // pointer names.
    check(unsafe { libc::ioctl(fd, libc::SIOCGIFMTU, &raw mut request) })?;
    // SAFETY: a successful SIOCGIFMTU wrote the union's MTU member.
    let mtu = unsafe { request.ifr_ifru.ifru_mtu };
    usize::try_from(mtu).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("{interface}'s MTU: {mtu}")))
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

    /// The kernel answers for an interface there is; a name too long, with a NUL, empty or of
    /// no interface is an error.
    #[test]
    fn an_interface_mtu_is_asked_of_the_kernel() {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let fd = socket.as_raw_fd();
        assert!(interface_mtu(fd, "lo").unwrap() >= 1500);
        for bad in ["", "a\0b", "sixteen-bytes-xx", "../../etc", "nx-no-such-if"] {
            assert!(interface_mtu(fd, bad).is_err(), "{bad:?}");
        }
    }
}
