//! The dead-nonce list: (name, nonce) pairs of Interests whose PIT entries are gone, kept for a
//! while so that a looping copy arriving later is still recognised (NFD's DeadNonceList).
//! Entries are 64-bit hashes of the pair; a FIFO of (expiry, hash) ages them out, and the list
//! never holds more than its capacity (the oldest go first).

use std::collections::VecDeque;
use std::hash::BuildHasher;

use hashbrown::HashSet;

/// Recently retired (name, nonce) pairs.
#[derive(Debug)]
pub struct DeadNonceList {
    set: HashSet<u64, foldhash::fast::FixedState>,
    order: VecDeque<(u64, u64)>,
    lifetime_ms: u64,
    capacity: usize,
    hasher: foldhash::fast::FixedState,
}

impl DeadNonceList {
    /// A list remembering each pair for `lifetime_ms`, at most `capacity` pairs.
    pub fn new(lifetime_ms: u64, capacity: usize) -> Self {
        DeadNonceList {
            set: HashSet::with_hasher(foldhash::fast::FixedState::with_seed(1)),
            order: VecDeque::new(),
            lifetime_ms,
            capacity: capacity.max(1),
            hasher: foldhash::fast::FixedState::with_seed(0x646e_6c21),
        }
    }

    fn key(&self, name: &[u8], nonce: [u8; 4]) -> u64 {
        self.hasher.hash_one((name, nonce))
    }

    /// Remembers the pair from `now_ms`.
    pub fn add(&mut self, name: &[u8], nonce: [u8; 4], now_ms: u64) {
        self.expire(now_ms);
        let k = self.key(name, nonce);
        if self.set.insert(k) {
            if self.order.len() >= self.capacity {
                if let Some((_, old)) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
            self.order.push_back((now_ms + self.lifetime_ms, k));
        }
    }

    /// True when the pair was retired less than the lifetime ago.
    pub fn contains(&self, name: &[u8], nonce: [u8; 4]) -> bool {
        !self.set.is_empty() && self.set.contains(&self.key(name, nonce))
    }

    /// Forgets pairs older than the lifetime.
    pub fn expire(&mut self, now_ms: u64) {
        while let Some(&(at, k)) = self.order.front() {
            if at > now_ms {
                break;
            }
            self.order.pop_front();
            self.set.remove(&k);
        }
    }

    /// Pairs held.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_then_forgets() {
        let mut d = DeadNonceList::new(100, 10);
        d.add(b"a", [1, 2, 3, 4], 0);
        assert!(d.contains(b"a", [1, 2, 3, 4]));
        assert!(!d.contains(b"a", [1, 2, 3, 5]));
        assert!(!d.contains(b"b", [1, 2, 3, 4]));
        d.expire(99);
        assert!(d.contains(b"a", [1, 2, 3, 4]));
        d.expire(100);
        assert!(!d.contains(b"a", [1, 2, 3, 4]));
    }

    #[test]
    fn bounded() {
        let mut d = DeadNonceList::new(1_000_000, 3);
        for i in 0..10u8 {
            d.add(b"n", [i, 0, 0, 0], 0);
        }
        assert_eq!(d.len(), 3);
        assert!(d.contains(b"n", [9, 0, 0, 0]));
        assert!(!d.contains(b"n", [0, 0, 0, 0]));
    }
}
