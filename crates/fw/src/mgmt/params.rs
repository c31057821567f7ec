//! NFD management TLVs: ControlParameters (what a command asks), ControlResponse (what it
//! gets back), as specified by NFD's "Control Command" protocol.
//!
//! ```text
//! ControlParameters = 0x68 TLV-LENGTH [Name] [FaceId 0x69] [Uri 0x72] [LocalUri 0x81]
//!                     [Origin 0x6f] [Cost 0x6a] [Capacity 0x83] [Count 0x84] [Flags 0x6c]
//!                     [Mask 0x70] [Strategy 0x6b] [ExpirationPeriod 0x6d]
//!                     [FacePersistency 0x85] [BaseCongestionMarkingInterval 0x87]
//!                     [DefaultCongestionThreshold 0x88] [Mtu 0x89] …
//! ControlResponse   = 0x65 TLV-LENGTH StatusCode 0x66 StatusText 0x67 [ControlParameters]
//! ```
//! Decoding is strict about framing and numbers and lenient about order (NFD's own encoder and
//! python-ndn's agree on the order; other tools may not). Unknown non-critical elements are
//! skipped; an unknown critical one is an error.

use nexthop_wire::tlv::{Tlv, TlvReader};
use nexthop_wire::types::NAME;
use nexthop_wire::varnum::read_nonneg;
use nexthop_wire::{Name, NameView};

use crate::lp::encode::{put_header, put_nonneg, put_tlv};

/// TLV-TYPE numbers of the management protocol.
pub mod types {
    /// ControlParameters.
    pub const CONTROL_PARAMETERS: u32 = 0x68;
    /// ControlResponse.
    pub const CONTROL_RESPONSE: u32 = 0x65;
    /// StatusCode.
    pub const STATUS_CODE: u32 = 0x66;
    /// StatusText.
    pub const STATUS_TEXT: u32 = 0x67;
    /// FaceId.
    pub const FACE_ID: u32 = 0x69;
    /// Uri.
    pub const URI: u32 = 0x72;
    /// LocalUri.
    pub const LOCAL_URI: u32 = 0x81;
    /// Origin.
    pub const ORIGIN: u32 = 0x6f;
    /// Cost.
    pub const COST: u32 = 0x6a;
    /// Capacity.
    pub const CAPACITY: u32 = 0x83;
    /// Count.
    pub const COUNT: u32 = 0x84;
    /// Flags.
    pub const FLAGS: u32 = 0x6c;
    /// Mask.
    pub const MASK: u32 = 0x70;
    /// Strategy.
    pub const STRATEGY: u32 = 0x6b;
    /// ExpirationPeriod.
    pub const EXPIRATION_PERIOD: u32 = 0x6d;
    /// FacePersistency.
    pub const FACE_PERSISTENCY: u32 = 0x85;
    /// UriScheme (in a FaceQueryFilter; Capacity's number in ControlParameters).
    pub const URI_SCHEME: u32 = 0x83;
    /// FaceScope (in FaceStatus and FaceQueryFilter; Count's number in ControlParameters).
    pub const FACE_SCOPE: u32 = 0x84;
    /// LinkType (in FaceStatus and FaceQueryFilter).
    pub const LINK_TYPE: u32 = 0x86;
    /// Mtu.
    pub const MTU: u32 = 0x89;
    /// BaseCongestionMarkingInterval (ns).
    pub const BASE_CONGESTION_MARKING_INTERVAL: u32 = 0x87;
    /// DefaultCongestionThreshold (bytes).
    pub const DEFAULT_CONGESTION_THRESHOLD: u32 = 0x88;
}
use types::*;

/// Why ControlParameters did not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad ControlParameters: {0}")]
pub struct ParamsError(pub String);

/// Decoded ControlParameters; absent fields are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControlParameters {
    /// Name.
    pub name: Option<Name>,
    /// FaceId.
    pub face_id: Option<u64>,
    /// Uri.
    pub uri: Option<String>,
    /// LocalUri.
    pub local_uri: Option<String>,
    /// Origin.
    pub origin: Option<u64>,
    /// Cost.
    pub cost: Option<u64>,
    /// Capacity.
    pub capacity: Option<u64>,
    /// Count.
    pub count: Option<u64>,
    /// Flags.
    pub flags: Option<u64>,
    /// Mask.
    pub mask: Option<u64>,
    /// Strategy name.
    pub strategy: Option<Name>,
    /// ExpirationPeriod (ms).
    pub expiration_period: Option<u64>,
    /// FacePersistency.
    pub face_persistency: Option<u64>,
    /// Mtu.
    pub mtu: Option<u64>,
    /// BaseCongestionMarkingInterval (ns).
    pub base_congestion_marking_interval: Option<u64>,
    /// DefaultCongestionThreshold (bytes).
    pub default_congestion_threshold: Option<u64>,
}

fn wire_err(e: nexthop_wire::Error) -> ParamsError {
    ParamsError(e.to_string())
}

impl ControlParameters {
    /// Decodes a whole ControlParameters element (as carried in a command name component).
    ///
    /// # Errors
    /// [`ParamsError`] for bad framing, a bad number, a field twice, bad UTF-8 in a URI or an
    /// unknown critical element. Never panics.
    pub fn decode(wire: &[u8]) -> Result<Self, ParamsError> {
        let outer = Tlv::read_exact(wire, CONTROL_PARAMETERS).map_err(wire_err)?;
        Self::decode_value(outer.value)
    }

    fn decode_value(value: &[u8]) -> Result<Self, ParamsError> {
        let mut p = ControlParameters::default();
        for t in TlvReader::new(value) {
            let t = t.map_err(wire_err)?;
            let num = || read_nonneg(t.ty, t.value).map_err(wire_err);
            let text = || String::from_utf8(t.value.to_vec()).map_err(|_| ParamsError("URI is not UTF-8".into()));
            fn set<T>(slot: &mut Option<T>, v: T, ty: u32) -> Result<(), ParamsError> {
                if slot.replace(v).is_some() {
                    return Err(ParamsError(format!("element {ty:#x} appears twice")));
                }
                Ok(())
            }
            match t.ty {
                NAME => set(&mut p.name, NameView::from_value(t.value).map_err(wire_err)?.to_name(), t.ty)?,
                FACE_ID => set(&mut p.face_id, num()?, t.ty)?,
                URI => set(&mut p.uri, text()?, t.ty)?,
                LOCAL_URI => set(&mut p.local_uri, text()?, t.ty)?,
                ORIGIN => set(&mut p.origin, num()?, t.ty)?,
                COST => set(&mut p.cost, num()?, t.ty)?,
                CAPACITY => set(&mut p.capacity, num()?, t.ty)?,
                COUNT => set(&mut p.count, num()?, t.ty)?,
                FLAGS => set(&mut p.flags, num()?, t.ty)?,
                MASK => set(&mut p.mask, num()?, t.ty)?,
                STRATEGY => {
                    let inner = Tlv::read_exact(t.value, NAME).map_err(wire_err)?;
                    set(&mut p.strategy, NameView::from_value(inner.value).map_err(wire_err)?.to_name(), t.ty)?
                }
                EXPIRATION_PERIOD => set(&mut p.expiration_period, num()?, t.ty)?,
                FACE_PERSISTENCY => set(&mut p.face_persistency, num()?, t.ty)?,
                MTU => set(&mut p.mtu, num()?, t.ty)?,
                BASE_CONGESTION_MARKING_INTERVAL => set(&mut p.base_congestion_marking_interval, num()?, t.ty)?,
                DEFAULT_CONGESTION_THRESHOLD => set(&mut p.default_congestion_threshold, num()?, t.ty)?,
                ty if nexthop_wire::types::is_critical(ty) => return Err(ParamsError(format!("unknown critical element {ty:#x}"))),
                _ => {}
            }
        }
        Ok(p)
    }

    /// Appends the encoded element.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let mut v = Vec::new();
        if let Some(n) = &self.name {
            put_tlv(&mut v, NAME, n.value());
        }
        let num = |v: &mut Vec<u8>, ty, x: Option<u64>| {
            if let Some(x) = x {
                put_nonneg(v, ty, x);
            }
        };
        num(&mut v, FACE_ID, self.face_id);
        if let Some(u) = &self.uri {
            put_tlv(&mut v, URI, u.as_bytes());
        }
        if let Some(u) = &self.local_uri {
            put_tlv(&mut v, LOCAL_URI, u.as_bytes());
        }
        num(&mut v, ORIGIN, self.origin);
        num(&mut v, COST, self.cost);
        num(&mut v, CAPACITY, self.capacity);
        num(&mut v, COUNT, self.count);
        num(&mut v, FLAGS, self.flags);
        num(&mut v, MASK, self.mask);
        if let Some(s) = &self.strategy {
            let mut inner = Vec::new();
            put_tlv(&mut inner, NAME, s.value());
            put_tlv(&mut v, STRATEGY, &inner);
        }
        num(&mut v, EXPIRATION_PERIOD, self.expiration_period);
        num(&mut v, FACE_PERSISTENCY, self.face_persistency);
        num(&mut v, BASE_CONGESTION_MARKING_INTERVAL, self.base_congestion_marking_interval);
        num(&mut v, DEFAULT_CONGESTION_THRESHOLD, self.default_congestion_threshold);
        num(&mut v, MTU, self.mtu);
        put_tlv(out, CONTROL_PARAMETERS, &v);
    }

    /// The value a command asks for flag `bit`, where Mask has that bit (`None`: unchanged);
    /// a bit absent from Flags is off (ndn-cxx's `hasFlagBit`/`getFlagBit`).
    pub fn flag_bit(&self, bit: u64) -> Option<bool> {
        self.mask.filter(|m| m & bit != 0).map(|_| self.flags.unwrap_or(0) & bit != 0)
    }

    /// The encoded element.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }
}

/// A command's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlResponse {
    /// StatusCode (HTTP-like: 200 OK, 400 bad parameters, 403 not authorised, 404 unknown,
    /// 409 conflict, 410 face gone, 501 unsupported).
    pub code: u64,
    /// StatusText.
    pub text: String,
    /// The parameters as applied.
    pub body: Option<ControlParameters>,
}

impl ControlResponse {
    /// A response with no body.
    pub fn error(code: u64, text: impl Into<String>) -> Self {
        ControlResponse { code, text: text.into(), body: None }
    }

    /// 200 OK with `body`.
    pub fn ok(body: ControlParameters) -> Self {
        ControlResponse { code: 200, text: "OK".into(), body: Some(body) }
    }

    /// The encoded element.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::new();
        put_nonneg(&mut v, STATUS_CODE, self.code);
        put_tlv(&mut v, STATUS_TEXT, self.text.as_bytes());
        if let Some(b) = &self.body {
            b.encode_into(&mut v);
        }
        let mut out = Vec::with_capacity(v.len() + 4);
        put_header(&mut out, CONTROL_RESPONSE, v.len());
        out.extend_from_slice(&v);
        out
    }

    /// Decodes a ControlResponse (for `nexthop ctl`).
    ///
    /// # Errors
    /// [`ParamsError`] when it does not decode.
    pub fn decode(wire: &[u8]) -> Result<Self, ParamsError> {
        let outer = Tlv::read_exact(wire, CONTROL_RESPONSE).map_err(wire_err)?;
        let mut r = ControlResponse { code: 0, text: String::new(), body: None };
        let mut code = None;
        for t in TlvReader::new(outer.value) {
            let t = t.map_err(wire_err)?;
            match t.ty {
                STATUS_CODE => code = Some(read_nonneg(t.ty, t.value).map_err(wire_err)?),
                STATUS_TEXT => r.text = String::from_utf8_lossy(t.value).into_owned(),
                CONTROL_PARAMETERS => r.body = Some(ControlParameters::decode_value(t.value)?),
                _ => {}
            }
        }
        r.code = code.ok_or_else(|| ParamsError("no StatusCode".into()))?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let p = ControlParameters {
            name: Some(Name::from_uri("/a/b").unwrap()),
            face_id: Some(300),
            uri: Some("udp4://127.0.0.1:6363".into()),
            origin: Some(0),
            cost: Some(10),
            flags: Some(1),
            strategy: Some(Name::from_uri("/localhost/nfd/strategy/multicast").unwrap()),
            expiration_period: Some(3_600_000),
            ..Default::default()
        };
        assert_eq!(ControlParameters::decode(&p.encode()).unwrap(), p);
        let r = ControlResponse::ok(p);
        assert_eq!(ControlResponse::decode(&r.encode()).unwrap(), r);
    }

    #[test]
    fn python_ndn_encoding() {
        // ControlParameters{name=/test, face_id=5} as python-ndn encodes it.
        let wire = [0x68, 0x0b, 0x07, 0x06, 0x08, 0x04, b't', b'e', b's', b't', 0x69, 0x01, 0x05];
        let p = ControlParameters::decode(&wire).unwrap();
        assert_eq!(p.name.unwrap().to_string(), "/test");
        assert_eq!(p.face_id, Some(5));
    }

    #[test]
    fn face_congestion_fields_are_known() {
        // FaceId 7, BaseCongestionMarkingInterval 100 ms, DefaultCongestionThreshold 64 KiB, as
        // NDNd answers faces/create; 0x87 is odd, so it would be critical if unknown.
        let wire = [0x68, 0x0f, 0x69, 0x01, 0x07, 0x87, 0x04, 0x05, 0xf5, 0xe1, 0x00, 0x88, 0x04, 0x00, 0x01, 0x00, 0x00];
        assert_eq!(ControlParameters::decode(&wire).unwrap().face_id, Some(7));
        assert!(ControlParameters::decode(&[0x68, 0x03, 0x87, 0x01]).is_err()); // still checked
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(ControlParameters::decode(&[0x68, 0x03, 0x69, 0x03, 0x01]).is_err()); // truncated
        assert!(ControlParameters::decode(&[0x68, 0x06, 0x69, 0x01, 0x05, 0x69, 0x01, 0x06]).is_err()); // twice
        assert!(ControlParameters::decode(&[0x68, 0x03, 0x69, 0x01]).is_err());
        assert!(ControlParameters::decode(&[0x68, 0x02, 0x0b, 0x00]).is_err()); // unknown critical
        assert!(ControlParameters::decode(&[0x68, 0x02, 0xfc, 0x00]).is_ok()); // unknown non-critical
        assert!(ControlParameters::decode(&[0x69, 0x00]).is_err());
    }
}
