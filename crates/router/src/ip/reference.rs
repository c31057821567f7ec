//! The oracle: the router's rules written as plainly as they read, over binary tries and a
//! map of neighbours, for the pipeline's tests to compare against. Slow, and never on the
//! data path.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use nexthop_lookup::ip::{BinaryTrie, NO_ROUTE};

use super::counters::{DropReason, Punt};
use super::header::Mac;
use super::route::{Port, Prefix, Via};
use super::router::Decision;

/// A router as simple as it can be written.
#[derive(Debug, Default)]
pub struct ReferenceRouter {
    v4: BinaryTrie<u32>,
    v6: BinaryTrie<u128>,
    vias: Vec<Via>,
    neighbours: HashMap<(Port, IpAddr), Mac>,
    ports: HashMap<Port, Mac>,
}

impl ReferenceRouter {
    /// No route, port or neighbour.
    pub fn new() -> ReferenceRouter {
        ReferenceRouter::default()
    }

    /// Installs or replaces the route to `prefix`.
    pub fn insert(&mut self, prefix: Prefix, via: Via) {
        self.vias.push(via);
        let hop = (self.vias.len() - 1) as u32;
        let _ = match prefix {
            Prefix::V4 { addr, len } => self.v4.insert(addr, len, hop),
            Prefix::V6 { addr, len } => self.v6.insert(addr, len, hop),
        };
    }

    /// Removes the route to `prefix`, if there is one.
    pub fn remove(&mut self, prefix: Prefix) {
        match prefix {
            Prefix::V4 { addr, len } => self.v4.remove(addr, len),
            Prefix::V6 { addr, len } => self.v6.remove(addr, len),
        };
    }

    /// Port `port` sends from `mac`.
    pub fn set_port(&mut self, port: Port, mac: Mac) {
        self.ports.insert(port, mac);
    }

    /// `addr` on `port` is at `mac`.
    pub fn set_neighbour(&mut self, port: Port, addr: IpAddr, mac: Mac) {
        self.neighbours.insert((port, addr), mac);
    }

    fn lookup(&self, dst: IpAddr) -> Option<Via> {
        let hop = match dst {
            IpAddr::V4(a) => self.v4.lookup(a.into()),
            IpAddr::V6(a) => self.v6.lookup(a.into()),
        };
        (hop != NO_ROUTE).then(|| self.vias[hop as usize])
    }

    /// The decision for `frame`, and the frame as it leaves if it is forwarded.
    pub fn decide(&self, frame: &[u8]) -> (Decision, Option<Vec<u8>>) {
        match self.check(frame) {
            Err(d) => (d, None),
            Ok((dst, ttl)) => self.forward(frame, dst, ttl),
        }
    }

    /// The destination and TTL of a frame the router may route, or what becomes of it.
    fn check(&self, frame: &[u8]) -> Result<(IpAddr, u8), Decision> {
        use Decision::{Drop, Kernel};
        let drop = |r| Err(Drop(r));
        if frame.len() < 14 {
            return drop(DropReason::Truncated);
        }
        let ip = &frame[14..];
        match [frame[12], frame[13]] {
            [0x08, 0x00] => {
                if ip.len() < 20 {
                    return drop(DropReason::Truncated);
                }
                if ip[0] >> 4 != 4 {
                    return drop(DropReason::BadVersion);
                }
                let ihl = (ip[0] & 15) as usize * 4;
                if ihl < 20 || ihl > ip.len() {
                    return drop(DropReason::BadHeaderLength);
                }
                let mut sum: u32 = 0;
                for i in (0..ihl).step_by(2) {
                    sum += u32::from(ip[i]) << 8 | u32::from(ip[i + 1]);
                }
                while sum > 0xffff {
                    sum = (sum >> 16) + (sum & 0xffff);
                }
                if sum != 0xffff {
                    return drop(DropReason::BadChecksum);
                }
                let total = (usize::from(ip[2]) << 8) | usize::from(ip[3]);
                if total < ihl || total > ip.len() {
                    return drop(DropReason::BadLength);
                }
                let src = Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]);
                let dst = Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]);
                if dst.octets()[0] == 0 || dst.is_loopback() || (dst.octets()[0] >= 240 && !dst.is_broadcast()) {
                    return drop(DropReason::MartianDestination);
                }
                if dst.is_multicast() || dst.is_broadcast() || dst.is_link_local() {
                    return Err(Kernel(Punt::NotUnicast));
                }
                if src.octets()[0] == 0 || src.is_loopback() || src.is_multicast() || src.octets()[0] >= 240 {
                    return drop(DropReason::MartianSource);
                }
                if ihl > 20 {
                    return Err(Kernel(Punt::Options));
                }
                Ok((IpAddr::V4(dst), ip[8]))
            }
            [0x86, 0xdd] => {
                if ip.len() < 40 {
                    return drop(DropReason::Truncated);
                }
                if ip[0] >> 4 != 6 {
                    return drop(DropReason::BadVersion);
                }
                let end = 40 + ((usize::from(ip[4]) << 8) | usize::from(ip[5]));
                if end > ip.len() {
                    return drop(DropReason::BadLength);
                }
                let addr = |at: usize| Ipv6Addr::from(<[u8; 16]>::try_from(&ip[at..at + 16]).unwrap_or_default());
                let (src, dst) = (addr(8), addr(24));
                if dst.is_unspecified() || dst.is_loopback() {
                    return drop(DropReason::MartianDestination);
                }
                let link_local = |a: Ipv6Addr| a.segments()[0] & 0xffc0 == 0xfe80;
                if dst.is_multicast() || link_local(dst) {
                    return Err(Kernel(Punt::NotUnicast));
                }
                if src.is_unspecified() || src.is_loopback() || src.is_multicast() {
                    return drop(DropReason::MartianSource);
                }
                if link_local(src) {
                    return Err(Kernel(Punt::LinkLocalSource));
                }
                // The extension headers: each inside the packet, hop-by-hop only first, at
                // most eight before the upper layer.
                let (mut next, mut at) = (ip[6], 40);
                for k in 0..=8 {
                    let extension = [0u8, 43, 44, 51, 60, 135, 139, 140].contains(&next);
                    if !extension {
                        break;
                    }
                    if next == 0 || k == 8 {
                        return Err(Kernel(Punt::Options));
                    }
                    if at + 2 > end {
                        return drop(DropReason::BadExtensionChain);
                    }
                    let len = match next {
                        44 => 8,
                        51 => (usize::from(ip[at + 1]) + 2) * 4,
                        _ => (usize::from(ip[at + 1]) + 1) * 8,
                    };
                    if at + len > end {
                        return drop(DropReason::BadExtensionChain);
                    }
                    next = ip[at];
                    at += len;
                }
                Ok((IpAddr::V6(dst), ip[7]))
            }
            _ => Err(Kernel(Punt::NotIp)),
        }
    }

    fn forward(&self, frame: &[u8], dst: IpAddr, ttl: u8) -> (Decision, Option<Vec<u8>>) {
        let (port, neighbour) = match self.lookup(dst) {
            None | Some(Via::Unreachable) => return (Decision::Kernel(Punt::NoRoute), None),
            Some(Via::Local) => return (Decision::Kernel(Punt::ForUs), None),
            Some(Via::Elsewhere) => return (Decision::Kernel(Punt::Elsewhere), None),
            Some(Via::Blackhole) => return (Decision::Drop(DropReason::Blackhole), None),
            Some(Via::Gateway { port, addr }) => (port, addr),
            Some(Via::Connected(port)) => (port, dst),
        };
        if ttl <= 1 {
            return (Decision::Kernel(Punt::TtlExpired), None);
        }
        let Some(src) = self.ports.get(&port) else { return (Decision::Drop(DropReason::NoPort), None) };
        let Some(mac) = self.neighbours.get(&(port, neighbour)) else { return (Decision::Kernel(Punt::NoNeighbour), None) };
        let mut out = frame.to_vec();
        out[0..6].copy_from_slice(mac);
        out[6..12].copy_from_slice(src);
        if dst.is_ipv4() {
            let ip = &mut out[14..];
            ip[8] -= 1;
            // The checksum made again from scratch.
            let ihl = (ip[0] & 15) as usize * 4;
            ip[10] = 0;
            ip[11] = 0;
            let mut sum: u32 = 0;
            for i in (0..ihl).step_by(2) {
                sum += u32::from(ip[i]) << 8 | u32::from(ip[i + 1]);
            }
            while sum > 0xffff {
                sum = (sum >> 16) + (sum & 0xffff);
            }
            let c = !(sum as u16);
            ip[10..12].copy_from_slice(&c.to_be_bytes());
        } else {
            out[14 + 7] -= 1;
        }
        (Decision::Transmit(port), Some(out))
    }
}
