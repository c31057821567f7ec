//! Bloomfwd for IPv4: CPE into a direct lookup array (/0–/20), a /24 group (/21–/24) and a /32
//! group (/25–/32), each group a counting Bloom filter + hash table; searched /32, /24, array.
//!
//! # The array's width
//! The paper's array is 2^20 cells (4 MiB: it stays in the cache). [`Bloomfwd4::with_dla_bits`]
//! widens it, up to 2^24 cells (64 MiB): routes of up to the width live in the array, so at /24
//! the /24 group is gone and a route a real table's traffic matches (most are /24 or shorter)
//! is one array read — DIR-24-8's cost — with the Bloom filter searched only in the few /24
//! cells that hold longer routes. The paper's width is the default and what `ip-lpm`
//! reproduces; the router's FIB uses /24.
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
//!
//! # The array guard (an addition to the paper)
//! Each array cell also carries two bits: whether any route longer than /20 lies inside its /20,
//! and whether any longer than /24 does. Where none does — most of the address space — the array
//! answers alone, with no filter probe and no hash; where only /21–/24 routes do, the /32 group
//! is skipped (few /20s hold longer routes); otherwise the search is the paper's. [`Bloomfwd4::set_guard`] turns the
//! guard off to measure the paper's search as it was.
//!
//! # Batches
//! A batch runs four steps per block of `BLOCK` (16) addresses, pipelined across blocks so each
//! step's loads were prefetched a block or more earlier: prefetch the array cells (step k); read
//! them, list the addresses in guarded cells (without a branch), hash their keys with SIMD and
//! prefetch their filter words (k + 1); probe the filters and prefetch the table buckets that
//! pass, without a branch (k + 2); resolve (k + 2 + `LAG`): every address takes its cell's answer,
//! and the listed ones their table's where it has one. Only the listed addresses reach the later
//! steps, so traffic that mixes guarded and unguarded cells costs neither mispredictions nor
//! work for the addresses the array answers.

use hashbrown::HashMap;

use super::direct::{DirectArray, NONE};
use super::group::Group;
use super::table::Key;
use super::{check_route, simd, Address, IpError, NextHop, Route, DEFAULT_FPR, NO_ROUTE};

/// Bits indexing the paper's direct lookup array.
pub const PAPER_DLA_BITS: u8 = 20;
/// The widths [`Bloomfwd4::with_dla_bits`] takes.
pub const DLA_BITS: core::ops::RangeInclusive<u8> = 16..=24;
/// Addresses hashed and prefetched together by [`Bloomfwd4::lookup_batch`].
const BLOCK: usize = 16;
/// Blocks between staging a block (its table slots prefetched) and resolving it.
const LAG: usize = 2;

/// One block of a batch between staging and resolving: array entries, the addresses the groups
/// must search (those in guarded cells, listed without a branch), their hashes (/32 keys, then
/// /24 keys) and which filters passed (bit 1: /32, bit 0: /24).
#[derive(Debug, Clone, Copy)]
struct Stage {
    dla: [u32; BLOCK],
    /// How many addresses `searched` lists.
    count: usize,
    /// Indexes in the block of the addresses to search; `h` and `hit` follow this order.
    searched: [u8; BLOCK],
    h: [u64; 2 * BLOCK],
    hit: [u8; BLOCK],
}

impl Default for Stage {
    fn default() -> Self {
        Stage { dla: [0; BLOCK], count: 0, searched: [0; BLOCK], h: [0; 2 * BLOCK], hit: [0; BLOCK] }
    }
}

/// The IPv4 Bloomfwd table.
#[derive(Debug, Clone)]
pub struct Bloomfwd4 {
    /// Routes up to the array's width, one cell per prefix of that width, guarded where
    /// longer routes lie inside.
    dla: DirectArray,
    /// The array's width in bits.
    dla_bits: u8,
    /// Whether lookups trust a clear guard bit.
    guard: bool,
    /// Routes longer than the array's width up to /24, expanded to /24; key = address >> 8
    /// (empty at width 24).
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
    /// An empty table whose filters aim at false-positive rate `fpr`, with the paper's 2^20
    /// array.
    pub fn new(fpr: f64) -> Self {
        Self::with_dla_bits(PAPER_DLA_BITS, fpr)
    }

    /// An empty table with a 2^`bits` array (`bits` clamped to [`DLA_BITS`]; see the module
    /// overview).
    pub fn with_dla_bits(bits: u8, fpr: f64) -> Self {
        let bits = bits.clamp(*DLA_BITS.start(), *DLA_BITS.end());
        Bloomfwd4 {
            dla: DirectArray::new(bits, 24),
            dla_bits: bits,
            guard: true,
            g24: Group::new(1024, fpr),
            g32: Group::new(1024, fpr),
            routes: HashMap::new(),
        }
    }

    /// With `on = false`, every lookup searches the /32 and /24 groups before the array, as in
    /// the paper, whatever the guard bit says (on by default).
    pub fn set_guard(&mut self, on: bool) {
        self.guard = on;
    }

    /// A table holding `routes`, its filters sized for the expanded groups they produce.
    ///
    /// # Errors
    /// The first bad route's error; nothing is built.
    pub fn from_routes(routes: &[Route<u32>], fpr: f64) -> Result<Self, IpError> {
        Self::from_routes_with(routes, PAPER_DLA_BITS, fpr)
    }

    /// [`Bloomfwd4::from_routes`] with a 2^`bits` array.
    ///
    /// # Errors
    /// The first bad route's error; nothing is built.
    pub fn from_routes_with(routes: &[Route<u32>], bits: u8, fpr: f64) -> Result<Self, IpError> {
        let mut t = Bloomfwd4::with_dla_bits(bits, fpr);
        t.insert_all(routes)?;
        t.g24.fit();
        t.g32.fit();
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
        if old.is_none() && len > self.dla_bits {
            self.dla.count_longer(self.cell(prefix), len, true);
        }
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
        // The heir comes from the same place: the array, the /24 group or the /32 group.
        let lowest = match len {
            l if l <= self.dla_bits => 0,
            l if l <= 24 => self.dla_bits + 1,
            _ => 25,
        };
        let heir = (lowest..len).rev().find_map(|l| self.routes.get(&(prefix.masked(l), l)).map(|&nh| (nh, l)));
        let (nh, owner) = heir.unwrap_or((NO_ROUTE, NONE));
        self.claim(prefix, len, nh, owner, |o| o == len);
        if len > self.dla_bits {
            self.dla.count_longer(self.cell(prefix), len, false);
        }
        Ok(next_hop)
    }

    /// Gives every slot of p/len's range that `take(owner)` allows to (next_hop, owner); an owner
    /// of [`NONE`] frees the slot.
    fn claim(&mut self, prefix: u32, len: u8, next_hop: NextHop, owner: u8, take: impl Fn(u8) -> bool) {
        let (group, width) = match len {
            l if l <= self.dla_bits => (None, self.dla_bits),
            l if l <= 24 => (Some(&mut self.g24), 24),
            _ => (Some(&mut self.g32), 32),
        };
        let first = u64::from(prefix) >> (32 - width);
        let count = 1u64 << (width - len);
        match group {
            None => self.dla.claim(first as usize..(first + count) as usize, next_hop, owner, take),
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

    /// The array cell of `addr`.
    #[inline(always)]
    fn cell(&self, addr: u32) -> usize {
        (addr >> (32 - self.dla_bits)) as usize
    }

    /// The array's width in bits.
    pub fn dla_bits(&self) -> u8 {
        self.dla_bits
    }

    /// Whether the /24 group can hold anything (the array is narrower than /24).
    #[inline(always)]
    fn has_g24(&self) -> bool {
        self.dla_bits < 24
    }

    /// The next hop of the longest route covering `addr`, or [`NO_ROUTE`].
    #[inline]
    pub fn lookup(&self, addr: u32) -> NextHop {
        let e = self.dla.cell(self.cell(addr));
        if DirectArray::guarded(e) || !self.guard {
            if DirectArray::deep(e) || !self.guard {
                if let Some(nh) = self.g32.find(addr.hash(), addr) {
                    return nh;
                }
            }
            let k24 = addr >> 8;
            if self.has_g24() {
                if let Some(nh) = self.g24.find(k24.hash(), k24) {
                    return nh;
                }
            }
        }
        DirectArray::next_hop(e)
    }

    /// [`Bloomfwd4::lookup`] of `addrs[i]` into `out[i]`, three pipelined steps per block of
    /// addresses (see the module overview); hashes are computed with SIMD.
    pub fn lookup_batch(&self, addrs: &[u32], out: &mut [NextHop]) {
        self.lookup_batch_with(simd::detect(), addrs, out);
    }

    /// The batch lookup hashing with a chosen instruction set (to measure what SIMD brings).
    pub fn lookup_batch_with(&self, isa: simd::Isa, addrs: &[u32], out: &mut [NextHop]) {
        let n = addrs.len().min(out.len());
        let blocks = n.div_ceil(BLOCK);
        let block = |k: usize| k * BLOCK..((k + 1) * BLOCK).min(n);
        let mut stages = [Stage::default(); LAG + 3];
        let ring = LAG + 3;
        // Block k: array cells prefetched at step k; array read, hashed and filter lines
        // prefetched at k + 1; filters probed and table slots prefetched at k + 2; resolved at
        // k + 2 + LAG. Each step's loads were prefetched a block or more earlier.
        for step in 0..blocks + 2 + LAG {
            if step < blocks {
                for &x in &addrs[block(step)] {
                    self.dla.prefetch(self.cell(x));
                }
            }
            if (1..=blocks).contains(&step) {
                let k = step - 1;
                self.stage_filters(isa, &addrs[block(k)], &mut stages[k % ring]);
            }
            if (2..blocks + 2).contains(&step) {
                let k = step - 2;
                self.stage_tables(&mut stages[k % ring]);
            }
            if step >= 2 + LAG {
                let k = step - 2 - LAG;
                let r = block(k);
                self.resolve(&addrs[r.clone()], &stages[k % ring], &mut out[r]);
            }
        }
    }

    /// Reads a block's array entries and lists the addresses in guarded cells; hashes their
    /// /32 and /24 keys and prefetches the filter words they will probe.
    #[inline(always)]
    fn stage_filters(&self, isa: simd::Isa, a: &[u32], st: &mut Stage) {
        let mut count = 0;
        for (i, &x) in a.iter().enumerate() {
            let e = self.dla.cell(self.cell(x));
            st.dla[i] = e;
            // Listed without a branch: traffic mixes guarded and unguarded cells.
            st.searched[count] = i as u8;
            count += usize::from(DirectArray::guarded(e) || !self.guard);
        }
        st.count = count;
        if count == 0 {
            return;
        }
        let mut keys = [0u64; 2 * BLOCK];
        for (j, &i) in st.searched[..count].iter().enumerate() {
            let x = a[usize::from(i)];
            (keys[j], keys[BLOCK + j]) = (u64::from(x), u64::from(x >> 8));
        }
        simd::hash_keys(isa, &keys, &mut st.h);
        for (j, &i) in st.searched[..count].iter().enumerate() {
            // Without routes longer than /24 in the cell, the /32 group holds none of its keys
            // (most cells: a predicted branch).
            if DirectArray::deep(st.dla[usize::from(i)]) || !self.guard {
                self.g32.prefetch_filter(st.h[j]);
            }
            if self.has_g24() {
                self.g24.prefetch_filter(st.h[BLOCK + j]);
            }
        }
    }

    /// Probes the filters of a block's listed addresses and prefetches the table buckets they
    /// pass.
    #[inline(always)]
    fn stage_tables(&self, st: &mut Stage) {
        for (j, &i) in st.searched[..st.count].iter().enumerate() {
            let deep = DirectArray::deep(st.dla[usize::from(i)]) || !self.guard;
            let m32 = deep && self.g32.probe_and_prefetch(st.h[j]);
            let m24 = self.has_g24() && self.g24.probe_and_prefetch(st.h[BLOCK + j]);
            st.hit[j] = u8::from(m32) << 1 | u8::from(m24);
        }
    }

    /// Answers a staged block: the array's answer for every address, then for the listed ones
    /// the /32 table, else the /24 table, where their filters passed.
    #[inline(always)]
    fn resolve(&self, a: &[u32], st: &Stage, o: &mut [NextHop]) {
        for (y, &e) in o.iter_mut().zip(&st.dla) {
            *y = DirectArray::next_hop(e);
        }
        for (j, &i) in st.searched[..st.count].iter().enumerate() {
            let (i, hit) = (usize::from(i), st.hit[j]);
            let x = a[i];
            // /32 hits are rare (a predicted branch); the /24 table is read without one.
            let g32 = if hit & 2 != 0 { self.g32.get(st.h[j], x) } else { None };
            let g24 = self.g24.get_if(st.h[BLOCK + j], x >> 8, hit & 1 != 0);
            if let Some(nh) = g32.or(g24) {
                o[i] = nh;
            }
        }
    }

    /// Bytes the data plane holds (array, filter bits, tables) and bytes only the control side
    /// needs (array owner lengths, filter counters, the routes).
    pub fn bytes(&self) -> (usize, usize) {
        let (q24, c24) = self.g24.bytes();
        let (q32, c32) = self.g32.bytes();
        let routes = self.routes.capacity() * (core::mem::size_of::<((u32, u8), NextHop)>() + 1);
        let (qa, ca) = self.dla.bytes();
        (qa + q24 + q32, ca + c24 + c32 + routes)
    }

    /// Expanded prefixes per group: (array cells in use, /24 entries, /32 entries).
    pub fn expanded(&self) -> (usize, usize, usize) {
        (self.dla.used(), self.g24.len(), self.g32.len())
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
