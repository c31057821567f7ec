//! Hashing many keys at once with SIMD (the paper's instruction-level parallelism): the hash of
//! `super::hash` — MurmurHash3's fmix64 of `key ^ SEED` — on 8 lanes (AVX-512F + DQ, which has
//! a 64-bit multiply), on 4 lanes (AVX2, the 64-bit multiply built from three 32×32 → 64
//! multiplies), or one key at a time. [`detect`] picks the widest the CPU has, once. (IPv6's
//! AVX-512 filter stage, in `bloomfwd6/avx512.rs`, uses the same 8-lane hash.)

#![allow(unsafe_code)]

use std::sync::OnceLock;

use super::hash::{hash64, M1, M2, SEED};

/// The instruction set a batch is hashed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// 8 keys per instruction (AVX-512F, DQ, VL and CD).
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
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512cd")
            {
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

#[cfg(target_arch = "x86_64")]
pub(super) use x86::fmix_avx512;

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
    pub(crate) fn fmix_avx512(keys: __m512i) -> __m512i {
        let mut x = _mm512_xor_si512(keys, _mm512_set1_epi64(SEED as i64));
        x = _mm512_xor_si512(x, _mm512_srli_epi64::<33>(x));
        x = _mm512_mullo_epi64(x, _mm512_set1_epi64(M1 as i64));
        x = _mm512_xor_si512(x, _mm512_srli_epi64::<33>(x));
        x = _mm512_mullo_epi64(x, _mm512_set1_epi64(M2 as i64));
        _mm512_xor_si512(x, _mm512_srli_epi64::<33>(x))
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
