//! The one hash every Bloom filter and hash table of the IP tables uses (the paper's reuse: the
//! filter's hash also addresses its table).
//!
//! A key (a prefix's bits, right-aligned) is mixed by MurmurHash3's 64-bit finaliser, a
//! bijection, so distinct keys of up to 64 bits never share a hash. Its upper half is h1, its
//! lower half (made odd) is h2; filter probe i reads bit g_i = h1 + i·h2 (Kirsch–Mitzenmacher),
//! and the table's home slot is h1. Indices come from a multiply-shift range reduction, so no
//! structure needs a power-of-two size. [`super::simd`] computes the same function on vectors.

/// Mixed into every key before the finaliser (so the key 0 does not hash to 0).
pub(crate) const SEED: u64 = 0x9e37_79b9_7f4a_7c15;
/// MurmurHash3 fmix64 multipliers.
pub(crate) const M1: u64 = 0xff51_afd7_ed55_8ccd;
pub(crate) const M2: u64 = 0xc4ce_b9fe_1a85_ec53;

/// The hash of a key of up to 64 bits.
#[inline(always)]
pub fn hash64(key: u64) -> u64 {
    let mut k = key ^ SEED;
    k ^= k >> 33;
    k = k.wrapping_mul(M1);
    k ^= k >> 33;
    k = k.wrapping_mul(M2);
    k ^ (k >> 33)
}

/// The table's and the first filter probe's hash.
#[inline(always)]
pub fn h1(h: u64) -> u32 {
    (h >> 32) as u32
}

/// The filter's probe stride (odd, so the k probes differ).
#[inline(always)]
pub fn h2(h: u64) -> u32 {
    h as u32 | 1
}

/// `x` scaled into `0..n` (Lemire's multiply-shift reduction).
#[inline(always)]
pub fn reduce(x: u32, n: usize) -> usize {
    ((u64::from(x) * n as u64) >> 32) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::table::Key;

    #[test]
    fn reduce_stays_in_range_and_spreads() {
        assert_eq!(reduce(0, 10), 0);
        assert_eq!(reduce(u32::MAX, 10), 9);
        let mut hits = [0u32; 8];
        for k in 0..80_000u32 {
            hits[reduce(h1(k.hash()), 8)] += 1;
        }
        assert!(hits.iter().all(|&h| (9_000..11_000).contains(&h)), "{hits:?}");
    }

    #[test]
    fn distinct_keys_distinct_hashes() {
        let mut seen = std::collections::HashSet::new();
        assert!((0..100_000u64).all(|k| seen.insert(hash64(k))));
        assert_ne!(1u128.hash(), (1u128 << 64).hash());
    }
}
