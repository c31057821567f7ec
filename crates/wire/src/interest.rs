//! Interest packets (NDN packet format v0.3).
//!
//! ```text
//! Interest = INTEREST-TYPE TLV-LENGTH
//!              Name [CanBePrefix] [MustBeFresh] [ForwardingHint] [Nonce]
//!              [InterestLifetime] [HopLimit]
//!              [ApplicationParameters [InterestSignatureInfo InterestSignatureValue]]
//! ```
//!
//! # Overview of types
//! - [`InterestView`]: the checked, zero-copy view a forwarder works on. [`InterestView::decode`]
//!   validates everything once (framing, order, critical elements, the ParametersSha256Digest
//!   rule and digest); afterwards no accessor can fail or panic.
//! - [`Interest`]: the owned representation; `Interest::decode(b).to_bytes() == b` for every
//!   Interest in canonical encoding (shortest NonNegativeIntegers, as every NDN library writes).
//!
//! Choices where the specification leaves room: the ForwardingHint is the v0.3 form (a sequence
//! of Names; the older Delegation form is rejected as an unrecognised critical element), and a
//! present ForwardingHint must hold at least one Name.

use sha2::{Digest, Sha256};

use crate::component::Component;
use crate::name::{Name, NameView};
use crate::signature::{SignatureInfo, SignatureInfoView};
use crate::tlv::{
    collect_unknowns, emit_unknowns, expect_empty, once, skip_non_critical, tlv_len, unknowns_len, Elements, Item, Slot, Tlv, TlvReader,
    UnknownElement,
};
use crate::types::*;
use crate::varnum::{nonneg_len, read_nonneg};
use crate::writer::{Emit, Writer};
use crate::{Error, Result};

/// InterestLifetime when the element is absent, in milliseconds.
pub const DEFAULT_LIFETIME_MS: u64 = 4000;

const SLOTS: &[Slot] = &[
    once(NAME),
    once(CAN_BE_PREFIX),
    once(MUST_BE_FRESH),
    once(FORWARDING_HINT),
    once(NONCE),
    once(INTEREST_LIFETIME),
    once(HOP_LIMIT),
    once(APPLICATION_PARAMETERS),
    once(INTEREST_SIGNATURE_INFO),
    once(INTEREST_SIGNATURE_VALUE),
];

/// A checked Interest borrowed from the bytes it was received in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InterestView<'a> {
    wire: &'a [u8],
    name: NameView<'a>,
    can_be_prefix: bool,
    must_be_fresh: bool,
    forwarding_hint: Option<&'a [u8]>,
    /// The ForwardingHint element's offset in `wire` and its length.
    forwarding_hint_element: (usize, usize),
    nonce: Option<[u8; 4]>,
    lifetime_ms: Option<u64>,
    hop_limit: Option<u8>,
    hop_limit_offset: usize,
    nonce_offset: usize,
    app_parameters: Option<&'a [u8]>,
    signature_info: Option<SignatureInfoView<'a>>,
    signature_value: Option<&'a [u8]>,
    params_start: usize,
    sig_info_end: usize,
    params_component: Option<usize>,
}

impl<'a> InterestView<'a> {
    /// Decodes and checks one Interest that spans all of `wire`, including its
    /// ParametersSha256DigestComponent when it has ApplicationParameters.
    ///
    /// # Errors
    /// Any [`Error`] describing the first problem found. Never panics, never allocates.
    pub fn decode(wire: &'a [u8]) -> Result<Self> {
        let view = Self::decode_structure(wire)?;
        if view.app_parameters.is_some() && view.parameters_digest() != view.params_component_value() {
            return Err(Error::ParametersDigestMismatch);
        }
        Ok(view)
    }

    /// Everything [`InterestView::decode`] checks except the digest value.
    fn decode_structure(wire: &'a [u8]) -> Result<Self> {
        let outer = Tlv::read_exact(wire, INTEREST)?;
        let base = wire.len() - outer.value.len();
        let mut v = InterestView {
            wire,
            name: NameView::EMPTY,
            can_be_prefix: false,
            must_be_fresh: false,
            forwarding_hint: None,
            forwarding_hint_element: (0, 0),
            nonce: None,
            lifetime_ms: None,
            hop_limit: None,
            hop_limit_offset: 0,
            nonce_offset: 0,
            app_parameters: None,
            signature_info: None,
            signature_value: None,
            params_start: wire.len(),
            sig_info_end: wire.len(),
            params_component: None,
        };
        let mut first = true;
        let mut seen_name = false;
        // ParametersSha256DigestComponents in the name: the first one's index, and how many.
        let mut digest_components = 0;
        for item in Elements::new(outer.value, SLOTS, skip_non_critical) {
            let item = item?;
            let (slot, tlv) = match item {
                Item::Known(slot, tlv) => (slot, tlv),
                Item::Unknown(..) if first => return Err(Error::OutOfOrder(NAME)),
                Item::Unknown(..) => continue,
            };
            first = false;
            // Offset of this element within `wire`.
            let offset = base + (tlv.wire.as_ptr() as usize - outer.value.as_ptr() as usize);
            match slot {
                0 => {
                    v.name = NameView::from_value_with(tlv.value, |i, c| {
                        if c.ty() == PARAMETERS_SHA256_DIGEST_COMPONENT {
                            v.params_component.get_or_insert(i);
                            digest_components += 1;
                        }
                    })?;
                    seen_name = true;
                }
                _ if !seen_name => return Err(Error::OutOfOrder(NAME)),
                1 => {
                    expect_empty(&tlv)?;
                    v.can_be_prefix = true;
                }
                2 => {
                    expect_empty(&tlv)?;
                    v.must_be_fresh = true;
                }
                3 => {
                    let mut count = 0;
                    for hint in TlvReader::new(tlv.value) {
                        let hint = hint?;
                        if hint.ty != NAME {
                            return Err(if crate::types::is_critical(hint.ty) {
                                Error::UnrecognizedCritical(hint.ty)
                            } else {
                                Error::InvalidValue { ty: FORWARDING_HINT, what: "must hold Names only" }
                            });
                        }
                        NameView::from_value(hint.value)?;
                        count += 1;
                    }
                    if count == 0 {
                        return Err(Error::InvalidValue { ty: FORWARDING_HINT, what: "must hold at least one Name" });
                    }
                    v.forwarding_hint = Some(tlv.value);
                    v.forwarding_hint_element = (offset, tlv.wire.len());
                }
                4 => {
                    let nonce: [u8; 4] = tlv.value.try_into().map_err(|_| Error::InvalidValue { ty: NONCE, what: "must be 4 octets" })?;
                    v.nonce = Some(nonce);
                    v.nonce_offset = offset + tlv.wire.len() - 4;
                }
                5 => v.lifetime_ms = Some(read_nonneg(tlv.ty, tlv.value)?),
                6 => {
                    let &[hops] = tlv.value else {
                        return Err(Error::InvalidValue { ty: HOP_LIMIT, what: "must be 1 octet" });
                    };
                    v.hop_limit = Some(hops);
                    v.hop_limit_offset = offset + tlv.wire.len() - 1;
                }
                7 => {
                    v.app_parameters = Some(tlv.value);
                    v.params_start = offset;
                }
                8 => {
                    if v.app_parameters.is_none() {
                        return Err(Error::Missing(APPLICATION_PARAMETERS));
                    }
                    v.signature_info = Some(SignatureInfoView::parse(tlv.value)?);
                    v.sig_info_end = offset + tlv.wire.len();
                }
                _ => {
                    if v.signature_info.is_none() {
                        return Err(Error::Missing(INTEREST_SIGNATURE_INFO));
                    }
                    v.signature_value = Some(tlv.value);
                }
            }
        }
        if !seen_name {
            return Err(Error::Missing(NAME));
        }
        if v.signature_info.is_some() && v.signature_value.is_none() {
            return Err(Error::Missing(INTEREST_SIGNATURE_VALUE));
        }
        // ApplicationParameters present <=> exactly one ParametersSha256DigestComponent.
        if digest_components > 1 {
            return Err(Error::InvalidValue { ty: NAME, what: "more than one ParametersSha256DigestComponent" });
        }
        match (v.app_parameters.is_some(), v.params_component.is_some()) {
            (true, false) => return Err(Error::Missing(PARAMETERS_SHA256_DIGEST_COMPONENT)),
            (false, true) => return Err(Error::Missing(APPLICATION_PARAMETERS)),
            _ => {}
        }
        Ok(v)
    }

    fn params_component_value(&self) -> Option<[u8; 32]> {
        let c = self.name.get(self.params_component?)?;
        c.value().try_into().ok()
    }

    /// The whole Interest TLV.
    pub fn wire(&self) -> &'a [u8] {
        self.wire
    }

    /// Name.
    pub fn name(&self) -> NameView<'a> {
        self.name
    }

    /// CanBePrefix.
    pub fn can_be_prefix(&self) -> bool {
        self.can_be_prefix
    }

    /// MustBeFresh.
    pub fn must_be_fresh(&self) -> bool {
        self.must_be_fresh
    }

    /// The ForwardingHint's names (empty when absent).
    pub fn forwarding_hint(&self) -> impl Iterator<Item = NameView<'a>> {
        TlvReader::new(self.forwarding_hint.unwrap_or(&[])).filter_map(|t| t.ok().and_then(|t| NameView::from_value(t.value).ok()))
    }

    /// The Interest without its ForwardingHint, as a forwarder passes it on once it reaches the
    /// producer's region: the other elements' bytes unchanged (a signature does not cover the
    /// hint), the outer length rewritten.
    pub fn without_forwarding_hint(&self) -> Vec<u8> {
        let (at, len) = self.forwarding_hint_element;
        if self.forwarding_hint.is_none() {
            return self.wire.to_vec();
        }
        let Ok(outer) = Tlv::read_exact(self.wire, INTEREST) else { return self.wire.to_vec() };
        let base = self.wire.len() - outer.value.len();
        let mut value = Vec::with_capacity(self.wire.len());
        value.extend_from_slice(&self.wire[base..at]);
        value.extend_from_slice(&self.wire[at + len..]);
        let mut out = vec![0; value.len() + 9 + 5];
        let mut w = Writer::new(&mut out);
        let _ = w.put_tlv(INTEREST, &value); // the buffer holds any header
        let n = w.position();
        out.truncate(n);
        out
    }

    /// Nonce.
    pub fn nonce(&self) -> Option<[u8; 4]> {
        self.nonce
    }

    /// InterestLifetime as sent.
    pub fn lifetime_ms(&self) -> Option<u64> {
        self.lifetime_ms
    }

    /// InterestLifetime, or its default of 4 seconds.
    pub fn effective_lifetime_ms(&self) -> u64 {
        self.lifetime_ms.unwrap_or(DEFAULT_LIFETIME_MS)
    }

    /// HopLimit.
    pub fn hop_limit(&self) -> Option<u8> {
        self.hop_limit
    }

    /// Offset of the HopLimit octet in [`InterestView::wire`], so a forwarder can decrement it in
    /// its own copy of the packet. `None` when the Interest has no HopLimit.
    pub fn hop_limit_offset(&self) -> Option<usize> {
        self.hop_limit.map(|_| self.hop_limit_offset)
    }

    /// Offset of the Nonce's 4 octets in [`InterestView::wire`], so a forwarder can give its
    /// copy of the packet another nonce. `None` when the Interest has no Nonce.
    pub fn nonce_offset(&self) -> Option<usize> {
        self.nonce.map(|_| self.nonce_offset)
    }

    /// ApplicationParameters.
    pub fn app_parameters(&self) -> Option<&'a [u8]> {
        self.app_parameters
    }

    /// InterestSignatureInfo.
    pub fn signature_info(&self) -> Option<SignatureInfoView<'a>> {
        self.signature_info
    }

    /// InterestSignatureValue.
    pub fn signature_value(&self) -> Option<&'a [u8]> {
        self.signature_value
    }

    /// SHA-256 of ApplicationParameters and every element after it, which the name's
    /// ParametersSha256DigestComponent must equal. `None` without ApplicationParameters.
    pub fn parameters_digest(&self) -> Option<[u8; 32]> {
        self.app_parameters?;
        Some(Sha256::digest(&self.wire[self.params_start..]).into())
    }

    /// Feeds the signed portion of a signed Interest to `f`, part by part: the name's components
    /// except the ParametersSha256DigestComponent, then ApplicationParameters through
    /// InterestSignatureInfo. Feeds nothing for an unsigned Interest.
    pub fn signed_portion(&self, mut f: impl FnMut(&[u8])) {
        if self.signature_info.is_none() {
            return;
        }
        let value = self.name.value();
        let mut at = 0;
        for (i, c) in self.name.components().enumerate() {
            let len = c.encoded_len();
            if Some(i) != self.params_component {
                f(&value[at..at + len]);
            }
            at += len;
        }
        f(&self.wire[self.params_start..self.sig_info_end]);
    }

    /// True for an Interest signed with DigestSha256 whose signature value is right.
    pub fn verify_digest_sha256(&self) -> bool {
        let (Some(info), Some(value)) = (self.signature_info, self.signature_value) else {
            return false;
        };
        if info.signature_type != signature_type::DIGEST_SHA256 {
            return false;
        }
        let mut h = Sha256::new();
        self.signed_portion(|p| h.update(p));
        h.finalize().as_slice() == value
    }

    /// The owned copy.
    pub fn to_owned(&self) -> Interest {
        let outer = Tlv::read(self.wire).map(|t| t.value).unwrap_or_default();
        Interest {
            name: self.name.to_name(),
            can_be_prefix: self.can_be_prefix,
            must_be_fresh: self.must_be_fresh,
            forwarding_hint: self.forwarding_hint().map(|n| n.to_name()).collect(),
            nonce: self.nonce,
            lifetime_ms: self.lifetime_ms,
            hop_limit: self.hop_limit,
            app_parameters: self.app_parameters.map(<[u8]>::to_vec),
            signature_info: self.signature_info.map(|s| s.to_owned()),
            signature_value: self.signature_value.map(<[u8]>::to_vec),
            unknown: collect_unknowns(outer, SLOTS, skip_non_critical),
        }
    }
}

/// An Interest, owned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Interest {
    /// Name.
    pub name: Name,
    /// CanBePrefix.
    pub can_be_prefix: bool,
    /// MustBeFresh.
    pub must_be_fresh: bool,
    /// ForwardingHint names; empty means the element is absent.
    pub forwarding_hint: Vec<Name>,
    /// Nonce.
    pub nonce: Option<[u8; 4]>,
    /// InterestLifetime in milliseconds (`None`: absent, meaning 4 s).
    pub lifetime_ms: Option<u64>,
    /// HopLimit.
    pub hop_limit: Option<u8>,
    /// ApplicationParameters.
    pub app_parameters: Option<Vec<u8>>,
    /// InterestSignatureInfo.
    pub signature_info: Option<SignatureInfo>,
    /// InterestSignatureValue.
    pub signature_value: Option<Vec<u8>>,
    /// Unrecognised non-critical elements, kept for the round trip.
    pub unknown: Vec<UnknownElement>,
}

impl Interest {
    /// An Interest for `name` with nothing else set.
    pub fn new(name: Name) -> Self {
        Interest { name, ..Default::default() }
    }

    /// Decodes and checks one Interest; see [`InterestView::decode`].
    ///
    /// # Errors
    /// As [`InterestView::decode`].
    pub fn decode(wire: &[u8]) -> Result<Self> {
        InterestView::decode(wire).map(|v| v.to_owned())
    }

    fn value_len(&self) -> usize {
        let hint_len: usize = self.forwarding_hint.iter().map(Emit::encoded_len).sum();
        self.name.encoded_len()
            + if self.can_be_prefix { 2 } else { 0 }
            + if self.must_be_fresh { 2 } else { 0 }
            + if self.forwarding_hint.is_empty() { 0 } else { tlv_len(FORWARDING_HINT, hint_len) }
            + self.nonce.map_or(0, |_| 6)
            + self.lifetime_ms.map_or(0, |l| tlv_len(INTEREST_LIFETIME, nonneg_len(l)))
            + self.hop_limit.map_or(0, |_| 3)
            + self.app_parameters.as_ref().map_or(0, |p| tlv_len(APPLICATION_PARAMETERS, p.len()))
            + self.signature_info.as_ref().map_or(0, |s| s.encoded_len_as(INTEREST_SIGNATURE_INFO))
            + self.signature_value.as_ref().map_or(0, |s| tlv_len(INTEREST_SIGNATURE_VALUE, s.len()))
            + unknowns_len(&self.unknown)
    }

    /// Sets ApplicationParameters and brings the ParametersSha256DigestComponent up to date.
    pub fn set_app_parameters(&mut self, params: Vec<u8>) {
        self.app_parameters = Some(params);
        self.update_parameters_digest();
    }

    /// Makes the name end in, or keep in place, one ParametersSha256DigestComponent that matches
    /// ApplicationParameters and the elements after it; removes it when there are no parameters.
    /// Call after any change to the parameters or the signature.
    pub fn update_parameters_digest(&mut self) {
        let at = self.name.components().position(|c| c.ty() == PARAMETERS_SHA256_DIGEST_COMPONENT);
        if self.app_parameters.is_none() {
            if let Some(i) = at {
                self.name = self.name.components().enumerate().filter(|&(j, _)| j != i).map(|(_, c)| c).collect();
            }
            return;
        }
        // Encode with a placeholder of the final length, then hash the encoded tail.
        let index = at.unwrap_or(self.name.len());
        self.set_name_component(index, Component::parameters_sha256([0; 32]));
        let wire = self.to_bytes();
        let digest = InterestView::decode_structure(&wire).ok().and_then(|v| v.parameters_digest());
        if let Some(digest) = digest {
            self.set_name_component(index, Component::parameters_sha256(digest));
        }
    }

    /// Replaces component `index`, or appends when `index == len`.
    fn set_name_component(&mut self, index: usize, c: Component) {
        let appended = (index >= self.name.len()).then_some(c.as_ref());
        self.name = self.name.components().enumerate().map(|(i, old)| if i == index { c.as_ref() } else { old }).chain(appended).collect();
    }

    /// Signs the Interest with DigestSha256 (an empty ApplicationParameters is added when absent)
    /// and updates the ParametersSha256DigestComponent.
    pub fn sign_digest_sha256(&mut self) {
        self.sign_with(SignatureInfo::digest_sha256(), |signed| Sha256::digest(signed).to_vec());
    }

    /// Signs the Interest: `info` becomes its InterestSignatureInfo and what `sign` makes of the
    /// signed portion its InterestSignatureValue (an empty ApplicationParameters is added when
    /// absent); the ParametersSha256DigestComponent is updated.
    pub fn sign_with(&mut self, info: SignatureInfo, sign: impl FnOnce(&[u8]) -> Vec<u8>) {
        self.app_parameters.get_or_insert_with(Vec::new);
        self.signature_info = Some(info);
        self.signature_value = Some(Vec::new());
        self.update_parameters_digest();
        let wire = self.to_bytes();
        let mut signed = Vec::new();
        if let Ok(view) = InterestView::decode_structure(&wire) {
            view.signed_portion(|p| signed.extend_from_slice(p));
        }
        self.signature_value = Some(sign(&signed));
        self.update_parameters_digest();
    }
}

impl Emit for Interest {
    fn encoded_len(&self) -> usize {
        tlv_len(INTEREST, self.value_len())
    }

    fn emit_to(&self, w: &mut Writer<'_>) -> Result<()> {
        let u = &self.unknown;
        w.put_header(INTEREST, self.value_len())?;
        emit_unknowns(w, u, 0)?;
        self.name.emit_to(w)?;
        emit_unknowns(w, u, 1)?;
        if self.can_be_prefix {
            w.put_tlv(CAN_BE_PREFIX, &[])?;
        }
        emit_unknowns(w, u, 2)?;
        if self.must_be_fresh {
            w.put_tlv(MUST_BE_FRESH, &[])?;
        }
        emit_unknowns(w, u, 3)?;
        if !self.forwarding_hint.is_empty() {
            w.put_header(FORWARDING_HINT, self.forwarding_hint.iter().map(Emit::encoded_len).sum())?;
            self.forwarding_hint.iter().try_for_each(|n| n.emit_to(w))?;
        }
        emit_unknowns(w, u, 4)?;
        if let Some(nonce) = &self.nonce {
            w.put_tlv(NONCE, nonce)?;
        }
        emit_unknowns(w, u, 5)?;
        if let Some(l) = self.lifetime_ms {
            w.put_nonneg_tlv(INTEREST_LIFETIME, l)?;
        }
        emit_unknowns(w, u, 6)?;
        if let Some(h) = self.hop_limit {
            w.put_tlv(HOP_LIMIT, &[h])?;
        }
        emit_unknowns(w, u, 7)?;
        if let Some(p) = &self.app_parameters {
            w.put_tlv(APPLICATION_PARAMETERS, p)?;
        }
        emit_unknowns(w, u, 8)?;
        if let Some(s) = &self.signature_info {
            s.emit_as(INTEREST_SIGNATURE_INFO, w)?;
        }
        emit_unknowns(w, u, 9)?;
        if let Some(s) = &self.signature_value {
            w.put_tlv(INTEREST_SIGNATURE_VALUE, s)?;
        }
        emit_unknowns(w, u, 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// /a/b, CanBePrefix, MustBeFresh, Nonce 01020304, InterestLifetime 2000 ms, HopLimit 64.
    const INTEREST_BYTES: &[u8] = &[
        0x05, 0x19, //
        0x07, 0x06, 0x08, 0x01, b'a', 0x08, 0x01, b'b', //
        0x21, 0x00, //
        0x12, 0x00, //
        0x0a, 0x04, 0x01, 0x02, 0x03, 0x04, //
        0x0c, 0x02, 0x07, 0xd0, //
        0x22, 0x01, 0x40,
    ];

    /// /a/params-sha256=71eb…, ApplicationParameters "hi" (digest checked with Python's hashlib).
    const PARAMS_BYTES: &[u8] = &[
        0x05, 0x2b, //
        0x07, 0x25, 0x08, 0x01, b'a', //
        0x02, 0x20, 0x71, 0xeb, 0xd1, 0x2f, 0xd7, 0x21, 0xd3, 0x90, 0xaa, 0xb8, 0xb9, 0xd4, 0xdf, 0xc4, 0x43, 0x38, //
        0x5a, 0x0d, 0xdb, 0x62, 0xe0, 0xbe, 0xd1, 0xb4, 0xfb, 0xd7, 0x66, 0xbc, 0x67, 0x35, 0x4c, 0xa1, //
        0x24, 0x02, b'h', b'i',
    ];

    fn sample() -> Interest {
        Interest {
            name: Name::from_uri("/a/b").unwrap(),
            can_be_prefix: true,
            must_be_fresh: true,
            nonce: Some([1, 2, 3, 4]),
            lifetime_ms: Some(2000),
            hop_limit: Some(64),
            ..Default::default()
        }
    }

    #[test]
    fn deconstruct() {
        let v = InterestView::decode(INTEREST_BYTES).unwrap();
        assert_eq!(v.name().to_string(), "/a/b");
        assert!(v.can_be_prefix() && v.must_be_fresh());
        assert_eq!(v.nonce(), Some([1, 2, 3, 4]));
        assert_eq!(v.lifetime_ms(), Some(2000));
        assert_eq!(v.hop_limit(), Some(64));
        assert_eq!(INTEREST_BYTES[v.hop_limit_offset().unwrap()], 64);
        let at = v.nonce_offset().unwrap();
        assert_eq!(INTEREST_BYTES[at..at + 4], [1, 2, 3, 4]);
        assert_eq!(v.app_parameters(), None);
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 64];
        let n = sample().emit(&mut buf).unwrap();
        assert_eq!(&buf[..n], INTEREST_BYTES);
        assert!(buf[n..].iter().all(|&b| b == 0xa5));
    }

    #[test]
    fn parse_and_emit_round_trip() {
        assert_eq!(Interest::decode(INTEREST_BYTES).unwrap(), sample());
        assert_eq!(Interest::decode(PARAMS_BYTES).unwrap().to_bytes(), PARAMS_BYTES);
    }

    #[test]
    fn parameters_digest() {
        let mut i = Interest::new(Name::from_uri("/a").unwrap());
        i.set_app_parameters(b"hi".to_vec());
        assert_eq!(i.to_bytes(), PARAMS_BYTES);
        let mut bad = PARAMS_BYTES.to_vec();
        *bad.last_mut().unwrap() = b'j';
        assert_eq!(InterestView::decode(&bad), Err(Error::ParametersDigestMismatch));
        // Parameters without the digest component, and the component without parameters.
        let no_digest = Interest { app_parameters: Some(vec![1]), ..Interest::new(Name::from_uri("/a").unwrap()) };
        assert_eq!(InterestView::decode(&no_digest.to_bytes()), Err(Error::Missing(PARAMETERS_SHA256_DIGEST_COMPONENT)));
        let mut no_params = i.clone();
        no_params.app_parameters = None;
        assert_eq!(InterestView::decode(&no_params.to_bytes()), Err(Error::Missing(APPLICATION_PARAMETERS)));
        no_params.update_parameters_digest();
        assert_eq!(no_params.name.to_string(), "/a");
    }

    #[test]
    fn signed_interest() {
        let mut i = sample();
        i.sign_digest_sha256();
        let wire = i.to_bytes();
        let v = InterestView::decode(&wire).unwrap();
        assert!(v.verify_digest_sha256());
        assert_eq!(v.to_owned(), i);
        // Changing a name component breaks the signature but not the parameters digest.
        let mut tampered = i.clone();
        tampered.name = Name::from_uri("/a/c").unwrap().with(tampered.name.get(2).unwrap().to_owned());
        tampered.update_parameters_digest();
        assert!(!InterestView::decode(&tampered.to_bytes()).unwrap().verify_digest_sha256());
    }

    #[test]
    fn element_rules() {
        // Name missing, Name not first.
        assert_eq!(InterestView::decode(&[0x05, 0x00]), Err(Error::Missing(NAME)));
        assert_eq!(InterestView::decode(&[0x05, 0x04, 0x21, 0x00, 0x07, 0x00]), Err(Error::OutOfOrder(NAME)));
        // Out of order, repeated, critical unknown, non-critical unknown kept.
        assert_eq!(InterestView::decode(&[0x05, 0x06, 0x07, 0x00, 0x12, 0x00, 0x21, 0x00]), Err(Error::OutOfOrder(CAN_BE_PREFIX)));
        assert_eq!(InterestView::decode(&[0x05, 0x06, 0x07, 0x00, 0x21, 0x00, 0x21, 0x00]), Err(Error::Repeated(CAN_BE_PREFIX)));
        assert_eq!(InterestView::decode(&[0x05, 0x04, 0x07, 0x00, 0x09, 0x00]), Err(Error::UnrecognizedCritical(9)));
        let with_unknown = [0x05, 0x07, 0x07, 0x00, 0x40, 0x01, 0x09, 0x21, 0x00];
        let i = Interest::decode(&with_unknown).unwrap();
        assert!(i.can_be_prefix);
        assert_eq!(i.unknown, vec![UnknownElement { after: 1, ty: 64, value: vec![9] }]);
        assert_eq!(i.to_bytes(), with_unknown);
        // Bad sizes.
        assert!(InterestView::decode(&[0x05, 0x05, 0x07, 0x00, 0x0a, 0x01, 0x00]).is_err());
        assert!(InterestView::decode(&[0x05, 0x05, 0x07, 0x00, 0x21, 0x01, 0x00]).is_err());
        assert!(InterestView::decode(&[0x05, 0x06, 0x07, 0x00, 0x22, 0x02, 0x00, 0x00]).is_err());
        assert!(InterestView::decode(&[0x05, 0x04, 0x07, 0x00, 0x1e, 0x00]).is_err());
        // Trailing bytes.
        assert_eq!(InterestView::decode(&[0x05, 0x02, 0x07, 0x00, 0x00]), Err(Error::TrailingBytes(1)));
    }

    #[test]
    fn forwarding_hint() {
        let mut i = sample();
        i.forwarding_hint = vec![Name::from_uri("/isp").unwrap(), Name::from_uri("/campus/lab").unwrap()];
        let wire = i.to_bytes();
        let v = InterestView::decode(&wire).unwrap();
        let hints: Vec<String> = v.forwarding_hint().map(|n| n.to_string()).collect();
        assert_eq!(hints, ["/isp", "/campus/lab"]);
        assert_eq!(v.to_owned(), i);
        // Stripped, everything else stays, across a change of the outer length's size (a
        // payload that brings the Interest near 253 bytes).
        for params in [4usize, 200, 240, 250, 400] {
            let mut i = sample();
            i.set_app_parameters(vec![7; params]);
            i.sign_digest_sha256();
            let plain = i.to_bytes();
            i.forwarding_hint = vec![Name::from_uri("/isp/with/a/longer/name").unwrap()];
            let hinted = i.to_bytes();
            let v = InterestView::decode(&hinted).unwrap();
            assert_eq!(v.without_forwarding_hint(), plain, "{params}");
            let stripped = v.without_forwarding_hint();
            assert!(InterestView::decode(&stripped).unwrap().verify_digest_sha256());
            assert_eq!(InterestView::decode(&plain).unwrap().without_forwarding_hint(), plain);
        }
    }
}
