//! Replacement policies for the L1: FIFO (what NFD's content store does), LRU and S3-FIFO.
//!
//! A policy only orders slot numbers; the store owns the slots and asks `Replacement::victim`
//! for one when it is full. Every operation is O(1) and allocation-free apart from S3-FIFO's ghost
//! queue (a hash set and a ring of 64-bit name hashes, bounded by the capacity).
//!
//! - **FIFO**: one queue in insertion order; a hit changes nothing.
//! - **LRU**: one queue in recency order; a hit moves the slot to the head.
//! - **S3-FIFO** (Yang et al., SOSP 2023): a small FIFO (10% of the slots) that new entries enter,
//!   a main FIFO with a 2-bit access counter per slot (re-inserted at the head while the counter is
//!   non-zero, decremented each time), and a ghost FIFO of the hashes of entries evicted from the
//!   small queue without a second access; an entry whose hash is in the ghost goes straight to
//!   main. An entry leaves the small queue for main when it was hit more than once.

use std::collections::VecDeque;

use hashbrown::HashMap;

use crate::queue::{Links, Queue};

/// Which replacement policy an L1 uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    /// First in, first out (NFD's content store).
    #[default]
    Fifo,
    /// Least recently used.
    Lru,
    /// S3-FIFO: small + main FIFO queues with a ghost queue.
    S3Fifo,
}

impl Policy {
    /// Every policy, for experiments and tests.
    pub const ALL: [Policy; 3] = [Policy::Fifo, Policy::Lru, Policy::S3Fifo];

    /// The policy's short name (`fifo`, `lru`, `s3-fifo`).
    pub fn name(self) -> &'static str {
        match self {
            Policy::Fifo => "fifo",
            Policy::Lru => "lru",
            Policy::S3Fifo => "s3-fifo",
        }
    }
}

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Policy::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| format!("unknown policy {s:?} (fifo, lru, s3-fifo)"))
    }
}

/// Which S3-FIFO queue a slot is in.
const IN_NONE: u8 = 0;
const IN_SMALL: u8 = 1;
const IN_MAIN: u8 = 2;
/// S3-FIFO's access counter saturates here.
const MAX_FREQ: u8 = 3;

/// The order in which slots are evicted.
#[derive(Debug, Clone)]
pub(crate) struct Replacement {
    policy: Policy,
    links: Links,
    /// FIFO and LRU use only `main`.
    main: Queue,
    small: Queue,
    /// S3-FIFO: which queue each slot is in, and its access counter.
    queue_of: Vec<u8>,
    freq: Vec<u8>,
    ghost: Ghost,
    small_target: u32,
}

impl Replacement {
    /// A policy over `slots` slots.
    pub(crate) fn new(policy: Policy, slots: u32) -> Self {
        let s3 = policy == Policy::S3Fifo;
        let per_slot = if s3 { slots as usize } else { 0 };
        Replacement {
            policy,
            links: Links::new(slots),
            main: Queue::new(),
            small: Queue::new(),
            queue_of: vec![IN_NONE; per_slot],
            freq: vec![0; per_slot],
            ghost: Ghost::new(if s3 { slots as usize } else { 0 }),
            small_target: (slots / 10).max(1),
        }
    }

    /// A new entry, whose full-name hash is `hash`, now occupies `slot`.
    pub(crate) fn admit(&mut self, slot: u32, hash: u64) {
        match self.policy {
            Policy::Fifo | Policy::Lru => self.links.push_head(&mut self.main, slot),
            Policy::S3Fifo => {
                self.freq[slot as usize] = 0;
                if self.ghost.take(hash) {
                    self.links.push_head(&mut self.main, slot);
                    self.queue_of[slot as usize] = IN_MAIN;
                } else {
                    self.links.push_head(&mut self.small, slot);
                    self.queue_of[slot as usize] = IN_SMALL;
                }
            }
        }
    }

    /// `slot` was read.
    pub(crate) fn hit(&mut self, slot: u32) {
        match self.policy {
            Policy::Fifo => {}
            Policy::Lru => {
                self.links.unlink(&mut self.main, slot);
                self.links.push_head(&mut self.main, slot);
            }
            Policy::S3Fifo => {
                let f = &mut self.freq[slot as usize];
                *f = (*f + 1).min(MAX_FREQ);
            }
        }
    }

    /// `slot` was emptied by the store (removed, replaced, found corrupt).
    pub(crate) fn forget(&mut self, slot: u32) {
        match self.policy {
            Policy::Fifo | Policy::Lru => self.links.unlink(&mut self.main, slot),
            Policy::S3Fifo => {
                match self.queue_of[slot as usize] {
                    IN_SMALL => self.links.unlink(&mut self.small, slot),
                    IN_MAIN => self.links.unlink(&mut self.main, slot),
                    _ => {}
                }
                self.queue_of[slot as usize] = IN_NONE;
            }
        }
    }

    /// Chooses the slot to evict and takes it out of the policy; `hash_of` gives a slot's
    /// full-name hash (for S3-FIFO's ghost). `None` when no slot is held.
    pub(crate) fn victim(&mut self, hash_of: impl Fn(u32) -> u64) -> Option<u32> {
        match self.policy {
            Policy::Fifo | Policy::Lru => self.links.pop_tail(&mut self.main),
            Policy::S3Fifo => {
                if self.small.len() >= self.small_target {
                    if let Some(s) = self.evict_small(&hash_of) {
                        return Some(s);
                    }
                }
                self.evict_main().or_else(|| self.evict_small(&hash_of))
            }
        }
    }

    /// S3-FIFO: moves twice-read entries from the small queue to main until one can be evicted.
    fn evict_small(&mut self, hash_of: &impl Fn(u32) -> u64) -> Option<u32> {
        while let Some(t) = self.links.pop_tail(&mut self.small) {
            let i = t as usize;
            if self.freq[i] > 1 {
                self.freq[i] = 0;
                self.links.push_head(&mut self.main, t);
                self.queue_of[i] = IN_MAIN;
            } else {
                self.ghost.add(hash_of(t));
                self.queue_of[i] = IN_NONE;
                return Some(t);
            }
        }
        None
    }

    /// S3-FIFO: re-inserts read entries of main (one access less each time) until one can go.
    fn evict_main(&mut self) -> Option<u32> {
        while let Some(t) = self.links.pop_tail(&mut self.main) {
            let i = t as usize;
            if self.freq[i] > 0 {
                self.freq[i] -= 1;
                self.links.push_head(&mut self.main, t);
            } else {
                self.queue_of[i] = IN_NONE;
                return Some(t);
            }
        }
        None
    }
}

/// S3-FIFO's ghost queue: hashes of recently evicted one-hit entries, oldest forgotten first.
///
/// Each hash remembers the sequence number of its latest insertion, so an old ring entry for a
/// hash that was taken and added again does not remove the newer one.
#[derive(Debug, Clone)]
struct Ghost {
    capacity: usize,
    ring: VecDeque<(u64, u64)>,
    latest: HashMap<u64, u64>,
    seq: u64,
}

impl Ghost {
    fn new(capacity: usize) -> Self {
        Ghost { capacity, ring: VecDeque::new(), latest: HashMap::new(), seq: 0 }
    }

    fn add(&mut self, hash: u64) {
        if self.capacity == 0 {
            return;
        }
        if self.ring.len() == self.capacity {
            if let Some((old, seq)) = self.ring.pop_front() {
                if self.latest.get(&old) == Some(&seq) {
                    self.latest.remove(&old);
                }
            }
        }
        self.seq += 1;
        self.ring.push_back((hash, self.seq));
        self.latest.insert(hash, self.seq);
    }

    /// Whether `hash` is in the ghost; removes it if so.
    fn take(&mut self, hash: u64) -> bool {
        self.latest.remove(&hash).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(r: &mut Replacement) -> Vec<u32> {
        std::iter::from_fn(|| r.victim(u64::from)).collect()
    }

    #[test]
    fn fifo_ignores_hits_and_lru_does_not() {
        for (policy, expect) in [(Policy::Fifo, vec![0, 1, 2, 3]), (Policy::Lru, vec![1, 2, 3, 0])] {
            let mut r = Replacement::new(policy, 4);
            for s in 0..4 {
                r.admit(s, u64::from(s));
            }
            r.hit(0);
            assert_eq!(drain(&mut r), expect, "{policy:?}");
        }
    }

    #[test]
    fn s3fifo_keeps_reused_entries_and_remembers_ghosts() {
        let mut r = Replacement::new(Policy::S3Fifo, 10);
        for s in 0..10 {
            r.admit(s, 100 + u64::from(s));
        }
        // Slot 0 read twice: it survives the small queue and moves to main.
        r.hit(0);
        r.hit(0);
        let first = r.victim(|s| 100 + u64::from(s)).unwrap();
        assert_eq!(first, 1, "one-hit entries leave first");
        // Slot 1's hash is now a ghost: re-admitting it goes to main directly.
        r.admit(1, 101);
        assert_eq!(r.queue_of[1], IN_MAIN);
        assert_eq!(r.queue_of[0], IN_MAIN);
        r.forget(0);
        let rest = drain(&mut r);
        assert_eq!(rest.len(), 9);
        assert!(!rest.contains(&0));
    }

    #[test]
    fn ghost_forgets_oldest() {
        let mut g = Ghost::new(2);
        g.add(1);
        g.add(2);
        g.add(3);
        assert!(!g.take(1));
        assert!(g.take(2));
        g.add(2);
        g.add(4);
        assert!(g.take(2), "the re-added hash outlives its old ring entry");
    }
}
