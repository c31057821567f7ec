//! The generator's frames: an Ethernet header (EtherType [`ETHERTYPE`], IEEE's local
//! experimental one), a 20-byte test header, and a payload pattern that depends only on the
//! byte's offset.
//!
//! ```text
//! 0      6      12   14       18     20     22            30      34
//! | dst  | src  | ty | magic  | flow | len  | seq (u64)   | check | pattern ...
//! ```
//! `check` is a hash of flow, length and sequence number, so a frame whose header was damaged
//! is told from one of another flow or place; the pattern is compared byte for byte. The test
//! header and pattern may also follow other headers ([`write_test_header`], [`check_at`]): the
//! router's frames ([`super::ip`]) carry them in UDP.

/// IEEE 802 local experimental EtherType 1.
pub const ETHERTYPE: u16 = 0x88b5;
/// The test header's first word.
pub const MAGIC: u32 = 0x4e58_5447; // "NXTG"
/// An Ethernet header.
pub const ETHER_BYTES: usize = 14;
/// The test header (magic, flow, length, sequence number, check word).
pub const TEST_HEADER_BYTES: usize = 20;
/// Ethernet header plus test header.
pub const HEADER_BYTES: usize = ETHER_BYTES + TEST_HEADER_BYTES;
/// The smallest frame the generator makes (Ethernet's minimum without the FCS).
pub const MIN_FRAME: usize = 60;
/// The largest: a 1500-byte MTU's frame.
pub const MAX_FRAME: usize = 1514;

/// Byte `i` of every frame's payload region.
const fn pattern_byte(i: usize) -> u8 {
    (i.wrapping_mul(31) ^ (i >> 8)) as u8
}

/// The pattern of the largest frame, which the sink compares a frame's payload with at once.
pub(crate) const PATTERN: [u8; MAX_FRAME] = {
    let mut p = [0u8; MAX_FRAME];
    let mut i = 0;
    while i < MAX_FRAME {
        p[i] = pattern_byte(i);
        i += 1;
    }
    p
};

/// What a frame that arrived was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    /// A generator frame, intact.
    Intact {
        /// Its flow.
        flow: u16,
        /// Its sequence number in the flow.
        seq: u64,
    },
    /// A generator frame (magic and EtherType right) with a damaged header or payload.
    Corrupted,
    /// A generator frame, intact, that left the system by the wrong port or with the wrong
    /// link-layer addresses (a router's sink knows where each frame should come out).
    Misrouted {
        /// Its flow.
        flow: u16,
        /// Its sequence number in the flow.
        seq: u64,
    },
    /// Not a generator frame (another EtherType or no magic): ignored.
    Foreign,
}

fn check_word(flow: u16, len: u16, seq: u64) -> u32 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in flow.to_le_bytes().into_iter().chain(len.to_le_bytes()).chain(seq.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    (h ^ (h >> 32)) as u32
}

/// Frames of one size between two addresses: the bytes all of them share, and what differs.
#[derive(Clone, Debug)]
pub struct Template {
    bytes: Vec<u8>,
}

impl Template {
    /// Frames of `size` bytes (clamped to [`MIN_FRAME`]..=[`MAX_FRAME`]) from `src` to `dst`.
    pub fn new(size: usize, dst: [u8; 6], src: [u8; 6]) -> Template {
        let size = size.clamp(MIN_FRAME, MAX_FRAME);
        let mut bytes = PATTERN[..size].to_vec();
        bytes[..6].copy_from_slice(&dst);
        bytes[6..12].copy_from_slice(&src);
        bytes[12..14].copy_from_slice(&ETHERTYPE.to_be_bytes());
        Template { bytes }
    }

    /// Its frames' length.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Never: a frame has at least [`MIN_FRAME`] bytes.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Writes frame `seq` of `flow` into `out` (of the template's length); the flow also sets
    /// the source address's last byte, so a learning bridge sees one address per flow.
    pub fn write(&self, out: &mut [u8], flow: u16, seq: u64) {
        out.copy_from_slice(&self.bytes);
        out[11] = out[11].wrapping_add(flow as u8);
        write_test_header(out, ETHER_BYTES, flow, seq);
    }
}

/// Checks a received frame (any bytes: never panics).
pub fn check(frame: &[u8]) -> Checked {
    if frame.len() < HEADER_BYTES || frame[12..14] != ETHERTYPE.to_be_bytes() {
        return Checked::Foreign;
    }
    check_at(frame, ETHER_BYTES)
}

/// Writes the test header of frame `seq` of `flow` at offset `at` of `out` (the whole frame,
/// its payload pattern already in place): the frame's length goes in it.
pub fn write_test_header(out: &mut [u8], at: usize, flow: u16, seq: u64) {
    let len = out.len() as u16;
    out[at..at + 4].copy_from_slice(&MAGIC.to_be_bytes());
    out[at + 4..at + 6].copy_from_slice(&flow.to_be_bytes());
    out[at + 6..at + 8].copy_from_slice(&len.to_be_bytes());
    out[at + 8..at + 16].copy_from_slice(&seq.to_be_bytes());
    out[at + 16..at + 20].copy_from_slice(&check_word(flow, len, seq).to_be_bytes());
}

/// Checks the test header at offset `at` of `frame` and the payload pattern after it (any
/// bytes: never panics): [`Checked::Foreign`] without the magic word.
pub fn check_at(frame: &[u8], at: usize) -> Checked {
    let end = at + TEST_HEADER_BYTES;
    if frame.len() < end || frame[at..at + 4] != MAGIC.to_be_bytes() {
        return Checked::Foreign;
    }
    let flow = u16::from_be_bytes([frame[at + 4], frame[at + 5]]);
    let len = u16::from_be_bytes([frame[at + 6], frame[at + 7]]);
    let seq = u64::from_be_bytes(frame[at + 8..at + 16].try_into().unwrap_or_default());
    let check = u32::from_be_bytes(frame[at + 16..end].try_into().unwrap_or_default());
    let intact = frame.len() <= MAX_FRAME
        && usize::from(len) == frame.len()
        && check == check_word(flow, len, seq)
        && frame[end..] == PATTERN[end..frame.len()];
    if intact {
        Checked::Intact { flow, seq }
    } else {
        Checked::Corrupted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_checks_and_any_damage_is_seen() {
        let t = Template::new(64, [2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1]);
        let mut f = vec![0u8; t.len()];
        t.write(&mut f, 3, 77);
        assert_eq!(check(&f), Checked::Intact { flow: 3, seq: 77 });
        for i in 18..f.len() {
            let mut g = f.clone();
            g[i] ^= 0x10;
            assert_eq!(check(&g), Checked::Corrupted, "byte {i} flipped");
        }
        assert_eq!(check(&f[..40]), Checked::Corrupted, "cut short");
        let mut other = f.clone();
        other[13] ^= 1;
        assert_eq!(check(&other), Checked::Foreign);
        assert_eq!(check(&[]), Checked::Foreign);
        let mut long = f.clone();
        long.resize(2000, 0);
        long[20..22].copy_from_slice(&2000u16.to_be_bytes());
        assert_eq!(check(&long), Checked::Corrupted, "longer than any generator frame");
    }

    proptest::proptest! {
        /// Any bytes are checked without a panic; any frame written checks as itself.
        #[test]
        fn any_bytes_check_and_frames_round_trip(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2100),
                                                  size in 0usize..2000, flow in 0u16..1024, seq in proptest::prelude::any::<u64>()) {
            let _ = check(&bytes);
            let t = Template::new(size, [2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1]);
            let mut f = vec![0u8; t.len()];
            t.write(&mut f, flow, seq);
            proptest::prop_assert_eq!(check(&f), Checked::Intact { flow, seq });
        }
    }

    #[test]
    fn sizes_are_clamped_to_ethernet() {
        assert_eq!(Template::new(10, [0; 6], [0; 6]).len(), MIN_FRAME);
        assert_eq!(Template::new(9000, [0; 6], [0; 6]).len(), MAX_FRAME);
        assert_eq!(Template::new(1500, [0; 6], [0; 6]).len(), 1500);
    }
}
