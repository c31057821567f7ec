//! The fingerprint hash table of the paper (§3.2.1, Figure 2): one per name-component level.
//!
//! Overview: a table is an array of 64-byte, cache-line-aligned buckets. A bucket holds seven
//! 64-bit fingerprint entries and a link to a chained overflow bucket. An entry packs
//!
//! ```text
//!  bits 0..32   entry: word offset of the name-prefix entry in the arena (×4 bytes: 16 GiB)
//!  bits 32..52  fingerprint: 20 bits of the prefix hash
//!  bit  52      occupied
//!  bit  53      collided: another entry in this chain has the same fingerprint
//!  bit  54      leaf: no longer prefix needs the search to continue past this one
//!  bits 55..59  slot: which forwarding slot of the name-prefix entry belongs to this level
//! ```
//!
//! A hash picks the bucket from its high 32 bits (multiply-shift, so any bucket count works) and
//! the fingerprint from its low 20 bits. The load is kept low on purpose, about four entries per
//! seven-entry bucket as in the paper, so nearly every probe reads exactly one bucket; a full
//! bucket chains to an overflow bucket and every bucket read is counted as a probe.
//!
//! The table stores no strings and knows nothing of names: the FIB verifies candidates through
//! the closure it passes to [`FingerprintTable::find`], and rebuilds the table with recomputed
//! hashes when it grows.

use crate::mem;

/// Entries per bucket.
pub const SLOTS_PER_BUCKET: usize = 7;
/// Average entries per primary bucket at which a table grows.
const MAX_LOAD: usize = 4;

const FP_SHIFT: u32 = 32;
const FP_MASK: u64 = (1 << 20) - 1;
const OCCUPIED: u64 = 1 << 52;
const COLLIDED: u64 = 1 << 53;
const LEAF: u64 = 1 << 54;
const SLOT_SHIFT: u32 = 55;
const SLOT_MASK: u64 = 0xF;

/// One fingerprint entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FpEntry(u64);

impl FpEntry {
    /// An occupied entry for `hash` pointing at slot `slot` of the arena entry at `entry`.
    pub fn new(hash: u64, entry: u32, slot: u8, leaf: bool) -> Self {
        debug_assert!(u64::from(slot) <= SLOT_MASK);
        let mut bits = u64::from(entry) | (fingerprint(hash) << FP_SHIFT) | OCCUPIED | (u64::from(slot) << SLOT_SHIFT);
        if leaf {
            bits |= LEAF;
        }
        FpEntry(bits)
    }

    /// Word offset of the name-prefix entry.
    #[inline(always)]
    pub fn entry(self) -> u32 {
        self.0 as u32
    }

    /// The forwarding slot inside the name-prefix entry.
    #[inline(always)]
    pub fn slot(self) -> usize {
        ((self.0 >> SLOT_SHIFT) & SLOT_MASK) as usize
    }

    /// Whether the search may stop here.
    #[inline(always)]
    pub fn is_leaf(self) -> bool {
        self.0 & LEAF != 0
    }

    /// Whether another entry of the chain shares this fingerprint.
    #[inline(always)]
    pub fn is_collided(self) -> bool {
        self.0 & COLLIDED != 0
    }

    #[inline(always)]
    fn is_occupied(self) -> bool {
        self.0 & OCCUPIED != 0
    }

    #[inline(always)]
    fn fingerprint(self) -> u64 {
        (self.0 >> FP_SHIFT) & FP_MASK
    }
}

#[inline(always)]
fn fingerprint(hash: u64) -> u64 {
    hash & FP_MASK
}

/// One cache line: seven entries and the overflow link (0: none; else overflow index + 1).
#[repr(C, align(64))]
#[derive(Debug, Clone, Copy, Default)]
pub struct Bucket {
    slots: [u64; SLOTS_PER_BUCKET],
    next: u64,
}

/// Where an entry sits: bucket (primary or overflow) and slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    overflow: bool,
    bucket: usize,
    slot: usize,
}

/// One level's fingerprint table.
#[derive(Debug, Clone)]
pub struct FingerprintTable {
    buckets: Vec<Bucket>,
    overflow: Vec<Bucket>,
    free_overflow: Vec<u32>,
    len: usize,
}

impl FingerprintTable {
    /// A table sized for `items` entries at the design load.
    pub fn with_capacity(items: usize, huge_pages: bool) -> Self {
        let n = items.div_ceil(MAX_LOAD).max(1);
        let mut buckets = Vec::with_capacity(n);
        if huge_pages {
            mem::advise_huge_pages_for(&mut buckets);
        }
        buckets.resize(n, Bucket::default());
        FingerprintTable { buckets, overflow: Vec::new(), free_overflow: Vec::new(), len: 0 }
    }

    /// Entries stored.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table holds nothing (a search skips it without a memory access).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Overflow buckets currently chained.
    pub fn chained(&self) -> usize {
        self.overflow.len() - self.free_overflow.len()
    }

    /// Bytes this table allocates.
    pub fn heap_bytes(&self) -> usize {
        (self.buckets.capacity() + self.overflow.capacity()) * core::mem::size_of::<Bucket>() + self.free_overflow.capacity() * 4
    }

    /// Whether one more entry would exceed the design load (the FIB then rebuilds the table).
    pub fn needs_growth(&self) -> bool {
        self.len + 1 > self.buckets.len() * MAX_LOAD
    }

    #[inline(always)]
    fn home(&self, hash: u64) -> usize {
        (((hash >> 32) * self.buckets.len() as u64) >> 32) as usize
    }

    /// Address of the bucket a search for `hash` reads first, for prefetching.
    #[inline(always)]
    pub fn first_bucket(&self, hash: u64) -> *const Bucket {
        self.buckets.as_ptr().wrapping_add(self.home(hash))
    }

    /// The first entry in `hash`'s chain whose fingerprint matches and that `accept` takes;
    /// `probes` counts the buckets read.
    #[inline(always)]
    pub fn find(&self, hash: u64, probes: &mut u32, accept: impl FnMut(FpEntry) -> bool) -> Option<FpEntry> {
        self.walk(hash, probes, accept).map(|pos| self.get(pos))
    }

    /// Position of the first entry in `hash`'s chain that `accept` takes (control side).
    pub fn position(&self, hash: u64, accept: impl FnMut(FpEntry) -> bool) -> Option<Position> {
        self.walk(hash, &mut 0, accept)
    }

    /// Walks `hash`'s chain bucket by bucket, counting each bucket read in `probes`.
    #[inline(always)]
    fn walk(&self, hash: u64, probes: &mut u32, mut accept: impl FnMut(FpEntry) -> bool) -> Option<Position> {
        let fp = fingerprint(hash);
        let (mut overflow, mut index) = (false, self.home(hash));
        loop {
            *probes += 1;
            let bucket = self.bucket(overflow, index);
            for (slot, &bits) in bucket.slots.iter().enumerate() {
                let e = FpEntry(bits);
                if e.is_occupied() && e.fingerprint() == fp && accept(e) {
                    return Some(Position { overflow, bucket: index, slot });
                }
            }
            match bucket.next {
                0 => return None,
                next => (overflow, index) = (true, next as usize - 1),
            }
        }
    }

    /// The entry at `pos`.
    pub fn get(&self, pos: Position) -> FpEntry {
        FpEntry(self.bucket(pos.overflow, pos.bucket).slots[pos.slot])
    }

    /// Sets or clears the leaf bit of the entry at `pos`.
    pub fn set_leaf(&mut self, pos: Position, leaf: bool) {
        let bits = &mut self.bucket_mut(pos.overflow, pos.bucket).slots[pos.slot];
        if leaf {
            *bits |= LEAF;
        } else {
            *bits &= !LEAF;
        }
    }

    /// Removes the entry at `pos`. Overflow buckets stay chained (and counted) until the table is
    /// rebuilt; the collided bits of the others stay set, which only costs a comparison.
    pub fn remove(&mut self, pos: Position) {
        self.bucket_mut(pos.overflow, pos.bucket).slots[pos.slot] = 0;
        self.len -= 1;
    }

    /// Adds `e` (built for `hash`) in the first free slot of its chain, chaining a new overflow
    /// bucket if the chain is full. The caller grows the table first when [`Self::needs_growth`].
    pub fn insert(&mut self, hash: u64, mut e: FpEntry) {
        let fp = fingerprint(hash);
        let (mut overflow, mut index) = (false, self.home(hash));
        let mut free: Option<(bool, usize, usize)> = None;
        loop {
            let bucket = self.bucket_mut(overflow, index);
            for (slot, bits) in bucket.slots.iter_mut().enumerate() {
                let other = FpEntry(*bits);
                if !other.is_occupied() {
                    free.get_or_insert((overflow, index, slot));
                } else if other.fingerprint() == fp {
                    *bits |= COLLIDED;
                    e.0 |= COLLIDED;
                }
            }
            match bucket.next {
                0 => break,
                next => (overflow, index) = (true, next as usize - 1),
            }
        }
        let (o, i, s) = match free {
            Some(place) => place,
            None => {
                let new = match self.free_overflow.pop() {
                    Some(i) => i as usize,
                    None => {
                        self.overflow.push(Bucket::default());
                        self.overflow.len() - 1
                    }
                };
                self.overflow[new] = Bucket::default();
                self.bucket_mut(overflow, index).next = new as u64 + 1;
                (true, new, 0)
            }
        };
        self.bucket_mut(o, i).slots[s] = e.0;
        self.len += 1;
    }

    /// Every entry, for rebuilding.
    pub fn entries(&self) -> impl Iterator<Item = FpEntry> + '_ {
        self.buckets.iter().chain(self.overflow.iter()).flat_map(|b| b.slots.iter().map(|&s| FpEntry(s))).filter(|e| e.is_occupied())
    }

    /// A new table holding `entries` (with their recomputed hashes), sized for `capacity`.
    pub fn rebuilt(capacity: usize, huge_pages: bool, entries: impl IntoIterator<Item = (u64, FpEntry)>) -> Self {
        let mut t = FingerprintTable::with_capacity(capacity, huge_pages);
        for (hash, e) in entries {
            // Collided bits are recomputed from scratch by `insert`.
            t.insert(hash, FpEntry(e.0 & !COLLIDED));
        }
        t.overflow.shrink_to_fit();
        t
    }

    fn bucket(&self, overflow: bool, index: usize) -> &Bucket {
        if overflow {
            &self.overflow[index]
        } else {
            &self.buckets[index]
        }
    }

    fn bucket_mut(&mut self, overflow: bool, index: usize) -> &mut Bucket {
        if overflow {
            &mut self.overflow[index]
        } else {
            &mut self.buckets[index]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_is_one_cache_line() {
        assert_eq!(core::mem::size_of::<Bucket>(), 64);
        assert_eq!(core::mem::align_of::<Bucket>(), 64);
    }

    #[test]
    fn entry_fields_round_trip() {
        let e = FpEntry::new(0xdead_beef_0001_2345, 0xffff_fff0, 9, true);
        assert_eq!(e.entry(), 0xffff_fff0);
        assert_eq!(e.slot(), 9);
        assert!(e.is_leaf());
        assert!(!e.is_collided());
        assert_eq!(e.fingerprint(), 0x1_2345 & FP_MASK);
    }

    #[test]
    fn full_chains_overflow_and_are_counted() {
        let mut t = FingerprintTable::with_capacity(4, false);
        // Same high bits: every entry lands in the one bucket.
        for i in 0..10u32 {
            t.insert(u64::from(i), FpEntry::new(u64::from(i), i, 0, false));
        }
        assert_eq!(t.len(), 10);
        assert_eq!(t.chained(), 1);
        let mut probes = 0;
        let found = t.find(9, &mut probes, |_| true).unwrap();
        assert_eq!(found.entry(), 9);
        assert_eq!(probes, 2);
        let pos = t.position(9, |e| e.entry() == 9).unwrap();
        t.remove(pos);
        let mut probes = 0;
        assert!(t.find(9, &mut probes, |_| true).is_none());
        assert_eq!(t.len(), 9);
    }

    #[test]
    fn equal_fingerprints_are_marked_collided() {
        let mut t = FingerprintTable::with_capacity(4, false);
        t.insert(7, FpEntry::new(7, 1, 0, false));
        t.insert(7, FpEntry::new(7, 2, 0, false));
        let mut probes = 0;
        let first = t.find(7, &mut probes, |_| true).unwrap();
        assert!(first.is_collided());
        let second = t.find(7, &mut probes, |e| e.entry() == 2).unwrap();
        assert!(second.is_collided());
    }

    #[test]
    fn leaf_bit_is_edited_in_place() {
        let mut t = FingerprintTable::with_capacity(4, false);
        t.insert(5, FpEntry::new(5, 1, 2, false));
        let pos = t.position(5, |_| true).unwrap();
        t.set_leaf(pos, true);
        let e = t.get(pos);
        assert!(e.is_leaf());
        assert_eq!((e.entry(), e.slot(), e.fingerprint()), (1, 2, 5));
    }
}
