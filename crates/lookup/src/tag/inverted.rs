//! The inverted-index peer: bit position → the descriptors listed under it, the structure
//! databases use for set-containment queries (the paper's section 2.4).
//!
//! # Overview
//! A descriptor A ⊆ B must have *every* bit in B, so it suffices to list A under one of its bits
//! and, for a query B, read only the lists of B's bits. Each descriptor is listed under its least
//! popular bit across the FIB (the shortest lists win), the lists are stored contiguously
//! (descriptors grouped by list, offsets per bit), and each candidate is verified with the
//! 192-bit subset test. This is the strongest simple form of the index: the textbook form
//! (every descriptor under every bit, a counter per descriptor) reads each descriptor once per
//! bit it shares with the query instead of at most once.

use super::entries::EntryTable;
use super::{Descriptor, Fanout, Largest, PortSet, FILTER_BITS};
use crate::mem::huge_collect;

/// Descriptors grouped by their least popular bit.
#[derive(Debug, Clone)]
pub struct InvertedIndex {
    /// `start[p]..start[p + 1]` is list p.
    start: Vec<u32>,
    descriptors: Vec<Descriptor>,
    entries: EntryTable,
}

impl InvertedIndex {
    /// The index over `entries`.
    pub fn new<'a>(entries: impl Iterator<Item = (&'a Descriptor, &'a PortSet)> + Clone) -> Self {
        let mut count = [0u64; FILTER_BITS];
        for (d, _) in entries.clone() {
            d.positions().for_each(|p| count[p] += 1);
        }
        let mut listed: Vec<(u8, &Descriptor, &PortSet)> =
            entries.map(|(d, ports)| (d.positions().min_by_key(|&p| (count[p], p)).unwrap_or(0) as u8, d, ports)).collect();
        listed.sort_by_key(|e| e.0);
        let mut start = vec![0u32; FILTER_BITS + 1];
        for e in &listed {
            start[usize::from(e.0) + 1] += 1;
        }
        for p in 0..FILTER_BITS {
            start[p + 1] += start[p];
        }
        InvertedIndex {
            start,
            // On huge pages, as the compiled trie's vectors are (the comparison stays even).
            descriptors: huge_collect(listed.iter().map(|e| *e.1)),
            entries: EntryTable::new(listed.iter().map(|e| (e.1, e.2))),
        }
    }

    /// Bytes a query reads from: descriptors, weights, port sets and list offsets.
    pub fn memory_bytes(&self) -> usize {
        self.descriptors.len() * 24 + self.entries.memory_bytes() + self.start.len() * 4
    }

    /// Calls `f(i)` for each listed descriptor i ⊆ `q` until `f` returns false.
    fn for_each_match(&self, q: &Descriptor, f: &mut dyn FnMut(usize) -> bool) {
        for p in q.positions() {
            for i in self.start[p] as usize..self.start[p + 1] as usize {
                if self.descriptors[i].is_subset_of(q) && !f(i) {
                    return;
                }
            }
        }
    }

    /// Find All Subsets (see [`super::CompiledFib::fas`]).
    pub fn fas(&self, q: &Descriptor, fanout: Fanout, allowed: &PortSet) -> PortSet {
        self.entries.fas(&mut |f| self.for_each_match(q, f), fanout, allowed)
    }

    /// Find Largest Subset: the first heaviest match in list order.
    pub fn fls(&self, q: &Descriptor) -> Option<Largest> {
        self.entries.fls(&mut |f| self.for_each_match(q, f))
    }

    /// Every answer Find Largest Subset may rightly give for `q` (see
    /// [`super::LinearScan::fls_answers`]).
    pub fn fls_answers(&self, q: &Descriptor) -> (u32, Vec<PortSet>) {
        self.entries.fls_answers(&mut |f| self.for_each_match(q, f))
    }
}
