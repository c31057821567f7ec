//! NDNLPv2 link reliability (NFD's `LpReliability`): a face that loses packets on its link sends
//! them again, before the consumer's own retransmission has to.
//!
//! # Overview
//! With reliability on, every LpPacket a face sends carries two numbers:
//! - `Sequence`, the same on every transmission of that piece: a receiver drops a repeat (its
//!   Ack was lost, so the sender sent it again). NFD remembers a Sequence for one RTO of the
//!   receiver's; we keep it for [`MAX_RETX`] + 1 of them, the span over which the sender may
//!   still send it again, so that a receiver whose RTO is shorter than the sender's still
//!   knows it;
//! - `TxSequence`, new on every transmission: the receiver acknowledges it with an `Ack`
//!   field, piggybacked on the next packet it sends the other way or, [`IDLE_ACK_MS`] later,
//!   alone in an IDLE packet (an LpPacket with no Fragment).
//!
//! A sent piece is kept until its Ack comes. It is lost when its retransmission timeout passes
//! (RFC 6298's estimate from the Acks of first transmissions, [`RttEstimator`]) or once
//! [`LOSS_THRESHOLD`] Acks for later TxSequences came before its own. A lost piece goes again
//! with a new TxSequence, at most [`MAX_RETX`] times; after that its whole network packet (every
//! fragment) is given up and counted. These are NFD's defaults and rules
//! (`daemon/face/lp-reliability.cpp`). As in NFD, both ends must turn it on for the link
//! (`faces/create` or `faces/update`, Flags bit 1); a face without it ignores TxSequence and Ack.
//!
//! Bounds (ours; NFD has none): at most [`MAX_UNACKED`] pieces wait for Acks — past that, a piece
//! goes once, without TxSequence, counted as `untracked` — and at most [`MAX_PENDING`] Acks
//! wait to be sent and received Sequences are remembered, the oldest forgotten first.
//!
//! Sans-I/O: the caller cuts a packet into sequenced pieces ([`sequenced`]), hands them to
//! [`Reliability::outgoing`] and sends what it returns, passes every LpPacket the face receives
//! to [`Reliability::incoming`], and calls [`Reliability::poll`] once
//! [`Reliability::next_deadline`] has come, sending the retransmissions and IDLE packets it gives.
//! Time is in ms.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};

use nexthop_wire::types::{ACK, LP_PACKET, SEQUENCE, TX_SEQUENCE};
use nexthop_wire::LpPacketView;

use crate::counters::DropReason;
use crate::face::MAX_PACKET_BYTES;
use crate::lp::encode::{put_header, put_tlv, put_with_lp_fields};
use crate::lp::fragmentation::fragment;
use crate::lp::rtt::RttEstimator;

/// Retransmissions of one piece before its network packet is given up (NFD's `maxRetx`).
pub const MAX_RETX: u32 = 3;
/// How long an Ack waits for a packet to ride on before it goes in an IDLE packet (ms).
pub const IDLE_ACK_MS: u64 = 5;
/// Acks for later TxSequences after which a piece still unacknowledged is lost
/// (NFD's `seqNumLossThreshold`).
pub const LOSS_THRESHOLD: u32 = 3;
/// Pieces kept for retransmission at most.
pub const MAX_UNACKED: usize = 4096;
/// Acks waiting to be sent, and received Sequences remembered, at most.
pub const MAX_PENDING: usize = 65_536;
/// Bytes of one Ack or TxSequence field: 3-octet TLV-TYPE, 1-octet TLV-LENGTH, an 8-octet value.
pub const FIELD_BYTES: usize = 12;
/// What a piece may grow by when it gets its Sequence: the field (10 bytes) and, around a bare
/// packet, an LpPacket and Fragment header (4 bytes each at most).
const SEQUENCE_GROWTH: usize = 10 + 8;
/// Room kept for the LpPacket's TLV-LENGTH to grow as Acks are added (NFD keeps the same).
const LENGTH_GROWTH: usize = 2;

/// Cuts `packet` (a bare network packet or a whole LpPacket) into LpPackets that each carry a
/// `Sequence` from the face's counter `next_sequence`, appended to `out`: one when it fits `mtu`
/// (0: no limit) with room for TxSequence, else NDNLPv2 fragments.
///
/// # Errors
/// As [`fragment`]: [`DropReason::Malformed`] for an LpPacket that does not parse or is a fragment,
/// [`DropReason::Oversize`] when the MTU leaves no room. Nothing is appended then.
pub fn sequenced(packet: &[u8], mtu: usize, next_sequence: &mut u64, out: &mut Vec<Vec<u8>>) -> Result<(), DropReason> {
    let limit = if mtu == 0 { usize::MAX } else { mtu.saturating_sub(FIELD_BYTES + SEQUENCE_GROWTH) };
    if packet.len() > limit {
        return fragment(packet, limit, next_sequence, out);
    }
    if LpPacketView::decode(packet).is_ok_and(|lp| !lp.is_whole()) {
        return Err(DropReason::Malformed);
    }
    let mut field = Vec::with_capacity(10);
    put_tlv(&mut field, SEQUENCE, &next_sequence.to_be_bytes());
    let mut piece = Vec::with_capacity(packet.len() + SEQUENCE_GROWTH);
    if !put_with_lp_fields(&mut piece, packet, SEQUENCE, &field) {
        return Err(DropReason::Malformed);
    }
    *next_sequence = next_sequence.wrapping_add(1);
    out.push(piece);
    Ok(())
}

/// What reliability counted on one face.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReliabilityCounts {
    /// Network packets each piece of which was acknowledged at its first transmission.
    pub acknowledged: u64,
    /// Network packets acknowledged after at least one retransmission.
    pub retransmitted: u64,
    /// Network packets given up: a piece lost [`MAX_RETX`] + 1 times.
    pub retx_exhausted: u64,
    /// Pieces sent again.
    pub retransmissions: u64,
    /// Pieces sent without TxSequence, [`MAX_UNACKED`] pieces already waiting.
    pub untracked: u64,
    /// Received pieces dropped as repeats of a Sequence seen before.
    pub duplicates: u64,
    /// Acks received.
    pub acks_in: u64,
    /// IDLE packets sent (Acks alone).
    pub idle_out: u64,
}

impl ReliabilityCounts {
    /// The counts, labelled as `nexthop ctl status` shows them.
    pub fn labelled(&self) -> [(&'static str, u64); 8] {
        [
            ("lp_acknowledged", self.acknowledged),
            ("lp_retransmitted", self.retransmitted),
            ("lp_retx_exhausted", self.retx_exhausted),
            ("lp_retransmissions", self.retransmissions),
            ("lp_untracked", self.untracked),
            ("lp_duplicates", self.duplicates),
            ("lp_acks_in", self.acks_in),
            ("lp_idle_out", self.idle_out),
        ]
    }
}

/// What to do with a received LpPacket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// A new piece: go on with it.
    New,
    /// A repeat of a piece already received: drop it (its Ack is queued again).
    Repeat,
    /// No Fragment (an IDLE packet): nothing more to do.
    Idle,
}

/// A piece waiting for its Ack.
#[derive(Debug)]
struct Unacked {
    /// The piece as [`sequenced`] made it: no TxSequence, no Acks.
    piece: Vec<u8>,
    /// Its network packet (a key of `Reliability::packets`).
    packet: u64,
    sent_ms: u64,
    retx: u32,
    /// Acks for later TxSequences since this transmission.
    later_acks: u32,
    deadline_ms: u64,
}

/// A network packet some of whose pieces wait for Acks.
#[derive(Debug, Default)]
struct NetPacket {
    /// TxSequences of its pieces still unacknowledged.
    waiting: Vec<u64>,
    retransmitted: bool,
}

/// One face's link reliability.
#[derive(Debug, Default)]
pub struct Reliability {
    next_tx: u64,
    next_packet: u64,
    unacked: BTreeMap<u64, Unacked>,
    packets: HashMap<u64, NetPacket>,
    /// (deadline, TxSequence); an entry whose piece was acknowledged or got another deadline is
    /// passed over.
    timers: BinaryHeap<Reverse<(u64, u64)>>,
    /// TxSequences received, to acknowledge.
    acks: VecDeque<u64>,
    idle_ack_at: Option<u64>,
    /// Sequences received, with when, to drop repeats.
    recent: HashMap<u64, u64>,
    recent_order: VecDeque<(u64, u64)>,
    rtt: RttEstimator,
    /// What it counted.
    pub counts: ReliabilityCounts,
}

impl Reliability {
    /// Reliability for a face, nothing sent or received yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the pieces of one network packet (from [`sequenced`]) and replaces each with what
    /// goes on the link: with a new TxSequence, kept for retransmission, and with Acks waiting
    /// to be sent where `mtu` (0: no limit) leaves room.
    pub fn outgoing(&mut self, now_ms: u64, pieces: &mut [Vec<u8>], mtu: usize) {
        if self.unacked.len() + pieces.len() > MAX_UNACKED {
            for piece in pieces.iter_mut() {
                self.counts.untracked += 1;
                *piece = self.with_acks(piece, None, mtu);
            }
            return;
        }
        let id = self.next_packet;
        self.next_packet += 1;
        let mut packet = NetPacket::default();
        let deadline_ms = now_ms + self.rtt.rto_ms();
        for piece in pieces.iter_mut() {
            let tx = self.take_tx();
            packet.waiting.push(tx);
            let wire = self.with_acks(piece, Some(tx), mtu);
            let piece = std::mem::replace(piece, wire);
            self.unacked.insert(tx, Unacked { piece, packet: id, sent_ms: now_ms, retx: 0, later_acks: 0, deadline_ms });
            self.timers.push(Reverse((deadline_ms, tx)));
        }
        self.packets.insert(id, packet);
    }

    /// Reads the Acks and TxSequence of a received LpPacket: acknowledged pieces are forgotten
    /// (a first transmission's round trip measured), pieces passed by [`LOSS_THRESHOLD`] later
    /// Acks are due for retransmission at the next [`Reliability::poll`], and a piece's
    /// TxSequence is queued to be acknowledged.
    pub fn incoming(&mut self, now_ms: u64, lp: &LpPacketView<'_>) -> Arrival {
        for ack in lp.acks() {
            self.counts.acks_in += 1;
            self.on_ack(now_ms, ack);
        }
        if lp.fragment.is_none() {
            return Arrival::Idle;
        }
        let Some(tx) = lp.tx_sequence else { return Arrival::New };
        if self.acks.len() == MAX_PENDING {
            self.acks.pop_front();
        }
        self.acks.push_back(tx);
        self.idle_ack_at.get_or_insert(now_ms + IDLE_ACK_MS);
        let Some(seq) = lp.sequence else { return Arrival::New };
        let window = u64::from(MAX_RETX + 1) * self.rtt.rto_ms();
        while let Some(&(old, at)) = self.recent_order.front() {
            if now_ms <= at + window && self.recent_order.len() < MAX_PENDING {
                break;
            }
            self.recent_order.pop_front();
            if self.recent.get(&old) == Some(&at) {
                self.recent.remove(&old);
            }
        }
        if self.recent.contains_key(&seq) {
            self.counts.duplicates += 1;
            return Arrival::Repeat;
        }
        self.recent.insert(seq, now_ms);
        self.recent_order.push_back((seq, now_ms));
        Arrival::New
    }

    /// When [`Reliability::poll`] has something to do: a retransmission timeout, or Acks to send.
    pub fn next_deadline(&mut self) -> Option<u64> {
        // Timers of settled pieces are dropped here, so that a quiet face has no deadline.
        while let Some(&Reverse((at, tx))) = self.timers.peek() {
            if self.unacked.get(&tx).is_some_and(|u| u.deadline_ms == at) {
                break;
            }
            self.timers.pop();
        }
        let timer = self.timers.peek().map(|Reverse((at, _))| *at);
        match (timer, self.idle_ack_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Appends to `out` what is due by `now_ms`: lost pieces sent again (with a new TxSequence),
    /// and IDLE packets carrying the Acks that found no packet to ride on. Network packets whose
    /// pieces ran out of retransmissions are given up; the count of them is returned.
    pub fn poll(&mut self, now_ms: u64, mtu: usize, out: &mut Vec<Vec<u8>>) -> u64 {
        let mut given_up = 0;
        while let Some(&Reverse((at, tx))) = self.timers.peek() {
            if at > now_ms {
                break;
            }
            self.timers.pop();
            if self.unacked.get(&tx).is_some_and(|u| u.deadline_ms == at) {
                given_up += u64::from(!self.lost(now_ms, tx, mtu, out));
            }
        }
        if self.idle_ack_at.is_some_and(|at| at <= now_ms) {
            self.idle_ack_at = None;
            while !self.acks.is_empty() {
                let limit = if mtu == 0 { MAX_PACKET_BYTES } else { mtu };
                let n = self.acks.len().min((limit.saturating_sub(4 + LENGTH_GROWTH) / FIELD_BYTES).max(1));
                let mut idle = Vec::with_capacity(4 + n * FIELD_BYTES);
                put_header(&mut idle, LP_PACKET, n * FIELD_BYTES);
                for tx in self.acks.drain(..n) {
                    put_tlv(&mut idle, ACK, &tx.to_be_bytes());
                }
                self.counts.idle_out += 1;
                out.push(idle);
            }
        }
        given_up
    }

    /// Pieces waiting for their Ack.
    pub fn unacked(&self) -> usize {
        self.unacked.len()
    }

    /// The current retransmission timeout (ms).
    pub fn rto_ms(&self) -> u64 {
        self.rtt.rto_ms()
    }

    fn take_tx(&mut self) -> u64 {
        let tx = self.next_tx;
        self.next_tx = self.next_tx.wrapping_add(1);
        tx
    }

    /// `piece` with TxSequence `tx` (if any) and as many waiting Acks as fit `mtu`.
    fn with_acks(&mut self, piece: &[u8], tx: Option<u64>, mtu: usize) -> Vec<u8> {
        let limit = if mtu == 0 { MAX_PACKET_BYTES } else { mtu };
        let tx_bytes = if tx.is_some() { FIELD_BYTES } else { 0 };
        let room = limit.saturating_sub(piece.len() + tx_bytes + LENGTH_GROWTH);
        let n = self.acks.len().min(room / FIELD_BYTES);
        if tx.is_none() && n == 0 {
            return piece.to_vec();
        }
        let mut fields = Vec::with_capacity(n * FIELD_BYTES + tx_bytes);
        for ack in self.acks.drain(..n) {
            put_tlv(&mut fields, ACK, &ack.to_be_bytes());
        }
        if let Some(tx) = tx {
            put_tlv(&mut fields, TX_SEQUENCE, &tx.to_be_bytes());
        }
        if self.acks.is_empty() {
            self.idle_ack_at = None;
        }
        let mut wire = Vec::with_capacity(piece.len() + fields.len() + 4);
        if !put_with_lp_fields(&mut wire, piece, TX_SEQUENCE, &fields) {
            return piece.to_vec(); // Not ours to send ([`sequenced`] made every piece).
        }
        wire
    }

    fn on_ack(&mut self, now_ms: u64, tx: u64) {
        let Some(acked) = self.unacked.remove(&tx) else { return }; // Unknown or already settled.
        if acked.retx == 0 {
            self.rtt.add(now_ms.saturating_sub(acked.sent_ms) as f64);
        }
        for (&earlier, u) in self.unacked.range_mut(..tx) {
            u.later_acks += 1;
            if u.later_acks == LOSS_THRESHOLD {
                u.deadline_ms = now_ms;
                self.timers.push(Reverse((now_ms, earlier)));
            }
        }
        let Some(packet) = self.packets.get_mut(&acked.packet) else { return };
        packet.waiting.retain(|&t| t != tx);
        if packet.waiting.is_empty() {
            if packet.retransmitted {
                self.counts.retransmitted += 1;
            } else {
                self.counts.acknowledged += 1;
            }
            self.packets.remove(&acked.packet);
        }
    }

    /// Piece `tx` is lost: sent again (true), or its packet given up (false).
    fn lost(&mut self, now_ms: u64, tx: u64, mtu: usize, out: &mut Vec<Vec<u8>>) -> bool {
        let Some(lost) = self.unacked.remove(&tx) else { return true };
        if lost.retx >= MAX_RETX {
            for other in self.packets.remove(&lost.packet).map(|p| p.waiting).unwrap_or_default() {
                self.unacked.remove(&other);
            }
            self.counts.retx_exhausted += 1;
            return false;
        }
        let new_tx = self.take_tx();
        let Some(packet) = self.packets.get_mut(&lost.packet) else { return true };
        packet.retransmitted = true;
        for t in &mut packet.waiting {
            if *t == tx {
                *t = new_tx;
            }
        }
        let deadline_ms = now_ms + self.rtt.rto_ms();
        out.push(self.with_acks(&lost.piece, Some(new_tx), mtu));
        self.counts.retransmissions += 1;
        self.unacked.insert(new_tx, Unacked { sent_ms: now_ms, retx: lost.retx + 1, later_acks: 0, deadline_ms, ..lost });
        self.timers.push(Reverse((deadline_ms, new_tx)));
        true
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::LpPacketView;
    use proptest::prelude::*;

    use super::*;

    const INTEREST: &[u8] = &[0x05, 0x05, 0x07, 0x03, 0x08, 0x01, b'a'];

    fn pieces(packet: &[u8], mtu: usize, seq: &mut u64) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        sequenced(packet, mtu, seq, &mut out).unwrap();
        out
    }

    fn lp(wire: &[u8]) -> LpPacketView<'_> {
        LpPacketView::decode(wire).unwrap()
    }

    /// A sender and a receiver, and what the sender put on the link for one packet.
    fn sent_one(now: u64) -> (Reliability, Reliability, Vec<u8>) {
        let (mut a, b) = (Reliability::new(), Reliability::new());
        let mut p = pieces(INTEREST, 0, &mut 7);
        a.outgoing(now, &mut p, 0);
        (a, b, p.pop().unwrap())
    }

    #[test]
    fn a_piece_carries_sequence_and_tx_sequence_around_the_packet() {
        let (a, _, wire) = sent_one(0);
        let v = lp(&wire);
        assert_eq!((v.sequence, v.tx_sequence, v.fragment), (Some(7), Some(0), Some(INTEREST)));
        assert_eq!(a.unacked(), 1);
        // Fixed-width values, as NDNLPv2 and NFD write them.
        assert_eq!(&wire[2..12], &[81, 8, 0, 0, 0, 0, 0, 0, 0, 7]);
        assert_eq!(&wire[12..16], &[0xfd, 0x03, 0x48, 8]);
    }

    #[test]
    fn sequenced_keeps_existing_header_fields_in_order() {
        let mut lp_in = Vec::new();
        crate::lp::encode::put_packet(
            &mut lp_in,
            &crate::lp::encode::LpFields { pit_token: Some(&[1, 2]), non_discovery: true, ..Default::default() },
            INTEREST,
        );
        let mut p = pieces(&lp_in, 0, &mut 3);
        let mut r = Reliability::new();
        r.acks.push_back(99);
        r.outgoing(0, &mut p, 0);
        let v = lp(&p[0]);
        assert_eq!((v.sequence, v.pit_token, v.non_discovery, v.tx_sequence), (Some(3), Some(&[1u8, 2][..]), true, Some(0)));
        assert_eq!(v.acks().collect::<Vec<_>>(), [99]);
        assert_eq!(v.fragment, Some(INTEREST));
    }

    #[test]
    fn an_ack_settles_the_piece_and_measures_the_round_trip() {
        let (mut a, mut b, wire) = sent_one(1000);
        assert_eq!(b.incoming(1010, &lp(&wire)), Arrival::New);
        assert_eq!(b.next_deadline(), Some(1010 + IDLE_ACK_MS));
        let mut out = Vec::new();
        b.poll(1015, 0, &mut out);
        assert_eq!(out.len(), 1, "one IDLE packet");
        let idle = lp(&out[0]);
        assert_eq!((idle.fragment, idle.acks().collect::<Vec<_>>()), (None, vec![0]));
        assert_eq!(a.incoming(1040, &idle), Arrival::Idle);
        assert_eq!((a.unacked(), a.counts.acknowledged, a.next_deadline()), (0, 1, None));
        assert_eq!(a.rto_ms(), 200, "40 ms measured: srtt 40 + 4·20, at least 200");
    }

    #[test]
    fn acks_ride_on_the_next_packet_the_other_way() {
        let (mut a, mut b, wire) = sent_one(0);
        b.incoming(1, &lp(&wire));
        let mut back = pieces(INTEREST, 0, &mut 0);
        b.outgoing(2, &mut back, 0);
        assert_eq!(lp(&back[0]).acks().collect::<Vec<_>>(), [0]);
        assert_eq!(b.next_deadline(), Some(2 + 1000), "no IDLE packet due, only b's own timer");
        a.incoming(3, &lp(&back[0]));
        assert_eq!(a.unacked(), 0);
    }

    #[test]
    fn a_piece_whose_ack_does_not_come_goes_again_then_its_packet_is_given_up() {
        let (mut a, _, wire) = sent_one(0);
        let first = lp(&wire).tx_sequence;
        let mut out = Vec::new();
        let mut at = 0;
        for retx in 1..=MAX_RETX {
            at = a.next_deadline().unwrap();
            assert_eq!(a.poll(at, 0, &mut out), 0);
            let again = lp(out.last().unwrap());
            assert_eq!((again.sequence, again.fragment), (Some(7), Some(INTEREST)), "the same piece");
            assert_ne!(again.tx_sequence, first, "under a new TxSequence");
            assert_eq!(a.counts.retransmissions, u64::from(retx));
        }
        assert_eq!(at, 3000, "1 s RTO before any round trip");
        let at = a.next_deadline().unwrap();
        assert_eq!(a.poll(at, 0, &mut out), 1);
        assert_eq!((a.unacked(), a.counts.retx_exhausted, out.len()), (0, 1, 3));
        assert_eq!(a.next_deadline(), None);
    }

    #[test]
    fn three_later_acks_make_a_piece_lost_before_its_timeout() {
        let mut a = Reliability::new();
        let mut sent = Vec::new();
        for i in 0..4u8 {
            let mut p = pieces(&[0x05, 0x01, i], 0, &mut u64::from(i));
            a.outgoing(0, &mut p, 0);
            sent.push(p.pop().unwrap());
        }
        let ack = |tx: u64, a: &mut Reliability| {
            let mut w = Vec::new();
            put_header(&mut w, LP_PACKET, FIELD_BYTES);
            put_tlv(&mut w, ACK, &tx.to_be_bytes());
            a.incoming(10, &lp(&w));
        };
        ack(1, &mut a);
        ack(2, &mut a);
        assert_eq!(a.next_deadline(), Some(1000));
        ack(3, &mut a);
        assert_eq!(a.next_deadline(), Some(10), "piece 0 passed by three Acks");
        let mut out = Vec::new();
        a.poll(10, 0, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(lp(&out[0]).fragment, lp(&sent[0]).fragment);
        assert_eq!(lp(&out[0]).tx_sequence, Some(4));
        ack(4, &mut a);
        assert_eq!((a.counts.acknowledged, a.counts.retransmitted, a.unacked()), (3, 1, 0));
    }

    #[test]
    fn a_repeat_is_dropped_but_acknowledged_again() {
        let (mut a, mut b, wire) = sent_one(0);
        assert_eq!(b.incoming(0, &lp(&wire)), Arrival::New);
        let mut out = Vec::new();
        b.poll(5, 0, &mut out); // This Ack is lost.
        a.poll(1000, 0, &mut out);
        let again = out.pop().unwrap();
        assert_eq!(b.incoming(1001, &lp(&again)), Arrival::Repeat);
        assert_eq!(b.counts.duplicates, 1);
        b.poll(1006, 0, &mut out);
        a.incoming(1007, &lp(out.last().unwrap()));
        assert_eq!((a.unacked(), a.counts.retransmitted), (0, 1));
    }

    #[test]
    fn fragments_are_one_packet_and_fit_the_mtu_with_their_acks() {
        let mut a = Reliability::new();
        a.acks.extend(0..200);
        let data = {
            let mut d = vec![0x06, 0xfd, 0x07, 0xd0];
            d.resize(4 + 2000, 0xaa);
            d
        };
        let mut p = pieces(&data, 600, &mut 0);
        assert!(p.len() >= 4);
        let n = p.len() as u64;
        a.outgoing(0, &mut p, 600);
        assert!(p.iter().all(|w| w.len() <= 600), "{:?}", p.iter().map(Vec::len).collect::<Vec<_>>());
        assert!(p.iter().all(|w| lp(w).tx_sequence.is_some()));
        let carried: usize = p.iter().map(|w| lp(w).acks().count()).sum();
        assert_eq!(carried + a.acks.len(), 200);
        for tx in 0..n {
            a.on_ack(1, tx);
        }
        assert_eq!((a.counts.acknowledged, a.unacked()), (1, 0));
    }

    #[test]
    fn past_the_window_pieces_go_untracked() {
        let mut a = Reliability::new();
        for i in 0..MAX_UNACKED as u64 + 2 {
            let mut p = pieces(INTEREST, 0, &mut { i });
            a.outgoing(0, &mut p, 0);
            assert_eq!(lp(&p[0]).tx_sequence.is_some(), i < MAX_UNACKED as u64);
        }
        assert_eq!((a.unacked(), a.counts.untracked), (MAX_UNACKED, 2));
    }

    proptest! {
        /// Two ends over a link that loses and delays packets: the receiver hands up every
        /// packet at most once, every packet is handed up unless the sender gave it up, and once
        /// the link is quiet nothing waits.
        #[test]
        fn a_lossy_link_delivers_each_packet_at_most_once(
            n in 1usize..60,
            loss in prop::collection::vec(any::<u8>(), 400),
            delays in prop::collection::vec(0u64..50, 400),
            mtu in prop::sample::select(vec![0usize, 300]),
        ) {
            let (mut a, mut b) = (Reliability::new(), Reliability::new());
            let mut seq = 0;
            // In flight: (arrival, to_b, wire).
            let mut link: Vec<(u64, bool, Vec<u8>)> = Vec::new();
            let mut k = 0usize;
            let dropped = std::cell::Cell::new(0u32);
            let mut put = |link: &mut Vec<(u64, bool, Vec<u8>)>, now: u64, to_b: bool, w: Vec<u8>| {
                k += 1;
                // A quarter lost while the sender is still sending, none afterwards.
                if now < 3_000 && loss[k % loss.len()] < 64 {
                    dropped.set(dropped.get() + 1);
                    return;
                }
                link.push((now + 1 + delays[k % delays.len()], to_b, w));
            };
            let payload = |i: usize| {
                let mut d = vec![0x06, 0xfd, 0x01, 0x2c];
                d.resize(4 + 300, i as u8);
                d
            };
            let mut delivered = vec![0u32; n];
            let mut partial = crate::lp::fragmentation::Reassembler::new(1 << 20);
            for now in 0..60_000u64 {
                if now % 20 == 0 && now / 20 < n as u64 {
                    let mut p = pieces(&payload((now / 20) as usize), mtu, &mut seq);
                    a.outgoing(now, &mut p, mtu);
                    for w in p {
                        put(&mut link, now, true, w);
                    }
                }
                let mut out = Vec::new();
                a.poll(now, mtu, &mut out);
                for w in out.drain(..) {
                    put(&mut link, now, true, w);
                }
                b.poll(now, mtu, &mut out);
                for w in out.drain(..) {
                    put(&mut link, now, false, w);
                }
                let (arrived, rest): (Vec<_>, Vec<_>) = link.drain(..).partition(|(at, ..)| *at <= now);
                link = rest;
                for (_, to_b, w) in arrived {
                    let v = lp(&w);
                    if !to_b {
                        a.incoming(now, &v);
                        continue;
                    }
                    if b.incoming(now, &v) != Arrival::New {
                        continue;
                    }
                    let whole = if v.is_whole() { Some(v.fragment.unwrap().to_vec()) } else {
                        partial.feed(now, 1, &w).unwrap().map(|lp_whole| lp(&lp_whole).fragment.unwrap().to_vec())
                    };
                    if let Some(packet) = whole {
                        delivered[usize::from(packet[4])] += 1;
                    }
                }
                if now > 3_000 && link.is_empty() && a.next_deadline().is_none() && b.next_deadline().is_none() {
                    break;
                }
            }
            prop_assert!(delivered.iter().all(|&d| d <= 1), "{:?}", delivered);
            // A packet is missing when the sender gave it up, or when a fragment came back more
            // than the reassembler's 500 ms after the packet's latest (NFD's timeout, shorter
            // than a 1 s first RTO).
            partial.expire(u64::MAX);
            let missing = delivered.iter().filter(|&&d| d == 0).count() as u64;
            let timeouts = partial.take_timeouts() as u64;
            prop_assert!(missing <= a.counts.retx_exhausted + timeouts, "{} missing, {:?}, {} timeouts", missing, a.counts, timeouts);
            prop_assert_eq!(a.counts.acknowledged + a.counts.retransmitted + a.counts.retx_exhausted, n as u64);
            prop_assert_eq!(a.unacked(), 0);
            // Whatever the link lost, a piece or an Ack, was sent again.
            prop_assert!(dropped.get() == 0 || a.counts.retransmissions > 0);
        }
    }
}
