//! The L1: a DRAM content store indexed by the hash of the full name.
//!
//! # Layout
//! - Payloads live in one preallocated arena of `capacity` fixed slots of `slot_bytes` each; a
//!   Data packet is stored as its wire encoding, so serving it is handing out a slice.
//! - The index (`crate::index`) is an open-addressing table of 8-byte entries (upper 32 bits
//!   of the name hash, slot) at most half full: an exact-name lookup reads one index line and the
//!   slot's first cache line to verify the name — the line the caller reads next anyway.
//!   [`L1::get_batch`] prefetches both across a group of names.
//! - Per-slot metadata (hash, when the packet goes stale) is a parallel array, off the hit path:
//!   a packet's length and name are read from its own TLV headers. The replacement order is a
//!   [`Policy`] over slot numbers.
//! - An optional ordered index (name bytes → slot) answers CanBePrefix Interests; it costs one
//!   B-tree insert per Data and is off the exact-match path.
//!
//! # Matching (NDN packet format v0.3, as NFD's content store does it)
//! - exact: the Data name equals the Interest name;
//! - CanBePrefix: the Interest name is a prefix of the Data name (the first match in name-byte
//!   order is returned; NFD returns the first in canonical order — both are valid answers);
//! - MustBeFresh: the Data arrived less than its FreshnessPeriod ago (no FreshnessPeriod = never
//!   fresh); time is the caller's monotonic milliseconds, the store reads no clock;
//! - implicit digest: an Interest name ending in ImplicitSha256DigestComponent matches only the
//!   packet whose SHA-256 is that digest (computed at lookup, not stored).
//!
//! A Data packet whose name is already stored replaces the old packet in its slot.

use std::collections::BTreeMap;

use nexthop_lookup::mem::{advise_huge_pages, prefetch};
use nexthop_wire::tlv::Tlv;
use nexthop_wire::DataView;

use crate::error::InsertError;
use crate::index::NameIndex;
use crate::key::name_hash;
use crate::policy::{Arrival, Policy, Replacement};
use crate::request::Request;

/// How an L1 is sized and run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L1Config {
    /// Chunks it holds.
    pub capacity: u32,
    /// Bytes per slot: the largest Data packet it stores.
    pub slot_bytes: u32,
    /// Replacement policy.
    pub policy: Policy,
    /// Keep the ordered index that CanBePrefix lookups need.
    pub prefix_index: bool,
}

impl L1Config {
    /// An L1 of `bytes` bytes of `slot_bytes`-byte slots, FIFO, with the prefix index.
    pub fn with_bytes(bytes: u64, slot_bytes: u32) -> Self {
        let capacity = (bytes / u64::from(slot_bytes.max(1))).clamp(1, u64::from(u32::MAX - 1)) as u32;
        L1Config { capacity, slot_bytes, policy: Policy::Fifo, prefix_index: true }
    }
}

/// What the L1 counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct L1Stats {
    /// Lookups answered.
    pub hits: u64,
    /// Lookups not answered.
    pub misses: u64,
    /// Packets stored (new or replacing).
    pub inserts: u64,
    /// Packets evicted to make room.
    pub evictions: u64,
    /// Packets refused (malformed or too large).
    pub refused: u64,
}

/// Per-slot metadata (the packet's length and name are read from the packet itself).
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    hash: u64,
    fresh_until_ms: u64,
    used: bool,
    /// Stored unsolicited and not asked for since (priority FIFO evicts such packets first).
    unsolicited: bool,
}

/// The DRAM content store.
#[derive(Debug)]
pub struct L1 {
    cfg: L1Config,
    arena: Vec<u8>,
    slots: Vec<Slot>,
    index: NameIndex,
    by_name: Option<BTreeMap<Box<[u8]>, u32>>,
    order: Replacement,
    free: Vec<u32>,
    len: u32,
    /// Packets it may hold: the slots allocated, or fewer after [`L1::set_limit`].
    limit: u32,
    /// The latest time a caller gave (ms): when packets go stale for priority FIFO.
    now_ms: u64,
    stats: L1Stats,
}

/// The wire and the name (TLV-VALUE) of the packet in `slot` of `arena` (empty if none is).
fn packet_in(arena: &[u8], slot_bytes: u32, slot: u32) -> (&[u8], &[u8]) {
    let start = slot as usize * slot_bytes as usize;
    let bytes = &arena[start..start + slot_bytes as usize];
    match Tlv::read(bytes) {
        Ok(data) => (data.wire, Tlv::read(data.value).map_or(&[][..], |name| name.value)),
        Err(_) => (&[], &[]),
    }
}

/// Names per group in [`L1::get_batch`].
pub const BATCH: usize = 16;

impl L1 {
    /// An empty L1; the arena is allocated (and zeroed lazily by the OS) here, once.
    pub fn new(cfg: L1Config) -> Self {
        let capacity = cfg.capacity.max(1);
        let cfg = L1Config { capacity, ..cfg };
        // Untouched zeroed pages: advised before the first write so they are huge from the start.
        let arena = vec![0; capacity as usize * cfg.slot_bytes as usize];
        advise_huge_pages(&arena);
        L1 {
            cfg,
            arena,
            slots: vec![Slot::default(); capacity as usize],
            index: NameIndex::new(capacity),
            by_name: cfg.prefix_index.then(BTreeMap::new),
            order: Replacement::new(cfg.policy, capacity),
            free: (0..capacity).rev().collect(),
            len: 0,
            limit: capacity,
            now_ms: 0,
            stats: L1Stats::default(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &L1Config {
        &self.cfg
    }

    /// Packets stored.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What it counted.
    pub fn stats(&self) -> L1Stats {
        self.stats
    }

    /// Packets it may hold ([`L1::set_limit`]; at first every slot allocated).
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Holds at most `limit` packets from now on (at most the slots allocated, which do not
    /// change; 0 stores nothing), evicting by the policy down to it; returns the limit taken.
    /// This is NFD's `cs/config` Capacity.
    pub fn set_limit(&mut self, limit: u32) -> u32 {
        self.limit = limit.min(self.cfg.capacity);
        while self.len > self.limit {
            let slot = self.evict();
            self.free.push(slot);
        }
        self.limit
    }

    /// Removes up to `max` packets whose names start with `prefix` (a name's TLV-VALUE: whole
    /// components) and returns how many it removed and whether more remain. With the prefix
    /// index this reads only the matching names; without it, every slot.
    pub fn erase_prefix(&mut self, prefix: &[u8], max: usize) -> (usize, bool) {
        let mut matching: Vec<u32> = match &self.by_name {
            Some(by_name) => by_name
                .range::<[u8], _>((std::ops::Bound::Included(prefix), std::ops::Bound::Unbounded))
                .take_while(|(name, _)| name.starts_with(prefix))
                .take(max.saturating_add(1))
                .map(|(_, &slot)| slot)
                .collect(),
            None => (0..self.cfg.capacity)
                .filter(|&s| self.slots[s as usize].used && self.name_of(s).starts_with(prefix))
                .take(max.saturating_add(1))
                .collect(),
        };
        let more = matching.len() > max;
        matching.truncate(max);
        for &slot in &matching {
            self.order.forget(slot);
            self.unindex(slot);
            self.free.push(slot);
        }
        (matching.len(), more)
    }

    /// The stored packet and its name's TLV-VALUE, read from the slot itself (the Data and
    /// Name TLV headers), so an exact-name hit touches the index and the packet and nothing
    /// else. A slot holds a packet that decoded when it was stored, so the headers parse.
    fn packet(&self, slot: u32) -> (&[u8], &[u8]) {
        packet_in(&self.arena, self.cfg.slot_bytes, slot)
    }

    fn wire(&self, slot: u32) -> &[u8] {
        self.packet(slot).0
    }

    fn name_of(&self, slot: u32) -> &[u8] {
        self.packet(slot).1
    }

    /// The slot holding exactly `name` (TLV-VALUE) whose hash is `hash`.
    fn find(&self, name: &[u8], hash: u64) -> Option<u32> {
        self.index.find(hash, |slot| self.name_of(slot) == name)
    }

    /// Stores a Data packet (its wire encoding) that arrived at `now_ms`.
    ///
    /// # Errors
    /// [`InsertError::Malformed`] when `wire` is not one valid Data packet, [`InsertError::TooLarge`]
    /// when it exceeds a slot; nothing changes then.
    pub fn insert(&mut self, wire: &[u8], now_ms: u64) -> Result<(), InsertError> {
        match DataView::decode(wire) {
            Ok(data) => self.insert_view(&data, now_ms),
            Err(e) => {
                self.stats.refused += 1;
                Err(e.into())
            }
        }
    }

    /// Stores an already decoded Data packet that arrived at `now_ms`, asked for.
    ///
    /// # Errors
    /// [`InsertError::TooLarge`] when it exceeds a slot; nothing changes then.
    pub fn insert_view(&mut self, data: &DataView<'_>, now_ms: u64) -> Result<(), InsertError> {
        self.insert_arrived(data, now_ms, Arrival::Solicited)
    }

    /// Stores an already decoded Data packet that arrived at `now_ms` as `arrival` (which
    /// [`Policy::PriorityFifo`] evicts by).
    ///
    /// # Errors
    /// [`InsertError::TooLarge`] when it exceeds a slot; nothing changes then.
    pub fn insert_arrived(&mut self, data: &DataView<'_>, now_ms: u64, arrival: Arrival) -> Result<(), InsertError> {
        self.now_ms = self.now_ms.max(now_ms);
        self.store(data, now_ms.saturating_add(data.freshness_period_ms()), arrival)
    }

    /// Stores a decoded Data packet that stays fresh until `fresh_until_ms` (a packet coming back
    /// from the L2 keeps the freshness it had when it first arrived).
    ///
    /// # Errors
    /// [`InsertError::TooLarge`] when it exceeds a slot; nothing changes then.
    pub fn insert_until(&mut self, data: &DataView<'_>, fresh_until_ms: u64) -> Result<(), InsertError> {
        self.store(data, fresh_until_ms, Arrival::Solicited)
    }

    fn store(&mut self, data: &DataView<'_>, fresh_until_ms: u64, mut arrival: Arrival) -> Result<(), InsertError> {
        let wire = data.wire();
        if wire.len() > self.cfg.slot_bytes as usize {
            self.stats.refused += 1;
            return Err(InsertError::TooLarge { len: wire.len(), max: self.cfg.slot_bytes as usize });
        }
        if self.limit == 0 {
            return Ok(()); // Configured to hold nothing.
        }
        let name = data.name().value();
        let hash = name_hash(name);
        let slot = match self.find(name, hash) {
            Some(slot) => {
                // As NFD's content store: a copy that was asked for clears the mark of an
                // unsolicited one, and an unsolicited copy does not mark one that was asked for.
                if !self.slots[slot as usize].unsolicited {
                    arrival = Arrival::Solicited;
                }
                self.order.forget(slot);
                slot
            }
            None => {
                let slot = self.take_slot();
                self.index.insert(hash, slot);
                if let Some(by_name) = &mut self.by_name {
                    by_name.insert(name.into(), slot);
                }
                self.len += 1;
                slot
            }
        };
        let start = slot as usize * self.cfg.slot_bytes as usize;
        self.arena[start..start + wire.len()].copy_from_slice(wire);
        self.slots[slot as usize] = Slot { hash, fresh_until_ms, used: true, unsolicited: arrival == Arrival::Unsolicited };
        self.order.admit(slot, hash, arrival, fresh_until_ms, self.now_ms);
        self.stats.inserts += 1;
        Ok(())
    }

    /// A free slot, evicting the policy's victim when the store holds its limit (callers
    /// check that the limit is not 0).
    fn take_slot(&mut self) -> u32 {
        if self.len < self.limit {
            if let Some(slot) = self.free.pop() {
                return slot;
            }
        }
        self.evict()
    }

    /// Evicts the policy's victim (the store holds at least one packet) and returns its slot,
    /// now unused and not on the free list.
    fn evict(&mut self) -> u32 {
        let slots = &self.slots;
        let victim = self.order.victim(|s| slots[s as usize].hash, self.now_ms).expect("a store holding packets has a victim");
        self.stats.evictions += 1;
        self.unindex(victim);
        victim
    }

    /// Takes `slot` out of both indexes (the policy has already let it go).
    fn unindex(&mut self, slot: u32) {
        let hash = self.slots[slot as usize].hash;
        let slots = &self.slots;
        self.index.remove(hash, slot, |s| slots[s as usize].hash);
        if let Some(by_name) = &mut self.by_name {
            // The name where the packet lies, not a copy: the index and the arena are apart.
            by_name.remove(packet_in(&self.arena, self.cfg.slot_bytes, slot).1);
        }
        self.slots[slot as usize].used = false;
        self.len -= 1;
    }

    /// Removes the packet named exactly `name` (TLV-VALUE); whether there was one.
    pub fn remove(&mut self, name: &[u8]) -> bool {
        let Some(slot) = self.find(name, name_hash(name)) else { return false };
        self.order.forget(slot);
        self.unindex(slot);
        self.free.push(slot);
        true
    }

    /// Whether a packet named exactly `name` is stored.
    pub fn contains(&self, name: &[u8]) -> bool {
        self.find(name, name_hash(name)).is_some()
    }

    /// The packet named exactly `name` (TLV-VALUE), fresh or not: the fast path for chunk
    /// requests. Counts a hit or miss.
    pub fn get(&mut self, name: &[u8]) -> Option<&[u8]> {
        let found = self.find(name, name_hash(name));
        self.served(found).map(|slot| self.wire(slot))
    }

    /// [`L1::get`] for many names at once: `out` gets one answer per name, in order.
    ///
    /// Names go through in groups of [`BATCH`] in three passes: hash every name and prefetch its
    /// index line; probe the index and prefetch the candidate packet's first line; verify the
    /// names and tell the policy. The cache misses of a group overlap instead of following one
    /// another.
    pub fn get_batch<'s>(&'s mut self, names: &[&[u8]], out: &mut Vec<Option<&'s [u8]>>) {
        // Where each answer lies in the arena, noted while its line is in cache, so building
        // the answers at the end reads no packet memory again.
        let mut found: Vec<Option<(usize, usize)>> = Vec::with_capacity(names.len());
        for group in names.chunks(BATCH) {
            let mut hashes = [0u64; BATCH];
            for (i, name) in group.iter().enumerate() {
                hashes[i] = name_hash(name);
                self.index.prefetch(hashes[i]);
            }
            let mut cand = [None; BATCH];
            for i in 0..group.len() {
                cand[i] = self.index.find(hashes[i], |_| true);
                if let Some(slot) = cand[i] {
                    prefetch(&self.arena[slot as usize * self.cfg.slot_bytes as usize]);
                }
            }
            for (i, name) in group.iter().enumerate() {
                // A tag match with other bytes (about one name in 2^32 per probe) takes the full search.
                let slot = cand[i].filter(|&s| self.name_of(s) == *name).or_else(|| cand[i].and_then(|_| self.find(name, hashes[i])));
                let slot = self.served(slot);
                found.push(slot.map(|s| (s as usize * self.cfg.slot_bytes as usize, self.wire(s).len())));
            }
        }
        let arena = &self.arena;
        out.extend(found.into_iter().map(|at| at.map(|(start, len)| &arena[start..start + len])));
    }

    /// The packet that answers `req` at `now_ms` under NDN matching rules. Counts a hit or miss.
    pub fn lookup(&mut self, req: &Request<'_>, now_ms: u64) -> Option<&[u8]> {
        self.lookup_slot(req, now_ms).map(|slot| self.wire(slot))
    }

    /// [`L1::lookup`], answering with the slot ([`L1::slot_wire`] gives the packet).
    pub(crate) fn lookup_slot(&mut self, req: &Request<'_>, now_ms: u64) -> Option<u32> {
        self.now_ms = self.now_ms.max(now_ms);
        let found = self.matching_slot(req, now_ms);
        self.served(found)
    }

    /// The packet in `slot`.
    pub(crate) fn slot_wire(&self, slot: u32) -> &[u8] {
        self.wire(slot)
    }

    /// Counts a hit (telling the policy) or a miss.
    fn served(&mut self, found: Option<u32>) -> Option<u32> {
        match found {
            Some(slot) => {
                self.stats.hits += 1;
                self.order.hit(slot);
            }
            None => self.stats.misses += 1,
        }
        found
    }

    fn fresh_enough(&self, slot: u32, req: &Request<'_>, now_ms: u64) -> bool {
        !req.must_be_fresh || now_ms < self.slots[slot as usize].fresh_until_ms
    }

    fn matching_slot(&self, req: &Request<'_>, now_ms: u64) -> Option<u32> {
        let exact = self.find(req.name, name_hash(req.name)).filter(|&s| self.fresh_enough(s, req, now_ms));
        if let Some(digest) = req.digest {
            return exact.filter(|&s| DataView::decode(self.wire(s)).is_ok_and(|d| d.implicit_digest() == digest));
        }
        if exact.is_some() || !req.can_be_prefix {
            return exact;
        }
        let by_name = self.by_name.as_ref()?;
        by_name
            .range::<[u8], _>((std::ops::Bound::Included(req.name), std::ops::Bound::Unbounded))
            .take_while(|(name, _)| name.starts_with(req.name))
            .map(|(_, &slot)| slot)
            .find(|&s| self.fresh_enough(s, req, now_ms))
    }

    /// Every stored packet's slot is consistent with both indexes (for tests).
    #[cfg(test)]
    fn check(&self) {
        let used = self.slots.iter().filter(|s| s.used).count();
        assert_eq!(used, self.len as usize);
        assert_eq!(self.index.len(), used);
        for (i, s) in self.slots.iter().enumerate().filter(|(_, s)| s.used) {
            assert_eq!(self.find(self.name_of(i as u32), s.hash), Some(i as u32));
        }
        if let Some(by_name) = &self.by_name {
            assert_eq!(by_name.len(), used);
        }
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{Component, Data, Emit, Interest, InterestView, MetaInfo, Name};
    use proptest::prelude::*;

    use super::*;

    fn data(uri: &str, freshness_ms: Option<u64>) -> Vec<u8> {
        let mut d = Data::new(Name::from_uri(uri).unwrap(), vec![1u8; 20]);
        if let Some(f) = freshness_ms {
            d.meta_info = Some(MetaInfo { freshness_period_ms: Some(f), ..MetaInfo::default() });
        }
        d.sign_digest_sha256();
        d.to_bytes()
    }

    fn interest(uri: &str, prefix: bool, fresh: bool) -> Vec<u8> {
        let mut i = Interest::new(Name::from_uri(uri).unwrap());
        i.can_be_prefix = prefix;
        i.must_be_fresh = fresh;
        i.to_bytes()
    }

    fn ask(l1: &mut L1, wire: &[u8], now: u64) -> Option<Vec<u8>> {
        let view = InterestView::decode(wire).unwrap();
        l1.lookup(&Request::from_interest(&view), now).map(<[u8]>::to_vec)
    }

    fn config(capacity: u32, policy: Policy) -> L1Config {
        L1Config { capacity, slot_bytes: 512, policy, prefix_index: true }
    }

    #[test]
    fn ndn_matching() {
        let mut l1 = L1::new(config(8, Policy::Fifo));
        let ab = data("/a/b", Some(1000));
        let abc = data("/a/b/c", None);
        l1.insert(&ab, 0).unwrap();
        l1.insert(&abc, 0).unwrap();
        assert_eq!(ask(&mut l1, &interest("/a/b", false, false), 0), Some(ab.clone()));
        assert_eq!(ask(&mut l1, &interest("/a", false, false), 0), None, "exact match only");
        assert!(ask(&mut l1, &interest("/a", true, false), 0).is_some(), "CanBePrefix");
        assert_eq!(ask(&mut l1, &interest("/a/b/c", true, true), 0), None, "no FreshnessPeriod: never fresh");
        assert_eq!(ask(&mut l1, &interest("/a/b", false, true), 999), Some(ab.clone()));
        assert_eq!(ask(&mut l1, &interest("/a/b", false, true), 1000), None, "stale");
        assert_eq!(ask(&mut l1, &interest("/a/bc", true, false), 0), None, "component boundary");
        let digest = DataView::decode(&abc).unwrap().implicit_digest();
        let by_digest = Name::from_uri("/a/b/c").unwrap().with(Component::implicit_sha256(digest));
        let mut i = Interest::new(by_digest.clone());
        assert_eq!(ask(&mut l1, &i.to_bytes(), 0), Some(abc.clone()));
        i.name = Name::from_uri("/a/b/c").unwrap().with(Component::implicit_sha256([0; 32]));
        assert_eq!(ask(&mut l1, &i.to_bytes(), 0), None, "wrong digest");
        assert_eq!(l1.stats().hits, 4);
        l1.check();
    }

    #[test]
    fn bad_input_changes_nothing() {
        let mut l1 = L1::new(L1Config { capacity: 2, slot_bytes: 96, policy: Policy::Lru, prefix_index: true });
        l1.insert(&data("/x", None), 0).unwrap();
        assert!(matches!(l1.insert(&[6, 1, 0], 0), Err(InsertError::Malformed(_))));
        let mut d = Data::new(Name::from_uri("/y").unwrap(), vec![0u8; 100]);
        d.sign_digest_sha256();
        assert!(matches!(l1.insert(&d.to_bytes(), 0), Err(InsertError::TooLarge { .. })));
        assert_eq!(l1.len(), 1);
        assert_eq!(l1.stats().refused, 2);
        assert!(l1.get(Name::from_uri("/x").unwrap().value()).is_some());
        l1.check();
    }

    #[test]
    fn batch_answers_like_single() {
        let mut l1 = L1::new(config(40, Policy::Lru));
        for k in 0..30 {
            l1.insert(&data(&format!("/b/{k}"), None), 0).unwrap();
        }
        let names: Vec<Vec<u8>> = (0..50).map(|k| Name::from_uri(&format!("/b/{k}")).unwrap().value().to_vec()).collect();
        let refs: Vec<&[u8]> = names.iter().map(Vec::as_slice).collect();
        let single: Vec<Option<Vec<u8>>> = refs.iter().map(|n| l1.get(n).map(<[u8]>::to_vec)).collect();
        let mut out = Vec::new();
        l1.get_batch(&refs, &mut out);
        let batch: Vec<Option<Vec<u8>>> = out.into_iter().map(|w| w.map(<[u8]>::to_vec)).collect();
        assert_eq!(batch, single);
        assert_eq!(batch.iter().filter(|w| w.is_some()).count(), 30);
        assert_eq!(l1.stats().hits, 60);
    }

    /// NFD's priority FIFO in the store: an unsolicited packet goes before an older fresh one,
    /// a packet whose freshness ran out before one still fresh; a packet refreshed by a new copy
    /// is fresh again.
    #[test]
    fn priority_fifo_evicts_unsolicited_then_stale_then_fresh() {
        let mut l1 = L1::new(config(2, Policy::PriorityFifo));
        let has = |l1: &L1, n: &str| l1.contains(Name::from_uri(n).unwrap().value());
        let insert = |l1: &mut L1, n: &str, fresh_ms: u64, now: u64, arrival: Arrival| {
            let wire = data(n, Some(fresh_ms));
            l1.insert_arrived(&DataView::decode(&wire).unwrap(), now, arrival).unwrap();
        };
        insert(&mut l1, "/old", 1000, 0, Arrival::Solicited);
        insert(&mut l1, "/pushed", 1000, 10, Arrival::Unsolicited);
        insert(&mut l1, "/new", 5000, 20, Arrival::Solicited);
        assert!(has(&l1, "/old") && has(&l1, "/new") && !has(&l1, "/pushed"), "the unsolicited packet went first");
        // At 2000 /old is stale and /new is not: /old goes, though it came first anyway; then
        // /new, refreshed at 2000, outlives /newer's freshness ending at 2500.
        insert(&mut l1, "/new", 5000, 2000, Arrival::Solicited);
        insert(&mut l1, "/newer", 500, 2000, Arrival::Solicited);
        assert!(!has(&l1, "/old") && has(&l1, "/new") && has(&l1, "/newer"));
        insert(&mut l1, "/last", 5000, 3000, Arrival::Solicited);
        assert!(has(&l1, "/new") && !has(&l1, "/newer") && has(&l1, "/last"), "/newer went stale first");
        // An unsolicited copy of /new leaves it asked for (it is refreshed, newest): /last goes.
        insert(&mut l1, "/new", 5000, 3100, Arrival::Unsolicited);
        insert(&mut l1, "/pushed", 5000, 3200, Arrival::Unsolicited);
        assert!(has(&l1, "/new") && !has(&l1, "/last") && has(&l1, "/pushed"));
        // A copy asked for clears the mark: the next unsolicited packet displaces the other.
        insert(&mut l1, "/pushed", 5000, 3300, Arrival::Solicited);
        insert(&mut l1, "/pushed2", 5000, 3400, Arrival::Unsolicited);
        assert!(!has(&l1, "/new") && has(&l1, "/pushed") && has(&l1, "/pushed2"));
        l1.check();
    }

    #[test]
    fn replacing_keeps_one_copy() {
        let mut l1 = L1::new(config(4, Policy::S3Fifo));
        l1.insert(&data("/r", Some(10)), 0).unwrap();
        l1.insert(&data("/r", Some(10)), 100).unwrap();
        assert_eq!(l1.len(), 1);
        assert!(ask(&mut l1, &interest("/r", false, true), 105).is_some(), "freshness restarts");
        assert!(l1.remove(Name::from_uri("/r").unwrap().value()));
        assert!(l1.is_empty());
        l1.check();
    }

    #[test]
    fn a_lower_limit_evicts_and_zero_holds_nothing() {
        let mut l1 = L1::new(config(8, Policy::Fifo));
        for k in 0..8 {
            l1.insert(&data(&format!("/l/{k}"), None), 0).unwrap();
        }
        assert_eq!(l1.set_limit(3), 3);
        assert_eq!(l1.len(), 3);
        assert!(l1.contains(Name::from_uri("/l/7").unwrap().value()), "FIFO keeps the newest");
        assert!(!l1.contains(Name::from_uri("/l/4").unwrap().value()));
        l1.insert(&data("/l/8", None), 0).unwrap();
        assert_eq!(l1.len(), 3, "stays at the limit");
        assert_eq!(l1.set_limit(100), 8, "no more than the slots allocated");
        assert_eq!(l1.set_limit(0), 0);
        assert!(l1.is_empty());
        l1.insert(&data("/l/9", None), 0).unwrap();
        assert!(l1.is_empty(), "a limit of 0 stores nothing");
        l1.check();
    }

    #[test]
    fn erase_takes_whole_components_and_stops_at_its_count() {
        for prefix_index in [true, false] {
            let mut l1 = L1::new(L1Config { prefix_index, ..config(16, Policy::Lru) });
            for uri in ["/e/a/1", "/e/a/2", "/e/a/3", "/e/ab/1", "/e", "/f/a"] {
                l1.insert(&data(uri, None), 0).unwrap();
            }
            let a = Name::from_uri("/e/a").unwrap();
            assert_eq!(l1.erase_prefix(a.value(), 2), (2, true), "index {prefix_index}");
            assert_eq!(l1.erase_prefix(a.value(), 2), (1, false));
            assert!(l1.contains(Name::from_uri("/e/ab/1").unwrap().value()), "/e/ab is not under /e/a");
            assert_eq!(l1.erase_prefix(Name::from_uri("/e").unwrap().value(), usize::MAX), (2, false));
            assert_eq!(l1.len(), 1);
            assert!(l1.contains(Name::from_uri("/f/a").unwrap().value()));
            l1.insert(&data("/e/a/1", None), 0).unwrap();
            assert_eq!(l1.len(), 2, "an erased name can be stored again");
            assert_eq!(l1.erase_prefix(&[], usize::MAX), (2, false), "the empty prefix erases all");
            l1.check();
        }
    }

    /// The oracle: a map from name to packet plus the policy's order kept in a plain Vec.
    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8),
        Get(u8),
        Remove(u8),
        /// `cs/config` Capacity.
        Limit(u32),
        /// `cs/erase` of one group's names (`/k/<group>`), at most this many.
        Erase(u8, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u8..24).prop_map(Op::Insert),
            4 => (0u8..24).prop_map(Op::Get),
            2 => (0u8..24).prop_map(Op::Remove),
            1 => (0u32..10).prop_map(Op::Limit),
            1 => (0u8..3, 0usize..6).prop_map(|(g, n)| Op::Erase(g, n)),
        ]
    }

    /// Key k's name: three groups of eight.
    fn key_name(k: u8) -> Name {
        Name::from_uri(&format!("/k/{}/{k}", k / 8)).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// FIFO and LRU against a Vec that keeps the order; S3-FIFO against "never more than
        /// the limit, every stored packet findable, indexes consistent"; with and without the
        /// prefix index (which erase uses when there is one).
        #[test]
        fn policies_match_a_plain_model(ops in proptest::collection::vec(op(), 1..200), cap in 1u32..8, prefix_index: bool) {
            for policy in Policy::ALL {
                let mut l1 = L1::new(L1Config { prefix_index, ..config(cap, policy) });
                let mut model: Vec<u8> = Vec::new(); // oldest first
                let mut limit = cap as usize;
                for op in &ops {
                    match *op {
                        Op::Insert(k) => {
                            l1.insert(&data(&key_name(k).to_string(), None), 0).unwrap();
                            if let Some(i) = model.iter().position(|&m| m == k) { model.remove(i); }
                            else if model.len() == limit && policy != Policy::S3Fifo && limit > 0 { model.remove(0); }
                            if limit > 0 { model.push(k); }
                        }
                        Op::Get(k) => {
                            let got = l1.get(key_name(k).value()).is_some();
                            if policy == Policy::S3Fifo {
                                if got { prop_assert!(model.contains(&k)); }
                            } else {
                                prop_assert_eq!(got, model.contains(&k), "{:?} {}", policy, k);
                                if got && policy == Policy::Lru {
                                    let i = model.iter().position(|&m| m == k).unwrap();
                                    model.remove(i);
                                    model.push(k);
                                }
                            }
                        }
                        Op::Remove(k) => {
                            let removed = l1.remove(key_name(k).value());
                            let i = model.iter().position(|&m| m == k);
                            if policy != Policy::S3Fifo { prop_assert_eq!(removed, i.is_some()); }
                            if let Some(i) = i { model.remove(i); }
                        }
                        Op::Limit(n) => {
                            limit = l1.set_limit(n) as usize;
                            prop_assert_eq!(limit, n.min(cap) as usize);
                            if policy != Policy::S3Fifo {
                                while model.len() > limit { model.remove(0); }
                            }
                        }
                        Op::Erase(g, max) => {
                            let group = Name::from_uri(&format!("/k/{g}")).unwrap();
                            let (erased, more) = l1.erase_prefix(group.value(), max);
                            let stored: Vec<u8> = model.iter().copied().filter(|&k| l1.contains(key_name(k).value())).collect();
                            if policy != Policy::S3Fifo {
                                let matching = model.iter().filter(|&&k| k / 8 == g).count();
                                prop_assert_eq!(erased, matching.min(max));
                                prop_assert_eq!(more, matching > max);
                                prop_assert_eq!(stored.len(), model.len() - erased);
                            }
                            model = stored;
                        }
                    }
                    if policy == Policy::S3Fifo {
                        model.retain(|&k| l1.contains(key_name(k).value()));
                        prop_assert_eq!(model.len(), l1.len());
                    }
                    prop_assert!(l1.len() <= limit);
                    l1.check();
                }
            }
        }
    }
}
