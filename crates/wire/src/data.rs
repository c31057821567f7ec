//! Data packets (NDN packet format v0.3), DigestSha256 signing, and the implicit digest.
//!
//! ```text
//! Data = DATA-TYPE TLV-LENGTH Name [MetaInfo] [Content] SignatureInfo SignatureValue
//! ```
//!
//! # Overview of types
//! - [`DataView`]: the checked, zero-copy view; [`DataView::decode`] validates once, then no
//!   accessor fails. It gives the signed portion (Name through SignatureInfo) as one slice and
//!   the implicit digest (SHA-256 of the whole Data TLV).
//! - [`Data`]: the owned representation; `Data::decode(b).to_bytes() == b` for every Data in
//!   canonical encoding.
//!
//! SignatureInfo and SignatureValue are required, as the specification says; nexthop verifies
//! DigestSha256 itself and leaves other signature types to applications.

use sha2::{Digest, Sha256};

use crate::component::Component;
use crate::meta_info::{MetaInfo, MetaInfoView};
use crate::name::{Name, NameView};
use crate::signature::{SignatureInfo, SignatureInfoView};
use crate::tlv::{
    collect_unknowns, emit_unknowns, once, skip_non_critical, tlv_len, unknowns_len, Elements, Item, Slot, Tlv, UnknownElement,
};
use crate::types::*;
use crate::writer::{Emit, Writer};
use crate::{Error, Result};

const SLOTS: &[Slot] = &[once(NAME), once(META_INFO), once(CONTENT), once(SIGNATURE_INFO), once(SIGNATURE_VALUE)];

/// A checked Data packet borrowed from the bytes it was received in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataView<'a> {
    wire: &'a [u8],
    name: NameView<'a>,
    meta_info: Option<MetaInfoView<'a>>,
    content: Option<&'a [u8]>,
    signature_info: SignatureInfoView<'a>,
    signature_value: &'a [u8],
    signed: (usize, usize),
}

impl<'a> DataView<'a> {
    /// Decodes and checks one Data packet that spans all of `wire`.
    ///
    /// # Errors
    /// Any [`Error`] describing the first problem. Never panics, never allocates.
    pub fn decode(wire: &'a [u8]) -> Result<Self> {
        let outer = Tlv::read_exact(wire, DATA)?;
        let base = wire.len() - outer.value.len();
        let mut name = None;
        let mut meta_info = None;
        let mut content = None;
        let mut signature_info = None;
        let mut signature_value = None;
        let mut signed = (base, base);
        let mut first = true;
        for item in Elements::new(outer.value, SLOTS, skip_non_critical) {
            let (slot, tlv) = match item? {
                Item::Known(slot, tlv) => (slot, tlv),
                Item::Unknown(..) if first => return Err(Error::OutOfOrder(NAME)),
                Item::Unknown(..) => continue,
            };
            first = false;
            let offset = base + (tlv.wire.as_ptr() as usize - outer.value.as_ptr() as usize);
            match slot {
                0 => name = Some(NameView::from_value(tlv.value)?),
                _ if name.is_none() => return Err(Error::OutOfOrder(NAME)),
                1 => meta_info = Some(MetaInfoView::parse(tlv.value)?),
                2 => content = Some(tlv.value),
                3 => {
                    signature_info = Some(SignatureInfoView::parse(tlv.value)?);
                    signed.1 = offset + tlv.wire.len();
                }
                _ => signature_value = Some(tlv.value),
            }
        }
        Ok(DataView {
            wire,
            name: name.ok_or(Error::Missing(NAME))?,
            meta_info,
            content,
            signature_info: signature_info.ok_or(Error::Missing(SIGNATURE_INFO))?,
            signature_value: signature_value.ok_or(Error::Missing(SIGNATURE_VALUE))?,
            signed,
        })
    }

    /// The whole Data TLV.
    pub fn wire(&self) -> &'a [u8] {
        self.wire
    }

    /// Name.
    pub fn name(&self) -> NameView<'a> {
        self.name
    }

    /// MetaInfo.
    pub fn meta_info(&self) -> Option<MetaInfoView<'a>> {
        self.meta_info
    }

    /// ContentType, BLOB when absent.
    pub fn content_type(&self) -> u64 {
        self.meta_info.and_then(|m| m.content_type).unwrap_or(content_type::BLOB)
    }

    /// FreshnessPeriod in milliseconds, 0 when absent.
    pub fn freshness_period_ms(&self) -> u64 {
        self.meta_info.and_then(|m| m.freshness_period_ms).unwrap_or(0)
    }

    /// Content (`None` when the element is absent).
    pub fn content(&self) -> Option<&'a [u8]> {
        self.content
    }

    /// SignatureInfo.
    pub fn signature_info(&self) -> SignatureInfoView<'a> {
        self.signature_info
    }

    /// SignatureValue.
    pub fn signature_value(&self) -> &'a [u8] {
        self.signature_value
    }

    /// The signed portion: from the start of Name to the end of SignatureInfo.
    pub fn signed_portion(&self) -> &'a [u8] {
        &self.wire[self.signed.0..self.signed.1]
    }

    /// True when the Data is signed with DigestSha256 and the value is right.
    pub fn verify_digest_sha256(&self) -> bool {
        self.signature_info.signature_type == signature_type::DIGEST_SHA256
            && Sha256::digest(self.signed_portion()).as_slice() == self.signature_value
    }

    /// The implicit digest: SHA-256 of the whole Data TLV.
    pub fn implicit_digest(&self) -> [u8; 32] {
        Sha256::digest(self.wire).into()
    }

    /// The full name: Name plus the ImplicitSha256DigestComponent.
    pub fn full_name(&self) -> Name {
        self.name.to_name().with(Component::implicit_sha256(self.implicit_digest()))
    }

    /// The owned copy.
    pub fn to_owned(&self) -> Data {
        let outer = Tlv::read(self.wire).map(|t| t.value).unwrap_or_default();
        Data {
            name: self.name.to_name(),
            meta_info: self.meta_info.map(|m| m.to_owned()),
            content: self.content.map(<[u8]>::to_vec),
            signature_info: self.signature_info.to_owned(),
            signature_value: self.signature_value.to_vec(),
            unknown: collect_unknowns(outer, SLOTS, skip_non_critical),
        }
    }
}

/// A Data packet, owned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Data {
    /// Name.
    pub name: Name,
    /// MetaInfo.
    pub meta_info: Option<MetaInfo>,
    /// Content (`None`: the element is absent).
    pub content: Option<Vec<u8>>,
    /// SignatureInfo.
    pub signature_info: SignatureInfo,
    /// SignatureValue.
    pub signature_value: Vec<u8>,
    /// Unrecognised non-critical elements.
    pub unknown: Vec<UnknownElement>,
}

impl Data {
    /// Data named `name` carrying `content`, not yet signed (SignatureType DigestSha256 and an
    /// empty value; call [`Data::sign_digest_sha256`]).
    pub fn new(name: Name, content: impl Into<Vec<u8>>) -> Self {
        Data { name, content: Some(content.into()), signature_info: SignatureInfo::digest_sha256(), ..Default::default() }
    }

    /// Decodes and checks one Data packet; see [`DataView::decode`].
    ///
    /// # Errors
    /// As [`DataView::decode`].
    pub fn decode(wire: &[u8]) -> Result<Self> {
        DataView::decode(wire).map(|v| v.to_owned())
    }

    fn value_len(&self) -> usize {
        self.name.encoded_len()
            + self.meta_info.as_ref().map_or(0, MetaInfo::encoded_len)
            + self.content.as_ref().map_or(0, |c| tlv_len(CONTENT, c.len()))
            + self.signature_info.encoded_len_as(SIGNATURE_INFO)
            + tlv_len(SIGNATURE_VALUE, self.signature_value.len())
            + unknowns_len(&self.unknown)
    }

    /// Signs with DigestSha256: sets SignatureInfo to type 0 and SignatureValue to the SHA-256
    /// of the signed portion.
    pub fn sign_digest_sha256(&mut self) {
        self.signature_info = SignatureInfo::digest_sha256();
        self.signature_value = vec![0; 32];
        let wire = self.to_bytes();
        if let Ok(view) = DataView::decode(&wire) {
            self.signature_value = Sha256::digest(view.signed_portion()).to_vec();
        }
    }

    /// The implicit digest of this packet's encoding.
    pub fn implicit_digest(&self) -> [u8; 32] {
        Sha256::digest(self.to_bytes()).into()
    }
}

impl Emit for Data {
    fn encoded_len(&self) -> usize {
        tlv_len(DATA, self.value_len())
    }

    fn emit_to(&self, w: &mut Writer<'_>) -> Result<()> {
        let u = &self.unknown;
        w.put_header(DATA, self.value_len())?;
        emit_unknowns(w, u, 0)?;
        self.name.emit_to(w)?;
        emit_unknowns(w, u, 1)?;
        if let Some(m) = &self.meta_info {
            m.emit_to(w)?;
        }
        emit_unknowns(w, u, 2)?;
        if let Some(c) = &self.content {
            w.put_tlv(CONTENT, c)?;
        }
        emit_unknowns(w, u, 3)?;
        self.signature_info.emit_as(SIGNATURE_INFO, w)?;
        emit_unknowns(w, u, 4)?;
        w.put_tlv(SIGNATURE_VALUE, &self.signature_value)?;
        emit_unknowns(w, u, 5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// /a, Content "hi", DigestSha256 (value checked with Python's hashlib).
    const DATA_BYTES: &[u8] = &[
        0x06, 0x30, //
        0x07, 0x03, 0x08, 0x01, b'a', //
        0x15, 0x02, b'h', b'i', //
        0x16, 0x03, 0x1b, 0x01, 0x00, //
        0x17, 0x20, 0xdc, 0x21, 0x13, 0x59, 0x5a, 0xad, 0x08, 0x09, 0x9f, 0x80, 0xbd, 0x11, 0xa0, 0x13, 0xa0, 0x77, //
        0xf1, 0xae, 0x45, 0xcc, 0x52, 0xd4, 0xa8, 0xe9, 0xcd, 0x08, 0xfd, 0xe6, 0x31, 0xe0, 0x1a, 0xae,
    ];

    /// /b/seg=0, MetaInfo(ContentType KEY, FreshnessPeriod 10000, FinalBlockId seg=3), no Content,
    /// SignatureInfo(type 3, KeyLocator KeyDigest 0xaa), SignatureValue 0x01.
    const META_BYTES: &[u8] = &[
        0x06, 0x23, //
        0x07, 0x06, 0x08, 0x01, b'b', 0x32, 0x01, 0x00, //
        0x14, 0x0c, 0x18, 0x01, 0x02, 0x19, 0x02, 0x27, 0x10, 0x1a, 0x03, 0x32, 0x01, 0x03, //
        0x16, 0x08, 0x1b, 0x01, 0x03, 0x1c, 0x03, 0x1d, 0x01, 0xaa, //
        0x17, 0x01, 0x01,
    ];

    #[test]
    fn deconstruct() {
        let v = DataView::decode(DATA_BYTES).unwrap();
        assert_eq!(v.name().to_string(), "/a");
        assert_eq!(v.content(), Some(&b"hi"[..]));
        assert_eq!(v.content_type(), content_type::BLOB);
        assert_eq!(v.freshness_period_ms(), 0);
        assert!(v.verify_digest_sha256());
        let m = DataView::decode(META_BYTES).unwrap();
        assert_eq!(m.content_type(), content_type::KEY);
        assert_eq!(m.freshness_period_ms(), 10_000);
        assert_eq!(m.meta_info().unwrap().final_block_id.unwrap().to_string(), "seg=3");
        assert_eq!(m.content(), None);
        assert!(!m.verify_digest_sha256());
    }

    #[test]
    fn construct_and_sign() {
        let mut d = Data::new(Name::from_uri("/a").unwrap(), *b"hi");
        d.sign_digest_sha256();
        let mut buf = [0xa5u8; 80];
        let n = d.emit(&mut buf).unwrap();
        assert_eq!(&buf[..n], DATA_BYTES);
        assert!(buf[n..].iter().all(|&b| b == 0xa5));
    }

    #[test]
    fn parse_and_emit_round_trip() {
        for bytes in [DATA_BYTES, META_BYTES] {
            assert_eq!(Data::decode(bytes).unwrap().to_bytes(), bytes);
        }
    }

    #[test]
    fn implicit_digest_and_full_name() {
        let v = DataView::decode(DATA_BYTES).unwrap();
        let full = v.full_name();
        assert_eq!(full.len(), 2);
        assert_eq!(full.get(1).unwrap().value(), &Sha256::digest(DATA_BYTES)[..]);
        assert_eq!(Data::decode(DATA_BYTES).unwrap().implicit_digest(), v.implicit_digest());
    }

    #[test]
    fn element_rules() {
        // Missing signature elements.
        assert_eq!(DataView::decode(&[0x06, 0x02, 0x07, 0x00]), Err(Error::Missing(SIGNATURE_INFO)));
        assert_eq!(DataView::decode(&[0x06, 0x07, 0x07, 0x00, 0x16, 0x03, 0x1b, 0x01, 0x00]), Err(Error::Missing(SIGNATURE_VALUE)));
        // Content before MetaInfo.
        assert_eq!(DataView::decode(&[0x06, 0x06, 0x07, 0x00, 0x15, 0x00, 0x14, 0x00]), Err(Error::OutOfOrder(META_INFO)));
        // FinalBlockId with two components.
        assert!(DataView::decode(&[0x06, 0x0c, 0x07, 0x00, 0x14, 0x08, 0x1a, 0x06, 0x08, 0x01, 0x61, 0x08, 0x01, 0x62]).is_err());
        // Wrong outer type.
        assert_eq!(DataView::decode(&[0x05, 0x00]), Err(Error::UnexpectedType { expected: DATA, found: INTEREST }));
    }
}
