//! The linear scan: every descriptor tested against the query, 8 at a time with AVX-512 (4 with
//! AVX2, one at a time without). The oracle of the trie matchers and their simplest peer.
//!
//! # Overview
//! Descriptors are stored as three word columns (structure of arrays), so one AVX-512 step loads
//! word w of 8 descriptors, and `entry & !query == 0` on all three words is three and-nots, two
//! ors and one test-to-mask; the mask's set bits are the matches, handed in order to the shared
//! answer folds of [`super::entries`].

#![allow(unsafe_code)]

use super::entries::EntryTable;
use super::{Descriptor, Fanout, Largest, PortSet};
use crate::ip::simd::{detect, Isa};

/// Every descriptor in three word columns, with its weight and port set.
#[derive(Debug, Clone)]
pub struct LinearScan {
    words: [Vec<u64>; 3],
    entries: EntryTable,
}

impl LinearScan {
    /// The scan over `entries`, using the widest SIMD the CPU has.
    pub fn new<'a>(entries: impl Iterator<Item = (&'a Descriptor, &'a PortSet)> + Clone) -> Self {
        let mut words = [Vec::new(), Vec::new(), Vec::new()];
        for (d, _) in entries.clone() {
            for (col, w) in words.iter_mut().zip(d.0) {
                col.push(w);
            }
        }
        LinearScan { words, entries: EntryTable::new(entries) }
    }

    /// Descriptors held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the scan reads: 24 per descriptor plus its weight and port set.
    pub fn memory_bytes(&self) -> usize {
        self.len() * 24 + self.entries.memory_bytes()
    }

    /// Calls `f(i)` for each descriptor i ⊆ `q`, in order, until `f` returns false.
    fn for_each_match(&self, q: &Descriptor, f: &mut dyn FnMut(usize) -> bool) {
        let [a, b, c] = &self.words;
        let done = match detect() {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => {
                // SAFETY: avx512f was detected at run time just above.
                unsafe { x86::scan_avx512(a, b, c, q, f) }
            }
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => {
                // SAFETY: avx2 was detected at run time.
                unsafe { x86::scan_avx2(a, b, c, q, f) }
            }
            Isa::Scalar => Some(0),
        };
        let Some(done) = done else { return };
        for i in done..self.len() {
            if (a[i] & !q.0[0]) | (b[i] & !q.0[1]) | (c[i] & !q.0[2]) == 0 && !f(i) {
                return;
            }
        }
    }

    /// Find All Subsets by scanning (see [`super::CompiledFib::fas`]).
    pub fn fas(&self, q: &Descriptor, fanout: Fanout, allowed: &PortSet) -> PortSet {
        self.entries.fas(&mut |f| self.for_each_match(q, f), fanout, allowed)
    }

    /// Find Largest Subset by scanning: the first heaviest match.
    pub fn fls(&self, q: &Descriptor) -> Option<Largest> {
        self.entries.fls(&mut |f| self.for_each_match(q, f))
    }

    /// Every answer Find Largest Subset may rightly give for `q`: the greatest weight of a match
    /// and the port sets of all matches of that weight (empty when nothing matches).
    pub fn fls_answers(&self, q: &Descriptor) -> (u32, Vec<PortSet>) {
        self.entries.fls_answers(&mut |f| self.for_each_match(q, f))
    }
}

/// Hands the matches of one SIMD step (`mask` bit j = descriptor `base + j`) to `f`; false when
/// `f` asked to stop.
#[inline]
fn hand_over(base: usize, mut mask: u32, f: &mut dyn FnMut(usize) -> bool) -> bool {
    while mask != 0 {
        if !f(base + mask.trailing_zeros() as usize) {
            return false;
        }
        mask &= mask - 1;
    }
    true
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{hand_over, Descriptor};
    use core::arch::x86_64::*;

    /// Scans the first multiple of 8 descriptors; `None` when `f` stopped it, else how many.
    #[target_feature(enable = "avx512f")]
    pub(super) fn scan_avx512(a: &[u64], b: &[u64], c: &[u64], q: &Descriptor, f: &mut dyn FnMut(usize) -> bool) -> Option<usize> {
        let whole = a.len().min(b.len()).min(c.len()) / 8 * 8;
        let (q0, q1, q2) = (_mm512_set1_epi64(q.0[0] as i64), _mm512_set1_epi64(q.0[1] as i64), _mm512_set1_epi64(q.0[2] as i64));
        for i in (0..whole).step_by(8) {
            // SAFETY: i + 8 ≤ whole ≤ each column's length, so each load reads 8 u64s inside its
            // slice; loadu accepts any alignment.
            let mask = unsafe {
                let x = _mm512_andnot_si512(q0, _mm512_loadu_si512(a.as_ptr().add(i).cast()));
                let y = _mm512_andnot_si512(q1, _mm512_loadu_si512(b.as_ptr().add(i).cast()));
                let z = _mm512_andnot_si512(q2, _mm512_loadu_si512(c.as_ptr().add(i).cast()));
                let miss = _mm512_or_si512(x, _mm512_or_si512(y, z));
                _mm512_testn_epi64_mask(miss, miss)
            };
            if !hand_over(i, u32::from(mask), f) {
                return None;
            }
        }
        Some(whole)
    }

    /// Scans the first multiple of 4 descriptors; `None` when `f` stopped it, else how many.
    #[target_feature(enable = "avx2")]
    pub(super) fn scan_avx2(a: &[u64], b: &[u64], c: &[u64], q: &Descriptor, f: &mut dyn FnMut(usize) -> bool) -> Option<usize> {
        let whole = a.len().min(b.len()).min(c.len()) / 4 * 4;
        let (q0, q1, q2) = (_mm256_set1_epi64x(q.0[0] as i64), _mm256_set1_epi64x(q.0[1] as i64), _mm256_set1_epi64x(q.0[2] as i64));
        let zero = _mm256_setzero_si256();
        for i in (0..whole).step_by(4) {
            // SAFETY: i + 4 ≤ whole ≤ each column's length, so each load reads 4 u64s inside its
            // slice; loadu accepts any alignment.
            let mask = unsafe {
                let x = _mm256_andnot_si256(q0, _mm256_loadu_si256(a.as_ptr().add(i).cast()));
                let y = _mm256_andnot_si256(q1, _mm256_loadu_si256(b.as_ptr().add(i).cast()));
                let z = _mm256_andnot_si256(q2, _mm256_loadu_si256(c.as_ptr().add(i).cast()));
                let miss = _mm256_or_si256(x, _mm256_or_si256(y, z));
                _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(miss, zero))) as u32
            };
            if !hand_over(i, mask, f) {
                return None;
            }
        }
        Some(whole)
    }
}
