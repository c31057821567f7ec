//! IPv4 and IPv6 longest prefix match with Bloom filters (Lucchesi, Drummond, Teodoro 2018, after
//! Dharmapurikar et al.), the paper's MIHT baseline, a DIR-24-8 peer and a binary-trie oracle.
//!
//! # Overview
//! - [`Bloomfwd4`]: controlled prefix expansion (CPE) of IPv4 routes into three groups — a
//!   direct lookup array of 2^20 next hops for lengths ≤ 20, and two Bloom filter + hash table
//!   pairs for /21–/24 (expanded to /24) and /25–/32 (expanded to /32) — searched longest first.
//! - [`Bloomfwd6`]: IPv6 with one Bloom filter + hash table per expansion level, the levels chosen
//!   by [`dp_cpe`] (a dynamic program over the prefix-length histogram; /64 always a level), plus
//!   one pair per used length above /64, which are never expanded.
//! - Both keep the routes they were given (the control side) so a route can be inserted or
//!   removed at any time: an expanded slot records the length of the route that owns it, so a
//!   longer route is never overwritten by a shorter one (prefix capture) and removing a route
//!   hands its slots back to the next shorter route in its group.
//! - The Bloom filters are asymmetric (each sized for its own group and a target false-positive
//!   rate; the paper found 30% best, 1% measures best on this machine), counting (so routes can
//!   be removed), register-blocked (a key's k bits in one word, at g_i = a + i·b), from one 64-bit
//!   hash whose upper half also addresses the hash table.
//! - Additions to the paper, each switchable: a guard bit per direct-array cell (no route longer
//!   than the array's width below → the array answers alone), on IPv4's /20 array and on a /16
//!   front array for IPv6; and an IPv6 gate (a direct-indexed mask per /29 under each guarded
//!   /16 → the levels holding routes there, so only those are searched).
//! - Batch lookups hash blocks of addresses with SIMD ([`simd`]: AVX-512, AVX2 or scalar,
//!   chosen at run time) and prefetch array cells, filter words and table slots steps ahead of
//!   resolving them; [`parallel_batch`] splits a batch over threads.
//! - Peers and oracle: [`Miht`] ((k, m) multi-index hybrid trie: B+ tree of k-bit keys + priority
//!   tries), [`Dir24`] (the DPDK rte_lpm layout) and [`BinaryTrie`] (the oracle).
//! - [`routes`]: route files (`prefix/len next-hop` per line, the RouteViews-derived pyasn format),
//!   every bad line a typed error naming it.

mod bloom;
mod bloomfwd4;
mod bloomfwd6;
mod dir24;
mod direct;
mod dpcpe;
mod gate;
mod group;
mod hash;
mod miht;
mod reference;
pub mod routes;
pub mod simd;
mod table;

pub use bloomfwd4::{Bloomfwd4, DLA_BITS, PAPER_DLA_BITS};
pub use bloomfwd6::{histogram as bloomfwd6_histogram, Bloomfwd6};
pub use dir24::Dir24;
pub use dpcpe::{dp_cpe, expanded_count};
pub use miht::{Miht, Miht4, Miht6};
pub use reference::BinaryTrie;
pub use routes::{parse_routes, Route, RouteSet};

/// A next hop: an index the forwarder maps to a face. [`NO_ROUTE`] means no prefix matched.
pub type NextHop = u32;

/// The answer for an address no route covers.
pub const NO_ROUTE: NextHop = u32::MAX;

/// The largest next hop a route may carry (the direct arrays keep two bits of each cell for their
/// guards).
pub const MAX_NEXT_HOP: NextHop = (1 << 30) - 2;

/// The most slots one IPv6 route may expand to (2^20).
pub const MAX_EXPANSION: u64 = 1 << 20;

/// The target false-positive rate of the Bloom filters when none is given: 10%, the best of the
/// `ip-lpm` sweeps on an AMD EPYC (IPv6 matching traffic, and IPv4 without the guard; IPv4 with
/// it barely moves). The paper found 30% best on its Xeon Phi; here a blocked filter probe is one
/// word whatever k is, and each false positive costs a table read.
pub const DEFAULT_FPR: f64 = 0.1;

/// Errors of the IP tables: every one leaves what is installed unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IpError {
    /// A prefix length beyond the address width.
    #[error("prefix length {len} is longer than {max}")]
    LengthTooLong {
        /// The length given.
        len: u8,
        /// 32 or 128.
        max: u8,
    },
    /// Bits set after the prefix length (`10.0.0.1/8`).
    #[error("host bits are set after /{len}")]
    HostBitsSet {
        /// The length given.
        len: u8,
    },
    /// A next hop of [`NO_ROUTE`] or above [`MAX_NEXT_HOP`].
    #[error("next hop {0} is out of range (at most {MAX_NEXT_HOP})")]
    BadNextHop(u64),
    /// Removing a route that is not installed.
    #[error("no route {0} is installed")]
    NoSuchRoute(String),
    /// A route whose expansion to its level would take more than [`MAX_EXPANSION`] slots.
    #[error("a /{len} route would expand to 2^{} slots at level /{level}; choose levels with one nearer", level - len)]
    ExpansionTooLarge {
        /// The route's length.
        len: u8,
        /// The level it expands to.
        level: u8,
    },
    /// Expansion levels that are not ascending lengths in 1..=64 ending with 64.
    #[error("bad expansion levels {0:?}: ascending lengths in 1..=64, the last one 64")]
    BadLevels(Vec<u8>),
    /// A line of a route file that does not parse.
    #[error("line {line}: {reason}")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// An address family's address as an unsigned integer, most significant bit first.
pub trait Address: Copy + Eq + Ord + core::hash::Hash + core::fmt::Debug + Send + Sync + 'static {
    /// 32 or 128.
    const BITS: u8;
    /// The all-zero address.
    const ZERO: Self;
    /// Bit `i` counted from the most significant (0).
    fn bit(self, i: u8) -> bool;
    /// The address with only its first `len` bits kept.
    fn masked(self, len: u8) -> Self;
    /// Widened to 128 bits, left-aligned (the first bit is bit 127).
    fn to_u128_left(self) -> u128;
}

impl Address for u32 {
    const BITS: u8 = 32;
    const ZERO: Self = 0;
    #[inline(always)]
    fn bit(self, i: u8) -> bool {
        (self >> (31 - i)) & 1 == 1
    }
    #[inline(always)]
    fn masked(self, len: u8) -> Self {
        if len == 0 {
            0
        } else {
            self & (u32::MAX << (32 - u32::from(len)))
        }
    }
    fn to_u128_left(self) -> u128 {
        u128::from(self) << 96
    }
}

impl Address for u128 {
    const BITS: u8 = 128;
    const ZERO: Self = 0;
    #[inline(always)]
    fn bit(self, i: u8) -> bool {
        (self >> (127 - i)) & 1 == 1
    }
    #[inline(always)]
    fn masked(self, len: u8) -> Self {
        if len == 0 {
            0
        } else {
            self & (u128::MAX << (128 - u32::from(len)))
        }
    }
    fn to_u128_left(self) -> u128 {
        self
    }
}

/// Checks a route before anything is installed: length, host bits, next hop.
///
/// # Errors
/// [`IpError::LengthTooLong`], [`IpError::HostBitsSet`] or [`IpError::BadNextHop`].
pub fn check_route<A: Address>(prefix: A, len: u8, next_hop: NextHop) -> Result<(), IpError> {
    if len > A::BITS {
        return Err(IpError::LengthTooLong { len, max: A::BITS });
    }
    if prefix.masked(len) != prefix {
        return Err(IpError::HostBitsSet { len });
    }
    if next_hop > MAX_NEXT_HOP {
        return Err(IpError::BadNextHop(u64::from(next_hop)));
    }
    Ok(())
}

/// Runs `batch(addrs_chunk, out_chunk)` over `threads` threads, each taking a contiguous share
/// (the paper's thread-level parallelism over a batch of addresses).
pub fn parallel_batch<A: Sync>(addrs: &[A], out: &mut [NextHop], threads: usize, batch: impl Fn(&[A], &mut [NextHop]) + Sync) {
    crate::parallel(addrs, out, threads, batch);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_bits() {
        assert_eq!(0x0a01_0203u32.masked(8), 0x0a00_0000);
        assert_eq!(0x0a01_0203u32.masked(0), 0);
        assert_eq!(0x0a01_0203u32.masked(32), 0x0a01_0203);
        assert!(0x8000_0000u32.bit(0) && !0x8000_0000u32.bit(1));
        assert_eq!((u128::MAX).masked(64), u128::MAX << 64);
        assert!(check_route(0x0a00_0000u32, 8, 1).is_ok());
        assert_eq!(check_route(0x0a00_0001u32, 8, 1), Err(IpError::HostBitsSet { len: 8 }));
        assert_eq!(check_route(0u32, 33, 1), Err(IpError::LengthTooLong { len: 33, max: 32 }));
        assert_eq!(check_route(0u32, 0, NO_ROUTE), Err(IpError::BadNextHop(u64::from(NO_ROUTE))));
    }

    #[test]
    fn parallel_batch_covers_every_address() {
        let addrs: Vec<u32> = (0..1001).collect();
        let mut out = vec![0; 1001];
        parallel_batch(&addrs, &mut out, 3, |a, o| {
            for (x, y) in a.iter().zip(o.iter_mut()) {
                *y = x * 2;
            }
        });
        assert!(out.iter().enumerate().all(|(i, &v)| v == 2 * i as u32));
    }
}
