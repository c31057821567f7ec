//! Find All Subsets and Find Largest Subset on the compiled vector trie (the paper's
//! Algorithms 1–3 with the three pruning rules of section 3.1.4).
//!
//! # Overview
//! Both walks are depth-first over the vector with an explicit stack of sibling lists: a list is
//! read node by node (next sibling = next cell, until the one flagged last), a node whose position
//! is set in the query pushes its first child's list, and a terminator is a match once its chain
//! (if any) is also in the query. Before a node is followed:
//! 1. its minimum depth must not exceed the query's weight,
//! 2. the *maximum potential matching weight* — positions matched so far plus query bits at or
//!    after the node's position — must reach the node's minimum depth (this subsumes rule 1),
//! 3. (FLS only) that potential, and the node's maximum depth, must beat the best match so far;
//! 4. (guarded compressions, not the paper's) the node's guard position must be in the query.
//!
//! FLS walks best bound first (not the paper's order; see [`CompiledFib::fls`]): the child lists a
//! sibling list pushes are ordered by the most a match below each can weigh, so a heavy match is
//! met early and rule 3 then prunes what cannot beat it. A global priority queue instead (always
//! the highest bound in the whole walk) measured slower: at the shallow levels bounds tie, and
//! the walk turned breadth-first; with ties broken deepest first it read somewhat fewer nodes
//! but still ran slower (the heap, and the prefetches of lists it never pops). With extra tags in
//! the packet, most of what FLS reads comes before it meets its final best, in either order —
//! subtrees whose bound exceeds that best, which any order must read: the bounds, not the
//! order, limit FLS (probe programs counting nodes, 1M Zipf FIB).
//!
//! Each child list is prefetched when it is pushed: it is read when popped, after the rest of
//! its parent's list. Eight cache lines of it, not one: a popped list is read to its end and, in
//! the SROL layout, its subtrees follow it, so the lines after its first are read next (in a
//! 10M-descriptor FIB a probe program measured the walks faster with every line added up to
//! eight, and eight faster than the list's own lines alone; the `tagnet` figures are from
//! `nexthop bench`). Popping a list pushed several pushes earlier, to give its prefetch longer,
//! made no difference there; interleaving the walks of 8 packets of a batch, one list of each
//! in turn, measured slower. So did testing a list 8 nodes at a time without branches (bit
//! masks of the passing nodes and of the list's end, then only the passing nodes visited): once
//! each node is one well-predicted test, the masks cost more than the branches they replace.
//!
//! [`MatchScratch`] holds the stacks, owned by the calling thread and reused, so a warm matcher does
//! not allocate. [`Fanout`] is the packet's fan-out limit k (FAS stops once k ports are chosen).

use core::num::NonZeroUsize;

use super::chain::Record;
use super::compile::{permute, CompiledFib, Node, LAST, TERMINAL};
use super::{Descriptor, PortSet, TagError, MAX_PORTS};
use crate::mem::prefetch;
/// Cache lines prefetched from the start of each child list the walks push.
const PREFETCH_LINES: usize = 8;

/// A packet's fan-out limit k: at most k ports (k = [`Fanout::ALL`] is multicast).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fanout(NonZeroUsize);

impl Fanout {
    /// No limit (multicast).
    pub const ALL: Fanout = Fanout(NonZeroUsize::MAX);

    /// A limit of `k` ports.
    ///
    /// # Errors
    /// [`TagError::ZeroFanout`] for k = 0.
    pub fn new(k: usize) -> Result<Fanout, TagError> {
        NonZeroUsize::new(k).map(Fanout).ok_or(TagError::ZeroFanout)
    }

    /// k.
    pub fn get(self) -> usize {
        self.0.get()
    }
}

/// The best match Find Largest Subset found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Largest {
    /// Its Hamming weight.
    pub weight: u32,
    /// Its ports.
    pub ports: PortSet,
}

/// A matcher's reusable stacks (one per thread).
#[derive(Debug, Default)]
pub struct MatchScratch {
    /// FAS: (sibling list, depth).
    stack: Vec<(u32, u32)>,
    /// FLS: (bound on the weight of a match below, sibling list, depth).
    bounded: Vec<(u32, u32, u32)>,
}

impl MatchScratch {
    /// Scratch stacks sized for typical walks.
    pub fn new() -> Self {
        MatchScratch { stack: Vec::with_capacity(1024), bounded: Vec::with_capacity(1024) }
    }
}

/// A query prepared for one walk: renumbered bits and, per word, the weight of the words after it.
struct Query {
    bits: [u64; 3],
    after: [u32; 3],
}

impl Query {
    fn new(bits: [u64; 3]) -> Query {
        let c = bits.map(u64::count_ones);
        Query { bits, after: [c[1] + c[2], c[2], 0] }
    }

    #[inline]
    fn has(&self, p: usize) -> bool {
        self.bit(p) == 1
    }

    /// Bit p of the query, 0 or 1 (to combine tests without a branch each).
    #[inline]
    fn bit(&self, p: usize) -> u64 {
        self.bits[p >> 6] >> (p & 63) & 1
    }

    /// Whether positions a and b are both in the query, with one branch for the caller.
    #[inline]
    fn has_both(&self, a: u8, b: u8) -> bool {
        self.bit(usize::from(a)) & self.bit(usize::from(b)) == 1
    }

    /// Query bits at positions ≥ p.
    #[inline]
    fn from(&self, p: usize) -> u32 {
        (self.bits[p >> 6] >> (p & 63)).count_ones() + self.after[p >> 6]
    }
}

impl CompiledFib {
    fn query(&self, q: &Descriptor) -> Query {
        Query::new(if self.identity { q.0 } else { permute(q, &self.perm).0 })
    }

    /// The port-set id of terminator `n` (node `index`), reached in a list at depth `depth`, if
    /// its chain is in the query, given that its first and third positions are: the second,
    /// then the rest from its record.
    #[inline]
    fn terminal_match(&self, q: &Query, n: &Node, index: usize, depth: u32) -> Option<usize> {
        if !q.has(usize::from(n.b)) {
            return None;
        }
        let len = (u32::from(n.max) + 1).saturating_sub(depth);
        if len > 3 {
            let mut rest = Record::at(&self.records, self.record_bit(index, n)?, n.c, self.rice_k);
            for _ in 3..len {
                if !q.has(rest.next_position()?) {
                    return None;
                }
            }
        }
        Some(self.terminal_set(n))
    }

    /// Prefetches the child list of inner node `n`, pushed now and read when popped (after the
    /// rest of the current list and what it pushes later): its first [`PREFETCH_LINES`] cache
    /// lines, which hold all of most lists and the start of the subtree read after it.
    #[inline]
    fn prefetch_children(&self, n: &Node) {
        let first = self.nodes.as_ptr().wrapping_add(n.child());
        for line in 0..PREFETCH_LINES {
            prefetch(first.wrapping_add(line * 64 / core::mem::size_of::<Node>()));
        }
    }

    /// Find All Subsets: the union of the ports of every entry ⊆ `query`, restricted to
    /// `allowed` (the packet's tree), stopping once `fanout` ports are chosen.
    pub fn fas(&self, query: &Descriptor, fanout: Fanout, allowed: &PortSet, scratch: &mut MatchScratch) -> PortSet {
        let mut out = PortSet::EMPTY;
        if self.nodes.is_empty() {
            return out;
        }
        let limit = fanout.get();
        let q = self.query(query);
        let stack = &mut scratch.stack;
        stack.clear();
        stack.push((0, 1));
        while let Some((list, depth)) = stack.pop() {
            let mut i = list as usize;
            while let Some(n) = self.nodes.get(i) {
                if !q.has_both(n.a, n.c) {
                    // Neither a match nor a subtree to enter (most nodes).
                } else if n.is(TERMINAL) {
                    if let Some(set) = self.terminal_match(&q, n, i, depth) {
                        let ports = self.port_sets.get(set).map_or(PortSet::EMPTY, |s| s.intersection(allowed));
                        if limit >= MAX_PORTS {
                            out = out.union(&ports);
                        } else if out.union_up_to(&ports, limit) {
                            return out;
                        }
                    }
                } else if n.min() < depth + q.from(n.pos()) {
                    self.prefetch_children(n);
                    stack.push((n.child() as u32, depth + 1 + n.skip()));
                }
                if n.is(LAST) {
                    break;
                }
                i += 1;
            }
        }
        out
    }

    /// Find Largest Subset: an entry ⊆ `query` of the greatest weight, or `None`.
    ///
    /// Best bound first: each child list is pushed with the most a match below it can weigh
    /// (the child's maximum depth, capped by its potential matching weight), the lists pushed from
    /// one sibling list are ordered so the highest bound is popped first, and a popped list whose
    /// bound no longer beats the best match is dropped unread. A heavy match is then found early
    /// (the packet's own descriptor on the first descent, when it has no extra tags), and rule 3
    /// prunes what cannot beat it (the paper's depth-first order found it only after the lighter
    /// subtrees of lower positions).
    pub fn fls(&self, query: &Descriptor, scratch: &mut MatchScratch) -> Option<Largest> {
        if self.nodes.is_empty() {
            return None;
        }
        let q = self.query(query);
        let (mut best_weight, mut best_set) = (0u32, usize::MAX);
        let stack = &mut scratch.bounded;
        stack.clear();
        stack.push((u32::MAX, 0, 1));
        while let Some((bound, list, depth)) = stack.pop() {
            if bound <= best_weight {
                continue;
            }
            let pushed = stack.len();
            let mut i = list as usize;
            while let Some(n) = self.nodes.get(i) {
                // The three tests as bits and one branch (written with `has_both` and a bool `|`,
                // the compiler branched again and the walk measured slower).
                if u64::from(u32::from(n.max) > best_weight) & q.bit(usize::from(n.a)) & q.bit(usize::from(n.c)) == 0 {
                    // Nothing heavier below, or nothing below in the query.
                } else if n.is(TERMINAL) {
                    if let Some(set) = self.terminal_match(&q, n, i, depth) {
                        best_weight = u32::from(n.max);
                        best_set = set;
                    }
                } else {
                    let potential = depth - 1 + q.from(n.pos());
                    if (n.min() <= potential) & (potential > best_weight) {
                        self.prefetch_children(n);
                        stack.push((potential.min(u32::from(n.max)), n.child() as u32, depth + 1 + n.skip()));
                    }
                }
                if n.is(LAST) {
                    break;
                }
                i += 1;
            }
            if stack.len() > pushed + 1 {
                stack[pushed..].sort_by_key(|&(bound, _, _)| bound);
            }
        }
        self.port_sets.get(best_set).map(|&ports| Largest { weight: best_weight, ports })
    }

    /// [`CompiledFib::fas`] for each query, into `out`.
    pub fn fas_batch(&self, queries: &[Descriptor], fanout: Fanout, out: &mut [PortSet], scratch: &mut MatchScratch) {
        for (q, o) in queries.iter().zip(out.iter_mut()) {
            *o = self.fas(q, fanout, &PortSet::ALL, scratch);
        }
    }

    /// [`CompiledFib::fls`] for each query, into `out`.
    pub fn fls_batch(&self, queries: &[Descriptor], out: &mut [Option<Largest>], scratch: &mut MatchScratch) {
        for (q, o) in queries.iter().zip(out.iter_mut()) {
            *o = self.fls(q, scratch);
        }
    }
}
