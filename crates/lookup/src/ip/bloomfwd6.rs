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
//! an address probes the long pairs only when its /64 is marked (and, with the gate, only when
//! its gate cell holds any such route).
//!
//! # The front array and the gate (additions to the paper; [`Bloomfwd6::set_gate`] turns both off
//! to measure the paper's search as it was)
//! - The *front array* ([`DirectArray`], 2^16 cells, 256 KB): each /16's longest route of at
//!   most 16 bits, guarded where a longer route lies inside. Addresses outside the routed space
//!   stop there after one read of a cache-resident array — the IPv6 form of
//!   [`super::Bloomfwd4`]'s guard. (Routes of up to 16 bits also live in the levels, so a
//!   guarded address needs nothing more from the array.)
//! - The *gate* ([`Gate`]): for an address under a guarded /16, a 16-bit mask of the levels
//!   holding routes that cover or lie inside its cell (its first 16 + span bits, at most /29 and
//!   never finer than the first level), and whether any is longer than /64 — read from a
//!   direct-indexed block of cells per guarded /16, no hash and no compare. Only those levels
//!   are searched: an address under a prefix that holds /32s and /48s probes two filters, not
//!   every level up to /48. Probed one level at a time, a level alone in its mask skips its
//!   filter (the table probe is needed anyway). (The gate was first a hash table keyed by the
//!   first level's key; the direct cells — one read of a small array instead of a hashed bucket
//!   compare — made matched traffic faster.)
//!
//! # Batches
//! Blocks of `BLOCK` (32) addresses pass through three stages, each a block behind the one before:
//! 1. their front cells and gate cells are prefetched;
//! 2. the *filter stage* reads the front cell and the gate and probes the filters of the levels
//!    the gate names: the levels whose filters pass are the candidates, and the longest one's
//!    table bucket is prefetched. With AVX-512 (`avx512`) this runs 8 addresses per
//!    instruction — gathers for the front cells, the gate and each level's filter words, one
//!    level at a time for all 8; without it, one address and one named filter at a time;
//! 3. the *table stage* probes the candidates longest first, one cache-line bucket each (its keys
//!    and next hops compared by two AVX-512 instructions where the CPU has them).
//!
//! On this machine the levels of the RouteViews table stay in cache, and what bounded matched
//! traffic was not memory but instructions and branches: a probe loop per table slot and a loop
//! per level, each with a data-dependent exit, and per-address bookkeeping around every read.
//! Cache-line buckets ([`super::table::PrefixTable`]) removed the first, the vectorised filter
//! stage most of the rest; the stages let each bucket arrive before it is read.

use hashbrown::HashMap;

use super::direct::{DirectArray, NONE};
use super::gate::{self, Gate};
use super::group::Group;
use super::table::Key;
use super::{check_route, simd, Address, IpError, NextHop, Route, DEFAULT_FPR, MAX_EXPANSION, NO_ROUTE};
use crate::mem::prefetch;

#[cfg(target_arch = "x86_64")]
mod avx512;

/// Addresses hashed and prefetched together by [`Bloomfwd6::lookup_batch`].
const BLOCK: usize = 32;
/// Bits indexing the front array.
const FRONT_BITS: u8 = 16;

/// The IPv6 Bloomfwd table.
#[derive(Debug, Clone)]
pub struct Bloomfwd6 {
    levels: Vec<u8>,
    /// Length 1..=64 → index of its level.
    level_of: [u8; 65],
    /// Bit j set for every level j.
    all_levels: u64,
    /// Bit j set for every level j ≥ [`gate::LEVEL_BITS`] (what [`gate::HIGH`] stands for).
    high_levels: u64,
    groups: Vec<Group<u64>>,
    /// Lengths above 64, longest first, each with its own group.
    long: Vec<(u8, Group<u128>)>,
    /// /64 keys with routes longer than /64 beneath them; the next-hop field counts those routes.
    long_marks: Group<u64>,
    /// /16 → longest route of at most 16 bits, guarded where longer routes lie inside.
    front: DirectArray,
    /// Address → the levels holding routes that cover or lie inside its gate cell.
    gate: Gate,
    /// Whether lookups consult the front array and the gate.
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
        let all_levels = u64::MAX >> (64 - levels.len());
        Ok(Bloomfwd6 {
            levels: levels.to_vec(),
            level_of,
            all_levels,
            high_levels: all_levels & !((1u64 << gate::LEVEL_BITS) - 1),
            groups: levels.iter().map(|_| Group::new(1024, fpr)).collect(),
            long: Vec::new(),
            long_marks: Group::new(64, fpr),
            // No route is longer than /128: the front's second bit stays clear (the gate marks
            // the prefixes with routes above /64).
            front: DirectArray::new(FRONT_BITS, 128),
            gate: Gate::new(levels[0]),
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
        Ok(t)
    }

    /// A table holding `routes` with `n` levels chosen by DP-CPE from their length histogram.
    ///
    /// # Errors
    /// As [`Bloomfwd6::from_routes`].
    pub fn with_dp_cpe(routes: &[Route<u128>], n: usize, fpr: f64) -> Result<Self, IpError> {
        Self::from_routes(routes, &super::dp_cpe(&histogram(routes), n), fpr)
    }

    /// With `on = false`, lookups skip the front array and the gate and search every level as in
    /// the paper (on by default).
    pub fn set_gate(&mut self, on: bool) {
        self.use_gate = on;
    }

    /// Counts a route of length ≥ 1 in (`add`) or out of the gate.
    fn gate_count(&mut self, prefix: u128, len: u8, add: bool) {
        let slot = if len > 64 { gate::LONG_SLOT } else { self.level_of[usize::from(len)] };
        self.gate.update(prefix, len, slot, add);
    }

    /// The levels (bit j: level j) and whether routes above /64 are worth searching, for a gate
    /// mask.
    #[inline(always)]
    fn gate_levels(&self, mask: u16) -> (u64, bool) {
        let mut m = u64::from(mask) & ((1 << gate::LEVEL_BITS) - 1);
        if mask & gate::HIGH != 0 {
            m |= self.high_levels;
        }
        (m, mask & gate::LONG != 0)
    }

    /// The front cell of `addr`.
    #[inline(always)]
    fn front_cell(addr: u128) -> usize {
        (addr >> (128 - u32::from(FRONT_BITS))) as usize
    }

    /// The front cells a route of at most [`FRONT_BITS`] bits covers.
    fn front_cells(prefix: u128, len: u8) -> core::ops::Range<usize> {
        let first = Self::front_cell(prefix);
        first..first + (1usize << (FRONT_BITS - len))
    }

    /// The answer of a front cell that is the whole answer.
    #[inline(always)]
    fn front_answer(&self, cell: u32) -> NextHop {
        match DirectArray::next_hop(cell) {
            NO_ROUTE => self.default,
            nh => nh,
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
            self.gate_count(prefix, len, true);
            if len > FRONT_BITS {
                self.front.count_longer(Self::front_cell(prefix), len, true);
            }
        }
        if (1..=FRONT_BITS).contains(&len) {
            self.front.claim(Self::front_cells(prefix, len), next_hop, len, |o| o == NONE || o <= len);
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
            self.gate_count(prefix, len, false);
            if len > FRONT_BITS {
                self.front.count_longer(Self::front_cell(prefix), len, false);
            }
        }
        if (1..=FRONT_BITS).contains(&len) {
            let (nh, owner) = self.heir(prefix, 1..len).unwrap_or((NO_ROUTE, NONE));
            self.front.claim(Self::front_cells(prefix, len), nh, owner, |o| o == len);
        }
        match len {
            0 => self.default = NO_ROUTE,
            1..=64 => {
                let j = usize::from(self.level_of[usize::from(len)]);
                let lowest = if j == 0 { 1 } else { self.levels[j - 1] + 1 };
                match self.heir(prefix, lowest..len) {
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

    /// The longest route covering `prefix` with a length in `lengths`: (next hop, length) — what
    /// takes over a removed route's slots.
    fn heir(&self, prefix: u128, lengths: core::ops::Range<u8>) -> Option<(NextHop, u8)> {
        lengths.rev().find_map(|l| self.routes.get(&(prefix.masked(l), l)).map(|&nh| (nh, l)))
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

    /// The levels (bit j: level j) and whether routes above /64 are worth searching for `addr`;
    /// `Err(answer)` when the front array or the gate answers.
    #[inline(always)]
    fn scope(&self, addr: u128) -> Result<(u64, bool), NextHop> {
        if !self.use_gate {
            return Ok((self.all_levels, !self.long.is_empty()));
        }
        let cell = self.front.cell(Self::front_cell(addr));
        if !DirectArray::guarded(cell) {
            return Err(self.front_answer(cell));
        }
        match self.gate.mask(addr) {
            0 => Err(self.default),
            mask => Ok(self.gate_levels(mask)),
        }
    }

    /// The next hop of the longest route covering `addr`, or [`NO_ROUTE`].
    #[inline]
    pub fn lookup(&self, addr: u128) -> NextHop {
        let (mut levels, long) = match self.scope(addr) {
            Ok(scope) => scope,
            Err(answer) => return answer,
        };
        if long {
            let k64 = key64(addr, 64);
            if let Some(nh) = self.long_match(addr, k64.hash(), k64) {
                return nh;
            }
        }
        // A level alone needs no filter: its table probe is needed anyway.
        let alone = levels.is_power_of_two();
        while levels != 0 {
            let j = 63 - levels.leading_zeros() as usize;
            let key = key64(addr, self.levels[j]);
            let g = &self.groups[j];
            if let Some(nh) = if alone { g.get(key.hash(), key) } else { g.find(key.hash(), key) } {
                return nh;
            }
            levels &= !(1 << j);
        }
        self.default
    }

    /// [`Bloomfwd6::lookup`] of `addrs[i]` into `out[i]`, a block of addresses at a time (see the
    /// module overview); gate keys and level keys are hashed with SIMD.
    pub fn lookup_batch(&self, addrs: &[u128], out: &mut [NextHop]) {
        self.lookup_batch_with(simd::detect(), addrs, out);
    }

    /// The batch lookup with a chosen instruction set (to measure what SIMD brings).
    #[allow(unsafe_code)] // the call into the AVX-512 filter stage
    pub fn lookup_batch_with(&self, isa: simd::Isa, addrs: &[u128], out: &mut [NextHop]) {
        let n = addrs.len().min(out.len());
        #[cfg(target_arch = "x86_64")]
        let filters = if isa == simd::Isa::Avx512 && self.use_gate { avx512::Filters::of(self) } else { None };
        let blocks = n.div_ceil(BLOCK);
        let block = |k: usize| (k * BLOCK).min(n)..((k + 1) * BLOCK).min(n);
        // The filter stage's hand-over of the current and the previous block; block k's slot is
        // k % 2.
        let mut pending = [HandOver::default(), HandOver::default()];
        self.prefetch_block(&addrs[block(0)]);
        self.prefetch_block(&addrs[block(1)]);
        for k in 0..=blocks {
            if k < blocks {
                let r = block(k);
                let (a, o, h) = (&addrs[r.clone()], &mut out[r.clone()], &mut pending[k % 2]);
                #[cfg(target_arch = "x86_64")]
                if let Some(f) = &filters {
                    // SAFETY: `filters` exists only where `isa` is AVX-512, which the CPU has
                    // (F, DQ, VL and CD: simd::detect).
                    unsafe { avx512::filter_stage(f, a, o, h) };
                } else {
                    self.filter_stage(a, o, h);
                }
                #[cfg(not(target_arch = "x86_64"))]
                self.filter_stage(a, o, h);
                self.prefetch_block(&addrs[block(k + 2)]);
            }
            if k > 0 {
                let r = block(k - 1);
                let slot = (k - 1) % 2;
                self.table_block(isa, &addrs[r.clone()], &pending[slot], &mut out[r]);
            }
        }
    }

    /// The filter stage of a batch without AVX-512, for a block of addresses: the answers of the
    /// front array and the gate into `out`; for the others, which of the levels the gate names
    /// may hold their key — their filters probed one at a time — with the longest candidate's
    /// table bucket prefetched. Those with a table to probe go to `hand_over`.
    #[inline(always)]
    fn filter_stage(&self, addrs: &[u128], out: &mut [NextHop], hand_over: &mut HandOver) {
        hand_over.len = 0;
        for (i, &x) in addrs.iter().enumerate() {
            let (levels, long) = match self.scope(x) {
                Err(answer) => {
                    out[i] = answer;
                    continue;
                }
                Ok(scope) => scope,
            };
            let hi = (x >> 64) as u64;
            let key = |j: usize| key64(x, self.levels[j]);
            let key_hash = |j: usize| key(j).hash();
            let mut p = Pending { candidates: levels, long, hi, level: 0, key: 0, bucket: 0, at: i as u8 };
            if !levels.is_power_of_two() {
                // A level alone needs no filter: its table probe is needed anyway.
                let (mut c, mut m) = (0, levels);
                while m != 0 {
                    let j = m.trailing_zeros() as usize;
                    c |= u64::from(self.groups[j].filter_passes(key_hash(j))) << j;
                    m &= m - 1;
                }
                p.candidates = c;
            }
            if p.long {
                p.long = self.long_marks.filter_passes(hi.hash()); // the /64 key
            }
            if p.candidates != 0 {
                let j = 63 - p.candidates.leading_zeros() as usize;
                let g = &self.groups[j];
                (p.level, p.key, p.bucket) = (j as u8, key(j), g.home(key_hash(j)));
                prefetch(g.table().bucket_address(p.bucket));
            } else if !p.long {
                out[i] = self.default; // no filter passed: no table to probe
                continue;
            }
            hand_over.push(&p);
        }
    }

    /// The table stage of a batch for a block of addresses and what its filter stage handed
    /// over: each bucket compared with AVX-512 when `isa` has it.
    #[inline(always)]
    #[allow(unsafe_code)] // the call into the AVX-512 build
    fn table_block(&self, isa: simd::Isa, addrs: &[u128], pending: &HandOver, out: &mut [NextHop]) {
        #[cfg(target_arch = "x86_64")]
        if isa == simd::Isa::Avx512 {
            // SAFETY: `isa` is AVX-512 only where the CPU was found to have it (simd::detect).
            unsafe { self.table_block_avx512(addrs, pending, out) };
            return;
        }
        let _ = isa;
        self.table_loop::<false>(addrs, pending, out);
    }

    /// [`Self::table_block`] compiled for AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    fn table_block_avx512(&self, addrs: &[u128], pending: &HandOver, out: &mut [NextHop]) {
        self.table_loop::<true>(addrs, pending, out);
    }

    /// The table stage of every address handed over, each answer to its place in `out`.
    #[inline(always)]
    fn table_loop<const AVX512: bool>(&self, addrs: &[u128], pending: &HandOver, out: &mut [NextHop]) {
        for i in 0..pending.len {
            let p = pending.get(i);
            let at = usize::from(p.at);
            out[at] = self.table_stage::<AVX512>(addrs[at], &p);
        }
    }

    /// The table stage of a batch: the longest candidate level whose table holds `addr`'s key
    /// (the buckets compared with AVX-512 when `AVX512`).
    #[inline(always)]
    #[allow(unsafe_code)] // the AVX-512 bucket compare
    fn table_stage<const AVX512: bool>(&self, addr: u128, p: &Pending) -> NextHop {
        if p.long {
            if let Some(nh) = self.long_match(addr, p.hi.hash(), p.hi) {
                return nh;
            }
        }
        // The longest candidate's bucket is known; a later one's is found from its hash.
        let mut candidates = p.candidates;
        let mut next = (usize::from(p.level), p.key, p.bucket);
        while candidates != 0 {
            let (j, key, b) = next;
            let g = &self.groups[j];
            #[cfg(target_arch = "x86_64")]
            // SAFETY: only `table_block_avx512`, compiled for AVX-512 and called where the CPU
            // has it, instantiates AVX512 = true.
            let found = if AVX512 { unsafe { g.get_from_avx512(b, key) } } else { g.get_from(b, key) };
            #[cfg(not(target_arch = "x86_64"))]
            let found = g.get_from(b, key);
            if let Some(nh) = found {
                return nh;
            }
            candidates &= !(1 << j);
            if candidates != 0 {
                let j = 63 - candidates.leading_zeros() as usize;
                let key = key64(addr, self.levels[j]);
                next = (j, key, self.groups[j].home(key.hash()));
            }
        }
        self.default
    }

    /// Prefetches a block's front cells and gate cells.
    #[inline(always)]
    fn prefetch_block(&self, a: &[u128]) {
        if !self.use_gate {
            return; // the paper's search: no front array or gate to read
        }
        for &x in a {
            self.front.prefetch(Self::front_cell(x));
            self.gate.prefetch(x);
        }
    }

    /// Bytes the data plane holds (front array, gate, filter bits and tables) and bytes only the
    /// control side needs (front owners, gate counts, filter counters, the routes).
    pub fn bytes(&self) -> (usize, usize) {
        let mut q = 0;
        let mut c = self.routes.capacity() * (core::mem::size_of::<((u128, u8), NextHop)>() + 1);
        let sizes = self.groups.iter().chain([&self.long_marks]).map(Group::bytes).chain(self.long.iter().map(|(_, g)| g.bytes()));
        for (gq, gc) in sizes {
            q += gq;
            c += gc;
        }
        let ((fq, fc), (gq, gc)) = (self.front.bytes(), self.gate.bytes());
        q += fq + gq;
        c += fc + gc;
        (q, c)
    }

    /// Expanded prefixes held, over all levels and long lengths.
    pub fn expanded(&self) -> usize {
        self.groups.iter().map(Group::len).sum::<usize>() + self.long.iter().map(|(_, g)| g.len()).sum::<usize>()
    }
}

/// What a batch's filter stage hands its table stage for one address.
#[derive(Debug, Clone, Copy)]
struct Pending {
    /// Levels whose filters passed (bit j: level j), searched longest first.
    candidates: u64,
    /// Whether routes above /64 may cover the address.
    long: bool,
    /// The address's top 64 bits (every level's key is a prefix of them).
    hi: u64,
    /// The longest candidate: its level, its key there and its home bucket in the level's table
    /// (prefetched by the filter stage).
    level: u8,
    key: u64,
    bucket: usize,
    /// The address's index in its block.
    at: u8,
}

/// The [`Pending`] addresses of a block, as parallel arrays (the AVX-512 filter stage writes 8
/// at a time, one compressed vector per field): entries `0..len`.
#[derive(Debug, Clone, Copy, Default)]
struct HandOver {
    len: usize,
    candidates: [u64; BLOCK],
    long: [u64; BLOCK],
    hi: [u64; BLOCK],
    level: [u64; BLOCK],
    key: [u64; BLOCK],
    bucket: [u64; BLOCK],
    at: [u64; BLOCK],
}

impl HandOver {
    /// Appends `p`.
    #[inline(always)]
    fn push(&mut self, p: &Pending) {
        let i = self.len;
        self.candidates[i] = p.candidates;
        self.long[i] = u64::from(p.long);
        self.hi[i] = p.hi;
        self.level[i] = u64::from(p.level);
        self.key[i] = p.key;
        self.bucket[i] = p.bucket as u64;
        self.at[i] = u64::from(p.at);
        self.len += 1;
    }

    /// Entry `i`.
    #[inline(always)]
    fn get(&self, i: usize) -> Pending {
        Pending {
            candidates: self.candidates[i],
            long: self.long[i] != 0,
            hi: self.hi[i],
            level: self.level[i] as u8,
            key: self.key[i],
            bucket: self.bucket[i] as usize,
            at: self.at[i] as u8,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    const P: u128 = 0x2001_0db8u128 << 96;

    fn table() -> Bloomfwd6 {
        let mut t = Bloomfwd6::new(&[24, 32, 40, 48, 56, 64], 0.3).unwrap();
        t.insert(0x2400u128 << 112, 12, 1).unwrap(); // covers 2400::/16 .. 240f::/16
        t.insert(P, 32, 2).unwrap();
        t.insert(P | (0x1234u128 << 80), 48, 3).unwrap();
        t.insert(0, 0, 9).unwrap();
        t
    }

    #[test]
    fn the_front_array_answers_where_nothing_longer_lies_below() {
        let t = table();
        let cell = |a: u128| t.front.cell(Bloomfwd6::front_cell(a));
        // 2400::/12 reaches the front cells it covers; nothing longer lies there.
        assert!(!DirectArray::guarded(cell(0x2403u128 << 112)));
        assert_eq!(t.scope(0x2403u128 << 112), Err(1));
        // Unrouted space answers the default route from the array.
        assert_eq!(t.scope(0x3000u128 << 112), Err(9));
        // 2001::/16 holds the /32 and the /48: guarded, so the levels decide.
        assert!(DirectArray::guarded(cell(P)));
        assert_eq!(t.lookup(P | 7), 2);
        assert_eq!(t.lookup(P | (0x1234u128 << 80) | 7), 3);
        assert_eq!(t.lookup((0x2001_0db9u128 << 96) | 7), 9, "inside 2001::/16 but under no route");
    }

    #[test]
    fn the_gate_names_only_the_levels_below_its_key() {
        let mut t = table();
        let levels = |t: &Bloomfwd6, a: u128| Some(t.gate.mask(a)).filter(|&m| m != 0).map(|m| t.gate_levels(m));
        // Under 2001:0d::/24: the /32 (level 1) and the /48 (level 3), nothing above /64.
        assert_eq!(levels(&t, P), Some((0b1010, false)));
        t.insert(P | (0xffu128 << 8), 120, 4).unwrap();
        assert_eq!(levels(&t, P), Some((0b1010, true)));
        assert_eq!(t.lookup(P | (0xffu128 << 8) | 1), 4);
        t.remove(P | (0x1234u128 << 80), 48).unwrap();
        t.remove(P | (0xffu128 << 8), 120).unwrap();
        assert_eq!(levels(&t, P), Some((0b10, false)));
        t.remove(P, 32).unwrap();
        assert_eq!(levels(&t, P), None);
        assert!(!DirectArray::guarded(t.front.cell(Bloomfwd6::front_cell(P))), "no longer route: the guard clears");
        assert_eq!(t.lookup(P | 7), 9);
    }

    #[test]
    fn short_routes_hand_their_front_cells_back_on_removal() {
        let mut t = Bloomfwd6::new(&[16, 32, 64], 0.3).unwrap();
        t.insert(0x2000u128 << 112, 4, 1).unwrap();
        t.insert(0x2400u128 << 112, 8, 2).unwrap();
        assert_eq!(t.lookup(0x2401u128 << 112), 2);
        t.remove(0x2400u128 << 112, 8).unwrap();
        assert_eq!(t.lookup(0x2401u128 << 112), 1, "the /4 takes the /8's cells back");
        t.remove(0x2000u128 << 112, 4).unwrap();
        assert_eq!(t.lookup(0x2401u128 << 112), NO_ROUTE);
    }

    #[test]
    fn the_batch_agrees_with_single_lookups_past_the_gate_s_named_levels() {
        // 16 levels: the gate names 14, its high bit stands for the last two (/63 and /64); the
        // AVX-512 filter stage takes up to 16 levels.
        let levels: Vec<u8> = (49..=64).collect();
        let mut t = Bloomfwd6::new(&levels, 0.3).unwrap();
        let deep = P | (0x0bcd_ef01u128 << 64);
        t.insert(deep, 64, 5).unwrap();
        t.insert(deep & !(1u128 << 64), 63, 6).unwrap();
        t.insert(P, 50, 7).unwrap();
        t.insert(deep | 0xff, 128, 8).unwrap();
        t.insert(0x2400_0001u128 << 96, 40, 9).unwrap();
        let addrs: Vec<u128> = (0..77u128)
            .map(|i| match i % 7 {
                0 => deep | i,
                1 => deep ^ (1 << 64) | i,
                2 => P | (i << 70),
                3 => deep | 0xff,
                4 => (0x2400_0001u128 << 96) | i,
                5 => (0x3000u128 << 112) | i,
                _ => P ^ (1 << 80) | i,
            })
            .collect();
        let mut out = vec![0; addrs.len()];
        t.lookup_batch(&addrs, &mut out);
        let single: Vec<NextHop> = addrs.iter().map(|&a| t.lookup(a)).collect();
        assert_eq!(out, single);
        assert_eq!(&single[..5], &[5, 6, 7, 8, 9]);
    }

    #[test]
    fn more_levels_than_the_gate_names_share_its_high_bit() {
        let levels: Vec<u8> = (33..=64).collect();
        let mut t = Bloomfwd6::new(&levels, 0.3).unwrap();
        let deep = P | (0x0bcd_ef01u128 << 64);
        t.insert(deep, 64, 5).unwrap();
        t.insert(P | (1u128 << 94), 34, 6).unwrap();
        let (mask, long) = t.gate_levels(t.gate.mask(deep));
        assert!(!long);
        assert_eq!(mask & (1 << 1), 1 << 1, "/34 is level 1");
        assert_eq!(mask & (1 << 31), 1 << 31, "/64 (level 31) is reached through the shared bit");
        assert_eq!(t.lookup(deep | 1), 5);
        let mut out = [0; 2];
        t.lookup_batch(&[deep | 1, P | (1u128 << 94) | 1], &mut out);
        assert_eq!(out, [5, 6]);
    }
}
