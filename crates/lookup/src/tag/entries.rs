//! What the exhaustive matchers (the linear scan and the inverted index) keep per descriptor —
//! its weight and port set — and the answers they build from a stream of matching descriptors.
//!
//! # Overview
//! Both peers find matches their own way and report each as an index into an [`EntryTable`];
//! Find All Subsets, Find Largest Subset and the oracle's "every right FLS answer" are the same
//! fold over those indices, written once here.

use hashbrown::HashMap;

use super::{Descriptor, Fanout, Largest, PortSet, MAX_PORTS};

/// A source of matches: calls its argument with each matching index until it returns false.
pub(super) type Matches<'a> = &'a mut dyn FnMut(&mut dyn FnMut(usize) -> bool);

/// Weight and port set of each descriptor, by index; port sets stored once.
#[derive(Debug, Clone, Default)]
pub(super) struct EntryTable {
    weight: Vec<u8>,
    set: Vec<u32>,
    port_sets: Vec<PortSet>,
}

impl EntryTable {
    /// The table of `entries`, in their order.
    pub(super) fn new<'a>(entries: impl Iterator<Item = (&'a Descriptor, &'a PortSet)>) -> Self {
        let mut t = EntryTable::default();
        let mut ids: HashMap<PortSet, u32> = HashMap::new();
        for (d, ports) in entries {
            t.weight.push(d.weight() as u8);
            let next = t.port_sets.len() as u32;
            let id = *ids.entry(*ports).or_insert(next);
            if id == next {
                t.port_sets.push(*ports);
            }
            t.set.push(id);
        }
        t
    }

    /// Entries.
    pub(super) fn len(&self) -> usize {
        self.weight.len()
    }

    /// Bytes: weight and set id per entry, plus the port sets.
    pub(super) fn memory_bytes(&self) -> usize {
        self.len() * 5 + self.port_sets.len() * core::mem::size_of::<PortSet>()
    }

    fn ports(&self, i: usize) -> &PortSet {
        &self.port_sets[self.set[i] as usize]
    }

    /// Find All Subsets over `matches` (see [`super::CompiledFib::fas`]).
    pub(super) fn fas(&self, matches: Matches<'_>, fanout: Fanout, allowed: &PortSet) -> PortSet {
        let limit = fanout.get();
        let mut out = PortSet::EMPTY;
        matches(&mut |i| {
            let ports = self.ports(i).intersection(allowed);
            if limit >= MAX_PORTS {
                out = out.union(&ports);
                true
            } else {
                !out.union_up_to(&ports, limit)
            }
        });
        out
    }

    /// Find Largest Subset over `matches`: the first heaviest.
    pub(super) fn fls(&self, matches: Matches<'_>) -> Option<Largest> {
        let mut best: Option<usize> = None;
        matches(&mut |i| {
            if best.is_none_or(|b| self.weight[i] > self.weight[b]) {
                best = Some(i);
            }
            true
        });
        best.map(|b| Largest { weight: u32::from(self.weight[b]), ports: *self.ports(b) })
    }

    /// Every answer Find Largest Subset may rightly give: the greatest weight among `matches`
    /// and the port sets of all matches of that weight (empty when nothing matches).
    pub(super) fn fls_answers(&self, matches: Matches<'_>) -> (u32, Vec<PortSet>) {
        let mut best = 0u8;
        let mut sets = Vec::new();
        matches(&mut |i| {
            let w = self.weight[i];
            if w > best {
                best = w;
                sets.clear();
            }
            if w == best {
                sets.push(*self.ports(i));
            }
            true
        });
        (u32::from(best), sets)
    }
}
