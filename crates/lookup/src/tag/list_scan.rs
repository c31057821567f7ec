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
//! Two implementations give the same answers: [`ScalarScan`], node by node, and, where the CPU
//! has AVX-512F, [`Avx512Scan`]: a node is 8 bytes, so the eight are one 512-bit load, and the
//! query's bits are looked up for all eight positions at once (each lane picks its query word
//! with a permute and shifts its bit down). The walks are written once, generic over the scan;
//! the AVX-512 instances are compiled inside functions that enable the feature, so that the
//! scan's intrinsics inline into them.

#![allow(unsafe_code)]

use super::compile::{Node, LAST};

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

/// A way of reading a list's nodes, set up for one query.
pub(super) trait ListScan: Copy {
    /// The scan for a query with these (renumbered) bits.
    ///
    /// # Safety
    /// As [`ListScan::chunk`].
    unsafe fn new(bits: [u64; 3]) -> Self;

    /// The nodes `i..i + 8` of `nodes` (fewer at the vector's end), `i` inside a list.
    ///
    /// # Safety
    /// Only on a CPU that runs this scan (any, for [`ScalarScan`]; AVX-512F for
    /// [`Avx512Scan`]).
    unsafe fn chunk(self, nodes: &[Node], i: usize, best: u32, last_useful: i32) -> Chunk;
}

/// Node by node.
#[derive(Debug, Clone, Copy)]
pub(super) struct ScalarScan {
    bits: [u64; 3],
}

/// Bit `p` of a query's (renumbered) words, 0 or 1 (to combine tests without a branch each).
#[inline(always)]
pub(super) fn query_bit(bits: &[u64; 3], p: usize) -> u64 {
    bits[p >> 6] >> (p & 63) & 1
}

impl ScalarScan {
    #[inline(always)]
    fn has(self, p: u8) -> u64 {
        query_bit(&self.bits, usize::from(p))
    }
}

impl ListScan for ScalarScan {
    #[inline(always)]
    unsafe fn new(bits: [u64; 3]) -> Self {
        ScalarScan { bits }
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
            let pass = u64::from(u32::from(n.max) > best) & self.has(n.a) & self.has(n.c);
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
    query: core::arch::x86_64::__m512i,
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
    unsafe fn new(bits: [u64; 3]) -> Self {
        let [w0, w1, w2] = bits.map(|w| w as i64);
        // SAFETY: the caller guarantees AVX-512F (the trait's contract).
        Avx512Scan { query: unsafe { set_query(w0, w1, w2) } }
    }

    #[inline(always)]
    unsafe fn chunk(self, nodes: &[Node], i: usize, best: u32, last_useful: i32) -> Chunk {
        // SAFETY: the caller guarantees AVX-512F (the trait's contract).
        unsafe { chunk_avx512(self.query, nodes, i, best, last_useful) }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn set_query(w0: i64, w1: i64, w2: i64) -> core::arch::x86_64::__m512i {
    core::arch::x86_64::_mm512_setr_epi64(w0, w1, w2, 0, 0, 0, 0, 0)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
fn chunk_avx512(query: core::arch::x86_64::__m512i, nodes: &[Node], i: usize, best: u32, last_useful: i32) -> Chunk {
    use core::arch::x86_64::*;
    // A node is one 64-bit lane: position `a` in bits 0–7, maximum depth in 16–23, guard `c`
    // in 24–31, the link (its LAST flag included) in 32–63.
    const _: () = assert!(
        core::mem::size_of::<Node>() == 8
            && core::mem::offset_of!(Node, a) == 0
            && core::mem::offset_of!(Node, max) == 2
            && core::mem::offset_of!(Node, c) == 3
            && core::mem::offset_of!(Node, link) == 4
    );
    let in_bounds: __mmask8 = match nodes.len().saturating_sub(i) {
        0 => return Chunk { pass: 0, read: 0, ended: true },
        left if left >= 8 => 0xff,
        left => (1u8 << left) - 1,
    };
    // SAFETY: the mask loads only lanes i..i + 8 that are inside `nodes` (the others are not
    // read and cannot fault); a node is plain bytes.
    let v = unsafe { _mm512_maskz_loadu_epi64(in_bounds, nodes.as_ptr().wrapping_add(i).cast()) };
    let byte = _mm512_set1_epi64(0xff);
    let low6 = _mm512_set1_epi64(63);
    let a = _mm512_and_si512(v, byte);
    let c = _mm512_and_si512(_mm512_srli_epi64::<24>(v), byte);
    let max = _mm512_and_si512(_mm512_srli_epi64::<16>(v), byte);
    // Query bit p: word p >> 6 (a permute of the three words), shifted down by p & 63.
    let bit = |p: __m512i| _mm512_srlv_epi64(_mm512_permutexvar_epi64(_mm512_srli_epi64::<6>(p), query), _mm512_and_si512(p, low6));
    let both = _mm512_and_si512(bit(a), bit(c));
    let heavier = _mm512_cmpgt_epi64_mask(max, _mm512_set1_epi64(i64::from(best)));
    let pass = _mm512_test_epi64_mask(both, _mm512_set1_epi64(1)) & heavier;
    let last = _mm512_test_epi64_mask(v, _mm512_set1_epi64(i64::from(LAST) << 32));
    let cut = _mm512_cmpgt_epi64_mask(a, _mm512_set1_epi64(i64::from(last_useful))) & in_bounds;
    // Read: the nodes before the cut, and up to the last one.
    let read = cut.trailing_zeros().min(last.trailing_zeros() + 1).min(8);
    let read_mask = ((1u32 << read) - 1) as u8;
    Chunk { pass: pass & read_mask & in_bounds, read: read.min(in_bounds.count_ones()), ended: (cut | last) != 0 || in_bounds != 0xff }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tag::compile::TERMINAL;

    fn node(a: u8, c: u8, max: u8, last: bool) -> Node {
        Node { a, b: 1, max, c, link: if last { LAST | TERMINAL } else { 0 } }
    }

    #[test]
    fn both_scans_read_the_same_nodes_and_pass_the_same() {
        // Lists of every length 1–20 at every offset, positions spread over the three words.
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut nodes = Vec::new();
        for len in 1..=20usize {
            for k in 0..len {
                nodes.push(node((next() % 192) as u8, (next() % 192) as u8, (next() % 30 + 1) as u8, k + 1 == len));
            }
        }
        let bits = [next(), next(), next()];
        // SAFETY: the scalar scan runs anywhere.
        let scalar = unsafe { ScalarScan::new(bits) };
        for i in 0..nodes.len() {
            for (best, last_useful) in [(0, i32::MAX), (5, 120), (12, 40), (29, -1), (0, 191)] {
                // SAFETY: the scalar scan runs anywhere.
                let want = unsafe { scalar.chunk(&nodes, i, best, last_useful) };
                assert!(want.read <= 8 && want.pass.count_ones() <= want.read);
                #[cfg(target_arch = "x86_64")]
                if Avx512Scan::supported() {
                    // SAFETY: supported just above.
                    let got = unsafe { Avx512Scan::new(bits).chunk(&nodes, i, best, last_useful) };
                    assert_eq!(got, want, "node {i}, best {best}, last useful {last_useful}");
                }
            }
        }
    }
}
