//! Replacement policies for the L1: FIFO, LRU, S3-FIFO and NFD's priority FIFO.
//!
//! A policy only orders slot numbers; the store owns the slots and asks `Replacement::victim`
//! for one when it is full. Every operation is O(1) and allocation-free apart from S3-FIFO's ghost
//! queue (a hash set and a ring of 64-bit name hashes, bounded by the capacity) and priority
//! FIFO's schedule of stale times (a binary heap: O(log n), at most about twice the capacity).
//!
//! - **FIFO**: one queue in insertion order; a hit changes nothing.
//! - **LRU**: one queue in recency order; a hit moves the slot to the head.
//! - **S3-FIFO** (Yang et al., SOSP 2023): a small FIFO (10% of the slots) that new entries enter,
//!   a main FIFO with a 2-bit access counter per slot (re-inserted at the head while the counter is
//!   non-zero, decremented each time), and a ghost FIFO of the hashes of entries evicted from the
//!   small queue without a second access; an entry whose hash is in the ghost goes straight to
//!   main. An entry leaves the small queue for main when it was hit more than once.
//! - **Priority FIFO** (NFD's default `priority_fifo`): three FIFO queues, evicted in turn —
//!   unsolicited packets first, then stale ones, then fresh ones. A packet enters the unsolicited
//!   queue if nothing asked for it, else the stale queue if it has no FreshnessPeriod (or 0), else
//!   the fresh queue, which it leaves for the tail of the stale queue once its freshness runs out.
//!   NFD moves it with a timer; here a min-heap of (stale time, admission number) is drained up to
//!   the caller's clock before each admission and eviction, which gives the stale queue the same
//!   order. Heap entries of packets gone meanwhile are skipped (their admission number is no
//!   longer the slot's) and swept out when they outnumber the slots.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use hashbrown::HashMap;

use crate::queue::{Links, Queue};

/// Which replacement policy an L1 uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    /// First in, first out.
    #[default]
    Fifo,
    /// Least recently used.
    Lru,
    /// S3-FIFO: small + main FIFO queues with a ghost queue.
    S3Fifo,
    /// NFD's priority FIFO: unsolicited, then stale, then fresh packets go first.
    PriorityFifo,
}

impl Policy {
    /// Every policy, for experiments and tests.
    pub const ALL: [Policy; 4] = [Policy::Fifo, Policy::Lru, Policy::S3Fifo, Policy::PriorityFifo];

    /// The policy's short name (`fifo`, `lru`, `s3-fifo`, `priority-fifo`).
    pub fn name(self) -> &'static str {
        match self {
            Policy::Fifo => "fifo",
            Policy::Lru => "lru",
            Policy::S3Fifo => "s3-fifo",
            Policy::PriorityFifo => "priority-fifo",
        }
    }
}

impl std::str::FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Policy::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| format!("unknown policy {s:?} (fifo, lru, s3-fifo, priority-fifo)"))
    }
}

/// How a packet came to be stored, which NFD's priority FIFO evicts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// An Interest asked for it (or it came back from the SSD tier).
    Solicited,
    /// Nothing asked for it (admitted by the unsolicited-Data policy).
    Unsolicited,
}

/// Which queue a slot is in (S3-FIFO's and priority FIFO's).
const IN_NONE: u8 = 0;
const IN_SMALL: u8 = 1;
const IN_MAIN: u8 = 2;
const IN_UNSOLICITED: u8 = 3;
const IN_STALE: u8 = 4;
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
    /// Priority FIFO: its unsolicited and stale queues (fresh packets are in `main`), and when
    /// each fresh packet goes stale.
    unsolicited: Queue,
    stale: Queue,
    aging: Aging,
}

impl Replacement {
    /// A policy over `slots` slots.
    pub(crate) fn new(policy: Policy, slots: u32) -> Self {
        let s3 = policy == Policy::S3Fifo;
        let queued = s3 || policy == Policy::PriorityFifo;
        Replacement {
            policy,
            links: Links::new(slots),
            main: Queue::new(),
            small: Queue::new(),
            queue_of: vec![IN_NONE; if queued { slots as usize } else { 0 }],
            freq: vec![0; if s3 { slots as usize } else { 0 }],
            ghost: Ghost::new(if s3 { slots as usize } else { 0 }),
            small_target: (slots / 10).max(1),
            unsolicited: Queue::new(),
            stale: Queue::new(),
            aging: Aging::new(if policy == Policy::PriorityFifo { slots } else { 0 }),
        }
    }

    /// A new entry, whose full-name hash is `hash`, now occupies `slot`: it arrived as
    /// `arrival` and stays fresh until `fresh_until_ms`, and the caller's clock reads `now_ms`
    /// (only priority FIFO looks at these three).
    pub(crate) fn admit(&mut self, slot: u32, hash: u64, arrival: Arrival, fresh_until_ms: u64, now_ms: u64) {
        match self.policy {
            Policy::Fifo | Policy::Lru => self.links.push_head(&mut self.main, slot),
            Policy::PriorityFifo => {
                self.age(now_ms);
                let queue = if arrival == Arrival::Unsolicited {
                    IN_UNSOLICITED
                } else if fresh_until_ms <= now_ms {
                    IN_STALE
                } else {
                    self.aging.schedule(slot, fresh_until_ms);
                    IN_MAIN
                };
                self.push(slot, queue);
            }
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

    /// Puts `slot` at the head of queue `queue` (priority FIFO's).
    fn push(&mut self, slot: u32, queue: u8) {
        let q = match queue {
            IN_UNSOLICITED => &mut self.unsolicited,
            IN_STALE => &mut self.stale,
            _ => &mut self.main,
        };
        self.links.push_head(q, slot);
        self.queue_of[slot as usize] = queue;
    }

    /// Priority FIFO: moves the fresh packets whose freshness ran out by `now_ms` to the stale
    /// queue, in the order they went stale.
    fn age(&mut self, now_ms: u64) {
        while let Some(slot) = self.aging.next_stale(now_ms) {
            if self.queue_of[slot as usize] == IN_MAIN {
                self.links.unlink(&mut self.main, slot);
                self.push(slot, IN_STALE);
            }
        }
    }

    /// `slot` was read.
    pub(crate) fn hit(&mut self, slot: u32) {
        match self.policy {
            Policy::Fifo | Policy::PriorityFifo => {}
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
            Policy::S3Fifo | Policy::PriorityFifo => {
                match self.queue_of[slot as usize] {
                    IN_SMALL => self.links.unlink(&mut self.small, slot),
                    IN_MAIN => self.links.unlink(&mut self.main, slot),
                    IN_UNSOLICITED => self.links.unlink(&mut self.unsolicited, slot),
                    IN_STALE => self.links.unlink(&mut self.stale, slot),
                    _ => {}
                }
                self.queue_of[slot as usize] = IN_NONE;
                self.aging.cancel(slot);
            }
        }
    }

    /// Chooses the slot to evict at `now_ms` (the caller's clock; only priority FIFO looks at
    /// it) and takes it out of the policy; `hash_of` gives a slot's full-name hash (for
    /// S3-FIFO's ghost). `None` when no slot is held.
    pub(crate) fn victim(&mut self, hash_of: impl Fn(u32) -> u64, now_ms: u64) -> Option<u32> {
        match self.policy {
            Policy::Fifo | Policy::Lru => self.links.pop_tail(&mut self.main),
            Policy::PriorityFifo => {
                self.age(now_ms);
                let slot = self
                    .links
                    .pop_tail(&mut self.unsolicited)
                    .or_else(|| self.links.pop_tail(&mut self.stale))
                    .or_else(|| self.links.pop_tail(&mut self.main))?;
                self.queue_of[slot as usize] = IN_NONE;
                self.aging.cancel(slot);
                Some(slot)
            }
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

/// Priority FIFO's schedule of fresh packets going stale: a min-heap of (stale time, admission
/// number, slot), and each slot's current admission number (0: none scheduled). An entry whose
/// number is no longer its slot's is stale itself and skipped.
#[derive(Debug, Clone)]
struct Aging {
    heap: BinaryHeap<Reverse<(u64, u64, u32)>>,
    admission: Vec<u64>,
    next: u64,
}

impl Aging {
    fn new(slots: u32) -> Self {
        Aging { heap: BinaryHeap::new(), admission: vec![0; slots as usize], next: 0 }
    }

    /// `slot` goes stale at `until_ms`.
    fn schedule(&mut self, slot: u32, until_ms: u64) {
        if self.heap.len() >= 2 * self.admission.len() + 64 {
            // Mostly entries of packets gone: keep the live ones.
            let admission = &self.admission;
            self.heap.retain(|&Reverse((_, n, s))| admission[s as usize] == n);
        }
        self.next += 1;
        self.admission[slot as usize] = self.next;
        self.heap.push(Reverse((until_ms, self.next, slot)));
    }

    /// `slot` is no longer scheduled.
    fn cancel(&mut self, slot: u32) {
        if let Some(n) = self.admission.get_mut(slot as usize) {
            *n = 0;
        }
    }

    /// The next slot gone stale by `now_ms`, if any (taken off the schedule).
    fn next_stale(&mut self, now_ms: u64) -> Option<u32> {
        while let Some(&Reverse((until, n, slot))) = self.heap.peek() {
            if until > now_ms {
                return None;
            }
            self.heap.pop();
            if self.admission[slot as usize] == n {
                self.admission[slot as usize] = 0;
                return Some(slot);
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
        std::iter::from_fn(|| r.victim(u64::from, 0)).collect()
    }

    /// NFD's priority FIFO: unsolicited packets go first, then stale ones in the order they went
    /// stale (those without freshness at admission, those whose freshness ran out at the time it
    /// did), then fresh ones oldest first; a hit changes nothing; a packet removed leaves its
    /// schedule behind.
    #[test]
    fn priority_fifo_evicts_unsolicited_then_stale_then_fresh() {
        let mut r = Replacement::new(Policy::PriorityFifo, 8);
        let fresh = Arrival::Solicited;
        r.admit(0, 0, fresh, 100, 0); // fresh until 100
        r.admit(1, 1, fresh, 0, 0); // no freshness: stale at once
        r.admit(2, 2, Arrival::Unsolicited, 1000, 0);
        r.admit(3, 3, fresh, 50, 0); // fresh until 50
        r.admit(4, 4, fresh, 1000, 0);
        r.admit(5, 5, fresh, 60, 0);
        r.forget(5); // gone before it goes stale
        r.hit(4);
        r.admit(6, 6, fresh, 70, 70); // stale at its admission, at 70: after 3 (50), before 0 (100)
        let order: Vec<u32> = std::iter::from_fn(|| r.victim(u64::from, 150)).collect();
        assert_eq!(order, [2, 1, 3, 6, 0, 4]);
        // Fresh packets, never stale: oldest first.
        for s in 0..3 {
            r.admit(s, 0, fresh, 1000, 200);
        }
        // Slot 1 refreshed (the store forgets the old packet, admits the new): newest now, and
        // its old schedule does not make it stale at 1000.
        r.forget(1);
        r.admit(1, 0, fresh, 2000, 200);
        assert_eq!(std::iter::from_fn(|| r.victim(u64::from, 1500)).collect::<Vec<_>>(), [0, 2, 1]);
    }

    #[test]
    fn fifo_ignores_hits_and_lru_does_not() {
        for (policy, expect) in [(Policy::Fifo, vec![0, 1, 2, 3]), (Policy::Lru, vec![1, 2, 3, 0])] {
            let mut r = Replacement::new(policy, 4);
            for s in 0..4 {
                r.admit(s, u64::from(s), Arrival::Solicited, 0, 0);
            }
            r.hit(0);
            assert_eq!(drain(&mut r), expect, "{policy:?}");
        }
    }

    #[test]
    fn s3fifo_keeps_reused_entries_and_remembers_ghosts() {
        let mut r = Replacement::new(Policy::S3Fifo, 10);
        for s in 0..10 {
            r.admit(s, 100 + u64::from(s), Arrival::Solicited, 0, 0);
        }
        // Slot 0 read twice: it survives the small queue and moves to main.
        r.hit(0);
        r.hit(0);
        let first = r.victim(|s| 100 + u64::from(s), 0).unwrap();
        assert_eq!(first, 1, "one-hit entries leave first");
        // Slot 1's hash is now a ghost: re-admitting it goes to main directly.
        r.admit(1, 101, Arrival::Solicited, 0, 0);
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
