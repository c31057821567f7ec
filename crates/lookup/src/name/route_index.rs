//! The control side's ordered index of routes: a B+-tree of 40-bit keys that never stores a
//! name and never knows how its keys compare.
//!
//! Overview. The FIB must list its routes in name order and find, for a route P, the routes
//! that extend P (one contiguous run in name order, because a name's bytes, TLV or packed, are a
//! byte prefix of its extensions' bytes). A `BTreeMap<Box<[u8]>, _>` does that by storing every
//! name a second time, about 100 bytes per route. Here a route is the 40-bit key the FIB packs
//! from where its bytes already are (see [`RouteKey`]), and every operation takes the comparison
//! as a closure: `cmp(k)` says how stored key `k` compares with the operand, `pred(k)` is a
//! predicate that is false and then true along the key order. The FIB's closures read names from
//! its entry arena. A leaf holds up to [`CAP`] keys of 5 bytes each, so a route costs a little
//! over 5 bytes at full nodes and about 8 at the two-thirds fill of random insertions.
//!
//! Invariants (checked by `check` in the tests): keys are in order and distinct; an inner node
//! with children c0..cn holds n separators, `seps[i]` = the smallest key under c(i+1), kept exact
//! when keys are removed (a removed key's arena entry may be freed and reused, so a stale
//! separator would compare garbage); every node but the root holds at least [`MIN`] keys or
//! children, and an inner root at least two children.

use std::cmp::Ordering;

/// Most keys in a leaf, and most children of an inner node.
pub const CAP: usize = 128;
/// Keys are below 2^40: a leaf stores each in 5 bytes.
pub const KEY_BITS: u32 = 40;
/// Fewest keys or children of a node other than the root.
pub const MIN: usize = CAP / 4;

/// Where a route's bytes are: the first `level` components of the name in arena entry `entry`,
/// whose forwarding slot `slot` is the route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteKey {
    /// Word offset of the arena entry.
    pub entry: u32,
    /// Components of the route (1..=32; a prefix of the entry's name).
    pub level: u8,
    /// The route's slot in the entry (0..8).
    pub slot: u8,
}

impl RouteKey {
    /// The key as the tree stores it: 32 bits of entry, 5 of level − 1, 3 of slot.
    pub fn pack(self) -> u64 {
        debug_assert!((1..=32).contains(&self.level) && self.slot < 8);
        u64::from(self.entry) | u64::from(self.level - 1) << 32 | u64::from(self.slot) << 37
    }

    /// The key from its stored form.
    pub fn unpack(k: u64) -> Self {
        RouteKey { entry: k as u32, level: ((k >> 32) & 0x1f) as u8 + 1, slot: (k >> 37) as u8 & 7 }
    }
}

// A key's level and slot fields are 5 and 3 bits wide.
const _: () = assert!(super::hash::MAX_LEVELS <= 32 && super::entry::MAX_SLOTS <= 8);

/// A key as a leaf stores it.
type Stored = [u8; 5];

#[inline(always)]
fn store(k: u64) -> Stored {
    let b = k.to_le_bytes();
    [b[0], b[1], b[2], b[3], b[4]]
}

#[inline(always)]
fn load(s: &Stored) -> u64 {
    u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], 0, 0, 0])
}

#[derive(Debug, Clone)]
enum Node {
    Leaf(Vec<Stored>),
    Inner { seps: Vec<u64>, children: Vec<Node> },
}

impl Node {
    /// Keys of a leaf, children of an inner node.
    fn size(&self) -> usize {
        match self {
            Node::Leaf(keys) => keys.len(),
            Node::Inner { children, .. } => children.len(),
        }
    }

    fn first_key(&self) -> Option<u64> {
        match self {
            Node::Leaf(keys) => keys.first().map(load),
            Node::Inner { children, .. } => children[0].first_key(),
        }
    }

    /// Splits an overfull node in two halves; returns the separator and the right half.
    fn split(&mut self) -> (u64, Node) {
        match self {
            Node::Leaf(keys) => {
                let mut right = keys.split_off(keys.len() / 2);
                right.reserve_exact(CAP + 1 - right.len());
                keys.shrink_to(CAP + 1);
                (load(&right[0]), Node::Leaf(right))
            }
            Node::Inner { seps, children } => {
                let mid = children.len() / 2;
                let right_children = children.split_off(mid);
                let right_seps = seps.split_off(mid);
                let sep = seps.pop().expect("an overfull inner node has separators");
                seps.shrink_to(CAP);
                children.shrink_to(CAP + 1);
                (sep, Node::Inner { seps: right_seps, children: right_children })
            }
        }
    }

    fn heap_bytes(&self) -> usize {
        match self {
            Node::Leaf(keys) => keys.capacity() * size_of::<Stored>(),
            Node::Inner { seps, children } => {
                seps.capacity() * 8 + children.capacity() * size_of::<Node>() + children.iter().map(Node::heap_bytes).sum::<usize>()
            }
        }
    }
}

/// What inserting into a subtree did.
enum Inserted {
    Duplicate,
    Fits,
    Split(u64, Node),
}

/// A key comparing equal to the one being inserted is already stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Duplicate;

/// The ordered index: a B+-tree of keys ordered by the caller's comparisons.
#[derive(Debug, Clone)]
pub struct RouteIndex {
    root: Node,
    len: usize,
}

impl Default for RouteIndex {
    fn default() -> Self {
        RouteIndex { root: Node::Leaf(Vec::new()), len: 0 }
    }
}

impl RouteIndex {
    /// Keys stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no key is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the tree allocates.
    pub fn heap_bytes(&self) -> usize {
        self.root.heap_bytes()
    }

    /// Inserts `key`, whose place `cmp` finds (`cmp(k)`: how stored key `k` compares with
    /// `key`), and returns the key now after it (found on the way down, where a separate search
    /// would pay every comparison again). Changes nothing if a key comparing equal is stored.
    /// Panics if `key` has bits past [`KEY_BITS`].
    pub fn insert(&mut self, key: u64, mut cmp: impl FnMut(u64) -> Ordering) -> Result<Option<u64>, Duplicate> {
        assert!(key >> KEY_BITS == 0, "route index keys are {KEY_BITS} bits");
        let mut next = None;
        match insert_into(&mut self.root, key, &mut cmp, &mut next) {
            Inserted::Duplicate => return Err(Duplicate),
            Inserted::Fits => {}
            Inserted::Split(sep, right) => {
                let left = std::mem::replace(&mut self.root, Node::Leaf(Vec::new()));
                self.root = Node::Inner { seps: vec![sep], children: vec![left, right] };
            }
        }
        self.len += 1;
        Ok(next)
    }

    /// Removes and returns the key that `cmp` compares equal to the operand, if any.
    pub fn remove(&mut self, mut cmp: impl FnMut(u64) -> Ordering) -> Option<u64> {
        let removed = remove_from(&mut self.root, &mut cmp)?;
        self.len -= 1;
        if let Node::Inner { children, .. } = &mut self.root {
            if children.len() == 1 {
                self.root = children.pop().expect("one child");
            }
        }
        Some(removed)
    }

    /// The first key, in order, for which `pred` holds; `pred` must be false for every key
    /// before some point and true from there on.
    pub fn first_where(&self, mut pred: impl FnMut(u64) -> bool) -> Option<u64> {
        first_where(&self.root, &mut pred)
    }

    /// Rebuilds the tree with every node full (the last ones of a level share what is left,
    /// so none is under the minimum) and no spare capacity: after a bulk load, a route costs
    /// 8 bytes and a little over, where random insertions leave nodes about two-thirds full.
    /// The next insertion into a full leaf splits it as usual.
    pub fn compact(&mut self) {
        let keys: Vec<u64> = self.iter().collect();
        // The old nodes go before the new ones are made: at 100M routes each tree is ~1 GB.
        self.root = Node::Leaf(Vec::new());
        let mut level: Vec<(u64, Node)> = chunks_even(keys.len())
            .scan(0, |at, n| {
                let leaf: Vec<Stored> = keys[*at..*at + n].iter().map(|&k| store(k)).collect();
                *at += n;
                Some((keys[*at - n], Node::Leaf(leaf)))
            })
            .collect();
        while level.len() > 1 {
            let mut nodes = level.into_iter();
            level = chunks_even(nodes.len())
                .map(|n| {
                    let (mut seps, mut children) = (Vec::with_capacity(n - 1), Vec::with_capacity(n));
                    for (first, child) in nodes.by_ref().take(n) {
                        if !children.is_empty() {
                            seps.push(first);
                        }
                        children.push(child);
                    }
                    let first = children[0].first_key().expect("nodes are not empty");
                    (first, Node::Inner { seps, children })
                })
                .collect();
        }
        self.root = level.pop().map_or(Node::Leaf(Vec::new()), |(_, root)| root);
    }

    /// Every key, in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { stack: vec![(&self.root, 0)] }
    }

    /// Checks the invariants of the module docs, with `cmp2(a, b)` the order of two keys.
    #[cfg(test)]
    pub(crate) fn check(&self, cmp2: &mut impl FnMut(u64, u64) -> Ordering) {
        fn walk(node: &Node, root: bool, cmp2: &mut impl FnMut(u64, u64) -> Ordering) -> usize {
            let size = node.size();
            assert!(size <= CAP, "node over capacity");
            if !root {
                assert!(size >= MIN, "node under the minimum: {size}");
            }
            match node {
                Node::Leaf(keys) => {
                    assert!(keys.windows(2).all(|w| cmp2(load(&w[0]), load(&w[1])) == Ordering::Less), "leaf out of order");
                    keys.len()
                }
                Node::Inner { seps, children } => {
                    assert!(!root || children.len() >= 2, "inner root with one child");
                    assert_eq!(seps.len() + 1, children.len());
                    for (i, sep) in seps.iter().enumerate() {
                        assert_eq!(children[i + 1].first_key(), Some(*sep), "stale separator");
                        let last_left = Iter { stack: vec![(&children[i], 0)] }.last().expect("child not empty");
                        assert_eq!(cmp2(last_left, *sep), Ordering::Less, "separator order");
                    }
                    children.iter().map(|c| walk(c, false, cmp2)).sum()
                }
            }
        }
        assert_eq!(walk(&self.root, true, cmp2), self.len);
    }
}

/// Sizes of the fewest nodes of at most [`CAP`] that hold `n` things, as even as can be (each
/// at least `CAP / 2` when there are two or more, so at least [`MIN`]).
fn chunks_even(n: usize) -> impl ExactSizeIterator<Item = usize> {
    let count = n.div_ceil(CAP);
    (0..count).map(move |i| n / count + usize::from(i < n % count))
}

/// Inserts into the subtree at `node`; sets `next` to the key after `key` if it is in the
/// subtree.
fn insert_into(node: &mut Node, key: u64, cmp: &mut impl FnMut(u64) -> Ordering, next: &mut Option<u64>) -> Inserted {
    match node {
        Node::Leaf(keys) => {
            let i = keys.partition_point(|k| cmp(load(k)) == Ordering::Less);
            if i < keys.len() && cmp(load(&keys[i])) == Ordering::Equal {
                return Inserted::Duplicate;
            }
            *next = keys.get(i).map(load);
            keys.reserve_exact(CAP + 1 - keys.len());
            keys.insert(i, store(key));
        }
        Node::Inner { seps, children } => {
            // seps[i] is the smallest key under children[i + 1]: go right of every one ≤ key.
            let i = seps.partition_point(|&s| cmp(s) != Ordering::Greater);
            let inserted = insert_into(&mut children[i], key, cmp, next);
            if next.is_none() {
                *next = seps.get(i).copied();
            }
            match inserted {
                Inserted::Split(sep, right) => {
                    seps.insert(i, sep);
                    children.insert(i + 1, right);
                }
                done => return done,
            }
        }
    }
    if node.size() <= CAP {
        return Inserted::Fits;
    }
    let (sep, right) = node.split();
    Inserted::Split(sep, right)
}

fn remove_from(node: &mut Node, cmp: &mut impl FnMut(u64) -> Ordering) -> Option<u64> {
    match node {
        Node::Leaf(keys) => {
            let i = keys.partition_point(|k| cmp(load(k)) == Ordering::Less);
            (i < keys.len() && cmp(load(&keys[i])) == Ordering::Equal).then(|| load(&keys.remove(i)))
        }
        Node::Inner { seps, children } => {
            let i = seps.partition_point(|&s| cmp(s) != Ordering::Greater);
            let removed = remove_from(&mut children[i], cmp)?;
            if i > 0 {
                seps[i - 1] = children[i].first_key().expect("a child keeps at least one key");
            }
            if children[i].size() < MIN {
                rebalance(seps, children, i);
            }
            Some(removed)
        }
    }
}

/// Mends underfull `children[i]` with a neighbour: merges the two, and splits them again
/// evenly if the merge is over capacity.
fn rebalance(seps: &mut Vec<u64>, children: &mut Vec<Node>, i: usize) {
    let left = if i > 0 { i - 1 } else { i };
    let sep = seps.remove(left);
    let right = children.remove(left + 1);
    let merged = &mut children[left];
    match (merged, right) {
        (Node::Leaf(keys), Node::Leaf(more)) => keys.extend_from_slice(&more),
        (Node::Inner { seps: s, children: c }, Node::Inner { seps: more_seps, children: more }) => {
            s.push(sep);
            s.extend_from_slice(&more_seps);
            c.extend(more);
        }
        _ => unreachable!("siblings are at the same height"),
    }
    if children[left].size() > CAP {
        let (sep, right) = children[left].split();
        seps.insert(left, sep);
        children.insert(left + 1, right);
    }
}

fn first_where(node: &Node, pred: &mut impl FnMut(u64) -> bool) -> Option<u64> {
    match node {
        Node::Leaf(keys) => keys.get(keys.partition_point(|k| !pred(load(k)))).map(load),
        Node::Inner { seps, children } => {
            // The answer is in the child after the last separator where pred is false; if that
            // child has none, it is the next separator (the smallest key of the next child).
            let i = seps.partition_point(|&s| !pred(s));
            first_where(&children[i], pred).or_else(|| seps.get(i).copied())
        }
    }
}

/// Iterator over the keys in order.
#[derive(Debug)]
pub struct Iter<'a> {
    stack: Vec<(&'a Node, usize)>,
}

impl Iterator for Iter<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        loop {
            let (node, i) = self.stack.last_mut()?;
            let node: &Node = node;
            match node {
                Node::Leaf(keys) if *i < keys.len() => {
                    *i += 1;
                    return Some(load(&keys[*i - 1]));
                }
                Node::Inner { children, .. } if *i < children.len() => {
                    *i += 1;
                    let child = &children[*i - 1];
                    self.stack.push((child, 0));
                }
                _ => {
                    self.stack.pop();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// Keys ordered by a permutation (not their numeric order), as the FIB's are by names.
    fn order(k: u64) -> u64 {
        k.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17)
    }

    fn cmp_to(target: u64) -> impl FnMut(u64) -> Ordering {
        move |k| order(k).cmp(&order(target))
    }

    fn check_against(index: &RouteIndex, model: &BTreeSet<(u64, u64)>) {
        index.check(&mut |a, b| order(a).cmp(&order(b)));
        assert_eq!(index.len(), model.len());
        assert!(index.iter().eq(model.iter().map(|&(_, k)| k)));
    }

    #[test]
    fn keys_pack_and_unpack_and_the_tree_keeps_all_40_bits() {
        let keys = [
            RouteKey { entry: 0xdead_beef, level: 32, slot: 7 },
            RouteKey { entry: u32::MAX, level: 1, slot: 0 },
            RouteKey { entry: 0, level: 17, slot: 3 },
        ];
        let mut index = RouteIndex::default();
        for k in keys {
            assert_eq!(RouteKey::unpack(k.pack()), k);
            assert!(k.pack() >> KEY_BITS == 0);
            index.insert(k.pack(), cmp_to(k.pack())).unwrap();
        }
        let mut stored: Vec<u64> = index.iter().collect();
        stored.sort_unstable();
        let mut packed: Vec<u64> = keys.iter().map(|k| k.pack()).collect();
        packed.sort_unstable();
        assert_eq!(stored, packed);
    }

    #[test]
    fn many_inserts_then_removals_keep_the_invariants() {
        let mut index = RouteIndex::default();
        let mut model = BTreeSet::new();
        for k in 0..20_000u64 {
            let next = model.range((order(k), k)..).next().map(|&(_, k)| k);
            assert_eq!(index.insert(k, cmp_to(k)), Ok(next));
            model.insert((order(k), k));
        }
        assert_eq!(index.insert(5, cmp_to(5)), Err(Duplicate), "duplicate refused");
        check_against(&index, &model);
        for k in (0..20_000u64).filter(|k| k % 3 != 0) {
            assert_eq!(index.remove(cmp_to(k)), Some(k));
            model.remove(&(order(k), k));
        }
        assert_eq!(index.remove(cmp_to(1)), None);
        check_against(&index, &model);
        for k in (0..20_000u64).filter(|k| k % 3 == 0) {
            assert_eq!(index.remove(cmp_to(k)), Some(k));
        }
        assert!(index.is_empty());
        assert!(index.heap_bytes() < 1024, "an emptied tree gives its nodes back");
    }

    #[test]
    fn compact_fills_the_nodes_and_keeps_the_keys() {
        for n in [0u64, 1, 63, 64, 65, 129, 4_096, 20_000] {
            let mut index = RouteIndex::default();
            let mut model = BTreeSet::new();
            for k in 0..n {
                index.insert(k, cmp_to(k)).unwrap();
                model.insert((order(k), k));
            }
            let before = index.heap_bytes();
            index.compact();
            check_against(&index, &model);
            if n >= 4_096 {
                assert!(index.heap_bytes() * 10 < before * 8, "{n} keys: {} bytes, were {before}", index.heap_bytes());
                assert!(index.heap_bytes() < n as usize * 6, "{n} keys: {} bytes", index.heap_bytes());
            }
            // It stays a working tree: inserting into full leaves splits them.
            for k in n..n + 300 {
                index.insert(k, cmp_to(k)).unwrap();
                model.insert((order(k), k));
            }
            for k in (0..n + 300).step_by(2) {
                assert_eq!(index.remove(cmp_to(k)), Some(k));
                model.remove(&(order(k), k));
            }
            check_against(&index, &model);
        }
    }

    proptest! {
        #[test]
        fn random_operations_agree_with_a_btreeset(ops in prop::collection::vec((any::<bool>(), 0u64..400), 1..2_000),
                                                   probes in prop::collection::vec(0u64..400, 8)) {
            let mut index = RouteIndex::default();
            let mut model = BTreeSet::new();
            for (insert, k) in ops {
                if insert {
                    let next = model.range((order(k), k)..).find(|&&(_, other)| other != k).map(|&(_, k)| k);
                    let added = model.insert((order(k), k));
                    prop_assert_eq!(index.insert(k, cmp_to(k)), if added { Ok(next) } else { Err(Duplicate) });
                } else {
                    prop_assert_eq!(index.remove(cmp_to(k)), model.remove(&(order(k), k)).then_some(k));
                }
            }
            check_against(&index, &model);
            for p in probes {
                let want = model.range((order(p), 0)..).next().map(|&(_, k)| k);
                prop_assert_eq!(index.first_where(|k| order(k) >= order(p)), want);
            }
        }
    }
}
