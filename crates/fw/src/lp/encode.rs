//! TLV encoding into a growing `Vec<u8>`: what the forwarder writes (NDNLPv2 headers around a
//! packet it forwards, Nacks, management responses). The wire crate's `Writer` fills a
//! caller-sized buffer; here the size is not known in advance and the output is appended.

use nexthop_wire::types::{
    CONGESTION_MARK, FRAGMENT, INCOMING_FACE_ID, LP_PACKET, NACK, NACK_REASON, NON_DISCOVERY, PIT_TOKEN, PREFIX_ANNOUNCEMENT,
};
use nexthop_wire::varnum::{nonneg_bytes, nonneg_len, var_number_len, write_var_number};
use nexthop_wire::NackReason;

/// Appends a VAR-NUMBER.
pub fn put_var(out: &mut Vec<u8>, value: u64) {
    let mut buf = [0u8; 9];
    let n = write_var_number(value, &mut buf).expect("9 bytes hold any VAR-NUMBER");
    out.extend_from_slice(&buf[..n]);
}

/// Appends TLV-TYPE and TLV-LENGTH.
pub fn put_header(out: &mut Vec<u8>, ty: u32, len: usize) {
    put_var(out, u64::from(ty));
    put_var(out, len as u64);
}

/// Appends a whole TLV element.
pub fn put_tlv(out: &mut Vec<u8>, ty: u32, value: &[u8]) {
    put_header(out, ty, value.len());
    out.extend_from_slice(value);
}

/// Appends a NonNegativeInteger element in its shortest form.
pub fn put_nonneg(out: &mut Vec<u8>, ty: u32, value: u64) {
    let (bytes, len) = nonneg_bytes(value);
    put_tlv(out, ty, &bytes[..len]);
}

/// Bytes of a TLV element with a `len`-byte value.
pub const fn tlv_len(ty: u32, len: usize) -> usize {
    var_number_len(ty as u64) + var_number_len(len as u64) + len
}

/// Bytes of a NonNegativeInteger element.
pub const fn nonneg_tlv_len(ty: u32, value: u64) -> usize {
    tlv_len(ty, nonneg_len(value))
}

/// The NDNLPv2 fields the forwarder puts on a packet it sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LpFields<'a> {
    /// PitToken (1–32 octets).
    pub pit_token: Option<&'a [u8]>,
    /// Nack with this reason (the packet is then the Nacked Interest).
    pub nack: Option<NackReason>,
    /// IncomingFaceId, for local apps that asked for it.
    pub incoming_face_id: Option<u64>,
    /// CongestionMark, carried from upstream (the I/O thread adds its own, [`crate::lp::congestion`]).
    pub congestion_mark: Option<u64>,
    /// NonDiscovery: an Interest the self-learning strategy sends along a known route.
    pub non_discovery: bool,
    /// PrefixAnnouncement (a Data packet) on Data, for the self-learning strategy downstream.
    pub prefix_announcement: Option<&'a [u8]>,
}

impl LpFields<'_> {
    /// True when no field is set: the packet goes out bare.
    pub fn is_empty(&self) -> bool {
        self.pit_token.is_none()
            && self.nack.is_none()
            && self.incoming_face_id.is_none()
            && self.congestion_mark.is_none()
            && !self.non_discovery
            && self.prefix_announcement.is_none()
    }
}

/// Appends `packet`, wrapped in an LpPacket when any of `fields` is set, else bare.
pub fn put_packet(out: &mut Vec<u8>, fields: &LpFields<'_>, packet: &[u8]) {
    if fields.is_empty() {
        out.extend_from_slice(packet);
        return;
    }
    let nack_value = fields.nack.map(|r| nonneg_tlv_len(NACK_REASON, r.into()));
    let len = fields.pit_token.map_or(0, |t| tlv_len(PIT_TOKEN, t.len()))
        + nack_value.map_or(0, |v| tlv_len(NACK, v))
        + fields.incoming_face_id.map_or(0, |id| nonneg_tlv_len(INCOMING_FACE_ID, id))
        + fields.congestion_mark.map_or(0, |m| nonneg_tlv_len(CONGESTION_MARK, m))
        + if fields.non_discovery { tlv_len(NON_DISCOVERY, 0) } else { 0 }
        + fields.prefix_announcement.map_or(0, |pa| tlv_len(PREFIX_ANNOUNCEMENT, pa.len()))
        + tlv_len(FRAGMENT, packet.len());
    out.reserve(tlv_len(LP_PACKET, len));
    put_header(out, LP_PACKET, len);
    if let Some(t) = fields.pit_token {
        put_tlv(out, PIT_TOKEN, t);
    }
    if let (Some(reason), Some(v)) = (fields.nack, nack_value) {
        put_header(out, NACK, v);
        put_nonneg(out, NACK_REASON, reason.into());
    }
    if let Some(id) = fields.incoming_face_id {
        put_nonneg(out, INCOMING_FACE_ID, id);
    }
    if let Some(m) = fields.congestion_mark {
        put_nonneg(out, CONGESTION_MARK, m);
    }
    // NDNLPv2's order: header fields by type, the fragment last.
    if fields.non_discovery {
        put_tlv(out, NON_DISCOVERY, &[]);
    }
    if let Some(pa) = fields.prefix_announcement {
        put_tlv(out, PREFIX_ANNOUNCEMENT, pa);
    }
    put_tlv(out, FRAGMENT, packet);
}

/// `packet` (a bare Interest, Data or Nack, or an LpPacket) with the encoded LP header
/// `fields` added, into `out`: a bare packet is wrapped in an LpPacket; in an LpPacket they go
/// before its first field whose TLV-TYPE is above `ty` (the Fragment always last), since header
/// fields ascend by type. `fields` must be elements of TLV-TYPE `ty` or of types no existing field
/// falls between. False, and nothing appended, when `packet` is an LpPacket whose elements do not
/// parse.
pub fn put_with_lp_fields(out: &mut Vec<u8>, packet: &[u8], ty: u32, fields: &[u8]) -> bool {
    let Some(lp) = nexthop_wire::tlv::Tlv::read(packet).ok().filter(|t| t.ty == LP_PACKET) else {
        put_header(out, LP_PACKET, fields.len() + tlv_len(FRAGMENT, packet.len()));
        out.extend_from_slice(fields);
        put_tlv(out, FRAGMENT, packet);
        return true;
    };
    let mut at = lp.value.len();
    let mut reader = nexthop_wire::tlv::TlvReader::new(lp.value);
    let mut offset = 0;
    for element in reader.by_ref() {
        let Ok(element) = element else { return false };
        if element.ty == FRAGMENT || element.ty > ty {
            at = at.min(offset);
        }
        offset += element.wire.len();
    }
    put_header(out, LP_PACKET, lp.value.len() + fields.len());
    out.extend_from_slice(&lp.value[..at]);
    out.extend_from_slice(fields);
    out.extend_from_slice(&lp.value[at..]);
    true
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{LpPacketView, NackReason};

    use super::*;

    #[test]
    fn bare_when_no_fields() {
        let mut out = Vec::new();
        put_packet(&mut out, &LpFields::default(), &[0x05, 0x00]);
        assert_eq!(out, [0x05, 0x00]);
    }

    #[test]
    fn lp_fields_decode_back() {
        let mut out = vec![0xa5];
        let fields = LpFields {
            pit_token: Some(&[1, 2, 3]),
            nack: Some(NackReason::NoRoute),
            incoming_face_id: Some(300),
            congestion_mark: Some(1),
            non_discovery: true,
            prefix_announcement: Some(&[0x06, 0x00]),
        };
        put_packet(&mut out, &fields, &[0x05, 0x02, 0x07, 0x00]);
        let lp = LpPacketView::decode(&out[1..]).unwrap();
        assert_eq!(lp.pit_token, Some(&[1u8, 2, 3][..]));
        assert_eq!(lp.nack(), Some(NackReason::NoRoute));
        assert_eq!(lp.incoming_face_id, Some(300));
        assert_eq!(lp.congestion_mark, Some(1));
        assert!(lp.non_discovery);
        assert_eq!(lp.prefix_announcement, Some(&[0x06u8, 0x00][..]));
        assert_eq!(lp.fragment, Some(&[0x05u8, 0x02, 0x07, 0x00][..]));
    }

    #[test]
    fn nonneg_is_shortest() {
        let mut out = Vec::new();
        put_nonneg(&mut out, 0x66, 200);
        assert_eq!(out, [0x66, 0x01, 200]);
        put_nonneg(&mut out, 0x66, 300);
        assert_eq!(&out[3..], [0x66, 0x02, 0x01, 0x2c]);
        assert_eq!(nonneg_tlv_len(0x66, 300), 4);
    }
}
