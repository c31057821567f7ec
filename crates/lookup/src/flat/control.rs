//! The Othello control structure: the names, the bipartite graph G and a copy of the cells, kept
//! by the control plane, which builds and updates the query structure and emits the cells each
//! operation changed.
//!
//! # Graph
//! Vertices are the cells: u_i for A[i], v_j for B[j]; every name is the edge (u_{h_a}, v_{h_b})
//! and its action is A[u] ⊕ B[v]. G must stay acyclic (a forest), so every tree can be coloured.
//! Adjacency lists are intrusive singly linked lists threaded through the edge array.
//!
//! The graph is also the index from name to edge: a name's edge is in the list of its A vertex,
//! which the name's hash gives, so finding it reads that list (half an edge long on average at
//! the paper's sizes, comparing B vertices before names) — no hash map beside the graph, and one
//! chain of cache misses shorter on every update. Large arrays ask for transparent huge pages.
//!
//! # Operations (the paper's section IV-B)
//! - **construct**: pick a seed, test acyclicity with union–find (a repeated edge is a cycle),
//!   retry with the next seed until acyclic (≤ 1.51 tries expected at the paper's sizes). The
//!   same pass colours: each union–find link carries the XOR between a vertex's cell and its
//!   parent's, so no tree walk is needed afterwards.
//! - **add**: if both ends are in one tree the edge would close a cycle → reconstruct with a new
//!   seed (and the sizes for the new n). Otherwise XOR every cell of the smaller of the two trees
//!   by A[u] ⊕ B[v] ⊕ action: edges inside it keep their XOR, the new edge gets its action.
//! - **alter**: XOR the part of the tree on the B side of the edge by old ⊕ new action.
//! - **delete**: unlink the edge; no cell changes.
//! - Growth: when n passes the sizing rule (m_a ≥ 1.33 n), the next add reconstructs at the new
//!   size, so trees stay small (the paper's χ(G) ≤ 4) and operations O(1) amortised.
//!
//! Sizing (the paper's two options): `Equal` m_a = m_b = the smallest power of two ≥ 1.33 n;
//! `Unequal` m_a as before and m_b the smallest power of two ≥ n.

use super::cell::Cell;
use super::hash::{cells, checksum_above, key_hash, next_seed};
use super::key::StoredKey;
use super::query::{OthelloQuery, Patch};
use super::FlatError;
use crate::mem::{advise_huge_pages_for, huge_vec, prefetch};

/// "No edge" in the adjacency links.
const NIL: u32 = u32::MAX;
/// Marks a B-side vertex in the BFS queue.
const SIDE_B: u32 = 1 << 31;

/// One name's edge and its links: 16 bytes, so a tree walk reads one cache line per edge.
#[derive(Debug, Clone, Copy)]
#[repr(align(16))]
struct Edge {
    /// A-side vertex (cell of A), or [`FREE`] for an unused slot.
    u: u32,
    /// B-side vertex (cell of B).
    v: u32,
    /// Next edge at `u`.
    next_a: u32,
    /// Next edge at `v`.
    next_b: u32,
}

/// `Edge::u` of a slot no name holds (cells are below 2^31).
const FREE: u32 = NIL;

impl Edge {
    /// A live edge not yet placed (construction and growth place it).
    const UNPLACED: Edge = Edge { u: 0, v: 0, next_a: NIL, next_b: NIL };

    fn is_live(&self) -> bool {
        self.u != FREE
    }
}

/// How far ahead [`Othello::update_batch`] hashes names and fetches their cells.
pub const UPDATE_AHEAD: usize = 16;

/// One control-plane update of a name's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update<'k> {
    /// [`Othello::add`].
    Add(&'k [u8], u32),
    /// [`Othello::alter`].
    Alter(&'k [u8], u32),
    /// [`Othello::delete`].
    Delete(&'k [u8]),
}

impl<'k> Update<'k> {
    /// The name it updates.
    pub fn key(&self) -> &'k [u8] {
        match *self {
            Update::Add(key, _) | Update::Alter(key, _) | Update::Delete(key) => key,
        }
    }
}

/// A breadth-first walk of one tree of G, one vertex per [`Othello::step`].
#[derive(Debug, Clone, Default)]
struct Walk {
    /// Vertices reached, in order (`SIDE_B` marks B vertices).
    queue: Vec<u32>,
    /// The edge each vertex in `queue` was reached by.
    via: Vec<u32>,
    /// Vertices expanded so far.
    at: usize,
}

impl Walk {
    /// A walk from `x`, which does not cross edge `skip`.
    fn start(&mut self, x: u32, skip: u32) {
        self.queue.clear();
        self.via.clear();
        self.queue.push(x);
        self.via.push(skip);
        self.at = 0;
    }
}

/// What one step of a walk found.
enum Step {
    /// More vertices to expand.
    Going,
    /// The whole tree is enumerated.
    Done,
    /// The walk reached its target vertex.
    Reached,
}

/// What [`Othello::smaller_side`] found.
enum Sides {
    /// This walk (0: u's, 1: v's) enumerated its whole tree first.
    Smaller(usize),
    /// A walk reached the other end: u and v are in one tree.
    Joined,
}

/// How m_a and m_b follow n.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sizing {
    /// Option 1: m_a = m_b ≥ 1.33 n (the rigorous O(1) update bound).
    Equal,
    /// Option 2: m_a ≥ 1.33 n, m_b ≥ n (less memory; the paper found it slightly better).
    #[default]
    Unequal,
}

/// How an Othello is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OthelloConfig {
    /// l: bits of every action (actions 0..2^l).
    pub value_bits: u32,
    /// r: checksum bits stored beside the action to detect names outside the FIB (0 = none).
    pub checksum_bits: u32,
    /// m_a, m_b rule.
    pub sizing: Sizing,
    /// First seed tried.
    pub seed: u64,
}

impl OthelloConfig {
    /// l-bit actions, no checksum, option 2 sizing.
    pub fn new(value_bits: u32) -> Self {
        OthelloConfig { value_bits, checksum_bits: 0, sizing: Sizing::Unequal, seed: 0x4f74_6865_6c6c_6f21 }
    }
}

/// What a control-plane operation changed in the query structure.
#[derive(Debug)]
pub enum Delta<C: Cell> {
    /// These cells changed; patch the query structure in place.
    Patch(Patch<C>),
    /// The structure was rebuilt (new seed or sizes): replace it.
    Rebuilt(OthelloQuery<C>),
}

/// What the control structure counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OthelloStats {
    /// Reconstructions (cycles met by an add, or growth).
    pub rebuilds: u64,
    /// Seeds tried by all constructions.
    pub seeds_tried: u64,
    /// Cells written by adds and alters (not counting rebuilds).
    pub cells_patched: u64,
}

/// The control structure of an l-bit Parallel Othello Group over byte-string names.
#[derive(Debug, Clone)]
pub struct Othello<C: Cell> {
    cfg: OthelloConfig,
    seed: u64,
    ma_bits: u32,
    mb_bits: u32,
    a: Vec<C>,
    b: Vec<C>,
    // Edges, one per name (slots reused after delete).
    edges: Vec<Edge>,
    /// The names, by edge.
    keys: Vec<StoredKey>,
    /// The actions (without checksum bits), by edge.
    values: Vec<u32>,
    free_edges: Vec<u32>,
    /// Names held (live edges).
    len: usize,
    head_a: Vec<u32>,
    head_b: Vec<u32>,
    /// Tree-walk scratch: the u side's walk and the v side's.
    walks: [Walk; 2],
    patch: Patch<C>,
    rebuilt: bool,
    /// Patches taken since the last rebuild: the version of a query structure made now.
    version: u64,
    stats: OthelloStats,
}

fn bits_for(n: f64) -> u32 {
    (n.max(16.0).ceil() as u64).next_power_of_two().trailing_zeros()
}

impl<C: Cell> Othello<C> {
    /// An empty structure.
    ///
    /// # Errors
    /// [`FlatError::TooWide`] when l + r does not fit the cell type, or l is 0.
    pub fn new(cfg: OthelloConfig) -> Result<Self, FlatError> {
        Self::construct(cfg, std::iter::empty::<(&[u8], u32)>())
    }

    /// Builds the structure for `(name, action)` pairs in expected O(n).
    ///
    /// # Errors
    /// [`FlatError::TooWide`], [`FlatError::ValueTooWide`] for an action of more than l bits,
    /// [`FlatError::Duplicate`] for a name given twice.
    pub fn construct<'k>(cfg: OthelloConfig, pairs: impl IntoIterator<Item = (&'k [u8], u32)>) -> Result<Self, FlatError> {
        if cfg.value_bits == 0 || cfg.value_bits + cfg.checksum_bits > C::BITS {
            return Err(FlatError::TooWide { value_bits: cfg.value_bits, checksum_bits: cfg.checksum_bits, cell_bits: C::BITS });
        }
        let mut o = Othello {
            cfg,
            seed: cfg.seed,
            ma_bits: 0,
            mb_bits: 0,
            a: Vec::new(),
            b: Vec::new(),
            edges: Vec::new(),
            keys: Vec::new(),
            values: Vec::new(),
            free_edges: Vec::new(),
            len: 0,
            head_a: Vec::new(),
            head_b: Vec::new(),
            walks: Default::default(),
            patch: Patch::default(),
            rebuilt: true,
            version: 0,
            stats: OthelloStats::default(),
        };
        let pairs = pairs.into_iter();
        // Room for the names given and some growth, so the first adds do not move the arrays.
        let expected = pairs.size_hint().0;
        let room = expected + expected / 8;
        o.edges.reserve_exact(room);
        o.keys.reserve_exact(room);
        o.values.reserve_exact(room);
        advise_huge_pages_for(&mut o.edges);
        advise_huge_pages_for(&mut o.keys);
        for (key, value) in pairs {
            o.check_value(value)?;
            o.edges.push(Edge::UNPLACED);
            o.keys.push(StoredKey::new(key));
            o.values.push(value);
        }
        o.len = o.edges.len();
        // A name given twice is a repeated edge under every seed: a cycle. Cycles are rare
        // otherwise, so names are checked for repeats only after the first cyclic seed.
        o.rebuild(false, |o| o.has_repeated_name()).map_err(|()| FlatError::Duplicate)?;
        Ok(o)
    }

    /// Whether some name is held by two edges (only construction can do that).
    fn has_repeated_name(&self) -> bool {
        let mut seen = hashbrown::HashSet::with_capacity(self.len);
        !self.live_edges().all(|e| seen.insert(self.keys[e as usize].as_bytes()))
    }

    /// The slots of the names held, in slot order.
    fn live_edges(&self) -> impl Iterator<Item = u32> + '_ {
        self.edges.iter().enumerate().filter(|(_, edge)| edge.is_live()).map(|(e, _)| e as u32)
    }

    fn check_value(&self, value: u32) -> Result<(), FlatError> {
        if self.cfg.value_bits < 32 && value >> self.cfg.value_bits != 0 {
            return Err(FlatError::ValueTooWide { value, bits: self.cfg.value_bits });
        }
        Ok(())
    }

    /// The cell XOR an edge must have under the current seed: action | checksum << l.
    fn edge_cell(&self, e: u32) -> u32 {
        let v = self.values[e as usize];
        if self.cfg.checksum_bits == 0 {
            return v;
        }
        let h = key_hash(self.seed, self.keys[e as usize].as_bytes());
        v | checksum_above(h, self.cfg.checksum_bits, self.cfg.value_bits)
    }

    /// The edge of `key`, whose hash under the current seed is `hash`. Alter and delete go on
    /// to B vertex `j`: its list and cell are fetched meanwhile.
    fn find(&self, key: &[u8], hash: u64) -> Option<u32> {
        let (i, j) = cells(hash, self.ma_bits, self.mb_bits);
        self.prefetch_vertex(j as u32 | SIDE_B);
        self.find_at(key, i, j)
    }

    /// The edge of `key`, whose cells are (`i`, `j`): it is in the list of A vertex `i`, and
    /// only an edge that also ends at `j` needs its name compared.
    fn find_at(&self, key: &[u8], i: usize, j: usize) -> Option<u32> {
        let mut e = self.head_a[i];
        while e != NIL {
            let edge = &self.edges[e as usize];
            if edge.v as usize == j && self.keys[e as usize].as_bytes() == key {
                return Some(e);
            }
            e = edge.next_a;
        }
        None
    }

    /// Names held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no name is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What it counted.
    pub fn stats(&self) -> OthelloStats {
        self.stats
    }

    /// The action of a name in the FIB.
    pub fn get(&self, key: &[u8]) -> Option<u32> {
        self.find(key, key_hash(self.seed, key)).map(|e| self.values[e as usize])
    }

    /// Every (name, action), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u32)> + '_ {
        self.live_edges().map(|e| (self.keys[e as usize].as_bytes(), self.values[e as usize]))
    }

    /// A query structure for the data plane, holding the current cells.
    pub fn query(&self) -> OthelloQuery<C> {
        OthelloQuery::new(
            self.ma_bits,
            self.mb_bits,
            self.seed,
            self.version,
            self.cfg.value_bits,
            self.cfg.checksum_bits,
            &self.a,
            &self.b,
        )
    }

    /// The [`fingerprint`](super::query::fingerprint) of the query structures it makes.
    pub fn fingerprint(&self) -> u64 {
        super::query::fingerprint(self.seed, self.ma_bits, self.mb_bits, self.cfg.value_bits, self.cfg.checksum_bits)
    }

    /// What changed since the last call: a patch of cells, or a whole new structure after a
    /// reconstruction.
    pub fn take_delta(&mut self) -> Delta<C> {
        if std::mem::take(&mut self.rebuilt) {
            self.patch = Patch::default();
            return Delta::Rebuilt(self.query());
        }
        let mut patch = std::mem::take(&mut self.patch);
        (patch.structure, patch.version) = (self.fingerprint(), self.version);
        self.version += 1;
        Delta::Patch(patch)
    }

    /// [`Othello::take_delta`] into a caller's patch (cleared first), reusing its allocations;
    /// returns the new query structure instead when the structure was rebuilt.
    pub fn take_delta_into(&mut self, patch: &mut Patch<C>) -> Option<OthelloQuery<C>> {
        patch.a.clear();
        patch.b.clear();
        if std::mem::take(&mut self.rebuilt) {
            self.patch.a.clear();
            self.patch.b.clear();
            return Some(self.query());
        }
        std::mem::swap(&mut self.patch, patch);
        (patch.structure, patch.version) = (self.fingerprint(), self.version);
        self.version += 1;
        None
    }

    /// (A index, B index) of `key` under the current seed and sizes.
    pub(crate) fn cells_of(&self, key: &[u8]) -> (usize, usize) {
        cells(key_hash(self.seed, key), self.ma_bits, self.mb_bits)
    }

    /// The action the cells give `key` (for any name; the control-plane view of a lookup).
    pub fn lookup(&self, key: &[u8]) -> u32 {
        let (i, j) = self.cells_of(key);
        let cell = self.a[i].to_u32() ^ self.b[j].to_u32();
        if self.cfg.value_bits == 32 {
            cell
        } else {
            cell & ((1 << self.cfg.value_bits) - 1)
        }
    }

    // ------------------------------------------------------------------------------------------
    // Construction

    /// The sizes the sizing rule gives for `n` names.
    fn sizes_for(&self, n: usize) -> (u32, u32) {
        let ma = bits_for(1.33 * n as f64);
        let mb = match self.cfg.sizing {
            Sizing::Equal => ma,
            Sizing::Unequal => bits_for(n as f64),
        };
        (ma, mb)
    }

    /// Re-sizes, finds an acyclic seed, colours every tree and relinks every edge. With
    /// `new_seed` the current seed is skipped (it just produced a cycle). After the first cyclic
    /// seed, `hopeless` says whether any seed can succeed; if not, nothing is rebuilt: `Err`.
    ///
    /// One pass over the edges both tests acyclicity and colours: a union–find whose links carry
    /// the XOR between a vertex's cell and its parent's. Edge (u, v) with cell value w joins two
    /// trees by hanging root r_u under r_v with the XOR that makes A[u] ⊕ B[v] = w; u and v
    /// already in one tree is a cycle, and the next seed is tried. A vertex's cell is then the
    /// XOR along its path to its root (roots hold 0).
    fn rebuild(&mut self, new_seed: bool, hopeless: impl FnOnce(&Self) -> bool) -> Result<(), ()> {
        let (mut ma_bits, mut mb_bits) = self.sizes_for(self.len());
        if new_seed {
            self.seed = next_seed(self.seed);
        }
        let mut hopeless = Some(hopeless);
        // Live edges in slot order, so the passes below read names and edges sequentially.
        let live: Vec<u32> = self.live_edges().collect();
        let mut forest = XorForest::default();
        let mut tries = 0u32;
        loop {
            self.stats.seeds_tried += 1;
            let (ma, mb) = (1usize << ma_bits, 1usize << mb_bits);
            forest.reset(ma + mb);
            // The union–find's first reads are random: hash and prefetch AHEAD edges in advance.
            const AHEAD: usize = 16;
            let (seed, keys, values, edges) = (self.seed, &self.keys, &self.values, &mut self.edges);
            let (value_bits, checksum_bits) = (self.cfg.value_bits, self.cfg.checksum_bits);
            let ends = |e: u32| {
                let h = key_hash(seed, keys[e as usize].as_bytes());
                let (i, j) = cells(h, ma_bits, mb_bits);
                (i, ma + j, checksum_above(h, checksum_bits, value_bits))
            };
            let mut ring = [(0usize, 0usize, 0u32); AHEAD];
            for (slot, &e) in ring.iter_mut().zip(&live) {
                *slot = ends(e);
                forest.prefetch(slot.0, slot.1);
            }
            let mut acyclic = true;
            for (k, &e) in live.iter().enumerate() {
                let (i, j, check) = ring[k % AHEAD];
                if let Some(&next) = live.get(k + AHEAD) {
                    ring[k % AHEAD] = ends(next);
                    forest.prefetch(ring[k % AHEAD].0, ring[k % AHEAD].1);
                }
                if !forest.join(i, j, values[e as usize] | check) {
                    acyclic = false;
                    break;
                }
                let edge = &mut edges[e as usize];
                edge.u = i as u32;
                edge.v = (j - ma) as u32;
            }
            if acyclic {
                break;
            }
            if hopeless.take().is_some_and(|hopeless| hopeless(self)) {
                return Err(());
            }
            self.seed = next_seed(self.seed);
            tries += 1;
            // Unlucky (or adversarial) names: after every 16 cyclic seeds, double both tables.
            if tries.is_multiple_of(16) {
                ma_bits += 1;
                mb_bits += 1;
            }
        }
        self.ma_bits = ma_bits;
        self.mb_bits = mb_bits;
        let (ma, mb) = (1usize << ma_bits, 1usize << mb_bits);
        // The old arrays go before the new ones are made, so both are never held at once.
        self.a = Vec::new();
        self.a = huge_vec(ma, C::default());
        self.a.iter_mut().enumerate().for_each(|(u, c)| *c = C::from_u32(forest.cell(u)));
        self.b = Vec::new();
        self.b = huge_vec(mb, C::default());
        self.b.iter_mut().enumerate().for_each(|(v, c)| *c = C::from_u32(forest.cell(ma + v)));
        drop(forest);
        self.head_a = Vec::new();
        self.head_a = huge_vec(ma, NIL);
        self.head_b = Vec::new();
        self.head_b = huge_vec(mb, NIL);
        for &e in &live {
            self.link(e);
        }
        self.rebuilt = true;
        self.patch = Patch::default();
        self.version = 0;
        Ok(())
    }

    fn link(&mut self, e: u32) {
        let (u, v) = (self.edges[e as usize].u as usize, self.edges[e as usize].v as usize);
        self.edges[e as usize].next_a = self.head_a[u];
        self.head_a[u] = e;
        self.edges[e as usize].next_b = self.head_b[v];
        self.head_b[v] = e;
    }

    fn unlink(&mut self, e: u32) {
        let (u, v) = (self.edges[e as usize].u as usize, self.edges[e as usize].v as usize);
        unlink_from(&mut self.head_a[u], &mut self.edges, e, |x| &mut x.next_a);
        unlink_from(&mut self.head_b[v], &mut self.edges, e, |x| &mut x.next_b);
    }

    // ------------------------------------------------------------------------------------------
    // Components

    /// Walks the two trees on either side of an edge (u, v) at once, one vertex of each in
    /// turn, until one walk has enumerated its whole tree: that side is the smaller, and it is
    /// what an update flips. `skip` is the edge itself when it is already in G (an alter), so
    /// neither walk crosses it; `NIL` for an edge about to be added, whose ends may then turn out
    /// to share a tree (a walk reaches the other end): [`Sides::Joined`].
    ///
    /// Interleaving bounds the work by twice the smaller tree, and three updates in four at the
    /// paper's sizes have an end with no other edge, found in one step; the two walks' cache
    /// misses also overlap.
    fn smaller_side(&mut self, u: u32, v: u32, skip: u32) -> Sides {
        let mut walks = std::mem::take(&mut self.walks);
        walks[0].start(u, skip);
        walks[1].start(v | SIDE_B, skip);
        let targets = [v | SIDE_B, u];
        let sides = 'walk: loop {
            for (side, walk) in walks.iter_mut().enumerate() {
                match self.step(walk, targets[side]) {
                    Step::Going => {}
                    Step::Done => break 'walk Sides::Smaller(side),
                    Step::Reached => break 'walk Sides::Joined,
                }
            }
        };
        self.walks = walks;
        sides
    }

    /// Expands the next vertex of `walk`: `Reached` if it is `target`, `Done` when that was the
    /// last vertex of its tree.
    fn step(&self, walk: &mut Walk, target: u32) -> Step {
        // G is a forest, so a walk needs no visited marks: skipping the edge a vertex was reached
        // by is enough, and the walk reads only the vertices' list heads and their edges.
        let (x, came_by) = (walk.queue[walk.at], walk.via[walk.at]);
        walk.at += 1;
        if x == target {
            return Step::Reached;
        }
        let (side_b, idx) = (x & SIDE_B != 0, (x & !SIDE_B) as usize);
        let mut e = if side_b { self.head_b[idx] } else { self.head_a[idx] };
        while e != NIL {
            let edge = &self.edges[e as usize];
            let (other, next) = if side_b { (edge.u, edge.next_b) } else { (edge.v | SIDE_B, edge.next_a) };
            if e != came_by {
                // Its list and cell are read later: fetch them while this level is walked.
                self.prefetch_vertex(other);
                walk.queue.push(other);
                walk.via.push(e);
            }
            e = next;
        }
        if walk.at == walk.queue.len() {
            Step::Done
        } else {
            Step::Going
        }
    }

    /// Starts loading the list head and the cell of vertex `x` (`SIDE_B` marks B vertices).
    #[inline(always)]
    fn prefetch_vertex(&self, x: u32) {
        let idx = (x & !SIDE_B) as usize;
        if x & SIDE_B != 0 {
            prefetch(&self.head_b[idx]);
            prefetch(&self.b[idx]);
        } else {
            prefetch(&self.head_a[idx]);
            prefetch(&self.a[idx]);
        }
    }

    /// XORs every vertex of the tree `walks[side]` enumerated by `delta`, recording the
    /// changed cells.
    fn flip(&mut self, side: usize, delta: u32) {
        for q in 0..self.walks[side].queue.len() {
            let x = self.walks[side].queue[q];
            let idx = (x & !SIDE_B) as usize;
            if x & SIDE_B != 0 {
                self.b[idx] = C::from_u32(self.b[idx].to_u32() ^ delta);
                self.patch.b.push((idx as u32, self.b[idx]));
            } else {
                self.a[idx] = C::from_u32(self.a[idx].to_u32() ^ delta);
                self.patch.a.push((idx as u32, self.a[idx]));
            }
            self.stats.cells_patched += 1;
        }
    }

    // ------------------------------------------------------------------------------------------
    // Updates

    /// Adds `key` with `action`.
    ///
    /// # Errors
    /// [`FlatError::Duplicate`] if it is already there, [`FlatError::ValueTooWide`]; nothing
    /// changes then.
    pub fn add(&mut self, key: &[u8], action: u32) -> Result<(), FlatError> {
        self.add_hashed(key, action, key_hash(self.seed, key))
    }

    /// [`Othello::add`] of a name whose hash under the current seed is `hash`.
    fn add_hashed(&mut self, key: &[u8], action: u32, hash: u64) -> Result<(), FlatError> {
        self.check_value(action)?;
        // The cells' lists and values are needed after the duplicate check: fetch them meanwhile.
        let (i, j) = cells(hash, self.ma_bits, self.mb_bits);
        self.prefetch_cells(hash);
        if self.find_at(key, i, j).is_some() {
            return Err(FlatError::Duplicate);
        }
        let placed = Edge { u: i as u32, v: j as u32, ..Edge::UNPLACED };
        let e = match self.free_edges.pop() {
            Some(e) => {
                self.edges[e as usize] = placed;
                self.keys[e as usize] = StoredKey::new(key);
                self.values[e as usize] = action;
                e
            }
            None => {
                self.edges.push(placed);
                self.keys.push(StoredKey::new(key));
                self.values.push(action);
                self.edges.len() as u32 - 1
            }
        };
        self.len += 1;
        // Growth: past the sizing rule, rebuild at the new size instead of letting trees grow.
        if (1usize << self.ma_bits) < (1.33 * self.len() as f64) as usize {
            self.stats.rebuilds += 1;
            self.rebuild_unique(false);
            return Ok(());
        }
        match self.smaller_side(i as u32, j as u32, NIL) {
            // Same tree (or the same two cells twice): the new edge would close a cycle.
            Sides::Joined => {
                self.stats.rebuilds += 1;
                self.rebuild_unique(true);
                return Ok(());
            }
            Sides::Smaller(side) => {
                let delta = self.a[i].to_u32() ^ self.b[j].to_u32() ^ self.edge_cell(e);
                if delta != 0 {
                    self.flip(side, delta);
                }
            }
        }
        self.link(e);
        Ok(())
    }

    /// Gives `key` a new action.
    ///
    /// # Errors
    /// [`FlatError::NotFound`], [`FlatError::ValueTooWide`]; nothing changes then.
    pub fn alter(&mut self, key: &[u8], action: u32) -> Result<(), FlatError> {
        self.alter_hashed(key, action, key_hash(self.seed, key))
    }

    /// [`Othello::alter`] of a name whose hash under the current seed is `hash`.
    fn alter_hashed(&mut self, key: &[u8], action: u32, hash: u64) -> Result<(), FlatError> {
        self.check_value(action)?;
        let e = self.find(key, hash).ok_or(FlatError::NotFound)?;
        let delta = self.values[e as usize] ^ action;
        self.values[e as usize] = action;
        if delta != 0 {
            let Edge { u, v, .. } = self.edges[e as usize];
            // Either side of the edge may be flipped: its XOR changes, every other edge's stays.
            match self.smaller_side(u, v, e) {
                Sides::Smaller(side) => self.flip(side, delta),
                Sides::Joined => unreachable!("a forest has one path between the ends of an edge: the edge"),
            }
        }
        Ok(())
    }

    /// Removes `key`.
    ///
    /// # Errors
    /// [`FlatError::NotFound`]; nothing changes then.
    pub fn delete(&mut self, key: &[u8]) -> Result<(), FlatError> {
        self.delete_hashed(key, key_hash(self.seed, key))
    }

    /// [`Othello::delete`] of a name whose hash under the current seed is `hash`.
    fn delete_hashed(&mut self, key: &[u8], hash: u64) -> Result<(), FlatError> {
        let e = self.find(key, hash).ok_or(FlatError::NotFound)?;
        self.unlink(e);
        self.edges[e as usize].u = FREE;
        self.keys[e as usize] = StoredKey::EMPTY;
        self.free_edges.push(e);
        self.len -= 1;
        Ok(())
    }

    /// Applies one update: [`Othello::add`], [`Othello::alter`] or [`Othello::delete`].
    ///
    /// # Errors
    /// Those of the operation; nothing changes then.
    pub fn update(&mut self, update: Update<'_>) -> Result<(), FlatError> {
        self.update_hashed(update, key_hash(self.seed, update.key()))
    }

    fn update_hashed(&mut self, update: Update<'_>, hash: u64) -> Result<(), FlatError> {
        match update {
            Update::Add(key, action) => self.add_hashed(key, action, hash),
            Update::Alter(key, action) => self.alter_hashed(key, action, hash),
            Update::Delete(key) => self.delete_hashed(key, hash),
        }
    }

    /// Applies `updates` in order, exactly as [`Othello::update`] one by one would, and reports
    /// each one's result as `done(index, result)` (a refused update changes nothing, and the
    /// rest go on). The changed cells accumulate into one delta for the whole batch.
    ///
    /// An update is a short chain of dependent cache misses (its vertices' lists, then their
    /// edges); one by one, the chains run back to back. Here they overlap: [`UPDATE_AHEAD`]
    /// updates ahead, a name is hashed and its vertices' list heads and cells are fetched; half
    /// as far ahead, the heads (in cache by then) are read and the first edge of each list is
    /// fetched. The hints are read under the structure as it is then, so an earlier update that
    /// changes it can only make a hint useless, never an answer wrong.
    pub fn update_batch(&mut self, updates: &[Update<'_>], mut done: impl FnMut(usize, Result<(), FlatError>)) {
        let mut hashes = [(0u64, 0u64); UPDATE_AHEAD];
        let hash = |o: &Self, k: usize| (o.seed, key_hash(o.seed, updates[k].key()));
        for (k, slot) in hashes.iter_mut().enumerate().take(updates.len()) {
            *slot = hash(self, k);
            self.prefetch_cells(slot.1);
        }
        for k in 0..updates.len() {
            if let Some(ahead) = k.checked_add(UPDATE_AHEAD / 2).filter(|&x| x < updates.len()) {
                self.prefetch_first_edges(hashes[ahead % UPDATE_AHEAD].1);
            }
            let (seed, h) = hashes[k % UPDATE_AHEAD];
            // A reconstruction since the hash was taken changed the seed: hash again.
            let h = if seed == self.seed { h } else { key_hash(self.seed, updates[k].key()) };
            if k + UPDATE_AHEAD < updates.len() {
                hashes[k % UPDATE_AHEAD] = hash(self, k + UPDATE_AHEAD);
                self.prefetch_cells(hashes[k % UPDATE_AHEAD].1);
            }
            done(k, self.update_hashed(updates[k], h));
        }
    }

    /// Starts loading both list heads and both cells of the name hashed to `hash`.
    #[inline(always)]
    fn prefetch_cells(&self, hash: u64) {
        let (i, j) = cells(hash, self.ma_bits, self.mb_bits);
        self.prefetch_vertex(i as u32);
        self.prefetch_vertex(j as u32 | SIDE_B);
    }

    /// Reads both list heads of the name hashed to `hash` and starts loading their first edges
    /// (and the name of the A list's, which a find compares).
    #[inline(always)]
    fn prefetch_first_edges(&self, hash: u64) {
        let (i, j) = cells(hash, self.ma_bits, self.mb_bits);
        let (ea, eb) = (self.head_a[i], self.head_b[j]);
        if ea != NIL {
            prefetch(&self.edges[ea as usize]);
            prefetch(&self.keys[ea as usize]);
        }
        if eb != NIL {
            prefetch(&self.edges[eb as usize]);
        }
    }

    /// [`Othello::rebuild`] of names known to be distinct (every add checked), which always
    /// succeeds.
    fn rebuild_unique(&mut self, new_seed: bool) {
        let distinct = self.rebuild(new_seed, |_| false);
        debug_assert!(distinct.is_ok());
    }
}

/// Takes edge `e` out of the list starting at `head` and linked through the field `next`
/// selects.
fn unlink_from(head: &mut u32, edges: &mut [Edge], e: u32, next: impl Fn(&mut Edge) -> &mut u32) {
    let after = *next(&mut edges[e as usize]);
    if *head == e {
        *head = after;
        return;
    }
    let mut p = *head;
    while *next(&mut edges[p as usize]) != e {
        p = *next(&mut edges[p as usize]);
    }
    *next(&mut edges[p as usize]) = after;
}

/// The construction's union–find over all vertices (A's, then B's), each link carrying the XOR
/// between a vertex's cell and its parent's; a vertex's parent and XOR share a cache line.
#[derive(Debug, Default)]
struct XorForest {
    /// (parent, XOR of this vertex's cell with the parent's) by vertex.
    links: Vec<(u32, u32)>,
}

impl XorForest {
    /// `vertices` singletons.
    fn reset(&mut self, vertices: usize) {
        self.links.clear();
        self.links.extend((0..vertices as u32).map(|x| (x, 0)));
    }

    fn prefetch(&self, x: usize, y: usize) {
        prefetch(&self.links[x]);
        prefetch(&self.links[y]);
    }

    /// x's root and the XOR of x's cell with the root's, halving the path on the way.
    fn root(&mut self, mut x: u32) -> (u32, u32) {
        let mut acc = 0;
        loop {
            let (p, to_p) = self.links[x as usize];
            if p == x {
                return (x, acc);
            }
            // x now hangs from its grandparent: its XOR absorbs the parent's (0 for a root).
            let (gp, p_to_gp) = self.links[p as usize];
            self.links[x as usize] = (gp, to_p ^ p_to_gp);
            acc ^= to_p ^ p_to_gp;
            x = gp;
        }
    }

    /// Requires cell(x) ⊕ cell(y) = w; false (and nothing joined) when x and y share a tree.
    fn join(&mut self, x: usize, y: usize, w: u32) -> bool {
        let ((rx, px), (ry, py)) = (self.root(x as u32), self.root(y as u32));
        if rx == ry {
            return false;
        }
        // cell(x) = cell(rx) ⊕ px and cell(y) = cell(ry) ⊕ py, so cell(rx) = cell(ry) ⊕ px ⊕ py ⊕ w.
        self.links[rx as usize] = (ry, px ^ py ^ w);
        true
    }

    /// The cell of `x` with every root at 0.
    fn cell(&mut self, x: usize) -> u32 {
        self.root(x as u32).1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xor_forest_colours_every_edge_and_refuses_cycles() {
        // A path 0–3–1–4 and a star at 2 over 6 vertices; each edge asks for its own XOR.
        let edges = [(0, 3, 5u32), (1, 3, 9), (1, 4, 6), (2, 5, 7)];
        let mut f = XorForest::default();
        f.reset(6);
        for &(x, y, w) in &edges {
            assert!(f.join(x, y, w));
        }
        assert!(!f.join(0, 4, 1), "0 and 4 share a tree");
        assert!(!f.join(5, 2, 1), "a repeated edge is a cycle");
        let cells: Vec<u32> = (0..6).map(|x| f.cell(x)).collect();
        for &(x, y, w) in &edges {
            assert_eq!(cells[x] ^ cells[y], w, "edge {x}–{y}");
        }
    }

    #[test]
    fn thirty_two_bit_actions_construct() {
        let names: Vec<[u8; 4]> = (0..300u32).map(u32::to_le_bytes).collect();
        let o = Othello::<u32>::construct(
            OthelloConfig::new(32),
            names.iter().map(|k| (&k[..], u32::from_le_bytes(*k).wrapping_mul(0x9e37_79b9))),
        )
        .unwrap();
        for k in &names {
            assert_eq!(o.lookup(k), u32::from_le_bytes(*k).wrapping_mul(0x9e37_79b9));
        }
    }

    #[test]
    fn construction_colours_every_name() {
        let names: Vec<Vec<u8>> = (0..5000u32).map(|i| i.to_le_bytes().to_vec()).collect();
        let o =
            Othello::<u16>::construct(OthelloConfig::new(12), names.iter().map(|k| (k.as_slice(), u32::from(k[0]) * 13 % 4096))).unwrap();
        for k in &names {
            assert_eq!(o.lookup(k), u32::from(k[0]) * 13 % 4096);
        }
    }
}
