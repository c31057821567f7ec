//! The cells of an l-bit Parallel Othello Group: `u8`, `u16` or `u32` by l (plus checksum bits),
//! held as atomics in the query structure so a writer can patch them while readers query.
//! Relaxed atomic loads and stores compile to plain moves on x86-64 and AArch64.

use core::fmt::Debug;
use core::sync::atomic::Ordering;

use super::sync::{AtomicU16, AtomicU32, AtomicU8};

/// An unsigned cell type of `BITS` bits and its atomic twin.
pub trait Cell: Copy + Default + Eq + Debug + Send + Sync + 'static {
    /// Bits in a cell.
    const BITS: u32;
    /// The atomic form kept in the query structure.
    type Atomic: Send + Sync + Debug;
    /// The low `BITS` bits of `v`.
    fn from_u32(v: u32) -> Self;
    /// Widened.
    fn to_u32(self) -> u32;
    /// An atomic cell holding `v`.
    fn atomic(v: Self) -> Self::Atomic;
    /// Relaxed load.
    fn load(a: &Self::Atomic) -> Self;
    /// Relaxed store.
    fn store(a: &Self::Atomic, v: Self);
}

macro_rules! cell {
    ($t:ty, $atomic:ty) => {
        impl Cell for $t {
            const BITS: u32 = <$t>::BITS;
            type Atomic = $atomic;
            #[inline(always)]
            fn from_u32(v: u32) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_u32(self) -> u32 {
                u32::from(self)
            }
            fn atomic(v: Self) -> Self::Atomic {
                <$atomic>::new(v)
            }
            #[inline(always)]
            fn load(a: &Self::Atomic) -> Self {
                a.load(Ordering::Relaxed)
            }
            #[inline(always)]
            fn store(a: &Self::Atomic, v: Self) {
                a.store(v, Ordering::Relaxed)
            }
        }
    };
}

cell!(u8, AtomicU8);
cell!(u16, AtomicU16);
cell!(u32, AtomicU32);
