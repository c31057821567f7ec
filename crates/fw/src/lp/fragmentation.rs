//! NDNLPv2 indexed fragmentation: cutting a packet that is larger than a face's MTU into
//! LpPacket fragments ([`fragment`]), and putting received fragments back together
//! ([`Reassembler`]).
//!
//! Overview: the fragments of one network-layer packet carry consecutive `Sequence` numbers,
//! their `FragIndex` (0-based) and the same `FragCount`; `Sequence − FragIndex` (the base) names
//! the packet among a face's fragments. Header fields (PitToken, Nack, IncomingFaceId,
//! CachePolicy, …) travel on the first fragment only, as NFD and NDNd send them. A reassembled
//! packet is handed back as one whole LpPacket: the first fragment's header fields and a
//! `Fragment` holding the concatenated pieces, so the pipeline reads it like any other packet.
//!
//! NDNd fragments every packet larger than 1420 bytes on UDP faces (its default UDP MTU), so a
//! forwarder that drops fragments cannot receive most Data from it.
//!
//! Bounds, so that fragments from the network cost bounded memory: at most
//! [`MAX_FRAGMENTS`] fragments per packet, a reassembled packet no larger than
//! [`MAX_PACKET_BYTES`], [`Reassembler::new`]'s byte budget over every partial packet, and a
//! partial packet is forgotten [`REASSEMBLY_TIMEOUT_MS`] after its latest fragment (NFD restarts
//! its drop timer with each, so a packet whose fragments keep coming, as link reliability
//! sends lost ones again, is not cut short). On a face with link reliability the caller gives a
//! longer time ([`reliable_timeout_ms`], ours): a lost fragment comes again one of the sender's
//! retransmission timeouts later, which before the sender has measured a round trip (1 s), or
//! on a link of a few hundred ms round trip, is more than NFD's 500 ms — its partial packet
//! would be gone. Every fragment refused is a counted drop ([`DropReason::ReassemblyBad`],
//! [`DropReason::ReassemblyFull`], [`DropReason::ReassemblyTimeout`] per partial packet that timed out).
//! Sans-I/O: the caller gives the time.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use nexthop_wire::tlv::{Tlv, TlvReader};
use nexthop_wire::types::{FRAGMENT, FRAG_COUNT, FRAG_INDEX, LP_PACKET, SEQUENCE};
use nexthop_wire::LpPacketView;

use crate::counters::DropReason;
use crate::face::FaceId;
use crate::face::MAX_PACKET_BYTES;
use crate::lp::encode::{put_header, put_nonneg, put_tlv, put_var, tlv_len};

/// Fragments one packet may be cut into (NDNd cuts an 8800-byte packet into 7 at its 1420-byte
/// UDP MTU; ndn-cxx allows 400).
pub const MAX_FRAGMENTS: u64 = 64;
/// A partial packet is forgotten this long after its latest fragment arrived (NFD's default).
pub const REASSEMBLY_TIMEOUT_MS: u64 = 500;

/// How long a partial packet waits for its next fragment on a face with link reliability whose
/// retransmission timeout is `rto_ms`: a lost fragment is sent again one of the *sender's* RTOs
/// after it first went. The sender's estimate of the link is about this face's once both have
/// measured round trips, but is the initial 1 s until the sender has (this face may have
/// measured its own packets' already): twice the larger of the two.
pub fn reliable_timeout_ms(rto_ms: u64) -> u64 {
    2 * rto_ms.max(crate::lp::rtt::INITIAL_RTO_MS as u64)
}

/// The smallest MTU [`fragment`] accepts: room for a fragment's header and some payload.
pub const MIN_MTU: usize = 256;

/// Memory a partial packet costs beside its pieces' bytes (its record, map and deadline entries),
/// and each piece's allocation beside its bytes: charged to [`Reassembler::new`]'s budget.
const PARTIAL_OVERHEAD: usize = 192;
const PIECE_OVERHEAD: usize = 32;

/// Bytes of a `Sequence` element: NDNLPv2 sequence numbers are fixed-width 8-octet integers.
const SEQUENCE_TLV_BYTES: usize = 10;

/// Cuts `packet` (a bare Interest/Data or an LpPacket) into fragments of at most `mtu` bytes,
/// appending each to `out` as a complete LpPacket; `next_sequence` is the face's counter and
/// advances by the fragment count. A packet that fits is appended unchanged.
///
/// # Errors
/// [`DropReason::Malformed`] when `packet` is an LpPacket that does not decode, or is itself a
/// fragment; [`DropReason::Oversize`] when `mtu` is below [`MIN_MTU`] or the header fields alone do not
/// fit. Nothing is appended then.
pub fn fragment(packet: &[u8], mtu: usize, next_sequence: &mut u64, out: &mut Vec<Vec<u8>>) -> Result<(), DropReason> {
    if packet.len() <= mtu {
        out.push(packet.to_vec());
        return Ok(());
    }
    if mtu < MIN_MTU {
        return Err(DropReason::Oversize);
    }
    let (header, payload) = split_lp(packet)?;
    // Every fragment: LpPacket TL (≤ 4) + Sequence + FragIndex and FragCount (≤ 3 each below
    // 256 fragments) + Fragment TL (≤ 4); the first also carries the header fields.
    let fixed = 4 + SEQUENCE_TLV_BYTES + 3 + 3 + 4;
    let first_room = mtu.checked_sub(fixed + header.len()).filter(|&r| r > 0).ok_or(DropReason::Oversize)?;
    let room = mtu - fixed;
    let count = 1 + payload.len().saturating_sub(first_room).div_ceil(room);
    if count as u64 > MAX_FRAGMENTS {
        return Err(DropReason::Oversize);
    }
    let mut at = 0;
    for index in 0..count {
        let take = if index == 0 { first_room } else { room }.min(payload.len() - at);
        let piece = &payload[at..at + take];
        at += take;
        let extra = if index == 0 { header.len() } else { 0 };
        let value_len = SEQUENCE_TLV_BYTES
            + crate::lp::encode::nonneg_tlv_len(FRAG_INDEX, index as u64)
            + crate::lp::encode::nonneg_tlv_len(FRAG_COUNT, count as u64)
            + extra
            + tlv_len(FRAGMENT, piece.len());
        let mut wire = Vec::with_capacity(tlv_len(LP_PACKET, value_len));
        put_header(&mut wire, LP_PACKET, value_len);
        put_tlv(&mut wire, SEQUENCE, &next_sequence.wrapping_add(index as u64).to_be_bytes());
        put_nonneg(&mut wire, FRAG_INDEX, index as u64);
        put_nonneg(&mut wire, FRAG_COUNT, count as u64);
        if index == 0 {
            wire.extend_from_slice(&header);
        }
        put_tlv(&mut wire, FRAGMENT, piece);
        debug_assert!(wire.len() <= mtu);
        out.push(wire);
    }
    *next_sequence = next_sequence.wrapping_add(count as u64);
    Ok(())
}

/// True when `bytes` is an LpPacket carrying one fragment of a larger packet.
pub fn is_fragment(bytes: &[u8]) -> bool {
    bytes.first() == Some(&(LP_PACKET as u8)) && LpPacketView::decode(bytes).is_ok_and(|lp| !lp.is_whole())
}

/// An LpPacket's header fields (every element but Sequence, FragIndex, FragCount and
/// Fragment, as encoded) and its fragment; a bare packet has no header fields.
fn split_lp(packet: &[u8]) -> Result<(Vec<u8>, &[u8]), DropReason> {
    if Tlv::read_exact(packet, LP_PACKET).is_err() {
        return Ok((Vec::new(), packet));
    }
    let lp = LpPacketView::decode(packet).map_err(|_| DropReason::Malformed)?;
    if !lp.is_whole() {
        return Err(DropReason::Malformed);
    }
    header_and_fragment(packet)
}

/// An LpPacket's header fields and Fragment, whole or not (the caller decoded it already).
fn header_and_fragment(packet: &[u8]) -> Result<(Vec<u8>, &[u8]), DropReason> {
    let outer = Tlv::read_exact(packet, LP_PACKET).map_err(|_| DropReason::Malformed)?;
    let mut header = Vec::new();
    let mut payload: &[u8] = &[];
    for tlv in TlvReader::new(outer.value) {
        let tlv = tlv.map_err(|_| DropReason::Malformed)?;
        match tlv.ty {
            SEQUENCE | FRAG_INDEX | FRAG_COUNT => {}
            FRAGMENT => payload = tlv.value,
            _ => header.extend_from_slice(tlv.wire),
        }
    }
    Ok((header, payload))
}

/// One packet being put back together.
#[derive(Debug)]
struct Partial {
    /// The first fragment's header fields, once it has arrived.
    header: Vec<u8>,
    /// Each fragment's piece; `None` until it arrives.
    pieces: Vec<Option<Vec<u8>>>,
    received: usize,
    /// Bytes held (header and pieces), charged to the budget.
    bytes: usize,
    /// When it is forgotten.
    deadline_ms: u64,
}

/// Which partial packet a fragment belongs to: its face, its sender on that face (0 but on a
/// multi-access face, where several send), and its packet's first Sequence.
type Key = (FaceId, u64, u64);

/// Fragments waiting for the rest of their packet, per face (and sender).
#[derive(Debug)]
pub struct Reassembler {
    partial: HashMap<Key, Partial>,
    /// (deadline, key), earliest first (faces may wait different times). A partial packet's
    /// later fragments push later entries: the earlier ones no longer match its deadline and
    /// are passed over.
    deadlines: BinaryHeap<Reverse<(u64, Key)>>,
    bytes_held: usize,
    max_bytes: usize,
    /// Partial packets forgotten for lack of time, not yet taken by [`Reassembler::take_timeouts`].
    timeouts: usize,
}

impl Reassembler {
    /// A reassembler holding at most `max_bytes` of partial packets in all.
    pub fn new(max_bytes: usize) -> Self {
        Reassembler { partial: HashMap::new(), deadlines: BinaryHeap::new(), bytes_held: 0, max_bytes, timeouts: 0 }
    }

    /// Partial packets held.
    pub fn len(&self) -> usize {
        self.partial.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.partial.is_empty()
    }

    /// Bytes held over every partial packet.
    pub fn bytes_held(&self) -> usize {
        self.bytes_held
    }

    /// Takes one received fragment (an LpPacket with FragCount > 1) from `face`. Returns the
    /// whole packet when this was its last missing fragment, as an LpPacket carrying the first
    /// fragment's header fields.
    ///
    /// # Errors
    /// The drop reason for this fragment: [`DropReason::Malformed`] when it does not decode,
    /// [`DropReason::ReassemblyBad`] for a fragment without Sequence or Fragment, a FragCount above
    /// [`MAX_FRAGMENTS`], one that disagrees with the packet's other fragments (the partial
    /// packet is dropped too), a duplicate, or a packet growing past [`MAX_PACKET_BYTES`];
    /// [`DropReason::ReassemblyFull`] when the byte budget is spent.
    pub fn feed(&mut self, now_ms: u64, face: FaceId, wire: &[u8]) -> Result<Option<Vec<u8>>, DropReason> {
        self.feed_from(now_ms, face, 0, wire, REASSEMBLY_TIMEOUT_MS)
    }

    /// [`Reassembler::feed`] for a fragment from sender `endpoint` on a multi-access face
    /// (fragments of different senders never meet), its partial packet forgotten `timeout_ms`
    /// after this fragment if still not whole ([`reliable_timeout_ms`] on a face with link
    /// reliability).
    ///
    /// # Errors
    /// As [`Reassembler::feed`].
    pub fn feed_from(
        &mut self,
        now_ms: u64,
        face: FaceId,
        endpoint: u64,
        wire: &[u8],
        timeout_ms: u64,
    ) -> Result<Option<Vec<u8>>, DropReason> {
        let lp = LpPacketView::decode(wire).map_err(|_| DropReason::Malformed)?;
        let count = lp.frag_count.unwrap_or(1);
        let index = lp.frag_index.unwrap_or(0);
        let (Some(sequence), Some(piece)) = (lp.sequence, lp.fragment) else { return Err(DropReason::ReassemblyBad) };
        if !(2..=MAX_FRAGMENTS).contains(&count) || index >= count {
            return Err(DropReason::ReassemblyBad);
        }
        let base = sequence.wrapping_sub(index);
        let header = if index == 0 { header_and_fragment(wire)?.0 } else { Vec::new() };
        self.expire(now_ms);
        let key = (face, endpoint, base);
        // What this fragment adds to memory: its bytes, and a new partial packet's own size
        // (its slots, map and deadline entries), so that many tiny fragments cannot hold more
        // than the budget either.
        let mut cost = piece.len() + header.len() + PIECE_OVERHEAD;
        if !self.partial.contains_key(&key) {
            cost += PARTIAL_OVERHEAD + count as usize * core::mem::size_of::<Option<Vec<u8>>>();
        }
        if self.bytes_held + cost > self.max_bytes {
            return Err(DropReason::ReassemblyFull);
        }
        let partial = self.partial.entry(key).or_insert_with(|| Partial {
            header: Vec::new(),
            pieces: vec![None; count as usize],
            received: 0,
            bytes: 0,
            deadline_ms: 0,
        });
        let index = index as usize;
        if partial.pieces.len() != count as usize || partial.pieces[index].is_some() {
            let mismatched = partial.pieces.len() != count as usize;
            if mismatched {
                self.forget(key);
            }
            return Err(DropReason::ReassemblyBad);
        }
        let payload_bytes: usize = partial.pieces.iter().flatten().map(Vec::len).sum::<usize>() + piece.len();
        if payload_bytes > MAX_PACKET_BYTES {
            self.forget(key);
            return Err(DropReason::ReassemblyBad);
        }
        partial.pieces[index] = Some(piece.to_vec());
        if index == 0 {
            partial.header = header;
        }
        partial.received += 1;
        partial.bytes += cost;
        self.bytes_held += cost;
        if partial.received < partial.pieces.len() {
            partial.deadline_ms = now_ms + timeout_ms;
            self.deadlines.push(Reverse((partial.deadline_ms, key)));
            return Ok(None);
        }
        let done = self.forget(key).expect("just completed");
        let value_len = done.header.len() + tlv_len(FRAGMENT, payload_bytes);
        let mut whole = Vec::with_capacity(tlv_len(LP_PACKET, value_len));
        put_header(&mut whole, LP_PACKET, value_len);
        whole.extend_from_slice(&done.header);
        put_var(&mut whole, u64::from(FRAGMENT));
        put_var(&mut whole, payload_bytes as u64);
        for piece in done.pieces.into_iter().flatten() {
            whole.extend_from_slice(&piece);
        }
        Ok(Some(whole))
    }

    /// Forgets the partial packets whose time is up ([`Reassembler::feed`] does it too, so a
    /// caller that never calls this still has its budget back).
    pub fn expire(&mut self, now_ms: u64) {
        while let Some(&Reverse((deadline, key))) = self.deadlines.peek() {
            if deadline > now_ms {
                break;
            }
            self.deadlines.pop();
            // The key may have completed, or come back with a later deadline.
            if self.partial.get(&key).is_some_and(|p| p.deadline_ms == deadline) {
                self.forget(key);
                self.timeouts += 1;
            }
        }
    }

    /// Partial packets forgotten for lack of time since the last call (each a
    /// [`DropReason::ReassemblyTimeout`] for the caller to count).
    pub fn take_timeouts(&mut self) -> usize {
        std::mem::take(&mut self.timeouts)
    }

    /// Forgets every partial packet of a face that has gone.
    pub fn face_down(&mut self, face: FaceId) {
        let keys: Vec<Key> = self.partial.keys().filter(|k| k.0 == face).copied().collect();
        for key in keys {
            self.forget(key);
        }
    }

    fn forget(&mut self, key: Key) -> Option<Partial> {
        let p = self.partial.remove(&key)?;
        self.bytes_held -= p.bytes;
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{Data, Emit, LpPacket, NackReason, Name};
    use proptest::prelude::*;

    use super::*;
    use crate::lp::encode::{put_packet, LpFields};
    use crate::lp::packet::{classify, Network};

    fn data(payload: usize) -> Vec<u8> {
        Data::new(Name::from_uri("/frag/test").unwrap(), vec![0x5a; payload]).to_bytes()
    }

    fn reassemble(r: &mut Reassembler, frags: &[Vec<u8>]) -> Option<Vec<u8>> {
        let mut whole = None;
        for f in frags {
            if let Some(w) = r.feed(0, 7, f).unwrap() {
                assert!(whole.is_none(), "one packet completes once");
                whole = Some(w);
            }
        }
        whole
    }

    #[test]
    fn a_packet_that_fits_goes_out_unchanged() {
        let d = data(100);
        let (mut seq, mut out) = (5, Vec::new());
        fragment(&d, 1420, &mut seq, &mut out).unwrap();
        assert_eq!(out, vec![d]);
        assert_eq!(seq, 5);
    }

    #[test]
    fn an_8800_byte_data_crosses_a_1420_byte_mtu_with_its_pit_token() {
        let d = data(8000);
        let mut lp = Vec::new();
        put_packet(&mut lp, &LpFields { pit_token: Some(&[1, 2, 3, 4, 5, 6, 7, 8]), ..Default::default() }, &d);
        let (mut seq, mut out) = (u64::MAX - 2, Vec::new());
        fragment(&lp, 1420, &mut seq, &mut out).unwrap();
        assert_eq!(out.len(), 6);
        assert!(out.iter().all(|f| f.len() <= 1420));
        assert_eq!(seq, (u64::MAX - 2).wrapping_add(6), "sequence numbers wrap");
        let mut r = Reassembler::new(1 << 20);
        out.reverse(); // any order
        let whole = reassemble(&mut r, &out).expect("complete");
        let got = classify(&whole).unwrap().unwrap();
        assert_eq!(got.link.pit_token, Some(&[1u8, 2, 3, 4, 5, 6, 7, 8][..]));
        let Network::Data(v) = got.packet else { panic!("data") };
        assert_eq!(v.wire(), &d[..]);
        assert!(r.is_empty());
        assert_eq!(r.bytes_held(), 0);
    }

    #[test]
    fn a_nack_keeps_its_reason_across_fragments() {
        let mut i = nexthop_wire::Interest::new(Name::from_uri(&format!("/n/{}", "x".repeat(3000))).unwrap());
        i.nonce = Some([1, 2, 3, 4]);
        let iw = i.to_bytes();
        let mut lp = Vec::new();
        put_packet(&mut lp, &LpFields { nack: Some(NackReason::NoRoute), ..Default::default() }, &iw);
        let (mut seq, mut out) = (0, Vec::new());
        fragment(&lp, 1000, &mut seq, &mut out).unwrap();
        let whole = reassemble(&mut Reassembler::new(1 << 20), &out).unwrap();
        assert!(matches!(classify(&whole).unwrap().unwrap().packet, Network::Nack(NackReason::NoRoute, _)));
    }

    #[test]
    fn fragments_from_two_faces_with_the_same_sequence_stay_apart() {
        let (a, b) = (data(3000), data(2500));
        let (mut sa, mut sb, mut fa, mut fb) = (100, 100, Vec::new(), Vec::new());
        fragment(&a, 1000, &mut sa, &mut fa).unwrap();
        fragment(&b, 1000, &mut sb, &mut fb).unwrap();
        let mut r = Reassembler::new(1 << 20);
        let mut done = Vec::new();
        for (fa, fb) in fa.iter().zip(&fb) {
            done.extend(r.feed(0, 1, fa).unwrap().map(|w| (1, w)));
            done.extend(r.feed(0, 2, fb).unwrap().map(|w| (2, w)));
        }
        for f in &fa[fb.len()..] {
            done.extend(r.feed(0, 1, f).unwrap().map(|w| (1, w)));
        }
        assert_eq!(done.len(), 2);
        for (face, w) in done {
            let Network::Data(v) = classify(&w).unwrap().unwrap().packet else { panic!() };
            assert_eq!(v.wire(), if face == 1 { &a[..] } else { &b[..] });
        }
    }

    #[test]
    fn bad_fragments_are_refused_and_change_nothing() {
        let (mut seq, mut out) = (0, Vec::new());
        fragment(&data(3000), 1000, &mut seq, &mut out).unwrap();
        let mut r = Reassembler::new(1 << 20);
        r.feed(0, 1, &out[0]).unwrap();
        assert_eq!(r.feed(0, 1, &out[0]), Err(DropReason::ReassemblyBad), "duplicate");
        let held = r.bytes_held();
        // No Sequence.
        let mut lp = LpPacket::wrap(vec![1, 2, 3]);
        lp.frag_index = Some(1);
        lp.frag_count = Some(2);
        assert_eq!(r.feed(0, 1, &lp.to_bytes()), Err(DropReason::ReassemblyBad));
        // Too many fragments.
        lp.sequence = Some(9);
        lp.frag_count = Some(MAX_FRAGMENTS + 1);
        assert_eq!(r.feed(0, 1, &lp.to_bytes()), Err(DropReason::ReassemblyBad));
        assert_eq!(r.feed(0, 1, &[0x64, 0x01]), Err(DropReason::Malformed));
        assert_eq!((r.len(), r.bytes_held()), (1, held));
        // A fragment claiming another count for the same packet drops the packet.
        let mut liar = LpPacket::wrap(vec![0; 10]);
        liar.sequence = Some(1);
        liar.frag_index = Some(1);
        liar.frag_count = Some(2);
        assert_eq!(r.feed(0, 1, &liar.to_bytes()), Err(DropReason::ReassemblyBad));
        assert!(r.is_empty());
        assert_eq!(r.bytes_held(), 0);
    }

    #[test]
    fn pieces_adding_up_past_the_packet_limit_are_refused() {
        let mut r = Reassembler::new(1 << 20);
        for i in 0..3u64 {
            let mut lp = LpPacket::wrap(vec![0; 4000]);
            lp.sequence = Some(i);
            lp.frag_index = Some(i);
            lp.frag_count = Some(4);
            let got = r.feed(0, 1, &lp.to_bytes());
            assert_eq!(got, if i < 2 { Ok(None) } else { Err(DropReason::ReassemblyBad) });
        }
        assert!(r.is_empty());
    }

    #[test]
    fn the_byte_budget_and_the_timeout_bound_what_is_held() {
        let (mut seq, mut out) = (0, Vec::new());
        for _ in 0..4 {
            fragment(&data(3000), 1000, &mut seq, &mut out).unwrap();
        }
        let mut r = Reassembler::new(3000); // room for two first fragments (976 bytes each, plus overhead)
        assert_eq!(r.feed(0, 1, &out[0]), Ok(None));
        assert_eq!(r.feed(0, 1, &out[4]), Ok(None));
        assert_eq!(r.feed(0, 1, &out[8]), Err(DropReason::ReassemblyFull));
        r.expire(REASSEMBLY_TIMEOUT_MS - 1);
        assert_eq!(r.take_timeouts(), 0);
        r.expire(REASSEMBLY_TIMEOUT_MS);
        assert_eq!(r.take_timeouts(), 2);
        assert!(r.is_empty());
        assert_eq!(r.feed(600, 1, &out[8]), Ok(None), "room again");
        assert_eq!(r.feed(1200, 1, &out[9]), Ok(None), "a new partial packet: the last one timed out");
        assert_eq!(r.take_timeouts(), 1, "timeouts found while feeding are counted too");
        r.face_down(1);
        assert!(r.is_empty());
        assert_eq!(r.bytes_held(), 0);
    }

    /// As NFD's drop timer, restarted by each fragment: a packet whose fragments keep coming
    /// within the timeout of one another is put together however long it takes in all.
    #[test]
    fn each_fragment_restarts_the_timeout() {
        let (mut seq, mut out) = (0, Vec::new());
        fragment(&data(3000), 1000, &mut seq, &mut out).unwrap();
        assert_eq!(out.len(), 4);
        let mut r = Reassembler::new(1 << 20);
        let step = REASSEMBLY_TIMEOUT_MS - 1;
        for (i, piece) in out.iter().enumerate().take(3) {
            assert_eq!(r.feed(i as u64 * step, 1, piece), Ok(None));
            r.expire(i as u64 * step + step);
            assert_eq!(r.take_timeouts(), 0, "fragment {i}");
        }
        assert!(r.feed(3 * step, 1, &out[3]).unwrap().is_some(), "whole after {} ms", 3 * step);
        // Silent for the timeout after its latest fragment: forgotten.
        let mut r = Reassembler::new(1 << 20);
        assert_eq!(r.feed(0, 1, &out[0]), Ok(None));
        assert_eq!(r.feed(300, 1, &out[1]), Ok(None));
        r.expire(300 + REASSEMBLY_TIMEOUT_MS - 1);
        assert_eq!(r.take_timeouts(), 0);
        r.expire(300 + REASSEMBLY_TIMEOUT_MS);
        assert_eq!(r.take_timeouts(), 1);
        assert!(r.is_empty());
    }

    /// On a face with link reliability a partial packet waits twice the RTO, or twice the
    /// initial 1 s: a fragment resent one RTO of 1 s later (the sender measured no round trip
    /// yet) still finds it. Faces with different waits each expire at their own time.
    #[test]
    fn a_reliable_face_waits_for_a_resent_fragment() {
        assert_eq!((reliable_timeout_ms(200), reliable_timeout_ms(1000), reliable_timeout_ms(3000)), (2000, 2000, 6000));
        let (mut seq, mut out) = (0, Vec::new());
        fragment(&data(2000), 1000, &mut seq, &mut out).unwrap();
        assert_eq!(out.len(), 3);
        let mut r = Reassembler::new(1 << 20);
        // Face 1 reliable (2 s), face 2 not: both get the first two fragments.
        assert_eq!(r.feed_from(0, 1, 0, &out[0], reliable_timeout_ms(1000)), Ok(None));
        assert_eq!(r.feed_from(0, 1, 0, &out[1], reliable_timeout_ms(1000)), Ok(None));
        assert_eq!(r.feed(100, 2, &out[0]), Ok(None));
        r.expire(100 + REASSEMBLY_TIMEOUT_MS);
        assert_eq!((r.take_timeouts(), r.len()), (1, 1), "face 2's is gone, face 1's waits");
        r.expire(1999);
        assert_eq!(r.take_timeouts(), 0);
        // The third fragment, resent after the first RTO, completes the packet.
        assert!(r.feed_from(1100, 1, 0, &out[2], reliable_timeout_ms(1000)).unwrap().is_some());
        assert!(r.is_empty());
    }

    #[test]
    fn tiny_fragments_of_many_packets_are_charged_their_overhead() {
        let mut r = Reassembler::new(64 * 1024);
        let mut held = 0;
        for base in 0..10_000u64 {
            let mut lp = LpPacket::wrap(vec![0; 1]);
            lp.sequence = Some(base * MAX_FRAGMENTS);
            lp.frag_index = Some(0);
            lp.frag_count = Some(MAX_FRAGMENTS);
            match r.feed(0, 1, &lp.to_bytes()) {
                Ok(None) => held += 1,
                Err(DropReason::ReassemblyFull) => break,
                other => panic!("{other:?}"),
            }
        }
        assert!(r.bytes_held() <= 64 * 1024);
        // Each partial packet of 64 slots costs well over a kilobyte, not its one byte.
        assert!(held < 64, "{held} partial packets held in 64 KiB");
        assert_eq!(r.len(), held);
    }

    #[test]
    fn a_small_mtu_or_a_fragment_is_refused_by_the_fragmenter() {
        let (mut seq, mut out) = (0, Vec::new());
        assert_eq!(fragment(&data(3000), MIN_MTU - 1, &mut seq, &mut out), Err(DropReason::Oversize));
        fragment(&data(3000), 1000, &mut seq, &mut out).unwrap();
        let again = out[0].clone();
        assert_eq!(fragment(&again, 300, &mut seq, &mut Vec::new()), Err(DropReason::Malformed));
    }

    proptest! {
        #[test]
        fn fragments_in_any_order_give_back_the_packet(
            payload in 0usize..8000, mtu in MIN_MTU..9000usize, token in proptest::option::of(proptest::collection::vec(any::<u8>(), 1..=32)),
            seq0 in any::<u64>(), order in any::<u64>(),
        ) {
            let d = data(payload);
            let mut lp = Vec::new();
            put_packet(&mut lp, &LpFields { pit_token: token.as_deref(), ..Default::default() }, &d);
            let (mut seq, mut out) = (seq0, Vec::new());
            prop_assert_eq!(fragment(&lp, mtu, &mut seq, &mut out), Ok(()));
            prop_assert_eq!(seq, seq0.wrapping_add(if out.len() == 1 { 0 } else { out.len() as u64 }));
            if out.len() == 1 {
                prop_assert_eq!(&out[0], &lp);
                return Ok(());
            }
            prop_assert!(out.iter().all(|f| f.len() <= mtu));
            // A pseudo-random order.
            let mut keyed: Vec<(u64, Vec<u8>)> =
                out.into_iter().enumerate().map(|(i, f)| ((i as u64 + 1).wrapping_mul(order | 1).rotate_left(17), f)).collect();
            keyed.sort();
            let frags: Vec<Vec<u8>> = keyed.into_iter().map(|(_, f)| f).collect();
            let whole = reassemble(&mut Reassembler::new(1 << 20), &frags).expect("complete");
            let got = classify(&whole).unwrap().unwrap();
            prop_assert_eq!(got.link.pit_token, token.as_deref());
            let Network::Data(v) = got.packet else { panic!("data") };
            prop_assert_eq!(v.wire(), &d[..]);
        }
    }
}
