//! The L1's exact-name index: an open-addressing table of 64-bit entries with linear probing,
//! sized once for the store's fixed capacity.
//!
//! An entry is `tag << 32 | (slot + 1)` (0 = empty): the tag is the upper 32 bits of the name
//! hash, the home position its lower bits. The table holds at least twice as many entries as the
//! store has slots, so a probe sequence is short (about 1.5 entries on a hit) and usually
//! within the home cache line — which [`NameIndex::prefetch`] brings in ahead of a batch.
//! Removal shifts the following entries of the run back (no tombstones), so probe sequences
//! never grow with churn. Tag matches are candidates; the caller verifies the name.
//!
//! Why not hashbrown: its probe cannot be split into "prefetch the bucket" and "probe later",
//! which is what lets a batch overlap its cache misses.

use nexthop_lookup::mem::{advise_huge_pages, prefetch};

/// Open-addressing index from name hash to slot.
#[derive(Debug, Clone)]
pub(crate) struct NameIndex {
    entries: Vec<u64>,
    mask: usize,
    len: usize,
}

fn tag(hash: u64) -> u64 {
    hash >> 32
}

impl NameIndex {
    /// An index for up to `capacity` slots.
    pub(crate) fn new(capacity: u32) -> Self {
        let size = (2 * capacity as usize).next_power_of_two().max(8);
        let entries = vec![0u64; size];
        advise_huge_pages(&entries);
        NameIndex { entries, mask: size - 1, len: 0 }
    }

    /// Entries held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn home(&self, hash: u64) -> usize {
        hash as usize & self.mask
    }

    /// Brings the home cache line of `hash` towards the CPU.
    pub(crate) fn prefetch(&self, hash: u64) {
        prefetch(&self.entries[self.home(hash)]);
    }

    /// The first slot whose tag matches `hash` and that `is_it` accepts.
    pub(crate) fn find(&self, hash: u64, mut is_it: impl FnMut(u32) -> bool) -> Option<u32> {
        let t = tag(hash);
        let mut i = self.home(hash);
        loop {
            let e = self.entries[i];
            if e == 0 {
                return None;
            }
            if e >> 32 == t {
                let slot = (e as u32).wrapping_sub(1);
                if is_it(slot) {
                    return Some(slot);
                }
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Adds `slot` under `hash` (the caller knows it is not there yet).
    pub(crate) fn insert(&mut self, hash: u64, slot: u32) {
        debug_assert!(self.len < self.entries.len() / 2 + 1, "sized for the store's capacity");
        let mut i = self.home(hash);
        while self.entries[i] != 0 {
            i = (i + 1) & self.mask;
        }
        self.entries[i] = tag(hash) << 32 | u64::from(slot + 1);
        self.len += 1;
    }

    /// Removes `slot` (stored under `hash`); `hash_of` gives any slot's full hash, to move the
    /// entries after it back towards their homes. Whether it was there.
    pub(crate) fn remove(&mut self, hash: u64, slot: u32, hash_of: impl Fn(u32) -> u64) -> bool {
        let want = tag(hash) << 32 | u64::from(slot + 1);
        let mut i = self.home(hash);
        loop {
            match self.entries[i] {
                0 => return false,
                e if e == want => break,
                _ => i = (i + 1) & self.mask,
            }
        }
        // Backward-shift deletion: pull later entries of the run into the hole when the hole
        // lies between their home and where they sit.
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let e = self.entries[j];
            if e == 0 {
                break;
            }
            let home = self.home(hash_of((e as u32).wrapping_sub(1)));
            let dist_home = j.wrapping_sub(home) & self.mask;
            let dist_hole = j.wrapping_sub(hole) & self.mask;
            if dist_home >= dist_hole {
                self.entries[hole] = e;
                hole = j;
            }
        }
        self.entries[hole] = 0;
        self.len -= 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Against a HashMap, with hashes crowded into few home positions so runs wrap and shift.
        #[test]
        fn matches_a_map(ops in proptest::collection::vec((any::<bool>(), 0u32..40, 0u64..6), 1..300)) {
            let mut idx = NameIndex::new(40);
            let mut hashes: HashMap<u32, u64> = HashMap::new();
            for (add, slot, h) in ops {
                // Low bits pick one of 6 homes near the end of the table; the tag separates names.
                let hash = (u64::from(slot) << 32) | (idx.mask as u64 - h);
                if add {
                    if let std::collections::hash_map::Entry::Vacant(v) = hashes.entry(slot) {
                        v.insert(hash);
                        idx.insert(hash, slot);
                    }
                } else {
                    let stored = hashes.remove(&slot);
                    let h2 = hashes.clone();
                    let removed = idx.remove(stored.unwrap_or(hash), slot, |s| *h2.get(&s).unwrap_or(&0));
                    prop_assert_eq!(removed, stored.is_some());
                }
                prop_assert_eq!(idx.len(), hashes.len());
                for (&s, &h) in &hashes {
                    prop_assert_eq!(idx.find(h, |c| c == s), Some(s));
                }
            }
        }
    }
}
