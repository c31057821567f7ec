//! Congestion marking on a face's send queue (NDNLPv2 CongestionMark), as NFD does it.
//!
//! # Overview
//! A consumer that keeps many Interests outstanding (NDNts's and ndncatchunks' segment fetchers)
//! shrinks its window when Data comes back marked, before anything is lost. The forwarder marks
//! when a face's send queue — the bytes it holds for the face plus those the kernel holds in the
//! socket — stays above a threshold (64 KiB, or half the queue's capacity if that is smaller).
//! Faces that share a datagram socket share its kernel queue: the unicast UDP faces (one socket,
//! where NFD gives each face a connected socket of its own) and an interface's Ethernet faces
//! (its port's socket); a UDP face's queue is that socket's plus the datagrams batched for it.
//! Marking works on that queue as on a face's own:
//! - the first packet sent above the threshold starts an *episode* and is not marked;
//! - a packet sent at least the base interval (100 ms) later, still above it, is marked, and the
//!   next mark is due `interval / sqrt(marks in this episode + 1)` after the previous one was
//!   due (CoDel's control law: more often the longer the queue stays long);
//! - a packet sent with the queue at or below the threshold ends the episode.
//!
//! [`Marker`] is the decision (no I/O: the caller passes the time and the queue's length), and
//! [`with_mark`] adds the field to an outgoing packet. Data that arrives marked keeps its mark on
//! the way to its consumers (the shard copies it, [`crate::lp::encode::LpFields`]).

use nexthop_wire::types::CONGESTION_MARK;

use crate::lp::encode::{put_nonneg, put_with_lp_fields};

/// NFD's base marking interval.
pub const BASE_INTERVAL_NS: u64 = 100_000_000;
/// NFD's default threshold (bytes queued).
pub const DEFAULT_THRESHOLD: u64 = 65_536;

/// One face's marking state and settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Marking is on (NFD's face flag CongestionMarkingEnabled).
    pub enabled: bool,
    /// The base interval (ns).
    pub interval_ns: u64,
    /// Bytes queued above which the face is congested.
    pub threshold: u64,
    /// When the next mark is due (ns on the caller's clock), during an episode.
    next_mark_ns: Option<u64>,
    /// Marks in this episode.
    marked_in_episode: u32,
    /// Marks since the face was made.
    pub marked: u64,
}

impl Marker {
    /// A marker with NFD's settings, on or off, for a queue that holds at most `capacity` bytes.
    pub fn new(enabled: bool, capacity: u64) -> Self {
        Marker {
            enabled,
            interval_ns: BASE_INTERVAL_NS,
            threshold: DEFAULT_THRESHOLD.min(capacity / 2),
            next_mark_ns: None,
            marked_in_episode: 0,
            marked: 0,
        }
    }

    /// Whether the packet being sent at `now_ns`, with `queued` bytes in the send queue, gets a
    /// mark (see the module overview).
    pub fn should_mark(&mut self, now_ns: u64, queued: u64) -> bool {
        if !self.enabled {
            return false;
        }
        if queued <= self.threshold {
            self.next_mark_ns = None;
            self.marked_in_episode = 0;
            return false;
        }
        let Some(due) = self.next_mark_ns else {
            self.next_mark_ns = Some(now_ns.saturating_add(self.interval_ns));
            return false;
        };
        if now_ns < due {
            return false;
        }
        self.marked_in_episode += 1;
        self.marked += 1;
        let step = self.interval_ns as f64 / f64::from(self.marked_in_episode + 1).sqrt();
        self.next_mark_ns = Some(due.saturating_add(step as u64));
        true
    }
}

/// `packet` (a bare Interest, Data or an LpPacket) with CongestionMark 1, into `out`: a bare
/// packet is wrapped in an LpPacket; an LpPacket gets the field before its Fragment (header
/// fields ascend by type, and the forwarder's own stop below 832), unless it has one already.
/// An LpPacket that does not parse is copied as it is.
pub fn with_mark(packet: &[u8], out: &mut Vec<u8>) {
    let mut mark = Vec::with_capacity(4);
    put_nonneg(&mut mark, CONGESTION_MARK, 1);
    let marked = nexthop_wire::LpPacketView::decode(packet).is_ok_and(|lp| lp.congestion_mark.is_some());
    if marked || !put_with_lp_fields(out, packet, CONGESTION_MARK, &mark) {
        out.extend_from_slice(packet);
    }
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{LpPacketView, NackReason};

    use super::*;
    use crate::lp::encode::{put_packet, LpFields};

    const MS: u64 = 1_000_000;

    #[test]
    fn marks_after_an_interval_above_the_threshold_then_more_often() {
        let mut m = Marker::new(true, 1 << 20);
        assert_eq!(m.threshold, 65_536);
        assert!(!m.should_mark(0, 100_000), "the episode starts");
        assert!(!m.should_mark(99 * MS, 100_000));
        assert!(m.should_mark(100 * MS, 100_000), "one interval above");
        assert!(!m.should_mark(150 * MS, 100_000));
        // Next due 100 + 100/sqrt(2) ≈ 170.7 ms, then + 100/sqrt(3) ≈ 228.4 ms.
        assert!(!m.should_mark(170 * MS, 100_000));
        assert!(m.should_mark(171 * MS, 100_000));
        assert!(!m.should_mark(228 * MS, 100_000));
        assert!(m.should_mark(229 * MS, 100_000));
        assert!(!m.should_mark(230 * MS, 65_536), "at the threshold: the episode ends");
        assert!(!m.should_mark(231 * MS, 100_000), "a new episode starts unmarked");
        assert!(m.should_mark(331 * MS, 100_000));
        assert_eq!(m.marked, 4);
        let mut off = Marker::new(false, 1 << 20);
        assert!((0..10).all(|i| !off.should_mark(i * 100 * MS, 1 << 20)));
        assert_eq!(Marker::new(true, 10_000).threshold, 5_000, "half a small queue");
    }

    #[test]
    fn a_mark_decodes_with_every_other_field_kept() {
        let data = [0x06, 0x03, 0x07, 0x01, 0x08];
        let mut out = Vec::new();
        with_mark(&data, &mut out);
        let lp = LpPacketView::decode(&out).unwrap();
        assert_eq!((lp.congestion_mark, lp.fragment), (Some(1), Some(&data[..])));

        let mut wrapped = Vec::new();
        let fields =
            LpFields { pit_token: Some(&[9, 9]), nack: Some(NackReason::Congestion), incoming_face_id: Some(7), ..LpFields::default() };
        put_packet(&mut wrapped, &fields, &data);
        out.clear();
        with_mark(&wrapped, &mut out);
        let lp = LpPacketView::decode(&out).unwrap();
        assert_eq!((lp.pit_token, lp.nack(), lp.incoming_face_id), (Some(&[9u8, 9][..]), Some(NackReason::Congestion), Some(7)));
        assert_eq!((lp.congestion_mark, lp.fragment), (Some(1), Some(&data[..])));

        let again = out.clone();
        out.clear();
        with_mark(&again, &mut out);
        assert_eq!(out, again, "marked once");
        out.clear();
        with_mark(&[0x64, 0x03, 0x50, 0x05, 0x00], &mut out);
        assert_eq!(out, [0x64, 0x03, 0x50, 0x05, 0x00], "broken LpPacket copied");
    }
}
