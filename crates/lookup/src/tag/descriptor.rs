//! Descriptors: a set of string tags encoded as a 192-bit Bloom filter with 7 hash functions.
//!
//! # Overview
//! TagNet addresses content by a set of tags (`{concert, classical}`); on the wire and in the
//! FIB a descriptor is the Bloom filter of its tags, and "this FIB entry matches the packet" is
//! the subset relation on filters (`entry ⊆ packet`, bitwise), exact up to the filter's small
//! false-positive rate. Bit `p` of the filter (0 ≤ p < 192) is bit `p % 64` of word `p / 64`.
//!
//! A tag's 7 positions come from one SipHash-1-3 of the tag under a fixed all-zero key (every host
//! must derive the same bits for the same tag, so the hash is part of the protocol): position i is
//! `⌊mix(h + i) · 192 / 2^64⌋` with `mix` the SplitMix64 finaliser. Double hashing
//! (`h1 + i·h2 mod 192`) is not used: modulo 192 it has only ~18K distinct patterns, so unrelated
//! tags collide often (`nexthop bench tagnet --quick`: 98% of packets made of unrelated tags
//! "matched" a 100K-descriptor FIB, 3% with independent positions).
//!
//! Hierarchical names are emulated as the paper's section 2.1 does: `/org/gnu/software` is the
//! descriptor `{1:org, 2:gnu, 3:software}` — each component tagged with its (1-based) depth.

use core::hash::Hasher;

use siphasher::sip::SipHasher13;

use super::TagError;

/// Bits in a descriptor's Bloom filter.
pub const FILTER_BITS: usize = 192;

/// Hash functions (bits set) per tag.
pub const HASHES_PER_TAG: u32 = 7;

/// Bytes of a descriptor on the wire (three little-endian 64-bit words).
pub const DESCRIPTOR_BYTES: usize = 24;

/// A descriptor: the 192-bit Bloom filter of a set of tags.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Descriptor(pub [u64; 3]);

impl core::fmt::Debug for Descriptor {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Descriptor{{")?;
        for (i, p) in self.positions().enumerate() {
            write!(f, "{}{p}", if i == 0 { "" } else { "," })?;
        }
        write!(f, "}}")
    }
}

impl Descriptor {
    /// The empty filter (no tags). Not a valid address: see [`Descriptor::from_tags`].
    pub const EMPTY: Descriptor = Descriptor([0; 3]);

    /// The filter of `tags`.
    ///
    /// # Errors
    /// [`TagError::EmptyDescriptor`] when `tags` is empty: an empty set is a subset of every
    /// packet, so a FIB entry for it would match all traffic.
    pub fn from_tags<T: AsRef<[u8]>>(tags: impl IntoIterator<Item = T>) -> Result<Self, TagError> {
        let mut d = Descriptor::EMPTY;
        for t in tags {
            d.add_tag(t.as_ref());
        }
        if d.is_empty() {
            return Err(TagError::EmptyDescriptor);
        }
        Ok(d)
    }

    /// The descriptor that emulates a hierarchical name: component `i` (1-based) of `name`
    /// becomes the tag `i:component`.
    ///
    /// # Errors
    /// [`TagError::EmptyDescriptor`] for a name with no components (`/`).
    pub fn from_name(name: &str) -> Result<Self, TagError> {
        Self::from_tags(name.split('/').filter(|c| !c.is_empty()).enumerate().map(|(i, c)| format!("{}:{c}", i + 1)))
    }

    /// The filter written as `text`, [`FILTER_BITS`] characters `0` or `1`, character `j` the
    /// bit of position `j` (TagMatch's workload files write filters so); `None` for other
    /// text. All zeros is the empty filter.
    pub fn from_bit_string(text: &str) -> Option<Self> {
        let bits = text.as_bytes();
        if bits.len() != FILTER_BITS || !bits.iter().all(|b| matches!(b, b'0' | b'1')) {
            return None;
        }
        let mut d = Descriptor::EMPTY;
        for p in (0..FILTER_BITS).filter(|&p| bits[p] == b'1') {
            d.set(p);
        }
        Some(d)
    }

    /// Sets the 7 bits of `tag`.
    pub fn add_tag(&mut self, tag: &[u8]) {
        for p in tag_positions(tag) {
            self.set(p);
        }
    }

    /// Sets bit `p` (< 192).
    pub fn set(&mut self, p: usize) {
        self.0[p / 64] |= 1 << (p % 64);
    }

    /// Whether bit `p` (< 192) is set.
    pub fn bit(&self, p: usize) -> bool {
        self.0[p / 64] >> (p % 64) & 1 == 1
    }

    /// The Hamming weight: how many bits are set.
    pub fn weight(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// Whether no bit is set.
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 3]
    }

    /// Whether every bit of `self` is set in `other` (`self ⊆ other`).
    pub fn is_subset_of(&self, other: &Descriptor) -> bool {
        (self.0[0] & !other.0[0]) | (self.0[1] & !other.0[1]) | (self.0[2] & !other.0[2]) == 0
    }

    /// The union of two filters.
    pub fn union(&self, other: &Descriptor) -> Descriptor {
        Descriptor([self.0[0] | other.0[0], self.0[1] | other.0[1], self.0[2] | other.0[2]])
    }

    /// The set bit positions, ascending.
    pub fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        crate::bits::set_bits(&self.0)
    }

    /// The wire form: three little-endian words.
    pub fn to_bytes(&self) -> [u8; DESCRIPTOR_BYTES] {
        let mut out = [0; DESCRIPTOR_BYTES];
        for (chunk, w) in out.chunks_exact_mut(8).zip(self.0) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// Reads the wire form.
    pub fn from_bytes(bytes: &[u8; DESCRIPTOR_BYTES]) -> Descriptor {
        let mut d = Descriptor::EMPTY;
        for (w, chunk) in d.0.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut b = [0; 8];
            b.copy_from_slice(chunk);
            *w = u64::from_le_bytes(b);
        }
        d
    }
}

/// The 7 filter positions of `tag` (possibly repeating).
pub fn tag_positions(tag: &[u8]) -> impl Iterator<Item = usize> {
    let mut h = SipHasher13::new_with_keys(0, 0);
    h.write(tag);
    let x = h.finish();
    (0..u64::from(HASHES_PER_TAG)).map(move |i| ((u128::from(mix(x.wrapping_add(i))) * FILTER_BITS as u128) >> 64) as usize)
}

/// The SplitMix64 finaliser.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    /// A 192-character bit string is the filter it writes; anything else is not one.
    #[test]
    fn a_bit_string_is_the_filter_it_writes() {
        let mut text = vec![b'0'; FILTER_BITS];
        for p in [0, 63, 64, 191] {
            text[p] = b'1';
        }
        let d = Descriptor::from_bit_string(std::str::from_utf8(&text).unwrap()).unwrap();
        assert_eq!(d.positions().collect::<Vec<_>>(), [0, 63, 64, 191]);
        assert_eq!(Descriptor::from_bit_string(&"0".repeat(FILTER_BITS)), Some(Descriptor::EMPTY));
        for bad in ["0".repeat(FILTER_BITS - 1), "1".repeat(FILTER_BITS + 1), format!("2{}", "0".repeat(FILTER_BITS - 1)), "music".into()] {
            assert_eq!(Descriptor::from_bit_string(&bad), None, "{bad:?}");
        }
    }

    use super::*;

    #[test]
    fn tags_set_up_to_seven_bits_and_subsets_follow_tag_sets() {
        let a = Descriptor::from_tags(["concert", "classical"]).unwrap();
        let b = Descriptor::from_tags(["classical", "beethoven", "ninth", "concert", "360bps"]).unwrap();
        assert!((1..=14).contains(&a.weight()));
        assert!(a.is_subset_of(&b));
        assert!(!b.is_subset_of(&a));
        assert_eq!(
            Descriptor::from_tags(["x"]).unwrap().weight(),
            tag_positions(b"x").collect::<std::collections::BTreeSet<_>>().len() as u32
        );
    }

    #[test]
    fn unrelated_tags_rarely_cover_each_other() {
        let fib: Vec<Descriptor> = (0..20_000).map(|i| Descriptor::from_tags([format!("fib{i}")]).unwrap()).collect();
        let hits = (0..500)
            .filter(|i| {
                let q = Descriptor::from_tags((0..5).map(|j| format!("q{i}-{j}"))).unwrap();
                fib.iter().any(|d| d.is_subset_of(&q))
            })
            .count();
        // (35/192)^7 · 20,000 ≈ 0.13 expected covering entries per packet.
        assert!(hits < 100, "{hits} of 500 packets covered");
    }

    #[test]
    fn names_become_depth_tagged_components() {
        let n = Descriptor::from_name("/org/gnu/software").unwrap();
        assert_eq!(n, Descriptor::from_tags(["1:org", "2:gnu", "3:software"]).unwrap());
        assert!(Descriptor::from_name("/org/gnu").unwrap().is_subset_of(&n));
        assert_ne!(Descriptor::from_name("/gnu/org").unwrap(), Descriptor::from_name("/org/gnu").unwrap());
        assert_eq!(Descriptor::from_name("/"), Err(TagError::EmptyDescriptor));
        assert_eq!(Descriptor::from_tags(Vec::<&str>::new()), Err(TagError::EmptyDescriptor));
    }

    #[test]
    fn wire_form_and_positions_round_trip() {
        let d = Descriptor::from_tags(["a", "b", "c"]).unwrap();
        assert_eq!(Descriptor::from_bytes(&d.to_bytes()), d);
        let mut e = Descriptor::EMPTY;
        for p in d.positions() {
            assert!(p < FILTER_BITS && d.bit(p));
            e.set(p);
        }
        assert_eq!(e, d);
        assert_eq!(d.positions().count() as u32, d.weight());
    }
}
