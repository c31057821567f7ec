//! VAR-NUMBER (TLV-TYPE and TLV-LENGTH) and NonNegativeInteger encodings.
//!
//! ```text
//! VAR-NUMBER-1 = %x00-FC
//! VAR-NUMBER-3 = %xFD 2OCTET
//! VAR-NUMBER-5 = %xFE 4OCTET
//! VAR-NUMBER-9 = %xFF 8OCTET
//! NonNegativeInteger = 1OCTET / 2OCTET / 4OCTET / 8OCTET   (network byte order)
//! ```
//!
//! nexthop decodes only the shortest VAR-NUMBER form (every NDN library writes it), so that a
//! decoded packet encodes back to the same bytes; a longer form is [`Error::NonMinimalVarNumber`].
//! NonNegativeInteger accepts all four widths, as the specification requires, and is written in
//! the shortest.

use crate::{Error, Result};

/// Reads one VAR-NUMBER from the front of `buf`; returns the value and the octets it used.
///
/// # Errors
/// [`Error::Truncated`] when `buf` ends inside the number, [`Error::NonMinimalVarNumber`] when a
/// shorter form could hold the value. Never panics.
///
/// # Example
/// ```
/// use nexthop_wire::varnum::read_var_number;
/// assert_eq!(read_var_number(&[0xfd, 0x03, 0x20]), Ok((800, 3)));
/// ```
#[inline]
pub fn read_var_number(buf: &[u8]) -> Result<(u64, usize)> {
    let first = *buf.first().ok_or(Error::Truncated)?;
    let (value, len, min) = match first {
        0..=0xfc => return Ok((first as u64, 1)),
        0xfd => (read_be(buf, 2)?, 3, 0xfd),
        0xfe => (read_be(buf, 4)?, 5, 0x1_0000),
        0xff => (read_be(buf, 8)?, 9, 0x1_0000_0000),
    };
    if value < min {
        return Err(Error::NonMinimalVarNumber);
    }
    Ok((value, len))
}

/// Big-endian integer of `width` octets following the first octet of `buf`.
#[inline]
fn read_be(buf: &[u8], width: usize) -> Result<u64> {
    let bytes = buf.get(1..1 + width).ok_or(Error::Truncated)?;
    Ok(bytes.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64))
}

/// Octets the shortest VAR-NUMBER encoding of `value` takes.
#[inline]
pub const fn var_number_len(value: u64) -> usize {
    match value {
        0..=0xfc => 1,
        0xfd..=0xffff => 3,
        0x1_0000..=0xffff_ffff => 5,
        _ => 9,
    }
}

/// Writes the shortest VAR-NUMBER encoding of `value` into the front of `out`; returns its length.
///
/// # Errors
/// [`Error::BufferTooSmall`] when `out` is shorter than [`var_number_len`]`(value)`.
#[inline]
pub fn write_var_number(value: u64, out: &mut [u8]) -> Result<usize> {
    let len = var_number_len(value);
    let out = out.get_mut(..len).ok_or(Error::BufferTooSmall)?;
    match len {
        1 => out[0] = value as u8,
        3 => {
            out[0] = 0xfd;
            out[1..].copy_from_slice(&(value as u16).to_be_bytes());
        }
        5 => {
            out[0] = 0xfe;
            out[1..].copy_from_slice(&(value as u32).to_be_bytes());
        }
        _ => {
            out[0] = 0xff;
            out[1..].copy_from_slice(&value.to_be_bytes());
        }
    }
    Ok(len)
}

/// Decodes a NonNegativeInteger TLV-VALUE (1, 2, 4 or 8 octets, big-endian).
///
/// # Errors
/// [`Error::InvalidValue`] naming `ty` for any other length.
#[inline]
pub fn read_nonneg(ty: u32, value: &[u8]) -> Result<u64> {
    match value.len() {
        1 | 2 | 4 | 8 => Ok(value.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64)),
        _ => Err(Error::InvalidValue { ty, what: "NonNegativeInteger must be 1, 2, 4 or 8 octets" }),
    }
}

/// Octets of the shortest NonNegativeInteger encoding of `value`.
#[inline]
pub const fn nonneg_len(value: u64) -> usize {
    match value {
        0..=0xff => 1,
        0x100..=0xffff => 2,
        0x1_0000..=0xffff_ffff => 4,
        _ => 8,
    }
}

/// True when `value` is a NonNegativeInteger in its shortest encoding.
#[inline]
pub fn is_shortest_nonneg(value: &[u8]) -> bool {
    match value.len() {
        1 => true,
        2 | 4 | 8 => {
            let v = value.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64);
            nonneg_len(v) == value.len()
        }
        _ => false,
    }
}

/// The shortest NonNegativeInteger encoding of `value`, as a fixed array and its used length.
#[inline]
pub fn nonneg_bytes(value: u64) -> ([u8; 8], usize) {
    let len = nonneg_len(value);
    let mut out = [0u8; 8];
    out[..len].copy_from_slice(&value.to_be_bytes()[8 - len..]);
    (out, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Test vectors: (encoding, value).
    const VECTORS: &[(&[u8], u64)] = &[
        (&[0x00], 0),
        (&[0xfc], 252),
        (&[0xfd, 0x00, 0xfd], 253),
        (&[0xfd, 0xff, 0xff], 0xffff),
        (&[0xfe, 0x00, 0x01, 0x00, 0x00], 0x1_0000),
        (&[0xfe, 0xff, 0xff, 0xff, 0xff], 0xffff_ffff),
        (&[0xff, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00], 0x1_0000_0000),
        (&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], u64::MAX),
    ];

    #[test]
    fn var_number_vectors() {
        for &(bytes, value) in VECTORS {
            assert_eq!(read_var_number(bytes), Ok((value, bytes.len())), "{bytes:02x?}");
            let mut out = [0xa5u8; 9];
            assert_eq!(write_var_number(value, &mut out), Ok(bytes.len()));
            assert_eq!(&out[..bytes.len()], bytes);
            assert!(out[bytes.len()..].iter().all(|&b| b == 0xa5));
        }
    }

    #[test]
    fn var_number_rejects_long_forms_and_truncation() {
        assert_eq!(read_var_number(&[0xfd, 0x00, 0xfc]), Err(Error::NonMinimalVarNumber));
        assert_eq!(read_var_number(&[0xfe, 0x00, 0x00, 0xff, 0xff]), Err(Error::NonMinimalVarNumber));
        assert_eq!(read_var_number(&[0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]), Err(Error::NonMinimalVarNumber));
        assert_eq!(read_var_number(&[]), Err(Error::Truncated));
        assert_eq!(read_var_number(&[0xfd, 0x01]), Err(Error::Truncated));
        assert_eq!(read_var_number(&[0xff, 1, 2, 3]), Err(Error::Truncated));
        assert_eq!(write_var_number(300, &mut [0u8; 2]), Err(Error::BufferTooSmall));
    }

    #[test]
    fn nonneg_widths() {
        assert_eq!(read_nonneg(25, &[0x0f, 0xa0]), Ok(4000));
        assert_eq!(read_nonneg(25, &[0, 0, 0x0f, 0xa0]), Ok(4000));
        assert_eq!(
            read_nonneg(25, &[1, 2, 3]),
            Err(Error::InvalidValue { ty: 25, what: "NonNegativeInteger must be 1, 2, 4 or 8 octets" })
        );
        assert!(read_nonneg(25, &[]).is_err());
        for v in [0u64, 255, 256, 65535, 65536, u32::MAX as u64, u32::MAX as u64 + 1, u64::MAX] {
            let (bytes, len) = nonneg_bytes(v);
            assert_eq!(read_nonneg(1, &bytes[..len]), Ok(v));
            assert!(is_shortest_nonneg(&bytes[..len]));
        }
        assert!(!is_shortest_nonneg(&[0, 5]));
    }
}
