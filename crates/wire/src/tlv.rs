//! TLV elements: reading one, iterating a sequence, and walking the ordered elements of a packet.
//!
//! # Overview of types
//! - [`Tlv`]: a zero-copy view of one element (TLV-TYPE, TLV-VALUE, and the whole encoding).
//! - [`TlvReader`]: iterator over consecutive elements; yields `Result` and stops at the first error.
//! - [`UnknownElement`]: an owned, unrecognised non-critical element kept for a byte-exact round
//!   trip, with the position (`after`) where it stood among the known elements.
//! - `Elements` (crate-private): walks the elements of a packet against the order the
//!   specification gives, enforcing order, repetition and the critical/non-critical rule.

use crate::types::is_critical;
use crate::varnum::{read_var_number, var_number_len};
use crate::writer::Writer;
use crate::{Error, Result};

/// One TLV element, borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlv<'a> {
    /// TLV-TYPE, in 1..=2^32-1.
    pub ty: u32,
    /// TLV-VALUE.
    pub value: &'a [u8],
    /// The whole element: TLV-TYPE, TLV-LENGTH and TLV-VALUE.
    pub wire: &'a [u8],
}

impl<'a> Tlv<'a> {
    /// Reads the element at the front of `buf`. Bytes after it are left for the caller.
    ///
    /// # Errors
    /// [`Error::Truncated`], [`Error::NonMinimalVarNumber`], or [`Error::ReservedType`] for
    /// TLV-TYPE 0 or above 2^32-1. Never panics and never allocates.
    #[inline]
    pub fn read(buf: &'a [u8]) -> Result<Tlv<'a>> {
        let (ty, tlen) = read_var_number(buf)?;
        if ty == 0 || ty > u32::MAX as u64 {
            return Err(Error::ReservedType(ty));
        }
        let (len, llen) = read_var_number(&buf[tlen..])?;
        let start = tlen + llen;
        let end = (start as u64).checked_add(len).ok_or(Error::Truncated)?;
        if end > buf.len() as u64 {
            return Err(Error::Truncated);
        }
        let end = end as usize;
        Ok(Tlv { ty: ty as u32, value: &buf[start..end], wire: &buf[..end] })
    }

    /// Reads exactly one element of type `ty` that spans all of `buf`.
    ///
    /// # Errors
    /// As [`Tlv::read`], plus [`Error::UnexpectedType`] and [`Error::TrailingBytes`].
    pub fn read_exact(buf: &'a [u8], ty: u32) -> Result<Tlv<'a>> {
        let tlv = Tlv::read(buf)?;
        if tlv.ty != ty {
            return Err(Error::UnexpectedType { expected: ty, found: tlv.ty });
        }
        if tlv.wire.len() != buf.len() {
            return Err(Error::TrailingBytes(buf.len() - tlv.wire.len()));
        }
        Ok(tlv)
    }
}

/// Length of an element with this TLV-TYPE and a TLV-VALUE of `value_len` octets.
#[inline]
pub const fn tlv_len(ty: u32, value_len: usize) -> usize {
    var_number_len(ty as u64) + var_number_len(value_len as u64) + value_len
}

/// Iterator over the consecutive elements in a TLV-VALUE. After an error it yields nothing more.
#[derive(Debug, Clone)]
pub struct TlvReader<'a> {
    rest: &'a [u8],
}

impl<'a> TlvReader<'a> {
    /// Elements of `buf`, front to back.
    pub fn new(buf: &'a [u8]) -> Self {
        TlvReader { rest: buf }
    }
}

impl<'a> Iterator for TlvReader<'a> {
    type Item = Result<Tlv<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match Tlv::read(self.rest) {
            Ok(tlv) => {
                self.rest = &self.rest[tlv.wire.len()..];
                Some(Ok(tlv))
            }
            Err(e) => {
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

/// An unrecognised non-critical element, kept so that an owned packet encodes back byte-for-byte.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnknownElement {
    /// How many of the parent's known element slots precede it: 0 = before the first known
    /// element, `i + 1` = right after known slot `i` (or where slot `i` would be).
    pub after: u8,
    /// TLV-TYPE.
    pub ty: u32,
    /// TLV-VALUE.
    pub value: Vec<u8>,
}

impl UnknownElement {
    /// Octets of its encoding.
    pub fn encoded_len(&self) -> usize {
        tlv_len(self.ty, self.value.len())
    }
}

/// Octets of all unknown elements.
pub(crate) fn unknowns_len(unknowns: &[UnknownElement]) -> usize {
    unknowns.iter().map(UnknownElement::encoded_len).sum()
}

/// Writes the unknown elements anchored at slot position `after`.
pub(crate) fn emit_unknowns(w: &mut Writer<'_>, unknowns: &[UnknownElement], after: u8) -> Result<()> {
    for u in unknowns.iter().filter(|u| u.after == after) {
        w.put_tlv(u.ty, &u.value)?;
    }
    Ok(())
}

/// One slot of an element order: a TLV-TYPE and whether it may repeat.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    pub ty: u32,
    pub repeatable: bool,
}

/// Shorthand for a non-repeatable slot.
pub(crate) const fn once(ty: u32) -> Slot {
    Slot { ty, repeatable: false }
}

/// What the element walk found.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Item<'a> {
    /// A known element, with its slot index.
    Known(usize, Tlv<'a>),
    /// An unknown element the policy allows to skip, with its anchor (see [`UnknownElement`]).
    Unknown(u8, Tlv<'a>),
}

/// Decides whether an unknown TLV-TYPE may be skipped.
pub(crate) type UnknownPolicy = fn(u32) -> Result<()>;

/// The NDN packet format rule: skip non-critical, reject critical.
pub(crate) fn skip_non_critical(ty: u32) -> Result<()> {
    if is_critical(ty) {
        Err(Error::UnrecognizedCritical(ty))
    } else {
        Ok(())
    }
}

/// Walks a TLV-VALUE's elements against `slots`, which list the known elements in the order the
/// specification requires. Known elements out of order, or repeated when their slot does not
/// allow it, are errors; unknown ones go through `policy`.
#[derive(Debug, Clone)]
pub(crate) struct Elements<'a> {
    reader: TlvReader<'a>,
    slots: &'static [Slot],
    policy: UnknownPolicy,
    last: Option<usize>,
}

impl<'a> Elements<'a> {
    pub(crate) fn new(value: &'a [u8], slots: &'static [Slot], policy: UnknownPolicy) -> Self {
        Elements { reader: TlvReader::new(value), slots, policy, last: None }
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = Result<Item<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let tlv = match self.reader.next()? {
            Ok(tlv) => tlv,
            Err(e) => return Some(Err(e)),
        };
        let result = match self.slots.iter().position(|s| s.ty == tlv.ty) {
            Some(i) => match self.last {
                Some(last) if i < last => Err(Error::OutOfOrder(tlv.ty)),
                Some(last) if i == last && !self.slots[i].repeatable => Err(Error::Repeated(tlv.ty)),
                _ => {
                    self.last = Some(i);
                    Ok(Item::Known(i, tlv))
                }
            },
            None => (self.policy)(tlv.ty).map(|()| Item::Unknown(self.last.map_or(0, |i| i as u8 + 1), tlv)),
        };
        if result.is_err() {
            self.reader = TlvReader::new(&[]);
        }
        Some(result)
    }
}

/// Collects the unknown elements of an already validated TLV-VALUE.
pub(crate) fn collect_unknowns(value: &[u8], slots: &'static [Slot], policy: UnknownPolicy) -> Vec<UnknownElement> {
    Elements::new(value, slots, policy)
        .filter_map(|item| match item {
            Ok(Item::Unknown(after, tlv)) => Some(UnknownElement { after, ty: tlv.ty, value: tlv.value.to_vec() }),
            _ => None,
        })
        .collect()
}

/// Requires an element's TLV-VALUE to be empty (CanBePrefix, MustBeFresh, NonDiscovery).
pub(crate) fn expect_empty(tlv: &Tlv<'_>) -> Result<()> {
    if tlv.value.is_empty() {
        Ok(())
    } else {
        Err(Error::InvalidValue { ty: tlv.ty, what: "must be empty" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_one_element() {
        let bytes = [0x07, 0x03, 0x08, 0x01, b'a', 0xee];
        let tlv = Tlv::read(&bytes).unwrap();
        assert_eq!((tlv.ty, tlv.value, tlv.wire.len()), (7, &bytes[2..5], 5));
        assert_eq!(Tlv::read_exact(&bytes, 7), Err(Error::TrailingBytes(1)));
        assert_eq!(Tlv::read_exact(&bytes[..5], 6), Err(Error::UnexpectedType { expected: 6, found: 7 }));
        assert_eq!(Tlv::read(&[0x00, 0x00]), Err(Error::ReservedType(0)));
        assert_eq!(Tlv::read(&[0xff, 0, 0, 0, 1, 0, 0, 0, 0, 0]), Err(Error::ReservedType(1 << 32)));
        assert_eq!(Tlv::read(&[0x07, 0x05, 0x08]), Err(Error::Truncated));
        // A TLV-LENGTH close to 2^64 must not overflow.
        assert_eq!(Tlv::read(&[0x07, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), Err(Error::Truncated));
    }

    #[test]
    fn reader_stops_after_error() {
        let bytes = [0x08, 0x00, 0x08, 0x05, 0x01];
        let items: Vec<_> = TlvReader::new(&bytes).collect();
        assert_eq!(items.len(), 2);
        assert!(items[0].is_ok() && items[1].is_err());
    }

    const SLOTS: &[Slot] = &[once(7), Slot { ty: 10, repeatable: true }, once(12)];

    fn walk(bytes: &[u8]) -> Result<Vec<(bool, usize)>> {
        Elements::new(bytes, SLOTS, skip_non_critical)
            .map(|i| {
                i.map(|i| match i {
                    Item::Known(s, _) => (true, s),
                    Item::Unknown(a, _) => (false, a as usize),
                })
            })
            .collect()
    }

    #[test]
    fn element_order_rules() {
        // 7, unknown 64, 10, 10, 12
        let ok = [7, 0, 64, 0, 10, 0, 10, 0, 12, 0];
        assert_eq!(walk(&ok), Ok(vec![(true, 0), (false, 1), (true, 1), (true, 1), (true, 2)]));
        assert_eq!(walk(&[12, 0, 7, 0]), Err(Error::OutOfOrder(7)));
        assert_eq!(walk(&[7, 0, 7, 0]), Err(Error::Repeated(7)));
        assert_eq!(walk(&[7, 0, 65, 0]), Err(Error::UnrecognizedCritical(65)));
        assert_eq!(walk(&[7, 0, 9, 0]), Err(Error::UnrecognizedCritical(9)));
    }
}
