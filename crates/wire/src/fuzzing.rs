//! Properties every decoder must keep for any input, shared by the cargo-fuzz targets in
//! `fuzz/` and the stable no-panic tests in `tests/`.
//!
//! Each `check_*` decodes arbitrary bytes. On success it reads every accessor of the view, makes
//! the owned copy, encodes it, and asserts that the encoding decodes back to an equal owned
//! packet and that `encoded_len` was exact. A panic here is a bug in the crate.

use crate::{Data, DataView, Emit, Interest, InterestView, LpPacket, LpPacketView, Name, NameView, PacketView};

/// Checks the Interest decoder on `bytes`; returns whether they were a valid Interest.
pub fn check_interest(bytes: &[u8]) -> bool {
    let Ok(v) = InterestView::decode(bytes) else {
        return false;
    };
    let _ = (v.name().to_string(), v.forwarding_hint().count(), v.nonce(), v.effective_lifetime_ms(), v.hop_limit_offset());
    let _ = (v.app_parameters(), v.signature_info(), v.verify_digest_sha256());
    if let Some(at) = v.hop_limit_offset() {
        assert_eq!(Some(bytes[at]), v.hop_limit());
    }
    let owned = v.to_owned();
    round_trip(&owned, Interest::decode);
    true
}

/// Checks the Data decoder on `bytes`; returns whether they were a valid Data packet.
pub fn check_data(bytes: &[u8]) -> bool {
    let Ok(v) = DataView::decode(bytes) else {
        return false;
    };
    let _ = (v.name().to_string(), v.content_type(), v.freshness_period_ms(), v.content(), v.verify_digest_sha256());
    assert!(v.signed_portion().len() <= bytes.len());
    let owned = v.to_owned();
    round_trip(&owned, Data::decode);
    true
}

/// Checks the LpPacket decoder on `bytes`; returns whether they were a valid LpPacket. A valid
/// packet's fragment is run through [`check_packet`] too, as a forwarder would.
pub fn check_lp_packet(bytes: &[u8]) -> bool {
    let Ok(v) = LpPacketView::decode(bytes) else {
        return false;
    };
    let _ = (v.nack(), v.acks().count(), v.is_whole());
    let owned = v.to_owned();
    round_trip(&owned, LpPacket::decode);
    if let Some(fragment) = v.fragment {
        check_packet(fragment);
    }
    true
}

/// Checks the dispatching decoder and the name decoder on `bytes`.
pub fn check_packet(bytes: &[u8]) -> bool {
    if let Ok(name) = NameView::decode(bytes) {
        let text = name.to_string();
        let parsed = Name::from_uri(&text).expect("the URI of a valid name parses");
        assert_eq!(parsed.as_view(), name, "URI round trip of {text}");
    }
    match PacketView::decode(bytes) {
        Ok(PacketView::Interest(_)) => check_interest(bytes),
        Ok(PacketView::Data(_)) => check_data(bytes),
        Ok(PacketView::Lp(_)) => check_lp_packet(bytes),
        Err(_) => false,
    }
}

fn round_trip<T: Emit + PartialEq + core::fmt::Debug>(owned: &T, decode: fn(&[u8]) -> crate::Result<T>) {
    let wire = owned.to_bytes();
    assert_eq!(wire.len(), owned.encoded_len());
    let again = decode(&wire).expect("an encoded packet decodes");
    assert_eq!(&again, owned);
    assert_eq!(again.to_bytes(), wire);
}

/// A coverage-less fuzzer's mutations of seed inputs, for the stable no-panic tests of every
/// crate that parses outside input: bit flips, byte sets, inserts, deletes, truncation,
/// length-octet nudges, slice duplication and splicing two seeds; one input in ten is random
/// bytes instead. Deterministic for a seed (its own xorshift generator, no dependency).
#[derive(Debug, Clone)]
pub struct Mutator {
    state: u64,
}

impl Mutator {
    /// A mutator whose inputs are a function of `seed`.
    pub fn new(seed: u64) -> Self {
        Mutator { state: seed | 1 }
    }

    /// How many inputs a no-panic test runs: `NEXTHOP_FUZZ_EXECS`, else `default`.
    pub fn execs(default: u64) -> u64 {
        std::env::var("NEXTHOP_FUZZ_EXECS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
    }

    fn next(&mut self) -> u64 {
        // xorshift64*
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next() >> 32) * n as u64) >> 32) as usize
    }

    /// `buf` made the next input: a mutated seed (`seeds` not empty), or random bytes.
    pub fn fill(&mut self, seeds: &[Vec<u8>], buf: &mut Vec<u8>) {
        buf.clear();
        if self.below(10) == 0 {
            let len = self.below(64);
            buf.extend((0..len).map(|_| self.next() as u8));
            return;
        }
        buf.extend_from_slice(&seeds[self.below(seeds.len())]);
        for _ in 0..1 + self.below(3) {
            let n = buf.len();
            match self.below(8) {
                0 if n > 0 => {
                    let i = self.below(n);
                    buf[i] ^= 1 << self.below(8);
                }
                1 if n > 0 => {
                    let i = self.below(n);
                    buf[i] = self.next() as u8;
                }
                2 => {
                    let i = self.below(n + 1);
                    let b = self.next() as u8;
                    buf.insert(i, b);
                }
                3 if n > 0 => {
                    buf.remove(self.below(n));
                }
                4 => buf.truncate(self.below(n + 1)),
                5 if n > 1 => {
                    // Nudge what may be a length octet (or a digit of a number in text).
                    let i = 1 + self.below(n - 1);
                    buf[i] = buf[i].wrapping_add(if self.next() & 1 == 0 { 1 } else { 255 });
                }
                6 if n > 2 => {
                    let a = self.below(n);
                    let b = a + self.below((n - a).min(16));
                    let slice = buf[a..b].to_vec();
                    let at = self.below(n + 1);
                    buf.splice(at..at, slice);
                }
                7 => {
                    let other = &seeds[self.below(seeds.len())];
                    let cut = self.below(n + 1);
                    let from = self.below(other.len() + 1);
                    buf.truncate(cut);
                    buf.extend_from_slice(&other[from..]);
                }
                _ => {}
            }
        }
    }
}
