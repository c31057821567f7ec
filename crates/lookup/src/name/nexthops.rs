//! Forwarding information: a small set of next hops (face, cost), interned.
//!
//! A FIB with millions of prefixes has few distinct next-hop sets (a router has tens of faces),
//! so sets are stored once in [`NextHopSets`] and the tables hold a 32-bit [`NextHopsId`]. Ids are
//! reference-counted by the routes that use them and reused after the last one goes.

use hashbrown::HashMap;

/// One next hop: an outgoing face and its routing cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NextHop {
    /// The face id.
    pub face: u32,
    /// Routing cost; lower is preferred.
    pub cost: u32,
}

/// A set of next hops, one per face, sorted by (cost, face).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct NextHops {
    hops: Vec<NextHop>,
}

impl NextHops {
    /// A set from any list of hops; a face listed twice keeps its lowest cost.
    pub fn new(hops: impl IntoIterator<Item = NextHop>) -> Self {
        let mut hops: Vec<NextHop> = hops.into_iter().collect();
        hops.sort_by_key(|h| (h.face, h.cost));
        hops.dedup_by_key(|h| h.face);
        hops.sort_by_key(|h| (h.cost, h.face));
        NextHops { hops }
    }

    /// A set with one hop.
    pub fn single(face: u32, cost: u32) -> Self {
        NextHops { hops: vec![NextHop { face, cost }] }
    }

    /// The hops, cheapest first.
    pub fn hops(&self) -> &[NextHop] {
        &self.hops
    }

    /// The cheapest hop.
    pub fn best(&self) -> Option<NextHop> {
        self.hops.first().copied()
    }

    /// Number of hops.
    pub fn len(&self) -> usize {
        self.hops.len()
    }

    /// Whether the set has no hop.
    pub fn is_empty(&self) -> bool {
        self.hops.is_empty()
    }

    /// Heap bytes this set holds.
    pub fn heap_bytes(&self) -> usize {
        self.hops.capacity() * core::mem::size_of::<NextHop>()
    }
}

/// Identifies an interned next-hop set. Id 0 is never a set: it means "no route".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NextHopsId(pub(crate) u32);

impl NextHopsId {
    /// The raw id (never 0).
    pub fn get(self) -> u32 {
        self.0
    }

    /// The id with raw value `raw`, if not 0 (for structures that store ids as `u32`).
    pub fn from_raw(raw: u32) -> Option<Self> {
        (raw != 0).then_some(NextHopsId(raw))
    }
}

/// The interning table of next-hop sets.
#[derive(Debug, Clone)]
pub struct NextHopSets {
    /// Slot `i` holds the set with id `i` and how many routes use it; slot 0 is unused.
    sets: Vec<(NextHops, u32)>,
    index: HashMap<NextHops, u32>,
    free: Vec<u32>,
}

impl Default for NextHopSets {
    fn default() -> Self {
        NextHopSets { sets: vec![(NextHops::default(), 0)], index: HashMap::new(), free: Vec::new() }
    }
}

impl NextHopSets {
    /// Takes one reference to `set`, interning it if new.
    pub fn acquire(&mut self, set: &NextHops) -> NextHopsId {
        if let Some(&id) = self.index.get(set) {
            self.sets[id as usize].1 += 1;
            return NextHopsId(id);
        }
        let id = match self.free.pop() {
            Some(id) => {
                self.sets[id as usize] = (set.clone(), 1);
                id
            }
            None => {
                self.sets.push((set.clone(), 1));
                (self.sets.len() - 1) as u32
            }
        };
        self.index.insert(set.clone(), id);
        NextHopsId(id)
    }

    /// Drops one reference to `id`, freeing the set after the last.
    pub fn release(&mut self, id: NextHopsId) {
        let slot = &mut self.sets[id.0 as usize];
        debug_assert!(slot.1 > 0, "release of a free next-hop set");
        slot.1 -= 1;
        if slot.1 == 0 {
            let set = core::mem::take(&mut slot.0);
            self.index.remove(&set);
            self.free.push(id.0);
        }
    }

    /// The set with id `id`.
    #[inline]
    pub fn get(&self, id: NextHopsId) -> &NextHops {
        &self.sets[id.0 as usize].0
    }

    /// Number of distinct sets in use.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no set is in use.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Bytes this table allocates (slots, index and the sets' own vectors, twice: slot and key).
    pub fn heap_bytes(&self) -> usize {
        let per_set: usize = self.sets.iter().map(|(s, _)| s.heap_bytes()).sum();
        self.sets.capacity() * core::mem::size_of::<(NextHops, u32)>()
            + self.index.allocation_size()
            + 2 * per_set
            + self.free.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_are_sorted_and_deduplicated() {
        let s = NextHops::new([NextHop { face: 3, cost: 10 }, NextHop { face: 1, cost: 20 }, NextHop { face: 3, cost: 5 }]);
        assert_eq!(s.hops(), &[NextHop { face: 3, cost: 5 }, NextHop { face: 1, cost: 20 }]);
        assert_eq!(s.best(), Some(NextHop { face: 3, cost: 5 }));
    }

    #[test]
    fn interning_shares_and_frees() {
        let mut t = NextHopSets::default();
        let a = t.acquire(&NextHops::single(1, 0));
        let b = t.acquire(&NextHops::single(1, 0));
        let c = t.acquire(&NextHops::single(2, 0));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a.get(), 0);
        t.release(a);
        assert_eq!(t.len(), 2);
        t.release(b);
        assert_eq!(t.len(), 1);
        let d = t.acquire(&NextHops::single(9, 9));
        assert_eq!(d, a, "freed id is reused");
        assert_eq!(t.get(d), &NextHops::single(9, 9));
    }
}
