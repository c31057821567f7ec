//! The Data pipeline (NFD's incoming-Data pipeline, NDN-DPDK's fwd-data): the PIT entry by
//! token or by name, the content store, what the strategies learn, and the Data sent to every
//! downstream; unsolicited Data counted (and cached where the policy admits it).

use nexthop_cs::Arrival;
use nexthop_wire::{DataView, NameView};

use super::Shard;
use crate::counters::DropReason;
use crate::face::{FaceId, FaceScope};
use crate::lp::encode::LpFields;
use crate::lp::packet::LinkInfo;
use crate::pipeline::outbox::Outbox;
use crate::table::pit_token::{PitToken, TokenBuf};
use crate::table::strategy_choice::Strategy;

impl Shard {
    pub(super) fn entry_by_token(&self, link: &LinkInfo<'_>) -> Option<u32> {
        let t = PitToken::decode(link.pit_token?)?;
        if t.shard != self.cfg.index || !t.names_generation(self.pit.generation(t.slot)?) {
            return None;
        }
        self.pit.get(t.slot).map(|_| t.slot)
    }

    pub(super) fn on_data(
        &mut self,
        now_ms: u64,
        face: FaceId,
        scope: FaceScope,
        link: &LinkInfo<'_>,
        data: &DataView<'_>,
        out: &mut Outbox,
    ) {
        self.counters.data_in.inc();
        let name = data.name();
        let mut matched = std::mem::take(&mut self.matched);
        matched.clear();
        if let Some(slot) =
            self.entry_by_token(link).filter(|&s| self.pit.get(s).is_some_and(|e| e.matches(name.value(), || data.implicit_digest())))
        {
            matched.push(slot);
        } else {
            self.pit.matching_data(&name, || data.implicit_digest(), &mut matched);
        }
        if matched.is_empty() {
            // Data from an ASF upstream the Interest also went to is measured all the same.
            self.asf.on_late_data(&name, face, now_ms);
            self.counters.drops.count(DropReason::Unsolicited);
            if self.cfg.unsolicited.admits(scope) && !link.no_cache && self.cs_admit {
                if let Some(cs) = self.cs.as_mut() {
                    let _ = cs.insert_arrived(data.wire(), now_ms, Arrival::Unsolicited);
                    self.counters.cs_entries.set(cs.l1().len() as u64);
                }
            }
            self.matched = matched;
            return;
        }
        if !link.no_cache && self.cs_admit {
            if let Some(cs) = self.cs.as_mut() {
                // A packet the store refuses (larger than a slot) is still forwarded.
                let _ = cs.insert(data.wire(), now_ms);
                self.counters.cs_entries.set(cs.l1().len() as u64);
            }
        }
        matched.sort_unstable();
        matched.dedup();
        for &slot in &matched {
            let Some(entry) = self.pit.remove(slot) else { continue };
            self.release_entry(&entry);
            self.counters.satisfied.inc();
            if entry.strategy == Strategy::Access {
                if let Some(r) = entry.out_records.iter().find(|r| r.face == face) {
                    self.access.on_data(face, &name, now_ms.saturating_sub(r.sent_ms), now_ms);
                }
            }
            if let Strategy::Asf(_) = entry.strategy {
                for r in entry.out_records.iter().filter(|r| r.nack.is_none()) {
                    if r.face == face {
                        self.asf.on_data(&name, face, now_ms.saturating_sub(r.sent_ms), now_ms);
                    } else {
                        self.asf.expect_late(&entry.name, r.face, r.sent_ms, entry.expires_ms);
                    }
                }
            }
            let announcement = match entry.strategy {
                Strategy::SelfLearning => self.self_learning_data(now_ms, face, link, &name, &entry, out),
                _ => None,
            };
            let back_out = self.is_ad_hoc(face);
            for r in entry.in_records.iter().filter(|r| r.face != face || back_out) {
                // A mark from upstream travels on to the consumers (as in NFD).
                let fields = LpFields {
                    congestion_mark: link.congestion_mark,
                    prefix_announcement: announcement.as_deref(),
                    ..self.fields(r.token.as_ref().map(TokenBuf::as_slice), None, r.face, face)
                };
                out.push(r.face, &fields, data.wire());
                self.counters.data_out.inc();
            }
        }
        self.matched = matched;
    }

    /// Self-learning, Data from `face` for `entry`: the prefix announcement its downstreams get.
    /// Data that answers a discovery Interest (broadcast, no route known) and carries an
    /// announcement teaches a route to `face` (asked of the RIB through `out`), and the
    /// announcement travels on; Data that came along a known route gets this forwarder's own
    /// announcement for its name when a downstream sent a discovery Interest from another host
    /// (NFD's `needPrefixAnn`: a producer's forwarder announces it to the network).
    fn self_learning_data(
        &self,
        now_ms: u64,
        face: FaceId,
        link: &LinkInfo<'_>,
        name: &NameView<'_>,
        entry: &crate::table::pit::Entry,
        out: &mut Outbox,
    ) -> Option<Vec<u8>> {
        let along_route = entry.out_records.iter().find(|r| r.face == face).is_some_and(|r| r.non_discovery);
        if !along_route {
            let pa = link.prefix_announcement?;
            out.learned.push((face, pa.to_vec()));
            return Some(pa.to_vec());
        }
        let waiting = entry.in_records.iter().filter(|r| r.expires_ms > now_ms);
        let discovery = waiting.clone().any(|r| !r.non_discovery);
        let to_another_host = waiting.clone().any(|r| self.nonlocal.contains(&r.face));
        if !(discovery && to_another_host) || self.announcements.is_empty() {
            return None;
        }
        (0..=name.len())
            .rev()
            .find_map(|n| self.announcements.get(name.prefix(n).value()).filter(|a| a.expires_ms > now_ms).map(|a| a.wire.clone()))
    }
}
