//! A name as the control structure keeps it: up to 30 bytes inline (MAC, IPv4/IPv6 addresses,
//! flow IDs — no pointer to chase when the index verifies a match), longer names on the heap.

/// Bytes a name may have to be stored inline.
const INLINE: usize = 30;

/// One stored name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoredKey {
    /// A short name, in place.
    Inline { len: u8, bytes: [u8; INLINE] },
    /// A longer name.
    Heap(Box<[u8]>),
}

impl Default for StoredKey {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl StoredKey {
    /// The empty name.
    pub(crate) const EMPTY: StoredKey = StoredKey::Inline { len: 0, bytes: [0; INLINE] };

    /// Stores `key`.
    pub(crate) fn new(key: &[u8]) -> Self {
        if key.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..key.len()].copy_from_slice(key);
            StoredKey::Inline { len: key.len() as u8, bytes }
        } else {
            StoredKey::Heap(key.into())
        }
    }

    /// The name's bytes.
    #[inline(always)]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            StoredKey::Inline { len, bytes } => &bytes[..usize::from(*len)],
            StoredKey::Heap(b) => b,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_round_trip() {
        for len in [0, 6, 30, 31, 100] {
            let key: Vec<u8> = (0..len as u8).collect();
            assert_eq!(StoredKey::new(&key).as_bytes(), key.as_slice());
        }
        assert_eq!(core::mem::size_of::<StoredKey>(), 32);
    }
}
