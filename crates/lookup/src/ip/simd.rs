//! Hashing many keys at once with SIMD (the paper's instruction-level parallelism): the hash of
//! `super::hash` — MurmurHash3's fmix64 of `key ^ SEED` — on 8 lanes (AVX-512F + DQ, which has
//! a 64-bit multiply), on 4 lanes (AVX2, the 64-bit multiply built from three 32×32 → 64
//! multiplies), or one key at a time. [`detect`] picks the widest the CPU has, once.

#![allow(unsafe_code)]

use std::sync::OnceLock;

use super::hash::{hash64, M1, M2, SEED};

/// The instruction set a batch is hashed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// 8 keys per instruction.
    Avx512,
    /// 4 keys per instruction.
    Avx2,
    /// One key at a time.
    Scalar,
}

impl Isa {
    /// Its name in results.
    pub fn label(self) -> &'static str {
        match self {
            Isa::Avx512 => "avx512",
            Isa::Avx2 => "avx2",
            Isa::Scalar => "scalar",
        }
    }
}

/// The widest instruction set this CPU has (checked once).
pub fn detect() -> Isa {
    static ISA: OnceLock<Isa> = OnceLock::new();
    *ISA.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512dq") {
                return Isa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Scalar
    })
}

/// `out[i] = hash64(keys[i])` for every i, with `isa` (which must be one [`detect`] allows, or
/// narrower; a wider one than the CPU has falls back to scalar).
pub fn hash_keys(isa: Isa, keys: &[u64], out: &mut [u64]) {
    let n = keys.len().min(out.len());
    let (keys, out) = (&keys[..n], &mut out[..n]);
    let done = match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 if detect() == Isa::Avx512 => {
            // SAFETY: avx512f and avx512dq were detected at run time just above.
            unsafe { x86::hash_avx512(keys, out) }
        }
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 if detect() != Isa::Scalar => {
            // SAFETY: avx2 was detected at run time (Avx512 implies it was checked first and
            // every AVX-512 CPU has AVX2; Avx2 means it was detected).
            unsafe { x86::hash_avx2(keys, out) }
        }
        _ => 0,
    };
    for (k, o) in keys[done..].iter().zip(&mut out[done..]) {
        *o = hash64(*k);
    }
}

/// Up to 8 Bloom filters probed together, one per 64-bit lane: IPv6 Bloomfwd's levels, each a
/// filter over keys of up to 64 bits, the address's top `bits` bits. It borrows the filters' words,
/// so they cannot change while it is in use.
#[derive(Debug, Clone, Copy, Default)]
pub struct FilterLanes<'a> {
    /// Address of each filter's first word (0 for an unused lane).
    words: [u64; 8],
    /// Words of each filter.
    len: [u64; 8],
    /// How far an address's top 64 bits shift right to give the lane's key.
    shift: [u64; 8],
    /// Probes per key (k) of each filter.
    k: [u64; 8],
    /// The largest k.
    k_max: u64,
    /// Lanes in use.
    used: u8,
    filters: core::marker::PhantomData<&'a [u64]>,
}

impl<'a> FilterLanes<'a> {
    /// Adds the next lane: a filter's `words` with `k` probes per key, over keys of the address's
    /// first `bits` bits (1..=64). Returns `false` (and adds nothing) when all 8 are taken or the
    /// filter is empty.
    pub fn push(&mut self, words: &'a [u64], k: u32, bits: u8) -> bool {
        let j = self.used.count_ones() as usize;
        if j == 8 || words.is_empty() || !(1..=64).contains(&bits) {
            return false;
        }
        self.words[j] = words.as_ptr() as u64;
        self.len[j] = words.len() as u64;
        self.shift[j] = u64::from(64 - bits);
        self.k[j] = u64::from(k);
        self.k_max = self.k_max.max(u64::from(k));
        self.used |= 1 << j;
        true
    }

    /// For each address i (its top 64 bits `his[i]`) and the lanes set in `lanes[i]`: the hash of
    /// every lane's key into `hashes[i]` and, into `pass[i]`, the lanes whose filter may hold it —
    /// the test of `CountingBloom::contains` on 8 filters at once, one gather for
    /// their words. Returns `false`, doing nothing, when the CPU lacks AVX-512 (the caller then
    /// probes one filter at a time).
    pub fn probe(&self, his: &[u64], lanes: &[u8], hashes: &mut [[u64; 8]], pass: &mut [u8]) -> bool {
        #[cfg(target_arch = "x86_64")]
        if detect() == Isa::Avx512 {
            // SAFETY: AVX-512F and DQ were detected. Only lanes in use are gathered (the callee
            // masks with `used`), each lane's address and length come from a slice borrowed for
            // 'a, and the word index is a range reduction into 0..len.
            unsafe { x86::probe_filters_avx512(self, his, lanes, hashes, pass) };
            return true;
        }
        let _ = (his, lanes, hashes, pass);
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{M1, M2, SEED};
    use core::arch::x86_64::*;

    /// Hashes the first multiple of 8 keys; returns how many.
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) fn hash_avx512(keys: &[u64], out: &mut [u64]) -> usize {
        let whole = keys.len() / 8 * 8;
        for (k, o) in keys[..whole].chunks_exact(8).zip(out[..whole].chunks_exact_mut(8)) {
            // SAFETY: `k` and `o` are 8 u64s each (64 bytes); the unaligned load and store
            // intrinsics accept any address.
            unsafe { _mm512_storeu_si512(o.as_mut_ptr().cast(), fmix_avx512(_mm512_loadu_si512(k.as_ptr().cast()))) };
        }
        whole
    }

    /// [`super::hash64`] on 8 lanes: MurmurHash3's fmix64 of `key ^ SEED`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn fmix_avx512(keys: __m512i) -> __m512i {
        let mut x = _mm512_xor_si512(keys, _mm512_set1_epi64(SEED as i64));
        x = _mm512_xor_si512(x, _mm512_srli_epi64::<33>(x));
        x = _mm512_mullo_epi64(x, _mm512_set1_epi64(M1 as i64));
        x = _mm512_xor_si512(x, _mm512_srli_epi64::<33>(x));
        x = _mm512_mullo_epi64(x, _mm512_set1_epi64(M2 as i64));
        _mm512_xor_si512(x, _mm512_srli_epi64::<33>(x))
    }

    /// See [`super::FilterLanes::probe`].
    ///
    /// # Safety
    /// The CPU has AVX-512F and DQ; every lane in `f.used` describes a live filter (`words` the
    /// address of `len` readable `u64`s).
    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn probe_filters_avx512(
        f: &super::FilterLanes<'_>,
        his: &[u64],
        lanes: &[u8],
        hashes: &mut [[u64; 8]],
        pass: &mut [u8],
    ) {
        // SAFETY: (every intrinsic below) the loads and stores are of 64-byte arrays of the
        // arguments (unaligned forms); the gather reads only lanes in `f.used`, each inside its
        // filter by the caller's promise and the range reduction (index < len).
        unsafe {
            let load = |a: &[u64; 8]| _mm512_loadu_si512(a.as_ptr().cast());
            let (shift, len, base, k) = (load(&f.shift), load(&f.len), load(&f.words), load(&f.k));
            let (one, low_half, sixty_three) = (_mm512_set1_epi64(1), _mm512_set1_epi64(0xffff_ffff), _mm512_set1_epi64(63));
            for (((&hi, &want), hashes), pass) in his.iter().zip(lanes).zip(hashes.iter_mut()).zip(pass.iter_mut()) {
                let want = want & f.used;
                // Each lane's key, hashed as super::hash64.
                let h = fmix_avx512(_mm512_srlv_epi64(_mm512_set1_epi64(hi as i64), shift));
                _mm512_storeu_si512(hashes.as_mut_ptr().cast(), h);
                // The word: h1 (the upper half) scaled into 0..len, as a byte address.
                let word = _mm512_srli_epi64::<32>(_mm512_mul_epu32(_mm512_srli_epi64::<32>(h), len));
                let at = _mm512_add_epi64(base, _mm512_slli_epi64::<3>(word));
                let words = _mm512_mask_i64gather_epi64::<1>(_mm512_setzero_si512(), want, at, core::ptr::null());
                // The bits: h2 = low half | 1; probe i sets bit (h2/2 + i·((h2 >> 7) | 1)) mod 64.
                let h2 = _mm512_or_si512(_mm512_and_si512(h, low_half), one);
                let (mut bit, step) = (_mm512_srli_epi64::<1>(h2), _mm512_or_si512(_mm512_srli_epi64::<7>(h2), one));
                let mut mask = _mm512_setzero_si512();
                for i in 0..f.k_max {
                    let live = _mm512_cmpgt_epu64_mask(k, _mm512_set1_epi64(i as i64));
                    mask = _mm512_mask_or_epi64(mask, live, mask, _mm512_sllv_epi64(one, _mm512_and_si512(bit, sixty_three)));
                    bit = _mm512_add_epi64(bit, step);
                }
                *pass = _mm512_mask_cmpeq_epi64_mask(want, _mm512_and_si512(words, mask), mask);
            }
        }
    }

    /// Low 64 bits of a·b per lane, from 32×32 → 64 multiplies (AVX2 has no 64-bit one).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn mul64(a: __m256i, b: __m256i) -> __m256i {
        let lo = _mm256_mul_epu32(a, b);
        let cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64::<32>(a), b), _mm256_mul_epu32(a, _mm256_srli_epi64::<32>(b)));
        _mm256_add_epi64(lo, _mm256_slli_epi64::<32>(cross))
    }

    /// Hashes the first multiple of 4 keys; returns how many.
    #[target_feature(enable = "avx2")]
    pub(super) fn hash_avx2(keys: &[u64], out: &mut [u64]) -> usize {
        let whole = keys.len() / 4 * 4;
        let (seed, m1, m2) = (_mm256_set1_epi64x(SEED as i64), _mm256_set1_epi64x(M1 as i64), _mm256_set1_epi64x(M2 as i64));
        for (k, o) in keys[..whole].chunks_exact(4).zip(out[..whole].chunks_exact_mut(4)) {
            // SAFETY: `k` and `o` are 4 u64s each (32 bytes); loadu/storeu accept any alignment.
            unsafe {
                let mut x = _mm256_xor_si256(_mm256_loadu_si256(k.as_ptr().cast()), seed);
                x = _mm256_xor_si256(x, _mm256_srli_epi64::<33>(x));
                x = mul64(x, m1);
                x = _mm256_xor_si256(x, _mm256_srli_epi64::<33>(x));
                x = mul64(x, m2);
                x = _mm256_xor_si256(x, _mm256_srli_epi64::<33>(x));
                _mm256_storeu_si256(o.as_mut_ptr().cast(), x);
            }
        }
        whole
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_lanes_agree_with_the_filters() {
        use super::super::bloom::CountingBloom;
        // Filters of several sizes and k, each over keys of its own length.
        let shapes = [(40usize, 0.3, 25u8), (3000, 0.3, 32), (500, 0.01, 40), (16, 0.5, 48), (20_000, 0.1, 64)];
        let mut filters: Vec<(CountingBloom, u8)> = Vec::new();
        for (j, &(n, fpr, bits)) in shapes.iter().enumerate() {
            let mut b = CountingBloom::new(n, fpr);
            for i in 0..n as u64 {
                b.insert(hash64(i.wrapping_mul(0x9e37_79b9) ^ j as u64));
            }
            filters.push((b, bits));
        }
        let mut lanes = FilterLanes::default();
        for (b, bits) in &filters {
            let (words, k) = b.words();
            assert!(lanes.push(words, k, *bits));
        }
        let his: Vec<u64> = (0..4000u64).map(|i| hash64(i) ^ (i << 40)).collect();
        let wanted: Vec<u8> = (0..his.len()).map(|i| (i as u8).wrapping_mul(37) | 1).collect();
        let mut hashes = vec![[0u64; 8]; his.len()];
        let mut pass = vec![0u8; his.len()];
        if !lanes.probe(&his, &wanted, &mut hashes, &mut pass) {
            return; // no AVX-512 here: the callers probe one filter at a time
        }
        let mut passed = 0;
        for (i, &hi) in his.iter().enumerate() {
            for (j, (b, bits)) in filters.iter().enumerate() {
                let h = hash64(hi >> (64 - u32::from(*bits)));
                assert_eq!(hashes[i][j], h, "hash of lane {j}");
                let want = wanted[i] & (1 << j) != 0 && b.contains(h);
                assert_eq!(pass[i] & (1 << j) != 0, want, "address {i} lane {j}");
                passed += usize::from(want);
            }
            assert_eq!(pass[i] >> filters.len(), 0, "unused lanes never pass");
        }
        assert!(passed > 1000, "the filters pass some keys ({passed})");
    }

    #[test]
    fn every_isa_agrees_with_the_scalar_hash() {
        let keys: Vec<u64> = (0..1003u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7)).collect();
        let want: Vec<u64> = keys.iter().map(|&k| hash64(k)).collect();
        for isa in [Isa::Avx512, Isa::Avx2, Isa::Scalar] {
            let mut out = vec![0; keys.len()];
            hash_keys(isa, &keys, &mut out);
            assert_eq!(out, want, "{isa:?}");
        }
    }
}
