//! Terminator records: a removed chain's port set and positions, gap-coded in nibbles.
//!
//! # Overview
//! When terminal-chain removal replaces a chain by its terminator, the node keeps the chain's
//! first three positions and a record keeps the rest: the port-set id (2 bytes LE), then the
//! remaining positions as gaps from the one before, one nibble each. A chain's positions are
//! ascending, so each gap (minus one) is small: 0–14 takes one nibble, a larger gap the escape
//! nibble 15 and two more (the gap's byte, low nibble first). Nibbles fill a byte low half first;
//! a record is padded to an even length (records are addressed in 2-byte units). The number of
//! positions is not stored: the walk knows it from the descriptor's weight and the terminator's
//! depth.
//!
//! With a position of 192 bits spread over a chain of ~10, most gaps fit one nibble: a record
//! takes about 0.6 bytes per position instead of 1.

/// Nibble that announces a gap too large for one nibble.
const ESCAPE: u8 = 15;

/// Appends the record of port set `set` and chain positions `tail` (ascending, each after
/// `prev`) to `out`, padded to an even length.
pub(super) fn push_record(out: &mut Vec<u8>, set: u16, prev: u8, tail: &[u8]) {
    out.extend_from_slice(&set.to_le_bytes());
    // Nibbles go straight into `out`: a low half starts a byte, a high half completes it.
    let mut high_next = false;
    let mut push = |nibble: u8| {
        match (high_next, out.last_mut()) {
            (true, Some(byte)) => *byte |= nibble << 4,
            _ => out.push(nibble),
        }
        high_next = !high_next;
    };
    let mut last = prev;
    for &p in tail {
        debug_assert!(p > last, "chain positions ascend");
        let gap = p - last - 1;
        if gap < ESCAPE {
            push(gap);
        } else {
            [ESCAPE, gap & 15, gap >> 4].into_iter().for_each(&mut push);
        }
        last = p;
    }
    if out.len() % 2 == 1 {
        out.push(0);
    }
}

/// A record read back: its port-set id and its positions.
pub(super) struct Record<'a> {
    bytes: &'a [u8],
    /// The next nibble, counted from the first byte after the port-set id.
    nibble: usize,
    last: usize,
}

impl<'a> Record<'a> {
    /// The record at the start of `bytes`, whose chain continues after position `prev`; `None`
    /// when `bytes` is too short to hold a port-set id.
    #[inline]
    pub(super) fn new(bytes: &'a [u8], prev: u8) -> Option<(u16, Record<'a>)> {
        let set = u16::from_le_bytes([*bytes.first()?, *bytes.get(1)?]);
        Some((set, Record { bytes: &bytes[2..], nibble: 0, last: usize::from(prev) }))
    }

    #[inline]
    fn next_nibble(&mut self) -> Option<usize> {
        let byte = *self.bytes.get(self.nibble / 2)?;
        let n = byte >> (4 * (self.nibble & 1)) & 15;
        self.nibble += 1;
        Some(usize::from(n))
    }

    /// The next position; `None` past the end of the bytes.
    #[inline]
    pub(super) fn next_position(&mut self) -> Option<usize> {
        let mut gap = self.next_nibble()?;
        if gap == usize::from(ESCAPE) {
            gap = self.next_nibble()? | self.next_nibble()? << 4;
        }
        self.last += gap + 1;
        Some(self.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(set: u16, prev: u8, tail: &[u8]) -> (usize, u16, Vec<usize>) {
        let mut out = vec![7u8; 2];
        push_record(&mut out, set, prev, tail);
        let (got, mut r) = Record::new(&out[2..], prev).unwrap();
        let positions = (0..tail.len()).map(|_| r.next_position().unwrap()).collect();
        (out.len() - 2, got, positions)
    }

    #[test]
    fn records_round_trip_small_and_escaped_gaps() {
        let tail = [5u8, 6, 20, 21, 191];
        let (len, set, positions) = round_trip(513, 4, &tail);
        assert_eq!(set, 513);
        assert_eq!(positions, tail.map(usize::from));
        // Gaps 0, 0, 13, 0, 169 (escaped: three nibbles): 7 nibbles, 4 bytes, +2 for the set.
        assert_eq!(len, 6);
        assert_eq!(round_trip(1, 0, &[]), (2, 1, vec![]));
        assert_eq!(round_trip(2, 0, &[16]).2, vec![16]);
        assert_eq!(round_trip(2, 0, &[17]).2, vec![17]);
    }

    #[test]
    fn every_chain_of_positions_round_trips() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let bits = [state, state.rotate_left(17) ^ 0x5555, state.rotate_left(41)];
            let prev = (state >> 59) as u8;
            let tail: Vec<u8> =
                (u32::from(prev) + 1..192).filter(|&p| bits[p as usize / 64] >> (p % 64) & 1 == 1).map(|p| p as u8).collect();
            assert_eq!(round_trip(9, prev, &tail).2, tail.iter().map(|&p| usize::from(p)).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_short_record_reads_as_none() {
        assert!(Record::new(&[1], 0).is_none());
        let (_, mut r) = Record::new(&[1, 0, ESCAPE], 0).unwrap();
        assert_eq!(r.next_position(), None);
    }
}
