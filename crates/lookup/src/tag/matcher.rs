//! Find All Subsets and Find Largest Subset on the compiled vector trie (the paper's
//! Algorithms 1–3 with the three pruning rules of section 3.1.4).
//!
//! # Overview
//! Both walks keep the sibling lists still to read in a vector: a list is read in order (next
//! sibling = next cell, until the one flagged last), a node whose position is set in the query
//! pushes its first child's list, and a terminator is a match once its chain (if any) is also in
//! the query. Before a node is followed:
//! 1. its minimum depth must not exceed the query's weight,
//! 2. the *maximum potential matching weight* — positions matched so far plus query bits at or
//!    after the node's position — must reach the node's minimum depth (this subsumes rule 1),
//! 3. (FLS only) that potential, and the node's maximum depth, must beat the best match so far;
//!    the potential falls as positions rise, so FLS stops reading an ascending list at the first
//!    sibling past the query position where it can no longer beat the best (ours);
//! 4. (guarded compressions, not the paper's) the node's guard position must be in the query.
//!
//! **FAS** reads its lists breadth-first: its answer is the union of all matches, in any order,
//! so the lists wait in a queue, and a step is eight nodes of a list ([`ListScan::fas_chunk`]),
//! which pushes the child lists of the inner nodes it enters and, if the list goes on, its
//! rest. A step then costs no branch on where a list ends or on which nodes pass, and the steps
//! to come are known [`LOOKAHEAD`] steps ahead: each is prefetched (its first
//! [`LOOKAHEAD_LINES`] lines) that many steps before it is taken, which hides most of the memory
//! wait on a FIB far past the caches. A terminator whose chain goes on in the record stream (a
//! cache miss of its own) has its record prefetched and tested [`DEFERRED_RECORDS`] records
//! later, or at the walk's end: the answer is a union, so the test can wait.
//!
//! **FLS** pushes each child list with a bound, the most a match below it can weigh, drops a
//! popped list whose bound no longer beats the best, and pops the children of one list lowest
//! position first: that child has the most query bits ahead and most often holds the heavy
//! match, so the best is met early and rule 3 prunes what cannot beat it. On the paper's
//! compressions ([`FlsOrder::BreadthAfterFirstMatch`]) it walks so, depth-first, only until its
//! first match's descent ends, then reads what its stack holds breadth-first with FAS's step and
//! prefetch, the best so far as a floor: most of what FLS reads is the proof that nothing
//! heavier matches, whose order hardly matters, and FAS's step reads it without waiting. On
//! rare+chain ([`FlsOrder::BreadthFirst`]) the terminators sit in the first levels (the rarest
//! bit first, chains removed), so the floor comes early anyway and the walk is breadth-first
//! from the root ([`FlsOrder::for_compression`]). A batch walks one packet after another.
//!
//! **Reading a list** ([`super::list_scan`]): most nodes fail the first tests, so a list is read
//! eight nodes at a time — one AVX-512 load and a few vector instructions give the nodes that
//! pass as a bit mask; with AVX-512 VBMI the scan also applies rule 2 and pushes the child
//! lists itself. Where the CPU has no AVX-512F, or [`CompiledFib::set_simd`] turns it off, the
//! same walk tests node by node. The walks are written once, generic over the scan; one macro
//! (`by_instruction_set!`) makes each walk's entry point and its instances compiled with the
//! scan's instruction set enabled.
//!
//! **Counting**: [`CompiledFib::fas_counted`] and [`CompiledFib::fls_counted`] run the same
//! walks and count the lists and nodes they read, and where FLS met its final best
//! ([`WalkCounts`]); the uncounted walks compile the counting away.
//!
//! **Experiments** (cargo feature `experiments`, which the `tagnet` experiment turns on): the
//! paper's depth-first FAS ([`FasOrder::DepthFirst`]) and FLS ([`FlsOrder::DepthFirst`], whose
//! batches interleave 8 walks on FIBs of [`INTERLEAVE_FROM_BYTES`] or more, [`FlsBatchOrder`]),
//! chain records tested at once ([`RecordCheck::AtOnce`]), no prefetch, and descending sibling
//! lists, each measured against the walks above. Without the feature they cannot be chosen and
//! compile away. Tried and not kept (docs/tagnet.md): sorting a list's children by bound, a
//! global priority queue of lists, interleaving FAS walks, scalar bit masks for eight nodes,
//! cutting an ascending FAS list at the query's highest position.
//!
//! [`MatchScratch`] holds the stacks, owned by the calling thread and reused, so a warm matcher
//! does not allocate. [`Fanout`] is the packet's fan-out limit k (FAS stops once k ports are
//! chosen).

use core::num::NonZeroUsize;

use super::chain::Record;
use super::compile::{permute, CompiledFib, Compression, SiblingOrder};
#[cfg(target_arch = "x86_64")]
use super::list_scan::{Avx512Scan, VbmiScan};
use super::list_scan::{ListAt, ListScan, Query, ScalarScan};
use super::node::{Node, LAST, TERMINAL};
use super::{Descriptor, PortSet, TagError, FILTER_BITS, MAX_PORTS};
use crate::mem::prefetch;
/// Cache lines prefetched from the start of each child list a depth-first walk pushes.
const PREFETCH_LINES: usize = 8;
/// How many steps (eight nodes of a list each) ahead of the one it takes a breadth-first FAS
/// prefetches.
const LOOKAHEAD: usize = 32;
/// Cache lines prefetched from the start of each step a breadth-first FAS will take.
const LOOKAHEAD_LINES: usize = 2;
/// How many terminators' chain records a FAS walk holds, prefetched, before it tests the oldest
/// ([`RecordCheck::Deferred`]).
const DEFERRED_RECORDS: usize = 8;
/// How many FLS walks an interleaved [`CompiledFib::fls_batch`] takes turns between.
const INTERLEAVED: usize = 8;
/// Cache lines prefetched from the start of each child list an interleaved FLS walk pushes.
const INTERLEAVED_LINES: usize = 4;

/// The order FAS reads the child lists it pushes in (FLS's: [`FlsOrder`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FasOrder {
    /// The paper's: the list pushed last first (a stack), each prefetched when pushed.
    DepthFirst,
    /// Ours: the list pushed first first (a queue), each step prefetched 32 steps before it is
    /// taken.
    #[default]
    BreadthFirst,
}

impl FasOrder {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            FasOrder::DepthFirst => "depth-first",
            FasOrder::BreadthFirst => "breadth-first",
        }
    }
}

/// The order FLS reads the lists it pushes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FlsOrder {
    /// Depth-first all the way, the children of a list lowest position first (the paper's
    /// depth-first walk, in our order of siblings); a batch walks as its [`FlsBatchOrder`]
    /// says.
    DepthFirst,
    /// Ours, the default of the paper's forms: depth-first until the walk meets its first
    /// match and that descent ends, then breadth-first, by FAS's step with a floor (the best
    /// so far), its lists prefetched 32 steps ahead; a batch walks one packet after another.
    #[default]
    BreadthAfterFirstMatch,
    /// Ours, the default of [`Compression::RareChain`]: breadth-first from the root, by FAS's
    /// step with the best so far as its floor, which rises at each heavier match the walk
    /// meets; a batch walks one packet after another.
    BreadthFirst,
}

impl FlsOrder {
    /// The order [`CompiledFib::build`] sets on a FIB of compression `c`: breadth-first from
    /// the root on [`Compression::RareChain`], breadth-first after the first match on the
    /// others (see the module overview).
    pub fn for_compression(c: Compression) -> Self {
        match c {
            Compression::RareChain => FlsOrder::BreadthFirst,
            Compression::None | Compression::Perm | Compression::PermChain => FlsOrder::BreadthAfterFirstMatch,
        }
    }

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            FlsOrder::DepthFirst => "depth-first",
            FlsOrder::BreadthAfterFirstMatch => "breadth-after-first-match",
            FlsOrder::BreadthFirst => "breadth-first",
        }
    }
}

/// When FAS tests a terminator's chain record: the positions of its chain past the three its
/// node holds, read (when those three are in the query) from the record stream, a cache miss
/// of its own on a FIB past the caches. FLS tests at once (a match may raise its bound), but
/// for the depth-first walks of an interleaved batch, which test it at their next turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RecordCheck {
    /// When the walk meets the terminator, waiting for the record.
    AtOnce,
    /// Ours: the record is prefetched when the walk meets the terminator and tested 8 records
    /// later, or at the walk's end.
    #[default]
    Deferred,
}

impl RecordCheck {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            RecordCheck::AtOnce => "at-once",
            RecordCheck::Deferred => "deferred",
        }
    }
}

/// The FIB size from which [`CompiledFib::build`] sets FLS batches to
/// [`FlsBatchOrder::Interleaved`] (smaller FIBs: [`FlsBatchOrder::OneAtATime`]). Measured on
/// the AMD EPYC (32 MiB of L3), series `one_at_a_time` of the `tagnet` experiment: interleaving
/// loses a few percent on FIBs of a few MB, is within a few percent either way between about
/// 12 and 17 MB, and gains from there on, the most on FIBs far past the L3. 10 MiB sits just
/// below that band.
pub const INTERLEAVE_FROM_BYTES: usize = 10 << 20;

/// How [`CompiledFib::fls_batch`] walks the packets of a batch in [`FlsOrder::DepthFirst`] (a
/// single FLS walks alone; the breadth-first walks one packet after another).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlsBatchOrder {
    /// One walk after another, as [`CompiledFib::fls`] does each: the default on FIBs under
    /// [`INTERLEAVE_FROM_BYTES`], mostly in the caches, where a list read has little wait to
    /// hide and taking turns costs more than it saves.
    OneAtATime,
    /// Ours: 8 walks at once, one list of each in turn, so that the list a walk pushed (and a
    /// chain record it must test) is fetched while the other seven read theirs. A batch of one
    /// packet has nothing to take turns with: it walks as [`CompiledFib::fls`] does. The
    /// default on FIBs of [`INTERLEAVE_FROM_BYTES`] or more.
    Interleaved,
}

impl FlsBatchOrder {
    /// The order [`CompiledFib::build`] sets on a FIB of `fib_bytes`
    /// ([`CompiledFib::memory_bytes`]): interleaved from [`INTERLEAVE_FROM_BYTES`] on.
    pub fn for_fib_bytes(fib_bytes: usize) -> Self {
        if fib_bytes >= INTERLEAVE_FROM_BYTES {
            FlsBatchOrder::Interleaved
        } else {
            FlsBatchOrder::OneAtATime
        }
    }

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            FlsBatchOrder::OneAtATime => "one-at-a-time",
            FlsBatchOrder::Interleaved => "interleaved",
        }
    }
}

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

/// What one walk read, counted by [`CompiledFib::fas_counted`] and [`CompiledFib::fls_counted`]
/// (the experiments report it beside the time, to tell a walk that reads more from one that
/// waits longer per node).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalkCounts {
    /// Sibling lists read (FLS: not counting those dropped unread, their bound beaten).
    pub lists: u64,
    /// Nodes read: in a descending list those FLS passes over at its cut too; an ascending list
    /// is read up to its cut, the node there not included.
    pub nodes: u64,
    /// FLS: nodes read up to and including the terminator of its final best match. The rest
    /// proved that nothing heavier matches: no order of the walk can spare them, only tighter
    /// bounds could.
    pub nodes_to_best: u64,
    /// FLS in [`FlsOrder::BreadthAfterFirstMatch`]: nodes read in its depth-first part (the
    /// rest were read breadth-first, by FAS's step); 0 in the other walks.
    pub nodes_depth_first: u64,
    /// FLS in [`FlsOrder::BreadthAfterFirstMatch`]: lists read in its depth-first part.
    pub lists_depth_first: u64,
    /// FLS in [`FlsOrder::BreadthAfterFirstMatch`]: 1 if its depth-first part ended holding a
    /// match of the answer's weight (the breadth-first part then only proved it), else 0.
    pub depth_first_found_answer: u64,
    /// The weight of the match one walk's depth-first part ended with (0: none), kept until
    /// the walk's answer is known ([`WalkCounts::finish`]); not summed ([`WalkCounts::plus`]).
    depth_first_best: u32,
}

impl WalkCounts {
    /// The sums of two walks' counts (of many walks, folded).
    pub fn plus(self, other: WalkCounts) -> WalkCounts {
        WalkCounts {
            lists: self.lists + other.lists,
            nodes: self.nodes + other.nodes,
            nodes_to_best: self.nodes_to_best + other.nodes_to_best,
            nodes_depth_first: self.nodes_depth_first + other.nodes_depth_first,
            lists_depth_first: self.lists_depth_first + other.lists_depth_first,
            depth_first_found_answer: self.depth_first_found_answer + other.depth_first_found_answer,
            depth_first_best: 0,
        }
    }

    /// Counts an FLS walk's depth-first part as having found its answer if it ended holding a
    /// match of the answer's weight.
    fn finish(mut self, answer: Option<&Largest>) -> WalkCounts {
        self.depth_first_found_answer = u64::from(answer.is_some_and(|a| self.depth_first_best == a.weight));
        self
    }
}

/// A terminator's chain record still to test: where it starts in the record stream (bits), the
/// position before it, the chain's length counted from the list the terminator is in, and the
/// terminator's port-set id.
#[derive(Debug, Clone, Copy, Default)]
struct PendingRecord {
    bit: usize,
    prev: u8,
    len: u32,
    set: usize,
    /// The terminator's weight (its maximum depth).
    weight: u32,
}
// 32 bytes, not 24: a probe program found FAS, which holds eight of these in a ring, clearly
// faster at 10M with the old 24-byte record padded to 32 and nothing else changed.
const _: () = assert!(core::mem::size_of::<PendingRecord>() == 32);

/// What is known of a terminator whose first and third kept positions (its node's position and
/// guard bytes) are in the query.
enum TerminalTest {
    /// Its second kept position is not: no match.
    Miss,
    /// Its chain is all in the node: a match, of this port set.
    Match(usize),
    /// Its record decides.
    Record(PendingRecord),
}

/// The records a FAS walk holds for [`RecordCheck::Deferred`]: the last [`DEFERRED_RECORDS`]
/// it met, each prefetched when met.
#[derive(Default)]
struct HeldRecords {
    ring: [PendingRecord; DEFERRED_RECORDS],
    /// Records held since the walk began (the ring keeps the last few).
    count: usize,
}

impl HeldRecords {
    /// Holds `r`; if every slot was taken, hands back the oldest record, to test now.
    #[inline]
    fn hold(&mut self, r: PendingRecord) -> Option<PendingRecord> {
        let slot = &mut self.ring[self.count % DEFERRED_RECORDS];
        let oldest = (self.count >= DEFERRED_RECORDS).then_some(*slot);
        *slot = r;
        self.count += 1;
        oldest
    }

    /// The records still held, in no particular order.
    fn held(&self) -> &[PendingRecord] {
        &self.ring[..self.count.min(DEFERRED_RECORDS)]
    }
}

/// Counting for the walks, compiled away in the uncounted ones (`()`).
trait Tally {
    fn list(&mut self);
    /// `n` more nodes read.
    fn nodes(&mut self, n: u32);
    /// A new best match, `extra` nodes after those counted so far.
    fn best(&mut self, extra: u32);
    /// The walk's depth-first part ends here, holding a match of weight `best` (0: none).
    fn depth_first_done(&mut self, best: u32);
}

impl Tally for () {
    #[inline(always)]
    fn list(&mut self) {}
    #[inline(always)]
    fn nodes(&mut self, _: u32) {}
    #[inline(always)]
    fn best(&mut self, _: u32) {}
    #[inline(always)]
    fn depth_first_done(&mut self, _: u32) {}
}

impl Tally for WalkCounts {
    fn list(&mut self) {
        self.lists += 1;
    }
    fn nodes(&mut self, n: u32) {
        self.nodes += u64::from(n);
    }
    fn best(&mut self, extra: u32) {
        self.nodes_to_best = self.nodes + u64::from(extra);
    }
    fn depth_first_done(&mut self, best: u32) {
        self.nodes_depth_first = self.nodes;
        self.lists_depth_first = self.lists;
        self.depth_first_best = best;
    }
}

/// A matcher's reusable list vectors (one per thread).
#[derive(Debug, Default)]
pub struct MatchScratch {
    /// FAS: the lists, and lists' rests, still to read with their depth, a stack or a queue
    /// (every one a walk pushes stays until the next walk clears it: at most the steps it takes,
    /// several thousand on a 10M-descriptor FIB).
    lists: Vec<ListAt>,
    /// FLS: (bound on the weight of a match below, sibling list, depth), a stack.
    bounded: Vec<Bounded>,
    /// Interleaved FLS: a stack per walk (created by the first batch).
    interleaved: Vec<Vec<Bounded>>,
}

/// An FLS stack entry: (bound on the weight of a match below, sibling list, depth).
type Bounded = (u32, u32, u32);

impl MatchScratch {
    /// Scratch vectors sized for typical walks.
    pub fn new() -> Self {
        MatchScratch { lists: Vec::with_capacity(1024), bounded: Vec::with_capacity(1024), interleaved: Vec::new() }
    }
}

/// One FLS walk under way: its query, scan and best match so far (its stack is apart, in
/// [`MatchScratch`]).
struct FlsWalk<S> {
    q: Query,
    scan: S,
    descending: Descending,
    best_weight: u32,
    best_set: usize,
    /// A terminator whose record, prefetched, is still to test (interleaved walks: at the
    /// walk's next turn).
    held: Option<PendingRecord>,
}

impl<S: ListScan> FlsWalk<S> {
    /// A walk of `query` on `fib` for a match heavier than `floor`; `stack` is cleared to hold
    /// the root list.
    ///
    /// # Safety
    /// Only on a CPU that runs `S`.
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn new(fib: &CompiledFib, query: &Descriptor, floor: u32, stack: &mut Vec<Bounded>) -> Self {
        let q = fib.query(query);
        // SAFETY: the caller's contract.
        let scan = unsafe { S::new(&q) };
        let descending = Descending::new(&q);
        stack.clear();
        stack.push((u32::MAX, 0, 1));
        FlsWalk { q, scan, descending, best_weight: floor, best_set: usize::MAX, held: None }
    }

    /// The weight of the best match so far (0: none yet).
    fn found(&self) -> u32 {
        if self.best_set == usize::MAX {
            0
        } else {
            self.best_weight
        }
    }

    /// The walk's answer (once its stack is empty).
    fn answer(&self, fib: &CompiledFib) -> Option<Largest> {
        fib.port_sets.get(self.best_set).map(|&ports| Largest { weight: self.best_weight, ports })
    }
}

/// A query's positions, highest first, for FLS to pass over the siblings of a list that cannot
/// lead to a match heavier than the best so far.
///
/// A match at or below a sibling at position p in a list at depth d weighs at most
/// d − 1 + (query bits ≥ p). It is ≤ the best weight w once fewer than w − d + 2 query bits are
/// ≥ p, that is once p is past the query's (w − d + 2)-th highest position. In an ascending list
/// those siblings are its tail, and FLS stops reading there; in a descending list they are its
/// head, which FLS passes over. One sibling is out of order either way: the terminator of a
/// descriptor that ends at the list's parent (last in an ascending list, first in a descending
/// one), holding the parent's position. It weighs d − 1, and the cut applies only when
/// w ≥ d − 1, so it cannot beat the best either.
struct Descending {
    positions: [u8; FILTER_BITS],
    len: usize,
}

impl Descending {
    fn new(q: &Query) -> Descending {
        let mut d = Descending { positions: [0; FILTER_BITS], len: 0 };
        for (w, &word) in q.bits.iter().enumerate().rev() {
            let mut bits = word;
            while bits != 0 {
                let b = 63 - bits.leading_zeros() as usize;
                d.positions[d.len] = (w * 64 + b) as u8;
                d.len += 1;
                bits &= !(1 << b);
            }
        }
        d
    }

    /// The highest position a sibling in a list at `depth` can have and still lead to a match
    /// heavier than `best` (-1: none can; `i32::MAX`: every one can).
    #[inline]
    fn last_useful(&self, best: u32, depth: u32) -> i32 {
        let Some(r) = (best + 1).checked_sub(depth) else { return i32::MAX };
        self.positions[..self.len].get(r as usize).map_or(-1, |&p| i32::from(p))
    }
}

/// Defines method `$name`: walk `$walk` with the best list scan this CPU runs — AVX-512 VBMI
/// (for walks with a VBMI step, `vbmi: true`) where [`CompiledFib::set_simd`] left it on, else
/// AVX-512F, else node by node — each scan compiled inside a function that enables its
/// instruction set, so that the generic walk is inlined there with the scan's instructions.
macro_rules! by_instruction_set {
    (fn $name:ident => $walk:ident($($arg:ident: $ty:ty),*) -> $ret:ty, vbmi: $vbmi:tt) => {
        #[inline(always)]
        #[allow(unsafe_code)]
        fn $name(&self, $($arg: $ty,)* tally: &mut impl Tally) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                by_instruction_set!(@vbmi $vbmi, self, $walk, ($($arg: $ty),*), $ret, tally);
                #[target_feature(enable = "avx512f")]
                #[allow(unsafe_code)]
                unsafe fn avx512(fib: &CompiledFib, $($arg: $ty,)* tally: &mut impl Tally) -> $ret {
                    // SAFETY: this function runs only where AVX-512F does (its own contract).
                    unsafe { fib.$walk::<Avx512Scan>($($arg,)* tally) }
                }
                if self.simd {
                    // SAFETY: `simd` is set only where the CPU has AVX-512F (`simd_supported`).
                    return unsafe { avx512(self, $($arg,)* tally) };
                }
            }
            // SAFETY: the scalar scan runs on any CPU.
            unsafe { self.$walk::<ScalarScan>($($arg,)* tally) }
        }
    };
    (@vbmi true, $fib:ident, $walk:ident, ($($arg:ident: $ty:ty),*), $ret:ty, $tally:ident) => {
        #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
        #[allow(unsafe_code)]
        unsafe fn vbmi(fib: &CompiledFib, $($arg: $ty,)* tally: &mut impl Tally) -> $ret {
            // SAFETY: this function runs only where the scan's features do (its own contract).
            unsafe { fib.$walk::<VbmiScan>($($arg,)* tally) }
        }
        if $fib.vbmi {
            // SAFETY: `vbmi` is set only where the CPU has AVX-512F, BW and VBMI
            // (`vbmi_supported`).
            return unsafe { vbmi($fib, $($arg,)* $tally) };
        }
    };
    (@vbmi false, $($rest:tt)*) => {};
}

impl CompiledFib {
    fn query(&self, q: &Descriptor) -> Query {
        Query::new(if self.identity { q.0 } else { permute(q, &self.perm).0 })
    }

    /// The port-set id of terminator `n` (node `index`, reached in a list at depth `depth`, its
    /// first and third positions in the query) if it matches now. A record that decides is
    /// offered to `hold` first, which keeps it for later (`None`) or hands back a record to test
    /// now: itself, or an older one it held.
    #[inline]
    fn terminal_match(
        &self,
        q: &Query,
        n: &Node,
        index: usize,
        depth: u32,
        hold: impl FnOnce(PendingRecord) -> Option<PendingRecord>,
    ) -> Option<usize> {
        match self.terminal_test(q, n, index, depth) {
            TerminalTest::Miss => None,
            TerminalTest::Match(set) => Some(set),
            TerminalTest::Record(r) => hold(r).and_then(|now| self.record_match(q, &now)),
        }
    }

    /// Whether terminator `n` (node `index`, reached in a list at depth `depth`, its first and
    /// third positions in the query) matches: its second position, then, for a chain longer
    /// than the node holds, the record that decides ([`CompiledFib::record_match`]).
    #[inline]
    fn terminal_test(&self, q: &Query, n: &Node, index: usize, depth: u32) -> TerminalTest {
        if !q.has(usize::from(n.b)) {
            return TerminalTest::Miss;
        }
        let len = (u32::from(n.max) + 1).saturating_sub(depth);
        if len <= 3 {
            return TerminalTest::Match(self.terminal_set(n));
        }
        match self.record_bit(index, n) {
            Some(bit) => TerminalTest::Record(PendingRecord {
                bit,
                prev: self.kept.record_after(n.a, n.c),
                len,
                set: self.terminal_set(n),
                weight: u32::from(n.max),
            }),
            None => TerminalTest::Miss,
        }
    }

    /// The port-set id of the terminator whose record `r` is, if the rest of its chain is in
    /// the query.
    #[inline]
    fn record_match(&self, q: &Query, r: &PendingRecord) -> Option<usize> {
        let mut rest = Record::at(&self.records, r.bit, r.prev, self.rice_k);
        for _ in 3..r.len {
            if !q.has(rest.next_position()?) {
                return None;
            }
        }
        Some(r.set)
    }

    /// Prefetches the start of record `r` (nothing if the walks' prefetch is off).
    #[inline]
    fn prefetch_record(&self, r: &PendingRecord) {
        if self.prefetching() {
            prefetch(self.records.as_ptr().wrapping_add(r.bit / 8));
        }
    }

    /// Adds the ports of port set `set` that are in `allowed` to `out`, up to `limit` ports;
    /// whether `out` is now full (never, for no limit).
    #[inline]
    fn add_ports(&self, out: &mut PortSet, set: usize, allowed: &PortSet, limit: usize) -> bool {
        let ports = self.port_sets.get(set).map_or(PortSet::EMPTY, |s| s.intersection(allowed));
        if limit >= MAX_PORTS {
            *out = out.union(&ports);
            false
        } else {
            out.union_up_to(&ports, limit)
        }
    }

    /// Prefetches the first `lines` cache lines of the sibling list that starts at node `list`
    /// (nothing if the walks' prefetch is off).
    #[inline]
    fn prefetch_list(&self, list: usize, lines: usize) {
        if !self.prefetching() {
            return;
        }
        let first = self.nodes.as_ptr().wrapping_add(list);
        for line in 0..lines {
            prefetch(first.wrapping_add(line * 64 / core::mem::size_of::<Node>()));
        }
    }

    /// Prefetches what a FAS walk has just `pushed` (`children` child lists, then maybe the
    /// rest of the list it reads). A depth-first walk reads a child list when it pops it, after
    /// the rest of the current list and what that pushes: it prefetches each child's first
    /// [`PREFETCH_LINES`] lines, which hold all of most lists and the start of the subtree read
    /// after it (the rest of the current list came with its start). A breadth-first walk, the
    /// first `in_reach` of all it pushed, those it will read within its lookahead (no list
    /// taken later prefetches them) — most often none, and then no branch depends on what
    /// was pushed.
    #[inline]
    fn prefetch_pushed(&self, pushed: &[ListAt], children: usize, breadth_first: bool, in_reach: usize) {
        if !breadth_first {
            for list in &pushed[..children] {
                self.prefetch_list(list.start as usize, PREFETCH_LINES);
            }
        } else if in_reach != 0 {
            for list in pushed.iter().take(in_reach) {
                self.prefetch_list(list.start as usize, LOOKAHEAD_LINES);
            }
        }
    }

    /// Find All Subsets: the union of the ports of every entry ⊆ `query`, restricted to
    /// `allowed` (the packet's tree), stopping once `fanout` ports are chosen.
    pub fn fas(&self, query: &Descriptor, fanout: Fanout, allowed: &PortSet, scratch: &mut MatchScratch) -> PortSet {
        self.fas_dispatch(query, fanout, allowed, scratch, &mut ())
    }

    /// [`CompiledFib::fas`], counting what the walk read.
    pub fn fas_counted(&self, query: &Descriptor, fanout: Fanout, allowed: &PortSet, scratch: &mut MatchScratch) -> (PortSet, WalkCounts) {
        let mut counts = WalkCounts::default();
        (self.fas_dispatch(query, fanout, allowed, scratch, &mut counts), counts)
    }

    by_instruction_set!(fn fas_dispatch => fas_walk(query: &Descriptor, fanout: Fanout, allowed: &PortSet, scratch: &mut MatchScratch) -> PortSet, vbmi: true);

    /// The FAS walk over lists read with scan `S`.
    ///
    /// # Safety
    /// Only on a CPU that runs `S` ([`ListScan::chunk`]).
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn fas_walk<S: ListScan>(
        &self,
        query: &Descriptor,
        fanout: Fanout,
        allowed: &PortSet,
        scratch: &mut MatchScratch,
        tally: &mut impl Tally,
    ) -> PortSet {
        let mut out = PortSet::EMPTY;
        if self.nodes.is_empty() {
            return out;
        }
        let limit = fanout.get();
        let q = self.query(query);
        // SAFETY: the caller's contract.
        let scan = unsafe { S::new(&q) };
        let breadth_first = self.fas_order() == FasOrder::BreadthFirst;
        // Breadth-first: the steps before `next` are taken, and the one `LOOKAHEAD` after it
        // is prefetched as `next` is taken.
        let lists = &mut scratch.lists;
        let mut next = 0;
        lists.clear();
        lists.push(ListAt { start: 0, depth: 1 });
        let deferred = self.fas_record_check() == RecordCheck::Deferred;
        let mut held = HeldRecords::default();
        loop {
            let ListAt { start, depth } = if breadth_first {
                let Some(&taken) = lists.get(next) else { break };
                if let Some(ahead) = lists.get(next + LOOKAHEAD) {
                    self.prefetch_list(ahead.start as usize, LOOKAHEAD_LINES);
                }
                next += 1;
                taken
            } else {
                let Some(taken) = lists.pop() else { break };
                taken
            };
            // A list's rest is pushed as a list of its own; count only lists' starts (each
            // list ends with its last node, the root list starts the vector).
            if start == 0 || self.nodes.get(start as usize - 1).is_some_and(|n| n.is(LAST)) {
                tally.list();
            }
            // Most nodes fail the scan's test; the inner nodes that pass have their child lists
            // pushed by the scan itself, and only the terminators are left to test.
            let i = start as usize;
            let pushed_from = lists.len();
            // SAFETY: the caller's contract.
            let chunk = unsafe { scan.fas_chunk(&self.nodes, i, depth, 0, i32::MAX, lists) };
            tally.nodes(chunk.read);
            let in_reach = (next + LOOKAHEAD).saturating_sub(pushed_from);
            self.prefetch_pushed(&lists[pushed_from..], chunk.children as usize, breadth_first, in_reach);
            let mut hits = chunk.hits;
            while hits != 0 {
                let k = i + hits.trailing_zeros() as usize;
                hits &= hits - 1;
                let Some(n) = self.nodes.get(k) else { break };
                let matched = self.terminal_match(&q, n, k, depth, |r| {
                    if !deferred {
                        return Some(r);
                    }
                    self.prefetch_record(&r);
                    held.hold(r)
                });
                if let Some(set) = matched {
                    if self.add_ports(&mut out, set, allowed, limit) {
                        return out;
                    }
                }
            }
        }
        for r in held.held() {
            if let Some(set) = self.record_match(&q, r) {
                if self.add_ports(&mut out, set, allowed, limit) {
                    break;
                }
            }
        }
        out
    }

    /// Find Largest Subset: an entry ⊆ `query` of the greatest weight, or `None`.
    ///
    /// Lowest position first: each child list is pushed with the most a match below it can
    /// weigh (the child's maximum depth, capped by its potential matching weight), the lists
    /// pushed from one sibling list are popped lowest position first, and a popped list whose
    /// bound no longer beats the best match is dropped unread. A heavy match is then found early
    /// (the packet's own descriptor on the first descent, when it has no extra tags), and rule 3
    /// prunes what cannot beat it (the paper's plain depth-first order found it late).
    pub fn fls(&self, query: &Descriptor, scratch: &mut MatchScratch) -> Option<Largest> {
        self.fls_dispatch(query, 0, scratch, &mut ())
    }

    /// [`CompiledFib::fls`], counting what the walk read.
    pub fn fls_counted(&self, query: &Descriptor, scratch: &mut MatchScratch) -> (Option<Largest>, WalkCounts) {
        self.fls_above_counted(query, 0, scratch)
    }

    /// Find Largest Subset above a floor: an entry ⊆ `query` of the greatest weight if that
    /// weight is above `floor`, else `None` — the walk started as if a match of weight `floor`
    /// had been found already, so it prunes from the first list on. A caller that knows a
    /// lower bound (a match from elsewhere) spares the search for it; with `floor` one below
    /// the answer's weight, what is left is the walk's proof that nothing heavier matches (the
    /// `tagnet` experiment measures that, the most a better first guess could gain).
    pub fn fls_above(&self, query: &Descriptor, floor: u32, scratch: &mut MatchScratch) -> Option<Largest> {
        self.fls_dispatch(query, floor, scratch, &mut ())
    }

    /// [`CompiledFib::fls_above`], counting what the walk read.
    pub fn fls_above_counted(&self, query: &Descriptor, floor: u32, scratch: &mut MatchScratch) -> (Option<Largest>, WalkCounts) {
        let mut counts = WalkCounts::default();
        let answer = self.fls_dispatch(query, floor, scratch, &mut counts);
        let counts = counts.finish(answer.as_ref());
        (answer, counts)
    }

    #[inline(always)]
    fn fls_dispatch(&self, query: &Descriptor, floor: u32, scratch: &mut MatchScratch, tally: &mut impl Tally) -> Option<Largest> {
        match self.fls_order() {
            FlsOrder::DepthFirst => self.fls_depth_first(query, floor, scratch, tally),
            FlsOrder::BreadthAfterFirstMatch | FlsOrder::BreadthFirst => self.fls_breadth(query, floor, scratch, tally),
        }
    }

    by_instruction_set!(fn fls_depth_first => fls_walk(query: &Descriptor, floor: u32, scratch: &mut MatchScratch) -> Option<Largest>, vbmi: false);

    by_instruction_set!(fn fls_breadth => fls_breadth_walk(query: &Descriptor, floor: u32, scratch: &mut MatchScratch) -> Option<Largest>, vbmi: true);

    /// The depth-first FLS walk over lists read with scan `S`, for a match heavier than `floor`.
    ///
    /// # Safety
    /// Only on a CPU that runs `S` ([`ListScan::chunk`]).
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn fls_walk<S: ListScan>(
        &self,
        query: &Descriptor,
        floor: u32,
        scratch: &mut MatchScratch,
        tally: &mut impl Tally,
    ) -> Option<Largest> {
        if self.nodes.is_empty() {
            return None;
        }
        let stack = &mut scratch.bounded;
        // SAFETY: the caller's contract.
        let mut walk = unsafe { FlsWalk::<S>::new(self, query, floor, stack) };
        // SAFETY: the caller's contract.
        while unsafe { self.fls_step(&mut walk, stack, PREFETCH_LINES, false, tally) } {}
        walk.answer(self)
    }

    /// The FLS walk in [`FlsOrder::BreadthAfterFirstMatch`] or [`FlsOrder::BreadthFirst`] over
    /// lists read with scan `S`, for a match heavier than `floor`. In the first,
    /// [`CompiledFib::fls_step`] until the walk meets a match and the descent it met it on ends
    /// (the next list is no deeper than the last one read), then what its stack still holds,
    /// and what they push, breadth-first; in the second, breadth-first from the root list.
    /// Breadth-first is FAS's step ([`ListScan::fas_chunk`]) with the best so far as its floor.
    /// Rule 3 is then the floor's test of each node and the list's cut; a list pushed before the
    /// best rose is read anyway (its nodes then fail the floor).
    ///
    /// # Safety
    /// Only on a CPU that runs `S` ([`ListScan::chunk`]).
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn fls_breadth_walk<S: ListScan>(
        &self,
        query: &Descriptor,
        floor: u32,
        scratch: &mut MatchScratch,
        tally: &mut impl Tally,
    ) -> Option<Largest> {
        if self.nodes.is_empty() {
            return None;
        }
        let stack = &mut scratch.bounded;
        // SAFETY: the caller's contract.
        let mut walk = unsafe { FlsWalk::<S>::new(self, query, floor, stack) };
        // BreadthAfterFirstMatch: depth-first, lowest position first, meets a heavy match early
        // (often the packet's own descriptor on the first descent). Until a match, and then to
        // the end of that descent: a match further down the same path holds more of the
        // packet's bits.
        let mut depth_read = 0;
        let depth_first_part = self.fls_order() == FlsOrder::BreadthAfterFirstMatch;
        while depth_first_part && (walk.best_set == usize::MAX || stack.last().is_some_and(|top| top.2 > depth_read)) {
            depth_read = stack.last().map_or(0, |top| top.2);
            // SAFETY: the caller's contract.
            if !unsafe { self.fls_step(&mut walk, stack, PREFETCH_LINES, false, tally) } {
                tally.depth_first_done(walk.found());
                return walk.answer(self);
            }
        }
        tally.depth_first_done(walk.found());
        // What is left is mostly the proof that nothing heavier matches, and its order matters
        // little: breadth-first, the walk knows what it reads next and prefetches it.
        let ascending = self.sibling_order() == SiblingOrder::Ascending;
        let lists = &mut scratch.lists;
        lists.clear();
        let best = walk.best_weight;
        lists.extend(stack.iter().rev().filter(|e| e.0 > best).map(|&(_, start, depth)| ListAt { start, depth }));
        for list in lists.iter().take(LOOKAHEAD) {
            self.prefetch_list(list.start as usize, LOOKAHEAD_LINES);
        }
        let mut next = 0;
        while let Some(&ListAt { start, depth }) = lists.get(next) {
            if let Some(ahead) = lists.get(next + LOOKAHEAD) {
                self.prefetch_list(ahead.start as usize, LOOKAHEAD_LINES);
            }
            next += 1;
            if start == 0 || self.nodes.get(start as usize - 1).is_some_and(|n| n.is(LAST)) {
                tally.list();
            }
            let i = start as usize;
            let pushed_from = lists.len();
            let cut = if ascending { walk.descending.last_useful(walk.best_weight, depth) } else { i32::MAX };
            // SAFETY: the caller's contract.
            let chunk = unsafe { walk.scan.fas_chunk(&self.nodes, i, depth, walk.best_weight, cut, lists) };
            let in_reach = (next + LOOKAHEAD).saturating_sub(pushed_from);
            self.prefetch_pushed(&lists[pushed_from..], chunk.children as usize, true, in_reach);
            let mut hits = chunk.hits;
            while hits != 0 {
                let lane = hits.trailing_zeros();
                hits &= hits - 1;
                let k = i + lane as usize;
                let Some(n) = self.nodes.get(k) else { break };
                // The floor may have risen at a match earlier in this step. A record that
                // decides is read now (held as FAS holds them, the floor rose later and the
                // walk read more: slower, in a probe program).
                let weight = u32::from(n.max);
                if weight <= walk.best_weight {
                    continue;
                }
                if let Some(set) = self.terminal_match(&walk.q, n, k, depth, Some) {
                    walk.best_weight = weight;
                    walk.best_set = set;
                    tally.best(lane + 1);
                }
            }
            tally.nodes(chunk.read);
        }
        walk.answer(self)
    }

    /// One step of an FLS walk: reads the next list on `stack`, the walk's, that can still beat
    /// its best match (dropping unread those that cannot), pushing the child lists that can and
    /// prefetching their first `lines` cache lines. False once the stack is empty: the walk is
    /// done.
    ///
    /// # Safety
    /// Only on a CPU that runs `S` ([`ListScan::chunk`]).
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn fls_step<S: ListScan>(
        &self,
        walk: &mut FlsWalk<S>,
        stack: &mut Vec<Bounded>,
        lines: usize,
        defer: bool,
        tally: &mut impl Tally,
    ) -> bool {
        let FlsWalk { q, scan, descending, best_weight, best_set, held } = walk;
        if let Some(r) = held.take() {
            // It was held only while heavier than the best, so a best of its weight now was
            // found after it, later in the walk's order: the record wins the tie, as it would
            // have tested at once, and a batch answers exactly as the single walk.
            if r.weight >= *best_weight {
                if let Some(set) = self.record_match(q, &r) {
                    *best_weight = r.weight;
                    *best_set = set;
                }
            }
        }
        let (list, depth) = loop {
            let Some((bound, list, depth)) = stack.pop() else { return false };
            if bound > *best_weight {
                break (list, depth);
            }
        };
        let ascending = self.sibling_order() == SiblingOrder::Ascending;
        tally.list();
        let mut last_useful = descending.last_useful(*best_weight, depth);
        let pushed = stack.len();
        let mut i = list as usize;
        'list: loop {
            // The scan tests heavier-than-best, position and guard at once, and in an ascending
            // list stops at the cut: no sibling from there on can beat the best.
            let cut = if ascending { last_useful } else { i32::MAX };
            // SAFETY: the caller's contract.
            let chunk = unsafe { scan.chunk(&self.nodes, i, *best_weight, cut) };
            let mut pass = chunk.pass;
            while pass != 0 {
                let lane = pass.trailing_zeros();
                pass &= pass - 1;
                let k = i + lane as usize;
                let Some(n) = self.nodes.get(k) else { break };
                if i32::from(n.a) > last_useful {
                    // Descending: the head of the list, past the cut (lower ones may pass).
                } else if n.is(TERMINAL) {
                    let matched = self.terminal_match(q, n, k, depth, |r| {
                        if !defer || held.is_some() {
                            return Some(r);
                        }
                        self.prefetch_record(&r);
                        *held = Some(r);
                        None
                    });
                    if let Some(set) = matched {
                        *best_weight = u32::from(n.max);
                        *best_set = set;
                        tally.best(lane + 1);
                        last_useful = descending.last_useful(*best_weight, depth);
                        // The rest of the list is tested against the new best.
                        tally.nodes(lane + 1);
                        if n.is(LAST) {
                            break 'list;
                        }
                        i = k + 1;
                        continue 'list;
                    }
                } else {
                    let potential = depth - 1 + q.from(n.pos());
                    if (n.min() <= potential) & (potential > *best_weight) {
                        self.prefetch_list(n.child(), lines);
                        stack.push((potential.min(u32::from(n.max)), n.child() as u32, depth + 1 + n.skip()));
                    }
                }
            }
            tally.nodes(chunk.read);
            if chunk.ended {
                break;
            }
            i += 8;
        }
        if ascending && stack.len() > pushed + 1 {
            // Lowest position popped first: the push order of a descending list, the reverse
            // of an ascending one's.
            stack[pushed..].reverse();
        }
        true
    }

    /// FLS above a floor for each of `packets` (descriptor, floor) into `out`, [`INTERLEAVED`]
    /// walks at a time taking turns, one list each (see the module overview).
    ///
    /// # Safety
    /// Only on a CPU that runs `S` ([`ListScan::chunk`]).
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn fls_interleaved<'q, S: ListScan>(
        &self,
        packets: impl Iterator<Item = (&'q Descriptor, u32)>,
        out: &mut [Option<Largest>],
        scratch: &mut MatchScratch,
    ) {
        if self.nodes.is_empty() {
            // As one walk after another would: each packet's slot, no further.
            packets.zip(out.iter_mut()).for_each(|(_, o)| *o = None);
            return;
        }
        let stacks = &mut scratch.interleaved;
        stacks.resize_with(INTERLEAVED, || Vec::with_capacity(1024));
        // Each slot: the walk of packet `.0`, or none once the batch has no packet left for it.
        let mut slots: [Option<(usize, FlsWalk<S>)>; INTERLEAVED] = core::array::from_fn(|_| None);
        let mut packets = packets.take(out.len()).enumerate();
        let mut next_walk = |stack: &mut Vec<Bounded>| {
            // SAFETY: the caller's contract.
            packets.next().map(|(i, (q, floor))| (i, unsafe { FlsWalk::<S>::new(self, q, floor, stack) }))
        };
        for (slot, stack) in slots.iter_mut().zip(stacks.iter_mut()) {
            *slot = next_walk(stack);
        }
        let mut live = slots.iter().filter(|s| s.is_some()).count();
        while live > 0 {
            for (slot, stack) in slots.iter_mut().zip(stacks.iter_mut()) {
                let Some((i, walk)) = slot else { continue };
                // SAFETY: the caller's contract.
                if unsafe { self.fls_step(walk, stack, INTERLEAVED_LINES, true, &mut ()) } {
                    continue;
                }
                if let Some(o) = out.get_mut(*i) {
                    *o = walk.answer(self);
                }
                *slot = next_walk(stack);
                live -= usize::from(slot.is_none());
            }
        }
    }

    /// [`CompiledFib::fas`] for each query, into `out`.
    pub fn fas_batch(&self, queries: &[Descriptor], fanout: Fanout, out: &mut [PortSet], scratch: &mut MatchScratch) {
        for (q, o) in queries.iter().zip(out.iter_mut()) {
            *o = self.fas(q, fanout, &PortSet::ALL, scratch);
        }
    }

    /// [`CompiledFib::fls`] for each query, into `out`, one walk after another (the depth-first
    /// experiment interleaves them on FIBs of [`INTERLEAVE_FROM_BYTES`] or more:
    /// [`FlsBatchOrder`]); the answers are the same either way.
    pub fn fls_batch(&self, queries: &[Descriptor], out: &mut [Option<Largest>], scratch: &mut MatchScratch) {
        self.fls_many(queries.iter().map(|q| (q, 0)), out, scratch);
    }

    /// [`CompiledFib::fls_above`] for each (query, floor), into `out`, walked as
    /// [`CompiledFib::fls_batch`] walks.
    pub fn fls_above_batch(&self, packets: &[(Descriptor, u32)], out: &mut [Option<Largest>], scratch: &mut MatchScratch) {
        self.fls_many(packets.iter().map(|(q, floor)| (q, *floor)), out, scratch);
    }

    /// FLS above a floor for each (descriptor, floor) of `packets` into `out`, in this FIB's
    /// [`FlsBatchOrder`].
    #[allow(unsafe_code)]
    fn fls_many<'q>(&self, packets: impl Iterator<Item = (&'q Descriptor, u32)>, out: &mut [Option<Largest>], scratch: &mut MatchScratch) {
        if self.fls_order() != FlsOrder::DepthFirst || self.fls_batch_order == FlsBatchOrder::OneAtATime || out.len() < 2 {
            for ((q, floor), o) in packets.zip(out.iter_mut()) {
                *o = self.fls_dispatch(q, floor, scratch, &mut ());
            }
            return;
        }
        #[cfg(target_arch = "x86_64")]
        if self.simd {
            // SAFETY: `simd` is set only where the CPU has AVX-512F (`simd_supported`).
            return unsafe { self.fls_interleaved_avx512(packets, out, scratch) };
        }
        // SAFETY: the scalar scan runs on any CPU.
        unsafe { self.fls_interleaved::<ScalarScan>(packets, out, scratch) }
    }

    /// The interleaved FLS walks with the AVX-512 scan inlined.
    ///
    /// # Safety
    /// Only on a CPU with AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    #[allow(unsafe_code)]
    unsafe fn fls_interleaved_avx512<'q>(
        &self,
        packets: impl Iterator<Item = (&'q Descriptor, u32)>,
        out: &mut [Option<Largest>],
        scratch: &mut MatchScratch,
    ) {
        // SAFETY: this function runs only where AVX-512F does (its own contract).
        unsafe { self.fls_interleaved::<Avx512Scan>(packets, out, scratch) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter with bits `ps` set.
    fn of(ps: &[usize]) -> Descriptor {
        let mut bits = [0u64; 3];
        for &p in ps {
            bits[p / 64] |= 1 << (p % 64);
        }
        Descriptor(bits)
    }

    #[test]
    fn a_list_stops_where_its_potential_cannot_beat_the_best() {
        let d = Descending::new(&Query::new(of(&[3, 10, 50, 100, 150]).0));
        assert_eq!(&d.positions[..d.len], &[150, 100, 50, 10, 3]);
        // Root list, nothing found yet: any sibling up to the query's highest position.
        assert_eq!(d.last_useful(0, 1), 150);
        // Root list, best 2: a sibling needs 3 query bits at or after it.
        assert_eq!(d.last_useful(2, 1), 50);
        // Depth 3 (two positions matched), best 4: 3 more bits needed.
        assert_eq!(d.last_useful(4, 3), 50);
        // Best lighter than the path so far: every sibling can beat it.
        assert_eq!(d.last_useful(0, 3), i32::MAX);
        // Best at least the path plus every query bit: none can.
        assert_eq!(d.last_useful(7, 3), -1);
    }

    #[test]
    fn prefetch_changes_no_answer() {
        use crate::tag::{Compression, Layout};
        let fib: Vec<(Descriptor, PortSet)> = (0..200u8)
            .map(|i| (of(&[usize::from(i % 50), usize::from(i) % 7 + 60, usize::from(i) % 120 + 70]), PortSet::of([i % 64])))
            .collect();
        let mut compiled = CompiledFib::build(fib.iter().copied(), fib.len(), Compression::RareChain, Layout::Sol).unwrap();
        let queries: Vec<Descriptor> = (0..50).map(|i| of(&[i, i % 7 + 60, i + 70, i + 71, 100])).collect();
        let answers = |c: &CompiledFib| {
            let mut s = MatchScratch::new();
            queries.iter().map(|q| (c.fas(q, Fanout::ALL, &PortSet::ALL, &mut s), c.fls(q, &mut s))).collect::<Vec<_>>()
        };
        let with = answers(&compiled);
        assert!(with.iter().any(|(fas, _)| !fas.is_empty()), "some queries match");
        compiled.set_prefetch(false);
        assert_eq!(answers(&compiled), with);
    }

    #[test]
    fn fas_reads_the_same_lists_in_either_order() {
        use crate::tag::Compression;
        // Queries of many bits over a FIB of many short descriptors: walks of more lists than
        // the breadth-first lookahead.
        let fib: Vec<(Descriptor, PortSet)> =
            (0..600usize).map(|i| (of(&[i % 30, i / 30 % 20 + 30, i % 11 + 60]), PortSet::of([(i % 64) as u8]))).collect();
        let queries: Vec<Descriptor> = (0..40).map(|i| of(&(0..72).filter(|p| (p + i) % 3 != 0).collect::<Vec<_>>())).collect();
        let mut longest = 0;
        for (c, l) in crate::tag::VARIANTS {
            let mut compiled = CompiledFib::build(fib.iter().copied(), fib.len(), c, l).unwrap();
            let mut s = MatchScratch::new();
            let mut walk = |compiled: &CompiledFib| {
                queries.iter().map(|q| compiled.fas_counted(q, Fanout::ALL, &PortSet::ALL, &mut s)).collect::<Vec<_>>()
            };
            assert_eq!(compiled.fas_order(), FasOrder::BreadthFirst, "the default");
            assert_eq!(compiled.fas_record_check(), RecordCheck::Deferred, "the default");
            let breadth_first = walk(&compiled);
            longest = breadth_first.iter().map(|(_, n)| n.lists).fold(longest, u64::max);
            for check in [RecordCheck::AtOnce, RecordCheck::Deferred] {
                compiled.set_fas_record_check(check);
                for order in [FasOrder::DepthFirst, FasOrder::BreadthFirst] {
                    compiled.set_fas_order(order);
                    assert_eq!(walk(&compiled), breadth_first, "{c:?} {l:?} {order:?} {check:?}");
                }
            }
            compiled.set_fas_order(FasOrder::DepthFirst);
            if c == Compression::None {
                compiled.set_prefetch(false);
                assert_eq!(walk(&compiled), breadth_first, "{c:?} {l:?} without prefetch");
            }
        }
        assert!(longest > 2 * LOOKAHEAD as u64, "walks read {longest} lists: none past the lookahead");
    }

    #[test]
    fn deferred_records_are_all_tested_however_many_a_walk_meets() {
        use crate::tag::{Compression, Layout};
        // Descriptors of 6–9 positions, few shared: most end in a terminator whose chain is
        // longer than the three positions its node holds, so a query holding all of them meets
        // more records than the ring holds (the last ones are tested only at the walk's end).
        let fib: Vec<(Descriptor, PortSet)> = (0..40usize)
            .map(|i| (of(&(0..6 + i % 4).map(|j| (i * 5 + j * 23) % 192).collect::<Vec<_>>()), PortSet::of([(i % 64) as u8])))
            .collect();
        let scan = crate::tag::LinearScan::new(fib.iter().map(|(d, p)| (d, p)));
        let queries: Vec<Descriptor> = [0..40usize, 0..8, 30..40, 3..4]
            .into_iter()
            .map(|r| {
                let mut q = Descriptor::default();
                r.for_each(|i| q = q.union(&fib[i].0));
                q
            })
            .collect();
        for l in [Layout::Sol, Layout::Srol] {
            let mut compiled = CompiledFib::build(fib.iter().copied(), fib.len(), Compression::PermChain, l).unwrap();
            let mut s = MatchScratch::new();
            for check in [RecordCheck::AtOnce, RecordCheck::Deferred] {
                compiled.set_fas_record_check(check);
                for q in &queries {
                    let all = scan.fas(q, Fanout::ALL, &PortSet::ALL);
                    assert_eq!(compiled.fas(q, Fanout::ALL, &PortSet::ALL, &mut s), all, "{l:?} {check:?}");
                    for k in [1, 3, DEFERRED_RECORDS + 2] {
                        let some = compiled.fas(q, Fanout::new(k).unwrap(), &PortSet::ALL, &mut s);
                        assert!(some.is_subset_of(&all) && some.len() == all.len().min(k), "{l:?} {check:?} k = {k}");
                    }
                }
            }
            let every = scan.fas(&queries[0], Fanout::ALL, &PortSet::ALL);
            assert_eq!(every.len(), 40, "the first query matches every entry, past the ring");
        }
    }

    #[test]
    fn a_batch_answers_as_single_walks_in_either_order() {
        use crate::tag::Compression;
        let fib: Vec<(Descriptor, PortSet)> =
            (0..500usize).map(|i| (of(&[i % 30, i / 30 % 20 + 30, i % 11 + 60]), PortSet::of([(i % 64) as u8]))).collect();
        // More packets than walks interleaved, of unlike lengths (some match nothing), so that
        // slots finish and refill out of step.
        let queries: Vec<Descriptor> = (0..5 * INTERLEAVED + 3)
            .map(|i| of(&(0..72).filter(|p| (p * (i % 4 + 1) + i) % 5 != 0 || i % 7 == 0).collect::<Vec<_>>()))
            .chain([of(&[191]), of(&[0, 30, 60])])
            .collect();
        let floors: Vec<(Descriptor, u32)> = queries.iter().enumerate().map(|(i, q)| (*q, (i % 4) as u32)).collect();
        for (c, l) in crate::tag::VARIANTS {
            let mut compiled = CompiledFib::build(fib.iter().copied(), fib.len(), c, l).unwrap();
            let mut s = MatchScratch::new();
            let single: Vec<_> = queries.iter().map(|q| compiled.fls(q, &mut s)).collect();
            let single_above: Vec<_> = floors.iter().map(|(q, f)| compiled.fls_above(q, *f, &mut s)).collect();
            assert!(single.iter().filter(|a| a.is_some()).count() > queries.len() / 2, "most packets match");
            assert_eq!(compiled.fls_batch_order(), FlsBatchOrder::OneAtATime, "the default of a FIB in the caches");
            let by_compression = if c == Compression::RareChain { FlsOrder::BreadthFirst } else { FlsOrder::BreadthAfterFirstMatch };
            assert_eq!(compiled.fls_order(), by_compression, "{c:?}: FLS's order by compression");
            for order in [FlsBatchOrder::Interleaved, FlsBatchOrder::OneAtATime] {
                compiled.set_fls_batch_order(order);
                let mut out = vec![None; queries.len()];
                compiled.fls_batch(&queries, &mut out, &mut s);
                assert_eq!(out, single, "{c:?} {l:?} {order:?}");
                compiled.fls_above_batch(&floors, &mut out, &mut s);
                assert_eq!(out, single_above, "{c:?} {l:?} {order:?} above");
                // A short `out`: the packets it has room for.
                let mut short = vec![None; 3];
                compiled.fls_batch(&queries, &mut short, &mut s);
                assert_eq!(short, single[..3], "{c:?} {l:?} {order:?} short");
                let mut one = vec![None; 1];
                compiled.fls_batch(&queries[5..], &mut one, &mut s);
                assert_eq!(one, single[5..6], "{c:?} {l:?} {order:?} one");
            }
            if c == Compression::None {
                compiled.set_prefetch(false);
                compiled.set_fls_batch_order(FlsBatchOrder::Interleaved);
                let mut out = vec![None; queries.len()];
                compiled.fls_batch(&queries, &mut out, &mut s);
                assert_eq!(out, single, "{c:?} {l:?} without prefetch");
            }
        }
        let empty = CompiledFib::build(core::iter::empty(), 0, Compression::PermChain, crate::tag::Layout::Srol).unwrap();
        assert_eq!(FlsBatchOrder::for_fib_bytes(INTERLEAVE_FROM_BYTES - 1), FlsBatchOrder::OneAtATime);
        assert_eq!(FlsBatchOrder::for_fib_bytes(INTERLEAVE_FROM_BYTES), FlsBatchOrder::Interleaved);
        let some = Some(Largest { weight: 1, ports: PortSet::EMPTY });
        for order in [FlsBatchOrder::Interleaved, FlsBatchOrder::OneAtATime] {
            let mut empty = empty.clone();
            empty.set_fls_batch_order(order);
            let mut out = vec![some; 3];
            empty.fls_batch(&queries[..2], &mut out, &mut MatchScratch::new());
            assert_eq!(out, [None, None, some], "an empty FIB matches nothing, and fills only its packets' slots ({order:?})");
        }
    }

    #[test]
    fn counted_walks_answer_alike_and_count_what_they_read() {
        let fib: Vec<(Descriptor, PortSet)> =
            (0..300usize).map(|i| (of(&[i % 40, i % 13 + 50, i % 97 + 70]), PortSet::of([(i % 64) as u8]))).collect();
        let queries: Vec<Descriptor> = (0..60).map(|i| of(&[i % 40, i % 13 + 50, i % 97 + 70, (i * 7) % 190])).collect();
        for (c, l) in crate::tag::VARIANTS {
            let compiled = CompiledFib::build(fib.iter().copied(), fib.len(), c, l).unwrap();
            let mut s = MatchScratch::new();
            let mut found_answer = 0;
            for q in &queries {
                let (fas, fas_counts) = compiled.fas_counted(q, Fanout::ALL, &PortSet::ALL, &mut s);
                assert_eq!(fas, compiled.fas(q, Fanout::ALL, &PortSet::ALL, &mut s), "{c:?} {l:?}");
                assert!(fas_counts.lists >= 1 && fas_counts.nodes >= fas_counts.lists, "{fas_counts:?}");
                let (fls, fls_counts) = compiled.fls_counted(q, &mut s);
                assert_eq!(fls, compiled.fls(q, &mut s), "{c:?} {l:?}");
                assert!(fls.is_some(), "every query holds an entry");
                assert!(fls_counts.nodes_to_best >= 1 && fls_counts.nodes_to_best <= fls_counts.nodes, "{fls_counts:?}");
                assert!(fls_counts.nodes <= fas_counts.nodes, "FLS reads no more than FAS: {fls_counts:?} {fas_counts:?}");
                if compiled.fls_order() == FlsOrder::BreadthAfterFirstMatch {
                    // Depth-first at least to its first match, which is in the nodes it read.
                    assert!(fls_counts.nodes_depth_first >= 1 && fls_counts.nodes_depth_first <= fls_counts.nodes, "{fls_counts:?}");
                    assert!(fls_counts.lists_depth_first >= 1 && fls_counts.lists_depth_first <= fls_counts.lists, "{fls_counts:?}");
                    assert!(fls_counts.depth_first_found_answer <= 1, "{fls_counts:?}");
                    if fls_counts.nodes_depth_first == fls_counts.nodes {
                        assert_eq!(fls_counts.depth_first_found_answer, 1, "the walk ended depth-first: {fls_counts:?}");
                    }
                    found_answer += fls_counts.depth_first_found_answer;
                } else {
                    assert_eq!(fls_counts.nodes_depth_first, 0, "{c:?} {l:?}: breadth-first from the root");
                    assert_eq!((fls_counts.lists_depth_first, fls_counts.depth_first_found_answer), (0, 0), "{c:?} {l:?}");
                }
            }
            if compiled.fls_order() == FlsOrder::BreadthAfterFirstMatch {
                assert!(found_answer >= 1, "{c:?} {l:?}: no depth-first part ever held its answer");
            }
            // Given its answer's weight less one, FLS reads no more and answers the same.
            for q in &queries {
                let (fls, fls_counts) = compiled.fls_counted(q, &mut s);
                let floor = fls.map_or(0, |b| b.weight - 1);
                let (above, above_counts) = compiled.fls_above_counted(q, floor, &mut s);
                assert_eq!(above.map(|b| b.weight), fls.map(|b| b.weight), "{c:?} {l:?}");
                assert!(above_counts.nodes <= fls_counts.nodes, "{above_counts:?} {fls_counts:?}");
                assert_eq!(compiled.fls_above(q, floor + 1, &mut s), None);
            }
            let nothing = compiled.fls_counted(&of(&[191]), &mut s);
            assert_eq!((nothing.0, nothing.1.nodes_to_best), (None, 0), "{c:?} {l:?}");
            let depth_first_part = if compiled.fls_order() == FlsOrder::BreadthAfterFirstMatch { nothing.1.nodes } else { 0 };
            assert_eq!(nothing.1.nodes_depth_first, depth_first_part, "no match: depth-first to the end, if at all");
            assert_eq!(nothing.1.depth_first_found_answer, 0, "no answer to find");
            let mut depth_first = compiled;
            depth_first.set_fls_order(FlsOrder::DepthFirst);
            assert_eq!(depth_first.fls_counted(&queries[0], &mut s).1.nodes_depth_first, 0, "counted in the breadth-first walk only");
        }
    }

    #[test]
    fn the_cut_passes_over_only_what_cannot_beat_the_best() {
        use crate::tag::{Compression, Layout};
        // Under 10: {10, 40} and {10} (its terminator last). Under 5: {5, 150}, then {5}'s
        // terminator, which the cut passes over once {10} has set the best to 1: 150 is past the
        // query's highest position, and {5} weighs 1 too.
        let fib = [(of(&[10, 40]), 1u8), (of(&[10]), 2), (of(&[5, 150]), 3), (of(&[5]), 4)];
        let entries = fib.iter().map(|&(d, p)| (d, PortSet::of([p])));
        let query = of(&[5, 10, 20]);
        for c in Compression::ALL {
            let compiled = CompiledFib::build(entries.clone(), fib.len(), c, Layout::Srol).unwrap();
            let best = compiled.fls(&query, &mut MatchScratch::new()).unwrap();
            assert_eq!(best.weight, 1, "{c:?}");
            assert!(best.ports == PortSet::of([2]) || best.ports == PortSet::of([4]), "{c:?}");
        }
    }
}
