//! The switch's frames: Ethernet frames to many destination addresses, each carrying the test
//! header and pattern ([`super::format`]), and the sink's check that each came out unmodified
//! by the receiving port its destination's FIB entry names.
//!
//! # Overview
//! Frame `seq` of `flow` is the run's frame number `n = seq · flows + flow` and goes to address
//! `n mod d` of the `d` the stream was given, so the sink knows a frame's destination from its
//! test header alone. A frame whose bytes differ in any way from what was sent is corrupted; an
//! intact one on another port than its destination's is misrouted.

use super::format::{check_at, write_test_header, Checked, ETHERTYPE, MAX_FRAME, MIN_FRAME, PATTERN};
use super::traffic::Stream;

/// Ethernet frames of one size from one source to a list of destinations.
#[derive(Clone, Debug)]
pub struct MacStream {
    bytes: Vec<u8>,
    flows: u64,
    dests: Vec<[u8; 6]>,
    /// The receiving port each destination's frames must come out of.
    rx: usize,
}

impl MacStream {
    /// Frames of `size` bytes (clamped to the test frames' sizes) from `src` over `flows` flows
    /// to `dests` (at least one), which must come out of receiving port `rx`.
    pub fn new(size: usize, src: [u8; 6], flows: u16, dests: Vec<[u8; 6]>, rx: usize) -> MacStream {
        assert!(!dests.is_empty(), "at least one destination");
        let size = size.clamp(MIN_FRAME, MAX_FRAME);
        let mut bytes = PATTERN[..size].to_vec();
        bytes[6..12].copy_from_slice(&src);
        bytes[12..14].copy_from_slice(&ETHERTYPE.to_be_bytes());
        MacStream { bytes, flows: u64::from(flows.max(1)), dests, rx }
    }

    fn dest(&self, flow: u16, seq: u64) -> usize {
        (seq.wrapping_mul(self.flows).wrapping_add(u64::from(flow)) % self.dests.len() as u64) as usize
    }
}

impl Stream for MacStream {
    fn frame_len(&self) -> usize {
        self.bytes.len()
    }

    fn write(&self, out: &mut [u8], flow: u16, seq: u64) {
        out.copy_from_slice(&self.bytes);
        out[..6].copy_from_slice(&self.dests[self.dest(flow, seq)]);
        write_test_header(out, 14, flow, seq);
    }

    fn check(&self, rx: usize, frame: &[u8]) -> Checked {
        if frame.len() < 14 || frame[12..14] != ETHERTYPE.to_be_bytes() {
            return Checked::Foreign;
        }
        let (flow, seq) = match check_at(frame, 14) {
            Checked::Intact { flow, seq } => (flow, seq),
            other => return other,
        };
        if frame[..6] != self.dests[self.dest(flow, seq)] || frame[6..12] != self.bytes[6..12] {
            return Checked::Corrupted;
        }
        if rx == self.rx {
            Checked::Intact { flow, seq }
        } else {
            Checked::Misrouted { flow, seq }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_check_intact_where_they_belong_and_any_change_is_seen() {
        let s = MacStream::new(64, [2, 0, 0, 0, 0, 2], 4, vec![[2, 0, 0, 1, 0, 1], [2, 0, 0, 1, 0, 2]], 0);
        let mut f = vec![0u8; s.frame_len()];
        s.write(&mut f, 1, 3); // frame 13: the second destination
        assert_eq!(&f[..6], &[2, 0, 0, 1, 0, 2]);
        assert_eq!(s.check(0, &f), Checked::Intact { flow: 1, seq: 3 });
        assert_eq!(s.check(1, &f), Checked::Misrouted { flow: 1, seq: 3 });
        for i in 0..f.len() {
            let mut g = f.clone();
            g[i] ^= 0x10;
            assert!(matches!(s.check(0, &g), Checked::Corrupted | Checked::Foreign), "byte {i} flipped");
        }
        assert_eq!(s.check(0, &f[..10]), Checked::Foreign);
    }
}
