//! Flat-name peers of Concise.
//!
//! - [`FlatKey`]: the name types of the `flat-fib` experiment as a Rust user would hold them —
//!   fixed-size byte arrays for MAC (6), IPv4 (4) and flow IDs (16), boxed bytes for names of
//!   varied length.
//! - [`Cuckoo`]: a (2,4)-cuckoo hash table — two candidate buckets of four (name, action) slots,
//!   random-walk insertion, doubling when a walk fails — CuckooSwitch's FIB, with a batch lookup
//!   pipelined as Concise's is: each step probes one name and hashes the name
//!   [`AHEAD`] on and prefetches both its buckets.

use core::hash::{BuildHasher, Hash};

use nexthop_lookup::flat::AHEAD;
use nexthop_lookup::mem::prefetch;

/// A flat name as a peer stores it.
pub trait FlatKey: Clone + Eq + Hash + AsRef<[u8]> + Send + Sync + 'static {
    /// The name from its bytes.
    fn from_bytes(b: &[u8]) -> Self;
}

impl<const N: usize> FlatKey for [u8; N] {
    fn from_bytes(b: &[u8]) -> Self {
        let mut k = [0u8; N];
        k.copy_from_slice(&b[..N]);
        k
    }
}

impl FlatKey for Box<[u8]> {
    fn from_bytes(b: &[u8]) -> Self {
        b.into()
    }
}

/// Slots per bucket.
const WAYS: usize = 4;
/// Longest random walk before the table doubles.
const MAX_KICKS: usize = 500;
/// Bucket pairs between hashing and probing in [`Cuckoo::lookup_batch`].
const RING: usize = 2 * AHEAD;

#[derive(Debug, Clone)]
struct Bucket<K> {
    slots: [Option<(K, u16)>; WAYS],
}

/// A (2,4)-cuckoo hash table from name to action.
#[derive(Debug, Clone)]
pub struct Cuckoo<K> {
    buckets: Vec<Bucket<K>>,
    mask: usize,
    seed: u64,
    len: usize,
    rng: u64,
}

impl<K: FlatKey> Cuckoo<K> {
    /// A table sized for `n` names at about 90% load.
    pub fn with_capacity(n: usize) -> Self {
        let buckets = (n * 10 / 9 / WAYS + 1).next_power_of_two().max(2);
        Cuckoo {
            buckets: vec![Bucket { slots: Default::default() }; buckets],
            mask: buckets - 1,
            seed: 0x6375_636b_6f6f,
            len: 0,
            rng: 0x9e37_79b9,
        }
    }

    fn hash(&self, key: &K) -> u64 {
        foldhash::fast::FixedState::with_seed(self.seed).hash_one(key.as_ref())
    }

    fn buckets_of(&self, h: u64) -> (usize, usize) {
        (h as usize & self.mask, (h >> 32) as usize & self.mask)
    }

    /// Names held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Inserts or replaces.
    pub fn insert(&mut self, key: K, action: u16) {
        let (b1, b2) = self.buckets_of(self.hash(&key));
        for b in [b1, b2] {
            for s in self.buckets[b].slots.iter_mut().flatten() {
                if s.0 == key {
                    s.1 = action;
                    return;
                }
            }
        }
        let mut item = (key, action);
        let mut b = b1;
        for _ in 0..MAX_KICKS {
            let (x1, x2) = self.buckets_of(self.hash(&item.0));
            for cand in [x1, x2] {
                if let Some(slot) = self.buckets[cand].slots.iter_mut().find(|s| s.is_none()) {
                    *slot = Some(item);
                    self.len += 1;
                    return;
                }
            }
            // Evict a random slot of one of the two buckets and move on with its occupant.
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            b = if b == x1 { x2 } else { x1 };
            let way = (self.rng as usize) % WAYS;
            let evicted = self.buckets[b].slots[way].replace(item).expect("full bucket");
            item = evicted;
        }
        self.grow();
        self.insert(item.0, item.1);
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.buckets);
        let n = (old.len() * 2).max(2);
        self.buckets = vec![Bucket { slots: Default::default() }; n];
        self.mask = n - 1;
        self.len = 0;
        for (k, v) in old.into_iter().flat_map(|b| b.slots.into_iter().flatten()) {
            self.insert(k, v);
        }
    }

    /// The action of `key`.
    pub fn get(&self, key: &K) -> Option<u16> {
        let (b1, b2) = self.buckets_of(self.hash(key));
        self.probe(key, b1, b2)
    }

    #[inline(always)]
    fn probe(&self, key: &K, b1: usize, b2: usize) -> Option<u16> {
        for b in [b1, b2] {
            for (k, v) in self.buckets[b].slots.iter().flatten() {
                if k == key {
                    return Some(*v);
                }
            }
        }
        None
    }

    /// Looks up many names (0 for a name not held), pipelined: name t is probed in the step that
    /// hashes name t + [`AHEAD`] and prefetches both its buckets.
    pub fn lookup_batch(&self, keys: &[K], out: &mut Vec<u32>) {
        let mut ring = [(0usize, 0usize); RING];
        let ahead = |t: usize, key: &K, ring: &mut [(usize, usize); RING]| {
            let (b1, b2) = self.buckets_of(self.hash(key));
            prefetch(&self.buckets[b1]);
            prefetch(&self.buckets[b2]);
            ring[t % RING] = (b1, b2);
        };
        for (t, key) in keys.iter().enumerate().take(AHEAD) {
            ahead(t, key, &mut ring);
        }
        out.reserve(keys.len());
        for (t, key) in keys.iter().enumerate() {
            if let Some(later) = keys.get(t + AHEAD) {
                ahead(t + AHEAD, later, &mut ring);
            }
            let (b1, b2) = ring[t % RING];
            out.push(self.probe(key, b1, b2).map_or(0, u32::from));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn cuckoo_matches_a_map_through_growth() {
        let mut c: Cuckoo<[u8; 4]> = Cuckoo::with_capacity(100);
        let mut m = HashMap::new();
        for i in 0..20_000u32 {
            let k = (i.wrapping_mul(2_654_435_761)).to_le_bytes();
            c.insert(k, (i % 65536) as u16);
            m.insert(k, (i % 65536) as u16);
        }
        assert_eq!(c.len(), m.len());
        assert!(m.iter().all(|(k, v)| c.get(k) == Some(*v)));
        let keys: Vec<[u8; 4]> = m.keys().copied().collect();
        let mut out = Vec::new();
        c.lookup_batch(&keys, &mut out);
        assert!(keys.iter().zip(&out).all(|(k, &v)| u32::from(m[k]) == v));
        assert_eq!(c.get(&[1, 2, 3, 4]).is_some(), m.contains_key(&[1, 2, 3, 4]));
    }
}
