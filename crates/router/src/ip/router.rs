//! The IP forwarding pipeline: a batch of frames in, one [`Decision`] per frame out, each
//! forwarded frame rewritten in place.
//!
//! # Overview
//! For each frame: [`parse`] (validation, martians, what is the kernel's), then the longest
//! prefix match — batched: every IPv4 destination of the batch goes to the Bloom-filter table
//! at once (hashed with SIMD, prefetched), then every IPv6 one — then the via decides: the
//! router's own address and unreachable routes are the kernel's, a blackhole drops, a port
//! forwards once the TTL allows it and the next hop's link-layer address is known (else the
//! kernel resolves it). Forwarding rewrites the Ethernet addresses and lowers the TTL (the IPv4
//! checksum updated incrementally). Every decision is counted ([`Counters`]).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use nexthop_lookup::ip::{NextHop, NO_ROUTE};

use super::counters::{Counters, DropReason, Punt};
use super::fib::Fib;
use super::header::{parse, rewrite, Packet, Parsed};
use super::mirror::Change;
use super::neighbours::Neighbours;
use super::route::{Port, RouteError, Via};

/// What becomes of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Send it out of this port (it has been rewritten).
    Transmit(Port),
    /// Hand it, unchanged, to the kernel.
    Kernel(Punt),
    /// Drop it.
    Drop(DropReason),
}

pub use crate::frames::Frames;

/// The IP router's pipeline: its FIB, its neighbours and ports, its counters.
#[derive(Debug, Default)]
pub struct IpRouter {
    fib: Fib,
    neighbours: Neighbours,
    counters: Counters,
    parsed: Vec<Parsed>,
    hops: Vec<NextHop>,
    v4: Vec<u32>,
    v4_at: Vec<usize>,
    v6: Vec<u128>,
    v6_at: Vec<usize>,
    answers: Vec<NextHop>,
}

impl IpRouter {
    /// A router forwarding on `fib`, with no port or neighbour yet.
    pub fn new(fib: Fib) -> IpRouter {
        IpRouter { fib, ..IpRouter::default() }
    }

    /// The routes.
    pub fn fib(&self) -> &Fib {
        &self.fib
    }

    /// The routes, to change (between batches).
    pub fn fib_mut(&mut self) -> &mut Fib {
        &mut self.fib
    }

    /// The neighbours and ports.
    pub fn neighbours(&self) -> &Neighbours {
        &self.neighbours
    }

    /// The neighbours and ports, to change (between batches).
    pub fn neighbours_mut(&mut self) -> &mut Neighbours {
        &mut self.neighbours
    }

    /// Applies a change the kernel's tables made ([`super::mirror`]), between batches.
    ///
    /// # Errors
    /// The FIB refused the route (nothing changed): an IPv6 route expanding too far, too many
    /// next hops, or the removal of a route it had refused.
    pub fn apply(&mut self, change: Change) -> Result<(), RouteError> {
        match change {
            Change::Route(prefix, Some(via)) => self.fib.insert(prefix, via).map(drop),
            Change::Route(prefix, None) => self.fib.remove(prefix).map(drop),
            Change::Neighbour(port, addr, Some(mac)) => {
                self.neighbours.insert(port, addr, mac);
                Ok(())
            }
            Change::Neighbour(port, addr, None) => {
                self.neighbours.remove(port, addr);
                Ok(())
            }
        }
    }

    /// What the pipeline has done so far.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// Decides one frame (rewriting it if it is forwarded).
    pub fn route(&mut self, frame: &mut [u8]) -> Decision {
        let d = match parse(frame) {
            Parsed::Route(p) => {
                let hop = match p {
                    Packet::V4 { dst, .. } => self.fib.lookup_v4(dst),
                    Packet::V6 { dst, .. } => self.fib.lookup_v6(dst),
                };
                self.finish(frame, p, hop)
            }
            Parsed::Kernel(why) => Decision::Kernel(why),
            Parsed::Drop(why) => Decision::Drop(why),
        };
        self.counters.count(d);
        d
    }

    /// Decides every frame of `frames`, appending one decision per frame to `out` (cleared
    /// first), the lookups batched.
    pub fn route_batch<F: Frames + ?Sized>(&mut self, frames: &mut F, out: &mut Vec<Decision>) {
        out.clear();
        let n = frames.count();
        self.parsed.clear();
        self.v4.clear();
        self.v4_at.clear();
        self.v6.clear();
        self.v6_at.clear();
        for i in 0..n {
            let p = parse(frames.bytes(i));
            match p {
                Parsed::Route(Packet::V4 { dst, .. }) => {
                    self.v4.push(dst);
                    self.v4_at.push(i);
                }
                Parsed::Route(Packet::V6 { dst, .. }) => {
                    self.v6.push(dst);
                    self.v6_at.push(i);
                }
                Parsed::Kernel(_) | Parsed::Drop(_) => {}
            }
            self.parsed.push(p);
        }
        self.hops.clear();
        self.hops.resize(n, NO_ROUTE);
        self.answers.resize(self.v4.len().max(self.v6.len()), NO_ROUTE);
        self.fib.lookup_v4_batch(&self.v4, &mut self.answers[..self.v4.len()]);
        for (k, &i) in self.v4_at.iter().enumerate() {
            self.hops[i] = self.answers[k];
        }
        self.fib.lookup_v6_batch(&self.v6, &mut self.answers[..self.v6.len()]);
        for (k, &i) in self.v6_at.iter().enumerate() {
            self.hops[i] = self.answers[k];
        }
        for i in 0..n {
            let d = match self.parsed[i] {
                Parsed::Route(p) => {
                    let via = self.fib.via(self.hops[i]);
                    self.finish(frames.bytes_mut(i), p, via)
                }
                Parsed::Kernel(why) => Decision::Kernel(why),
                Parsed::Drop(why) => Decision::Drop(why),
            };
            self.counters.count(d);
            out.push(d);
        }
    }

    /// What the route `via` makes of routable `packet`, `frame` rewritten if it leaves.
    #[inline]
    fn finish(&self, frame: &mut [u8], packet: Packet, via: Option<Via>) -> Decision {
        let (port, neighbour) = match via {
            None | Some(Via::Unreachable) => return Decision::Kernel(Punt::NoRoute),
            Some(Via::Local) => return Decision::Kernel(Punt::ForUs),
            Some(Via::Elsewhere) => return Decision::Kernel(Punt::Elsewhere),
            Some(Via::Blackhole) => return Decision::Drop(DropReason::Blackhole),
            Some(Via::Gateway { port, addr }) => (port, addr),
            Some(Via::Connected(port)) => (port, destination(packet)),
        };
        if packet.expired() {
            return Decision::Kernel(Punt::TtlExpired);
        }
        let Some(src) = self.neighbours.port_mac(port) else { return Decision::Drop(DropReason::NoPort) };
        let Some(dst) = self.neighbours.get(port, neighbour) else { return Decision::Kernel(Punt::NoNeighbour) };
        rewrite(frame, packet, src, dst);
        Decision::Transmit(port)
    }
}

/// The packet's destination address.
fn destination(packet: Packet) -> IpAddr {
    match packet {
        Packet::V4 { dst, .. } => IpAddr::V4(Ipv4Addr::from(dst)),
        Packet::V6 { dst, .. } => IpAddr::V6(Ipv6Addr::from(dst)),
    }
}
