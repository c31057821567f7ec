//! A counting Bloom filter: a bit vector for lookups and a byte counter per bit for removals.
//!
//! Sized for `n` keys at a target false-positive rate p: m = ⌈n·ln(1/p)/ln²2⌉ bits and
//! k = round(m/n·ln 2) probes (at p = 0.3: 2.5 bits per key, k = 2, as in the paper's Table 5).
//! Probe i of a key with hash h reads bit g_i = h1 + i·h2. Counters saturate at 255 and then
//! stay (a saturated bit is never cleared: it can only cost a false positive, never a miss).

use super::hash::{h1, h2, reduce};

/// A counting Bloom filter.
#[derive(Debug, Clone)]
pub struct CountingBloom {
    bits: Vec<u64>,
    counts: Vec<u8>,
    m: usize,
    k: u32,
    capacity: usize,
}

impl CountingBloom {
    /// A filter for `capacity` keys at false-positive rate `fpr` (clamped to 0.0001–0.99).
    pub fn new(capacity: usize, fpr: f64) -> Self {
        let capacity = capacity.max(16);
        let fpr = fpr.clamp(1e-4, 0.99);
        let ln2 = core::f64::consts::LN_2;
        let m = ((capacity as f64 * (1.0 / fpr).ln() / (ln2 * ln2)).ceil() as usize).max(64);
        let k = ((m as f64 / capacity as f64 * ln2).round() as u32).clamp(1, 16);
        CountingBloom { bits: vec![0; m.div_ceil(64)], counts: vec![0; m], m, k, capacity }
    }

    /// Keys it was sized for.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bits (m) and probes (k).
    pub fn shape(&self) -> (usize, u32) {
        (self.m, self.k)
    }

    #[inline(always)]
    fn index(&self, h: u64, i: u32) -> usize {
        reduce(h1(h).wrapping_add(i.wrapping_mul(h2(h))), self.m)
    }

    /// Whether the key with hash `h` may be in the set (never false for one that is).
    #[inline(always)]
    pub fn contains(&self, h: u64) -> bool {
        // Every probe, no early exit: k is small, and a branch per probe mispredicts often.
        let mut all = 1;
        for i in 0..self.k {
            let b = self.index(h, i);
            all &= self.bits[b / 64] >> (b % 64);
        }
        all & 1 == 1
    }

    /// Prefetches the lines of the bits hash `h` probes.
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        for i in 0..self.k {
            crate::mem::prefetch(&self.bits[self.index(h, i) / 64]);
        }
    }

    /// Adds the key with hash `h`.
    pub fn insert(&mut self, h: u64) {
        for i in 0..self.k {
            let b = self.index(h, i);
            self.counts[b] = self.counts[b].saturating_add(1);
            self.bits[b / 64] |= 1 << (b % 64);
        }
    }

    /// Removes the key with hash `h` (which must have been inserted).
    pub fn remove(&mut self, h: u64) {
        for i in 0..self.k {
            let b = self.index(h, i);
            match self.counts[b] {
                0 | 255 => {}
                1 => {
                    self.counts[b] = 0;
                    self.bits[b / 64] &= !(1 << (b % 64));
                }
                c => self.counts[b] = c - 1,
            }
        }
    }

    /// Bytes of the lookup bits (what a lookup touches).
    pub fn query_bytes(&self) -> usize {
        self.bits.len() * 8
    }

    /// Bytes of bits and counters.
    pub fn bytes(&self) -> usize {
        self.query_bytes() + self.counts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::hash::hash64;
    use super::*;

    #[test]
    fn sized_like_the_paper() {
        // Paper, Table 5, AS65000 G1: 971,555 keys at 30% → m = 2,434,631, k = 2.
        let b = CountingBloom::new(971_555, 0.3);
        assert_eq!(b.shape().1, 2);
        assert!((2_430_000..2_440_000).contains(&b.shape().0), "{:?}", b.shape());
        assert_eq!(CountingBloom::new(971_555, 0.01).shape().1, 7);
    }

    #[test]
    fn no_false_negatives_and_removal() {
        let mut b = CountingBloom::new(10_000, 0.3);
        for k in 0..10_000u64 {
            b.insert(hash64(k));
        }
        assert!((0..10_000u64).all(|k| b.contains(hash64(k))));
        let fp = (10_000..110_000u64).filter(|&k| b.contains(hash64(k))).count() as f64 / 100_000.0;
        assert!((0.2..0.4).contains(&fp), "false-positive rate {fp}");
        for k in 0..10_000u64 {
            b.remove(hash64(k));
        }
        assert!(b.bits.iter().all(|&w| w == 0));
    }
}
