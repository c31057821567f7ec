//! Keys: the hash of a full name (the L1 index) and the batch a chunk belongs to (the L2 index,
//! the shard a request goes to).
//!
//! A *batch* is B consecutive segments of one content: the chunk `/video/v=1/seg=37` with B = 10
//! is position 7 of batch 3 of content `/video/v=1`. A name whose last component is not a
//! SegmentNameComponent is a content of one chunk: batch 0, position 0. Names are handled as the
//! TLV-VALUE of their Name element (the concatenated component TLVs), so a prefix of a name is a
//! byte prefix that ends on a component boundary.

use core::hash::BuildHasher;

use nexthop_wire::{Component, ComponentRef, Kind, NameView};

/// Seed of the name hash; fixed so that shards, the L1 and the L2 agree across restarts.
const NAME_HASH_SEED: u64 = 0x6e65_7874_686f_7063;

/// The hash of a name's TLV-VALUE bytes (foldhash, fixed seed).
pub fn name_hash(name_value: &[u8]) -> u64 {
    foldhash::fast::FixedState::with_seed(NAME_HASH_SEED).hash_one(name_value)
}

/// Where a chunk sits: its content, its batch and its position in the batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchKey<'a> {
    /// The content name's TLV-VALUE (the chunk name without its segment component).
    pub content: &'a [u8],
    /// Segment number / B.
    pub batch: u64,
    /// Segment number % B.
    pub position: u32,
}

impl<'a> BatchKey<'a> {
    /// The batch of the chunk named `name` (TLV-VALUE) for batches of `batch_chunks` chunks.
    /// Names that do not decode are contents of one chunk.
    pub fn of(name: &'a [u8], batch_chunks: u32) -> Self {
        let b = u64::from(batch_chunks.max(1));
        let single = BatchKey { content: name, batch: 0, position: 0 };
        let Ok(view) = NameView::from_value(name) else { return single };
        match view.last().map(|c: ComponentRef<'_>| c.kind()) {
            Some(Kind::Segment(seg)) => {
                let content = view.prefix(view.len() - 1).value();
                BatchKey { content, batch: seg / b, position: (seg % b) as u32 }
            }
            _ => single,
        }
    }

    /// The batch `n` batches after this one, of the same content (position 0).
    pub fn batch_after(&self, n: u64) -> Self {
        BatchKey { content: self.content, batch: self.batch + n, position: 0 }
    }

    /// Whether the name was a chunk of a segmented content (not a content of one chunk).
    pub fn is_segmented(&self, name: &[u8]) -> bool {
        self.content.len() < name.len()
    }

    /// Writes into `out` the TLV-VALUE of the name of the chunk at `position` of this batch.
    pub fn chunk_name(&self, position: u32, batch_chunks: u32, out: &mut Vec<u8>) {
        let segment = Component::segment(self.batch * u64::from(batch_chunks.max(1)) + u64::from(position));
        out.clear();
        out.extend_from_slice(self.content);
        // A SegmentNameComponent's type (50) and its ≤ 8-byte value each fit one TLV byte.
        out.extend_from_slice(&[segment.ty() as u8, segment.value().len() as u8]);
        out.extend_from_slice(segment.value());
    }

    /// The 64-bit hash of (content, batch): the L2 index key and the "Batch" shard key.
    pub fn hash(&self) -> u64 {
        name_hash(self.content) ^ self.batch.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{Component, Name};

    use super::*;

    #[test]
    fn segments_map_to_batches() {
        let content = Name::from_uri("/video/v=1").unwrap();
        let chunk = content.clone().with(Component::segment(37));
        let k = BatchKey::of(chunk.value(), 10);
        assert_eq!((k.content, k.batch, k.position), (content.value(), 3, 7));
        let same_batch = content.clone().with(Component::segment(30));
        assert_eq!(BatchKey::of(same_batch.value(), 10).hash(), k.hash());
        let next_batch = content.clone().with(Component::segment(40));
        assert_ne!(BatchKey::of(next_batch.value(), 10).hash(), k.hash());
        let plain = Name::from_uri("/a/b").unwrap();
        let p = BatchKey::of(plain.value(), 10);
        assert_eq!((p.content, p.batch, p.position), (plain.value(), 0, 0));
        assert_eq!(BatchKey::of(&[0xff], 10).content, &[0xff]);
    }

    #[test]
    fn the_next_batch_starts_where_this_one_ends() {
        let content = Name::from_uri("/video/v=1").unwrap();
        let chunk = content.clone().with(Component::segment(37));
        let k = BatchKey::of(chunk.value(), 10);
        assert!(k.is_segmented(chunk.value()));
        let mut name = Vec::new();
        k.batch_after(1).chunk_name(0, 10, &mut name);
        assert_eq!(name, content.clone().with(Component::segment(40)).value());
        let next = BatchKey::of(&name, 10);
        assert_eq!((next.batch, next.position, next.hash()), (4, 0, k.batch_after(1).hash()));
        let plain = Name::from_uri("/a/b").unwrap();
        assert!(!BatchKey::of(plain.value(), 10).is_segmented(plain.value()));
    }
}
