//! Sharding: which thread's store a request goes to.
//!
//! The paper's two schemes (section 3.2.3): **Content** hashes the content name (all chunks of a
//! content on one thread — a popular content loads one thread), **Batch** hashes (content name,
//! batch index) so consecutive batches of a popular content spread over threads while every chunk
//! of one batch still lands where its prefetch put it. Each shard is a whole store owned by one
//! thread, so the hot path takes no lock.

use crate::key::{name_hash, BatchKey};

/// What the shard hash is computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HashScheme {
    /// (content name, segment / B).
    #[default]
    Batch,
    /// The content name.
    Content,
}

impl HashScheme {
    /// `batch` or `content`.
    pub fn name(self) -> &'static str {
        match self {
            HashScheme::Batch => "batch",
            HashScheme::Content => "content",
        }
    }
}

/// The shard (0..shards) of the chunk named `name` (TLV-VALUE).
pub fn shard_of(name: &[u8], scheme: HashScheme, batch_chunks: u32, shards: usize) -> usize {
    let key = BatchKey::of(name, batch_chunks);
    let h = match scheme {
        HashScheme::Batch => key.hash(),
        HashScheme::Content => name_hash(key.content),
    };
    ((u128::from(h) * shards as u128) >> 64) as usize
}

/// max / mean of per-shard loads (1.0 = perfectly balanced).
pub fn imbalance(loads: &[u64]) -> f64 {
    let total: u64 = loads.iter().sum();
    if total == 0 || loads.is_empty() {
        return 1.0;
    }
    let mean = total as f64 / loads.len() as f64;
    *loads.iter().max().unwrap_or(&0) as f64 / mean
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{Component, Name};

    use super::*;

    #[test]
    fn a_batch_stays_on_one_shard_and_batches_spread() {
        let content = Name::from_uri("/popular/video").unwrap();
        let name = |seg| content.clone().with(Component::segment(seg));
        let shard = |seg, scheme| shard_of(name(seg).value(), scheme, 10, 8);
        for b in 0..50u64 {
            let first = shard(b * 10, HashScheme::Batch);
            assert!((b * 10..b * 10 + 10).all(|s| shard(s, HashScheme::Batch) == first));
        }
        let content_shards: std::collections::HashSet<_> = (0..500).map(|s| shard(s, HashScheme::Content)).collect();
        let batch_shards: std::collections::HashSet<_> = (0..500).map(|s| shard(s, HashScheme::Batch)).collect();
        assert_eq!(content_shards.len(), 1);
        assert_eq!(batch_shards.len(), 8);
        assert_eq!(imbalance(&[2, 2, 2, 2]), 1.0);
        assert_eq!(imbalance(&[4, 0, 0, 0]), 4.0);
    }
}
