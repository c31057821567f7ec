//! Prefix hashing: the hash of every prefix of a name, in one pass over the name.
//!
//! A name is hashed component by component into one running hasher; after each component the
//! hasher's current value is the hash of the prefix that ends there. So a name of n components
//! costs one pass over its bytes, and every table probe of a lookup reuses what this fills
//! ([`PrefixHashes::hash`]).
//!
//! With foldhash a prefix's hash is finalised after each component (a few instructions). With
//! SipHash-1-3, finalising is four SipRounds — as many as compressing 32 bytes of the name — and
//! a lookup probes only about log2 of the levels, so the state after each component is kept
//! instead (the four words after the prefix's whole 8-byte blocks, and its last partial block)
//! and a level's hash is finalised when it is probed. That SipHash-1-3 is written here (the
//! `siphasher` crate's hasher does not expose its state; it is the oracle of the tests).
//!
//! Two hash functions, one per string-matching strategy of the paper (§3.2.2):
//! - [`Strategy::VerifyEach`] ("CityA"): a fast non-cryptographic hash (foldhash, the hash of
//!   hashbrown; the paper used CityHash), with the name bytes compared on every fingerprint match.
//! - [`Strategy::VerifyAtEnd`] ("SipE"): keyed SipHash-1-3 with a random key, so that nobody who
//!   does not know the key can make names whose fingerprints collide on purpose; the bytes are
//!   compared once, at the end of the search.
//!
//! The hashed bytes are the components' TLV encodings, so prefixes are unambiguous ("/a/bc" and
//! "/ab/c" hash different bytes) and the hash of a prefix does not depend on what follows it.

use core::hash::{BuildHasher, Hasher};
use core::mem::MaybeUninit;

use super::component::component_end;
use super::packed::packed_component;

/// Most name components a FIB indexes (the deepest level of its binary search).
pub const MAX_LEVELS: usize = 32;

/// Which hash and which string-matching strategy a FIB uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Fast hash; compare the name bytes on every fingerprint match (the paper's CityA).
    VerifyEach,
    /// Keyed SipHash; compare the name bytes only at the end, re-searching with comparisons if a
    /// fingerprint lied (the paper's SipE).
    VerifyAtEnd,
}

impl Strategy {
    /// Short name used in result rows.
    pub fn label(self) -> &'static str {
        match self {
            Strategy::VerifyEach => "verify-each",
            Strategy::VerifyAtEnd => "verify-at-end",
        }
    }
}

/// The prefix hasher of one FIB: the strategy's function with this FIB's key.
#[derive(Debug, Clone, Copy)]
pub struct PrefixHasher {
    strategy: Strategy,
    key: (u64, u64),
}

/// Bytes of a name's packed form that [`PrefixHashes`] keeps.
pub const PACKED_INLINE: usize = 192;

/// Component boundaries and prefix hashes of one name, as many components as were asked for,
/// and the name's packed form (see `packed`) as far as it fits, for verifications that are one
/// byte comparison against an entry.
#[derive(Clone, Copy)]
pub struct PrefixHashes {
    /// Components hashed (`ends[..len]` are valid, and [`PrefixHashes::hash`] up to `len`).
    pub len: usize,
    /// `ends[i]`: byte offset in the name value where component `i + 1` ends.
    pub ends: [u32; MAX_LEVELS],
    /// Whether the hashes are SipHash states finalised on demand (`sip`) or final (`hashes`).
    lazy: bool,
    /// Entries of `hashes` (or `sip`, as `lazy` says) written: `hashes[..hashed]` (or
    /// `sip[..hashed]`) are initialised. Kept apart from `len`, which callers may shorten.
    hashed: usize,
    /// `hashes[i]`: hash of the prefix of `i + 1` components (foldhash).
    hashes: [MaybeUninit<u64>; MAX_LEVELS],
    /// `sip[i]`: SipHash-1-3 of the prefix of `i + 1` components, not yet finalised. Left
    /// uninitialised until written: zeroing both arrays cost a single-name lookup about as
    /// much as finalising lazily saved.
    sip: [MaybeUninit<SipPrefix>; MAX_LEVELS],
    /// Components whose packed prefix fits in `packed` (`packed_ends[..packed_len]` valid).
    packed_len: usize,
    /// `packed_ends[i]`: where the packed prefix of `i + 1` components ends in `packed`.
    packed_ends: [u8; MAX_LEVELS],
    packed: [u8; PACKED_INLINE],
}

impl Default for PrefixHashes {
    fn default() -> Self {
        PrefixHashes {
            len: 0,
            ends: [0; MAX_LEVELS],
            lazy: false,
            hashed: 0,
            hashes: [MaybeUninit::uninit(); MAX_LEVELS],
            sip: [MaybeUninit::uninit(); MAX_LEVELS],
            packed_len: 0,
            packed_ends: [0; MAX_LEVELS],
            packed: [0; PACKED_INLINE],
        }
    }
}

impl PrefixHashes {
    /// Hash of the prefix of `level` components (1 ≤ `level` ≤ `len`).
    ///
    /// # Panics
    /// If `level` is 0 or more than the components hashed.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub fn hash(&self, level: usize) -> u64 {
        assert!(level >= 1 && level <= self.hashed, "level {level} of {} hashed", self.hashed);
        let i = level - 1;
        if self.lazy {
            // SAFETY: `walk` wrote `sip[..hashed]` for the lazy strategy, which set `lazy`
            // and `hashed` together, and i < hashed.
            unsafe { self.sip[i].assume_init_ref() }.finish(self.ends[i])
        } else {
            // SAFETY: as above, `hashes[..hashed]` for the eager strategy.
            unsafe { self.hashes[i].assume_init() }
        }
    }

    /// The packed prefix of `level` components, if it fits inline.
    #[inline(always)]
    pub fn packed_prefix(&self, level: usize) -> Option<&[u8]> {
        (level <= self.packed_len).then(|| &self.packed[..usize::from(self.packed_ends[level - 1])])
    }
}

impl core::fmt::Debug for PrefixHashes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let hashes: Vec<u64> = (1..=self.len).map(|level| self.hash(level)).collect();
        f.debug_struct("PrefixHashes").field("ends", &&self.ends[..self.len]).field("hashes", &hashes).finish()
    }
}

impl PrefixHasher {
    /// A hasher for `strategy` keyed with `key` (SipHash's 128-bit key, or foldhash's seed).
    pub fn new(strategy: Strategy, key: (u64, u64)) -> Self {
        PrefixHasher { strategy, key }
    }

    /// The strategy this hasher serves.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Hashes the first `min(components, max)` components of the name whose TLV value is
    /// `value` into `out`. Bytes that do not parse as a component end the walk (a name view from
    /// `nexthop-wire` is already validated, so this only guards against misuse).
    #[inline]
    pub fn hash_prefixes(&self, value: &[u8], max: usize, out: &mut PrefixHashes) {
        let max = max.min(MAX_LEVELS);
        out.hashed = 0; // Nothing is read as hashed until `walk` has written it.
        match self.strategy {
            Strategy::VerifyEach => {
                out.lazy = false;
                let mut h = foldhash::fast::FixedState::with_seed(self.key.0).build_hasher();
                walk(value, max, out, |out, n, at, end| {
                    h.write(&value[at..end]);
                    out.hashes[n] = MaybeUninit::new(h.finish());
                });
            }
            Strategy::VerifyAtEnd => {
                out.lazy = true;
                let mut h = SipStream::new(self.key);
                walk(value, max, out, |out, n, _, end| out.sip[n] = MaybeUninit::new(h.advance(value, end)));
            }
        }
    }

    /// Hash of the prefix of `value` made of its first `level` components (used when a table
    /// is resized and its keys rehashed).
    pub fn hash_prefix(&self, value: &[u8], level: usize) -> u64 {
        let mut out = PrefixHashes::default();
        self.hash_prefixes(value, level, &mut out);
        debug_assert_eq!(out.len, level);
        out.hash(level)
    }

    /// Hash of the whole name (0 for an empty one).
    pub fn hash_name(&self, value: &[u8]) -> u64 {
        let mut out = PrefixHashes::default();
        self.hash_prefixes(value, MAX_LEVELS, &mut out);
        if out.len == 0 {
            0
        } else {
            out.hash(out.len)
        }
    }
}

/// Walks the components of `value`, calling `step` with each component's index and byte range
/// (which hashes it into `out`) and storing the boundary and, while it fits, the packed
/// component.
#[inline(always)]
fn walk(value: &[u8], max: usize, out: &mut PrefixHashes, mut step: impl FnMut(&mut PrefixHashes, usize, usize, usize)) {
    let mut at = 0usize;
    let mut n = 0usize;
    let mut packed_at = 0usize;
    out.packed_len = 0;
    while n < max && at < value.len() {
        let Some(end) = component_end(value, at) else { break };
        out.ends[n] = end as u32;
        step(out, n, at, end);
        if out.packed_len == n {
            let (head, body) = packed_component(&value[at..end]);
            if packed_at + 1 + body.len() <= PACKED_INLINE {
                out.packed[packed_at] = head;
                let (to, from) = (packed_at + 1, end - body.len());
                if body.len() <= 16 && to + 16 <= PACKED_INLINE && from + 16 <= value.len() {
                    // One fixed 16-byte move instead of a call to memcpy for a short body: the
                    // bytes past the body are overwritten by the next component or never read.
                    out.packed[to..to + 16].copy_from_slice(&value[from..from + 16]);
                } else {
                    out.packed[to..to + body.len()].copy_from_slice(body);
                }
                packed_at += 1 + body.len();
                out.packed_ends[n] = packed_at as u8;
                out.packed_len = n + 1;
            }
        }
        n += 1;
        at = end;
    }
    out.len = n;
    out.hashed = n;
}

/// SipHash-1-3 of a prefix of the name, not yet finalised: the state after the prefix's whole
/// 8-byte blocks, and its last partial block (little-endian, the rest zero).
#[derive(Debug, Clone, Copy, Default)]
struct SipPrefix {
    v: [u64; 4],
    tail: u64,
}

impl SipPrefix {
    /// The hash of the prefix, `len` bytes long: SipHash's last block (the length's low byte on
    /// top of the tail), one compression round and three finalisation rounds.
    #[inline(always)]
    fn finish(&self, len: u32) -> u64 {
        let mut v = self.v;
        let b = (u64::from(len) << 56) | self.tail;
        v[3] ^= b;
        sip_round(&mut v);
        v[0] ^= b;
        v[2] ^= 0xff;
        sip_round(&mut v);
        sip_round(&mut v);
        sip_round(&mut v);
        v[0] ^ v[1] ^ v[2] ^ v[3]
    }
}

/// SipHash-1-3 over a name's bytes, advanced to each component's end in turn.
struct SipStream {
    v: [u64; 4],
    /// Bytes compressed so far (a multiple of 8).
    done: usize,
}

impl SipStream {
    fn new((k0, k1): (u64, u64)) -> Self {
        SipStream {
            v: [k0 ^ 0x736f_6d65_7073_6575, k1 ^ 0x646f_7261_6e64_6f6d, k0 ^ 0x6c79_6765_6e65_7261, k1 ^ 0x7465_6462_7974_6573],
            done: 0,
        }
    }

    /// Compresses the whole blocks of `value[..end]` not yet compressed and returns the state of
    /// the prefix `value[..end]`.
    #[inline(always)]
    fn advance(&mut self, value: &[u8], end: usize) -> SipPrefix {
        while self.done + 8 <= end {
            let m = u64::from_le_bytes(value[self.done..self.done + 8].try_into().expect("8 bytes"));
            self.v[3] ^= m;
            sip_round(&mut self.v);
            self.v[0] ^= m;
            self.done += 8;
        }
        let rest = end - self.done;
        let tail = if rest == 0 {
            0
        } else if end >= 8 {
            // The partial block is the top `rest` bytes of the 8 that end the prefix.
            u64::from_le_bytes(value[end - 8..end].try_into().expect("8 bytes")) >> (64 - 8 * rest)
        } else {
            let mut last = [0u8; 8];
            last[..rest].copy_from_slice(&value[self.done..end]);
            u64::from_le_bytes(last)
        };
        SipPrefix { v: self.v, tail }
    }
}

#[inline(always)]
fn sip_round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13) ^ v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17) ^ v[2];
    v[2] = v[2].rotate_left(32);
}

/// Counts the components of a name value (stopping at the first malformed byte).
pub fn count_components(value: &[u8]) -> usize {
    let (mut at, mut n) = (0, 0);
    while at < value.len() {
        match component_end(value, at) {
            Some(end) => {
                at = end;
                n += 1;
            }
            None => break,
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use nexthop_wire::Name;

    fn hashes(strategy: Strategy, uri: &str) -> PrefixHashes {
        let name = Name::from_uri(uri).unwrap();
        let mut out = PrefixHashes::default();
        PrefixHasher::new(strategy, (1, 2)).hash_prefixes(name.value(), MAX_LEVELS, &mut out);
        out
    }

    #[test]
    fn a_prefix_hashes_alike_whatever_follows() {
        for s in [Strategy::VerifyEach, Strategy::VerifyAtEnd] {
            let long = hashes(s, "/a/bb/ccc/dddd");
            let short = hashes(s, "/a/bb");
            assert_eq!(long.len, 4);
            assert_eq!(short.len, 2);
            assert_eq!([long.hash(1), long.hash(2)], [short.hash(1), short.hash(2)]);
            assert_eq!(&long.ends[..2], &short.ends[..2]);
            assert_ne!(long.hash(2), long.hash(3));
        }
    }

    #[test]
    fn component_boundaries_are_unambiguous() {
        for s in [Strategy::VerifyEach, Strategy::VerifyAtEnd] {
            assert_ne!(hashes(s, "/a/bc").hash(2), hashes(s, "/ab/c").hash(2));
        }
    }

    #[test]
    fn keys_change_the_hash() {
        let name = Name::from_uri("/x/y").unwrap();
        for s in [Strategy::VerifyEach, Strategy::VerifyAtEnd] {
            let a = PrefixHasher::new(s, (1, 2)).hash_prefix(name.value(), 2);
            let b = PrefixHasher::new(s, (3, 4)).hash_prefix(name.value(), 2);
            assert_ne!(a, b);
        }
    }

    proptest::proptest! {
        /// Every prefix's hash, finalised when asked for, is the `siphasher` crate's
        /// SipHash-1-3 of the prefix's bytes, whatever the component lengths (whole blocks,
        /// partial ones, components inside one block).
        #[test]
        fn lazy_siphash_is_siphash_1_3_of_each_prefix(
            components in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40), 1..40),
            k0: u64,
            k1: u64,
        ) {
            let name = components.iter().fold(Name::new(), |name, c| name.with_generic(c.clone()));
            let mut out = PrefixHashes::default();
            PrefixHasher::new(Strategy::VerifyAtEnd, (k0, k1)).hash_prefixes(name.value(), MAX_LEVELS, &mut out);
            proptest::prop_assert_eq!(out.len, components.len().min(MAX_LEVELS));
            for level in 1..=out.len {
                let mut oracle = siphasher::sip::SipHasher13::new_with_keys(k0, k1);
                oracle.write(&name.value()[..out.ends[level - 1] as usize]);
                proptest::prop_assert_eq!(out.hash(level), oracle.finish(), "level {}", level);
            }
        }
    }

    #[test]
    fn malformed_bytes_end_the_walk() {
        let mut out = PrefixHashes::default();
        PrefixHasher::new(Strategy::VerifyEach, (0, 0)).hash_prefixes(&[8, 1, b'a', 8, 5, b'b'], 8, &mut out);
        assert_eq!(out.len, 1);
        assert_eq!(count_components(&[8, 1, b'a', 8, 5, b'b']), 1);
    }
}
