//! The face event notification stream (`/localhost/nfd/faces/events`), as NFD publishes it for
//! ndn-cxx's FaceMonitor (NLSR follows its neighbours' faces with it).
//!
//! # Overview
//! Each face made or closed, and each permanent face that goes down or up again, is one
//! notification: a Data named `/localhost/nfd/faces/events/<seq=N>` (N counting from 1) whose
//! content is a FaceEventNotification — FaceEventKind (1 created, 2 destroyed, 3 up, 4 down),
//! then the face's FaceId, Uri, LocalUri, FaceScope, FacePersistency, LinkType and Flags —
//! fresh for one second. A subscriber
//! first asks for the stream's name with CanBePrefix (and MustBeFresh): it gets the latest
//! notification if one is fresh, else its Interest waits for the next; then it asks for N + 1
//! by name, which waits until that event happens. The last [`KEPT`] notifications stay
//! answerable; a waiting Interest is forgotten when its lifetime ends.
//!
//! No I/O: [`FaceEvents::ask`] answers an Interest now or holds it, and
//! [`FaceEvents::publish`] makes a notification and hands back whom to send it to.

use std::collections::VecDeque;

use nexthop_wire::{Component, Data, Emit, InterestView, Kind, MetaInfo, Name};

use super::dataset::FaceStatus;
use crate::face::FaceId;
use crate::lp::encode::{put_nonneg, put_tlv};

/// Notifications kept for subscribers that ask for one already published.
pub const KEPT: usize = 64;
/// Interests held waiting for the next notification, at most (the oldest goes first).
pub const MAX_WAITING: usize = 1024;
/// A notification's FreshnessPeriod (NFD's).
const FRESHNESS_MS: u64 = 1000;

/// What happened to a face.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaceEventKind {
    /// Made (FaceEventKind 1).
    Created = 1,
    /// Closed (FaceEventKind 2).
    Destroyed = 2,
    /// Up again after it was down (FaceEventKind 3): a permanent TCP face reconnected.
    Up = 3,
    /// Down (FaceEventKind 4): a permanent TCP face lost its connection and is connecting
    /// again ([`crate::face::reconnect`]).
    Down = 4,
}

/// A held Interest: who asked, for which name, until when.
#[derive(Debug, Clone)]
struct Waiting {
    face: FaceId,
    pit_token: Option<Vec<u8>>,
    /// The sequence number it waits for (its name's), or `None`: the next one (CanBePrefix on
    /// the stream's name).
    seq: Option<u64>,
    expires_ms: u64,
}

/// A notification to send: to `face`, with `pit_token` if its Interest had one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The face that asked.
    pub face: FaceId,
    /// Its Interest's PIT token.
    pub pit_token: Option<Vec<u8>>,
    /// The notification Data.
    pub data: Vec<u8>,
}

/// The stream's state.
#[derive(Debug, Default)]
pub struct FaceEvents {
    /// The last sequence number published (0: none yet).
    last: u64,
    /// (seq, when published, Data) of the latest notifications.
    kept: VecDeque<(u64, u64, Vec<u8>)>,
    waiting: VecDeque<Waiting>,
}

/// `/localhost/nfd/faces/events`.
pub fn stream_name() -> Name {
    Name::from_uri("/localhost/nfd/faces/events").expect("a valid name")
}

impl FaceEvents {
    /// Answers an Interest under the stream's name from `face` at `now_ms`: `Some(Data)` now,
    /// or `None` when it is held for a notification to come (or asks for one no longer kept,
    /// which never comes: it is not held).
    pub fn ask(&mut self, face: FaceId, pit_token: Option<&[u8]>, interest: &InterestView<'_>, now_ms: u64) -> Option<Vec<u8>> {
        let name = interest.name();
        let base = stream_name();
        let seq = match name.len() {
            n if n == base.len() => None,
            n if n == base.len() + 1 => match name.get(n - 1)?.kind() {
                Kind::SequenceNum(s) => Some(s),
                _ => return None,
            },
            _ => return None,
        };
        match seq {
            // The latest (fresh, if MustBeFresh), for a subscriber starting.
            None if interest.can_be_prefix() => {
                if let Some((_, at, data)) = self.kept.back() {
                    if !interest.must_be_fresh() || now_ms < at + FRESHNESS_MS {
                        return Some(data.clone());
                    }
                }
            }
            None => return None, // The stream's own name is no notification.
            Some(s) if s <= self.last => return self.kept.iter().find(|(k, _, _)| *k == s).map(|(_, _, d)| d.clone()),
            Some(_) => {}
        }
        if self.waiting.len() >= MAX_WAITING {
            self.waiting.pop_front();
        }
        let expires_ms = now_ms + interest.effective_lifetime_ms();
        self.waiting.push_back(Waiting { face, pit_token: pit_token.map(<[u8]>::to_vec), seq, expires_ms });
        None
    }

    /// Publishes `kind` for the face `status` at `now_ms`, returning it for every held Interest
    /// it answers.
    pub fn publish(&mut self, kind: FaceEventKind, status: &FaceStatus, now_ms: u64) -> Vec<Delivery> {
        self.last += 1;
        let seq = self.last;
        let mut d = Data::new(stream_name().with(Component::sequence_num(seq)), notification(kind, status));
        d.meta_info = Some(MetaInfo { freshness_period_ms: Some(FRESHNESS_MS), ..MetaInfo::default() });
        d.sign_digest_sha256();
        let data = d.to_bytes();
        self.kept.push_back((seq, now_ms, data.clone()));
        if self.kept.len() > KEPT {
            self.kept.pop_front();
        }
        let mut out = Vec::new();
        self.waiting.retain(|w| {
            let answered = w.expires_ms > now_ms && w.seq.is_none_or(|s| s == seq);
            if answered {
                out.push(Delivery { face: w.face, pit_token: w.pit_token.clone(), data: data.clone() });
            }
            !answered && w.expires_ms > now_ms && w.seq.is_none_or(|s| s > seq)
        });
        out
    }

    /// Forgets the held Interests of a face that has gone.
    pub fn face_gone(&mut self, face: FaceId) {
        self.waiting.retain(|w| w.face != face);
    }

    /// Interests held now.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }
}

/// A FaceEventNotification element.
fn notification(kind: FaceEventKind, f: &FaceStatus) -> Vec<u8> {
    let mut v = Vec::new();
    put_nonneg(&mut v, 0xc1, kind as u64);
    f.put_identity(&mut v);
    put_nonneg(&mut v, 0x6c, f.flags);
    let mut out = Vec::new();
    put_tlv(&mut out, 0xc0, &v);
    out
}

#[cfg(test)]
mod tests {
    use nexthop_wire::{DataView, Interest};

    use super::*;
    use crate::mgmt::dataset::FaceCounts;

    fn status(id: u64) -> FaceStatus {
        FaceStatus {
            face_id: id,
            uri: format!("udp4://127.0.0.1:{id}"),
            local_uri: "udp4://127.0.0.1:6363".into(),
            scope: 0,
            persistency: 0,
            link_type: 0,
            flags: 0,
            marking: (0, 0),
            mtu: 8800,
            counters: FaceCounts::default(),
        }
    }

    fn interest(seq: Option<u64>, prefix: bool, fresh: bool) -> Vec<u8> {
        let name = match seq {
            Some(s) => stream_name().with(Component::sequence_num(s)),
            None => stream_name(),
        };
        let mut i = Interest::new(name);
        i.can_be_prefix = prefix;
        i.must_be_fresh = fresh;
        i.nonce = Some([1, 2, 3, 4]);
        i.lifetime_ms = Some(4000);
        i.to_bytes()
    }

    fn ask(e: &mut FaceEvents, wire: &[u8], now: u64) -> Option<Vec<u8>> {
        e.ask(7, Some(&[9]), &InterestView::decode(wire).unwrap(), now)
    }

    /// (seq, kind, face id) of a notification.
    fn read(data: &[u8]) -> (u64, u64, u64) {
        let d = DataView::decode(data).unwrap();
        let name = d.name();
        let Kind::SequenceNum(seq) = name.get(name.len() - 1).unwrap().kind() else { panic!("seq") };
        let content = d.content().unwrap();
        let inner = nexthop_wire::tlv::Tlv::read(content).unwrap();
        let field = |ty| {
            nexthop_wire::tlv::TlvReader::new(inner.value)
                .map(Result::unwrap)
                .find(|t| t.ty == ty)
                .map(|t| nexthop_wire::varnum::read_nonneg(t.ty, t.value).unwrap())
                .unwrap()
        };
        (seq, field(0xc1), field(0x69))
    }

    #[test]
    fn a_subscriber_waits_for_each_next_event() {
        let mut e = FaceEvents::default();
        assert_eq!(ask(&mut e, &interest(None, true, true), 0), None, "nothing yet: held");
        let sent = e.publish(FaceEventKind::Created, &status(300), 10);
        assert_eq!(sent.len(), 1);
        assert_eq!((sent[0].face, sent[0].pit_token.as_deref()), (7, Some(&[9u8][..])));
        assert_eq!(read(&sent[0].data), (1, 1, 300));
        assert_eq!(ask(&mut e, &interest(Some(2), false, false), 20), None, "the next: held");
        let sent = e.publish(FaceEventKind::Destroyed, &status(300), 30);
        assert_eq!(read(&sent[0].data), (2, 2, 300));
        assert_eq!(e.waiting(), 0);
        // Published ones stay answerable; the latest is fresh for a second.
        assert_eq!(read(&ask(&mut e, &interest(Some(1), false, false), 40).unwrap()), (1, 1, 300));
        assert_eq!(read(&ask(&mut e, &interest(None, true, true), 500).unwrap()), (2, 2, 300));
        assert_eq!(ask(&mut e, &interest(None, true, true), 1030), None, "stale: waits for the next");
        assert_eq!(ask(&mut e, &interest(None, false, false), 0), None, "the stream's name alone");
        // A held Interest lapses with its lifetime, and with its face.
        assert_eq!(ask(&mut e, &interest(Some(3), false, false), 2000), None);
        assert!(e.publish(FaceEventKind::Created, &status(301), 9000).is_empty(), "lapsed");
        let _ = ask(&mut e, &interest(Some(4), false, false), 9000);
        e.face_gone(7);
        assert!(e.publish(FaceEventKind::Created, &status(302), 9001).is_empty());
    }

    #[test]
    fn what_is_no_notification_name_is_refused() {
        let mut e = FaceEvents::default();
        let mut i = Interest::new(stream_name().with(Component::generic(&b"x"[..])));
        i.nonce = Some([0; 4]);
        assert_eq!(ask(&mut e, &i.to_bytes(), 0), None);
        assert_eq!(e.waiting(), 0);
    }
}
