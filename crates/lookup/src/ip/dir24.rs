//! DIR-24-8, the layout of DPDK's rte_lpm: a 2^24-entry first table indexed by the top 24 address
//! bits, whose entry is either a next hop or (top bit set) the number of a 256-entry second-level
//! group indexed by the last 8 bits. Every lookup is one or two memory reads. A peer here: built
//! once from a route list (shorter routes first, so longer ones overwrite), not updated.

use super::{check_route, IpError, NextHop, Route, NO_ROUTE};
use crate::mem::{huge_vec, prefetch};

/// Entry flag: the low bits number a second-level group.
const EXT: u32 = 1 << 31;
/// An entry no route covers (fits below [`EXT`]; next hops are at most `MAX_NEXT_HOP`).
const EMPTY: u32 = EXT - 1;
/// Addresses prefetched together by [`Dir24::lookup_batch`].
const BLOCK: usize = 16;

/// A DIR-24-8 table.
#[derive(Debug, Clone)]
pub struct Dir24 {
    tbl24: Vec<u32>,
    tbl8: Vec<u32>,
    routes: usize,
}

impl Dir24 {
    /// A table holding `routes` (a later duplicate of a prefix wins, as with repeated inserts).
    ///
    /// # Errors
    /// The first bad route's error.
    pub fn from_routes(routes: &[Route<u32>]) -> Result<Self, IpError> {
        for r in routes {
            check_route(r.prefix, r.len, r.next_hop)?;
        }
        let mut order: Vec<&Route<u32>> = routes.iter().collect();
        order.sort_by_key(|r| r.len);
        let mut tbl24 = huge_vec(1 << 24, EMPTY);
        let mut tbl8: Vec<u32> = Vec::new();
        for r in order {
            let first = (r.prefix >> 8) as usize;
            if r.len <= 24 {
                tbl24[first..first + (1 << (24 - r.len))].fill(r.next_hop);
            } else {
                if tbl24[first] & EXT == 0 {
                    let group = (tbl8.len() >> 8) as u32;
                    tbl8.extend(std::iter::repeat_n(tbl24[first], 256));
                    tbl24[first] = EXT | group;
                }
                let base = ((tbl24[first] & !EXT) as usize) << 8;
                let low = (r.prefix & 0xff) as usize;
                tbl8[base + low..base + low + (1 << (32 - r.len))].fill(r.next_hop);
            }
        }
        let mut seen = std::collections::HashSet::new();
        let distinct = routes.iter().filter(|r| seen.insert((r.prefix, r.len))).count();
        Ok(Dir24 { tbl24, tbl8, routes: distinct })
    }

    /// Routes it was built from (distinct prefixes).
    pub fn len(&self) -> usize {
        self.routes
    }

    /// Whether it holds no route.
    pub fn is_empty(&self) -> bool {
        self.routes == 0
    }

    #[inline(always)]
    fn resolve(&self, e: u32, addr: u32) -> NextHop {
        let e = if e & EXT == 0 { e } else { self.tbl8[(((e & !EXT) as usize) << 8) | (addr & 0xff) as usize] };
        if e == EMPTY {
            NO_ROUTE
        } else {
            e
        }
    }

    /// The next hop of the longest route covering `addr`, or [`NO_ROUTE`].
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        self.resolve(self.tbl24[(addr >> 8) as usize], addr)
    }

    /// [`Dir24::lookup`] for many addresses, the first-table entries of each block prefetched.
    pub fn lookup_batch(&self, addrs: &[u32], out: &mut [NextHop]) {
        for (a, o) in addrs.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
            for &x in a {
                prefetch(&self.tbl24[(x >> 8) as usize]);
            }
            for (&x, y) in a.iter().zip(o.iter_mut()) {
                *y = self.lookup(x);
            }
        }
    }

    /// Bytes of both tables.
    pub fn bytes(&self) -> usize {
        (self.tbl24.len() + self.tbl8.len()) * 4
    }
}
