//! Terminator records: the positions of a removed chain besides the three its node keeps, as
//! one Rice-coded bit stream.
//!
//! # Overview
//! When terminal-chain removal replaces a chain by its terminator, the node keeps three of the
//! chain's positions ([`KeptPositions`]: its first, and the two a query is least likely to have)
//! and its port-set id; the rest of the chain (its *tail*) goes to a record, ascending from a
//! position the walk knows (the first or the third kept): each position's gap from the one before
//! (minus one) g, Rice-coded as q = g >> k in unary (q zero bits, then a one) and the k low bits of
//! g, in a little-endian bit stream (bit i is bit i % 8 of byte i / 8). One k serves the whole FIB,
//! the one that makes its records smallest ([`RiceCost`]), never below [`MIN_K`], so that a
//! quotient (at most 191 >> 2) always fits the 64-bit window the reader takes at a time.
//!
//! Records follow each other with no padding, in the order of their terminators in the node
//! vector; a terminator finds its own from a per-block base and its offset within the block (see
//! [`super::compile`]). The stream ends with [`TAIL_PAD`] zero bytes so a reader can always load
//! a whole window. Neither the length of a tail nor where it ends is stored: the walk knows the
//! length from the descriptor's weight and the terminator's depth, and a chain with three
//! positions or fewer has no record at all.
//!
//! Why Rice and not the nibbles it replaced (gap − 1 in a nibble, 15 escaping a byte): a
//! removed chain's gaps are roughly geometric, and Rice codes geometric gaps near their entropy
//! while the nibbles spend a whole nibble on the small ones and three on every gap past 14
//! (over a 1M-descriptor Zipf FIB a probe program counted clearly fewer bits with Rice, and
//! within a few percent of the gaps' empirical entropy). The same probe counted a k per range of
//! the previous position, a k per record from its mean gap (its length and range are known),
//! and enumerative coding of the tail as a subset: each saved only a few bits per descriptor,
//! not worth a slower reader.

/// The smallest Rice parameter used (keeps every quotient under 48 bits).
pub(super) const MIN_K: u32 = 2;
/// The largest Rice parameter considered.
const MAX_K: u32 = 7;
/// Zero bytes after the last record, so a reader's 8-byte window never runs off the array.
pub(super) const TAIL_PAD: usize = 8;
/// The most bits one tail can take: at most 189 positions besides the three kept, each a one
/// and at most 7 low bits, plus the quotients' zeros (gaps that sum to under 192, divided by 2^k ≥ 4).
pub(super) const MAX_TAIL_BITS: u64 = 189 * (1 + MAX_K as u64) + (192 >> MIN_K);

/// Which of a removed chain's positions its terminator's node keeps, besides the first (which
/// orders the terminator in its sibling list): the two a query is least likely to have, so that
/// a chain the query lacks is rejected in the vector, before its record is read. Positions are
/// numbered by popularity, so those are the chain's next two when the rarest bit comes first
/// ([`super::Compression::RareChain`]) and its last two when the most popular does
/// ([`super::Compression::PermChain`]). The record holds the chain's other positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KeptPositions {
    /// The chain's first three positions; the record's gaps count from the third.
    FirstThree,
    /// The chain's first and last two positions; the record's gaps count from the first.
    FirstAndLastTwo,
}

impl KeptPositions {
    /// A chain of more than three positions split into the three its node keeps (first, second
    /// and third byte), the position its record's gaps count from, and its record's positions.
    pub(super) fn split(self, chain: &[u8]) -> ([u8; 3], u8, &[u8]) {
        debug_assert!(chain.len() > 3);
        let n = chain.len();
        match self {
            KeptPositions::FirstThree => ([chain[0], chain[1], chain[2]], chain[2], &chain[3..]),
            KeptPositions::FirstAndLastTwo => ([chain[0], chain[n - 2], chain[n - 1]], chain[0], &chain[1..n - 2]),
        }
    }

    /// The position a record's gaps count from, for a terminator whose node keeps `first` and
    /// `third` (in its first and third bytes).
    #[inline(always)]
    pub(super) fn record_after(self, first: u8, third: u8) -> u8 {
        match self {
            KeptPositions::FirstThree => third,
            KeptPositions::FirstAndLastTwo => first,
        }
    }
}

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

/// The records' bit stream, written in order.
#[derive(Debug, Default)]
pub(super) struct RecordWriter {
    bytes: Vec<u8>,
    /// Pending bits (the lowest `fill` of them), leaving a byte at a time.
    acc: u64,
    fill: u32,
}

impl RecordWriter {
    /// Bits written so far: where the next record starts.
    pub(super) fn bit_len(&self) -> u64 {
        self.bytes.len() as u64 * 8 + u64::from(self.fill)
    }

    /// `bits` (< 57) low bits of `value`.
    fn put(&mut self, value: u64, bits: u32) {
        self.acc |= value << self.fill;
        self.fill += bits;
        while self.fill >= 8 {
            self.bytes.push(self.acc as u8);
            self.acc >>= 8;
            self.fill -= 8;
        }
    }

    /// Appends the tail `tail` (ascending, each after `prev`), Rice-coded with parameter `k`
    /// ([`MIN_K`]..=7).
    pub(super) fn push(&mut self, prev: u8, tail: &[u8], k: u32) {
        debug_assert!((MIN_K..=MAX_K).contains(&k));
        let mut last = prev;
        for &p in tail {
            debug_assert!(p > last, "chain positions ascend");
            let gap = u64::from(p - last - 1);
            let q = (gap >> k) as u32;
            // q zeros then a one (q < 48), then k bits: each below 57 with what is pending.
            self.put(1 << q, q + 1);
            self.put(gap & ((1 << k) - 1), k);
            last = p;
        }
    }

    /// The stream, its last byte flushed and [`TAIL_PAD`] zero bytes appended.
    pub(super) fn finish(mut self) -> Vec<u8> {
        if self.fill > 0 {
            self.bytes.push(self.acc as u8);
        }
        self.bytes.extend([0; TAIL_PAD]);
        self.bytes
    }
}

/// A tail read back, position by position.
pub(super) struct Record<'a> {
    bytes: &'a [u8],
    /// The next bit of `bytes`.
    bit: usize,
    k: u32,
    last: usize,
}

impl<'a> Record<'a> {
    /// The tail starting at bit `bit` of `bytes`, continuing the chain after position `prev`,
    /// coded with Rice parameter `k`.
    #[inline]
    pub(super) fn at(bytes: &'a [u8], bit: usize, prev: u8, k: u32) -> Record<'a> {
        Record { bytes, bit, k, last: usize::from(prev) }
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

    /// Writes `tails` one after another after `lead` bits, reads each back from its offset.
    fn round_trip(lead: u32, tails: &[(u8, Vec<u8>)], k: u32) -> Vec<(u64, Vec<usize>)> {
        let mut w = RecordWriter::default();
        w.put(0b101 & ((1 << lead) - 1), lead);
        let offsets: Vec<u64> = tails
            .iter()
            .map(|(prev, tail)| {
                let at = w.bit_len();
                w.push(*prev, tail, k);
                at
            })
            .collect();
        let bytes = w.finish();
        tails
            .iter()
            .zip(&offsets)
            .map(|((prev, tail), &at)| {
                let mut r = Record::at(&bytes, at as usize, *prev, k);
                (at, (0..tail.len()).map(|_| r.next_position().unwrap()).collect())
            })
            .collect()
    }

    #[test]
    fn tails_round_trip_at_any_bit_offset() {
        let tails = vec![(4u8, vec![5u8, 6, 20, 21, 191]), (0, vec![]), (0, vec![191]), (100, vec![101])];
        for lead in 0..9 {
            let got = round_trip(lead, &tails, 3);
            // Gaps 0, 0, 13, 0, 169 with k = 3: 4 + 4 + 5 + 4 + (21 + 4) = 42 bits, then none.
            assert_eq!(got[1].0 - got[0].0, 42);
            assert_eq!(got[2].0, got[1].0);
            for ((_, want), (_, positions)) in tails.iter().zip(&got) {
                assert_eq!(positions, &want.iter().map(|&p| usize::from(p)).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn every_chain_of_positions_round_trips_under_every_k() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for k in MIN_K..=MAX_K {
            let tails: Vec<(u8, Vec<u8>)> = (0..300)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let bits = [state, state.rotate_left(17) ^ 0x5555, state.rotate_left(41)];
                    let prev = (state >> 59) as u8;
                    let tail =
                        (u32::from(prev) + 1..192).filter(|&p| bits[p as usize / 64] >> (p % 64) & 1 == 1).map(|p| p as u8).collect();
                    (prev, tail)
                })
                .collect();
            for ((_, want), (_, got)) in tails.iter().zip(round_trip(k, &tails, k)) {
                assert_eq!(got, want.iter().map(|&p| usize::from(p)).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn a_node_keeps_three_positions_and_its_record_reads_back_the_rest() {
        let chain = [3u8, 5, 9, 12, 20, 30];
        assert_eq!(KeptPositions::FirstThree.split(&chain).0, [3, 5, 9]);
        assert_eq!(KeptPositions::FirstAndLastTwo.split(&chain).0, [3, 20, 30]);
        for kept in [KeptPositions::FirstThree, KeptPositions::FirstAndLastTwo] {
            for len in 4..=chain.len() {
                let (node, after, record) = kept.split(&chain[..len]);
                let mut all: Vec<u8> = node.iter().chain(record).copied().collect();
                all.sort_unstable();
                assert_eq!(all, chain[..len], "{kept:?}: the node and the record hold the chain");
                assert_eq!(after, kept.record_after(node[0], node[2]), "{kept:?}: the walk finds where the gaps start");
                let got = round_trip(5, &[(after, record.to_vec())], 3);
                assert_eq!(got[0].1, record.iter().map(|&p| usize::from(p)).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn the_longest_tail_fits_its_bound() {
        for k in MIN_K..=MAX_K {
            let mut w = RecordWriter::default();
            w.push(2, &(3..=191).collect::<Vec<u8>>(), k);
            assert!(w.bit_len() <= MAX_TAIL_BITS);
            let mut w = RecordWriter::default();
            w.push(2, &[191], k);
            assert!(w.bit_len() <= MAX_TAIL_BITS);
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
        let mut r = Record::at(&[0, 0, 0], 0, 0, 3);
        assert_eq!(r.next_position(), None);
        let mut r = Record::at(&[1], 20, 0, 3);
        assert_eq!(r.next_position(), None);
        // A gap that would pass position 191.
        let mut w = RecordWriter::default();
        w.push(0, &[190], 2);
        let bytes = w.finish();
        let mut r = Record::at(&bytes, 0, 100, 2);
        assert_eq!(r.next_position(), None);
    }
}
