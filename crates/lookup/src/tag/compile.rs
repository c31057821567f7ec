//! The compiled descriptor FIB: the paper's prefix trie of 1-bit positions as one compact vector.
//!
//! # Overview
//! Each descriptor is the sequence of its 1-bit positions; the trie shares common prefixes of
//! those sequences, and a terminator ends each descriptor and names its port set. Every node
//! keeps the minimum and maximum depth (Hamming weight) of the descriptors below it, which the
//! matchers prune with. [`CompiledFib::build`] applies the paper's transformations (section 3.2):
//! - **Bit permutation** ([`Compression::Perm`]): positions are renumbered by decreasing
//!   popularity across the FIB, so popular bits come first and prefixes are shared more; each
//!   query is renumbered the same way before the walk.
//! - **Terminal-chain removal** ([`Compression::PermChain`]): a path below which only one
//!   descriptor lives is replaced by its terminator, which keeps the removed positions in a side
//!   byte array and checks them all at once when reached.
//! - **Vector form**: first-child/next-sibling, with next-sibling implicit (siblings are
//!   consecutive, the last one flagged) and first-child an index.
//! - **Sibling order** ([`SiblingOrder`]): a list is sorted by position, ascending as the
//!   paper draws it (the terminator of a descriptor that ends at the parent last), or
//!   descending (kept to measure against: series `descending` of the `tagnet` experiment).
//!   Ascending, FLS stops reading a list at the first sibling that can no longer beat its best
//!   match; descending, it has to pass over the head of the list instead.
//! - **Layouts** ([`Layout`]): siblings' subtrees are placed in sibling order (SOL) or in reverse
//!   (SROL). The paper's depth-first walk pushes a list's children in list order and pops the
//!   last pushed first, so SROL puts what it reads next right after what it just read. (FAS
//!   now walks breadth-first by default, which no layout follows; see [`super::FasOrder`].)
//!
//! The trie is built straight into the vector from the descriptors sorted as position sequences
//! (no pointer trie in between): a node is a range of the sorted array that shares a prefix, its
//! children the sub-ranges that agree on the next position.
//!
//! A node is 8 bytes: position, min depth, max depth, guard, and a 32-bit link. An inner node's
//! link is two flags (terminator, last sibling), a *skip* flag (below) and its first child's
//! index. A terminator keeps three positions of its chain in its position, min-depth and guard
//! bytes: the first, then the two rarest of the rest (the next two when positions are numbered
//! rarest first, the last two when most popular first; [`super::chain::KeptPositions`]); a
//! chain of three or fewer keeps all of them, its first repeated for any missing (an empty
//! chain repeats the path's last position). A chain the query lacks is then mostly rejected
//! without leaving the vector, and the link holds the port-set id and where the terminator's
//! record starts. The record (the chain's other positions, Rice-coded with one parameter for
//! the whole FIB, see [`super::chain`]) is read only when all three positions match. Records
//! are one bit stream in node order with no padding, found through a base per block of 2^s
//! nodes (the stream's byte where the block's records start) and the record's bit offset from
//! it in the link; s is the largest block whose records always fit the bits the port-set id
//! leaves (ids take as many bits as the FIB's number of port sets needs). The position and
//! guard bytes of every node are then positions the query must have, which the walks test
//! first, for either kind of node.
//!
//! **Skips** (ours, with chain removal): an inner node with a single child takes that child's
//! position as its guard byte and links straight to the child's children, flagged so the walk
//! counts two positions of depth. Both positions are tested by the walk's first test, so the
//! trie answers as before with one node fewer on every such path — the paper removes only
//! terminal chains; these are the shared one-child steps above them. With guards, a single
//! child's position is exactly the guard the node would have had (the next position every
//! descriptor below it has); the skipped child's own guard is then not tested, so a walk may
//! read its child list where it would have stopped one node earlier.
//!
//! **Guards** (not the paper's; kept by [`Compression::RareChain`]): an inner node's guard is a
//! position every descriptor below it has besides its path — the rarest of them. A query
//! without it cannot contain any of them, so the walk does not enter the subtree: entering
//! through a rare bit the query happens to share (Bloom filters of unrelated tags overlap) is
//! then stopped one level earlier, before its child list is read.

use hashbrown::HashMap;

use super::chain::{KeptPositions, RecordWriter, RiceCost, MAX_TAIL_BITS, MIN_K};
use super::node::{Node, CHILD, LAST, SKIP, TERMINAL};
use super::{Descriptor, FasOrder, FlsBatchOrder, FlsOrder, PortSet, RecordCheck, TagError, FILTER_BITS};
use crate::mem::huge_collect;

/// Which of the paper's compressions to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Positions as they are, terminators as leaves.
    None,
    /// Positions renumbered by popularity.
    Perm,
    /// Renumbered, and terminal chains replaced by their terminator.
    PermChain,
    /// Not the paper's: renumbered by *increasing* popularity (rarest bit first), terminal
    /// chains removed, and inner nodes guarded (see the module overview). A subtree is then
    /// entered only through its descriptors' rarest bits, the trie's form of an inverted index
    /// keyed by the rarest element.
    RareChain,
}

impl Compression {
    /// Every compression, the paper's three first.
    pub const ALL: [Compression; 4] = [Compression::None, Compression::Perm, Compression::PermChain, Compression::RareChain];

    /// The name in result rows.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Perm => "perm",
            Compression::PermChain => "perm+chain",
            Compression::RareChain => "rare+chain",
        }
    }
}

/// Where each sibling list's subtrees go in the vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Sibling order layout: subtrees in sibling order.
    Sol,
    /// Sibling reverse order layout: subtrees in reverse sibling order.
    Srol,
}

impl Layout {
    /// Both layouts.
    pub const ALL: [Layout; 2] = [Layout::Sol, Layout::Srol];

    /// The name in result rows.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Sol => "sol",
            Layout::Srol => "srol",
        }
    }
}

/// Every compression × layout, in the order results list them.
pub const VARIANTS: [(Compression, Layout); 8] = [
    (Compression::None, Layout::Sol),
    (Compression::None, Layout::Srol),
    (Compression::Perm, Layout::Sol),
    (Compression::Perm, Layout::Srol),
    (Compression::PermChain, Layout::Sol),
    (Compression::PermChain, Layout::Srol),
    (Compression::RareChain, Layout::Sol),
    (Compression::RareChain, Layout::Srol),
];

/// A terminator's link bits below the flags: its record's offset from its block's base, above
/// its port-set id.
const PAYLOAD: u32 = LAST - 1;
/// The bits of [`PAYLOAD`].
const PAYLOAD_BITS: u32 = 30;
/// The largest block of nodes that shares one record base.
const MAX_BLOCK_SHIFT: u32 = 10;

/// The order of a sibling list (see the module overview).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SiblingOrder {
    /// Lowest position first, as the paper draws its tries (the default).
    #[default]
    Ascending,
    /// Highest position first (measured against the default).
    Descending,
}

impl SiblingOrder {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            SiblingOrder::Ascending => "ascending",
            SiblingOrder::Descending => "descending",
        }
    }
}

/// The compiled FIB the matchers walk (see the module overview).
#[derive(Debug, Clone)]
pub struct CompiledFib {
    /// The vector; the root's children are the list starting at 0.
    pub(super) nodes: Vec<Node>,
    /// Terminator records: the chains' positions besides the three their nodes hold, one bit
    /// stream in node order (see [`super::chain`]), then [`TAIL_PAD`] zero bytes (with chains
    /// removed; the uncompressed forms have none).
    pub(super) records: Vec<u8>,
    /// Per block of 2^`block_shift` nodes, the byte of `records` its terminators' offsets count
    /// from.
    record_base: Vec<u32>,
    block_shift: u32,
    /// The low bits of a terminator's payload that hold its port-set id.
    id_bits: u32,
    /// The records' Rice parameter.
    pub(super) rice_k: u32,
    /// Which positions of a removed chain its terminator keeps (its record holds the rest).
    pub(super) kept: KeptPositions,
    /// Distinct port sets, by id.
    pub(super) port_sets: Vec<PortSet>,
    /// Original position → compiled position.
    pub(super) perm: [u8; FILTER_BITS],
    /// Whether `perm` is the identity (queries are used as they are).
    pub(super) identity: bool,
    descriptors: usize,
    compression: Compression,
    layout: Layout,
    /// How sibling lists are ordered (FLS stops reading an ascending list where it can no
    /// longer beat its best match, and skips the head of a descending one).
    pub(super) order: SiblingOrder,
    /// Whether the walks prefetch the child lists they will read (on unless turned off, to
    /// measure what the layouts give without it).
    pub(super) prefetch: bool,
    /// The order FAS reads the lists it pushes in.
    pub(super) fas_order: FasOrder,
    /// The order FLS reads lists in.
    pub(super) fls_order: FlsOrder,
    /// How FLS walks a batch's packets (depth-first).
    pub(super) fls_batch_order: FlsBatchOrder,
    /// When FAS tests a terminator's chain record (an experiment may set it).
    pub(super) fas_record_check: RecordCheck,
    /// Whether the walks read lists eight nodes at a time with AVX-512 (where the CPU has it,
    /// unless turned off; see [`super::list_scan`]).
    pub(super) simd: bool,
    /// Whether FAS takes its steps with AVX-512 VBMI: `simd`, on a CPU that also has VBMI
    /// (chosen once here, not at every walk).
    pub(super) vbmi: bool,
}

/// The renumbering of positions `compression` applies to a FIB of `descriptors`: none, or by
/// popularity ([`popularity`]).
fn permutation(compression: Compression, descriptors: impl Iterator<Item = Descriptor>) -> [u8; FILTER_BITS] {
    match compression {
        Compression::None => IDENTITY,
        c => popularity(descriptors, c == Compression::RareChain),
    }
}

/// Positions renumbered by decreasing popularity (ties by position), or increasing when
/// `rarest_first`: `perm[p]` is p's new number.
fn popularity(descriptors: impl Iterator<Item = Descriptor>, rarest_first: bool) -> [u8; FILTER_BITS] {
    let mut count = [0u64; FILTER_BITS];
    for d in descriptors {
        for p in d.positions() {
            count[p] += 1;
        }
    }
    let mut order: Vec<usize> = (0..FILTER_BITS).collect();
    if rarest_first {
        order.sort_by_key(|&p| (count[p], p));
    } else {
        order.sort_by_key(|&p| (core::cmp::Reverse(count[p]), p));
    }
    let mut perm = [0u8; FILTER_BITS];
    for (rank, p) in order.into_iter().enumerate() {
        perm[p] = rank as u8;
    }
    perm
}

/// The permutation that keeps every position.
const IDENTITY: [u8; FILTER_BITS] = {
    let mut perm = [0u8; FILTER_BITS];
    let mut p = 0;
    while p < FILTER_BITS {
        perm[p] = p as u8;
        p += 1;
    }
    perm
};

/// The positions two descriptors' sequences share from their start, both held as
/// [`sort_key`]s: the positions of `a` before the first position where the two differ.
fn shared_prefix(a: &[u64; 3], b: &[u64; 3]) -> u32 {
    let mut shared = 0;
    for (&x, &y) in a.iter().zip(b) {
        let differ = x ^ y;
        if differ != 0 {
            // Key bits run from the word's top bit down (position p is bit 63 − p % 64): the
            // shared positions of this word are its bits above the first that differs.
            let top = differ.leading_zeros();
            let above = if top == 0 { 0 } else { x >> (64 - top) };
            return shared + above.count_ones();
        }
        shared += x.count_ones();
    }
    shared
}

/// The bytes a compiled FIB of `nodes` nodes, `records` bytes of terminator records,
/// `bases` record bases and `port_sets` port sets takes, the permutation included
/// ([`CompiledFib::memory_bytes`]).
fn memory_of(nodes: usize, records: usize, bases: usize, port_sets: usize) -> usize {
    nodes * core::mem::size_of::<Node>()
        + records
        + bases * core::mem::size_of::<u32>()
        + port_sets * core::mem::size_of::<PortSet>()
        + FILTER_BITS
}

/// What an uncompressed FIB takes ([`CompiledFib::plain_size`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlainSize {
    /// Trie nodes.
    pub nodes: u64,
    /// Bytes, as [`CompiledFib::memory_bytes`] counts them.
    pub bytes: u64,
}

/// `d` with its positions renumbered by `perm`.
#[inline]
pub(super) fn permute(d: &Descriptor, perm: &[u8; FILTER_BITS]) -> Descriptor {
    let mut out = Descriptor::EMPTY;
    for p in d.positions() {
        out.set(usize::from(perm[p]));
    }
    out
}

/// A sort key under which descending order is the trie's order: position sequences compared
/// lexicographically, a sequence before its own prefixes (terminators last among siblings).
/// Position p becomes bit 63 − p%64 of word p/64, so the first differing position is the most
/// significant differing bit and the sequence that has it is the larger key.
fn sort_key(d: &Descriptor) -> [u64; 3] {
    [d.0[0].reverse_bits(), d.0[1].reverse_bits(), d.0[2].reverse_bits()]
}

/// The FIB's descriptors as position sequences in trie order, with their sort keys.
struct Sorted {
    positions: Vec<u8>,
    start: Vec<u32>,
    set: Vec<u16>,
    keys: Vec<[u64; 3]>,
}

impl Sorted {
    #[inline]
    fn weight(&self, i: usize) -> usize {
        (self.start[i + 1] - self.start[i]) as usize
    }
    #[inline]
    fn pos(&self, i: usize, depth: usize) -> u8 {
        self.positions[self.start[i] as usize + depth]
    }
    #[inline]
    fn sequence(&self, i: usize) -> &[u8] {
        &self.positions[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// The Rice parameter that makes the records of removed chains smallest. Descriptor i's
    /// chain starts where no neighbour in sorted order shares its prefix any more (its longest
    /// common prefix with either), which is where the trie's walk down to it becomes a path of
    /// one descriptor.
    fn rice_k(&self, kept: KeptPositions) -> u32 {
        let common = |i: usize, j: usize| self.sequence(i).iter().zip(self.sequence(j)).take_while(|(a, b)| a == b).count();
        let n = self.set.len();
        let mut cost = RiceCost::default();
        let mut before = 0;
        for i in 0..n {
            let after = if i + 1 < n { common(i, i + 1) } else { 0 };
            let seq = self.sequence(i);
            if let Some(chain) = seq.get(before.max(after)..).filter(|c| c.len() > 3) {
                let (_, from, record) = kept.split(chain);
                cost.add(from, record);
            }
            before = after;
        }
        cost.best()
    }
}

/// `common` ∩ `key`, both sets of positions held as [`sort_key`]s.
fn intersect(common: &mut [u64; 3], key: &[u64; 3]) {
    common.iter_mut().zip(key).for_each(|(c, k)| *c &= k);
}

/// The first position after `pos` in a set of positions held as a [`sort_key`].
fn first_after(key: &[u64; 3], pos: u8) -> Option<u8> {
    let (word, bit) = (usize::from(pos) / 64, 63 - u32::from(pos) % 64);
    let rest = key[word] & ((1u64 << bit) - 1);
    core::iter::once(rest)
        .chain(key[word + 1..].iter().copied())
        .enumerate()
        .find(|&(_, w)| w != 0)
        .map(|(i, w)| ((word + i) * 64) as u8 + w.leading_zeros() as u8)
}

/// A run of sorted descriptors that becomes one node.
#[derive(Clone, Copy)]
struct Group {
    lo: usize,
    hi: usize,
    pos: u8,
    min: u8,
    max: u8,
    end: bool,
}

struct Builder<'a> {
    sorted: &'a Sorted,
    chains_removed: bool,
    guards: bool,
    kept: KeptPositions,
    rice_k: u32,
    id_bits: u32,
    block_shift: u32,
    layout: Layout,
    order: SiblingOrder,
    nodes: Vec<Node>,
    records: RecordWriter,
    record_base: Vec<u32>,
    groups: Vec<Group>,
}

impl Builder<'_> {
    /// The payload of the terminator at node `index` for port set `set` and chain tail `tail`
    /// (after position `prev`): the tail goes to the records, and its offset from its block's
    /// base (started at the block's first record) above the id.
    fn terminator_payload(&mut self, index: usize, set: u16, prev: u8, tail: &[u8]) -> Result<u32, TagError> {
        if tail.is_empty() {
            return Ok(u32::from(set));
        }
        let block = index >> self.block_shift;
        while self.record_base.len() <= block {
            let byte = u32::try_from(self.records.bit_len() / 8).map_err(|_| TagError::TooLarge)?;
            self.record_base.push(byte);
        }
        let offset = self.records.bit_len() - u64::from(self.record_base[block]) * 8;
        // The block's shift guarantees this (see `CompiledFib::build`).
        debug_assert!(offset < 1 << (PAYLOAD_BITS - self.id_bits));
        self.records.push(prev, tail, self.rice_k);
        Ok((offset as u32) << self.id_bits | u32::from(set))
    }

    /// Whether the descriptors `lo..hi` (at least two, sharing their first `depth + 1`
    /// positions) all have the same next position: their node then has a single child.
    fn single_child(&self, lo: usize, hi: usize, depth: usize) -> bool {
        let s = self.sorted;
        // In trie order the next positions ascend, and a descriptor that ends is last.
        s.weight(hi - 1) > depth + 1 && s.pos(lo, depth + 1) == s.pos(hi - 1, depth + 1)
    }

    /// Emits the children list of the descriptors `lo..hi`, which share their first `depth`
    /// positions, then (in layout order) their subtrees; returns the list's index and the
    /// positions every one of those descriptors has (as a [`sort_key`]).
    fn list(&mut self, lo: usize, hi: usize, depth: usize) -> Result<(usize, [u64; 3]), TagError> {
        let s = self.sorted;
        let base = self.groups.len();
        let mut i = lo;
        while i < hi {
            let w = s.weight(i);
            if w == depth {
                self.groups.push(Group { lo: i, hi: i + 1, pos: 0, min: w as u8, max: w as u8, end: true });
                i += 1;
                continue;
            }
            let pos = s.pos(i, depth);
            let (mut min, mut max, mut j) = (w, w, i + 1);
            while j < hi && s.weight(j) > depth && s.pos(j, depth) == pos {
                min = min.min(s.weight(j));
                max = max.max(s.weight(j));
                j += 1;
            }
            self.groups.push(Group { lo: i, hi: j, pos, min: min as u8, max: max as u8, end: false });
            i = j;
        }
        let end = self.groups.len();
        if self.order == SiblingOrder::Descending {
            // The groups came in ascending order (the sort's), a descriptor that ends here last.
            self.groups[base..end].reverse();
        }
        let start = self.nodes.len();
        if start + (end - base) > CHILD as usize {
            return Err(TagError::TooLarge);
        }
        let mut common = [u64::MAX; 3];
        for k in base..end {
            let g = self.groups[k];
            let last = if k + 1 == end { LAST } else { 0 };
            let node = if g.end || (self.chains_removed && g.hi - g.lo == 1) {
                let at = s.start[g.lo] as usize;
                let chain = &s.positions[at + depth..at + s.weight(g.lo)];
                // An empty chain (the descriptor ends at this depth) repeats the path's last
                // position, which every query that reaches the list has.
                let a = chain.first().copied().unwrap_or(if depth > 0 { s.pos(g.lo, depth - 1) } else { 0 });
                let ([a, b, c], after, record) = if chain.len() > 3 {
                    self.kept.split(chain)
                } else {
                    ([a, chain.get(1).copied().unwrap_or(a), chain.get(2).copied().unwrap_or(a)], a, &[][..])
                };
                let payload = self.terminator_payload(self.nodes.len(), s.set[g.lo], after, record)?;
                intersect(&mut common, &s.keys[g.lo]);
                Node { a, b, max: g.max, c, link: TERMINAL | last | payload }
            } else {
                Node { a: g.pos, b: g.min, max: g.max, c: g.pos, link: last }
            };
            self.nodes.push(node);
        }
        let count = end - base;
        for j in 0..count {
            let k = match self.layout {
                Layout::Sol => j,
                Layout::Srol => count - 1 - j,
            };
            let g = self.groups[base + k];
            let node = &self.nodes[start + k];
            if !node.is(TERMINAL) {
                let skip = self.chains_removed && self.single_child(g.lo, g.hi, depth);
                let (child, below) = self.list(g.lo, g.hi, depth + 1 + usize::from(skip))?;
                intersect(&mut common, &below);
                let node = &mut self.nodes[start + k];
                node.link |= child as u32;
                if skip {
                    node.link |= SKIP;
                    node.c = s.pos(g.lo, depth + 1);
                } else if self.guards {
                    node.c = first_after(&below, g.pos).unwrap_or(g.pos);
                }
            }
        }
        self.groups.truncate(base);
        Ok((start, common))
    }
}

impl CompiledFib {
    /// Compiles `entries` (distinct, non-empty descriptors; `n` of them).
    ///
    /// # Errors
    /// [`TagError::EmptyDescriptor`] for a descriptor with no bits; [`TagError::TooLarge`]
    /// beyond 2^29 nodes or 4 GiB of terminator records, or 65,535 distinct port sets.
    pub fn build(
        entries: impl Iterator<Item = (Descriptor, PortSet)> + Clone,
        n: usize,
        compression: Compression,
        layout: Layout,
    ) -> Result<Self, TagError> {
        Self::build_in_order(entries, n, compression, layout, SiblingOrder::default())
    }

    /// [`CompiledFib::build`] with sibling lists in `order` (descending is kept to measure
    /// the production's ascending order against).
    ///
    /// # Errors
    /// As [`CompiledFib::build`].
    #[cfg(feature = "experiments")]
    pub fn build_ordered(
        entries: impl Iterator<Item = (Descriptor, PortSet)> + Clone,
        n: usize,
        compression: Compression,
        layout: Layout,
        order: SiblingOrder,
    ) -> Result<Self, TagError> {
        Self::build_in_order(entries, n, compression, layout, order)
    }

    fn build_in_order(
        entries: impl Iterator<Item = (Descriptor, PortSet)> + Clone,
        n: usize,
        compression: Compression,
        layout: Layout,
        order: SiblingOrder,
    ) -> Result<Self, TagError> {
        let identity = compression == Compression::None;
        let perm = permutation(compression, entries.clone().map(|(d, _)| d));
        // Port sets numbered as met, then renumbered by decreasing use (below): the most used
        // sets share the first cache lines of `port_sets`, which every match reads.
        let mut set_ids: HashMap<PortSet, u16> = HashMap::new();
        let mut port_sets = Vec::new();
        let mut uses: Vec<u32> = Vec::new();
        let mut keyed: Vec<([u64; 3], u16)> = Vec::with_capacity(n);
        for (d, set) in entries {
            if d.weight() == 0 {
                return Err(TagError::EmptyDescriptor);
            }
            let next = u16::try_from(port_sets.len()).map_err(|_| TagError::TooLarge)?;
            let id = *set_ids.entry(set).or_insert_with(|| {
                port_sets.push(set);
                uses.push(0);
                next
            });
            if port_sets.len() > usize::from(u16::MAX) {
                return Err(TagError::TooLarge);
            }
            uses[usize::from(id)] += 1;
            let d = if identity { d } else { permute(&d, &perm) };
            keyed.push((sort_key(&d), id));
        }
        drop(set_ids);
        let mut by_use: Vec<u16> = (0..port_sets.len() as u16).collect();
        by_use.sort_by_key(|&id| core::cmp::Reverse(uses[usize::from(id)]));
        let mut renumber = vec![0u16; port_sets.len()];
        for (new, &old) in by_use.iter().enumerate() {
            renumber[usize::from(old)] = new as u16;
        }
        let port_sets: Vec<PortSet> = by_use.iter().map(|&old| port_sets[usize::from(old)]).collect();
        keyed.sort_unstable_by_key(|x| core::cmp::Reverse(x.0));
        let mut sorted = Sorted {
            positions: Vec::new(),
            start: Vec::with_capacity(keyed.len() + 1),
            set: Vec::with_capacity(keyed.len()),
            keys: Vec::with_capacity(keyed.len()),
        };
        sorted.start.push(0);
        for (key, set) in &keyed {
            for (i, &w) in key.iter().enumerate() {
                let mut w = w;
                while w != 0 {
                    let lz = w.leading_zeros();
                    sorted.positions.push((i * 64 + lz as usize) as u8);
                    w &= !(1u64 << (63 - lz));
                }
            }
            sorted.start.push(u32::try_from(sorted.positions.len()).map_err(|_| TagError::TooLarge)?);
            sorted.set.push(renumber[usize::from(*set)]);
            sorted.keys.push(*key);
        }
        drop(keyed);
        let chains_removed = matches!(compression, Compression::PermChain | Compression::RareChain);
        let kept = match compression {
            Compression::RareChain => KeptPositions::FirstThree,
            _ => KeptPositions::FirstAndLastTwo,
        };
        let rice_k = if chains_removed { sorted.rice_k(kept) } else { MIN_K };
        // Ids take the bits the number of port sets needs; the records of a block of 2^shift
        // nodes must always fit the offset bits left (each tail at most `MAX_TAIL_BITS`, plus
        // the base rounded down to a byte).
        let id_bits = usize::BITS - (port_sets.len().max(2) - 1).leading_zeros();
        let offset_bits = PAYLOAD_BITS - id_bits;
        let block_shift = (0..=MAX_BLOCK_SHIFT).rev().find(|&s| (MAX_TAIL_BITS << s) + 7 < 1 << offset_bits).unwrap_or(0);
        let mut b = Builder {
            sorted: &sorted,
            chains_removed,
            guards: compression == Compression::RareChain,
            kept,
            rice_k,
            id_bits,
            block_shift,
            layout,
            order,
            nodes: Vec::new(),
            records: RecordWriter::default(),
            record_base: Vec::new(),
            groups: Vec::new(),
        };
        if !sorted.set.is_empty() {
            b.list(0, sorted.set.len(), 0)?;
        }
        // With chains removed every block has a base (a block without records gets the
        // stream's end); the uncompressed forms have no records, and keep no bases.
        if chains_removed {
            let end = u32::try_from(b.records.bit_len() / 8).map_err(|_| TagError::TooLarge)?;
            b.record_base.resize(b.nodes.len().div_ceil(1 << block_shift).max(b.record_base.len()), end);
        }
        // Copied to exact size on huge pages: a walk reads lists all over the vector, and with
        // 4 KB pages nearly every list of a large FIB is also a TLB miss.
        let nodes = huge_collect(b.nodes.into_iter());
        let records = if chains_removed { huge_collect(b.records.finish().into_iter()) } else { Vec::new() };
        let mut fib = CompiledFib {
            nodes,
            records,
            record_base: b.record_base,
            block_shift,
            id_bits,
            rice_k,
            kept,
            port_sets,
            perm,
            identity,
            descriptors: sorted.set.len(),
            compression,
            layout,
            order,
            prefetch: true,
            fas_order: FasOrder::default(),
            fls_order: FlsOrder::for_compression(compression),
            fls_batch_order: FlsBatchOrder::OneAtATime,
            fas_record_check: RecordCheck::default(),
            simd: super::list_scan::simd_supported(),
            vbmi: super::list_scan::simd_supported() && super::list_scan::vbmi_supported(),
        };
        fib.fls_batch_order = FlsBatchOrder::for_fib_bytes(fib.memory_bytes());
        Ok(fib)
    }

    /// The size [`CompiledFib::build`] would give `entries` uncompressed — [`Compression::None`],
    /// or [`Compression::Perm`] when `permuted` — counted without building the vector: one
    /// inner node per distinct non-empty prefix of the descriptors' position sequences, one
    /// terminator per descriptor, and the bytes [`CompiledFib::memory_bytes`] would report. For
    /// FIBs whose uncompressed trie is past the vector's 2^29-node links (the paper's 63M
    /// descriptors take about a billion nodes).
    ///
    /// # Errors
    /// [`TagError::EmptyDescriptor`] for a descriptor with no bits; [`TagError::TooLarge`]
    /// for more than 65,535 distinct port sets.
    pub fn plain_size(
        entries: impl Iterator<Item = (Descriptor, PortSet)> + Clone,
        n: usize,
        permuted: bool,
    ) -> Result<PlainSize, TagError> {
        let perm = permutation(if permuted { Compression::Perm } else { Compression::None }, entries.clone().map(|(d, _)| d));
        let mut sets = hashbrown::HashSet::new();
        let mut keys: Vec<[u64; 3]> = Vec::with_capacity(n);
        for (d, set) in entries {
            if d.weight() == 0 {
                return Err(TagError::EmptyDescriptor);
            }
            sets.insert(set);
            keys.push(sort_key(&permute(&d, &perm)));
        }
        if sets.len() > usize::from(u16::MAX) {
            return Err(TagError::TooLarge);
        }
        // Sorted, the sequences that share a prefix are neighbours: each adds the positions
        // after the prefix it shares with the one before it.
        keys.sort_unstable();
        let mut nodes = keys.len() as u64;
        let mut before: Option<&[u64; 3]> = None;
        for key in &keys {
            let weight: u32 = key.iter().map(|w| w.count_ones()).sum();
            nodes += u64::from(weight - before.map_or(0, |b| shared_prefix(b, key)));
            before = Some(key);
        }
        // No records, so no record bases either.
        Ok(PlainSize { nodes, bytes: memory_of(nodes as usize, 0, 0, sets.len()) as u64 })
    }

    /// The port-set id of terminator `n`.
    #[inline]
    pub(super) fn terminal_set(&self, n: &Node) -> usize {
        (n.link & ((1 << self.id_bits) - 1)) as usize
    }

    /// Where the record of terminator `n`, at node index `index`, starts in `records` (in bits);
    /// `None` if its block has no base (only in a corrupt vector).
    #[inline]
    pub(super) fn record_bit(&self, index: usize, n: &Node) -> Option<usize> {
        let base = *self.record_base.get(index >> self.block_shift)? as usize;
        Some(base * 8 + ((n.link & PAYLOAD) >> self.id_bits) as usize)
    }

    /// Descriptors compiled in.
    pub fn len(&self) -> usize {
        self.descriptors
    }

    /// Whether the FIB is empty.
    pub fn is_empty(&self) -> bool {
        self.descriptors == 0
    }

    /// Trie nodes in the vector.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Bytes the matcher reads: nodes, terminator records and their block bases, port sets
    /// and the permutation.
    pub fn memory_bytes(&self) -> usize {
        memory_of(self.nodes.len(), self.records.len(), self.record_base.len(), self.port_sets.len())
    }

    /// The compression it was built with.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// The order of its sibling lists (ascending but in an experiment).
    #[inline(always)]
    pub fn sibling_order(&self) -> SiblingOrder {
        if cfg!(feature = "experiments") {
            self.order
        } else {
            SiblingOrder::Ascending
        }
    }

    /// The layout it was built with.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Turns the walks' prefetch of the child lists they will read on or off (on by default;
    /// off shows what the node layout alone gives — the paper describes no prefetch).
    #[cfg(feature = "experiments")]
    pub fn set_prefetch(&mut self, on: bool) {
        self.prefetch = on;
    }

    /// Whether the walks prefetch (always, but where an experiment turned it off).
    #[inline(always)]
    pub fn prefetching(&self) -> bool {
        !cfg!(feature = "experiments") || self.prefetch
    }

    /// Sets the order FAS reads the lists it pushes in (breadth-first by default; the answers
    /// are the same either way).
    #[cfg(feature = "experiments")]
    pub fn set_fas_order(&mut self, order: FasOrder) {
        self.fas_order = order;
    }

    /// The order FAS reads lists in: breadth-first, but in an experiment.
    #[inline(always)]
    pub fn fas_order(&self) -> FasOrder {
        if cfg!(feature = "experiments") {
            self.fas_order
        } else {
            FasOrder::BreadthFirst
        }
    }

    /// Sets the order FLS reads the lists it pushes in (by default the one
    /// [`FlsOrder::for_compression`] picks for the FIB's compression; the answer's weight is
    /// the same either way, and so are its ports unless entries of that weight have different
    /// ones).
    #[cfg(feature = "experiments")]
    pub fn set_fls_order(&mut self, order: FlsOrder) {
        self.fls_order = order;
    }

    /// The order FLS reads lists in: [`FlsOrder::for_compression`]'s, but in an experiment.
    #[inline(always)]
    pub fn fls_order(&self) -> FlsOrder {
        if cfg!(feature = "experiments") {
            self.fls_order
        } else {
            FlsOrder::for_compression(self.compression)
        }
    }

    /// Sets how [`CompiledFib::fls_batch`] walks a batch's packets (by default, chosen by the
    /// FIB's size: [`FlsBatchOrder::for_fib_bytes`]; the answers are the same either way).
    #[cfg(feature = "experiments")]
    pub fn set_fls_batch_order(&mut self, order: FlsBatchOrder) {
        self.fls_batch_order = order;
    }

    /// How [`CompiledFib::fls_batch`] walks a batch in [`FlsOrder::DepthFirst`] (an experiment).
    pub fn fls_batch_order(&self) -> FlsBatchOrder {
        self.fls_batch_order
    }

    /// Sets when FAS tests a terminator's chain record (deferred by default; the answers are
    /// the same either way, but for which ports a fan-out limit keeps).
    #[cfg(feature = "experiments")]
    pub fn set_fas_record_check(&mut self, check: RecordCheck) {
        self.fas_record_check = check;
    }

    /// When FAS tests chain records: deferred, but in an experiment.
    #[inline(always)]
    pub fn fas_record_check(&self) -> RecordCheck {
        if cfg!(feature = "experiments") {
            self.fas_record_check
        } else {
            RecordCheck::Deferred
        }
    }

    /// Turns the walks' AVX-512 list scan on (where the CPU has AVX-512F; on by default there)
    /// or off (node by node, as on other CPUs); returns whether it is on. The answers are the
    /// same either way.
    pub fn set_simd(&mut self, on: bool) -> bool {
        self.simd = on && super::list_scan::simd_supported();
        self.vbmi = self.simd && super::list_scan::vbmi_supported();
        self.simd
    }

    /// Whether the walks read lists with AVX-512 ([`CompiledFib::set_simd`]).
    pub fn simd(&self) -> bool {
        self.simd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(positions: &[usize]) -> Descriptor {
        let mut d = Descriptor::EMPTY;
        positions.iter().for_each(|&p| d.set(p));
        d
    }

    /// The FIB of the paper's Figure 1 (positions 1–10 there, 0-based here).
    fn figure1() -> Vec<(Descriptor, PortSet)> {
        [&[0, 2][..], &[0, 2, 5], &[0, 3, 6, 8], &[0, 1, 3], &[1, 2, 4], &[2, 3, 4, 8], &[2, 4, 6, 9]]
            .iter()
            .enumerate()
            .map(|(i, p)| (d(p), PortSet::of([i as u8])))
            .collect()
    }

    #[test]
    fn node_is_eight_bytes() {
        assert_eq!(core::mem::size_of::<Node>(), 8);
    }

    #[test]
    fn sort_key_orders_sequences_with_prefixes_last() {
        let mut v = [d(&[0, 2]), d(&[0, 2, 5]), d(&[0, 1]), d(&[1])];
        v.sort_by_key(|x| core::cmp::Reverse(sort_key(x)));
        assert_eq!(v, [d(&[0, 1]), d(&[0, 2, 5]), d(&[0, 2]), d(&[1])]);
    }

    #[test]
    fn uncompressed_trie_has_one_node_per_shared_prefix_plus_terminators() {
        let fib = CompiledFib::build(figure1().into_iter(), 7, Compression::None, Layout::Sol).unwrap();
        // Distinct non-empty prefixes of the seven sequences, plus seven terminators.
        let mut prefixes = std::collections::BTreeSet::new();
        for (desc, _) in figure1() {
            let p: Vec<usize> = desc.positions().collect();
            for l in 1..=p.len() {
                prefixes.insert(p[..l].to_vec());
            }
        }
        assert_eq!(fib.node_count(), prefixes.len() + 7);
        let chained = CompiledFib::build(figure1().into_iter(), 7, Compression::PermChain, Layout::Srol).unwrap();
        assert!(chained.node_count() < fib.node_count());
        assert_eq!(chained.len(), 7);
    }

    #[test]
    fn first_after_finds_the_next_position_of_a_key() {
        let key = sort_key(&d(&[3, 64, 150, 191]));
        assert_eq!(first_after(&key, 0), Some(3));
        assert_eq!(first_after(&key, 3), Some(64));
        assert_eq!(first_after(&key, 63), Some(64));
        assert_eq!(first_after(&key, 64), Some(150));
        assert_eq!(first_after(&key, 150), Some(191));
        assert_eq!(first_after(&key, 191), None);
    }

    #[test]
    fn guards_are_the_first_position_every_descriptor_below_shares() {
        // Counts: 10 twice, 20 and 30 three times, 40 four times, the rest once; rarest first,
        // the first two start with 10, then part at 20 and 30, and both have 40 after that.
        let v: Vec<(Descriptor, PortSet)> = [&[10, 20, 40][..], &[10, 30, 40], &[20, 30, 50], &[20, 30, 60], &[40, 70], &[40, 80]]
            .iter()
            .enumerate()
            .map(|(i, p)| (d(p), PortSet::of([i as u8])))
            .collect();
        let fib = CompiledFib::build(v.iter().copied(), v.len(), Compression::RareChain, Layout::Sol).unwrap();
        let inner: Vec<(u8, u8, u32)> = fib.nodes.iter().filter(|n| !n.is(TERMINAL)).map(|n| (n.a, n.c, n.skip())).collect();
        assert_eq!(inner, [(fib.perm[10], fib.perm[40], 0)]);
        // Popular first, 20 has the single child 30 (a skip); 40 has four children. The root's
        // list ascends: 40 (renumbered 0) before 20 (renumbered 1).
        let unguarded = CompiledFib::build(v.iter().copied(), v.len(), Compression::PermChain, Layout::Sol).unwrap();
        let inner: Vec<(u8, u8, u32)> = unguarded.nodes.iter().filter(|n| !n.is(TERMINAL)).map(|n| (n.a, n.c, n.skip())).collect();
        let p = |x: usize| unguarded.perm[x];
        assert_eq!(inner, [(p(40), p(40), 0), (p(20), p(30), 1)]);
    }

    #[test]
    fn a_node_with_one_child_skips_it() {
        // Five descriptors below the shared path 1, 2, 3, 4, 5 (then 10–14): uncompressed, 5
        // path nodes, 5 last positions and 5 terminators; with chains removed, 5 inner nodes
        // and 5 terminators without skips, and with them the path's nodes pair up (1 with 2,
        // 3 with 4, then 5 alone, whose children differ).
        let v: Vec<(Descriptor, PortSet)> = (0..5).map(|i| (d(&[1, 2, 3, 4, 5, 10 + i]), PortSet::of([i as u8]))).collect();
        let plain = CompiledFib::build(v.iter().copied(), v.len(), Compression::Perm, Layout::Sol).unwrap();
        assert_eq!(plain.node_count(), 5 + 5 + 5);
        for c in [Compression::PermChain, Compression::RareChain] {
            let fib = CompiledFib::build(v.iter().copied(), v.len(), c, Layout::Srol).unwrap();
            if c == Compression::PermChain {
                assert_eq!(fib.node_count(), 3 + 5);
                assert_eq!(fib.nodes.iter().filter(|n| !n.is(TERMINAL) && n.skip() == 1).count(), 2);
            } else {
                // Rarest first, the five last positions lead: five terminators at the root.
                assert_eq!(fib.node_count(), 5);
            }
            let mut scratch = crate::tag::MatchScratch::new();
            for (q, ports) in &v {
                assert_eq!(fib.fas(q, crate::tag::Fanout::ALL, &PortSet::ALL, &mut scratch), *ports);
                assert_eq!(fib.fls(q, &mut scratch).map(|l| (l.weight, l.ports)), Some((6, *ports)));
            }
            assert_eq!(fib.fas(&d(&[1, 2, 3, 5, 10]), crate::tag::Fanout::ALL, &PortSet::ALL, &mut scratch), PortSet::EMPTY);
        }
    }

    #[test]
    fn an_empty_descriptor_is_refused() {
        let v = [(d(&[1]), PortSet::of([1])), (Descriptor::EMPTY, PortSet::of([2]))];
        let got = CompiledFib::build(v.iter().copied(), 2, Compression::RareChain, Layout::Srol);
        assert_eq!(got.err(), Some(TagError::EmptyDescriptor));
    }

    #[test]
    fn port_set_ids_go_by_use_and_wider_ids_match() {
        use crate::tag::{Fanout, MatchScratch};
        // 400 descriptors of three positions; one port set used by every tenth, the rest all
        // different (so ids take 9 bits).
        let entries: Vec<(Descriptor, PortSet)> = (0..400usize)
            .map(|i| {
                let ports = if i % 10 == 0 { PortSet::of([255]) } else { PortSet::of([(i % 200) as u8, (i / 200 + 200) as u8]) };
                (d(&[i % 20, 20 + i / 20, 60 + i % 7 * 9]), ports)
            })
            .collect();
        let mut scratch = MatchScratch::new();
        for (c, l) in VARIANTS {
            let fib = CompiledFib::build(entries.iter().copied(), entries.len(), c, l).unwrap();
            assert_eq!(fib.port_sets[0], PortSet::of([255]));
            assert!(fib.port_sets.len() > 300);
            for (q, _) in &entries {
                let want = entries.iter().filter(|(e, _)| e.is_subset_of(q)).fold(PortSet::EMPTY, |acc, (_, p)| acc.union(p));
                assert_eq!(fib.fas(q, Fanout::ALL, &PortSet::ALL, &mut scratch), want, "{c:?} {l:?}");
                let best = fib.fls(q, &mut scratch).unwrap();
                assert_eq!(best.weight, q.weight());
            }
        }
    }

    #[test]
    fn fifteen_bit_ids_leave_small_record_blocks_that_still_match() {
        use crate::tag::{Fanout, MatchScratch};
        // 20,000 descriptors of 4–9 positions, each its own port set (pairs and triples of 256
        // ports): ids take 15 bits, so record offsets have 15 and blocks are small.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut seen = hashbrown::HashSet::new();
        let mut entries = Vec::new();
        while entries.len() < 20_000 {
            let r = next();
            let positions: Vec<usize> = (0..4 + r % 6).map(|i| (next() % 40) as usize + (i as usize % 3) * 60).collect();
            let i = entries.len();
            let ports = PortSet::of([(i % 256) as u8, (i / 256 % 256) as u8, (r >> 56) as u8 | 1]);
            if seen.insert(d(&positions)) {
                entries.push((d(&positions), ports));
            }
        }
        let mut scratch = MatchScratch::new();
        for c in [Compression::PermChain, Compression::RareChain] {
            let fib = CompiledFib::build(entries.iter().copied(), entries.len(), c, Layout::Srol).unwrap();
            assert_eq!(fib.id_bits, 15);
            assert!(fib.block_shift < MAX_BLOCK_SHIFT);
            for (e, _) in entries.iter().step_by(97) {
                let mut q = *e;
                q.set((next() % 192) as usize);
                let want = entries.iter().filter(|(x, _)| x.is_subset_of(&q)).fold(PortSet::EMPTY, |acc, (_, p)| acc.union(p));
                assert_eq!(fib.fas(&q, Fanout::ALL, &PortSet::ALL, &mut scratch), want, "{c:?}");
                let heaviest = entries.iter().filter(|(x, _)| x.is_subset_of(&q)).map(|(x, _)| x.weight()).max();
                assert_eq!(fib.fls(&q, &mut scratch).map(|l| l.weight), heaviest, "{c:?}");
            }
        }
    }

    #[test]
    fn popularity_puts_frequent_bits_first() {
        let v = [d(&[5, 9]), d(&[9]), d(&[9, 3])];
        let perm = popularity(v.into_iter(), false);
        assert_eq!(perm[9], 0);
        assert_eq!(perm[3], 1);
        assert_eq!(perm[5], 2);
        let rare = popularity(v.into_iter(), true);
        assert_eq!(rare[9], 191);
        assert!(rare[3] < rare[9] && rare[5] < rare[9]);
    }
}
