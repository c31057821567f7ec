//! nexthop-lookup: the lookup tables of the forwarding plane, one module per family, no I/O.
//!
//! Families (each added by its own issue, each with the same shape):
//! - `name`: longest name prefix match by binary search of hash tables (ANCS'15).
//! - `flat`: exact match on flat names: Othello hashing and the Concise FIB (ToN'18).
//! - `ip`: IPv4/IPv6 longest prefix match with Bloom filters, CPE and DP-CPE.
//! - `tag`: TagNet descriptors (FAS/FLS subset matching) and Thorup–Zwick locators.
//!
//! The shape every family follows: a *control* side (insert, remove, build; may allocate and be
//! slow) and a *query* side (`lookup` one key and `lookup_batch` many; never allocates, never
//! locks, never panics), plus a simple reference structure used as the oracle in property tests
//! and in every benchmark's correctness check. The [`Lookup`] trait is that query side.

#![deny(unsafe_code)]

pub mod bits;
pub mod flat;
pub mod fuzzing;
pub mod ip;
pub mod mem;
pub mod name;
pub mod region;
pub mod table_file;
pub mod tag;

/// The query side of a lookup table, shared by every family so the forwarder and the lab can
/// drive them alike.
pub trait Lookup<K: ?Sized> {
    /// What a lookup returns (a next-hop set, an action, a port list…).
    type Answer: Copy + PartialEq + core::fmt::Debug;

    /// Looks up one key.
    fn lookup(&self, key: &K) -> Self::Answer;

    /// Looks up `keys[i]` into `out[i]` for `i < min(keys.len(), out.len())`. The default is the
    /// single lookup in a loop; fast tables override it to hash ahead and prefetch.
    fn lookup_batch(&self, keys: &[&K], out: &mut [Self::Answer]) {
        for (k, o) in keys.iter().zip(out.iter_mut()) {
            *o = self.lookup(k);
        }
    }
}

/// Runs `f` over `items` and `out` split into `threads` contiguous shares (one scoped thread
/// each; `threads` ≤ 1 runs on the caller): the multi-threaded form of every batch lookup.
pub fn parallel<Q: Sync, A: Send>(items: &[Q], out: &mut [A], threads: usize, f: impl Fn(&[Q], &mut [A]) + Sync) {
    let n = items.len().min(out.len());
    let threads = threads.clamp(1, n.max(1));
    if threads == 1 {
        f(&items[..n], &mut out[..n]);
        return;
    }
    let share = n.div_ceil(threads);
    std::thread::scope(|s| {
        for (q, o) in items[..n].chunks(share).zip(out[..n].chunks_mut(share)) {
            let f = &f;
            s.spawn(move || f(q, o));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Parity;
    impl Lookup<u32> for Parity {
        type Answer = bool;
        fn lookup(&self, key: &u32) -> bool {
            key.is_multiple_of(2)
        }
    }

    #[test]
    fn default_batch_matches_single() {
        let keys = [1u32, 2, 3, 4];
        let refs: Vec<&u32> = keys.iter().collect();
        let mut out = [false; 4];
        Parity.lookup_batch(&refs, &mut out);
        assert_eq!(out, [false, true, false, true]);
    }
}
