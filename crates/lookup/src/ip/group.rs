//! One Bloom filter + hash table pair: the unit Bloomfwd searches, one per expansion level.
//!
//! The filter is resized (rebuilt from the table's keys, at twice the size) when the table
//! outgrows the capacity it was sized for, so its false-positive rate stays near the target.

use super::bloom::CountingBloom;
use super::table::Key;
use super::table::PrefixTable;
use super::NextHop;

/// A Bloom filter and the table of the expanded prefixes it summarises.
#[derive(Debug, Clone)]
pub struct Group<K: Key> {
    bloom: CountingBloom,
    table: PrefixTable<K>,
    fpr: f64,
}

impl<K: Key> Group<K> {
    /// A group sized for `capacity` expanded prefixes at false-positive rate `fpr`.
    pub fn new(capacity: usize, fpr: f64) -> Self {
        Group { bloom: CountingBloom::new(capacity, fpr), table: PrefixTable::new(capacity), fpr }
    }

    /// The next hop of `key` (hash `h`), looking only in the table.
    #[inline(always)]
    pub fn get(&self, h: u64, key: K) -> Option<NextHop> {
        self.table.get(h, key)
    }

    /// The next hop of `key` from the table, its home bucket `b` ([`Self::home`]) already known.
    #[inline(always)]
    pub fn get_from(&self, b: usize, key: K) -> Option<NextHop> {
        self.table.get_from(b, key)
    }

    /// The table's home bucket for hash `h`.
    #[inline(always)]
    pub fn home(&self, h: u64) -> usize {
        self.table.home(h)
    }

    /// The table: what the AVX-512 filter stage reads bucket addresses from.
    pub fn table(&self) -> &PrefixTable<K> {
        &self.table
    }

    /// Filter, then table.
    #[inline(always)]
    pub fn find(&self, h: u64, key: K) -> Option<NextHop> {
        if self.bloom.contains(h) {
            self.table.get(h, key)
        } else {
            None
        }
    }

    /// Whether the filter may hold the key with hash `h`.
    #[inline(always)]
    pub fn filter_passes(&self, h: u64) -> bool {
        self.bloom.contains(h)
    }

    /// The filter's words and probes per key, for probing it with SIMD (IPv6's AVX-512 filter
    /// stage).
    pub fn filter_words(&self) -> (&[u64], u32) {
        self.bloom.words()
    }

    /// [`Self::get`] when `wanted`, else `None`, with no branch on `wanted` in the common case
    /// (the key in its home bucket, or no overflow past it).
    #[inline(always)]
    pub fn get_if(&self, h: u64, key: K, wanted: bool) -> Option<NextHop> {
        self.table.get_if(h, key, wanted)
    }

    /// Probes the filter for hash `h` and prefetches the table bucket when it passes, without a
    /// branch. Returns whether it passed.
    #[inline(always)]
    pub fn probe_and_prefetch(&self, h: u64) -> bool {
        let m = self.bloom.contains(h);
        self.table.prefetch_if(h, m);
        m
    }

    /// Prefetches the filter word hash `h` probes.
    #[inline(always)]
    pub fn prefetch_filter(&self, h: u64) {
        self.bloom.prefetch(h);
    }

    /// The (next hop, owning length) of `key`, for the control side.
    pub fn entry(&self, key: K) -> Option<(NextHop, u8)> {
        self.table.entry(key)
    }

    /// Sets `key` to (next hop, owning length).
    pub fn set(&mut self, key: K, next_hop: NextHop, len: u8) {
        if self.table.set(key, next_hop, len) {
            if self.table.len() > self.bloom.capacity() {
                self.resize_bloom(self.table.len() * 2);
            } else {
                self.bloom.insert(key.hash());
            }
        }
    }

    /// Removes `key`.
    pub fn remove(&mut self, key: K) {
        if self.table.remove(key) {
            self.bloom.remove(key.hash());
        }
    }

    /// Sizes table and filter for exactly what the group holds (after a bulk build).
    pub fn fit(&mut self) {
        self.table.fit();
        self.resize_bloom(self.table.len());
    }

    /// Rebuilds the filter for `capacity` keys.
    pub fn resize_bloom(&mut self, capacity: usize) {
        self.bloom = CountingBloom::new(capacity, self.fpr);
        for (k, _, _) in self.table.iter() {
            self.bloom.insert(k.hash());
        }
    }

    /// Expanded prefixes held.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Bytes a lookup may touch (filter bits and table) and bytes of the filter's counters.
    pub fn bytes(&self) -> (usize, usize) {
        (self.bloom.query_bytes() + self.table.bytes(), self.bloom.bytes() - self.bloom.query_bytes() + self.table.control_bytes())
    }

    /// Filter bits (m) and probes (k).
    pub fn bloom_shape(&self) -> (usize, u32) {
        self.bloom.shape()
    }
}

#[cfg(target_arch = "x86_64")]
impl Group<u64> {
    /// [`Self::get_from`] with the table's buckets compared in AVX-512.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub fn get_from_avx512(&self, b: usize, key: u64) -> Option<NextHop> {
        self.table.get_from_avx512(b, key)
    }
}
