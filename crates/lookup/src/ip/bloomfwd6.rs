//! Bloomfwd for IPv6: one Bloom filter + hash table per expansion level (levels from
//! [`super::dp_cpe`], /64 always among them), searched longest first; one more pair per used
//! length above /64 (never expanded, searched before the levels); the default route (/0) kept
//! apart, as the paper does, so it never expands.
//!
//! A route of length l ≤ 64 expands to the smallest level q ≥ l: 2^(q−l) keys of q bits. Slots
//! record the length of the route that owns them, with the same capture and removal rules as
//! [`super::Bloomfwd4`]: a route's heir on removal is the longest route of the same level group
//! (lengths between the level below and l) that covers it.
//!
//! Routes longer than /64 are rare (host routes, point-to-point links) but come in many lengths;
//! probing a pair per length for every address would cost more than all the levels together. So
//! a marker group holds the /64s under which any such route lies (counted, so removal works), and
//! an address probes the long pairs only when its /64 is marked — found with the hash the /64
//! level already computed.
//!
//! # The gate (an addition to the paper, the IPv6 form of [`super::Bloomfwd4`]'s array guard)
//! A table keyed by the first level's q1-bit key holds, for every q1-prefix that any route covers
//! or lies inside, the length of the longest such route. A lookup reads it first: no entry means
//! only the default route can match; otherwise only the levels up to that length are searched
//! (and the long pairs only past /64). Addresses outside the routed space stop after one probe,
//! and a /48 destination no longer probes the /56 and /64 filters. [`Bloomfwd6::set_gate`] turns
//! it off to measure the paper's search as it was.

use hashbrown::HashMap;

use super::group::Group;
use super::hash::Key;
use super::table::PrefixTable;
use super::{check_route, simd, Address, IpError, NextHop, Route, DEFAULT_FPR, MAX_EXPANSION, NO_ROUTE};

/// Addresses hashed and prefetched together by [`Bloomfwd6::lookup_batch`].
const BLOCK: usize = 16;

/// The IPv6 Bloomfwd table.
#[derive(Debug, Clone)]
pub struct Bloomfwd6 {
    levels: Vec<u8>,
    /// Length 1..=64 → index of its level.
    level_of: [u8; 65],
    groups: Vec<Group<u64>>,
    /// Lengths above 64, longest first, each with its own group.
    long: Vec<(u8, Group<u128>)>,
    /// /64 keys with routes longer than /64 beneath them; the next-hop field counts those routes.
    long_marks: Group<u64>,
    /// First-level key → longest route length covering or inside it (in the next-hop field).
    gate: PrefixTable<u64>,
    /// (first-level key, max(route length, q1)) → routes: what `gate` summarises.
    gate_counts: HashMap<(u64, u8), u32>,
    /// Whether lookups consult the gate.
    use_gate: bool,
    default: NextHop,
    routes: HashMap<(u128, u8), NextHop>,
    fpr: f64,
}

/// Prefixes per length 1..=64 (index 0 unused): what [`super::dp_cpe`] chooses levels from.
pub fn histogram(routes: &[Route<u128>]) -> [u64; 65] {
    let mut c = [0u64; 65];
    for r in routes {
        if (1..=64).contains(&r.len) {
            c[usize::from(r.len)] += 1;
        }
    }
    c
}

/// The `q`-bit key of `addr` (its first q bits, right-aligned), 1 ≤ q ≤ 64.
#[inline(always)]
fn key64(addr: u128, q: u8) -> u64 {
    (addr >> (128 - u32::from(q))) as u64
}

impl Bloomfwd6 {
    /// An empty table expanding to `levels` (ascending, in 1..=64, the last 64).
    ///
    /// # Errors
    /// [`IpError::BadLevels`].
    pub fn new(levels: &[u8], fpr: f64) -> Result<Self, IpError> {
        let ascending = levels.windows(2).all(|w| w[0] < w[1]);
        if levels.is_empty() || !ascending || levels[0] == 0 || levels.last() != Some(&64) {
            return Err(IpError::BadLevels(levels.to_vec()));
        }
        let mut level_of = [0u8; 65];
        let mut j = 0;
        for (l, slot) in level_of.iter_mut().enumerate().skip(1) {
            while usize::from(levels[j]) < l {
                j += 1;
            }
            *slot = j as u8;
        }
        Ok(Bloomfwd6 {
            levels: levels.to_vec(),
            level_of,
            groups: levels.iter().map(|_| Group::new(1024, fpr)).collect(),
            long: Vec::new(),
            long_marks: Group::new(64, fpr),
            gate: PrefixTable::new(1024),
            gate_counts: HashMap::new(),
            use_gate: true,
            default: NO_ROUTE,
            routes: HashMap::new(),
            fpr,
        })
    }

    /// A table holding `routes` expanded to `levels`, its filters sized for what it holds.
    ///
    /// # Errors
    /// [`IpError::BadLevels`] or the first bad route's error; nothing is built.
    pub fn from_routes(routes: &[Route<u128>], levels: &[u8], fpr: f64) -> Result<Self, IpError> {
        let mut t = Bloomfwd6::new(levels, fpr)?;
        t.insert_all(routes)?;
        for g in &mut t.groups {
            g.fit();
        }
        for (_, g) in &mut t.long {
            g.fit();
        }
        t.long_marks.fit();
        t.gate.fit();
        Ok(t)
    }

    /// A table holding `routes` with `n` levels chosen by DP-CPE from their length histogram.
    ///
    /// # Errors
    /// As [`Bloomfwd6::from_routes`].
    pub fn with_dp_cpe(routes: &[Route<u128>], n: usize, fpr: f64) -> Result<Self, IpError> {
        Self::from_routes(routes, &super::dp_cpe(&histogram(routes), n), fpr)
    }

    /// With `on = false`, lookups search every level as in the paper (on by default).
    pub fn set_gate(&mut self, on: bool) {
        self.use_gate = on;
    }

    /// The first-level keys a route of length ≥ 1 covers or lies inside, and the length the
    /// gate records for it.
    fn gate_keys(&self, prefix: u128, len: u8) -> (core::ops::Range<u64>, u8) {
        let q1 = self.levels[0];
        let first = key64(prefix, q1);
        if len <= q1 {
            (first..first + (1u64 << (q1 - len)), q1)
        } else {
            (first..first + 1, len)
        }
    }

    fn gate_add(&mut self, prefix: u128, len: u8) {
        let (keys, l) = self.gate_keys(prefix, len);
        for key in keys {
            *self.gate_counts.entry((key, l)).or_insert(0) += 1;
            if self.gate.entry(key).is_none_or(|e| e.0 < u32::from(l)) {
                self.gate.set(key, u32::from(l), 0);
            }
        }
    }

    fn gate_remove(&mut self, prefix: u128, len: u8) {
        let (keys, l) = self.gate_keys(prefix, len);
        let q1 = self.levels[0];
        for key in keys {
            if let Some(c) = self.gate_counts.get_mut(&(key, l)) {
                *c -= 1;
                if *c == 0 {
                    self.gate_counts.remove(&(key, l));
                }
            }
            match (q1..=128).rev().find(|&x| self.gate_counts.contains_key(&(key, x))) {
                Some(longest) => {
                    self.gate.set(key, u32::from(longest), 0);
                }
                None => {
                    self.gate.remove(key);
                }
            }
        }
    }

    /// The expansion levels.
    pub fn levels(&self) -> &[u8] {
        &self.levels
    }

    /// Checks a route against the address format and this table's levels.
    fn check(&self, prefix: u128, len: u8, next_hop: NextHop) -> Result<(), IpError> {
        check_route(prefix, len, next_hop)?;
        if (1..=64).contains(&len) {
            let level = self.levels[usize::from(self.level_of[usize::from(len)])];
            if 1u64.checked_shl(u32::from(level - len)).is_none_or(|n| n > MAX_EXPANSION) {
                return Err(IpError::ExpansionTooLarge { len, level });
            }
        }
        Ok(())
    }

    /// Installs every route, or none when one is bad.
    ///
    /// # Errors
    /// The first bad route's error; nothing changes.
    pub fn insert_all(&mut self, routes: &[Route<u128>]) -> Result<(), IpError> {
        for r in routes {
            self.check(r.prefix, r.len, r.next_hop)?;
        }
        let mut order: Vec<&Route<u128>> = routes.iter().collect();
        order.sort_by_key(|r| r.len);
        for r in order {
            self.install(r.prefix, r.len, r.next_hop);
        }
        Ok(())
    }

    /// Installs (or replaces) a route; returns the next hop it replaced.
    ///
    /// # Errors
    /// A malformed route or one that expands too far; nothing changes.
    pub fn insert(&mut self, prefix: u128, len: u8, next_hop: NextHop) -> Result<Option<NextHop>, IpError> {
        self.check(prefix, len, next_hop)?;
        Ok(self.install(prefix, len, next_hop))
    }

    fn install(&mut self, prefix: u128, len: u8, next_hop: NextHop) -> Option<NextHop> {
        let old = self.routes.insert((prefix, len), next_hop);
        if old.is_none() && len > 0 {
            self.gate_add(prefix, len);
        }
        match len {
            0 => self.default = next_hop,
            1..=64 => self.claim(prefix, len, next_hop, len, |o| o.is_none_or(|o| o <= len)),
            _ => {
                let at = match self.long.iter().position(|&(l, _)| l <= len) {
                    Some(i) if self.long[i].0 == len => i,
                    Some(i) => {
                        self.long.insert(i, (len, Group::new(64, self.fpr)));
                        i
                    }
                    None => {
                        self.long.push((len, Group::new(64, self.fpr)));
                        self.long.len() - 1
                    }
                };
                if self.long[at].1.entry(prefix >> (128 - u32::from(len))).is_none() {
                    let mark = key64(prefix, 64);
                    let count = self.long_marks.entry(mark).map_or(0, |e| e.0);
                    self.long_marks.set(mark, count + 1, 64);
                }
                self.long[at].1.set(prefix >> (128 - u32::from(len)), next_hop, len);
            }
        }
        old
    }

    /// Removes a route; returns its next hop.
    ///
    /// # Errors
    /// [`IpError::NoSuchRoute`]; nothing changes.
    pub fn remove(&mut self, prefix: u128, len: u8) -> Result<NextHop, IpError> {
        let Some(next_hop) = self.routes.remove(&(prefix, len)) else {
            return Err(IpError::NoSuchRoute(format!("{}/{len}", core::net::Ipv6Addr::from(prefix))));
        };
        if len > 0 {
            self.gate_remove(prefix, len);
        }
        match len {
            0 => self.default = NO_ROUTE,
            1..=64 => {
                let j = usize::from(self.level_of[usize::from(len)]);
                let lowest = if j == 0 { 1 } else { self.levels[j - 1] + 1 };
                let heir = (lowest..len).rev().find_map(|l| self.routes.get(&(prefix.masked(l), l)).map(|&nh| (nh, l)));
                match heir {
                    Some((nh, l)) => self.claim(prefix, len, nh, l, |o| o == Some(len)),
                    None => self.release(prefix, len),
                }
            }
            _ => {
                if let Some((_, g)) = self.long.iter_mut().find(|(l, _)| *l == len) {
                    g.remove(prefix >> (128 - u32::from(len)));
                }
                let mark = key64(prefix, 64);
                match self.long_marks.entry(mark) {
                    Some((1, _)) => self.long_marks.remove(mark),
                    Some((n, _)) => self.long_marks.set(mark, n - 1, 64),
                    None => {}
                }
            }
        }
        Ok(next_hop)
    }

    /// The level group and key range of a route of length 1..=64.
    fn range(&self, prefix: u128, len: u8) -> (usize, u64, u64) {
        let j = usize::from(self.level_of[usize::from(len)]);
        let q = self.levels[j];
        (j, key64(prefix, q), 1u64 << (q - len))
    }

    fn claim(&mut self, prefix: u128, len: u8, next_hop: NextHop, owner: u8, take: impl Fn(Option<u8>) -> bool) {
        let (j, first, count) = self.range(prefix, len);
        let g = &mut self.groups[j];
        for key in first..first + count {
            if take(g.entry(key).map(|e| e.1)) {
                g.set(key, next_hop, owner);
            }
        }
    }

    fn release(&mut self, prefix: u128, len: u8) {
        let (j, first, count) = self.range(prefix, len);
        let g = &mut self.groups[j];
        for key in first..first + count {
            if g.entry(key).is_some_and(|e| e.1 == len) {
                g.remove(key);
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

    /// The longest route above /64 covering `addr`, probed only when `addr`'s /64 (`key`, with
    /// hash `h`) is marked.
    #[inline(always)]
    fn long_match(&self, addr: u128, h: u64, key: u64) -> Option<NextHop> {
        if self.long.is_empty() || self.long_marks.find(h, key).is_none() {
            return None;
        }
        self.long.iter().find_map(|(l, g)| {
            let key = addr >> (128 - u32::from(*l));
            g.find(key.hash(), key)
        })
    }

    /// The levels worth searching for an address whose gate entry is `gate` (the longest route
    /// length under its first-level key): (index of the highest level, whether lengths above 64
    /// may match). `None` when only the default route can match.
    #[inline(always)]
    fn reach(&self, gate: Option<NextHop>) -> Option<(usize, bool)> {
        if !self.use_gate {
            return Some((self.levels.len() - 1, true));
        }
        let longest = gate?;
        Some((usize::from(self.level_of[longest.min(64) as usize]), longest > 64))
    }

    /// The next hop of the longest route covering `addr`, or [`NO_ROUTE`].
    #[inline]
    pub fn lookup(&self, addr: u128) -> NextHop {
        let k1 = key64(addr, self.levels[0]);
        let Some((top, long)) = self.reach(self.gate.get(k1.hash(), k1)) else {
            return self.default;
        };
        if long {
            let k64 = key64(addr, 64);
            if let Some(nh) = self.long_match(addr, k64.hash(), k64) {
                return nh;
            }
        }
        for (g, &q) in self.groups[..=top].iter().zip(&self.levels).rev() {
            let key = key64(addr, q);
            if let Some(nh) = g.find(key.hash(), key) {
                return nh;
            }
        }
        self.default
    }

    /// [`Bloomfwd6::lookup`] of `addrs[i]` into `out[i]`: for a block of addresses every level's
    /// key is hashed with SIMD and the gate slots prefetched; then each address's filters up to
    /// its gate's reach are probed and the slots they pass prefetched; then each address takes its
    /// longest true match.
    pub fn lookup_batch(&self, addrs: &[u128], out: &mut [NextHop]) {
        self.lookup_batch_with(simd::detect(), addrs, out);
    }

    /// The batch lookup hashing with a chosen instruction set (to measure what SIMD brings).
    pub fn lookup_batch_with(&self, isa: simd::Isa, addrs: &[u128], out: &mut [NextHop]) {
        let levels = self.levels.len();
        // At most 64 levels: stack buffers, so a lookup never allocates.
        let mut keys = [0u64; 64 * BLOCK];
        let mut h = [0u64; 64 * BLOCK];
        let (keys, h) = (&mut keys[..levels * BLOCK], &mut h[..levels * BLOCK]);
        for (a, o) in addrs.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
            let n = a.len().min(o.len());
            for (j, &q) in self.levels.iter().enumerate() {
                for (i, &x) in a[..n].iter().enumerate() {
                    keys[j * BLOCK + i] = key64(x, q);
                }
            }
            simd::hash_keys(isa, keys, h);
            for &hi in &h[..n] {
                self.gate.prefetch(hi);
            }
            // Per address: bit j set when level j's filter passed; whether long routes may match;
            // whether the gate left only the default.
            let mut maybe = [0u64; BLOCK];
            let mut longs = [false; BLOCK];
            let mut gated = [false; BLOCK];
            for (i, m) in maybe[..n].iter_mut().enumerate() {
                let Some((top, long)) = self.reach(self.gate.get(h[i], keys[i])) else {
                    gated[i] = true;
                    continue;
                };
                for (j, g) in self.groups[..=top].iter().enumerate() {
                    *m |= u64::from(g.probe_and_prefetch(h[j * BLOCK + i])) << j;
                }
                longs[i] = long;
            }
            for i in 0..n {
                if gated[i] {
                    o[i] = self.default;
                    continue;
                }
                let last = (levels - 1) * BLOCK + i;
                let long_hit = if longs[i] { self.long_match(a[i], h[last], keys[last]) } else { None };
                o[i] = long_hit.unwrap_or_else(|| {
                    let mut m = maybe[i];
                    while m != 0 {
                        let j = 63 - m.leading_zeros() as usize;
                        if let Some(nh) = self.groups[j].get(h[j * BLOCK + i], keys[j * BLOCK + i]) {
                            return nh;
                        }
                        m &= !(1 << j);
                    }
                    self.default
                });
            }
        }
    }

    /// Bytes the data plane holds (filter bits and tables) and bytes only the control side needs
    /// (filter counters, the routes).
    pub fn bytes(&self) -> (usize, usize) {
        let mut q = 0;
        let mut c = self.routes.capacity() * (core::mem::size_of::<((u128, u8), NextHop)>() + 1);
        let sizes = self.groups.iter().chain([&self.long_marks]).map(Group::bytes).chain(self.long.iter().map(|(_, g)| g.bytes()));
        for (gq, gc) in sizes {
            q += gq;
            c += gc;
        }
        q += self.gate.bytes();
        c += self.gate.control_bytes() + self.gate_counts.capacity() * (core::mem::size_of::<((u64, u8), u32)>() + 1);
        (q, c)
    }

    /// Expanded prefixes held, over all levels and long lengths.
    pub fn expanded(&self) -> usize {
        self.groups.iter().map(Group::len).sum::<usize>() + self.long.iter().map(|(_, g)| g.len()).sum::<usize>()
    }
}

impl Default for Bloomfwd6 {
    /// Levels at every multiple of 8 up to 64 (a table with no routes to choose levels from).
    fn default() -> Self {
        Self::new(&[8, 16, 24, 32, 40, 48, 56, 64], DEFAULT_FPR).unwrap_or_else(|_| unreachable!("valid levels"))
    }
}

impl crate::Lookup<u128> for Bloomfwd6 {
    type Answer = NextHop;
    fn lookup(&self, key: &u128) -> NextHop {
        Bloomfwd6::lookup(self, *key)
    }
}
