//! What arrives on a face: an Interest, a Data, or an NDNLPv2 LpPacket, told apart by the
//! outer TLV-TYPE.

use crate::data::DataView;
use crate::interest::InterestView;
use crate::lp::LpPacketView;
use crate::tlv::Tlv;
use crate::types::{DATA, INTEREST, LP_PACKET};
use crate::{Error, Result};

/// One checked packet, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketView<'a> {
    /// An Interest.
    Interest(InterestView<'a>),
    /// A Data packet.
    Data(DataView<'a>),
    /// An NDNLPv2 LpPacket (its fragment is not decoded).
    Lp(LpPacketView<'a>),
}

impl<'a> PacketView<'a> {
    /// Decodes one packet spanning all of `wire`.
    ///
    /// # Errors
    /// [`Error::UnexpectedType`] (naming Interest as the expected type) for an outer TLV-TYPE
    /// that is none of the three, else the error of the matching decoder. Never panics.
    pub fn decode(wire: &'a [u8]) -> Result<Self> {
        let outer = Tlv::read(wire)?;
        match outer.ty {
            INTEREST => InterestView::decode(wire).map(PacketView::Interest),
            DATA => DataView::decode(wire).map(PacketView::Data),
            LP_PACKET => LpPacketView::decode(wire).map(PacketView::Lp),
            found => Err(Error::UnexpectedType { expected: INTEREST, found }),
        }
    }
}

/// Length of the first TLV element in a stream buffer, once its header has arrived: how a
/// stream face (TCP, Unix) cuts packets out of a byte stream. `Ok(None)` means "need more bytes".
///
/// # Errors
/// [`Error::NonMinimalVarNumber`] or [`Error::ReservedType`] when the stream is corrupt, and
/// [`Error::InvalidValue`] when the element would exceed `max_len` (the face's MTU), so a
/// corrupt length cannot make the face buffer without bound.
pub fn frame_len(buf: &[u8], max_len: usize) -> Result<Option<usize>> {
    use crate::varnum::read_var_number;
    let (ty, tlen) = match read_var_number(buf) {
        Ok(v) => v,
        Err(Error::Truncated) => return Ok(None),
        Err(e) => return Err(e),
    };
    if ty == 0 || ty > u32::MAX as u64 {
        return Err(Error::ReservedType(ty));
    }
    let (len, llen) = match read_var_number(&buf[tlen..]) {
        Ok(v) => v,
        Err(Error::Truncated) => return Ok(None),
        Err(e) => return Err(e),
    };
    let total = (tlen + llen) as u64 + len;
    if total > max_len as u64 {
        return Err(Error::InvalidValue { ty: ty as u32, what: "element longer than the face allows" });
    }
    Ok(Some(total as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch() {
        assert!(matches!(PacketView::decode(&[0x05, 0x02, 0x07, 0x00]), Ok(PacketView::Interest(_))));
        assert!(matches!(PacketView::decode(&[0x64, 0x00]), Ok(PacketView::Lp(_))));
        assert_eq!(PacketView::decode(&[0x08, 0x00]), Err(Error::UnexpectedType { expected: INTEREST, found: 8 }));
        assert_eq!(PacketView::decode(&[]), Err(Error::Truncated));
    }

    #[test]
    fn framing() {
        assert_eq!(frame_len(&[], 8800), Ok(None));
        assert_eq!(frame_len(&[0x05], 8800), Ok(None));
        assert_eq!(frame_len(&[0x05, 0xfd, 0x01], 8800), Ok(None));
        assert_eq!(frame_len(&[0x05, 0xfd, 0x01, 0x00], 8800), Ok(Some(260)));
        assert!(frame_len(&[0x05, 0xfe, 0x01, 0x00, 0x00, 0x00], 8800).is_err());
    }
}
