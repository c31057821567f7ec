//! The hash table behind each Bloom filter: expanded prefix → next hop.
//!
//! Buckets of one cache line each (64-byte aligned), holding as many (key, next hop) slots as fit
//! beside a 4-byte overflow count: 7 for IPv4's 32-bit keys, 5 for 64-bit keys, 3 for 128-bit
//! ones. A key lives in its home bucket (h1 of its hash — the hash the filter was probed with, so
//! a lookup hashes each key once) or, when that is full, in the first bucket after it with a free
//! slot. Every bucket counts the keys that passed it that way (the overflow count, as in Folly's
//! F14): a lookup compares all the keys of one line at once, without a branch per slot, and moves
//! on to the next bucket only when the key is not there and the count is not zero. At the loads
//! kept here (at most 60% of the slots) nearly every lookup reads one line and takes one
//! predictable branch — a probe loop per slot with an exit the predictor cannot learn costs more
//! than the line itself once the table is cache-resident.
//!
//! A free slot has the next hop [`NO_ROUTE`], which no route carries. Deletion clears the slot and
//! decrements the counts of the buckets the key had passed; nothing moves. The length of the route
//! that owns each slot, which only updates need, lives in a parallel array.

use super::hash::{h1, hash64, reduce};
use super::{NextHop, NO_ROUTE};
use crate::mem::{huge_vec, prefetch};

/// The fullest a table gets before it grows, and what [`PrefixTable::fit`] sizes for.
const MAX_LOAD: f64 = 0.6;
const FIT_LOAD: f64 = 0.55;

/// One cache line of slots: `B` keys, their next hops, and the overflow count.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub struct Bucket<K, const B: usize> {
    keys: [K; B],
    hops: [NextHop; B],
    /// Keys whose home bucket is this one or an earlier one, stored after it.
    overflow: u32,
}

/// What a table needs of a bucket (implemented by [`Bucket`] for every width).
pub trait Slots<K>: Copy + core::fmt::Debug + Send + Sync + 'static {
    /// Slots per bucket.
    const SLOTS: usize;
    /// A bucket with every slot free.
    fn empty() -> Self;
    /// The slot holding `key`, comparing every slot without a branch.
    fn find(&self, key: K) -> Option<usize>;
    /// A free slot.
    fn free(&self) -> Option<usize>;
    /// Slot `i`'s key and next hop ([`NO_ROUTE`] when free).
    fn slot(&self, i: usize) -> (K, NextHop);
    /// Sets slot `i`'s key and next hop.
    fn put(&mut self, i: usize, key: K, next_hop: NextHop);
    /// The overflow count.
    fn overflow(&self) -> u32;
    /// Adds `delta` to the overflow count.
    fn add_overflow(&mut self, delta: i32);
}

impl<K: Copy + Eq + Default + core::fmt::Debug + Send + Sync + 'static, const B: usize> Slots<K> for Bucket<K, B> {
    const SLOTS: usize = B;

    fn empty() -> Self {
        Bucket { keys: [K::default(); B], hops: [NO_ROUTE; B], overflow: 0 }
    }

    #[inline(always)]
    fn find(&self, key: K) -> Option<usize> {
        let mut hit = 0u32;
        for i in 0..B {
            hit |= u32::from((self.keys[i] == key) & (self.hops[i] != NO_ROUTE)) << i;
        }
        (hit != 0).then_some(hit.trailing_zeros() as usize)
    }

    fn free(&self) -> Option<usize> {
        self.hops.iter().position(|&h| h == NO_ROUTE)
    }

    #[inline(always)]
    fn slot(&self, i: usize) -> (K, NextHop) {
        (self.keys[i], self.hops[i])
    }

    fn put(&mut self, i: usize, key: K, next_hop: NextHop) {
        self.keys[i] = key;
        self.hops[i] = next_hop;
    }

    #[inline(always)]
    fn overflow(&self) -> u32 {
        self.overflow
    }

    fn add_overflow(&mut self, delta: i32) {
        self.overflow = self.overflow.wrapping_add_signed(delta);
    }
}

/// An expanded-prefix table.
#[derive(Debug, Clone)]
pub struct PrefixTable<K: Key> {
    buckets: Vec<K::Bucket>,
    /// Length of the original route that owns each slot (bucket · slots + slot; control side).
    owners: Vec<u8>,
    len: usize,
}

impl<K: Key> PrefixTable<K> {
    /// A table for about `capacity` keys.
    pub fn new(capacity: usize) -> Self {
        Self::with_slots((capacity as f64 / FIT_LOAD) as usize)
    }

    fn with_slots(n: usize) -> Self {
        let buckets = n.div_ceil(K::Bucket::SLOTS).max(2);
        PrefixTable { buckets: huge_vec(buckets, K::Bucket::empty()), owners: vec![0; buckets * K::Bucket::SLOTS], len: 0 }
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Slots, free or not.
    fn capacity(&self) -> usize {
        self.buckets.len() * K::Bucket::SLOTS
    }

    /// Bytes of the buckets (the lookup side).
    pub fn bytes(&self) -> usize {
        self.buckets.len() * core::mem::size_of::<K::Bucket>()
    }

    /// Bytes of the owner lengths (the control side).
    pub fn control_bytes(&self) -> usize {
        self.owners.len()
    }

    /// The home bucket of hash `h`.
    #[inline(always)]
    pub fn home(&self, h: u64) -> usize {
        reduce(h1(h), self.buckets.len())
    }

    /// The bucket after `b`, cyclically.
    #[inline(always)]
    fn next(&self, b: usize) -> usize {
        if b + 1 == self.buckets.len() {
            0
        } else {
            b + 1
        }
    }

    /// Prefetches the home bucket of hash `h` when `wanted`, else bucket 0 (soon cached, so the
    /// prefetch costs nothing): no branch on `wanted`.
    #[inline(always)]
    pub fn prefetch_if(&self, h: u64, wanted: bool) {
        prefetch(&self.buckets[self.home(h) * usize::from(wanted)]);
    }

    /// Index of slot `i` of bucket `b` in `owners`.
    fn slot_index(b: usize, i: usize) -> usize {
        b * K::Bucket::SLOTS + i
    }

    /// The (bucket, slot) holding `key` (hash `h`).
    #[inline(always)]
    fn position(&self, h: u64, key: K) -> Option<(usize, usize)> {
        self.position_from(self.home(h), key)
    }

    /// The (bucket, slot) holding `key`, whose home bucket is `b`.
    #[inline(always)]
    fn position_from(&self, b: usize, key: K) -> Option<(usize, usize)> {
        self.search_from(b, |bucket| bucket.find(key))
    }

    /// The (bucket, slot) that `find` finds in a bucket, from home bucket `b` along the overflow
    /// chain.
    #[inline(always)]
    fn search_from(&self, mut b: usize, find: impl Fn(&K::Bucket) -> Option<usize>) -> Option<(usize, usize)> {
        loop {
            let bucket = &self.buckets[b];
            if let Some(i) = find(bucket) {
                return Some((b, i));
            }
            if bucket.overflow() == 0 {
                return None;
            }
            b = self.next(b);
        }
    }

    /// The next hop of `key`, whose hash is `h`.
    #[inline(always)]
    pub fn get(&self, h: u64, key: K) -> Option<NextHop> {
        self.get_from(self.home(h), key)
    }

    /// The next hop of `key`, whose home bucket is `b` ([`Self::home`]).
    #[inline(always)]
    pub fn get_from(&self, b: usize, key: K) -> Option<NextHop> {
        self.position_from(b, key).map(|(b, i)| self.buckets[b].slot(i).1)
    }

    /// Buckets.
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }

    /// The address of bucket `b`, for a prefetch.
    #[inline(always)]
    pub fn bucket_address(&self, b: usize) -> *const u8 {
        self.buckets.as_ptr().wrapping_add(b).cast()
    }

    /// [`Self::get`] when `wanted`, else `None`. The home bucket (bucket 0 when not wanted, soon
    /// cached) is read and its answer kept or dropped without a branch on `wanted`; only a key
    /// that overflowed past its home takes the loop.
    #[inline(always)]
    pub fn get_if(&self, h: u64, key: K, wanted: bool) -> Option<NextHop> {
        let b = self.home(h) * usize::from(wanted);
        let bucket = &self.buckets[b];
        let hop = bucket.find(key).map(|i| bucket.slot(i).1);
        if hop.is_none() && wanted && bucket.overflow() != 0 {
            return self.get(h, key);
        }
        hop.filter(|_| wanted)
    }

    /// The (next hop, owning length) of `key`, for the control side.
    pub fn entry(&self, key: K) -> Option<(NextHop, u8)> {
        self.position(key.hash(), key).map(|(b, i)| (self.buckets[b].slot(i).1, self.owners[Self::slot_index(b, i)]))
    }

    /// Sets `key` to (next hop, owning length). Returns whether the key is new.
    pub fn set(&mut self, key: K, next_hop: NextHop, owner: u8) -> bool {
        debug_assert!(next_hop != NO_ROUTE);
        let h = key.hash();
        if let Some((b, i)) = self.position(h, key) {
            self.buckets[b].put(i, key, next_hop);
            self.owners[Self::slot_index(b, i)] = owner;
            return false;
        }
        if (self.len + 1) as f64 > self.capacity() as f64 * MAX_LOAD {
            self.rebuild(self.capacity() * 2);
        }
        // Below full load some bucket has a free slot, so the walk ends.
        let mut b = self.home(h);
        loop {
            if let Some(i) = self.buckets[b].free() {
                self.buckets[b].put(i, key, next_hop);
                self.owners[Self::slot_index(b, i)] = owner;
                self.len += 1;
                return true;
            }
            self.buckets[b].add_overflow(1);
            b = self.next(b);
        }
    }

    /// Removes `key`. Returns whether it was there.
    pub fn remove(&mut self, key: K) -> bool {
        let h = key.hash();
        let Some((at, i)) = self.position(h, key) else {
            return false;
        };
        let mut b = self.home(h);
        while b != at {
            self.buckets[b].add_overflow(-1);
            b = self.next(b);
        }
        self.buckets[at].put(i, K::default(), NO_ROUTE);
        self.len -= 1;
        true
    }

    /// Every (key, next hop, owning length).
    pub fn iter(&self) -> impl Iterator<Item = (K, NextHop, u8)> + '_ {
        let slots = K::Bucket::SLOTS;
        self.buckets
            .iter()
            .flat_map(move |b| (0..slots).map(move |i| b.slot(i)))
            .zip(&self.owners)
            .filter(|((_, nh), _)| *nh != NO_ROUTE)
            .map(|((k, nh), &o)| (k, nh, o))
    }

    /// Re-sizes the table for exactly what it holds (after a bulk build).
    pub fn fit(&mut self) {
        self.rebuild((self.len as f64 / FIT_LOAD) as usize);
    }

    fn rebuild(&mut self, slots: usize) {
        let old = core::mem::replace(self, PrefixTable::with_slots(slots));
        for (k, nh, owner) in old.iter() {
            self.set(k, nh, owner);
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl PrefixTable<u64> {
    /// [`Self::get_from`] comparing a bucket with two AVX-512 instructions: its 5 keys against
    /// `key`, its 5 next hops against [`NO_ROUTE`] (a free slot).
    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(unsafe_code)] // one aligned load of a bucket
    pub fn get_from_avx512(&self, b: usize, key: u64) -> Option<NextHop> {
        use core::arch::x86_64::*;
        let find = |bucket: &Bucket<u64, 5>| {
            // SAFETY: a bucket is one 64-byte-aligned line (`align(64)`, 64 bytes), so the aligned
            // 64-byte load reads exactly it.
            let line = unsafe { _mm512_load_si512((bucket as *const Bucket<u64, 5>).cast()) };
            // Keys are the line's qwords 0..5, next hops its dwords 10..15.
            let keys = u32::from(_mm512_mask_cmpeq_epi64_mask(0x1f, line, _mm512_set1_epi64(key as i64)));
            let used = u32::from(_mm512_mask_cmpneq_epi32_mask(0x7c00, line, _mm512_set1_epi32(NO_ROUTE as i32))) >> 10;
            let hit = keys & used;
            (hit != 0).then_some(hit.trailing_zeros() as usize)
        };
        self.search_from(b, find).map(|(b, i)| self.buckets[b].hops[i])
    }
}

/// A key of a prefix table: a prefix's bits, right-aligned.
pub trait Key: Copy + Eq + Default + core::fmt::Debug + Send + Sync + 'static {
    /// The cache-line bucket a [`PrefixTable`] of these keys is made of.
    type Bucket: Slots<Self>;
    /// Its hash.
    fn hash(self) -> u64;
}

impl Key for u32 {
    type Bucket = Bucket<u32, 7>;
    #[inline(always)]
    fn hash(self) -> u64 {
        hash64(u64::from(self))
    }
}

impl Key for u64 {
    type Bucket = Bucket<u64, 5>;
    #[inline(always)]
    fn hash(self) -> u64 {
        hash64(self)
    }
}

impl Key for u128 {
    type Bucket = Bucket<u128, 3>;
    #[inline(always)]
    fn hash(self) -> u64 {
        hash64(self as u64 ^ hash64((self >> 64) as u64).rotate_left(17))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// Random sets and removals on a table that starts with two buckets, so keys overflow into
    /// later buckets, wrap around the end and leave through removals in any order.
    fn agrees_with_a_hashmap<K: Key + core::hash::Hash>(ops: &[(K, bool, u32)], probes: &[K]) -> Result<(), TestCaseError> {
        let mut t = PrefixTable::<K>::new(4);
        let mut oracle = HashMap::new();
        for &(k, insert, v) in ops {
            if insert {
                prop_assert_eq!(t.set(k, v, 1), oracle.insert(k, v).is_none());
            } else {
                prop_assert_eq!(t.remove(k), oracle.remove(&k).is_some());
            }
            prop_assert_eq!(t.len(), oracle.len());
            for &q in probes {
                prop_assert_eq!(t.get(q.hash(), q), oracle.get(&q).copied());
            }
        }
        // Every overflow count is the number of keys stored past that bucket from before it.
        let n = t.buckets.len();
        let mut passing = vec![0u32; n];
        for (b, bucket) in t.buckets.iter().enumerate() {
            for i in 0..K::Bucket::SLOTS {
                let (k, nh) = bucket.slot(i);
                if nh != NO_ROUTE {
                    let mut at = t.home(k.hash());
                    while at != b {
                        passing[at] += 1;
                        at = (at + 1) % n;
                    }
                }
            }
        }
        let counts: Vec<u32> = t.buckets.iter().map(Slots::overflow).collect();
        prop_assert_eq!(counts, passing);
        Ok(())
    }

    proptest! {
        #[test]
        fn u32_keys_agree_with_a_hashmap(ops in proptest::collection::vec((0u32..64, any::<bool>(), 0u32..100), 1..400)) {
            agrees_with_a_hashmap(&ops, &(0..64).collect::<Vec<u32>>())?;
        }

        #[test]
        fn u64_keys_agree_with_a_hashmap(ops in proptest::collection::vec((0u64..64, any::<bool>(), 0u32..100), 1..400)) {
            agrees_with_a_hashmap(&ops, &(0..64).collect::<Vec<u64>>())?;
        }

        #[test]
        fn u128_keys_agree_with_a_hashmap(ops in proptest::collection::vec((0u128..64, any::<bool>(), 0u32..100), 1..400)) {
            let ops: Vec<(u128, bool, u32)> = ops.into_iter().map(|(k, i, v)| (k << 70 | k, i, v)).collect();
            agrees_with_a_hashmap(&ops, &(0..64u128).map(|k| k << 70 | k).collect::<Vec<u128>>())?;
        }
    }

    #[test]
    fn a_bucket_is_one_cache_line() {
        assert_eq!(core::mem::size_of::<<u32 as Key>::Bucket>(), 64);
        assert_eq!(core::mem::size_of::<<u64 as Key>::Bucket>(), 64);
        assert_eq!(core::mem::size_of::<<u128 as Key>::Bucket>(), 64);
        assert_eq!(core::mem::align_of::<<u64 as Key>::Bucket>(), 64);
    }
}
