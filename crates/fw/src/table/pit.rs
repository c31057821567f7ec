//! The Pending Interest Table of one forwarding shard.
//!
//! Overview: an entry per distinct (name, CanBePrefix, MustBeFresh) with the downstream faces
//! that asked ([`InRecord`]: nonce, expiry, their PIT token) and the upstream faces it was sent
//! to ([`OutRecord`]: nonce, time, Nack). Entries live in a slab of slots with generations (the
//! generation goes into the PIT token, so a stale token never finds a reused slot); a
//! `hashbrown::HashTable` of slot numbers keyed by a hash of the name and selectors finds them
//! by name; a calendar of expiry buckets ([`EXPIRY_BUCKET_MS`] wide, each a list of slots)
//! expires them — an entry lapses at the end of its bucket, at most that late, and an entry
//! satisfied before then costs one stale list item instead of a heap sift.
//!
//! The table holds at most `max_entries` entries: an Interest that would need one more is
//! refused ([`PitFull`]) and counted by the caller, so an Interest flood costs bounded memory —
//! each entry holds at most one packet of at most 8800 bytes.
//!
//! Data matches entries either through its PIT token (one slot, checked) or by name: the exact
//! name, every prefix of it for CanBePrefix entries, and the name plus implicit digest for
//! entries that asked by digest. Probes for the last two kinds are skipped while the table
//! holds none of them.

use std::collections::BTreeMap;
use std::hash::BuildHasher;

use hashbrown::HashTable;
use nexthop_wire::{NackReason, NameView};

use crate::face::FaceId;
use crate::table::pit_token::TokenBuf;
use crate::table::strategy_choice::StrategyId;

/// A downstream that asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InRecord {
    /// The face.
    pub face: FaceId,
    /// Nonce of its last Interest.
    pub nonce: [u8; 4],
    /// When its Interest expires.
    pub expires_ms: u64,
    /// The PIT token it sent, echoed on the answer.
    pub token: Option<TokenBuf>,
    /// Its Interest carried NonDiscovery (self-learning: it followed a known route).
    pub non_discovery: bool,
}

/// An upstream the Interest went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutRecord {
    /// The face.
    pub face: FaceId,
    /// Nonce sent.
    pub nonce: [u8; 4],
    /// When.
    pub sent_ms: u64,
    /// The Nack it answered with, if it did.
    pub nack: Option<NackReason>,
    /// It went with NonDiscovery (self-learning: along a known route, not broadcast).
    pub non_discovery: bool,
    /// Its retransmission suppression interval (ms; 0: not yet widened), for strategies that
    /// suppress per upstream ([`crate::pipeline::strategy::retx_suppression::RetxSuppression::PerUpstream`]).
    pub retx_interval_ms: u64,
}

/// A pending Interest.
#[derive(Debug, Clone)]
pub struct Entry {
    hash: u64,
    /// Name TLV-VALUE (with the implicit digest component when the Interest had one).
    pub name: Vec<u8>,
    /// CanBePrefix.
    pub can_be_prefix: bool,
    /// MustBeFresh.
    pub must_be_fresh: bool,
    /// Whether the name ends in an implicit digest.
    pub has_digest: bool,
    /// The last Interest received, bare (what a retry or a Nack carries).
    pub interest: Vec<u8>,
    /// Downstreams.
    pub in_records: Vec<InRecord>,
    /// Upstreams.
    pub out_records: Vec<OutRecord>,
    /// When the entry expires (the latest in-record expiry).
    pub expires_ms: u64,
    /// The strategy that forwards it.
    pub strategy: StrategyId,
    /// Its retransmission suppression interval (ms; 0: not yet widened), for strategies that
    /// suppress per entry ([`crate::pipeline::strategy::retx_suppression::RetxSuppression::PerEntry`]).
    pub retx_interval_ms: u64,
}

impl Entry {
    /// The in-record of `face`.
    pub fn in_record_mut(&mut self, face: FaceId) -> Option<&mut InRecord> {
        self.in_records.iter_mut().find(|r| r.face == face)
    }

    /// The out-record of `face`.
    pub fn out_record_mut(&mut self, face: FaceId) -> Option<&mut OutRecord> {
        self.out_records.iter_mut().find(|r| r.face == face)
    }

    /// True when a Data named `data_name` (TLV-VALUE) with implicit digest `digest()` satisfies
    /// this entry.
    pub fn matches(&self, data_name: &[u8], digest: impl FnOnce() -> [u8; 32]) -> bool {
        if self.has_digest {
            let Some((name, d)) = split_digest(&self.name) else { return false };
            return name == data_name && d == digest();
        }
        if self.can_be_prefix {
            data_name.starts_with(&self.name)
        } else {
            *self.name == *data_name
        }
    }
}

/// The PIT is at its bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the PIT holds its maximum of {0} entries")]
pub struct PitFull(pub usize);

#[derive(Debug, Clone)]
struct Slot {
    generation: u32,
    entry: Option<Entry>,
}

/// One shard's PIT.
#[derive(Debug)]
pub struct Pit {
    slots: Vec<Slot>,
    free: Vec<u32>,
    index: HashTable<u32>,
    /// Bucket end (ms) → (slot, generation) of entries due by then.
    expiry: BTreeMap<u64, Vec<(u32, u32)>>,
    /// The bucket being expired (items left from the last call).
    draining: Vec<(u32, u32)>,
    /// Emptied bucket lists, reused.
    spare: Vec<Vec<(u32, u32)>>,
    /// Entries done with ([`Pit::recycle`]), whose name, Interest and record vectors a new
    /// entry takes instead of allocating its own.
    recycled: Vec<Entry>,
    max_entries: usize,
    len: usize,
    prefix_entries: usize,
    digest_entries: usize,
    hasher: foldhash::fast::FixedState,
}

/// The most entries [`Pit::recycle`] keeps for reuse.
pub const MAX_RECYCLED: usize = 1024;

/// Width of an expiry bucket: how late an entry may lapse.
pub const EXPIRY_BUCKET_MS: u64 = 8;

const CBP_KEY: u64 = 0x9e37_79b9_7f4a_7c15;
const MBF_KEY: u64 = 0xc2b2_ae3d_27d4_eb4f;

impl Pit {
    /// An empty PIT holding at most `max_entries`.
    pub fn new(max_entries: usize) -> Self {
        Pit {
            slots: Vec::new(),
            free: Vec::new(),
            index: HashTable::new(),
            expiry: BTreeMap::new(),
            draining: Vec::new(),
            spare: Vec::new(),
            recycled: Vec::new(),
            max_entries,
            len: 0,
            prefix_entries: 0,
            digest_entries: 0,
            hasher: foldhash::fast::FixedState::with_seed(0x6e65_7874_686f_7021),
        }
    }

    /// Entries now.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bound.
    pub fn max_entries(&self) -> usize {
        self.max_entries
    }

    fn key_hash(&self, name: &[u8], can_be_prefix: bool, must_be_fresh: bool) -> u64 {
        self.hasher.hash_one(name) ^ (u64::from(can_be_prefix) * CBP_KEY) ^ (u64::from(must_be_fresh) * MBF_KEY)
    }

    /// The slot of the entry for exactly this name and selectors.
    pub fn find(&self, name: &[u8], can_be_prefix: bool, must_be_fresh: bool) -> Option<u32> {
        let hash = self.key_hash(name, can_be_prefix, must_be_fresh);
        self.find_hashed(hash, name, can_be_prefix, must_be_fresh)
    }

    fn find_hashed(&self, hash: u64, name: &[u8], can_be_prefix: bool, must_be_fresh: bool) -> Option<u32> {
        self.index
            .find(hash, |&s| {
                let e = self.slots[s as usize].entry.as_ref().expect("indexed slots hold entries");
                e.hash == hash && e.can_be_prefix == can_be_prefix && e.must_be_fresh == must_be_fresh && *e.name == *name
            })
            .copied()
    }

    /// Makes an entry (the caller fills its records), or refuses when the PIT is full.
    ///
    /// # Errors
    /// [`PitFull`] at the bound; nothing changes then.
    pub fn insert(
        &mut self,
        name: &[u8],
        can_be_prefix: bool,
        must_be_fresh: bool,
        has_digest: bool,
        strategy: StrategyId,
    ) -> Result<u32, PitFull> {
        if self.len >= self.max_entries {
            return Err(PitFull(self.max_entries));
        }
        let hash = self.key_hash(name, can_be_prefix, must_be_fresh);
        debug_assert!(self.find_hashed(hash, name, can_be_prefix, must_be_fresh).is_none());
        let entry = match self.recycled.pop() {
            Some(mut e) => {
                e.name.clear();
                e.name.extend_from_slice(name);
                e.interest.clear();
                e.in_records.clear();
                e.out_records.clear();
                Entry { hash, can_be_prefix, must_be_fresh, has_digest, expires_ms: 0, strategy, retx_interval_ms: 0, ..e }
            }
            None => Entry {
                hash,
                name: name.to_vec(),
                can_be_prefix,
                must_be_fresh,
                has_digest,
                interest: Vec::new(),
                in_records: Vec::with_capacity(1),
                out_records: Vec::with_capacity(1),
                expires_ms: 0,
                strategy,
                retx_interval_ms: 0,
            },
        };
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Slot { generation: 0, entry: None });
                (self.slots.len() - 1) as u32
            }
        };
        self.slots[slot as usize].entry = Some(entry);
        let slots = &self.slots;
        self.index.insert_unique(hash, slot, |&s| slots[s as usize].entry.as_ref().expect("indexed").hash);
        self.len += 1;
        self.prefix_entries += usize::from(can_be_prefix);
        self.digest_entries += usize::from(has_digest);
        Ok(slot)
    }

    /// The entry in `slot`, when there is one.
    pub fn get(&self, slot: u32) -> Option<&Entry> {
        self.slots.get(slot as usize)?.entry.as_ref()
    }

    /// The entry in `slot`, mutable.
    pub fn get_mut(&mut self, slot: u32) -> Option<&mut Entry> {
        self.slots.get_mut(slot as usize)?.entry.as_mut()
    }

    /// The generation of `slot` (it changes every time the slot's entry is removed).
    pub fn generation(&self, slot: u32) -> Option<u32> {
        self.slots.get(slot as usize).map(|s| s.generation)
    }

    /// Sets when the entry in `slot` expires and schedules it.
    pub fn set_expiry(&mut self, slot: u32, expires_ms: u64) {
        let Some(s) = self.slots.get_mut(slot as usize) else { return };
        let Some(e) = s.entry.as_mut() else { return };
        let scheduled = e.expires_ms != 0;
        let generation = s.generation;
        // One item per entry: a later expiry is found when the earlier item comes due.
        let earlier = !scheduled || expires_ms < e.expires_ms;
        e.expires_ms = expires_ms;
        if earlier {
            self.schedule(expires_ms, slot, generation);
        }
    }

    fn schedule(&mut self, at_ms: u64, slot: u32, generation: u32) {
        let end = at_ms.div_ceil(EXPIRY_BUCKET_MS).saturating_mul(EXPIRY_BUCKET_MS);
        let spare = &mut self.spare;
        self.expiry.entry(end).or_insert_with(|| spare.pop().unwrap_or_default()).push((slot, generation));
    }

    /// Removes and returns the entry in `slot`.
    pub fn remove(&mut self, slot: u32) -> Option<Entry> {
        let s = self.slots.get_mut(slot as usize)?;
        let entry = s.entry.take()?;
        s.generation = s.generation.wrapping_add(1);
        self.index.find_entry(entry.hash, |&x| x == slot).expect("entry is indexed").remove();
        self.free.push(slot);
        self.len -= 1;
        self.prefix_entries -= usize::from(entry.can_be_prefix);
        self.digest_entries -= usize::from(entry.has_digest);
        Some(entry)
    }

    /// Takes back an entry [`Pit::remove`] or [`Pit::pop_expired`] gave out and the caller is
    /// done with: the next entry inserted reuses its memory (up to [`MAX_RECYCLED`] are kept).
    pub fn recycle(&mut self, entry: Entry) {
        if self.recycled.len() < MAX_RECYCLED {
            self.recycled.push(entry);
        }
    }

    /// The next entry whose expiry bucket has ended by `now_ms`, removed from the table.
    pub fn pop_expired(&mut self, now_ms: u64) -> Option<Entry> {
        loop {
            while let Some((slot, generation)) = self.draining.pop() {
                let s = &self.slots[slot as usize];
                let Some(e) = s.entry.as_ref().filter(|_| s.generation == generation) else { continue };
                if e.expires_ms > now_ms {
                    // Extended since it was scheduled: its new bucket ends after `now_ms`.
                    let later = e.expires_ms;
                    self.schedule(later, slot, generation);
                    continue;
                }
                return self.remove(slot);
            }
            let due = self.expiry.first_entry().filter(|b| *b.key() <= now_ms)?.remove();
            let drained = std::mem::replace(&mut self.draining, due);
            self.spare.push(drained);
        }
    }

    /// Appends the slots of every entry a Data named `data_name` satisfies (found by name).
    pub fn matching_data(&self, data_name: &NameView<'_>, digest: impl FnOnce() -> [u8; 32], out: &mut Vec<u32>) {
        let value = data_name.value();
        for (cbp, mbf) in [(false, false), (false, true), (true, false), (true, true)] {
            if let Some(s) = self.find(value, cbp, mbf) {
                out.push(s);
            }
        }
        if self.prefix_entries > 0 {
            for n in 0..data_name.len() {
                let prefix = data_name.prefix(n).value();
                for mbf in [false, true] {
                    if let Some(s) = self.find(prefix, true, mbf) {
                        out.push(s);
                    }
                }
            }
        }
        if self.digest_entries > 0 {
            let d = digest();
            let mut full = Vec::with_capacity(value.len() + 34);
            full.extend_from_slice(value);
            crate::lp::encode::put_tlv(&mut full, nexthop_wire::types::IMPLICIT_SHA256_DIGEST_COMPONENT, &d);
            for (cbp, mbf) in [(false, false), (false, true), (true, false), (true, true)] {
                if let Some(s) = self.find(&full, cbp, mbf) {
                    out.push(s);
                }
            }
        }
    }

    /// Slots of every entry with a record of `face`.
    pub fn slots_with_face(&self, face: FaceId) -> Vec<u32> {
        (0..self.slots.len() as u32)
            .filter(|&s| {
                self.slots[s as usize]
                    .entry
                    .as_ref()
                    .is_some_and(|e| e.in_records.iter().any(|r| r.face == face) || e.out_records.iter().any(|r| r.face == face))
            })
            .collect()
    }
}

/// Splits a name TLV-VALUE ending in an implicit digest component into (the rest, digest).
pub fn split_digest(name: &[u8]) -> Option<(&[u8], [u8; 32])> {
    // An implicit digest component is exactly 34 bytes: type 1, length 32, the digest.
    let at = name.len().checked_sub(34)?;
    let tail = &name[at..];
    if tail[0] != nexthop_wire::types::IMPLICIT_SHA256_DIGEST_COMPONENT as u8 || tail[1] != 32 {
        return None;
    }
    // The 34 bytes must be a whole component: the name up to `at` must end on a boundary.
    NameView::from_value(&name[..at]).ok()?;
    Some((&name[..at], tail[2..].try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use nexthop_wire::Name;

    use super::*;

    fn name(uri: &str) -> Name {
        Name::from_uri(uri).unwrap()
    }

    #[test]
    fn insert_find_remove() {
        let mut pit = Pit::new(2);
        let a = name("/a/b");
        let s = pit.insert(a.value(), false, false, false, StrategyId(0)).unwrap();
        assert_eq!(pit.find(a.value(), false, false), Some(s));
        assert_eq!(pit.find(a.value(), true, false), None);
        let s2 = pit.insert(a.value(), true, false, false, StrategyId(0)).unwrap();
        assert_ne!(s, s2);
        assert_eq!(pit.insert(name("/c").value(), false, false, false, StrategyId(0)), Err(PitFull(2)));
        let g = pit.generation(s).unwrap();
        assert!(pit.remove(s).is_some());
        assert_eq!(pit.generation(s), Some(g + 1));
        assert_eq!(pit.find(a.value(), false, false), None);
        assert_eq!(pit.len(), 1);
    }

    #[test]
    fn data_matches_exact_prefix_and_digest() {
        let mut pit = Pit::new(10);
        let data = name("/a/b/c");
        let exact = pit.insert(data.value(), false, true, false, StrategyId(0)).unwrap();
        let prefix = pit.insert(name("/a").value(), true, false, false, StrategyId(0)).unwrap();
        let root = pit.insert(&[], true, false, false, StrategyId(0)).unwrap();
        let _other = pit.insert(name("/a/x").value(), true, false, false, StrategyId(0)).unwrap();
        let not_prefix = pit.insert(name("/a").value(), false, false, false, StrategyId(0)).unwrap();
        let digest = [7u8; 32];
        let with_digest = data.clone().with(nexthop_wire::Component::implicit_sha256(digest));
        let by_digest = pit.insert(with_digest.value(), false, false, true, StrategyId(0)).unwrap();
        let mut out = Vec::new();
        pit.matching_data(&data.as_view(), || digest, &mut out);
        out.sort();
        let mut want = vec![exact, prefix, root, by_digest];
        want.sort();
        assert_eq!(out, want);
        assert!(!out.contains(&not_prefix));
        for s in want {
            assert!(pit.get(s).unwrap().matches(data.value(), || digest));
        }
        assert!(!pit.get(by_digest).unwrap().matches(data.value(), || [0; 32]));
    }

    #[test]
    fn expiry_in_order_and_extended() {
        let mut pit = Pit::new(10);
        let a = pit.insert(name("/a").value(), false, false, false, StrategyId(0)).unwrap();
        let b = pit.insert(name("/b").value(), false, false, false, StrategyId(0)).unwrap();
        pit.set_expiry(a, 100);
        pit.set_expiry(b, 50);
        pit.set_expiry(a, 200);
        assert!(pit.pop_expired(49).is_none());
        assert_eq!(&*pit.pop_expired(100).unwrap().name, name("/b").value());
        assert!(pit.pop_expired(150).is_none());
        assert_eq!(&*pit.pop_expired(200).unwrap().name, name("/a").value());
        assert!(pit.is_empty());
    }

    #[test]
    fn entries_lapse_in_their_bucket_never_early_and_removed_ones_never() {
        let mut pit = Pit::new(2000);
        let mut expected = std::collections::HashMap::new();
        for i in 0..1500u64 {
            let slot = pit.insert(name(&format!("/e/{i}")).value(), false, false, false, StrategyId(0)).unwrap();
            let at = (i * 7919) % 1000 + 1;
            pit.set_expiry(slot, at);
            if i % 5 == 0 {
                pit.set_expiry(slot, at + 500); // extended after scheduling
            }
            if i % 3 == 0 {
                pit.remove(slot); // satisfied before it lapses
            } else {
                expected.insert(name(&format!("/e/{i}")).value().to_vec(), if i % 5 == 0 { at + 500 } else { at });
            }
        }
        for now in (0..=1600).step_by(3) {
            while let Some(e) = pit.pop_expired(now) {
                let at = expected.remove(&*e.name).expect("popped once, and only if not removed");
                assert!(at <= now && now < at + EXPIRY_BUCKET_MS + 3, "expires {at}, popped at {now}");
            }
        }
        assert!(expected.is_empty() && pit.is_empty());
    }

    #[test]
    fn split_digest_needs_a_whole_component() {
        let n = name("/a").with(nexthop_wire::Component::implicit_sha256([1; 32]));
        assert_eq!(split_digest(n.value()), Some((name("/a").value(), [1; 32])));
        assert_eq!(split_digest(name("/a").value()), None);
    }
}
