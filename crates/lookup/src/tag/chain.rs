//! Terminator records: a removed chain's port set and positions, Rice-coded.
//!
//! # Overview
//! When terminal-chain removal replaces a chain by its terminator, the node keeps the chain's
//! first three positions and a record keeps the rest: the port-set id, then the remaining
//! positions as gaps from the one before, Rice-coded.
//! - The port-set id is a varint (7 bits a byte, low group first, the high bit marking another
//!   byte): ids are given by decreasing use, so the 128 most used sets take one byte.
//! - Each gap (minus one) g is written as q = g >> k in unary (q zero bits, then a one) and the
//!   k low bits of g, in a little-endian bit stream (bit i is bit i % 8 of byte i / 8). One k
//!   serves the whole FIB, the one that makes its records smallest ([`RiceCost`]), never below
//!   [`MIN_K`], so that a quotient (at most 191 >> 2) always fits the 64-bit window the reader
//!   takes at a time.
//!
//! Records are byte-aligned and addressed by byte offset; the record array ends with
//! [`TAIL_PAD`] zero bytes so a reader can always load a whole window. The number of positions is
//! not stored: the walk knows it from the descriptor's weight and the terminator's depth.
//!
//! Why Rice and not the nibbles it replaced (gap − 1 in a nibble, 15 escaping a byte): a
//! removed chain's gaps are roughly geometric, and Rice codes geometric gaps near their entropy
//! while the nibbles spend a whole nibble on the small ones and three on every gap past 14
//! (over a 1M-descriptor Zipf FIB a probe program counted clearly fewer bits with Rice).

/// The smallest Rice parameter used (keeps every quotient under 48 bits).
pub(super) const MIN_K: u32 = 2;
/// The largest Rice parameter considered.
const MAX_K: u32 = 7;
/// Zero bytes after the last record, so a reader's 8-byte window never runs off the array.
pub(super) const TAIL_PAD: usize = 8;

/// The bits chains would take under each Rice parameter, to pick the cheapest for a FIB.
#[derive(Debug, Default)]
pub(super) struct RiceCost {
    bits: [u64; (MAX_K + 1) as usize],
}

impl RiceCost {
    /// Counts the chain `tail` (ascending, each after `prev`).
    pub(super) fn add(&mut self, prev: u8, tail: &[u8]) {
        let mut last = prev;
        for &p in tail {
            let gap = u64::from(p - last - 1);
            for k in MIN_K..=MAX_K {
                self.bits[k as usize] += (gap >> k) + 1 + u64::from(k);
            }
            last = p;
        }
    }

    /// The parameter that takes the fewest bits (the smallest on ties).
    pub(super) fn best(&self) -> u32 {
        (MIN_K..=MAX_K).min_by_key(|&k| self.bits[k as usize]).unwrap_or(MIN_K)
    }
}

/// Appends the record of port set `set` and chain positions `tail` (ascending, each after
/// `prev`) to `out`, Rice-coded with parameter `k` ([`MIN_K`]..=7).
pub(super) fn push_record(out: &mut Vec<u8>, set: u16, prev: u8, tail: &[u8], k: u32) {
    debug_assert!((MIN_K..=MAX_K).contains(&k));
    let mut id = set;
    while id >= 0x80 {
        out.push(id as u8 | 0x80);
        id >>= 7;
    }
    out.push(id as u8);
    // Bits accumulate in `acc` (the lowest `fill` of them pending) and leave a byte at a time.
    let (mut acc, mut fill) = (0u64, 0u32);
    let mut put = |value: u64, bits: u32, out: &mut Vec<u8>| {
        acc |= value << fill;
        fill += bits;
        while fill >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            fill -= 8;
        }
    };
    let mut last = prev;
    for &p in tail {
        debug_assert!(p > last, "chain positions ascend");
        let gap = u64::from(p - last - 1);
        let q = (gap >> k) as u32;
        // q zeros then a one, at most 48 bits: one `put` (and below 56 with what is pending).
        put(1 << q, q + 1, out);
        put(gap & ((1 << k) - 1), k, out);
        last = p;
    }
    if fill > 0 {
        out.push(acc as u8);
    }
}

/// A record read back: its port-set id and its positions.
pub(super) struct Record<'a> {
    bytes: &'a [u8],
    /// The next bit, counted from the first byte after the port-set id.
    bit: usize,
    k: u32,
    last: usize,
}

impl<'a> Record<'a> {
    /// The record at the start of `bytes`, whose chain continues after position `prev`, coded
    /// with Rice parameter `k`; `None` when `bytes` ends inside the port-set id.
    #[inline]
    pub(super) fn new(bytes: &'a [u8], prev: u8, k: u32) -> Option<(u16, Record<'a>)> {
        let mut set = 0u32;
        let mut at = 0;
        loop {
            let b = *bytes.get(at)?;
            set |= u32::from(b & 0x7f) << (7 * at);
            at += 1;
            if b & 0x80 == 0 || at == 3 {
                break;
            }
        }
        Some((set as u16, Record { bytes: &bytes[at..], bit: 0, k, last: usize::from(prev) }))
    }

    /// The 64 bits from byte `at` on (zeros past the end).
    #[inline]
    fn window(&self, at: usize) -> u64 {
        match self.bytes.get(at..at + 8) {
            Some(w) => u64::from_le_bytes(w.try_into().unwrap_or_default()),
            None => {
                let mut w = [0u8; 8];
                let rest = self.bytes.get(at..).unwrap_or_default();
                w[..rest.len().min(8)].copy_from_slice(&rest[..rest.len().min(8)]);
                u64::from_le_bytes(w)
            }
        }
    }

    /// The next position; `None` past the end of the bytes (or a corrupt gap).
    #[inline]
    pub(super) fn next_position(&mut self) -> Option<usize> {
        let w = self.window(self.bit / 8) >> (self.bit % 8);
        // At least 57 bits of the stream are in `w`: a quotient (< 48) and k ≤ 7 bits fit.
        let q = w.trailing_zeros();
        if q >= 48 {
            return None;
        }
        let gap = (u64::from(q) << self.k | (w >> (q + 1)) & ((1 << self.k) - 1)) as usize;
        self.bit += (q + 1 + self.k) as usize;
        self.last += gap + 1;
        (self.last < super::FILTER_BITS).then_some(self.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(set: u16, prev: u8, tail: &[u8], k: u32) -> (usize, u16, Vec<usize>) {
        let mut out = vec![7u8; 2];
        push_record(&mut out, set, prev, tail, k);
        let len = out.len() - 2;
        out.extend([0; TAIL_PAD]);
        let (got, mut r) = Record::new(&out[2..], prev, k).unwrap();
        let positions = (0..tail.len()).map(|_| r.next_position().unwrap()).collect();
        (len, got, positions)
    }

    #[test]
    fn records_round_trip_small_and_large_gaps_and_ids() {
        let tail = [5u8, 6, 20, 21, 191];
        let (len, set, positions) = round_trip(513, 4, &tail, 3);
        assert_eq!(set, 513);
        assert_eq!(positions, tail.map(usize::from));
        // Id 513: two bytes. Gaps 0, 0, 13, 0, 169 with k = 3: 4 + 4 + 5 + 4 + (21 + 4) = 42
        // bits, 6 bytes.
        assert_eq!(len, 2 + 6);
        assert_eq!(round_trip(1, 0, &[], 2), (1, 1, vec![]));
        assert_eq!(round_trip(u16::MAX, 0, &[], 2).1, u16::MAX);
        assert_eq!(round_trip(2, 0, &[191], MIN_K).2, vec![191]);
        assert_eq!(round_trip(2, 0, &[16], 7).2, vec![16]);
    }

    #[test]
    fn every_chain_of_positions_round_trips_under_every_k() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..2000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let bits = [state, state.rotate_left(17) ^ 0x5555, state.rotate_left(41)];
            let prev = (state >> 59) as u8;
            let tail: Vec<u8> =
                (u32::from(prev) + 1..192).filter(|&p| bits[p as usize / 64] >> (p % 64) & 1 == 1).map(|p| p as u8).collect();
            let k = MIN_K + i % (MAX_K - MIN_K + 1);
            let set = (state >> 20) as u16;
            let (_, got, positions) = round_trip(set, prev, &tail, k);
            assert_eq!((got, positions), (set, tail.iter().map(|&p| usize::from(p)).collect::<Vec<_>>()));
        }
    }

    #[test]
    fn the_cost_picks_the_k_that_fits_the_gaps() {
        let mut dense = RiceCost::default();
        dense.add(0, &(1..60).map(|p| p * 3).collect::<Vec<u8>>());
        assert_eq!(dense.best(), MIN_K);
        let mut sparse = RiceCost::default();
        sparse.add(0, &[60, 120, 180]);
        assert!(sparse.best() >= 5);
    }

    #[test]
    fn a_short_or_corrupt_record_reads_as_none() {
        assert!(Record::new(&[0x81], 0, 3).is_none());
        let (_, mut r) = Record::new(&[1, 0, 0], 0, 3).unwrap();
        assert_eq!(r.next_position(), None);
        // A gap that would pass position 191.
        let mut out = Vec::new();
        push_record(&mut out, 1, 0, &[190], 2);
        let (_, mut r) = Record::new(&out, 100, 2).unwrap();
        assert_eq!(r.next_position(), None);
    }
}
