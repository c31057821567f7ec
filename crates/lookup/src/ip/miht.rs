//! MIHT, the (k, m) multi-index hybrid trie (Lin, Hsu, Hsieh 2014) — the paper's baseline
//! (section 5): a B+ tree of order m over the k-bit keys (first k bits) of the routes at least k
//! bits long, each key leading to a priority trie of those routes, plus one more priority trie
//! (PT[−1]) of the routes shorter than k.
//!
//! A priority trie (Lim, Yim, Swartzlander 2010) is a binary trie with no empty nodes: a node
//! whose own prefix is absent holds instead the longest prefix of its subtree, marked priority.
//! A search that meets a matching priority prefix stops (nothing below is longer); an ordinary
//! prefix met on the way is remembered. Insertion walks the new prefix's bits and swaps it with
//! any shorter priority prefix on the way, carrying the displaced one down.
//!
//! The B+ tree is bulk-loaded and static, with 64-byte-aligned nodes (the paper's layout: sixteen
//! 32-bit keys per node for k = m = 16), each searched by binary search. The whole structure is
//! built once from a route list: a peer and baseline, not a forwarding table to update.

use super::{check_route, Address, IpError, NextHop, Route, NO_ROUTE};

/// The (16, 16)-MIHT for IPv4, the paper's choice.
pub type Miht4 = Miht<u32, 16, 16>;
/// The (32, 32)-MIHT for IPv6, the paper's MIHTv6.
pub type Miht6 = Miht<u128, 32, 32>;

#[derive(Debug, Clone, Copy)]
struct PtNode<A> {
    prefix: A,
    len: u8,
    priority: bool,
    next_hop: NextHop,
    child: [u32; 2],
}

/// A B+ tree node: up to M sorted keys and, per key, a child node (internal) or a priority trie
/// root (leaf).
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct BNode<const M: usize> {
    keys: [u32; M],
    next: [u32; M],
    count: u32,
}

/// A (K, M) multi-index hybrid trie.
#[derive(Debug, Clone)]
pub struct Miht<A, const K: u8, const M: usize> {
    nodes: Vec<PtNode<A>>,
    btree: Vec<BNode<M>>,
    /// Levels of internal nodes above the leaves.
    height: u32,
    root: u32,
    keyless: u32,
    routes: usize,
}

impl<A: Address, const K: u8, const M: usize> Miht<A, K, M> {
    /// The k-bit key of an address.
    #[inline(always)]
    fn key(addr: A) -> u32 {
        (addr.to_u128_left() >> (128 - u32::from(K))) as u32
    }

    /// Builds the structure from `routes` (a later duplicate of a prefix wins).
    ///
    /// # Errors
    /// The first bad route's error.
    pub fn from_routes(routes: &[Route<A>]) -> Result<Self, IpError> {
        for r in routes {
            check_route(r.prefix, r.len, r.next_hop)?;
        }
        // Node 0 is the "no node" marker.
        let dummy = PtNode { prefix: A::ZERO, len: 0, priority: false, next_hop: NO_ROUTE, child: [0; 2] };
        let mut m = Miht { nodes: vec![dummy], btree: Vec::new(), height: 0, root: 0, keyless: 0, routes: 0 };
        let mut by_key: std::collections::BTreeMap<u32, u32> = std::collections::BTreeMap::new();
        let mut seen = std::collections::HashSet::new();
        for r in routes {
            if seen.insert((r.prefix, r.len)) {
                m.routes += 1;
            }
            if r.len < K {
                let mut root = m.keyless;
                m.pt_insert(&mut root, 0, *r);
                m.keyless = root;
            } else {
                let mut root = by_key.get(&Self::key(r.prefix)).copied().unwrap_or(0);
                m.pt_insert(&mut root, K, *r);
                by_key.insert(Self::key(r.prefix), root);
            }
        }
        m.build_btree(&by_key.into_iter().collect::<Vec<_>>());
        Ok(m)
    }

    fn pt_insert(&mut self, root: &mut u32, root_level: u8, route: Route<A>) {
        let (mut p, mut len, mut nh) = (route.prefix, route.len, route.next_hop);
        let new = |p: A, len: u8, nh: NextHop, level: u8| PtNode { prefix: p, len, priority: len > level, next_hop: nh, child: [0; 2] };
        if *root == 0 {
            self.nodes.push(new(p, len, nh, root_level));
            *root = (self.nodes.len() - 1) as u32;
            return;
        }
        let (mut cur, mut level) = (*root as usize, root_level);
        loop {
            let node = &mut self.nodes[cur];
            if level == len {
                if !node.priority {
                    node.next_hop = nh; // the same prefix: the path is its bits
                    return;
                }
                // This is p's own place: p becomes ordinary here, the priority prefix moves down.
                let displaced = *node;
                *node = PtNode { child: displaced.child, ..new(p, len, nh, level) };
                (p, len, nh) = (displaced.prefix, displaced.len, displaced.next_hop);
            } else if node.priority && node.len < len {
                let displaced = *node;
                *node = PtNode { child: displaced.child, ..new(p, len, nh, level) };
                (p, len, nh) = (displaced.prefix, displaced.len, displaced.next_hop);
            } else if node.priority && node.len == len && node.prefix == p {
                node.next_hop = nh;
                return;
            }
            let b = usize::from(p.bit(level));
            let child = self.nodes[cur].child[b];
            if child == 0 {
                self.nodes.push(new(p, len, nh, level + 1));
                let id = (self.nodes.len() - 1) as u32;
                self.nodes[cur].child[b] = id;
                return;
            }
            cur = child as usize;
            level += 1;
        }
    }

    #[inline(always)]
    fn pt_search(&self, root: u32, root_level: u8, addr: A) -> Option<NextHop> {
        let (mut cur, mut level, mut best) = (root as usize, root_level, None);
        while cur != 0 {
            let n = &self.nodes[cur];
            if n.priority {
                if addr.masked(n.len) == n.prefix {
                    return Some(n.next_hop);
                }
            } else {
                best = Some(n.next_hop);
            }
            if level == A::BITS {
                break;
            }
            cur = n.child[usize::from(addr.bit(level))] as usize;
            level += 1;
        }
        best
    }

    fn build_btree(&mut self, leaves: &[(u32, u32)]) {
        // Level by level, bottom up: (first key, node index) of each node of the level below.
        let mut level: Vec<(u32, u32)> = leaves.to_vec();
        let mut height = 0;
        loop {
            let mut above = Vec::with_capacity(level.len().div_ceil(M));
            for chunk in level.chunks(M) {
                let mut node = BNode { keys: [u32::MAX; M], next: [0; M], count: chunk.len() as u32 };
                for (i, &(k, v)) in chunk.iter().enumerate() {
                    node.keys[i] = k;
                    node.next[i] = v;
                }
                above.push((chunk[0].0, self.btree.len() as u32));
                self.btree.push(node);
            }
            if above.len() <= 1 {
                self.root = above.first().map_or(u32::MAX, |x| x.1);
                self.height = height;
                return;
            }
            level = above;
            height += 1;
        }
    }

    /// The priority trie root for `key`, if any route has that key.
    #[inline(always)]
    fn find_key(&self, key: u32) -> Option<u32> {
        if self.root == u32::MAX {
            return None;
        }
        let mut n = &self.btree[self.root as usize];
        for _ in 0..self.height {
            // The last key ≤ key.
            let i = n.keys[..n.count as usize].partition_point(|&k| k <= key);
            if i == 0 {
                return None;
            }
            n = &self.btree[n.next[i - 1] as usize];
        }
        n.keys[..n.count as usize].binary_search(&key).ok().map(|i| n.next[i])
    }

    /// The next hop of the longest route covering `addr`, or [`NO_ROUTE`].
    #[inline]
    pub fn lookup(&self, addr: A) -> NextHop {
        if let Some(pt) = self.find_key(Self::key(addr)) {
            if let Some(nh) = self.pt_search(pt, K, addr) {
                return nh;
            }
        }
        self.pt_search(self.keyless, 0, addr).unwrap_or(NO_ROUTE)
    }

    /// [`Miht::lookup`] over a batch (a loop: the paper found no SIMD gain for MIHT).
    pub fn lookup_batch(&self, addrs: &[A], out: &mut [NextHop]) {
        for (&a, o) in addrs.iter().zip(out.iter_mut()) {
            *o = self.lookup(a);
        }
    }

    /// Distinct routes held.
    pub fn len(&self) -> usize {
        self.routes
    }

    /// Whether it holds no route.
    pub fn is_empty(&self) -> bool {
        self.routes == 0
    }

    /// Bytes of the tries and the B+ tree.
    pub fn bytes(&self) -> usize {
        self.nodes.len() * core::mem::size_of::<PtNode<A>>() + self.btree.len() * core::mem::size_of::<BNode<M>>()
    }
}
