//! Name-FIB peers: the prefix-seeking strategies of other NDN forwarders, on hashbrown tables
//! with the same prefix hash as nexthop's FIB.
//!
//! - [`LongestFirst`]: all routes in one hash table; a lookup probes the name's prefixes from
//!   min(name length, deepest route) down to one component and stops at the first route (NFD's
//!   name tree and the CCNx prototype).
//! - [`StartAtM`]: the two-stage seek of So et al. (ANCS'13), used by NDN-DPDK: probe first the
//!   prefix of M components, M the most populated route length; routes longer than M leave a
//!   *virtual* entry at M that records the deepest route below it (MD) and the answer it
//!   inherits; on a hit at M probe from min(MD, name length) down to M + 1, on a miss from M − 1
//!   down to 1.
//!
//! Both count one probe per hash-table lookup.

use hashbrown::HashTable;
use nexthop_lookup::name::{NextHopSets, NextHops, NextHopsId, PrefixHasher, PrefixHashes, Strategy, MAX_LEVELS};

struct Entry {
    key: Box<[u8]>,
    /// Set id of the route (0 = virtual entry without its own route).
    own: u32,
    /// Answer a virtual entry inherits (start-at-m), else equal to `own`.
    answer: u32,
    /// Deepest route below this prefix (start-at-m, level M only).
    deepest_below: u8,
}

fn hasher() -> PrefixHasher {
    PrefixHasher::new(Strategy::VerifyEach, (0x5eed, 0))
}

/// What hashbrown calls to rehash an entry when the table grows.
fn rehash(hasher: PrefixHasher) -> impl Fn(&Entry) -> u64 {
    move |e| hasher.hash_name(&e.key)
}

#[inline(always)]
fn probe<'t>(table: &'t HashTable<Entry>, value: &[u8], ph: &PrefixHashes, level: usize, probes: &mut u32) -> Option<&'t Entry> {
    *probes += 1;
    let p = &value[..ph.ends[level - 1] as usize];
    table.find(ph.hash(level), |e| *e.key == *p)
}

/// NFD/CCNx-style longest-first probing.
pub struct LongestFirst {
    hasher: PrefixHasher,
    table: HashTable<Entry>,
    sets: NextHopSets,
    deepest: usize,
}

impl core::fmt::Debug for LongestFirst {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("LongestFirst").field("routes", &self.table.len()).finish_non_exhaustive()
    }
}

impl Default for LongestFirst {
    fn default() -> Self {
        LongestFirst { hasher: hasher(), table: HashTable::new(), sets: NextHopSets::default(), deepest: 0 }
    }
}

impl LongestFirst {
    /// Adds or replaces a route (name TLV value).
    pub fn insert(&mut self, value: &[u8], hops: &NextHops) {
        let mut ph = PrefixHashes::default();
        self.hasher.hash_prefixes(value, MAX_LEVELS, &mut ph);
        let id = self.sets.acquire(hops).get();
        let hash = ph.hash(ph.len);
        match self.table.find_mut(hash, |e| *e.key == *value) {
            Some(e) => {
                self.sets.release(id_of(e.own));
                e.own = id;
                e.answer = id;
            }
            None => {
                self.table.insert_unique(hash, Entry { key: value.into(), own: id, answer: id, deepest_below: 0 }, rehash(self.hasher));
            }
        }
        self.deepest = self.deepest.max(ph.len);
    }

    /// Gives back the table's spare capacity (after a bulk load, as nexthop's FIB does).
    pub fn shrink_to_fit(&mut self) {
        self.table.shrink_to_fit(rehash(self.hasher));
    }

    /// Longest-prefix match; also returns the probes made.
    #[inline]
    pub fn lookup(&self, value: &[u8]) -> (Option<&NextHops>, u32) {
        let mut ph = PrefixHashes::default();
        self.hasher.hash_prefixes(value, self.deepest, &mut ph);
        let mut probes = 0;
        for level in (1..=ph.len).rev() {
            if let Some(e) = probe(&self.table, value, &ph, level, &mut probes) {
                return (Some(self.sets.get(id_of(e.answer))), probes);
            }
        }
        (None, probes)
    }
}

/// So et al.'s two-stage seek starting at the most populated level.
pub struct StartAtM {
    hasher: PrefixHasher,
    table: HashTable<Entry>,
    sets: NextHopSets,
    m: usize,
    deepest: usize,
}

impl core::fmt::Debug for StartAtM {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StartAtM").field("m", &self.m).field("entries", &self.table.len()).finish_non_exhaustive()
    }
}

impl StartAtM {
    /// An empty table that will start its searches at level `m` (pick it with
    /// [`Self::most_populated`] from the route-length histogram).
    pub fn with_m(m: usize, deepest: usize) -> Self {
        StartAtM { hasher: hasher(), table: HashTable::new(), sets: NextHopSets::default(), m: m.max(1), deepest }
    }

    /// The most populated route length in `per_level` (index = components); ties go to the
    /// shorter length.
    pub fn most_populated(per_level: &[usize]) -> usize {
        (1..per_level.len()).max_by_key(|&l| (per_level[l], std::cmp::Reverse(l))).unwrap_or(1)
    }

    /// Adds a route (name TLV value). Call [`Self::finish`] after the last one.
    pub fn insert(&mut self, value: &[u8], hops: &NextHops) {
        let hasher = self.hasher;
        let mut ph = PrefixHashes::default();
        hasher.hash_prefixes(value, MAX_LEVELS, &mut ph);
        let id = self.sets.acquire(hops).get();
        let len = ph.len;
        let hash = ph.hash(len);
        match self.table.find_mut(hash, |e| *e.key == *value) {
            Some(e) => {
                if e.own != 0 {
                    self.sets.release(id_of(e.own));
                }
                e.own = id;
            }
            None => {
                self.table.insert_unique(hash, Entry { key: value.into(), own: id, answer: 0, deepest_below: 0 }, rehash(hasher));
            }
        }
        let m = self.m;
        if len > m {
            let key = &value[..ph.ends[m - 1] as usize];
            let hash = ph.hash(m);
            match self.table.find_mut(hash, |e| *e.key == *key) {
                Some(e) => e.deepest_below = e.deepest_below.max(len as u8),
                None => {
                    self.table.insert_unique(hash, Entry { key: key.into(), own: 0, answer: 0, deepest_below: len as u8 }, rehash(hasher));
                }
            }
        }
        self.deepest = self.deepest.max(len);
    }

    /// Computes the answers: a route answers itself; a virtual entry inherits its longest
    /// shorter route.
    pub fn finish(&mut self) {
        let (m, hasher) = (self.m, self.hasher);
        let mut inherited = Vec::new();
        for e in self.table.iter() {
            if e.own == 0 {
                let mut ph = PrefixHashes::default();
                hasher.hash_prefixes(&e.key, m, &mut ph);
                let mut probes = 0;
                let answer =
                    (1..m).rev().find_map(|l| probe(&self.table, &e.key, &ph, l, &mut probes).filter(|e| e.own != 0)).map_or(0, |e| e.own);
                inherited.push((e.key.clone(), ph.hash(m), answer));
            }
        }
        for e in self.table.iter_mut() {
            if e.own != 0 {
                e.answer = e.own;
            }
        }
        for (key, hash, answer) in inherited {
            if let Some(e) = self.table.find_mut(hash, |e| e.key == key) {
                e.answer = answer;
            }
        }
    }

    /// The starting level M.
    pub fn m(&self) -> usize {
        self.m
    }

    /// Gives back the table's spare capacity (after a bulk load, as nexthop's FIB does).
    pub fn shrink_to_fit(&mut self) {
        self.table.shrink_to_fit(rehash(self.hasher));
    }

    /// Longest-prefix match; also returns the probes made.
    #[inline]
    pub fn lookup(&self, value: &[u8]) -> (Option<&NextHops>, u32) {
        let mut ph = PrefixHashes::default();
        self.hasher.hash_prefixes(value, self.deepest, &mut ph);
        let mut probes = 0;
        let n = ph.len;
        let below = if n >= self.m {
            match probe(&self.table, value, &ph, self.m, &mut probes) {
                Some(at_m) => {
                    for level in (self.m + 1..=n.min(at_m.deepest_below as usize)).rev() {
                        if let Some(e) = probe(&self.table, value, &ph, level, &mut probes) {
                            return (self.answer(e.answer), probes);
                        }
                    }
                    return (self.answer(at_m.answer), probes);
                }
                None => self.m - 1,
            }
        } else {
            n
        };
        for level in (1..=below).rev() {
            if let Some(e) = probe(&self.table, value, &ph, level, &mut probes) {
                return (self.answer(e.answer), probes);
            }
        }
        (None, probes)
    }

    fn answer(&self, id: u32) -> Option<&NextHops> {
        (id != 0).then(|| self.sets.get(id_of(id)))
    }
}

fn id_of(raw: u32) -> NextHopsId {
    NextHopsId::from_raw(raw).expect("non-zero set id")
}

#[cfg(test)]
mod tests {
    use super::*;
    use nexthop_lookup::name::ReferenceFib;
    use nexthop_wire::Name;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn peers_agree_with_the_reference() {
        let mut rng = SmallRng::seed_from_u64(5);
        let comps = ["a", "b", "c", "d"];
        let random_name = |rng: &mut SmallRng, max: usize| {
            let mut n = Name::new();
            for _ in 0..rng.gen_range(1..=max) {
                n = n.with_generic(comps[rng.gen_range(0..comps.len())]);
            }
            n
        };
        for _ in 0..50 {
            let routes: Vec<(Name, NextHops)> =
                (0..rng.gen_range(1..40)).map(|i| (random_name(&mut rng, 7), NextHops::single(i, 0))).collect();
            let mut reference = ReferenceFib::new();
            let mut lf = LongestFirst::default();
            for (n, h) in &routes {
                reference.insert(&n.as_view(), h.clone());
                lf.insert(n.value(), h);
            }
            let mut per_level = [0usize; 8];
            for (n, _) in &routes {
                per_level[n.len()] += 1;
            }
            let mut sm = StartAtM::with_m(StartAtM::most_populated(&per_level), 0);
            for (n, h) in &routes {
                sm.insert(n.value(), h);
            }
            sm.finish();
            for _ in 0..50 {
                let q = random_name(&mut rng, 10);
                let want = reference.lookup(&q.as_view());
                assert_eq!(lf.lookup(q.value()).0, want, "longest-first {q}");
                assert_eq!(sm.lookup(q.value()).0, want, "start-at-m {q} (m = {})", sm.m());
            }
        }
    }
}
