//! Ethernet + IPv4/IPv6 headers as a router reads and rewrites them: validation, the fields
//! routing needs, and the rewrite (TTL or hop limit less one, the IPv4 checksum updated
//! incrementally, RFC 1624; new Ethernet addresses).
//!
//! # Overview
//! - [`parse`] checks what a router must before forwarding (RFC 1812 §5.2.2 for IPv4: length,
//!   version, header length, checksum, total length; RFC 8200 for IPv6: length, version, payload
//!   length, the extension-header chain inside the packet) and the martian addresses, and
//!   returns the destination to look up — or the frame's fate: the kernel's (not IP, options,
//!   multicast) or a drop, for a reason.
//! - The TTL is checked after the route lookup ([`Packet::expired`]): a packet for the router
//!   itself is delivered whatever its TTL, as the kernel does.
//! - [`rewrite`] is the forwarding change: addresses, TTL, checksum.

use super::counters::{DropReason, Punt};

/// Bytes of an Ethernet header (no VLAN tag).
pub const ETHER_HEADER: usize = 14;
/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// Bytes of an IPv4 header without options.
pub const IPV4_HEADER: usize = 20;
/// Bytes of the IPv6 fixed header.
pub const IPV6_HEADER: usize = 40;
/// The most IPv6 extension headers [`parse`] walks before the upper layer; a longer chain goes
/// to the kernel (which walks it as it likes).
pub const MAX_EXTENSION_HEADERS: usize = 8;

/// An Ethernet (MAC) address.
pub type Mac = [u8; 6];

/// A packet the fast path may route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packet {
    /// IPv4 to `dst`, with its TTL.
    V4 {
        /// Destination address.
        dst: u32,
        /// Time to live.
        ttl: u8,
    },
    /// IPv6 to `dst`, with its hop limit.
    V6 {
        /// Destination address.
        dst: u128,
        /// Hop limit.
        hop_limit: u8,
    },
}

impl Packet {
    /// Whether the packet may not be forwarded: TTL or hop limit 1 or less.
    pub fn expired(self) -> bool {
        match self {
            Packet::V4 { ttl, .. } => ttl <= 1,
            Packet::V6 { hop_limit, .. } => hop_limit <= 1,
        }
    }
}

/// What [`parse`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    /// A packet to look up.
    Route(Packet),
    /// A frame for the kernel.
    Kernel(Punt),
    /// A frame to drop.
    Drop(DropReason),
}

#[inline(always)]
fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Reads and checks `frame`.
pub fn parse(frame: &[u8]) -> Parsed {
    if frame.len() < ETHER_HEADER {
        return Parsed::Drop(DropReason::Truncated);
    }
    match be16(frame, 12) {
        ETHERTYPE_IPV4 => parse_v4(&frame[ETHER_HEADER..]),
        ETHERTYPE_IPV6 => parse_v6(&frame[ETHER_HEADER..]),
        _ => Parsed::Kernel(Punt::NotIp),
    }
}

fn parse_v4(ip: &[u8]) -> Parsed {
    if ip.len() < IPV4_HEADER {
        return Parsed::Drop(DropReason::Truncated);
    }
    if ip[0] >> 4 != 4 {
        return Parsed::Drop(DropReason::BadVersion);
    }
    let header = usize::from(ip[0] & 0x0f) * 4;
    if header < IPV4_HEADER || header > ip.len() {
        return Parsed::Drop(DropReason::BadHeaderLength);
    }
    if checksum(&ip[..header]) != 0xffff {
        return Parsed::Drop(DropReason::BadChecksum);
    }
    let total = usize::from(be16(ip, 2));
    if total < header || total > ip.len() {
        return Parsed::Drop(DropReason::BadLength);
    }
    let src = u32::from_be_bytes([ip[12], ip[13], ip[14], ip[15]]);
    let dst = u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]]);
    let first = dst >> 24;
    if first == 0 || first == 127 || (first >= 240 && dst != u32::MAX) {
        return Parsed::Drop(DropReason::MartianDestination);
    }
    if (224..240).contains(&first) || dst == u32::MAX || dst >> 16 == 0xa9fe {
        // Multicast, the limited broadcast, link-local 169.254/16: never forwarded, and the
        // kernel's even from 0.0.0.0 (DHCP).
        return Parsed::Kernel(Punt::NotUnicast);
    }
    if martian_source_v4(src) {
        return Parsed::Drop(DropReason::MartianSource);
    }
    if header > IPV4_HEADER {
        return Parsed::Kernel(Punt::Options);
    }
    Parsed::Route(Packet::V4 { dst, ttl: ip[8] })
}

/// Whether no IPv4 packet may come from `src`: this network (0/8), loopback, multicast, the
/// reserved 240/4 and the limited broadcast.
fn martian_source_v4(src: u32) -> bool {
    let first = src >> 24;
    first == 0 || first == 127 || first >= 224
}

/// IPv6 next-header values of extension headers (RFC 8200 §4, and the IANA list).
const HOP_BY_HOP: u8 = 0;
const FRAGMENT: u8 = 44;
const AUTHENTICATION: u8 = 51;
const NO_NEXT_HEADER: u8 = 59;

fn is_extension(next: u8) -> bool {
    matches!(next, 0 | 43 | 44 | 51 | 60 | 135 | 139 | 140)
}

fn parse_v6(ip: &[u8]) -> Parsed {
    if ip.len() < IPV6_HEADER {
        return Parsed::Drop(DropReason::Truncated);
    }
    if ip[0] >> 4 != 6 {
        return Parsed::Drop(DropReason::BadVersion);
    }
    let end = IPV6_HEADER + usize::from(be16(ip, 4));
    if end > ip.len() {
        return Parsed::Drop(DropReason::BadLength);
    }
    let src = u128::from_be_bytes(ip[8..24].try_into().unwrap_or_default());
    let dst = u128::from_be_bytes(ip[24..40].try_into().unwrap_or_default());
    if dst == 0 || dst == 1 {
        return Parsed::Drop(DropReason::MartianDestination);
    }
    if dst >> 120 == 0xff || dst >> 118 == 0xfe80 >> 6 {
        // Never forwarded; the kernel's even from :: (duplicate address detection, MLD).
        return Parsed::Kernel(Punt::NotUnicast);
    }
    if src == 0 || src == 1 || src >> 120 == 0xff {
        return Parsed::Drop(DropReason::MartianSource);
    }
    if src >> 118 == 0xfe80 >> 6 {
        return Parsed::Kernel(Punt::LinkLocalSource);
    }
    let next = ip[6];
    if next == HOP_BY_HOP {
        return Parsed::Kernel(Punt::Options);
    }
    if is_extension(next) {
        if let Err(why) = walk_extensions(&ip[..end], next) {
            return why;
        }
    }
    Parsed::Route(Packet::V6 { dst, hop_limit: ip[7] })
}

/// Follows the extension headers from `next` (the fixed header's Next Header) through `packet`
/// (the IPv6 packet, its payload length's worth): each must lie inside it.
fn walk_extensions(packet: &[u8], mut next: u8) -> Result<(), Parsed> {
    let mut at = IPV6_HEADER;
    for _ in 0..MAX_EXTENSION_HEADERS {
        if !is_extension(next) || next == NO_NEXT_HEADER {
            return Ok(());
        }
        if next == HOP_BY_HOP {
            // Only right after the fixed header (RFC 8200 §4.3); the kernel sends the
            // parameter problem.
            return Err(Parsed::Kernel(Punt::Options));
        }
        if at + 2 > packet.len() {
            return Err(Parsed::Drop(DropReason::BadExtensionChain));
        }
        let len = match next {
            FRAGMENT => 8,
            AUTHENTICATION => (usize::from(packet[at + 1]) + 2) * 4,
            _ => (usize::from(packet[at + 1]) + 1) * 8,
        };
        if at + len > packet.len() {
            return Err(Parsed::Drop(DropReason::BadExtensionChain));
        }
        next = packet[at];
        at += len;
    }
    if is_extension(next) {
        Err(Parsed::Kernel(Punt::Options))
    } else {
        Ok(())
    }
}

/// The one's-complement sum of `bytes` as 16-bit big-endian words (an odd last byte padded
/// with zero): 0xffff over a header whose checksum is right.
pub fn checksum(bytes: &[u8]) -> u16 {
    let mut sum: u64 = 0;
    let mut words = bytes.chunks_exact(2);
    for w in &mut words {
        sum += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        sum += u64::from(*last) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// Rewrites a frame [`parse`] found routable to leave with `src` and `dst` as its Ethernet
/// addresses: TTL (IPv4, its checksum updated by RFC 1624 eqn. 3) or hop limit one less.
/// The caller checked [`Packet::expired`].
pub fn rewrite(frame: &mut [u8], packet: Packet, src: &Mac, dst: &Mac) {
    frame[0..6].copy_from_slice(dst);
    frame[6..12].copy_from_slice(src);
    let ip = &mut frame[ETHER_HEADER..];
    match packet {
        Packet::V4 { .. } => decrement_ttl(ip),
        Packet::V6 { .. } => ip[7] -= 1,
    }
}

/// TTL one less, and the header checksum updated for it: HC' = ~(~HC + ~m + m') (RFC 1624
/// eqn. 3), m the 16-bit word of TTL and protocol.
fn decrement_ttl(ip: &mut [u8]) {
    let old = be16(ip, 8);
    ip[8] -= 1;
    let new = be16(ip, 8);
    let hc = be16(ip, 10);
    let mut sum = u32::from(!hc) + u32::from(!old) + u32::from(new);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

#[cfg(test)]
pub(crate) mod tests {
    use proptest::prelude::*;

    use super::*;

    /// An Ethernet frame with an IPv4 header (checksum set) and `payload` bytes after it.
    pub(crate) fn v4_frame(src: u32, dst: u32, ttl: u8, payload: usize) -> Vec<u8> {
        let mut f = vec![0u8; ETHER_HEADER + IPV4_HEADER + payload];
        f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let ip = &mut f[ETHER_HEADER..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&((IPV4_HEADER + payload) as u16).to_be_bytes());
        ip[8] = ttl;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&src.to_be_bytes());
        ip[16..20].copy_from_slice(&dst.to_be_bytes());
        let c = !checksum(&ip[..IPV4_HEADER]);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        f
    }

    /// An Ethernet frame with an IPv6 header and `payload` bytes (next header UDP).
    pub(crate) fn v6_frame(src: u128, dst: u128, hop_limit: u8, payload: usize) -> Vec<u8> {
        let mut f = vec![0u8; ETHER_HEADER + IPV6_HEADER + payload];
        f[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
        let ip = &mut f[ETHER_HEADER..];
        ip[0] = 0x60;
        ip[4..6].copy_from_slice(&(payload as u16).to_be_bytes());
        ip[6] = 17;
        ip[7] = hop_limit;
        ip[8..24].copy_from_slice(&src.to_be_bytes());
        ip[24..40].copy_from_slice(&dst.to_be_bytes());
        f
    }

    const H1: u32 = 0x0a00_0102; // 10.0.1.2
    const H2: u32 = 0x0a00_0202; // 10.0.2.2
    const A6: u128 = 0x2001_0db8_0000_0000_0000_0000_0000_0002;
    const B6: u128 = 0x2001_0db8_0001_0000_0000_0000_0000_0002;

    #[test]
    fn a_good_ipv4_packet_is_routed_and_rewritten_with_a_checksum_that_verifies() {
        let mut f = v4_frame(H1, H2, 64, 30);
        let p = parse(&f);
        assert_eq!(p, Parsed::Route(Packet::V4 { dst: H2, ttl: 64 }));
        let Parsed::Route(p) = p else { unreachable!() };
        rewrite(&mut f, p, &[2; 6], &[3; 6]);
        assert_eq!((&f[0..6], &f[6..12], f[ETHER_HEADER + 8]), (&[3u8; 6][..], &[2u8; 6][..], 63));
        assert_eq!(checksum(&f[ETHER_HEADER..ETHER_HEADER + IPV4_HEADER]), 0xffff);
        assert_eq!(parse(&f), Parsed::Route(Packet::V4 { dst: H2, ttl: 63 }));
    }

    #[test]
    fn bad_ipv4_headers_are_dropped_for_their_reason() {
        let good = v4_frame(H1, H2, 64, 10);
        let with = |at: usize, v: u8| {
            let mut f = good.clone();
            f[ETHER_HEADER + at] = v;
            f
        };
        assert_eq!(parse(&good[..ETHER_HEADER + 19]), Parsed::Drop(DropReason::Truncated));
        assert_eq!(parse(&good[..10]), Parsed::Drop(DropReason::Truncated));
        assert_eq!(parse(&with(0, 0x65)), Parsed::Drop(DropReason::BadVersion));
        assert_eq!(parse(&with(0, 0x44)), Parsed::Drop(DropReason::BadHeaderLength), "IHL < 5");
        assert_eq!(parse(&with(0, 0x4f)), Parsed::Drop(DropReason::BadHeaderLength), "60 bytes of header in 30");
        assert_eq!(parse(&with(8, 65)), Parsed::Drop(DropReason::BadChecksum));
        let mut long = good.clone();
        long[ETHER_HEADER + 2..ETHER_HEADER + 4].copy_from_slice(&31u16.to_be_bytes());
        // The checksum made again over the changed header: only the length is wrong.
        let c = full_checksum(&long[ETHER_HEADER..ETHER_HEADER + IPV4_HEADER]);
        long[ETHER_HEADER + 10..ETHER_HEADER + 12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(parse(&long), Parsed::Drop(DropReason::BadLength), "total length beyond the frame");
        // Ethernet padding after the packet is fine.
        let mut padded = good.clone();
        padded.extend_from_slice(&[0; 16]);
        assert!(matches!(parse(&padded), Parsed::Route(_)));
    }

    #[test]
    fn martians_are_dropped_and_what_is_not_unicast_goes_to_the_kernel() {
        for src in [0x0000_0001, 0x7f00_0001, 0xe000_0001, 0xf000_0001, u32::MAX] {
            assert_eq!(parse(&v4_frame(src, H2, 64, 0)), Parsed::Drop(DropReason::MartianSource), "{src:#x}");
        }
        for dst in [0x0000_0001, 0x7f00_0001, 0xf000_0001] {
            assert_eq!(parse(&v4_frame(H1, dst, 64, 0)), Parsed::Drop(DropReason::MartianDestination), "{dst:#x}");
        }
        for dst in [0xe000_00fb, u32::MAX, 0xa9fe_0001] {
            assert_eq!(parse(&v4_frame(H1, dst, 64, 0)), Parsed::Kernel(Punt::NotUnicast), "{dst:#x}");
        }
        assert_eq!(parse(&v4_frame(0, u32::MAX, 64, 0)), Parsed::Kernel(Punt::NotUnicast), "DHCP's discover");
        let mut arp = v4_frame(H1, H2, 64, 0);
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(parse(&arp), Parsed::Kernel(Punt::NotIp));
    }

    #[test]
    fn ipv4_options_go_to_the_kernel() {
        let mut f = v4_frame(H1, H2, 64, 4);
        let ip = &mut f[ETHER_HEADER..];
        ip[0] = 0x46;
        ip[20..24].copy_from_slice(&[1, 1, 1, 0]); // NOPs and End of Options
        ip[10..12].copy_from_slice(&[0, 0]);
        let c = !checksum(&ip[..24]);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(parse(&f), Parsed::Kernel(Punt::Options));
    }

    #[test]
    fn ipv6_is_checked_and_its_hop_limit_lowered() {
        let mut f = v6_frame(A6, B6, 2, 8);
        let Parsed::Route(p) = parse(&f) else { panic!("routable") };
        assert_eq!(p, Packet::V6 { dst: B6, hop_limit: 2 });
        assert!(!p.expired());
        rewrite(&mut f, p, &[2; 6], &[3; 6]);
        assert_eq!(parse(&f), Parsed::Route(Packet::V6 { dst: B6, hop_limit: 1 }));
        let Parsed::Route(p) = parse(&f) else { unreachable!() };
        assert!(p.expired());

        assert_eq!(parse(&f[..ETHER_HEADER + 39]), Parsed::Drop(DropReason::Truncated));
        assert_eq!(parse(&f[..ETHER_HEADER + 47]), Parsed::Drop(DropReason::BadLength));
        let mut v = f.clone();
        v[ETHER_HEADER] = 0x40;
        assert_eq!(parse(&v), Parsed::Drop(DropReason::BadVersion));
        for src in [0, 1, 0xff02 << 112] {
            assert_eq!(parse(&v6_frame(src, B6, 64, 0)), Parsed::Drop(DropReason::MartianSource));
        }
        for dst in [0, 1] {
            assert_eq!(parse(&v6_frame(A6, dst, 64, 0)), Parsed::Drop(DropReason::MartianDestination));
        }
        for dst in [0xff02 << 112 | 1, 0xfe80 << 112 | 1] {
            assert_eq!(parse(&v6_frame(A6, dst, 64, 0)), Parsed::Kernel(Punt::NotUnicast));
        }
        assert_eq!(parse(&v6_frame(0, 0xff02 << 112 | 0x16, 1, 0)), Parsed::Kernel(Punt::NotUnicast), "MLD from ::");
        assert_eq!(parse(&v6_frame(0xfe80 << 112 | 5, B6, 64, 0)), Parsed::Kernel(Punt::LinkLocalSource));
    }

    #[test]
    fn ipv6_extension_chains_are_walked_inside_the_packet() {
        // Destination options (8 bytes) then a fragment header (8) then UDP.
        let mut f = v6_frame(A6, B6, 64, 24);
        let ip = &mut f[ETHER_HEADER..];
        ip[6] = 60;
        ip[40] = 44;
        ip[41] = 0;
        ip[48] = 17;
        assert!(matches!(parse(&f), Parsed::Route(_)));
        // The destination options claim 16 bytes more than the packet has.
        let mut long = f.clone();
        long[ETHER_HEADER + 41] = 3;
        assert_eq!(parse(&long), Parsed::Drop(DropReason::BadExtensionChain));
        // A chain cut by the payload length.
        let mut cut = f.clone();
        cut[ETHER_HEADER + 4..ETHER_HEADER + 6].copy_from_slice(&12u16.to_be_bytes());
        assert_eq!(parse(&cut), Parsed::Drop(DropReason::BadExtensionChain));
        // Hop-by-hop: the kernel's.
        let mut hbh = f.clone();
        hbh[ETHER_HEADER + 6] = 0;
        assert_eq!(parse(&hbh), Parsed::Kernel(Punt::Options));
        // Nine destination-options headers: longer than the fast path walks.
        let mut chain = v6_frame(A6, B6, 64, 9 * 8);
        let ip = &mut chain[ETHER_HEADER..];
        ip[6] = 60;
        for i in 0..9 {
            ip[40 + i * 8] = if i == 8 { 17 } else { 60 };
        }
        assert_eq!(parse(&chain), Parsed::Kernel(Punt::Options));
    }

    /// The checksum of `header` computed from scratch (the field zeroed first).
    fn full_checksum(header: &[u8]) -> u16 {
        let mut h = header.to_vec();
        h[10..12].copy_from_slice(&[0, 0]);
        !checksum(&h)
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), kind in 0u8..3) {
            let mut f = bytes;
            if f.len() >= 14 {
                let t = [ETHERTYPE_IPV4, ETHERTYPE_IPV6, 0x0806][usize::from(kind)];
                f[12..14].copy_from_slice(&t.to_be_bytes());
            }
            let _ = parse(&f);
        }

        #[test]
        fn the_incremental_checksum_is_the_full_one(src in any::<u32>(), dst in any::<u32>(), ttl in 2u8.., id in any::<u16>(), proto in any::<u8>()) {
            let mut f = v4_frame(src, dst, ttl, 0);
            let ip = &mut f[ETHER_HEADER..];
            ip[4..6].copy_from_slice(&id.to_be_bytes());
            ip[9] = proto;
            let c = full_checksum(&ip[..IPV4_HEADER]);
            ip[10..12].copy_from_slice(&c.to_be_bytes());
            decrement_ttl(ip);
            prop_assert_eq!(checksum(&ip[..IPV4_HEADER]), 0xffff);
            prop_assert_eq!(ip[8], ttl - 1);
            let want = full_checksum(&ip[..IPV4_HEADER]);
            prop_assert_eq!(be16(ip, 10), want);
        }
    }
}
