//! Status datasets (NFD's "StatusDataset" protocol): the encodings of faces/list (and the filter
//! of faces/query), fib/list, rib/list, strategy-choice/list, status/general and cs/info,
//! nexthop's own status/drops and
//! status/counters (labelled counts, with a reader for clients), and their segmentation into
//! Data packets named `<dataset>/<version>/<segment>`.

use nexthop_wire::tlv::TlvReader;
use nexthop_wire::types::NAME;
use nexthop_wire::{Component, Data, Emit, MetaInfo, Name};

use super::params::types::{FACE_ID, FACE_PERSISTENCY, FACE_SCOPE, LINK_TYPE, LOCAL_URI, URI, URI_SCHEME};
use crate::lp::encode::{put_nonneg, put_tlv};

/// Content bytes per dataset segment.
pub const SEGMENT_BYTES: usize = 7000;

/// A face as `faces/list` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaceStatus {
    /// FaceId.
    pub face_id: u64,
    /// Remote FaceUri.
    pub uri: String,
    /// Local FaceUri.
    pub local_uri: String,
    /// FaceScope code.
    pub scope: u64,
    /// FacePersistency code.
    pub persistency: u64,
    /// LinkType code (0 point-to-point).
    pub link_type: u64,
    /// Flags (bit 0: local fields enabled; bit 2: congestion marking enabled).
    pub flags: u64,
    /// BaseCongestionMarkingInterval (ns) and DefaultCongestionThreshold (bytes).
    pub marking: (u64, u64),
    /// Mtu: the largest packet sent whole (a face without a limit shows the largest packet,
    /// 8800, as NFD's do).
    pub mtu: u64,
    /// Packet and byte counters.
    pub counters: FaceCounts,
}

/// NFD's FaceQueryFilter (`faces/query`): a face matches when it has every field given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaceQueryFilter {
    /// FaceId.
    pub face_id: Option<u64>,
    /// The remote FaceUri's scheme (`udp4`, `unix`, `wsclient`, …).
    pub uri_scheme: Option<String>,
    /// Remote FaceUri.
    pub uri: Option<String>,
    /// Local FaceUri.
    pub local_uri: Option<String>,
    /// FaceScope code.
    pub scope: Option<u64>,
    /// FacePersistency code.
    pub persistency: Option<u64>,
    /// LinkType code.
    pub link_type: Option<u64>,
}

/// FaceQueryFilter's TLV-TYPE.
const FACE_QUERY_FILTER: u32 = 0x96;

impl FaceQueryFilter {
    /// Decodes a FaceQueryFilter element; unknown non-critical fields are skipped.
    ///
    /// # Errors
    /// A text naming what does not decode.
    pub fn decode(wire: &[u8]) -> Result<Self, String> {
        let outer = nexthop_wire::tlv::Tlv::read_exact(wire, FACE_QUERY_FILTER).map_err(|e| e.to_string())?;
        let mut f = FaceQueryFilter::default();
        for t in TlvReader::new(outer.value) {
            let t = t.map_err(|e| e.to_string())?;
            let number = || nexthop_wire::varnum::read_nonneg(t.ty, t.value).map_err(|e| e.to_string());
            let text = || String::from_utf8(t.value.to_vec()).map_err(|_| format!("TLV-TYPE {} is not UTF-8", t.ty));
            match t.ty {
                FACE_ID => f.face_id = Some(number()?),
                URI_SCHEME => f.uri_scheme = Some(text()?),
                URI => f.uri = Some(text()?),
                LOCAL_URI => f.local_uri = Some(text()?),
                FACE_SCOPE => f.scope = Some(number()?),
                FACE_PERSISTENCY => f.persistency = Some(number()?),
                LINK_TYPE => f.link_type = Some(number()?),
                ty if nexthop_wire::types::is_critical(ty) => return Err(format!("unknown critical field {ty}")),
                _ => {}
            }
        }
        Ok(f)
    }

    /// Encodes the filter (for clients).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::new();
        let num = |v: &mut Vec<u8>, ty, n: Option<u64>| {
            if let Some(n) = n {
                put_nonneg(v, ty, n);
            }
        };
        let text = |v: &mut Vec<u8>, ty, s: &Option<String>| {
            if let Some(s) = s {
                put_tlv(v, ty, s.as_bytes());
            }
        };
        num(&mut v, FACE_ID, self.face_id);
        text(&mut v, URI_SCHEME, &self.uri_scheme);
        text(&mut v, URI, &self.uri);
        text(&mut v, LOCAL_URI, &self.local_uri);
        num(&mut v, FACE_SCOPE, self.scope);
        num(&mut v, FACE_PERSISTENCY, self.persistency);
        num(&mut v, LINK_TYPE, self.link_type);
        let mut out = Vec::with_capacity(v.len() + 4);
        put_tlv(&mut out, FACE_QUERY_FILTER, &v);
        out
    }

    /// Whether `face` matches.
    pub fn matches(&self, face: &FaceStatus) -> bool {
        let scheme = face.uri.split_once("://").map(|(s, _)| s);
        self.face_id.is_none_or(|id| id == face.face_id)
            && self.uri_scheme.as_deref().is_none_or(|s| Some(s) == scheme)
            && self.uri.as_deref().is_none_or(|u| u == face.uri)
            && self.local_uri.as_deref().is_none_or(|u| u == face.local_uri)
            && self.scope.is_none_or(|c| c == face.scope)
            && self.persistency.is_none_or(|c| c == face.persistency)
            && self.link_type.is_none_or(|c| c == face.link_type)
    }
}

/// A face's traffic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaceCounts {
    /// Interests received.
    pub in_interests: u64,
    /// Data received.
    pub in_data: u64,
    /// Nacks received.
    pub in_nacks: u64,
    /// Interests sent.
    pub out_interests: u64,
    /// Data sent.
    pub out_data: u64,
    /// Nacks sent.
    pub out_nacks: u64,
    /// Bytes received.
    pub in_bytes: u64,
    /// Bytes sent.
    pub out_bytes: u64,
}

impl FaceCounts {
    /// Appends NInInterests … NOutNacks, and NInBytes/NOutBytes when `bytes` (faces have them,
    /// the forwarder-wide status does not).
    fn encode_into(&self, v: &mut Vec<u8>, bytes: bool) {
        let packets = [
            (0x90, self.in_interests),
            (0x91, self.in_data),
            (0x97, self.in_nacks),
            (0x92, self.out_interests),
            (0x93, self.out_data),
            (0x98, self.out_nacks),
        ];
        for (ty, x) in packets {
            put_nonneg(v, ty, x);
        }
        if bytes {
            put_nonneg(v, 0x94, self.in_bytes);
            put_nonneg(v, 0x95, self.out_bytes);
        }
    }
}

impl FaceStatus {
    /// Appends the face's identity as FaceStatus and FaceEventNotification both begin with it:
    /// FaceId, Uri, LocalUri, FaceScope, FacePersistency, LinkType.
    pub fn put_identity(&self, v: &mut Vec<u8>) {
        put_nonneg(v, 0x69, self.face_id);
        put_tlv(v, 0x72, self.uri.as_bytes());
        put_tlv(v, 0x81, self.local_uri.as_bytes());
        put_nonneg(v, 0x84, self.scope);
        put_nonneg(v, 0x85, self.persistency);
        put_nonneg(v, 0x86, self.link_type);
    }

    /// Appends the FaceStatus element.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let mut v = Vec::new();
        self.put_identity(&mut v);
        put_nonneg(&mut v, 0x87, self.marking.0);
        put_nonneg(&mut v, 0x88, self.marking.1);
        put_nonneg(&mut v, 0x89, self.mtu);
        self.counters.encode_into(&mut v, true);
        put_nonneg(&mut v, 0x6c, self.flags);
        put_tlv(out, 0x80, &v);
    }
}

/// `status/general`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GeneralStatus {
    /// NfdVersion.
    pub version: String,
    /// StartTimestamp (ms since the epoch).
    pub start_ms: u64,
    /// CurrentTimestamp.
    pub now_ms: u64,
    /// NFibEntries.
    pub fib_entries: u64,
    /// NPitEntries.
    pub pit_entries: u64,
    /// NCsEntries.
    pub cs_entries: u64,
    /// Forwarder-wide counters (NInInterests …).
    pub counts: FaceCounts,
    /// NSatisfiedInterests.
    pub satisfied: u64,
    /// NUnsatisfiedInterests.
    pub unsatisfied: u64,
}

impl GeneralStatus {
    /// The encoded dataset (a sequence of elements, not wrapped).
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::new();
        put_tlv(&mut v, 0x80, self.version.as_bytes());
        put_nonneg(&mut v, 0x81, self.start_ms);
        put_nonneg(&mut v, 0x82, self.now_ms);
        put_nonneg(&mut v, 0x83, self.fib_entries);
        put_nonneg(&mut v, 0x84, self.fib_entries);
        put_nonneg(&mut v, 0x85, self.pit_entries);
        put_nonneg(&mut v, 0x86, 0);
        put_nonneg(&mut v, 0x87, self.cs_entries);
        self.counts.encode_into(&mut v, false);
        put_nonneg(&mut v, 0x99, self.satisfied);
        put_nonneg(&mut v, 0x9a, self.unsatisfied);
        v
    }
}

/// `cs/info`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CsInfo {
    /// Capacity (packets).
    pub capacity: u64,
    /// Flags (bit 0 admit, bit 1 serve).
    pub flags: u64,
    /// Packets held.
    pub entries: u64,
    /// Hits.
    pub hits: u64,
    /// Misses.
    pub misses: u64,
}

impl CsInfo {
    /// The encoded dataset.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::new();
        put_nonneg(&mut v, 0x83, self.capacity);
        put_nonneg(&mut v, 0x6c, self.flags);
        put_nonneg(&mut v, 0x87, self.entries);
        put_nonneg(&mut v, 0x81, self.hits);
        put_nonneg(&mut v, 0x82, self.misses);
        let mut out = Vec::new();
        put_tlv(&mut out, 0x80, &v);
        out
    }
}

/// A FibEntry element: name and (face, cost) records.
pub fn fib_entry(out: &mut Vec<u8>, name: &[u8], hops: impl Iterator<Item = (u64, u64)>) {
    let mut v = Vec::new();
    put_tlv(&mut v, NAME, name);
    for (face, cost) in hops {
        let mut r = Vec::new();
        put_nonneg(&mut r, 0x69, face);
        put_nonneg(&mut r, 0x6a, cost);
        put_tlv(&mut v, 0x81, &r);
    }
    put_tlv(out, 0x80, &v);
}

/// A RibEntry element: name and routes (face, origin, cost, flags, expiration).
pub fn rib_entry(out: &mut Vec<u8>, name: &[u8], routes: impl Iterator<Item = (u64, u64, u64, u64, Option<u64>)>) {
    let mut v = Vec::new();
    put_tlv(&mut v, NAME, name);
    for (face, origin, cost, flags, expires) in routes {
        let mut r = Vec::new();
        put_nonneg(&mut r, 0x69, face);
        put_nonneg(&mut r, 0x6f, origin);
        put_nonneg(&mut r, 0x6a, cost);
        put_nonneg(&mut r, 0x6c, flags);
        if let Some(e) = expires {
            put_nonneg(&mut r, 0x6d, e);
        }
        put_tlv(&mut v, 0x81, &r);
    }
    put_tlv(out, 0x80, &v);
}

/// A StrategyChoice element.
pub fn strategy_choice(out: &mut Vec<u8>, name: &[u8], strategy: &Name) {
    let mut v = Vec::new();
    put_tlv(&mut v, NAME, name);
    let mut s = Vec::new();
    put_tlv(&mut s, NAME, strategy.value());
    put_tlv(&mut v, 0x6b, &s);
    put_tlv(out, 0x80, &v);
}

/// A ChannelStatus element (`faces/channels`): the LocalUri a listener accepts faces on.
pub fn channel_status(out: &mut Vec<u8>, local_uri: &str) {
    let mut v = Vec::new();
    put_tlv(&mut v, 0x81, local_uri.as_bytes());
    put_tlv(out, 0x82, &v);
}

/// `status/drops` and `status/counters` (nexthop's): a `0x80` element per reason or counter
/// holding Label `0x81` (text) and Count `0x82`.
pub fn labelled_counts(counts: &[(&str, u64)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (label, n) in counts {
        let mut v = Vec::new();
        put_tlv(&mut v, 0x81, label.as_bytes());
        put_nonneg(&mut v, 0x82, *n);
        put_tlv(&mut out, 0x80, &v);
    }
    out
}

/// Reads a [`labelled_counts`] dataset back: (label, count) per element, in order (elements
/// that do not decode are skipped).
pub fn parse_labelled_counts(content: &[u8]) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for e in TlvReader::new(content).filter_map(Result::ok).filter(|t| t.ty == 0x80) {
        let (mut label, mut count) = (None, None);
        for f in TlvReader::new(e.value).filter_map(Result::ok) {
            match f.ty {
                0x81 => label = Some(String::from_utf8_lossy(f.value).into_owned()),
                0x82 => count = nexthop_wire::varnum::read_nonneg(f.ty, f.value).ok(),
                _ => {}
            }
        }
        if let (Some(l), Some(n)) = (label, count) {
            out.push((l, n));
        }
    }
    out
}

/// Cuts a dataset into signed Data segments named `prefix/v=<version>/seg=<i>`, the last
/// with FinalBlockId; an empty dataset is one empty segment.
pub fn segments(prefix: &Name, version: u64, content: &[u8]) -> Vec<Vec<u8>> {
    let chunks: Vec<&[u8]> = if content.is_empty() { vec![&[][..]] } else { content.chunks(SEGMENT_BYTES).collect() };
    let last = chunks.len() as u64 - 1;
    let versioned = prefix.clone().with(Component::version(version));
    chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut d = Data::new(versioned.clone().with(Component::segment(i as u64)), c.to_vec());
            d.meta_info =
                Some(MetaInfo { freshness_period_ms: Some(1000), final_block_id: Some(Component::segment(last)), ..Default::default() });
            d.sign_digest_sha256();
            d.to_bytes()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use nexthop_wire::DataView;

    use super::*;

    #[test]
    fn a_face_query_filter_round_trips_and_bad_ones_are_refused() {
        let f = FaceQueryFilter { face_id: Some(300), uri_scheme: Some("udp4".into()), scope: Some(1), ..Default::default() };
        assert_eq!(FaceQueryFilter::decode(&f.encode()), Ok(f.clone()));
        let face = |id, uri: &str, scope| FaceStatus {
            face_id: id,
            uri: uri.into(),
            local_uri: String::new(),
            scope,
            persistency: 0,
            link_type: 0,
            flags: 0,
            marking: (0, 0),
            mtu: 8800,
            counters: FaceCounts::default(),
        };
        assert!(f.matches(&face(300, "udp4://127.0.0.1:9", 1)));
        assert!(!f.matches(&face(300, "tcp4://127.0.0.1:9", 1)));
        assert!(!f.matches(&face(301, "udp4://127.0.0.1:9", 1)));
        assert!(FaceQueryFilter::default().matches(&face(1, "unix:///x", 0)));
        // Cut short, another type, an unknown critical field: errors, not panics.
        assert!(FaceQueryFilter::decode(&f.encode()[..3]).is_err());
        assert!(FaceQueryFilter::decode(&[0x97, 0x00]).is_err());
        assert!(FaceQueryFilter::decode(&[0x96, 0x03, 0x65, 0x01, 0x00]).is_err());
        assert_eq!(FaceQueryFilter::decode(&[0x96, 0x03, 0xfc, 0x01, 0x00]), Ok(FaceQueryFilter::default()));
    }

    #[test]
    fn segments_cover_content_and_end_with_final_block() {
        let content: Vec<u8> = (0..SEGMENT_BYTES * 2 + 5).map(|i| i as u8).collect();
        let p = Name::from_uri("/localhost/nfd/faces/list").unwrap();
        let segs = segments(&p, 7, &content);
        assert_eq!(segs.len(), 3);
        let mut joined = Vec::new();
        for s in &segs {
            let d = DataView::decode(s).unwrap();
            assert!(d.verify_digest_sha256());
            assert_eq!(d.meta_info().unwrap().final_block_id.unwrap().to_owned(), Component::segment(2));
            joined.extend_from_slice(d.content().unwrap());
        }
        assert_eq!(joined, content);
        assert_eq!(segments(&p, 1, &[]).len(), 1);
    }

    #[test]
    fn labelled_counts_read_back() {
        let counts = [("no-route", 3u64), ("cs_l2_read_bytes", 1 << 40), ("zero", 0)];
        let mut content = labelled_counts(&counts);
        let back = parse_labelled_counts(&content);
        assert_eq!(back, counts.iter().map(|&(l, n)| (l.to_string(), n)).collect::<Vec<_>>());
        // A cut-short element is skipped, not misread.
        content.truncate(content.len() - 1);
        assert_eq!(parse_labelled_counts(&content).len(), 2);
    }
}
