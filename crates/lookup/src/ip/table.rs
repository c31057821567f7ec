//! The hash table behind each Bloom filter: expanded prefix → next hop. Open addressing with
//! linear probing, at most 60% full, and backward-shift deletion (no tombstones). The home slot is
//! h1 of the key's hash — the same hash the filter was probed with, so a lookup hashes each key
//! once. A slot is only the key and the next hop (8 bytes for IPv4: eight per cache line); the
//! length of the route that owns each slot, which only updates need, lives in a parallel array.
//! A free slot has the next hop [`NO_ROUTE`], which no route carries.

use super::hash::{h1, reduce, Key};
use super::{NextHop, NO_ROUTE};
use crate::mem::{huge_vec, prefetch};

/// The fullest a table gets before it grows (and what [`PrefixTable::fit`] sizes for: 55%).
const MAX_LOAD: f64 = 0.6;
const FIT_LOAD: f64 = 0.55;

#[derive(Debug, Clone, Copy, Default)]
struct Slot<K> {
    key: K,
    next_hop: NextHop,
}

/// An expanded-prefix table.
#[derive(Debug, Clone)]
pub struct PrefixTable<K> {
    slots: Vec<Slot<K>>,
    /// Length of the original route that owns each slot (control side).
    owners: Vec<u8>,
    len: usize,
}

impl<K: Key> PrefixTable<K> {
    /// A table for about `capacity` keys.
    pub fn new(capacity: usize) -> Self {
        Self::with_slots((capacity as f64 / FIT_LOAD) as usize)
    }

    fn with_slots(n: usize) -> Self {
        let n = n.max(16);
        PrefixTable { slots: huge_vec(n, Slot { key: K::default(), next_hop: NO_ROUTE }), owners: vec![0; n], len: 0 }
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes of the slots (the lookup side).
    pub fn bytes(&self) -> usize {
        self.slots.len() * core::mem::size_of::<Slot<K>>()
    }

    /// Bytes of the owner lengths (the control side).
    pub fn control_bytes(&self) -> usize {
        self.owners.len()
    }

    #[inline(always)]
    fn home(&self, h: u64) -> usize {
        reduce(h1(h), self.slots.len())
    }

    /// Brings the home slot of hash `h` towards the cache.
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        prefetch(&self.slots[self.home(h)]);
    }

    /// Prefetches the home slot of hash `h` when `wanted`, else slot 0 (soon cached, so the
    /// prefetch costs nothing): no branch on `wanted`.
    #[inline(always)]
    pub fn prefetch_if(&self, h: u64, wanted: bool) {
        prefetch(&self.slots[self.home(h) * usize::from(wanted)]);
    }

    /// The slot holding `key` (hash `h`).
    #[inline(always)]
    fn find(&self, h: u64, key: K) -> Option<usize> {
        let n = self.slots.len();
        let mut i = self.home(h);
        loop {
            let s = &self.slots[i];
            if s.next_hop == NO_ROUTE {
                return None;
            }
            if s.key == key {
                return Some(i);
            }
            i += 1;
            if i == n {
                i = 0;
            }
        }
    }

    /// The next hop of `key`, whose hash is `h`.
    #[inline(always)]
    pub fn get(&self, h: u64, key: K) -> Option<NextHop> {
        self.find(h, key).map(|i| self.slots[i].next_hop)
    }

    /// The (next hop, owning length) of `key`, for the control side.
    pub fn entry(&self, key: K) -> Option<(NextHop, u8)> {
        self.find(key.hash(), key).map(|i| (self.slots[i].next_hop, self.owners[i]))
    }

    /// Sets `key` to (next hop, owning length). Returns whether the key is new.
    pub fn set(&mut self, key: K, next_hop: NextHop, owner: u8) -> bool {
        debug_assert!(next_hop != NO_ROUTE);
        if (self.len + 1) as f64 > self.slots.len() as f64 * MAX_LOAD {
            self.rebuild(self.slots.len() * 2);
        }
        let n = self.slots.len();
        let mut i = self.home(key.hash());
        loop {
            let s = &mut self.slots[i];
            if s.next_hop == NO_ROUTE {
                *s = Slot { key, next_hop };
                self.owners[i] = owner;
                self.len += 1;
                return true;
            }
            if s.key == key {
                s.next_hop = next_hop;
                self.owners[i] = owner;
                return false;
            }
            i = (i + 1) % n;
        }
    }

    /// Removes `key`. Returns whether it was there.
    pub fn remove(&mut self, key: K) -> bool {
        let Some(i) = self.find(key.hash(), key) else {
            return false;
        };
        let n = self.slots.len();
        // Backward shift: pull later entries of the run into the hole when their home allows.
        let mut hole = i;
        let mut j = (i + 1) % n;
        while self.slots[j].next_hop != NO_ROUTE {
            let home = self.home(self.slots[j].key.hash());
            // The entry at j must stay when its home lies in (hole, j] cyclically.
            let stays = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
            if !stays {
                self.slots[hole] = self.slots[j];
                self.owners[hole] = self.owners[j];
                hole = j;
            }
            j = (j + 1) % n;
        }
        self.slots[hole].next_hop = NO_ROUTE;
        self.len -= 1;
        true
    }

    /// Every (key, next hop, owning length).
    pub fn iter(&self) -> impl Iterator<Item = (K, NextHop, u8)> + '_ {
        self.slots.iter().zip(&self.owners).filter(|(s, _)| s.next_hop != NO_ROUTE).map(|(s, &o)| (s.key, s.next_hop, o))
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        #[test]
        fn agrees_with_a_hashmap(ops in proptest::collection::vec((0u32..64, any::<bool>(), 0u32..100), 1..400)) {
            let mut t = PrefixTable::<u32>::new(4);
            let mut oracle = HashMap::new();
            for (k, insert, v) in ops {
                if insert {
                    prop_assert_eq!(t.set(k, v, 1), oracle.insert(k, v).is_none());
                } else {
                    prop_assert_eq!(t.remove(k), oracle.remove(&k).is_some());
                }
                prop_assert_eq!(t.len(), oracle.len());
                for q in 0..64u32 {
                    prop_assert_eq!(t.get(q.hash(), q), oracle.get(&q).copied());
                }
            }
        }
    }
}
