//! Reading a sibling list eight nodes at a time: which of them a walk must act on.
//!
//! # Overview
//! Most nodes a walk reads fail its first test — their position or guard is not in the query —
//! and cost only that test (see [`super::matcher`]). [`ListScan::chunk`] applies the test to up
//! to eight consecutive nodes of one list at once and returns a [`Chunk`]: the nodes that pass
//! (a bit each), how many of the eight belong to the list and are read, and whether the list
//! ends among them. The walk then acts on the passing nodes alone, in list order.
//!
//! The test, per node: the query has the node's position (`a`) and its guard (`c`), and the
//! node's maximum depth is above `best` (FLS's best match so far; FAS passes 0, which every node
//! beats). The list ends at its last node (flagged [`LAST`]), or — FLS's cut in an ascending
//! list — before the first node whose position is past `last_useful` (FAS passes `i32::MAX`).
//!
//! FAS goes one step further with [`ListScan::fas_chunk`]: the scan itself pushes the child
//! lists of the inner nodes FAS enters and, when the list goes on past the eight, the list's
//! rest as a list of its own ([`ListAt`]), and hands back only the terminators to test. A
//! walk's step is then one chunk, and neither where a list ends nor which nodes pass decides a
//! branch of the walk (on a 10M-descriptor FIB a wrong guess there also exposed the memory
//! wait of the chunk that decides it).
//!
//! Three implementations give the same answers:
//! - [`ScalarScan`], node by node;
//! - where the CPU has AVX-512F, [`Avx512Scan`]: a node is 8 bytes, so the eight are one
//!   512-bit load, and the query's bits are looked up for all eight positions at once (each
//!   lane picks its query word with a permute and shifts its bit down);
//! - where it also has AVX-512 VBMI, [`VbmiScan`] for FAS's step (which breadth-first FLS
//!   takes too, with a floor): the query is a 192-byte table
//!   (0xff where it has a position), and two byte permutes look up every byte of the eight
//!   nodes in it at once — position, guard and a terminator's second position alike. A second
//!   table, the query bits from each position on, gives rule 2 for all eight, and a compress
//!   packs the child lists of the nodes entered into eight words stored at once.
//!
//! The first two build FAS's step on [`ListScan::chunk`] and push what passes node by node.
//! FLS's depth-first part reads with [`Avx512Scan`]'s chunk even where the CPU has VBMI: a VBMI
//! chunk that also left out the nodes FLS passes over anyway (rules 2 and 3, a terminator's
//! second position) made the depth-first FLS slower on zipf-1m, and so did one that also pushed
//! its children with a compress (docs/tagnet.md). The walks are written once, generic over the scan; the AVX-512
//! instances are compiled inside functions that enable the features, so that the scan's
//! intrinsics inline into them.

#![allow(unsafe_code)]

use super::node::{Node, CHILD, LAST, SKIP, TERMINAL};
use super::FILTER_BITS;

/// A query prepared for one walk: renumbered bits and, per word, the weight of the words after
/// it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Query {
    pub(super) bits: [u64; 3],
    after: [u32; 3],
}

impl Query {
    pub(super) fn new(bits: [u64; 3]) -> Query {
        let c = bits.map(u64::count_ones);
        Query { bits, after: [c[1] + c[2], c[2], 0] }
    }

    #[inline]
    pub(super) fn has(&self, p: usize) -> bool {
        self.bit(p) == 1
    }

    /// Bit p of the query, 0 or 1 (to combine tests without a branch each).
    #[inline(always)]
    pub(super) fn bit(&self, p: usize) -> u64 {
        self.bits[p >> 6] >> (p & 63) & 1
    }

    /// Query bits at positions ≥ p.
    #[inline]
    pub(super) fn from(&self, p: usize) -> u32 {
        (self.bits[p >> 6] >> (p & 63)).count_ones() + self.after[p >> 6]
    }
}

/// What [`ListScan::chunk`] found in up to eight nodes of one list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Chunk {
    /// Bit k: node i + k belongs to the list, is read, and passes the test.
    pub(super) pass: u8,
    /// Nodes read: those before the list's end or its cut, its last node included.
    pub(super) read: u32,
    /// Whether the list ends (or is cut) among the eight.
    pub(super) ended: bool,
}

/// A sibling list FAS is still to read: its first node and its depth (the AVX-512 VBMI scan
/// writes eight at once, one 64-bit lane each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub(super) struct ListAt {
    pub(super) start: u32,
    pub(super) depth: u32,
}
const _: () = assert!(core::mem::size_of::<ListAt>() == 8);

/// What [`ListScan::fas_chunk`] found and pushed in up to eight nodes of one list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FasChunk {
    /// Bit k: node i + k is a terminator read, its three positions are in the query, and it
    /// weighs more than the step's floor.
    pub(super) hits: u8,
    /// Child lists pushed: those of the inner nodes read that FAS enters, in list order (the
    /// list's rest follows them if it does not end among the eight).
    pub(super) children: u32,
    /// Nodes read, the list's last one included.
    pub(super) read: u32,
    /// Whether the list ends among the eight.
    pub(super) ended: bool,
}

/// A way of reading a list's nodes, set up for one query.
pub(super) trait ListScan: Copy {
    /// The scan for query `q`.
    ///
    /// # Safety
    /// As [`ListScan::chunk`].
    unsafe fn new(q: &Query) -> Self;

    /// The query it was set up for.
    fn query(&self) -> &Query;

    /// The nodes `i..i + 8` of `nodes` (fewer at the vector's end), `i` inside a list.
    ///
    /// # Safety
    /// Only on a CPU that runs this scan (any, for [`ScalarScan`]; AVX-512F for
    /// [`Avx512Scan`]; AVX-512F, BW and VBMI for [`VbmiScan`]).
    unsafe fn chunk(self, nodes: &[Node], i: usize, best: u32, last_useful: i32) -> Chunk;

    /// FAS's step on nodes `i..i + 8` of a list at `depth`: pushes onto `lists` the child list
    /// of every inner node read whose position and guard are in the query and whose subtree
    /// the query can still reach (rule 2: minimum depth below `depth` + query bits from its
    /// position), then the list's rest (`i + 8`, read as a list of its own) if it does not end
    /// among the eight, and returns the terminators whose three positions are in the query.
    ///
    /// FLS breadth-first takes the same step with a floor: only nodes that can lead to a match
    /// heavier than `above` (the best so far) count — a terminator heavier than it, an inner
    /// node whose maximum depth and potential (depth − 1 + query bits from its position) are
    /// above it — and an ascending list ends before its first node past `last_useful`, its cut
    /// ([`ListScan::chunk`]). FAS passes 0 and `i32::MAX`: every node is above 0.
    ///
    /// This default builds on [`ListScan::chunk`] and tests the nodes that pass one by one.
    ///
    /// # Safety
    /// As [`ListScan::chunk`].
    #[inline(always)]
    unsafe fn fas_chunk(self, nodes: &[Node], i: usize, depth: u32, above: u32, last_useful: i32, lists: &mut Vec<ListAt>) -> FasChunk {
        // SAFETY: this method's contract is `chunk`'s.
        let chunk = unsafe { self.chunk(nodes, i, above, last_useful) };
        let q = self.query();
        let mut out = FasChunk { hits: 0, children: 0, read: chunk.read, ended: chunk.ended };
        let mut pass = chunk.pass;
        while pass != 0 {
            let k = pass.trailing_zeros() as usize;
            pass &= pass - 1;
            let Some(n) = nodes.get(i + k) else { break };
            if n.is(TERMINAL) {
                out.hits |= (q.bit(usize::from(n.b)) as u8) << k;
            } else {
                // Rule 2, and the floor: its potential (reach − 1) above `above` (its maximum
                // depth too, which `chunk` tested).
                let reach = depth + q.from(n.pos());
                if (n.min() < reach) & (reach > above + 1) {
                    lists.push(ListAt { start: n.child() as u32, depth: depth + 1 + n.skip() });
                    out.children += 1;
                }
            }
        }
        if !out.ended {
            lists.push(ListAt { start: (i + 8) as u32, depth });
        }
        out
    }
}

/// Node by node.
#[derive(Debug, Clone, Copy)]
pub(super) struct ScalarScan {
    q: Query,
}

impl ListScan for ScalarScan {
    #[inline(always)]
    unsafe fn new(q: &Query) -> Self {
        ScalarScan { q: *q }
    }

    #[inline(always)]
    fn query(&self) -> &Query {
        &self.q
    }

    #[inline(always)]
    unsafe fn chunk(self, nodes: &[Node], i: usize, best: u32, last_useful: i32) -> Chunk {
        let mut chunk = Chunk { pass: 0, read: 0, ended: true };
        for k in 0..8 {
            let Some(n) = nodes.get(i + k) else { return chunk };
            if i32::from(n.a) > last_useful {
                return chunk;
            }
            chunk.read += 1;
            let pass = u64::from(u32::from(n.max) > best) & self.q.bit(usize::from(n.a)) & self.q.bit(usize::from(n.c));
            chunk.pass |= (pass as u8) << k;
            if n.is(LAST) {
                return chunk;
            }
        }
        chunk.ended = false;
        chunk
    }
}

/// Eight nodes per AVX-512 instruction sequence.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
pub(super) struct Avx512Scan {
    /// The query's three words in lanes 0–2.
    words: core::arch::x86_64::__m512i,
    q: Query,
}

#[cfg(target_arch = "x86_64")]
impl Avx512Scan {
    /// Whether this CPU can run it.
    pub(super) fn supported() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
    }
}

#[cfg(target_arch = "x86_64")]
impl ListScan for Avx512Scan {
    #[inline(always)]
    unsafe fn new(q: &Query) -> Self {
        let [w0, w1, w2] = q.bits.map(|w| w as i64);
        // SAFETY: the caller guarantees AVX-512F (the trait's contract).
        Avx512Scan { words: unsafe { set_words(w0, w1, w2) }, q: *q }
    }

    #[inline(always)]
    fn query(&self) -> &Query {
        &self.q
    }

    #[inline(always)]
    unsafe fn chunk(self, nodes: &[Node], i: usize, best: u32, last_useful: i32) -> Chunk {
        // SAFETY: the caller guarantees AVX-512F (the trait's contract).
        unsafe { chunk_avx512(self.words, nodes, i, best, last_useful) }
    }
}

/// FAS's step with the query as byte tables (see the module overview); its `chunk` is
/// [`Avx512Scan`]'s.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
pub(super) struct VbmiScan {
    words: Avx512Scan,
    /// Byte p: 0xff where the query has position p, else 0 (positions 0–191, 64 a vector).
    has: [core::arch::x86_64::__m512i; 3],
    /// Byte p: the query bits at positions ≥ p.
    from: [core::arch::x86_64::__m512i; 3],
}

#[cfg(target_arch = "x86_64")]
impl VbmiScan {
    /// Whether this CPU can run it.
    pub(super) fn supported() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vbmi")
    }
}

#[cfg(target_arch = "x86_64")]
impl ListScan for VbmiScan {
    #[inline(always)]
    unsafe fn new(q: &Query) -> Self {
        let from: [u8; FILTER_BITS] = core::array::from_fn(|p| q.from(p) as u8);
        // SAFETY: the caller guarantees the scan's features (the trait's contract).
        unsafe { VbmiScan { words: Avx512Scan::new(q), has: has_table(q.bits), from: byte_table(&from) } }
    }

    #[inline(always)]
    fn query(&self) -> &Query {
        &self.words.q
    }

    #[inline(always)]
    unsafe fn chunk(self, nodes: &[Node], i: usize, best: u32, last_useful: i32) -> Chunk {
        // SAFETY: the caller's contract covers AVX-512F.
        unsafe { self.words.chunk(nodes, i, best, last_useful) }
    }

    #[inline(always)]
    unsafe fn fas_chunk(self, nodes: &[Node], i: usize, depth: u32, above: u32, last_useful: i32, lists: &mut Vec<ListAt>) -> FasChunk {
        // SAFETY: the caller guarantees the scan's features (the trait's contract).
        unsafe { fas_chunk_vbmi(self, nodes, i, depth, above, last_useful, lists) }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn set_words(w0: i64, w1: i64, w2: i64) -> core::arch::x86_64::__m512i {
    core::arch::x86_64::_mm512_setr_epi64(w0, w1, w2, 0, 0, 0, 0, 0)
}

/// Where the eight nodes start: one 64-bit lane each, position `a` in bits 0–7, `b` in 8–15,
/// maximum depth in 16–23, guard `c` in 24–31, the link (its flags included) in 32–63.
const _: () = assert!(
    core::mem::size_of::<Node>() == 8
        && core::mem::offset_of!(Node, a) == 0
        && core::mem::offset_of!(Node, b) == 1
        && core::mem::offset_of!(Node, max) == 2
        && core::mem::offset_of!(Node, c) == 3
        && core::mem::offset_of!(Node, link) == 4
);

/// Nodes `i..i + 8` of `nodes` as eight 64-bit lanes (lanes past the vector's end zero), and
/// the mask of the lanes inside it; `None` past the end.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn load_nodes(nodes: &[Node], i: usize) -> Option<(core::arch::x86_64::__m512i, u8)> {
    use core::arch::x86_64::*;
    let in_bounds: u8 = match nodes.len().saturating_sub(i) {
        0 => return None,
        left if left >= 8 => 0xff,
        left => (1u8 << left) - 1,
    };
    // SAFETY: the mask loads only lanes i..i + 8 that are inside `nodes` (the others are not
    // read and cannot fault); a node is plain bytes.
    Some((unsafe { _mm512_maskz_loadu_epi64(in_bounds, nodes.as_ptr().wrapping_add(i).cast()) }, in_bounds))
}

/// The lanes of `v` with `flag` (a link flag) set.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn flagged(v: core::arch::x86_64::__m512i, flag: u32) -> u8 {
    use core::arch::x86_64::*;
    _mm512_test_epi64_mask(v, _mm512_set1_epi64(i64::from(flag) << 32))
}

/// How many of the lanes in `in_bounds` a list's reading takes: up to and including its
/// `last` one.
#[inline(always)]
fn lanes_read(last: u8, in_bounds: u8) -> u32 {
    (last.trailing_zeros() + 1).min(in_bounds.count_ones())
}

/// The mask of the first `read` lanes (at most eight).
#[inline(always)]
fn first_lanes(read: u32) -> u8 {
    ((1u32 << read) - 1) as u8
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn chunk_avx512(words: core::arch::x86_64::__m512i, nodes: &[Node], i: usize, best: u32, last_useful: i32) -> Chunk {
    use core::arch::x86_64::*;
    let Some((v, in_bounds)) = load_nodes(nodes, i) else { return Chunk { pass: 0, read: 0, ended: true } };
    let byte = _mm512_set1_epi64(0xff);
    let low6 = _mm512_set1_epi64(63);
    let a = _mm512_and_si512(v, byte);
    let c = _mm512_and_si512(_mm512_srli_epi64::<24>(v), byte);
    let max = _mm512_and_si512(_mm512_srli_epi64::<16>(v), byte);
    // Query bit p: word p >> 6 (a permute of the three words), shifted down by p & 63.
    let bit = |p: __m512i| _mm512_srlv_epi64(_mm512_permutexvar_epi64(_mm512_srli_epi64::<6>(p), words), _mm512_and_si512(p, low6));
    let both = _mm512_and_si512(bit(a), bit(c));
    let heavier = _mm512_cmpgt_epi64_mask(max, _mm512_set1_epi64(i64::from(best)));
    let pass = _mm512_test_epi64_mask(both, _mm512_set1_epi64(1)) & heavier;
    let last = flagged(v, LAST);
    let cut = _mm512_cmpgt_epi64_mask(a, _mm512_set1_epi64(i64::from(last_useful))) & in_bounds;
    // Read: the nodes before the cut, and up to the last one.
    let read = cut.trailing_zeros().min(lanes_read(last, in_bounds));
    Chunk { pass: pass & first_lanes(read), read, ended: (cut | last) != 0 || in_bounds != 0xff }
}

/// The query's bits as bytes, 0xff where it has the position.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn has_table(bits: [u64; 3]) -> [core::arch::x86_64::__m512i; 3] {
    bits.map(|w| core::arch::x86_64::_mm512_movm_epi8(w))
}

/// A 192-byte table as three vectors.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn byte_table(bytes: &[u8; FILTER_BITS]) -> [core::arch::x86_64::__m512i; 3] {
    // SAFETY: bytes k * 64 .. k * 64 + 64 are inside `bytes` (k < 3, 192 bytes).
    [0, 1, 2].map(|k| unsafe { core::arch::x86_64::_mm512_loadu_si512(bytes.as_ptr().wrapping_add(k * 64).cast()) })
}

/// Every byte of `v` looked up in a 192-byte table: bytes 0–127 index the first two vectors,
/// and those with their top bit set (128–191) the third.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
fn lookup(table: &[core::arch::x86_64::__m512i; 3], v: core::arch::x86_64::__m512i) -> core::arch::x86_64::__m512i {
    use core::arch::x86_64::*;
    let low = _mm512_permutex2var_epi8(table[0], v, table[1]);
    _mm512_mask_permutexvar_epi8(low, _mm512_movepi8_mask(v), v, table[2])
}

/// The lanes whose bytes under `bytes` (a per-lane byte mask) are all 0xff.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn all_set(v: core::arch::x86_64::__m512i, bytes: i64) -> u8 {
    use core::arch::x86_64::*;
    let bytes = _mm512_set1_epi64(bytes);
    _mm512_cmpeq_epi64_mask(_mm512_and_si512(v, bytes), bytes)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
fn fas_chunk_vbmi(scan: VbmiScan, nodes: &[Node], i: usize, depth: u32, above: u32, last_useful: i32, lists: &mut Vec<ListAt>) -> FasChunk {
    use core::arch::x86_64::*;
    let Some((v, in_bounds)) = load_nodes(nodes, i) else { return FasChunk { hits: 0, children: 0, read: 0, ended: true } };
    let byte = _mm512_set1_epi64(0xff);
    let last = flagged(v, LAST);
    let cut = _mm512_cmpgt_epi64_mask(_mm512_and_si512(v, byte), _mm512_set1_epi64(i64::from(last_useful))) & in_bounds;
    let read = first_lanes(cut.trailing_zeros().min(lanes_read(last, in_bounds)));
    let has = lookup(&scan.has, v);
    let terminal = flagged(v, TERMINAL);
    // Rule 2: an inner node's minimum depth (its byte `b`) below `depth` + query bits from `a`.
    let from_a = _mm512_and_si512(lookup(&scan.from, v), byte);
    let min = _mm512_and_si512(_mm512_srli_epi64::<8>(v), byte);
    let reach = _mm512_add_epi64(from_a, _mm512_set1_epi64(i64::from(depth)));
    let reachable = _mm512_cmplt_epu64_mask(min, reach);
    // The floor: maximum depth above it, and the potential (reach − 1) too.
    let max = _mm512_and_si512(_mm512_srli_epi64::<16>(v), byte);
    let heavier = _mm512_cmpgt_epu64_mask(max, _mm512_set1_epi64(i64::from(above)));
    let potential = _mm512_cmpgt_epu64_mask(reach, _mm512_set1_epi64(i64::from(above) + 1));
    let enter = all_set(has, 0xff00_00ff) & !terminal & reachable & potential & heavier & read;
    // Each entered node's child list, packed as a `ListAt`: first child | depth below << 32.
    let link = _mm512_srli_epi64::<32>(v);
    let child = _mm512_and_si512(link, _mm512_set1_epi64(i64::from(CHILD)));
    let skip = _mm512_and_si512(_mm512_srli_epi64::<{ SKIP.trailing_zeros() }>(link), _mm512_set1_epi64(1));
    let below = _mm512_add_epi64(skip, _mm512_set1_epi64(i64::from(depth) + 1));
    let packed = _mm512_maskz_compress_epi64(enter, _mm512_or_si512(child, _mm512_slli_epi64::<32>(below)));
    let ended = (cut | last) != 0 || in_bounds != 0xff;
    let children = enter.count_ones();
    lists.reserve(9);
    let len = lists.len();
    // SAFETY: `reserve` made room for nine more lists after `len`. The vector store writes
    // eight (a `ListAt` is 8 bytes, `repr(C)`, start then depth: one little-endian lane), the
    // rest of the list is written after the children, and only the children and, if the list
    // goes on, its rest (all written) become part of the vector.
    unsafe {
        let at = lists.as_mut_ptr().add(len);
        _mm512_storeu_si512(at.cast(), packed);
        at.add(children as usize).write(ListAt { start: (i + 8) as u32, depth });
        lists.set_len(len + children as usize + usize::from(!ended));
    }
    FasChunk { hits: all_set(has, 0xff00_ffff) & terminal & heavier & read, children, read: read.count_ones(), ended }
}

/// Whether this CPU runs the walks' AVX-512 list scan.
pub(super) fn simd_supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    return Avx512Scan::supported();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether this CPU runs FAS's AVX-512 VBMI step.
pub(super) fn vbmi_supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    return VbmiScan::supported();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(a: u8, c: u8, max: u8, last: bool) -> Node {
        Node { a, b: 1, max, c, link: if last { LAST | TERMINAL } else { 0 } }
    }

    /// A xorshift generator (the tests need no quality, only spread).
    fn xorshift() -> impl FnMut() -> u64 {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        }
    }

    #[test]
    fn both_scans_read_the_same_nodes_and_pass_the_same() {
        // Lists of every length 1–20 at every offset, positions spread over the three words.
        let mut next = xorshift();
        let mut nodes = Vec::new();
        for len in 1..=20usize {
            for k in 0..len {
                nodes.push(node((next() % 192) as u8, (next() % 192) as u8, (next() % 30 + 1) as u8, k + 1 == len));
            }
        }
        let q = Query::new([next(), next(), next()]);
        // SAFETY: the scalar scan runs anywhere.
        let scalar = unsafe { ScalarScan::new(&q) };
        for i in 0..nodes.len() {
            for (best, last_useful) in [(0, i32::MAX), (5, 120), (12, 40), (29, -1), (0, 191)] {
                // SAFETY: the scalar scan runs anywhere.
                let want = unsafe { scalar.chunk(&nodes, i, best, last_useful) };
                assert!(want.read <= 8 && want.pass.count_ones() <= want.read);
                #[cfg(target_arch = "x86_64")]
                if Avx512Scan::supported() {
                    // SAFETY: supported just above.
                    let got = unsafe { Avx512Scan::new(&q).chunk(&nodes, i, best, last_useful) };
                    assert_eq!(got, want, "node {i}, best {best}, last useful {last_useful}");
                }
            }
        }
    }

    #[test]
    fn every_scan_pushes_the_same_lists_and_finds_the_same_terminators() {
        // Lists of every length 1–20 of inner nodes (some with skips) and terminators.
        let mut next = xorshift();
        let mut nodes = Vec::new();
        for len in 1..=20usize {
            for k in 0..len {
                let last = if k + 1 == len { LAST } else { 0 };
                let (a, b, c) = ((next() % 192) as u8, (next() % 192) as u8, (next() % 192) as u8);
                let link = match next() % 3 {
                    0 => TERMINAL | last | (next() as u32 & CHILD),
                    1 => SKIP | last | (next() as u32 & CHILD),
                    _ => last | (next() as u32 & CHILD),
                };
                // An inner node's `b` is its minimum depth below: some the query reaches, some not.
                let b = if link & TERMINAL == 0 { b % 40 } else { b };
                nodes.push(Node { a, b, max: (next() % 40 + 1) as u8, c, link });
            }
        }
        let (mut children, mut hits, mut rests) = (0, 0, 0);
        // Dense queries (many nodes pass) and one in each word alone.
        for bits in [[next() | next(), next() | next(), next() | next()], [u64::MAX, 0, 0], [0, 0, u64::MAX]] {
            let q = Query::new(bits);
            // SAFETY: the scalar scan runs anywhere.
            let scalar = unsafe { ScalarScan::new(&q) };
            // FAS's step (no floor), and FLS's with floors and cuts.
            let floors = [(0, i32::MAX), (0, 100), (8, i32::MAX), (20, 150), (35, -1)];
            for (i, depth, (above, last_useful)) in
                (0..nodes.len()).flat_map(|i| [1, 3, 10].into_iter().flat_map(move |d| floors.map(|f| (i, d, f))))
            {
                let mut want_lists = vec![ListAt { start: 7, depth: 7 }];
                // SAFETY: the scalar scan runs anywhere.
                let want = unsafe { scalar.fas_chunk(&nodes, i, depth, above, last_useful, &mut want_lists) };
                assert_eq!(want_lists.len(), 1 + want.children as usize + usize::from(!want.ended));
                if !want.ended {
                    assert_eq!(want_lists.last(), Some(&ListAt { start: i as u32 + 8, depth }));
                    rests += 1;
                }
                children += want.children;
                hits += want.hits.count_ones();
                #[cfg(target_arch = "x86_64")]
                {
                    let step = |scan: &dyn Fn(&mut Vec<ListAt>) -> FasChunk| {
                        let mut lists = vec![ListAt { start: 7, depth: 7 }];
                        (scan(&mut lists), lists)
                    };
                    if Avx512Scan::supported() {
                        // SAFETY: supported just above.
                        let got = step(&|lists| unsafe { Avx512Scan::new(&q).fas_chunk(&nodes, i, depth, above, last_useful, lists) });
                        assert_eq!(got, (want, want_lists.clone()), "avx-512f, node {i}, depth {depth}, floor {above}");
                    }
                    if VbmiScan::supported() {
                        // SAFETY: supported just above.
                        let got = step(&|lists| unsafe { VbmiScan::new(&q).fas_chunk(&nodes, i, depth, above, last_useful, lists) });
                        assert_eq!(got, (want, want_lists.clone()), "vbmi, node {i}, depth {depth}, floor {above}");
                    }
                }
            }
        }
        // The cases above include every outcome.
        assert!(children > 100 && hits > 100 && rests > 100, "{children} {hits} {rests}");
    }
}
