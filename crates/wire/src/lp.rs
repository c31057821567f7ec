//! NDNLPv2 link-layer packets: LpPacket with its header fields and Fragment.
//!
//! ```text
//! LpPacket = LP-PACKET-TYPE TLV-LENGTH *LpHeaderField [Fragment]
//! ```
//! Header fields nexthop understands, in the order they must appear (increasing TLV-TYPE, as
//! ndn-cxx requires): Sequence (81), FragIndex (82), FragCount (83), PitToken (98), Nack (800),
//! IncomingFaceId (812), NextHopFaceId (816), CachePolicy (820), CongestionMark (832),
//! Ack (836, repeatable), TxSequence (840), NonDiscovery (844), PrefixAnnouncement (848);
//! Fragment (80) comes last. An unknown field is ignored (and kept for the round trip) when its
//! TLV-TYPE is in [800, 959] with the two low bits 00; any other unknown field drops the packet
//! ([`Error::UnknownLpField`]).
//!
//! Reassembly of fragments is the forwarder's job; this module decodes FragIndex/FragCount and
//! checks FragIndex < FragCount. Inside Nack and CachePolicy the packet format's critical-type rule
//! applies to unknown elements.

use crate::tlv::{
    collect_unknowns, emit_unknowns, expect_empty, once, skip_non_critical, tlv_len, unknowns_len, Elements, Item, Slot, Tlv,
    UnknownElement,
};
use crate::types::*;
use crate::varnum::{nonneg_len, read_nonneg};
use crate::writer::{Emit, Writer};
use crate::{Error, Result};

const SLOTS: &[Slot] = &[
    once(SEQUENCE),
    once(FRAG_INDEX),
    once(FRAG_COUNT),
    once(PIT_TOKEN),
    once(NACK),
    once(INCOMING_FACE_ID),
    once(NEXT_HOP_FACE_ID),
    once(CACHE_POLICY),
    once(CONGESTION_MARK),
    Slot { ty: ACK, repeatable: true },
    once(TX_SEQUENCE),
    once(NON_DISCOVERY),
    once(PREFIX_ANNOUNCEMENT),
    once(FRAGMENT),
];

const NACK_SLOTS: &[Slot] = &[once(NACK_REASON)];
const CACHE_POLICY_SLOTS: &[Slot] = &[once(CACHE_POLICY_TYPE)];

fn ignore_lp_field(ty: u32) -> Result<()> {
    if is_ignorable_lp_field(ty) {
        Ok(())
    } else {
        Err(Error::UnknownLpField(ty))
    }
}

/// NackReason values; unknown codes survive a round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NackReason {
    /// None (0).
    None,
    /// Congestion (50).
    Congestion,
    /// Duplicate (100).
    Duplicate,
    /// NoRoute (150).
    NoRoute,
    /// Any other code.
    Unknown(u64),
}

impl From<u64> for NackReason {
    fn from(v: u64) -> Self {
        match v {
            0 => NackReason::None,
            50 => NackReason::Congestion,
            100 => NackReason::Duplicate,
            150 => NackReason::NoRoute,
            v => NackReason::Unknown(v),
        }
    }
}

impl From<NackReason> for u64 {
    fn from(r: NackReason) -> u64 {
        match r {
            NackReason::None => 0,
            NackReason::Congestion => 50,
            NackReason::Duplicate => 100,
            NackReason::NoRoute => 150,
            NackReason::Unknown(v) => v,
        }
    }
}

/// The Nack header field.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Nack {
    /// NackReason (`None`: absent, which means reason None).
    pub reason: Option<NackReason>,
    /// Unrecognised non-critical elements.
    pub unknown: Vec<UnknownElement>,
}

impl Nack {
    /// A Nack with this reason.
    pub fn new(reason: NackReason) -> Self {
        Nack { reason: Some(reason), unknown: Vec::new() }
    }

    fn parse(value: &[u8]) -> Result<Self> {
        let reason = Self::parse_reason(value)?.map(NackReason::from);
        Ok(Nack { reason, unknown: collect_unknowns(value, NACK_SLOTS, skip_non_critical) })
    }

    fn value_len(&self) -> usize {
        self.reason.map_or(0, |r| tlv_len(NACK_REASON, nonneg_len(r.into()))) + unknowns_len(&self.unknown)
    }
}

/// A checked LpPacket borrowed from the bytes it was received in.
///
/// Scalar fields are decoded; the Nack and PrefixAnnouncement are kept as slices (call
/// [`LpPacketView::nack`] to decode the Nack; it was validated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LpPacketView<'a> {
    value: &'a [u8],
    /// Sequence.
    pub sequence: Option<u64>,
    /// FragIndex.
    pub frag_index: Option<u64>,
    /// FragCount.
    pub frag_count: Option<u64>,
    /// PitToken (1–32 octets).
    pub pit_token: Option<&'a [u8]>,
    nack: Option<&'a [u8]>,
    nack_reason: Option<Option<u64>>,
    /// NextHopFaceId.
    pub next_hop_face_id: Option<u64>,
    /// IncomingFaceId.
    pub incoming_face_id: Option<u64>,
    /// CachePolicyType inside CachePolicy (1 = NoCache).
    pub cache_policy: Option<u64>,
    /// CongestionMark.
    pub congestion_mark: Option<u64>,
    /// TxSequence.
    pub tx_sequence: Option<u64>,
    /// NonDiscovery.
    pub non_discovery: bool,
    /// PrefixAnnouncement TLV-VALUE (a Data packet).
    pub prefix_announcement: Option<&'a [u8]>,
    /// Fragment: the network-layer packet (or a piece of it).
    pub fragment: Option<&'a [u8]>,
}

impl<'a> LpPacketView<'a> {
    /// Decodes and checks one LpPacket spanning all of `wire`.
    ///
    /// # Errors
    /// Any [`Error`] for the first problem found; [`Error::UnknownLpField`] for an unknown field
    /// that may not be ignored. Never panics, never allocates.
    pub fn decode(wire: &'a [u8]) -> Result<Self> {
        let outer = Tlv::read_exact(wire, LP_PACKET)?;
        let mut v = LpPacketView { value: outer.value, ..Default::default() };
        for item in Elements::new(outer.value, SLOTS, ignore_lp_field) {
            let Item::Known(_, tlv) = item? else { continue };
            let number = || read_nonneg(tlv.ty, tlv.value);
            match tlv.ty {
                SEQUENCE => v.sequence = Some(number()?),
                FRAG_INDEX => v.frag_index = Some(number()?),
                FRAG_COUNT => v.frag_count = Some(number()?),
                PIT_TOKEN => {
                    if !(1..=32).contains(&tlv.value.len()) {
                        return Err(Error::InvalidValue { ty: PIT_TOKEN, what: "must be 1 to 32 octets" });
                    }
                    v.pit_token = Some(tlv.value);
                }
                NACK => {
                    v.nack_reason = Some(Nack::parse_reason(tlv.value)?);
                    v.nack = Some(tlv.value);
                }
                INCOMING_FACE_ID => v.incoming_face_id = Some(number()?),
                NEXT_HOP_FACE_ID => v.next_hop_face_id = Some(number()?),
                CACHE_POLICY => {
                    let mut policy = None;
                    for inner in Elements::new(tlv.value, CACHE_POLICY_SLOTS, skip_non_critical) {
                        if let Item::Known(_, t) = inner? {
                            policy = Some(read_nonneg(t.ty, t.value)?);
                        }
                    }
                    v.cache_policy = Some(policy.ok_or(Error::Missing(CACHE_POLICY_TYPE))?);
                }
                CONGESTION_MARK => v.congestion_mark = Some(number()?),
                ACK => {
                    number()?;
                }
                TX_SEQUENCE => v.tx_sequence = Some(number()?),
                NON_DISCOVERY => {
                    expect_empty(&tlv)?;
                    v.non_discovery = true;
                }
                PREFIX_ANNOUNCEMENT => v.prefix_announcement = Some(tlv.value),
                _ => v.fragment = Some(tlv.value),
            }
        }
        match (v.frag_index, v.frag_count) {
            (Some(i), Some(n)) if i >= n => return Err(Error::InvalidValue { ty: FRAG_INDEX, what: "must be less than FragCount" }),
            (_, Some(0)) => return Err(Error::InvalidValue { ty: FRAG_COUNT, what: "must be at least 1" }),
            _ => {}
        }
        Ok(v)
    }

    /// The Nack reason when the packet carries a Nack: `Some(reason)`, where an absent
    /// NackReason reads as [`NackReason::None`].
    pub fn nack(&self) -> Option<NackReason> {
        self.nack_reason.map(|r| r.map_or(NackReason::None, NackReason::from))
    }

    /// The Ack fields, in order.
    pub fn acks(&self) -> impl Iterator<Item = u64> + 'a {
        crate::tlv::TlvReader::new(self.value).filter_map(|t| t.ok()).filter(|t| t.ty == ACK).filter_map(|t| read_nonneg(ACK, t.value).ok())
    }

    /// True when this packet is a whole network-layer packet (not one fragment of several).
    pub fn is_whole(&self) -> bool {
        self.frag_count.unwrap_or(1) == 1
    }

    /// The owned copy.
    pub fn to_owned(&self) -> LpPacket {
        LpPacket {
            sequence: self.sequence,
            frag_index: self.frag_index,
            frag_count: self.frag_count,
            pit_token: self.pit_token.map(<[u8]>::to_vec),
            nack: self.nack.and_then(|n| Nack::parse(n).ok()),
            next_hop_face_id: self.next_hop_face_id,
            incoming_face_id: self.incoming_face_id,
            cache_policy: self.cache_policy,
            congestion_mark: self.congestion_mark,
            acks: self.acks().collect(),
            tx_sequence: self.tx_sequence,
            non_discovery: self.non_discovery,
            prefix_announcement: self.prefix_announcement.map(<[u8]>::to_vec),
            ignored: collect_unknowns(self.value, SLOTS, ignore_lp_field),
            fragment: self.fragment.map(<[u8]>::to_vec),
        }
    }
}

impl Nack {
    fn parse_reason(value: &[u8]) -> Result<Option<u64>> {
        let mut reason = None;
        for item in Elements::new(value, NACK_SLOTS, skip_non_critical) {
            if let Item::Known(_, tlv) = item? {
                reason = Some(read_nonneg(tlv.ty, tlv.value)?);
            }
        }
        Ok(reason)
    }
}

/// An LpPacket, owned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct LpPacket {
    /// Sequence.
    pub sequence: Option<u64>,
    /// FragIndex.
    pub frag_index: Option<u64>,
    /// FragCount.
    pub frag_count: Option<u64>,
    /// PitToken.
    pub pit_token: Option<Vec<u8>>,
    /// Nack.
    pub nack: Option<Nack>,
    /// NextHopFaceId.
    pub next_hop_face_id: Option<u64>,
    /// IncomingFaceId.
    pub incoming_face_id: Option<u64>,
    /// CachePolicyType (1 = NoCache).
    pub cache_policy: Option<u64>,
    /// CongestionMark.
    pub congestion_mark: Option<u64>,
    /// Ack fields.
    pub acks: Vec<u64>,
    /// TxSequence.
    pub tx_sequence: Option<u64>,
    /// NonDiscovery.
    pub non_discovery: bool,
    /// PrefixAnnouncement TLV-VALUE.
    pub prefix_announcement: Option<Vec<u8>>,
    /// Ignored unknown fields, kept for the round trip.
    pub ignored: Vec<UnknownElement>,
    /// Fragment.
    pub fragment: Option<Vec<u8>>,
}

impl LpPacket {
    /// An LpPacket carrying `packet` with no header fields.
    pub fn wrap(packet: Vec<u8>) -> Self {
        LpPacket { fragment: Some(packet), ..Default::default() }
    }

    /// Decodes one LpPacket; see [`LpPacketView::decode`].
    ///
    /// # Errors
    /// As [`LpPacketView::decode`].
    pub fn decode(wire: &[u8]) -> Result<Self> {
        LpPacketView::decode(wire).map(|v| v.to_owned())
    }

    fn value_len(&self) -> usize {
        let n = |ty, v: Option<u64>| v.map_or(0, |v| tlv_len(ty, nonneg_len(v)));
        n(SEQUENCE, self.sequence)
            + n(FRAG_INDEX, self.frag_index)
            + n(FRAG_COUNT, self.frag_count)
            + self.pit_token.as_ref().map_or(0, |t| tlv_len(PIT_TOKEN, t.len()))
            + self.nack.as_ref().map_or(0, |k| tlv_len(NACK, k.value_len()))
            + n(INCOMING_FACE_ID, self.incoming_face_id)
            + n(NEXT_HOP_FACE_ID, self.next_hop_face_id)
            + self.cache_policy.map_or(0, |p| tlv_len(CACHE_POLICY, tlv_len(CACHE_POLICY_TYPE, nonneg_len(p))))
            + n(CONGESTION_MARK, self.congestion_mark)
            + self.acks.iter().map(|&a| tlv_len(ACK, nonneg_len(a))).sum::<usize>()
            + n(TX_SEQUENCE, self.tx_sequence)
            + if self.non_discovery { tlv_len(NON_DISCOVERY, 0) } else { 0 }
            + self.prefix_announcement.as_ref().map_or(0, |p| tlv_len(PREFIX_ANNOUNCEMENT, p.len()))
            + unknowns_len(&self.ignored)
            + self.fragment.as_ref().map_or(0, |f| tlv_len(FRAGMENT, f.len()))
    }
}

impl Emit for LpPacket {
    fn encoded_len(&self) -> usize {
        tlv_len(LP_PACKET, self.value_len())
    }

    fn emit_to(&self, w: &mut Writer<'_>) -> Result<()> {
        let u = &self.ignored;
        w.put_header(LP_PACKET, self.value_len())?;
        let mut slot = 0u8;
        // Writes the ignored fields anchored before the next slot, then moves on.
        let mut next = |w: &mut Writer<'_>| -> Result<()> {
            emit_unknowns(w, u, slot)?;
            slot += 1;
            Ok(())
        };
        let nonneg = |w: &mut Writer<'_>, ty, v: Option<u64>| v.map_or(Ok(()), |v| w.put_nonneg_tlv(ty, v));
        next(w)?;
        nonneg(w, SEQUENCE, self.sequence)?;
        next(w)?;
        nonneg(w, FRAG_INDEX, self.frag_index)?;
        next(w)?;
        nonneg(w, FRAG_COUNT, self.frag_count)?;
        next(w)?;
        if let Some(t) = &self.pit_token {
            w.put_tlv(PIT_TOKEN, t)?;
        }
        next(w)?;
        if let Some(k) = &self.nack {
            w.put_header(NACK, k.value_len())?;
            emit_unknowns(w, &k.unknown, 0)?;
            if let Some(r) = k.reason {
                w.put_nonneg_tlv(NACK_REASON, r.into())?;
            }
            emit_unknowns(w, &k.unknown, 1)?;
        }
        next(w)?;
        nonneg(w, INCOMING_FACE_ID, self.incoming_face_id)?;
        next(w)?;
        nonneg(w, NEXT_HOP_FACE_ID, self.next_hop_face_id)?;
        next(w)?;
        if let Some(p) = self.cache_policy {
            w.put_header(CACHE_POLICY, tlv_len(CACHE_POLICY_TYPE, nonneg_len(p)))?;
            w.put_nonneg_tlv(CACHE_POLICY_TYPE, p)?;
        }
        next(w)?;
        nonneg(w, CONGESTION_MARK, self.congestion_mark)?;
        next(w)?;
        self.acks.iter().try_for_each(|&a| w.put_nonneg_tlv(ACK, a))?;
        next(w)?;
        nonneg(w, TX_SEQUENCE, self.tx_sequence)?;
        next(w)?;
        if self.non_discovery {
            w.put_tlv(NON_DISCOVERY, &[])?;
        }
        next(w)?;
        if let Some(p) = &self.prefix_announcement {
            w.put_tlv(PREFIX_ANNOUNCEMENT, p)?;
        }
        next(w)?;
        if let Some(f) = &self.fragment {
            w.put_tlv(FRAGMENT, f)?;
        }
        next(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sequence 1, PitToken a1a2a3a4, Nack(NoRoute), IncomingFaceId 300, CongestionMark 1,
    /// Fragment = Interest /a.
    const LP_BYTES: &[u8] = &[
        0x64, 0x26, //
        0x51, 0x01, 0x01, //
        0x62, 0x04, 0xa1, 0xa2, 0xa3, 0xa4, //
        0xfd, 0x03, 0x20, 0x05, 0xfd, 0x03, 0x21, 0x01, 0x96, //
        0xfd, 0x03, 0x2c, 0x02, 0x01, 0x2c, //
        0xfd, 0x03, 0x40, 0x01, 0x01, //
        0x50, 0x07, 0x05, 0x05, 0x07, 0x03, 0x08, 0x01, b'a',
    ];

    fn sample() -> LpPacket {
        LpPacket {
            sequence: Some(1),
            pit_token: Some(vec![0xa1, 0xa2, 0xa3, 0xa4]),
            nack: Some(Nack::new(NackReason::NoRoute)),
            incoming_face_id: Some(300),
            congestion_mark: Some(1),
            fragment: Some(vec![0x05, 0x05, 0x07, 0x03, 0x08, 0x01, b'a']),
            ..Default::default()
        }
    }

    #[test]
    fn deconstruct() {
        let v = LpPacketView::decode(LP_BYTES).unwrap();
        assert_eq!(v.sequence, Some(1));
        assert_eq!(v.pit_token, Some(&[0xa1, 0xa2, 0xa3, 0xa4][..]));
        assert_eq!(v.nack(), Some(NackReason::NoRoute));
        assert_eq!(v.incoming_face_id, Some(300));
        assert_eq!(v.congestion_mark, Some(1));
        assert_eq!(v.fragment.map(|f| f.len()), Some(7));
        assert!(v.is_whole());
    }

    #[test]
    fn construct() {
        let mut buf = [0xa5u8; 64];
        let n = sample().emit(&mut buf).unwrap();
        assert_eq!(&buf[..n], LP_BYTES);
        assert!(buf[n..].iter().all(|&b| b == 0xa5));
    }

    #[test]
    fn parse_and_emit() {
        assert_eq!(LpPacket::decode(LP_BYTES).unwrap(), sample());
        let rich = LpPacket {
            frag_index: Some(1),
            frag_count: Some(3),
            next_hop_face_id: Some(7),
            cache_policy: Some(1),
            acks: vec![5, 6],
            tx_sequence: Some(9),
            non_discovery: true,
            prefix_announcement: Some(vec![1, 2]),
            nack: Some(Nack::default()),
            ..sample()
        };
        let bytes = rich.to_bytes();
        let v = LpPacketView::decode(&bytes).unwrap();
        assert_eq!(v.nack(), Some(NackReason::None));
        assert_eq!(v.acks().collect::<Vec<_>>(), [5, 6]);
        assert!(!v.is_whole());
        assert_eq!(v.to_owned(), rich);
    }

    #[test]
    fn unknown_field_rule() {
        // 804 (0x324): in range, low bits 00 -> ignored and kept.
        let fixed = [0x64, 0x06, 0xfd, 0x03, 0x24, 0x00, 0x50, 0x00];
        let p = LpPacket::decode(&fixed).unwrap();
        assert_eq!(p.ignored.len(), 1);
        assert_eq!(p.to_bytes(), fixed);
        // 805: low bits 01 -> drop. 960: out of range -> drop. 86: below 800 -> drop.
        assert_eq!(LpPacketView::decode(&[0x64, 0x04, 0xfd, 0x03, 0x25, 0x00]), Err(Error::UnknownLpField(805)));
        assert_eq!(LpPacketView::decode(&[0x64, 0x04, 0xfd, 0x03, 0xc0, 0x00]), Err(Error::UnknownLpField(960)));
        assert_eq!(LpPacketView::decode(&[0x64, 0x02, 0x56, 0x00]), Err(Error::UnknownLpField(86)));
        // Fragment must be last; FragIndex < FragCount; PitToken size.
        assert_eq!(LpPacketView::decode(&[0x64, 0x05, 0x50, 0x00, 0x51, 0x01, 0x00]), Err(Error::OutOfOrder(SEQUENCE)));
        assert!(LpPacketView::decode(&[0x64, 0x06, 0x52, 0x01, 0x02, 0x53, 0x01, 0x02]).is_err());
        assert!(LpPacketView::decode(&[0x64, 0x02, 0x62, 0x00]).is_err());
    }
}
