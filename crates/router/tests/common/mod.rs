//! What the router's integration tests share: frames made the way a host sends them.

use nexthop_router::ip::header::{checksum, ETHERTYPE_IPV4};

/// An Ethernet frame (to 02:00:00:00:00:01, from 04:04:04:04:04:04) holding a TCP-numbered
/// IPv4 packet from `src` to `dst` with `ttl`, a header of `header` bytes (20, or more with
/// zeroed options) and `payload` bytes after it, its checksum right.
pub fn v4_frame(src: u32, dst: u32, ttl: u8, header: usize, payload: usize) -> Vec<u8> {
    let mut f = vec![0u8; 14 + header + payload];
    f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    f[6..12].copy_from_slice(&[4, 4, 4, 4, 4, 4]);
    f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    let ip = &mut f[14..];
    ip[0] = 0x40 | (header / 4) as u8;
    ip[2..4].copy_from_slice(&((header + payload) as u16).to_be_bytes());
    ip[8] = ttl;
    ip[9] = 6;
    ip[12..16].copy_from_slice(&src.to_be_bytes());
    ip[16..20].copy_from_slice(&dst.to_be_bytes());
    let c = !checksum(&ip[..header]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f
}
