//! Output ports: the (tree, interface) pairs a descriptor FIB entry forwards to, and sets of them.
//!
//! # Overview
//! TagNet routes on several trees, so a FIB entry maps a descriptor to a set of (tree, interface)
//! pairs. A router has few of them, so the FIB interns each pair as a dense [`PortId`] below
//! [`MAX_PORTS`] and a set of ports is a 256-bit bitmap ([`PortSet`]): the union that Find All
//! Subsets computes over every matching entry is three ORs per match, and the fan-out count is a
//! popcount.

/// The most distinct (tree, interface) pairs one FIB may hold.
pub const MAX_PORTS: usize = 256;

/// A dense index of a (tree, interface) pair in one FIB.
pub type PortId = u8;

/// A (tree, interface) pair: forward on `interface` along spanning tree `tree`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Port {
    /// The routing tree.
    pub tree: u16,
    /// The output interface.
    pub interface: u16,
}

/// A set of [`PortId`]s.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PortSet(pub [u64; 4]);

impl core::fmt::Debug for PortSet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl PortSet {
    /// No ports.
    pub const EMPTY: PortSet = PortSet([0; 4]);
    /// Every port.
    pub const ALL: PortSet = PortSet([u64::MAX; 4]);

    /// The set of `ids`.
    pub fn of(ids: impl IntoIterator<Item = PortId>) -> PortSet {
        let mut s = PortSet::EMPTY;
        for id in ids {
            s.insert(id);
        }
        s
    }

    /// Adds `id`.
    pub fn insert(&mut self, id: PortId) {
        self.0[usize::from(id) / 64] |= 1 << (id % 64);
    }

    /// Whether `id` is in the set.
    pub fn contains(&self, id: PortId) -> bool {
        self.0[usize::from(id) / 64] >> (id % 64) & 1 == 1
    }

    /// How many ports.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }

    /// `self ∪ other`.
    #[inline]
    pub fn union(&self, other: &PortSet) -> PortSet {
        PortSet([self.0[0] | other.0[0], self.0[1] | other.0[1], self.0[2] | other.0[2], self.0[3] | other.0[3]])
    }

    /// `self ∩ other`.
    #[inline]
    pub fn intersection(&self, other: &PortSet) -> PortSet {
        PortSet([self.0[0] & other.0[0], self.0[1] & other.0[1], self.0[2] & other.0[2], self.0[3] & other.0[3]])
    }

    /// Whether every port of `self` is in `other`.
    pub fn is_subset_of(&self, other: &PortSet) -> bool {
        self.intersection(other) == *self
    }

    /// The ports, ascending.
    pub fn iter(&self) -> impl Iterator<Item = PortId> + '_ {
        crate::bits::set_bits(&self.0).map(|p| p as PortId)
    }

    /// Adds ports of `other` (ascending) until the set holds `limit`: the fan-out rule "out ←
    /// out ∪ interfaces, up to |out| = k". Returns whether the set is now full.
    #[inline]
    pub fn union_up_to(&mut self, other: &PortSet, limit: usize) -> bool {
        let all = self.union(other);
        if all.len() <= limit {
            *self = all;
        } else {
            for id in other.iter() {
                if self.len() >= limit {
                    break;
                }
                self.insert(id);
            }
        }
        self.len() >= limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_union_stops_at_the_limit() {
        let mut s = PortSet::of([1, 200]);
        assert!(!s.union_up_to(&PortSet::of([3]), 4));
        assert_eq!(s, PortSet::of([1, 3, 200]));
        assert!(s.union_up_to(&PortSet::of([0, 5, 7]), 4));
        assert_eq!(s, PortSet::of([0, 1, 3, 200]));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 1, 3, 200]);
        assert!(PortSet::of([1]).is_subset_of(&s) && !PortSet::of([2]).is_subset_of(&s));
    }
}
