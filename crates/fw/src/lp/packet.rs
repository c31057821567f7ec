//! What arrived on a face, classified: the NDNLPv2 header fields the forwarder uses and the
//! network-layer packet inside (Interest, Data, or a Nack carrying its Interest). Every failure
//! is a [`DropReason`].

use nexthop_wire::{DataView, InterestView, LpPacketView, NackReason, PacketView};

use crate::counters::DropReason;
use crate::face::MAX_PACKET_BYTES;

/// The NDNLPv2 fields the pipeline reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkInfo<'a> {
    /// PitToken.
    pub pit_token: Option<&'a [u8]>,
    /// NextHopFaceId (honoured from local faces).
    pub next_hop_face_id: Option<u64>,
    /// CachePolicy NoCache.
    pub no_cache: bool,
    /// CongestionMark (a Data's travels on to its consumers).
    pub congestion_mark: Option<u64>,
    /// NonDiscovery (an Interest the self-learning strategy sent along a known route).
    pub non_discovery: bool,
    /// PrefixAnnouncement on Data (a Data packet announcing where it came from).
    pub prefix_announcement: Option<&'a [u8]>,
}

/// A network-layer packet.
#[derive(Debug, Clone, Copy)]
pub enum Network<'a> {
    /// An Interest.
    Interest(InterestView<'a>),
    /// A Data.
    Data(DataView<'a>),
    /// A Nack and the Interest it refuses.
    Nack(NackReason, InterestView<'a>),
}

/// A classified arrival.
#[derive(Debug, Clone, Copy)]
pub struct Incoming<'a> {
    /// Link fields.
    pub link: LinkInfo<'a>,
    /// The packet.
    pub packet: Network<'a>,
}

impl<'a> Incoming<'a> {
    /// The name of the packet (for dispatch).
    pub fn name(&self) -> nexthop_wire::NameView<'a> {
        match &self.packet {
            Network::Interest(i) | Network::Nack(_, i) => i.name(),
            Network::Data(d) => d.name(),
        }
    }
}

/// Classifies one received packet. `Ok(None)` for an LpPacket with nothing inside (an idle
/// packet or bare acknowledgements).
///
/// # Errors
/// The [`DropReason`]: oversize, malformed, unknown critical TLV, a Nack without an Interest;
/// [`DropReason::Fragment`] for one fragment of a larger packet, which the runtime gives to its
/// [`Reassembler`](crate::lp::fragmentation::Reassembler).
pub fn classify(bytes: &[u8]) -> Result<Option<Incoming<'_>>, DropReason> {
    if bytes.len() > MAX_PACKET_BYTES {
        return Err(DropReason::Oversize);
    }
    let wire_err = |e: nexthop_wire::Error| DropReason::of_wire_error(&e);
    let (link, inner, nack) = match PacketView::decode(bytes).map_err(wire_err)? {
        PacketView::Interest(i) => return Ok(Some(Incoming { link: LinkInfo::default(), packet: Network::Interest(i) })),
        PacketView::Data(d) => return Ok(Some(Incoming { link: LinkInfo::default(), packet: Network::Data(d) })),
        PacketView::Lp(lp) => {
            if !lp.is_whole() {
                return Err(DropReason::Fragment);
            }
            let Some(fragment) = lp.fragment else { return Ok(None) };
            (link_info(&lp), fragment, lp.nack())
        }
    };
    let packet = match (PacketView::decode(inner).map_err(wire_err)?, nack) {
        (PacketView::Interest(i), None) => Network::Interest(i),
        (PacketView::Interest(i), Some(r)) => Network::Nack(r, i),
        (PacketView::Data(d), None) => Network::Data(d),
        _ => return Err(DropReason::Malformed),
    };
    Ok(Some(Incoming { link, packet }))
}

fn link_info<'a>(lp: &LpPacketView<'a>) -> LinkInfo<'a> {
    LinkInfo {
        pit_token: lp.pit_token,
        next_hop_face_id: lp.next_hop_face_id,
        no_cache: lp.cache_policy == Some(1),
        congestion_mark: lp.congestion_mark.filter(|&m| m > 0),
        non_discovery: lp.non_discovery,
        prefix_announcement: lp.prefix_announcement,
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{Data, Emit, Interest, LpPacket, Nack, Name};

    use super::*;

    #[test]
    fn bare_and_wrapped() {
        let mut i = Interest::new(Name::from_uri("/a").unwrap());
        i.nonce = Some([1, 2, 3, 4]);
        let bytes = i.to_bytes();
        assert!(matches!(classify(&bytes), Ok(Some(Incoming { packet: Network::Interest(_), .. }))));
        let mut lp = LpPacket::wrap(bytes.clone());
        lp.pit_token = Some(vec![7; 8]);
        lp.nack = Some(Nack::new(NackReason::NoRoute));
        let w = lp.to_bytes();
        let got = classify(&w).unwrap().unwrap();
        assert_eq!(got.link.pit_token, Some(&[7u8; 8][..]));
        assert!(matches!(got.packet, Network::Nack(NackReason::NoRoute, _)));
        let d = Data::new(Name::from_uri("/a").unwrap(), b"x".to_vec()).to_bytes();
        assert!(matches!(classify(&d).unwrap().unwrap().packet, Network::Data(_)));
    }

    #[test]
    fn drops_have_reasons() {
        assert_eq!(classify(&[0x05, 0x01]).unwrap_err(), DropReason::Malformed);
        assert_eq!(classify(&vec![0u8; MAX_PACKET_BYTES + 1]).unwrap_err(), DropReason::Oversize);
        // An Interest with an unknown critical element (type 0x0d... odd types ≤ 31 are critical).
        assert_eq!(classify(&[0x05, 0x05, 0x07, 0x00, 0x0b, 0x01, 0x00]).unwrap_err(), DropReason::UnknownCritical);
        let mut frag = LpPacket::wrap(vec![0x05, 0x02, 0x07, 0x00]);
        frag.frag_index = Some(0);
        frag.frag_count = Some(2);
        assert_eq!(classify(&frag.to_bytes()).unwrap_err(), DropReason::Fragment);
        assert!(classify(&LpPacket::default().to_bytes()).unwrap().is_none());
    }
}
