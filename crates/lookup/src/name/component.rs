//! Name components as TLVs inside a name's value: where each ends, read without the wire
//! crate's full decoder (the hot paths of hashing, packing and the reference FIB).

/// End offset of the component TLV that starts at `at`, or `None` if the bytes there are not a
/// whole TLV.
#[inline(always)]
pub fn component_end(value: &[u8], at: usize) -> Option<usize> {
    let (_, type_len) = read_varnum(value, at)?;
    let (len, len_len) = read_varnum(value, at + type_len)?;
    let start = at + type_len + len_len;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    (end <= value.len()).then_some(end)
}

#[inline(always)]
fn read_varnum(buf: &[u8], at: usize) -> Option<(u64, usize)> {
    let first = *buf.get(at)?;
    match first {
        0..=252 => Some((u64::from(first), 1)),
        253 => Some((u64::from(u16::from_be_bytes(buf.get(at + 1..at + 3)?.try_into().ok()?)), 3)),
        254 => Some((u64::from(u32::from_be_bytes(buf.get(at + 1..at + 5)?.try_into().ok()?)), 5)),
        255 => Some((u64::from_be_bytes(buf.get(at + 1..at + 9)?.try_into().ok()?), 9)),
    }
}
