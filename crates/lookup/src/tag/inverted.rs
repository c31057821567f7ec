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

use hashbrown::HashMap;

use super::{Descriptor, Fanout, Largest, PortSet, FILTER_BITS, MAX_PORTS};

/// Descriptors grouped by their least popular bit.
#[derive(Debug, Clone)]
pub struct InvertedIndex {
    /// `start[p]..start[p + 1]` is list p.
    start: Vec<u32>,
    descriptors: Vec<Descriptor>,
    weight: Vec<u8>,
    set: Vec<u32>,
    port_sets: Vec<PortSet>,
}

impl InvertedIndex {
    /// The index over `entries`.
    pub fn new<'a>(entries: impl Iterator<Item = (&'a Descriptor, &'a PortSet)> + Clone) -> Self {
        let mut count = [0u64; FILTER_BITS];
        for (d, _) in entries.clone() {
            d.positions().for_each(|p| count[p] += 1);
        }
        let mut ids: HashMap<PortSet, u32> = HashMap::new();
        let mut port_sets = Vec::new();
        let mut listed: Vec<(u8, Descriptor, u32)> = entries
            .map(|(d, ports)| {
                let rarest = d.positions().min_by_key(|&p| (count[p], p)).unwrap_or(0) as u8;
                let next = port_sets.len() as u32;
                let id = *ids.entry(*ports).or_insert(next);
                if id == next {
                    port_sets.push(*ports);
                }
                (rarest, *d, id)
            })
            .collect();
        listed.sort_unstable_by_key(|e| e.0);
        let mut start = vec![0u32; FILTER_BITS + 1];
        for e in &listed {
            start[usize::from(e.0) + 1] += 1;
        }
        for p in 0..FILTER_BITS {
            start[p + 1] += start[p];
        }
        InvertedIndex {
            start,
            weight: listed.iter().map(|e| e.1.weight() as u8).collect(),
            set: listed.iter().map(|e| e.2).collect(),
            descriptors: listed.into_iter().map(|e| e.1).collect(),
            port_sets,
        }
    }

    /// Bytes a query reads from: descriptors, weights, set ids, offsets and port sets.
    pub fn memory_bytes(&self) -> usize {
        self.descriptors.len() * (24 + 1 + 4) + self.start.len() * 4 + self.port_sets.len() * core::mem::size_of::<PortSet>()
    }

    /// Calls `f(i)` for each listed descriptor i ⊆ `q` until `f` returns false.
    fn for_each_match(&self, q: &Descriptor, mut f: impl FnMut(usize) -> bool) {
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
        let limit = fanout.get();
        let mut out = PortSet::EMPTY;
        self.for_each_match(q, |i| {
            let ports = self.port_sets[self.set[i] as usize].intersection(allowed);
            if limit >= MAX_PORTS {
                out = out.union(&ports);
                true
            } else {
                !out.union_up_to(&ports, limit)
            }
        });
        out
    }

    /// Find Largest Subset: the first heaviest match in list order.
    pub fn fls(&self, q: &Descriptor) -> Option<Largest> {
        let mut best: Option<(u8, u32)> = None;
        self.for_each_match(q, |i| {
            if best.is_none_or(|(w, _)| self.weight[i] > w) {
                best = Some((self.weight[i], self.set[i]));
            }
            true
        });
        best.map(|(w, s)| Largest { weight: u32::from(w), ports: self.port_sets[s as usize] })
    }

    /// Every answer Find Largest Subset may rightly give for `q` (see
    /// [`super::LinearScan::fls_answers`]).
    pub fn fls_answers(&self, q: &Descriptor) -> (u32, Vec<PortSet>) {
        let mut best = 0u8;
        let mut sets = Vec::new();
        self.for_each_match(q, |i| {
            let w = self.weight[i];
            if w > best {
                best = w;
                sets.clear();
            }
            if w == best {
                sets.push(self.port_sets[self.set[i] as usize]);
            }
            true
        });
        (u32::from(best), sets)
    }
}
