//! What a forwarding shard sends: packets appended to one byte buffer with the face each goes
//! to. The shard never touches a socket; the runtime drains the outbox into the faces' send
//! buffers (or ships it to the I/O thread) and reuses it.

use std::ops::Range;

use crate::face::FaceId;
use crate::lp::encode::{put_packet, LpFields};

/// Packets to send, in order.
#[derive(Debug, Default)]
pub struct Outbox {
    bytes: Vec<u8>,
    frames: Vec<(FaceId, PacketKind, Range<usize>)>,
    /// Routes the self-learning strategy learned: (face, the prefix announcement the Data
    /// carried), for the RIB.
    pub learned: Vec<(FaceId, Vec<u8>)>,
    /// Learned routes to forget: (face, the name a Nack NoRoute came back for).
    pub unlearned: Vec<(FaceId, Vec<u8>)>,
}

/// What a queued packet is (for per-face counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketKind {
    /// An Interest.
    Interest,
    /// A Data.
    Data,
    /// A Nack.
    Nack,
}

impl PacketKind {
    /// The kind of `packet` sent with `fields`.
    pub fn of(fields: &LpFields<'_>, packet: &[u8]) -> Self {
        match (fields.nack, packet.first()) {
            (Some(_), _) => PacketKind::Nack,
            (None, Some(&0x05)) => PacketKind::Interest,
            _ => PacketKind::Data,
        }
    }
}

impl Outbox {
    /// An empty outbox.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues `packet` for `face`, wrapped in an LpPacket when `fields` has any field; `edit`
    /// may change the packet's bytes in place (it gets just the packet, not the LP header).
    pub fn push_with(&mut self, face: FaceId, fields: &LpFields<'_>, packet: &[u8], edit: impl FnOnce(&mut [u8])) {
        let start = self.bytes.len();
        put_packet(&mut self.bytes, fields, packet);
        let end = self.bytes.len();
        edit(&mut self.bytes[end - packet.len()..end]);
        self.frames.push((face, PacketKind::of(fields, packet), start..end));
    }

    /// Queues `packet` for `face`.
    pub fn push(&mut self, face: FaceId, fields: &LpFields<'_>, packet: &[u8]) {
        self.push_with(face, fields, packet, |_| {});
    }

    /// The queued packets: (face, kind, bytes).
    pub fn iter(&self) -> impl Iterator<Item = (FaceId, PacketKind, &[u8])> + '_ {
        self.frames.iter().map(|(f, k, r)| (*f, *k, &self.bytes[r.clone()]))
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// True when nothing is queued: no packet, no route learned or to forget.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty() && self.learned.is_empty() && self.unlearned.is_empty()
    }

    /// Forgets everything queued, keeping the memory.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.frames.clear();
        self.learned.clear();
        self.unlearned.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_in_order_with_edits() {
        let mut o = Outbox::new();
        o.push(300, &LpFields::default(), &[5, 1, 9]);
        o.push_with(301, &LpFields { pit_token: Some(&[1]), ..Default::default() }, &[6, 1, 9], |p| p[2] = 8);
        let v: Vec<_> = o.iter().map(|(f, _, b)| (f, b.to_vec())).collect();
        assert_eq!(v[0], (300, vec![5, 1, 9]));
        assert_eq!(v[1].0, 301);
        assert!(v[1].1.ends_with(&[6, 1, 8]));
        o.clear();
        assert!(o.is_empty());
    }
}
