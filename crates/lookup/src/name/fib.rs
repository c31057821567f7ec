//! [`NameFib`]: longest name prefix match by binary search of hash tables (ANCS'15 §3).
//!
//! Overview. There is one fingerprint table per component count ("level"). The levels
//! `1..=span` (span = 2^d − 1, the smallest that covers the deepest route) form a perfect
//! binary search tree rooted at 2^(d−1): a lookup probes the root level with the hash of the
//! name's prefix of that many components; a match means the longest matching prefix is at least
//! that long, so the search goes right (longer), a miss sends it left. That is at most d =
//! ⌈log2(k+1)⌉ probes for routes of up to k components, whatever the FIB holds.
//!
//! For the search to find a long route it must not turn left above it, so each route leaves a
//! *marker* (its own prefix) at every level on its search path where the search goes right. Each
//! marker carries the answer of the longest route that is a prefix of it, so a search that ends
//! after following a marker answers without backtracking. Markers are reference-counted by the
//! routes that need them; a string that no route needs as a marker is a *leaf*: the
//! search stops there. Marker and route strings share name-prefix entries (see `entry`).
//!
//! Control side. Inserting, replacing or removing a route changes the answer carried by every
//! marker that extends it down to its nearest longer route. Those are found through an ordered
//! index of the routes by name bytes (`route_index`: a B+-tree of 5-byte keys that point at the
//! route's packed bytes in the entry arena; a name's packed bytes are a byte prefix of its
//! extensions' and sort as its TLV bytes do, so a route's descendants are one contiguous
//! range): for each topmost route Q under the changed route P, the prefixes of Q longer than P
//! and shorter than Q are looked up level by level and their answers rewritten. The index is
//! also what `routes()` lists; a route's next hops are the answer in its own slot.
//!
//! The tree only grows: when a route deeper than `span` arrives the tables are rebuilt for the
//! next power of two (at most five times in a FIB's life for 32 levels). Empty levels are never
//! read, so a FIB whose routes became shallower keeps the bound of its current depth.

use nexthop_wire::NameView;

use super::entry::{EntryArena, NewSlot, MAX_SLOTS};
use super::hash::{count_components, PrefixHasher, PrefixHashes, Strategy, MAX_LEVELS};
use super::nexthops::{NextHopSets, NextHops, NextHopsId};
use super::packed::{packed, unpack, unpacked};
use super::pulling::{LevelPulling, PulledFib};
use super::route_index::{RouteIndex, RouteKey};
use super::table::{FingerprintTable, FpEntry, Position};
use crate::mem;

/// Names longer than this (bytes of TLV value) are refused as routes.
pub const DEFAULT_MAX_NAME_BYTES: usize = 8800;

/// How a [`NameFib`] is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameFibConfig {
    /// String-matching strategy (and hash function).
    pub strategy: Strategy,
    /// Most components a route may have (at most [`MAX_LEVELS`]).
    pub max_components: usize,
    /// Most bytes a route's name value may have.
    pub max_name_bytes: usize,
    /// Ask for transparent huge pages for large tables.
    pub huge_pages: bool,
    /// The hash key; `None` draws a random one (what a router should do).
    pub key: Option<(u64, u64)>,
}

impl Default for NameFibConfig {
    fn default() -> Self {
        NameFibConfig {
            strategy: Strategy::VerifyAtEnd,
            max_components: MAX_LEVELS,
            max_name_bytes: DEFAULT_MAX_NAME_BYTES,
            huge_pages: true,
            key: None,
        }
    }
}

impl NameFibConfig {
    /// The default configuration with another strategy.
    pub fn with_strategy(strategy: Strategy) -> Self {
        NameFibConfig { strategy, ..Self::default() }
    }
}

/// Why a route was refused. Nothing in the FIB changes when an operation returns an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// The route's name has no component (a default route is not a name prefix here).
    #[error("route name is empty")]
    EmptyName,
    /// More components than the FIB is configured for.
    #[error("route name has {components} components, more than the configured maximum of {max}")]
    TooManyComponents {
        /// Components in the name.
        components: usize,
        /// The configured maximum.
        max: usize,
    },
    /// More bytes than the FIB is configured for.
    #[error("route name is {bytes} bytes long, more than the configured maximum of {max}")]
    NameTooLong {
        /// Bytes in the name value.
        bytes: usize,
        /// The configured maximum.
        max: usize,
    },
    /// A route needs at least one next hop.
    #[error("route has no next hop")]
    NoNextHops,
    /// Removing a route that is not there.
    #[error("no route for {0}")]
    NotFound(String),
}

/// The name FIB.
#[derive(Debug, Clone)]
pub struct NameFib {
    config: NameFibConfig,
    hasher: PrefixHasher,
    /// Root level of the search tree (2^(d−1)); 0 while the FIB has never held a route.
    root: usize,
    /// `tables[l - 1]` holds the prefixes of `l` components; `tables.len()` is the span.
    tables: Vec<FingerprintTable>,
    arena: EntryArena,
    sets: NextHopSets,
    /// Ordered index of the routes (control side).
    index: RouteIndex,
    /// Routes per level, `per_level[l]` for `l` components.
    per_level: [usize; MAX_LEVELS + 1],
    deepest: usize,
    pulling: Option<LevelPulling>,
}

/// The prefix of `value` made of its first `level` components, whose ends are in `ph`.
#[inline(always)]
fn prefix<'v>(value: &'v [u8], ph: &PrefixHashes, level: usize) -> &'v [u8] {
    &value[..ph.ends[level - 1] as usize]
}

/// The packed form of the first `level` components of `value`: the copy the hashing pass made,
/// or, for a name too long for that, packed again.
fn packed_prefix(value: &[u8], ph: &PrefixHashes, level: usize) -> Vec<u8> {
    ph.packed_prefix(level).map_or_else(|| packed(prefix(value, ph, level)), <[u8]>::to_vec)
}

impl Default for NameFib {
    fn default() -> Self {
        Self::new(NameFibConfig::default())
    }
}

impl NameFib {
    /// An empty FIB.
    pub fn new(config: NameFibConfig) -> Self {
        let config = NameFibConfig {
            max_components: config.max_components.clamp(1, MAX_LEVELS),
            // Packed, a name is at most one byte per component longer than its TLV value.
            max_name_bytes: config.max_name_bytes.min(u16::MAX as usize - MAX_LEVELS),
            ..config
        };
        let key = config.key.unwrap_or_else(random_key);
        NameFib {
            config,
            hasher: PrefixHasher::new(config.strategy, key),
            root: 0,
            tables: Vec::new(),
            arena: EntryArena::new(config.huge_pages),
            sets: NextHopSets::default(),
            index: RouteIndex::default(),
            per_level: [0; MAX_LEVELS + 1],
            deepest: 0,
            pulling: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &NameFibConfig {
        &self.config
    }

    /// Number of routes.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the FIB has no route.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Components of the deepest route.
    pub fn deepest(&self) -> usize {
        self.deepest
    }

    /// Levels of the search tree (the bound on probes per lookup, plus chained overflow).
    pub fn search_depth(&self) -> u32 {
        (self.tables.len() + 1).trailing_zeros()
    }

    /// The interned next-hop sets.
    pub fn next_hop_sets(&self) -> &NextHopSets {
        &self.sets
    }

    /// The set behind an id returned by a lookup.
    pub fn next_hops(&self, id: NextHopsId) -> &NextHops {
        self.sets.get(id)
    }

    /// Every route, in name order, as (name TLV value, next hops).
    pub fn routes(&self) -> impl Iterator<Item = (Vec<u8>, &NextHops)> + '_ {
        self.index.iter().map(|k| {
            let key = RouteKey::unpack(k);
            (unpacked(key_name(&self.arena, k)), self.sets.get(NextHopsId(self.arena.answer(key.entry, key.slot.into()))))
        })
    }

    /// The next hops of exactly `name`, if it is a route.
    pub fn get(&self, name: &NameView<'_>) -> Option<&NextHops> {
        let value = name.value();
        let m = count_components(value);
        let (entry, slot) = self.route_slot(value, &self.hash(value, m), m)?;
        Some(self.sets.get(NextHopsId(self.arena.answer(entry, slot))))
    }

    /// Fingerprint entries per level (index 0 is level 1).
    pub fn level_sizes(&self) -> Vec<usize> {
        self.tables.iter().map(FingerprintTable::len).collect()
    }

    /// Overflow buckets chained over all levels.
    pub fn chained_buckets(&self) -> usize {
        self.tables.iter().map(FingerprintTable::chained).sum()
    }

    /// Bytes allocated by the control side's ordered index of routes.
    pub fn control_bytes(&self) -> usize {
        self.index.heap_bytes()
    }

    /// Bytes the entry arena holds in a mapping of its own ([`crate::region::Region`]), not
    /// from the allocator: what a counting allocator does not see (included in
    /// [`NameFib::data_plane_bytes`]).
    pub fn mapped_bytes(&self) -> usize {
        self.arena.mapped_bytes()
    }

    /// Bytes allocated by the data plane: tables, entries, next-hop sets, level-pulling cache.
    pub fn data_plane_bytes(&self) -> usize {
        self.tables.iter().map(FingerprintTable::heap_bytes).sum::<usize>()
            + self.arena.heap_bytes()
            + self.sets.heap_bytes()
            + self.pulling.as_ref().map_or(0, LevelPulling::heap_bytes)
    }

    // ---------------------------------------------------------------- query side

    /// Longest-prefix match of `name`: the next hops of the longest route that is a prefix of it.
    #[inline]
    pub fn lookup(&self, name: &NameView<'_>) -> Option<&NextHops> {
        self.lookup_id(name.value()).map(|id| self.sets.get(id))
    }

    /// Longest-prefix match of the name with TLV value `value`, as a next-hop set id.
    #[inline]
    pub fn lookup_id(&self, value: &[u8]) -> Option<NextHopsId> {
        self.lookup_counted(value).0
    }

    /// [`Self::lookup_id`] that also returns how many hash buckets it read.
    #[inline]
    pub fn lookup_counted(&self, value: &[u8]) -> (Option<NextHopsId>, u32) {
        let mut ph = PrefixHashes::default();
        self.hasher.hash_prefixes(value, self.deepest, &mut ph);
        let mut probes = 0;
        let answer = match &self.pulling {
            Some(p) => self.search_pulled(p, value, &ph, &mut probes),
            None => self.search(value, &ph, self.verify_each(), None, &mut probes),
        };
        (id(answer), probes)
    }

    #[inline(always)]
    fn verify_each(&self) -> bool {
        self.config.strategy == Strategy::VerifyEach
    }

    /// Probes `level` for the name's prefix of that many components. A fingerprint match is
    /// taken on trust unless `verify` is set or the fingerprint is marked collided, in which
    /// case the entry's bytes are compared.
    #[inline(always)]
    fn probe(&self, value: &[u8], ph: &PrefixHashes, level: usize, verify: bool, probes: &mut u32) -> Option<FpEntry> {
        self.tables[level - 1].find(ph.hash(level), probes, |e| !(verify || e.is_collided()) || self.verify(e, value, ph, level))
    }

    /// Whether the entry of fingerprint match `e` at `level` holds the name's prefix of that
    /// many components: one byte comparison of packed prefixes, or for a name too long to pack
    /// inline, a comparison component by component.
    #[inline(always)]
    fn verify(&self, e: FpEntry, value: &[u8], ph: &PrefixHashes, level: usize) -> bool {
        match ph.packed_prefix(level) {
            Some(p) => self.arena.name_onwards(e.entry()).starts_with(p),
            None => self.arena.name_starts_with(e.entry(), prefix(value, ph, level)),
        }
    }

    /// The binary search over levels. `known` is a verified match already found (level
    /// pulling): the levels up to it that lie on the way match without a probe. Returns the
    /// answer (set id, 0 = none).
    #[inline(always)]
    fn search(&self, value: &[u8], ph: &PrefixHashes, verify_each: bool, known: Option<(FpEntry, usize)>, probes: &mut u32) -> u32 {
        let n = ph.len;
        if n == 0 {
            return 0;
        }
        let mut level = self.root;
        let mut half = self.root >> 1;
        let mut last = known;
        let known = known.map_or(0, |(_, level)| level);
        loop {
            let mut matched = false;
            if level <= known {
                matched = true;
            } else if level <= n && !self.tables[level - 1].is_empty() {
                if let Some(e) = self.probe(value, ph, level, verify_each, probes) {
                    matched = true;
                    last = Some((e, level));
                    if e.is_leaf() {
                        break;
                    }
                }
            }
            if half == 0 {
                break;
            }
            level = if matched { level + half } else { level - half };
            half >>= 1;
        }
        match last {
            None => 0,
            Some((e, level)) => self.finish(value, ph, e, level, verify_each, probes),
        }
    }

    /// The answer of the deepest match, verifying its bytes if the search did not.
    #[inline(always)]
    fn finish(&self, value: &[u8], ph: &PrefixHashes, e: FpEntry, level: usize, verified: bool, probes: &mut u32) -> u32 {
        if !verified && !e.is_collided() && !self.verify(e, value, ph, level) {
            return self.search_verified(value, ph, probes);
        }
        self.arena.answer(e.entry(), e.slot())
    }

    /// The search again, comparing bytes on every fingerprint match: what verify-at-end falls
    /// back to when a fingerprint lied.
    #[inline(never)]
    #[cold]
    fn search_verified(&self, value: &[u8], ph: &PrefixHashes, probes: &mut u32) -> u32 {
        self.search(value, ph, true, None, probes)
    }

    /// Lookup with level pulling: find the longest pulled prefix p of the name in the small
    /// cache-resident trie, probe the level just below it first, and continue the binary search
    /// only if that prefix is a marker (see `pulling`).
    #[inline(always)]
    fn search_pulled(&self, pulling: &LevelPulling, value: &[u8], ph: &PrefixHashes, probes: &mut u32) -> u32 {
        let verify_each = self.verify_each();
        let Some((j, holder)) = pulling.longest(value, ph) else {
            return self.search(value, ph, verify_each, None, probes);
        };
        let inherited = self.arena.answer(holder.entry(), holder.slot());
        let level = j + 1;
        if level > ph.len {
            return inherited;
        }
        let hit = if self.tables[level - 1].is_empty() { None } else { self.probe(value, ph, level, true, probes) };
        match hit {
            None => inherited,
            Some(e) if e.is_leaf() => self.arena.answer(e.entry(), e.slot()),
            Some(e) => self.search(value, ph, verify_each, Some((e, level)), probes),
        }
    }

    /// Looks up a batch: hashes every name, prefetches its first bucket, then advances all the
    /// searches one step per round so that each round's memory reads overlap. A step reads the
    /// bucket prefetched in the round before; a fingerprint match that must be verified (every
    /// match with verify-each, a collided one with verify-at-end) prefetches its name-prefix
    /// entry and is verified in the next round, so the entry's cache miss overlaps the others
    /// too. `out[i]` gets the answer for `names[i]`.
    pub fn lookup_batch_ids(&self, names: &[&[u8]], out: &mut [Option<NextHopsId>]) {
        const CHUNK: usize = 16;
        if self.pulling.is_some() {
            for (n, o) in names.iter().zip(out.iter_mut()) {
                *o = self.lookup_id(n);
            }
            return;
        }
        let verify_each = self.verify_each();
        // Every field a search reads is set when it starts (`ph` by the hashing pass).
        let mut st: [Walk; CHUNK] = [Walk::default(); CHUNK];
        for (names, out) in names.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            let mut active = 0usize;
            for (i, name) in names.iter().enumerate() {
                let w = &mut st[i];
                self.hasher.hash_prefixes(name, self.deepest, &mut w.ph);
                w.level = self.root;
                w.half = self.root >> 1;
                w.last = None;
                w.unverified = None;
                w.done = w.ph.len == 0 || !self.seek(w, None);
                if !w.done {
                    w.hash = w.ph.hash(w.level);
                    mem::prefetch(self.tables[w.level - 1].first_bucket(w.hash));
                    active += 1;
                }
            }
            let mut probes = 0u32;
            while active > 0 {
                for (i, name) in names.iter().enumerate() {
                    let w = &mut st[i];
                    if w.done {
                        continue;
                    }
                    let hit = match w.unverified.take() {
                        // The entry was prefetched last round. If the first fingerprint match
                        // lied, the chain is searched again comparing bytes (rare).
                        Some(e) if self.verify(e, name, &w.ph, w.level) => Some(e),
                        Some(_) => self.probe(name, &w.ph, w.level, true, &mut probes),
                        None => match self.tables[w.level - 1].find(w.hash, &mut probes, |_| true) {
                            Some(e) if verify_each || e.is_collided() => {
                                mem::prefetch(self.arena.address(e.entry()));
                                w.unverified = Some(e);
                                continue;
                            }
                            hit => hit,
                        },
                    };
                    let mut stop = false;
                    if let Some(e) = hit {
                        w.last = Some((e, w.level));
                        stop = e.is_leaf();
                    }
                    if stop || !self.seek(w, Some(hit.is_some())) {
                        w.done = true;
                        active -= 1;
                        if let Some((e, _)) = w.last {
                            mem::prefetch(self.arena.address(e.entry()));
                        }
                    } else {
                        w.hash = w.ph.hash(w.level);
                        mem::prefetch(self.tables[w.level - 1].first_bucket(w.hash));
                    }
                }
            }
            for (i, name) in names.iter().enumerate() {
                let w = &st[i];
                out[i] = match w.last {
                    None => None,
                    Some((e, level)) => id(self.finish(name, &w.ph, e, level, verify_each, &mut probes)),
                };
            }
        }
    }

    /// Moves a batched search to its next level that needs a probe: with `turn = None` the
    /// current level is considered first; with `Some(matched)` the search first turns right if
    /// it matched, left otherwise. Levels deeper than the name or empty are passed by turning
    /// left. Returns false when the search is over.
    #[inline(always)]
    fn seek(&self, w: &mut Walk, mut turn: Option<bool>) -> bool {
        loop {
            if let Some(matched) = turn {
                if w.half == 0 {
                    return false;
                }
                w.level = if matched { w.level + w.half } else { w.level - w.half };
                w.half >>= 1;
            }
            if w.level <= w.ph.len && !self.tables[w.level - 1].is_empty() {
                return true;
            }
            turn = Some(false);
        }
    }

    // ---------------------------------------------------------------- control side

    /// Adds a route, or replaces the next hops of an existing one. Returns the previous next
    /// hops if the route existed.
    pub fn insert(&mut self, name: &NameView<'_>, next_hops: NextHops) -> Result<Option<NextHops>, RouteError> {
        let value = name.value();
        let m = self.check(value)?;
        if next_hops.is_empty() {
            return Err(RouteError::NoNextHops);
        }
        let ph = self.hash(value, m);
        let key = packed_prefix(value, &ph, m);
        if let Some((entry, slot)) = self.route_slot(value, &ph, m) {
            let old = NextHopsId(self.arena.answer(entry, slot));
            let new = self.sets.acquire(&next_hops);
            self.arena.set_answer(entry, slot, new.0);
            self.propagate(&key, m, new.0);
            let previous = self.sets.get(old).clone();
            self.sets.release(old);
            return Ok(Some(previous));
        }
        let id = self.sets.acquire(&next_hops);
        self.count_level(m, 1);
        if m > self.tables.len() {
            self.rebuild(m, Some((value, id)));
            return Ok(None);
        }
        let (entry, slot) = self.install(value, &key, &ph, m, id.0);
        let next = self.index_route(&key, m, entry, slot);
        self.propagate_from(next, &key, m, id.0);
        if let Some(pulling) = self.pulling.take() {
            pulling.route_added(self, value);
            self.pulling = Some(pulling);
        }
        Ok(None)
    }

    /// Removes a route; returns its next hops.
    pub fn remove(&mut self, name: &NameView<'_>) -> Result<NextHops, RouteError> {
        let value = name.value();
        let m = self.check(value)?;
        let ph = self.hash(value, m);
        let Some((entry, slot)) = self.route_slot(value, &ph, m) else {
            return Err(RouteError::NotFound(name.to_string()));
        };
        let id = NextHopsId(self.arena.answer(entry, slot));
        if let Some(pulling) = self.pulling.take() {
            pulling.route_removed(self, value);
            self.pulling = Some(pulling);
        }
        let key = packed_prefix(value, &ph, m);
        let arena = &self.arena;
        self.index.remove(|k| key_name(arena, k).cmp(&key)).expect("every route is indexed");
        let parent = if m > 1 { self.bmp(value, &ph, m - 1) } else { 0 };
        for level in self.path(m) {
            let (pos, e) = self.locate(level, &ph, value).expect("route string is present on its path");
            let (entry, slot) = (e.entry(), e.slot());
            if level == m {
                self.arena.set_real(entry, slot, false);
                self.arena.set_answer(entry, slot, parent);
            } else {
                self.arena.add_refs(entry, slot, -1);
            }
            self.settle(level, pos, entry, slot);
        }
        self.count_level(m, -1);
        self.propagate(&key, m, parent);
        let previous = self.sets.get(id).clone();
        self.sets.release(id);
        Ok(previous)
    }

    /// Checks a route name against the configuration; returns its component count.
    fn check(&self, value: &[u8]) -> Result<usize, RouteError> {
        if value.is_empty() {
            return Err(RouteError::EmptyName);
        }
        if value.len() > self.config.max_name_bytes {
            return Err(RouteError::NameTooLong { bytes: value.len(), max: self.config.max_name_bytes });
        }
        let m = count_components(value);
        if m > self.config.max_components {
            return Err(RouteError::TooManyComponents { components: m, max: self.config.max_components });
        }
        Ok(m)
    }

    fn count_level(&mut self, m: usize, delta: isize) {
        self.per_level[m] = self.per_level[m].checked_add_signed(delta).expect("level count");
        self.deepest = (1..=MAX_LEVELS).rev().find(|&l| self.per_level[l] > 0).unwrap_or(0);
    }

    pub(crate) fn hash(&self, value: &[u8], levels: usize) -> PrefixHashes {
        let mut ph = PrefixHashes::default();
        self.hasher.hash_prefixes(value, levels, &mut ph);
        ph
    }

    /// The levels a route of `m` components needs a string at: those where a search for it
    /// turns right (its markers) and `m` itself, last. Levels where the search turns left need
    /// nothing.
    fn path(&self, m: usize) -> Vec<usize> {
        let (mut level, mut half) = (self.root, self.root >> 1);
        let mut path = Vec::with_capacity(MAX_SLOTS);
        loop {
            if level <= m {
                path.push(level);
            }
            if level == m {
                return path;
            }
            level = if m > level { level + half } else { level - half };
            half >>= 1;
        }
    }

    /// Where route `value` (`m` components, prefix hashes `ph`) is: its entry and slot, if it is
    /// a route.
    fn route_slot(&self, value: &[u8], ph: &PrefixHashes, m: usize) -> Option<(u32, usize)> {
        if m == 0 || m > self.tables.len() {
            return None;
        }
        let (_, e) = self.locate(m, ph, value)?;
        self.arena.is_real(e.entry(), e.slot()).then_some((e.entry(), e.slot()))
    }

    /// Adds the route with packed name `key` of `m` components, whose bytes and slot are in
    /// `entry`, to the ordered index; returns the key of the next route in name order.
    fn index_route(&mut self, key: &[u8], m: usize, entry: u32, slot: usize) -> Option<u64> {
        let k = RouteKey { entry, level: m as u8, slot: slot as u8 }.pack();
        let arena = &self.arena;
        self.index.insert(k, |k| key_name(arena, k).cmp(key)).expect("a new route is not indexed yet")
    }

    /// Finds the fingerprint entry of the first `level` components of `value`, comparing bytes.
    pub(crate) fn locate(&self, level: usize, ph: &PrefixHashes, value: &[u8]) -> Option<(Position, FpEntry)> {
        let table = self.tables.get(level - 1)?;
        let pos = table.position(ph.hash(level), |e| self.verify(e, value, ph, level))?;
        Some((pos, table.get(pos)))
    }

    /// The answer for the first `upto` components of `value` (the longest route that is a
    /// prefix of them), by a verified search.
    pub(crate) fn bmp(&self, value: &[u8], ph: &PrefixHashes, upto: usize) -> u32 {
        let mut short = *ph;
        short.len = upto.min(ph.len);
        let mut probes = 0;
        self.search(value, &short, true, None, &mut probes)
    }

    /// Puts the strings of a new route (`m` components, packed as `key`, answer `answer`) in the
    /// tables: the route itself and the markers on its search path, sharing what is already
    /// there. Returns the entry and slot of the route.
    fn install(&mut self, value: &[u8], key: &[u8], ph: &PrefixHashes, m: usize, answer: u32) -> (u32, usize) {
        let mut new_slots: Vec<NewSlot> = Vec::new();
        let mut existing: Vec<(usize, Position, FpEntry)> = Vec::new();
        for level in self.path(m) {
            match self.locate(level, ph, value) {
                Some((pos, e)) => existing.push((level, pos, e)),
                None => {
                    let marker = level < m;
                    let inherited = if marker { self.bmp(value, ph, level) } else { answer };
                    new_slots.push(NewSlot { level: level as u8, answer: inherited, refs: u32::from(marker), real: !marker });
                }
            }
        }
        let mut route = None;
        for (level, pos, e) in existing {
            let (entry, slot) = (e.entry(), e.slot());
            if level < m {
                self.arena.add_refs(entry, slot, 1);
                self.tables[level - 1].set_leaf(pos, false);
            } else {
                self.arena.set_real(entry, slot, true);
                self.arena.set_answer(entry, slot, answer);
                route = Some((entry, slot));
            }
        }
        if !new_slots.is_empty() {
            let entry = self.arena.alloc(key, m, &new_slots);
            for (i, s) in new_slots.iter().enumerate() {
                let level = s.level as usize;
                let hash = ph.hash(level);
                self.add_fingerprint(level, hash, FpEntry::new(hash, entry, i as u8, s.refs == 0));
                if level == m {
                    route = Some((entry, i));
                }
            }
        }
        route.expect("a route's own level is on its path")
    }

    /// Adds one more marker reference to the prefix of `value` at `level` (creating the marker
    /// if it is new). Used by level pulling for its extra markers.
    pub(crate) fn add_marker(&mut self, value: &[u8], level: usize) {
        let ph = self.hash(value, level);
        match self.locate(level, &ph, value) {
            Some((pos, e)) => {
                self.arena.add_refs(e.entry(), e.slot(), 1);
                self.tables[level - 1].set_leaf(pos, false);
            }
            None => {
                let answer = self.bmp(value, &ph, level);
                let slot = NewSlot { level: level as u8, answer, refs: 1, real: false };
                let entry = self.arena.alloc(&packed_prefix(value, &ph, level), level, &[slot]);
                let hash = ph.hash(level);
                self.add_fingerprint(level, hash, FpEntry::new(hash, entry, 0, false));
            }
        }
    }

    /// Drops one marker reference from the prefix of `value` at `level`.
    pub(crate) fn drop_marker(&mut self, value: &[u8], level: usize) {
        let ph = self.hash(value, level);
        let (pos, e) = self.locate(level, &ph, value).expect("marker present");
        self.arena.add_refs(e.entry(), e.slot(), -1);
        self.settle(level, pos, e.entry(), e.slot());
    }

    /// After a slot lost a reference or its route: sets its leaf bit, or removes its
    /// fingerprint (and frees its entry once every slot of it is dead).
    fn settle(&mut self, level: usize, pos: Position, entry: u32, slot: usize) {
        let (refs, real) = (self.arena.refs(entry, slot), self.arena.is_real(entry, slot));
        if refs > 0 {
            return;
        }
        if real {
            self.tables[level - 1].set_leaf(pos, true);
            return;
        }
        self.tables[level - 1].remove(pos);
        if self.arena.is_dead(entry) {
            self.arena.free(entry);
        }
    }

    fn add_fingerprint(&mut self, level: usize, hash: u64, e: FpEntry) {
        if self.tables[level - 1].needs_growth() {
            self.grow(level);
        }
        self.tables[level - 1].insert(hash, e);
    }

    /// Rebuilds one level's table at 1.5× its size.
    fn grow(&mut self, level: usize) {
        self.resize_table(level, (self.tables[level - 1].len() + 1) * 3 / 2);
    }

    /// Rebuilds one level's table sized for `capacity` entries at the design load, rehashing
    /// each prefix from its entry (prefetched a few entries ahead: the entries are scattered).
    fn resize_table(&mut self, level: usize, capacity: usize) {
        const AHEAD: usize = 8;
        let old = &self.tables[level - 1];
        let mut name = Vec::new();
        let mut hashed: Vec<(u64, FpEntry)> = Vec::with_capacity(old.len());
        hashed.extend(old.entries().map(|e| (0, e)));
        // The old table goes before the new one is allocated, so that at most one of them is
        // alive beside the entries (at 100M routes the largest table is gigabytes).
        self.tables[level - 1] = FingerprintTable::with_capacity(0, false);
        for i in 0..hashed.len() {
            if let Some(&(_, ahead)) = hashed.get(i + AHEAD) {
                mem::prefetch(self.arena.address(ahead.entry()));
            }
            let e = hashed[i].1;
            name.clear();
            unpack(self.arena.name(e.entry()), &mut name);
            hashed[i].0 = self.hasher.hash_prefix(&name, level);
        }
        self.tables[level - 1] = FingerprintTable::rebuilt(capacity, self.config.huge_pages, hashed);
    }

    /// Gives back spare capacity, for after a bulk load: every table is rebuilt at the design
    /// load for what it holds now (as the paper sizes a table for n prefixes at n/4 buckets,
    /// where growing by 1.5× leaves tables between 2/3 and all of that load), the entry arena is
    /// trimmed, and the route index is rebuilt with full nodes. Answers do not change; the next
    /// insertion into a full table grows it.
    pub fn shrink_to_fit(&mut self) {
        for level in 1..=self.tables.len() {
            if !self.tables[level - 1].is_empty() {
                self.resize_table(level, self.tables[level - 1].len());
            }
        }
        self.arena.shrink_to_fit();
        self.index.compact();
    }

    /// Gives `answer` to every marker that extends the route position `key` (packed, `m`
    /// components) with no longer route between: for each topmost route Q below, the prefixes
    /// of Q longer than `m` and shorter than Q.
    fn propagate(&mut self, key: &[u8], m: usize, answer: u32) {
        let arena = &self.arena;
        let next = self.index.first_where(|k| key_name(arena, k) > key);
        self.propagate_from(next, key, m, answer);
    }

    /// [`Self::propagate`] given `next`, the first route after `key` in name order.
    fn propagate_from(&mut self, mut next: Option<u64>, key: &[u8], m: usize, answer: u32) {
        let (mut q, mut value) = (Vec::new(), Vec::new());
        while let Some(k) = next {
            q.clear();
            q.extend_from_slice(key_name(&self.arena, k));
            if !q.starts_with(key) {
                return;
            }
            value.clear();
            unpack(&q, &mut value);
            let ph = self.hash(&value, MAX_LEVELS);
            let qm = ph.len;
            if qm > m + 1 {
                for level in m + 1..qm {
                    if let Some((_, e)) = self.locate(level, &ph, &value) {
                        self.arena.set_answer(e.entry(), e.slot(), answer);
                    }
                }
            }
            // The next route that does not extend q: q's own extensions are below q's answer.
            let arena = &self.arena;
            next = self.index.first_where(|k| {
                let name = key_name(arena, k);
                name > &q[..] && !name.starts_with(&q)
            });
        }
    }

    /// Rebuilds every table for a tree that covers `m` levels, reinstalling the routes and
    /// `new` in name order (a route's prefixes before it, so no answer needs propagating).
    fn rebuild(&mut self, m: usize, new: Option<(&[u8], NextHopsId)>) {
        let mut routes: Vec<(Box<[u8]>, u32)> = self
            .index
            .iter()
            .map(|k| {
                let key = RouteKey::unpack(k);
                (unpacked(key_name(&self.arena, k)).into(), self.arena.answer(key.entry, key.slot.into()))
            })
            .collect();
        if let Some((value, id)) = new {
            let at = routes.partition_point(|(name, _)| &**name < value);
            routes.insert(at, (value.into(), id.0));
        }
        let span = (m + 1).next_power_of_two() - 1;
        let span = span.max(self.tables.len());
        self.root = span.div_ceil(2);
        let huge = self.config.huge_pages;
        self.tables = (1..=span).map(|l| FingerprintTable::with_capacity(self.per_level[l] * 2, huge)).collect();
        self.arena = EntryArena::new(self.config.huge_pages);
        self.index = RouteIndex::default();
        for (name, id) in &routes {
            let m = count_components(name);
            let ph = self.hash(name, m);
            let key = packed_prefix(name, &ph, m);
            let (entry, slot) = self.install(name, &key, &ph, m, *id);
            self.index_route(&key, m, entry, slot);
        }
        if let Some(pulling) = self.pulling.take() {
            self.enable_level_pulling(pulling.threshold());
        }
    }

    // ---------------------------------------------------------------- level pulling

    /// Turns level pulling on with threshold `t`: every prefix with more than `t` distinct next
    /// components goes into a small cache-resident trie, and its one-longer extensions are
    /// searched first. Replaces any earlier setting.
    pub fn enable_level_pulling(&mut self, t: usize) {
        self.disable_level_pulling();
        let pulling = LevelPulling::build(self, t);
        self.pulling = Some(pulling);
    }

    /// Turns level pulling off and drops its extra markers.
    pub fn disable_level_pulling(&mut self) {
        if let Some(pulling) = self.pulling.take() {
            pulling.teardown(self);
        }
    }

    /// The level-pulling cache, if on.
    pub fn level_pulling(&self) -> Option<&LevelPulling> {
        self.pulling.as_ref()
    }

    /// Every route's name (TLV value), in name order.
    pub(crate) fn route_names(&self) -> impl Iterator<Item = Vec<u8>> + '_ {
        self.index.iter().map(|k| unpacked(key_name(&self.arena, k)))
    }
}

/// One name's state in a batched search.
#[derive(Clone, Copy, Default)]
struct Walk {
    ph: PrefixHashes,
    level: usize,
    /// The hash of the name's prefix at `level` (finalised once per level, see `hash`).
    hash: u64,
    half: usize,
    last: Option<(FpEntry, usize)>,
    /// A fingerprint match at `level` whose entry was prefetched, to verify next round.
    unverified: Option<FpEntry>,
    done: bool,
}

#[inline(always)]
fn id(answer: u32) -> Option<NextHopsId> {
    (answer != 0).then_some(NextHopsId(answer))
}

/// The packed name of the route with index key `k`: a prefix of its entry's name.
#[inline]
fn key_name(arena: &EntryArena, k: u64) -> &[u8] {
    let key = RouteKey::unpack(k);
    arena.name_prefix(key.entry, usize::from(key.level))
}

fn random_key() -> (u64, u64) {
    use std::hash::{BuildHasher, RandomState};
    let s = RandomState::new();
    (s.hash_one(0x6e65_7874u64), s.hash_one(0x0068_6f70_u64))
}

impl<'n> crate::Lookup<NameView<'n>> for &NameFib {
    type Answer = Option<NextHopsId>;

    fn lookup(&self, key: &NameView<'n>) -> Self::Answer {
        self.lookup_id(key.value())
    }

    fn lookup_batch(&self, keys: &[&NameView<'n>], out: &mut [Self::Answer]) {
        const CHUNK: usize = 64;
        let mut values: [&[u8]; CHUNK] = [&[]; CHUNK];
        for (keys, out) in keys.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
            for (v, k) in values.iter_mut().zip(keys) {
                *v = k.value();
            }
            self.lookup_batch_ids(&values[..keys.len()], out);
        }
    }
}

impl PulledFib for NameFib {
    fn hash(&self, value: &[u8], levels: usize) -> PrefixHashes {
        NameFib::hash(self, value, levels)
    }
    fn holder(&self, level: usize, ph: &PrefixHashes, value: &[u8]) -> Option<FpEntry> {
        self.locate(level, ph, value).map(|(_, holder)| holder)
    }
    fn add_marker(&mut self, value: &[u8], level: usize) {
        NameFib::add_marker(self, value, level);
    }
    fn drop_marker(&mut self, value: &[u8], level: usize) {
        NameFib::drop_marker(self, value, level);
    }
    fn route_names(&self) -> impl Iterator<Item = Vec<u8>> + '_ {
        NameFib::route_names(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nexthop_wire::Name;

    fn n(uri: &str) -> Name {
        Name::from_uri(uri).unwrap()
    }

    fn fib(strategy: Strategy) -> NameFib {
        NameFib::new(NameFibConfig { strategy, key: Some((7, 9)), huge_pages: false, ..NameFibConfig::default() })
    }

    fn face(f: &NameFib, uri: &str) -> Option<u32> {
        f.lookup(&n(uri).as_view()).map(|h| h.best().unwrap().face)
    }

    #[test]
    fn the_papers_backtracking_example_needs_no_backtracking() {
        for s in [Strategy::VerifyEach, Strategy::VerifyAtEnd] {
            let mut f = fib(s);
            // Force a 7-level tree as in Figure 1.
            f.insert(&n("/z/z/z/z/z/z/z").as_view(), NextHops::single(9, 0)).unwrap();
            f.insert(&n("/a").as_view(), NextHops::single(1, 0)).unwrap();
            f.insert(&n("/a/b/c").as_view(), NextHops::single(3, 0)).unwrap();
            f.insert(&n("/a/b/c/d").as_view(), NextHops::single(4, 0)).unwrap();
            assert_eq!(f.search_depth(), 3);
            assert_eq!(face(&f, "/a/b/c/random"), Some(3));
            assert_eq!(face(&f, "/a/b/random"), Some(1), "marker /a/b inherits /a");
            assert_eq!(face(&f, "/a/b/c/d/e/f/g/h"), Some(4));
            assert_eq!(face(&f, "/b"), None);
            let (_, probes) = f.lookup_counted(n("/a/b/c/d/e/f/g").value());
            assert!(probes <= 3);
        }
    }

    #[test]
    fn shorter_route_added_later_reaches_existing_markers() {
        for s in [Strategy::VerifyEach, Strategy::VerifyAtEnd] {
            let mut f = fib(s);
            f.insert(&n("/a/b/c/d/e/f/g").as_view(), NextHops::single(7, 0)).unwrap();
            assert_eq!(face(&f, "/a/b/c/d/x"), None);
            f.insert(&n("/a/b").as_view(), NextHops::single(2, 0)).unwrap();
            assert_eq!(face(&f, "/a/b/c/d/x"), Some(2));
            assert_eq!(face(&f, "/a/b/c/d/e/f/x"), Some(2));
            f.insert(&n("/a/b").as_view(), NextHops::single(5, 0)).unwrap();
            assert_eq!(face(&f, "/a/b/c/d/e/f/x"), Some(5), "replacing updates inherited answers");
            f.remove(&n("/a/b").as_view()).unwrap();
            assert_eq!(face(&f, "/a/b/c/d/e/f/x"), None);
            assert_eq!(face(&f, "/a/b/c/d/e/f/g"), Some(7));
            f.remove(&n("/a/b/c/d/e/f/g").as_view()).unwrap();
            assert!(f.level_sizes().iter().all(|&s| s == 0), "markers go with the last route that needed them");
            assert_eq!(f.arena.live_bytes(), 0);
        }
    }

    #[test]
    fn routes_under_ff_bytes_get_their_answers_and_list_in_order() {
        // Component bytes of 0xff: the end of a route's run of extensions in name order is
        // found by a predicate, not by incrementing the last byte.
        let mut f = fib(Strategy::VerifyAtEnd);
        for (uri, face) in [("/x/%FF%FF/y/z/w/v", 2), ("/x/%FF%FF/%FF/q", 4), ("/y", 6), ("/x", 1)] {
            f.insert(&n(uri).as_view(), NextHops::single(face, 0)).unwrap();
        }
        assert_eq!(face(&f, "/x/%FF%FF/y/z/w/u"), Some(1));
        f.insert(&n("/x/%FF%FF").as_view(), NextHops::single(3, 0)).unwrap();
        assert_eq!(face(&f, "/x/%FF%FF/y/z/w/u"), Some(3));
        assert_eq!(face(&f, "/x/%FF%FF/%FF/r"), Some(3));
        assert_eq!(face(&f, "/x/%FF%FF/%FF/q/r"), Some(4));
        f.remove(&n("/x/%FF%FF").as_view()).unwrap();
        assert_eq!(face(&f, "/x/%FF%FF/y/z/w/u"), Some(1));
        assert_eq!(f.get(&n("/x/%FF%FF").as_view()), None);
        assert_eq!(f.get(&n("/y").as_view()).and_then(NextHops::best).map(|h| h.face), Some(6));
        let listed: Vec<Vec<u8>> = f.routes().map(|(name, _)| name).collect();
        let mut sorted = listed.clone();
        sorted.sort();
        assert_eq!(listed, sorted);
        assert_eq!(listed.len(), f.len());
    }

    #[test]
    fn typed_and_long_components_are_stored_escaped_and_found() {
        // Entries store names packed; components that are not short generic ones are escaped
        // (types below 8 with one escape byte, above 8 and long generic with another).
        let digest = format!("/a/sha256digest={}", "ab".repeat(32));
        let long = format!("/a/{}", "L".repeat(300));
        let routes = ["/a/v=3", "/a/v=3/seg=0", "/a/32=kw/b", "/a/b", &digest, &long, "/a"];
        let mut f = fib(Strategy::VerifyEach);
        let mut reference = crate::name::ReferenceFib::new();
        for (i, r) in routes.iter().enumerate() {
            f.insert(&n(r).as_view(), NextHops::single(i as u32 + 1, 0)).unwrap();
            reference.insert(&n(r).as_view(), NextHops::single(i as u32 + 1, 0));
        }
        let tail = format!("{long}/x");
        let queries = ["/a/v=3/seg=0/x", "/a/v=3/seg=1", "/a/v=4", "/a/32=kw/b/c", "/a/32=kw", &digest, &tail, "/a/b/c", "/b"];
        for q in queries {
            assert_eq!(f.lookup(&n(q).as_view()), reference.lookup(&n(q).as_view()), "{q}");
        }
        let listed: Vec<Vec<u8>> = f.routes().map(|(name, _)| name).collect();
        let want: Vec<Vec<u8>> = reference.routes().into_iter().map(|(name, _)| name.to_vec()).collect();
        assert_eq!(listed, want, "listed in TLV order");
        for r in routes {
            f.remove(&n(r).as_view()).unwrap();
        }
        assert!(f.is_empty());
    }

    #[test]
    fn bad_routes_are_refused_and_change_nothing() {
        let mut f = NameFib::new(NameFibConfig { max_components: 3, max_name_bytes: 20, key: Some((1, 1)), ..Default::default() });
        f.insert(&n("/a").as_view(), NextHops::single(1, 0)).unwrap();
        assert_eq!(f.insert(&n("/").as_view(), NextHops::single(1, 0)), Err(RouteError::EmptyName));
        assert_eq!(
            f.insert(&n("/a/b/c/d").as_view(), NextHops::single(1, 0)),
            Err(RouteError::TooManyComponents { components: 4, max: 3 })
        );
        assert!(matches!(f.insert(&n("/aaaaaaaaaaaaaaaaaaaaaaaa").as_view(), NextHops::single(1, 0)), Err(RouteError::NameTooLong { .. })));
        assert_eq!(f.insert(&n("/b").as_view(), NextHops::default()), Err(RouteError::NoNextHops));
        assert!(matches!(f.remove(&n("/c").as_view()), Err(RouteError::NotFound(_))));
        assert_eq!(f.len(), 1);
        assert_eq!(face(&f, "/a/x"), Some(1));
    }

    #[test]
    fn batch_agrees_with_single() {
        for s in [Strategy::VerifyEach, Strategy::VerifyAtEnd] {
            let mut f = fib(s);
            for (i, uri) in ["/a", "/a/b/c", "/a/b/c/d/e", "/x/y", "/x/y/z/w/v/u/t/s/r"].iter().enumerate() {
                f.insert(&n(uri).as_view(), NextHops::single(i as u32 + 1, 0)).unwrap();
            }
            let queries: Vec<Name> =
                ["/a/b", "/a/b/c/d", "/a/b/c/d/e/f", "/x", "/x/y/z/w/v/u/t/s/r/q", "/q", "/x/y/z"].iter().map(|u| n(u)).collect();
            let values: Vec<&[u8]> = queries.iter().map(|q| q.value()).collect();
            let mut out = vec![None; values.len()];
            f.lookup_batch_ids(&values, &mut out);
            for (q, o) in queries.iter().zip(&out) {
                assert_eq!(*o, f.lookup_id(q.value()), "{q}");
            }
        }
    }

    #[test]
    fn a_lying_fingerprint_falls_back_to_a_verified_search() {
        let mut f = fib(Strategy::VerifyAtEnd);
        f.insert(&n("/route").as_view(), NextHops::single(1, 0)).unwrap();
        f.insert(&n("/route/deeper").as_view(), NextHops::single(2, 0)).unwrap();
        let target = f.hasher.hash_prefix(n("/route").value(), 1);
        // A one-bucket table: any name whose 20-bit fingerprint matches collides.
        assert_eq!(f.tables[0].len(), 1);
        let liar =
            (0u64..).map(|i| n(&format!("/{i:x}"))).find(|c| f.hasher.hash_prefix(c.value(), 1) & 0xfffff == target & 0xfffff).unwrap();
        let query = liar.clone().with_generic("deeper");
        let (answer, probes) = f.lookup_counted(query.value());
        assert_eq!(answer, None, "{liar} must not match /route");
        assert!(probes > f.search_depth(), "the fallback search read buckets again");
        assert_eq!(face(&f, "/route/deeper/x"), Some(2));
    }

    #[test]
    fn a_batch_whose_first_fingerprint_match_lies_finds_the_true_one_behind_it() {
        for s in [Strategy::VerifyEach, Strategy::VerifyAtEnd] {
            let mut f = fib(s);
            let target = f.hasher.hash_prefix(n("/route").value(), 1);
            let liar =
                (0u64..).map(|i| n(&format!("/{i:x}"))).find(|c| f.hasher.hash_prefix(c.value(), 1) & 0xfffff == target & 0xfffff).unwrap();
            // Both in the one bucket of level 1, the liar first in the chain.
            f.insert(&liar.as_view(), NextHops::single(1, 0)).unwrap();
            f.insert(&n("/route").as_view(), NextHops::single(2, 0)).unwrap();
            assert_eq!(f.tables[0].len(), 2);
            let queries = [n("/route/x"), liar.clone().with_generic("x"), n("/other")];
            let values: Vec<&[u8]> = queries.iter().map(|q| q.value()).collect();
            let mut out = vec![None; values.len()];
            f.lookup_batch_ids(&values, &mut out);
            let faces: Vec<Option<u32>> = out.iter().map(|o| o.map(|id| f.next_hops(id).best().unwrap().face)).collect();
            assert_eq!(faces, [Some(2), Some(1), None], "{s:?}");
            for (q, o) in queries.iter().zip(&out) {
                assert_eq!(*o, f.lookup_id(q.value()), "{q}");
            }
        }
    }

    #[test]
    fn the_lookup_trait_answers_like_the_methods() {
        use crate::Lookup;
        let mut f = fib(Strategy::VerifyAtEnd);
        f.insert(&n("/a/b").as_view(), NextHops::single(1, 0)).unwrap();
        let names: Vec<Name> = (0..100).map(|i| n(&format!("/a/b/{i}"))).chain([n("/a"), n("/c")]).collect();
        let views: Vec<NameView<'_>> = names.iter().map(Name::as_view).collect();
        let refs: Vec<&NameView<'_>> = views.iter().collect();
        let mut out = vec![None; refs.len()];
        (&f).lookup_batch(&refs, &mut out);
        for (v, o) in views.iter().zip(&out) {
            assert_eq!(*o, Lookup::lookup(&&f, v));
            assert_eq!(*o, f.lookup_id(v.value()));
        }
        assert!(out[0].is_some() && out[100].is_none());
    }
}
