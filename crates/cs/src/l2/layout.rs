//! The on-disk layout of a batch slot: B chunk slots of `chunk_slot_bytes` each (then zero
//! padding to whole device blocks), every chunk slot a 32-byte header and the Data packet's
//! wire bytes.
//!
//! ```text
//! chunk slot:  magic "NHC1" u32 | wire_len u32 | batch key u64 | fresh_until_ms u64
//!              | position u16 | reserved u16 | crc32c u32 | wire bytes … (zero padding)
//! ```
//! All integers little-endian. The CRC-32C covers the first 28 header bytes and the wire bytes,
//! so a flipped byte, a torn write (a slot half old, half new) or a chunk of another batch left in
//! a reused slot is detected and the chunk is not served. A zero magic marks an empty position
//! (a batch written before all its chunks arrived).

use crate::error::InsertError;

/// Bytes of a chunk header.
pub const HEADER_BYTES: usize = 32;
const MAGIC: u32 = u32::from_le_bytes(*b"NHC1");

/// One chunk read back from a batch slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredChunk<'a> {
    /// Position in the batch.
    pub position: u16,
    /// When the packet stops being fresh (the store's milliseconds).
    pub fresh_until_ms: u64,
    /// The Data packet.
    pub wire: &'a [u8],
}

/// What a chunk slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded<'a> {
    /// Nothing was written at this position.
    Empty,
    /// A chunk whose checksum and batch key are right.
    Chunk(StoredChunk<'a>),
    /// Bytes that fail the checksum, the framing or belong to another batch.
    Corrupt,
}

/// Writes a chunk into `slot` (one chunk slot of a batch buffer).
///
/// # Errors
/// [`InsertError::TooLarge`] when the packet does not fit after the header.
pub fn encode(slot: &mut [u8], key: u64, position: u16, fresh_until_ms: u64, wire: &[u8]) -> Result<(), InsertError> {
    let max = slot.len().saturating_sub(HEADER_BYTES);
    if wire.len() > max {
        return Err(InsertError::TooLarge { len: wire.len(), max });
    }
    slot[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    slot[4..8].copy_from_slice(&(wire.len() as u32).to_le_bytes());
    slot[8..16].copy_from_slice(&key.to_le_bytes());
    slot[16..24].copy_from_slice(&fresh_until_ms.to_le_bytes());
    slot[24..26].copy_from_slice(&position.to_le_bytes());
    slot[26..28].copy_from_slice(&[0, 0]);
    slot[HEADER_BYTES..HEADER_BYTES + wire.len()].copy_from_slice(wire);
    let crc = checksum(&slot[..28], wire);
    slot[28..32].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// Marks `slot` empty.
pub fn clear(slot: &mut [u8]) {
    slot[..HEADER_BYTES].fill(0);
}

/// Reads the chunk in `slot`, expecting batch key `key` at `position`.
pub fn decode(slot: &[u8], key: u64, position: u16) -> Decoded<'_> {
    let word = |r: std::ops::Range<usize>| slot.get(r).map_or(0, |b| b.iter().rev().fold(0u64, |acc, &x| acc << 8 | u64::from(x)));
    if slot.len() < HEADER_BYTES {
        return Decoded::Corrupt;
    }
    let magic = word(0..4) as u32;
    if magic == 0 && slot[..HEADER_BYTES].iter().all(|&b| b == 0) {
        return Decoded::Empty;
    }
    let len = word(4..8) as usize;
    if magic != MAGIC || len > slot.len() - HEADER_BYTES || word(8..16) != key || word(24..26) as u16 != position {
        return Decoded::Corrupt;
    }
    let wire = &slot[HEADER_BYTES..HEADER_BYTES + len];
    if checksum(&slot[..28], wire) != word(28..32) as u32 {
        return Decoded::Corrupt;
    }
    Decoded::Chunk(StoredChunk { position, fresh_until_ms: word(16..24), wire })
}

fn checksum(header: &[u8], wire: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(header), wire)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_flipped_byte_is_caught() {
        let mut slot = vec![0u8; 128];
        assert_eq!(decode(&slot, 9, 3), Decoded::Empty);
        encode(&mut slot, 9, 3, 77, b"hello world").unwrap();
        let Decoded::Chunk(c) = decode(&slot, 9, 3) else { panic!("not decoded") };
        assert_eq!((c.position, c.fresh_until_ms, c.wire), (3, 77, &b"hello world"[..]));
        assert_eq!(decode(&slot, 8, 3), Decoded::Corrupt, "another batch's chunk");
        assert_eq!(decode(&slot, 9, 4), Decoded::Corrupt, "another position");
        for i in 0..HEADER_BYTES + 11 {
            for bit in 0..8 {
                let mut bad = slot.clone();
                bad[i] ^= 1 << bit;
                assert_eq!(decode(&bad, 9, 3), Decoded::Corrupt, "byte {i} bit {bit}");
            }
        }
        assert!(matches!(encode(&mut slot, 9, 3, 0, &[0; 97]), Err(InsertError::TooLarge { len: 97, max: 96 })));
        clear(&mut slot);
        assert_eq!(decode(&slot, 9, 3), Decoded::Empty);
    }
}
