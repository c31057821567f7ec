//! The hash table behind each Bloom filter: expanded prefix → (next hop, length of the route that
//! owns it). Open addressing with linear probing, a load factor of at most 1/2, and
//! backward-shift deletion (no tombstones). The home slot is h1 of the key's hash — the same hash
//! the filter was probed with, so a lookup hashes each key once.

use super::hash::{h1, reduce, Key};
use super::NextHop;
use crate::mem::prefetch;

/// `len` of an empty slot.
const EMPTY: u8 = u8::MAX;

#[derive(Debug, Clone, Copy, Default)]
struct Slot<K> {
    key: K,
    next_hop: NextHop,
    /// Length of the original route that owns this expanded prefix; [`EMPTY`] when free.
    len: u8,
}

/// An expanded-prefix table.
#[derive(Debug, Clone)]
pub struct PrefixTable<K> {
    slots: Vec<Slot<K>>,
    len: usize,
}

impl<K: Key> PrefixTable<K> {
    /// A table for about `capacity` keys.
    pub fn new(capacity: usize) -> Self {
        let n = (capacity * 2).max(16);
        PrefixTable { slots: vec![Slot { key: K::default(), next_hop: 0, len: EMPTY }; n], len: 0 }
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Bytes of the slots.
    pub fn bytes(&self) -> usize {
        self.slots.len() * core::mem::size_of::<Slot<K>>()
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

    /// The (next hop, owning length) of `key`, whose hash is `h`.
    #[inline(always)]
    pub fn get(&self, h: u64, key: K) -> Option<(NextHop, u8)> {
        let n = self.slots.len();
        let mut i = self.home(h);
        loop {
            let s = &self.slots[i];
            if s.len == EMPTY {
                return None;
            }
            if s.key == key {
                return Some((s.next_hop, s.len));
            }
            i += 1;
            if i == n {
                i = 0;
            }
        }
    }

    /// Sets `key` to (next hop, owning length). Returns whether the key is new.
    pub fn set(&mut self, key: K, next_hop: NextHop, len: u8) -> bool {
        debug_assert!(len != EMPTY);
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let n = self.slots.len();
        let mut i = self.home(key.hash());
        loop {
            let s = &mut self.slots[i];
            if s.len == EMPTY {
                *s = Slot { key, next_hop, len };
                self.len += 1;
                return true;
            }
            if s.key == key {
                s.next_hop = next_hop;
                s.len = len;
                return false;
            }
            i = (i + 1) % n;
        }
    }

    /// Removes `key`. Returns whether it was there.
    pub fn remove(&mut self, key: K) -> bool {
        let n = self.slots.len();
        let mut i = self.home(key.hash());
        loop {
            let s = self.slots[i];
            if s.len == EMPTY {
                return false;
            }
            if s.key == key {
                break;
            }
            i = (i + 1) % n;
        }
        // Backward shift: pull later entries of the run into the hole when their home allows.
        let mut hole = i;
        let mut j = (i + 1) % n;
        while self.slots[j].len != EMPTY {
            let home = self.home(self.slots[j].key.hash());
            // The entry at j may move to the hole when its home is not in (hole, j] cyclically.
            let stays = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
            if !stays {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
            j = (j + 1) % n;
        }
        self.slots[hole].len = EMPTY;
        self.len -= 1;
        true
    }

    /// Every (key, next hop, owning length).
    pub fn iter(&self) -> impl Iterator<Item = (K, NextHop, u8)> + '_ {
        self.slots.iter().filter(|s| s.len != EMPTY).map(|s| (s.key, s.next_hop, s.len))
    }

    fn grow(&mut self) {
        let old = core::mem::replace(self, PrefixTable::new(self.slots.len()));
        for (k, nh, len) in old.iter() {
            self.set(k, nh, len);
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
                    prop_assert_eq!(t.get(q.hash(), q).map(|x| x.0), oracle.get(&q).copied());
                }
            }
        }
    }
}
