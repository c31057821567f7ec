//! [`Writer`]: a cursor that writes TLV encodings into a caller's buffer.
//!
//! Every owned representation computes its exact encoded length first (`encoded_len`), so the
//! caller can size the buffer once; writing past the end is [`Error::BufferTooSmall`], not a panic.

use crate::varnum::{nonneg_bytes, write_var_number};
use crate::{Error, Result};

/// Writes into `buf` from the front.
#[derive(Debug)]
pub struct Writer<'b> {
    buf: &'b mut [u8],
    pos: usize,
}

impl<'b> Writer<'b> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'b mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    /// Octets written so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Writes raw bytes.
    #[inline]
    pub fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let end = self.pos.checked_add(bytes.len()).ok_or(Error::BufferTooSmall)?;
        self.buf.get_mut(self.pos..end).ok_or(Error::BufferTooSmall)?.copy_from_slice(bytes);
        self.pos = end;
        Ok(())
    }

    /// Writes a VAR-NUMBER.
    #[inline]
    pub fn put_var(&mut self, value: u64) -> Result<()> {
        let rest = self.buf.get_mut(self.pos..).ok_or(Error::BufferTooSmall)?;
        self.pos += write_var_number(value, rest)?;
        Ok(())
    }

    /// Writes a TLV-TYPE and TLV-LENGTH.
    #[inline]
    pub fn put_header(&mut self, ty: u32, len: usize) -> Result<()> {
        self.put_var(ty as u64)?;
        self.put_var(len as u64)
    }

    /// Writes a whole TLV element.
    #[inline]
    pub fn put_tlv(&mut self, ty: u32, value: &[u8]) -> Result<()> {
        self.put_header(ty, value.len())?;
        self.put(value)
    }

    /// Writes a TLV element whose value is a NonNegativeInteger, in its shortest form.
    #[inline]
    pub fn put_nonneg_tlv(&mut self, ty: u32, value: u64) -> Result<()> {
        let (bytes, len) = nonneg_bytes(value);
        self.put_tlv(ty, &bytes[..len])
    }
}

/// An owned representation that encodes to TLV bytes.
pub trait Emit {
    /// Exact number of octets [`Emit::emit_to`] writes.
    fn encoded_len(&self) -> usize;

    /// Writes the encoding.
    ///
    /// # Errors
    /// [`Error::BufferTooSmall`] when the writer's buffer has less room than [`Emit::encoded_len`].
    fn emit_to(&self, w: &mut Writer<'_>) -> Result<()>;

    /// Writes the encoding into the front of `buf`; returns its length.
    ///
    /// # Errors
    /// [`Error::BufferTooSmall`] when `buf` is shorter than [`Emit::encoded_len`].
    fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let mut w = Writer::new(buf);
        self.emit_to(&mut w)?;
        Ok(w.position())
    }

    /// The encoding in a new vector of exactly [`Emit::encoded_len`] octets.
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.encoded_len()];
        let written = self.emit(&mut out).unwrap_or(0);
        // `encoded_len` is exact for every type in this crate (checked by the round-trip tests);
        // a mismatch would be a bug here, and shows as a truncated vector rather than a panic.
        debug_assert_eq!(written, out.len());
        out.truncate(written);
        out
    }
}
