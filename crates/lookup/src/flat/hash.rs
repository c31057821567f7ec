//! The hash pair ⟨h_a, h_b⟩ and the checksum of a name, from one 64-bit keyed hash.
//!
//! The paper derives h_a and h_b from two seeded CRC32c runs. Here one foldhash run with the
//! structure's seed gives 64 bits: the upper 32 pick the A cell, the lower 32 the B cell (each
//! masked to its power-of-two size), and a multiply-xorshift of the whole gives the optional
//! checksum bits. A new seed is a new, independent pair — what reconstruction needs.

use core::hash::{BuildHasher, Hasher};

/// The hash of `key` under `seed`.
#[inline(always)]
pub fn key_hash(seed: u64, key: &[u8]) -> u64 {
    KeyHasher::new(seed).hash(key)
}

/// [`key_hash`] under one seed, for many keys: the seed's preparation done once.
#[derive(Debug, Clone)]
pub struct KeyHasher(foldhash::fast::FixedState);

impl KeyHasher {
    /// The hasher of `seed`.
    #[inline(always)]
    pub fn new(seed: u64) -> Self {
        KeyHasher(foldhash::fast::FixedState::with_seed(seed))
    }

    /// [`key_hash`]`(seed, key)`.
    #[inline(always)]
    pub fn hash(&self, key: &[u8]) -> u64 {
        // The bytes alone, without the length prefix `Hash for [u8]` adds: one mixing round less.
        let mut h = self.0.build_hasher();
        h.write(key);
        h.finish()
    }
}

/// (A index, B index) of a hash for tables of 2^ma_bits and 2^mb_bits cells.
#[inline(always)]
pub fn cells(hash: u64, ma_bits: u32, mb_bits: u32) -> (usize, usize) {
    let a = (hash >> 32) as usize & ((1usize << ma_bits) - 1);
    let b = hash as u32 as usize & ((1usize << mb_bits) - 1);
    (a, b)
}

/// The `bits`-bit checksum of a hash (0 when `bits` is 0).
#[inline(always)]
pub fn checksum(hash: u64, bits: u32) -> u32 {
    if bits == 0 {
        return 0;
    }
    let mut x = hash ^ 0x9e37_79b9_7f4a_7c15;
    x = (x ^ (x >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 29;
    (x >> (64 - bits)) as u32
}

/// The checksum bits as a cell stores them, above the `value_bits` of the action (0 when `bits`
/// is 0 — then l may fill the whole cell, and nothing is shifted).
#[inline(always)]
pub fn checksum_above(hash: u64, bits: u32, value_bits: u32) -> u32 {
    if bits == 0 {
        0
    } else {
        checksum(hash, bits) << value_bits
    }
}

/// The next seed to try after `seed` (splitmix64).
pub fn next_seed(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
