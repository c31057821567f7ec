//! Counters: every drop by reason, and what each forwarding shard did. A shard is the only
//! writer of its counters; management reads them from another thread, so each is an atomic
//! written with a plain load + store (no locked instruction on the hot path).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Why a packet was dropped. Each has a counter; `nexthop ctl status` lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(usize)]
pub enum DropReason {
    /// Bytes that are not a valid packet (framing, TLV, a field out of range).
    Malformed,
    /// Larger than the 8800-byte packet limit.
    Oversize,
    /// An unknown critical TLV (packet or NDNLPv2 header field).
    UnknownCritical,
    /// An NDNLPv2 fragment where nothing reassembles (the runtime hands every fragment to its
    /// reassembler; the in-process pipeline alone counts them here).
    Fragment,
    /// An NDNLPv2 fragment refused by the reassembler: no Sequence or Fragment, too many
    /// fragments, a duplicate, disagreeing with its packet's other fragments, or adding up past
    /// the packet limit.
    ReassemblyBad,
    /// An NDNLPv2 fragment refused because partial packets hold the reassembler's whole budget.
    ReassemblyFull,
    /// A partial packet whose other fragments did not arrive in time.
    ReassemblyTimeout,
    /// A `/localhost` packet on a non-local face.
    LocalhostViolation,
    /// HopLimit reached zero: an Interest that arrived with 0, or a copy that would have left
    /// for another host with 0.
    HopLimit,
    /// A looping Interest (a nonce seen before: dead-nonce list or PIT).
    Loop,
    /// The PIT is at its configured bound.
    PitFull,
    /// No FIB entry (answered with Nack NoRoute).
    NoRoute,
    /// Self-learning: a route, or faces to broadcast a discovery on, but none of them eligible
    /// (the Interest came from the only one): dropped without a Nack, as NFD's strategy sends
    /// nothing then (a Nack NoRoute would make a self-learning downstream unlearn its route).
    NoEligibleHop,
    /// Data that no PIT entry wanted.
    Unsolicited,
    /// A Nack that no out-record wanted.
    UnsolicitedNack,
    /// A packet for a face that has gone.
    FaceGone,
    /// A packet for a permanent face that is down, connecting again.
    FaceDown,
    /// A face's send buffer was full.
    SendBufferFull,
    /// A packet link reliability sent [`crate::lp::reliability::MAX_RETX`] + 1 times without an
    /// Ack, given up.
    RetxExhausted,
    /// A piece received again on a face with link reliability (its Ack was lost): a repeat.
    DuplicateSequence,
    /// A Nack for a multicast face: never sent on a multi-access link (as NFD), where it would
    /// answer for the whole LAN.
    NackOnMultiAccess,
    /// An Ethernet frame to this interface from a peer with no face, while on-demand Ethernet
    /// faces are off (`faces.ether_listen`).
    UnknownPeer,
    /// A management command that may not come from where it came from.
    ManagementNotLocal,
    /// A management Interest that is not a command or dataset nexthop knows.
    ManagementUnknown,
    /// A management command that needs a signature ([`crate::mgmt::authorization`]) and has
    /// none, or no KeyLocator name: NFD drops those without an answer.
    ManagementUnsigned,
}

impl DropReason {
    /// Every reason, in counter order.
    pub const ALL: [DropReason; 25] = [
        DropReason::Malformed,
        DropReason::Oversize,
        DropReason::UnknownCritical,
        DropReason::Fragment,
        DropReason::ReassemblyBad,
        DropReason::ReassemblyFull,
        DropReason::ReassemblyTimeout,
        DropReason::LocalhostViolation,
        DropReason::HopLimit,
        DropReason::Loop,
        DropReason::PitFull,
        DropReason::NoRoute,
        DropReason::NoEligibleHop,
        DropReason::Unsolicited,
        DropReason::UnsolicitedNack,
        DropReason::FaceGone,
        DropReason::FaceDown,
        DropReason::SendBufferFull,
        DropReason::RetxExhausted,
        DropReason::DuplicateSequence,
        DropReason::NackOnMultiAccess,
        DropReason::UnknownPeer,
        DropReason::ManagementNotLocal,
        DropReason::ManagementUnknown,
        DropReason::ManagementUnsigned,
    ];

    /// Name in status output.
    pub fn label(self) -> &'static str {
        match self {
            DropReason::Malformed => "malformed",
            DropReason::Oversize => "oversize",
            DropReason::UnknownCritical => "unknown-critical",
            DropReason::Fragment => "fragment",
            DropReason::ReassemblyBad => "reassembly-bad",
            DropReason::ReassemblyFull => "reassembly-full",
            DropReason::ReassemblyTimeout => "reassembly-timeout",
            DropReason::LocalhostViolation => "localhost-violation",
            DropReason::HopLimit => "hop-limit",
            DropReason::Loop => "loop",
            DropReason::PitFull => "pit-full",
            DropReason::NoRoute => "no-route",
            DropReason::NoEligibleHop => "no-eligible-hop",
            DropReason::Unsolicited => "unsolicited-data",
            DropReason::UnsolicitedNack => "unsolicited-nack",
            DropReason::FaceGone => "face-gone",
            DropReason::FaceDown => "face-down",
            DropReason::SendBufferFull => "send-buffer-full",
            DropReason::RetxExhausted => "retx-exhausted",
            DropReason::DuplicateSequence => "duplicate-sequence",
            DropReason::NackOnMultiAccess => "nack-on-multi-access",
            DropReason::UnknownPeer => "unknown-peer",
            DropReason::ManagementNotLocal => "management-not-local",
            DropReason::ManagementUnknown => "management-unknown",
            DropReason::ManagementUnsigned => "management-unsigned",
        }
    }

    /// The reason for a packet that failed to decode.
    pub fn of_wire_error(e: &nexthop_wire::Error) -> DropReason {
        use nexthop_wire::Error as E;
        match e {
            E::UnrecognizedCritical(_) | E::UnknownLpField(_) => DropReason::UnknownCritical,
            _ => DropReason::Malformed,
        }
    }
}

/// A counter with one writer.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    /// Adds `n` (single writer: a load and a store, no read-modify-write).
    #[inline]
    pub fn add(&self, n: u64) {
        self.0.store(self.0.load(Relaxed).wrapping_add(n), Relaxed);
    }

    /// Adds one.
    #[inline]
    pub fn inc(&self) {
        self.add(1);
    }

    /// Sets the value (for gauges).
    #[inline]
    pub fn set(&self, v: u64) {
        self.0.store(v, Relaxed);
    }

    /// The value.
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// Drops by reason.
#[derive(Debug, Default)]
pub struct DropCounters([Counter; DropReason::ALL.len()]);

impl DropCounters {
    /// Counts one drop.
    #[inline]
    pub fn count(&self, why: DropReason) {
        self.0[why as usize].inc();
    }

    /// The count for one reason.
    pub fn get(&self, why: DropReason) -> u64 {
        self.0[why as usize].get()
    }

    /// (label, count) for every reason.
    pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
        DropReason::ALL.iter().map(|&d| (d.label(), self.get(d))).collect()
    }
}

/// What one forwarding shard did.
#[derive(Debug, Default)]
pub struct ShardCounters {
    /// Drops by reason.
    pub drops: DropCounters,
    /// Interests received.
    pub interests_in: Counter,
    /// Data received.
    pub data_in: Counter,
    /// Nacks received.
    pub nacks_in: Counter,
    /// Interests forwarded upstream.
    pub interests_out: Counter,
    /// Data sent downstream.
    pub data_out: Counter,
    /// Nacks sent downstream.
    pub nacks_out: Counter,
    /// PIT entries satisfied by Data.
    pub satisfied: Counter,
    /// PIT entries that expired unsatisfied.
    pub unsatisfied: Counter,
    /// Interests aggregated into a pending entry.
    pub aggregated: Counter,
    /// Content-store hits.
    pub cs_hits: Counter,
    /// Content-store misses.
    pub cs_misses: Counter,
    /// Gauge: PIT entries now.
    pub pit_entries: Counter,
    /// Gauge: content-store packets now.
    pub cs_entries: Counter,
    /// Gauge: batches the content store's SSD tier has read ahead (as of the shard's latest
    /// tick or SSD poll; the gauges below too).
    pub cs_l2_read_aheads: Counter,
    /// Gauge: batches read from the SSD tier in the background for parked Interests.
    pub cs_l2_background_reads: Counter,
    /// Gauge: of those, reads of one Interest's chunk only (`l2_chunk_reads`).
    pub cs_l2_chunk_reads: Counter,
    /// Gauge: bytes read from the SSD tier.
    pub cs_l2_read_bytes: Counter,
    /// Gauge: Data cached in DRAM only, too large for an SSD-tier slot
    /// (`content_store.l2_slot_bytes`).
    pub cs_dram_only: Counter,
    /// Interests parked while their content-store batch was read from the SSD tier.
    pub cs_parked: Counter,
    /// Gauge: Interests parked now.
    pub cs_parked_now: Counter,
    /// Gauge: FIB routes now.
    pub fib_entries: Counter,
}

impl ShardCounters {
    /// (label, value) of every counter and gauge but the drops (by reason: [`DropCounters`]) and
    /// the FIB's size (one FIB for every shard), so shards' snapshots add up.
    pub fn snapshot(&self) -> Vec<(&'static str, u64)> {
        [
            ("interests_in", &self.interests_in),
            ("data_in", &self.data_in),
            ("nacks_in", &self.nacks_in),
            ("interests_out", &self.interests_out),
            ("data_out", &self.data_out),
            ("nacks_out", &self.nacks_out),
            ("satisfied", &self.satisfied),
            ("unsatisfied", &self.unsatisfied),
            ("aggregated", &self.aggregated),
            ("pit_entries", &self.pit_entries),
            ("cs_hits", &self.cs_hits),
            ("cs_misses", &self.cs_misses),
            ("cs_entries", &self.cs_entries),
            ("cs_parked", &self.cs_parked),
            ("cs_parked_now", &self.cs_parked_now),
            ("cs_l2_read_aheads", &self.cs_l2_read_aheads),
            ("cs_l2_background_reads", &self.cs_l2_background_reads),
            ("cs_l2_chunk_reads", &self.cs_l2_chunk_reads),
            ("cs_l2_read_bytes", &self.cs_l2_read_bytes),
            ("cs_dram_only", &self.cs_dram_only),
        ]
        .into_iter()
        .map(|(label, c)| (label, c.get()))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_count_by_reason() {
        let c = DropCounters::default();
        c.count(DropReason::Loop);
        c.count(DropReason::Loop);
        c.count(DropReason::PitFull);
        assert_eq!(c.get(DropReason::Loop), 2);
        assert_eq!(c.get(DropReason::PitFull), 1);
        let snap = c.snapshot();
        assert_eq!(snap.len(), DropReason::ALL.len());
        assert!(snap.contains(&("loop", 2)));
        for (i, d) in DropReason::ALL.iter().enumerate() {
            assert_eq!(*d as usize, i);
        }
    }
}
