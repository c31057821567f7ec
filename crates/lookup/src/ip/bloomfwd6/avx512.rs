//! The filter stage of [`Bloomfwd6::lookup_batch`] in AVX-512: 8 addresses per instruction
//! through the front array, the gate and every level's filter, and the hand-over of those left
//! with a table to probe.
//!
//! # Overview
//! For 8 addresses at a time (one 64-bit lane each, their top 64 bits):
//! 1. gather their front cells; an unguarded cell is the answer;
//! 2. gather their gate index entries and then their gate masks (16-bit entries read as 32-bit
//!    gathers — the gate keeps a spare cell after the last for that); mask 0 is the default;
//! 3. for each level in turn, hash the 8 keys, gather the 8 filter words (only lanes whose mask
//!    names the level) and test the k bits: the passing levels accumulate per lane, and so does
//!    the hash of the longest one (a level no address of the block names is skipped);
//! 4. lanes whose mask says a route above /64 lies below probe the long marks' filter;
//! 5. answers are stored with one masked store; the lanes left with a table to probe are handed
//!    over (`HandOver`) — candidates, the longest one's level, key and home bucket (picked per
//!    lane from 16-entry tables), one compressed store per field — and those buckets prefetched.
//!
//! The two to four runs of 8 of a block go through each step side by side, so one run's gather
//! latency overlaps the others' work. Step 3 is the paper's SIMD hashing, across addresses rather
//! than across a key's hash functions; the whole stage replaces a per-address loop whose
//! bookkeeping (a front read, a gate read, a filter pass and a hand-over per address, each with
//! its branches) cost more than the memory it read. (An earlier form probed all the levels of
//! one address per instruction — a lane per level — inside that loop.)

#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::super::direct::{DEEP, EMPTY, GUARD};
use super::super::gate;
use super::super::simd::fmix_avx512;
use super::{Bloomfwd6, HandOver, BLOCK};
use crate::ip::NextHop;
use crate::mem::prefetch;

/// The most levels the stage handles (more fall back to the portable stage).
pub(super) const MAX_LEVELS: usize = 16;

/// One Bloom filter as the stage reads it.
#[derive(Debug, Clone, Copy, Default)]
struct Filter {
    /// Address of its first word.
    words: u64,
    /// Its words.
    len: u64,
    /// Probes per key (k).
    k: u32,
}

impl Filter {
    fn of(words: &[u64], k: u32) -> Filter {
        Filter { words: words.as_ptr() as u64, len: words.len() as u64, k }
    }
}

/// A table's filters, borrowed for one batch (so they cannot change while it runs).
#[derive(Debug, Clone, Copy)]
pub(super) struct Filters<'a> {
    levels: [Filter; MAX_LEVELS],
    /// How far an address's top 64 bits shift right to give each level's key.
    shift: [u64; MAX_LEVELS],
    /// Each level's table: the address of its first bucket, and its buckets.
    base: [u64; MAX_LEVELS],
    buckets: [u64; MAX_LEVELS],
    used: usize,
    long_marks: Filter,
    table: &'a Bloomfwd6,
}

impl<'a> Filters<'a> {
    /// `t`'s filters, or `None` when it has more than [`MAX_LEVELS`] levels or an empty filter.
    pub(super) fn of(t: &'a Bloomfwd6) -> Option<Filters<'a>> {
        if t.groups.len() > MAX_LEVELS {
            return None;
        }
        let mut f = Filters {
            levels: [Filter::default(); MAX_LEVELS],
            shift: [0; MAX_LEVELS],
            base: [0; MAX_LEVELS],
            buckets: [0; MAX_LEVELS],
            used: 0,
            long_marks: Filter::default(),
            table: t,
        };
        for (j, (g, &q)) in t.groups.iter().zip(&t.levels).enumerate() {
            let (words, k) = g.filter_words();
            if words.is_empty() {
                return None;
            }
            f.levels[j] = Filter::of(words, k);
            f.shift[j] = u64::from(64 - q);
            f.base[j] = g.table().bucket_address(0) as u64;
            f.buckets[j] = g.table().buckets() as u64;
        }
        f.used = t.groups.len();
        let (words, k) = t.long_marks.filter_words();
        if words.is_empty() {
            return None;
        }
        f.long_marks = Filter::of(words, k);
        Some(f)
    }
}

/// The lanes (of `want`) whose key hashes `h` the filter `f` may hold.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn probe(f: &Filter, h: __m512i, want: __mmask8) -> __mmask8 {
    let one = _mm512_set1_epi64(1);
    // The word: h1 (the upper half) scaled into 0..len, as a byte address.
    let word = _mm512_srli_epi64::<32>(_mm512_mul_epu32(_mm512_srli_epi64::<32>(h), _mm512_set1_epi64(f.len as i64)));
    let at = _mm512_add_epi64(_mm512_set1_epi64(f.words as i64), _mm512_slli_epi64::<3>(word));
    // SAFETY: only lanes in `want` are read, each at word index < len of a filter whose words
    // the caller's `Filters` borrows.
    let words = unsafe { _mm512_mask_i64gather_epi64::<1>(_mm512_setzero_si512(), want, at, core::ptr::null()) };
    // The bits: h2 = low half | 1; probe i sets bit (h2/2 + i·((h2 >> 7) | 1)) mod 64.
    let h2 = _mm512_or_si512(_mm512_and_si512(h, _mm512_set1_epi64(0xffff_ffff)), one);
    let (mut bit, step) = (_mm512_srli_epi64::<1>(h2), _mm512_or_si512(_mm512_srli_epi64::<7>(h2), one));
    let mut mask = _mm512_setzero_si512();
    for _ in 0..f.k {
        mask = _mm512_or_si512(mask, _mm512_sllv_epi64(one, _mm512_and_si512(bit, _mm512_set1_epi64(63))));
        bit = _mm512_add_epi64(bit, step);
    }
    _mm512_mask_cmpeq_epi64_mask(want, _mm512_and_si512(words, mask), mask)
}

/// The filter stage for a block of at most [`BLOCK`] addresses: answers into `out`, the
/// addresses left with a table to probe into `hand_over`. The block's runs of
/// 8 go through each step side by side, so the latency of one run's gathers overlaps the
/// others' work.
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512cd")]
pub(super) fn filter_stage(f: &Filters<'_>, addrs: &[u128], out: &mut [NextHop], hand_over: &mut HandOver) {
    const RUNS: usize = BLOCK / 8;
    let t = f.table;
    let n = addrs.len().min(out.len()).min(BLOCK);
    let front = t.front.cells();
    let (index, cells, span) = t.gate.raw();
    let lanes: [__mmask8; RUNS] = core::array::from_fn(|k| {
        let live = n.saturating_sub(8 * k).min(8);
        if live == 8 {
            0xff
        } else {
            (1u8 << live) - 1
        }
    });
    let hi: [__m512i; RUNS] = core::array::from_fn(|k| {
        let live = lanes[k].count_ones() as usize;
        let p = addrs.as_ptr().cast::<i64>().wrapping_add(16 * k);
        let first = ((1u16 << (2 * live.min(4))) - 1) as u8;
        let second = if live > 4 { ((1u16 << (2 * (live - 4))) - 1) as u8 } else { 0 };
        // SAFETY: addresses 8k .. 8k + live are in `addrs`; each u128 is two qwords, low first,
        // so the masked loads read exactly those (a masked-off qword is never touched).
        let (a, b) = unsafe { (_mm512_maskz_loadu_epi64(first, p), _mm512_maskz_loadu_epi64(second, p.wrapping_add(8))) };
        _mm512_permutex2var_epi64(a, _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1), b)
    });
    let s16 = hi.map(|h| _mm512_srli_epi64::<48>(h));
    // The gathers below read: front cells and gate index entries (2^16 of each) at a /16, always
    // in range; gate cells (2 bytes each, read 4 at a time) at a block's start (below the cells'
    // length − 2^span) plus less than 2^span, the cells keeping a spare after the last.
    let cell: [__m256i; RUNS] = core::array::from_fn(|k| {
        // SAFETY: a front cell at a /16, in range (above).
        unsafe { _mm512_mask_i64gather_epi32::<4>(_mm256_setzero_si256(), lanes[k], s16[k], front.as_ptr().cast()) }
    });
    let guarded: [__mmask8; RUNS] =
        core::array::from_fn(|k| _mm256_mask_test_epi32_mask(lanes[k], cell[k], _mm256_set1_epi32(GUARD as i32)));
    // Unguarded: the cell (or the default where no route covers it); guarded and left with no
    // table to probe: the default.
    let mut answer = |k: usize, pending: __mmask8| {
        let value = _mm256_and_si256(cell[k], _mm256_set1_epi32(!(GUARD | DEEP) as i32));
        let empty = _mm256_cmpeq_epi32_mask(value, _mm256_set1_epi32(EMPTY as i32));
        let answer = _mm256_mask_blend_epi32(empty | guarded[k], value, _mm256_set1_epi32(t.default as i32));
        // SAFETY: lanes 8k .. 8k + live of `out` exist (8k + live ≤ n ≤ out.len()).
        unsafe { _mm256_mask_storeu_epi32(out.as_mut_ptr().wrapping_add(8 * k).cast(), lanes[k] & !pending, answer) };
    };
    if guarded.iter().all(|&g| g == 0) {
        // Unrouted space (most of uniform traffic): the front array answers the whole block.
        (0..RUNS).for_each(|k| answer(k, 0));
        hand_over.len = 0;
        return;
    }
    let block: [__m256i; RUNS] = core::array::from_fn(|k| {
        // SAFETY: a gate index entry at a /16, in range (above).
        unsafe { _mm512_mask_i64gather_epi32::<4>(_mm256_setzero_si256(), guarded[k], s16[k], index.as_ptr().cast()) }
    });
    let low16 = _mm256_set1_epi32(0xffff);
    let at: [__m512i; RUNS] = core::array::from_fn(|k| {
        let block = _mm512_cvtepu32_epi64(block[k]);
        let inner =
            _mm512_and_si512(_mm512_srlv_epi64(hi[k], _mm512_set1_epi64(i64::from(48 - span))), _mm512_set1_epi64((1i64 << span) - 1));
        _mm512_or_si512(_mm512_sllv_epi64(block, _mm512_set1_epi64(i64::from(span))), inner)
    });
    let mask: [__m256i; RUNS] = core::array::from_fn(|k| {
        // SAFETY: a gate cell inside a block, in range (above).
        unsafe { _mm512_mask_i64gather_epi32::<2>(_mm256_setzero_si256(), guarded[k], at[k], cells.as_ptr().cast()) }
    });
    let mask = mask.map(|m| _mm512_cvtepu32_epi64(_mm256_and_si256(m, low16)));
    let routed: [__mmask8; RUNS] = core::array::from_fn(|k| _mm512_mask_test_epi64_mask(guarded[k], mask[k], _mm512_set1_epi64(0xffff)));
    // The levels: the named ones, and every level from gate::LEVEL_BITS up for the high bit.
    let levels = mask.map(|m| {
        let named = _mm512_and_si512(m, _mm512_set1_epi64((1 << gate::LEVEL_BITS) - 1));
        let high = _mm512_test_epi64_mask(m, _mm512_set1_epi64(i64::from(gate::HIGH)));
        _mm512_mask_or_epi64(named, high, named, _mm512_set1_epi64(t.high_levels as i64))
    });
    let (mut pass, mut longest) = ([_mm512_setzero_si512(); RUNS], [_mm512_setzero_si512(); RUNS]);
    for j in 0..f.used {
        let bit = _mm512_set1_epi64(1 << j);
        let want: [__mmask8; RUNS] = core::array::from_fn(|k| _mm512_mask_test_epi64_mask(routed[k], levels[k], bit));
        if want.iter().all(|&w| w == 0) {
            continue; // no address of the block searches this level
        }
        for k in 0..RUNS {
            let h = fmix_avx512(_mm512_srlv_epi64(hi[k], _mm512_set1_epi64(f.shift[j] as i64)));
            let passed = probe(&f.levels[j], h, want[k]);
            pass[k] = _mm512_mask_or_epi64(pass[k], passed, pass[k], bit);
            longest[k] = _mm512_mask_mov_epi64(longest[k], passed, h);
        }
    }
    let mut kept = 0;
    for k in 0..RUNS {
        // The long marks are keyed by the /64: the address's top 64 bits.
        let long_wanted = _mm512_mask_test_epi64_mask(routed[k], mask[k], _mm512_set1_epi64(i64::from(gate::LONG)));
        let long = if long_wanted == 0 { 0 } else { probe(&f.long_marks, fmix_avx512(hi[k]), long_wanted) };
        let pending = _mm512_mask_test_epi64_mask(routed[k], pass[k], pass[k]) | long;
        answer(k, pending);
        if pending == 0 {
            continue;
        }
        // The longest candidate of each lane: its level j, key, home bucket and that bucket's
        // address (per-level values picked by j from 16-entry tables).
        let has_candidates = _mm512_test_epi64_mask(pass[k], pass[k]);
        let j = _mm512_sub_epi64(_mm512_set1_epi64(63), _mm512_lzcnt_epi64(pass[k]));
        let pick = |table: &[u64; MAX_LEVELS]| {
            // SAFETY: two 8-qword loads of a 16-qword array.
            let (lo, hi) = unsafe { (_mm512_loadu_si512(table.as_ptr().cast()), _mm512_loadu_si512(table.as_ptr().add(8).cast())) };
            _mm512_permutex2var_epi64(lo, j, hi)
        };
        let key = _mm512_srlv_epi64(hi[k], pick(&f.shift));
        let home = _mm512_srli_epi64::<32>(_mm512_mul_epu32(_mm512_srli_epi64::<32>(longest[k]), pick(&f.buckets)));
        let address = _mm512_add_epi64(pick(&f.base), _mm512_slli_epi64::<6>(home));
        // Each field's pending lanes, compressed to the front of a vector and stored at `kept`
        // (a full 8-qword store: kept ≤ 8k, so it ends inside the block's arrays, and later runs
        // overwrite what lies past the pending lanes).
        let at = _mm512_add_epi64(_mm512_set1_epi64(8 * k as i64), _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0));
        let fields = [
            (&mut hand_over.candidates, pass[k]),
            (&mut hand_over.long, _mm512_maskz_mov_epi64(long, _mm512_set1_epi64(1))),
            (&mut hand_over.hi, hi[k]),
            (&mut hand_over.level, j),
            (&mut hand_over.key, key),
            (&mut hand_over.bucket, home),
            (&mut hand_over.at, at),
        ];
        for (array, v) in fields {
            // SAFETY: kept + 8 ≤ 8k + 8 ≤ BLOCK, the array's length.
            unsafe { _mm512_storeu_si512(array.as_mut_ptr().add(kept).cast(), _mm512_maskz_compress_epi64(pending, v)) };
        }
        let mut addresses = [0u64; 8];
        // SAFETY: an 8-qword store into an 8-qword array.
        unsafe { _mm512_storeu_si512(addresses.as_mut_ptr().cast(), _mm512_maskz_compress_epi64(pending & has_candidates, address)) };
        for &a in &addresses[..(pending & has_candidates).count_ones() as usize] {
            prefetch(a as *const u8);
        }
        kept += pending.count_ones() as usize;
    }
    hand_over.len = kept;
}
