//! Bloomfwd for IPv4: CPE into a direct lookup array (/0–/20), a /24 group (/21–/24) and a /32
//! group (/25–/32), each group a counting Bloom filter + hash table; searched /32, /24, array.
//!
//! Control side: the routes themselves (prefix, length → next hop). Every expanded slot — an
//! array cell or a table entry — records the length of the route that owns it, so
//! - inserting p/l writes only the slots of p's range whose owner is no longer than l (a longer
//!   route that was there first keeps its slots: prefix capture), and
//! - removing p/l hands the slots p owns to the longest route of p's group shorter than l that
//!   covers p (one lookup for all of them: any route covering one slot of p covers all), or frees
//!   them.
//!
//! The data plane never sees the routes: only the array, the filters and the tables.

use hashbrown::HashMap;

use super::group::Group;
use super::hash::Key;
use super::{check_route, simd, Address, IpError, NextHop, Route, DEFAULT_FPR, NO_ROUTE};
use crate::mem::{advise_huge_pages_for, prefetch};

/// Bits indexing the direct lookup array.
const DLA_BITS: u8 = 20;
/// Owner length of an array cell no route covers.
const NONE: u8 = u8::MAX;
/// Addresses hashed and prefetched together by [`Bloomfwd4::lookup_batch`].
const BLOCK: usize = 32;

/// The IPv4 Bloomfwd table.
#[derive(Debug, Clone)]
pub struct Bloomfwd4 {
    dla: Vec<NextHop>,
    dla_len: Vec<u8>,
    /// /21–/24 expanded to /24; key = address >> 8.
    g24: Group<u32>,
    /// /25–/32 expanded to /32; key = address.
    g32: Group<u32>,
    routes: HashMap<(u32, u8), NextHop>,
}

impl Default for Bloomfwd4 {
    fn default() -> Self {
        Self::new(DEFAULT_FPR)
    }
}

impl Bloomfwd4 {
    /// An empty table whose filters aim at false-positive rate `fpr`.
    pub fn new(fpr: f64) -> Self {
        let mut dla = Vec::with_capacity(1 << DLA_BITS);
        advise_huge_pages_for(&mut dla);
        dla.resize(1 << DLA_BITS, NO_ROUTE);
        Bloomfwd4 { dla, dla_len: vec![NONE; 1 << DLA_BITS], g24: Group::new(1024, fpr), g32: Group::new(1024, fpr), routes: HashMap::new() }
    }

    /// A table holding `routes`, its filters sized for the expanded groups they produce.
    ///
    /// # Errors
    /// The first bad route's error; nothing is built.
    pub fn from_routes(routes: &[Route<u32>], fpr: f64) -> Result<Self, IpError> {
        let mut t = Bloomfwd4::new(fpr);
        t.insert_all(routes)?;
        t.g24.resize_bloom(t.g24.len());
        t.g32.resize_bloom(t.g32.len());
        Ok(t)
    }

    /// Installs every route, or none when one is bad.
    ///
    /// # Errors
    /// The first bad route's error; nothing changes.
    pub fn insert_all(&mut self, routes: &[Route<u32>]) -> Result<(), IpError> {
        for r in routes {
            check_route(r.prefix, r.len, r.next_hop)?;
        }
        // Shorter first: a longer route then overwrites instead of being skipped over.
        let mut order: Vec<&Route<u32>> = routes.iter().collect();
        order.sort_by_key(|r| r.len);
        for r in order {
            self.install(r.prefix, r.len, r.next_hop);
        }
        Ok(())
    }

    /// Installs (or replaces) a route. Returns the next hop it replaced.
    ///
    /// # Errors
    /// [`IpError::LengthTooLong`], [`IpError::HostBitsSet`], [`IpError::BadNextHop`]; nothing
    /// changes.
    pub fn insert(&mut self, prefix: u32, len: u8, next_hop: NextHop) -> Result<Option<NextHop>, IpError> {
        check_route(prefix, len, next_hop)?;
        Ok(self.install(prefix, len, next_hop))
    }

    fn install(&mut self, prefix: u32, len: u8, next_hop: NextHop) -> Option<NextHop> {
        let old = self.routes.insert((prefix, len), next_hop);
        self.claim(prefix, len, next_hop, len, |owner| owner == NONE || owner <= len);
        old
    }

    /// Removes a route. Returns its next hop.
    ///
    /// # Errors
    /// [`IpError::NoSuchRoute`] (also for a malformed prefix); nothing changes.
    pub fn remove(&mut self, prefix: u32, len: u8) -> Result<NextHop, IpError> {
        let Some(next_hop) = self.routes.remove(&(prefix, len)) else {
            return Err(IpError::NoSuchRoute(format!("{}/{len}", core::net::Ipv4Addr::from(prefix))));
        };
        let lowest = match len {
            0..=20 => 0,
            21..=24 => 21,
            _ => 25,
        };
        let heir = (lowest..len).rev().find_map(|l| self.routes.get(&(prefix.masked(l), l)).map(|&nh| (nh, l)));
        let (nh, owner) = heir.unwrap_or((NO_ROUTE, NONE));
        self.claim(prefix, len, nh, owner, |o| o == len);
        Ok(next_hop)
    }

    /// Gives every slot of p/len's range that `take(owner)` allows to (next_hop, owner); an owner
    /// of [`NONE`] frees the slot.
    fn claim(&mut self, prefix: u32, len: u8, next_hop: NextHop, owner: u8, take: impl Fn(u8) -> bool) {
        let (group, width) = match len {
            0..=20 => (None, DLA_BITS),
            21..=24 => (Some(&mut self.g24), 24),
            _ => (Some(&mut self.g32), 32),
        };
        let first = u64::from(prefix) >> (32 - width);
        let count = 1u64 << (width - len);
        match group {
            None => {
                for s in first..first + count {
                    let s = s as usize;
                    if take(self.dla_len[s]) {
                        self.dla[s] = next_hop;
                        self.dla_len[s] = owner;
                    }
                }
            }
            Some(g) => {
                for key in first..first + count {
                    let key = key as u32;
                    if take(g.entry(key).map_or(NONE, |e| e.1)) {
                        if owner == NONE {
                            g.remove(key);
                        } else {
                            g.set(key, next_hop, owner);
                        }
                    }
                }
            }
        }
    }

    /// Routes installed.
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    /// Whether no route is installed.
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// The next hop of the longest route covering `addr`, or [`NO_ROUTE`].
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        if let Some(nh) = self.g32.find(addr.hash(), addr) {
            return nh;
        }
        let k24 = addr >> 8;
        if let Some(nh) = self.g24.find(k24.hash(), k24) {
            return nh;
        }
        self.dla[(addr >> (32 - DLA_BITS)) as usize]
    }

    /// [`Bloomfwd4::lookup`] of `addrs[i]` into `out[i]`: blocks of addresses are hashed with
    /// SIMD, their filters probed and table slots and array cells prefetched, then resolved.
    pub fn lookup_batch(&self, addrs: &[u32], out: &mut [NextHop]) {
        self.lookup_batch_with(simd::detect(), addrs, out);
    }

    /// The batch lookup hashing with a chosen instruction set (to measure what SIMD brings).
    pub fn lookup_batch_with(&self, isa: simd::Isa, addrs: &[u32], out: &mut [NextHop]) {
        for (a, o) in addrs.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
            let n = a.len().min(o.len());
            let mut keys = [0u64; 2 * BLOCK];
            for (i, &x) in a[..n].iter().enumerate() {
                keys[i] = u64::from(x);
                keys[BLOCK + i] = u64::from(x >> 8);
            }
            let mut h = [0u64; 2 * BLOCK];
            simd::hash_keys(isa, &keys, &mut h);
            let mut hit = [0u8; BLOCK];
            for i in 0..n {
                let (h32, h24) = (h[i], h[BLOCK + i]);
                let mut f = 0;
                if self.g32.maybe(h32) {
                    self.g32.prefetch(h32);
                    f |= 2;
                }
                if self.g24.maybe(h24) {
                    self.g24.prefetch(h24);
                    f |= 1;
                }
                prefetch(&self.dla[(a[i] >> (32 - DLA_BITS)) as usize]);
                hit[i] = f;
            }
            for i in 0..n {
                let x = a[i];
                let g32 = if hit[i] & 2 != 0 { self.g32.get(h[i], x) } else { None };
                o[i] = match g32 {
                    Some(e) => e.0,
                    None => {
                        let g24 = if hit[i] & 1 != 0 { self.g24.get(h[BLOCK + i], x >> 8) } else { None };
                        g24.map_or_else(|| self.dla[(x >> (32 - DLA_BITS)) as usize], |e| e.0)
                    }
                };
            }
        }
    }

    /// Bytes the data plane holds (array, filter bits, tables) and bytes only the control side
    /// needs (array owner lengths, filter counters, the routes).
    pub fn bytes(&self) -> (usize, usize) {
        let (q24, c24) = self.g24.bytes();
        let (q32, c32) = self.g32.bytes();
        let routes = self.routes.capacity() * (core::mem::size_of::<((u32, u8), NextHop)>() + 1);
        (self.dla.len() * 4 + q24 + q32, self.dla_len.len() + c24 + c32 + routes)
    }

    /// Expanded prefixes per group: (array cells in use, /24 entries, /32 entries).
    pub fn expanded(&self) -> (usize, usize, usize) {
        (self.dla_len.iter().filter(|&&l| l != NONE).count(), self.g24.len(), self.g32.len())
    }

    /// (m, k) of the /24 and /32 filters.
    pub fn bloom_shapes(&self) -> [(usize, u32); 2] {
        [self.g24.bloom_shape(), self.g32.bloom_shape()]
    }
}

impl crate::Lookup<u32> for Bloomfwd4 {
    type Answer = NextHop;
    fn lookup(&self, key: &u32) -> NextHop {
        Bloomfwd4::lookup(self, *key)
    }
}
