//! Level pulling (ANCS'15 §4): a small cache-resident trie of prefixes with many children.
//!
//! Overview. In URL-like FIBs a few prefixes have thousands of next-level suffixes
//! (`/com/youtube/user/…`). Level pulling keeps the prefixes with more than T distinct next
//! components (the *pulled* prefixes, a few hundred to a few thousand) in a small map that stays
//! in cache, and makes their one-longer extensions the first table a lookup reads:
//!
//! 1. find the longest pulled prefix p (j components) of the name in the map (no DRAM access);
//! 2. probe level j + 1 for the name's prefix of j + 1 components:
//!    - miss: the answer is p's own inherited answer;
//!    - a leaf: its answer, after one probe;
//!    - otherwise continue the binary search from the root, where every level up to j + 1 on the
//!      way is already known to match and costs no probe.
//!
//! For a miss to be conclusive, every route R under p with more than j + 1 components leaves an
//! extra marker at level j + 1 (a *pull marker*, reference-counted like any marker), and p's own
//! string is held as a marker so its inherited answer is kept current by the FIB's ordinary
//! propagation. The pulled set is computed when pulling is enabled; routes added or removed later
//! keep their pull markers in step, and re-enabling recomputes the set.
//!
//! The paper evaluated the idea by simulation (Table 4); here it is a real lookup path, measured
//! by the `name-fib` experiment. A lookup through a pulled prefix whose extension is not a leaf
//! can read one more bucket than the plain search (the probe at j + 1 plus the probes below the
//! deepest known level): the experiment reports `max_probes` for it separately.

use hashbrown::HashMap;

use super::hash::{PrefixHashes, MAX_LEVELS};
use super::table::FpEntry;

/// What level pulling needs of the FIB it serves (`super::fib::NameFib` implements it), so that
/// this module does not depend on the FIB's.
pub(crate) trait PulledFib {
    /// The prefix hashes of `value`'s first `levels` components.
    fn hash(&self, value: &[u8], levels: usize) -> PrefixHashes;
    /// The fingerprint entry of the prefix of `value` at `level`, where there is one.
    fn holder(&self, level: usize, ph: &PrefixHashes, value: &[u8]) -> Option<FpEntry>;
    /// Puts a marker for the prefix of `value` at `level` (counted: one per call).
    fn add_marker(&mut self, value: &[u8], level: usize);
    /// Takes back a marker [`PulledFib::add_marker`] put.
    fn drop_marker(&mut self, value: &[u8], level: usize);
    /// The names of every route, in name order.
    fn route_names(&self) -> impl Iterator<Item = Vec<u8>> + '_;
}

/// One pulled prefix.
#[derive(Debug, Clone)]
struct Pulled {
    bytes: Box<[u8]>,
    level: usize,
    /// The fingerprint entry holding the prefix's string (its slot carries the answer). Entries
    /// never move and the pulling's own marker reference keeps the string alive, so this stays
    /// valid until teardown; a rebuild of the FIB rebuilds the pulling too.
    holder: FpEntry,
}

/// The level-pulling trie of a name FIB (what it needs of the FIB: `PulledFib`).
#[derive(Debug, Clone)]
pub struct LevelPulling {
    threshold: usize,
    /// Pulled prefixes by prefix hash (the FIB's hash).
    pulled: HashMap<u64, Pulled>,
    /// Bit `j` set if some pulled prefix has `j` components.
    levels: u64,
}

impl LevelPulling {
    /// The threshold T it was built with.
    pub fn threshold(&self) -> usize {
        self.threshold
    }

    /// Number of pulled prefixes (the size of the cache-resident structure).
    pub fn len(&self) -> usize {
        self.pulled.len()
    }

    /// Whether nothing is pulled.
    pub fn is_empty(&self) -> bool {
        self.pulled.is_empty()
    }

    /// Bytes it allocates.
    pub fn heap_bytes(&self) -> usize {
        self.pulled.allocation_size() + self.pulled.values().map(|p| p.bytes.len()).sum::<usize>()
    }

    /// The longest pulled prefix of the name, as (components, holder of its string).
    #[inline(always)]
    pub(crate) fn longest(&self, value: &[u8], ph: &PrefixHashes) -> Option<(usize, FpEntry)> {
        let mut levels = self.levels & mask_upto(ph.len);
        while levels != 0 {
            let j = 63 - levels.leading_zeros() as usize;
            levels &= !(1 << j);
            if let Some(p) = self.pulled_at(value, ph, j) {
                return Some((j, p.holder));
            }
        }
        None
    }

    /// The pulled prefix of `j` components that the name starts with, if any.
    #[inline(always)]
    fn pulled_at(&self, value: &[u8], ph: &PrefixHashes, j: usize) -> Option<&Pulled> {
        self.pulled.get(&ph.hash(j)).filter(|p| p.level == j && *p.bytes == value[..ph.ends[j - 1] as usize])
    }

    /// Every pulled prefix the name extends, by components.
    fn all(&self, value: &[u8], ph: &PrefixHashes) -> Vec<usize> {
        (1..=ph.len.min(63)).filter(|&j| self.levels & (1 << j) != 0 && self.pulled_at(value, ph, j).is_some()).collect()
    }

    /// Computes the pulled prefixes of `fib` for threshold `t` and installs their markers.
    pub(crate) fn build(fib: &mut impl PulledFib, t: usize) -> Self {
        let candidates = prefixes_with_many_children(fib, t);
        let mut pulling = LevelPulling { threshold: t, pulled: HashMap::new(), levels: 0 };
        for (bytes, level) in candidates {
            let ph = fib.hash(&bytes, level);
            let hash = ph.hash(level);
            if pulling.pulled.contains_key(&hash) {
                continue; // a 64-bit hash collision: leave the second one unpulled (still correct)
            }
            fib.add_marker(&bytes, level);
            let holder = fib.holder(level, &ph, &bytes).expect("pulled prefix was just marked");
            pulling.pulled.insert(hash, Pulled { bytes: bytes.into(), level, holder });
            pulling.levels |= 1 << level;
        }
        let routes: Vec<Vec<u8>> = fib.route_names().collect();
        for r in &routes {
            pulling.route_added(fib, r);
        }
        pulling
    }

    /// Drops every marker this pulling added.
    pub(crate) fn teardown(self, fib: &mut impl PulledFib) {
        let routes: Vec<Vec<u8>> = fib.route_names().collect();
        for r in &routes {
            self.route_removed(fib, r);
        }
        for p in self.pulled.values() {
            fib.drop_marker(&p.bytes, p.level);
        }
    }

    /// Adds the pull markers of a new route.
    pub(crate) fn route_added(&self, fib: &mut impl PulledFib, route: &[u8]) {
        for level in self.pull_levels(fib, route) {
            fib.add_marker(route, level);
        }
    }

    /// Drops the pull markers of a route about to be removed.
    pub(crate) fn route_removed(&self, fib: &mut impl PulledFib, route: &[u8]) {
        for level in self.pull_levels(fib, route) {
            fib.drop_marker(route, level);
        }
    }

    /// The levels at which `route` needs a pull marker: j + 1 for each pulled prefix of j
    /// components it extends by more than one component.
    fn pull_levels(&self, fib: &impl PulledFib, route: &[u8]) -> Vec<usize> {
        let ph = fib.hash(route, MAX_LEVELS);
        self.all(route, &ph).into_iter().filter(|&j| ph.len > j + 1).map(|j| j + 1).collect()
    }
}

fn mask_upto(n: usize) -> u64 {
    if n >= 63 {
        u64::MAX
    } else {
        (1u64 << (n + 1)) - 1
    }
}

/// The prefixes (bytes, components) of the FIB's routes that have more than `t` distinct next
/// components, found in one pass over the routes in name order: consecutive routes share a
/// prefix of components, and each route opens one new trie node per component past it.
fn prefixes_with_many_children(fib: &impl PulledFib, t: usize) -> Vec<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    // Open trie nodes of the previous route: (end byte offset, children so far), index = level.
    let mut open: Vec<(usize, usize)> = vec![(0, 0)];
    let mut prev: Vec<u8> = Vec::new();
    let close = |open: &mut Vec<(usize, usize)>, prev: &[u8], keep: usize, out: &mut Vec<(Vec<u8>, usize)>| {
        while open.len() > keep {
            let (end, children) = open.pop().expect("non-empty");
            let level = open.len();
            if level > 0 && children > t {
                out.push((prev[..end].to_vec(), level));
            }
        }
    };
    for route in fib.route_names() {
        let ph = fib.hash(&route, MAX_LEVELS);
        // Components shared with the previous route.
        let mut common = 0;
        while common < ph.len && common + 1 < open.len() && open[common + 1].0 == ph.ends[common] as usize {
            if route[..ph.ends[common] as usize] != prev[..ph.ends[common] as usize] {
                break;
            }
            common += 1;
        }
        close(&mut open, &prev, common + 1, &mut out);
        for level in common + 1..=ph.len {
            open[level - 1].1 += 1;
            open.push((ph.ends[level - 1] as usize, 0));
        }
        prev.clear();
        prev.extend_from_slice(&route);
    }
    close(&mut open, &prev, 0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::NameFib;
    use crate::name::{NameFibConfig, NextHops, Strategy};
    use nexthop_wire::Name;

    fn n(uri: &str) -> Name {
        Name::from_uri(uri).unwrap()
    }

    fn fib_with(routes: &[&str]) -> NameFib {
        let mut f =
            NameFib::new(NameFibConfig { key: Some((3, 4)), huge_pages: false, ..NameFibConfig::with_strategy(Strategy::VerifyAtEnd) });
        for (i, r) in routes.iter().enumerate() {
            f.insert(&n(r).as_view(), NextHops::single(i as u32 + 1, 0)).unwrap();
        }
        f
    }

    #[test]
    fn children_are_counted_per_prefix() {
        let f = fib_with(&["/com/a/x", "/com/b", "/com/c/y/z", "/com/c/w", "/org/a", "/com/c/v"]);
        let mut got = prefixes_with_many_children(&f, 2);
        got.sort();
        // /com has children a, b, c; /com/c has y, w, v.
        let want = vec![(n("/com").value().to_vec(), 1), (n("/com/c").value().to_vec(), 2)];
        assert_eq!(got, want);
    }

    #[test]
    fn pulled_lookups_agree_with_plain_ones() {
        let routes = ["/com", "/com/a", "/com/b/x/y/z", "/com/c", "/com/d/e", "/com/d/e/f/g/h", "/org/x/y/z/w/v/u", "/com/b/x"];
        let mut f = fib_with(&routes);
        let queries = ["/com/a/1", "/com/b/x/y/z/q", "/com/b/x/q", "/com/zz", "/com/d/e/f", "/com/d/e/f/g/h/i", "/org/x", "/com"];
        let plain: Vec<_> = queries.iter().map(|q| f.lookup_id(n(q).value())).collect();
        f.enable_level_pulling(2);
        assert_eq!(f.level_pulling().unwrap().len(), 1, "only /com has more than two children");
        let pulled: Vec<_> = queries.iter().map(|q| f.lookup_id(n(q).value())).collect();
        assert_eq!(plain, pulled);
        let (_, probes) = f.lookup_counted(n("/com/a/1").value());
        assert_eq!(probes, 1, "a leaf under a pulled prefix costs one probe");
        // Updates keep pull markers in step.
        f.insert(&n("/com/q/r/s/t").as_view(), NextHops::single(99, 0)).unwrap();
        f.remove(&n("/com/b/x/y/z").as_view()).unwrap();
        f.remove(&n("/com").as_view()).unwrap();
        for q in queries.iter().chain(["/com/q/r/s/t/u", "/com/q/r"].iter()) {
            let want = f.lookup_id(n(q).value());
            let mut g = f.clone();
            g.disable_level_pulling();
            assert_eq!(g.lookup_id(n(q).value()), want, "{q}");
        }
        f.disable_level_pulling();
        let sizes_before: Vec<usize> = f.level_sizes();
        let fresh = {
            let mut g = fib_with(&[]);
            for (k, v) in f.routes() {
                g.insert(&nexthop_wire::NameView::from_value(&k).unwrap(), v.clone()).unwrap();
            }
            g
        };
        assert_eq!(sizes_before, fresh.level_sizes(), "teardown leaves exactly the plain markers");
    }
}
