//! The PIT token nexthop puts on every Interest it forwards (NDNLPv2 PitToken): 6 bytes naming
//! the forwarding shard, the PIT slot and the slot's generation. A Data or Nack that comes back
//! with the token goes straight to its shard and entry — no name lookup — which is how
//! NDN-DPDK dispatches returning packets. A token that does not check out (wrong length,
//! shard, slot or generation) is ignored and the packet is matched by name; one that does is
//! still checked against the entry (Data by name, a Nack by face and nonce), so the 16-bit
//! generation only has to make a stale token rare, not impossible.
//!
//! Six bytes, not eight: NDNd (v1.5.3) echoes a downstream's PitToken only if it is 6 bytes long
//! and otherwise stops with a panic ("Outgoing PIT token length must be 6 bytes") when the Data
//! comes back — found by the NDNd interoperability test. NDNLPv2 allows 1 to 32 octets.
//!
//! ```text
//! byte 0     1 2 3                 4 5
//!      shard slot (24 bits, BE)    generation (low 16 bits, BE)
//! ```

/// Bytes in a token.
pub const TOKEN_LEN: usize = 6;
/// PIT slots a shard may have: the token holds 24 bits of slot.
pub const MAX_SLOTS: usize = 1 << 24;

/// A decoded token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PitToken {
    /// Forwarding shard.
    pub shard: u8,
    /// PIT slot in that shard.
    pub slot: u32,
    /// Generation of the slot (low 16 bits).
    pub generation: u32,
}

impl PitToken {
    /// The token's bytes.
    pub fn encode(&self) -> [u8; TOKEN_LEN] {
        debug_assert!((self.slot as usize) < MAX_SLOTS, "the PIT's bound keeps slots below 2^24");
        let s = self.slot.to_be_bytes();
        let g = (self.generation as u16).to_be_bytes();
        [self.shard, s[1], s[2], s[3], g[0], g[1]]
    }

    /// The token in `bytes`, when it has the right length.
    pub fn decode(bytes: &[u8]) -> Option<PitToken> {
        let b: &[u8; TOKEN_LEN] = bytes.try_into().ok()?;
        Some(PitToken {
            shard: b[0],
            slot: u32::from_be_bytes([0, b[1], b[2], b[3]]),
            generation: u32::from(u16::from_be_bytes([b[4], b[5]])),
        })
    }

    /// True when `generation` (a full 32-bit slot generation) is the one this token names.
    pub fn names_generation(&self, generation: u32) -> bool {
        self.generation == generation & 0xffff
    }
}

/// A downstream's PIT token, kept inline (1–32 octets) so an in-record needs no allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBuf {
    len: u8,
    bytes: [u8; 32],
}

impl TokenBuf {
    /// Copies `token` (the wire decoder has checked it is 1–32 octets; longer is cut).
    pub fn new(token: &[u8]) -> Self {
        let len = token.len().min(32);
        let mut bytes = [0u8; 32];
        bytes[..len].copy_from_slice(&token[..len]);
        TokenBuf { len: len as u8, bytes }
    }

    /// The token.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let t = PitToken { shard: 3, slot: 0x02_0304, generation: 0xcdef };
        assert_eq!(PitToken::decode(&t.encode()), Some(t));
        assert!(t.names_generation(0x01ab_cdef));
        assert!(!t.names_generation(0xcdee));
        assert_eq!(PitToken::decode(&[1, 2, 3]), None);
    }

    #[test]
    fn token_buf_keeps_bytes() {
        assert_eq!(TokenBuf::new(&[9, 8, 7]).as_slice(), &[9, 8, 7]);
        assert_eq!(TokenBuf::new(&[1; 40]).as_slice().len(), 32);
    }
}
