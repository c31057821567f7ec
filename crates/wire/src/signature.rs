//! SignatureInfo (Data) and InterestSignatureInfo (signed Interests), with their KeyLocator.
//!
//! ```text
//! SignatureInfo = SIGNATURE-INFO-TYPE / INTEREST-SIGNATURE-INFO-TYPE TLV-LENGTH
//!                 SignatureType [KeyLocator] [ValidityPeriod]
//!                 [SignatureNonce] [SignatureTime] [SignatureSeqNum]
//! KeyLocator    = KEY-LOCATOR-TYPE TLV-LENGTH (Name / KeyDigest)
//! ```
//! nexthop requires the elements in the order above (the order ndn-cxx and python-ndn write);
//! unrecognised non-critical elements are kept where they stood. ValidityPeriod is kept as its raw
//! TLV-VALUE: a forwarder never needs to look inside a certificate's validity.

use crate::name::{Name, NameView};
use crate::tlv::{
    collect_unknowns, emit_unknowns, once, skip_non_critical, tlv_len, unknowns_len, Elements, Item, Slot, Tlv, UnknownElement,
};
use crate::types::*;
use crate::varnum::{nonneg_len, read_nonneg};
use crate::writer::{Emit, Writer};
use crate::{Error, Result};

const SLOTS: &[Slot] =
    &[once(SIGNATURE_TYPE), once(KEY_LOCATOR), once(VALIDITY_PERIOD), once(SIGNATURE_NONCE), once(SIGNATURE_TIME), once(SIGNATURE_SEQ_NUM)];

/// Where the verification key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyLocatorView<'a> {
    /// A key or certificate name.
    Name(NameView<'a>),
    /// The digest of the key.
    KeyDigest(&'a [u8]),
}

impl<'a> KeyLocatorView<'a> {
    fn parse(value: &'a [u8]) -> Result<Self> {
        let tlv = Tlv::read(value)?;
        if tlv.wire.len() != value.len() {
            return Err(Error::InvalidValue { ty: KEY_LOCATOR, what: "must hold exactly one Name or KeyDigest" });
        }
        match tlv.ty {
            NAME => Ok(KeyLocatorView::Name(NameView::from_value(tlv.value)?)),
            KEY_DIGEST => Ok(KeyLocatorView::KeyDigest(tlv.value)),
            _ => Err(Error::InvalidValue { ty: KEY_LOCATOR, what: "must hold a Name or a KeyDigest" }),
        }
    }
}

/// Where the verification key is, owned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeyLocator {
    /// A key or certificate name.
    Name(Name),
    /// The digest of the key.
    KeyDigest(Vec<u8>),
}

impl KeyLocator {
    fn value_len(&self) -> usize {
        match self {
            KeyLocator::Name(n) => n.encoded_len(),
            KeyLocator::KeyDigest(d) => tlv_len(KEY_DIGEST, d.len()),
        }
    }
}

/// A validated SignatureInfo or InterestSignatureInfo, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignatureInfoView<'a> {
    value: &'a [u8],
    /// SignatureType.
    pub signature_type: u64,
    /// KeyLocator.
    pub key_locator: Option<KeyLocatorView<'a>>,
    /// ValidityPeriod TLV-VALUE.
    pub validity_period: Option<&'a [u8]>,
    /// SignatureNonce.
    pub nonce: Option<&'a [u8]>,
    /// SignatureTime (milliseconds since the Unix epoch).
    pub time: Option<u64>,
    /// SignatureSeqNum.
    pub seq_num: Option<u64>,
}

impl<'a> SignatureInfoView<'a> {
    /// Validates a SignatureInfo or InterestSignatureInfo TLV-VALUE.
    ///
    /// # Errors
    /// A framing or order error, [`Error::Missing`] without SignatureType, or
    /// [`Error::InvalidValue`] for a malformed element. Never panics.
    pub fn parse(value: &'a [u8]) -> Result<Self> {
        let mut v = SignatureInfoView {
            value,
            signature_type: 0,
            key_locator: None,
            validity_period: None,
            nonce: None,
            time: None,
            seq_num: None,
        };
        let mut seen_type = false;
        for item in Elements::new(value, SLOTS, skip_non_critical) {
            let Item::Known(_, tlv) = item? else { continue };
            match tlv.ty {
                SIGNATURE_TYPE => {
                    v.signature_type = read_nonneg(tlv.ty, tlv.value)?;
                    seen_type = true;
                }
                KEY_LOCATOR => v.key_locator = Some(KeyLocatorView::parse(tlv.value)?),
                VALIDITY_PERIOD => v.validity_period = Some(tlv.value),
                SIGNATURE_NONCE => v.nonce = Some(tlv.value),
                SIGNATURE_TIME => v.time = Some(read_nonneg(tlv.ty, tlv.value)?),
                _ => v.seq_num = Some(read_nonneg(tlv.ty, tlv.value)?),
            }
        }
        if !seen_type {
            return Err(Error::Missing(SIGNATURE_TYPE));
        }
        Ok(v)
    }

    /// The owned copy.
    pub fn to_owned(&self) -> SignatureInfo {
        SignatureInfo {
            signature_type: self.signature_type,
            key_locator: self.key_locator.map(|k| match k {
                KeyLocatorView::Name(n) => KeyLocator::Name(n.to_name()),
                KeyLocatorView::KeyDigest(d) => KeyLocator::KeyDigest(d.to_vec()),
            }),
            validity_period: self.validity_period.map(<[u8]>::to_vec),
            nonce: self.nonce.map(<[u8]>::to_vec),
            time: self.time,
            seq_num: self.seq_num,
            unknown: collect_unknowns(self.value, SLOTS, skip_non_critical),
        }
    }
}

/// SignatureInfo, owned. Encoded as SignatureInfo (type 22) in Data and as
/// InterestSignatureInfo (type 44) in Interests; the container decides which.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct SignatureInfo {
    /// SignatureType; see [`crate::types::signature_type`].
    pub signature_type: u64,
    /// KeyLocator.
    pub key_locator: Option<KeyLocator>,
    /// ValidityPeriod TLV-VALUE, raw.
    pub validity_period: Option<Vec<u8>>,
    /// SignatureNonce.
    pub nonce: Option<Vec<u8>>,
    /// SignatureTime (milliseconds since the Unix epoch).
    pub time: Option<u64>,
    /// SignatureSeqNum.
    pub seq_num: Option<u64>,
    /// Unrecognised non-critical elements.
    pub unknown: Vec<UnknownElement>,
}

impl SignatureInfo {
    /// SignatureInfo for DigestSha256: type 0, nothing else.
    pub fn digest_sha256() -> Self {
        SignatureInfo { signature_type: signature_type::DIGEST_SHA256, ..Default::default() }
    }

    pub(crate) fn value_len(&self) -> usize {
        tlv_len(SIGNATURE_TYPE, nonneg_len(self.signature_type))
            + self.key_locator.as_ref().map_or(0, |k| tlv_len(KEY_LOCATOR, k.value_len()))
            + self.validity_period.as_ref().map_or(0, |p| tlv_len(VALIDITY_PERIOD, p.len()))
            + self.nonce.as_ref().map_or(0, |n| tlv_len(SIGNATURE_NONCE, n.len()))
            + self.time.map_or(0, |t| tlv_len(SIGNATURE_TIME, nonneg_len(t)))
            + self.seq_num.map_or(0, |s| tlv_len(SIGNATURE_SEQ_NUM, nonneg_len(s)))
            + unknowns_len(&self.unknown)
    }

    /// Octets of the element when encoded as `ty` (22 or 44).
    pub fn encoded_len_as(&self, ty: u32) -> usize {
        tlv_len(ty, self.value_len())
    }

    /// Writes the element as TLV-TYPE `ty` (22 or 44).
    ///
    /// # Errors
    /// [`Error::BufferTooSmall`].
    pub fn emit_as(&self, ty: u32, w: &mut Writer<'_>) -> Result<()> {
        w.put_header(ty, self.value_len())?;
        let u = &self.unknown;
        emit_unknowns(w, u, 0)?;
        w.put_nonneg_tlv(SIGNATURE_TYPE, self.signature_type)?;
        emit_unknowns(w, u, 1)?;
        if let Some(k) = &self.key_locator {
            w.put_header(KEY_LOCATOR, k.value_len())?;
            match k {
                KeyLocator::Name(n) => n.emit_to(w)?,
                KeyLocator::KeyDigest(d) => w.put_tlv(KEY_DIGEST, d)?,
            }
        }
        emit_unknowns(w, u, 2)?;
        if let Some(p) = &self.validity_period {
            w.put_tlv(VALIDITY_PERIOD, p)?;
        }
        emit_unknowns(w, u, 3)?;
        if let Some(n) = &self.nonce {
            w.put_tlv(SIGNATURE_NONCE, n)?;
        }
        emit_unknowns(w, u, 4)?;
        if let Some(t) = self.time {
            w.put_nonneg_tlv(SIGNATURE_TIME, t)?;
        }
        emit_unknowns(w, u, 5)?;
        if let Some(s) = self.seq_num {
            w.put_nonneg_tlv(SIGNATURE_SEQ_NUM, s)?;
        }
        emit_unknowns(w, u, 6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SignatureType=3 (ECDSA), KeyLocator=Name(/k), SignatureNonce=01 02, SignatureTime=1000.
    const VALUE: &[u8] = &[
        0x1b, 0x01, 0x03, //
        0x1c, 0x05, 0x07, 0x03, 0x08, 0x01, b'k', //
        0x26, 0x02, 0x01, 0x02, //
        0x28, 0x02, 0x03, 0xe8,
    ];

    #[test]
    fn parse_and_emit() {
        let v = SignatureInfoView::parse(VALUE).unwrap();
        assert_eq!(v.signature_type, 3);
        assert_eq!(v.time, Some(1000));
        assert_eq!(v.nonce, Some(&[1u8, 2][..]));
        let owned = v.to_owned();
        assert_eq!(owned.key_locator, Some(KeyLocator::Name(Name::from_uri("/k").unwrap())));
        let mut buf = [0xa5u8; 64];
        let mut w = Writer::new(&mut buf);
        owned.emit_as(INTEREST_SIGNATURE_INFO, &mut w).unwrap();
        let n = w.position();
        assert_eq!(n, owned.encoded_len_as(INTEREST_SIGNATURE_INFO));
        assert_eq!(&buf[2..n], VALUE);
        assert_eq!(&buf[..2], &[0x2c, VALUE.len() as u8]);
    }

    #[test]
    fn errors() {
        assert_eq!(SignatureInfoView::parse(&[]), Err(Error::Missing(SIGNATURE_TYPE)));
        assert_eq!(SignatureInfoView::parse(&[0x1c, 0x02, 0x1d, 0x00, 0x1b, 0x01, 0x00]), Err(Error::OutOfOrder(SIGNATURE_TYPE)));
        assert!(SignatureInfoView::parse(&[0x1b, 0x01, 0x00, 0x1c, 0x02, 0x09, 0x00]).is_err());
        // A non-critical unknown element is kept and re-emitted in place.
        let with_unknown = [0x1b, 0x01, 0x00, 0x40, 0x01, 0x07];
        let owned = SignatureInfoView::parse(&with_unknown).unwrap().to_owned();
        assert_eq!(owned.unknown.len(), 1);
        let mut buf = [0u8; 16];
        let mut w = Writer::new(&mut buf);
        owned.emit_as(22, &mut w).unwrap();
        let n = w.position();
        assert_eq!(&buf[2..n], &with_unknown);
    }
}
