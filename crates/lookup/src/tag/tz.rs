//! Locators: Thorup–Zwick labels for a rooted tree and their forwarding function (the paper's
//! section 3.3 and Figure 6, after section 2.1 of Thorup and Zwick, SPAA'01).
//!
//! # Overview
//! - Nodes are numbered depth-first, heavy child (the one with the largest subtree) first, so
//!   every subtree is an interval of ids: `[id, last]`, the heavy child's `[id + 1, heavy_end]`,
//!   the light children's after it.
//! - A node's label is its id plus the light edges on its path from the root: at each light edge
//!   the index of that child among its parent's light children (largest subtree first, so index i
//!   leads to a subtree at most 1/(i+1) of the parent's and costs ⌈log2(i+1)⌉ bits, at least 1),
//!   the fields packed from bit 0 up in `list`, each field's top bit set in `mask`.
//! - A router on the tree keeps its own interval, its heavy child's end, k = the length of its
//!   own field list (where the field for its light children starts in any descendant's label),
//!   and the parent and heavy-child interfaces. [`TzRouter::forward`] is Figure 6's function:
//!   a destination inside a light subtree takes the field at k, `(L >> k) & (m ^ (m − 1))` with
//!   `m = M >> k`; otherwise the parent or the heavy child.
//! - Interfaces at a node: light child i is interface i, the heavy child is interface
//!   `light_count`, the parent `light_count + 1` ([`TzLabels::neighbor`] maps them back).
//!
//! Labels take `⌈log2 n⌉ + 2·(field bits)` bits ([`TzLabels::label_bits`]); the field bits are at
//! most the light edges on the path plus Σ log2(i+1) ≤ 2·log2 n.

use super::TagError;

/// The parent of the root in [`Tree::from_parents`].
pub const NO_PARENT: u32 = u32::MAX;

/// "No such interface" (the root's parent interface).
const NO_PORT: u16 = u16::MAX;

/// A rooted tree over nodes `0..n`, as a parent array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    parent: Vec<u32>,
    root: u32,
}

impl Tree {
    /// The tree whose node v has parent `parent[v]` ([`NO_PARENT`] for the root).
    ///
    /// # Errors
    /// [`TagError::NotATree`] unless exactly one node is the root, every parent is a node, and
    /// following parents from any node reaches the root.
    pub fn from_parents(parent: Vec<u32>) -> Result<Tree, TagError> {
        let n = parent.len();
        let mut roots = (0..n).filter(|&v| parent[v] == NO_PARENT);
        let (Some(root), None) = (roots.next(), roots.next()) else { return Err(TagError::NotATree) };
        if parent.iter().any(|&p| p != NO_PARENT && p as usize >= n) {
            return Err(TagError::NotATree);
        }
        // 0 = unseen, 1 = on the current walk, 2 = reaches the root.
        let mut state = vec![0u8; n];
        state[root] = 2;
        let mut walk = Vec::new();
        for start in 0..n {
            let mut v = start;
            while state[v] == 0 {
                state[v] = 1;
                walk.push(v);
                v = parent[v] as usize;
            }
            if state[v] == 1 {
                return Err(TagError::NotATree);
            }
            for &w in &walk {
                state[w] = 2;
            }
            walk.clear();
        }
        Ok(Tree { parent, root: root as u32 })
    }

    /// The breadth-first spanning tree of a connected graph from `root` (`adjacency[v]` lists
    /// v's neighbours; the lowest-numbered neighbour found first becomes the parent).
    ///
    /// # Errors
    /// [`TagError::NotATree`] when `root` is not a node, a neighbour is out of range, or the graph
    /// is not connected.
    pub fn bfs(adjacency: &[Vec<u32>], root: u32) -> Result<Tree, TagError> {
        let n = adjacency.len();
        if root as usize >= n {
            return Err(TagError::NotATree);
        }
        let mut parent = vec![NO_PARENT; n];
        let mut seen = vec![false; n];
        seen[root as usize] = true;
        let mut queue = std::collections::VecDeque::from([root]);
        while let Some(v) = queue.pop_front() {
            for &w in &adjacency[v as usize] {
                let seen_w = seen.get_mut(w as usize).ok_or(TagError::NotATree)?;
                if !*seen_w {
                    *seen_w = true;
                    parent[w as usize] = v;
                    queue.push_back(w);
                }
            }
        }
        if seen.iter().any(|s| !s) {
            return Err(TagError::NotATree);
        }
        Tree::from_parents(parent)
    }

    /// Nodes.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Whether the tree has no nodes (never: a tree has a root).
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The root.
    pub fn root(&self) -> u32 {
        self.root
    }

    /// The parent of `v` ([`NO_PARENT`] for the root).
    pub fn parent(&self, v: u32) -> u32 {
        self.parent[v as usize]
    }
}

/// A destination's locator on one tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Label {
    /// The node's depth-first id.
    pub id: u32,
    /// The light-edge fields, from bit 0 up.
    pub list: u64,
    /// The top bit of each field.
    pub mask: u64,
}

/// Where a router sends a packet addressed by locator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    /// This router is the destination.
    Deliver,
    /// Out of this interface (see the module overview for the numbering).
    Interface(u16),
}

/// What one router keeps to forward by locator on one tree (its Figure 6 state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TzRouter {
    id: u32,
    heavy_end: u32,
    last: u32,
    k: u32,
    light: u32,
    nodes: u32,
    /// Parent and heavy-child interfaces (`P[2]` of Figure 6).
    ports: [u16; 2],
}

impl TzRouter {
    /// The interface toward `dest`, or [`Hop::Deliver`].
    ///
    /// # Errors
    /// [`TagError::BadLocator`] for a label that cannot belong to this tree: an id beyond its
    /// nodes, a light field naming no light child, or a way up from the root.
    ///
    /// The three ways out — a light child's field, the heavy child, the parent — are computed
    /// alike and one is selected without a branch: for packets to many destinations they are
    /// about equally likely, and a branch between them mispredicted about once a packet. Only
    /// the rare outcomes (deliver here, a bad locator) branch away.
    #[inline]
    pub fn forward(&self, dest: &Label) -> Result<Hop, TagError> {
        let v = dest.id;
        let k = self.k & 63;
        let m = dest.mask >> k;
        let field = (dest.list >> k) & (m ^ m.wrapping_sub(1));
        let light_port = if field < u64::from(self.light) { field as u16 } else { NO_PORT };
        let tree_port = self.ports[usize::from(v > self.id && v <= self.heavy_end)];
        let in_light = v > self.heavy_end && v <= self.last;
        let port = [tree_port, light_port][usize::from(in_light)];
        if port == NO_PORT || v >= self.nodes || v == self.id {
            return self.rare(v);
        }
        Ok(Hop::Interface(port))
    }

    /// Bytes of [`TzRouter::to_bytes`].
    pub const BYTES: usize = 28;

    /// The state as bytes (what a tree's root hands each router): six 32-bit fields and the two
    /// interfaces, little-endian.
    pub fn to_bytes(&self) -> [u8; TzRouter::BYTES] {
        let mut out = [0; TzRouter::BYTES];
        for (i, v) in [self.id, self.heavy_end, self.last, self.k, self.light, self.nodes].into_iter().enumerate() {
            out[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        out[24..26].copy_from_slice(&self.ports[0].to_le_bytes());
        out[26..28].copy_from_slice(&self.ports[1].to_le_bytes());
        out
    }

    /// The state [`TzRouter::to_bytes`] wrote.
    ///
    /// # Errors
    /// [`TagError::BadLocator`] for fields no tree gives a router: its id past its subtree's
    /// end or the tree's nodes, a heavy subtree outside its own, a field list past 64 bits, an
    /// interface past its light children's.
    pub fn from_bytes(bytes: &[u8; TzRouter::BYTES]) -> Result<TzRouter, TagError> {
        let word = |i: usize| u32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]]);
        let port = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        let r = TzRouter {
            id: word(0),
            heavy_end: word(1),
            last: word(2),
            k: word(3),
            light: word(4),
            nodes: word(5),
            ports: [port(24), port(26)],
        };
        let port_ok = |p: u16| p == NO_PORT || u32::from(p) <= r.light + 1;
        let ok = r.id <= r.heavy_end
            && r.heavy_end <= r.last
            && r.last < r.nodes
            && r.k <= 64
            && r.light < u32::from(NO_PORT) - 1
            && port_ok(r.ports[0])
            && port_ok(r.ports[1]);
        ok.then_some(r).ok_or(TagError::BadLocator)
    }

    /// Whether the router has a parent (it is not the tree's root).
    pub fn has_parent(&self) -> bool {
        self.ports[0] != NO_PORT
    }

    /// [`TzRouter::forward`]'s answer where no interface was selected or `v` is this router or
    /// outside the tree.
    #[cold]
    fn rare(&self, v: u32) -> Result<Hop, TagError> {
        if v == self.id && v < self.nodes {
            Ok(Hop::Deliver)
        } else {
            Err(TagError::BadLocator)
        }
    }
}

/// The labels of every node of a tree and every node's router state.
#[derive(Debug, Clone)]
pub struct TzLabels {
    labels: Vec<Label>,
    field_bits: Vec<u8>,
    routers: Vec<TzRouter>,
    /// `light_start[v]..light_start[v + 1]` indexes v's light children in `light`.
    light_start: Vec<u32>,
    light: Vec<u32>,
    heavy: Vec<u32>,
    parent: Vec<u32>,
}

impl TzLabels {
    /// Labels `tree`.
    ///
    /// # Errors
    /// [`TagError::TooLarge`] when a node has more than 65,533 children or a label's fields need
    /// more than 64 bits (neither happens below 2^32 nodes with bounded degree).
    pub fn build(tree: &Tree) -> Result<TzLabels, TagError> {
        let n = tree.len();
        // Children in CSR form, and a breadth-first order (parents before children).
        let mut child_start = vec![0u32; n + 1];
        for &p in &tree.parent {
            if p != NO_PARENT {
                child_start[p as usize + 1] += 1;
            }
        }
        for v in 0..n {
            child_start[v + 1] += child_start[v];
        }
        let mut fill = child_start.clone();
        let mut children = vec![0u32; n.saturating_sub(1)];
        for (v, &p) in tree.parent.iter().enumerate() {
            if p != NO_PARENT {
                children[fill[p as usize] as usize] = v as u32;
                fill[p as usize] += 1;
            }
        }
        let kids = |v: usize| &children[child_start[v] as usize..child_start[v + 1] as usize];
        let mut order = Vec::with_capacity(n);
        order.push(tree.root);
        let mut i = 0;
        while i < order.len() {
            order.extend_from_slice(kids(order[i] as usize));
            i += 1;
        }
        let mut size = vec![1u32; n];
        for &v in order.iter().rev() {
            if tree.parent[v as usize] != NO_PARENT {
                size[tree.parent[v as usize] as usize] += size[v as usize];
            }
        }
        // Heavy child, and light children by decreasing subtree size.
        let mut heavy = vec![NO_PARENT; n];
        let mut light_start = vec![0u32; n + 1];
        let mut light = Vec::with_capacity(n);
        for v in 0..n {
            let mut c: Vec<u32> = kids(v).to_vec();
            if c.len() > usize::from(NO_PORT) - 2 {
                return Err(TagError::TooLarge);
            }
            c.sort_by_key(|&w| (core::cmp::Reverse(size[w as usize]), w));
            if let Some((&h, rest)) = c.split_first() {
                heavy[v] = h;
                light.extend_from_slice(rest);
            }
            light_start[v + 1] = light.len() as u32;
        }
        // Depth-first ids, heavy child first.
        let mut id = vec![0u32; n];
        let mut next = 0u32;
        let mut stack = vec![tree.root];
        while let Some(v) = stack.pop() {
            id[v as usize] = next;
            next += 1;
            stack.extend(light[light_start[v as usize] as usize..light_start[v as usize + 1] as usize].iter().rev());
            if heavy[v as usize] != NO_PARENT {
                stack.push(heavy[v as usize]);
            }
        }
        // Labels, parents before children.
        let mut labels = vec![Label::default(); n];
        let mut field_bits = vec![0u8; n];
        labels[tree.root as usize].id = id[tree.root as usize];
        for &v in &order {
            let v = v as usize;
            let (base, bits) = (labels[v], field_bits[v]);
            if heavy[v] != NO_PARENT {
                let h = heavy[v] as usize;
                labels[h] = Label { id: id[h], ..base };
                field_bits[h] = bits;
            }
            for (i, &c) in light[light_start[v] as usize..light_start[v + 1] as usize].iter().enumerate() {
                let width = (u64::BITS - (i as u64).leading_zeros()).max(1);
                let len = u32::from(bits) + width;
                if len > 64 {
                    return Err(TagError::TooLarge);
                }
                let c = c as usize;
                labels[c] = Label { id: id[c], list: base.list | (i as u64) << bits, mask: base.mask | 1 << (len - 1) };
                field_bits[c] = len as u8;
            }
        }
        let routers = (0..n)
            .map(|v| {
                let lights = light_start[v + 1] - light_start[v];
                let last = id[v] + size[v] - 1;
                let heavy_end = if heavy[v] == NO_PARENT { id[v] } else { id[heavy[v] as usize] + size[heavy[v] as usize] - 1 };
                let parent_port = if tree.parent[v] == NO_PARENT { NO_PORT } else { lights as u16 + 1 };
                let heavy_port = if heavy[v] == NO_PARENT { NO_PORT } else { lights as u16 };
                TzRouter {
                    id: id[v],
                    heavy_end,
                    last,
                    k: u32::from(field_bits[v]),
                    light: lights,
                    nodes: n as u32,
                    ports: [parent_port, heavy_port],
                }
            })
            .collect();
        Ok(TzLabels { labels, field_bits, routers, light_start, light, heavy, parent: tree.parent.clone() })
    }

    /// Node `v`'s locator.
    pub fn label(&self, v: u32) -> Label {
        self.labels[v as usize]
    }

    /// Node `v`'s forwarding state.
    pub fn router(&self, v: u32) -> &TzRouter {
        &self.routers[v as usize]
    }

    /// The node behind interface `interface` of node `v`, if there is one.
    pub fn neighbor(&self, v: u32, interface: u16) -> Option<u32> {
        let v = v as usize;
        let lights = &self.light[self.light_start[v] as usize..self.light_start[v + 1] as usize];
        let i = usize::from(interface);
        match i.cmp(&lights.len()) {
            core::cmp::Ordering::Less => Some(lights[i]),
            core::cmp::Ordering::Equal => Some(self.heavy[v]).filter(|&h| h != NO_PARENT),
            core::cmp::Ordering::Greater => Some(self.parent[v]).filter(|&p| p != NO_PARENT && i == lights.len() + 1),
        }
    }

    /// The interfaces node `v` numbers: its light children, then heavy child and parent (either
    /// may be absent: [`TzLabels::neighbor`] says `None` for those).
    pub fn interfaces(&self, v: u32) -> u16 {
        (self.light_start[v as usize + 1] - self.light_start[v as usize]) as u16 + 2
    }

    /// Bits of node `v`'s label: the id (⌈log2 n⌉ bits) and the field list and its mask.
    pub fn label_bits(&self, v: u32) -> u32 {
        let n = self.labels.len() as u64;
        let id_bits = (u64::BITS - n.saturating_sub(1).leading_zeros()).max(1);
        id_bits + 2 * u32::from(self.field_bits[v as usize])
    }

    /// Nodes labelled.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether no node is labelled.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hop-by-hop from `s` to `t`; the path walked.
    fn walk(l: &TzLabels, s: u32, t: u32) -> Vec<u32> {
        let mut path = vec![s];
        let mut at = s;
        for _ in 0..=l.len() {
            match l.router(at).forward(&l.label(t)).unwrap() {
                Hop::Deliver => return path,
                Hop::Interface(i) => at = l.neighbor(at, i).unwrap(),
            }
            path.push(at);
        }
        panic!("no delivery from {s} to {t}");
    }

    fn tree_path(t: &Tree, s: u32, d: u32) -> usize {
        let ancestors = |mut v: u32| {
            let mut a = vec![v];
            while t.parent(v) != NO_PARENT {
                v = t.parent(v);
                a.push(v);
            }
            a
        };
        let (a, b) = (ancestors(s), ancestors(d));
        let common = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
        a.len() + b.len() - 2 * common
    }

    #[test]
    fn every_pair_is_delivered_along_the_tree_path() {
        // A caterpillar with bushy nodes: light edges at several depths.
        let parent = vec![NO_PARENT, 0, 0, 0, 1, 1, 4, 4, 4, 2, 9, 9, 6];
        let tree = Tree::from_parents(parent).unwrap();
        let l = TzLabels::build(&tree).unwrap();
        for s in 0..tree.len() as u32 {
            for t in 0..tree.len() as u32 {
                assert_eq!(walk(&l, s, t).len() - 1, tree_path(&tree, s, t), "{s} → {t}");
            }
        }
    }

    #[test]
    fn router_state_round_trips_as_bytes() {
        let parent = vec![NO_PARENT, 0, 0, 0, 1, 1, 4, 4, 4, 2, 9, 9, 6];
        let l = TzLabels::build(&Tree::from_parents(parent).unwrap()).unwrap();
        for v in 0..l.len() as u32 {
            let r = l.router(v);
            assert_eq!(TzRouter::from_bytes(&r.to_bytes()), Ok(*r));
            assert_eq!(r.has_parent(), v != 0);
        }
        let mut bad = l.router(1).to_bytes();
        bad[20..24].copy_from_slice(&0u32.to_le_bytes());
        assert_eq!(TzRouter::from_bytes(&bad), Err(TagError::BadLocator));
    }

    #[test]
    fn bad_trees_and_locators_are_errors() {
        assert_eq!(Tree::from_parents(vec![1, 0]), Err(TagError::NotATree));
        assert_eq!(Tree::from_parents(vec![NO_PARENT, NO_PARENT]), Err(TagError::NotATree));
        assert_eq!(Tree::from_parents(vec![NO_PARENT, 7]), Err(TagError::NotATree));
        assert_eq!(Tree::from_parents(vec![NO_PARENT, 2, 1]), Err(TagError::NotATree));
        assert_eq!(Tree::bfs(&[vec![1], vec![0], vec![]], 0), Err(TagError::NotATree));
        let t = Tree::bfs(&[vec![1, 2], vec![0, 2], vec![0, 1]], 0).unwrap();
        assert_eq!((t.parent(1), t.parent(2)), (0, 0));
        let l = TzLabels::build(&t).unwrap();
        assert_eq!(l.router(0).forward(&Label { id: 3, list: 0, mask: 0 }), Err(TagError::BadLocator));
        // A light field naming a child that does not exist.
        let root = l.router(t.root());
        let light = l.label(2);
        assert_eq!(root.forward(&Label { list: 5, mask: 1 << 2, ..light }), Err(TagError::BadLocator));
    }
}
