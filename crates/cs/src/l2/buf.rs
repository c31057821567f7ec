//! A heap buffer whose start is aligned to 4096 bytes, as O_DIRECT I/O needs.
//!
//! Made without unsafe code: a `Vec<u8>` one alignment larger than asked, used from its first
//! aligned byte. The Vec is never resized, so the address stays put while the kernel uses it.

/// Alignment of every L2 buffer, file offset and transfer size.
pub const ALIGN: usize = 4096;

/// An aligned, zero-initialised byte buffer of fixed length.
#[derive(Debug)]
pub struct AlignedBuf {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes starting on a 4096-byte boundary.
    pub fn new(len: usize) -> Self {
        let raw = vec![0u8; len + ALIGN];
        let start = raw.as_ptr().align_offset(ALIGN);
        AlignedBuf { raw, start, len }
    }

    /// Its length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.len]
    }

    /// The bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned() {
        for len in [1, 4096, 81920] {
            let mut b = AlignedBuf::new(len);
            assert_eq!(b.as_slice().as_ptr() as usize % ALIGN, 0);
            assert_eq!(b.as_mut_slice().len(), len);
        }
    }
}
